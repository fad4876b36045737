// Mat-vecs over weights dequantized from packed ggml blocks (the generic
// cachet-lower-to-linalg marks cachet.block_dequantize): the subgroup kernel
// reads the blocks and decodes them in registers; the generic and its buffer
// go away.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs,func.func(cachet-lower-matvec))' -verify-diagnostics | FileCheck %s
// RUN: not cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{block-slice=16},func.func(cachet-lower-matvec))' 2>&1 >/dev/null | FileCheck %s --check-prefix=SLICE16
// RUN: not cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{matvec-kernel=blocks},func.func(cachet-lower-matvec))' 2>&1 >/dev/null | FileCheck %s --check-prefix=BLOCKS
// RUN: not cachet-opt %s -pass-pipeline='builtin.module(cachet-select-kernel-configs{block-slice=3})' 2>&1 | FileCheck %s --check-prefix=BADSLICE
// RUN: not cachet-opt %s -pass-pipeline='builtin.module(cachet-select-kernel-configs{split-block-slice=6})' 2>&1 | FileCheck %s --check-prefix=BADSPLIT
// BADSPLIT: bad split-block-slice 6: 0 (block-slice) or 4, 8, 16 or 32
// RUN: not cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{block-slice=32 super-block-slice=0},func.func(cachet-lower-matvec))' 2>&1 >/dev/null | FileCheck %s --check-prefix=SLICE32
// RUN: not cachet-opt %s -pass-pipeline='builtin.module(cachet-select-kernel-configs{super-block-slice=6})' 2>&1 | FileCheck %s --check-prefix=BADSUPER
// BADSUPER: bad super-block-slice 6: 0 (block-slice) or a divisor of 32

// q8_0, f16: 4 rows of 4 blocks (136 bytes, whole words). Slices of 8
// values as f16 pairs; the loads are 4-byte words of the blocks, marked as
// the kernel's streaming weight.
// CHECK-LABEL: func.func @q8_0
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.alloc() {{.*}} : memref<4x128xf16>
// CHECK: gpu.launch
// CHECK: vector.load %arg0[{{.*}}] {alignment = 4 : i64, cachet.streaming_weight} : memref<4x136xi8>, vector<4xi8>
// CHECK: vector.shuffle {{.*}} [0, 4, 1, 5] : vector<4xi8>, vector<4xi8>
// CHECK: arith.subf {{.*}} : vector<2xf16>
// CHECK: arith.mulf {{.*}} : vector<2xf16>
// CHECK: arith.extf {{.*}} : vector<8xf16> to vector<8xf32>
// CHECK: vector.fma {{.*}} : vector<8xf32>
// CHECK-NOT: linalg.matvec
// SLICE16: subgroup kernel on q8_0 blocks decoded in registers (never materialized): 32 lanes per row, 4 subgroups per block, 4 (paired: 2) slices of 16 values per lane in flight
// BLOCKS: subgroup kernel on q8_0 blocks decoded in registers
func.func @q8_0(%w: memref<4x136xi8>, %x: memref<128xf16>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %y = memref.alloc() : memref<4xf32>
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4x128xf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<4x128xf16>) attrs = {cachet.block_dequantize = !cachet.q8_0} {
  ^bb0(%out: f16):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<4x136xi8>
    %f = arith.sitofp %b : i8 to f16
    linalg.yield %f : f16
  }
  linalg.fill ins(%cst : f32) outs(%y : memref<4xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel on q8_0 blocks decoded in registers (never materialized): 32 lanes per row, 4 subgroups per block, 4 (paired: 2) slices of 8 values per lane in flight, 2 rows per subgroup}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel: 32 lanes per row, 4 subgroups per block, 4 q8_0 slices of 8 values per lane in flight, 2 rows per subgroup; the blocks decoded in registers, the dequantized copy never written; the zero fill of the result is done in the kernel}}
  linalg.matvec ins(%a, %x : memref<4x128xf16>, memref<128xf16>) outs(%y : memref<4xf32>)
  memref.dealloc %a : memref<4x128xf16>
  return %y : memref<4xf32>
}

