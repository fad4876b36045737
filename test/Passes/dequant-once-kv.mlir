// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-dequant-once-kv 2>/dev/null | FileCheck %s
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-dequant-once-kv -verify-diagnostics -o /dev/null
// Chunked scratch: max-scratch-bytes below one layer's f16 K+V.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-dequant-once-kv=max-scratch-bytes=262144 2>/dev/null | FileCheck %s --check-prefix=CHUNK
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-dequant-once-kv=max-scratch-bytes=400000 2>/dev/null | FileCheck %s --check-prefix=REST
// A key tile of 40 (cachet-select-kernel-configs' key-tile option, the
// tiled kernel; cachet-compile passes its options on): chunks of lcm(64, 40) = 320 positions, whole
// key tiles, so the chunks' kernels walk the tiles of one pass.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-dequant-once-kv="max-scratch-bytes=400000 select-options={key-tile=40 attention-kernel=tiled}" 2>/dev/null | FileCheck %s --check-prefix=KEYTILE
// RUN: not cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-dequant-once-kv="select-options={key-tile=-1}" 2>&1 >/dev/null | FileCheck %s --check-prefix=BADTILE
// Options under which the attention gets no kernel (its tiles over the
// workgroup memory): the reference lowering takes the softmax over all
// positions at once, which chunks cannot reproduce: not chunked.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=lavapipe -cachet-dequant-once-kv="max-scratch-bytes=262144 force=true select-options={query-tile=64 key-tile=256 attention-kernel=scalar}" 2>&1 >/dev/null | FileCheck %s --check-prefix=NOKERNEL
// Unrolled chunks (cachet-compile sets this on SPIR-V).
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-dequant-once-kv="max-scratch-bytes=262144 unroll-chunks=true" 2>/dev/null | FileCheck %s --check-prefix=UNROLL
// A cap below 64 positions' K+V (the largest key tile): no rewrite, with a remark.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-dequant-once-kv=max-scratch-bytes=100 2>&1 >/dev/null | FileCheck %s --check-prefix=TINY
// An attention kernel that decodes for free during the matrix load (dequant-cost=0): never pays.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-dequant-once-kv=dequant-cost=0 2>/dev/null | FileCheck %s --check-prefix=FREE
// force rewrites the decode-shaped attention too; min-queries=512 skips the prefill one.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-dequant-once-kv=force=true 2>/dev/null | FileCheck %s --check-prefix=FORCE
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-dequant-once-kv=min-queries=512 2>/dev/null | FileCheck %s --check-prefix=MINQ

// The canonical prefill (split q8_0, GQA 4, Sq=64, S=1024, D=128) on h200:
// 16 passes of 16 query rows; the scratch is one layer's f16 K+V.

// CHECK-LABEL: func.func @prefill_q8_0_split
// CHECK-SAME: -> tensor<8x64x128xf16>
// CHECK: %[[S:.*]] = bufferization.alloc_tensor() {cachet.kv_scratch} : tensor<524288xf16>
// CHECK: %[[KS:.*]] = tensor.extract_slice %[[S]][0] [262144] [1] : tensor<524288xf16> to tensor<262144xf16>
// CHECK: %[[KI:.*]] = tensor.expand_shape %[[KS]] {{\[\[}}0, 1, 2]] output_shape [2, 1024, 128] : tensor<262144xf16> into tensor<2x1024x128xf16>
// CHECK: %[[VS:.*]] = tensor.extract_slice %[[S]][262144] [262144] [1]
// CHECK: %[[VI:.*]] = tensor.expand_shape %[[VS]]
// CHECK: %[[K:.*]] = cachet.dequant_transpose %arg1 scales %arg2 into %[[KI]] : tensor<1024x2x128xi8>, tensor<1024x2x4xf16> -> tensor<2x1024x128xf16>
// CHECK: %[[V:.*]] = cachet.dequant_transpose %arg3 scales %arg4 into %[[VI]] : tensor<1024x2x128xi8>, tensor<1024x2x4xf16> -> tensor<2x1024x128xf16>
// CHECK: %[[O:.*]] = cachet.attention %arg0, %[[K]], %[[V]] layout <head_major> scale 0.0883883461 causal 960 : tensor<8x64x128xf16>, tensor<2x1024x128xf16>, tensor<2x1024x128xf16> -> tensor<8x64x128xf16>
// CHECK-NOT: cachet.dequantize
// CHECK: return %[[O]] : tensor<8x64x128xf16>

