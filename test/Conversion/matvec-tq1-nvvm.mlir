// A tq1_0 (ternary, base-3 digits) mat-vec through the whole NVVM pipeline:
// the blocks decoded in registers in slices of 16 values (NVVM's
// super-block slice), the last 16 values of a block taking bytes 48 .. 51
// again with the next digit every 4 values; ptxas assembles it. (lavapipe
// runs slices of 4 against the CPU reference: matvec-blocks.test.)
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 format=bin" -o /dev/null 2>&1 | FileCheck %s
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 format=isa" 2>/dev/null | FileCheck %s --check-prefix=PTX
// CHECK: remark: cachet-select-kernel-configs: subgroup kernel on tq1_0 blocks decoded in registers (never materialized): 32 lanes per row, 4 subgroups per block, 4 (paired: 2) slices of 16 values per lane in flight, 2 rows per subgroup
// CHECK: remark: cachet-lower-matvec: subgroup kernel: 32 lanes per row, {{.*}} tq1_0 slices of 16 values per lane in flight, 2 rows per subgroup; the blocks decoded in registers, the dequantized copy never written
// CHECK-NOT: error
// PTX-COUNT-1: .entry
// PTX: mul.lo.s32
// PTX: fma.rn.f32
// PTX-NOT: .entry
func.func @matvec(%w: tensor<64x2x!cachet.tq1_0> {cachet.weight}, %x: tensor<512xf16>) -> tensor<64xf32> {
  %z = arith.constant 0.0 : f32
  %d = cachet.dequantize %w : tensor<64x2x!cachet.tq1_0> -> tensor<64x512xf16>
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %y = linalg.matvec ins(%d, %x : tensor<64x512xf16>, tensor<512xf16>) outs(%f : tensor<64xf32>) -> tensor<64xf32>
  return %y : tensor<64xf32>
}
