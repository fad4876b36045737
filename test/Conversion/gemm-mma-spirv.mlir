// A prefill's f16 linear layer on a profile with 16x16x16 f16 cooperative
// matrices, with gemm-mma (on by default since it was measured: 2.5-3.5x
// the tiled GEMM on an H100 through NVIDIA's Vulkan driver, run 162): the
// mma GEMM (gemm_mma, gpu.subgroup_mma), the tiled GEMM beside it as the
// fallback, and host code asking the runtime which one the device runs.
// Each subgroup of 32 lanes sums 2 x 2 fragments of the 64 x 64 tile; the
// weight's rows are the B operand read transposed; the next step's loads
// are in flight while one computes; the sums leave through workgroup
// memory in pairs.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma=true gemm-mma=true mma-fallback=true},func.func(cachet-lower-matvec))' -verify-diagnostics | FileCheck %s
// Without the fallback: the mma GEMM alone.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma=true gemm-mma=true},func.func(cachet-lower-matvec))' 2>&1 | FileCheck %s --check-prefix=ALONE
// Off (gemm-mma=false), on a profile without cooperative matrices, or on a
// target that does not lower gpu.subgroup_mma: the tiled GEMM, saying why.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma=true gemm-mma=false})' 2>&1 >/dev/null | FileCheck %s --check-prefix=OFF
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=lavapipe},cachet-select-kernel-configs{allow-mma=true gemm-mma=true})' 2>&1 >/dev/null | FileCheck %s --check-prefix=NOCOOP
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma=false gemm-mma=true})' 2>&1 >/dev/null | FileCheck %s --check-prefix=NOMMA
// The whole SPIR-V pipeline: KHR cooperative-matrix loads, multiply-adds
// and stores in the kernel.
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=spirv profile=h200 stop-before-binary=true matvec-options={gemm-mma=true}" 2>/dev/null | FileCheck %s --check-prefix=SPIRV
// The default: the same kernels without the option.
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=spirv profile=h200 stop-before-binary=true" 2>/dev/null | FileCheck %s --check-prefix=SPIRV

// OFF: tiled GEMM for a mat-mul of 256 rows of x
// OFF-NOT: remark: cachet-select-kernel-configs: mma GEMM
// NOCOOP: tiled GEMM for a mat-mul of 256 rows of x{{.*}}; not the mma GEMM: the profile has no 16x16x16:f16->f32 cooperative matrix
// NOMMA: tiled GEMM for a mat-mul of 256 rows of x{{.*}}; not the mma GEMM: the target does not lower gpu.subgroup_mma (allow-mma off)
// ALONE: cachet-lower-matvec: mma GEMM: 4 x 6 workgroups of 4 subgroups, each a 64 x 64 tile over 128 columns in steps of 32 (16x16x16 f16 cooperative matrices, 27648 bytes of workgroup memory)
// ALONE-NOT: scf.if
// ALONE-NOT: llvm.call
// ALONE: gpu.subgroup_mma_compute

