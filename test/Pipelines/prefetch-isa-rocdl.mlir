// AMDGPU assembly of a two-step mat-vec chain: s_prefetch_data on gfx12,
// global_prefetch_b8 on gfx1250, nothing on gfx942 (no data prefetch).
// RUN: cachet-opt %s -cachet-compile="target=rocdl chip=gfx1200 prefetch=l2 profile=gfx1151 format=isa" 2>/dev/null | FileCheck %s --check-prefix=GFX12
// RUN: cachet-opt %s -cachet-compile="target=rocdl chip=gfx1250 prefetch=l2 profile=gfx1151 format=isa" 2>/dev/null | FileCheck %s --check-prefix=GFX1250
// RUN: cachet-opt %s -cachet-compile="target=rocdl chip=gfx942 prefetch=l2 profile=gfx942 format=isa" 2>/dev/null | FileCheck %s --check-prefix=GFX942

// The zero fill runs in the first mat-vec kernel (cachet-lower-matvec).
// GFX12: gpu.binary @two_kernel
// GFX12-SAME: s_prefetch_data
// GFX12: gpu.binary @two_kernel_0
// GFX12-NOT: s_prefetch_data
// GFX12-SAME: s_endpgm

// GFX1250: gpu.binary @two_kernel
// GFX1250-SAME: global_prefetch_b8
// GFX1250: gpu.binary @two_kernel_0
// GFX1250-NOT: global_prefetch
// GFX1250-SAME: s_endpgm

// GFX942: gpu.binary @two_kernel
// GFX942-NOT: prefetch
// GFX942-SAME: s_endpgm

func.func @two(%x: tensor<512xf16>, %w1: tensor<512x512xf16> {cachet.weight}, %w2: tensor<512x512xf16> {cachet.weight}) -> tensor<512xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<512xf32>) -> tensor<512xf32>
  %y = linalg.matvec ins(%w1, %x : tensor<512x512xf16>, tensor<512xf16>) outs(%f : tensor<512xf32>) -> tensor<512xf32>
  %y2 = linalg.matvec ins(%w2, %x : tensor<512x512xf16>, tensor<512xf16>) outs(%y : tensor<512xf32>) -> tensor<512xf32>
  return %y2 : tensor<512xf32>
}
