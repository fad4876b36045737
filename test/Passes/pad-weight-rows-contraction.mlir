// RUN: cachet-opt %s -split-input-file -verify-diagnostics -cachet-attach-device=profile=gfx1151 -cachet-pad-weight-rows | FileCheck %s

// Weights read by contraction linalg.generic ops (the form IREE and
// torch-mlir produce after generalization), transposed (y = x W^T) or not
// (y = x W), as arguments and as constants: padded like those of the named
// ops (gfx1151: alias stride 2048 B, pad 128 B).

// CHECK-LABEL: func.func @generic_linear
// CHECK-SAME: %arg1: tensor<64x1024xbf16> {cachet.row_pitch = 1088 : i64, cachet.weight}
// CHECK-SAME: %arg2: tensor<1024x1024xbf16> {cachet.row_pitch = 1088 : i64, cachet.weight}
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
module { // expected-remark {{cachet-pad-weight-rows: padded 2 of 2 weights}}
func.func @generic_linear(%x: tensor<8x1024xbf16>,
    // expected-remark @+1 {{argument #1 of @generic_linear (tensor<64x1024xbf16>): padded: 2048 B rows are a multiple of the alias stride 2048 B}}
    %w: tensor<64x1024xbf16> {cachet.weight},
    // expected-remark @+1 {{argument #2 of @generic_linear (tensor<1024x1024xbf16>): padded: 2048 B rows are a multiple of the alias stride 2048 B}}
    %u: tensor<1024x1024xbf16> {cachet.weight}) -> (tensor<8x64xf32>, tensor<8x1024xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x1024xbf16>, tensor<64x1024xbf16>) outs(%f : tensor<8x64xf32>) {
    ^bb0(%a: bf16, %b: bf16, %o: f32):
      %a32 = arith.extf %a : bf16 to f32
      %b32 = arith.extf %b : bf16 to f32
      %p = arith.mulf %a32, %b32 : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
  } -> tensor<8x64xf32>
  %e2 = tensor.empty() : tensor<8x1024xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<8x1024xf32>) -> tensor<8x1024xf32>
  %y2 = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %u : tensor<8x1024xbf16>, tensor<1024x1024xbf16>) outs(%f2 : tensor<8x1024xf32>) {
    ^bb0(%a: bf16, %b: bf16, %o: f32):
      %a32 = arith.extf %a : bf16 to f32
      %b32 = arith.extf %b : bf16 to f32
      %p = arith.mulf %a32, %b32 : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
  } -> tensor<8x1024xf32>
  return %y, %y2 : tensor<8x64xf32>, tensor<8x1024xf32>
}
}

// -----

// A generic that is not a contraction (element-wise) does not make its
// operand a weight read.
module { // expected-remark {{cachet-pad-weight-rows: padded 0 of 1 weights}}
func.func @not_contraction(
    // expected-remark @+1 {{not padded: not read as the weight operand of linalg.matvec, linalg.matmul, linalg.batch_matmul, another contraction or cachet.dequantize}}
    %w: tensor<64x1024xbf16> {cachet.weight}) -> tensor<64x1024xbf16> {
  %e = tensor.empty() : tensor<64x1024xbf16>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<64x1024xbf16>) outs(%e : tensor<64x1024xbf16>) {
    ^bb0(%a: bf16, %o: bf16):
      %n = arith.negf %a : bf16
      linalg.yield %n : bf16
  } -> tensor<64x1024xbf16>
  return %y : tensor<64x1024xbf16>
}
}
