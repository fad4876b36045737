// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(cachet-int8-dot-products))' -verify-diagnostics | FileCheck %s

// A 4-way dot product of signed bytes, as cachet-lower-matvec writes it:
// one nvvm.dot.accumulate.4way (dp4a) with the accumulator; without one,
// from 0.
// CHECK-LABEL: gpu.func @dot
// CHECK-NOT: arith.extsi
// CHECK-NOT: arith.muli
// CHECK: %[[D:.*]] = nvvm.dot.accumulate.4way %arg0 <signed>, %arg1 <signed>, %arg2 : vector<4xi8>, vector<4xi8>
// CHECK: %[[Z:.*]] = arith.constant 0 : i32
// CHECK: nvvm.dot.accumulate.4way %arg1 <signed>, %arg0 <signed>, %[[Z]] : vector<4xi8>, vector<4xi8>
gpu.module @m {
  // expected-remark @+1 {{cachet-int8-dot-products: 2 4-way int8 dot products as dp4a}}
  gpu.func @dot(%a: vector<4xi8>, %b: vector<4xi8>, %acc: i32, %out: memref<2xi32>) kernel {
    %ea = arith.extsi %a : vector<4xi8> to vector<4xi32>
    %eb = arith.extsi %b : vector<4xi8> to vector<4xi32>
    %p = arith.muli %ea, %eb : vector<4xi32>
    %s = vector.reduction <add>, %p, %acc : vector<4xi32> into i32
    %q = arith.muli %eb, %ea : vector<4xi32>
    %t = vector.reduction <add>, %q : vector<4xi32> into i32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    memref.store %s, %out[%c0] : memref<2xi32>
    memref.store %t, %out[%c1] : memref<2xi32>
    gpu.return
  }
}

// -----

// Not a signed 4-way byte dot product: zero-extended bytes, i16 elements,
// a product kept elsewhere too (it stays; the reduction is still one
// instruction only where the bytes are signed).
// CHECK-LABEL: gpu.func @not_dot
// CHECK-NOT: nvvm.dot.accumulate.4way
// CHECK-COUNT-2: vector.reduction <add>
gpu.module @m {
  gpu.func @not_dot(%a: vector<4xi8>, %b: vector<4xi16>, %acc: i32, %out: memref<2xi32>) kernel {
    %ea = arith.extui %a : vector<4xi8> to vector<4xi32>
    %eb = arith.extsi %a : vector<4xi8> to vector<4xi32>
    %p = arith.muli %ea, %eb : vector<4xi32>
    %s = vector.reduction <add>, %p, %acc : vector<4xi32> into i32
    %w = arith.extsi %b : vector<4xi16> to vector<4xi32>
    %q = arith.muli %w, %w : vector<4xi32>
    %t = vector.reduction <add>, %q : vector<4xi32> into i32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    memref.store %s, %out[%c0] : memref<2xi32>
    memref.store %t, %out[%c1] : memref<2xi32>
    gpu.return
  }
}
