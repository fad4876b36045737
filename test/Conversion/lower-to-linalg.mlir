// RUN: cachet-opt %s -split-input-file -cachet-lower-to-linalg | FileCheck %s

// Packed q8_0: arguments become ggml bytes (34 per block) with their format;
// each value is d (f16 at bytes 0-1 of its block) times the i8 at 2 + lane.
// CHECK-LABEL: func.func @q8_0
// CHECK-SAME: %[[B:.*]]: tensor<16x2x136xi8> {cachet.block_format = "q8_0"}
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<16x2x128xf16>)
// CHECK-DAG: arith.constant 34 : index
// CHECK: arith.bitcast %{{.*}} : i16 to f16
// CHECK: arith.sitofp %{{.*}} : i8 to f32
// CHECK: arith.mulf
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-NOT: cachet.
func.func @q8_0(%kq: tensor<16x2x4x!cachet.q8_0>) -> tensor<16x2x128xf16> {
  %k = cachet.dequantize %kq : tensor<16x2x4x!cachet.q8_0> -> tensor<16x2x128xf16>
  return %k : tensor<16x2x128xf16>
}

// -----

// Every format: its block size, and the fields the formula reads.
// CHECK-LABEL: func.func @formats
// CHECK-SAME: tensor<4x18xi8> {cachet.block_format = "q4_0"}
// CHECK-SAME: tensor<4x20xi8> {cachet.block_format = "q4_1"}
// CHECK-SAME: tensor<4x22xi8> {cachet.block_format = "q5_0"}
// CHECK-SAME: tensor<4x24xi8> {cachet.block_format = "q5_1"}
// CHECK-SAME: tensor<4x18xi8> {cachet.block_format = "iq4_nl"}
// q4_0: nibble - 8, as the f32 2^23 + nibble (an or) less 2^23 + 8.
// CHECK: arith.constant 18 : index
// CHECK: arith.constant 15 : i32
// CHECK: arith.ori {{.*}}, %c1258291200_i32 : i32
// CHECK: arith.constant 0x4B000008 : f32
// CHECK: arith.subf
// q4_1: d * nibble + m (m at byte 2).
// CHECK: arith.constant 20 : index
// CHECK: arith.constant 0x4B000000 : f32
// CHECK: arith.addf
// q5_0: fifth bit from the 32-bit qh at bytes 2-5, minus 16.
// CHECK: arith.constant 22 : index
// CHECK: arith.constant 24 : i32
// CHECK: arith.constant 0x4B000010 : f32
// CHECK: arith.subf
// q5_1
// CHECK: arith.constant 24 : index
// CHECK: arith.constant 0x4B000000 : f32
// iq4_nl: the code book, four entries per i32 word (-127 -104 -83 -65 ..
// 53 69 89 113), a byte picked by the quant's bits.
// CHECK: arith.constant -1079142271 : i32
// CHECK: arith.constant 1901675829 : i32
// CHECK: arith.extsi {{.*}} : i8 to i32
func.func @formats(%a: tensor<4x1x!cachet.q4_0>, %b: tensor<4x1x!cachet.q4_1>,
    %c: tensor<4x1x!cachet.q5_0>, %d: tensor<4x1x!cachet.q5_1>,
    %e: tensor<4x1x!cachet.iq4_nl>)
    -> (tensor<4x32xf16>, tensor<4x32xf16>, tensor<4x32xf32>, tensor<4x32xf16>, tensor<4x32xf16>) {
  %0 = cachet.dequantize %a : tensor<4x1x!cachet.q4_0> -> tensor<4x32xf16>
  %1 = cachet.dequantize %b : tensor<4x1x!cachet.q4_1> -> tensor<4x32xf16>
  %2 = cachet.dequantize %c : tensor<4x1x!cachet.q5_0> -> tensor<4x32xf32>
  %3 = cachet.dequantize %d : tensor<4x1x!cachet.q5_1> -> tensor<4x32xf16>
  %4 = cachet.dequantize %e : tensor<4x1x!cachet.iq4_nl> -> tensor<4x32xf16>
  return %0, %1, %2, %3, %4 : tensor<4x32xf16>, tensor<4x32xf16>, tensor<4x32xf32>, tensor<4x32xf16>, tensor<4x32xf16>
}

