// cachet-lower-reductions: one workgroup per output of a row or full
// reduction, the row split over its threads and combined by a tree.
// RUN: cachet-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(cachet-lower-reductions{workgroup-size=64 max-workgroup-size=64 min-reduction-size=128}))' | FileCheck %s
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(cachet-lower-reductions{workgroup-size=64 min-reduction-size=128}))' 2>&1 >/dev/null | FileCheck %s --check-prefix=GROW
// max-unrolled-rounds=8: a row of 16 rounds is a loop again.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(cachet-lower-reductions{workgroup-size=64 max-workgroup-size=64 min-reduction-size=128 max-unrolled-rounds=8}))' 2>&1 >/dev/null | FileCheck %s --check-prefix=ROUNDS8
// ROUNDS8: 4 workgroups of 64 threads, one per output, each folding a row of 1024 values (arith.addf), partials combined
// RUN: not cachet-opt %s -pass-pipeline='builtin.module(func.func(cachet-lower-reductions{max-unrolled-rounds=-1}))' 2>&1 | FileCheck %s --check-prefix=INVALID-ROUNDS
// INVALID-ROUNDS: error: cachet-lower-reductions: max-unrolled-rounds -1 is negative
// RUN: not cachet-opt %s -pass-pipeline='builtin.module(func.func(cachet-lower-reductions{max-workgroup-size=96}))' 2>&1 | FileCheck %s --check-prefix=INVALID-MAX
// INVALID-MAX: error: cachet-lower-reductions: max-workgroup-size 96 is not a power of two
// RUN: not cachet-opt %s -pass-pipeline='builtin.module(func.func(cachet-lower-reductions{workgroup-size=48}))' 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: error: cachet-lower-reductions: workgroup-size 48 is not a power of two
// RUN: not cachet-opt %s -pass-pipeline='builtin.module(func.func(cachet-lower-reductions{subgroup-size=48}))' 2>&1 | FileCheck %s --check-prefix=INVALID-SUBGROUP
// INVALID-SUBGROUP: error: cachet-lower-reductions: subgroup-size 48 is not 0 or a power of two above 1
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(cachet-lower-reductions{workgroup-size=64 max-workgroup-size=64 fuse-neighbours=false}))' 2>/dev/null | FileCheck %s --check-prefix=NOFUSE
// subgroup-size=32 (NVVM): the tree's step of stride 32 in workgroup
// memory, then the first subgroup's five steps by shuffles (the same
// pairs), lane 0's total stored for the threads to read; an argmax keeps
// the whole tree.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(cachet-lower-reductions{workgroup-size=64 max-workgroup-size=64 subgroup-size=32}))' 2>/dev/null | FileCheck %s --check-prefix=SHFL
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(cachet-lower-reductions{workgroup-size=64 max-workgroup-size=64 subgroup-size=32}))' 2>&1 >/dev/null | FileCheck %s --check-prefix=SHFL-REMARK
// SHFL-REMARK: remark: cachet-lower-reductions: 1 workgroup of 64 threads, {{.*}}partials combined by a tree in workgroup memory down to one subgroup, then by shuffles
// SHFL-REMARK: remark: cachet-lower-reductions: 2 workgroups of 64 threads, {{.*}}(the first index of the maximum), partials combined by a tree in workgroup memory (a tie to the lower index)
// SHFL-LABEL: func.func @sum_of_squares
// SHFL: gpu.barrier
// SHFL: arith.cmpi ult, %{{.*}}, %c32
// SHFL: gpu.barrier
// SHFL: scf.if
// SHFL: %[[V:.*]] = memref.load %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>
// SHFL: %[[S:.*]], %{{.*}} = gpu.shuffle  down %[[V]], %c16_i32, %c32_i32 : f32
// SHFL: arith.addf %[[V]], %[[S]] : f32
// SHFL-COUNT-4: gpu.shuffle  down
// SHFL: memref.store %{{.*}}[%c0{{[_0-9]*}}] : memref<64xf32, #gpu.address_space<workgroup>>
// SHFL: gpu.barrier
// SHFL-LABEL: func.func @argmax
// SHFL-NOT: gpu.shuffle
// SHFL-LABEL: func.func @row_max
// SHFL: gpu.shuffle  down

