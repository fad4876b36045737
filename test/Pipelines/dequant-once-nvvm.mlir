// cachet-compile's dequant-once decision on NVVM. The in-kernel decoding
// there costs about two f16 bytes per value (dequant-cost=2; the H200 grid,
// docs/BENCHMARKS.md run 60), so 32 query rows per KV head (G 8 x Sq 4)
// over a q8_0 cache are rewritten, where the pass's own default (1 with
// cooperative matrices) keeps in-kernel decoding; SPIR-V keeps that
// default; 16 rows are decode-shaped on every target; the user's
// dequant-once-options win.
// RUN: cachet-opt %s -cachet-compile="target=nvvm profile=h200 stop-before-binary" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NVVM
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=h200 stop-before-binary" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPIRV
// RUN: cachet-opt %s -cachet-compile="target=nvvm profile=h200 stop-before-binary dequant-once-options={dequant-cost=1}" -o /dev/null 2>&1 | FileCheck %s --check-prefix=USER
// NVVM: remark: cachet-dequant-once-kv: rewritten: queries per KV head 32 (G=8 x Sq=4), tile 16 -> 2 passes{{.*}}dequant cost 2.00
// NVVM: remark: cachet-dequant-once-kv: not rewritten: decode-shaped: 16 < min-queries 32
// SPIRV: remark: cachet-dequant-once-kv: not rewritten: in-kernel dequant is cheaper: queries per KV head 32 (G=8 x Sq=4)
// SPIRV: remark: cachet-dequant-once-kv: not rewritten: decode-shaped: 16 < min-queries 32
// USER: remark: cachet-dequant-once-kv: not rewritten: in-kernel dequant is cheaper: queries per KV head 32 (G=8 x Sq=4){{.*}}dequant cost 1.00
func.func @rows32(%q: tensor<32x4x128xf16>, %kq: tensor<4100x4x4x!cachet.q8_0>,
                  %vq: tensor<4100x4x4x!cachet.q8_0>) -> tensor<32x4x128xf16> {
  %k = cachet.dequantize %kq : tensor<4100x4x4x!cachet.q8_0> -> tensor<4100x4x128xf16>
  %v = cachet.dequantize %vq : tensor<4100x4x4x!cachet.q8_0> -> tensor<4100x4x128xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 4096
      : tensor<32x4x128xf16>, tensor<4100x4x128xf16>, tensor<4100x4x128xf16> -> tensor<32x4x128xf16>
  return %o : tensor<32x4x128xf16>
}
func.func @rows16(%q: tensor<32x4x128xf16>, %kq: tensor<4100x8x4x!cachet.q8_0>,
                  %vq: tensor<4100x8x4x!cachet.q8_0>) -> tensor<32x4x128xf16> {
  %k = cachet.dequantize %kq : tensor<4100x8x4x!cachet.q8_0> -> tensor<4100x8x128xf16>
  %v = cachet.dequantize %vq : tensor<4100x8x4x!cachet.q8_0> -> tensor<4100x8x128xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 4096
      : tensor<32x4x128xf16>, tensor<4100x8x128xf16>, tensor<4100x8x128xf16> -> tensor<32x4x128xf16>
  return %o : tensor<32x4x128xf16>
}

// Forced onto a decode-shaped attention, dequant-once keeps the decode
// kernel: on NVVM the mma.sync one, each lane reading its K values in runs
// of a whole block (32) as rewrites off decode them from the q8_0 blocks,
// so off and on sum in one order.
// RUN: cachet-opt %s -cachet-compile="target=nvvm profile=h200 stop-before-binary" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DECODE-OFF
// RUN: cachet-opt %s -cachet-compile="target=nvvm profile=h200 stop-before-binary dequant-once-options={force=true}" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DECODE-ON
// DECODE-OFF: remark: cachet-select-kernel-configs: decode flash-attention kernel on mma.sync (split-KV, 33 splits{{.*}}16 per workgroup{{.*}}each lane's K values in runs of 32{{.*}}K decoded from q8_0 blocks into f16 pairs in registers
// DECODE-ON: remark: cachet-dequant-once-kv: rewritten (forced)
// DECODE-ON: remark: cachet-select-kernel-configs: decode flash-attention kernel on mma.sync (split-KV, 33 splits{{.*}}16 per workgroup{{.*}}each lane's K values in runs of 32, 8708 bytes of workgroup memory; partial softmax states merged by a second kernel (profile h200)