// -----

// Split q8_0 and the head-major transpose into the given scratch.
// CHECK-DAG: #[[SPLITQ:.*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// CHECK-DAG: #[[SPLITD:.*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2 floordiv 32)>
// CHECK-LABEL: func.func @split_transpose
// CHECK-SAME: %[[QS:.*]]: tensor<16x2x128xi8>, %[[D:.*]]: tensor<16x2x4xf16>, %[[S:.*]]: tensor<2x16x128xf16>
// CHECK: linalg.generic {indexing_maps = [#[[SPLITQ]], #[[SPLITD]], #{{.*}}]
// CHECK-SAME: ins(%[[QS]], %[[D]] : tensor<16x2x128xi8>, tensor<16x2x4xf16>) outs(%[[S]] : tensor<2x16x128xf16>)
func.func @split_transpose(%qs: tensor<16x2x128xi8>, %d: tensor<16x2x4xf16>,
    %s: tensor<2x16x128xf16>) -> tensor<2x16x128xf16> {
  %0 = cachet.dequant_transpose %qs scales %d into %s : tensor<16x2x128xi8>, tensor<16x2x4xf16> -> tensor<2x16x128xf16>
  return %0 : tensor<2x16x128xf16>
}

// -----

// A slice of a packed cache is a slice of its bytes (blocks x 18).
// CHECK-LABEL: func.func @slice
// CHECK-SAME: %[[B:.*]]: tensor<64x2x72xi8> {cachet.block_format = "q4_0"}
// CHECK: tensor.extract_slice %[[B]][16, 0, 0] [32, 2, 72] [1, 1, 1] : tensor<64x2x72xi8> to tensor<32x2x72xi8>
func.func @slice(%kq: tensor<64x2x4x!cachet.q4_0>) -> tensor<32x2x128xf16> {
  %s = tensor.extract_slice %kq[16, 0, 0] [32, 2, 4] [1, 1, 1] : tensor<64x2x4x!cachet.q4_0> to tensor<32x2x4x!cachet.q4_0>
  %k = cachet.dequantize %s : tensor<32x2x4x!cachet.q4_0> -> tensor<32x2x128xf16>
  return %k : tensor<32x2x128xf16>
}

// -----

// Attention: GQA head map (8 query heads on 2 KV heads) in the K and V maps
// of the token-major layout, scale and causal select, softmax decomposed,
// accumulation in f32, result truncated to f16.
// CHECK-DAG: #[[QK_K:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d0 floordiv 4, d3)>
// CHECK-DAG: #[[PV_V:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d0 floordiv 4, d2)>
// CHECK-LABEL: func.func @attention
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[QK_K]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK: arith.constant 1.250000e-01 : f32
// CHECK: arith.constant 60 : index
// CHECK: arith.cmpi ule
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.select
// CHECK: math.exp
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[PV_V]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-NOT: linalg.softmax
// CHECK-NOT: cachet.attention
func.func @attention(%q: tensor<8x4x64xf16>, %k: tensor<64x2x64xf16>, %v: tensor<64x2x64xf16>) -> tensor<8x4x64xf16> {
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 60
      : tensor<8x4x64xf16>, tensor<64x2x64xf16>, tensor<64x2x64xf16> -> tensor<8x4x64xf16>
  return %o : tensor<8x4x64xf16>
}

// -----

// Head-major layout, additive mask, f16 accumulation.
// CHECK-DAG: #[[HM_K:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[MASK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @attention_head_major
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[HM_K]], #{{.*}}]
// CHECK-SAME: outs(%{{.*}} : tensor<4x4x16xf16>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[MASK]], #{{.*}}]
// CHECK-NOT: arith.cmpi
func.func @attention_head_major(%q: tensor<4x4x32xf16>, %k: tensor<4x16x32xf16>, %v: tensor<4x16x32xf16>, %m: tensor<4x16xf16>) -> tensor<4x4x32xf32> {
  %o = cachet.attention %q, %k, %v mask %m layout <head_major> scale 1.0 {accumulator = f16}
      : tensor<4x4x32xf16>, tensor<4x16x32xf16>, tensor<4x16x32xf16>, tensor<4x16xf16> -> tensor<4x4x32xf32>
  return %o : tensor<4x4x32xf32>
}

