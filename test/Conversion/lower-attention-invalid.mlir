// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-lower-attention="variant=fast" -verify-diagnostics
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-lower-attention="variant=mma query-tile=24" 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-lower-attention="variant=mma tile-pad-bytes=8" 2>&1 | FileCheck %s --check-prefix=PAD
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-lower-attention="variant=mma dynamic-shared=true resident-workgroups=0" 2>&1 | FileCheck %s --check-prefix=RESIDENT

// An unknown variant, a query tile the mma kernel cannot split, a row pad
// that would misalign 16-byte rows and no resident workgroup keep the
// reference lowering, with a remark that names the option.
// ROWS: remark: cachet-lower-attention: reference lowering kept: query-tile 24 is not a multiple of 16 (the mma kernel's rows per subgroup)
// PAD: remark: cachet-lower-attention: reference lowering kept: tile-pad-bytes 8 is not a non-negative multiple of 16
// RESIDENT: remark: cachet-lower-attention: reference lowering kept: resident-workgroups 0 is below 1
func.func @attention(%q: tensor<2x4x32xf16>, %k: tensor<8x2x32xf16>, %v: tensor<8x2x32xf16>) -> tensor<2x4x32xf16> {
  // expected-remark @+1 {{cachet-lower-attention: reference lowering kept: unknown variant 'fast' (auto, scalar, mma or mma-sync)}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.25
      : tensor<2x4x32xf16>, tensor<8x2x32xf16>, tensor<8x2x32xf16> -> tensor<2x4x32xf16>
  return %o : tensor<2x4x32xf16>
}
