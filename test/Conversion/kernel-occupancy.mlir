// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(cachet-kernel-occupancy))' -verify-diagnostics | FileCheck %s
// The occupancy hint end to end: cachet-lower-attention marks the mma
// kernel's ops, the NVVM pipeline turns the marks into .minnctapersm.
// RUN: cachet-opt %S/../Integration/Inputs/attention-f16.mlir -cachet-compile="target=nvvm chip=sm_90 profile=h200 format=isa attention-options={occupancy-hint=true}" 2>&1 | FileCheck %s --check-prefix=HINT
// RUN: cachet-opt %S/../Integration/Inputs/attention-f16.mlir -cachet-compile="target=nvvm chip=sm_90 profile=h200 format=isa" 2>&1 | FileCheck %s --check-prefix=NOHINT
// HINT: registers for 3 workgroups per SM asked for (cachet.min_workgroups_per_sm)
// HINT: remark: cachet-kernel-occupancy: nvvm.minctasm = 3 (registers for 3 workgroups per SM)
// HINT: .minnctapersm 3
// NOHINT-NOT: minnctapersm
// NOHINT-NOT: cachet-kernel-occupancy

// The largest mark of a kernel becomes its nvvm.minctasm; the marks go.
// CHECK-LABEL: gpu.module @marked
// CHECK: gpu.func @k(%{{.*}}: memref<4xf32>) kernel attributes {nvvm.minctasm = 3 : i32}
// CHECK-NOT: cachet.min_workgroups_per_sm
// CHECK: gpu.return
gpu.module @marked {
  // expected-remark @+1 {{cachet-kernel-occupancy: nvvm.minctasm = 3 (registers for 3 workgroups per SM)}}
  gpu.func @k(%m: memref<4xf32>) kernel {
    %c0 = arith.constant {cachet.min_workgroups_per_sm = 2 : i64} 0 : index
    %x = memref.load %m[%c0] {cachet.min_workgroups_per_sm = 3 : i64} : memref<4xf32>
    memref.store %x, %m[%c0] : memref<4xf32>
    gpu.return
  }
}

// -----

// No mark, or a mark in a function that is not a kernel: no nvvm.minctasm
// (the mark is removed all the same).
// CHECK-LABEL: gpu.module @unmarked
// CHECK: gpu.func @k(%{{.*}}: memref<4xf32>) kernel {
// CHECK: gpu.func @helper(%{{.*}}: memref<4xf32>) {
// CHECK-NOT: cachet.min_workgroups_per_sm
// CHECK-NOT: nvvm.minctasm
gpu.module @unmarked {
  gpu.func @k(%m: memref<4xf32>) kernel {
    gpu.return
  }
  gpu.func @helper(%m: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %x = memref.load %m[%c0] {cachet.min_workgroups_per_sm = 3 : i64} : memref<4xf32>
    gpu.return
  }
}
