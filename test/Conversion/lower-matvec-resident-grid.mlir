// blocks-per-cu: a resident grid of that many blocks per compute unit of the
// device profile, each block looping over the kernel's blocks.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{blocks-per-cu=1},func.func(cachet-lower-matvec))' -verify-diagnostics | FileCheck %s
// paired-blocks-per-cu sets it for kernels whose subgroups compute rows of
// several mat-vecs.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{blocks-per-cu=1 paired-blocks-per-cu=2},func.func(cachet-lower-matvec))' 2>&1 >/dev/null | FileCheck %s --check-prefix=PAIRED
// 0 (the default): one block per rows-per-block subgroups, no loop.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs,func.func(cachet-lower-matvec))' 2>/dev/null | FileCheck %s --check-prefix=OFF
// RUN: not cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{blocks-per-cu=-1},func.func(cachet-lower-matvec))' 2>&1 >/dev/null | FileCheck %s --check-prefix=BAD
// The loop's mark becomes .minnctapersm on NVVM: registers for every block
// of the grid at once.
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm chip=sm_90 matvec-kernel=subgroup matvec-options={blocks-per-cu=1} format=isa" 2>/dev/null | FileCheck %s --check-prefix=PTX

// K/V (16 rows each, computed by the same 16 subgroups: 4 blocks, first)
// and Q (64 rows, a subgroup each: 16 blocks): 20 blocks, looped over by a
// grid of 2.
// CHECK-LABEL: func.func @qkv
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %c2{{[_0-9]*}}, {{.*}} = %c1{{[_0-9]*}}, {{.*}} = %c1{{[_0-9]*}})
// CHECK: scf.for %[[VB:.*]] = %[[BX]] to %c20{{(_[0-9]+)?}} step %c2{{(_[0-9]+)?}} {
// CHECK: arith.cmpi ult, %[[VB]], %c4
// CHECK: vector.load {{.*}}cachet.streaming_weight
// CHECK: } {cachet.min_workgroups_per_sm = 1 : i64}
// CHECK: gpu.terminator
// PTX: gpu.binary @qkv_kernel
// PTX-SAME: .minnctapersm 1
// PAIRED: remark: cachet-lower-matvec: subgroup kernel: {{.*}}; a resident grid of 4 blocks (2 per compute unit) loops over 20;
// OFF-LABEL: func.func @qkv
// OFF: gpu.launch blocks({{.*}}) in ({{.*}} = %c20{{(_[0-9]+)?}},
// OFF-NOT: step %c20
// OFF-NOT: cachet.min_workgroups_per_sm
// BAD: cachet-select-kernel-configs: bad blocks-per-cu -1: 0 (one block a tile) or more
module attributes {cachet.device = #cachet.device<name = "two", vendor = "nvidia", arch = "sm_90", cache_line = 128, l2_bytes = 1048576, alias_stride = 0, alias_pad = 0, compute_units = 2, dram_gbps = 100.0, unified_memory = false, strided_read_penalty = 1.0, pdl = false, l2_prefetch = "none", coop_matrix = [], subgroup_size = 32, shared_memory_bytes = 49152>} {
func.func @qkv(%x: memref<256xf16>, %wq: memref<64x256xf16>, %wk: memref<16x256xf16>, %wv: memref<16x256xf16>) -> (memref<64xf32>, memref<16xf32>, memref<16xf32>) {
  %q = memref.alloc() : memref<64xf32>
  %k = memref.alloc() : memref<16xf32>
  %v = memref.alloc() : memref<16xf32>
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel: 32 lanes per row, 4 subgroups per block, 8 16-byte loads per lane in flight, 1 rows per subgroup; a resident grid of 2 blocks (1 per compute unit) loops over 20; one kernel for 3 mat-vecs}}
  linalg.matvec ins(%wq, %x : memref<64x256xf16>, memref<256xf16>) outs(%q : memref<64xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{a resident grid of 2 blocks (1 per compute unit) loops over 20}}
  linalg.matvec ins(%wk, %x : memref<16x256xf16>, memref<256xf16>) outs(%k : memref<16xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{a resident grid of 2 blocks (1 per compute unit) loops over 20}}
  linalg.matvec ins(%wv, %x : memref<16x256xf16>, memref<256xf16>) outs(%v : memref<16xf32>)
  return %q, %k, %v : memref<64xf32>, memref<16xf32>, memref<16xf32>
}
}

// -----

// Fewer blocks than the grid would have: one block per 4 subgroups, as
// without the option.
// CHECK-LABEL: func.func @small
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{[_0-9]*}},
// CHECK-NOT: cachet.min_workgroups_per_sm
// PTX: gpu.binary @small_kernel
// PTX-NOT: .minnctapersm
module attributes {cachet.device = #cachet.device<name = "two", vendor = "nvidia", arch = "sm_90", cache_line = 128, l2_bytes = 1048576, alias_stride = 0, alias_pad = 0, compute_units = 2, dram_gbps = 100.0, unified_memory = false, strided_read_penalty = 1.0, pdl = false, l2_prefetch = "none", coop_matrix = [], subgroup_size = 32, shared_memory_bytes = 49152>} {
func.func @small(%x: memref<256xf16>, %w: memref<4x256xf16>, %y: memref<4xf32>) {
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel: 32 lanes per row, 4 subgroups per block, 4 16-byte loads per lane in flight, 1 rows per subgroup}}
  linalg.matvec ins(%w, %x : memref<4x256xf16>, memref<256xf16>) outs(%y : memref<4xf32>)
  return
}
}

// -----

// Without a device profile the option has no compute units to count: the
// remark says so and the grid has a block per 4 subgroups.
// CHECK-LABEL: func.func @no_profile
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c16{{(_[0-9]+)?}},
func.func @no_profile(%x: memref<256xf16>, %w: memref<64x256xf16>, %y: memref<64xf32>) {
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{1 rows per subgroup; one block per 4 subgroups: blocks-per-cu needs the compute units of a #cachet.device profile}}
  linalg.matvec ins(%w, %x : memref<64x256xf16>, memref<256xf16>) outs(%y : memref<64xf32>)
  return
}
