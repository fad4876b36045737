// The decode chain of examples/decode_matvec_chain.mlir (copied here),
// lowered to kernels and host launches as cachet-compile does, then annotated
// by cachet-select-kernel-configs and cachet-prefetch-matvec-chains on each profile and target.
//
// DEFINE: %{lower} = one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,func.func(convert-linalg-to-parallel-loops,scf-parallel-loop-tiling{parallel-loop-tile-sizes=64 no-min-max-bounds=true},gpu-map-parallel-loops,convert-parallel-loops-to-gpu),canonicalize,gpu-launch-sink-index-computations,gpu-kernel-outlining,lower-affine,canonicalize,fold-memref-alias-ops
//
// rtx4070 on sm_89 (auto: l2, cap L2 / 4 = 9 MiB): every boundary annotated.
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},nvvm-attach-target{chip=sm_89 features=+ptx80},cachet-attach-device{profile=rtx4070},cachet-select-kernel-configs,cachet-prefetch-matvec-chains)" -verify-diagnostics | FileCheck %s
//
// rtx2060s (4 MiB L2): the cap is L2 / 4 = 1 MiB, split over the gate/up pair.
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},nvvm-attach-target{chip=sm_75 features=+ptx63},cachet-attach-device{profile=rtx2060s},cachet-select-kernel-configs,cachet-prefetch-matvec-chains)" -mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=R2060
//
// h200 on sm_90 (auto: pdl + bulk).
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},nvvm-attach-target{chip=sm_90 features=+ptx80},cachet-attach-device{profile=h200},cachet-select-kernel-configs,cachet-prefetch-matvec-chains)" -mlir-print-op-on-diagnostic=false 2>%t.h200 | FileCheck %s --check-prefix=H200
// RUN: FileCheck %s --check-prefix=H200-REMARK < %t.h200
//
// The h200 profile on an sm_89 target: auto keeps only what the chip has.
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},nvvm-attach-target{chip=sm_89 features=+ptx80},cachet-attach-device{profile=h200},cachet-select-kernel-configs,cachet-prefetch-matvec-chains)" -mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=DOWN
//
// Explicit modes the chip lacks are skipped, never emitted.
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},nvvm-attach-target{chip=sm_89 features=+ptx80},cachet-attach-device{profile=rtx4070},cachet-select-kernel-configs{prefetch=pdl},cachet-prefetch-matvec-chains)" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=NOPDL
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},nvvm-attach-target{chip=sm_90 features=+ptx78},cachet-attach-device{profile=h200},cachet-select-kernel-configs{prefetch=bulk},cachet-prefetch-matvec-chains)" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=NOBULK
//
// Options override the profile.
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},nvvm-attach-target{chip=sm_89 features=+ptx80},cachet-attach-device{profile=rtx4070},cachet-select-kernel-configs{prefetch=l2 prefetch-fraction=0.25 prefetch-max-bytes=131072 prefetch-ctas=8},cachet-prefetch-matvec-chains)" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=OPTS
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},nvvm-attach-target{chip=sm_89 features=+ptx80},cachet-attach-device{profile=rtx4070},cachet-select-kernel-configs{prefetch-max-bytes=100},cachet-prefetch-matvec-chains)" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=TINY
// The PDL prologue prefetches at most max-bytes of a kernel's own weight.
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},nvvm-attach-target{chip=sm_90 features=+ptx80},cachet-attach-device{profile=h200},cachet-select-kernel-configs{prefetch=pdl prefetch-max-bytes=65536},cachet-prefetch-matvec-chains)" -mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=PDLCAP
// PDLCAP: step 1 of 6, weight memref<1024x1024xbf16>; sm_90 with PTX 8.0: pdl; pdl: the first 65536 B of the own weight prefetched (max-bytes), wait after the first loads of the weights (before the first access to other memory), launch_dependents first
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},nvvm-attach-target{chip=sm_89 features=+ptx80},cachet-attach-device{profile=rtx4070},cachet-select-kernel-configs{prefetch=off},cachet-prefetch-matvec-chains)" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: not cachet-opt %s --pass-pipeline="builtin.module(%{lower},nvvm-attach-target{chip=sm_89 features=+ptx80},cachet-attach-device{profile=rtx4070},cachet-select-kernel-configs{prefetch-fraction=1.5},cachet-prefetch-matvec-chains)" 2>&1 | FileCheck %s --check-prefix=BADFRAC
// RUN: not cachet-opt %s --pass-pipeline="builtin.module(cachet-select-kernel-configs{prefetch-ctas=0})" 2>&1 | FileCheck %s --check-prefix=BADCTAS
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},nvvm-attach-target{chip=sm_89 features=+ptx80},cachet-select-kernel-configs,cachet-prefetch-matvec-chains)" -mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=NOPROFILE
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},nvvm-attach-target{chip=sm_89 features=+ptx80},cachet-select-kernel-configs{prefetch=l2 prefetch-max-bytes=65536 prefetch-ctas=4},cachet-prefetch-matvec-chains)" -mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=NOPROFILE-OPTS
// RUN: not cachet-opt %s --pass-pipeline="builtin.module(%{lower},cachet-select-kernel-configs{prefetch=sometimes},cachet-prefetch-matvec-chains)" 2>&1 >/dev/null | FileCheck %s --check-prefix=BADMODE
//
// ROCDL: s_prefetch_data on gfx12, global prefetch on gfx1250, nothing on gfx942.
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},rocdl-attach-target{chip=gfx1201},cachet-attach-device{profile=gfx1151},cachet-select-kernel-configs{prefetch=l2},cachet-prefetch-matvec-chains)" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=GFX12
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},rocdl-attach-target{chip=gfx1250},cachet-attach-device{profile=gfx1151},cachet-select-kernel-configs{prefetch=l2},cachet-prefetch-matvec-chains)" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=GFX1250
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},rocdl-attach-target{chip=gfx1201},cachet-attach-device{profile=h200},cachet-select-kernel-configs,cachet-prefetch-matvec-chains)" -mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=GFX12-AUTO
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},rocdl-attach-target{chip=gfx1201},cachet-attach-device{profile=gfx1151},cachet-select-kernel-configs{prefetch=pdl},cachet-prefetch-matvec-chains)" -mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=GFX12-PDL
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},rocdl-attach-target{chip=gfx942},cachet-attach-device{profile=gfx942},cachet-select-kernel-configs{prefetch=l2},cachet-prefetch-matvec-chains)" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=GFX942
//
// SPIR-V: skipped with a remark, the IR is the same as with mode=off.
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},spirv-attach-target,cachet-attach-device{profile=lavapipe},cachet-select-kernel-configs{prefetch=l2},cachet-prefetch-matvec-chains)" -mlir-print-op-on-diagnostic=false 2>%t.spirv > %t.spirv.on
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},spirv-attach-target,cachet-attach-device{profile=lavapipe},cachet-select-kernel-configs{prefetch=off},cachet-prefetch-matvec-chains)" 2>/dev/null > %t.spirv.off
// RUN: diff %t.spirv.on %t.spirv.off
// RUN: FileCheck %s --check-prefix=SPIRV < %t.spirv
//
// PDL: no load moves above the wait, even after LICM, CSE and canonicalization
// (pdl-wait=start); with the default pdl-wait=after-weight-loads only the
// weight's load comes before it.
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},nvvm-attach-target{chip=sm_90 features=+ptx80},cachet-attach-device{profile=h200},cachet-select-kernel-configs{prefetch=pdl pdl-wait=start pdl-trigger=end},cachet-prefetch-matvec-chains,loop-invariant-code-motion,cse,canonicalize)" 2>/dev/null | FileCheck %s --check-prefix=HOIST
// RUN: cachet-opt %s --pass-pipeline="builtin.module(%{lower},nvvm-attach-target{chip=sm_90 features=+ptx80},cachet-attach-device{profile=h200},cachet-select-kernel-configs{prefetch=pdl},cachet-prefetch-matvec-chains,loop-invariant-code-motion,cse,canonicalize)" 2>/dev/null | FileCheck %s --check-prefix=HOISTW
// RUN: not cachet-opt %s --pass-pipeline="builtin.module(%{lower},nvvm-attach-target{chip=sm_90 features=+ptx80},cachet-attach-device{profile=h200},cachet-select-kernel-configs{prefetch=pdl pdl-wait=later},cachet-prefetch-matvec-chains)" 2>&1 | FileCheck %s --check-prefix=BADWAIT

