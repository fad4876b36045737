// A mat-vec over float weights (ELT, ROWS, COLS substituted by the test).
func.func @mv(%w: tensor<ROWSxCOLSxELT> {cachet.weight}, %x: tensor<COLSxELT>) -> tensor<ROWSxf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<ROWSxf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<ROWSxf32>) -> tensor<ROWSxf32>
  %y = linalg.matvec ins(%w, %x : tensor<ROWSxCOLSxELT>, tensor<COLSxELT>) outs(%f : tensor<ROWSxf32>) -> tensor<ROWSxf32>
  return %y : tensor<ROWSxf32>
}
