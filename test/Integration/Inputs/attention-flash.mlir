// Prefill attention over a packed FMT KV cache (4 query heads sharing 2 KV
// heads, 40 new tokens after 40 cached ones, head dim 64) with the options
// OPTS (`causal 40` or nothing). 40 queries and 80 positions are not
// multiples of the kernel's tiles. The integration tests substitute FMT and
// OPTS.
func.func @attention(%q: tensor<4x40x64xf16>, %kq: tensor<80x2x2x!cachet.FMT>,
                     %vq: tensor<80x2x2x!cachet.FMT>) -> tensor<4x40x64xf16> {
  %k = cachet.dequantize %kq : tensor<80x2x2x!cachet.FMT> -> tensor<80x2x64xf16>
  %v = cachet.dequantize %vq : tensor<80x2x2x!cachet.FMT> -> tensor<80x2x64xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 OPTS
      : tensor<4x40x64xf16>, tensor<80x2x64xf16>, tensor<80x2x64xf16> -> tensor<4x40x64xf16>
  return %o : tensor<4x40x64xf16>
}
