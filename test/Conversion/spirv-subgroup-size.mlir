// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(spirv.module(cachet-spirv-subgroup-size))' -verify-diagnostics 2>&1 | FileCheck %s

// A shuffle: the module records the target's subgroup size (8 here) in the
// specialization constant the runtime reads.
// CHECK-LABEL: spirv.module @shuffle
// CHECK-NEXT: spirv.SpecConstant @cachet_subgroup_size spec_id(1667326824) = 8 : i32
module attributes {spirv.target_env = #spirv.target_env<#spirv.vce<v1.3, [Shader, GroupNonUniformShuffle], []>, #spirv.resource_limits<subgroup_size = 8>>} {
  // expected-remark @below {{cachet-spirv-subgroup-size: kernel 'k' uses subgroup operations (spirv.GroupNonUniformShuffleXor): compiled for subgroups of 8 lanes, recorded as @cachet_subgroup_size (SpecId 1667326824) for the runtime, which asks the device for that size or refuses the kernel}}
  spirv.module @shuffle Logical GLSL450 requires #spirv.vce<v1.3, [Shader, GroupNonUniformShuffle], []> {
    spirv.func @k() "None" {
      %v = spirv.Constant 1.0 : f32
      %c4 = spirv.Constant 4 : i32
      %s = spirv.GroupNonUniformShuffleXor <Subgroup> %v, %c4 : f32, i32
      spirv.Return
    }
    spirv.EntryPoint "GLCompute" @k
    spirv.ExecutionMode @k "LocalSize", 32, 1, 1
  }
}

// -----

// A subgroup built-in and a reduction, under the default target
// environment (32 lanes); every use is named.
// CHECK-LABEL: spirv.module @builtin
// CHECK-NEXT: spirv.SpecConstant @cachet_subgroup_size spec_id(1667326824) = 32 : i32
// expected-remark @below {{kernel 'k' uses subgroup operations (SubgroupLocalInvocationId, spirv.GroupNonUniformFAdd): compiled for subgroups of 32 lanes}}
spirv.module @builtin Logical GLSL450 requires #spirv.vce<v1.3, [Shader, GroupNonUniformArithmetic], []> {
  spirv.GlobalVariable @lane built_in("SubgroupLocalInvocationId") : !spirv.ptr<i32, Input>
  spirv.func @k() "None" {
    %p = spirv.mlir.addressof @lane : !spirv.ptr<i32, Input>
    %l = spirv.Load "Input" %p : i32
    %f = spirv.ConvertSToF %l : i32 to f32
    %r = spirv.GroupNonUniformFAdd <Subgroup> <Reduce> %f : f32 -> f32
    spirv.Return
  }
  spirv.EntryPoint "GLCompute" @k, @lane
  spirv.ExecutionMode @k "LocalSize", 64, 1, 1
}

// -----

// Nothing across a subgroup: any size runs it, nothing is added.
// CHECK-LABEL: spirv.module @plain
// CHECK-NOT: spirv.SpecConstant
// expected-remark @below {{cachet-spirv-subgroup-size: kernel 'k' uses no subgroup operation: it runs at any subgroup size}}
spirv.module @plain Logical GLSL450 requires #spirv.vce<v1.0, [Shader], []> {
  spirv.GlobalVariable @id built_in("LocalInvocationId") : !spirv.ptr<vector<3xi32>, Input>
  spirv.func @k() "None" {
    spirv.Return
  }
  spirv.EntryPoint "GLCompute" @k, @id
  spirv.ExecutionMode @k "LocalSize", 32, 1, 1
}

// -----

// Run twice (a module that already has the constant, of the same value):
// one constant.
// CHECK-LABEL: spirv.module @again
// CHECK-NEXT: spirv.SpecConstant @cachet_subgroup_size spec_id(1667326824) = 32 : i32
// CHECK-NOT: spirv.SpecConstant
// expected-remark @below {{compiled for subgroups of 32 lanes}}
spirv.module @again Logical GLSL450 requires #spirv.vce<v1.3, [Shader, GroupNonUniformShuffle], []> {
  spirv.SpecConstant @cachet_subgroup_size spec_id(1667326824) = 32 : i32
  spirv.func @k() "None" {
    %v = spirv.Constant 1.0 : f32
    %c4 = spirv.Constant 4 : i32
    %s = spirv.GroupNonUniformShuffle <Subgroup> %v, %c4 : f32, i32
    spirv.Return
  }
  spirv.EntryPoint "GLCompute" @k
  spirv.ExecutionMode @k "LocalSize", 32, 1, 1
}

// -----

// A constant of another value under the reserved SpecId: an error, not a
// second constant.
spirv.module @clash Logical GLSL450 requires #spirv.vce<v1.3, [Shader, GroupNonUniformShuffle], []> {
  // expected-error @below {{cachet-spirv-subgroup-size: this specialization constant clashes with the one that records the subgroup size (@cachet_subgroup_size, SpecId 1667326824 = 32 : i32)}}
  spirv.SpecConstant @other spec_id(1667326824) = 64 : i32
  spirv.func @k() "None" {
    %v = spirv.Constant 1.0 : f32
    %c4 = spirv.Constant 4 : i32
    %s = spirv.GroupNonUniformShuffle <Subgroup> %v, %c4 : f32, i32
    spirv.Return
  }
  spirv.EntryPoint "GLCompute" @k
  spirv.ExecutionMode @k "LocalSize", 32, 1, 1
}