// A sum of squares to a 0-d buffer (an RMSNorm over a vector): one
// workgroup, every thread folding every 64th value from 0.0.
// Up to max-workgroup-size threads where outputs are few, while each
// thread still folds more than 4 values: 1024 threads for one row of 4096,
// 256 for two rows of 1000 (argmax), 64 for 15 rows of 256.
// GROW: 1 workgroup of 1024 threads, one per output, each folding a row of 4096 values
// GROW: 2 workgroups of 256 threads, one per output, each folding a row of 1000 values
// GROW: 15 workgroups of 64 threads
// CHECK-LABEL: func.func @sum_of_squares
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c64{{.*}}, {{.*}}) workgroup(%[[P:.*]] : memref<64xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %c4096{{.*}} step %c64{{.*}} iter_args(%[[ACC:.*]] = %cst{{.*}}) -> (f32)
// CHECK: %[[X:.*]] = memref.load %{{.*}} : memref<4096xf16>
// CHECK: %[[E:.*]] = arith.extf %[[X]]
// CHECK: %[[SQ:.*]] = arith.mulf %[[E]], %[[E]]
// CHECK: %[[NEXT:.*]] = arith.addf %[[ACC]], %[[SQ]]
// CHECK: scf.yield %[[NEXT]]
// A thread past the row's end (none here) stores the identity, not the
// results of a loop that ran no iteration (uninitialized on SPIR-V).
// CHECK: %[[RAN:.*]] = arith.cmpi ult, %{{.*}}, %c4096
// CHECK: %[[PARTIAL:.*]] = arith.select %[[RAN]], %[[SUM]], %cst
// CHECK: memref.store %[[PARTIAL]], %[[P]]
// CHECK: gpu.barrier
// CHECK-COUNT-6: gpu.barrier
// CHECK: scf.if
// CHECK: %[[INIT:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK: %[[TOTAL:.*]] = memref.load %[[P]]
// CHECK: arith.addf %[[INIT]], %[[TOTAL]]
// CHECK: memref.store {{.*}}[] : memref<f32>
func.func @sum_of_squares(%x: memref<4096xf16>, %acc: memref<f32>) {
  // expected-remark @below {{cachet-lower-reductions: 1 workgroup of 64 threads, one per output, each folding a row of 4096 values (arith.addf), partials combined by a tree in workgroup memory}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>,
                                   affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<4096xf16>) outs(%acc : memref<f32>) {
  ^bb0(%in: f16, %out: f32):
    %e = arith.extf %in : f16 to f32
    %sq = arith.mulf %e, %e : f32
    %sum = arith.addf %out, %sq : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A greedy decoder's argmax over the logits of two rows (the first index
// of the maximum, as a front end writes it: cmpf ogt and two selects): a
// workgroup per row, each thread's (value, index) from (-inf, INT32_MAX),
// the tree taking the larger value and on a tie the lower index, thread 0
// stepping the outputs' initial values with the total as the payload does.
// CHECK-LABEL: func.func @argmax
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{.*}}, {{.*}}) workgroup(%[[PV:.*]] : memref<64xf32, #gpu.address_space<workgroup>>, %[[PI:.*]] : memref<64xi32, #gpu.address_space<workgroup>>)
// CHECK-DAG: arith.constant 0xFF800000 : f32
// CHECK-DAG: arith.constant 2147483647 : i32
// CHECK: scf.for {{.*}} -> (f32, i32)
// CHECK: arith.index_cast
// CHECK: arith.cmpf ogt
// CHECK: arith.select
// CHECK: arith.select
// CHECK: scf.if
// CHECK: %[[GT:.*]] = arith.cmpf ogt
// CHECK: %[[EQ:.*]] = arith.cmpf oeq
// CHECK: %[[LT:.*]] = arith.cmpi slt
// CHECK: %[[TIE:.*]] = arith.andi %[[EQ]], %[[LT]]
// CHECK: arith.ori %[[GT]], %[[TIE]]
// CHECK: scf.if
// CHECK: arith.cmpf ogt
// CHECK: memref.store {{.*}} : memref<2xf32>
// CHECK: memref.store {{.*}} : memref<2xi32>
func.func @argmax(%logits: memref<2x1000xf32>, %v: memref<2xf32>, %i: memref<2xi32>) {
  // expected-remark @below {{cachet-lower-reductions: 2 workgroups of 64 threads, one per output, each folding a row of 1000 values (the first index of the maximum), partials combined by a tree in workgroup memory (a tie to the lower index)}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%logits : memref<2x1000xf32>) outs(%v, %i : memref<2xf32>, memref<2xi32>) {
  ^bb0(%in: f32, %best: f32, %at: i32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %gt = arith.cmpf ogt, %in, %best : f32
    %nb = arith.select %gt, %in, %best : f32
    %ni = arith.select %gt, %ji, %at : i32
    linalg.yield %nb, %ni : f32, i32
  }
  return
}

// -----

// Row maxima of a [3][5][256] tensor into [5][3] (a transposed output):
// 15 workgroups, the block id delinearized into the two parallel indices;
// the max's identity is -inf and the term comes first, as in the payload.
// A row of 256 is 4 whole rounds of 64 threads: each thread's 4 terms are
// loaded first, then folded in order (no loop).
// CHECK-LABEL: func.func @row_max
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c15{{.*}},
// CHECK: %cst{{.*}} = arith.constant 0xFF800000 : f32
// CHECK-NOT: scf.for
// CHECK-COUNT-4: memref.load %{{.*}} : memref<3x5x256xf32>
// CHECK-NOT: scf.for
// CHECK: arith.maximumf %{{.*}}, %cst{{.*}} : f32
// CHECK-COUNT-3: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: scf.if
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<5x3xf32>
func.func @row_max(%s: memref<3x5x256xf32>, %m: memref<5x3xf32>) {
  // expected-remark @below {{15 workgroups of 64 threads}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d1, d0)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : memref<3x5x256xf32>) outs(%m : memref<5x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %max = arith.maximumf %in, %out : f32
    linalg.yield %max : f32
  }
  return
}

