// The decode kernel on mma.sync (attention_decode_mma_sync, NVVM): S = Q K^T
// and O^T = V^T P^T as m16n8k16 mma.sync, Q in registers, q8_0 / q4_0
// blocks decoded to f16 (bf16) pairs in registers. cachet-compile allows it on
// NVVM (allow-mma-sync); auto takes it wherever it serves but for blocks at
// up to 4 rows and fewer than 16384 positions.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=CONFIG
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync" -cachet-lower-attention -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=KERNEL
// Without allow-mma-sync (SPIR-V, ROCDL) or with decode-mma-sync=-1 the
// kernels before it; decode-mma-sync=1 takes it where auto would not.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=NOSYNC
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync decode-mma-sync=-1" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=NOSYNC
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync decode-mma-sync=1" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=FORCED
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync decode-mma-unroll=2 decode-workgroup-rows=8" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=OPTIONS
// The default, decode-mma-stages=2: each step's loads issued before the
// previous step's products, the split targeting the 2 workgroups per
// compute unit that the kernel's registers are asked to allow (cut to the
// workgroups that get positions, a multiple of 128 each);
// decode-workgroups-per-cu=3 asks for 3. decode-mma-stages=1: the loads
// after the products, 4 workgroups per compute unit, the split a power of
// two.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync decode-workgroups-per-cu=3" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=STAGES
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync decode-workgroups-per-cu=3" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES-REMARK
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync decode-workgroups-per-cu=3" -cachet-lower-attention -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=STAGES-KERNEL
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm profile=h200 stop-before-binary" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=STAGES-NVVM
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync decode-mma-stages=1" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=STAGES1
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync decode-mma-stages=1" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES1-REMARK
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync decode-mma-stages=1" -cachet-lower-attention -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=STAGES1-KERNEL
// Blocks as aligned 4-byte words.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync decode-load-bytes=4" -cachet-lower-attention -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=WORDS
// 256 threads per workgroup: one per SM.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync decode-threads=256" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=THREADS
// Through cachet-compile to PTX.
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm profile=h200 stop-before-binary" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// Bad options.
// RUN: not cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-mma-sync=2" 2>&1 | FileCheck %s --check-prefix=BADSYNC
// RUN: not cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-mma-unroll=0" 2>&1 | FileCheck %s --check-prefix=BADUNROLL
// RUN: not cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-mma-stages=3" 2>&1 | FileCheck %s --check-prefix=BADSTAGES
// RUN: not cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-workgroups-per-cu=-1" 2>&1 | FileCheck %s --check-prefix=BADPERCU
// TARGET-NOT: error
// BADSYNC: cachet-select-kernel-configs: bad decode-mma-sync 2: -1 (never), 0 (auto) or 1 (where it serves)
// BADUNROLL: cachet-select-kernel-configs: bad decode-mma-unroll 0: 1 to 8
// BADSTAGES: cachet-select-kernel-configs: bad decode-mma-stages 3: 1 or 2
// BADPERCU: cachet-select-kernel-configs: bad decode-workgroups-per-cu -1: 0 (auto) to 32

// Llama-3-8B decode over an f16 cache at d32768: 4 rows of one KV head in
// a workgroup (the m16 block's other 12 rows zeros), 4 subgroups of 16
// positions per step, 64 splits; K values in runs of 8 (16-byte loads).

