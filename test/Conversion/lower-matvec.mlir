// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs,func.func(cachet-lower-matvec))' -verify-diagnostics | FileCheck %s
// The NVVM kernel: 16-byte loads and a five-step shuffle butterfly.
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm chip=sm_90 matvec-kernel=subgroup format=isa" 2>/dev/null | FileCheck %s --check-prefix=PTX

// Rows of 512 bf16: one round of 32 lanes x 8 values is 256 columns, four
// loads per lane would be 1024: only the remainder loop, one load at a time.
// CHECK-LABEL: func.func @bf16
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c64, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: arith.remui %{{.*}}, %c32
// CHECK: scf.for {{.*}} step %c256{{.*}} iter_args({{.*}}) -> (vector<8xf32>)
// CHECK: vector.load %{{.*}} {alignment = 16 : i64, cachet.streaming_weight} : memref<256x512xbf16, strided<[520, 1]>>, vector<8xbf16>
// CHECK-NOT: vector.load %arg0
// CHECK: vector.reduction <add>
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: memref.store
// CHECK-NOT: linalg.matvec
// PTX: ld.global.v4.b32
// PTX: shfl.sync.bfly.b32
func.func @bf16(%w: memref<256x512xbf16, strided<[520, 1]>>, %x: memref<512xbf16>, %y: memref<256xf32>) {
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel: 32 lanes per row}}
  linalg.matvec ins(%w, %x : memref<256x512xbf16, strided<[520, 1]>>, memref<512xbf16>) outs(%y : memref<256xf32>)
  return
}

// -----

// Rows of 2048 f16: a main loop of four loads per lane (1024 columns a step),
// then nothing left; the subgroup size comes from the option.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{subgroup-size=16 rows-per-block=2},func.func(cachet-lower-matvec))' 2>/dev/null | FileCheck %s --check-prefix=SG16
// SG16-LABEL: func.func @unrolled
// SG16: threads({{.*}}) in ({{.*}} = %c32{{[_0-9]*}}, {{.*}} = %c1, {{.*}} = %c1)
// SG16: scf.for {{.*}} to %c2048 step %c512
// SG16-COUNT-4: vector.load %arg0{{.*}}cachet.streaming_weight
// SG16-NOT: scf.for
// SG16-COUNT-4: gpu.shuffle xor
// SG16-NOT: gpu.shuffle
// SG16-LABEL: func.func @f32_partial_block
// Two rows per subgroup: each load of x serves both rows; 64 rows in 32
// subgroups, 4 per block: 8 blocks.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{rows-per-subgroup=2},func.func(cachet-lower-matvec))' 2>/dev/null | FileCheck %s --check-prefix=R2
// RUN: cachet-opt %s -split-input-file -pass-pipeline="builtin.module(cachet-select-kernel-configs{fuse-siblings=false fuse-epilogues=false},func.func(cachet-lower-matvec))" 2>/dev/null | FileCheck %s --check-prefix=NOFUSE
// R2-LABEL: func.func @unrolled
// R2: gpu.launch blocks({{.*}}) in ({{.*}} = %c8{{[_0-9]*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c128
// R2: scf.for {{.*}} iter_args({{.*}}, {{.*}}) -> (vector<8xf32>, vector<8xf32>)
// R2: vector.load %arg0[%[[R0:.*]], %[[K:.*]]] {{.*}}cachet.streaming_weight
// R2-NEXT: vector.load %arg0[%[[R1:.*]], %[[K]]] {{.*}}cachet.streaming_weight
// R2-COUNT-6: vector.load %arg0{{.*}}cachet.streaming_weight
// R2-NEXT: vector.load %arg1
// R2-COUNT-3: vector.load %arg1
// R2: memref.store %{{.*}}, %arg2[%[[R0]]]
// R2: memref.store %{{.*}}, %arg2[%[[R1]]]
// CHECK-LABEL: func.func @unrolled
// CHECK: scf.for {{.*}} to %c2048 step %c1024
// CHECK-COUNT-4: vector.load %arg0{{.*}}cachet.streaming_weight
// CHECK-NOT: scf.for
func.func @unrolled(%w: memref<64x2048xf16>, %x: memref<2048xf16>, %y: memref<64xf32>) {
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel: 32 lanes per row}}
  linalg.matvec ins(%w, %x : memref<64x2048xf16>, memref<2048xf16>) outs(%y : memref<64xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @f32_partial_block
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c3, {{.*}})
// CHECK: vector.load {{.*}} vector<4xf32>
func.func @f32_partial_block(%w: memref<10x64xf32>, %x: memref<64xf32>, %y: memref<10xf32>) {
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel: 32 lanes per row}}
  linalg.matvec ins(%w, %x : memref<10x64xf32>, memref<64xf32>) outs(%y : memref<10xf32>)
  return
}

