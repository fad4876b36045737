// Decode attention over a packed q8_0 cache, causal at 900 of 2048
// positions: cachet-dequant-once-kv (forced) dequantizes only the
// positions the kernel reads into the head-major scratch (an insert_slice
// of the bounded dequant-transpose).
func.func @attention(%q: tensor<8x1x64xf16>, %kq: tensor<2048x2x2x!cachet.q8_0>,
                     %vq: tensor<2048x2x2x!cachet.q8_0>) -> tensor<8x1x64xf16> {
  %k = cachet.dequantize %kq : tensor<2048x2x2x!cachet.q8_0> -> tensor<2048x2x64xf16>
  %v = cachet.dequantize %vq : tensor<2048x2x2x!cachet.q8_0> -> tensor<2048x2x64xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 900
      : tensor<8x1x64xf16>, tensor<2048x2x64xf16>, tensor<2048x2x64xf16> -> tensor<8x1x64xf16>
  return %o : tensor<8x1x64xf16>
}
