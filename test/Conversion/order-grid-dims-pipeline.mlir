// The generic mat-mul of 512 rows by a 128256-entry vocabulary through
// cachet-compile (the mma-sync GEMM off): the vocabulary dimension of its
// fill and of its mat-mul goes to grid x (grid y allows 65535; the H200 run
// failed at launch). With the GEMM (the default on NVVM) its 1002 tiles of
// 128 weight rows are on grid y.
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 format=isa matvec-options={gemm=false}" 2>&1 >/dev/null | FileCheck %s
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 format=isa" 2>&1 >/dev/null | FileCheck %s --check-prefix=GEMM
// GEMM-NOT: cachet-order-grid-dims: dimension
// GEMM: remark: cachet-lower-matvec: mma-sync GEMM: 4 x 1002 workgroups of 8 subgroups
// CHECK: remark: cachet-order-grid-dims: dimension 1 (128256 workgroups) swapped with dimension 0 (8): it maps to grid x, as grid y allows at most 65535
// CHECK: remark: cachet-order-grid-dims: dimension 1 (128256 workgroups) swapped with dimension 0 (8): it maps to grid x, as grid y allows at most 65535
func.func @logits(%x: tensor<512x256xf16>, %w: tensor<128256x256xf16>) -> tensor<512x128256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x128256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<512x128256xf32>) -> tensor<512x128256xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%x, %w : tensor<512x256xf16>, tensor<128256x256xf16>) outs(%f : tensor<512x128256xf32>) -> tensor<512x128256xf32>
  return %r : tensor<512x128256xf32>
}
