// Without toolkit=, the rocdl target links the device bitcode (ocml) from
// upstream's ROCm where there is one (ROCM_PATH, /opt/rocm), else from the
// build's ROCm-style folder of Debian's rocm-device-libs: a generic kernel's
// math.exp2 (__ocml_exp2_f32, which the attention kernels use) serializes, as ISA and as HSACO, for gfx942 and
// gfx1100. Before, without /opt/rocm, it failed with "ROCm amdgcn bitcode
// path: /opt/rocm/amdgcn/bitcode does not exist" (the 8B model's
// generate --target=rocdl did).
// RUN: rm -rf %t && mkdir -p %t
// RUN: env -u ROCM_PATH -u ROCM_ROOT -u ROCM_HOME cachet-opt %s -cachet-compile="target=rocdl chip=gfx942" -cachet-dump-kernel-objects=directory=%t/isa -o /dev/null
// RUN: FileCheck %s --check-prefix=ISA < %t/isa/exp_kernel.s
// RUN: env -u ROCM_PATH -u ROCM_ROOT -u ROCM_HOME cachet-opt %s -cachet-compile="target=rocdl chip=gfx1100 format=bin" -cachet-dump-kernel-objects=directory=%t/gfx1100 -o /dev/null
// RUN: llvm-objdump -d --mcpu=gfx1100 %t/gfx1100/exp_kernel.hsaco | FileCheck %s --check-prefix=GCN
// ROCM_PATH (upstream's search) still wins over the folder.
// RUN: env ROCM_PATH=%t/none not cachet-opt %s -cachet-compile="target=rocdl chip=gfx942" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: ROCm amdgcn bitcode path: {{.*}}none/amdgcn/bitcode does not exist or is not a directory

// ISA: .amdgcn_target "amdgcn-amd-amdhsa--gfx942
// ISA: exp_kernel:
// ISA: v_exp_f32
// GCN: <exp_kernel>:
// GCN: v_exp_f32
// GCN: s_endpgm

func.func @exp(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = math.exp2 %a : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  return %y : tensor<1024xf32>
}