// Chunks of 256 positions (262144 bytes / (2 x 2 x 256), a multiple of 64):
// a loop over 4 chunks carrying the chunk's K and V views of the scratch
// (written in place each time) and the online-softmax state (accumulator,
// max, sum: 0, -inf, 0 at first); each chunk is sliced from the quantized
// cache at the loop's position, dequant-transposed and attended with
// cachet.attention_partial at that key offset. The output is acc * (1 / sum)
// rounded to f16, as the kernels' epilogue.
// CHUNK-LABEL: func.func @prefill_q8_0_split
// CHUNK-SAME: -> tensor<8x64x128xf16>
// CHUNK: %[[S:.*]] = bufferization.alloc_tensor() {cachet.kv_scratch} : tensor<131072xf16>
// CHUNK: %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x64x128xf32>)
// CHUNK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHUNK: %[[MAX:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<8x64xf32>)
// CHUNK: %[[SUM:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x64xf32>)
// CHUNK: %[[KS:.*]] = tensor.extract_slice %[[S]][0] [65536] [1]
// CHUNK: %[[KV:.*]] = tensor.expand_shape %[[KS]] {{\[\[}}0, 1, 2]] output_shape [2, 256, 128]
// CHUNK: %[[VS:.*]] = tensor.extract_slice %[[S]][65536] [65536] [1]
// CHUNK: %[[VV:.*]] = tensor.expand_shape %[[VS]]
// CHUNK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHUNK-DAG: %[[C1024:.*]] = arith.constant 1024 : index
// CHUNK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHUNK: %[[R:.*]]:5 = scf.for %[[P:.*]] = %[[C0]] to %[[C1024]] step %[[C256]] iter_args(%[[KI:.*]] = %[[KV]], %[[VI:.*]] = %[[VV]], %[[A:.*]] = %[[ACC]], %[[M:.*]] = %[[MAX]], %[[L:.*]] = %[[SUM]]) -> (tensor<2x256x128xf16>, tensor<2x256x128xf16>, tensor<8x64x128xf32>, tensor<8x64xf32>, tensor<8x64xf32>)
// CHUNK: tensor.extract_slice %arg1[%[[P]], 0, 0] [256, 2, 128] [1, 1, 1] : tensor<1024x2x128xi8> to tensor<256x2x128xi8>
// CHUNK: %[[K:.*]] = cachet.dequant_transpose {{.*}} into %[[KI]] {{.*}} -> tensor<2x256x128xf16>
// CHUNK: %[[V:.*]] = cachet.dequant_transpose {{.*}} into %[[VI]] {{.*}} -> tensor<2x256x128xf16>
// CHUNK: %[[O:.*]], %[[M2:.*]], %[[L2:.*]] = cachet.attention_partial %arg0, %[[K]], %[[V]] key_offset %[[P]] layout <head_major> scale 0.0883883461 causal 960 into %[[A]], %[[M]], %[[L]] : tensor<8x64x128xf16>, tensor<2x256x128xf16>, tensor<2x256x128xf16> -> tensor<8x64x128xf32>, tensor<8x64xf32>, tensor<8x64xf32>
// CHUNK: scf.yield %[[K]], %[[V]], %[[O]], %[[M2]], %[[L2]]
// CHUNK: %[[N:.*]] = linalg.generic {{.*}} ins(%[[R]]#2, %[[R]]#4 : tensor<8x64x128xf32>, tensor<8x64xf32>) outs(%{{.*}} : tensor<8x64x128xf16>)
// CHUNK: arith.divf
// CHUNK: arith.mulf
// CHUNK: arith.truncf
// CHUNK: return %[[N]] : tensor<8x64x128xf16>

// 400000 bytes hold 390 positions, rounded down to 384 (whole key tiles):
// two chunks in the loop, the last 256 positions after it, continuing the
// loop's state.
// REST-LABEL: func.func @prefill_q8_0_split
// REST: bufferization.alloc_tensor() {cachet.kv_scratch} : tensor<196608xf16>
// REST: %[[R:.*]]:5 = scf.for {{.*}} -> (tensor<2x384x128xf16>, tensor<2x384x128xf16>, tensor<8x64x128xf32>, tensor<8x64xf32>, tensor<8x64xf32>)
// REST: cachet.attention_partial {{.*}} -> tensor<8x64x128xf32>
// REST: tensor.extract_slice %arg1[768, 0, 0] [256, 2, 128] [1, 1, 1]
// REST: cachet.attention_partial %arg0, %{{.*}}, %{{.*}} key_offset %{{.*}} layout <head_major> {{.*}} into %[[R]]#2, %[[R]]#3, %[[R]]#4 : {{.*}} tensor<2x256x128xf16>, tensor<2x256x128xf16>
// REST: return %{{.*}} : tensor<8x64x128xf16>

// unroll-chunks (SPIR-V): the four chunks one after the other at static
// offsets, each continuing the previous one's state.
// UNROLL-LABEL: func.func @prefill_q8_0_split
// UNROLL-NOT: scf.for
// UNROLL: tensor.extract_slice %arg1[0, 0, 0] [256, 2, 128]
// UNROLL: %[[O0:.*]], %[[M0:.*]], %[[L0:.*]] = cachet.attention_partial {{.*}} key_offset %c0
// UNROLL: tensor.extract_slice %arg1[256, 0, 0] [256, 2, 128]
// UNROLL: %[[O1:.*]], %[[M1:.*]], %[[L1:.*]] = cachet.attention_partial {{.*}} key_offset %c256{{.*}} into %[[O0]], %[[M0]], %[[L0]]
// UNROLL: tensor.extract_slice %arg1[512, 0, 0] [256, 2, 128]
// UNROLL: cachet.attention_partial {{.*}} key_offset %c512{{.*}} into %[[O1]], %[[M1]], %[[L1]]
// UNROLL: tensor.extract_slice %arg1[768, 0, 0] [256, 2, 128]
// UNROLL: cachet.attention_partial {{.*}} key_offset %c768
// UNROLL-NOT: cachet.attention_partial
// UNROLL: return

// TINY: remark: cachet-dequant-once-kv: not rewritten: max-scratch-bytes 100 is below 64 positions' f16 K+V (65536 bytes; chunks are multiples of 64 positions: whole key tiles of the attention kernels)

