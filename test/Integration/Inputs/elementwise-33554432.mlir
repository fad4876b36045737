// An element-wise generic over 33554432 f32 values, one dimension: more
// workgroups than Vulkan promises along grid x (test/Integration/grid-x-split.test).
#map = affine_map<(d0) -> (d0)>
func.func @f(%a: tensor<33554432xf32>, %b: tensor<33554432xf32>) -> tensor<33554432xf32> {
  %e = tensor.empty() : tensor<33554432xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%a, %b : tensor<33554432xf32>, tensor<33554432xf32>) outs(%e : tensor<33554432xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.mulf %s, %x : f32
    linalg.yield %m : f32
  } -> tensor<33554432xf32>
  return %r : tensor<33554432xf32>
}
