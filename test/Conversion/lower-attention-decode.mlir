// The decode kernel (split-KV flash-decoding): where one KV head has at most
// `decode-rows` query rows, cachet-select-kernel-configs chooses it with a
// split from the profile's compute units, the remark says "split-KV" and
// the count, and cachet-lower-attention builds two launches: the splits'
// partial states (K rows read with wide loads and decoded in registers,
// P broadcast by shuffles), then their log-sum-exp merge.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-row-values=1" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=CONFIG
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-row-values=1" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=lavapipe -cachet-select-kernel-configs="decode-row-values=1" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=LAVAPIPE
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-row-values=1" -cachet-lower-attention -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=KERNEL
// With decode-row-values=n > 1 each K/V row is read by head-dim / n lanes
// together: Q and the accumulators in registers, rows read as 16-byte
// vectors (floats) or aligned 32-bit words (blocks). Auto takes it (8
// values a lane) for f16/bf16 K and V at up to 4 rows per workgroup.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=AUTO
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=MMA
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-row-values=8" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=LANES
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-row-values=8" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=LANES-REMARK
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=lavapipe -cachet-select-kernel-configs="decode-row-values=16" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=LANES-LAVAPIPE
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-row-values=8" -cachet-lower-attention -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=LANES-KERNEL
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-row-values=32 decode-unroll=2" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=LANES32
// RUN: not cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-row-values=6" 2>&1 | FileCheck %s --check-prefix=BADVALUES
// RUN: not cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-unroll=0" 2>&1 | FileCheck %s --check-prefix=BADUNROLL
// BADVALUES: cachet-select-kernel-configs: bad decode-row-values 6: 0 (auto) or a power of two up to 32
// BADUNROLL: cachet-select-kernel-configs: bad decode-unroll 0: 1 to 16
// Staged (decode-stages=2 with NVVM's dynamic-shared async-copy, which
// cachet-compile sets): each step's K/V rows are copied into
// double-buffered dynamic workgroup memory by nvgpu.device_async_copy;
// the default (decode-stages=1) reads them from global memory.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="dynamic-shared async-copy decode-stages=2" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=STAGED
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="dynamic-shared async-copy decode-stages=2" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGED-REMARK
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="dynamic-shared async-copy decode-stages=2" -cachet-lower-attention -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=STAGED-KERNEL
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="dynamic-shared async-copy decode-row-values=1" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=UNSTAGED
// RUN: not cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-stages=3" 2>&1 | FileCheck %s --check-prefix=BADSTAGES
// BADSTAGES: cachet-select-kernel-configs: bad decode-stages 3: 1 or 2
// Negative: decode-rows=0 never takes it; a prefill has too many rows.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-rows=0" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=OFF
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="attention-kernel=decode" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORCED
// The options reach the config.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-split=5 decode-threads=64 decode-load-bytes=4 decode-row-values=1" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=OPTIONS
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-workgroup-rows=6 decode-row-values=1" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=ROWS
// Through each target's whole pipeline (SPIR-V by default too, since the
// decode suites passed on NVIDIA's Vulkan driver).
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm profile=h200 stop-before-binary" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm profile=h200 stop-before-binary attention-options={decode-stages=2}" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=rocdl chip=gfx942 profile=gfx942 stop-before-binary" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=spirv profile=lavapipe attention-kernel=decode" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=spirv profile=lavapipe" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: decode flash-attention kernel (split-KV
// TARGET-NOT: error
// Bad options are errors naming the option.
// RUN: not cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-rows=64" 2>&1 | FileCheck %s --check-prefix=BADROWS
// RUN: not cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-load-bytes=3" 2>&1 | FileCheck %s --check-prefix=BADLOAD
// decode-block-workgroups-per-cu (the SPIR-V pipeline's 2): the split of
// the kernels over blocks (q8_0 K/V) from 2 workgroups per compute unit,
// exact, the f16 ones' unchanged.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-row-values=1 decode-block-workgroups-per-cu=2" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=BLOCKSPLIT
// RUN: not cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-block-workgroups-per-cu=40" 2>&1 | FileCheck %s --check-prefix=BADBLOCKSPLIT
// BLOCKSPLIT: decode flash-attention kernel (split-KV, 16 splits: 2 workgroups on each of 132 compute units over 8 KV heads, at least 256 positions each): 4 query rows per KV head
// BLOCKSPLIT: decode flash-attention kernel (split-KV, 32 splits: 4 workgroups on each of 132 compute units
// BADBLOCKSPLIT: bad decode-block-workgroups-per-cu 40: 0 (its default) to 32
// BADROWS: cachet-select-kernel-configs: bad decode-rows 64: 0 (never) to 32
// BADLOAD: cachet-select-kernel-configs: bad decode-load-bytes 3: a power of two from 1 to 16

