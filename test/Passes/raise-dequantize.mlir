// RUN: cachet-opt %s -split-input-file -cachet-raise-dequantize -verify-diagnostics | FileCheck %s

// The split q8_0 weight a front end writes for a decode projection: i8
// values, one f16 scale per 32 along the row, float(q) * s in f16, feeding
// linalg.matvec. Raised to cachet.dequantize; the mat-vec now reads its
// result.
// CHECK-LABEL: func.func @flat_f16
// CHECK-SAME: (%[[Q:.*]]: tensor<16x64xi8>, %[[S:.*]]: tensor<16x2xf16>
// CHECK-NOT: linalg.generic
// CHECK: %[[W:.*]] = cachet.dequantize %[[Q]] scales %[[S]] : tensor<16x64xi8>, tensor<16x2xf16> -> tensor<16x64xf16>
// CHECK: linalg.matvec ins(%[[W]], %{{.*}} : tensor<16x64xf16>, tensor<64xf16>)
func.func @flat_f16(%q: tensor<16x64xi8>, %s: tensor<16x2xf16>, %x: tensor<64xf16>) -> tensor<16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf16>
  // expected-remark @+1 {{cachet-raise-dequantize: raised to cachet.dequantize: split q8_0 of 'tensor<16x64xi8>' to 'f16'}}
  %w = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c floordiv 32)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%q, %s : tensor<16x64xi8>, tensor<16x2xf16>) outs(%e : tensor<16x64xf16>) {
  ^bb0(%qv: i8, %sv: f16, %o: f16):
    %f = arith.sitofp %qv : i8 to f16
    %m = arith.mulf %f, %sv : f16
    linalg.yield %m : f16
  } -> tensor<16x64xf16>
  %ye = tensor.empty() : tensor<16xf32>
  %yz = linalg.fill ins(%z : f32) outs(%ye : tensor<16xf32>) -> tensor<16xf32>
  %y = linalg.matvec ins(%w, %x : tensor<16x64xf16>, tensor<64xf16>) outs(%yz : tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// Scales first, computed in f32 and truncated to bf16 once: the exact
// product rounded once, as cachet.dequantize rounds it.
// CHECK-LABEL: func.func @f32_then_bf16
// CHECK: cachet.dequantize %arg0 scales %arg1 : tensor<4x32xi8>, tensor<4x1xf16> -> tensor<4x32xbf16>
func.func @f32_then_bf16(%q: tensor<4x32xi8>, %s: tensor<4x1xf16>) -> tensor<4x32xbf16> {
  %e = tensor.empty() : tensor<4x32xbf16>
  // expected-remark @+1 {{raised to cachet.dequantize: split q8_0 of 'tensor<4x32xi8>' to 'bf16'}}
  %w = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c floordiv 32)>, affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %q : tensor<4x1xf16>, tensor<4x32xi8>) outs(%e : tensor<4x32xbf16>) {
  ^bb0(%sv: f16, %qv: i8, %o: bf16):
    %sf = arith.extf %sv : f16 to f32
    %f = arith.sitofp %qv : i8 to f32
    %m = arith.mulf %sf, %f : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x32xbf16>
  return %w : tensor<4x32xbf16>
}

// -----

// Rank 3 (a KV cache, token-major), to f32.
// CHECK-LABEL: func.func @rank3_f32
// CHECK: cachet.dequantize %arg0 scales %arg1 : tensor<8x2x64xi8>, tensor<8x2x2xf16> -> tensor<8x2x64xf32>
func.func @rank3_f32(%q: tensor<8x2x64xi8>, %s: tensor<8x2x2xf16>) -> tensor<8x2x64xf32> {
  %e = tensor.empty() : tensor<8x2x64xf32>
  // expected-remark @+1 {{raised to cachet.dequantize}}
  %w = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b, c floordiv 32)>, affine_map<(a, b, c) -> (a, b, c)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q, %s : tensor<8x2x64xi8>, tensor<8x2x2xf16>) outs(%e : tensor<8x2x64xf32>) {
  ^bb0(%qv: i8, %sv: f16, %o: f32):
    %f = arith.sitofp %qv : i8 to f32
    %sf = arith.extf %sv : f16 to f32
    %m = arith.mulf %f, %sf : f32
    linalg.yield %m : f32
  } -> tensor<8x2x64xf32>
  return %w : tensor<8x2x64xf32>
}

