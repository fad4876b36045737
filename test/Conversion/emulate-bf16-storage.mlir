// RUN: cachet-opt %s -split-input-file -cachet-emulate-bf16-storage | FileCheck %s

// A bf16 buffer becomes an i16 one (loads and stores bit cast), the launch
// passes it through a cast; a bf16 pair packed into a word
// (cachet::packBF16Pair's vector.bitcast) becomes a bit cast of the i16
// pair.
// CHECK-LABEL: func.func @host
// CHECK: %[[A:.*]] = builtin.unrealized_conversion_cast %{{.*}} : memref<8xbf16> to memref<8xi16>
// CHECK: gpu.launch_func @k::@pack {{.*}} args(%[[A]] : memref<8xi16>, %{{.*}} : memref<8xi32>
// CHECK: gpu.func @pack(%[[K:.*]]: memref<8xi16>, %[[Y:.*]]: memref<8xi32>, %[[I:.*]]: index)
// CHECK: %[[RAW:.*]] = memref.load %[[K]][%[[I]]] : memref<8xi16>
// CHECK: %[[X:.*]] = arith.bitcast %[[RAW]] : i16 to bf16
// CHECK: %[[T:.*]] = arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: %[[BITS:.*]] = arith.bitcast %[[T]] : vector<2xbf16> to vector<2xi16>
// CHECK: vector.bitcast %[[BITS]] : vector<2xi16> to vector<1xi32>
// CHECK: %[[S:.*]] = arith.bitcast %[[X]] : bf16 to i16
// CHECK: memref.store %[[S]], %[[K]][%[[I]]] : memref<8xi16>
module attributes {gpu.container_module} {
  func.func @host(%a: memref<8xbf16>, %y: memref<8xi32>, %i: index) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@pack blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%a : memref<8xbf16>, %y : memref<8xi32>, %i : index)
    return
  }
  gpu.module @k {
    gpu.func @pack(%a: memref<8xbf16>, %y: memref<8xi32>, %i: index) kernel {
      %x = memref.load %a[%i] : memref<8xbf16>
      %f = arith.extf %x : bf16 to f32
      %p = vector.from_elements %f, %f : vector<2xf32>
      %t = arith.truncf %p : vector<2xf32> to vector<2xbf16>
      %w = vector.bitcast %t : vector<2xbf16> to vector<1xi32>
      %e = vector.extract %w[0] : i32 from vector<1xi32>
      memref.store %e, %y[%i] : memref<8xi32>
      memref.store %x, %a[%i] : memref<8xbf16>
      gpu.return
    }
  }
}

// -----

// Words read as bf16 (cachet-spirv-word-loads): the bit cast goes through
// i16 and a single element is taken from the i16 vector, then bit cast
// alone, so no bf16 vector is left for the arith emulation.
// CHECK-LABEL: gpu.func @words
// CHECK-SAME: (%[[WORDS:.*]]: vector<2xi32>, %[[Y:.*]]: memref<4xf32>)
// CHECK: %[[BITS:.*]] = vector.bitcast %[[WORDS]] : vector<2xi32> to vector<4xi16>
// CHECK: %[[E:.*]] = vector.extract %[[BITS]][3] : i16 from vector<4xi16>
// CHECK: %[[X:.*]] = arith.bitcast %[[E]] : i16 to bf16
// CHECK: arith.extf %[[X]] : bf16 to f32
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @words(%w: vector<2xi32>, %y: memref<4xf32>) kernel {
      %v = vector.bitcast %w : vector<2xi32> to vector<4xbf16>
      %e = vector.extract %v[3] : bf16 from vector<4xbf16>
      %f = arith.extf %e : bf16 to f32
      %c0 = arith.constant 0 : index
      memref.store %f, %y[%c0] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// Four bf16 values stored as two words (the dequant-transpose's 8-byte
// store of a bf16 scratch): the vector is built from i16 bit casts of the
// scalars, so no bf16 vector is left for SPIR-V (which would bit cast a
// 16-bit scalar to 32 bits).
// CHECK-LABEL: gpu.func @store_words
// CHECK: %[[T0:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[T1:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[B0:.*]] = arith.bitcast %[[T0]] : bf16 to i16
// CHECK: %[[B1:.*]] = arith.bitcast %[[T1]] : bf16 to i16
// CHECK: %[[B2:.*]] = arith.bitcast %[[T0]] : bf16 to i16
// CHECK: %[[B3:.*]] = arith.bitcast %[[T1]] : bf16 to i16
// CHECK: %[[V:.*]] = vector.from_elements %[[B0]], %[[B1]], %[[B2]], %[[B3]] : vector<4xi16>
// CHECK-NOT: vector<4xbf16>
// CHECK: vector.bitcast %[[V]] : vector<4xi16> to vector<2xi32>
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @store_words(%x: f32, %y: f32, %out: memref<2xvector<2xi32>>) kernel {
      %c0 = arith.constant 0 : index
      %a = arith.truncf %x : f32 to bf16
      %b = arith.truncf %y : f32 to bf16
      %v = vector.from_elements %a, %b, %a, %b : vector<4xbf16>
      %w = vector.bitcast %v : vector<4xbf16> to vector<2xi32>
      memref.store %w, %out[%c0] : memref<2xvector<2xi32>>
      gpu.return
    }
  }
}