func.func @tg1_f16(%q: tensor<32x1x128xf16>, %k: tensor<32768x8x128xf16>,
                   %v: tensor<32768x8x128xf16>) -> tensor<32x1x128xf16> {
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 32767
      : tensor<32x1x128xf16>, tensor<32768x8x128xf16>, tensor<32768x8x128xf16> -> tensor<32x1x128xf16>
  return %o : tensor<32x1x128xf16>
}
// CONFIG-LABEL: func.func @tg1_f16
// CONFIG: #cachet.kernel_config<variant = attention_decode_mma_sync, tile = [4, 64], workgroup = 128, subgroup = 32, vector_width = 8, stages = 2, split = 32, min_workgroups_per_sm = 2>
// REMARK: remark: cachet-select-kernel-configs: decode flash-attention kernel on mma.sync (split-KV, 32 splits: 2 workgroups on each of 132 compute units over 8 KV heads, at least 64 positions each, cut from 33 to the workgroups that get positions (a multiple of 128 each)): 4 query rows per KV head (GQA 4:1 x 1 queries), 4 per workgroup, 32x8x1 workgroups of 128 threads (subgroup 32), Q K^T and P V as m16n8k16 f16 mma.sync, 16 positions per subgroup per step, each lane's K values in runs of 8, 4228 bytes of workgroup memory; partial softmax states merged by a second kernel (profile h200); each step's loads issued before the previous step's products (decode-mma-stages=2); registers for 2 workgroups per SM
// KERNEL-LABEL: func.func @tg1_f16
// KERNEL: gpu.launch blocks({{.*}}) in ({{.*}} = %c32{{.*}}, {{.*}} = %c8{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c128
// KERNEL: scf.for
// KERNEL-COUNT-8: vector.load {{.*}} : memref<32768x8x128xf16{{.*}}>, vector<8xf16>
// KERNEL-COUNT-16: nvvm.mma.sync
// KERNEL: gpu.shuffle  idx
// KERNEL-COUNT-8: nvvm.mma.sync
// KERNEL: scf.yield
// KERNEL: gpu.launch
// NOSYNC-LABEL: func.func @tg1_f16
// NOSYNC: #cachet.kernel_config<variant = attention_decode,
// FORCED-LABEL: func.func @tg1_f16
// FORCED: variant = attention_decode_mma_sync
// OPTIONS-LABEL: func.func @tg1_f16
// OPTIONS: #cachet.kernel_config<variant = attention_decode_mma_sync, tile = [4, 128], workgroup = 128, subgroup = 32, vector_width = 8, stages = 2, split = 32, min_workgroups_per_sm = 2>
// STAGES-LABEL: func.func @tg1_f16
// STAGES: #cachet.kernel_config<variant = attention_decode_mma_sync, tile = [4, 64], workgroup = 128, subgroup = 32, vector_width = 8, stages = 2, split = 43, min_workgroups_per_sm = 3>
// STAGES-REMARK: remark: cachet-select-kernel-configs: decode flash-attention kernel on mma.sync (split-KV, 43 splits: 3 workgroups on each of 132 compute units over 8 KV heads, at least 64 positions each, cut from 49 to the workgroups that get positions (a multiple of 128 each)): {{.*}}; each step's loads issued before the previous step's products (decode-mma-stages=2); registers for 3 workgroups per SM
// The loop carries zeros in place of loads into its first iteration, which
// loads its own step; every iteration then loads the next step before its
// products.
// STAGES-KERNEL-LABEL: func.func @tg1_f16
// STAGES-KERNEL: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8xf16>
// STAGES-KERNEL: scf.for {{.*}} iter_args({{.*}}%[[ZERO]]{{[,)]}}
// STAGES-KERNEL: scf.if
// STAGES-KERNEL-COUNT-16: vector.load {{.*}} : memref<32768x8x128xf16{{.*}}>, vector<8xf16>
// STAGES-KERNEL: scf.yield
// STAGES-KERNEL: } else {
// STAGES-KERNEL: scf.yield
// STAGES-KERNEL-COUNT-16: vector.load {{.*}} : memref<32768x8x128xf16{{.*}}>, vector<8xf16>
// STAGES-KERNEL: nvvm.mma.sync {{.*}} {cachet.min_workgroups_per_sm = 3 : i64
// STAGES-KERNEL: gpu.shuffle  idx
// STAGES-KERNEL-COUNT-8: nvvm.mma.sync
// STAGES-KERNEL: scf.yield
// STAGES-NVVM: llvm.func @tg1_f16_kernel
// STAGES-NVVM-SAME: gpu.known_grid_size = array<i32: 32, 8, 1>
// STAGES-NVVM-SAME: nvvm.minctasm = 2 : i32
// THREADS-LABEL: func.func @tg1_f16
// THREADS: #cachet.kernel_config<variant = attention_decode_mma_sync, tile = [4, 128], workgroup = 256, subgroup = 32, vector_width = 8, stages = 2, split = 16, min_workgroups_per_sm = 1>
// STAGES1-LABEL: func.func @tg1_f16
// STAGES1: #cachet.kernel_config<variant = attention_decode_mma_sync, tile = [4, 64], workgroup = 128, subgroup = 32, vector_width = 8, split = 64>
// STAGES1-REMARK: remark: cachet-select-kernel-configs: decode flash-attention kernel on mma.sync (split-KV, 64 splits: 4 workgroups on each of 132 compute units over 8 KV heads, at least 64 positions each): {{.*}} (profile h200){{$}}
// STAGES1-KERNEL-LABEL: func.func @tg1_f16
// STAGES1-KERNEL: scf.for
// STAGES1-KERNEL-NOT: scf.if
// STAGES1-KERNEL-COUNT-16: vector.load {{.*}} : memref<32768x8x128xf16{{.*}}>, vector<8xf16>
// STAGES1-KERNEL-NOT: vector.load
// STAGES1-KERNEL: nvvm.mma.sync