// -----

// Over blocks, as `(q.view(R, C/32, 32) * s[..., None]).view(R, C)` lowers:
// the values reshaped into blocks and the result collapsed back. Raised
// flat; the reshapes go away.
// CHECK-LABEL: func.func @blocks_flat
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: linalg.generic
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[W:.*]] = cachet.dequantize %arg0 scales %arg1 : tensor<16x64xi8>, tensor<16x2xf16> -> tensor<16x64xf16>
// CHECK: return %[[W]]
func.func @blocks_flat(%q: tensor<16x64xi8>, %s: tensor<16x2xf16>) -> tensor<16x64xf16> {
  %qb = tensor.expand_shape %q [[0], [1, 2]] output_shape [16, 2, 32] : tensor<16x64xi8> into tensor<16x2x32xi8>
  %e = tensor.empty() : tensor<16x2x32xf16>
  // expected-remark @+1 {{raised to cachet.dequantize: split q8_0 of 'tensor<16x64xi8>' to 'f16', flat (the reshapes into blocks of 32 and back go away)}}
  %wb = linalg.generic {indexing_maps = [affine_map<(r, b, i) -> (r, b, i)>, affine_map<(r, b, i) -> (r, b)>, affine_map<(r, b, i) -> (r, b, i)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%qb, %s : tensor<16x2x32xi8>, tensor<16x2xf16>) outs(%e : tensor<16x2x32xf16>) {
  ^bb0(%qv: i8, %sv: f16, %o: f16):
    %f = arith.sitofp %qv : i8 to f16
    %m = arith.mulf %sv, %f : f16
    linalg.yield %m : f16
  } -> tensor<16x2x32xf16>
  %w = tensor.collapse_shape %wb [[0], [1, 2]] : tensor<16x2x32xf16> into tensor<16x64xf16>
  return %w : tensor<16x64xf16>
}

// -----

// Over blocks of an argument already in blocks: raised over blocks, the
// scales given a unit dimension.
// CHECK-LABEL: func.func @blocks_kept
// CHECK: %[[S:.*]] = tensor.expand_shape %arg1 {{\[\[}}0], [1, 2]] output_shape [16, 2, 1] : tensor<16x2xf16> into tensor<16x2x1xf16>
// CHECK: cachet.dequantize %arg0 scales %[[S]] : tensor<16x2x32xi8>, tensor<16x2x1xf16> -> tensor<16x2x32xf16>
func.func @blocks_kept(%q: tensor<16x2x32xi8>, %s: tensor<16x2xf16>) -> tensor<16x2x32xf16> {
  %e = tensor.empty() : tensor<16x2x32xf16>
  // expected-remark @+1 {{raised to cachet.dequantize: split q8_0 of 'tensor<16x2x32xi8>' to 'f16', over blocks of 32}}
  %wb = linalg.generic {indexing_maps = [affine_map<(r, b, i) -> (r, b, i)>, affine_map<(r, b, i) -> (r, b)>, affine_map<(r, b, i) -> (r, b, i)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q, %s : tensor<16x2x32xi8>, tensor<16x2xf16>) outs(%e : tensor<16x2x32xf16>) {
  ^bb0(%qv: i8, %sv: f16, %o: f16):
    %f = arith.sitofp %qv : i8 to f16
    %m = arith.mulf %f, %sv : f16
    linalg.yield %m : f16
  } -> tensor<16x2x32xf16>
  return %wb : tensor<16x2x32xf16>
}

// -----

// Over blocks with `s.unsqueeze(-1)` broadcast: [R][C/32][1] scales read
// with (r, b, 0).
// CHECK-LABEL: func.func @blocks_unit_scales
// CHECK: cachet.dequantize %arg0 scales %arg1 : tensor<4x2x32xi8>, tensor<4x2x1xf16> -> tensor<4x2x32xf32>
func.func @blocks_unit_scales(%q: tensor<4x2x32xi8>, %s: tensor<4x2x1xf16>) -> tensor<4x2x32xf32> {
  %e = tensor.empty() : tensor<4x2x32xf32>
  // expected-remark @+1 {{over blocks of 32}}
  %wb = linalg.generic {indexing_maps = [affine_map<(r, b, i) -> (r, b, i)>, affine_map<(r, b, i) -> (r, b, 0)>, affine_map<(r, b, i) -> (r, b, i)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q, %s : tensor<4x2x32xi8>, tensor<4x2x1xf16>) outs(%e : tensor<4x2x32xf32>) {
  ^bb0(%qv: i8, %sv: f16, %o: f32):
    %f = arith.sitofp %qv : i8 to f32
    %sf = arith.extf %sv : f16 to f32
    %m = arith.mulf %f, %sf : f32
    linalg.yield %m : f32
  } -> tensor<4x2x32xf32>
  return %wb : tensor<4x2x32xf32>
}

// -----

// Not q8_0: blocks of 64 values per scale.
// CHECK-LABEL: func.func @block64
// CHECK: linalg.generic
// CHECK-NOT: cachet.dequantize
func.func @block64(%q: tensor<4x128xi8>, %s: tensor<4x2xf16>) -> tensor<4x128xf16> {
  %e = tensor.empty() : tensor<4x128xf16>
  // expected-remark @+1 {{cachet-raise-dequantize: not raised: block size is 64, not 32 (q8_0)}}
  %w = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c floordiv 64)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%q, %s : tensor<4x128xi8>, tensor<4x2xf16>) outs(%e : tensor<4x128xf16>) {
  ^bb0(%qv: i8, %sv: f16, %o: f16):
    %f = arith.sitofp %qv : i8 to f16
    %m = arith.mulf %f, %sv : f16
    linalg.yield %m : f16
  } -> tensor<4x128xf16>
  return %w : tensor<4x128xf16>
}

// -----

// A zero point, (q - z) * s, is not q8_0.
// CHECK-LABEL: func.func @zero_point
// CHECK-NOT: cachet.dequantize
func.func @zero_point(%q: tensor<4x32xi8>, %s: tensor<4x1xf16>) -> tensor<4x32xf16> {
  %e = tensor.empty() : tensor<4x32xf16>
  // expected-remark @+1 {{not raised: dequantize generic body is not float(q) * scale}}
  %w = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c floordiv 32)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%q, %s : tensor<4x32xi8>, tensor<4x1xf16>) outs(%e : tensor<4x32xf16>) {
  ^bb0(%qv: i8, %sv: f16, %o: f16):
    %f = arith.sitofp %qv : i8 to f16
    %zp = arith.constant 8.0 : f16
    %c = arith.subf %f, %zp : f16
    %m = arith.mulf %c, %sv : f16
    linalg.yield %m : f16
  } -> tensor<4x32xf16>
  return %w : tensor<4x32xf16>
}