// -----

func.func @misaligned(%w: memref<8x12xbf16>, %x: memref<12xbf16>, %y: memref<8xf32>) {
  // expected-remark @+1 {{cachet-select-kernel-configs: generic kernel: the weight's rows are not unit-stride and 16-byte aligned}}
  linalg.matvec ins(%w, %x : memref<8x12xbf16>, memref<12xbf16>) outs(%y : memref<8xf32>)
  return
}

// -----

func.func @f16_result(%w: memref<8x64xf16>, %x: memref<64xf16>, %y: memref<8xf16>) {
  // expected-remark @+1 {{cachet-select-kernel-configs: generic kernel: element types are not f16/bf16/f32 with an f32 result}}
  linalg.matvec ins(%w, %x : memref<8x64xf16>, memref<64xf16>) outs(%y : memref<8xf16>)
  return
}

// -----

func.func @tensors(%w: tensor<8x64xf16>, %x: tensor<64xf16>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.matvec ins(%w, %x : tensor<8x64xf16>, tensor<64xf16>) outs(%y : tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A zero fill right before the mat-vec runs in its kernel: y = 0.0 + sum, no
// separate fill. A fill of another value stays.
// CHECK-LABEL: func.func @zero_fill
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: memref.load %arg2
// CHECK: %[[S:.*]] = arith.addf %[[ZERO]], %{{.*}} : f32
// CHECK: memref.store %[[S]], %arg2
func.func @zero_fill(%w: memref<8x64xf32>, %x: memref<64xf32>, %y: memref<8xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%y : memref<8xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{16-byte loads per lane in flight, 1 rows per subgroup; the zero fill of the result is done in the kernel}}
  linalg.matvec ins(%w, %x : memref<8x64xf32>, memref<64xf32>) outs(%y : memref<8xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @one_fill
// CHECK: linalg.fill
// CHECK: gpu.launch
// CHECK: memref.load %arg2
func.func @one_fill(%w: memref<8x64xf32>, %x: memref<64xf32>, %y: memref<8xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%y : memref<8xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel: 32 lanes per row}}
  linalg.matvec ins(%w, %x : memref<8x64xf32>, memref<64xf32>) outs(%y : memref<8xf32>)
  return
}

// -----

// Q, K and V over one x: one kernel. K and V (16 rows each) are computed by
// the same subgroups, one accumulator per weight; their blocks run longest,
// so they take the grid's first: K/V's blocks 0-3, Q's 64 rows 4-19.
// CHECK-LABEL: func.func @qkv
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c20{{[_0-9]*}}, {{.*}}
// CHECK: arith.cmpi ult, %{{.*}}, %c4
// CHECK: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>)
// CHECK: memref.store {{.*}} : memref<16xf32>
// CHECK-NEXT: arith.addf
// CHECK-NEXT: memref.store {{.*}} : memref<16xf32>
// CHECK: scf.for {{.*}} -> (vector<8xf32>)
// CHECK: memref.store {{.*}} : memref<64xf32>
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.
// CHECK: return
// A kernel whose subgroups compute rows of several mat-vecs (K and V here)
// keeps paired-loads-per-lane (8) loads in flight, for all its rows; 0 means
// loads-per-lane (4), as one mat-vec alone has.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{paired-loads-per-lane=0},func.func(cachet-lower-matvec))' 2>&1 >/dev/null | FileCheck %s --check-prefix=PAIRED0
// PAIRED0: remark: cachet-lower-matvec: subgroup kernel: {{.*}}, 4 16-byte loads per lane in flight, 1 rows per subgroup; the zero fill of the result is done in the kernel; one kernel for 3 mat-vecs
// PAIRED0-NOT: remark: cachet-lower-matvec: subgroup kernel: {{.*}}, 8 16-byte loads
// NOFUSE-LABEL: func.func @qkv
// NOFUSE-COUNT-3: gpu.launch
func.func @qkv(%x: memref<256xf16>, %wq: memref<64x256xf16>, %wk: memref<16x256xf16>, %wv: memref<16x256xf16>) -> (memref<64xf32>, memref<16xf32>, memref<16xf32>) {
  %z = arith.constant 0.0 : f32
  %q = memref.alloc() : memref<64xf32>
  linalg.fill ins(%z : f32) outs(%q : memref<64xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{4 subgroups per block, 8 16-byte loads per lane in flight, 1 rows per subgroup; the zero fill of the result is done in the kernel; one kernel for 3 mat-vecs over the same x, 1 of them with 64 rows computed by the same subgroups}}
  linalg.matvec ins(%wq, %x : memref<64x256xf16>, memref<256xf16>) outs(%q : memref<64xf32>)
  %k = memref.alloc() : memref<16xf32>
  linalg.fill ins(%z : f32) outs(%k : memref<16xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{one kernel for 3 mat-vecs over the same x, 2 of them with 16 rows computed by the same subgroups}}
  linalg.matvec ins(%wk, %x : memref<16x256xf16>, memref<256xf16>) outs(%k : memref<16xf32>)
  %v = memref.alloc() : memref<16xf32>
  linalg.fill ins(%z : f32) outs(%v : memref<16xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{one kernel for 3 mat-vecs over the same x, 2 of them with 16 rows computed by the same subgroups}}
  linalg.matvec ins(%wv, %x : memref<16x256xf16>, memref<256xf16>) outs(%v : memref<16xf32>)
  return %q, %k, %v : memref<64xf32>, memref<16xf32>, memref<16xf32>
}

// -----

// Gate and up, then silu(gate) * up: one kernel; the lane that stores a row
// of gate and up computes the row of h.
// CHECK-LABEL: func.func @glu
// CHECK: memref.alloc() : memref<64xbf16>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c16{{[_0-9]*}}, {{.*}}
// CHECK: memref.store %[[G:.*]], %{{.*}} : memref<64xf32>
// CHECK: memref.store %[[U:.*]], %{{.*}} : memref<64xf32>
// CHECK: arith.negf %[[G]]
// CHECK: math.exp
// CHECK: arith.truncf
// CHECK: memref.store {{.*}} : memref<64xbf16>
// CHECK-NOT: linalg.
// CHECK: return
// NOFUSE-LABEL: func.func @glu
// NOFUSE-COUNT-2: gpu.launch
// NOFUSE: linalg.generic
#id = affine_map<(i) -> (i)>
func.func @glu(%x: memref<256xbf16>, %wg: memref<64x256xbf16>, %wu: memref<64x256xbf16>) -> memref<64xbf16> {
  %z = arith.constant 0.0 : f32
  %g = memref.alloc() : memref<64xf32>
  linalg.fill ins(%z : f32) outs(%g : memref<64xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{one kernel for 2 mat-vecs over the same x, 2 of them with 64 rows}}
  linalg.matvec ins(%wg, %x : memref<64x256xbf16>, memref<256xbf16>) outs(%g : memref<64xf32>)
  %u = memref.alloc() : memref<64xf32>
  linalg.fill ins(%z : f32) outs(%u : memref<64xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{one kernel for 2 mat-vecs over the same x, 2 of them with 64 rows}}
  linalg.matvec ins(%wu, %x : memref<64x256xbf16>, memref<256xbf16>) outs(%u : memref<64xf32>)
  %h = memref.alloc() : memref<64xbf16>
  // expected-remark @+1 {{cachet-lower-matvec: done by the mat-vec kernel before it, in the lane that stores each row}}
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%g, %u : memref<64xf32>, memref<64xf32>) outs(%h : memref<64xbf16>) {
  ^bb0(%gv: f32, %uv: f32, %d: bf16):
    %one = arith.constant 1.0 : f32
    %ng = arith.negf %gv : f32
    %ex = math.exp %ng : f32
    %den = arith.addf %one, %ex : f32
    %sig = arith.divf %gv, %den : f32
    %p = arith.mulf %sig, %uv : f32
    %t = arith.truncf %p : f32 to bf16
    linalg.yield %t : bf16
  }
  return %h : memref<64xbf16>
}

