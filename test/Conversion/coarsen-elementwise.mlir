// RUN: cachet-opt %s -split-input-file -cachet-coarsen-elementwise 2>/dev/null | FileCheck %s
// RUN: cachet-opt %s -split-input-file -cachet-coarsen-elementwise 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: cachet-opt %s -split-input-file -cachet-coarsen-elementwise=factor=1 2>&1 | FileCheck %s --check-prefix=ONE --implicit-check-not=remark
// RUN: cachet-opt %s -split-input-file -cachet-coarsen-elementwise=min-workgroups=1000000 2>&1 >/dev/null | FileCheck %s --check-prefix=HIGH --implicit-check-not="elements per thread"
// RUN: not cachet-opt %s -split-input-file -cachet-coarsen-elementwise=factor=0 2>&1 | FileCheck %s --check-prefix=BAD

// A prefill's residual add as the tiling leaves it (a bf16 row plus an f32
// GEMM result into a new bf16 row): 64 x 512 workgroups of 64 threads. Each
// thread takes 4 elements 64 apart; all 8 loads come before the 4 stores.
// REMARK: remark: cachet-coarsen-elementwise: 4 elements per thread along dimension 0, 64 apart: 32768 workgroups become 8192
// CHECK-LABEL: func.func @residual
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.parallel (%[[I:.*]], %[[R:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%[[C256]], %{{.*}}) {
// CHECK:   scf.parallel (%[[T:.*]], %{{.*}}) = (%{{.*}}, %{{.*}}) to (%[[C64]], %{{.*}}) step
// CHECK:     %[[T1:.*]] = arith.addi %[[T]], %{{.*}} : index
// CHECK:     %[[T2:.*]] = arith.addi %[[T]], %{{.*}} : index
// CHECK:     %[[T3:.*]] = arith.addi %[[T]], %{{.*}} : index
// CHECK:     %[[X0:.*]] = arith.addi %[[T]], %[[I]]
// CHECK:     memref.load %{{.*}}[%{{.*}}, %[[X0]]] : memref<512x4096xbf16>
// CHECK:     memref.load %{{.*}}[%{{.*}}, %[[X0]]] : memref<512x4096xf32>
// CHECK:     arith.truncf
// CHECK:     %[[X1:.*]] = arith.addi %[[T1]], %[[I]]
// CHECK:     memref.load %{{.*}}[%{{.*}}, %[[X1]]] : memref<512x4096xbf16>
// CHECK-COUNT-3: arith.truncf
// CHECK-NOT: memref.load
// CHECK:     memref.store %{{.*}}, %{{.*}}[%{{.*}}, %[[X0]]]
// CHECK:     memref.store %{{.*}}, %{{.*}}[%{{.*}}, %[[X1]]]
// CHECK-COUNT-2: memref.store
// CHECK-NOT: memref.store
// CHECK:     scf.reduce
// ONE-LABEL: func.func @residual
// ONE: step (%{{.*}}, %{{.*}})
// ONE-COUNT-1: memref.store
// BAD: error: cachet-coarsen-elementwise: factor must be at least 1 and min-workgroups at least 0, got 0 and 0
func.func @residual(%x: memref<512x4096xbf16>, %y: memref<512x4096xf32>)
    -> memref<512x4096xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %c4096 = arith.constant 4096 : index
  %out = memref.alloc() : memref<512x4096xbf16>
  scf.parallel (%i, %r) = (%c0, %c0) to (%c4096, %c512) step (%c64, %c1) {
    scf.parallel (%t, %u) = (%c0, %c0) to (%c64, %c1) step (%c1, %c1) {
      %col = arith.addi %t, %i : index
      %row = arith.addi %u, %r : index
      %a = memref.load %x[%row, %col] : memref<512x4096xbf16>
      %b = memref.load %y[%row, %col] : memref<512x4096xf32>
      %e = arith.extf %a : bf16 to f32
      %s = arith.addf %e, %b : f32
      %v = arith.truncf %s : f32 to bf16
      memref.store %v, %out[%row, %col] : memref<512x4096xbf16>
      scf.reduce
    }
    scf.reduce
  }
  return %out : memref<512x4096xbf16>
}

// -----

// A RoPE over [128][512][32] (head dim first): 4 tiles of 64 do not divide
// 128, so each thread takes 4 tokens (dimension 1, 1 apart) into a view of
// the new buffer.
// REMARK: remark: cachet-coarsen-elementwise: 4 elements per thread along dimension 1, 1 apart: 32768 workgroups become 8192
// CHECK-LABEL: func.func @rope
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = {{.*}} step (%{{.*}}, %[[C4]], %{{.*}})
// CHECK-COUNT-4: memref.load %{{.*}} : memref<512x32x128xf32>
// CHECK-COUNT-4: memref.store
func.func @rope(%q: memref<512x32x128xf32>) -> memref<512x4096xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c512 = arith.constant 512 : index
  %buf = memref.alloc() : memref<512x4096xf32>
  %out = memref.expand_shape %buf [[0], [1, 2]] output_shape [512, 32, 128]
      : memref<512x4096xf32> into memref<512x32x128xf32>
  scf.parallel (%d, %t, %h) = (%c0, %c0, %c0) to (%c128, %c512, %c32)
      step (%c64, %c1, %c1) {
    scf.parallel (%a, %b, %c) = (%c0, %c0, %c0) to (%c64, %c1, %c1)
        step (%c1, %c1, %c1) {
      %i = arith.addi %a, %d : index
      %j = arith.addi %b, %t : index
      %k = arith.addi %c, %h : index
      %v = memref.load %q[%j, %k, %i] : memref<512x32x128xf32>
      %w = arith.negf %v : f32
      memref.store %w, %out[%j, %k, %i] : memref<512x32x128xf32>
      scf.reduce
    }
    scf.reduce
  }
  return %buf : memref<512x4096xf32>
}

// -----

// Negative: a KV cache append stores into an argument, which a load might
// read: one element per thread, with the reason.
// REMARK: remark: cachet-coarsen-elementwise: one element per thread in 32768 workgroups: it stores to a buffer the function does not allocate (a load may read it)
// CHECK-LABEL: func.func @append
// CHECK: step (%{{.*}}, %{{.*}})
// CHECK-COUNT-1: memref.store
// CHECK-NOT: memref.store
func.func @append(%x: memref<512x4096xf32>, %cache: memref<512x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %c4096 = arith.constant 4096 : index
  scf.parallel (%i, %r) = (%c0, %c0) to (%c4096, %c512) step (%c64, %c1) {
    scf.parallel (%t, %u) = (%c0, %c0) to (%c64, %c1) step (%c1, %c1) {
      %col = arith.addi %t, %i : index
      %row = arith.addi %u, %r : index
      %a = memref.load %x[%row, %col] : memref<512x4096xf32>
      memref.store %a, %cache[%row, %col] : memref<512x4096xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// Negative: the body reads the buffer it writes (in place).
// REMARK: remark: cachet-coarsen-elementwise: one element per thread in 32768 workgroups: the body loads a buffer it stores to
// CHECK-LABEL: func.func @in_place
// CHECK-COUNT-1: memref.store
// CHECK-NOT: memref.store
func.func @in_place() -> memref<512x4096xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %c4096 = arith.constant 4096 : index
  %buf = memref.alloc() : memref<512x4096xf32>
  scf.parallel (%i, %r) = (%c0, %c0) to (%c4096, %c512) step (%c64, %c1) {
    scf.parallel (%t, %u) = (%c0, %c0) to (%c64, %c1) step (%c1, %c1) {
      %col = arith.addi %t, %i : index
      %row = arith.addi %u, %r : index
      %a = memref.load %buf[%row, %col] : memref<512x4096xf32>
      %b = arith.addf %a, %a : f32
      memref.store %b, %buf[%row, %col] : memref<512x4096xf32>
      scf.reduce
    }
    scf.reduce
  }
  return %buf : memref<512x4096xf32>
}

// -----

// Negative: a region in the body (a bounds guard), and a small grid (a
// decode step's [1][4096]: 64 workgroups) that keeps one element per
// thread, counted once per function.
// REMARK: remark: cachet-coarsen-elementwise: one element per thread in 32768 workgroups: 'scf.if' in the body has regions
// REMARK: remark: cachet-coarsen-elementwise: 1 tiled loop under 4096 workgroups keep one element per thread
// HIGH: remark: cachet-coarsen-elementwise: 2 tiled loops under 1000000 workgroups keep one element per thread
// CHECK-LABEL: func.func @guarded
// CHECK-COUNT-2: memref.store
// CHECK-NOT: memref.store
func.func @guarded(%n: index, %x: memref<512x4096xf32>)
    -> (memref<512x4096xf32>, memref<1x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %c4096 = arith.constant 4096 : index
  %buf = memref.alloc() : memref<512x4096xf32>
  scf.parallel (%i, %r) = (%c0, %c0) to (%c4096, %c512) step (%c64, %c1) {
    scf.parallel (%t, %u) = (%c0, %c0) to (%c64, %c1) step (%c1, %c1) {
      %col = arith.addi %t, %i : index
      %row = arith.addi %u, %r : index
      %in = arith.cmpi ult, %col, %n : index
      scf.if %in {
        %a = memref.load %x[%row, %col] : memref<512x4096xf32>
        memref.store %a, %buf[%row, %col] : memref<512x4096xf32>
      }
      scf.reduce
    }
    scf.reduce
  }
  %one = memref.alloc() : memref<1x4096xf32>
  scf.parallel (%i, %r) = (%c0, %c0) to (%c4096, %c1) step (%c64, %c1) {
    scf.parallel (%t, %u) = (%c0, %c0) to (%c64, %c1) step (%c1, %c1) {
      %col = arith.addi %t, %i : index
      %a = memref.load %x[%c0, %col] : memref<512x4096xf32>
      memref.store %a, %one[%c0, %col] : memref<1x4096xf32>
      scf.reduce
    }
    scf.reduce
  }
  return %buf, %one : memref<512x4096xf32>, memref<1x4096xf32>
}
