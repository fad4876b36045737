// The split q8_0 form of 16 blocks of 32 f32 values: i8 quants and f16
// scales, rounding ROUND.
func.func @quantize(%x: tensor<16x32xf32>) -> (tensor<16x32xi8>, tensor<16x1xf16>) {
  %q, %s = cachet.quantize %x rounding <ROUND> : tensor<16x32xf32> -> tensor<16x32xi8>, tensor<16x1xf16>
  return %q, %s : tensor<16x32xi8>, tensor<16x1xf16>
}
