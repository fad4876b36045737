// Cubin for sm_89 and sm_90, assembled by the CUDA toolkit's ptxas.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 features=+ptx80 format=bin" -cachet-dump-kernel-objects=directory=%t/sm90 -o /dev/null
// RUN: llvm-readelf -h -S %t/sm90/mv_kernel.cubin | FileCheck %s
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_89 features=+ptx78 format=bin" -cachet-dump-kernel-objects=directory=%t/sm89 -o /dev/null
// RUN: llvm-readelf -h -S %t/sm89/mv_kernel.cubin | FileCheck %s

// CHECK: Machine: NVIDIA CUDA architecture
// CHECK-DAG: .text.mv_kernel
// CHECK-DAG: .nv.info.mv_kernel

func.func @mv(%w: tensor<256x128xf32>, %x: tensor<128xf32>) -> tensor<256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %y = linalg.matvec ins(%w, %x : tensor<256x128xf32>, tensor<128xf32>) outs(%f : tensor<256xf32>) -> tensor<256xf32>
  return %y : tensor<256xf32>
}
