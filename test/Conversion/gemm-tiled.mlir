// A prefill's linear layer (a linalg.matmul reading its weight transposed,
// more rows of x than small-batch) on a target without matrix instructions
// (no allow-mma-sync: SPIR-V, ROCDL) as the tiled GEMM: workgroup tiles of
// x rows by weight rows, each step's columns read in 16-byte loads,
// converted to f32 and stored transposed in workgroup memory, each thread
// summing a block of 8 x 8 (4 x 4) of the tile with f32 fused
// multiply-adds, the next step's loads in flight while one computes.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs,func.func(cachet-lower-matvec))' -verify-diagnostics | FileCheck %s
// A profile whose compute units a grid of 128 x 128 tiles would not fill
// (7 / 8 of them, gemm-fill-eighths): 64 x 64 tiles of 4 x 4 per thread,
// steps of 32 columns; the options choose others.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs,func.func(cachet-lower-matvec))' 2>&1 >/dev/null | FileCheck %s --check-prefix=SMALL
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{gemm-tile-m=128 gemm-tile-n=64 gemm-step=32 gemm-subgroups=4},func.func(cachet-lower-matvec))' 2>&1 >/dev/null | FileCheck %s --check-prefix=OPTS
// Options that make no kernel: the generic one, with the reason.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{gemm-tile-m=64 gemm-tile-n=64 gemm-subgroups=3})' 2>&1 >/dev/null | FileCheck %s --check-prefix=UNEVEN
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{gemm=false})' 2>&1 >/dev/null | FileCheck %s --check-prefix=OFF
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=lavapipe},cachet-select-kernel-configs{gemm-tile-m=128 gemm-tile-n=256 gemm-step=32})' 2>&1 >/dev/null | FileCheck %s --check-prefix=MEMORY
// The whole SPIR-V pipeline (16-byte loads as vector<4xi32> words, bf16
// emulated) and ROCDL's down to GCN.
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=spirv profile=h200 stop-before-binary=true" 2>/dev/null | FileCheck %s --check-prefix=SPIRV
// RUN: rm -rf %t && mkdir -p %t
// RUN: env -u ROCM_PATH -u ROCM_ROOT -u ROCM_HOME cachet-opt %s -split-input-file -cachet-compile="target=rocdl chip=gfx942" -cachet-dump-kernel-objects=directory=%t -o /dev/null
// RUN: cat %t/*.s | FileCheck %s --check-prefix=GCN

// SMALL: tiled GEMM for a mat-mul of 256 rows of x: workgroup tiles of 64 rows of x by 64 weight rows (6 workgroups of 128 x 128 would not reach 7 / 8 of the profile's 132 compute units (gemm-fill-eighths)), 256 threads each summing 4 rows of x by 4 weight rows {{.*}} steps of 32 columns
// SMALL: tiled GEMM: 4 x 6 workgroups of 256 threads, each a 64 x 64 tile over 128 columns in steps of 32 (16384 bytes of workgroup memory, f32)
// OPTS: tiled GEMM for a mat-mul of 256 rows of x: workgroup tiles of 128 rows of x by 64 weight rows (gemm-tile-m / gemm-tile-n), 128 threads each summing 16 rows of x by 4 weight rows {{.*}} steps of 32 columns
// OPTS: tiled GEMM: 2 x 6 workgroups of 128 threads, each a 128 x 64 tile over 128 columns in steps of 32 (24576 bytes of workgroup memory, f32)
// UNEVEN: generic kernel: a mat-mul of 256 rows of x, more than small-batch (8); not the tiled GEMM: 'vector_width' (4, weight rows per thread) must be a multiple of 4 dividing the tile's 64, and 'workgroup' (96) threads of that many must divide the tile's 64 x 64 sums
// MEMORY: not the tiled GEMM: a step's f32 tiles take 49152 bytes of workgroup memory, more than the profile's 32768
// OFF-NOT: tiled GEMM
// OFF: generic kernel: a mat-mul of 256 rows of x, more than small-batch (8)

