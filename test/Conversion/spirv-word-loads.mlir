// RUN: cachet-opt %s -split-input-file -cachet-spirv-word-loads -remarks-filter=".*" 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks

// A mat-vec's 8-byte f16 loads of W and x: each buffer becomes one of
// vector<2xi32> words, each load one memref.load and a bit cast; the launch
// passes the same buffers through casts.
// CHECK-LABEL: func.func @f16
// CHECK: %[[W:.*]] = builtin.unrealized_conversion_cast %{{.*}} : memref<64x128xf16> to memref<64x32xvector<2xi32>>
// CHECK: %[[X:.*]] = builtin.unrealized_conversion_cast %{{.*}} : memref<128xf16> to memref<32xvector<2xi32>>
// CHECK: gpu.launch_func @k::@f16 {{.*}} args(%[[W]] : memref<64x32xvector<2xi32>>, %[[X]] : memref<32xvector<2xi32>>, %{{.*}} : memref<64xf32>, %{{.*}} : index, %{{.*}} : index)
// CHECK: gpu.func @f16(%[[KW:.*]]: memref<64x32xvector<2xi32>>, %[[KX:.*]]: memref<32xvector<2xi32>>, %{{.*}}: memref<64xf32>, %[[R:.*]]: index, %[[C:.*]]: index) kernel
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[CW:.*]] = arith.divui %[[C]], %[[C4]] : index
// CHECK: %[[WW:.*]] = memref.load %[[KW]][%[[R]], %[[CW]]] : memref<64x32xvector<2xi32>>
// CHECK: vector.bitcast %[[WW]] : vector<2xi32> to vector<4xf16>
// CHECK: memref.load %[[KX]][%{{.*}}] : memref<32xvector<2xi32>>
// CHECK-NOT: vector.load
// REMARK: remark: cachet-spirv-word-loads: kernel @f16 argument #0 ('memref<64x128xf16>') accessed as 'memref<64x32xvector<2xi32>>': 1 access, one 'vector<2xi32>' word each
// REMARK: remark: cachet-spirv-word-loads: kernel @f16 argument #1 ('memref<128xf16>') accessed as 'memref<32xvector<2xi32>>': 1 access, one 'vector<2xi32>' word each
module attributes {gpu.container_module} {
  func.func @f16(%w: memref<64x128xf16>, %x: memref<128xf16>, %y: memref<64xf32>, %r: index, %c: index) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@f16 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%w : memref<64x128xf16>, %x : memref<128xf16>, %y : memref<64xf32>, %r : index, %c : index)
    return
  }
  gpu.module @k {
    gpu.func @f16(%w: memref<64x128xf16>, %x: memref<128xf16>, %y: memref<64xf32>, %r: index, %c: index) kernel {
      %a = vector.load %w[%r, %c] {alignment = 8 : i64} : memref<64x128xf16>, vector<4xf16>
      %b = vector.load %x[%c] {alignment = 8 : i64} : memref<128xf16>, vector<4xf16>
      %m = arith.mulf %a, %b : vector<4xf16>
      %e = arith.extf %m : vector<4xf16> to vector<4xf32>
      %s = vector.reduction <add>, %e : vector<4xf32> into f32
      memref.store %s, %y[%r] : memref<64xf32>
      gpu.return
    }
  }
}

// -----

