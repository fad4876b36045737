// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg, \
// RUN:   one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, \
// RUN:   cachet-select-kernel-configs,func.func(cachet-lower-dequant-transpose))' 2>/dev/null | FileCheck %s
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg, \
// RUN:   one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, \
// RUN:   cachet-select-kernel-configs,func.func(cachet-lower-dequant-transpose))' 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// The SPIR-V form: 4-byte staging loads, scalar stores, workgroup memory
// allocated in the kernel.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg, \
// RUN:   one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, \
// RUN:   cachet-select-kernel-configs{dequant-transpose-load-bytes=4 dequant-transpose-store-bytes=8},func.func(cachet-lower-dequant-transpose{workgroup-alloc=true scalar-stores=true}))' 2>/dev/null | FileCheck %s --check-prefix=SPIRV
// The reference lowering marks only the packed form.
// RUN: cachet-opt %s -split-input-file -cachet-lower-to-linalg 2>/dev/null | FileCheck %s --check-prefix=MARK
// max-workgroup-bytes caps the positions a workgroup stages.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg, \
// RUN:   one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, \
// RUN:   cachet-select-kernel-configs{max-workgroup-bytes=2048},cachet-select-kernel-configs,func.func(cachet-lower-dequant-transpose))' 2>&1 >/dev/null | FileCheck %s --check-prefix=CAP
// CAP: remark: cachet-select-kernel-configs: dequant-transpose: 4 positions (1088 B) per workgroup
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg, \
// RUN:   one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, \
// RUN:   cachet-select-kernel-configs{max-workgroup-bytes=100},cachet-select-kernel-configs,func.func(cachet-lower-dequant-transpose))' 2>&1 >/dev/null | FileCheck %s --check-prefix=TINY
// TINY: remark: cachet-select-kernel-configs: dequant-transpose: generic kernel: one position's blocks exceed max-workgroup-bytes
// The direct kernel: a thread per store, bytes loaded from global memory, no
// workgroup memory; an unknown kernel keeps the generic lowering.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg, \
// RUN:   one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, \
// RUN:   cachet-select-kernel-configs{dequant-transpose-kernel=direct},cachet-select-kernel-configs,func.func(cachet-lower-dequant-transpose))' 2>&1 | FileCheck %s --check-prefix=DIRECT
// RUN: not cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg, \
// RUN:   one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, \
// RUN:   cachet-select-kernel-configs{dequant-transpose-kernel=fast},cachet-select-kernel-configs,func.func(cachet-lower-dequant-transpose))' 2>&1 >/dev/null | FileCheck %s --check-prefix=UNKNOWN
// DIRECT: remark: cachet-select-kernel-configs: dequant-transpose: direct kernel: a thread per 8 values (one store), bytes read from global memory, workgroups of 256 threads
// DIRECT-LABEL: func.func @q8_0
// DIRECT: %[[FLAT:.*]] = memref.collapse_shape
// DIRECT: gpu.launch blocks({{.*}}) in ({{.*}} = %c128, {{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}})
// DIRECT-NOT: workgroup(
// DIRECT: scf.if
// DIRECT-COUNT-10: memref.load %[[FLAT]]
// DIRECT-NOT: gpu.barrier
// DIRECT: vector.store %{{.*}} {alignment = 16 : i64} : memref<2x1024x128xf16>, vector<8xf16>
// UNKNOWN: for the --dequant-transpose-kernel option: Cannot find option named 'fast'!

