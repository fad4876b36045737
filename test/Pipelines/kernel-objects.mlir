// Kernel objects for every target, written out and disassembled.
// RUN: rm -rf %t && mkdir -p %t
// HSACO for gfx942 and gfx1100 through Debian's device bitcode and ld.lld.
// RUN: cachet-opt %s -cachet-compile="target=rocdl chip=gfx942 format=bin toolkit=%cachet_obj_root/rocm-toolkit" -cachet-dump-kernel-objects=directory=%t/gfx942 -o /dev/null
// RUN: llvm-objdump -d --mcpu=gfx942 %t/gfx942/mv_kernel.hsaco | FileCheck %s --check-prefix=GCN
// RUN: cachet-opt %s -cachet-compile="target=rocdl chip=gfx1100 format=bin toolkit=%cachet_obj_root/rocm-toolkit" -cachet-dump-kernel-objects=directory=%t/gfx1100 -o /dev/null
// RUN: llvm-objdump -d --mcpu=gfx1100 %t/gfx1100/mv_kernel.hsaco | FileCheck %s --check-prefix=GCN
// SPIR-V.
// RUN: cachet-opt %s -cachet-compile="target=spirv profile=lavapipe" -cachet-dump-kernel-objects=directory=%t/spirv -o /dev/null
// RUN: spirv-dis %t/spirv/mv_kernel.spv | FileCheck %s --check-prefix=SPV
// PTX.
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 format=isa" -cachet-dump-kernel-objects=directory=%t/ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/ptx/mv_kernel.ptx

// GCN: <mv_kernel>:
// GCN: global_load
// GCN: s_endpgm
// SPV: OpEntryPoint GLCompute %{{.*}} "mv_kernel"
// SPV: OpExecutionMode %{{.*}} LocalSize 32 1 1
// PTX: .target sm_90
// PTX: .visible .entry mv_kernel(

func.func @mv(%w: tensor<256x128xf32>, %x: tensor<128xf32>) -> tensor<256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %y = linalg.matvec ins(%w, %x : tensor<256x128xf32>, tensor<128xf32>) outs(%f : tensor<256xf32>) -> tensor<256xf32>
  return %y : tensor<256xf32>
}
