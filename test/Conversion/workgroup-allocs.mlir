// RUN: cachet-opt %s -pass-pipeline='builtin.module(gpu.module(cachet-workgroup-allocs))' | FileCheck %s

// Workgroup attributions become allocations in the Workgroup storage class
// at the start of the kernel.
// CHECK-LABEL: gpu.func @k
// CHECK-SAME: (%[[A:.*]]: memref<64xf16>) kernel
// CHECK-NEXT: %[[T:.*]] = memref.alloc() : memref<4x16xf16, #spirv.storage_class<Workgroup>>
// CHECK: memref.store %{{.*}}, %[[T]]
// CHECK-NOT: workgroup(
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%a: memref<64xf16>) workgroup(%t: memref<4x16xf16, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<64xf16>
      memref.store %v, %t[%c0, %c0] : memref<4x16xf16, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}
