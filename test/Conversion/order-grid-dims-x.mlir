// RUN: cachet-opt %s -split-input-file -cachet-order-grid-dims=max-grid-x=65535 2>/dev/null | FileCheck %s
// RUN: cachet-opt %s -split-input-file -cachet-order-grid-dims=max-grid-x=65535 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: cachet-opt %s -split-input-file -cachet-order-grid-dims 2>&1 | FileCheck %s --check-prefix=NOLIMIT --implicit-check-not="split into"
// RUN: not cachet-opt %s -split-input-file -cachet-order-grid-dims=max-grid-x=0 2>&1 | FileCheck %s --check-prefix=BAD

// Vulkan promises 65535 workgroups along x: an element-wise kernel over a
// 32768 x 8 x 128 KV cache, tiled by 256 (131072 workgroups), becomes
// 32768 on grid x by 4 on grid y; the old induction variable is
// (wy * 32768 + wx) * 256.
// REMARK: remark: cachet-order-grid-dims: dimension 0 (131072 workgroups, over the 65535 grid x allows) split into 32768 on grid x by 4 on grid y
// CHECK-LABEL: func.func @cache
// CHECK-DAG: %[[X:.*]] = arith.constant 32768 : index
// CHECK-DAG: %[[Y:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: scf.parallel (%[[WX:.*]], %[[WY:.*]]) = (%{{.*}}, %{{.*}}) to (%[[X]], %[[Y]]) step (%{{.*}}, %{{.*}}) {
// CHECK:   %[[R:.*]] = arith.muli %[[WY]], %[[X]]
// CHECK:   %[[W:.*]] = arith.addi %[[R]], %[[WX]]
// CHECK:   %[[S:.*]] = arith.muli %[[W]], %[[C256]]
// CHECK:   %[[I:.*]] = arith.addi %{{.*}}, %[[S]]
// CHECK:   scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%[[C256]]) step (%{{.*}}) {
// CHECK:     %[[E:.*]] = arith.addi %[[I]], %[[T]]
// CHECK:     memref.store %{{.*}}, %{{.*}}[%[[E]]]
// NOLIMIT-LABEL: func.func @cache
// NOLIMIT: scf.parallel (%{{.*}}) = (%c0) to (%c33554432) step (%c256)
// BAD: error: cachet-order-grid-dims: max-grid-x must be at least 1, got 0
func.func @cache(%out: memref<33554432xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %n = arith.constant 33554432 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c256) {
    scf.parallel (%t) = (%c0) to (%c256) step (%c1) {
      %e = arith.addi %i, %t : index
      memref.store %f, %out[%e] : memref<33554432xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// The vocabulary's 128256 workgroups go to x (grid y allows 65535), then
// over x's 65535 as well: 64128 on x by 2 on grid z.
// REMARK: remark: cachet-order-grid-dims: dimension 1 (128256 workgroups) swapped with dimension 0 (2)
// REMARK: remark: cachet-order-grid-dims: dimension 0 (128256 workgroups, over the 65535 grid x allows) split into 64128 on grid x by 2 on grid z
// CHECK-LABEL: func.func @logits
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (%{{.*}}, %c0, %{{.*}}) to (%{{.*}}, %c512, %{{.*}}) step (%{{.*}}, %c256, %{{.*}})
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

// No free dimension (x, y and z taken): it stays, with the reason.
// REMARK: remark: cachet-order-grid-dims: dimension 0 (100000 workgroups) stays on grid x, over the 65535 it allows: grid y and z are taken
// CHECK-LABEL: func.func @three
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (%c0, %c0, %c0) to (%c100000, %c2, %c2)
func.func @three(%out: memref<100000x2x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c100000 = arith.constant 100000 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c100000, %c2, %c2) step (%c1, %c1, %c1) {
    scf.parallel (%t) = (%c0) to (%c1) step (%c1) {
      memref.store %f, %out[%i, %j, %k] : memref<100000x2x2xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// 65537 workgroups (a prime): no factor fits under 65535 on both grid
// dimensions; it stays.
// REMARK: remark: cachet-order-grid-dims: dimension 0 (65537 workgroups) stays on grid x, over the 65535 it allows: no factor of 65537 is at most 65535 with the other at most 65535
// CHECK-LABEL: func.func @prime
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c65537) step (%c1)
func.func @prime(%out: memref<65537xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c65537 = arith.constant 65537 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c65537) step (%c1) {
    scf.parallel (%t) = (%c0) to (%c1) step (%c1) {
      memref.store %f, %out[%i] : memref<65537xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}
