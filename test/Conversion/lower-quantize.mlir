// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg,eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,cachet-select-kernel-configs,func.func(cachet-lower-quantize),canonicalize)' -verify-diagnostics | FileCheck %s
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg,eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,cachet-select-kernel-configs{quantize-kernel=subgroup subgroup-size=8},func.func(cachet-lower-quantize),canonicalize)' 2>&1 | FileCheck %s --check-prefix=EIGHT
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg,eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,cachet-select-kernel-configs{quantize-kernel=subgroup quantize-threads=48},func.func(cachet-lower-quantize),canonicalize)' 2>&1 | FileCheck %s --check-prefix=ODD
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg,eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,cachet-select-kernel-configs{quantize-kernel=generic},func.func(cachet-lower-quantize),canonicalize)' 2>&1 | FileCheck %s --check-prefix=GENERIC

// A prefill's K appended to a q8_0 cache as a front end writes it (bf16
// values, the quantized rows inserted at a run-time position), by default
// (quantize-kernel=subgroup) and with no device profile (subgroups of 32):
// the 16
// blocks are 2 workgroups of 256 threads, eight blocks each. A lane loads its
// one value; the scale comes from the 32 values read in order through
// xor shuffles (a tree over the lanes: MAX of magnitudes is the same in any
// order), or where a value is NaN (MAX keeps a NaN until the next value,
// so the order matters) from the 32 values read in order through idx
// shuffles, the reference's scan; lane 0 and 1 store the scale's bytes,
// every lane its quant: two guarded stores per lane. With
// subgroups of 8 (EIGHT) a lane loads 4 values and stores 4 quants and a
// scale byte. With 48 threads per workgroup (ODD), not a multiple of 32,
// the generic kernel stays, with the remark saying why, as it does with
// quantize-kernel=generic (GENERIC).

// CHECK-LABEL: func.func @kv_append
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.generic
// CHECK: %[[SLICE:.*]] = memref.subview %arg0[%arg2, 0, 0] [4, 2, 68]
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}}) threads({{.*}}) in ({{.*}} = %c256, {{.*}})
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c16 : index
// CHECK: arith.minui %{{.*}}, %c15 : index
// CHECK: memref.load %arg1{{.*}} : memref<4x2x64xbf16>
// CHECK-NOT: memref.load
// CHECK: arith.cmpf uno
// CHECK-COUNT-5: gpu.shuffle  xor {{.*}} : i32
// CHECK: %[[NAN:.*]] = arith.cmpi ne
// CHECK: scf.if %[[NAN]] -> (f32)
// CHECK-COUNT-32: gpu.shuffle  idx
// CHECK: } else {
// CHECK-COUNT-5: gpu.shuffle  xor {{.*}} : f32
// CHECK-NOT: gpu.shuffle
// CHECK: arith.andi %{{.*}}, %[[IN]] : i1
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[SLICE]]
// CHECK: scf.if %[[IN]]
// CHECK: memref.store %{{.*}}, %[[SLICE]]
// CHECK-NOT: memref.store
// CHECK: gpu.terminator

// EIGHT-LABEL: func.func @kv_append
// EIGHT: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c256, {{.*}})
// EIGHT-COUNT-4: memref.load %arg1
// EIGHT-NOT: memref.load
// EIGHT-COUNT-3: gpu.shuffle  xor {{.*}}, %c8_i32 : i32
// EIGHT-COUNT-32: gpu.shuffle  idx {{.*}}, %c8_i32 : f32
// EIGHT-COUNT-3: gpu.shuffle  xor {{.*}}, %c8_i32 : f32
// EIGHT-NOT: gpu.shuffle
// EIGHT-COUNT-5: memref.store
// EIGHT-NOT: memref.store

// GENERIC: remark: cachet-select-kernel-configs: quantize: the generic kernel (a thread per byte, each scanning its block): quantize-kernel=generic
// GENERIC-LABEL: func.func @kv_append
// GENERIC-NOT: gpu.launch
// GENERIC: linalg.generic {{.*}} outs(%{{.*}} : memref<4x2x68xi8, {{.*}}>) attrs = {cachet.quantize = !cachet.q8_0, cachet.quantize_rounding = #cachet.rounding<away>}
// GENERIC-NOT: linalg.generic

// ODD: remark: cachet-select-kernel-configs: quantize: the generic kernel (a thread per byte, each scanning its block): quantize-threads (48) is not a multiple of the subgroup size (32)
// ODD-LABEL: func.func @kv_append
// ODD-NOT: gpu.launch
// ODD: linalg.generic

