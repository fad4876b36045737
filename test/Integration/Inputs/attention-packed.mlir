// Prefill attention over a packed FMT KV cache, token-major (8 query heads,
// 2 KV heads, 16 new tokens after 48 cached ones, head dim 64). The
// integration tests substitute FMT with each ggml format.
func.func @attention(%q: tensor<8x16x64xf16>, %kq: tensor<64x2x2x!cachet.FMT>,
                     %vq: tensor<64x2x2x!cachet.FMT>) -> tensor<8x16x64xf16> {
  %k = cachet.dequantize %kq : tensor<64x2x2x!cachet.FMT> -> tensor<64x2x64xf16>
  %v = cachet.dequantize %vq : tensor<64x2x2x!cachet.FMT> -> tensor<64x2x64xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 48
      : tensor<8x16x64xf16>, tensor<64x2x64xf16>, tensor<64x2x64xf16> -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}
