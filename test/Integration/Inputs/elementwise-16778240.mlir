// An element-wise generic over 16778240 f32 values, one dimension: more
// workgroups than Vulkan promises along grid x (test/Integration/grid-x-split.test).
#map = affine_map<(d0) -> (d0)>
func.func @f(%a: tensor<16778240xf32>, %b: tensor<16778240xf32>) -> tensor<16778240xf32> {
  %e = tensor.empty() : tensor<16778240xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%a, %b : tensor<16778240xf32>, tensor<16778240xf32>) outs(%e : tensor<16778240xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.mulf %s, %x : f32
    linalg.yield %m : f32
  } -> tensor<16778240xf32>
  return %r : tensor<16778240xf32>
}