// -----

// f32 scales rounded to f16 results: the product is rounded twice, which
// cachet.dequantize (f16 scales) does not describe.
// CHECK-LABEL: func.func @f32_scales
// CHECK-NOT: cachet.dequantize
func.func @f32_scales(%q: tensor<4x32xi8>, %s: tensor<4x1xf32>) -> tensor<4x32xf16> {
  %e = tensor.empty() : tensor<4x32xf16>
  // expected-remark @+1 {{not raised: dequantize generic does not read i8 or i4 values and f16 scales}}
  %w = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c floordiv 32)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%q, %s : tensor<4x32xi8>, tensor<4x1xf32>) outs(%e : tensor<4x32xf16>) {
  ^bb0(%qv: i8, %sv: f32, %o: f16):
    %f = arith.sitofp %qv : i8 to f32
    %m = arith.mulf %f, %sv : f32
    %t = arith.truncf %m : f32 to f16
    linalg.yield %t : f16
  } -> tensor<4x32xf16>
  return %w : tensor<4x32xf16>
}

// -----

// Multiplied in f16 and widened to f32: rounded to f16 first, not the
// exact f32 product.
// CHECK-LABEL: func.func @f16_widened
// CHECK-NOT: cachet.dequantize
func.func @f16_widened(%q: tensor<4x32xi8>, %s: tensor<4x1xf16>) -> tensor<4x32xf32> {
  %e = tensor.empty() : tensor<4x32xf32>
  // expected-remark @+1 {{not raised: dequantize generic body is not float(q) * scale}}
  %w = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c floordiv 32)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%q, %s : tensor<4x32xi8>, tensor<4x1xf16>) outs(%e : tensor<4x32xf32>) {
  ^bb0(%qv: i8, %sv: f16, %o: f32):
    %f = arith.sitofp %qv : i8 to f16
    %m = arith.mulf %f, %sv : f16
    %w = arith.extf %m : f16 to f32
    linalg.yield %w : f32
  } -> tensor<4x32xf32>
  return %w : tensor<4x32xf32>
}

