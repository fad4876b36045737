// Mat-vecs and one-token mat-muls over blocks dequantized to bf16 (a bf16
// model's quantized weights) on m16n8k16 mma.sync (NVVM, allow-mma-sync,
// bf16-block-mma): each lane's slices decoded in f32 and rounded to bf16
// pairs as the dequantize rounds them, x read as bf16 (a mat-vec's x in
// every column of B, column 0 stored), f32 accumulators.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{allow-mma-sync=true bf16-block-mma=true},func.func(cachet-lower-matvec))' -verify-diagnostics | FileCheck %s
// bf16-block-mma=false: the FMA kernel, also for the one-token mat-mul
// (not for a q4_0 mat-vec: below).
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{allow-mma-sync=true bf16-block-mma=false},func.func(cachet-lower-matvec))' 2>&1 >/dev/null | FileCheck %s --check-prefix=OFF
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm chip=sm_90 format=isa matvec-options={bf16-block-mma=true}" 2>/dev/null | FileCheck %s --check-prefix=PTX
// Without the option a mat-vec over q4_0 blocks takes mma.sync, q8_0's the
// FMA kernel.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{allow-mma-sync=true})' 2>&1 >/dev/null | FileCheck %s --check-prefix=DEFAULT
// DEFAULT: matvec-bf16-mma-nvvm.mlir:[[@LINE+38]]:3: remark: cachet-select-kernel-configs: subgroup kernel on q8_0 blocks decoded in registers
// OFF: matvec-bf16-mma-nvvm.mlir:[[@LINE+37]]:3: remark: cachet-select-kernel-configs: subgroup kernel on q8_0 blocks decoded in registers
// OFF: matvec-bf16-mma-nvvm.mlir:[[@LINE+66]]:3: remark: cachet-select-kernel-configs: subgroup kernel on q4_0 blocks decoded in registers {{.*}}; a mat-mul of one row of x (a mat-vec)
// OFF-NOT: {{[0-9]+}}:3: remark: cachet-select-kernel-configs: mma-sync kernel for a small-batch
// PTX: cvt.rn.bf16x2.f32
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// A q8_0 weight [32][256] (8 blocks of 34 bytes a row) to bf16, x [256]
// bf16: two blocks of 16 rows; x read as vector<8xbf16> from the 1-D x;
// y[row] stored by the lanes holding column 0.
// CHECK-LABEL: func.func @q8_0_matvec
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{[_0-9]*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c128{{[_0-9]*}}, {{.*}})
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<2x2xf32>)
// CHECK: cachet.streaming_weight
// CHECK: arith.truncf {{.*}} : vector<32xf32> to vector<32xbf16>
// CHECK: vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<256xbf16>, vector<8xbf16>
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store {{.*}}[{{%[a-z0-9_]+}}] : memref<32xf32>
// CHECK-NOT: linalg.matvec
func.func @q8_0_matvec(%w: memref<32x272xi8>, %x: memref<256xbf16>) -> memref<32xf32> {
  %c0 = arith.constant 0 : index
  %y = memref.alloc() : memref<32xf32>
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<32x256xbf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<32x256xbf16>) attrs = {cachet.block_dequantize = !cachet.q8_0} {
  ^bb0(%out: bf16):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<32x272xi8>
    %f = arith.sitofp %b : i8 to bf16
    linalg.yield %f : bf16
  }
  linalg.fill ins(%cst : f32) outs(%y : memref<32xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: mma-sync kernel for a mat-vec (x in column 0 of the mma's B): 4 subgroups per block share 16 weight rows, each taking every 4th step of 128 columns; the q8_0 weight decoded to bf16 pairs in registers, x read as bf16, m16n8k16 mma.sync with f32 accumulators, the subgroups' sums added in workgroup memory}}
  // expected-remark @+1 {{cachet-lower-matvec: mma-sync kernel: 4 subgroups per block share 16 weight rows, a mat-vec (x in column 0 of the mma's B); the q8_0 blocks decoded to bf16 pairs in registers, the dequantized copy never written; m16n8k16 mma.sync on bf16, f32 accumulators; the zero fill of the result is done in the kernel}}
  linalg.matvec ins(%a, %x : memref<32x256xbf16>, memref<256xbf16>) outs(%y : memref<32xf32>)
  memref.dealloc %a : memref<32x256xbf16>
  return %y : memref<32xf32>
}

