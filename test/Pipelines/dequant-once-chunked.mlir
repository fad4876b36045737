// A capped dequant-once scratch (max-scratch-bytes below one layer's f16
// K+V) on every target. The 1024 positions go in chunks of 256: on NVVM
// and ROCDL an scf.for whose kernels take the chunk's offset, on SPIR-V
// (whose kernels take whole buffers and no scalars) four chunks at static
// offsets. The attention_partial kernels carry the online-softmax state
// in place: no loop-carried buffers, and nothing allocated per chunk.
// RUN: cachet-opt %s -cachet-compile="target=nvvm profile=h200 stop-before-binary dequant-once-options={max-scratch-bytes=262144 force=true}" -mlir-print-ir-after=cachet-device-buffers -mlir-disable-threading -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | grep -v "remark:\|^ *^\|^  %o = " | FileCheck %s --check-prefix=NVVM
// RUN: cachet-opt %s -cachet-compile="target=rocdl chip=gfx942 profile=gfx942 stop-before-binary dequant-once-options={max-scratch-bytes=262144 force=true}" -mlir-print-ir-after=cachet-device-buffers -mlir-disable-threading -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | grep -v "remark:\|^ *^\|^  %o = " | FileCheck %s --check-prefix=ROCDL
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=lavapipe stop-before-binary dequant-once-options={max-scratch-bytes=262144 force=true}" -mlir-print-ir-after=cachet-device-buffers -mlir-disable-threading -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | grep -v "remark:\|^ *^\|^  %o = " | FileCheck %s --check-prefix=SPIRV
// The chunks' dequant-transposes read the cache at run-time positions and
// still get the staged kernel (a chunk's bytes are aligned as a position's).
// RUN: cachet-opt %s -cachet-compile="target=nvvm profile=h200 stop-before-binary dequant-once-options={max-scratch-bytes=262144 force=true}" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: cachet-opt %s -cachet-compile="target=nvvm profile=h200 stop-before-binary dequant-once-options={max-scratch-bytes=262144 force=true}" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGED
// STAGED-COUNT-2: remark: cachet-select-kernel-configs: dequant-transpose: 16 positions (4352 B) per workgroup of 256 threads, 16 B loads
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=lavapipe stop-before-binary dequant-once-options={max-scratch-bytes=262144 force=true}" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// cachet-compile's own max-scratch-bytes caps the scratch the same way.
// RUN: cachet-opt %s -cachet-compile="target=nvvm profile=h200 stop-before-binary max-scratch-bytes=262144 dequant-once-options={force=true}" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// The whole NVVM pipeline: the chunk loop on the host lowers to LLVM with
// the rest (branches, the views' offsets computed per chunk).
// RUN: cachet-opt %s -cachet-compile="target=nvvm profile=h200 format=isa dequant-once-options={max-scratch-bytes=262144 force=true}" 2>/dev/null | FileCheck %s --check-prefix=HOST
// HOST: llvm.func @chunked
// HOST-NOT: scf.for
// HOST-NOT: affine.apply
// HOST-NOT: unrealized_conversion_cast
// HOST: llvm.cond_br
// HOST: gpu.launch_func
// On NVVM the chunk loop stays on the stream of the work before it
// (cachet-stream-loops): no stream created or synchronized per chunk.
// RUN: cachet-opt %s -cachet-compile="target=nvvm profile=h200 format=isa dequant-once-options={max-scratch-bytes=262144 force=true}" -mlir-print-ir-after=cachet-stream-loops -mlir-disable-threading -o /dev/null 2>&1 | grep -v "note:\|^ *^" | FileCheck %s --check-prefix=STREAM
// STREAM: remark: cachet-stream-loops: the loop's GPU work stays on the stream of the work before it
// STREAM: IR Dump After StreamLoops
// STREAM: gpu.launch_func async
// STREAM-NOT: gpu.wait
// STREAM: scf.for
// STREAM-NOT: gpu.wait
// STREAM: gpu.launch_func async [%[[S:[0-9]+]]]
// STREAM-NOT: gpu.wait
// STREAM: gpu.launch_func async
// STREAM-NOT: gpu.wait
// STREAM: gpu.launch_func async
// STREAM-NOT: gpu.wait
// STREAM: }
// The scratch and the state the loop carried are freed right after it (on
// the stream: cachet-device-buffers frees temporaries after their last
// use), then the normalization and its inputs.
// STREAM-NEXT: gpu.dealloc async [%[[S]]]
// STREAM-NEXT: gpu.dealloc async
// STREAM-NEXT: gpu.alloc async
// STREAM-NEXT: gpu.launch_func async
// STREAM-NEXT: gpu.dealloc async
// STREAM-NEXT: gpu.dealloc async
// STREAM-NEXT: gpu.wait
// The reference lowering of the chunks (linalg on tensors): its
// temporaries are allocated in the loop and freed there. (With
// attention-kernel=reference the whole attention gets no kernel, and
// cachet-dequant-once-kv does not chunk it, rewrites off and on would
// differ; select-options={} makes it decide as with the default kernels,
// so that the chunks reach the reference lowering.)
// RUN: cachet-opt %s -cachet-compile="target=nvvm profile=h200 attention-kernel=reference stop-before-binary dequant-once-options={max-scratch-bytes=262144 force=true select-options={}}" -mlir-print-ir-after=cachet-device-buffers -mlir-disable-threading -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | grep -v "remark:\|^ *^\|^  %o = " | FileCheck %s --check-prefix=REF