// FREE-LABEL: func.func @prefill_q8_0_split
// FREE-NOT: dequant_transpose
// FREE: cachet.attention {{.*}} layout <token_major>

// KEYTILE-LABEL: func.func @prefill_q8_0_split
// KEYTILE: bufferization.alloc_tensor() {cachet.kv_scratch} : tensor<163840xf16>
// KEYTILE: scf.for {{.*}} step %{{.*}} iter_args({{.*}}) -> (tensor<2x320x128xf16>, tensor<2x320x128xf16>,
// KEYTILE: tensor.extract_slice %arg1[960, 0, 0] [64, 2, 128] [1, 1, 1]

// BADTILE: error: cachet-dequant-once-kv: bad select-options:
// NOKERNEL: remark: cachet-dequant-once-kv: not rewritten: max-scratch-bytes would chunk it, and the attention gets no kernel (cachet-select-kernel-configs: reference lowering kept

// MINQ-LABEL: func.func @prefill_q8_0_split
// MINQ-NOT: dequant_transpose
// MINQ: cachet.attention {{.*}} layout <token_major>

func.func @prefill_q8_0_split(%q: tensor<8x64x128xf16>, %kq: tensor<1024x2x128xi8>, %ks: tensor<1024x2x4xf16>, %vq: tensor<1024x2x128xi8>, %vs: tensor<1024x2x4xf16>) -> tensor<8x64x128xf16> {
  %k = cachet.dequantize %kq scales %ks : tensor<1024x2x128xi8>, tensor<1024x2x4xf16> -> tensor<1024x2x128xf16>
  %v = cachet.dequantize %vq scales %vs : tensor<1024x2x128xi8>, tensor<1024x2x4xf16> -> tensor<1024x2x128xf16>
  // expected-remark @below {{rewritten: queries per KV head 256 (G=4 x Sq=64), tile 16 -> 16 passes; in-kernel dequant 6.02 us vs dequant-once 4.31 us (profile h200: dram 4270.00 GB/s, strided-read penalty 1.00, coop matrix yes, dequant cost 1.00); scratch 1048576 bytes, 1.88x the 557056-byte quantized K+V}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 960 : tensor<8x64x128xf16>, tensor<1024x2x128xf16>, tensor<1024x2x128xf16> -> tensor<8x64x128xf16>
  return %o : tensor<8x64x128xf16>
}

// -----

