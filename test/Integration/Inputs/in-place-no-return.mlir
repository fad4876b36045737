// The cache argument is updated in place but not returned: the caller still
// sees the update; the result is a sum over the whole updated cache.
#id3 = affine_map<(a, b, c) -> (a, b, c)>
#red = affine_map<(a, b, c) -> (b, c)>
func.func @append_sum(%cache: tensor<16x2x64xf32>, %new: tensor<3x2x64xf32>) -> tensor<2x64xf32> {
  %c = tensor.insert_slice %new into %cache[5, 0, 0] [3, 2, 64] [1, 1, 1] : tensor<3x2x64xf32> into tensor<16x2x64xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x64xf32>) -> tensor<2x64xf32>
  %s = linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%c : tensor<16x2x64xf32>) outs(%f : tensor<2x64xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.addf %a, %o : f32
      linalg.yield %m : f32
  } -> tensor<2x64xf32>
  return %s : tensor<2x64xf32>
}