// -----

// q8_0 to bf16 (a bf16 model's decoder): each value decoded in f32 without
// int-to-float conversions, rounded to bf16 two at a time (a vector<2>
// truncf read back as one i32, so that it is not folded into scalar
// conversions: PTX cvt.rn.bf16x2.f32) and widened by a shift and a mask.
// CHECK-LABEL: func.func @q8_0_bf16
// CHECK: gpu.launch
// CHECK: vector.shuffle {{.*}} [0, 4, 5, 7] : vector<4xi8>, vector<4xi8>
// CHECK-NOT: arith.sitofp
// CHECK: arith.truncf {{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: vector.bitcast {{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK-DAG: arith.shli {{.*}}, %c16_i32{{[_0-9]*}} : i32
// CHECK-DAG: arith.andi {{.*}}, %c-65536_i32{{[_0-9]*}} : i32
// CHECK-NOT: arith.extf {{.*}} : bf16 to f32
// CHECK: vector.fma {{.*}} : vector<8xf32>
func.func @q8_0_bf16(%w: memref<4x136xi8>, %x: memref<128xbf16>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %y = memref.alloc() : memref<4xf32>
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4x128xbf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<4x128xbf16>) attrs = {cachet.block_dequantize = !cachet.q8_0} {
  ^bb0(%out: bf16):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<4x136xi8>
    %f = arith.sitofp %b : i8 to bf16
    linalg.yield %f : bf16
  }
  linalg.fill ins(%cst : f32) outs(%y : memref<4xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel on q8_0 blocks}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel}}
  linalg.matvec ins(%a, %x : memref<4x128xbf16>, memref<128xbf16>) outs(%y : memref<4xf32>)
  memref.dealloc %a : memref<4x128xbf16>
  return %y : memref<4xf32>
}

// -----

// Split q8_0 (a raised front-end dequantization: i8 values and f16 scales
// in two buffers), to f32: the kernel loads the values' aligned words and
// each slice's scale, both marked as streaming weight loads; the products
// are exact in f32.
// CHECK-LABEL: func.func @split_q8_0
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch
// CHECK: vector.load %arg0[{{.*}}] {alignment = 8 : i64, cachet.streaming_weight} : memref<4x64xi8>, vector<8xi8>
// CHECK: vector.load %arg1[{{.*}}] {cachet.streaming_weight} : memref<4x2xf16>, vector<1xf16>
// Each quant made the low byte of the f32 2^23 + q + 128 (no sitofp):
// CHECK-DAG: %[[MAGIC:.*]] = arith.constant 0x4B000080 : f32
// CHECK-DAG: arith.xori {{.*}}, %c-2139062144_i32{{[_0-9]*}} : i32
// CHECK: vector.shuffle {{.*}} [0, 4, 5, 7] : vector<4xi8>, vector<4xi8>
// CHECK: arith.subf {{.*}}, %[[MAGIC]] : f32
// CHECK-NOT: arith.sitofp
// CHECK: vector.fma {{.*}} : vector<8xf32>
// CHECK-NOT: linalg.matvec
func.func @split_q8_0(%q: memref<4x64xi8>, %s: memref<4x2xf16>, %x: memref<64xf32>) -> memref<4xf32> {
  %y = memref.alloc() : memref<4xf32>
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4x64xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j floordiv 32)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%q, %s : memref<4x64xi8>, memref<4x2xf16>) outs(%a : memref<4x64xf32>) attrs = {cachet.block_dequantize = !cachet.q8_0} {
  ^bb0(%qv: i8, %sv: f16, %out: f32):
    %f = arith.sitofp %qv : i8 to f32
    %d = arith.extf %sv : f16 to f32
    %m = arith.mulf %f, %d : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%cst : f32) outs(%y : memref<4xf32>)
  // expected-remark @+2 {{subgroup kernel on split q8_0 (i8 values, f16 scales) blocks decoded in registers (never materialized)}}
  // expected-remark @+1 {{4 split q8_0 slices of 8 values per lane in flight, 2 rows per subgroup; the blocks decoded in registers, the dequantized copy never written}}
  linalg.matvec ins(%a, %x : memref<4x64xf32>, memref<64xf32>) outs(%y : memref<4xf32>)
  memref.dealloc %a : memref<4x64xf32>
  return %y : memref<4xf32>
}