// All six packed formats, one layer each, in one function: one scratch,
// sized for the largest layer (Hkv=8, S=2048, D=128: 8388608 bytes), and
// every layer takes its K and V from the start of it.
// CHECK-LABEL: func.func @six_formats
// CHECK-SAME: -> (tensor<32x128x128xf16>, tensor<32x128x128xf16>, tensor<32x128x128xf16>, tensor<32x128x128xf16>, tensor<32x128x128xf16>, tensor<32x128x128xf16>)
// CHECK: %[[S:.*]] = bufferization.alloc_tensor() {cachet.kv_scratch} : tensor<4194304xf16>
// CHECK-NOT: bufferization.alloc_tensor
// CHECK: cachet.dequant_transpose %arg1 into %{{.*}} : tensor<2048x8x4x!cachet.q8_0> -> tensor<8x2048x128xf16>
// CHECK: cachet.dequant_transpose %arg2 into %{{.*}} : tensor<2048x8x4x!cachet.q8_0> -> tensor<8x2048x128xf16>
// CHECK: cachet.attention %arg0, %{{.*}}, %{{.*}} layout <head_major> {{.*}} tensor<8x2048x128xf16>, tensor<8x2048x128xf16> -> tensor<32x128x128xf16>
// CHECK: cachet.dequant_transpose %arg3 into %{{.*}} : tensor<1024x8x4x!cachet.q4_0> -> tensor<8x1024x128xf16>
// CHECK: cachet.dequant_transpose %arg4 into %{{.*}} : tensor<1024x8x4x!cachet.q4_0> -> tensor<8x1024x128xf16>
// CHECK: cachet.attention %arg0, %{{.*}}, %{{.*}} layout <head_major> {{.*}} tensor<8x1024x128xf16>, tensor<8x1024x128xf16> -> tensor<32x128x128xf16>
// CHECK: cachet.dequant_transpose %arg5 into %{{.*}} : tensor<1024x8x4x!cachet.q4_1> -> tensor<8x1024x128xf16>
// CHECK: cachet.dequant_transpose %arg6 into %{{.*}} : tensor<1024x8x4x!cachet.q4_1> -> tensor<8x1024x128xf16>
// CHECK: cachet.attention %arg0, %{{.*}}, %{{.*}} layout <head_major> {{.*}} tensor<8x1024x128xf16>, tensor<8x1024x128xf16> -> tensor<32x128x128xf16>
// CHECK: cachet.dequant_transpose %arg7 into %{{.*}} : tensor<512x8x4x!cachet.q5_0> -> tensor<8x512x128xf16>
// CHECK: cachet.dequant_transpose %arg8 into %{{.*}} : tensor<512x8x4x!cachet.q5_0> -> tensor<8x512x128xf16>
// CHECK: cachet.attention %arg0, %{{.*}}, %{{.*}} layout <head_major> {{.*}} tensor<8x512x128xf16>, tensor<8x512x128xf16> -> tensor<32x128x128xf16>
// CHECK: cachet.dequant_transpose %arg9 into %{{.*}} : tensor<512x8x4x!cachet.q5_1> -> tensor<8x512x128xf16>
// CHECK: cachet.dequant_transpose %arg10 into %{{.*}} : tensor<512x8x4x!cachet.q5_1> -> tensor<8x512x128xf16>
// CHECK: cachet.attention %arg0, %{{.*}}, %{{.*}} layout <head_major> {{.*}} tensor<8x512x128xf16>, tensor<8x512x128xf16> -> tensor<32x128x128xf16>
// CHECK: cachet.dequant_transpose %arg11 into %{{.*}} : tensor<256x8x4x!cachet.iq4_nl> -> tensor<8x256x128xf16>
// CHECK: cachet.dequant_transpose %arg12 into %{{.*}} : tensor<256x8x4x!cachet.iq4_nl> -> tensor<8x256x128xf16>
// CHECK: cachet.attention %arg0, %{{.*}}, %{{.*}} layout <head_major> {{.*}} tensor<8x256x128xf16>, tensor<8x256x128xf16> -> tensor<32x128x128xf16>
// CHECK-NOT: cachet.dequantize
func.func @six_formats(%q: tensor<32x128x128xf16>, %q8_0k: tensor<2048x8x4x!cachet.q8_0>, %q8_0v: tensor<2048x8x4x!cachet.q8_0>, %q4_0k: tensor<1024x8x4x!cachet.q4_0>, %q4_0v: tensor<1024x8x4x!cachet.q4_0>, %q4_1k: tensor<1024x8x4x!cachet.q4_1>, %q4_1v: tensor<1024x8x4x!cachet.q4_1>, %q5_0k: tensor<512x8x4x!cachet.q5_0>, %q5_0v: tensor<512x8x4x!cachet.q5_0>, %q5_1k: tensor<512x8x4x!cachet.q5_1>, %q5_1v: tensor<512x8x4x!cachet.q5_1>, %iq4_nlk: tensor<256x8x4x!cachet.iq4_nl>, %iq4_nlv: tensor<256x8x4x!cachet.iq4_nl>) -> (tensor<32x128x128xf16>, tensor<32x128x128xf16>, tensor<32x128x128xf16>, tensor<32x128x128xf16>, tensor<32x128x128xf16>, tensor<32x128x128xf16>) {
  %q8_0kd = cachet.dequantize %q8_0k : tensor<2048x8x4x!cachet.q8_0> -> tensor<2048x8x128xf16>
  %q8_0vd = cachet.dequantize %q8_0v : tensor<2048x8x4x!cachet.q8_0> -> tensor<2048x8x128xf16>
  // expected-remark @below {{rewritten: queries per KV head 512 (G=4 x Sq=128), tile 16 -> 32 passes}}
  %q8_0o = cachet.attention %q, %q8_0kd, %q8_0vd layout <token_major> scale 0.0883883461 causal 1920 : tensor<32x128x128xf16>, tensor<2048x8x128xf16>, tensor<2048x8x128xf16> -> tensor<32x128x128xf16>
  %q4_0kd = cachet.dequantize %q4_0k : tensor<1024x8x4x!cachet.q4_0> -> tensor<1024x8x128xf16>
  %q4_0vd = cachet.dequantize %q4_0v : tensor<1024x8x4x!cachet.q4_0> -> tensor<1024x8x128xf16>
  // expected-remark @below {{rewritten: queries per KV head 512 (G=4 x Sq=128), tile 16 -> 32 passes}}
  %q4_0o = cachet.attention %q, %q4_0kd, %q4_0vd layout <token_major> scale 0.0883883461 causal 896 : tensor<32x128x128xf16>, tensor<1024x8x128xf16>, tensor<1024x8x128xf16> -> tensor<32x128x128xf16>
  %q4_1kd = cachet.dequantize %q4_1k : tensor<1024x8x4x!cachet.q4_1> -> tensor<1024x8x128xf16>
  %q4_1vd = cachet.dequantize %q4_1v : tensor<1024x8x4x!cachet.q4_1> -> tensor<1024x8x128xf16>
  // expected-remark @below {{rewritten: queries per KV head 512 (G=4 x Sq=128), tile 16 -> 32 passes}}
  %q4_1o = cachet.attention %q, %q4_1kd, %q4_1vd layout <token_major> scale 0.0883883461 causal 896 : tensor<32x128x128xf16>, tensor<1024x8x128xf16>, tensor<1024x8x128xf16> -> tensor<32x128x128xf16>
  %q5_0kd = cachet.dequantize %q5_0k : tensor<512x8x4x!cachet.q5_0> -> tensor<512x8x128xf16>
  %q5_0vd = cachet.dequantize %q5_0v : tensor<512x8x4x!cachet.q5_0> -> tensor<512x8x128xf16>
  // expected-remark @below {{rewritten: queries per KV head 512 (G=4 x Sq=128), tile 16 -> 32 passes}}
  %q5_0o = cachet.attention %q, %q5_0kd, %q5_0vd layout <token_major> scale 0.0883883461 causal 384 : tensor<32x128x128xf16>, tensor<512x8x128xf16>, tensor<512x8x128xf16> -> tensor<32x128x128xf16>
  %q5_1kd = cachet.dequantize %q5_1k : tensor<512x8x4x!cachet.q5_1> -> tensor<512x8x128xf16>
  %q5_1vd = cachet.dequantize %q5_1v : tensor<512x8x4x!cachet.q5_1> -> tensor<512x8x128xf16>
  // expected-remark @below {{rewritten: queries per KV head 512 (G=4 x Sq=128), tile 16 -> 32 passes}}
  %q5_1o = cachet.attention %q, %q5_1kd, %q5_1vd layout <token_major> scale 0.0883883461 causal 384 : tensor<32x128x128xf16>, tensor<512x8x128xf16>, tensor<512x8x128xf16> -> tensor<32x128x128xf16>
  %iq4_nlkd = cachet.dequantize %iq4_nlk : tensor<256x8x4x!cachet.iq4_nl> -> tensor<256x8x128xf16>
  %iq4_nlvd = cachet.dequantize %iq4_nlv : tensor<256x8x4x!cachet.iq4_nl> -> tensor<256x8x128xf16>
  // expected-remark @below {{rewritten: queries per KV head 512 (G=4 x Sq=128), tile 16 -> 32 passes}}
  %iq4_nlo = cachet.attention %q, %iq4_nlkd, %iq4_nlvd layout <token_major> scale 0.0883883461 causal 128 : tensor<32x128x128xf16>, tensor<256x8x128xf16>, tensor<256x8x128xf16> -> tensor<32x128x128xf16>
  return %q8_0o, %q4_0o, %q4_1o, %q5_0o, %q5_1o, %iq4_nlo : tensor<32x128x128xf16>, tensor<32x128x128xf16>, tensor<32x128x128xf16>, tensor<32x128x128xf16>, tensor<32x128x128xf16>, tensor<32x128x128xf16>
}

