// A dequant-transpose of a run-time number of positions (cachet-dequant-once-kv
// bounded by a run-time causal position): the first %n positions of a
// token-major cache into the first %n of each head of a head-major scratch.
// The staged kernel takes a workgroup per 16 positions (ceil(n / 16)),
// reads and writes the static buffers the two views start, and cuts the
// last workgroup's loads (whole positions) and stores at %n.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg, \
// RUN:   one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, \
// RUN:   cachet-select-kernel-configs,func.func(cachet-lower-dequant-transpose))' 2>/dev/null | FileCheck %s
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg, \
// RUN:   one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, \
// RUN:   cachet-select-kernel-configs,func.func(cachet-lower-dequant-transpose))' 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// The direct kernel takes a static number of positions: the staged one.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg, \
// RUN:   one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, \
// RUN:   cachet-select-kernel-configs{dequant-transpose-kernel=direct},func.func(cachet-lower-dequant-transpose))' 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// The SPIR-V form (4-byte loads, scalar stores, workgroup memory in the kernel).
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg, \
// RUN:   one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, \
// RUN:   cachet-select-kernel-configs{dequant-transpose-load-bytes=4 dequant-transpose-store-bytes=8},func.func(cachet-lower-dequant-transpose{workgroup-alloc=true scalar-stores=true}))' 2>/dev/null | FileCheck %s --check-prefix=SPIRV

// REMARK: remark: cachet-select-kernel-configs: dequant-transpose: 16 positions (17408 B) per workgroup of 256 threads, 16 B loads, 8 values per store; a run-time number of positions (the grid from it, the last workgroup's loads and stores guarded)
// CHECK-LABEL: func.func @first_positions
// CHECK-SAME: (%[[CACHE:[a-z0-9]*]]: memref<4096x8x136xi8> {{.*}}, %[[SCRATCH:[a-z0-9]*]]: memref<8x4096x128xf16>, %[[N:[a-z0-9]*]]: index)
// CHECK: %[[BYTES:.*]] = memref.subview %[[CACHE]][0, 0, 0] [%[[N]], 8, 136] [1, 1, 1]
// CHECK: %[[COUNT:.*]] = memref.dim %[[BYTES]], %c0
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[CACHE]] {{\[\[}}0, 1, 2]] : memref<4096x8x136xi8> into memref<4456448xi8>
// CHECK-NOT: arith.constant -{{[0-9]+}} : index
// CHECK: %[[GRID:.*]] = arith.ceildivui %[[COUNT]], %c16
// CHECK: gpu.launch blocks(%[[G:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads
// The group's positions, min(16, n - 16 g), and its loads (68 per position).
// CHECK: %[[FIRST:.*]] = arith.muli %[[G]], %c16{{.*}}
// CHECK: %[[LEFT:.*]] = arith.subi %[[COUNT]], %[[FIRST]]
// CHECK: %[[ROWS:.*]] = arith.minui %c16{{.*}}, %[[LEFT]]
// CHECK: %[[LOADS:.*]] = arith.muli %[[ROWS]], %c68
// CHECK: arith.cmpi ult, %{{.*}}, %[[LOADS]]
// CHECK: scf.if
// CHECK: vector.load %[[FLAT]]
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[ROWS]]
// CHECK: scf.if %[[IN]]
// CHECK: vector.store %{{.*}}, %[[SCRATCH]][{{.*}}] {alignment = 16 : i64} : memref<8x4096x128xf16>, vector<8xf16>
// CHECK-NOT: linalg.generic
// SPIRV-LABEL: func.func @first_positions
// SPIRV: arith.ceildivui
// SPIRV: gpu.launch
// SPIRV: memref.alloc() : memref<4352xi32, 3>
// SPIRV: arith.minui
// SPIRV: scf.for
// SPIRV: scf.if
// SPIRV-COUNT-4: memref.store {{.*}} : memref<8x4096x128xf16>
func.func @first_positions(%cache: tensor<4096x8x4x!cachet.q8_0>, %scratch: tensor<8x4096x128xf16>, %n: index) -> tensor<8x4096x128xf16> {
  %in = tensor.extract_slice %cache[0, 0, 0] [%n, 8, 4] [1, 1, 1] : tensor<4096x8x4x!cachet.q8_0> to tensor<?x8x4x!cachet.q8_0>
  %into = tensor.extract_slice %scratch[0, 0, 0] [8, %n, 128] [1, 1, 1] : tensor<8x4096x128xf16> to tensor<8x?x128xf16>
  %d = cachet.dequant_transpose %in into %into : tensor<?x8x4x!cachet.q8_0> -> tensor<8x?x128xf16>
  %r = tensor.insert_slice %d into %scratch[0, 0, 0] [8, %n, 128] [1, 1, 1] : tensor<8x?x128xf16> into tensor<8x4096x128xf16>
  return %r : tensor<8x4096x128xf16>
}

// -----

// One position of one head of q4_0 is 18 bytes, no whole number of 4-byte
// words: loads could not stop at a position, so the generic kernel, with
// the reason.
// REMARK: remark: cachet-select-kernel-configs: dequant-transpose: generic kernel: one position's bytes are not a whole number of 4-byte words (a run-time number of positions)
// CHECK-LABEL: func.func @odd_rows
// CHECK: linalg.generic
func.func @odd_rows(%cache: tensor<1024x1x1x!cachet.q4_0>, %scratch: tensor<1x1024x32xf16>, %n: index) -> tensor<1x1024x32xf16> {
  %in = tensor.extract_slice %cache[0, 0, 0] [%n, 1, 1] [1, 1, 1] : tensor<1024x1x1x!cachet.q4_0> to tensor<?x1x1x!cachet.q4_0>
  %into = tensor.extract_slice %scratch[0, 0, 0] [1, %n, 32] [1, 1, 1] : tensor<1x1024x32xf16> to tensor<1x?x32xf16>
  %d = cachet.dequant_transpose %in into %into : tensor<?x1x1x!cachet.q4_0> -> tensor<1x?x32xf16>
  %r = tensor.insert_slice %d into %scratch[0, 0, 0] [1, %n, 32] [1, 1, 1] : tensor<1x?x32xf16> into tensor<1x1024x32xf16>
  return %r : tensor<1x1024x32xf16>
}