// -----

// A one-token mat-mul (how a decoder's linear layer is written: x [1][K])
// over q4_0 blocks to bf16: the same kernel, y[0][row] stored.
// CHECK-LABEL: func.func @q4_0_one_token
// CHECK: gpu.launch
// CHECK: vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<1x128xbf16>, vector<8xbf16>
// CHECK: nvvm.mma.sync
// CHECK: memref.store {{.*}} : memref<1x16xf32>
func.func @q4_0_one_token(%w: memref<16x72xi8>, %x: memref<1x128xbf16>) -> memref<1x16xf32> {
  %c0 = arith.constant 0 : index
  %y = memref.alloc() : memref<1x16xf32>
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<16x128xbf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<16x128xbf16>) attrs = {cachet.block_dequantize = !cachet.q4_0} {
  ^bb0(%out: bf16):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<16x72xi8>
    %f = arith.sitofp %b : i8 to bf16
    linalg.yield %f : bf16
  }
  linalg.fill ins(%cst : f32) outs(%y : memref<1x16xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: mma-sync kernel for a small-batch mat-mul of 1 rows of x}}
  // expected-remark @+1 {{cachet-lower-matvec: mma-sync kernel: 4 subgroups per block share 16 weight rows, 1 rows of x; the q4_0 blocks decoded to bf16 pairs in registers}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %a : memref<1x128xbf16>, memref<16x128xbf16>) outs(%y : memref<1x16xf32>)
  memref.dealloc %a : memref<16x128xbf16>
  return %y : memref<1x16xf32>
}

// -----

// A mat-vec over q4_0 blocks to bf16: on mma.sync without the option too
// (q4_0 paid on an H100, run 122; q8_0 did not).
// CHECK-LABEL: func.func @q4_0_matvec
// CHECK: nvvm.mma.sync
// DEFAULT: matvec-bf16-mma-nvvm.mlir:[[@LINE+17]]:3: remark: cachet-select-kernel-configs: mma-sync kernel for a mat-vec
func.func @q4_0_matvec(%w: memref<16x72xi8>, %x: memref<128xbf16>) -> memref<16xf32> {
  %c0 = arith.constant 0 : index
  %y = memref.alloc() : memref<16xf32>
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<16x128xbf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<16x128xbf16>) attrs = {cachet.block_dequantize = !cachet.q4_0} {
  ^bb0(%out: bf16):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<16x72xi8>
    %f = arith.sitofp %b : i8 to bf16
    linalg.yield %f : bf16
  }
  linalg.fill ins(%cst : f32) outs(%y : memref<16xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: mma-sync kernel for a mat-vec}}
  // expected-remark @+1 {{cachet-lower-matvec: mma-sync kernel}}
  linalg.matvec ins(%a, %x : memref<16x128xbf16>, memref<128xbf16>) outs(%y : memref<16xf32>)
  memref.dealloc %a : memref<16x128xbf16>
  return %y : memref<16xf32>
}

// -----

// Not on mma.sync: 24 weight rows (not a multiple of 16, said in the
// remark), and a dense bf16 weight (the option takes blocks only).
func.func @not_mma(%w: memref<24x136xi8>, %x: memref<128xbf16>, %y: memref<24xf32>,
                   %wd: memref<32x256xbf16>, %xd: memref<256xbf16>, %yd: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<24x128xbf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<24x128xbf16>) attrs = {cachet.block_dequantize = !cachet.q8_0} {
  ^bb0(%out: bf16):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<24x136xi8>
    %f = arith.sitofp %b : i8 to bf16
    linalg.yield %f : bf16
  }
  // expected-remark @+2 {{not on mma.sync: 24 weight rows are not a multiple of 16 (an mma's rows)}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel}}
  linalg.matvec ins(%a, %x : memref<24x128xbf16>, memref<128xbf16>) outs(%y : memref<24xf32>)
  memref.dealloc %a : memref<24x128xbf16>
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel: 32 lanes per row}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel}}
  linalg.matvec ins(%wd, %xd : memref<32x256xbf16>, memref<256xbf16>) outs(%yd : memref<32xf32>)
  return
}