// -----

// Decode: one query, GQA 4: 4 queries per KV head, below min-queries.
// CHECK-LABEL: func.func @decode
// CHECK-NOT: dequant_transpose
// CHECK: cachet.attention %arg0, %{{.*}}, %{{.*}} layout <token_major>
// FORCE-LABEL: func.func @decode
// FORCE: cachet.dequant_transpose
// FORCE: cachet.attention {{.*}} layout <head_major>
func.func @decode(%q: tensor<32x1x128xf16>, %kq: tensor<4096x8x4x!cachet.q8_0>, %vq: tensor<4096x8x4x!cachet.q8_0>) -> tensor<32x1x128xf16> {
  %k = cachet.dequantize %kq : tensor<4096x8x4x!cachet.q8_0> -> tensor<4096x8x128xf16>
  %v = cachet.dequantize %vq : tensor<4096x8x4x!cachet.q8_0> -> tensor<4096x8x128xf16>
  // expected-remark @below {{not rewritten: decode-shaped: 4 < min-queries 32; queries per KV head 4 (G=4 x Sq=1), tile 16 -> 1 passes}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 4095 : tensor<32x1x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16> -> tensor<32x1x128xf16>
  return %o : tensor<32x1x128xf16>
}

// -----

// Already head-major: nothing to do.
// CHECK-LABEL: func.func @head_major
// CHECK-NOT: dequant_transpose
func.func @head_major(%q: tensor<8x64x128xf16>, %kq: tensor<2x2x4x!cachet.q8_0>, %vq: tensor<2x2x4x!cachet.q8_0>) -> tensor<8x64x128xf16> {
  %k = cachet.dequantize %kq : tensor<2x2x4x!cachet.q8_0> -> tensor<2x2x128xf16>
  %v = cachet.dequantize %vq : tensor<2x2x4x!cachet.q8_0> -> tensor<2x2x128xf16>
  // expected-remark @below {{not rewritten: K/V are already read head-major}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.0883883461 : tensor<8x64x128xf16>, tensor<2x2x128xf16>, tensor<2x2x128xf16> -> tensor<8x64x128xf16>
  return %o : tensor<8x64x128xf16>
}

// -----

// Dequantized to f32: a 16-bit scratch would change the values.
// CHECK-LABEL: func.func @f32_kv
// CHECK-NOT: dequant_transpose
func.func @f32_kv(%q: tensor<8x64x128xf16>, %kq: tensor<1024x2x4x!cachet.q4_1>, %vq: tensor<1024x2x4x!cachet.q4_1>) -> tensor<8x64x128xf16> {
  %k = cachet.dequantize %kq : tensor<1024x2x4x!cachet.q4_1> -> tensor<1024x2x128xf32>
  %v = cachet.dequantize %vq : tensor<1024x2x4x!cachet.q4_1> -> tensor<1024x2x128xf32>
  // expected-remark @below {{not rewritten: K is dequantized to f32; a 16-bit scratch would change its values}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 960 : tensor<8x64x128xf16>, tensor<1024x2x128xf32>, tensor<1024x2x128xf32> -> tensor<8x64x128xf16>
  return %o : tensor<8x64x128xf16>
}

// -----