// Host: each step's last launch passes the next step's weight(s).
// CHECK-LABEL: func.func @decode_layer
// CHECK-SAME: %[[X:[^:]*]]: memref<1024xbf16>, %[[A:[^:]*]]: memref<1024xbf16>, %[[WQ:[^:]*]]: memref<1024x1024xbf16> {cachet.weight}, %[[WK:[^:]*]]: memref<256x1024xbf16> {cachet.weight}, %[[WV:[^:]*]]: memref<256x1024xbf16> {cachet.weight}, %[[WO:[^:]*]]: memref<1024x1024xbf16> {cachet.weight}, %[[WG:[^:]*]]: memref<2816x1024xbf16> {cachet.weight}, %[[WU:[^:]*]]: memref<2816x1024xbf16> {cachet.weight}, %[[WD:[^:]*]]: memref<1024x2816xbf16> {cachet.weight}
// CHECK: gpu.launch_func @[[KQ:[a-z_0-9]*]]::@{{.*}} args(%[[WQ]] : {{.*}}, %[[WK]] : memref<256x1024xbf16>)
// CHECK: gpu.launch_func @{{.*}} args(%[[WK]] : {{.*}}, %[[WV]] : memref<256x1024xbf16>)
// CHECK: gpu.launch_func @{{.*}} args(%[[WV]] : {{.*}}, %[[WO]] : memref<1024x1024xbf16>)
// CHECK: gpu.launch_func @{{.*}} args(%[[WO]] : {{.*}}, %[[WG]] : memref<2816x1024xbf16>, %[[WU]] : memref<2816x1024xbf16>)
// CHECK: gpu.launch_func @{{.*}} args(%[[WG]] : memref<2816x1024xbf16>, %{{[^,]*}} : memref<1024xbf16>, %{{[^,]*}} : memref<2816xf32>)
// CHECK: gpu.launch_func @{{.*}} args(%[[WU]] : {{.*}}, %[[WD]] : memref<1024x2816xbf16>)
// CHECK: gpu.launch_func @{{.*}} args(%[[WD]] : memref<1024x2816xbf16>, %{{[^,]*}} : memref<2816xbf16>, %{{[^,]*}} : memref<1024xf32>)
// Kernel of the q projection: the mat-vec, then the epilogue of its last 46
// CTAs over 262144 B (2048 lines) of Wk.
// CHECK: gpu.module @[[KQ]] [#nvvm.target<chip = "sm_89", features = "+ptx80">]
// CHECK: gpu.func @{{.*}}(%[[W:[^:]*]]: memref<1024x1024xbf16>, %{{[^:]*}}: memref<1024xbf16>, %{{[^:]*}}: memref<1024xf32>, %[[NEXT:[^:]*]]: memref<256x1024xbf16>) kernel
// CHECK: scf.for
// CHECK: memref.load %[[W]]
// CHECK: arith.minui %c16{{.*}}, %c46
// CHECK: scf.if
// CHECK: %c262144 = arith.constant 262144 : index
// CHECK: memref.extract_aligned_pointer_as_index %[[NEXT]]
// CHECK: scf.for
// CHECK: llvm.inline_asm has_side_effects "prefetch.global.L2 [$0];", "l"
// CHECK: gpu.return

