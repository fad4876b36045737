// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(cachet-guard-zero-trip-loops))' 2>/dev/null | FileCheck %s
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(cachet-guard-zero-trip-loops))' 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// A loop over a run-time count of key tiles carrying a row max and sum:
// when it runs no iteration, its results are the initial values.
// REMARK: remark: cachet-guard-zero-trip-loops: 1 loop with a run-time trip count give their initial values when they run no iteration
// CHECK-LABEL: gpu.func @tiles
// CHECK: %[[R:.*]]:2 = scf.for %{{.*}} = %[[LB:.*]] to %[[UB:.*]] step
// CHECK-NEXT: %[[M:.*]] = arith.maximumf
// CHECK: }
// CHECK-NEXT: %[[RAN:.*]] = arith.cmpi slt, %[[LB]], %[[UB]] : index
// CHECK-NEXT: %[[G:.*]]:2 = scf.if %[[RAN]] -> (f32, f32) {
// CHECK-NEXT:   scf.yield %[[R]]#0, %[[R]]#1 : f32, f32
// CHECK-NEXT: } else {
// CHECK-NEXT:   scf.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[G]]#0
// CHECK-NEXT: memref.store %[[G]]#1
gpu.module @kernels {
  gpu.func @tiles(%out: memref<2xf32>, %tiles: index, %x: f32) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %ninf = arith.constant 0xFF800000 : f32
    %zero = arith.constant 0.0 : f32
    %r:2 = scf.for %t = %c0 to %tiles step %c1
        iter_args(%m = %ninf, %s = %zero) -> (f32, f32) {
      %m1 = arith.maximumf %m, %x : f32
      %s1 = arith.addf %s, %x : f32
      scf.yield %m1, %s1 : f32, f32
    }
    memref.store %r#0, %out[%c0] : memref<2xf32>
    memref.store %r#1, %out[%c1] : memref<2xf32>
    gpu.return
  }
}

// -----

// Constant bounds that run at least once, an unsigned compare, and a loop
// without results: nothing to guard but the unsigned loop, compared
// unsigned.
// CHECK-LABEL: gpu.func @others
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-NOT: scf.if
// CHECK: scf.for unsigned
// CHECK: arith.cmpi ult
// CHECK-NEXT: scf.if
// CHECK-NOT: scf.if
gpu.module @others {
  gpu.func @others(%out: memref<4xf32>, %n: index, %x: f32) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    %a = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %zero) -> (f32) {
      %s1 = arith.addf %s, %x : f32
      scf.yield %s1 : f32
    }
    %b = scf.for unsigned %i = %c0 to %n step %c1 iter_args(%s = %zero) -> (f32) {
      %s1 = arith.addf %s, %x : f32
      scf.yield %s1 : f32
    }
    scf.for %i = %c0 to %n step %c1 {
      memref.store %x, %out[%i] : memref<4xf32>
    }
    memref.store %a, %out[%c0] : memref<4xf32>
    memref.store %b, %out[%c1] : memref<4xf32>
    gpu.return
  }
}

// -----

// A cooperative matrix carried by the loop: scf.if carries it as well.
// CHECK-LABEL: gpu.func @matrix
// CHECK: scf.if %{{.*}} -> (!gpu.mma_matrix<16x16xf16, "COp">)
gpu.module @matrix {
  gpu.func @matrix(%a: memref<16x16xf16>, %n: index) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %m0 = gpu.subgroup_mma_load_matrix %a[%c0, %c0] {leadDimension = 16 : index}
        : memref<16x16xf16> -> !gpu.mma_matrix<16x16xf16, "COp">
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%m = %m0)
        -> (!gpu.mma_matrix<16x16xf16, "COp">) {
      scf.yield %m : !gpu.mma_matrix<16x16xf16, "COp">
    }
    gpu.subgroup_mma_store_matrix %r, %a[%c0, %c0] {leadDimension = 16 : index}
        : !gpu.mma_matrix<16x16xf16, "COp">, memref<16x16xf16>
    gpu.return
  }
}
