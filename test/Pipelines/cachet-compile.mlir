// SPIR-V: kernels converted inside their gpu.module, entry points with the
// workgroup size they were outlined with.
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=lavapipe stop-before-binary=true" | FileCheck %s --check-prefix=SPIRV
// SPIR-V to the end: serialized kernels, host code that upstream
// mlir-translate turns into LLVM IR calling the mgpu* runtime ABI.
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=lavapipe" | FileCheck %s --check-prefix=BIN
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=lavapipe" | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR
// NVVM: PTX for sm_90 and sm_89.
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 format=isa" | FileCheck %s --check-prefix=PTX90
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_89 features=+ptx78 format=isa" | FileCheck %s --check-prefix=PTX89
// NVVM host code: kernels take the CUDA convention (memref descriptors
// expanded into parameters, no interspersed sizes), PTX through
// mgpuModuleLoadJIT.
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 format=isa" | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=NVVMHOST
// ROCDL: AMDGPU assembly for gfx942.
// RUN: cachet-opt %s -cachet-compile="target=rocdl chip=gfx942 format=isa" | FileCheck %s --check-prefix=GCN
// A target cachet does not have is rejected with a diagnostic.
// RUN: not cachet-opt %s -cachet-compile="target=metal" 2>&1 | FileCheck %s --check-prefix=BADTARGET

// SPIRV-LABEL: gpu.module @mv_kernel
// SPIRV: spirv.module @__spv__mv_kernel Logical GLSL450
// SPIRV: spirv.func @mv_kernel
// The subgroup kernel's 16-byte loads of W and x, each one load of a
// vector<4xi32> word (cachet-spirv-word-loads).
// SPIRV: spirv.Load "StorageBuffer" %{{.*}} : vector<4xi32>
// SPIRV: spirv.Bitcast %{{.*}} : vector<4xi32> to vector<4xf32>
// SPIRV: spirv.EntryPoint "GLCompute" @mv_kernel
// SPIRV: spirv.ExecutionMode @mv_kernel "LocalSize", 32, 1, 1
// SPIRV: gpu.func @mv_kernel(%{{.*}}: memref<256x32xvector<4xi32>>, %{{.*}}: memref<32xvector<4xi32>>, %{{.*}}: memref<256xf32>) kernel
// SPIRV-SAME: spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [32, 1, 1]>

// BIN-NOT: cachet.device
// BIN: llvm.func @mv(
// BIN: gpu.launch_func {{.*}}@mv_kernel{{.*}}::@mv_kernel
// BIN: gpu.binary @mv_kernel{{.*}} [#gpu.object<#spirv.target_env

// LLVMIR: define {{.*}} @mv(
// LLVMIR-DAG: call ptr @mgpuModuleLoad(
// LLVMIR-DAG: call ptr @mgpuModuleGetFunction(
// One launch (the zero fill done in the mat-vec kernel): W, x and y, each
// a pointer and its size in bytes (W read as words: the same 131072 bytes).
// LLVMIR-DAG: call void @mgpuLaunchKernel({{.*}}, ptr null, i64 6)
// LLVMIR-DAG: store i64 131072, ptr
// LLVMIR-DAG: store i64 512, ptr
// LLVMIR-DAG: call ptr @mgpuMemAlloc(
// LLVMIR-DAG: call void @mgpuMemcpy(
// LLVMIR-DAG: call void @mgpuMemFree(
// LLVMIR-DAG: define {{.*}} @_mlir_ciface_mv(

// PTX90: gpu.binary @mv_kernel
// PTX90-SAME: .target sm_90
// PTX90-SAME: .entry mv_kernel
// PTX89: gpu.binary @mv_kernel
// PTX89-SAME: .target sm_89

// One launch: the subgroup mat-vec kernel also does the zero fill.
// NVVMHOST-NOT: call void @mgpuLaunchKernel({{.*}}, ptr null, i64 5)
// NVVMHOST-DAG: call void @mgpuLaunchKernel({{.*}}, ptr null, i64 17)
// NVVMHOST-DAG: call ptr @mgpuModuleLoadJIT(ptr @mv_kernel_binary, i32 3)

// GCN: gpu.binary @mv_kernel
// GCN-SAME: .amdgcn_target \22amdgcn-amd-amdhsa--gfx942\22

// BADTARGET: for the --target option: Cannot find option named 'metal'!

func.func @mv(%w: tensor<256x128xf32>, %x: tensor<128xf32>) -> tensor<256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %y = linalg.matvec ins(%w, %x : tensor<256x128xf32>, tensor<128xf32>) outs(%f : tensor<256xf32>) -> tensor<256xf32>
  return %y : tensor<256xf32>
}
