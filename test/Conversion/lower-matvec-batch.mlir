// Small-batch mat-muls (M <= small-batch rows of x, a batch of tokens) that
// read their weight transposed, as front ends write `x W^T`: the mat-vec
// kernel, each decoded weight slice multiplied with every row of x, one
// accumulator per (weight row, row of x).
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs,func.func(cachet-lower-matvec))' -verify-diagnostics | FileCheck %s
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{small-batch=0 gemm=false},func.func(cachet-lower-matvec))' 2>&1 >/dev/null | FileCheck %s --check-prefix=NONE
// RUN: not cachet-opt %s -pass-pipeline='builtin.module(cachet-select-kernel-configs{small-batch=-1})' 2>&1 | FileCheck %s --check-prefix=BAD
// small-batch-loads=8: at 4 rows of x, 2 loads in flight (8 / 4).
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{small-batch-loads=8},func.func(cachet-lower-matvec))' 2>&1 >/dev/null | FileCheck %s --check-prefix=LOADS8
// RUN: not cachet-opt %s -pass-pipeline='builtin.module(cachet-select-kernel-configs{small-batch-loads=-1})' 2>&1 | FileCheck %s --check-prefix=BADLOADS
// LOADS8: remark: cachet-select-kernel-configs: subgroup kernel on q8_0 blocks decoded in registers (never materialized): 32 lanes per row, 4 subgroups per block, 2 (paired: 2) slices of 8 values per lane in flight, 2 rows per subgroup; a small-batch mat-mul: each weight slice multiplied with the 4 rows of x
// BADLOADS: bad small-batch-loads -1: 0 (no cap) or more
// The NVVM kernel: the packed q8_0 words decoded once, fused multiply-adds
// for each of the 4 rows of x.
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm chip=sm_90 format=isa" 2>/dev/null | FileCheck %s --check-prefix=PTX
// BAD: bad small-batch -1: 0 (none) or more
// stage-x (x in workgroup memory, or quantized there to 8-bit blocks) takes
// a mat-vec's x; a mat-mul keeps its rows of x in global memory.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{stage-x=true},func.func(cachet-lower-matvec))' 2>&1 >/dev/null | FileCheck %s --check-prefix=STAGE
// STAGE: stage-x not taken: x is quantized to 8-bit blocks for a mat-vec, not for a mat-mul's rows of x
// STAGE: x not staged: stage-x takes a mat-vec's x
// NONE: generic kernel: a mat-mul of 4 rows of x, more than small-batch (0)
// NONE-COUNT-2: generic kernel: a mat-mul of 2 rows of x, more than small-batch (0)
// NONE: a mat-mul of 16 rows of x, more than small-batch (0)
// PTX: ld.global.{{(nc.)?}}b32
// PTX: fma.rn.f32

// q8_0 weight [8][128], x [4][128] f16: x loaded at [c, k] for each row of
// x, one f32 accumulator per (weight row, row of x), y stored at [c, row].
// CHECK-LABEL: func.func @q8_0
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch
// CHECK: vector.load %arg0[{{.*}}] {alignment = 4 : i64, cachet.streaming_weight} : memref<8x136xi8>, vector<4xi8>
// CHECK: vector.load %arg1[%c0{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<4x128xf16>, vector<8xf16>
// CHECK: vector.load %arg1[%c1{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<4x128xf16>, vector<8xf16>
// CHECK: vector.load %arg1[%c2{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<4x128xf16>, vector<8xf16>
// CHECK: vector.load %arg1[%c3{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<4x128xf16>, vector<8xf16>
// CHECK-COUNT-8: vector.fma {{.*}} : vector<1xf32>
// CHECK: gpu.shuffle xor
// CHECK: memref.store %{{.*}}, %{{.*}}[%c0{{.*}}, %{{.*}}] : memref<4x8xf32>
// CHECK: memref.store %{{.*}}, %{{.*}}[%c3{{.*}}, %{{.*}}] : memref<4x8xf32>
// CHECK-NOT: linalg.matmul
func.func @q8_0(%w: memref<8x136xi8>, %x: memref<4x128xf16>) -> memref<4x8xf32> {
  %c0 = arith.constant 0 : index
  %y = memref.alloc() : memref<4x8xf32>
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<8x128xf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<8x128xf16>) attrs = {cachet.block_dequantize = !cachet.q8_0} {
  ^bb0(%out: f16):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<8x136xi8>
    %f = arith.sitofp %b : i8 to f16
    linalg.yield %f : f16
  }
  linalg.fill ins(%cst : f32) outs(%y : memref<4x8xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel on q8_0 blocks decoded in registers (never materialized): 32 lanes per row, 4 subgroups per block, 4 (paired: 2) slices of 8 values per lane in flight, 2 rows per subgroup; a small-batch mat-mul: each weight slice multiplied with the 4 rows of x}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel: 32 lanes per row, 4 subgroups per block, 4 q8_0 slices of 8 values per lane in flight, 2 rows per subgroup; the blocks decoded in registers, the dequantized copy never written; a small-batch mat-mul: each weight slice multiplied with the 4 rows of x, an accumulator each; the zero fill of the result is done in the kernel}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %a : memref<4x128xf16>, memref<8x128xf16>) outs(%y : memref<4x8xf32>)
  memref.dealloc %a : memref<8x128xf16>
  return %y : memref<4x8xf32>
}