// -----

// cachet.quantize: one linalg.generic over the result's bytes (18 per q4_0
// block); each byte reads its block's 32 values (a loop of tensor.extract)
// and computes its field. The block-typed result becomes its bytes.
// CHECK-LABEL: func.func @quantize_q4_0
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xf16>) -> (tensor<4x36xi8> {cachet.block_format = "q4_0"})
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<4x36xi8>)
// CHECK-SAME: attrs = {cachet.quantize = !cachet.q4_0, cachet.quantize_rounding = #cachet.rounding<away>}
// CHECK: scf.for
// CHECK: tensor.extract %[[X]]
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-NOT: linalg.generic
// CHECK: return %[[G]] : tensor<4x36xi8>
func.func @quantize_q4_0(%x: tensor<4x64xf16>) -> tensor<4x2x!cachet.q4_0> {
  %q = cachet.quantize %x : tensor<4x64xf16> -> tensor<4x2x!cachet.q4_0>
  return %q : tensor<4x2x!cachet.q4_0>
}

// -----

// Split q8_0: one generic writing the quants and, from every iteration of a
// block, its scale.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[BLK:.*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 32)>
// CHECK-LABEL: func.func @quantize_split
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[BLK]]]
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<4x64xi8>, tensor<4x2xf16>)
// CHECK-NOT: linalg.generic
func.func @quantize_split(%x: tensor<4x64xbf16>) -> (tensor<4x64xi8>, tensor<4x2xf16>) {
  %q, %s = cachet.quantize %x : tensor<4x64xbf16> -> tensor<4x64xi8>, tensor<4x2xf16>
  return %q, %s : tensor<4x64xi8>, tensor<4x2xf16>
}

// -----

// A KV cache append: the new blocks go into the cache argument's bytes.
// CHECK-LABEL: func.func @append
// CHECK-SAME: %[[C:[^:]*]]: tensor<64x2x72xi8> {cachet.block_format = "q4_0"}
// CHECK-SAME: -> (tensor<64x2x72xi8> {cachet.block_format = "q4_0"})
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<4x2x72xi8>)
// CHECK: %[[R:.*]] = tensor.insert_slice %[[G]] into %[[C]][%{{.*}}, 0, 0] [4, 2, 72] [1, 1, 1]
// CHECK: return %[[R]]
func.func @append(%x: tensor<4x2x128xf16>, %c: tensor<64x2x4x!cachet.q4_0>, %p: index) -> tensor<64x2x4x!cachet.q4_0> {
  %q = cachet.quantize %x : tensor<4x2x128xf16> -> tensor<4x2x4x!cachet.q4_0>
  %r = tensor.insert_slice %q into %c[%p, 0, 0] [4, 2, 4] [1, 1, 1] : tensor<4x2x4x!cachet.q4_0> into tensor<64x2x4x!cachet.q4_0>
  return %r : tensor<64x2x4x!cachet.q4_0>
}

// -----

// Split q4_0 (i4 values, two per byte): the argument becomes its bytes,
// marked "i4"; the dequantize reads byte d / 2 and takes the nibble of d's
// parity, less 8, times the scale of d / 32 in f32, rounded once; the
// generic is marked as q4_0 blocks in two buffers for the mat-vec kernel.
// CHECK-DAG: #[[NIB:.*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 2)>
// CHECK-DAG: #[[SCALE:.*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 32)>
// CHECK-LABEL: func.func @split_q4_0
// CHECK-SAME: %[[B:.*]]: tensor<4x32xi8> {cachet.block_format = "i4"}, %[[S:.*]]: tensor<4x2xf16>
// CHECK: linalg.generic {indexing_maps = [#[[NIB]], #[[SCALE]], #{{.*}}]
// CHECK-SAME: ins(%[[B]], %[[S]] : tensor<4x32xi8>, tensor<4x2xf16>)
// CHECK-SAME: cachet.block_dequantize = !cachet.q4_0
// CHECK: linalg.index 1
// CHECK: arith.shrui
// CHECK: arith.andi
// CHECK: arith.subi
// CHECK: arith.sitofp %{{.*}} : i8 to f32
// CHECK: arith.mulf
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @split_q4_0(%q: tensor<4x64xi4>, %s: tensor<4x2xf16>) -> tensor<4x64xf16> {
  %0 = cachet.dequantize %q scales %s : tensor<4x64xi4>, tensor<4x2xf16> -> tensor<4x64xf16>
  return %0 : tensor<4x64xf16>
}