// Llama-3-8B decode: 32 query heads over 8 KV heads, one new token after
// 4095 cached ones, q8_0 K/V decoded in the kernel (rows of 136 bytes: 8-byte
// loads; 256 threads, as K is decoded from blocks). 4 workgroups per compute
// unit over 8 KV heads is 66: 64 splits would leave 64 positions each, 32
// would leave 128, fewer than the 256 threads, so 16.
// CONFIG-LABEL: func.func @tg1_q8_0
// CONFIG: #cachet.kernel_config<variant = attention_decode, tile = [4, 256], workgroup = 256, subgroup = 32, split = 16, load_bytes = 16>
// REMARK: remark: cachet-select-kernel-configs: decode flash-attention kernel (split-KV, 16 splits: 4 workgroups on each of 132 compute units over 8 KV heads, at least 256 positions each): 4 query rows per KV head (GQA 4:1 x 1 queries), 4 per workgroup, 16x8x1 workgroups of 256 threads (subgroup 32), one KV position per thread per step, 8-byte K loads, 4352 bytes of workgroup memory; partial softmax states merged by a second kernel (profile h200); K decoded from q8_0 blocks in registers; V decoded from q8_0 blocks in registers
// Two compute units over 8 KV heads: one split.
// LAVAPIPE-LABEL: func.func @tg1_q8_0
// LAVAPIPE: #cachet.kernel_config<variant = attention_decode, tile = [4, 256], workgroup = 256, subgroup = 8, load_bytes = 16>
// KERNEL-LABEL: func.func @tg1_q8_0
// KERNEL: %[[PARTS:.*]] = memref.alloc() : memref<8x16x4x130xf32>
// KERNEL: gpu.launch
// KERNEL-SAME: workgroup(%{{.*}} : memref<4x128xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<4x128xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<8x8xf32, #gpu.address_space<workgroup>>)
// KERNEL: scf.for
// KERNEL: vector.load %{{.*}} : memref<4096x8x136xi8, strided<[?, ?, 1], offset: ?>>, vector<8xi8>
// KERNEL: gpu.shuffle  xor
// KERNEL: math.exp2
// KERNEL: gpu.shuffle  idx
// KERNEL: scf.yield
// KERNEL: gpu.barrier
// KERNEL: gpu.launch
// KERNEL: scf.for
// KERNEL: math.exp2
// KERNEL: memref.dealloc %[[PARTS]]
// q8_0 rows of 136 bytes, copied 8 bytes at a time (17 pieces: an odd
// number, so no padding); 128 threads, whose two buffers of K and V rows
// (69632 bytes) fit a third of the H200's memory; registers for 3
// workgroups per SM. 4096 positions over 8 KV heads: 32 splits of 128.
// STAGED-LABEL: func.func @tg1_q8_0
// STAGED: #cachet.kernel_config<variant = attention_decode, tile = [4, 128], workgroup = 128, subgroup = 32, stages = 2, split = 32, min_workgroups_per_sm = 3, dynamic_shared = true, load_bytes = 16>
// STAGED-REMARK: remark: cachet-select-kernel-configs: decode flash-attention kernel (split-KV, 32 splits: {{.*}}): 4 query rows per KV head (GQA 4:1 x 1 queries), 4 per workgroup, 32x8x1 workgroups of 128 threads (subgroup 32), one KV position per thread per step, 8-byte K loads, 74368 bytes of workgroup memory; {{.*}}; V decoded from q8_0 blocks in registers; each step's K/V rows double-buffered in dynamic workgroup memory by asynchronous copies (8- and 8-byte pieces, K rows padded to 136 bytes), registers for 3 workgroups per SM
// The launch's dynamic memory: Q, the accumulator, the statistics, then
// the K and V buffers (2 x 128 rows and a spare one, where the 15 idle
// lanes of each 17-piece row's copies write nothing); the first step's copies before the
// loop, each step's wait, barrier and next copies (into rows 128..255 on
// even steps) in it, the K row and V slices read from the buffers.
// STAGED-KERNEL-LABEL: func.func @tg1_q8_0
// STAGED-KERNEL: gpu.launch
// STAGED-KERNEL-SAME: dynamic_shared_memory_size %c74368_i32
// STAGED-KERNEL: %[[BASE:.*]] = gpu.dynamic_shared_memory
// STAGED-KERNEL: %[[KROWS:.*]] = memref.view %[[BASE]][%c4224{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<257x136xi8, #gpu.address_space<workgroup>>
// STAGED-KERNEL: %[[VROWS:.*]] = memref.view %[[BASE]][%c39296{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<257x136xi8, #gpu.address_space<workgroup>>
// STAGED-KERNEL: nvgpu.device_async_copy %{{.*}}, %[[KROWS]][%{{.*}}, %{{.*}}], 8, %{{.*}} {cachet.min_workgroups_per_sm = 3 : i64} : memref<4096x8x136xi8, strided<[?, ?, 1], offset: ?>> to memref<257x136xi8, #gpu.address_space<workgroup>>
// STAGED-KERNEL: nvgpu.device_async_copy %{{.*}}, %[[VROWS]]
// STAGED-KERNEL: nvgpu.device_async_create_group
// STAGED-KERNEL: scf.for
// STAGED-KERNEL: nvgpu.device_async_wait
// STAGED-KERNEL-NEXT: gpu.barrier
// STAGED-KERNEL: nvgpu.device_async_copy
// STAGED-KERNEL: vector.load %[[KROWS]][%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<257x136xi8, #gpu.address_space<workgroup>>, vector<8xi8>
// STAGED-KERNEL: memref.load %[[VROWS]]
// STAGED-KERNEL: scf.yield
// STAGED-KERNEL: nvgpu.device_async_wait
// Lanes: 16 lanes of 8 values per 128-value row, 2 rows per subgroup;
// 128 threads are 8 groups of lanes, 4 positions each per step (32 per
// step, so 64 splits of 64 positions). K/V blocks read as aligned 32-bit
// words. Lavapipe's subgroups of 8 lanes take 16 values a lane. Auto
// keeps a position per thread for blocks.
// AUTO-LABEL: func.func @tg1_q8_0
// AUTO: #cachet.kernel_config<variant = attention_decode, tile = [4, 256], workgroup = 256, subgroup = 32, split = 16, load_bytes = 16>
// LANES-LABEL: func.func @tg1_q8_0
// LANES: #cachet.kernel_config<variant = attention_decode, tile = [4, 32], workgroup = 128, subgroup = 32, vector_width = 8, split = 64, load_bytes = 16>
// LANES-REMARK: remark: cachet-select-kernel-configs: decode flash-attention kernel (split-KV, 64 splits: 4 workgroups on each of 132 compute units over 8 KV heads, at least 32 positions each): 4 query rows per KV head (GQA 4:1 x 1 queries), 4 per workgroup, 64x8x1 workgroups of 128 threads (subgroup 32), each K/V row read by 16 lanes together (8 values each), Q and the accumulators in registers, 4 positions per group of lanes per step, 4224 bytes of workgroup memory; partial softmax states merged by a second kernel (profile h200); K decoded from q8_0 blocks in registers; V decoded from q8_0 blocks in registers
// LANES-LAVAPIPE-LABEL: func.func @tg1_q8_0
// LANES-LAVAPIPE: #cachet.kernel_config<variant = attention_decode, tile = [4, 64], workgroup = 128, subgroup = 8, vector_width = 16, load_bytes = 16>
// LANES-KERNEL-LABEL: func.func @tg1_q8_0
// LANES-KERNEL: gpu.launch
// LANES-KERNEL-NOT: vector<8xi8>
// LANES-KERNEL: scf.for
// LANES-KERNEL: vector.load %{{.*}} {alignment = 4 : i64} : memref<4096x8x136xi8, strided<[?, ?, 1], offset: ?>>, vector<4xi8>
// LANES-KERNEL: vector.fma {{.*}} : vector<1xf32>
// LANES-KERNEL: gpu.shuffle  xor %{{.*}}, %c1_i32
// LANES-KERNEL: gpu.shuffle  xor %{{.*}}, %c8_i32
// LANES-KERNEL-NOT: gpu.shuffle  xor %{{.*}}, %c16_i32,
// LANES-KERNEL: math.exp2
// LANES-KERNEL-NOT: gpu.shuffle  idx
// LANES-KERNEL: scf.yield
// The groups of a subgroup merged by shuffles across them.
// LANES-KERNEL: gpu.shuffle  xor %{{.*}}, %c16_i32
// LANES-KERNEL: gpu.barrier
// LANES-KERNEL: gpu.launch
// LANES32-LABEL: func.func @tg1_q8_0
// LANES32: #cachet.kernel_config<variant = attention_decode, tile = [4, 64], workgroup = 128, subgroup = 32, vector_width = 32, split = 64, load_bytes = 16>
// UNSTAGED-LABEL: func.func @tg1_q8_0
// UNSTAGED: #cachet.kernel_config<variant = attention_decode, tile = [4, 256], workgroup = 256, subgroup = 32, split = 16, load_bytes = 16>
// OFF-LABEL: func.func @tg1_q8_0
// OFF: variant = attention_mma
// OPTIONS-LABEL: func.func @tg1_q8_0
// OPTIONS: #cachet.kernel_config<variant = attention_decode, tile = [4, 64], workgroup = 64, subgroup = 32, split = 5, load_bytes = 4>
func.func @tg1_q8_0(%q: tensor<32x1x128xf16>, %kq: tensor<4096x8x4x!cachet.q8_0>,
                    %vq: tensor<4096x8x4x!cachet.q8_0>) -> tensor<32x1x128xf16> {
  %k = cachet.dequantize %kq : tensor<4096x8x4x!cachet.q8_0> -> tensor<4096x8x128xf16>
  %v = cachet.dequantize %vq : tensor<4096x8x4x!cachet.q8_0> -> tensor<4096x8x128xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 4095
      : tensor<32x1x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16> -> tensor<32x1x128xf16>
  return %o : tensor<32x1x128xf16>
}

