// RUN: cachet-opt %s -split-input-file -cachet-raise-quantize -canonicalize -verify-diagnostics | FileCheck %s

// The split q8_0 quantization a front end writes for a KV cache append, in
// linalg: raised to cachet.quantize (rounding <away>, ggml's roundf), the
// insertions into the cache kept.

#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
#red4 = affine_map<(a, b, c, d) -> (a, b, c)>
#id3 = affine_map<(a, b, c) -> (a, b, c)>
// CHECK-LABEL: func.func @append_f16
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x2x128xf16>, %[[CQ:[^:]*]]: tensor<64x2x128xi8>, %[[CS:[^:]*]]: tensor<64x2x4xf16>, %[[P:[^:]*]]: index
// CHECK-NEXT: %[[Q:.*]], %[[S:.*]] = cachet.quantize %[[X]] : tensor<4x2x128xf16> -> tensor<4x2x128xi8>, tensor<4x2x4xf16>
// CHECK-NEXT: %[[CS2:.*]] = tensor.insert_slice %[[S]] into %[[CS]][%[[P]], 0, 0] [4, 2, 4] [1, 1, 1]
// CHECK-NEXT: %[[CQ2:.*]] = tensor.insert_slice %[[Q]] into %[[CQ]][%[[P]], 0, 0] [4, 2, 128] [1, 1, 1]
// CHECK-NEXT: return %[[CQ2]], %[[CS2]]
func.func @append_f16(%x: tensor<4x2x128xf16>, %cq: tensor<64x2x128xi8>,
    %cs: tensor<64x2x4xf16>, %p: index) -> (tensor<64x2x128xi8>, tensor<64x2x4xf16>) {
  %xb = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [4, 2, 4, 32]
      : tensor<4x2x128xf16> into tensor<4x2x4x32xf16>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x2x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x2x4xf32>) -> tensor<4x2x4xf32>
  %amax = linalg.generic {indexing_maps = [#id4, #red4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%xb : tensor<4x2x4x32xf16>) outs(%fill : tensor<4x2x4xf32>) {
  ^bb0(%in: f16, %acc: f32):
    %f = arith.extf %in : f16 to f32
    %a = math.absf %f : f32
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x2x4xf32>
  %e1 = tensor.empty() : tensor<4x2x4x32xi8>
  // expected-remark @+1 {{cachet-raise-quantize: raised to cachet.quantize: split q8_0 of 'tensor<4x2x128xf16>', rounding <away>}}
  %q = linalg.generic {indexing_maps = [#id4, #red4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%xb, %amax : tensor<4x2x4x32xf16>, tensor<4x2x4xf32>) outs(%e1 : tensor<4x2x4x32xi8>) {
  ^bb0(%in: f16, %m: f32, %out: i8):
    %c127 = arith.constant 127.0 : f32
    %cinv127 = arith.constant 0.00787401571 : f32
    %c0 = arith.constant 0.0 : f32
    %c1 = arith.constant 1.0 : f32
    %d = arith.divf %m, %c127 : f32
    %nz = arith.cmpf une, %d, %c0 : f32
    %inv = arith.divf %c1, %d : f32
    %id = arith.select %nz, %inv, %c0 : f32
    %f = arith.extf %in : f16 to f32
    %y = arith.mulf %f, %id : f32
    %r = math.round %y : f32
    %i = arith.fptosi %r : f32 to i8
    linalg.yield %i : i8
  } -> tensor<4x2x4x32xi8>
  %e2 = tensor.empty() : tensor<4x2x4xf16>
  %s = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%amax : tensor<4x2x4xf32>) outs(%e2 : tensor<4x2x4xf16>) {
  ^bb0(%m: f32, %out: f16):
    %c127 = arith.constant 127.0 : f32
    %d = arith.divf %m, %c127 : f32
    %h = arith.truncf %d : f32 to f16
    linalg.yield %h : f16
  } -> tensor<4x2x4xf16>
  %cs2 = tensor.insert_slice %s into %cs[%p, 0, 0] [4, 2, 4] [1, 1, 1] : tensor<4x2x4xf16> into tensor<64x2x4xf16>
  %qc = tensor.collapse_shape %q [[0], [1], [2, 3]] : tensor<4x2x4x32xi8> into tensor<4x2x128xi8>
  %cq2 = tensor.insert_slice %qc into %cq[%p, 0, 0] [4, 2, 128] [1, 1, 1] : tensor<4x2x128xi8> into tensor<64x2x128xi8>
  return %cq2, %cs2 : tensor<64x2x128xi8>, tensor<64x2x4xf16>
}

// -----

// math.roundeven raises with rounding <even>; f32 values, the maximum as
// select(acc > a, acc, a), no scales computed.

#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
#red4 = affine_map<(a, b, c, d) -> (a, b, c)>
#id3 = affine_map<(a, b, c) -> (a, b, c)>
// CHECK-LABEL: func.func @append_even_f32
// CHECK: %[[Q:.*]], %{{.*}} = cachet.quantize %{{.*}} rounding <even> : tensor<4x2x128xf32> -> tensor<4x2x128xi8>, tensor<4x2x4xf16>
// CHECK-NEXT: tensor.insert_slice %[[Q]]
// CHECK-NOT: linalg.generic
func.func @append_even_f32(%x: tensor<4x2x128xf32>, %cq: tensor<64x2x128xi8>,
    %cs: tensor<64x2x4xf16>, %p: index) -> (tensor<64x2x128xi8>) {
  %xb = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [4, 2, 4, 32]
      : tensor<4x2x128xf32> into tensor<4x2x4x32xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x2x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x2x4xf32>) -> tensor<4x2x4xf32>
  %amax = linalg.generic {indexing_maps = [#id4, #red4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%xb : tensor<4x2x4x32xf32>) outs(%fill : tensor<4x2x4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    
    %a = math.absf %in : f32
    %gt = arith.cmpf ogt, %acc, %a : f32
    %m = arith.select %gt, %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x2x4xf32>
  %e1 = tensor.empty() : tensor<4x2x4x32xi8>
  // expected-remark @+1 {{cachet-raise-quantize: raised to cachet.quantize: split q8_0 of 'tensor<4x2x128xf32>', rounding <even>; the function computes no scales, so the scales result is unused}}
  %q = linalg.generic {indexing_maps = [#id4, #red4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%xb, %amax : tensor<4x2x4x32xf32>, tensor<4x2x4xf32>) outs(%e1 : tensor<4x2x4x32xi8>) {
  ^bb0(%in: f32, %m: f32, %out: i8):
    %c127 = arith.constant 127.0 : f32
    %cinv127 = arith.constant 0.00787401571 : f32
    %c0 = arith.constant 0.0 : f32
    %c1 = arith.constant 1.0 : f32
    %d = arith.divf %m, %c127 : f32
    %nz = arith.cmpf une, %d, %c0 : f32
    %inv = arith.divf %c1, %d : f32
    %id = arith.select %nz, %inv, %c0 : f32
    
    %y = arith.mulf %in, %id : f32
    %r = math.roundeven %y : f32
    %i = arith.fptosi %r : f32 to i8
    linalg.yield %i : i8
  } -> tensor<4x2x4x32xi8>
  %qc = tensor.collapse_shape %q [[0], [1], [2, 3]] : tensor<4x2x4x32xi8> into tensor<4x2x128xi8>
  %cq2 = tensor.insert_slice %qc into %cq[%p, 0, 0] [4, 2, 128] [1, 1, 1] : tensor<4x2x128xi8> into tensor<64x2x128xi8>
  return %cq2 : tensor<64x2x128xi8>
}

// -----

// bf16 values, arith.maxnumf.

#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
#red4 = affine_map<(a, b, c, d) -> (a, b, c)>
#id3 = affine_map<(a, b, c) -> (a, b, c)>
// CHECK-LABEL: func.func @append_bf16
// CHECK: cachet.quantize %{{.*}} : tensor<4x2x128xbf16> -> tensor<4x2x128xi8>, tensor<4x2x4xf16>
// CHECK-NOT: linalg.generic
func.func @append_bf16(%x: tensor<4x2x128xbf16>, %cq: tensor<64x2x128xi8>,
    %cs: tensor<64x2x4xf16>, %p: index) -> (tensor<64x2x128xi8>, tensor<64x2x4xf16>) {
  %xb = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [4, 2, 4, 32]
      : tensor<4x2x128xbf16> into tensor<4x2x4x32xbf16>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x2x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x2x4xf32>) -> tensor<4x2x4xf32>
  %amax = linalg.generic {indexing_maps = [#id4, #red4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%xb : tensor<4x2x4x32xbf16>) outs(%fill : tensor<4x2x4xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %f = arith.extf %in : bf16 to f32
    %a = math.absf %f : f32
    %m = arith.maxnumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x2x4xf32>
  %e1 = tensor.empty() : tensor<4x2x4x32xi8>
  // expected-remark @+1 {{cachet-raise-quantize: raised to cachet.quantize: split q8_0 of 'tensor<4x2x128xbf16>', rounding <away>}}
  %q = linalg.generic {indexing_maps = [#id4, #red4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%xb, %amax : tensor<4x2x4x32xbf16>, tensor<4x2x4xf32>) outs(%e1 : tensor<4x2x4x32xi8>) {
  ^bb0(%in: bf16, %m: f32, %out: i8):
    %c127 = arith.constant 127.0 : f32
    %cinv127 = arith.constant 0.00787401571 : f32
    %c0 = arith.constant 0.0 : f32
    %c1 = arith.constant 1.0 : f32
    %d = arith.divf %m, %c127 : f32
    %nz = arith.cmpf une, %d, %c0 : f32
    %inv = arith.divf %c1, %d : f32
    %id = arith.select %nz, %inv, %c0 : f32
    %f = arith.extf %in : bf16 to f32
    %y = arith.mulf %f, %id : f32
    %r = math.round %y : f32
    %i = arith.fptosi %r : f32 to i8
    linalg.yield %i : i8
  } -> tensor<4x2x4x32xi8>
  %e2 = tensor.empty() : tensor<4x2x4xf16>
  %s = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%amax : tensor<4x2x4xf32>) outs(%e2 : tensor<4x2x4xf16>) {
  ^bb0(%m: f32, %out: f16):
    %c127 = arith.constant 127.0 : f32
    %d = arith.divf %m, %c127 : f32
    %h = arith.truncf %d : f32 to f16
    linalg.yield %h : f16
  } -> tensor<4x2x4xf16>
  %cs2 = tensor.insert_slice %s into %cs[%p, 0, 0] [4, 2, 4] [1, 1, 1] : tensor<4x2x4xf16> into tensor<64x2x4xf16>
  %qc = tensor.collapse_shape %q [[0], [1], [2, 3]] : tensor<4x2x4x32xi8> into tensor<4x2x128xi8>
  %cq2 = tensor.insert_slice %qc into %cq[%p, 0, 0] [4, 2, 128] [1, 1, 1] : tensor<4x2x128xi8> into tensor<64x2x128xi8>
  return %cq2, %cs2 : tensor<64x2x128xi8>, tensor<64x2x4xf16>
}

// -----

// amax * (1/127) rounds differently from amax / 127: untouched.

#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
#red4 = affine_map<(a, b, c, d) -> (a, b, c)>
#id3 = affine_map<(a, b, c) -> (a, b, c)>
// CHECK-LABEL: func.func @scale_by_reciprocal
// CHECK-NOT: cachet.quantize
// CHECK: linalg.generic
func.func @scale_by_reciprocal(%x: tensor<4x2x128xf16>, %cq: tensor<64x2x128xi8>,
    %cs: tensor<64x2x4xf16>, %p: index) -> (tensor<64x2x128xi8>, tensor<64x2x4xf16>) {
  %xb = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [4, 2, 4, 32]
      : tensor<4x2x128xf16> into tensor<4x2x4x32xf16>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x2x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x2x4xf32>) -> tensor<4x2x4xf32>
  %amax = linalg.generic {indexing_maps = [#id4, #red4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%xb : tensor<4x2x4x32xf16>) outs(%fill : tensor<4x2x4xf32>) {
  ^bb0(%in: f16, %acc: f32):
    %f = arith.extf %in : f16 to f32
    %a = math.absf %f : f32
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x2x4xf32>
  %e1 = tensor.empty() : tensor<4x2x4x32xi8>
  // expected-remark @+1 {{cachet-raise-quantize: not raised: the quant's factor is not 'd != 0 ? 1 / d : 0' with d = amax / 127 in f32, the ggml q8_0 rule}}
  %q = linalg.generic {indexing_maps = [#id4, #red4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%xb, %amax : tensor<4x2x4x32xf16>, tensor<4x2x4xf32>) outs(%e1 : tensor<4x2x4x32xi8>) {
  ^bb0(%in: f16, %m: f32, %out: i8):
    %c127 = arith.constant 127.0 : f32
    %cinv127 = arith.constant 0.00787401571 : f32
    %c0 = arith.constant 0.0 : f32
    %c1 = arith.constant 1.0 : f32
    %d = arith.mulf %m, %cinv127 : f32
    %nz = arith.cmpf une, %d, %c0 : f32
    %inv = arith.divf %c1, %d : f32
    %id = arith.select %nz, %inv, %c0 : f32
    %f = arith.extf %in : f16 to f32
    %y = arith.mulf %f, %id : f32
    %r = math.round %y : f32
    %i = arith.fptosi %r : f32 to i8
    linalg.yield %i : i8
  } -> tensor<4x2x4x32xi8>
  %e2 = tensor.empty() : tensor<4x2x4xf16>
  %s = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%amax : tensor<4x2x4xf32>) outs(%e2 : tensor<4x2x4xf16>) {
  ^bb0(%m: f32, %out: f16):
    %c127 = arith.constant 127.0 : f32
    %d = arith.divf %m, %c127 : f32
    %h = arith.truncf %d : f32 to f16
    linalg.yield %h : f16
  } -> tensor<4x2x4xf16>
  %cs2 = tensor.insert_slice %s into %cs[%p, 0, 0] [4, 2, 4] [1, 1, 1] : tensor<4x2x4xf16> into tensor<64x2x4xf16>
  %qc = tensor.collapse_shape %q [[0], [1], [2, 3]] : tensor<4x2x4x32xi8> into tensor<4x2x128xi8>
  %cq2 = tensor.insert_slice %qc into %cq[%p, 0, 0] [4, 2, 128] [1, 1, 1] : tensor<4x2x128xi8> into tensor<64x2x128xi8>
  return %cq2, %cs2 : tensor<64x2x128xi8>, tensor<64x2x4xf16>
}

// -----

// A conversion without a round truncates: untouched.

#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
#red4 = affine_map<(a, b, c, d) -> (a, b, c)>
#id3 = affine_map<(a, b, c) -> (a, b, c)>
// CHECK-LABEL: func.func @truncating
// CHECK-NOT: cachet.quantize
// CHECK: linalg.generic
func.func @truncating(%x: tensor<4x2x128xf16>, %cq: tensor<64x2x128xi8>,
    %cs: tensor<64x2x4xf16>, %p: index) -> (tensor<64x2x128xi8>, tensor<64x2x4xf16>) {
  %xb = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [4, 2, 4, 32]
      : tensor<4x2x128xf16> into tensor<4x2x4x32xf16>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x2x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x2x4xf32>) -> tensor<4x2x4xf32>
  %amax = linalg.generic {indexing_maps = [#id4, #red4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%xb : tensor<4x2x4x32xf16>) outs(%fill : tensor<4x2x4xf32>) {
  ^bb0(%in: f16, %acc: f32):
    %f = arith.extf %in : f16 to f32
    %a = math.absf %f : f32
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x2x4xf32>
  %e1 = tensor.empty() : tensor<4x2x4x32xi8>
  // expected-remark @+1 {{cachet-raise-quantize: not raised: the quant is not rounded by math.round or math.roundeven before arith.fptosi}}
  %q = linalg.generic {indexing_maps = [#id4, #red4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%xb, %amax : tensor<4x2x4x32xf16>, tensor<4x2x4xf32>) outs(%e1 : tensor<4x2x4x32xi8>) {
  ^bb0(%in: f16, %m: f32, %out: i8):
    %c127 = arith.constant 127.0 : f32
    %cinv127 = arith.constant 0.00787401571 : f32
    %c0 = arith.constant 0.0 : f32
    %c1 = arith.constant 1.0 : f32
    %d = arith.divf %m, %c127 : f32
    %nz = arith.cmpf une, %d, %c0 : f32
    %inv = arith.divf %c1, %d : f32
    %id = arith.select %nz, %inv, %c0 : f32
    %f = arith.extf %in : f16 to f32
    %y = arith.mulf %f, %id : f32
    %i = arith.fptosi %y : f32 to i8
    linalg.yield %i : i8
  } -> tensor<4x2x4x32xi8>
  %e2 = tensor.empty() : tensor<4x2x4xf16>
  %s = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%amax : tensor<4x2x4xf32>) outs(%e2 : tensor<4x2x4xf16>) {
  ^bb0(%m: f32, %out: f16):
    %c127 = arith.constant 127.0 : f32
    %d = arith.divf %m, %c127 : f32
    %h = arith.truncf %d : f32 to f16
    linalg.yield %h : f16
  } -> tensor<4x2x4xf16>
  %cs2 = tensor.insert_slice %s into %cs[%p, 0, 0] [4, 2, 4] [1, 1, 1] : tensor<4x2x4xf16> into tensor<64x2x4xf16>
  %qc = tensor.collapse_shape %q [[0], [1], [2, 3]] : tensor<4x2x4x32xi8> into tensor<4x2x128xi8>
  %cq2 = tensor.insert_slice %qc into %cq[%p, 0, 0] [4, 2, 128] [1, 1, 1] : tensor<4x2x128xi8> into tensor<64x2x128xi8>
  return %cq2, %cs2 : tensor<64x2x128xi8>, tensor<64x2x4xf16>
}

// -----

// Blocks of 16 values are not q8_0: untouched.

#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
#red4 = affine_map<(a, b, c, d) -> (a, b, c)>
#id3 = affine_map<(a, b, c) -> (a, b, c)>
// CHECK-LABEL: func.func @blocks_of_16
// CHECK-NOT: cachet.quantize
// CHECK: linalg.generic
func.func @blocks_of_16(%x: tensor<4x2x128xf16>, %cq: tensor<64x2x128xi8>,
    %cs: tensor<64x2x8xf16>, %p: index) -> (tensor<64x2x128xi8>, tensor<64x2x8xf16>) {
  %xb = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [4, 2, 8, 16]
      : tensor<4x2x128xf16> into tensor<4x2x8x16xf16>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x2x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  %amax = linalg.generic {indexing_maps = [#id4, #red4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%xb : tensor<4x2x8x16xf16>) outs(%fill : tensor<4x2x8xf32>) {
  ^bb0(%in: f16, %acc: f32):
    %f = arith.extf %in : f16 to f32
    %a = math.absf %f : f32
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x2x8x16xi8>
  // expected-remark @+1 {{cachet-raise-quantize: not raised: the innermost dimension of the values is not a block of 32}}
  %q = linalg.generic {indexing_maps = [#id4, #red4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%xb, %amax : tensor<4x2x8x16xf16>, tensor<4x2x8xf32>) outs(%e1 : tensor<4x2x8x16xi8>) {
  ^bb0(%in: f16, %m: f32, %out: i8):
    %c127 = arith.constant 127.0 : f32
    %cinv127 = arith.constant 0.00787401571 : f32
    %c0 = arith.constant 0.0 : f32
    %c1 = arith.constant 1.0 : f32
    %d = arith.divf %m, %c127 : f32
    %nz = arith.cmpf une, %d, %c0 : f32
    %inv = arith.divf %c1, %d : f32
    %id = arith.select %nz, %inv, %c0 : f32
    %f = arith.extf %in : f16 to f32
    %y = arith.mulf %f, %id : f32
    %r = math.round %y : f32
    %i = arith.fptosi %r : f32 to i8
    linalg.yield %i : i8
  } -> tensor<4x2x8x16xi8>
  %e2 = tensor.empty() : tensor<4x2x8xf16>
  %s = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%amax : tensor<4x2x8xf32>) outs(%e2 : tensor<4x2x8xf16>) {
  ^bb0(%m: f32, %out: f16):
    %c127 = arith.constant 127.0 : f32
    %d = arith.divf %m, %c127 : f32
    %h = arith.truncf %d : f32 to f16
    linalg.yield %h : f16
  } -> tensor<4x2x8xf16>
  %cs2 = tensor.insert_slice %s into %cs[%p, 0, 0] [4, 2, 8] [1, 1, 1] : tensor<4x2x8xf16> into tensor<64x2x8xf16>
  %qc = tensor.collapse_shape %q [[0], [1], [2, 3]] : tensor<4x2x8x16xi8> into tensor<4x2x128xi8>
  %cq2 = tensor.insert_slice %qc into %cq[%p, 0, 0] [4, 2, 128] [1, 1, 1] : tensor<4x2x128xi8> into tensor<64x2x128xi8>
  return %cq2, %cs2 : tensor<64x2x128xi8>, tensor<64x2x8xf16>
}

// -----

// Maxima that start from 1.0 are not the block's: untouched.

#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
#red4 = affine_map<(a, b, c, d) -> (a, b, c)>
#id3 = affine_map<(a, b, c) -> (a, b, c)>
// CHECK-LABEL: func.func @max_from_one
// CHECK-NOT: cachet.quantize
// CHECK: linalg.generic
func.func @max_from_one(%x: tensor<4x2x128xf16>, %cq: tensor<64x2x128xi8>,
    %cs: tensor<64x2x4xf16>, %p: index) -> (tensor<64x2x128xi8>, tensor<64x2x4xf16>) {
  %xb = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [4, 2, 4, 32]
      : tensor<4x2x128xf16> into tensor<4x2x4x32xf16>
  %zero = arith.constant 1.0 : f32
  %e0 = tensor.empty() : tensor<4x2x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x2x4xf32>) -> tensor<4x2x4xf32>
  %amax = linalg.generic {indexing_maps = [#id4, #red4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%xb : tensor<4x2x4x32xf16>) outs(%fill : tensor<4x2x4xf32>) {
  ^bb0(%in: f16, %acc: f32):
    %f = arith.extf %in : f16 to f32
    %a = math.absf %f : f32
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x2x4xf32>
  %e1 = tensor.empty() : tensor<4x2x4x32xi8>
  // expected-remark @+1 {{cachet-raise-quantize: not raised: the block maxima do not start from a fill of 0.0 : f32}}
  %q = linalg.generic {indexing_maps = [#id4, #red4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%xb, %amax : tensor<4x2x4x32xf16>, tensor<4x2x4xf32>) outs(%e1 : tensor<4x2x4x32xi8>) {
  ^bb0(%in: f16, %m: f32, %out: i8):
    %c127 = arith.constant 127.0 : f32
    %cinv127 = arith.constant 0.00787401571 : f32
    %c0 = arith.constant 0.0 : f32
    %c1 = arith.constant 1.0 : f32
    %d = arith.divf %m, %c127 : f32
    %nz = arith.cmpf une, %d, %c0 : f32
    %inv = arith.divf %c1, %d : f32
    %id = arith.select %nz, %inv, %c0 : f32
    %f = arith.extf %in : f16 to f32
    %y = arith.mulf %f, %id : f32
    %r = math.round %y : f32
    %i = arith.fptosi %r : f32 to i8
    linalg.yield %i : i8
  } -> tensor<4x2x4x32xi8>
  %e2 = tensor.empty() : tensor<4x2x4xf16>
  %s = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%amax : tensor<4x2x4xf32>) outs(%e2 : tensor<4x2x4xf16>) {
  ^bb0(%m: f32, %out: f16):
    %c127 = arith.constant 127.0 : f32
    %d = arith.divf %m, %c127 : f32
    %h = arith.truncf %d : f32 to f16
    linalg.yield %h : f16
  } -> tensor<4x2x4xf16>
  %cs2 = tensor.insert_slice %s into %cs[%p, 0, 0] [4, 2, 4] [1, 1, 1] : tensor<4x2x4xf16> into tensor<64x2x4xf16>
  %qc = tensor.collapse_shape %q [[0], [1], [2, 3]] : tensor<4x2x4x32xi8> into tensor<4x2x128xi8>
  %cq2 = tensor.insert_slice %qc into %cq[%p, 0, 0] [4, 2, 128] [1, 1, 1] : tensor<4x2x128xi8> into tensor<64x2x128xi8>
  return %cq2, %cs2 : tensor<64x2x128xi8>, tensor<64x2x4xf16>
}

// -----

// math.floor is not a rounding cachet.quantize has: untouched.

#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
#red4 = affine_map<(a, b, c, d) -> (a, b, c)>
#id3 = affine_map<(a, b, c) -> (a, b, c)>
// CHECK-LABEL: func.func @floor
// CHECK-NOT: cachet.quantize
// CHECK: linalg.generic
func.func @floor(%x: tensor<4x2x128xf16>, %cq: tensor<64x2x128xi8>,
    %cs: tensor<64x2x4xf16>, %p: index) -> (tensor<64x2x128xi8>, tensor<64x2x4xf16>) {
  %xb = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [4, 2, 4, 32]
      : tensor<4x2x128xf16> into tensor<4x2x4x32xf16>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x2x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x2x4xf32>) -> tensor<4x2x4xf32>
  %amax = linalg.generic {indexing_maps = [#id4, #red4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%xb : tensor<4x2x4x32xf16>) outs(%fill : tensor<4x2x4xf32>) {
  ^bb0(%in: f16, %acc: f32):
    %f = arith.extf %in : f16 to f32
    %a = math.absf %f : f32
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x2x4xf32>
  %e1 = tensor.empty() : tensor<4x2x4x32xi8>
  // expected-remark @+1 {{cachet-raise-quantize: not raised: the quant is not rounded by math.round or math.roundeven before arith.fptosi}}
  %q = linalg.generic {indexing_maps = [#id4, #red4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%xb, %amax : tensor<4x2x4x32xf16>, tensor<4x2x4xf32>) outs(%e1 : tensor<4x2x4x32xi8>) {
  ^bb0(%in: f16, %m: f32, %out: i8):
    %c127 = arith.constant 127.0 : f32
    %cinv127 = arith.constant 0.00787401571 : f32
    %c0 = arith.constant 0.0 : f32
    %c1 = arith.constant 1.0 : f32
    %d = arith.divf %m, %c127 : f32
    %nz = arith.cmpf une, %d, %c0 : f32
    %inv = arith.divf %c1, %d : f32
    %id = arith.select %nz, %inv, %c0 : f32
    %f = arith.extf %in : f16 to f32
    %y = arith.mulf %f, %id : f32
    %r = math.floor %y : f32
    %i = arith.fptosi %r : f32 to i8
    linalg.yield %i : i8
  } -> tensor<4x2x4x32xi8>
  %e2 = tensor.empty() : tensor<4x2x4xf16>
  %s = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%amax : tensor<4x2x4xf32>) outs(%e2 : tensor<4x2x4xf16>) {
  ^bb0(%m: f32, %out: f16):
    %c127 = arith.constant 127.0 : f32
    %d = arith.divf %m, %c127 : f32
    %h = arith.truncf %d : f32 to f16
    linalg.yield %h : f16
  } -> tensor<4x2x4xf16>
  %cs2 = tensor.insert_slice %s into %cs[%p, 0, 0] [4, 2, 4] [1, 1, 1] : tensor<4x2x4xf16> into tensor<64x2x4xf16>
  %qc = tensor.collapse_shape %q [[0], [1], [2, 3]] : tensor<4x2x4x32xi8> into tensor<4x2x128xi8>
  %cq2 = tensor.insert_slice %qc into %cq[%p, 0, 0] [4, 2, 128] [1, 1, 1] : tensor<4x2x128xi8> into tensor<64x2x128xi8>
  return %cq2, %cs2 : tensor<64x2x128xi8>, tensor<64x2x4xf16>
}

// -----

// A generic on buffers (already bufferized) has no result to raise: left
// alone, no crash.
// CHECK-LABEL: func.func @on_buffers
// CHECK: linalg.generic
func.func @on_buffers(%x: memref<4xf32>, %q: memref<4xi8>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : memref<4xf32>) outs(%q : memref<4xi8>) {
    ^bb0(%a: f32, %o: i8):
      %r = arith.fptosi %a : f32 to i8
      linalg.yield %r : i8
  }
  return
}
