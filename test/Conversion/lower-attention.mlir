// The prefill kernels (scalar, mma, mma-sync); decode-rows=0 keeps the
// decode kernel (lower-attention-decode.mlir) off the few-row cases.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=lavapipe -cachet-select-kernel-configs="decode-rows=0 attention-kernel=scalar" -cachet-lower-attention -verify-diagnostics | FileCheck %s
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-rows=0" -cachet-lower-attention 2>/dev/null | FileCheck %s --check-prefix=MMA
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-rows=0 attention-kernel=scalar query-tile=16 key-tile=8" -cachet-lower-attention 2>/dev/null | FileCheck %s --check-prefix=FORCED-IR
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-rows=0 attention-kernel=scalar query-tile=16 key-tile=8" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=FORCED
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=lavapipe -cachet-select-kernel-configs="decode-rows=0 attention-kernel=scalar" -cachet-lower-attention -cachet-lower-to-linalg 2>/dev/null | FileCheck %s --check-prefix=LINALG
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-rows=0 allow-mma=false" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=NOMMA
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="decode-rows=0 dynamic-shared=true async-copy=true warp-sync=true" -cachet-lower-attention 2>/dev/null | FileCheck %s --check-prefix=ASYNC

// Scalar kernel on lavapipe (subgroup 8, 32 KiB of workgroup memory): one
// thread per query row, 32 rows, a key tile of 64 positions; K and V read
// head-major at (h floordiv 4); the causal bound stops the tile loops.
// CHECK-LABEL: func.func @head_major_causal
// CHECK-DAG: bufferization.to_buffer %arg0 read_only : tensor<8x48x64xf16> to memref<8x48x64xf16, strided<[?, ?, 1], offset: ?>>
// CHECK-DAG: %[[OUT:.*]] = memref.alloc() : memref<8x48x64xf16>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c8, {{.*}}) threads({{.*}}) in ({{.*}} = %c32, {{.*}}) workgroup({{.*}} : memref<64x64xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<64x64xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<32x64xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<32x64xf32, #gpu.address_space<workgroup>>)
// CHECK: arith.divui %{{.*}}, %c4
// CHECK: arith.minui
// CHECK: arith.ceildivui
// One pass of online softmax in base 2: the tile's scores (times log2 e),
// the rescale 2^(old max - new max), P = 2^(s - max) rounded to f16, O =
// alpha O + P V; O times 1 / sum at the end.
// CHECK: scf.for {{.*}} iter_args
// CHECK: gpu.barrier
// CHECK: arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK: math.exp2
// CHECK: math.exp2
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: scf.yield
// CHECK: arith.divf
// CHECK: arith.mulf
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT: cachet.attention
// The mma kernel (h200): four subgroups of 16 rows, Q, K, V, scores, P and
// the row broadcast in static workgroup memory (48 KiB: a key tile of 32)
// with rows padded by 16 bytes, Q's A operands loaded once; one pass over the key tiles carrying
// the output accumulators, the row max and sum and the next tile's K/V
// vectors; the softmax in base 2 with the row's lanes combined by
// shuffles; O rescaled elementwise before O += P V; O / sum at the end.
// MMA-LABEL: func.func @head_major_causal
// MMA: gpu.launch
// MMA-SAME: threads({{.*}}) in ({{.*}} = %c128{{.*}}, {{.*}}) workgroup({{.*}} : memref<64x72xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<32x72xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<32x72xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<64x36xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<64x40xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<64x20xf32, #gpu.address_space<workgroup>>)
// MMA: vector.load {{.*}} {alignment = 16 : i64} : memref<8x48x64xf16, strided<[?, ?, 1], offset: ?>>, vector<8xf16>
// MMA: gpu.subgroup_mma_load_matrix {{.*}} {leadDimension = 72 : index} : memref<64x72xf16, #gpu.address_space<workgroup>> -> !gpu.mma_matrix<16x16xf16, "AOp">
// MMA: scf.for {{.*}} iter_args({{.*}}) -> (!gpu.mma_matrix<16x16xf32, "COp">, !gpu.mma_matrix<16x16xf32, "COp">, !gpu.mma_matrix<16x16xf32, "COp">, !gpu.mma_matrix<16x16xf32, "COp">, f32, f32, vector<8xf16>
// MMA: vector.store
// MMA: gpu.barrier
// MMA: gpu.subgroup_mma_load_matrix {{.*}} {leadDimension = 72 : index, transpose} : memref<32x72xf16, #gpu.address_space<workgroup>> -> !gpu.mma_matrix<16x16xf16, "BOp">
// MMA: gpu.subgroup_mma_compute {{.*}} {b_transpose}
// MMA: gpu.subgroup_mma_store_matrix {{.*}} {leadDimension = 36 : index} : !gpu.mma_matrix<16x16xf32, "COp">
// MMA: gpu.shuffle  xor
// MMA: math.exp2
// MMA: gpu.shuffle  xor
// MMA: gpu.subgroup_mma_load_matrix {{.*}} {leadDimension = 20 : index} : memref<64x20xf32, #gpu.address_space<workgroup>> -> !gpu.mma_matrix<16x16xf32, "COp">
// MMA: gpu.subgroup_mma_elementwise  mulf
// MMA: gpu.subgroup_mma_compute
// MMA: scf.yield
// MMA: arith.divf
// MMA: gpu.subgroup_mma_store_matrix
// As cachet-compile sets it up on NVVM: the tiles are views of dynamic
// workgroup memory (Q shares the second K buffer: both at offset 50176),
// K/V double buffered and filled by asynchronous copies that zero-fill
// past the last position, subgroup staging ordered by nvvm.bar.warp.sync.
// ASYNC-LABEL: func.func @head_major_causal
// ASYNC: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c128{{.*}}) dynamic_shared_memory_size %c68608_i32
// ASYNC: %[[BASE:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// ASYNC: memref.view %[[BASE]][%c50176{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x72xf16, #gpu.address_space<workgroup>>
// ASYNC: memref.view %[[BASE]][%c50176{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x72xf16, #gpu.address_space<workgroup>>
// ASYNC: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1}
// ASYNC: nvgpu.device_async_create_group
// ASYNC: scf.for {{.*}} -> ({{.*}}!nvgpu.device.async.token)
// ASYNC: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// ASYNC: gpu.barrier
// ASYNC: arith.select {{.*}} : memref<64x72xf16, #gpu.address_space<workgroup>>
// ASYNC: nvgpu.device_async_copy
// ASYNC: nvvm.bar.warp.sync
// ASYNC: scf.yield
// ASYNC: nvgpu.device_async_wait
// The decisions, read from the #cachet.kernel_config they leave.
// FORCED-LABEL: func.func @head_major_causal
// FORCED: cachet.kernel_config = #cachet.kernel_config<variant = attention_scalar, tile = [16, 8], workgroup = 16, subgroup = 32>
// FORCED-IR-LABEL: func.func @head_major_causal
// FORCED-IR-NOT: gpu.subgroup_mma
// FORCED-IR: return
// NOMMA-LABEL: func.func @head_major_causal
// NOMMA: #cachet.kernel_config<variant = attention_tiled, tile = [64, 64, 32], workgroup = 256, subgroup = 32>
func.func @head_major_causal(%q: tensor<8x48x64xf16>, %k: tensor<2x96x64xf16>, %v: tensor<2x96x64xf16>) -> tensor<8x48x64xf16> {
  // expected-remark @+1 {{cachet-select-kernel-configs: scalar flash-attention kernel (attention-kernel=scalar): query tile 32 (one thread per row), key tile 64 (32768 bytes of workgroup memory), 2x8 workgroups of 32 threads, GQA 4:1 (profile lavapipe; subgroup 8, 32768 bytes of workgroup memory)}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125 causal 48
      : tensor<8x48x64xf16>, tensor<2x96x64xf16>, tensor<2x96x64xf16> -> tensor<8x48x64xf16>
  return %o : tensor<8x48x64xf16>
}

