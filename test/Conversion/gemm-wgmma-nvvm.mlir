// A prefill's linear layer on sm_90a: the GEMM on warpgroup MMA
// (gemm_wgmma). Each warpgroup of 128 threads computes 64 rows of x by the
// tile's weight rows with wgmma.mma_async, reading both operands from
// workgroup memory by matrix descriptors; steps of 64 columns are copied
// by cp.async into buffers in the 128-byte swizzle (piece c of row r at
// piece c ^ (r % 8)), made visible to the tensor cores by
// fence.proxy.async.
// With 128-row tiles of x (gemm-tile-m=128; by default these small
// grids take 64-row tiles, SMALL below):
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma-sync=true allow-wgmma=true gemm-tile-m=128},func.func(cachet-lower-matvec))' -verify-diagnostics | FileCheck %s
// The whole pipeline with chip=sm_90a, to PTX.
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm chip=sm_90a format=isa matvec-options={gemm-tile-m=128}" 2>/dev/null | FileCheck %s --check-prefix=PTX
// By default a grid of 128 x 128 tiles with workgroups for fewer than 7/8
// of the profile's compute units (h200: 132) takes 64 x 128 tiles where
// those fill them, else 64 x 64 (one warpgroup each).
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma-sync=true allow-wgmma=true})' 2>&1 >/dev/null | FileCheck %s --check-prefix=SMALL
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm chip=sm_90a profile=h200 format=isa" 2>/dev/null | FileCheck %s --check-prefix=SMALLPTX
// SMALL: wgmma GEMM for a mat-mul of 256 rows of x: workgroup tiles of 64 rows of x by 64 weight rows, 1 warpgroups, {{.*}} m64n64k16 on bf16 with f32 accumulators (6 workgroups of 128 x 128 would leave 126 of the 132 compute units idle; gemm-fill-eighths 7)
// SMALL: wgmma GEMM for a mat-mul of 512 rows of x: workgroup tiles of 64 rows of x by 128 weight rows, 1 warpgroups, {{.*}} m64n128k16 on f16 with f32 accumulators (112 workgroups of 128 x 128 would leave 20 of the 132 compute units idle; gemm-fill-eighths 7)
// SMALL: wgmma GEMM for a mat-mul of 512 rows of x: workgroup tiles of 128 rows of x by 160 weight rows, 2 warpgroups, {{.*}} m64n160k16 on f16 with f32 accumulators (160 weight rows per tile: 116 workgroups in 1 wave(s) of one per compute unit, against 72 in 1 with 256){{$}}
// gemm-fill-eighths=0 keeps 128 x 128; 5 keeps it for 112 of 132 units
// (5/8: 83) but not for 6; a value above 8 is an error.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma-sync=true allow-wgmma=true gemm-fill-eighths=0})' 2>&1 >/dev/null | FileCheck %s --check-prefix=NOFILL
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma-sync=true allow-wgmma=true gemm-fill-eighths=5})' 2>&1 >/dev/null | FileCheck %s --check-prefix=FILL5
// RUN: not cachet-opt %s -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{gemm-fill-eighths=9})' 2>&1 >/dev/null | FileCheck %s --check-prefix=BADFILL
// NOFILL-NOT: tiles of 64 rows of x
// FILL5: mat-mul of 256 rows of x: workgroup tiles of 64 rows of x by 64 weight rows, {{.*}}(6 workgroups of 128 x 128 would leave 126 of the 132 compute units idle; gemm-fill-eighths 5)
// FILL5: mat-mul of 512 rows of x: workgroup tiles of 128 rows of x by 160 weight rows, 2 warpgroups, {{.*}} m64n160k16 on f16 with f32 accumulators (160 weight rows{{.*}}){{$}}
// BADFILL: bad gemm-fill-eighths 9: 0 (never smaller tiles) to 8
// SMALLPTX: .target sm_90a
// SMALLPTX-SAME: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// sm_90 (no wgmma), or gemm-wgmma=false: the mma-sync GEMM.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{allow-mma-sync=true})' 2>&1 >/dev/null | FileCheck %s --check-prefix=SM90
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{allow-mma-sync=true allow-wgmma=true gemm-wgmma=false})' 2>&1 >/dev/null | FileCheck %s --check-prefix=SM90
// A weight tile wgmma has no shape for (n > 256): mma-sync (8 subgroups of 64 x 128), with the reason.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{allow-mma-sync=true allow-wgmma=true gemm-tile-n=512 gemm-subgroups=8})' 2>&1 >/dev/null | FileCheck %s --check-prefix=WIDE
// SM90: mma-sync GEMM for a mat-mul of 256 rows of x
// SM90-NOT: remark: {{.*}}not the wgmma GEMM
// SM90-NOT: remark: cachet-select-kernel-configs: wgmma GEMM
// WIDE: mma-sync GEMM for a mat-mul of 256 rows of x: {{.*}}; not the wgmma GEMM: 'tile' must be [rows of x, weight rows]: a multiple of 64 up to 256 (one warpgroup per 64) and a multiple of 8 up to 256 (a wgmma's n)
// PTX: .target sm_90a
// PTX-SAME: cp.async.wait_group {{[^;]*}}2;\0A{{[^;]*}}fence.proxy.async.shared::cta;\0A{{[^;]*}}bar.sync
// PTX-SAME: wgmma.fence.sync.aligned;
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-SAME: wgmma.commit_group.sync.aligned;\0A{{[^;]*}}wgmma.wait_group.sync.aligned {{[^;]*}}1;\0A{{[^;]*}}bar.sync
// PTX-SAME: cp.async.cg.shared.global
// PTX-SAME: wgmma.wait_group.sync.aligned {{[^;]*}}0;

