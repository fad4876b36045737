// RUN: cachet-opt %s -cachet-attach-device=profile=h200 | FileCheck %s --check-prefix=H200
// RUN: cachet-opt %s -cachet-attach-device=profile=rtx4070 | FileCheck %s --check-prefix=RTX4070
// RUN: cachet-opt %s -cachet-attach-device=profile=rtx2060s | FileCheck %s --check-prefix=RTX2060S
// RUN: cachet-opt %s -cachet-attach-device=profile=gfx1151 | FileCheck %s --check-prefix=GFX1151
// RUN: cachet-opt %s -cachet-attach-device=profile=gfx942 | FileCheck %s --check-prefix=GFX942
// RUN: cachet-opt %s -cachet-attach-device=profile=lavapipe | FileCheck %s --check-prefix=LAVAPIPE
// A JSON profile, as cachet-probe writes it (extra "measurements" are kept out of the IR).
// RUN: cachet-opt %s -cachet-attach-device=profile=%S/Inputs/probe-like.json | FileCheck %s --check-prefix=JSON
// A second attach replaces the first.
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-attach-device=profile=gfx1151 | FileCheck %s --check-prefix=GFX1151
// The pass-pipeline spelling.
// RUN: cachet-opt %s --pass-pipeline='builtin.module(cachet-attach-device{profile=lavapipe})' | FileCheck %s --check-prefix=LAVAPIPE

// H200: module attributes {cachet.device = #cachet.device<name = "h200", vendor = "nvidia", arch = "sm_90", cache_line = 128, l2_bytes = 62914560, alias_stride = 0, alias_pad = 0, compute_units = 132, dram_gbps = 4.270000e+03, unified_memory = false, strided_read_penalty = 1.000000e+00, pdl = true, l2_prefetch = "bulk", coop_matrix = ["16x16x16:f16->f32", "16x16x16:f16->f16"], subgroup_size = 32, shared_memory_bytes = 232448>}
// RTX4070: #cachet.device<name = "rtx4070", vendor = "nvidia", arch = "sm_89", cache_line = 128, l2_bytes = 37748736, alias_stride = 0, alias_pad = 0, compute_units = 46, dram_gbps = 5.040000e+02, unified_memory = false, {{.*}} pdl = false, l2_prefetch = "l2"
// RTX2060S: #cachet.device<name = "rtx2060s", vendor = "nvidia", arch = "sm_75", cache_line = 128, l2_bytes = 4194304, {{.*}} compute_units = 34, {{.*}} pdl = false, l2_prefetch = "l2"
// GFX1151: #cachet.device<name = "gfx1151", vendor = "amd", arch = "gfx1151", cache_line = 128, l2_bytes = 2097152, alias_stride = 2048, alias_pad = 128, compute_units = 40, dram_gbps = 2.560000e+02, unified_memory = true, strided_read_penalty = 3.200000e+00, pdl = false, l2_prefetch = "none"
// GFX942: #cachet.device<name = "gfx942", vendor = "amd", arch = "gfx942", cache_line = 128, {{.*}} alias_stride = 512, alias_pad = 128, compute_units = 304, {{.*}} subgroup_size = 64
// LAVAPIPE: #cachet.device<name = "lavapipe", vendor = "mesa", arch = "x86_64", cache_line = 64, {{.*}} alias_stride = 2048, alias_pad = 64, {{.*}} unified_memory = true, strided_read_penalty = 9.000000e+00, {{.*}} coop_matrix = [], subgroup_size = 8, shared_memory_bytes = 32768>
// JSON: #cachet.device<name = "probed-gpu", vendor = "nvidia", arch = "sm_90", cache_line = 128, l2_bytes = 62914560, alias_stride = 0, alias_pad = 0, compute_units = 132, dram_gbps = 4.100500e+03, unified_memory = false, strided_read_penalty = 1.020000e+00, pdl = true, l2_prefetch = "bulk", coop_matrix = ["16x16x16:f16->f32"], subgroup_size = 32, shared_memory_bytes = 232448>

func.func @f() {
  return
}