// -----

// The row's index in the payload (linalg.index) maps to the term's: the
// thread id plus 64 times the round (8 whole rounds of 512).
// CHECK-LABEL: func.func @indexed
// CHECK: %[[I:[a-z0-9]+]] = arith.addi %{{.*}}, %c448{{[_0-9]*}} : index
// CHECK: arith.index_cast %[[I]]
func.func @indexed(%x: memref<2x512xf32>, %y: memref<2xf32>) {
  // expected-remark @below {{2 workgroups of 64 threads}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x512xf32>) outs(%y : memref<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %t = arith.mulf %in, %f : f32
    %sum = arith.addf %out, %t : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// 16 whole rounds (a prefill's RMSNorm: rows of 4096 at 256 threads) are
// still loaded together; 32 are a loop of one load per iteration.
// CHECK-LABEL: func.func @sixteen_rounds
// CHECK-NOT: scf.for
// CHECK-COUNT-16: memref.load %{{.*}} : memref<4x1024xf32>
// CHECK-NOT: scf.for
// CHECK: gpu.terminator
// CHECK: scf.for
// CHECK: memref.load %{{.*}} : memref<4x2048xf32>
func.func @sixteen_rounds(%x: memref<4x1024xf32>, %y: memref<4xf32>, %x2: memref<4x2048xf32>, %y2: memref<4xf32>) {
  // expected-remark @below {{its 16 terms per thread loaded together (whole rounds)}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x1024xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sum = arith.addf %out, %in : f32
    linalg.yield %sum : f32
  }
  // expected-remark @below {{4 workgroups of 64 threads}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x2 : memref<4x2048xf32>) outs(%y2 : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sum = arith.addf %out, %in : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// Negative: short rows keep one thread per output.
// CHECK-LABEL: func.func @short
// CHECK: linalg.generic
func.func @short(%x: memref<8x64xf32>, %y: memref<8xf32>) {
  // expected-remark @below {{cachet-lower-reductions: one thread per output kept: rows of 64 values, fewer than min-reduction-size 128}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sum = arith.addf %out, %in : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// Negative: a contraction (a mat-vec as a generic) and an argmax (two
// outputs) are left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-2: linalg.generic
func.func @left_alone(%w: memref<16x256xf32>, %x: memref<256xf32>,
                      %y: memref<16xf32>, %v: memref<f32>, %i: memref<i32>) {
  // expected-remark @below {{one thread per output kept: a contraction}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%w, %x : memref<16x256xf32>, memref<256xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %p = arith.mulf %a, %b : f32
    %sum = arith.addf %out, %p : f32
    linalg.yield %sum : f32
  }
  // The last index of the maximum (oge): not the first-index argmax.
  // expected-remark @below {{one thread per output kept: two outputs that are not a first-index argmax (yield select(cmpf ogt t, v), select(.., index, i))}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>,
                                   affine_map<(d0) -> ()>,
                                   affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<256xf32>) outs(%v, %i : memref<f32>, memref<i32>) {
  ^bb0(%in: f32, %best: f32, %at: i32):
    %j = linalg.index 0 : index
    %ji = arith.index_cast %j : index to i32
    %gt = arith.cmpf oge, %in, %best : f32
    %nb = arith.select %gt, %in, %best : f32
    %ni = arith.select %gt, %ji, %at : i32
    linalg.yield %nb, %ni : f32, i32
  }
  return
}