// -----

// The values read transposed (a weight stored column-major).
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: cachet.dequantize
func.func @transposed(%q: tensor<32x4xi8>, %s: tensor<4x1xf16>) -> tensor<4x32xf16> {
  %e = tensor.empty() : tensor<4x32xf16>
  // expected-remark @+1 {{not raised: dequantize generic does not read the values element-wise}}
  %w = linalg.generic {indexing_maps = [affine_map<(r, c) -> (c, r)>, affine_map<(r, c) -> (r, c floordiv 32)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%q, %s : tensor<32x4xi8>, tensor<4x1xf16>) outs(%e : tensor<4x32xf16>) {
  ^bb0(%qv: i8, %sv: f16, %o: f16):
    %f = arith.sitofp %qv : i8 to f16
    %m = arith.mulf %f, %sv : f16
    linalg.yield %m : f16
  } -> tensor<4x32xf16>
  return %w : tensor<4x32xf16>
}

// -----

// A scale per row of 64 (per-channel int8): blocks of 64.
// CHECK-LABEL: func.func @per_row
// CHECK-NOT: cachet.dequantize
func.func @per_row(%q: tensor<4x64xi8>, %s: tensor<4xf16>) -> tensor<4x64xf16> {
  %e = tensor.empty() : tensor<4x64xf16>
  // expected-remark @+1 {{not raised: block size is 64, not 32 (q8_0)}}
  %w = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%q, %s : tensor<4x64xi8>, tensor<4xf16>) outs(%e : tensor<4x64xf16>) {
  ^bb0(%qv: i8, %sv: f16, %o: f16):
    %f = arith.sitofp %qv : i8 to f16
    %m = arith.mulf %f, %sv : f16
    linalg.yield %m : f16
  } -> tensor<4x64xf16>
  return %w : tensor<4x64xf16>
}

// -----

// A scale per value is not per block.
// CHECK-LABEL: func.func @per_value
// CHECK-NOT: cachet.dequantize
func.func @per_value(%q: tensor<4x64xi8>, %s: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %e = tensor.empty() : tensor<4x64xf16>
  // expected-remark @+1 {{not raised: scale is not per block: its map must be (..., d) -> (..., d floordiv 32), or over blocks (..., b, i) -> (..., b)}}
  %w = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%q, %s : tensor<4x64xi8>, tensor<4x64xf16>) outs(%e : tensor<4x64xf16>) {
  ^bb0(%qv: i8, %sv: f16, %o: f16):
    %f = arith.sitofp %qv : i8 to f16
    %m = arith.mulf %f, %sv : f16
    linalg.yield %m : f16
  } -> tensor<4x64xf16>
  return %w : tensor<4x64xf16>
}

// -----

// A plain i8 to f16 conversion (one input) is not a dequantization.
// CHECK-LABEL: func.func @convert_only
// CHECK-NOT: cachet.dequantize
func.func @convert_only(%q: tensor<4x32xi8>) -> tensor<4x32xf16> {
  %e = tensor.empty() : tensor<4x32xf16>
  // expected-remark @+1 {{not raised: dequantize generic is not element-wise over two inputs (values and scales) into one result}}
  %w = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<4x32xi8>) outs(%e : tensor<4x32xf16>) {
  ^bb0(%qv: i8, %o: f16):
    %f = arith.sitofp %qv : i8 to f16
    linalg.yield %f : f16
  } -> tensor<4x32xf16>
  return %w : tensor<4x32xf16>
}

// -----