// -----

// An element-wise generic over i4 values (not a dequantize cachet raises:
// signed int4) reads their bytes: the innermost index halved, the nibble
// shifted down by 4 (i % 2), sign-extended with integer shifts (no i4 is
// left for targets without 4-bit integers). An i4 constant becomes its
// bytes, the even value in the low nibble: [1, -2, 3, 4] is 0xE1, 0x43.
// CHECK-LABEL: func.func @signed_generic
// CHECK-SAME: %[[B:.*]]: tensor<2x4xi8> {cachet.block_format = "i4"}
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}]
// CHECK-SAME: ins(%[[B]] : tensor<2x4xi8>)
// CHECK: ^bb0(%[[V:.*]]: i8, %{{.*}}: f16):
// CHECK: %[[SH:.*]] = arith.shrui %[[V]]
// CHECK: %[[L:.*]] = arith.shli %[[SH]]
// CHECK: %[[R:.*]] = arith.shrsi %[[L]]
// CHECK: arith.sitofp %[[R]] : i8 to f16
// CHECK: %[[C:.*]] = arith.constant dense<[-31, 67]> : tensor<2xi8>
// CHECK: ins(%[[C]] : tensor<2xi8>)
// CHECK: %[[CS:.*]] = arith.shrui
// CHECK: %[[CL:.*]] = arith.andi %[[CS]]
// CHECK: arith.extui %[[CL]] : i8 to i32
// CHECK-NOT: {{xi4>|i4 to|to i4}}
func.func @signed_generic(%q: tensor<2x8xi4>) -> (tensor<2x8xf16>, tensor<4xf16>) {
  %e = tensor.empty() : tensor<2x8xf16>
  %w = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<2x8xi4>) outs(%e : tensor<2x8xf16>) {
  ^bb0(%qv: i4, %o: f16):
    %f = arith.sitofp %qv : i4 to f16
    linalg.yield %f : f16
  } -> tensor<2x8xf16>
  %c = arith.constant dense<[1, -2, 3, 4]> : tensor<4xi4>
  %ce = tensor.empty() : tensor<4xf16>
  %cw = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%c : tensor<4xi4>) outs(%ce : tensor<4xf16>) {
  ^bb0(%qv: i4, %o: f16):
    %i = arith.extui %qv : i4 to i32
    %f = arith.uitofp %i : i32 to f16
    linalg.yield %f : f16
  } -> tensor<4xf16>
  return %w, %cw : tensor<2x8xf16>, tensor<4xf16>
}

// -----

// A split q4_0 over blocks of 32 reshaped from rows: the reshape of the
// bytes, [4, 32] into [4, 2, 16].
// CHECK-LABEL: func.func @split_q4_0_blocks
// CHECK-SAME: %[[B:.*]]: tensor<4x32xi8> {cachet.block_format = "i4"}
// CHECK: tensor.expand_shape %[[B]] {{\[\[}}0], [1, 2]] output_shape [4, 2, 16] : tensor<4x32xi8> into tensor<4x2x16xi8>
func.func @split_q4_0_blocks(%q: tensor<4x64xi4>, %s: tensor<4x2x1xf16>) -> tensor<4x2x32xf32> {
  %qb = tensor.expand_shape %q [[0], [1, 2]] output_shape [4, 2, 32] : tensor<4x64xi4> into tensor<4x2x32xi4>
  %0 = cachet.dequantize %qb scales %s : tensor<4x2x32xi4>, tensor<4x2x1xf16> -> tensor<4x2x32xf32>
  return %0 : tensor<4x2x32xf32>
}