func.func @kv_append(%cache: tensor<16x2x2x!cachet.q8_0>, %k: tensor<4x2x64xbf16>, %pos: index) -> tensor<16x2x2x!cachet.q8_0> {
  // expected-remark @below {{quantize: one kernel, 32 lanes of a subgroup of 32 per 34-byte block (1 of its values each, the block scanned through shuffles, each byte stored by one lane), workgroups of 256 threads}}
  %q = cachet.quantize %k : tensor<4x2x64xbf16> -> tensor<4x2x2x!cachet.q8_0>
  %r = tensor.insert_slice %q into %cache[%pos, 0, 0] [4, 2, 2] [1, 1, 1] : tensor<4x2x2x!cachet.q8_0> into tensor<16x2x2x!cachet.q8_0>
  return %r : tensor<16x2x2x!cachet.q8_0>
}

// -----

// A run-time number of rows into q5_1 (f16): the grid is the block count
// over eight blocks per workgroup, rounded up, and no launch where there are
// no rows. The minimum and the maximum are combined over the lanes in a
// tree, each with its index (equal values, +0 and -0, keep the first, as
// the scan in order does; NaN never wins either way): 4 xor shuffles per
// step, 5 steps of 32 lanes, 3 of 8. The high bits of the quants are ORed
// over the lanes (xor shuffles: 5 of 32 lanes, 3 of 8). Bytes: 8 of header (d, m, qh) and 16 of nibbles, quant j
// with quant j + 16: with 32 lanes lane j + 16's (one xor shuffle), with 8
// the lane's own third and fourth values.

// CHECK-LABEL: func.func @dynamic
// GENERIC-LABEL: func.func @dynamic
// CHECK: %[[DIM:.*]] = memref.dim %arg0, %c0 : memref<?x2x64xf16>
// CHECK: %[[BLOCKS:.*]] = arith.muli %[[DIM]], %c4 : index
// CHECK: %[[GRID:.*]] = arith.ceildivui %[[BLOCKS]], %c8 : index
// CHECK: %[[ANY:.*]] = arith.cmpi ne, %[[BLOCKS]], %c0 : index
// CHECK: scf.if %[[ANY]]
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[GRID]], {{.*}}) threads({{.*}}) in ({{.*}} = %c256, {{.*}})
// CHECK-NOT: scf.if
// CHECK-COUNT-25: gpu.shuffle  xor
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : i32
// CHECK-NOT: gpu.shuffle
// CHECK-COUNT-2: memref.store
// CHECK-NOT: memref.store

// EIGHT-LABEL: func.func @dynamic
// EIGHT: arith.ceildivui %{{.*}}, %c32 : index
// EIGHT-COUNT-15: gpu.shuffle  xor
// EIGHT-NOT: gpu.shuffle
// EIGHT-COUNT-3: memref.store
// EIGHT-NOT: memref.store

func.func @dynamic(%x: tensor<?x2x64xf16>) -> tensor<?x2x2x!cachet.q5_1> {
  // expected-remark @below {{quantize: one kernel, 32 lanes of a subgroup of 32 per 24-byte block}}
  %q = cachet.quantize %x : tensor<?x2x64xf16> -> tensor<?x2x2x!cachet.q5_1>
  return %q : tensor<?x2x2x!cachet.q5_1>
}

// -----

// iq4_nl: the first value of the largest magnitude for the first guess
// (a tree of the magnitude, its index and the value: 3 xor shuffles per
// step), then the fit's two sums of each value's terms, added in order as
// the reference adds them (64 idx shuffles).

// CHECK-LABEL: func.func @iq4
// EIGHT-LABEL: func.func @iq4
// EIGHT-COUNT-9: gpu.shuffle  xor
// EIGHT-COUNT-64: gpu.shuffle  idx {{.*}}, %c8_i32 : f32
// EIGHT-NOT: gpu.shuffle
// CHECK-COUNT-15: gpu.shuffle  xor
// CHECK-COUNT-64: gpu.shuffle  idx
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : i32
// CHECK-NOT: gpu.shuffle

func.func @iq4(%x: tensor<8x64xf32>) -> tensor<8x2x!cachet.iq4_nl> {
  // expected-remark @below {{quantize: one kernel, 32 lanes of a subgroup of 32 per 18-byte block}}
  %q = cachet.quantize %x : tensor<8x64xf32> -> tensor<8x2x!cachet.iq4_nl>
  return %q : tensor<8x2x!cachet.iq4_nl>
}

// -----

// The split q8_0 form (int8 quants and f16 scales) is one generic of its
// own, not marked: no config, no kernel.

// CHECK-LABEL: func.func @split
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic

func.func @split(%x: tensor<4x64xf32>) -> (tensor<4x64xi8>, tensor<4x2xf16>) {
  %q, %d = cachet.quantize %x : tensor<4x64xf32> -> tensor<4x64xi8>, tensor<4x2xf16>
  return %q, %d : tensor<4x64xi8>, tensor<4x2xf16>
}
