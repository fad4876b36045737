// RUN: cachet-opt %s -split-input-file -cachet-device-buffers | FileCheck %s

// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[X:.*]]: memref<16xf32>)
// CHECK: %[[DX:.*]] = gpu.alloc () : memref<16xf32>
// CHECK: gpu.memcpy %[[DX]], %[[X]]
// CHECK: %[[Y:.*]] = gpu.alloc () : memref<16xf32>
// CHECK: %[[T:.*]] = gpu.alloc () : memref<16xf32>
// CHECK: gpu.launch_func @k::@k {{.*}} args(%[[DX]] : memref<16xf32>, %[[Y]] : memref<16xf32>)
// CHECK: gpu.memcpy %[[T]], %[[Y]]
// CHECK: gpu.dealloc %[[Y]]
// CHECK: %[[H:.*]] = memref.alloc() : memref<16xf32>
// CHECK: gpu.memcpy %[[H]], %[[T]]
// CHECK-DAG: gpu.dealloc %[[DX]]
// CHECK-DAG: gpu.dealloc %[[T]]
// CHECK: return %[[H]]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<16xf32>, %b: memref<16xf32>) kernel { gpu.return }
  }
  func.func @f(%x: memref<16xf32>) -> memref<16xf32> {
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %y = memref.alloc() : memref<16xf32>
    %t = memref.alloc() : memref<16xf32>
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
        args(%x : memref<16xf32>, %y : memref<16xf32>)
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
        args(%t : memref<16xf32>, %t : memref<16xf32>)
    memref.copy %y, %t : memref<16xf32> to memref<16xf32>
    memref.dealloc %y : memref<16xf32>
    return %t : memref<16xf32>
  }
}

// -----

// Dynamic shapes keep their sizes.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[N:.*]] = memref.dim %{{.*}}, %c0
// CHECK: gpu.alloc (%[[N]]) : memref<?xf32>
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<?xf32>) kernel { gpu.return }
  }
  func.func @dynamic(%x: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    return
  }
}
