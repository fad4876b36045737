// Two blocks of FMT dequantized to f32 (64 values).
func.func @dequantize(%b: tensor<2x!cachet.FMT>) -> tensor<64xf32> {
  %v = cachet.dequantize %b : tensor<2x!cachet.FMT> -> tensor<64xf32>
  return %v : tensor<64xf32>
}