// -----

// Constant weights (memref.get_global of constant globals, as bufferizing
// arith.constant weights gives): two globals, or a global and an
// allocation, never share bytes, so gate and up still share one kernel.
// CHECK-LABEL: func.func @glu_globals
// CHECK-COUNT-1: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: return
memref.global "private" constant @wg : memref<64x256xf16> = dense<0.5>
memref.global "private" constant @wu : memref<64x256xf16> = dense<0.25>
func.func @glu_globals(%x: memref<256xf16>) -> (memref<64xf32>, memref<64xf32>) {
  %z = arith.constant 0.0 : f32
  %wg = memref.get_global @wg : memref<64x256xf16>
  %wu = memref.get_global @wu : memref<64x256xf16>
  %g = memref.alloc() : memref<64xf32>
  linalg.fill ins(%z : f32) outs(%g : memref<64xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{one kernel for 2 mat-vecs over the same x, 2 of them with 64 rows}}
  linalg.matvec ins(%wg, %x : memref<64x256xf16>, memref<256xf16>) outs(%g : memref<64xf32>)
  %u = memref.alloc() : memref<64xf32>
  linalg.fill ins(%z : f32) outs(%u : memref<64xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{one kernel for 2 mat-vecs over the same x, 2 of them with 64 rows}}
  linalg.matvec ins(%wu, %x : memref<64x256xf16>, memref<256xf16>) outs(%u : memref<64xf32>)
  return %g, %u : memref<64xf32>, memref<64xf32>
}