// -----

// Split q8_0 whose scales are written between the dequantize and the
// mat-vec: the kernel would read the new scales, so the float kernel runs
// on the dequantized copy.
// CHECK-LABEL: func.func @split_scales_written
// CHECK: linalg.generic
// CHECK: memref.copy
// CHECK: vector.load %{{.*}} : memref<4x64xf16>, vector<8xf16>
func.func @split_scales_written(%q: memref<4x64xi8>, %s: memref<4x2xf16>, %s2: memref<4x2xf16>, %x: memref<64xf16>) -> memref<4xf32> {
  %y = memref.alloc() : memref<4xf32>
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4x64xf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j floordiv 32)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%q, %s : memref<4x64xi8>, memref<4x2xf16>) outs(%a : memref<4x64xf16>) attrs = {cachet.block_dequantize = !cachet.q8_0} {
  ^bb0(%qv: i8, %sv: f16, %out: f16):
    %f = arith.sitofp %qv : i8 to f16
    %m = arith.mulf %f, %sv : f16
    linalg.yield %m : f16
  }
  memref.copy %s2, %s : memref<4x2xf16> to memref<4x2xf16>
  linalg.fill ins(%cst : f32) outs(%y : memref<4xf32>)
  // expected-remark @+2 {{subgroup kernel: 32 lanes per row, 4 subgroups per block, 4 (paired: 8) 16-byte loads per lane in flight; on the dequantized copy: 'memref.copy' between the dequantize and the mat-vec may write the blocks}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel}}
  linalg.matvec ins(%a, %x : memref<4x64xf16>, memref<64xf16>) outs(%y : memref<4xf32>)
  memref.dealloc %a : memref<4x64xf16>
  return %y : memref<4xf32>
}
// -----

// q4_1 dequantized to f32: each value decoded in f32 (no rounding), with
// its minimum; Q and K over the same x in one kernel.
// CHECK-LABEL: func.func @q4_1_siblings
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch
// CHECK-COUNT-2: vector.load %arg{{[01]}}[{{.*}}] {alignment = 4 : i64, cachet.streaming_weight} : memref<{{8|4}}x80xi8>, vector<4xi8>
// The nibble made the low bits of the f32 2^23 + q, less 2^23 (no uitofp):
// CHECK: arith.ori {{.*}}, %c1258291200_i32{{[_0-9]*}} : i32
// CHECK: arith.subf {{.*}} : f32
// CHECK: vector.fma {{.*}} : vector<8xf32>
// CHECK-NOT: linalg.matvec
func.func @q4_1_siblings(%wq: memref<8x80xi8>, %wk: memref<4x80xi8>, %x: memref<128xf32>)
    -> (memref<8xf32>, memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %q = memref.alloc() : memref<8xf32>
  %k = memref.alloc() : memref<4xf32>
  %aq = memref.alloc() : memref<8x128xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%aq : memref<8x128xf32>) attrs = {cachet.block_dequantize = !cachet.q4_1} {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %b = memref.load %wq[%i, %c0] : memref<8x80xi8>
    %f = arith.sitofp %b : i8 to f32
    linalg.yield %f : f32
  }
  // expected-remark @+2 {{subgroup kernel on q4_1 blocks}}
  // expected-remark @+1 {{one kernel for 2 mat-vecs over the same x}}
  linalg.matvec ins(%aq, %x : memref<8x128xf32>, memref<128xf32>) outs(%q : memref<8xf32>)
  %ak = memref.alloc() : memref<4x128xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%ak : memref<4x128xf32>) attrs = {cachet.block_dequantize = !cachet.q4_1} {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %b = memref.load %wk[%i, %c0] : memref<4x80xi8>
    %f = arith.sitofp %b : i8 to f32
    linalg.yield %f : f32
  }
  // expected-remark @+2 {{subgroup kernel on q4_1 blocks}}
  // expected-remark @+1 {{one kernel for 2 mat-vecs over the same x}}
  linalg.matvec ins(%ak, %x : memref<4x128xf32>, memref<128xf32>) outs(%k : memref<4xf32>)
  return %q, %k : memref<8xf32>, memref<4xf32>
}

