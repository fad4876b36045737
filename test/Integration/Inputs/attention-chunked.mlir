// Prefill attention over a packed FMT KV cache, long enough for a capped
// dequant-once scratch to split it into chunks: 4 query heads sharing 2 KV
// heads, 40 new tokens after 260 cached ones (300 positions, not a
// multiple of the chunks or the key tiles), head dim 64, causal. The
// integration tests substitute FMT.
func.func @attention(%q: tensor<4x40x64xf16>, %kq: tensor<300x2x2x!cachet.FMT>,
                     %vq: tensor<300x2x2x!cachet.FMT>) -> tensor<4x40x64xf16> {
  %k = cachet.dequantize %kq : tensor<300x2x2x!cachet.FMT> -> tensor<300x2x64xf16>
  %v = cachet.dequantize %vq : tensor<300x2x2x!cachet.FMT> -> tensor<300x2x64xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 260
      : tensor<4x40x64xf16>, tensor<300x2x64xf16>, tensor<300x2x64xf16> -> tensor<4x40x64xf16>
  return %o : tensor<4x40x64xf16>
}