// 16-byte loads of bf16 (8 values, more than a SPIR-V vector holds) used in
// two pieces of 4: one vector<4xi32> load; each piece two words bit cast
// to bf16 (cachet-emulate-bf16-storage takes such casts through i16), so no
// vector of 8 is left. A padded row pitch (136) keeps its strides in words.
// CHECK-LABEL: gpu.func @bf16
// CHECK-SAME: %[[W:.*]]: memref<32x16xvector<4xi32>, strided<[17, 1]>>
// CHECK: %[[WORDS:.*]] = memref.load %[[W]][%{{.*}}, %{{.*}}] : memref<32x16xvector<4xi32>, strided<[17, 1]>>
// CHECK-DAG: %[[LO:.*]] = vector.extract_strided_slice %[[WORDS]] {offsets = [0], sizes = [2], strides = [1]} : vector<4xi32> to vector<2xi32>
// CHECK-DAG: %[[HI:.*]] = vector.extract_strided_slice %[[WORDS]] {offsets = [2], sizes = [2], strides = [1]} : vector<4xi32> to vector<2xi32>
// CHECK-DAG: vector.bitcast %[[LO]] : vector<2xi32> to vector<4xbf16>
// CHECK-DAG: vector.bitcast %[[HI]] : vector<2xi32> to vector<4xbf16>
// CHECK-NOT: vector<8x
// REMARK: remark: cachet-spirv-word-loads: kernel @bf16 argument #0 ('memref<32x128xbf16, strided<[136, 1]>>') accessed as 'memref<32x16xvector<4xi32>, strided<[17, 1]>>': 1 access, one 'vector<4xi32>' word each
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @bf16(%w: memref<32x128xbf16, strided<[136, 1]>>, %y: memref<32x4xf32>, %r: index, %c: index) kernel {
      %v = vector.load %w[%r, %c] {alignment = 16 : i64} : memref<32x128xbf16, strided<[136, 1]>>, vector<8xbf16>
      %lo = vector.extract_strided_slice %v {offsets = [0], sizes = [4], strides = [1]} : vector<8xbf16> to vector<4xbf16>
      %hi = vector.extract_strided_slice %v {offsets = [4], sizes = [4], strides = [1]} : vector<8xbf16> to vector<4xbf16>
      %a = arith.extf %lo : vector<4xbf16> to vector<4xf32>
      %b = arith.extf %hi : vector<4xbf16> to vector<4xf32>
      %s = arith.addf %a, %b : vector<4xf32>
      %c0 = arith.constant 0 : index
      vector.store %s, %y[%r, %c0] : memref<32x4xf32>, vector<4xf32>
      gpu.return
    }
  }
}

// -----

// A word of four i8 quants (a block decoder's aligned 4-byte load): one i32
// load; the bit casts to vector<4xi8> and back fold to the word.
// CHECK-LABEL: gpu.func @quants
// CHECK-SAME: %[[Q:.*]]: memref<8x16xi32>
// CHECK: %[[WORD:.*]] = memref.load %[[Q]][%{{.*}}, %{{.*}}] : memref<8x16xi32>
// CHECK: %[[V:.*]] = vector.broadcast %[[WORD]] : i32 to vector<1xi32>
// CHECK: vector.bitcast %[[V]] : vector<1xi32> to vector<4xi8>
// REMARK: remark: cachet-spirv-word-loads: kernel @quants argument #0 ('memref<8x64xi8>') accessed as 'memref<8x16xi32>': 1 access, one 'i32' word each
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @quants(%q: memref<8x64xi8>, %y: memref<8xi32>, %r: index, %c: index) kernel {
      %v = vector.load %q[%r, %c] {alignment = 4 : i64} : memref<8x64xi8>, vector<4xi8>
      %w = vector.bitcast %v : vector<4xi8> to vector<1xi32>
      %e = vector.extract %w[0] : i32 from vector<1xi32>
      memref.store %e, %y[%r] : memref<8xi32>
      gpu.return
    }
  }
}

// -----

