func.func @dequant_transpose(%kq: tensor<32768x8x4x!cachet.q8_0>) -> tensor<8x32768x128xf16> {
  %e = tensor.empty() : tensor<8x32768x128xf16>
  %k = cachet.dequant_transpose %kq into %e : tensor<32768x8x4x!cachet.q8_0> -> tensor<8x32768x128xf16>
  return %k : tensor<8x32768x128xf16>
}