// -----

// f16 weights, gate and up over the same 2 rows of x in one kernel with
// silu(gate) * up in its epilogue (a 2-D element-wise generic over the
// results), stored at [c, row] by the lane that stores the results.
// CHECK-LABEL: func.func @gate_up
// CHECK: gpu.launch
// CHECK: vector.load %arg1{{.*}}cachet.streaming_weight
// CHECK-NEXT: vector.load %arg2{{.*}}cachet.streaming_weight
// CHECK: vector.load %arg0[%c0{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<2x256xf16>, vector<8xf16>
// CHECK: vector.load %arg0[%c1{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<2x256xf16>, vector<8xf16>
// CHECK-COUNT-8: vector.fma {{.*}} : vector<1xf32>
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %{{.*}}[%c0{{.*}}, %{{.*}}] : memref<2x64xf32>
// CHECK: memref.store %{{.*}}, %{{.*}}[%c0{{.*}}, %{{.*}}] : memref<2x64xf32>
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %{{.*}}[%c0{{.*}}, %{{.*}}] : memref<2x64xf16>
// CHECK: memref.store %{{.*}}, %{{.*}}[%c1{{.*}}, %{{.*}}] : memref<2x64xf32>
// CHECK-NOT: linalg.
// CHECK: return
#id2 = affine_map<(m, i) -> (m, i)>
func.func @gate_up(%x: memref<2x256xf16>, %wg: memref<64x256xf16>, %wu: memref<64x256xf16>) -> memref<2x64xf16> {
  %z = arith.constant 0.0 : f32
  %g = memref.alloc() : memref<2x64xf32>
  linalg.fill ins(%z : f32) outs(%g : memref<2x64xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel: 32 lanes per row, 4 subgroups per block, 4 (paired: 8) 16-byte loads per lane in flight; a small-batch mat-mul: each weight slice multiplied with the 2 rows of x}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel: 32 lanes per row, 4 subgroups per block, 8 16-byte loads per lane in flight, 1 rows per subgroup; a small-batch mat-mul: each weight slice multiplied with the 2 rows of x, an accumulator each; the zero fill of the result is done in the kernel; one kernel for 2 mat-vecs over the same x, 2 of them with 64 rows computed by the same subgroups}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wg : memref<2x256xf16>, memref<64x256xf16>) outs(%g : memref<2x64xf32>)
  %u = memref.alloc() : memref<2x64xf32>
  linalg.fill ins(%z : f32) outs(%u : memref<2x64xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{one kernel for 2 mat-vecs over the same x, 2 of them with 64 rows}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wu : memref<2x256xf16>, memref<64x256xf16>) outs(%u : memref<2x64xf32>)
  %h = memref.alloc() : memref<2x64xf16>
  // expected-remark @+1 {{cachet-lower-matvec: done by the mat-vec kernel before it, in the lane that stores each row}}
  linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%g, %u : memref<2x64xf32>, memref<2x64xf32>) outs(%h : memref<2x64xf16>) {
  ^bb0(%gv: f32, %uv: f32, %o: f16):
    %one = arith.constant 1.0 : f32
    %ng = arith.negf %gv : f32
    %ex = math.exp %ng : f32
    %den = arith.addf %one, %ex : f32
    %sig = arith.divf %gv, %den : f32
    %p = arith.mulf %sig, %uv : f32
    %t = arith.truncf %p : f32 to f16
    linalg.yield %t : f16
  }
  return %h : memref<2x64xf16>
}

// -----

// More rows of x than small-batch (a prefill): a GEMM (without
// allow-mma-sync the tiled one, gemm-tiled.mlir), with a remark; a dynamic
// batch keeps the generic lowering. A mat-mul reading its weight in place
// (`x W`, the default maps) is no mat-vec: left alone, no remark.
// CHECK-LABEL: func.func @not_small
// CHECK: gpu.launch
// CHECK-COUNT-2: linalg.matmul
// CHECK-NOT: gpu.launch
func.func @not_small(%w: memref<64x256xf16>, %x: memref<16x256xf16>, %y: memref<16x64xf32>,
                     %xd: memref<?x256xf16>, %yd: memref<?x64xf32>,
                     %wk: memref<256x64xf16>, %x4: memref<4x256xf16>, %y4: memref<4x64xf32>) {
  // expected-remark @+2 {{cachet-select-kernel-configs: tiled GEMM for a mat-mul of 16 rows of x}}
  // expected-remark @+1 {{cachet-lower-matvec: tiled GEMM: 1 x 1 workgroups of 256 threads}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<16x256xf16>, memref<64x256xf16>) outs(%y : memref<16x64xf32>)
  // expected-remark @+1 {{cachet-select-kernel-configs: generic kernel: a mat-mul with a dynamic number of rows of x}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%xd, %w : memref<?x256xf16>, memref<64x256xf16>) outs(%yd : memref<?x64xf32>)
  linalg.matmul ins(%x4, %wk : memref<4x256xf16>, memref<256x64xf16>) outs(%y4 : memref<4x64xf32>)
  return
}