// -----

// Speculative verification of 4 tokens over a bf16 cache: 16 rows per KV
// head, the most auto takes by default, 8 per workgroup (two workgroups
// along z); bf16 rows of 256 bytes read 16 bytes at a time.
// CONFIG-LABEL: func.func @tg4_bf16
// CONFIG: #cachet.kernel_config<variant = attention_decode, tile = [8, 128], workgroup = 128, subgroup = 32, split = 32, load_bytes = 16>
// REMARK: remark: cachet-select-kernel-configs: decode flash-attention kernel (split-KV, 32 splits: {{.*}}): 16 query rows per KV head (GQA 4:1 x 4 queries), 8 per workgroup, 32x8x2 workgroups
// At most 6 rows per workgroup: 4 (the most that divides 16), 4 workgroups
// along z.
// Staged bf16 rows of 256 bytes, copied 16 at a time: 16 pieces, an even
// number, so K rows are padded to 272 bytes (17); 64 threads.
// STAGED-LABEL: func.func @tg4_bf16
// STAGED: #cachet.kernel_config<variant = attention_decode, tile = [8, 64], workgroup = 64, subgroup = 32, stages = 2, split = 64, min_workgroups_per_sm = 3, dynamic_shared = true, load_bytes = 16>
// STAGED-REMARK: K rows padded to 272 bytes
// STAGED-KERNEL-LABEL: func.func @tg4_bf16
// STAGED-KERNEL: memref.view {{.*}} to memref<129x136xbf16, #gpu.address_space<workgroup>>
// STAGED-KERNEL: memref.view {{.*}} to memref<129x128xbf16, #gpu.address_space<workgroup>>
// STAGED-KERNEL: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1, cachet.min_workgroups_per_sm = 3 : i64}
// ROWS-LABEL: func.func @tg4_bf16
// ROWS: #cachet.kernel_config<variant = attention_decode, tile = [4, 128], workgroup = 128, subgroup = 32, split = 32, load_bytes = 16>
// bf16 rows read as 16-byte vectors by 16 lanes; 8 rows of Q and of the
// accumulators, 8 values each, per lane.
// Auto: 8 rows per workgroup, a position per thread.
// AUTO-LABEL: func.func @tg4_bf16
// AUTO: #cachet.kernel_config<variant = attention_decode, tile = [8, 128], workgroup = 128, subgroup = 32, split = 32, load_bytes = 16>
// LANES-LABEL: func.func @tg4_bf16
// LANES: #cachet.kernel_config<variant = attention_decode, tile = [8, 32], workgroup = 128, subgroup = 32, vector_width = 8, split = 64, load_bytes = 16>
// LANES-KERNEL-LABEL: func.func @tg4_bf16
// LANES-KERNEL: vector.load %{{.*}} {alignment = 16 : i64} : memref<4100x8x128xbf16, strided<[?, ?, 1], offset: ?>>, vector<8xbf16>
// Each lane's 16 values of 8 rows (256 registers) would not fit: 8.
// LANES32-LABEL: func.func @tg4_bf16
// LANES32: #cachet.kernel_config<variant = attention_decode, tile = [8, 128], workgroup = 128, subgroup = 32, split = 32, load_bytes = 16>
// KERNEL-LABEL: func.func @tg4_bf16
// KERNEL: vector.load %{{.*}} : memref<4100x8x128xbf16, strided<[?, ?, 1], offset: ?>>, vector<8xbf16>
func.func @tg4_bf16(%q: tensor<32x4x128xbf16>, %k: tensor<4100x8x128xbf16>,
                    %v: tensor<4100x8x128xbf16>) -> tensor<32x4x128xbf16> {
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 4096
      : tensor<32x4x128xbf16>, tensor<4100x8x128xbf16>, tensor<4100x8x128xbf16> -> tensor<32x4x128xbf16>
  return %o : tensor<32x4x128xbf16>
}