// bf16 x [256][128] times a bf16 weight [384][128] read transposed, into a
// zero-filled f32 result: 2 x 3 workgroups of 256 threads.
// CHECK-LABEL: func.func @bf16
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{[_0-9]*}}, {{.*}} = %c3{{[_0-9]*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c256{{[_0-9]*}}, {{.*}}) workgroup(%[[A:.*]] : memref<16x128xf32, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<16x128xf32, #gpu.address_space<workgroup>>)
// The first step's loads before the loop.
// CHECK-COUNT-2: vector.load %arg{{[01]}}[{{.*}}] {alignment = 16 : i64} : memref<{{256|384}}x128xbf16>, vector<8xbf16>
// The 16 sums as vector<4xf32>, the next step's 16 values as f32.
// CHECK: scf.for {{.*}} -> (vector<4xf32>, {{.*}}, vector<4xf32>, f32, {{.*}}, f32)
// CHECK: gpu.barrier
// CHECK-COUNT-8: memref.store {{.*}}, %[[A]]
// CHECK-COUNT-8: memref.store {{.*}}, %[[B]]
// CHECK: gpu.barrier
// CHECK-COUNT-2: vector.load %arg{{[01]}}
// Each column: 2 loads of 4 x rows and 2 of 4 weight rows, 8 x 2 fmas.
// CHECK-COUNT-2: vector.load %[[A]]
// CHECK-COUNT-2: vector.load %[[B]]
// CHECK-COUNT-16: vector.fma
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
// CHECK: scf.if
// CHECK: vector.store {{.*}} {alignment = 8 : i64} : memref<256x384xf32>, vector<2xf32>
// CHECK-NOT: linalg.matmul
// SPIRV-LABEL: spirv.func @bf16_kernel
// SPIRV: spirv.Load "StorageBuffer" {{.*}} : vector<4xi32>
// SPIRV: spirv.ControlBarrier <Workgroup>
// SPIRV: spirv.GL.Fma {{.*}} : vector<4xf32>
// GCN: global_load_dwordx4
// GCN: s_barrier
// GCN: ds_read_b128
// GCN: v_pk_fma_f32
func.func @bf16(%x: memref<256x128xbf16>, %w: memref<384x128xbf16>) -> memref<256x384xf32> {
  %cst = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<256x384xf32>
  linalg.fill ins(%cst : f32) outs(%y : memref<256x384xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: tiled GEMM for a mat-mul of 256 rows of x: workgroup tiles of 128 rows of x by 128 weight rows (no profile), 256 threads each summing 8 rows of x by 8 weight rows with f32 fused multiply-adds, steps of 16 columns of bf16 read in 16-byte loads and staged in workgroup memory as f32, the next step's loads in flight while one computes}}
  // expected-remark @+1 {{cachet-lower-matvec: tiled GEMM: 2 x 3 workgroups of 256 threads, each a 128 x 128 tile over 128 columns in steps of 16 (16384 bytes of workgroup memory, f32); the zero fill of the result is done in the kernel}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xbf16>, memref<384x128xbf16>) outs(%y : memref<256x384xf32>)
  return %y : memref<256x384xf32>
}

// -----

// f32 operands, and columns that no step of 8 divides: the generic kernel,
// with the reasons.
// CHECK-LABEL: func.func @not_tiled
// CHECK-COUNT-2: linalg.matmul
// CHECK-NOT: gpu.launch
func.func @not_tiled(%x: memref<256x64xf32>, %w: memref<128x64xf32>, %y: memref<256x128xf32>,
                     %xh: memref<256x36xf16>, %wh: memref<128x36xf16>) {
  // expected-remark @+1 {{cachet-select-kernel-configs: generic kernel: a mat-mul of 256 rows of x, more than small-batch (8); not the tiled GEMM: x and the weight are not both f16 or both bf16}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x64xf32>, memref<128x64xf32>) outs(%y : memref<256x128xf32>)
  // expected-remark @+1 {{cachet-select-kernel-configs: generic kernel: a mat-mul of 256 rows of x, more than small-batch (8); not the tiled GEMM: 36 columns are not a multiple of 8 (a step)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%xh, %wh : memref<256x36xf16>, memref<128x36xf16>) outs(%y : memref<256x128xf32>)
  return
}
