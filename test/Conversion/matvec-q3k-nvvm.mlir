// A q3_K mat-vec (2-bit quants, a plane of high bits, 6-bit scales per 16)
// through the whole NVVM pipeline: slices of 16 values (NVVM's super-block
// slice, one scale each) decoded in registers, assembled by ptxas; and a
// small-batch mat-mul of 8 rows of x on mma.sync. (lavapipe runs slices of
// 4 against the CPU reference, matvec-blocks.test; the CPU reference
// against an independent Python decoder, ggml-decode.test.)
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 format=bin" -o /dev/null 2>&1 | FileCheck %s
// CHECK: remark: cachet-lower-matvec: subgroup kernel: 32 lanes per row, {{.*}} q3_K slices of 16 values per lane in flight, 2 rows per subgroup; the blocks decoded in registers, the dequantized copy never written
// CHECK: remark: cachet-lower-matvec: mma-sync kernel: 4 subgroups per block share 16 weight rows, 8 rows of x; the q3_K blocks decoded to f16 pairs in registers
// CHECK-NOT: error
func.func @matvec(%w: tensor<64x2x!cachet.q3_K> {cachet.weight}, %x: tensor<512xf16>) -> tensor<64xf32> {
  %z = arith.constant 0.0 : f32
  %d = cachet.dequantize %w : tensor<64x2x!cachet.q3_K> -> tensor<64x512xf16>
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %y = linalg.matvec ins(%d, %x : tensor<64x512xf16>, tensor<512xf16>) outs(%f : tensor<64xf32>) -> tensor<64xf32>
  return %y : tensor<64xf32>
}
func.func @batch(%w: tensor<64x2x!cachet.q3_K> {cachet.weight}, %x: tensor<8x512xf16>) -> tensor<8x64xf32> {
  %z = arith.constant 0.0 : f32
  %d = cachet.dequantize %w : tensor<64x2x!cachet.q3_K> -> tensor<64x512xf16>
  %e = tensor.empty() : tensor<8x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %d : tensor<8x512xf16>, tensor<64x512xf16>) outs(%f : tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