// -----

// One new token over 32768 f16 positions (4 rows per KV head): auto reads each
// row by 16 lanes, 8 values each.
// AUTO-LABEL: func.func @tg1_f16
// AUTO: #cachet.kernel_config<variant = attention_decode, tile = [4, 32], workgroup = 128, subgroup = 32, vector_width = 8, split = 64, load_bytes = 16>
// AUTO-NEXT: return
func.func @tg1_f16(%q: tensor<32x1x128xf16>, %k: tensor<32768x8x128xf16>,
                   %v: tensor<32768x8x128xf16>) -> tensor<32x1x128xf16> {
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 32767
      : tensor<32x1x128xf16>, tensor<32768x8x128xf16>, tensor<32768x8x128xf16> -> tensor<32x1x128xf16>
  return %o : tensor<32x1x128xf16>
}

// -----

// Blocks and 8 rows per workgroup at 16384 positions or more: without
// mma.sync (SPIR-V, ROCDL) auto reads each row by 16 lanes too; with it
// (NVVM) auto takes mma.sync.
// AUTO-LABEL: func.func @tg1_q8_0_deep
// AUTO: #cachet.kernel_config<variant = attention_decode, tile = [4, 32], workgroup = 128, subgroup = 32, vector_width = 8,
// MMA-LABEL: func.func @tg1_q8_0_deep
// MMA: #cachet.kernel_config<variant = attention_decode_mma_sync,
func.func @tg1_q8_0_deep(%q: tensor<32x1x128xf16>, %kq: tensor<16384x8x4x!cachet.q8_0>,
                         %vq: tensor<16384x8x4x!cachet.q8_0>) -> tensor<32x1x128xf16> {
  %k = cachet.dequantize %kq : tensor<16384x8x4x!cachet.q8_0> -> tensor<16384x8x128xf16>
  %v = cachet.dequantize %vq : tensor<16384x8x4x!cachet.q8_0> -> tensor<16384x8x128xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 16383
      : tensor<32x1x128xf16>, tensor<16384x8x128xf16>, tensor<16384x8x128xf16> -> tensor<32x1x128xf16>
  return %o : tensor<32x1x128xf16>
}