// -----

// Token-major K/V are read at (pos, kv head, dim); a [Hq, Sq, S] mask is
// added to the scaled scores; f32 operands take the scalar kernel on every
// profile.
// CHECK-LABEL: func.func @token_major_mask_f32
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : memref<4x8x32xf32, strided<[?, ?, 1], offset: ?>>
// CHECK: arith.addf
// MMA-LABEL: func.func @token_major_mask_f32
// MMA-NOT: gpu.subgroup_mma
// MMA: return
func.func @token_major_mask_f32(%q: tensor<4x8x32xf32>, %k: tensor<16x2x32xf32>, %v: tensor<16x2x32xf32>, %m: tensor<4x8x16xf32>) -> tensor<4x8x32xf32> {
  // expected-remark @+1 {{cachet-select-kernel-configs: scalar flash-attention kernel (attention-kernel=scalar): query tile 32}}
  %o = cachet.attention %q, %k, %v mask %m layout <token_major> scale 0.25
      : tensor<4x8x32xf32>, tensor<16x2x32xf32>, tensor<16x2x32xf32>, tensor<4x8x16xf32> -> tensor<4x8x32xf32>
  return %o : tensor<4x8x32xf32>
}

// -----

// An f16 accumulator keeps the reference lowering.
// CHECK-LABEL: func.func @f16_accumulator
// CHECK: cachet.attention
// CHECK-NOT: gpu.launch
func.func @f16_accumulator(%q: tensor<2x4x32xf16>, %k: tensor<8x2x32xf16>, %v: tensor<8x2x32xf16>) -> tensor<2x4x32xf16> {
  // expected-remark @+1 {{cachet-select-kernel-configs: reference lowering kept: the accumulator is not f32}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.25 {accumulator = f16}
      : tensor<2x4x32xf16>, tensor<8x2x32xf16>, tensor<8x2x32xf16> -> tensor<2x4x32xf16>
  return %o : tensor<2x4x32xf16>
}

// -----

