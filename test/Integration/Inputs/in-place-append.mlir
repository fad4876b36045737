// A KV-cache append as a front end writes it: the new rows are computed, then
// inserted into the cache argument, which is returned (it aliases argument 0).
#id3 = affine_map<(a, b, c) -> (a, b, c)>
func.func @append(%cache: tensor<16x2x64xf16>, %new: tensor<3x2x64xf16>,
                  %scale: tensor<3x2x64xf16>) -> (tensor<16x2x64xf16>, tensor<3x2x64xf16>) {
  %e = tensor.empty() : tensor<3x2x64xf16>
  %k = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%new, %scale : tensor<3x2x64xf16>, tensor<3x2x64xf16>) outs(%e : tensor<3x2x64xf16>) {
    ^bb0(%a: f16, %b: f16, %o: f16):
      %m = arith.mulf %a, %b : f16
      linalg.yield %m : f16
  } -> tensor<3x2x64xf16>
  %c = tensor.insert_slice %k into %cache[5, 0, 0] [3, 2, 64] [1, 1, 1] : tensor<3x2x64xf16> into tensor<16x2x64xf16>
  return %c, %k : tensor<16x2x64xf16>, tensor<3x2x64xf16>
}
