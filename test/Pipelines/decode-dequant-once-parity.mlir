// Decode attention with dequant-once forced: rewrites off read the cache
// in the kernel, rewrites on read the f16 scratch, and both must pick the
// same decode kernel, threads, split and K runs (they set the order of the
// sums), or the outputs differ in the last bits. The decision follows what
// rewrites off read: a bounded scratch (only the positions the causal
// bound reads, inserted into it) filled from q8_0 blocks counts as blocks,
// and a scratch filled from the split q8_0 form as split. Before, the
// bounded scratch took the mma-sync kernel (32 splits of 128 threads)
// where rewrites off took 16 splits of 256, and the split form's scratch
// took 256 threads a position each where rewrites off took mma-sync with
// K in runs of 16.
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm profile=h200 stop-before-binary rewrites=false dequant-once-options={force=true}" -o /dev/null 2>&1 | FileCheck %s
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm profile=h200 stop-before-binary rewrites=true dequant-once-options={force=true}" -o /dev/null 2>&1 | FileCheck %s --check-prefixes=CHECK,ON
// The same on SPIR-V (no mma.sync there: threads and split).
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=spirv profile=lavapipe stop-before-binary rewrites=false dequant-once-options={force=true}" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPIRV
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=spirv profile=lavapipe stop-before-binary rewrites=true dequant-once-options={force=true}" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPIRV

// ON: cachet-dequant-once-kv: rewritten (forced){{.*}}K/V dequantized at positions 0..1151 only
// CHECK-NOT: on mma.sync
// CHECK: cachet-select-kernel-configs: decode flash-attention kernel (split-KV, 16 splits{{.*}}16x2x1 workgroups of 256 threads
// SPIRV: cachet-select-kernel-configs: decode flash-attention kernel (split-KV, 2 splits{{.*}}workgroups of 256 threads
func.func @bounded_packed(%q: tensor<8x1x128xf16>, %kq: tensor<4096x2x4x!cachet.q8_0>, %vq: tensor<4096x2x4x!cachet.q8_0>) -> tensor<8x1x128xf16> {
  %k = cachet.dequantize %kq : tensor<4096x2x4x!cachet.q8_0> -> tensor<4096x2x128xf16>
  %v = cachet.dequantize %vq : tensor<4096x2x4x!cachet.q8_0> -> tensor<4096x2x128xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 100 : tensor<8x1x128xf16>, tensor<4096x2x128xf16>, tensor<4096x2x128xf16> -> tensor<8x1x128xf16>
  return %o : tensor<8x1x128xf16>
}

// -----

// ON: cachet-dequant-once-kv: rewritten (forced)
// CHECK: cachet-select-kernel-configs: decode flash-attention kernel on mma.sync (split-KV, 32 splits{{.*}}32x2x1 workgroups of 128 threads{{.*}}each lane's K values in runs of 16
// SPIRV: cachet-select-kernel-configs: decode flash-attention kernel (split-KV, 4 splits{{.*}}workgroups of 128 threads
func.func @split(%q: tensor<8x1x128xf16>, %kq: tensor<4096x2x128xi8>, %ks: tensor<4096x2x4xf16>, %vq: tensor<4096x2x128xi8>, %vs: tensor<4096x2x4xf16>) -> tensor<8x1x128xf16> {
  %k = cachet.dequantize %kq scales %ks : tensor<4096x2x128xi8>, tensor<4096x2x4xf16> -> tensor<4096x2x128xf16>
  %v = cachet.dequantize %vq scales %vs : tensor<4096x2x128xi8>, tensor<4096x2x4xf16> -> tensor<4096x2x128xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 4095 : tensor<8x1x128xf16>, tensor<4096x2x128xf16>, tensor<4096x2x128xf16> -> tensor<8x1x128xf16>
  return %o : tensor<8x1x128xf16>
}
