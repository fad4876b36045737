// cachet-keep-argument-updates keeps a tensor.insert_slice that covers a whole
// function argument as an update of that argument, so that no folder turns
// it into a new buffer: the caller's cache is written whatever the sizes.
// RUN: cachet-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(cachet-keep-argument-updates),canonicalize)' | FileCheck %s
// Through the whole pipeline the argument is the buffer written and returned
// (no allocation of a new cache).
// RUN: cachet-opt %s -split-input-file -cachet-compile-reference -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// REMARK-COUNT-3: remark: cachet-keep-argument-updates: the slice covers all of argument 1

// CHECK-LABEL: func.func @whole_cache
// CHECK-SAME: (%[[NEW:.*]]: tensor<4x64xf16>, %[[CACHE:.*]]: tensor<4x64xf16>)
// CHECK: %[[UPD:.*]] = bufferization.materialize_in_destination %[[NEW]] in %[[CACHE]]
// CHECK: return %[[UPD]]
func.func @whole_cache(%new: tensor<4x64xf16>, %cache: tensor<4x64xf16>)
    -> tensor<4x64xf16> {
  // expected-remark @below {{cachet-keep-argument-updates: the slice covers all of argument 1: kept as an update of that argument}}
  %0 = tensor.insert_slice %new into %cache[0, 0] [4, 64] [1, 1]
      : tensor<4x64xf16> into tensor<4x64xf16>
  return %0 : tensor<4x64xf16>
}

// -----

// The destination reaches the argument through an earlier partial append and
// a destination-style op.
// CHECK-LABEL: func.func @through_updates
// CHECK: linalg.fill
// CHECK: tensor.insert_slice
// CHECK: bufferization.materialize_in_destination
func.func @through_updates(%new: tensor<4x64xf16>, %cache: tensor<4x64xf16>,
                           %row: tensor<1x64xf16>) -> tensor<4x64xf16> {
  %zero = arith.constant 0.0 : f16
  %filled = linalg.fill ins(%zero : f16) outs(%cache : tensor<4x64xf16>)
      -> tensor<4x64xf16>
  %0 = tensor.insert_slice %row into %filled[1, 0] [1, 64] [1, 1]
      : tensor<1x64xf16> into tensor<4x64xf16>
  // expected-remark @below {{covers all of argument 1}}
  %1 = tensor.insert_slice %new into %0[0, 0] [4, 64] [1, 1]
      : tensor<4x64xf16> into tensor<4x64xf16>
  return %1 : tensor<4x64xf16>
}

// -----

// Block-quantized caches, as a quantized KV append writes them.
// CHECK-LABEL: func.func @packed_cache
// CHECK: bufferization.materialize_in_destination
// CHECK-SAME: tensor<2x1x2x!cachet.q8_0>
func.func @packed_cache(%k: tensor<2x1x64xf16>,
                        %cache: tensor<2x1x2x!cachet.q8_0>)
    -> tensor<2x1x2x!cachet.q8_0> {
  %q = cachet.quantize %k : tensor<2x1x64xf16> -> tensor<2x1x2x!cachet.q8_0>
  // expected-remark @below {{covers all of argument 1}}
  %0 = tensor.insert_slice %q into %cache[0, 0, 0] [2, 1, 2] [1, 1, 1]
      : tensor<2x1x2x!cachet.q8_0> into tensor<2x1x2x!cachet.q8_0>
  return %0 : tensor<2x1x2x!cachet.q8_0>
}

// -----

// Negative: a partial append is left to bufferization, which writes in place.
// CHECK-LABEL: func.func @partial
// CHECK-NOT: materialize_in_destination
// CHECK: tensor.insert_slice
func.func @partial(%new: tensor<2x64xf16>, %cache: tensor<4x64xf16>)
    -> tensor<4x64xf16> {
  %0 = tensor.insert_slice %new into %cache[2, 0] [2, 64] [1, 1]
      : tensor<2x64xf16> into tensor<4x64xf16>
  return %0 : tensor<4x64xf16>
}

// -----

// Negative: a destination that is not an argument; the folder may remove it.
// CHECK-LABEL: func.func @local
// CHECK-NOT: materialize_in_destination
// CHECK-NOT: tensor.insert_slice
// CHECK: return %arg0
func.func @local(%new: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %empty = tensor.empty() : tensor<4x64xf16>
  %0 = tensor.insert_slice %new into %empty[0, 0] [4, 64] [1, 1]
      : tensor<4x64xf16> into tensor<4x64xf16>
  return %0 : tensor<4x64xf16>
}

// -----

// Negative: dynamic sizes are not known to cover the destination.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: materialize_in_destination
func.func @dynamic(%new: tensor<?x64xf16>, %cache: tensor<?x64xf16>,
                   %n: index) -> tensor<?x64xf16> {
  %0 = tensor.insert_slice %new into %cache[0, 0] [%n, 64] [1, 1]
      : tensor<?x64xf16> into tensor<?x64xf16>
  return %0 : tensor<?x64xf16>
}