// -----

// An op that reads Q's result sits between Q and K: Q's kernel stays before
// it, K gets its own.
// CHECK-LABEL: func.func @reads_between
// CHECK: gpu.launch
// CHECK: memref.copy
// CHECK: gpu.launch
func.func @reads_between(%x: memref<256xf16>, %wq: memref<64x256xf16>, %wk: memref<64x256xf16>, %copy: memref<64xf32>) -> (memref<64xf32>, memref<64xf32>) {
  %q = memref.alloc() : memref<64xf32>
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{subgroup kernel}}
  linalg.matvec ins(%wq, %x : memref<64x256xf16>, memref<256xf16>) outs(%q : memref<64xf32>)
  // expected-remark @+1 {{cachet-lower-matvec: the mat-vec kernel before it is not joined with the mat-vec over the same x after it: it may access the result of the mat-vec it would precede}}
  memref.copy %q, %copy : memref<64xf32> to memref<64xf32>
  %k = memref.alloc() : memref<64xf32>
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{subgroup kernel}}
  linalg.matvec ins(%wk, %x : memref<64x256xf16>, memref<256xf16>) outs(%k : memref<64xf32>)
  return %q, %k : memref<64xf32>, memref<64xf32>
}

// -----

// Not epilogues: a generic over results with different row counts, and one
// whose result is an argument (it may alias x or a weight).
// CHECK-LABEL: func.func @not_epilogues
// CHECK: gpu.launch
// CHECK: linalg.generic
// CHECK: gpu.launch
// CHECK: linalg.generic
#id2 = affine_map<(i) -> (i)>
#mod = affine_map<(i) -> (i mod 16)>
func.func @not_epilogues(%x: memref<256xf16>, %wq: memref<64x256xf16>, %wk: memref<16x256xf16>, %wo: memref<64x256xf16>, %out: memref<64xf32>) -> (memref<64xf32>, memref<64xf32>) {
  %q = memref.alloc() : memref<64xf32>
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{subgroup kernel}}
  linalg.matvec ins(%wq, %x : memref<64x256xf16>, memref<256xf16>) outs(%q : memref<64xf32>)
  %k = memref.alloc() : memref<16xf32>
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{subgroup kernel}}
  linalg.matvec ins(%wk, %x : memref<16x256xf16>, memref<256xf16>) outs(%k : memref<16xf32>)
  %a = memref.alloc() : memref<64xf32>
  // expected-remark @+1 {{cachet-lower-matvec: not in the epilogue of the mat-vec kernel before it: it reads the results of mat-vecs with another row count}}
  linalg.generic {indexing_maps = [#id2, #mod, #id2], iterator_types = ["parallel"]}
      ins(%q, %k : memref<64xf32>, memref<16xf32>) outs(%a : memref<64xf32>) {
  ^bb0(%qv: f32, %kv: f32, %d: f32):
    %s = arith.addf %qv, %kv : f32
    linalg.yield %s : f32
  }
  %o = memref.alloc() : memref<64xf32>
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{subgroup kernel}}
  linalg.matvec ins(%wo, %x : memref<64x256xf16>, memref<256xf16>) outs(%o : memref<64xf32>)
  // expected-remark @+1 {{cachet-lower-matvec: not in the epilogue of the mat-vec kernel before it: its result may alias a buffer of the mat-vecs}}
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel"]}
      ins(%o : memref<64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%ov: f32, %d: f32):
    %n = arith.negf %ov : f32
    linalg.yield %n : f32
  }
  return %a, %o : memref<64xf32>, memref<64xf32>
}