// Kept: loads of two widths, a load without alignment, a scalar load
// beside the vector loads, a vector of 8 used whole, workgroup memory, an
// 18-byte row (q4_0 block rows are not whole words), and a buffer no vector
// load reads (no remark).
// CHECK-LABEL: gpu.func @kept
// CHECK-SAME: (%{{.*}}: memref<64xf16>, %{{.*}}: memref<64xf16>, %{{.*}}: memref<64xf16>, %{{.*}}: memref<64xf16>, %{{.*}}: memref<64xf16, #gpu.address_space<workgroup>>, %{{.*}}: memref<4x18xi8>, %{{.*}}: memref<64xf32>
// CHECK-COUNT-7: vector.load
// CHECK-NOT: vector.bitcast
// REMARK: remark: cachet-spirv-word-loads: kernel @kept argument #0 ('memref<64xf16>') keeps its accesses: accesses of {{8 and 16|16 and 8}} bytes
// REMARK: remark: cachet-spirv-word-loads: kernel @kept argument #1 ('memref<64xf16>') keeps its accesses: an access of 8 bytes without an alignment of 8
// REMARK: remark: cachet-spirv-word-loads: kernel @kept argument #2 ('memref<64xf16>') keeps its accesses: 'memref.load' uses it
// REMARK: remark: cachet-spirv-word-loads: kernel @kept argument #3 ('memref<64xf16>') keeps its accesses: a vector of 8 elements used other than in word pieces of at most 4
// REMARK: remark: cachet-spirv-word-loads: kernel @kept argument #4 ('memref<64xf16, #gpu.address_space<workgroup>>') keeps its accesses: not a static buffer of rank 1 or more in global memory
// REMARK: remark: cachet-spirv-word-loads: kernel @kept argument #5 ('memref<4x18xi8>') keeps its accesses: rows, strides or offset not a whole number of 4-byte words
// REMARK-NOT: argument #6
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @kept(%a: memref<64xf16>, %b: memref<64xf16>, %c: memref<64xf16>, %d: memref<64xf16>,
                   %s: memref<64xf16, #gpu.address_space<workgroup>>, %q: memref<4x18xi8>,
                   %y: memref<64xf32>, %i: index) kernel {
      %a0 = vector.load %a[%i] {alignment = 8 : i64} : memref<64xf16>, vector<4xf16>
      %a1 = vector.load %a[%i] {alignment = 16 : i64} : memref<64xf16>, vector<8xf16>
      %b0 = vector.load %b[%i] : memref<64xf16>, vector<4xf16>
      %c0 = vector.load %c[%i] {alignment = 8 : i64} : memref<64xf16>, vector<4xf16>
      %c1 = memref.load %c[%i] : memref<64xf16>
      %d0 = vector.load %d[%i] {alignment = 16 : i64} : memref<64xf16>, vector<8xf16>
      %s0 = vector.load %s[%i] {alignment = 8 : i64} : memref<64xf16, #gpu.address_space<workgroup>>, vector<4xf16>
      %q0 = vector.load %q[%i, %i] {alignment = 4 : i64} : memref<4x18xi8>, vector<4xi8>
      %e = arith.extf %d0 : vector<8xf16> to vector<8xf32>
      %f = vector.extract %e[0] : f32 from vector<8xf32>
      %g = vector.extract %a1[1] : f16 from vector<8xf16>
      %h = arith.extf %g : f16 to f32
      %k = arith.addf %f, %h : f32
      memref.store %k, %y[%i] : memref<64xf32>
      gpu.return
    }
  }
}

// -----

// Stores too: a buffer only written by aligned 8-byte stores of vector<4xf16>
// (a dequant-transpose's scratch) takes vector<2xi32> words, each store a
// bit cast of the value (of bf16 too: cachet-emulate-bf16-storage takes it
// through i16); a store of 8 values (more than SPIR-V builds) is kept.
// CHECK-LABEL: gpu.func @stores
// CHECK-SAME: (%[[O:.*]]: memref<4x16xvector<2xi32>>, %[[B:.*]]: memref<32xvector<2xi32>>, %{{.*}}: memref<64xf16>, %[[V:.*]]: vector<4xf16>, %[[W:.*]]: vector<4xbf16>
// CHECK: %[[OW:.*]] = vector.bitcast %[[V]] : vector<4xf16> to vector<2xi32>
// CHECK: memref.store %[[OW]], %[[O]][%{{.*}}, %{{.*}}] : memref<4x16xvector<2xi32>>
// CHECK: %[[BW:.*]] = vector.bitcast %[[W]] : vector<4xbf16> to vector<2xi32>
// CHECK: memref.store %[[BW]], %[[B]][%{{.*}}] : memref<32xvector<2xi32>>
// CHECK: vector.store %{{.*}} : memref<64xf16>, vector<8xf16>
// REMARK: remark: cachet-spirv-word-loads: kernel @stores argument #0 ('memref<4x64xf16>') accessed as 'memref<4x16xvector<2xi32>>': 1 access, one 'vector<2xi32>' word each
// REMARK: remark: cachet-spirv-word-loads: kernel @stores argument #1 ('memref<128xbf16>') accessed as 'memref<32xvector<2xi32>>': 1 access, one 'vector<2xi32>' word each
// REMARK: remark: cachet-spirv-word-loads: kernel @stores argument #2 ('memref<64xf16>') keeps its accesses: a store of more than 4 values
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @stores(%o: memref<4x64xf16>, %b: memref<128xbf16>, %w8: memref<64xf16>,
                     %v: vector<4xf16>, %w: vector<4xbf16>, %v8: vector<8xf16>, %i: index) kernel {
      vector.store %v, %o[%i, %i] {alignment = 8 : i64} : memref<4x64xf16>, vector<4xf16>
      vector.store %w, %b[%i] {alignment = 8 : i64} : memref<128xbf16>, vector<4xbf16>
      vector.store %v8, %w8[%i] {alignment = 16 : i64} : memref<64xf16>, vector<8xf16>
      gpu.return
    }
  }
}
