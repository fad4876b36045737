// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(spirv.module(cachet-hoist-spirv-variables))' | FileCheck %s

// Variables move to the start of the entry block in their order (the one
// inside the loop too); one with an initializer stays.
// CHECK-LABEL: spirv.func @nested
// CHECK-NEXT: spirv.Variable : !spirv.ptr<i32, Function>
// CHECK-NEXT: spirv.Variable : !spirv.ptr<f32, Function>
// CHECK: spirv.mlir.loop
// CHECK-NOT: spirv.Variable : !spirv.ptr<f32, Function>
// CHECK: spirv.Variable init
spirv.module Logical GLSL450 requires #spirv.vce<v1.0, [Shader], []> {
  spirv.func @nested(%n: i32) "None" {
    %zero = spirv.Constant 0 : i32
    %one = spirv.Constant 1 : i32
    %acc = spirv.Variable : !spirv.ptr<i32, Function>
    spirv.mlir.loop {
      spirv.Branch ^header(%zero : i32)
    ^header(%i: i32):
      %cond = spirv.SLessThan %i, %n : i32
      spirv.BranchConditional %cond, ^body, ^merge
    ^body:
      %v = spirv.Variable : !spirv.ptr<f32, Function>
      %w = spirv.Variable init(%one) : !spirv.ptr<i32, Function>
      %next = spirv.IAdd %i, %one : i32
      spirv.Branch ^header(%next : i32)
    ^merge:
      spirv.mlir.merge
    }
    spirv.Return
  }
}
