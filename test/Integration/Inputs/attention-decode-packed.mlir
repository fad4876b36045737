// Decode attention over a packed FMT KV cache, token-major: 8 query heads
// sharing 2 KV heads (GQA 4:1), SQ new tokens after 300 - SQ cached ones
// (causal), head dim 64. The integration tests substitute FMT, SQ and
// CAUSAL (300 - SQ).
func.func @attention(%q: tensor<8xSQx64xf16>, %kq: tensor<300x2x2x!cachet.FMT>,
                     %vq: tensor<300x2x2x!cachet.FMT>) -> tensor<8xSQx64xf16> {
  %k = cachet.dequantize %kq : tensor<300x2x2x!cachet.FMT> -> tensor<300x2x64xf16>
  %v = cachet.dequantize %vq : tensor<300x2x2x!cachet.FMT> -> tensor<300x2x64xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal CAUSAL
      : tensor<8xSQx64xf16>, tensor<300x2x64xf16>, tensor<300x2x64xf16> -> tensor<8xSQx64xf16>
  return %o : tensor<8xSQx64xf16>
}
