// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-lower-attention="variant=fast" -verify-diagnostics
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-lower-attention="variant=mma query-tile=24" 2>&1 | FileCheck %s --check-prefix=ROWS

// An unknown variant and a query tile the mma kernel cannot split keep the
// reference lowering, with a remark that names the option.
// ROWS: remark: cachet-lower-attention: reference lowering kept: query-tile 24 is not a multiple of 16
func.func @attention(%q: tensor<2x4x32xf16>, %k: tensor<8x2x32xf16>, %v: tensor<8x2x32xf16>) -> tensor<2x4x32xf16> {
  // expected-remark @+1 {{cachet-lower-attention: reference lowering kept: unknown variant 'fast' (auto, scalar or mma)}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.25
      : tensor<2x4x32xf16>, tensor<8x2x32xf16>, tensor<8x2x32xf16> -> tensor<2x4x32xf16>
  return %o : tensor<2x4x32xf16>
}