// -----

// Negative: a payload whose output feeds more than the combine.
// CHECK-LABEL: func.func @not_a_fold
// CHECK: linalg.generic
func.func @not_a_fold(%x: memref<256xf32>, %y: memref<f32>) {
  // expected-remark @below {{one thread per output kept: the payload is not combine(output, term)}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>,
                                   affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<256xf32>) outs(%y : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.mulf %out, %in : f32
    %sum = arith.addf %out, %t : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// An RMSNorm as front ends write it (after bufferization): the fill of the
// sum, the sum of squares, rsqrt(sum / n + eps) per row and x * r * w. One
// kernel: the fill's 0.0 is the initial value, every thread computes r
// from the total and normalizes every 64th value of its row; the sum and
// r are read by nothing else, so neither is stored (their buffers go).
// (Function arguments may alias one another: %y, which the kernel
// writes, is a buffer of the function's own.)
// CHECK-LABEL: func.func @rms_norm
// CHECK-NOT: linalg.
// CHECK: memref.alloc() : memref<2x4096xbf16>
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{.*}}, {{.*}}) threads
// CHECK: scf.for {{.*}} to %c4096{{.*}} step %c64{{.*}} -> (f32)
// CHECK-COUNT-7: gpu.barrier
// CHECK: %[[TOTAL:.*]] = memref.load %{{.*}}[%c0{{.*}}] : memref<64xf32, #gpu.address_space<workgroup>>
// CHECK: %[[SUM:.*]] = arith.addf %cst{{.*}}, %[[TOTAL]]
// CHECK: %[[MEAN:.*]] = arith.divf %[[SUM]]
// CHECK: %[[VAR:.*]] = arith.addf %[[MEAN]]
// CHECK: %[[R:.*]] = math.rsqrt %[[VAR]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %c4096{{.*}} step %c64
// CHECK: %[[X:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<2x4096xbf16>
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<4096xbf16>
// CHECK: %[[XF:.*]] = arith.extf %[[X]]
// CHECK: arith.mulf %[[XF]], %[[R]]
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<2x4096xbf16>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.terminator
// With fuse-neighbours=false the fill and the two generics stay.
// NOFUSE-LABEL: func.func @rms_norm
// NOFUSE: linalg.fill
// NOFUSE: gpu.launch
// NOFUSE: linalg.generic
// NOFUSE: linalg.generic
func.func @rms_norm(%x: memref<2x4096xbf16>, %w: memref<4096xbf16>)
    -> memref<2x4096xbf16> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<2x4096xbf16>
  %ss = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%ss : memref<2xf32>)
  // expected-remark @below {{cachet-lower-reductions: 2 workgroups of 64 threads, one per output, each folding a row of 4096 values (arith.addf), partials combined by a tree in workgroup memory; the fill of its output before it in the kernel; the element-wise op over its output after it in the kernel; the op over rows that reads it broadcast in the kernel, 64 elements per thread}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x4096xbf16>) outs(%ss : memref<2xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %f = arith.extf %in : bf16 to f32
    %m = arith.mulf %f, %f : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %rms = memref.alloc() : memref<2xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>,
                                   affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%ss : memref<2xf32>) outs(%rms : memref<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.constant 4096.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %mean = arith.divf %in, %n : f32
    %var = arith.addf %mean, %eps : f32
    %r = math.rsqrt %var : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %rms, %w : memref<2x4096xbf16>, memref<2xf32>, memref<4096xbf16>)
      outs(%y : memref<2x4096xbf16>) {
  ^bb0(%in: bf16, %r: f32, %wv: bf16, %out: bf16):
    %f = arith.extf %in : bf16 to f32
    %m = arith.mulf %f, %r : f32
    %wf = arith.extf %wv : bf16 to f32
    %p = arith.mulf %m, %wf : f32
    %t = arith.truncf %p : f32 to bf16
    linalg.yield %t : bf16
  }
  return %y : memref<2x4096xbf16>
}

