// RUN: cachet-opt %s -split-input-file -cachet-scalar-kernel-arguments | FileCheck %s

// An index argument travels as i32 in a one-element device buffer, written
// before the launch and freed after it; the kernel loads it at entry.

// CHECK-LABEL: gpu.func @k
// CHECK-SAME: (%[[BUF:.*]]: memref<16xf32>, %[[POSBUF:.*]]: memref<1xi32>)
// CHECK: %[[V:.*]] = memref.load %[[POSBUF]][%{{.*}}] : memref<1xi32>
// CHECK: %[[POS:.*]] = arith.index_cast %[[V]] : i32 to index
// CHECK: memref.load %[[BUF]][%[[POS]]]
// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[B:.*]]: memref<16xf32>, %[[P:.*]]: index)
// CHECK: %[[H:.*]] = memref.alloca() : memref<1xi32>
// CHECK: %[[PI:.*]] = arith.index_cast %[[P]] : index to i32
// CHECK: memref.store %[[PI]], %[[H]]
// CHECK: %[[D:.*]] = gpu.alloc () : memref<1xi32>
// CHECK: gpu.memcpy %[[D]], %[[H]]
// CHECK: gpu.launch_func @m::@k {{.*}} args(%[[B]] : memref<16xf32>, %[[D]] : memref<1xi32>)
// CHECK: gpu.dealloc %[[D]]
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%buf: memref<16xf32>, %pos: index) kernel {
      %v = memref.load %buf[%pos] : memref<16xf32>
      memref.store %v, %buf[%pos] : memref<16xf32>
      gpu.return
    }
  }
  func.func @f(%b: memref<16xf32>, %p: index) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @m::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%b : memref<16xf32>, %p : index)
    return
  }
}

// -----

// A kernel without scalar arguments is left alone.

// CHECK-LABEL: gpu.func @plain
// CHECK-SAME: (%{{.*}}: memref<16xf32>)
// CHECK-NOT: gpu.alloc
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @plain(%buf: memref<16xf32>) kernel {
      gpu.return
    }
  }
  func.func @g(%b: memref<16xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @m::@plain blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%b : memref<16xf32>)
    return
  }
}
