// cachet's exported lowering patterns (populateLowerAttentionPatterns,
// populateLowerDequantTransposePatterns), applied by
// mlir::walkAndApplyPatterns as another compiler would, give the IR of the
// passes byte for byte.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs=allow-mma-sync=true -cachet-lower-attention -mlir-print-op-on-diagnostic=false 2>/dev/null > %t.pass
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs=allow-mma-sync=true -cachet-test-lowering-patterns 2>/dev/null > %t.patterns
// RUN: diff %t.pass %t.patterns
// RUN: FileCheck %s < %t.patterns
// RUN: cachet-opt %S/lower-dequant-transpose.mlir -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},cachet-select-kernel-configs,func.func(cachet-lower-dequant-transpose))' 2>/dev/null > %t.dt.pass
// RUN: cachet-opt %S/lower-dequant-transpose.mlir -split-input-file -pass-pipeline='builtin.module(cachet-lower-to-linalg,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},cachet-select-kernel-configs,cachet-test-lowering-patterns)' 2>/dev/null > %t.dt.patterns
// RUN: diff %t.dt.pass %t.dt.patterns
// RUN: FileCheck %s --check-prefix=DT < %t.dt.patterns
// DT-LABEL: func.func @q8_0
// DT: gpu.launch
// DT: vector.store {{.*}} : memref<2x1024x128xf16>, vector<8xf16>

// CHECK-LABEL: func.func @attention
// CHECK: gpu.launch
// CHECK: nvgpu.mma.sync
// CHECK-NOT: cachet.attention
func.func @attention(%q: tensor<8x128x64xf16>, %k: tensor<2x256x64xf16>,
                     %v: tensor<2x256x64xf16>) -> tensor<8x128x64xf16> {
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      : tensor<8x128x64xf16>, tensor<2x256x64xf16>, tensor<2x256x64xf16>
      -> tensor<8x128x64xf16>
  return %o : tensor<8x128x64xf16>
}

// -----

// CHECK-LABEL: func.func @scalar
// CHECK: gpu.launch
// CHECK-NOT: cachet.attention
func.func @scalar(%q: tensor<4x16x64xf32>, %k: tensor<2x32x64xf32>,
                  %v: tensor<2x32x64xf32>) -> tensor<4x16x64xf32> {
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125 causal 16
      : tensor<4x16x64xf32>, tensor<2x32x64xf32>, tensor<2x32x64xf32>
      -> tensor<4x16x64xf32>
  return %o : tensor<4x16x64xf32>
}
