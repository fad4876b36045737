// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(spirv.module(cachet-spirv-interface-version))' | FileCheck %s

// A storage buffer in the interface (as spirv-lower-abi-attrs lists it under
// a SPIR-V 1.4+ target) needs 1.4; capabilities and extensions stay.
// CHECK-LABEL: spirv.module @buffer
// CHECK-SAME: #spirv.vce<v1.4, [Shader], [SPV_KHR_storage_buffer_storage_class]>
spirv.module @buffer Logical GLSL450 requires #spirv.vce<v1.0, [Shader], [SPV_KHR_storage_buffer_storage_class]> {
  spirv.GlobalVariable @arg bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, StorageBuffer>
  spirv.GlobalVariable @id built_in("LocalInvocationId") : !spirv.ptr<vector<3xi32>, Input>
  spirv.func @k() "None" {
    spirv.Return
  }
  spirv.EntryPoint "GLCompute" @k, @arg, @id
  spirv.ExecutionMode @k "LocalSize", 32, 1, 1
}

// -----

// Inputs only: the 1.0 rule holds, nothing changes.
// CHECK-LABEL: spirv.module @inputs
// CHECK-SAME: #spirv.vce<v1.0, [Shader], []>
spirv.module @inputs Logical GLSL450 requires #spirv.vce<v1.0, [Shader], []> {
  spirv.GlobalVariable @id built_in("LocalInvocationId") : !spirv.ptr<vector<3xi32>, Input>
  spirv.func @k() "None" {
    spirv.Return
  }
  spirv.EntryPoint "GLCompute" @k, @id
  spirv.ExecutionMode @k "LocalSize", 32, 1, 1
}

// -----

// Already 1.4 or later: unchanged.
// CHECK-LABEL: spirv.module @newer
// CHECK-SAME: #spirv.vce<v1.6, [Shader], []>
spirv.module @newer Logical GLSL450 requires #spirv.vce<v1.6, [Shader], []> {
  spirv.GlobalVariable @shared : !spirv.ptr<!spirv.array<4 x f32>, Workgroup>
  spirv.func @k() "None" {
    spirv.Return
  }
  spirv.EntryPoint "GLCompute" @k, @shared
  spirv.ExecutionMode @k "LocalSize", 32, 1, 1
}
