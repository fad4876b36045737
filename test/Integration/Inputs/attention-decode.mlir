// Decode attention over an ELT KV cache, token-major: 8 query heads sharing
// 2 KV heads (GQA 4:1), SQ new tokens after 300 - SQ cached ones (causal),
// head dim 64. The integration tests substitute ELT, SQ and CAUSAL
// (300 - SQ).
func.func @attention(%q: tensor<8xSQx64xELT>, %k: tensor<300x2x64xELT>,
                     %v: tensor<300x2x64xELT>) -> tensor<8xSQx64xELT> {
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal CAUSAL
      : tensor<8xSQx64xELT>, tensor<300x2x64xELT>, tensor<300x2x64xELT> -> tensor<8xSQx64xELT>
  return %o : tensor<8xSQx64xELT>
}