// REMARK: remark: cachet-dequant-once-kv: rewritten (forced){{.*}}4 KV chunks of 256 positions (max-scratch-bytes 262144), merged with online softmax
// REMARK: remark: cachet-select-kernel-configs: {{mma-sync|tiled|wgmma}} flash-attention kernel
// REMARK-NOT: dequant-transpose: generic kernel

// NVVM: IR Dump After DeviceBuffers
// NVVM: func.func @chunked
// NVVM-COUNT-3: gpu.alloc  () : memref<8x64{{(x128)?}}xf32>
// NVVM: scf.for %[[P:.*]] = %c0 to %c1024 step %c256 {
// NVVM-NOT: gpu.alloc
// NVVM: gpu.launch_func {{.*}} args(%{{.*}} : memref<69632xi8, strided<[1], offset: ?>>
// NVVM: gpu.launch_func {{.*}} args(%{{.*}} : memref<69632xi8, strided<[1], offset: ?>>
// NVVM: gpu.launch_func {{.*}} memref<8x64x128xf32>, {{.*}}, %[[P]] : index)
// NVVM-NEXT: }
// NVVM: gpu.launch_func {{.*}} args({{.*}} : memref<8x64x128xf32>, {{.*}} : memref<8x64xf32>, {{.*}} : memref<8x64x128xf16>)

// ROCDL: IR Dump After DeviceBuffers
// ROCDL: scf.for %{{.*}} = %c0 to %c1024 step %c256 {
// ROCDL-NOT: gpu.alloc
// ROCDL: }

// SPIRV: IR Dump After DeviceBuffers
// SPIRV-NOT: scf.for
// SPIRV-COUNT-4: gpu.launch_func  @chunked_kernel_{{[0-9]+}}::@chunked_kernel blocks in (%c1, %c8, %c1) threads in (%c256, %c1, %c1)  args(%{{.*}} : memref<8x64xf32>

// REF: IR Dump After DeviceBuffers
// REF: scf.for %{{.*}} = %c0 to %c1024 step %c256 {
// REF: %[[T:.*]] = gpu.alloc  () : memref<8x64x256xf32>
// REF: gpu.dealloc  %[[T]] : memref<8x64x256xf32>
// REF: }
func.func @chunked(%q: tensor<8x64x128xf16>, %kq: tensor<1024x2x4x!cachet.q8_0>,
                   %vq: tensor<1024x2x4x!cachet.q8_0>) -> tensor<8x64x128xf16> {
  %k = cachet.dequantize %kq : tensor<1024x2x4x!cachet.q8_0> -> tensor<1024x2x128xf16>
  %v = cachet.dequantize %vq : tensor<1024x2x4x!cachet.q8_0> -> tensor<1024x2x128xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 960
      : tensor<8x64x128xf16>, tensor<1024x2x128xf16>, tensor<1024x2x128xf16> -> tensor<8x64x128xf16>
  return %o : tensor<8x64x128xf16>
}
