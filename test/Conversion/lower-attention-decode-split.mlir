// Decode attention over split q8_0 K/V (i8 values [pos][kv_head][dim] and
// f16 scales [pos][kv_head][dim / 32], function arguments or their in-place
// updates): the decode kernels read the values and the scales and decode
// them in registers, so no dequantized copy of the cache is written. On
// mma.sync (NVVM) each lane reads its K values in runs of 16 (16-byte loads)
// and decodes them into f16 pairs as q8_0 blocks are; without mma.sync
// (SPIR-V, ROCDL) rows read by lanes together, 8 values (bytes) a lane. Prefill-shaped attention (the other kernels) reads
// the cache dequantized: the cachet.dequantize stays.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync" -cachet-lower-attention -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=KERNEL
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs -cachet-lower-attention -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=ROWS-KERNEL
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm profile=h200 stop-before-binary" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET

// TARGET-NOT: error

func.func @tg1_split(%q: tensor<32x1x128xf16>,
                     %kq: tensor<32768x8x128xi8>, %ks: tensor<32768x8x4xf16>,
                     %vq: tensor<32768x8x128xi8>, %vs: tensor<32768x8x4xf16>)
    -> tensor<32x1x128xf16> {
  %k = cachet.dequantize %kq scales %ks : tensor<32768x8x128xi8>, tensor<32768x8x4xf16> -> tensor<32768x8x128xf16>
  %v = cachet.dequantize %vq scales %vs : tensor<32768x8x128xi8>, tensor<32768x8x4xf16> -> tensor<32768x8x128xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.088 causal 32767
      : tensor<32x1x128xf16>, tensor<32768x8x128xf16>, tensor<32768x8x128xf16> -> tensor<32x1x128xf16>
  return %o : tensor<32x1x128xf16>
}
// REMARK: decode flash-attention kernel on mma.sync
// REMARK-SAME: each lane's K values in runs of 16
// REMARK-SAME: K read as split q8_0 (i8 values, f16 scales) and decoded into f16 pairs in registers; V read as split q8_0 (i8 values, f16 scales) and decoded into f16 pairs in registers
// KERNEL-LABEL: func.func @tg1_split
// KERNEL-NOT: cachet.dequantize
// KERNEL: gpu.launch
// KERNEL-DAG: memref.load %{{.*}} : memref<32768x8x4xf16{{.*}}>
// KERNEL-DAG: vector.load %{{.*}} : memref<32768x8x128xi8{{.*}}>, vector<16xi8>
// KERNEL: {{nvgpu|nvvm}}.mma.sync
// ROWS: decode flash-attention kernel (split-KV
// ROWS-SAME: each K/V row read by 16 lanes together (8 values each)
// ROWS-SAME: K read as split q8_0 (i8 values, f16 scales) and decoded in registers; V read as split q8_0 (i8 values, f16 scales) and decoded in registers
// ROWS-KERNEL-LABEL: func.func @tg1_split
// ROWS-KERNEL-NOT: cachet.dequantize
// ROWS-KERNEL: gpu.launch
// ROWS-KERNEL-DAG: memref.load %{{.*}} : memref<32768x8x4xf16{{.*}}>
// ROWS-KERNEL-DAG: vector.load %{{.*}} : memref<32768x8x128xi8{{.*}}>, vector<8xi8>

// -----

// bf16: decoded in f32 and rounded into bf16 pairs; the caches updated in
// place first.
func.func @tg1_split_bf16(%q: tensor<32x1x128xbf16>,
                          %kc: tensor<32768x8x128xi8>, %ksc: tensor<32768x8x4xf16>,
                          %vq: tensor<32768x8x128xi8>, %vs: tensor<32768x8x4xf16>,
                          %kn: tensor<1x8x128xi8>, %ksn: tensor<1x8x4xf16>)
    -> tensor<32x1x128xbf16> {
  %kq = tensor.insert_slice %kn into %kc[32767, 0, 0] [1, 8, 128] [1, 1, 1]
      : tensor<1x8x128xi8> into tensor<32768x8x128xi8>
  %ks = tensor.insert_slice %ksn into %ksc[32767, 0, 0] [1, 8, 4] [1, 1, 1]
      : tensor<1x8x4xf16> into tensor<32768x8x4xf16>
  %k = cachet.dequantize %kq scales %ks : tensor<32768x8x128xi8>, tensor<32768x8x4xf16> -> tensor<32768x8x128xbf16>
  %v = cachet.dequantize %vq scales %vs : tensor<32768x8x128xi8>, tensor<32768x8x4xf16> -> tensor<32768x8x128xbf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.088 causal 32767
      : tensor<32x1x128xbf16>, tensor<32768x8x128xbf16>, tensor<32768x8x128xbf16> -> tensor<32x1x128xbf16>
  return %o : tensor<32x1x128xbf16>
}
// REMARK: decode flash-attention kernel on mma.sync
// REMARK-SAME: K read as split q8_0 (i8 values, f16 scales) and decoded in f32 and rounded into bf16 pairs in registers; V read as split q8_0 (i8 values, f16 scales) and decoded in f32 and rounded into bf16 pairs in registers
// KERNEL-LABEL: func.func @tg1_split_bf16
// KERNEL-NOT: cachet.dequantize
// KERNEL: {{nvgpu|nvvm}}.mma.sync

// -----

// Prefill-shaped (64 queries per KV head): the prefill kernels read K/V
// dequantized; the dequantize stays.
func.func @pp16_split(%q: tensor<32x16x128xf16>,
                      %kq: tensor<4096x8x128xi8>, %ks: tensor<4096x8x4xf16>,
                      %vq: tensor<4096x8x128xi8>, %vs: tensor<4096x8x4xf16>)
    -> tensor<32x16x128xf16> {
  %k = cachet.dequantize %kq scales %ks : tensor<4096x8x128xi8>, tensor<4096x8x4xf16> -> tensor<4096x8x128xf16>
  %v = cachet.dequantize %vq scales %vs : tensor<4096x8x128xi8>, tensor<4096x8x4xf16> -> tensor<4096x8x128xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.088 causal 4080
      : tensor<32x16x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16> -> tensor<32x16x128xf16>
  return %o : tensor<32x16x128xf16>
}
// REMARK: mma-sync flash-attention kernel
// REMARK-NOT: read as split
// KERNEL-LABEL: func.func @pp16_split
// KERNEL: cachet.dequantize
// KERNEL: cachet.dequantize
// KERNEL: gpu.launch
