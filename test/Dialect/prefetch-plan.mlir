// RUN: cachet-opt %s -split-input-file | cachet-opt -split-input-file | FileCheck %s
// RUN: cachet-opt %s -split-input-file --verify-roundtrip

// Every parameter may be left out; the printer leaves out those at their
// defaults.
// CHECK-LABEL: func.func @empty
// CHECK: {cachet.prefetch_plan = #cachet.prefetch_plan<>}

module attributes {gpu.container_module} {
func.func @empty(%w: memref<16x16xf16>) {
  %c1 = arith.constant 1 : index
  gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%w : memref<16x16xf16>) {cachet.prefetch_plan = #cachet.prefetch_plan<next = none, pdl = false, trigger = start>}
  return
}
gpu.module @k {
  gpu.func @k(%w: memref<16x16xf16>) kernel {
    gpu.return
  }
}
}

// -----

// CHECK-LABEL: func.func @all
// CHECK: {cachet.prefetch_plan = #cachet.prefetch_plan<next = bulk, next_bytes = [4096, 0], ctas = 132, line = 64, pdl = true, own = l2, own_bytes = [8192], trigger = end, wait = after_weight_loads>}

module attributes {gpu.container_module} {
func.func @all(%w: memref<16x16xf16>) {
  %c1 = arith.constant 1 : index
  gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%w : memref<16x16xf16>) {cachet.prefetch_plan = #cachet.prefetch_plan<next = bulk, next_bytes = [4096, 0], ctas = 132, line = 64, pdl = true, own = l2, own_bytes = [8192], trigger = end, wait = after_weight_loads>}
  return
}
gpu.module @k {
  gpu.func @k(%w: memref<16x16xf16>) kernel {
    gpu.return
  }
}
}