// R2060: step 1 of 6, {{.*}}sm_75 with PTX 6.3: l2; the last 34 CTAs prefetch (l2) 262144 B of memref<256x1024xbf16> (fraction 0.5, max-bytes 1048576)
// R2060: step 4 of 6, {{.*}}the last 34 CTAs prefetch (l2) 524288 B of memref<2816x1024xbf16> and 524288 B of memref<2816x1024xbf16> (fraction 0.5, max-bytes 1048576)
// R2060: step 5 of 6 (up of a gate/up pair), {{.*}}the last 34 CTAs prefetch (l2) 1048576 B of memref<1024x2816xbf16> (fraction 0.5, max-bytes 1048576)

// H200-COUNT-7: gpu.launch_func {{.*}} {cachet.pdl, cachet.prefetch_plan = #cachet.prefetch_plan<{{.*}}pdl = true{{.*}}>}
// H200: gpu.func @{{.*}}(%[[W:[^:]*]]: memref<1024x1024xbf16>, %[[X:[^:]*]]: memref<1024xbf16>, %{{[^:]*}}: memref<1024xf32>, %[[NEXT:[^:]*]]: memref<256x1024xbf16>) kernel
// H200-NEXT: nvvm.griddepcontrol launch_dependents
// H200: memref.extract_aligned_pointer_as_index %[[W]]
// H200: nvvm.cp.async.bulk.prefetch
// The zero fills launched before the chain are fences: the kernel loads its
// weight before it waits, in the first iteration of its loop.
// H200: scf.for %[[K:[^ ]*]] = %[[LB:[^ ]*]] to
// H200-NEXT: memref.load %[[W]]
// H200-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[K]], %[[LB]]
// H200-NEXT: scf.if %[[FIRST]] {
// H200-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// H200-NEXT: {{^ *[}]$}}
// H200-NEXT: memref.load %[[X]]
// H200: arith.minui %{{.*}}, %c132
// H200: memref.extract_aligned_pointer_as_index %[[NEXT]]
// H200: nvvm.cp.async.bulk.prefetch
// H200: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// H200-NEXT: gpu.return
// H200-REMARK: step 1 of 6, weight memref<1024x1024xbf16>; auto: profile h200 has pdl = true, l2_prefetch = bulk; sm_90 with PTX 8.0: pdl + bulk; the last 132 CTAs prefetch (bulk) 262144 B of memref<256x1024xbf16> (fraction 0.5, max-bytes 15728640); pdl: the first {{[0-9]+}} B of the own weight prefetched (max-bytes), wait after the first loads of the weights (before the first access to other memory), launch_dependents first

