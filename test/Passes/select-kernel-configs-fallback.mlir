// With mma-fallback (cachet-compile sets it on SPIR-V), an attention that
// auto gives the mma kernel (KHR cooperative matrices, which a profile's
// tensor cores do not promise on a Vulkan device) also gets the kernel auto
// would give without it, as cachet.fallback_kernel_config; the compiled
// code asks the runtime which one the device runs.
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="mma-fallback=true" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=H200
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=NOFALLBACK
// RUN: cachet-opt %s -cachet-attach-device=profile=lavapipe -cachet-select-kernel-configs="mma-fallback=true" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=LAVAPIPE
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="mma-fallback=true" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// cachet-lower-attention builds both kernels in an scf.if on the runtime's
// answer.
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="mma-fallback=true" -cachet-lower-attention -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=LOWERED --strict-whitespace
// The SPIR-V pipeline: only the mma kernel's module gets cooperative
// matrices in its target.
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=h200 stop-before-binary=true" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=SPIRV

// H200-LABEL: func.func @chosen
// H200: cachet.fallback_kernel_config = #cachet.kernel_config<variant = attention_tiled, tile = [64, 64, 32], workgroup = 256, subgroup = 32>
// H200-SAME: cachet.kernel_config = #cachet.kernel_config<variant = attention_mma, tile = [64, 32], workgroup = 128, subgroup = 32, vector_width = 8, pad_bytes = 16>
// H200-LABEL: func.func @written
// H200-NOT: cachet.fallback_kernel_config
// H200: #cachet.kernel_config<variant = attention_scalar, tile = [16, 8]>
// H200-LABEL: func.func @bf16
// H200-NOT: cachet.fallback_kernel_config
// H200: #cachet.kernel_config<variant = attention_tiled
// H200-LABEL: func.func @decode
// H200-NOT: cachet.fallback_kernel_config
// H200: #cachet.kernel_config<variant = attention_decode

// NOFALLBACK-NOT: cachet.fallback_kernel_config

// LAVAPIPE-NOT: cachet.fallback_kernel_config
// LAVAPIPE-LABEL: func.func @chosen
// LAVAPIPE: #cachet.kernel_config<variant = attention_tiled

// REMARK: remark: cachet-select-kernel-configs: mma flash-attention kernel {{.*}}; where the device does not run 16x16x16 f16 cooperative matrices (checked at run time), the fallback: tiled flash-attention kernel (f32 fused multiply-adds; allow-mma is off: the target does not run the mma kernel)
// REMARK: remark: cachet-select-kernel-configs: the config in the IR is kept

// LOWERED: llvm.func @cachetMgpuHasCooperativeMatrixF16(i32, i32, i32) -> i32
// LOWERED-LABEL: func.func @chosen
// LOWERED: %[[HAS:.+]] = llvm.call @cachetMgpuHasCooperativeMatrixF16(%[[C16:.+]], %[[C16]], %[[C16]]) : (i32, i32, i32) -> i32
// LOWERED: %[[COOP:.+]] = arith.cmpi ne, %[[HAS]], %{{.+}} : i32
// LOWERED: scf.if %[[COOP]] {
// LOWERED: gpu.launch
// LOWERED: gpu.subgroup_mma_compute
// LOWERED: {{^    }}} else {
// LOWERED-NOT: gpu.subgroup_mma
// LOWERED: gpu.launch
// LOWERED-NOT: gpu.subgroup_mma
// LOWERED: {{^    }}}
// LOWERED-NEXT: bufferization.to_tensor %[[OUT:.+]] restrict writable
// LOWERED: func.func @written
// LOWERED-NOT: cachet.attention

// SPIRV: remark: cachet-spirv-coop-matrix-targets: @chosen_kernel uses cooperative matrices: its SPIR-V target gets CooperativeMatrixKHR
// SPIRV-NOT: cachet-spirv-coop-matrix-targets
// SPIRV-DAG: gpu.module @chosen_kernel [#spirv.target_env<#spirv.vce<v1.6, [{{.*}}CooperativeMatrixKHR{{.*}}], [{{.*}}SPV_KHR_cooperative_matrix{{.*}}]>
// SPIRV-DAG: gpu.module @chosen_kernel_0 [#spirv.target_env<#spirv.vce<v1.3, [Shader, Float16, Int8, Int16, Int64, StorageBuffer16BitAccess, StorageBuffer8BitAccess, GroupNonUniform, GroupNonUniformShuffle], [SPV_KHR_storage_buffer_storage_class, SPV_KHR_16bit_storage, SPV_KHR_8bit_storage]>

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

// One query per head, four heads per KV head: the decode kernel.
func.func @decode(%q: tensor<8x1x64xf16>, %k: tensor<2x256x64xf16>,
                  %v: tensor<2x256x64xf16>) -> tensor<8x1x64xf16> {
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      : tensor<8x1x64xf16>, tensor<2x256x64xf16>, tensor<2x256x64xf16>
      -> tensor<8x1x64xf16>
  return %o : tensor<8x1x64xf16>
}