// -----

// The sum is read after the kernel and has no fill before it: every
// thread reads its initial value, a barrier, then thread 0 stores it. The
// row op (x - max, a softmax's first step) follows the reduction directly.
// CHECK-LABEL: func.func @stored_output
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}} : memref<3xf32>
// CHECK: arith.maximumf
// CHECK-COUNT-8: memref.load %{{.*}} : memref<3x512xf32>
// CHECK: arith.subf
// CHECK: memref.store {{.*}} : memref<3x512xf32>
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store {{.*}} : memref<3xf32>
// CHECK: gpu.terminator
// CHECK: memref.load {{.*}} : memref<3xf32>
func.func @stored_output(%x: memref<3x512xf32>)
    -> (f32, memref<3x512xf32>) {
  %m = memref.alloc() : memref<3xf32>
  %y = memref.alloc() : memref<3x512xf32>
  // expected-remark @below {{the op over rows that reads it broadcast in the kernel, 8 elements per thread}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<3x512xf32>) outs(%m : memref<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %mx = arith.maximumf %in, %acc : f32
    linalg.yield %mx : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : memref<3x512xf32>, memref<3xf32>)
      outs(%y : memref<3x512xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    linalg.yield %d : f32
  }
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<3xf32>
  return %v, %y : f32, memref<3x512xf32>
}

// -----

// Negative: the row op writes the reduction's input in place (x /= sum):
// other workgroups may still read it, so it stays a kernel of its own; the
// fill stays too, with an op that writes memory between it and the
// reduction.
// CHECK-LABEL: func.func @in_place_input
// CHECK: linalg.fill
// CHECK: memref.store
// CHECK: gpu.launch
// CHECK-NOT: arith.divf
// CHECK: gpu.terminator
// CHECK: linalg.generic
// CHECK: arith.divf
func.func @in_place_input(%x: memref<2x256xf32>, %s: memref<2xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  linalg.fill ins(%zero : f32) outs(%s : memref<2xf32>)
  memref.store %zero, %x[%c0, %c0] : memref<2x256xf32>
  // expected-remark @below {{partials combined by a tree in workgroup memory}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x256xf32>) outs(%s : memref<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<2x256xf32>, memref<2xf32>)
      outs(%x : memref<2x256xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %d = arith.divf %in, %sum : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// Negative: the row op reads the sums along its rows, not broadcast (each
// row element a different row's sum): not taken.
// CHECK-LABEL: func.func @not_broadcast
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK: linalg.generic
func.func @not_broadcast(%x: memref<256x256xf32>)
    -> memref<256x256xf32> {
  %s = memref.alloc() : memref<256xf32>
  %y = memref.alloc() : memref<256x256xf32>
  // expected-remark @below {{partials combined by a tree in workgroup memory}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x256xf32>) outs(%s : memref<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<256x256xf32>, memref<256xf32>)
      outs(%y : memref<256x256xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %d = arith.divf %in, %sum : f32
    linalg.yield %d : f32
  }
  return %y : memref<256x256xf32>
}

// -----

// A greedy decoder's argmax: the fills of both outputs (-inf, 0) before it
// are its initial values.
// CHECK-LABEL: func.func @argmax_fills
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK: arith.cmpf ogt, %{{.*}}, %cst
// CHECK: arith.select %{{.*}}, %{{.*}}, %c0_i32
func.func @argmax_fills(%logits: memref<1x1000xf32>, %v: memref<1xf32>,
                        %i: memref<1xi32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0 : i32
  linalg.fill ins(%zero : i32) outs(%i : memref<1xi32>)
  linalg.fill ins(%ninf : f32) outs(%v : memref<1xf32>)
  // expected-remark @below {{(a tie to the lower index); the fills of its outputs before it in the kernel}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%logits : memref<1x1000xf32>) outs(%v, %i : memref<1xf32>, memref<1xi32>) {
  ^bb0(%in: f32, %best: f32, %at: i32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %gt = arith.cmpf ogt, %in, %best : f32
    %nb = arith.select %gt, %in, %best : f32
    %ni = arith.select %gt, %ji, %at : i32
    linalg.yield %nb, %ni : f32, i32
  }
  return
}
