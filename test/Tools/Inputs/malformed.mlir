func.func @f(%a: tensor<2x4x!cachet.q8_0>) {
  %0 = cachet.dequantize %a : tensor<2x4x!cachet.q8_0> -> tensor<2x128xf16>
  return
  %1 = 
}
