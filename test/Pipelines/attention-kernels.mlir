// The flash-attention kernels through the target lowerings, head-major f16
// K/V as the dequant-once scratch gives them (pp64 over 256 positions, 8
// query heads on 2 KV heads, D 128, causal).
//
// NVVM with the H200 profile: the mma kernel's Q K^T and P V are wmma
// 16x16x16 loads, f32-accumulating multiply-adds and stores on shared
// memory aligned to 128 bytes; K is loaded column-major (K^T) and the
// multiply says so (the backend interleaves the two products, hence DAG).
// RUN: rm -rf %t && mkdir -p %t
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 features=+ptx80 profile=h200 format=isa" -cachet-dump-kernel-objects=directory=%t/ptx -o /dev/null 2>%t/nvvm.remarks
// RUN: FileCheck %s --check-prefix=PTX < %t/ptx/attention_kernel.ptx
// RUN: FileCheck %s --check-prefix=REMARK < %t/nvvm.remarks
// PTX-COUNT-6: .shared .align 128
// PTX-DAG: wmma.load.a.sync.aligned.row.m16n16k16.shared.f16
// PTX-DAG: wmma.load.b.sync.aligned.col.m16n16k16.shared.f16
// PTX-DAG: wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32
// PTX-DAG: wmma.store.d.sync.aligned.row.m16n16k16.shared.f32
// PTX-DAG: wmma.load.c.sync.aligned.row.m16n16k16.shared.f32
// PTX-DAG: wmma.load.b.sync.aligned.row.m16n16k16.shared.f16
// PTX-DAG: wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32
// REMARK: cachet-lower-attention: mma flash-attention kernel (gpu.subgroup_mma 16x16x16 f16, f32 accumulate): query tile 32 (2 subgroups of 16 rows), key tile 32 (47360 bytes of workgroup memory), 2x8 workgroups of 64 threads, GQA 4:1 (profile h200; subgroup 32, 232448 bytes of workgroup memory)
//
// SPIR-V with the same profile: the default is the scalar kernel (the
// Vulkan runtime does not enable cooperative matrices yet); asking for mma
// gives KHR cooperative-matrix loads, multiply-adds and stores in a SPIR-V
// 1.6 module that declares the capability and the extension.
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=h200 stop-before-binary" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPIRV-AUTO
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=h200 attention-kernel=mma stop-before-binary" 2>/dev/null | FileCheck %s --check-prefix=SPIRV
// SPIRV-AUTO: scalar flash-attention kernel (allow-mma is off: the target does not run the mma kernel)
// SPIRV: spirv.module @__spv__attention_kernel Logical GLSL450 requires #spirv.vce<v1.6, [{{.*}}CooperativeMatrixKHR{{.*}}], [{{.*}}SPV_KHR_cooperative_matrix{{.*}}]>
// SPIRV: spirv.GlobalVariable {{.*}} : !spirv.ptr<{{.*}}, Workgroup>
// SPIRV: spirv.KHR.CooperativeMatrixLoad {{.*}}, <ColumnMajor>
// SPIRV: spirv.KHR.CooperativeMatrixMulAdd
// SPIRV: spirv.KHR.CooperativeMatrixStore
// SPIRV: spirv.KHR.CooperativeMatrixMulAdd
//
// ROCDL with a 64-lane profile: the scalar kernel (ROCDL does not lower
// gpu.subgroup_mma), its query tile halved from 128 rows so that the
// accumulator rows leave room for a key tile in 48 KiB.
// RUN: cachet-opt %s -cachet-compile="target=rocdl chip=gfx942 profile=gfx942 stop-before-binary" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROCDL
// ROCDL: scalar flash-attention kernel (allow-mma is off: the target does not run the mma kernel): query tile 64 (one thread per row), key tile 16 (45056 bytes of workgroup memory)
// ROCDL-NOT: error
//
// Lavapipe (no cooperative matrix): the scalar kernel, through the whole
// SPIR-V pipeline.
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=lavapipe" -o /dev/null 2>&1 | FileCheck %s --check-prefix=LAVAPIPE
// LAVAPIPE: scalar flash-attention kernel (the profile has no 16x16x16:f16->f32 cooperative matrix)
// LAVAPIPE-NOT: error

func.func @attention(%q: tensor<8x64x128xf16>, %k: tensor<2x256x128xf16>,
                     %v: tensor<2x256x128xf16>) -> tensor<8x64x128xf16> {
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.0883883461 causal 192
      : tensor<8x64x128xf16>, tensor<2x256x128xf16>, tensor<2x256x128xf16> -> tensor<8x64x128xf16>
  return %o : tensor<8x64x128xf16>
}
