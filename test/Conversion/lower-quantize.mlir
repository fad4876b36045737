// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg,eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,cachet-select-kernel-configs{quantize-kernel=blocks},func.func(cachet-lower-quantize),canonicalize)' -verify-diagnostics | FileCheck %s
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg,eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,cachet-select-kernel-configs,func.func(cachet-lower-quantize),canonicalize)' 2>&1 | FileCheck %s --check-prefix=GENERIC

// A prefill's K appended to a q8_0 cache as a front end writes it (bf16
// values, the quantized rows inserted at a run-time position): with
// quantize-kernel=blocks the select pass puts the quantize_blocks config on
// the generic of bytes and cachet-lower-quantize replaces it by one
// kernel, a thread per block: 4 tokens x 2 heads x 2 blocks = 16 threads
// of one workgroup of 64, each scanning its 32 values once, then storing
// its 34 bytes into the cache's slice. By default (GENERIC) the generic
// stays, with the remark saying why.

// CHECK-LABEL: func.func @kv_append
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.generic
// CHECK: %[[SLICE:.*]] = memref.subview %arg0[%arg2, 0, 0] [4, 2, 68]
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}}) threads({{.*}}) in ({{.*}} = %c64, {{.*}})
// CHECK: arith.cmpi ult, %{{.*}}, %c16
// CHECK: scf.for {{.*}} = %c0 to %c32 step %c1 iter_args({{.*}}) -> (f32)
// CHECK: memref.load %arg1{{.*}} : memref<4x2x64xbf16>
// CHECK-COUNT-34: memref.store %{{.*}}, %[[SLICE]]
// CHECK-NOT: memref.store
// CHECK: gpu.terminator
// CHECK-NOT: linalg.generic

// GENERIC: remark: cachet-select-kernel-configs: quantize: the generic kernel (a thread per byte, each scanning its block; on an H100 no slower than a thread per block, docs/BENCHMARKS.md runs 141 and 147): quantize-kernel=generic
// GENERIC-LABEL: func.func @kv_append
// GENERIC-NOT: gpu.launch
// GENERIC: linalg.generic {{.*}} outs(%{{.*}} : memref<4x2x68xi8, {{.*}}>) attrs = {cachet.quantize = !cachet.q8_0, cachet.quantize_rounding = #cachet.rounding<away>}
// GENERIC-NOT: linalg.generic

func.func @kv_append(%cache: tensor<16x2x2x!cachet.q8_0>, %k: tensor<4x2x64xbf16>, %pos: index) -> tensor<16x2x2x!cachet.q8_0> {
  // expected-remark @below {{quantize: one kernel, a thread per 34-byte block (its 32 values scanned once, then its bytes), workgroups of 64 threads}}
  %q = cachet.quantize %k : tensor<4x2x64xbf16> -> tensor<4x2x2x!cachet.q8_0>
  %r = tensor.insert_slice %q into %cache[%pos, 0, 0] [4, 2, 2] [1, 1, 1] : tensor<4x2x2x!cachet.q8_0> into tensor<16x2x2x!cachet.q8_0>
  return %r : tensor<16x2x2x!cachet.q8_0>
}

// -----

// A run-time number of rows (q4_1 of f16, quantize-kernel=blocks: the
// scan keeps the minimum and the maximum): the grid is the block count over 64, rounded up, the
// launch skipped where there are no rows, the last workgroup guarded;
// 20 bytes per block.

// CHECK-LABEL: func.func @dynamic
// GENERIC-LABEL: func.func @dynamic
// CHECK: %[[DIM:.*]] = memref.dim %arg0, %c0 : memref<?x2x64xf16>
// CHECK: %[[BLOCKS:.*]] = arith.muli %[[DIM]], %c4 : index
// CHECK: %[[GRID:.*]] = arith.ceildivui %[[BLOCKS]], %c64 : index
// CHECK: %[[ANY:.*]] = arith.cmpi ne, %[[BLOCKS]], %c0 : index
// CHECK: scf.if %[[ANY]]
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[GRID]], {{.*}}) threads({{.*}}) in ({{.*}} = %c64, {{.*}})
// CHECK: arith.cmpi ult, %{{.*}}, %[[BLOCKS]]
// CHECK: scf.for {{.*}} -> (f32, f32)
// CHECK-COUNT-20: memref.store
// CHECK-NOT: memref.store

func.func @dynamic(%x: tensor<?x2x64xf16>) -> tensor<?x2x2x!cachet.q4_1> {
  // expected-remark @below {{quantize: one kernel, a thread per 20-byte block}}
  %q = cachet.quantize %x : tensor<?x2x64xf16> -> tensor<?x2x2x!cachet.q4_1>
  return %q : tensor<?x2x2x!cachet.q4_1>
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
