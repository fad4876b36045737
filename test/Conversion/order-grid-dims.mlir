// RUN: cachet-opt %s -split-input-file -cachet-order-grid-dims 2>/dev/null | FileCheck %s
// RUN: cachet-opt %s -split-input-file -cachet-order-grid-dims 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: cachet-opt %s -split-input-file -cachet-order-grid-dims=max-grid-yz=200000 2>&1 | FileCheck %s --check-prefix=LIMIT --implicit-check-not=remark
// RUN: not cachet-opt %s -split-input-file -cachet-order-grid-dims=max-grid-yz=0 2>&1 | FileCheck %s --check-prefix=BAD

// A mat-mul of 512 rows by a 128256-entry vocabulary, tiled by 256 rows:
// the vocabulary would be grid y (at most 65535); it goes to x.
// REMARK: remark: cachet-order-grid-dims: dimension 1 (128256 workgroups) swapped with dimension 0 (2): it maps to grid x, as grid y allows at most 65535
// CHECK-LABEL: func.func @logits
// CHECK: scf.parallel (%[[J:.*]], %[[I:.*]]) = (%c0, %c0) to (%c128256, %c512) step (%c1, %c256) {
// CHECK:   scf.parallel (%[[T:.*]]) = (%c0) to (%c256) step (%c1) {
// CHECK:     %[[ROW:.*]] = arith.addi %[[I]], %[[T]]
// CHECK:     memref.store %{{.*}}, %{{.*}}[%[[ROW]], %[[J]]]
// LIMIT-LABEL: func.func @logits
// LIMIT: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c512, %c128256)
// BAD: error: cachet-order-grid-dims: max-grid-yz must be at least 1, got 0
func.func @logits(%out: memref<512x128256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %c128256 = arith.constant 128256 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c512, %c128256) step (%c256, %c1) {
    scf.parallel (%t) = (%c0) to (%c256) step (%c1) {
      %row = arith.addi %i, %t : index
      memref.store %f, %out[%row, %j] : memref<512x128256xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// Short dimensions stay in order.
// CHECK-LABEL: func.func @short
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c512, %c4096)
func.func @short(%out: memref<512x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %c4096 = arith.constant 4096 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c512, %c4096) step (%c1, %c1) {
    memref.store %f, %out[%i, %j] : memref<512x4096xf32>
    scf.reduce
  }
  return
}

// -----

// The third dimension (grid z) too long: swapped with the first.
// REMARK: remark: cachet-order-grid-dims: dimension 2 (70000 workgroups) swapped with dimension 0 (4): it maps to grid x, as grid z allows at most 65535
// CHECK-LABEL: func.func @third
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (%c0, %c0, %c0) to (%c70000, %c8, %c4)
func.func @third(%out: memref<4x8x70000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c70000 = arith.constant 70000 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%a, %b, %c) = (%c0, %c0, %c0) to (%c4, %c8, %c70000) step (%c1, %c1, %c1) {
    memref.store %f, %out[%a, %b, %c] : memref<4x8x70000xf32>
    scf.reduce
  }
  return
}

// -----

// Both dimensions too long: nothing to swap, and a remark says so.
// REMARK: remark: cachet-order-grid-dims: dimension 1 (70000 workgroups) stays on grid y: dimension 0 would then be too long (70000 workgroups; the limit is 65535)
// CHECK-LABEL: func.func @both
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c70000, %c70000)
func.func @both(%out: memref<70000x70000xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c70000 = arith.constant 70000 : index
  %v = arith.constant 1 : i8
  scf.parallel (%i, %j) = (%c0, %c0) to (%c70000, %c70000) step (%c1, %c1) {
    memref.store %v, %out[%i, %j] : memref<70000x70000xi8>
    scf.reduce
  }
  return
}