// -----

// AUTO-LABEL: func.func @tg4_f16_deep
// AUTO: #cachet.kernel_config<variant = attention_decode, tile = [8, 32], workgroup = 128, subgroup = 32, vector_width = 8,
// MMA-LABEL: func.func @tg4_f16_deep
// MMA: #cachet.kernel_config<variant = attention_decode_mma_sync,
func.func @tg4_f16_deep(%q: tensor<32x4x128xf16>, %k: tensor<32768x8x128xf16>,
                        %v: tensor<32768x8x128xf16>) -> tensor<32x4x128xf16> {
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 32764
      : tensor<32x4x128xf16>, tensor<32768x8x128xf16>, tensor<32768x8x128xf16> -> tensor<32x4x128xf16>
  return %o : tensor<32x4x128xf16>
}

// -----

// Prefill: 64 query rows per KV head keep the tensor-core kernel; asking
// for the decode kernel keeps the reference lowering and says why.
// CONFIG-LABEL: func.func @prefill
// CONFIG: variant = attention_mma
// FORCED: remark: cachet-select-kernel-configs: reference lowering kept: attention-kernel=decode: 64 query rows per KV head (group 4 x 16 queries; the decode kernel keeps at most 32 in registers)
func.func @prefill(%q: tensor<8x16x64xf16>, %k: tensor<64x2x64xf16>,
                   %v: tensor<64x2x64xf16>) -> tensor<8x16x64xf16> {
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 48
      : tensor<8x16x64xf16>, tensor<64x2x64xf16>, tensor<64x2x64xf16> -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

// A decode config written in the input is kept and built as written: 3
// splits, 64 threads, byte loads of the K rows (the subgroup left out: the
// device's).
// KERNEL-LABEL: func.func @written
// KERNEL: memref.alloc() : memref<2x3x2x66xf32>
// KERNEL: memref.load %{{.*}} : memref<300x2x40xi8
func.func @written(%q: tensor<4x1x64xf16>, %kq: tensor<300x2x2x!cachet.q4_1>,
                   %vq: tensor<300x2x2x!cachet.q4_1>) -> tensor<4x1x64xf16> {
  %k = cachet.dequantize %kq : tensor<300x2x2x!cachet.q4_1> -> tensor<300x2x64xf16>
  %v = cachet.dequantize %vq : tensor<300x2x2x!cachet.q4_1> -> tensor<300x2x64xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 299
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode, tile = [2, 64], workgroup = 64, split = 3, load_bytes = 1>}
      : tensor<4x1x64xf16>, tensor<300x2x64xf16>, tensor<300x2x64xf16> -> tensor<4x1x64xf16>
  return %o : tensor<4x1x64xf16>
}
