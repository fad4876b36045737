// cachet.attention_partial (a chunk of keys continuing an online softmax)
// through the attention kernels: the tiled and scalar kernels (lavapipe)
// and the mma-sync kernel (NVVM) read the state before the first key tile
// and write it back in place after the last; causal masking compares
// absolute positions (key_offset + chunk position).
// RUN: cachet-opt %s -cachet-attach-device=profile=lavapipe -cachet-select-kernel-configs -cachet-lower-attention 2>/dev/null | FileCheck %s --check-prefix=TILED
// RUN: cachet-opt %s -cachet-attach-device=profile=lavapipe -cachet-select-kernel-configs=attention-kernel=scalar -cachet-lower-attention 2>/dev/null | FileCheck %s --check-prefix=SCALAR
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true dynamic-shared=true async-copy=true" -cachet-lower-attention 2>/dev/null | FileCheck %s --check-prefix=SYNC
// The mma (wmma) and decode kernels carry no chunk state: auto picks
// mma-sync or tiled for a chunk, and a config naming either is an error
// (lower-attention-partial-invalid.mlir).
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs 2>&1 >/dev/null | FileCheck %s --check-prefix=NOMMA
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="attention-kernel=decode" 2>&1 >/dev/null | FileCheck %s --check-prefix=NODECODE

// SCALAR-LABEL: func.func @chunk
// SCALAR-DAG: %[[ACC:.*]] = bufferization.to_buffer %arg4 : tensor<8x64x128xf32> to memref<8x64x128xf32>
// SCALAR-DAG: %[[MAX:.*]] = bufferization.to_buffer %arg5 : tensor<8x64xf32> to memref<8x64xf32>
// SCALAR-DAG: %[[SUM:.*]] = bufferization.to_buffer %arg6 : tensor<8x64xf32> to memref<8x64xf32>
// SCALAR: gpu.launch
// The bound of the tile loop: the query tile's last visible position
// (tile start + 32 + 960), relative to the chunk, 0 at or before it.
// SCALAR: %[[LAST:.*]] = arith.addi %{{.*}}, %c992 : index
// SCALAR: %[[BEFORE:.*]] = arith.cmpi ule, %[[LAST]], %arg3 : index
// SCALAR: %[[LOCAL:.*]] = arith.subi %[[LAST]], %arg3 : index
// SCALAR: arith.select %[[BEFORE]], %c0, %[[LOCAL]] : index
// SCALAR: memref.load %[[MAX]]
// SCALAR: memref.load %[[SUM]]
// SCALAR: memref.load %[[ACC]]
// SCALAR: scf.for {{.*}} iter_args
// Causal: the absolute position chunk position + key offset.
// SCALAR: %[[ABS:.*]] = arith.addi %{{.*}}, %arg3 : index
// SCALAR: arith.cmpi ule, %[[ABS]], %{{.*}} : index
// SCALAR: math.exp2
// SCALAR: scf.yield
// SCALAR: memref.store %{{.*}}, %[[MAX]]
// SCALAR: memref.store %{{.*}}, %[[SUM]]
// SCALAR: memref.store %{{.*}}, %[[ACC]]
// SCALAR-NOT: arith.truncf
// SCALAR: gpu.terminator
// SCALAR: %[[O:.*]] = bufferization.to_tensor %[[ACC]] restrict writable
// SCALAR: %[[M:.*]] = bufferization.to_tensor %[[MAX]] restrict writable
// SCALAR: %[[L:.*]] = bufferization.to_tensor %[[SUM]] restrict writable
// SCALAR: return %[[O]], %[[M]], %[[L]]

// TILED-LABEL: func.func @chunk
// TILED-DAG: %[[ACC:.*]] = bufferization.to_buffer %arg4 : tensor<8x64x128xf32> to memref<8x64x128xf32>
// TILED-DAG: %[[MAX:.*]] = bufferization.to_buffer %arg5 : tensor<8x64xf32> to memref<8x64xf32>
// TILED-DAG: %[[SUM:.*]] = bufferization.to_buffer %arg6 : tensor<8x64xf32> to memref<8x64xf32>
// TILED: gpu.launch
// Each of the thread's 4 rows: its state; then its accumulator values.
// TILED-COUNT-4: memref.load %[[MAX]]
// TILED: memref.load %[[ACC]]
// The tile loop's bound: the query tile's last visible position (tile
// start + 64 + 960), relative to the chunk.
// TILED: %[[LAST:.*]] = arith.addi %{{.*}}, %c1024 : index
// TILED: arith.cmpi ule, %[[LAST]], %arg3 : index
// TILED: scf.for {{.*}} iter_args
// TILED: %[[ABS:.*]] = arith.addi %{{.*}}, %arg3 : index
// TILED: arith.cmpi ule, %[[ABS]], %{{.*}} : index
// TILED: math.exp2
// TILED: scf.yield
// The state stored by the first thread of each row group, the accumulator
// by all.
// TILED: scf.if
// TILED: memref.store %{{.*}}, %[[MAX]]
// TILED: memref.store %{{.*}}, %[[SUM]]
// TILED: }
// TILED: memref.store %{{.*}}, %[[ACC]]
// TILED-NOT: arith.truncf
// TILED: gpu.terminator

// SYNC-LABEL: func.func @chunk
// SYNC: gpu.launch
// The lane's accumulator fragments, two f32 per row and 8-column block.
// SYNC: vector.load %{{.*}} : memref<8x64x128xf32>, vector<2xf32>
// SYNC: nvgpu.mma.sync
// The quad's sum of each tile's P: every lane holds the row's sum.
// SYNC: gpu.shuffle  xor
// SYNC: scf.yield
// SYNC: vector.store %{{.*}} : memref<8x64x128xf32>, vector<2xf32>
// SYNC: memref.store
// SYNC-NOT: arith.truncf
// SYNC: gpu.terminator

// NOMMA: remark: cachet-select-kernel-configs: tiled flash-attention kernel (f32 fused multiply-adds; a chunk of keys (cachet.attention_partial) carries its online-softmax state in the scalar, tiled and mma-sync kernels only)
// NODECODE: remark: cachet-select-kernel-configs: {{.*}}flash-attention kernel

func.func @chunk(%q: tensor<8x64x128xf16>, %k: tensor<2x256x128xf16>,
                 %v: tensor<2x256x128xf16>, %p: index,
                 %acc: tensor<8x64x128xf32>, %m: tensor<8x64xf32>,
                 %l: tensor<8x64xf32>)
    -> (tensor<8x64x128xf32>, tensor<8x64xf32>, tensor<8x64xf32>) {
  %o, %m2, %l2 = cachet.attention_partial %q, %k, %v key_offset %p
      layout <head_major> scale 0.0883883461 causal 960 into %acc, %m, %l
      : tensor<8x64x128xf16>, tensor<2x256x128xf16>, tensor<2x256x128xf16>
      -> tensor<8x64x128xf32>, tensor<8x64xf32>, tensor<8x64xf32>
  return %o, %m2, %l2 : tensor<8x64x128xf32>, tensor<8x64xf32>, tensor<8x64xf32>
}
