// Two blocks of FMT dequantized to f32 (NVAL values: 64, or 512 for the
// k-quants' super-blocks).
func.func @dequantize(%b: tensor<2x!cachet.FMT>) -> tensor<NVALxf32> {
  %v = cachet.dequantize %b : tensor<2x!cachet.FMT> -> tensor<NVALxf32>
  return %v : tensor<NVALxf32>
}
