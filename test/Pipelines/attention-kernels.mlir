// The flash-attention kernels through the target lowerings, head-major f16
// K/V as the dequant-once scratch gives them (pp64 over 256 positions, 8
// query heads on 2 KV heads, D 128, causal).
//
// NVVM with the H200 profile: the mma-sync kernel. Q K^T and P V are
// m16n8k16 mma.sync products on fragments that ldmatrix reads from tiles in
// dynamic shared memory (V transposed as it loads); the scores, the softmax
// (ex2.approx, a row's max and sum over the 4 lanes of a quad by
// shuffles) and P never leave registers: no shared-memory stores but Q's.
// K/V tiles arrive double buffered through 16-byte cp.async copies; each
// lane stores its two output columns per 8-column block as one 4-byte
// store.
// RUN: rm -rf %t && mkdir -p %t
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 features=+ptx80 profile=h200 format=isa" -cachet-dump-kernel-objects=directory=%t/sync -o /dev/null 2>%t/sync.remarks
// RUN: FileCheck %s --check-prefix=SYNC < %t/sync/attention_kernel.ptx
// RUN: FileCheck %s --check-prefix=SYNC-REMARK < %t/sync.remarks
// SYNC: .extern .shared .align 128 .b8 __dynamic_shmem__0[];
// SYNC-DAG: cp.async.cg.shared.global
// SYNC-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// SYNC-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// SYNC-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// SYNC-DAG: shfl.sync.bfly.b32
// SYNC-DAG: {{ex2.approx|__nv_exp2f}}
// SYNC-DAG: st.global.b32
// SYNC-NOT: wmma
// SYNC-NOT: st.global.b16
// SYNC-REMARK: cachet-select-kernel-configs: mma-sync flash-attention kernel (nvgpu.mma.sync m16n8k16 f16, f32 accumulate, softmax in registers): query tile 64 (4 subgroups of 16 rows), key tile 64 (69632 bytes of workgroup memory), 1x8 workgroups of 128 threads, GQA 4:1 (profile h200; subgroup 32, 232448 bytes of workgroup memory); tile rows padded by 16 bytes, dynamic workgroup memory (budget: 1/3 of the profile's), K/V double-buffered by asynchronous copies (16-byte vectors)
// RUN: grep -c "st.shared" %t/sync/attention_kernel.ptx | FileCheck %s --check-prefix=SYNC-STS
// SYNC-STS: {{^8$}}
//
// attention-kernel=mma: the one-pass wmma kernel. Q K^T and P V are
// wmma 16x16x16 loads and f32-accumulating multiply-adds on tiles in dynamic
// shared memory (an .extern .shared array aligned to 128 bytes, rows padded
// by 16 bytes), K loaded
// column-major (K^T); the output accumulators stay in registers, rescaled
// by a row-broadcast matrix (wmma.load.c); K/V tiles arrive double buffered
// through 16-byte cp.async copies; each subgroup syncs its own staging with
// bar.warp.sync and reduces a row's max and sum with shuffles; exp2 is
// ex2.approx (__nv_exp2f without the toolkit's libdevice).
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 features=+ptx80 profile=h200 format=isa attention-kernel=mma" -cachet-dump-kernel-objects=directory=%t/ptx -o /dev/null 2>%t/nvvm.remarks
// RUN: FileCheck %s --check-prefix=PTX < %t/ptx/attention_kernel.ptx
// RUN: FileCheck %s --check-prefix=REMARK < %t/nvvm.remarks
// PTX: .extern .shared .align 128 .b8 __dynamic_shmem__0[];
// PTX-NOT: .shared .align {{.*}} .b8 __dynamic_shmem__0;
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: cp.async.commit_group
// PTX-DAG: cp.async.wait_group 0
// PTX-DAG: wmma.load.a.sync.aligned.row.m16n16k16.shared.f16
// PTX-DAG: wmma.load.b.sync.aligned.col.m16n16k16.shared.f16
// PTX-DAG: wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32
// PTX-DAG: wmma.store.d.sync.aligned.row.m16n16k16.shared.f32
// PTX-DAG: bar.warp.sync {{.*}}-1;
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: {{ex2.approx|__nv_exp2f}}
// PTX-DAG: wmma.load.c.sync.aligned.row.m16n16k16.shared.f32
// PTX-DAG: wmma.load.b.sync.aligned.row.m16n16k16.shared.f16
// PTX-DAG: wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32
// REMARK: cachet-select-kernel-configs: mma flash-attention kernel (gpu.subgroup_mma 16x16x16 f16, f32 accumulate): query tile 64 (4 subgroups of 16 rows), key tile 32 (71680 bytes of workgroup memory), 1x8 workgroups of 128 threads, GQA 4:1 (profile h200; subgroup 32, 232448 bytes of workgroup memory); tile rows padded by 16 bytes, dynamic workgroup memory (budget: 1/3 of the profile's), K/V double-buffered by asynchronous copies (16-byte vectors), subgroup staging synchronized by nvvm.bar.warp.sync
//
// Static workgroup memory (48 KiB at most) and no padding: a key tile of
// 32, K/V through registers (16-byte global loads and shared stores).
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 features=+ptx80 profile=h200 format=isa attention-kernel=mma attention-options={dynamic-shared=false tile-pad-bytes=0}" -cachet-dump-kernel-objects=directory=%t/static -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATIC
// RUN: FileCheck %s --check-prefix=STATIC-PTX < %t/static/attention_kernel.ptx
// STATIC: key tile 32 (49152 bytes of workgroup memory), {{.*}}; tile rows padded by 0 bytes, static workgroup memory, K/V through registers (16-byte vectors)
// STATIC-PTX-NOT: cp.async
// STATIC-PTX: ld.global.v4.b32
// STATIC-PTX: st.shared.v4.b32
//
// Lazy rescaling: a subgroup-wide min of alpha (shuffles) guards the
// rescale.
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 features=+ptx80 profile=h200 format=isa attention-kernel=mma attention-options={lazy-rescale=true}" -o /dev/null 2>&1 | FileCheck %s --check-prefix=LAZY
// LAZY: subgroup staging synchronized by nvvm.bar.warp.sync, lazy rescaling
//
// SPIR-V with the same profile: the mma kernel with the tiled kernel as its
// fallback (a Vulkan driver need not have VK_KHR_cooperative_matrix where
// the GPU has tensor cores); asking for mma gives KHR cooperative-matrix loads, multiply-adds
// and stores in a SPIR-V 1.6 module that declares the capability and the
// extension.
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=h200 stop-before-binary" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPIRV-AUTO
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=h200 attention-kernel=mma stop-before-binary" 2>/dev/null | FileCheck %s --check-prefix=SPIRV
// SPIRV-AUTO: the fallback: tiled flash-attention kernel (f32 fused multiply-adds; allow-mma is off: the target does not run the mma kernel)
// SPIRV: spirv.module @__spv__attention_kernel Logical GLSL450 requires #spirv.vce<v1.6, [{{.*}}CooperativeMatrixKHR{{.*}}], [{{.*}}SPV_KHR_cooperative_matrix{{.*}}]>
// SPIRV: spirv.GlobalVariable {{.*}} : !spirv.ptr<{{.*}}, Workgroup>
// SPIRV: spirv.KHR.CooperativeMatrixLoad {{.*}}, <ColumnMajor>
// SPIRV: spirv.KHR.CooperativeMatrixMulAdd
// SPIRV: spirv.KHR.CooperativeMatrixStore
// SPIRV: spirv.GroupNonUniformShuffleXor
// SPIRV: spirv.KHR.CooperativeMatrixMulAdd
// Its tiles fit the 48 KiB of static workgroup memory (key tile 16 at D 128
// with rows padded by 16 bytes), and its vector loads
// and stores are split into scalar ones (cachet-scalarize-vector-memory): no
// pointer casts, which SPIR-V's Logical addressing does not allow.
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=h200 attention-kernel=mma stop-before-binary" 2>&1 | FileCheck %s --check-prefix=SPIRV-MMA
// SPIRV-MMA: mma flash-attention kernel {{.*}} key tile 16 (39424 bytes of workgroup memory){{.*}}static workgroup memory
// SPIRV-MMA: spirv.module @__spv__attention_kernel
// SPIRV-MMA-NOT: spirv.Bitcast {{.*}} : !spirv.ptr
// SPIRV-MMA: spirv.KHR.CooperativeMatrixMulAdd
// SPIRV-MMA-NOT: spirv.Bitcast {{.*}} : !spirv.ptr
//
// ROCDL with a 64-lane profile: the tiled kernel (ROCDL does not lower
// gpu.subgroup_mma), steps of 32 columns in 48 KiB.
// RUN: cachet-opt %s -cachet-compile="target=rocdl chip=gfx942 profile=gfx942 stop-before-binary" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROCDL
// ROCDL: tiled flash-attention kernel (f32 fused multiply-adds; allow-mma is off: the target does not run the mma kernel): query tile 64, each thread 4 rows by 4 positions of Q K^T and 8 value columns of P V, steps of 32 columns, key tile 64 (34048 bytes of workgroup memory)
// ROCDL-NOT: error
//
// Lavapipe (no cooperative matrix): the tiled kernel, steps of 16 columns in
// its 32 KiB, through the whole SPIR-V pipeline.
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=lavapipe" -o /dev/null 2>&1 | FileCheck %s --check-prefix=LAVAPIPE
// LAVAPIPE: tiled flash-attention kernel (f32 fused multiply-adds; the profile has no 16x16x16:f16->f32 cooperative matrix): {{.*}} steps of 16 columns, key tile 64 (25728 bytes of workgroup memory)
// LAVAPIPE-NOT: error

func.func @attention(%q: tensor<8x64x128xf16>, %k: tensor<2x256x128xf16>,
                     %v: tensor<2x256x128xf16>) -> tensor<8x64x128xf16> {
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.0883883461 causal 192
      : tensor<8x64x128xf16>, tensor<2x256x128xf16>, tensor<2x256x128xf16> -> tensor<8x64x128xf16>
  return %o : tensor<8x64x128xf16>
}
