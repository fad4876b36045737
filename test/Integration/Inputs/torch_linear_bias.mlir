// torch-mlir's aten.linear(x, W, b) on [1, T, K]: collapse to 2-D, transpose W, broadcast bias into the output, matmul, expand.
func.func @lin(%x: tensor<1x4x256xf16>, %w: tensor<64x256xf16> {cachet.weight}, %b: tensor<64xf32>) -> tensor<1x4x64xf32> {
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x4x256xf16> into tensor<4x256xf16>
  %e = tensor.empty() : tensor<256x64xf16>
  %wt = linalg.transpose ins(%w : tensor<64x256xf16>) outs(%e : tensor<256x64xf16>) permutation = [1, 0]
  %be = tensor.empty() : tensor<4x64xf32>
  %bb = linalg.broadcast ins(%b : tensor<64xf32>) outs(%be : tensor<4x64xf32>) dimensions = [0]
  %y = linalg.matmul ins(%x2, %wt : tensor<4x256xf16>, tensor<256x64xf16>) outs(%bb : tensor<4x64xf32>) -> tensor<4x64xf32>
  %y3 = tensor.expand_shape %y [[0, 1], [2]] output_shape [1, 4, 64] : tensor<4x64xf32> into tensor<1x4x64xf32>
  return %y3 : tensor<1x4x64xf32>
}