// K/V that are not dequantized from a quantized cache.
// CHECK-LABEL: func.func @plain_f16
// CHECK-NOT: dequant_transpose
func.func @plain_f16(%q: tensor<8x64x128xf16>, %k: tensor<1024x2x128xf16>, %v: tensor<1024x2x128xf16>) -> tensor<8x64x128xf16> {
  // expected-remark @below {{not rewritten: K is not cachet.dequantize of a quantized cache}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 : tensor<8x64x128xf16>, tensor<1024x2x128xf16>, tensor<1024x2x128xf16> -> tensor<8x64x128xf16>
  return %o : tensor<8x64x128xf16>
}

// -----

// An additive mask: rewritten without a cap; with a cap it would need
// chunking, which masks do not support (CHUNK leaves it alone).
// CHECK-LABEL: func.func @masked
// CHECK: cachet.attention %arg0, %{{.*}}, %{{.*}} mask %arg3 layout <head_major>
// CHUNK-LABEL: func.func @masked
// CHUNK-NOT: dequant_transpose
// CHUNK: cachet.attention {{.*}} layout <token_major>
func.func @masked(%q: tensor<8x64x128xf16>, %kq: tensor<1024x2x4x!cachet.q5_0>, %vq: tensor<1024x2x4x!cachet.q5_0>, %m: tensor<64x1024xf16>) -> tensor<8x64x128xf16> {
  %k = cachet.dequantize %kq : tensor<1024x2x4x!cachet.q5_0> -> tensor<1024x2x128xf16>
  %v = cachet.dequantize %vq : tensor<1024x2x4x!cachet.q5_0> -> tensor<1024x2x128xf16>
  // expected-remark @below {{rewritten: queries per KV head 256 (G=4 x Sq=64), tile 16 -> 16 passes}}
  %o = cachet.attention %q, %k, %v mask %m layout <token_major> scale 0.0883883461 : tensor<8x64x128xf16>, tensor<1024x2x128xf16>, tensor<1024x2x128xf16>, tensor<64x1024xf16> -> tensor<8x64x128xf16>
  return %o : tensor<8x64x128xf16>
}

// -----

// A dynamic cache depth: not rewritten (the scratch size must be known).
// CHECK-LABEL: func.func @dyn_depth
// CHECK-NOT: dequant_transpose
func.func @dyn_depth(%q: tensor<8x64x128xf16>, %kq: tensor<?x2x4x!cachet.q8_0>, %vq: tensor<?x2x4x!cachet.q8_0>) -> tensor<8x64x128xf16> {
  %k = cachet.dequantize %kq : tensor<?x2x4x!cachet.q8_0> -> tensor<?x2x128xf16>
  %v = cachet.dequantize %vq : tensor<?x2x4x!cachet.q8_0> -> tensor<?x2x128xf16>
  // expected-remark @below {{not rewritten: K has a dynamic shape}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 960 : tensor<8x64x128xf16>, tensor<?x2x128xf16>, tensor<?x2x128xf16> -> tensor<8x64x128xf16>
  return %o : tensor<8x64x128xf16>
}

// -----

// Dequantized to bf16 (a bf16 model): the scratch is bf16, so it holds the
// same values cachet.dequantize gives.
// CHECK-LABEL: func.func @bf16_kv
// CHECK: %[[S:.*]] = bufferization.alloc_tensor() {cachet.kv_scratch} : tensor<{{[0-9]+}}xbf16>
// CHECK: cachet.dequant_transpose {{.*}} -> tensor<2x1024x128xbf16>
// CHECK: cachet.attention {{.*}} layout <head_major> {{.*}} tensor<8x64x128xbf16>, tensor<2x1024x128xbf16>, tensor<2x1024x128xbf16> -> tensor<8x64x128xbf16>
func.func @bf16_kv(%q: tensor<8x64x128xbf16>, %kq: tensor<1024x2x4x!cachet.q8_0>, %vq: tensor<1024x2x4x!cachet.q8_0>) -> tensor<8x64x128xbf16> {
  %k = cachet.dequantize %kq : tensor<1024x2x4x!cachet.q8_0> -> tensor<1024x2x128xbf16>
  %v = cachet.dequantize %vq : tensor<1024x2x4x!cachet.q8_0> -> tensor<1024x2x128xbf16>
  // expected-remark @below {{cachet-dequant-once-kv: rewritten}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 960 : tensor<8x64x128xbf16>, tensor<1024x2x128xbf16>, tensor<1024x2x128xbf16> -> tensor<8x64x128xbf16>
  return %o : tensor<8x64x128xbf16>
}

// -----

// K and V dequantized to different types share no scratch.
// CHECK-LABEL: func.func @mixed_kv
// CHECK-NOT: dequant_transpose
func.func @mixed_kv(%q: tensor<8x64x128xf16>, %kq: tensor<1024x2x4x!cachet.q8_0>, %vq: tensor<1024x2x4x!cachet.q8_0>) -> tensor<8x64x128xf16> {
  %k = cachet.dequantize %kq : tensor<1024x2x4x!cachet.q8_0> -> tensor<1024x2x128xf16>
  %v = cachet.dequantize %vq : tensor<1024x2x4x!cachet.q8_0> -> tensor<1024x2x128xbf16>
  // expected-remark @below {{not rewritten: K and V are dequantized to different element types}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 960 : tensor<8x64x128xf16>, tensor<1024x2x128xf16>, tensor<1024x2x128xbf16> -> tensor<8x64x128xf16>
  return %o : tensor<8x64x128xf16>
}

// -----