// -----

// q4_K (the k-quants' super-blocks of 256 values, 144 bytes): a slice of
// 16 values (super-block-slice) lies in one sub-block of 32; its scale and min come from the
// block's 12 bytes of 6-bit fields (three aligned words), its nibbles from
// two aligned words; value = (d * scale) * q - dmin * min in f32, one fma
// (the product is exact), rounded to f16 as one vector.
// CHECK-LABEL: func.func @q4_K
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch
// CHECK: vector.load %arg0[{{.*}}] {alignment = 4 : i64, cachet.streaming_weight} : memref<4x144xi8>, vector<4xi8>
// CHECK: arith.select
// CHECK: arith.uitofp {{.*}} : i32 to f32
// CHECK: vector.fma {{.*}} : vector<1xf32>
// CHECK: arith.truncf {{.*}} : vector<16xf32> to vector<16xf16>
// CHECK: vector.fma {{.*}} : vector<16xf32>
// SLICE16: subgroup kernel on q4_K blocks decoded in registers (never materialized): 32 lanes per row, 4 subgroups per block, 4 (paired: 2) slices of 16 values per lane in flight
// SLICE32: subgroup kernel on q4_K blocks decoded in registers (never materialized): 32 lanes per row, 4 subgroups per block, 4 (paired: 2) slices of 32 values per lane in flight
func.func @q4_K(%w: memref<4x144xi8>, %x: memref<256xf16>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %y = memref.alloc() : memref<4xf32>
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4x256xf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<4x256xf16>) attrs = {cachet.block_dequantize = !cachet.q4_K} {
  ^bb0(%out: f16):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<4x144xi8>
    %f = arith.sitofp %b : i8 to f16
    linalg.yield %f : f16
  }
  linalg.fill ins(%cst : f32) outs(%y : memref<4xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel on q4_K blocks decoded in registers (never materialized): 32 lanes per row, 4 subgroups per block, 4 (paired: 2) slices of 16 values per lane in flight, 2 rows per subgroup}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel: 32 lanes per row, 4 subgroups per block, 4 q4_K slices of 16 values per lane in flight, 2 rows per subgroup; the blocks decoded in registers, the dequantized copy never written; the zero fill of the result is done in the kernel}}
  linalg.matvec ins(%a, %x : memref<4x256xf16>, memref<256xf16>) outs(%y : memref<4xf32>)
  memref.dealloc %a : memref<4x256xf16>
  return %y : memref<4xf32>
}

// -----

