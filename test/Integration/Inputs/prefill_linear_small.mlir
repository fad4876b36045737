// prefill_linear_bf16.mlir at test size: y = x W^T with 2048 B weight rows
// (a multiple of lavapipe's alias stride, so the weight is padded).
func.func @prefill_linear(%x: tensor<16x1024xbf16>,
                          %w: tensor<256x1024xbf16> {cachet.weight}) -> tensor<16x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x256xf32>
  %zf = linalg.fill ins(%z : f32) outs(%e : tensor<16x256xf32>) -> tensor<16x256xf32>
  %y = linalg.matmul
         indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                          affine_map<(m, n, k) -> (n, k)>,
                          affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<16x1024xbf16>, tensor<256x1024xbf16>)
         outs(%zf : tensor<16x256xf32>) -> tensor<16x256xf32>
  return %y : tensor<16x256xf32>
}