// bf16 x [256][128] times a bf16 weight [384][128], into a zero-filled f32
// result: 2 x 3 workgroups of 2 warpgroups, 4 buffers of 64 columns.
// CHECK-LABEL: func.func @bf16
// CHECK: %[[SIZE:.*]] = arith.constant 132096 : i32
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{[_0-9]*}}, {{.*}} = %c3{{[_0-9]*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c256{{[_0-9]*}}, {{.*}}) dynamic_shared_memory_size %[[SIZE]]
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: memref.view {{.*}} to memref<4x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<4x128x64xbf16, #gpu.address_space<workgroup>>
// The swizzle: piece c of row r at c ^ (r % 8).
// CHECK: arith.xori
// CHECK: nvgpu.device_async_copy
// CHECK-COUNT-3: nvgpu.device_async_create_group
// CHECK: llvm.mlir.zero : !llvm.struct<(f32, f32
// CHECK: scf.for
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 2 : i32}
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NEXT: gpu.barrier
// CHECK: scf.yield
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.if
// CHECK: vector.store {{.*}} {alignment = 8 : i64} : memref<256x384xf32>, vector<2xf32>
// CHECK-NOT: linalg.matmul
func.func @bf16(%x: memref<256x128xbf16>, %w: memref<384x128xbf16>) -> memref<256x384xf32> {
  %cst = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<256x384xf32>
  linalg.fill ins(%cst : f32) outs(%y : memref<256x384xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: wgmma GEMM for a mat-mul of 256 rows of x: workgroup tiles of 128 rows of x by 128 weight rows, 2 warpgroups, steps of 64 columns copied asynchronously into 4 buffers of dynamic workgroup memory (132096 bytes) in the 128-byte swizzle, wgmma.mma_async m64n128k16 on bf16 with f32 accumulators}}
  // expected-remark @+1 {{cachet-lower-matvec: wgmma GEMM: 2 x 3 workgroups of 2 warpgroups, each a 128 x 128 tile over 128 columns in steps of 64 (4 buffers, 132096 bytes of dynamic workgroup memory); the zero fill of the result is done in the kernel}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xbf16>, memref<384x128xbf16>) outs(%y : memref<256x384xf32>)
  return %y : memref<256x384xf32>
}