// q5_K (176 bytes: q4_K's fields and a plane of fifth bits, bit j of byte l
// for value 32 j + l): the slice's nibble words and its qh words shifted by
// the sub-block, merged into 5-bit fields four per word, one fma each.
// CHECK-LABEL: func.func @q5_K
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch
// CHECK: vector.load %arg0[{{.*}}] {alignment = 4 : i64, cachet.streaming_weight} : memref<2x528xi8>, vector<4xi8>
// CHECK: arith.andi {{.*}}, %c16843009_i32{{[_0-9]*}} : i32
// CHECK: arith.andi {{.*}}, %c31_i32{{[_0-9]*}} : i32
// CHECK: vector.fma {{.*}} : vector<1xf32>
// CHECK: vector.fma {{.*}} : vector<16xf32>
// SLICE16: subgroup kernel on q5_K blocks decoded in registers (never materialized): 32 lanes per row, 4 subgroups per block, 4 (paired: 2) slices of 16 values per lane in flight
// SLICE32: subgroup kernel on q5_K blocks decoded in registers (never materialized): 32 lanes per row, 4 subgroups per block, 4 (paired: 2) slices of 32 values per lane in flight
func.func @q5_K(%w: memref<2x528xi8>, %x: memref<768xf32>) -> memref<2xf32> {
  %c0 = arith.constant 0 : index
  %y = memref.alloc() : memref<2xf32>
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<2x768xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<2x768xf32>) attrs = {cachet.block_dequantize = !cachet.q5_K} {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<2x528xi8>
    %f = arith.sitofp %b : i8 to f32
    linalg.yield %f : f32
  }
  linalg.fill ins(%cst : f32) outs(%y : memref<2xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel on q5_K blocks decoded in registers (never materialized): 32 lanes per row, 4 subgroups per block, 4 (paired: 2) slices of 16 values per lane in flight, 2 rows per subgroup}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel: 32 lanes per row, 4 subgroups per block, 4 q5_K slices of 16 values per lane in flight, 2 rows per subgroup; the blocks decoded in registers, the dequantized copy never written; the zero fill of the result is done in the kernel}}
  linalg.matvec ins(%a, %x : memref<2x768xf32>, memref<768xf32>) outs(%y : memref<2xf32>)
  memref.dealloc %a : memref<2x768xf32>
  return %y : memref<2xf32>
}

// -----

// q6_K (210-byte super-blocks, only 2-aligned: the slice's bytes are
// shifted out of aligned words): low nibbles, high bit pairs and one int8
// scale per 16 values, four 6-bit quants per word (each q made the low bits
// of the f32 2^23 + q, less 2^23 + 32). A slice of 32 would take two scales: with
// super-block-slice=0 block-slice=32 the weight is dequantized by a kernel
// of its own.
// CHECK-LABEL: func.func @q6_K
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch
// CHECK: vector.load %arg0[{{.*}}] {alignment = 4 : i64, cachet.streaming_weight} : memref<2x420xi8>, vector<4xi8>
// CHECK: arith.trunci {{.*}} : i32 to i8
// CHECK: arith.sitofp {{.*}} : i8 to f32
// CHECK: arith.andi {{.*}}, %c63_i32{{[_0-9]*}} : i32
// CHECK: arith.ori {{.*}}, %c1258291200_i32{{[_0-9]*}} : i32
// CHECK: arith.constant 8.388640e+06 : f32
// CHECK-NOT: arith.sitofp {{.*}} : i32 to f32
// CHECK: vector.fma {{.*}} : vector<16xf32>
// SLICE16: subgroup kernel on q6_K blocks decoded in registers (never materialized): 32 lanes per row, 4 subgroups per block, 4 (paired: 2) slices of 16 values per lane in flight
// SLICE32: generic kernel: q6_K blocks are not decoded in slices of 32 values; the q6_K weight is dequantized by a kernel of its own
func.func @q6_K(%w: memref<2x420xi8>, %x: memref<512xf32>) -> memref<2xf32> {
  %c0 = arith.constant 0 : index
  %y = memref.alloc() : memref<2xf32>
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<2x512xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<2x512xf32>) attrs = {cachet.block_dequantize = !cachet.q6_K} {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<2x420xi8>
    %f = arith.sitofp %b : i8 to f32
    linalg.yield %f : f32
  }
  linalg.fill ins(%cst : f32) outs(%y : memref<2xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel on q6_K blocks decoded in registers (never materialized): 32 lanes per row, 4 subgroups per block, 4 (paired: 2) slices of 16 values per lane in flight, 2 rows per subgroup}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel: 32 lanes per row, 4 subgroups per block, 4 q6_K slices of 16 values per lane in flight, 2 rows per subgroup; the blocks decoded in registers, the dequantized copy never written; the zero fill of the result is done in the kernel}}
  linalg.matvec ins(%a, %x : memref<2x512xf32>, memref<512xf32>) outs(%y : memref<2xf32>)
  memref.dealloc %a : memref<2x512xf32>
  return %y : memref<2xf32>
}