// DOWN: step 1 of 6, {{.*}}auto: profile h200 has pdl = true, l2_prefetch = bulk; sm_89 with PTX 8.0 has no bulk prefetch, using l2; sm_89 with PTX 8.0 has no griddepcontrol; sm_89 with PTX 8.0: l2; the last 132 CTAs prefetch (l2)

// NOPDL: step 1 of 6, {{.*}}griddepcontrol needs sm_90 and PTX 7.8, the target is sm_89 with PTX 8.0; not rewritten
// NOPDL-NOT: nvvm.griddepcontrol
// NOPDL-NOT: cachet.pdl
// NOBULK: step 1 of 6, {{.*}}bulk prefetch needs sm_90 and PTX 8.0, the target is sm_90 with PTX 7.8; not rewritten
// NOBULK-NOT: nvvm.cp.async.bulk.prefetch

// OPTS: step 1 of 6, {{.*}}sm_89 with PTX 8.0: l2; the last 8 CTAs prefetch (l2) 131072 B of memref<256x1024xbf16> (fraction 0.25, max-bytes 131072)
// OPTS: step 4 of 6, {{.*}}65536 B of memref<2816x1024xbf16> and 65536 B of memref<2816x1024xbf16>
// OPTS: arith.minui %{{.*}}, %c8
// TINY: step 1 of 6, {{.*}}no prefetch: the budget is under one cache line; not rewritten
// TINY-NOT: llvm.inline_asm
// OFF: step 1 of 6, {{.*}}mode=off; not rewritten
// OFF-NOT: llvm.inline_asm
// BADFRAC: cachet-select-kernel-configs: bad prefetch-fraction 1.5: in (0, 1], or negative for 0.5
// BADCTAS: cachet-select-kernel-configs: bad prefetch-ctas 0: 1 or more, or -1 for the profile's compute units
// NOPROFILE: step 1 of 6, {{.*}}mode=auto without a #cachet.device profile; not rewritten
// NOPROFILE-OPTS: step 1 of 6, {{.*}}the last 4 CTAs prefetch (l2) 65536 B of memref<256x1024xbf16> (fraction 0.5, max-bytes 65536)
// BADMODE: for the --prefetch option: Cannot find option named 'sometimes'!

// GFX12: step 1 of 6, {{.*}}gfx1201: s_prefetch_data; the last 40 CTAs prefetch (s_prefetch_data) 262144 B
// GFX12: llvm.call_intrinsic "llvm.amdgcn.s.prefetch.data"
// GFX12-AUTO: step 1 of 6, {{.*}}auto: profile h200 has pdl = true, l2_prefetch = bulk; no programmatic dependent launch on ROCDL; gfx1201: s_prefetch_data; the last 132 CTAs prefetch (s_prefetch_data)
// GFX12-PDL: step 1 of 6, {{.*}}no programmatic dependent launch on ROCDL; not rewritten
// GFX1250: step 1 of 6, {{.*}}gfx1250: global_prefetch; the last 40 CTAs prefetch (global_prefetch) 262144 B
// GFX1250: llvm.call_intrinsic "llvm.amdgcn.global.prefetch"
// GFX942: step 1 of 6, {{.*}}gfx942 has no data prefetch instruction; not rewritten
// GFX942-NOT: prefetch.data
// GFX942-NOT: global.prefetch