// A causal bound well before the cache's end: only the positions the
// attention reads are dequantized (to the bound plus 1024, the largest key
// tile, in groups of 64): the first 1280 of 4096, sliced from the cache and
// written into the first positions of the head-major scratch.
// CHECK-LABEL: func.func @bounded_static
// CHECK: %[[KD:.*]] = tensor.extract_slice %[[KS:.*]][0, 0, 0] [8, 1280, 128] [1, 1, 1] : tensor<8x4096x128xf16> to tensor<8x1280x128xf16>
// CHECK: %[[KIN:.*]] = tensor.extract_slice %arg1[0, 0, 0] [1280, 8, 4] [1, 1, 1] : tensor<4096x8x4x!cachet.q8_0> to tensor<1280x8x4x!cachet.q8_0>
// CHECK: %[[K:.*]] = cachet.dequant_transpose %[[KIN]] into %[[KD]] : tensor<1280x8x4x!cachet.q8_0> -> tensor<8x1280x128xf16>
// CHECK: %[[KF:.*]] = tensor.insert_slice %[[K]] into %[[KS]][0, 0, 0] [8, 1280, 128] [1, 1, 1] : tensor<8x1280x128xf16> into tensor<8x4096x128xf16>
// CHECK: %[[VIN:.*]] = tensor.extract_slice %arg2[0, 0, 0] [1280, 8, 4] [1, 1, 1]
// CHECK-NEXT: %[[V:.*]] = cachet.dequant_transpose %[[VIN]] into
// CHECK: %[[VF:.*]] = tensor.insert_slice %[[V]] into
// CHECK: cachet.attention %arg0, %[[KF]], %[[VF]] layout <head_major> scale 0.0883883461 causal 100 : tensor<32x128x128xf16>, tensor<8x4096x128xf16>, tensor<8x4096x128xf16> -> tensor<32x128x128xf16>
func.func @bounded_static(%q: tensor<32x128x128xf16>, %kq: tensor<4096x8x4x!cachet.q8_0>, %vq: tensor<4096x8x4x!cachet.q8_0>) -> tensor<32x128x128xf16> {
  %k = cachet.dequantize %kq : tensor<4096x8x4x!cachet.q8_0> -> tensor<4096x8x128xf16>
  %v = cachet.dequantize %vq : tensor<4096x8x4x!cachet.q8_0> -> tensor<4096x8x128xf16>
  // expected-remark @below {{K/V dequantized at positions 0..1279 only (causal 100 + 128 queries + 1024, in groups of 64: the attention reads no further)}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 100 : tensor<32x128x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16> -> tensor<32x128x128xf16>
  return %o : tensor<32x128x128xf16>
}

// -----

// A run-time causal position N (a cache compiled for its longest length):
// min(4096, N + 128 + 1024 rounded up to 64) positions, computed where N
// is known; the slices have a run-time size.
// CHECK-LABEL: func.func @bounded_dynamic
// CHECK: %[[E:.*]] = arith.addi %arg3, %c1215 : index
// CHECK: %[[G:.*]] = arith.divui %[[E]], %[[C64:.*]] : index
// CHECK: %[[A:.*]] = arith.muli %[[G]], %[[C64]] : index
// CHECK: %[[N:.*]] = arith.minui %[[A]], %c4096 : index
// CHECK: %[[KD:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0] [8, %[[N]], 128] [1, 1, 1] : tensor<8x4096x128xf16> to tensor<8x?x128xf16>
// CHECK: %[[KIN:.*]] = tensor.extract_slice %arg1[0, 0, 0] [%[[N]], 8, 4] [1, 1, 1] : tensor<4096x8x4x!cachet.q8_0> to tensor<?x8x4x!cachet.q8_0>
// CHECK: cachet.dequant_transpose %[[KIN]] into %[[KD]] : tensor<?x8x4x!cachet.q8_0> -> tensor<8x?x128xf16>
// CHECK: tensor.insert_slice {{.*}}[0, 0, 0] [8, %[[N]], 128] [1, 1, 1] : tensor<8x?x128xf16> into tensor<8x4096x128xf16>
// CHECK: tensor.extract_slice %arg2[0, 0, 0] [%[[N]], 8, 4]
// CHECK: cachet.attention %arg0, %{{.*}}, %{{.*}} layout <head_major> scale 0.0883883461 causal %arg3
func.func @bounded_dynamic(%q: tensor<32x128x128xf16>, %kq: tensor<4096x8x4x!cachet.q8_0>, %vq: tensor<4096x8x4x!cachet.q8_0>, %pos: index) -> tensor<32x128x128xf16> {
  %k = cachet.dequantize %kq : tensor<4096x8x4x!cachet.q8_0> -> tensor<4096x8x128xf16>
  %v = cachet.dequantize %vq : tensor<4096x8x4x!cachet.q8_0> -> tensor<4096x8x128xf16>
  // expected-remark @below {{K/V dequantized at positions below min(4096, N + 128 + 1024 rounded up to 64) only, N the run-time causal position (the attention reads no further)}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal %pos : tensor<32x128x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16> -> tensor<32x128x128xf16>
  return %o : tensor<32x128x128xf16>
}

// -----