// -----

// q8_0 blocks at d32768: each lane's K values are one whole block (runs of
// 32), V 16 values of one block per lane.

func.func @tg1_q8_0(%q: tensor<32x1x128xf16>, %kq: tensor<32768x8x4x!cachet.q8_0>,
                    %vq: tensor<32768x8x4x!cachet.q8_0>) -> tensor<32x1x128xf16> {
  %k = cachet.dequantize %kq : tensor<32768x8x4x!cachet.q8_0> -> tensor<32768x8x128xf16>
  %v = cachet.dequantize %vq : tensor<32768x8x4x!cachet.q8_0> -> tensor<32768x8x128xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 32767
      : tensor<32x1x128xf16>, tensor<32768x8x128xf16>, tensor<32768x8x128xf16> -> tensor<32x1x128xf16>
  return %o : tensor<32x1x128xf16>
}
// CONFIG-LABEL: func.func @tg1_q8_0
// CONFIG: #cachet.kernel_config<variant = attention_decode_mma_sync, tile = [4, 64], workgroup = 128, subgroup = 32, vector_width = 32, stages = 2, split = 32, min_workgroups_per_sm = 2>
// REMARK: remark: cachet-select-kernel-configs: decode flash-attention kernel on mma.sync ({{.*}} each lane's K values in runs of 32, {{.*}}; blocks read 8 bytes at a time (whole blocks with their scales); K decoded from q8_0 blocks into f16 pairs in registers; V decoded from q8_0 blocks into f16 pairs in registers
// KERNEL-LABEL: func.func @tg1_q8_0
// KERNEL: scf.for
// A K block (34 bytes from 0, 2, 4 or 6 past an 8-byte boundary) in five
// 8-byte loads, its scale among them; a V half block's scale, then its 16
// quants in three.
// KERNEL-COUNT-5: vector.load {{.*}} : memref<32768x8x136xi8{{.*}}>, vector<8xi8>
// KERNEL-NOT: vector<4xi8>
// KERNEL: vector.load {{.*}} : memref<32768x8x136xi8{{.*}}>, vector<2xi8>
// KERNEL-COUNT-3: vector.load {{.*}} : memref<32768x8x136xi8{{.*}}>, vector<8xi8>
// With decode-load-bytes=4: the block's scale, then its 8 quant words and
// the one after them.
// WORDS-LABEL: func.func @tg1_q8_0
// WORDS: scf.for
// WORDS: vector.load {{.*}} : memref<32768x8x136xi8{{.*}}>, vector<2xi8>
// WORDS-COUNT-9: vector.load {{.*}} : memref<32768x8x136xi8{{.*}}>, vector<4xi8>
// KERNEL: arith.xori
// KERNEL: vector.shuffle {{.*}} [0, 4, 1, 5] : vector<4xi8>, vector<4xi8>
// KERNEL: arith.subf {{.*}} : vector<2xf16>
// KERNEL: arith.mulf {{.*}} : vector<2xf16>
// KERNEL: nvvm.mma.sync
// NOSYNC-LABEL: func.func @tg1_q8_0
// NOSYNC: #cachet.kernel_config<variant = attention_decode,

// -----

// q8_0 blocks dequantized to bf16 (a bf16 model's cache) at d32768: each
// quant decoded in f32 without conversions (a byte permutation and a
// subtraction), times the f32 scale, rounded to bf16 in pairs (the dequantize's
// value, one packed conversion a pair), bf16 mma.sync.