// -----

// 96 columns (not a multiple of 64): the mma-sync GEMM, with the reason.
// CHECK-LABEL: func.func @columns
// CHECK-NOT: nvvm.wgmma
func.func @columns(%x: memref<256x96xf16>, %w: memref<128x96xf16>, %y: memref<256x128xf32>) {
  // expected-remark @+2 {{cachet-select-kernel-configs: mma-sync GEMM for a mat-mul of 256 rows of x: workgroup tiles of 128 rows of x by 128 weight rows, 4 subgroups of 64 x 64 each, steps of 32 columns copied asynchronously into 3 buffers of workgroup memory (61440 bytes, dynamic), ldmatrix operands, m16n8k16 mma.sync on f16 with f32 accumulators; not the wgmma GEMM: 96 columns are not a multiple of 64 (a step)}}
  // expected-remark @+1 {{cachet-lower-matvec: mma-sync GEMM}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x96xf16>, memref<128x96xf16>) outs(%y : memref<256x128xf32>)
  return
}

// -----

// 512 x 3584 (112 tiles of 128 x 128 on 132 compute units): by default
// 64 x 128 tiles (224 workgroups).
// CHECK-LABEL: func.func @mid
func.func @mid(%x: memref<512x64xf16>, %w: memref<3584x64xf16>, %y: memref<512x3584xf32>) {
  // expected-remark @+2 {{cachet-select-kernel-configs: wgmma GEMM for a mat-mul of 512 rows of x: workgroup tiles of 128 rows of x by 128 weight rows}}
  // expected-remark @+1 {{cachet-lower-matvec: wgmma GEMM: 4 x 28 workgroups}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<512x64xf16>, memref<3584x64xf16>) outs(%y : memref<512x3584xf32>)
  return
}

// -----

// 512 x 4608: 144 tiles of 128 x 128 would take two waves of one per
// compute unit (the second of 12), so the widest of the cheapest weight
// tiles by waves x (rows + 64): 160 rows, 116 workgroups in one wave.
// CHECK-LABEL: func.func @full
func.func @full(%x: memref<512x64xf16>, %w: memref<4608x64xf16>, %y: memref<512x4608xf32>) {
  // expected-remark @+2 {{wgmma.mma_async m64n160k16 on f16 with f32 accumulators (160 weight rows per tile: 116 workgroups in 1 wave(s) of one per compute unit, against 72 in 1 with 256)}}
  // expected-remark @+1 {{cachet-lower-matvec: wgmma GEMM: 4 x 29 workgroups}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<512x64xf16>, memref<4608x64xf16>) outs(%y : memref<512x4608xf32>)
  return
}

// -----

// 512 x 14336 (Llama-3-8B's gate): 128 x 256 tiles would be 224 workgroups
// in 2 waves on 132 compute units, 128 x 224 ones are 256 in 2 waves, each
// 1/8 smaller (0.094 against 0.102 ms on an H100, run 144).
// CHECK-LABEL: func.func @waves
func.func @waves(%x: memref<512x4096xbf16>, %w: memref<14336x4096xbf16>, %y: memref<512x14336xf32>) {
  // expected-remark @+2 {{cachet-select-kernel-configs: wgmma GEMM for a mat-mul of 512 rows of x: workgroup tiles of 128 rows of x by 224 weight rows, 2 warpgroups, steps of 64 columns copied asynchronously into 4 buffers of dynamic workgroup memory (181248 bytes) in the 128-byte swizzle, wgmma.mma_async m64n224k16 on bf16 with f32 accumulators (224 weight rows per tile: 256 workgroups in 2 wave(s) of one per compute unit, against 224 in 2 with 256)}}
  // expected-remark @+1 {{cachet-lower-matvec: wgmma GEMM: 4 x 64 workgroups of 2 warpgroups, each a 128 x 224 tile}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<512x4096xbf16>, memref<14336x4096xbf16>) outs(%y : memref<512x14336xf32>)
  return
}