// Split q4_0 as front ends write int4 weights (IREE, torch-mlir): i4
// values zero-extended, converted unsigned, less the zero point 8, times an
// f16 scale per 32, in f16, feeding linalg.matvec.
// CHECK-LABEL: func.func @q4_flat_f16
// CHECK-SAME: (%[[Q:.*]]: tensor<16x64xi4>, %[[S:.*]]: tensor<16x2xf16>
// CHECK-NOT: linalg.generic
// CHECK: %[[W:.*]] = cachet.dequantize %[[Q]] scales %[[S]] : tensor<16x64xi4>, tensor<16x2xf16> -> tensor<16x64xf16>
// CHECK: linalg.matvec ins(%[[W]], %{{.*}} : tensor<16x64xf16>, tensor<64xf16>)
func.func @q4_flat_f16(%q: tensor<16x64xi4>, %s: tensor<16x2xf16>, %x: tensor<64xf16>) -> tensor<16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf16>
  // expected-remark @+1 {{cachet-raise-dequantize: raised to cachet.dequantize: split q4_0 of 'tensor<16x64xi4>' to 'f16'}}
  %w = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c floordiv 32)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%q, %s : tensor<16x64xi4>, tensor<16x2xf16>) outs(%e : tensor<16x64xf16>) {
  ^bb0(%qv: i4, %sv: f16, %o: f16):
    %zp = arith.constant 8.0 : f16
    %i = arith.extui %qv : i4 to i32
    %f = arith.uitofp %i : i32 to f16
    %c = arith.subf %f, %zp : f16
    %m = arith.mulf %c, %sv : f16
    linalg.yield %m : f16
  } -> tensor<16x64xf16>
  %ye = tensor.empty() : tensor<16xf32>
  %yz = linalg.fill ins(%z : f32) outs(%ye : tensor<16xf32>) -> tensor<16xf32>
  %y = linalg.matvec ins(%w, %x : tensor<16x64xf16>, tensor<64xf16>) outs(%yz : tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// The zero point subtracted in integers, then converted signed (exact),
// in f32 truncated once to bf16; the scales first.
// CHECK-LABEL: func.func @q4_int_zero_point_bf16
// CHECK: cachet.dequantize %arg0 scales %arg1 : tensor<4x32xi4>, tensor<4x1xf16> -> tensor<4x32xbf16>
func.func @q4_int_zero_point_bf16(%q: tensor<4x32xi4>, %s: tensor<4x1xf16>) -> tensor<4x32xbf16> {
  %e = tensor.empty() : tensor<4x32xbf16>
  // expected-remark @+1 {{raised to cachet.dequantize: split q4_0 of 'tensor<4x32xi4>' to 'bf16'}}
  %w = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c floordiv 32)>, affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %q : tensor<4x1xf16>, tensor<4x32xi4>) outs(%e : tensor<4x32xbf16>) {
  ^bb0(%sv: f16, %qv: i4, %o: bf16):
    %c8 = arith.constant 8 : i8
    %i = arith.extui %qv : i4 to i8
    %c = arith.subi %i, %c8 : i8
    %f = arith.sitofp %c : i8 to f32
    %sf = arith.extf %sv : f16 to f32
    %m = arith.mulf %sf, %f : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x32xbf16>
  return %w : tensor<4x32xbf16>
}

// -----

// Over blocks, reshaped from and back to rows: raised flat; uitofp of the
// i4 directly, and + -8.
// CHECK-LABEL: func.func @q4_blocks_flat
// CHECK-NOT: tensor.expand_shape
// CHECK: cachet.dequantize %arg0 scales %arg1 : tensor<8x64xi4>, tensor<8x2xf16> -> tensor<8x64xf32>
// CHECK-NOT: tensor.collapse_shape
func.func @q4_blocks_flat(%q: tensor<8x64xi4>, %s: tensor<8x2xf16>) -> tensor<8x64xf32> {
  %qb = tensor.expand_shape %q [[0], [1, 2]] output_shape [8, 2, 32] : tensor<8x64xi4> into tensor<8x2x32xi4>
  %e = tensor.empty() : tensor<8x2x32xf32>
  // expected-remark @+1 {{raised to cachet.dequantize: split q4_0 of 'tensor<8x64xi4>' to 'f32', flat}}
  %w = linalg.generic {indexing_maps = [affine_map<(r, b, i) -> (r, b, i)>, affine_map<(r, b, i) -> (r, b)>, affine_map<(r, b, i) -> (r, b, i)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%qb, %s : tensor<8x2x32xi4>, tensor<8x2xf16>) outs(%e : tensor<8x2x32xf32>) {
  ^bb0(%qv: i4, %sv: f16, %o: f32):
    %m8 = arith.constant -8.0 : f32
    %f = arith.uitofp %qv : i4 to f32
    %c = arith.addf %m8, %f : f32
    %sf = arith.extf %sv : f16 to f32
    %m = arith.mulf %c, %sf : f32
    linalg.yield %m : f32
  } -> tensor<8x2x32xf32>
  %flat = tensor.collapse_shape %w [[0], [1, 2]] : tensor<8x2x32xf32> into tensor<8x64xf32>
  return %flat : tensor<8x64xf32>
}

// -----

// Signed i4 values (symmetric int4): not q4_0's nibbles; left alone.
// CHECK-LABEL: func.func @q4_signed
// CHECK: linalg.generic
// CHECK-NOT: cachet.dequantize
func.func @q4_signed(%q: tensor<4x32xi4>, %s: tensor<4x1xf16>) -> tensor<4x32xf16> {
  %e = tensor.empty() : tensor<4x32xf16>
  // expected-remark @+1 {{not raised: signed i4 values (sitofp) are not q4_0's unsigned nibbles less 8; only the unsigned form is raised}}
  %w = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c floordiv 32)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%q, %s : tensor<4x32xi4>, tensor<4x1xf16>) outs(%e : tensor<4x32xf16>) {
  ^bb0(%qv: i4, %sv: f16, %o: f16):
    %f = arith.sitofp %qv : i4 to f16
    %m = arith.mulf %f, %sv : f16
    linalg.yield %m : f16
  } -> tensor<4x32xf16>
  return %w : tensor<4x32xf16>
}