func.func @tg1_q8_0_bf16(%q: tensor<32x1x128xbf16>, %kq: tensor<32768x8x4x!cachet.q8_0>,
                    %vq: tensor<32768x8x4x!cachet.q8_0>) -> tensor<32x1x128xbf16> {
  %k = cachet.dequantize %kq : tensor<32768x8x4x!cachet.q8_0> -> tensor<32768x8x128xbf16>
  %v = cachet.dequantize %vq : tensor<32768x8x4x!cachet.q8_0> -> tensor<32768x8x128xbf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 32767
      : tensor<32x1x128xbf16>, tensor<32768x8x128xbf16>, tensor<32768x8x128xbf16> -> tensor<32x1x128xbf16>
  return %o : tensor<32x1x128xbf16>
}
// CONFIG-LABEL: func.func @tg1_q8_0_bf16
// CONFIG: #cachet.kernel_config<variant = attention_decode_mma_sync, tile = [4, 64]
// REMARK: remark: cachet-select-kernel-configs: decode flash-attention kernel on mma.sync ({{.*}}bf16 mma.sync{{.*}}; K decoded from q8_0 blocks in f32 and rounded into bf16 pairs in registers; V decoded from q8_0 blocks in f32 and rounded into bf16 pairs in registers
// KERNEL-LABEL: func.func @tg1_q8_0_bf16
// KERNEL: scf.for
// KERNEL: arith.xori
// KERNEL: vector.shuffle {{.*}} [0, 4, 5, 7] : vector<4xi8>, vector<4xi8>
// KERNEL: arith.mulf {{.*}} : f32
// KERNEL: arith.truncf {{.*}} : vector<2xf32> to vector<2xbf16>
// KERNEL-NOT: arith.mulf {{.*}} : vector<2xf16>
// KERNEL: nvvm.mma.sync {{.*}}bf16
// NOSYNC-LABEL: func.func @tg1_q8_0_bf16
// NOSYNC: #cachet.kernel_config<variant = attention_decode,

// -----

// tg4 over q4_0 at d4096: 16 rows (GQA 4 x 4 queries) fill the m16 block;
// V's q4_0 half blocks hold their bytes' low nibbles, then the high ones.

func.func @tg4_q4_0(%q: tensor<32x4x128xf16>, %kq: tensor<4096x8x4x!cachet.q4_0>,
                    %vq: tensor<4096x8x4x!cachet.q4_0>) -> tensor<32x4x128xf16> {
  %k = cachet.dequantize %kq : tensor<4096x8x4x!cachet.q4_0> -> tensor<4096x8x128xf16>
  %v = cachet.dequantize %vq : tensor<4096x8x4x!cachet.q4_0> -> tensor<4096x8x128xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 4092
      : tensor<32x4x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16> -> tensor<32x4x128xf16>
  return %o : tensor<32x4x128xf16>
}
// CONFIG-LABEL: func.func @tg4_q4_0
// CONFIG: #cachet.kernel_config<variant = attention_decode_mma_sync, tile = [16, 64], workgroup = 128, subgroup = 32, vector_width = 32, stages = 2, split = 32, min_workgroups_per_sm = 2>
// REMARK: remark: cachet-select-kernel-configs: decode flash-attention kernel on mma.sync ({{.*}}16 query rows per KV head (GQA 4:1 x 4 queries), 16 per workgroup{{.*}}8708 bytes of workgroup memory
// KERNEL-LABEL: func.func @tg4_q4_0
// A K block (18 bytes) in three 8-byte loads, its scale among them; a V
// half block's scale, then its 8 bytes of nibbles in two.
// KERNEL: scf.for
// KERNEL-COUNT-3: vector.load {{.*}} : memref<4096x8x72xi8{{.*}}>, vector<8xi8>
// KERNEL-NOT: vector<4xi8>
// KERNEL: vector.load {{.*}} : memref<4096x8x72xi8{{.*}}>, vector<2xi8>
// KERNEL-COUNT-2: vector.load {{.*}} : memref<4096x8x72xi8{{.*}}>, vector<8xi8>
// KERNEL-NOT: vector.load {{.*}} : memref<4096x8x72xi8{{.*}}>, vector<8xi8>
// KERNEL: vector.load {{.*}} : memref<4096x8x72xi8{{.*}}>, vector<2xi8>
// KERNEL: arith.andi {{.*}} : i32
// KERNEL: arith.shrui {{.*}} : i32
// KERNEL: nvvm.mma.sync
// OPTIONS-LABEL: func.func @tg4_q4_0
// OPTIONS: #cachet.kernel_config<variant = attention_decode_mma_sync, tile = [8, 128]

