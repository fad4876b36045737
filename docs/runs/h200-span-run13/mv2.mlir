func.func @matvec(%w: tensor<14336x4096xbf16> {cachet.weight}, %w2: tensor<14336x4096xbf16> {cachet.weight}, %x: tensor<4096xbf16>) -> (tensor<14336xf32>, tensor<14336xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<14336xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<14336xf32>) -> tensor<14336xf32>
  %y = linalg.matvec ins(%w, %x : tensor<14336x4096xbf16>, tensor<4096xbf16>) outs(%f : tensor<14336xf32>) -> tensor<14336xf32>
  %e2 = tensor.empty() : tensor<14336xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<14336xf32>) -> tensor<14336xf32>
  %y2 = linalg.matvec ins(%w2, %x : tensor<14336x4096xbf16>, tensor<4096xbf16>) outs(%f2 : tensor<14336xf32>) -> tensor<14336xf32>
  return %y, %y2 : tensor<14336xf32>, tensor<14336xf32>
}