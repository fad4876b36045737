// RUN: cachet-opt %s -split-input-file -cachet-sink-views-into-kernels | FileCheck %s

// A view at a run-time offset (a decode step's RoPE row) is built inside the
// kernel from its root buffer; the host keeps its own use of it.

// CHECK-LABEL: func.func @dynamic_row
// CHECK-SAME: (%[[COS:.*]]: memref<16x32xf32>, %[[OUT:.*]]: memref<32xf32>, %[[POS:.*]]: index)
// CHECK: %[[HOST:.*]] = memref.subview %[[COS]][%[[POS]], 0] [1, 32] [1, 1]
// CHECK: gpu.launch
// CHECK: %[[ROW:.*]] = memref.subview %[[COS]][%[[POS]], 0] [1, 32] [1, 1]
// CHECK: memref.load %[[ROW]]
// CHECK: gpu.terminator
// CHECK: memref.dim %[[HOST]]
func.func @dynamic_row(%cos: memref<16x32xf32>, %out: memref<32xf32>, %pos: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %row = memref.subview %cos[%pos, 0] [1, 32] [1, 1]
      : memref<16x32xf32> to memref<1x32xf32, strided<[32, 1], offset: ?>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %row[%c0, %tx] : memref<1x32xf32, strided<[32, 1], offset: ?>>
    memref.store %v, %out[%tx] : memref<32xf32>
    gpu.terminator
  }
  %d = memref.dim %row, %c1 : memref<1x32xf32, strided<[32, 1], offset: ?>>
  return %d : index
}

// -----

// A view at a static offset stays a kernel operand.

// CHECK-LABEL: func.func @static_row
// CHECK: %[[ROW:.*]] = memref.subview
// CHECK: gpu.launch
// CHECK-NOT: memref.subview
// CHECK: memref.load %[[ROW]]
func.func @static_row(%cos: memref<16x32xf32>, %out: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %row = memref.subview %cos[3, 0] [1, 32] [1, 1]
      : memref<16x32xf32> to memref<1x32xf32, strided<[32, 1], offset: 96>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %row[%c0, %tx] : memref<1x32xf32, strided<[32, 1], offset: 96>>
    memref.store %v, %out[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// A chain of views (a collapse of a subview at a run-time offset): both
// move in.

// CHECK-LABEL: func.func @chain
// CHECK: gpu.launch
// CHECK: %[[S:.*]] = memref.subview %arg0[%arg2, 0, 0] [1, 2, 16] [1, 1, 1]
// CHECK: %[[C:.*]] = memref.collapse_shape %[[S]]
// CHECK: memref.load %[[C]]
func.func @chain(%cache: memref<8x2x16xf32>, %out: memref<32xf32>, %pos: index) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %s = memref.subview %cache[%pos, 0, 0] [1, 2, 16] [1, 1, 1]
      : memref<8x2x16xf32> to memref<2x16xf32, strided<[16, 1], offset: ?>>
  %c = memref.collapse_shape %s [[0, 1]]
      : memref<2x16xf32, strided<[16, 1], offset: ?>> into memref<32xf32, strided<[1], offset: ?>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %c[%tx] : memref<32xf32, strided<[1], offset: ?>>
    memref.store %v, %out[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}