// SPIRV: step 1 of 6, weight memref<1024x1024xbf16>; SPIR-V target: no prefetch or dependent-launch instruction; not rewritten

// HOIST: gpu.func @{{.*}}(%{{[^:]*}}: memref<1024x1024xbf16>, %{{[^:]*}}: memref<1024xbf16>, %{{[^:]*}}: memref<1024xf32>) kernel
// HOIST-NOT: memref.load
// HOIST: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// HOIST: memref.load
// HOIST: nvvm.griddepcontrol launch_dependents
// HOIST-NEXT: gpu.return

// HOISTW: gpu.func @{{.*}}(%[[W:[^:]*]]: memref<1024x1024xbf16>, %[[X:[^:]*]]: memref<1024xbf16>, %[[Y:[^:]*]]: memref<1024xf32>) kernel
// HOISTW: nvvm.griddepcontrol launch_dependents
// HOISTW-NOT: memref.load
// HOISTW: memref.load %[[W]]
// HOISTW-NOT: memref.load
// HOISTW: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// HOISTW-NOT: memref.load %[[W]]
// HOISTW: memref.load %[[X]]
// HOISTW: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// HOISTW-NEXT: gpu.return

// BADWAIT: for the --pdl-wait option: Cannot find option named 'later'!

#mv_w = affine_map<(i, j) -> (i, j)>
#mv_x = affine_map<(i, j) -> (j)>
#mv_y = affine_map<(i, j) -> (i)>
#id1  = affine_map<(i) -> (i)>
func.func @decode_layer(%x: tensor<1024xbf16>, %a: tensor<1024xbf16>,
    %wq: tensor<1024x1024xbf16> {cachet.weight}, %wk: tensor<256x1024xbf16> {cachet.weight},
    %wv: tensor<256x1024xbf16> {cachet.weight}, %wo: tensor<1024x1024xbf16> {cachet.weight},
    %wg: tensor<2816x1024xbf16> {cachet.weight}, %wu: tensor<2816x1024xbf16> {cachet.weight},
    %wd: tensor<1024x2816xbf16> {cachet.weight})
    -> (tensor<1024xf32>, tensor<256xf32>, tensor<256xf32>, tensor<1024xf32>) {
  %z = arith.constant 0.0 : f32
  %e1024 = tensor.empty() : tensor<1024xf32>
  %e256 = tensor.empty() : tensor<256xf32>
  %e2816 = tensor.empty() : tensor<2816xf32>
  // expected-remark @below {{not part of a chain: kernel @decode_layer_kernel does not stream a weight: it has no rank-2 memref argument it reads}}
  %z1024 = linalg.fill ins(%z : f32) outs(%e1024 : tensor<1024xf32>) -> tensor<1024xf32>
  // expected-remark @below {{not part of a chain: kernel @decode_layer_kernel does not stream a weight}}
  %z256 = linalg.fill ins(%z : f32) outs(%e256 : tensor<256xf32>) -> tensor<256xf32>
  // expected-remark @below {{not part of a chain: kernel @decode_layer_kernel does not stream a weight}}
  %z2816 = linalg.fill ins(%z : f32) outs(%e2816 : tensor<2816xf32>) -> tensor<2816xf32>
  // expected-remark @below {{step 1 of 6, weight memref<1024x1024xbf16>; auto: profile rtx4070 has pdl = false, l2_prefetch = l2; sm_89 with PTX 8.0: l2; the last 46 CTAs prefetch (l2) 262144 B of memref<256x1024xbf16> (fraction 0.5, max-bytes 9437184)}}
  %q = linalg.matvec ins(%wq, %x : tensor<1024x1024xbf16>, tensor<1024xbf16>) outs(%z1024 : tensor<1024xf32>) -> tensor<1024xf32>
  // expected-remark @below {{step 2 of 6, weight memref<256x1024xbf16>; auto: profile rtx4070 has pdl = false, l2_prefetch = l2; sm_89 with PTX 8.0: l2; the last 46 CTAs prefetch (l2) 262144 B of memref<256x1024xbf16>}}
  %k = linalg.matvec ins(%wk, %x : tensor<256x1024xbf16>, tensor<1024xbf16>) outs(%z256 : tensor<256xf32>) -> tensor<256xf32>
  // expected-remark @below {{step 3 of 6, weight memref<256x1024xbf16>; auto: profile rtx4070 has pdl = false, l2_prefetch = l2; sm_89 with PTX 8.0: l2; the last 46 CTAs prefetch (l2) 1048576 B of memref<1024x1024xbf16>}}
  %v = linalg.matvec ins(%wv, %x : tensor<256x1024xbf16>, tensor<1024xbf16>) outs(%z256 : tensor<256xf32>) -> tensor<256xf32>
  // expected-remark @below {{step 4 of 6, weight memref<1024x1024xbf16>; auto: profile rtx4070 has pdl = false, l2_prefetch = l2; sm_89 with PTX 8.0: l2; the last 46 CTAs prefetch (l2) 2883584 B of memref<2816x1024xbf16> and 2883584 B of memref<2816x1024xbf16>}}
  %o = linalg.matvec ins(%wo, %a : tensor<1024x1024xbf16>, tensor<1024xbf16>) outs(%z1024 : tensor<1024xf32>) -> tensor<1024xf32>
  %ob_e = tensor.empty() : tensor<1024xbf16>
  // expected-remark @below {{not part of a chain: kernel @decode_layer_kernel does not stream a weight}}
  %ob = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%o : tensor<1024xf32>) outs(%ob_e : tensor<1024xbf16>) {
    ^bb0(%s: f32, %d: bf16):
      %t = arith.truncf %s : f32 to bf16
      linalg.yield %t : bf16
  } -> tensor<1024xbf16>
  // expected-remark @below {{step 5 of 6 (gate of a gate/up pair), weight memref<2816x1024xbf16>; auto: profile rtx4070 has pdl = false, l2_prefetch = l2; sm_89 with PTX 8.0: l2; no prefetch: the pair's weights were prefetched by the step before it; not rewritten}}
  %g = linalg.matvec ins(%wg, %ob : tensor<2816x1024xbf16>, tensor<1024xbf16>) outs(%z2816 : tensor<2816xf32>) -> tensor<2816xf32>
  // expected-remark @below {{step 5 of 6 (up of a gate/up pair), weight memref<2816x1024xbf16>; auto: profile rtx4070 has pdl = false, l2_prefetch = l2; sm_89 with PTX 8.0: l2; the last 46 CTAs prefetch (l2) 2883584 B of memref<1024x2816xbf16>}}
  %u = linalg.matvec ins(%wu, %ob : tensor<2816x1024xbf16>, tensor<1024xbf16>) outs(%z2816 : tensor<2816xf32>) -> tensor<2816xf32>
  %he = tensor.empty() : tensor<2816xbf16>
  // expected-remark @below {{not part of a chain: kernel @decode_layer_kernel does not stream a weight}}
  %h = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%g, %u : tensor<2816xf32>, tensor<2816xf32>) outs(%he : tensor<2816xbf16>) {
    ^bb0(%gv: f32, %uv: f32, %d: bf16):
      %one = arith.constant 1.0 : f32
      %ng = arith.negf %gv : f32
      %ex = math.exp %ng : f32
      %den = arith.addf %one, %ex : f32
      %sig = arith.divf %gv, %den : f32
      %p = arith.mulf %sig, %uv : f32
      %t = arith.truncf %p : f32 to bf16
      linalg.yield %t : bf16
  } -> tensor<2816xbf16>
  // expected-remark @below {{step 6 of 6, weight memref<1024x2816xbf16>; auto: profile rtx4070 has pdl = false, l2_prefetch = l2; sm_89 with PTX 8.0: l2; no prefetch: no streaming mat-vec launch follows in this block; not rewritten}}
  %dn = linalg.matvec ins(%wd, %h : tensor<1024x2816xbf16>, tensor<2816xbf16>) outs(%z1024 : tensor<1024xf32>) -> tensor<1024xf32>
  return %q, %k, %v, %dn : tensor<1024xf32>, tensor<256xf32>, tensor<256xf32>, tensor<1024xf32>
}
