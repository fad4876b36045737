// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(cachet-host-compute-to-parallel))' -verify-diagnostics | FileCheck %s

// A reduction to a 0-d buffer (as convert-linalg-to-parallel-loops leaves
// it: a fill and a sequential loop) moves into a one-iteration parallel loop;
// the allocation stays outside.
// CHECK-LABEL: func.func @sum_of_squares
// CHECK: %[[S:.*]] = memref.alloc() : memref<f32>
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step
// CHECK-NEXT: memref.store %{{.*}}, %[[S]][]
// CHECK-NEXT: scf.for
// CHECK: scf.reduce
// CHECK: return %[[S]]
func.func @sum_of_squares(%v: memref<4096xf32>) -> memref<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<f32>
  // expected-remark @+1 {{cachet-host-compute-to-parallel: 2 ops without a parallel loop run on a single GPU thread}}
  memref.store %zero, %sum[] : memref<f32>
  scf.for %i = %c0 to %c4096 step %c1 {
    %x = memref.load %v[%i] : memref<4096xf32>
    %s = memref.load %sum[] : memref<f32>
    %p = arith.mulf %x, %x : f32
    %n = arith.addf %s, %p : f32
    memref.store %n, %sum[] : memref<f32>
  }
  return %sum : memref<f32>
}

// -----

// Element-wise ops on 0-d buffers (a load, math, a store) move together; a
// parallel loop already there is left alone, and so is the host code between.
// CHECK-LABEL: func.func @scalar_ops
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c4) step (%c1)
// CHECK: memref.alloc() : memref<f32>
// CHECK: scf.parallel
// CHECK-NEXT: memref.load
// CHECK-NEXT: math.rsqrt
// CHECK-NEXT: memref.store
func.func @scalar_ops(%a: memref<4xf32>, %b: memref<f32>) -> memref<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %x = memref.load %a[%i] : memref<4xf32>
    memref.store %x, %a[%i] : memref<4xf32>
    scf.reduce
  }
  %r = memref.alloc() : memref<f32>
  // expected-remark @+1 {{cachet-host-compute-to-parallel: 3 ops without a parallel loop run on a single GPU thread}}
  %x = memref.load %b[] : memref<f32>
  %y = math.rsqrt %x : f32
  memref.store %y, %r[] : memref<f32>
  return %r : memref<f32>
}

// -----

// A loaded value the host needs (here as a size) cannot move: a remark, and
// the load stays where it is.
// CHECK-LABEL: func.func @host_needs_value
// CHECK-NOT: scf.parallel
// CHECK: memref.load
func.func @host_needs_value(%n: memref<i64>) -> memref<?xf32> {
  // expected-remark @+1 {{cachet-host-compute-to-parallel: not moved to the GPU: the host uses the value it loads}}
  %v = memref.load %n[] : memref<i64>
  %i = arith.index_cast %v : i64 to index
  %r = memref.alloc(%i) : memref<?xf32>
  return %r : memref<?xf32>
}

// -----

// Nothing to move: no remark, no loop.
// CHECK-LABEL: func.func @nothing
// CHECK-NOT: scf.parallel
func.func @nothing(%a: memref<4xf32>, %b: memref<4xf32>) {
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A copy into a strided view (a concat along the inner dimension) becomes a
// parallel loop of element copies; a contiguous copy stays a copy.
// CHECK-LABEL: func.func @strided_copy
// CHECK: %[[V:.*]] = memref.subview
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}})
// CHECK-NEXT: %[[E:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT: memref.store %[[E]], %[[V]][%[[I]], %[[J]]]
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x16xf32> to memref<4x16xf32>
func.func @strided_copy(%a: memref<4x8xf32>, %b: memref<4x16xf32>, %c: memref<4x16xf32>) {
  %v = memref.subview %b[0, 8] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  memref.copy %a, %v : memref<4x8xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  memref.copy %b, %c : memref<4x16xf32> to memref<4x16xf32>
  return
}

// -----

// A copy into a contiguous view at a non-zero offset (a KV-cache append)
// becomes a parallel loop too: the runtime's copies start at a buffer's
// aligned pointer. A pitched weight upload is left to the runtime.
// CHECK-LABEL: func.func @offset_copy
// CHECK: scf.parallel
// CHECK: memref.copy %{{.*}}, %{{.*}} {cachet.pitched_upload}
func.func @offset_copy(%new: memref<3x2x64xf16>, %cache: memref<16x2x64xf16>, %w: memref<4x4xf16>, %p: memref<4x4xf16, strided<[8, 1]>>) {
  %slot = memref.subview %cache[5, 0, 0] [3, 2, 64] [1, 1, 1] : memref<16x2x64xf16> to memref<3x2x64xf16, strided<[128, 64, 1], offset: 640>>
  memref.copy %new, %slot : memref<3x2x64xf16> to memref<3x2x64xf16, strided<[128, 64, 1], offset: 640>>
  memref.copy %w, %p {cachet.pitched_upload} : memref<4x4xf16> to memref<4x4xf16, strided<[8, 1]>>
  return
}
