// RMSNorm of a vector as a front end writes it: a sum of squares reduced to a
// 0-d tensor, rsqrt of the mean, then a scale by the norm weight.
#v = affine_map<(i) -> (i)>
#s = affine_map<(i) -> ()>
func.func @rmsnorm(%x: tensor<1000xf32>, %w: tensor<1000xf32> {cachet.weight}) -> (tensor<1000xf32>, tensor<f32>) {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %ss = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]}
      ins(%x : tensor<1000xf32>) outs(%f0 : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %p = arith.mulf %a, %a : f32
      %n = arith.addf %o, %p : f32
      linalg.yield %n : f32
  } -> tensor<f32>
  %e1 = tensor.empty() : tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%ss : tensor<f32>) outs(%e1 : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %n = arith.constant 1000.0 : f32
      %eps = arith.constant 1.0e-5 : f32
      %m = arith.divf %a, %n : f32
      %me = arith.addf %m, %eps : f32
      %rs = math.rsqrt %me : f32
      linalg.yield %rs : f32
  } -> tensor<f32>
  %e2 = tensor.empty() : tensor<1000xf32>
  %y = linalg.generic {indexing_maps = [#v, #s, #v, #v], iterator_types = ["parallel"]}
      ins(%x, %r, %w : tensor<1000xf32>, tensor<f32>, tensor<1000xf32>) outs(%e2 : tensor<1000xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %n = arith.mulf %m, %c : f32
      linalg.yield %n : f32
  } -> tensor<1000xf32>
  return %y, %ss : tensor<1000xf32>, tensor<f32>
}