// CHECK: llvm.func @cachetMgpuHasCooperativeMatrixF16(i32, i32, i32) -> i32
// CHECK-LABEL: func.func @f16
// CHECK: %[[HAS:.*]] = llvm.call @cachetMgpuHasCooperativeMatrixF16(
// CHECK: %[[NE:.*]] = arith.cmpi ne, %[[HAS]]
// CHECK: scf.if %[[NE]] {
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c4{{[_0-9]*}}, {{.*}} = %c6{{[_0-9]*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c128{{[_0-9]*}}, {{.*}}) workgroup(%[[A:.*]] : memref<64x40xf16, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<64x40xf16, #gpu.address_space<workgroup>>, %[[S:.*]] : memref<64x68xf32, #gpu.address_space<workgroup>>)
// CHECK: gpu.subgroup_mma_constant_matrix
// CHECK: vector.load %arg0[{{.*}}] {alignment = 8 : i64} : memref<256x128xf16>, vector<4xf16>
// CHECK: scf.for {{.*}} -> (!gpu.mma_matrix<16x16xf32, "COp">, !gpu.mma_matrix<16x16xf32, "COp">, !gpu.mma_matrix<16x16xf32, "COp">, !gpu.mma_matrix<16x16xf32, "COp">, vector<4xf16>
// CHECK: gpu.barrier
// CHECK: vector.store {{.*}}, %[[A]]
// CHECK: vector.store {{.*}}, %[[B]]
// CHECK: gpu.barrier
// Per 16 columns: 2 A fragments, 2 B fragments (transposed), 4 products.
// CHECK-COUNT-2: gpu.subgroup_mma_load_matrix %[[A]][{{.*}}] {leadDimension = 40 : index} : memref<64x40xf16, #gpu.address_space<workgroup>> -> !gpu.mma_matrix<16x16xf16, "AOp">
// CHECK-COUNT-2: gpu.subgroup_mma_load_matrix %[[B]][{{.*}}] {leadDimension = 40 : index, transpose} : memref<64x40xf16, #gpu.address_space<workgroup>> -> !gpu.mma_matrix<16x16xf16, "BOp">
// CHECK-COUNT-4: gpu.subgroup_mma_compute
// CHECK: scf.yield
// CHECK-COUNT-4: gpu.subgroup_mma_store_matrix {{.*}}, %[[S]][{{.*}}] {leadDimension = 68 : index}
// CHECK: gpu.barrier
// CHECK: memref.load %[[S]]
// CHECK: vector.store {{.*}} {alignment = 8 : i64} : memref<256x384xf32>, vector<2xf32>
// The fallback: the tiled GEMM.
// CHECK: } else {
// CHECK: gpu.launch
// CHECK: vector.fma
// CHECK-NOT: linalg.matmul

// SPIRV-LABEL: spirv.func @f16_kernel
// SPIRV: spirv.KHR.CooperativeMatrixLoad
// SPIRV: spirv.KHR.CooperativeMatrixMulAdd
// SPIRV: spirv.KHR.CooperativeMatrixStore
func.func @f16(%x: memref<256x128xf16>, %w: memref<384x128xf16>) -> memref<256x384xf32> {
  %cst = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<256x384xf32>
  linalg.fill ins(%cst : f32) outs(%y : memref<256x384xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: mma GEMM for a mat-mul of 256 rows of x: workgroup tiles of 64 rows of x by 64 weight rows, 4 subgroups of 32 lanes each summing 2 x 2 fragments of 16x16x16 f16 cooperative matrices (gpu.subgroup_mma, f32 accumulators), steps of 32 columns staged in workgroup memory (27648 bytes with the f32 sums), the next step's loads in flight while one computes; where the device does not run 16x16x16 f16 cooperative matrices (checked at run time), the fallback: tiled GEMM}}
  // expected-remark @+1 {{cachet-lower-matvec: mma GEMM: 4 x 6 workgroups of 4 subgroups, each a 64 x 64 tile over 128 columns in steps of 32 (16x16x16 f16 cooperative matrices, 27648 bytes of workgroup memory); the tiled GEMM beside it, launched where the device does not run 16x16x16 f16 cooperative matrices; the zero fill of the result is done in the kernel}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<384x128xf16>) outs(%y : memref<256x384xf32>)
  return %y : memref<256x384xf32>
}

// -----

// bf16: the tiled GEMM (NVIDIA's Vulkan driver has f16 cooperative
// matrices only).
// CHECK-LABEL: func.func @bf16
// CHECK-NOT: subgroup_mma
func.func @bf16(%x: memref<256x128xbf16>, %w: memref<384x128xbf16>, %y: memref<256x384xf32>) {
  // expected-remark @+2 {{not the mma GEMM: x and the weight are not both f16 (the cooperative matrices are f16 ones)}}
  // expected-remark @+1 {{cachet-lower-matvec: tiled GEMM}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xbf16>, memref<384x128xbf16>) outs(%y : memref<256x384xf32>)
  return
}