// A cache of 1024 positions, fewer than the queries plus 1024: all of it.
// CHECK-LABEL: func.func @bounded_short
// CHECK-NOT: tensor.insert_slice
// CHECK: cachet.dequant_transpose %arg1 into %{{.*}} : tensor<1024x8x4x!cachet.q8_0> -> tensor<8x1024x128xf16>
func.func @bounded_short(%q: tensor<32x128x128xf16>, %kq: tensor<1024x8x4x!cachet.q8_0>, %vq: tensor<1024x8x4x!cachet.q8_0>, %pos: index) -> tensor<32x128x128xf16> {
  %k = cachet.dequantize %kq : tensor<1024x8x4x!cachet.q8_0> -> tensor<1024x8x128xf16>
  %v = cachet.dequantize %vq : tensor<1024x8x4x!cachet.q8_0> -> tensor<1024x8x128xf16>
  // expected-remark @below {{rewritten}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal %pos : tensor<32x128x128xf16>, tensor<1024x8x128xf16>, tensor<1024x8x128xf16> -> tensor<32x128x128xf16>
  return %o : tensor<32x128x128xf16>
}

// -----

// The split q8_0 form (values and scales apart) with a run-time causal
// position: its dequant-transpose kernel takes a static number of
// positions, so every position is converted, with the reason.
// CHECK-LABEL: func.func @bounded_split
// CHECK-NOT: tensor.insert_slice
// CHECK: cachet.dequant_transpose %arg1 scales %arg2 into %{{.*}} : tensor<4096x8x128xi8>, tensor<4096x8x4xf16> -> tensor<8x4096x128xf16>
func.func @bounded_split(%q: tensor<32x128x128xf16>, %kq: tensor<4096x8x128xi8>, %ks: tensor<4096x8x4xf16>, %vq: tensor<4096x8x128xi8>, %vs: tensor<4096x8x4xf16>, %pos: index) -> tensor<32x128x128xf16> {
  %k = cachet.dequantize %kq scales %ks : tensor<4096x8x128xi8>, tensor<4096x8x4xf16> -> tensor<4096x8x128xf16>
  %v = cachet.dequantize %vq scales %vs : tensor<4096x8x128xi8>, tensor<4096x8x4xf16> -> tensor<4096x8x128xf16>
  // expected-remark @below {{; every position dequantized, though the run-time causal position may leave most unread: K is the split form (values and scales apart), whose kernel takes a static number of positions}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal %pos : tensor<32x128x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16> -> tensor<32x128x128xf16>
  return %o : tensor<32x128x128xf16>
}

// -----

// q4_0 with one KV head of 32 values: a position is 18 bytes, no whole
// number of words: every position is converted, with the reason.
// CHECK-LABEL: func.func @bounded_odd
// CHECK-NOT: tensor.insert_slice
func.func @bounded_odd(%q: tensor<4x256x32xf16>, %kq: tensor<4096x1x1x!cachet.q4_0>, %vq: tensor<4096x1x1x!cachet.q4_0>, %pos: index) -> tensor<4x256x32xf16> {
  %k = cachet.dequantize %kq : tensor<4096x1x1x!cachet.q4_0> -> tensor<4096x1x32xf16>
  %v = cachet.dequantize %vq : tensor<4096x1x1x!cachet.q4_0> -> tensor<4096x1x32xf16>
  // expected-remark @below {{; every position dequantized, though the run-time causal position may leave most unread: one position of K is 18 bytes, no whole number of 32-bit words}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal %pos : tensor<4x256x32xf16>, tensor<4096x1x32xf16>, tensor<4096x1x32xf16> -> tensor<4x256x32xf16>
  return %o : tensor<4x256x32xf16>
}

// -----

// A kernel config already in the IR (written by hand or by an earlier
// pipeline) stays with the attention that replaces it and with each chunk,
// and its key tile (256) sets the chunk size: 400000 bytes hold 390
// positions, 256 of them whole key tiles.
// CHECK-LABEL: func.func @configured
// CHECK: cachet.attention {{.*}} layout <head_major> {{.*}} {cachet.kernel_config = #cachet.kernel_config<variant = attention_tiled, tile = [64, 256, 32], workgroup = 256>}
// REST-LABEL: func.func @configured
// REST: scf.for {{.*}} -> (tensor<2x256x128xf16>, tensor<2x256x128xf16>,
// REST: cachet.attention_partial {{.*}} {cachet.kernel_config = #cachet.kernel_config<variant = attention_tiled, tile = [64, 256, 32], workgroup = 256>}
func.func @configured(%q: tensor<8x64x128xf16>, %kq: tensor<1024x2x128xi8>, %ks: tensor<1024x2x4xf16>, %vq: tensor<1024x2x128xi8>, %vs: tensor<1024x2x4xf16>) -> tensor<8x64x128xf16> {
  %k = cachet.dequantize %kq scales %ks : tensor<1024x2x128xi8>, tensor<1024x2x4xf16> -> tensor<1024x2x128xf16>
  %v = cachet.dequantize %vq scales %vs : tensor<1024x2x128xi8>, tensor<1024x2x4xf16> -> tensor<1024x2x128xf16>
  // expected-remark @below {{rewritten}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 960 {cachet.kernel_config = #cachet.kernel_config<variant = attention_tiled, tile = [64, 256, 32], workgroup = 256>} : tensor<8x64x128xf16>, tensor<1024x2x128xf16>, tensor<1024x2x128xf16> -> tensor<8x64x128xf16>
  return %o : tensor<8x64x128xf16>
}