// -----

// tq2_0 (ternary, 66-byte super-blocks of 2-bit quants, d last), to f16:
// a slice's quants are bytes of 0..3 after a shift and mask, decoded as
// f16 pairs (1024 + q less 1025, times d: exact). tq1_0 (base-3 digits,
// a power of 3 per digit) in slices of 16 too, in a kernel of its own.
// CHECK-LABEL: func.func @ternary
// CHECK: gpu.launch
// CHECK: vector.load %arg0[{{.*}}] {alignment = 4 : i64, cachet.streaming_weight} : memref<4x132xi8>, vector<4xi8>
// CHECK: arith.andi {{.*}}, %c50529027_i32{{[_0-9]*}} : i32
// CHECK: vector.shuffle {{.*}} [0, 4, 1, 5] : vector<4xi8>, vector<4xi8>
// CHECK: arith.subf {{.*}} : vector<2xf16>
// CHECK: vector.fma {{.*}} : vector<16xf32>
// CHECK: arith.muli {{.*}} : i32
// CHECK: arith.shrui {{.*}}, %c8_i32{{[_0-9]*}} : i32
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @ternary(%w: memref<4x132xi8>, %w1: memref<4x108xi8>, %x: memref<512xf16>) -> (memref<4xf32>, memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %y = memref.alloc() : memref<4xf32>
  %y1 = memref.alloc() : memref<4xf32>
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4x512xf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<4x512xf16>) attrs = {cachet.block_dequantize = !cachet.tq2_0} {
  ^bb0(%out: f16):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<4x132xi8>
    %f = arith.sitofp %b : i8 to f16
    linalg.yield %f : f16
  }
  linalg.fill ins(%cst : f32) outs(%y : memref<4xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel on tq2_0 blocks decoded in registers (never materialized): 32 lanes per row, 4 subgroups per block, 4 (paired: 2) slices of 16 values per lane in flight, 2 rows per subgroup}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel: 32 lanes per row, 4 subgroups per block, 4 tq2_0 slices of 16 values per lane in flight, 2 rows per subgroup; the blocks decoded in registers, the dequantized copy never written; the zero fill of the result is done in the kernel}}
  linalg.matvec ins(%a, %x : memref<4x512xf16>, memref<512xf16>) outs(%y : memref<4xf32>)
  %a1 = memref.alloc() : memref<4x512xf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a1 : memref<4x512xf16>) attrs = {cachet.block_dequantize = !cachet.tq1_0} {
  ^bb0(%out: f16):
    %i = linalg.index 0 : index
    %b = memref.load %w1[%i, %c0] : memref<4x108xi8>
    %f = arith.sitofp %b : i8 to f16
    linalg.yield %f : f16
  }
  linalg.fill ins(%cst : f32) outs(%y1 : memref<4xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel on tq1_0 blocks decoded in registers (never materialized): 32 lanes per row, 4 subgroups per block, 4 (paired: 2) slices of 16 values per lane in flight, 2 rows per subgroup}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel}}
  linalg.matvec ins(%a1, %x : memref<4x512xf16>, memref<512xf16>) outs(%y1 : memref<4xf32>)
  return %y, %y1 : memref<4xf32>, memref<4xf32>
}

// -----

// Not read as blocks: rows of 3 q8_0 blocks (102 bytes) are not whole
// 32-bit words; the float kernel runs on the dequantized copy, which stays.
// CHECK-LABEL: func.func @odd_blocks
// CHECK: linalg.generic
// CHECK: gpu.launch
// CHECK: vector.load %{{.*}} : memref<2x96xf16>, vector<8xf16>
// BLOCKS: generic kernel: the q8_0 weight's rows (3 blocks of 34 bytes) are not whole aligned 32-bit words: dequantized by a kernel of its own, and matvec-kernel=blocks keeps the mat-vec over the copy on the generic kernel
func.func @odd_blocks(%w: memref<2x102xi8>, %x: memref<96xf16>, %y: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<2x96xf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<2x96xf16>) attrs = {cachet.block_dequantize = !cachet.q8_0} {
  ^bb0(%out: f16):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<2x102xi8>
    %f = arith.sitofp %b : i8 to f16
    linalg.yield %f : f16
  }
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel: 32 lanes per row, 4 subgroups per block, 4 (paired: 8) 16-byte loads per lane in flight; on the dequantized copy: the q8_0 weight's rows (3 blocks of 34 bytes) are not whole aligned 32-bit words}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel}}
  linalg.matvec ins(%a, %x : memref<2x96xf16>, memref<96xf16>) outs(%y : memref<2xf32>)
  return
}

