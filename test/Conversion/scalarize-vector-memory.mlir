// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(cachet-scalarize-vector-memory))' | FileCheck %s

// A vector<4xf16> load from workgroup memory and a store to a global memref
// become one access per element along the innermost index (the vector
// between them folds away).
// CHECK-LABEL: gpu.func @copy
// CHECK-SAME: (%[[SRC:.*]]: memref<8x16xf16, #gpu.address_space<workgroup>>, %[[DST:.*]]: memref<8x16xf16>, %[[I:.*]]: index, %[[J:.*]]: index)
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[E0:.*]] = memref.load %[[SRC]][%[[I]], %[[J]]]
// CHECK: %[[J1:.*]] = arith.addi %[[J]], %[[C1]] : index
// CHECK: %[[E1:.*]] = memref.load %[[SRC]][%[[I]], %[[J1]]]
// CHECK: memref.load
// CHECK: %[[J3:.*]] = arith.addi %[[J]], %[[C3]] : index
// CHECK: %[[E3:.*]] = memref.load %[[SRC]][%[[I]], %[[J3]]]
// CHECK: memref.store %[[E0]], %[[DST]][%[[I]], %[[J]]]
// CHECK: memref.store %[[E1]], %[[DST]][%[[I]], %{{.*}}]
// CHECK: memref.store
// CHECK: memref.store %[[E3]], %[[DST]][%[[I]], %{{.*}}]
// CHECK-NOT: vector.load
// CHECK-NOT: vector.store
gpu.module @kernels {
  gpu.func @copy(%src: memref<8x16xf16, #gpu.address_space<workgroup>>,
                 %dst: memref<8x16xf16>, %i: index, %j: index) kernel {
    %v = vector.load %src[%i, %j] : memref<8x16xf16, #gpu.address_space<workgroup>>, vector<4xf16>
    vector.store %v, %dst[%i, %j] : memref<8x16xf16>, vector<4xf16>
    gpu.return
  }
}

// -----

// Left alone: one-element vectors (no pointer cast in SPIR-V) and memrefs
// whose elements are vectors.
// CHECK-LABEL: gpu.func @kept
// CHECK: vector.load %{{.*}} : memref<16xf32>, vector<1xf32>
// CHECK: vector.store %{{.*}} : memref<16xf32>, vector<1xf32>
// CHECK: vector.load %{{.*}} : memref<4xvector<4xf32>>, vector<4xf32>
gpu.module @kernels {
  gpu.func @kept(%a: memref<16xf32>, %b: memref<4xvector<4xf32>>, %i: index) kernel {
    %v = vector.load %a[%i] : memref<16xf32>, vector<1xf32>
    vector.store %v, %a[%i] : memref<16xf32>, vector<1xf32>
    %w = vector.load %b[%i] : memref<4xvector<4xf32>>, vector<4xf32>
    memref.store %w, %b[%i] : memref<4xvector<4xf32>>
    gpu.return
  }
}

// -----

// A vector of 8 (more than SPIR-V holds) used only in pieces: each strided
// slice and single extract takes the scalar loads directly, and no vector
// of 8 is built.
// CHECK-LABEL: gpu.func @pieces
// CHECK-COUNT-8: memref.load
// CHECK-DAG: vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf16>
// CHECK-DAG: vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf16>
// CHECK-NOT: vector<8xf16>
gpu.module @kernels {
  gpu.func @pieces(%src: memref<64xf16, #gpu.address_space<workgroup>>,
                   %dst: memref<8xf16>, %i: index) kernel {
    %v = vector.load %src[%i] : memref<64xf16, #gpu.address_space<workgroup>>, vector<8xf16>
    %lo = vector.extract_strided_slice %v {offsets = [0], sizes = [4], strides = [1]} : vector<8xf16> to vector<4xf16>
    %hi = vector.extract_strided_slice %v {offsets = [4], sizes = [4], strides = [1]} : vector<8xf16> to vector<4xf16>
    %e = vector.extract %v[7] : f16 from vector<8xf16>
    %s = arith.addf %lo, %hi : vector<4xf16>
    %c0 = arith.constant 0 : index
    vector.store %s, %dst[%c0] : memref<8xf16>, vector<4xf16>
    memref.store %e, %dst[%i] : memref<8xf16>
    gpu.return
  }
}
