// The sm_90a attention kernel (attention_wgmma): the mma-sync kernel's
// online softmax with Q K^T and P V on warpgroup MMA. Q, K and V tiles sit
// in dynamic workgroup memory in wgmma's 128-byte swizzle (3-D views
// [cols / 64][rows][64], piece c of row r at c ^ (r % 8)), aligned to 1024
// bytes at run time, and are fenced for the async proxy before the barrier
// that publishes them; S = Q K^T reads both from workgroup memory
// (nvvm.wgmma.mma_async), P V takes P from registers (inline PTX, V
// N-major), and each product's registers pass through the commit + wait.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true allow-wgmma=true dynamic-shared=true async-copy=true" -cachet-lower-attention 2>/dev/null | FileCheck %s
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true allow-wgmma=true dynamic-shared=true async-copy=true" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// The whole pipeline (the h200 profile compiles for sm_90a), to PTX.
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm profile=h200 format=isa" 2>/dev/null | FileCheck %s --check-prefix=PTX
// bf16 softmax weights are rounded in pairs (one cvt.rn.bf16x2.f32 per
// two; a bf16 rounded alone is an F2F on the exponentials' pipe): no
// scalar bf16 conversion anywhere.
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm profile=h200 format=isa" 2>/dev/null | FileCheck %s --check-prefix=PAIRS
// PAIRS-NOT: cvt.rn.bf16.f32
// PAIRS: cvt.rn.bf16x2.f32
// PAIRS-NOT: cvt.rn.bf16.f32
// Without allow-wgmma (sm_90), or with attention-wgmma=false: mma-sync.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true dynamic-shared=true async-copy=true" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=SYNC
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true allow-wgmma=true attention-wgmma=false dynamic-shared=true async-copy=true" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=SYNC
// Three K/V buffers (attention-wgmma-stages=3; the next tile's Q K^T
// issued before this tile's softmax, one wait for it and P V).
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true allow-wgmma=true dynamic-shared=true async-copy=true attention-wgmma-stages=3 key-tile=64" -cachet-lower-attention 2>/dev/null | FileCheck %s --check-prefix=S3
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true allow-wgmma=true dynamic-shared=true async-copy=true attention-wgmma-stages=3 key-tile=64" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=S3REMARK
// RUN: not cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="attention-wgmma-stages=4" 2>&1 | FileCheck %s --check-prefix=BADSTAGES
// BADSTAGES: cachet-select-kernel-configs: bad attention-wgmma-stages 4: 2 or 3
// Tiles it cannot take: mma-sync, with the reason.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true allow-wgmma=true dynamic-shared=true async-copy=true query-tile=96" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=TILE

// f16, GQA 4:1, causal: 1 x 8 workgroups of two warpgroups (128 query
// rows), key tiles of 128 double-buffered by cp.async.
// CHECK-LABEL: func.func @head_major
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c256, {{.*}}) dynamic_shared_memory_size %c164864_i32
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: memref.view {{.*}} to memref<2x128x64xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: memref.view {{.*}} to memref<2x128x64xf16, #gpu.address_space<workgroup>>
// CHECK: arith.xori
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.device_async_copy {{.*}} to memref<2x128x64xf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: nvgpu.device_async_wait
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK: llvm.inline_asm has_side_effects "wgmma.commit_group.sync.aligned;\0Awgmma.wait_group.sync.aligned 0;"
// CHECK: gpu.shuffle  xor
// CHECK: math.exp2
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-8: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, $133, 0;\0Awgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {$0, {{.*}}, $63}, {$128, $129, $130, $131}, $132, p, 1, 1, 1;\0A}"
// CHECK: llvm.inline_asm has_side_effects "wgmma.commit_group.sync.aligned;
// CHECK: scf.yield
// CHECK: vector.store %{{.*}} : memref<8x128x128xf16>, vector<2xf16>
// REMARK: remark: cachet-select-kernel-configs: wgmma flash-attention kernel (sm_90a wgmma.mma_async m64n128k16 for Q K^T and m64n128k16 for P V, f16, f32 accumulate, softmax in registers): query tile 128 (2 warpgroups of 64 rows), key tile 128 (164864 bytes of workgroup memory), 1x8 workgroups of 256 threads, GQA 4:1 (profile h200; subgroup 32, 232448 bytes of workgroup memory); Q/K/V tiles in the 128-byte swizzle in dynamic workgroup memory, K/V double-buffered by asynchronous copies (16-byte vectors)
// The blocks' order in the PTX is not the kernel's: -DAG.
// S3-LABEL: func.func @head_major
// S3-COUNT-6: memref.view {{.*}} to memref<2x64x64xf16, #gpu.address_space<workgroup>>
// S3: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// S3: nvvm.wgmma.mma_async
// S3: scf.for
// S3-NEXT: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// S3-NEXT: nvvm.fence.proxy
// S3-NEXT: gpu.barrier
// S3: nvgpu.device_async_copy
// S3: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// S3-NOT: wgmma.commit_group
// S3: gpu.shuffle  xor
// S3: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// S3: llvm.inline_asm has_side_effects "wgmma.commit_group.sync.aligned;\0Awgmma.wait_group.sync.aligned 0;", "{{(=f,)+}}=f,0,1,{{.*}},94,95"
// S3: scf.yield
// S3REMARK: wgmma flash-attention kernel {{.*}}key tile 64 (132096 bytes{{.*}}K/V in three buffers filled by asynchronous copies, the next key tile's Q K^T in flight during this one's softmax
// The packed blocks (rewrites off) keep two buffers: the same products.
// S3REMARK: wgmma flash-attention kernel {{.*}} bf16, {{.*}}K/V blocks double-buffered
// PTX: .target sm_90a
// PTX-DAG: fence.proxy.async.shared::cta;
// PTX-DAG: wgmma.fence.sync.aligned;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%
// PTX-DAG: wgmma.wait_group.sync.aligned 0;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, p, 1, 1, 1;
// SYNC: mma-sync flash-attention kernel
// SYNC-NOT: wgmma flash-attention kernel
// TILE: mma-sync flash-attention kernel {{.*}}; not the wgmma kernel: query tile 96 and key tile 128 (it takes a multiple of 64 up to 256 and one of 16 up to 256)
func.func @head_major(%q: tensor<8x128x128xf16>, %k: tensor<2x256x128xf16>,
                      %v: tensor<2x256x128xf16>) -> tensor<8x128x128xf16> {
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125 causal 128
      : tensor<8x128x128xf16>, tensor<2x256x128xf16>, tensor<2x256x128xf16>
      -> tensor<8x128x128xf16>
  return %o : tensor<8x128x128xf16>
}

