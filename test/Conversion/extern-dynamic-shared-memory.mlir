// RUN: cachet-opt %s -split-input-file -cachet-extern-dynamic-shared-memory | FileCheck %s
// RUN: cachet-opt %s -split-input-file -cachet-extern-dynamic-shared-memory=alignment=256 | FileCheck %s --check-prefix=ALIGN
// RUN: not cachet-opt %s -split-input-file -cachet-extern-dynamic-shared-memory=alignment=24 2>&1 | FileCheck %s --check-prefix=BAD

// The dynamic shared-memory global of convert-gpu-to-nvvm becomes external
// and 128-byte aligned; a sized shared global, a zero-sized global in
// another address space and an already external one stay as they are.
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i8>
// CHECK: llvm.mlir.global internal @global_zero() {addr_space = 1 : i32} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global external @already() {addr_space = 3 : i32, alignment = 512 : i64} : !llvm.array<0 x i8>
// ALIGN: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 256 : i64}
// ALIGN: llvm.mlir.global external @already() {addr_space = 3 : i32, alignment = 512 : i64}
// BAD: error: cachet-extern-dynamic-shared-memory: alignment 24 is not a positive power of two
gpu.module @kernels {
  llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
  llvm.mlir.global internal @tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i8>
  llvm.mlir.global internal @global_zero() {addr_space = 1 : i32} : !llvm.array<0 x i8>
  llvm.mlir.global external @already() {addr_space = 3 : i32, alignment = 512 : i64} : !llvm.array<0 x i8>
}