// 1024 positions, 2 KV heads, D 128 of q8_0: rows of 4 blocks (136 B); 16
// positions (4352 B) per workgroup, 272 16-byte loads, 8 f16 per store.
// REMARK: remark: cachet-select-kernel-configs: dequant-transpose: 16 positions (4352 B) per workgroup of 256 threads, 16 B loads, 8 values per store
// CHECK-LABEL: func.func @q8_0
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : memref<1024x2x136xi8> into memref<278528xi8>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c64, {{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}}) workgroup(%[[S:.*]] : memref<1088xi32, 3>)
// CHECK: vector.load %[[FLAT]][%{{.*}}] {alignment = 16 : i64} : memref<278528xi8>, vector<16xi8>
// CHECK: vector.bitcast %{{.*}} : vector<16xi8> to vector<4xi32>
// CHECK-COUNT-4: memref.store %{{.*}}, %[[S]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[S]]
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<2x1024x128xf16>, vector<8xf16>
// CHECK-NOT: linalg.generic
// SPIRV-LABEL: func.func @q8_0
// SPIRV: gpu.launch
// SPIRV-NOT: workgroup(
// SPIRV: memref.alloc() : memref<1088xi32, 3>
// SPIRV-COUNT-4: memref.load %{{.*}} : memref<278528xi8>
// SPIRV: gpu.barrier
// SPIRV-COUNT-4: memref.store %{{.*}} : memref<2x1024x128xf16>
// SPIRV-NOT: vector.store
// MARK-LABEL: func.func @q8_0
// MARK: linalg.generic {{.*}} attrs = {cachet.dequant_transpose = !cachet.q8_0}
func.func @q8_0(%k: tensor<1024x2x4x!cachet.q8_0>) -> tensor<2x1024x128xf16> {
  %e = tensor.empty() : tensor<2x1024x128xf16>
  %0 = cachet.dequant_transpose %k into %e : tensor<1024x2x4x!cachet.q8_0> -> tensor<2x1024x128xf16>
  return %0 : tensor<2x1024x128xf16>
}

// -----

// q4_1 to f32, 6 positions: 2 per workgroup (the largest power of two up to
// 4 that divides 6), 4 f32 per store; 2 x 3 x 40 B = 240 B, 16 B loads.
// REMARK: remark: cachet-select-kernel-configs: dequant-transpose: 2 positions (240 B) per workgroup of 256 threads, 16 B loads, 4 values per store
// CHECK-LABEL: func.func @q4_1_f32
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c3, {{.*}})
// CHECK: vector.store %{{.*}} : memref<3x6x64xf32>, vector<4xf32>
func.func @q4_1_f32(%k: tensor<6x3x2x!cachet.q4_1>) -> tensor<3x6x64xf32> {
  %e = tensor.empty() : tensor<3x6x64xf32>
  %0 = cachet.dequant_transpose %k into %e : tensor<6x3x2x!cachet.q4_1> -> tensor<3x6x64xf32>
  return %0 : tensor<3x6x64xf32>
}

// -----

// q4_0 rows of 18 B, 1 head, 1 position: 18 B is no whole number of 4-byte
// words: the generic kernel, with a remark.
// REMARK: remark: cachet-select-kernel-configs: dequant-transpose: generic kernel: a chunk of positions is not a whole number of aligned 4-byte words
// CHECK-LABEL: func.func @odd_chunk
// CHECK: linalg.generic
func.func @odd_chunk(%k: tensor<1x1x1x!cachet.q4_0>) -> tensor<1x1x32xf16> {
  %e = tensor.empty() : tensor<1x1x32xf16>
  %0 = cachet.dequant_transpose %k into %e : tensor<1x1x1x!cachet.q4_0> -> tensor<1x1x32xf16>
  return %0 : tensor<1x1x32xf16>
}

// -----

// The split q8_0 form (values and scales apart) is not marked: the generic
// kernel, and no remark from this pass.
// REMARK-NOT: dequant-transpose:
// CHECK-LABEL: func.func @split
// CHECK: linalg.generic
// MARK-LABEL: func.func @split
// MARK-NOT: cachet.dequant_transpose =
func.func @split(%q: tensor<64x2x64xi8>, %s: tensor<64x2x2xf16>) -> tensor<2x64x64xf16> {
  %e = tensor.empty() : tensor<2x64x64xf16>
  %0 = cachet.dequant_transpose %q scales %s into %e : tensor<64x2x64xi8>, tensor<64x2x2xf16> -> tensor<2x64x64xf16>
  return %0 : tensor<2x64x64xf16>
}
