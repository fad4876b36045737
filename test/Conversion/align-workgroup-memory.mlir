// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(cachet-align-workgroup-memory))' | FileCheck %s
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(cachet-align-workgroup-memory{alignment=32}))' | FileCheck %s --check-prefix=A32
// RUN: not cachet-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(cachet-align-workgroup-memory{alignment=24}))' 2>&1 | FileCheck %s --check-prefix=BAD

// Every workgroup attribution without an alignment gets one; an explicit
// one stays.
// CHECK-LABEL: gpu.func @k
// CHECK-SAME: workgroup(%{{.*}} : memref<32x16xf16, #gpu.address_space<workgroup>> {llvm.align = 128 : i64}, %{{.*}} : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 4 : i64})
// A32: workgroup(%{{.*}} : memref<32x16xf16, #gpu.address_space<workgroup>> {llvm.align = 32 : i64}
// BAD: error: cachet-align-workgroup-memory: alignment 24 is not a positive power of two
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() workgroup(%t: memref<32x16xf16, #gpu.address_space<workgroup>>, %u: memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 4 : i64}) kernel {
      gpu.return
    }
  }
}