// -----

// A zero point of 7: not q4_0.
// CHECK-LABEL: func.func @q4_zero_point_7
// CHECK-NOT: cachet.dequantize
func.func @q4_zero_point_7(%q: tensor<4x32xi4>, %s: tensor<4x1xf16>) -> tensor<4x32xf16> {
  %e = tensor.empty() : tensor<4x32xf16>
  // expected-remark @+1 {{not raised: the zero point subtracted from the i4 values is not the constant 8 (q4_0's)}}
  %w = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c floordiv 32)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%q, %s : tensor<4x32xi4>, tensor<4x1xf16>) outs(%e : tensor<4x32xf16>) {
  ^bb0(%qv: i4, %sv: f16, %o: f16):
    %zp = arith.constant 7.0 : f16
    %f = arith.uitofp %qv : i4 to f16
    %c = arith.subf %f, %zp : f16
    %m = arith.mulf %c, %sv : f16
    linalg.yield %m : f16
  } -> tensor<4x32xf16>
  return %w : tensor<4x32xf16>
}

// -----

// Groups of 128 (GPTQ / AWQ-style int4): not q4_0's blocks of 32.
// CHECK-LABEL: func.func @q4_group128
// CHECK-NOT: cachet.dequantize
func.func @q4_group128(%q: tensor<4x256xi4>, %s: tensor<4x2xf16>) -> tensor<4x256xf16> {
  %e = tensor.empty() : tensor<4x256xf16>
  // expected-remark @+1 {{not raised: block size is 128, not 32 (q4_0)}}
  %w = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c floordiv 128)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%q, %s : tensor<4x256xi4>, tensor<4x2xf16>) outs(%e : tensor<4x256xf16>) {
  ^bb0(%qv: i4, %sv: f16, %o: f16):
    %zp = arith.constant 8.0 : f16
    %f = arith.uitofp %qv : i4 to f16
    %c = arith.subf %f, %zp : f16
    %m = arith.mulf %c, %sv : f16
    linalg.yield %m : f16
  } -> tensor<4x256xf16>
  return %w : tensor<4x256xf16>
}

// -----

// Unsigned i4 with no zero point.
// CHECK-LABEL: func.func @q4_no_zero_point
// CHECK-NOT: cachet.dequantize
func.func @q4_no_zero_point(%q: tensor<4x32xi4>, %s: tensor<4x1xf16>) -> tensor<4x32xf16> {
  %e = tensor.empty() : tensor<4x32xf16>
  // expected-remark @+1 {{not raised: unsigned i4 values have no zero point; q4_0 subtracts 8}}
  %w = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c floordiv 32)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%q, %s : tensor<4x32xi4>, tensor<4x1xf16>) outs(%e : tensor<4x32xf16>) {
  ^bb0(%qv: i4, %sv: f16, %o: f16):
    %f = arith.uitofp %qv : i4 to f16
    %m = arith.mulf %f, %sv : f16
    linalg.yield %m : f16
  } -> tensor<4x32xf16>
  return %w : tensor<4x32xf16>
}