// Dynamic shapes keep the reference lowering.
// CHECK-LABEL: func.func @dynamic
// CHECK: cachet.attention
func.func @dynamic(%q: tensor<2x?x32xf16>, %k: tensor<8x2x32xf16>, %v: tensor<8x2x32xf16>) -> tensor<2x?x32xf16> {
  // expected-remark @+1 {{cachet-select-kernel-configs: reference lowering kept: dynamic shape}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.25
      : tensor<2x?x32xf16>, tensor<8x2x32xf16>, tensor<8x2x32xf16> -> tensor<2x?x32xf16>
  return %o : tensor<2x?x32xf16>
}

// -----

// A head dimension that leaves no room for a key tile in the workgroup
// memory keeps the reference lowering.
// CHECK-LABEL: func.func @too_wide
// CHECK: cachet.attention
func.func @too_wide(%q: tensor<1x4x4096xf32>, %k: tensor<8x1x4096xf32>, %v: tensor<8x1x4096xf32>) -> tensor<1x4x4096xf32> {
  // expected-remark @+1 {{cachet-select-kernel-configs: reference lowering kept: query tile 32 and key tile 1 need 557184 bytes of workgroup memory, the budget is 32768}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.25
      : tensor<1x4x4096xf32>, tensor<8x1x4096xf32>, tensor<8x1x4096xf32> -> tensor<1x4x4096xf32>
  return %o : tensor<1x4x4096xf32>
}

// -----

// llvmpipe (profile vendor mesa) stops a loop nest after 65535 iterations:
// a KV range whose tile loop would run longer keeps the reference lowering.
// CHECK-LABEL: func.func @llvmpipe_long
// CHECK: cachet.attention
func.func @llvmpipe_long(%q: tensor<1x4x128xf16>, %k: tensor<1x8192x128xf16>, %v: tensor<1x8192x128xf16>) -> tensor<1x4x128xf16> {
  // expected-remark @+1 {{cachet-select-kernel-configs: reference lowering kept: the scalar kernel's KV-tile loop nest runs 147968 iterations, more than the 65535 llvmpipe executes (profile vendor mesa; attention-kernel=scalar)}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.088
      : tensor<1x4x128xf16>, tensor<1x8192x128xf16>, tensor<1x8192x128xf16> -> tensor<1x4x128xf16>
  return %o : tensor<1x4x128xf16>
}

// -----

// K and V dequantized from packed token-major caches (function arguments)
// are decoded inside the kernel from their ggml bytes, with the reference's
// arithmetic; the dequantizes go away. cachet-lower-to-linalg then turns the
// arguments into the bytes the kernel reads.
// CHECK-LABEL: func.func @in_kernel_dequant
// CHECK: %[[KB:.*]] = builtin.unrealized_conversion_cast %arg1 : tensor<80x2x2x!cachet.q8_0> to tensor<80x2x68xi8>
// CHECK: bufferization.to_buffer %[[KB]]
// CHECK: builtin.unrealized_conversion_cast %arg2 : tensor<80x2x2x!cachet.q4_0> to tensor<80x2x36xi8>
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}} : memref<80x2x68xi8, strided<[?, ?, 1], offset: ?>>
// CHECK: arith.bitcast %{{.*}} : i16 to f16
// CHECK: arith.sitofp %{{.*}} : i8 to f32
// CHECK-NOT: cachet.dequantize
// LINALG-LABEL: func.func @in_kernel_dequant
// LINALG-SAME: %[[K:arg[0-9]+]]: tensor<80x2x68xi8> {cachet.block_format = "q8_0"}, %[[V:arg[0-9]+]]: tensor<80x2x36xi8> {cachet.block_format = "q4_0"}
// LINALG: bufferization.to_buffer %[[K]]
// LINALG: bufferization.to_buffer %[[V]]
// LINALG-NOT: unrealized_conversion_cast
// LINALG-NOT: linalg.generic
// LINALG: return
func.func @in_kernel_dequant(%q: tensor<4x40x64xf16>, %kq: tensor<80x2x2x!cachet.q8_0>, %vq: tensor<80x2x2x!cachet.q4_0>) -> tensor<4x40x64xf16> {
  %k = cachet.dequantize %kq : tensor<80x2x2x!cachet.q8_0> -> tensor<80x2x64xf16>
  %v = cachet.dequantize %vq : tensor<80x2x2x!cachet.q4_0> -> tensor<80x2x64xf16>
  // expected-remark @+1 {{cachet-select-kernel-configs: scalar flash-attention kernel (attention-kernel=scalar): query tile 32 (one thread per row), key tile 64 (32768 bytes of workgroup memory), 2x4 workgroups of 32 threads, GQA 2:1 (profile lavapipe; subgroup 8, 32768 bytes of workgroup memory); K decoded from q8_0 blocks in the kernel; V decoded from q4_0 blocks in the kernel}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 40
      : tensor<4x40x64xf16>, tensor<80x2x64xf16>, tensor<80x2x64xf16> -> tensor<4x40x64xf16>
  return %o : tensor<4x40x64xf16>
}
