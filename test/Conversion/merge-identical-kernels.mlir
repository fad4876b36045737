// RUN: cachet-opt %s -cachet-merge-identical-kernels 2>/dev/null | FileCheck %s
// RUN: cachet-opt %s -cachet-merge-identical-kernels 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: cachet-opt %s -cachet-merge-identical-kernels=max-compare-bytes=10 2>&1 | FileCheck %s --check-prefix=SMALL --implicit-check-not=remark

// Two layers' copies of one kernel, and a different kernel: the copy's
// launch uses the first module, which is kept; the different one stays.
// REMARK: remark: cachet-merge-identical-kernels: @k stands for 1 identical kernel module: their launches use it, and it is compiled once
// CHECK: gpu.module @k
// CHECK-NOT: gpu.module @k_0
// CHECK: gpu.module @k_1
// CHECK: func.func @host
// CHECK: gpu.launch_func  @k::@k
// CHECK: gpu.launch_func  @k::@k
// CHECK: gpu.launch_func  @k_1::@k
// SMALL: gpu.module @k_0
// SMALL: gpu.launch_func  @k_0::@k
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%buf: memref<16xf32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %buf[%t] : memref<16xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %buf[%t] : memref<16xf32>
      gpu.return
    }
  }
  gpu.module @k_0 {
    gpu.func @k(%buf: memref<16xf32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %buf[%t] : memref<16xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %buf[%t] : memref<16xf32>
      gpu.return
    }
  }
  gpu.module @k_1 {
    gpu.func @k(%buf: memref<16xf32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %buf[%t] : memref<16xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %buf[%t] : memref<16xf32>
      gpu.return
    }
  }
  func.func @host(%a: memref<16xf32>, %b: memref<16xf32>) {
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%a : memref<16xf32>)
    gpu.launch_func @k_0::@k blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%b : memref<16xf32>)
    gpu.launch_func @k_1::@k blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%b : memref<16xf32>)
    return
  }
}
