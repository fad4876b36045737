// Attention over f16 K/V, no GQA (3 query heads, 3 KV heads), head dim 48,
// 24 queries after 29 cached positions: a causal token-major attention, and
// a non-causal head-major one with an additive [Sq, S] mask.
func.func @attention(%q: tensor<3x24x48xf16>, %k: tensor<53x3x48xf16>,
                     %v: tensor<53x3x48xf16>, %kh: tensor<3x53x48xf16>,
                     %vh: tensor<3x53x48xf16>, %mask: tensor<24x53xf16>)
    -> (tensor<3x24x48xf16>, tensor<3x24x48xf16>) {
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.144 causal 29
      : tensor<3x24x48xf16>, tensor<53x3x48xf16>, tensor<53x3x48xf16> -> tensor<3x24x48xf16>
  %m = cachet.attention %q, %kh, %vh mask %mask layout <head_major> scale 0.144
      : tensor<3x24x48xf16>, tensor<3x53x48xf16>, tensor<3x53x48xf16>, tensor<24x53xf16> -> tensor<3x24x48xf16>
  return %o, %m : tensor<3x24x48xf16>, tensor<3x24x48xf16>
}
