// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(cachet-lower-matvec))' -verify-diagnostics | FileCheck %s
// The NVVM kernel: 16-byte loads and a five-step shuffle butterfly.
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm chip=sm_90 matvec-kernel=subgroup format=isa" 2>/dev/null | FileCheck %s --check-prefix=PTX

// CHECK-LABEL: func.func @bf16
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c64, {{.*}}) threads({{.*}}) in ({{.*}} = %c32, {{.*}} = %c4, {{.*}})
// CHECK: scf.for
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<256x512xbf16, strided<[520, 1]>>, vector<8xbf16>
// CHECK: vector.reduction <add>
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: memref.store
// CHECK-NOT: linalg.matvec
// PTX: ld.global.v4.b32
// PTX: shfl.sync.bfly.b32
func.func @bf16(%w: memref<256x512xbf16, strided<[520, 1]>>, %x: memref<512xbf16>, %y: memref<256xf32>) {
  linalg.matvec ins(%w, %x : memref<256x512xbf16, strided<[520, 1]>>, memref<512xbf16>) outs(%y : memref<256xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @f32_partial_block
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c3, {{.*}})
// CHECK: vector.load {{.*}} vector<4xf32>
func.func @f32_partial_block(%w: memref<10x64xf32>, %x: memref<64xf32>, %y: memref<10xf32>) {
  linalg.matvec ins(%w, %x : memref<10x64xf32>, memref<64xf32>) outs(%y : memref<10xf32>)
  return
}

// -----

func.func @misaligned(%w: memref<8x12xbf16>, %x: memref<12xbf16>, %y: memref<8xf32>) {
  // expected-remark @+1 {{cachet-lower-matvec: generic kernel: the weight's rows are not unit-stride and 16-byte aligned}}
  linalg.matvec ins(%w, %x : memref<8x12xbf16>, memref<12xbf16>) outs(%y : memref<8xf32>)
  return
}

// -----

func.func @f16_result(%w: memref<8x64xf16>, %x: memref<64xf16>, %y: memref<8xf16>) {
  // expected-remark @+1 {{cachet-lower-matvec: generic kernel: element types are not f16/bf16/f32 with an f32 result}}
  linalg.matvec ins(%w, %x : memref<8x64xf16>, memref<64xf16>) outs(%y : memref<8xf16>)
  return
}

// -----

func.func @tensors(%w: tensor<8x64xf16>, %x: tensor<64xf16>, %y: tensor<8xf32>) -> tensor<8xf32> {
  // expected-remark @+1 {{cachet-lower-matvec: generic kernel: not on memrefs (run after bufferization)}}
  %r = linalg.matvec ins(%w, %x : tensor<8x64xf16>, tensor<64xf16>) outs(%y : tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
