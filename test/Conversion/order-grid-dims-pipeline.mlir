// The generic mat-mul of 512 rows by a 128256-entry vocabulary through
// cachet-compile (the mma-sync GEMM off): its fill and its mat-mul must not
// put the vocabulary dimension on grid y (65535 at most; the H200 run
// failed at launch). cachet-innermost-dim-first puts it first (on the
// threads and grid x: 2004 workgroups of 64; the fill's threads take 4
// elements each, cachet-coarsen-elementwise: 501), so cachet-order-grid-dims
// (test/Conversion/order-grid-dims.mlir) has nothing left to swap. With the
// GEMM (the default on NVVM) its 1002 tiles of 128 weight rows are on grid
// y; on the wgmma GEMM (sm_90a, the h200 profile's default chip) its 501
// tiles of 256.
// The launches as cachet-device-buffers leaves them (the remarks carry no
// op).
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 stop-before-binary matvec-options={gemm=false}" -mlir-print-ir-after=cachet-device-buffers -mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 format=isa" 2>&1 >/dev/null | FileCheck %s --check-prefix=GEMM
// CHECK-NOT: cachet-order-grid-dims
// CHECK: remark: cachet-innermost-dim-first: 2 parallel loops with the innermost dimension first
// CHECK: remark: cachet-coarsen-elementwise: 4 elements per thread along dimension 0, 64 apart: 1026048 workgroups become 256512
// CHECK: remark: cachet-coarsen-elementwise: one element per thread in 1026048 workgroups: 'scf.for' in the body has regions
// CHECK: gpu.launch_func @logits_kernel::@logits_kernel blocks in (%c501, %c512, %c1) threads in (%c64, %c1, %c1)
// CHECK: gpu.launch_func @logits_kernel_0::@logits_kernel blocks in (%c2004, %c512, %c1) threads in (%c64, %c1, %c1)
// GEMM-NOT: cachet-order-grid-dims: dimension
// GEMM: remark: cachet-lower-matvec: mma-sync GEMM: 4 x 1002 workgroups of 4 subgroups
// RUN: cachet-opt %s -cachet-compile="target=nvvm profile=h200 format=isa" 2>&1 >/dev/null | FileCheck %s --check-prefix=WGMMA
// WGMMA-NOT: cachet-order-grid-dims: dimension
// WGMMA: remark: cachet-lower-matvec: wgmma GEMM{{:}} 4 x 501 workgroups of 2 warpgroups, each a 128 x 256 tile
func.func @logits(%x: tensor<512x256xf16>, %w: tensor<128256x256xf16>) -> tensor<512x128256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x128256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<512x128256xf32>) -> tensor<512x128256xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%x, %w : tensor<512x256xf16>, tensor<128256x256xf16>) outs(%f : tensor<512x128256xf32>) -> tensor<512x128256xf32>
  return %r : tensor<512x128256xf32>
}
