// cachet-innermost-dim-first: an outermost scf.parallel's innermost
// dimension moves to the front (where the tiling puts the threads), the
// others after it in their order; 1-D loops, loops with reductions and
// nested loops stay.
// RUN: cachet-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(cachet-innermost-dim-first))' | FileCheck %s

// CHECK-LABEL: func.func @rows
// CHECK: scf.parallel (%[[J:.*]], %[[I:.*]]) = (%c0, %c0) to (%c4096, %c1) step (%c1, %c1)
// CHECK: memref.load %arg0[%[[I]], %[[J]]]
// CHECK: memref.store %{{.*}}, %arg1[%[[I]], %[[J]]]
func.func @rows(%x: memref<1x4096xf32>, %y: memref<1x4096xf32>) {
  // expected-remark @-1 {{cachet-innermost-dim-first: 1 parallel loop with the innermost dimension first, so that the threads of a workgroup take consecutive elements}}
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1, %c4096) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<1x4096xf32>
    %d = arith.addf %v, %v : f32
    memref.store %d, %y[%i, %j] : memref<1x4096xf32>
    scf.reduce
  }
  return
}

// -----

// Three dimensions: (d2, d0, d1). A 1-D loop and one with a reduction
// stay.
// CHECK-LABEL: func.func @three
// CHECK: scf.parallel (%[[K:.*]], %[[I:.*]], %[[J:.*]]) = (%c0, %c0, %c0) to (%c128, %c8, %c16)
// CHECK: memref.load %arg0[%[[I]], %[[J]], %[[K]]]
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c16)
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c8, %c16) {{.*}} init
func.func @three(%x: memref<8x16x128xf32>, %s: memref<f32>) {
  // expected-remark @-1 {{cachet-innermost-dim-first: 1 parallel loop with}}
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c8, %c16, %c128) step (%c1, %c1, %c1) {
    %v = memref.load %x[%i, %j, %k] : memref<8x16x128xf32>
    memref.store %v, %x[%i, %j, %k] : memref<8x16x128xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    %v = memref.load %x[%c0, %i, %c0] : memref<8x16x128xf32>
    memref.store %v, %x[%c1, %i, %c0] : memref<8x16x128xf32>
    scf.reduce
  }
  %sum = scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c16) step (%c1, %c1) init (%zero) -> f32 {
    %v = memref.load %x[%i, %j, %c0] : memref<8x16x128xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      scf.reduce.return %r : f32
    }
  }
  memref.store %sum, %s[] : memref<f32>
  return
}

