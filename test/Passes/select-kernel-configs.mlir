// cachet-select-kernel-configs puts each decision on the op as a
// #cachet.kernel_config; the checks below read the attributes, not the
// remarks' prose.
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=H200
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=WMMA
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true dynamic-shared=true async-copy=true warp-sync=true" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=NVVM
// RUN: cachet-opt %s -cachet-attach-device=profile=lavapipe -cachet-select-kernel-configs -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=LAVAPIPE
// RUN: cachet-opt %s -cachet-attach-device=profile=gfx942 -cachet-select-kernel-configs -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=GFX942
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="attention-kernel=reference" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=REFERENCE
// One remark per decision, and one for a config kept.
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// Running it again changes nothing: every config in the IR is kept.
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs -cachet-select-kernel-configs="attention-kernel=scalar" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=WMMA

// The decision written in the input overrides the cost model: @written runs
// the scalar kernel with 16-row query tiles and 8-position key tiles where
// @chosen gets mma.sync, through cachet-lower-attention and through the
// whole NVVM pipeline.
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true" -cachet-lower-attention -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=LOWERED
// RUN: cachet-opt %s -cachet-compile="target=nvvm profile=h200 stop-before-binary=true" 2>/dev/null | FileCheck %s --check-prefix=COMPILED

// H200-LABEL: func.func @chosen
// H200: cachet.kernel_config = #cachet.kernel_config<variant = attention_mma_sync, tile = [64, 64], workgroup = 128, subgroup = 32, vector_width = 8, pad_bytes = 16>
// H200-LABEL: func.func @written
// H200: cachet.kernel_config = #cachet.kernel_config<variant = attention_scalar, tile = [16, 8]>
// H200-LABEL: func.func @bf16
// H200: #cachet.kernel_config<variant = attention_mma_sync, tile = [64, 64]
// H200-LABEL: func.func @dynamic
// H200-NOT: cachet.kernel_config
// H200: return

// WMMA-LABEL: func.func @chosen
// WMMA: #cachet.kernel_config<variant = attention_mma, tile = [64, 32], workgroup = 128, subgroup = 32, vector_width = 8, pad_bytes = 16>
// WMMA-LABEL: func.func @written
// WMMA: #cachet.kernel_config<variant = attention_scalar, tile = [16, 8]>
// WMMA-LABEL: func.func @bf16
// WMMA: #cachet.kernel_config<variant = attention_tiled, tile = [64, 64, 32], workgroup = 256, subgroup = 32>

// NVVM-LABEL: func.func @chosen
// NVVM: #cachet.kernel_config<variant = attention_mma_sync, tile = [64, 64], workgroup = 128, subgroup = 32, vector_width = 8, stages = 2, pad_bytes = 16, dynamic_shared = true, warp_sync = true>

// LAVAPIPE-LABEL: func.func @chosen
// LAVAPIPE: #cachet.kernel_config<variant = attention_tiled, tile = [64, 64, 16], workgroup = 256, subgroup = 8>

// GFX942-LABEL: func.func @chosen
// GFX942: #cachet.kernel_config<variant = attention_mma, tile = [64, 32], workgroup = 256, subgroup = 64, vector_width = 8, pad_bytes = 16>

// REFERENCE-LABEL: func.func @chosen
// REFERENCE-NOT: cachet.kernel_config
// REFERENCE-LABEL: func.func @written
// REFERENCE: #cachet.kernel_config<variant = attention_scalar, tile = [16, 8]>

// REMARK: remark: cachet-select-kernel-configs: mma flash-attention kernel
// REMARK: remark: cachet-select-kernel-configs: the config in the IR is kept
// REMARK: remark: cachet-select-kernel-configs: tiled flash-attention kernel (f32 fused multiply-adds; Q, K and V are not all f16)
// REMARK: remark: cachet-select-kernel-configs: reference lowering kept: dynamic shape

// LOWERED-LABEL: func.func @chosen
// LOWERED: nvgpu.mma.sync
// LOWERED-LABEL: func.func @written
// LOWERED-NOT: nvgpu.mma.sync
// LOWERED: gpu.launch blocks({{.*}}) in ({{.*}} = %c8{{.*}}, {{.*}} = %c8, {{.*}}) threads({{.*}}) in ({{.*}} = %c16, {{.*}}) workgroup({{.*}} : memref<8x64xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<8x64xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<16x64xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<16x8xf32, #gpu.address_space<workgroup>>)
// LOWERED-NOT: cachet.attention
// LOWERED-LABEL: func.func @bf16

// The h200 profile compiles for sm_90a: mma-sync's place is taken by the
// wgmma kernel.
// COMPILED-LABEL: gpu.module @chosen_kernel
// COMPILED: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// COMPILED-LABEL: gpu.module @written_kernel
// COMPILED-NOT: wgmma.mma_async
// COMPILED-NOT: nvvm.mma.sync
// COMPILED-LABEL: gpu.module @bf16_kernel

func.func @chosen(%q: tensor<8x128x64xf16>, %k: tensor<2x256x64xf16>,
                  %v: tensor<2x256x64xf16>) -> tensor<8x128x64xf16> {
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      : tensor<8x128x64xf16>, tensor<2x256x64xf16>, tensor<2x256x64xf16>
      -> tensor<8x128x64xf16>
  return %o : tensor<8x128x64xf16>
}

func.func @written(%q: tensor<8x128x64xf16>, %k: tensor<2x256x64xf16>,
                   %v: tensor<2x256x64xf16>) -> tensor<8x128x64xf16> {
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_scalar, tile = [16, 8]>}
      : tensor<8x128x64xf16>, tensor<2x256x64xf16>, tensor<2x256x64xf16>
      -> tensor<8x128x64xf16>
  return %o : tensor<8x128x64xf16>
}

func.func @bf16(%q: tensor<8x128x64xbf16>, %k: tensor<2x256x64xbf16>,
                %v: tensor<2x256x64xbf16>) -> tensor<8x128x64xbf16> {
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      : tensor<8x128x64xbf16>, tensor<2x256x64xbf16>, tensor<2x256x64xbf16>
      -> tensor<8x128x64xbf16>
  return %o : tensor<8x128x64xbf16>
}

func.func @dynamic(%q: tensor<8x?x64xf16>, %k: tensor<2x256x64xf16>,
                   %v: tensor<2x256x64xf16>) -> tensor<8x?x64xf16> {
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      : tensor<8x?x64xf16>, tensor<2x256x64xf16>, tensor<2x256x64xf16>
      -> tensor<8x?x64xf16>
  return %o : tensor<8x?x64xf16>
}
