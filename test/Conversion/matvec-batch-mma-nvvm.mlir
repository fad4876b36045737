// Small-batch mat-muls on m16n8k16 mma.sync (NVVM, allow-mma-sync): a
// subgroup's 16 weight rows decoded to f16 pairs (or read as f16), x's
// rows read as f16, f32 accumulators added across the block's subgroups in
// workgroup memory by subgroup 0.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{allow-mma-sync=true},func.func(cachet-lower-matvec))' -verify-diagnostics | FileCheck %s
// Without small-batch-mma (or without allow-mma-sync): the FMA kernel.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{allow-mma-sync=true small-batch-mma=false},func.func(cachet-lower-matvec))' 2>&1 >/dev/null | FileCheck %s --check-prefix=OFF
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm chip=sm_90 format=isa" 2>/dev/null | FileCheck %s --check-prefix=PTX
// small-batch-mma-rows=4: f16 at 4 rows of x takes mma.sync too.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{allow-mma-sync=true small-batch-mma-rows=4},func.func(cachet-lower-matvec))' 2>&1 >/dev/null | FileCheck %s --check-prefix=ROWS4
// RUN: not cachet-opt %s -pass-pipeline='builtin.module(cachet-select-kernel-configs{small-batch-mma-rows=0})' 2>&1 | FileCheck %s --check-prefix=BADROWS
// ROWS4-NOT: remark: {{.*}}pays for q4_0 and q4_K blocks only
// ROWS4: matvec-batch-mma-nvvm.mlir:[[@LINE+82]]:3: remark: cachet-lower-matvec: mma-sync kernel: 4 subgroups per block share 16 weight rows, 4 rows of x; the f16 weight read in 16-byte loads; m16n8k16 mma.sync on f16
// BADROWS: bad small-batch-mma-rows 0: 1 or more
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{allow-mma-sync=true small-batch-mma-steps=2},func.func(cachet-lower-matvec))' 2>&1 >/dev/null | FileCheck %s --check-prefix=STEPS
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{allow-mma-sync=true small-batch-mma-steps=2},func.func(cachet-lower-matvec))' 2>/dev/null | FileCheck %s --check-prefix=STEPS-IR
// RUN: not cachet-opt %s -pass-pipeline='builtin.module(cachet-select-kernel-configs{small-batch-mma-steps=0})' 2>&1 | FileCheck %s --check-prefix=BADSTEPS
// OFF-COUNT-2: cachet-lower-matvec: subgroup kernel: 32 lanes per row
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX: bar.sync

// q4_0 weight [16][128] (4 blocks of 18 bytes a row), x [4][128] f16.
// CHECK-LABEL: func.func @q4_0
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{[_0-9]*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c128{{[_0-9]*}}, {{.*}}) workgroup(%{{.*}} : memref<512xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<2x2xf32>)
// CHECK: cachet.streaming_weight
// CHECK: vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<4x128xf16>, vector<8xf16>
// CHECK-COUNT-2: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store {{.*}} : memref<4x16xf32>
// CHECK-NOT: linalg.matmul
func.func @q4_0(%w: memref<16x72xi8>, %x: memref<4x128xf16>) -> memref<4x16xf32> {
  %c0 = arith.constant 0 : index
  %y = memref.alloc() : memref<4x16xf32>
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<16x128xf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<16x128xf16>) attrs = {cachet.block_dequantize = !cachet.q4_0} {
  ^bb0(%out: f16):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<16x72xi8>
    %f = arith.sitofp %b : i8 to f16
    linalg.yield %f : f16
  }
  linalg.fill ins(%cst : f32) outs(%y : memref<4x16xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: mma-sync kernel for a small-batch mat-mul of 4 rows of x: 4 subgroups per block share 16 weight rows, each taking every 4th step of 128 columns; the q4_0 weight decoded to f16 pairs in registers, x read as f16, m16n8k16 mma.sync with f32 accumulators, the subgroups' sums added in workgroup memory}}
  // expected-remark @+1 {{cachet-lower-matvec: mma-sync kernel: 4 subgroups per block share 16 weight rows, 4 rows of x; the q4_0 blocks decoded to f16 pairs in registers, the dequantized copy never written; m16n8k16 mma.sync on f16, f32 accumulators; the zero fill of the result is done in the kernel}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %a : memref<4x128xf16>, memref<16x128xf16>) outs(%y : memref<4x16xf32>)
  memref.dealloc %a : memref<16x128xf16>
  return %y : memref<4x16xf32>
}

// -----

