// The mma flash-attention kernel assembles for sm_90 with the CUDA toolkit's
// ptxas (token-major K/V, GQA 4:1, no causal mask). The exponentials come
// from the toolkit's libdevice, hence toolkit=.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 features=+ptx80 profile=h200 format=bin toolkit=%cuda_root" -cachet-dump-kernel-objects=directory=%t -o /dev/null 2>/dev/null
// RUN: llvm-readelf -h -S %t/attention_kernel.cubin | FileCheck %s

// CHECK: Machine: NVIDIA CUDA architecture
// CHECK-DAG: .text.attention_kernel
// CHECK-DAG: .nv.shared.attention_kernel

func.func @attention(%q: tensor<8x40x128xf16>, %k: tensor<100x2x128xf16>,
                     %v: tensor<100x2x128xf16>) -> tensor<8x40x128xf16> {
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461
      : tensor<8x40x128xf16>, tensor<100x2x128xf16>, tensor<100x2x128xf16> -> tensor<8x40x128xf16>
  return %o : tensor<8x40x128xf16>
}