// -----

// A residual add (h = res + o, another buffer read at the row) is the
// epilogue of O's kernel: the lane that stores row r loads res[r].
// CHECK-LABEL: func.func @residual_epilogue
// CHECK: gpu.launch
// CHECK: %[[SUM:.*]] = arith.addf %cst{{.*}}, %{{.*}} : f32
// CHECK: memref.store %[[SUM]], %{{.*}} : memref<64xf32>
// CHECK: %[[RES:.*]] = memref.load %{{.*}} : memref<64xf16>
// CHECK: %[[RF:.*]] = arith.extf %[[RES]]
// CHECK: arith.addf %[[RF]], %[[SUM]]
// CHECK: memref.store {{.*}} : memref<64xf16>
// CHECK-NOT: linalg.generic
#id3 = affine_map<(i) -> (i)>
func.func @residual_epilogue(%x: memref<256xf16>, %wo: memref<64x256xf16>, %res: memref<64xf16>) -> memref<64xf16> {
  %o = memref.alloc() : memref<64xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%o : memref<64xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{subgroup kernel}}
  linalg.matvec ins(%wo, %x : memref<64x256xf16>, memref<256xf16>) outs(%o : memref<64xf32>)
  %h = memref.alloc() : memref<64xf16>
  // expected-remark @+1 {{cachet-lower-matvec: done by the mat-vec kernel before it, in the lane that stores each row}}
  linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel"]}
      ins(%res, %o : memref<64xf16>, memref<64xf32>) outs(%h : memref<64xf16>) {
  ^bb0(%r: f16, %ov: f32, %d: f16):
    %rf = arith.extf %r : f16 to f32
    %s = arith.addf %rf, %ov : f32
    %t = arith.truncf %s : f32 to f16
    linalg.yield %t : f16
  }
  return %h : memref<64xf16>
}

// -----

// Not an epilogue: it reads, through a cast, the result of a mat-vec of the
// kernel (another lane's row may not be stored yet).
// CHECK-LABEL: func.func @reads_result_view
// CHECK: gpu.launch
// CHECK: linalg.generic
#id4 = affine_map<(i) -> (i)>
func.func @reads_result_view(%x: memref<256xf16>, %wq: memref<64x256xf16>) -> memref<64xf32> {
  %q = memref.alloc() : memref<64xf32>
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{subgroup kernel}}
  linalg.matvec ins(%wq, %x : memref<64x256xf16>, memref<256xf16>) outs(%q : memref<64xf32>)
  %view = memref.cast %q : memref<64xf32> to memref<?xf32>
  %view64 = memref.cast %view : memref<?xf32> to memref<64xf32>
  %a = memref.alloc() : memref<64xf32>
  // expected-remark @+1 {{cachet-lower-matvec: not in the epilogue of the mat-vec kernel before it: it reads a buffer that a mat-vec of the kernel may write}}
  linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel"]}
      ins(%q, %view64 : memref<64xf32>, memref<64xf32>) outs(%a : memref<64xf32>) {
  ^bb0(%qv: f32, %v: f32, %d: f32):
    %s = arith.addf %qv, %v : f32
    linalg.yield %s : f32
  }
  return %a : memref<64xf32>
}

// -----

// An invalid load-bytes leaves every mat-vec to the generic kernel.
// RUN: not cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{load-bytes=12},func.func(cachet-lower-matvec))' 2>&1 >/dev/null | FileCheck %s --check-prefix=BADLB
// BADLB: cachet-select-kernel-configs: bad load-bytes 12: a power of two
func.func @bad_load_bytes(%w: memref<64x256xf16>, %x: memref<256xf16>, %y: memref<64xf32>) {
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{subgroup kernel}}
  linalg.matvec ins(%w, %x : memref<64x256xf16>, memref<256xf16>) outs(%y : memref<64xf32>)
  return
}