// -----

// Not read as blocks: the dequantized weight is also read by another op,
// and an op between the dequantize and the mat-vec may write the blocks.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-2: linalg.generic
func.func @kept(%w: memref<2x136xi8>, %x: memref<128xf16>,
                %copy: memref<2x128xf16>, %src: memref<2x136xi8>) -> (memref<2xf32>, memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %y = memref.alloc() : memref<2xf32>
  %z = memref.alloc() : memref<2xf32>
  %a = memref.alloc() : memref<2x128xf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<2x128xf16>) attrs = {cachet.block_dequantize = !cachet.q8_0} {
  ^bb0(%out: f16):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<2x136xi8>
    %f = arith.sitofp %b : i8 to f16
    linalg.yield %f : f16
  }
  // expected-remark @+2 {{subgroup kernel: 32 lanes per row, 4 subgroups per block, 4 (paired: 8) 16-byte loads per lane in flight; on the dequantized copy: the dequantized q8_0 weight is also read by 'memref.copy'}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel}}
  linalg.matvec ins(%a, %x : memref<2x128xf16>, memref<128xf16>) outs(%y : memref<2xf32>)
  // expected-remark @+1 {{is not joined with the mat-vec over the same x after it: it may write an input}}
  memref.copy %a, %copy : memref<2x128xf16> to memref<2x128xf16>
  %a2 = memref.alloc() : memref<2x128xf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a2 : memref<2x128xf16>) attrs = {cachet.block_dequantize = !cachet.q8_0} {
  ^bb0(%out: f16):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<2x136xi8>
    %f = arith.sitofp %b : i8 to f16
    linalg.yield %f : f16
  }
  memref.copy %src, %w : memref<2x136xi8> to memref<2x136xi8>
  // expected-remark @+2 {{on the dequantized copy: 'memref.copy' between the dequantize and the mat-vec may write the blocks}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel}}
  linalg.matvec ins(%a2, %x : memref<2x128xf16>, memref<128xf16>) outs(%z : memref<2xf32>)
  return %y, %z : memref<2xf32>, memref<2xf32>
}

// -----

// A config in the IR that cannot be built on blocks is an error.
func.func @bad_config(%w: memref<2x136xi8>, %x: memref<128xf16>, %y: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<2x128xf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<2x128xf16>) attrs = {cachet.block_dequantize = !cachet.q8_0} {
  ^bb0(%out: f16):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<2x136xi8>
    %f = arith.sitofp %b : i8 to f16
    linalg.yield %f : f16
  }
  // expected-remark @+2 {{the config in the IR is kept}}
  // expected-error @+1 {{cachet-lower-matvec: cannot build #cachet.kernel_config<variant = matvec_subgroup, tile = [4, 1], subgroup = 32, vector_width = 64, loads = [4, 4], resident = [0, 0]>: q8_0 blocks are not decoded in slices of 64 values}}
  linalg.matvec {cachet.kernel_config = #cachet.kernel_config<variant = matvec_subgroup, tile = [4, 1], subgroup = 32, vector_width = 64, loads = [4, 4], resident = [0, 0]>}
      ins(%a, %x : memref<2x128xf16>, memref<128xf16>) outs(%y : memref<2xf32>)
  return
}

// BADSLICE: cachet-select-kernel-configs: bad block-slice 3: a divisor of 32
