// Reductions in front-end form (linalg on tensors): an RMSNorm's mean of
// squares over a bf16 vector of 1000 (a 0-d result), a softmax decomposed
// into max / exp / sum / div over rows of 300, short rows (20), an
// argmax, and an argmax per row over values rounded down to a few levels
// (many ties: the first index of the maximum must win).
#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>
func.func @reductions(%v: tensor<1000xbf16>, %s: tensor<7x300xf32>,
                      %short: tensor<9x20xf32>)
    -> (tensor<f32>, tensor<7x300xf32>, tensor<9xf32>, tensor<f32>,
        tensor<i32>, tensor<7xf32>, tensor<7xi32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %ss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>,
                                         affine_map<(d0) -> ()>],
                        iterator_types = ["reduction"]}
      ins(%v : tensor<1000xbf16>) outs(%z0 : tensor<f32>) {
  ^bb0(%in: bf16, %out: f32):
    %x = arith.extf %in : bf16 to f32
    %sq = arith.mulf %x, %x : f32
    %sum = arith.addf %out, %sq : f32
    linalg.yield %sum : f32
  } -> tensor<f32>

  // Softmax over rows of 300.
  %e1 = tensor.empty() : tensor<7xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<7xf32>) -> tensor<7xf32>
  %max = linalg.generic {indexing_maps = [#row, #red],
                         iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<7x300xf32>) outs(%m0 : tensor<7xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<7xf32>
  %e2 = tensor.empty() : tensor<7x300xf32>
  %exp = linalg.generic {indexing_maps = [#row, #red, #row],
                         iterator_types = ["parallel", "parallel"]}
      ins(%s, %max : tensor<7x300xf32>, tensor<7xf32>)
      outs(%e2 : tensor<7x300xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %ex = math.exp %d : f32
    linalg.yield %ex : f32
  } -> tensor<7x300xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<7xf32>) -> tensor<7xf32>
  %sum = linalg.generic {indexing_maps = [#row, #red],
                         iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<7x300xf32>) outs(%z1 : tensor<7xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<7xf32>
  %probs = linalg.generic {indexing_maps = [#row, #red, #row],
                           iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<7x300xf32>, tensor<7xf32>)
      outs(%e2 : tensor<7x300xf32>) {
  ^bb0(%in: f32, %t: f32, %out: f32):
    %p = arith.divf %in, %t : f32
    linalg.yield %p : f32
  } -> tensor<7x300xf32>

  // Short rows: one thread per output.
  %e3 = tensor.empty() : tensor<9xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<9xf32>) -> tensor<9xf32>
  %rows = linalg.generic {indexing_maps = [#row, #red],
                          iterator_types = ["parallel", "reduction"]}
      ins(%short : tensor<9x20xf32>) outs(%z3 : tensor<9xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<9xf32>

  // Argmax over the first row of the probabilities (first maximum wins).
  %row0 = tensor.extract_slice %probs[0, 0] [1, 300] [1, 1]
      : tensor<7x300xf32> to tensor<300xf32>
  %ei = tensor.empty() : tensor<i32>
  %c0 = arith.constant 0 : i32
  %i0 = linalg.fill ins(%c0 : i32) outs(%ei : tensor<i32>) -> tensor<i32>
  %b0 = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %best:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>,
                                             affine_map<(d0) -> ()>,
                                             affine_map<(d0) -> ()>],
                            iterator_types = ["reduction"]}
      ins(%row0 : tensor<300xf32>) outs(%b0, %i0 : tensor<f32>, tensor<i32>) {
  ^bb0(%in: f32, %bv: f32, %bi: i32):
    %j = linalg.index 0 : index
    %ji = arith.index_cast %j : index to i32
    %gt = arith.cmpf ogt, %in, %bv : f32
    %nv = arith.select %gt, %in, %bv : f32
    %ni = arith.select %gt, %ji, %bi : i32
    linalg.yield %nv, %ni : f32, i32
  } -> (tensor<f32>, tensor<i32>)
  %e7 = tensor.empty() : tensor<7xf32>
  %b7 = linalg.fill ins(%ninf : f32) outs(%e7 : tensor<7xf32>) -> tensor<7xf32>
  %ei7 = tensor.empty() : tensor<7xi32>
  %i7 = linalg.fill ins(%c0 : i32) outs(%ei7 : tensor<7xi32>) -> tensor<7xi32>
  %ties:2 = linalg.generic {indexing_maps = [#row, #red, #red],
                            iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<7x300xf32>) outs(%b7, %i7 : tensor<7xf32>, tensor<7xi32>) {
  ^bb0(%in: f32, %bv: f32, %bi: i32):
    %three = arith.constant 3.0 : f32
    %scaled = arith.mulf %in, %three : f32
    %level = math.floor %scaled : f32
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %gt = arith.cmpf ogt, %level, %bv : f32
    %nv = arith.select %gt, %level, %bv : f32
    %ni = arith.select %gt, %ji, %bi : i32
    linalg.yield %nv, %ni : f32, i32
  } -> (tensor<7xf32>, tensor<7xi32>)
  return %ss, %probs, %rows, %best#0, %best#1, %ties#0, %ties#1
      : tensor<f32>, tensor<7x300xf32>, tensor<9xf32>, tensor<f32>, tensor<i32>,
        tensor<7xf32>, tensor<7xi32>
}
