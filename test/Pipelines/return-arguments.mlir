// cachet-return-arguments: after ownership-based deallocation, a result that
// is (a view of) an argument is returned as is, not as a clone; clones of
// anything else stay.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(cachet-return-arguments))' | FileCheck %s

// CHECK-LABEL: func.func @argument
// CHECK-SAME: (%[[CACHE:.*]]: memref<4x64xf16>)
// CHECK-NOT: bufferization.clone
// CHECK: return %[[CACHE]]
func.func @argument(%cache: memref<4x64xf16>) -> memref<4x64xf16> {
  %0 = bufferization.clone %cache : memref<4x64xf16> to memref<4x64xf16>
  return %0 : memref<4x64xf16>
}

// -----

// A view of an argument.
// CHECK-LABEL: func.func @view
// CHECK: %[[V:.*]] = memref.subview
// CHECK-NOT: bufferization.clone
// CHECK: return %[[V]]
func.func @view(%cache: memref<4x64xf16>)
    -> memref<2x64xf16, strided<[64, 1], offset: 128>> {
  %v = memref.subview %cache[2, 0] [2, 64] [1, 1]
      : memref<4x64xf16> to memref<2x64xf16, strided<[64, 1], offset: 128>>
  %0 = bufferization.clone %v : memref<2x64xf16, strided<[64, 1], offset: 128>>
      to memref<2x64xf16, strided<[64, 1], offset: 128>>
  return %0 : memref<2x64xf16, strided<[64, 1], offset: 128>>
}

// -----

// Negative: a constant global is cloned for the caller to own.
// CHECK-LABEL: func.func @global
// CHECK: bufferization.clone
memref.global "private" constant @w : memref<4xf32> = dense<1.0>
func.func @global() -> memref<4xf32> {
  %g = memref.get_global @w : memref<4xf32>
  %0 = bufferization.clone %g : memref<4xf32> to memref<4xf32>
  return %0 : memref<4xf32>
}

// -----

// Negative: a clone that changes the layout is the result's type; it stays.
// CHECK-LABEL: func.func @layout
// CHECK: bufferization.clone
func.func @layout(%cache: memref<4x64xf16>, %n: index) -> memref<?xf16> {
  %v = memref.subview %cache[1, 0] [1, %n] [1, 1]
      : memref<4x64xf16> to memref<?xf16, strided<[1], offset: 64>>
  %0 = bufferization.clone %v : memref<?xf16, strided<[1], offset: 64>>
      to memref<?xf16>
  return %0 : memref<?xf16>
}