// -----

// q8_0 K/V decoded in the kernel (rewrites off's form), bf16: the blocks'
// bytes double-buffered, decoded into the swizzled tiles.
// CHECK-LABEL: func.func @packed
// CHECK: memref.view {{.*}} to memref<2x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: vector.store {{.*}} : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.wgmma.mma_async {{.*}} A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// REMARK: wgmma flash-attention kernel {{.*}} bf16, {{.*}}K/V blocks double-buffered by asynchronous copies (8- and 8-byte) and decoded in workgroup memory
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
func.func @packed(%q: tensor<8x100x128xbf16>, %k: tensor<300x2x4x!cachet.q8_0>,
                  %v: tensor<300x2x4x!cachet.q8_0>) -> tensor<8x100x128xbf16> {
  %kf = cachet.dequantize %k : tensor<300x2x4x!cachet.q8_0> -> tensor<300x2x128xbf16>
  %vf = cachet.dequantize %v : tensor<300x2x4x!cachet.q8_0> -> tensor<300x2x128xbf16>
  %o = cachet.attention %q, %kf, %vf layout <token_major> scale 0.125 causal 200
      : tensor<8x100x128xbf16>, tensor<300x2x128xbf16>, tensor<300x2x128xbf16>
      -> tensor<8x100x128xbf16>
  return %o : tensor<8x100x128xbf16>
}

// -----

// A head dimension of 48 is no whole swizzle row: mma-sync, with the reason.
// REMARK: mma-sync flash-attention kernel {{.*}}; not the wgmma kernel: head dimensions 48 and 48
// CHECK-LABEL: func.func @narrow
// CHECK-NOT: wgmma
func.func @narrow(%q: tensor<4x64x48xf16>, %k: tensor<4x64x48xf16>,
                  %v: tensor<4x64x48xf16>) -> tensor<4x64x48xf16> {
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.144
      : tensor<4x64x48xf16>, tensor<4x64x48xf16>, tensor<4x64x48xf16>
      -> tensor<4x64x48xf16>
  return %o : tensor<4x64x48xf16>
}

// -----

// K decoded from q8_0 blocks in the kernel, V f16 (llama.cpp's -ctk q8_0
// -ctv f16): no staging copies both, so K/V go through registers into the
// swizzled tiles.
// REMARK: wgmma flash-attention kernel {{.*}}K/V through registers
// CHECK-LABEL: func.func @mixed
// CHECK: memref.store {{.*}} : memref<2x128x64xf16, #gpu.address_space<workgroup>>
// CHECK: nvvm.fence.proxy
func.func @mixed(%q: tensor<8x100x128xf16>, %k: tensor<300x2x4x!cachet.q8_0>,
                 %v: tensor<300x2x128xf16>) -> tensor<8x100x128xf16> {
  %kf = cachet.dequantize %k : tensor<300x2x4x!cachet.q8_0> -> tensor<300x2x128xf16>
  %o = cachet.attention %q, %kf, %v layout <token_major> scale 0.125 causal 200
      : tensor<8x100x128xf16>, tensor<300x2x128xf16>, tensor<300x2x128xf16>
      -> tensor<8x100x128xf16>
  return %o : tensor<8x100x128xf16>
}
