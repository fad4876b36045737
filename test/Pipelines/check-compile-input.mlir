// cachet-check-compile-input rejects, with a diagnostic naming the op, the IR
// that upstream passes of cachet-compile crash on (reduced from the peer
// corpus, docs/peer-corpus.md), and keeps everything else.
// RUN: cachet-opt %s -split-input-file -verify-diagnostics -cachet-check-compile-input | FileCheck %s
// The pipelines give the same errors instead of crashing (`not` fails on a
// signal).
// RUN: not cachet-opt %s -split-input-file -cachet-compile="target=spirv profile=lavapipe" -o /dev/null 2>&1 | FileCheck %s --check-prefix=COMPILE
// RUN: not cachet-opt %s -split-input-file -cachet-compile="target=nvvm chip=sm_90 features=+ptx80 profile=h200" -o /dev/null 2>&1 | FileCheck %s --check-prefix=COMPILE
// RUN: not cachet-opt %s -split-input-file -cachet-compile="target=rocdl chip=gfx942" -o /dev/null 2>&1 | FileCheck %s --check-prefix=COMPILE
// RUN: not cachet-opt %s -split-input-file -cachet-compile-reference -o /dev/null 2>&1 | FileCheck %s --check-prefix=COMPILE

// COMPILE: error: 'ml_program.global' of type 'i64' is not supported
// COMPILE: error: 'tensor.expand_shape' is not supported
// COMPILE: error: 'memref.expand_shape' is not supported

// A scalar global: one-shot-bufferize's ml_program model casts its type to a
// tensor type (a segfault in LLVM 22).
// expected-error @below {{'ml_program.global' of type 'i64' is not supported by cachet-compile: one-shot-bufferize bufferizes ranked tensor globals only}}
ml_program.global private mutable @seed(0 : i64) : i64
func.func @scalar_global() -> i64 {
  %0 = ml_program.global_load @seed : i64
  return %0 : i64
}

// -----

// One dimension expanded into two dynamic sizes: expand-strided-metadata
// cannot compute their strides (a segfault in LLVM 22).
func.func @two_dynamic_sizes(%t: tensor<?xf32>, %a: index, %b: index) -> tensor<?x?xf32> {
  // expected-error @below {{'tensor.expand_shape' is not supported by cachet-compile: group 0 of its reassociation expands into more than one dynamic size, whose strides expand-strided-metadata cannot compute}}
  %e = tensor.expand_shape %t [[0, 1]] output_shape [%a, %b] : tensor<?xf32> into tensor<?x?xf32>
  return %e : tensor<?x?xf32>
}

// -----

func.func @two_dynamic_sizes_memref(%m: memref<?x8xf32>, %a: index, %b: index) -> memref<?x?x8xf32> {
  // expected-error @below {{'memref.expand_shape' is not supported by cachet-compile: group 0 of its reassociation expands into more than one dynamic size, whose strides expand-strided-metadata cannot compute}}
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%a, %b, 8] : memref<?x8xf32> into memref<?x?x8xf32>
  return %e : memref<?x?x8xf32>
}

// -----

// Supported: a tensor global, one dynamic size per group.
// CHECK-LABEL: ml_program.global private mutable @cache
// CHECK-LABEL: func.func @supported
// CHECK: tensor.expand_shape
ml_program.global private mutable @cache(dense<0.0> : tensor<4xf32>) : tensor<4xf32>
func.func @supported(%t: tensor<?xf32>, %a: index) -> tensor<?x4xf32> {
  %e = tensor.expand_shape %t [[0, 1]] output_shape [%a, 4] : tensor<?xf32> into tensor<?x4xf32>
  return %e : tensor<?x4xf32>
}