// -----

// Auto keeps a position per thread for blocks at up to 4 rows and fewer
// than 16384 positions (run 72: q8_0 tg1 @ d4096 20 against 22 us);
// decode-mma-sync=1 takes mma.sync there.

func.func @tg1_q8_0_d4096(%q: tensor<32x1x128xf16>, %kq: tensor<4096x8x4x!cachet.q8_0>,
                          %vq: tensor<4096x8x4x!cachet.q8_0>) -> tensor<32x1x128xf16> {
  %k = cachet.dequantize %kq : tensor<4096x8x4x!cachet.q8_0> -> tensor<4096x8x128xf16>
  %v = cachet.dequantize %vq : tensor<4096x8x4x!cachet.q8_0> -> tensor<4096x8x128xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 4095
      : tensor<32x1x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16> -> tensor<32x1x128xf16>
  return %o : tensor<32x1x128xf16>
}
// CONFIG-LABEL: func.func @tg1_q8_0_d4096
// CONFIG: #cachet.kernel_config<variant = attention_decode,
// REMARK: remark: cachet-select-kernel-configs: decode flash-attention kernel (split-KV{{.*}}; not on mma.sync: auto keeps a position per thread for blocks at up to 4 rows and fewer than 16384 positions
// FORCED-LABEL: func.func @tg1_q8_0_d4096
// FORCED: variant = attention_decode_mma_sync

// -----

// Negative: q5_0 blocks and a head dimension of 64 with q8_0 blocks keep the
// kernels before it, and the remark says why.

func.func @tg1_q5_0(%q: tensor<32x1x128xf16>, %kq: tensor<32768x8x4x!cachet.q5_0>,
                    %vq: tensor<32768x8x4x!cachet.q5_0>) -> tensor<32x1x128xf16> {
  %k = cachet.dequantize %kq : tensor<32768x8x4x!cachet.q5_0> -> tensor<32768x8x128xf16>
  %v = cachet.dequantize %vq : tensor<32768x8x4x!cachet.q5_0> -> tensor<32768x8x128xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 32767
      : tensor<32x1x128xf16>, tensor<32768x8x128xf16>, tensor<32768x8x128xf16> -> tensor<32x1x128xf16>
  return %o : tensor<32x1x128xf16>
}
// CONFIG-LABEL: func.func @tg1_q5_0
// CONFIG: #cachet.kernel_config<variant = attention_decode,
// REMARK: remark: cachet-select-kernel-configs: decode flash-attention kernel (split-KV{{.*}}; not on mma.sync: q5_0 blocks (it decodes q8_0 and q4_0 into f16 or bf16 pairs in registers)
// FORCED-LABEL: func.func @tg1_q5_0
// FORCED: variant = attention_decode,

// -----

func.func @d64_q8_0(%q: tensor<32x1x64xf16>, %kq: tensor<32768x8x2x!cachet.q8_0>,
                    %vq: tensor<32768x8x2x!cachet.q8_0>) -> tensor<32x1x64xf16> {
  %k = cachet.dequantize %kq : tensor<32768x8x2x!cachet.q8_0> -> tensor<32768x8x64xf16>
  %v = cachet.dequantize %vq : tensor<32768x8x2x!cachet.q8_0> -> tensor<32768x8x64xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 32767
      : tensor<32x1x64xf16>, tensor<32768x8x64xf16>, tensor<32768x8x64xf16> -> tensor<32x1x64xf16>
  return %o : tensor<32x1x64xf16>
}
// CONFIG-LABEL: func.func @d64_q8_0
// CONFIG: #cachet.kernel_config<variant = attention_decode,
// REMARK: remark: cachet-select-kernel-configs: decode flash-attention kernel (split-KV{{.*}}; not on mma.sync: the head dimension 64 is not a multiple of 128
