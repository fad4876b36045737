// RUN: cachet-opt %s -split-input-file -cachet-sink-into-launches 2>/dev/null | FileCheck %s
// RUN: cachet-opt %s -split-input-file -cachet-sink-into-launches 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// The same IR as upstream's gpu-launch-sink-index-computations writes:
// RUN: cachet-opt %s -split-input-file -cachet-sink-into-launches 2>/dev/null > %t.ours
// RUN: cachet-opt %s -split-input-file -gpu-launch-sink-index-computations > %t.upstream
// RUN: diff %t.ours %t.upstream

// Two launches read one hoisted %c0 and a memref.dim of it: each launch
// gets its own copies, in dependence order; the compare of the dimension
// with %n comes along where the launch reads %n anyway.
// REMARK: remark: cachet-sink-into-launches: copied 5 constant and index computations into 2 gpu.launch bodies (each launch its own copy)
// CHECK-LABEL: func.func @two_launches
// CHECK: gpu.launch
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[D:.*]] = memref.dim %{{.*}}, %[[C0]] : memref<?xf32>
// CHECK-NEXT: %[[LT:.*]] = arith.cmpi slt, %{{.*}}, %[[D]] : index
// CHECK: gpu.launch
// CHECK-NEXT: %[[C0B:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[DB:.*]] = memref.dim %{{.*}}, %[[C0B]] : memref<?xf32>
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[C0B]]]
func.func @two_launches(%buf: memref<?xf32>, %out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %d = memref.dim %buf, %c0 : memref<?xf32>
  %lt = arith.cmpi slt, %n, %d : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    scf.if %lt {
      %v = memref.load %buf[%tx] : memref<?xf32>
      memref.store %v, %out[%n] : memref<?xf32>
    }
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %buf[%d] : memref<?xf32>
    memref.store %v, %out[%c0] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// Not an index computation (arith.addi): the launch takes its result, and
// nothing is copied (no remark).
// REMARK-NOT: remark
// CHECK-LABEL: func.func @not_sunk
// CHECK: %[[S:.*]] = arith.addi
// CHECK: gpu.launch
// CHECK-NOT: arith.constant
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[S]]]
func.func @not_sunk(%out: memref<?xf32>, %a: index, %b: index, %v: f32) {
  %s = arith.addi %a, %b : index
  %one = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %one, %gy = %one, %gz = %one)
      threads(%tx, %ty, %tz) in (%sx = %one, %sy = %one, %sz = %one) {
    memref.store %v, %out[%s] : memref<?xf32>
    gpu.terminator
  }
  return
}