// f16 weights, 8 rows of x: the weight rows read in 16-byte loads.
// CHECK-LABEL: func.func @f16
// CHECK: gpu.launch
// CHECK: vector.load %arg0[{{.*}}] {alignment = 16 : i64, cachet.streaming_weight} : memref<32x256xf16>, vector<8xf16>
// CHECK: nvgpu.mma.sync
func.func @f16(%w: memref<32x256xf16>, %x: memref<8x256xf16>, %y: memref<8x32xf32>) {
  // expected-remark @+2 {{cachet-select-kernel-configs: mma-sync kernel for a small-batch mat-mul of 8 rows of x}}
  // expected-remark @+1 {{cachet-lower-matvec: mma-sync kernel: 4 subgroups per block share 16 weight rows, 8 rows of x; the f16 weight read in 16-byte loads; m16n8k16 mma.sync on f16, f32 accumulators}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<8x256xf16>, memref<32x256xf16>) outs(%y : memref<8x32xf32>)
  return
}

// -----

// Not on mma.sync, each with the reason: rows not a multiple of 16, a
// bf16 weight (not measured against the FMA kernel), columns not a
// multiple of 128, and 4 rows of x over an f16 weight (at M <= 4 the mma
// kernel paid on the H200 for q4_0 and q4_K blocks only).
func.func @not_mma(%wd: memref<32x256xf16>, %xd: memref<4x256xf16>, %yd: memref<4x32xf32>,
                   %w: memref<24x256xf16>, %x: memref<4x256xf16>, %y: memref<4x24xf32>,
                   %wb: memref<32x256xbf16>, %xb: memref<4x256xbf16>, %yb: memref<4x32xf32>,
                   %wc: memref<32x64xf16>, %xc: memref<4x64xf16>, %yc: memref<4x32xf32>) {
  // expected-remark @+2 {{not on mma.sync: 24 weight rows are not a multiple of 16 (an mma's rows)}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<4x256xf16>, memref<24x256xf16>) outs(%y : memref<4x24xf32>)
  // expected-remark @+2 {{not on mma.sync: a bf16 weight keeps the FMA kernel (the mma-sync kernel is not measured against it for bf16)}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%xb, %wb : memref<4x256xbf16>, memref<32x256xbf16>) outs(%yb : memref<4x32xf32>)
  // expected-remark @+2 {{not on mma.sync: 64 columns are not a multiple of 128 (a subgroup's step)}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%xc, %wc : memref<4x64xf16>, memref<32x64xf16>) outs(%yc : memref<4x32xf32>)
  // expected-remark @+2 {{not on mma.sync: at 4 rows of x (fewer than small-batch-mma-rows, 5) it pays for q4_0 and q4_K blocks only (run 101)}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%xd, %wd : memref<4x256xf16>, memref<32x256xf16>) outs(%yd : memref<4x32xf32>)
  return
}

// -----

// small-batch-mma-steps=2: an f16 [16][1024] weight is 8 steps of 128
// columns, two per subgroup per iteration (4 subgroups x 2 divide 8): the
// 16 weight loads of both steps come before the mma.syncs, which add them
// in the same order as one step at a time. The other cases' 1 or 2 steps do
// not divide among 4 subgroups 2 at a time: one step, said in the remark.
// STEPS: remark: cachet-select-kernel-configs: mma-sync kernel for a small-batch mat-mul of 4 rows of x: {{.*}}; one step at a time: 1 steps do not divide among 4 subgroups 2 at a time
// STEPS: remark: cachet-lower-matvec: mma-sync kernel: 4 subgroups per block share 16 weight rows, 8 rows of x; the f16 weight read in 16-byte loads; m16n8k16 mma.sync on f16, f32 accumulators; 2 steps of 128 columns per subgroup loaded before their mma.syncs
// STEPS-IR-LABEL: func.func @steps
// STEPS-IR: scf.for %{{.*}} = %{{.*}} to %c8{{[_0-9]*}} step %c8{{[_0-9]*}}
// STEPS-IR-COUNT-16: vector.load %arg1[{{.*}}] {{.*}} : memref<16x1024xf16>, vector<8xf16>
// STEPS-IR-NOT: vector.load %arg1
// STEPS-IR: nvgpu.mma.sync
// BADSTEPS: bad small-batch-mma-steps 0: 1 or more
func.func @steps(%x: memref<8x1024xf16>, %w: memref<16x1024xf16>, %y: memref<8x16xf32>) {
  // expected-remark @+2 {{cachet-select-kernel-configs: mma-sync kernel for a small-batch mat-mul of 8 rows of x}}
  // expected-remark @+1 {{cachet-lower-matvec: mma-sync kernel: 4 subgroups per block share 16 weight rows, 8 rows of x; the f16 weight read in 16-byte loads; m16n8k16 mma.sync on f16, f32 accumulators}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<8x1024xf16>, memref<16x1024xf16>) outs(%y : memref<8x16xf32>)
  return
}
