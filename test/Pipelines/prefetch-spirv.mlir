// The SPIR-V path is unchanged by cachet-prefetch-matvec-chains: a chain of
// f32 mat-vecs compiles to the same module with the rewrite on (even with a
// profile whose auto mode prefetches) and off, and every launch says why.
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=rtx4070" 2>%t.remarks > %t.on
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=rtx4070 prefetch=off" 2>/dev/null > %t.off
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=rtx4070 rewrites=false" 2>/dev/null > %t.norewrite
// RUN: diff %t.on %t.off
// RUN: diff %t.on %t.norewrite
// RUN: FileCheck %s < %t.remarks

// CHECK: remark: cachet-select-kernel-configs: step 1 of 2, weight memref<256x128xf32>; SPIR-V target: no prefetch or dependent-launch instruction; not rewritten
// CHECK: remark: cachet-select-kernel-configs: step 2 of 2, weight memref<128x256xf32>; SPIR-V target: no prefetch or dependent-launch instruction; not rewritten

func.func @chain(%w1: tensor<256x128xf32> {cachet.weight}, %w2: tensor<128x256xf32> {cachet.weight}, %x: tensor<128xf32>) -> tensor<128xf32> {
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<256xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<256xf32>) -> tensor<256xf32>
  %h = linalg.matvec ins(%w1, %x : tensor<256x128xf32>, tensor<128xf32>) outs(%f1 : tensor<256xf32>) -> tensor<256xf32>
  %e2 = tensor.empty() : tensor<128xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<128xf32>) -> tensor<128xf32>
  %y = linalg.matvec ins(%w2, %h : tensor<128x256xf32>, tensor<256xf32>) outs(%f2 : tensor<128xf32>) -> tensor<128xf32>
  return %y : tensor<128xf32>
}
