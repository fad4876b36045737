// cachet-unit-transposes-to-reshapes: a transpose that moves dimensions of
// extent 1 only is a reshape (views after bufferization, no copy kernel).
// RUN: cachet-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(cachet-unit-transposes-to-reshapes))' | FileCheck %s

// Decode's queries, heads first ([T][H][D] to [H][T][D], T = 1), and the
// attention output back.
// CHECK-LABEL: func.func @decode_heads
// CHECK-NOT: linalg.transpose
// CHECK: %[[F:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1, 2]] : tensor<1x32x128xbf16> into tensor<4096xbf16>
// CHECK: %[[Q:.*]] = tensor.expand_shape %[[F]] {{\[}}[0, 1, 2]] output_shape [32, 1, 128] : tensor<4096xbf16> into tensor<32x1x128xbf16>
// CHECK: tensor.collapse_shape %[[Q]]
// CHECK: tensor.expand_shape {{.*}} output_shape [1, 32, 128]
func.func @decode_heads(%x: tensor<1x32x128xbf16>) -> tensor<1x32x128xbf16> {
  %e = tensor.empty() : tensor<32x1x128xbf16>
  // expected-remark @below {{cachet-unit-transposes-to-reshapes: moves dimensions of extent 1 only: a reshape of 'tensor<1x32x128xbf16>' (no copy)}}
  %q = linalg.transpose ins(%x : tensor<1x32x128xbf16>) outs(%e : tensor<32x1x128xbf16>) permutation = [1, 0, 2]
  %e2 = tensor.empty() : tensor<1x32x128xbf16>
  // expected-remark @below {{a reshape of 'tensor<32x1x128xbf16>'}}
  %back = linalg.transpose ins(%q : tensor<32x1x128xbf16>) outs(%e2 : tensor<1x32x128xbf16>) permutation = [1, 0, 2]
  return %back : tensor<1x32x128xbf16>
}

// -----

// Negative: prefill's transpose ([4][32][128] to [32][4][128]) moves
// elements; a dynamic shape is not known to have unit extents. Both stay,
// without a remark.
// CHECK-LABEL: func.func @moves_elements
// CHECK: linalg.transpose
// CHECK: linalg.transpose
func.func @moves_elements(%x: tensor<4x32x128xbf16>, %y: tensor<?x32x128xbf16>, %n: index)
    -> (tensor<32x4x128xbf16>, tensor<32x?x128xbf16>) {
  %e = tensor.empty() : tensor<32x4x128xbf16>
  %q = linalg.transpose ins(%x : tensor<4x32x128xbf16>) outs(%e : tensor<32x4x128xbf16>) permutation = [1, 0, 2]
  %e2 = tensor.empty(%n) : tensor<32x?x128xbf16>
  %d = linalg.transpose ins(%y : tensor<?x32x128xbf16>) outs(%e2 : tensor<32x?x128xbf16>) permutation = [1, 0, 2]
  return %q, %d : tensor<32x4x128xbf16>, tensor<32x?x128xbf16>
}

// -----

// Unit dimensions moved around two others that keep their order: a
// reshape too.
// CHECK-LABEL: func.func @two_units
// CHECK-NOT: linalg.transpose
// CHECK: tensor.expand_shape {{.*}} output_shape [8, 1, 16, 1]
func.func @two_units(%x: tensor<1x8x1x16xf32>) -> tensor<8x1x16x1xf32> {
  %e = tensor.empty() : tensor<8x1x16x1xf32>
  // expected-remark @below {{a reshape of 'tensor<1x8x1x16xf32>'}}
  %t = linalg.transpose ins(%x : tensor<1x8x1x16xf32>) outs(%e : tensor<8x1x16x1xf32>) permutation = [1, 0, 3, 2]
  return %t : tensor<8x1x16x1xf32>
}
