// RUN: cachet-opt %s -split-input-file -verify-diagnostics -cachet-attach-device=profile=gfx1151 -cachet-pad-weight-rows | FileCheck %s
// h200 has no alias stride: nothing is padded, and the remarks say so.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-pad-weight-rows 2>&1 >/dev/null | FileCheck %s --check-prefix=H200
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-pad-weight-rows 2>/dev/null | FileCheck %s --check-prefix=H200-IR
// The shipped examples behave the same.
// RUN: cachet-opt %cachet_src_root/examples/decode_matvec_chain.mlir -cachet-attach-device=profile=gfx1151 -cachet-pad-weight-rows 2>&1 >/dev/null | FileCheck %s --check-prefix=EXAMPLE-DECODE
// RUN: cachet-opt %cachet_src_root/examples/prefill_linear_bf16.mlir -cachet-attach-device=profile=gfx1151 -cachet-pad-weight-rows 2>&1 >/dev/null | FileCheck %s --check-prefix=EXAMPLE-PREFILL
// Running the pass twice pads nothing more.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=gfx1151 -cachet-pad-weight-rows -cachet-pad-weight-rows 2>&1 >/dev/null | FileCheck %s --check-prefix=TWICE

// gfx1151: alias stride 2048 B, pad 128 B. The decode chain of
// examples/decode_matvec_chain.mlir, one weight argument per line: every
// weight with 2048 B rows gets a 2176 B pitch; the down projection (5632 B
// rows) keeps its layout.

// CHECK-LABEL: func.func @decode_layer
// CHECK-SAME: %arg0: tensor<1024xbf16>, %arg1: tensor<1024xbf16>,
// CHECK-SAME: %arg2: tensor<1024x1024xbf16> {cachet.row_pitch = 1088 : i64, cachet.weight}
// CHECK-SAME: %arg3: tensor<256x1024xbf16> {cachet.row_pitch = 1088 : i64, cachet.weight}
// CHECK-SAME: %arg4: tensor<256x1024xbf16> {cachet.row_pitch = 1088 : i64, cachet.weight}
// CHECK-SAME: %arg5: tensor<1024x1024xbf16> {cachet.row_pitch = 1088 : i64, cachet.weight}
// CHECK-SAME: %arg6: tensor<2816x1024xbf16> {cachet.row_pitch = 1088 : i64, cachet.weight}
// CHECK-SAME: %arg7: tensor<2816x1024xbf16> {cachet.row_pitch = 1088 : i64, cachet.weight}
// CHECK-SAME: %arg8: tensor<1024x2816xbf16> {cachet.weight})
// The body is untouched: every mat-vec still reads its argument.
// CHECK-COUNT-7: linalg.matvec ins(%arg{{[2-8]}}, %{{.*}} : tensor<{{[0-9]+}}x{{[0-9]+}}xbf16>, tensor<{{[0-9]+}}xbf16>)
// CHECK-NOT: extract_slice
// H200-COUNT-7: argument #{{[2-8]}} of @decode_layer (tensor<{{[0-9]+}}x{{[0-9]+}}xbf16>): not padded: no alias stride (alias_stride = 0 from profile 'h200'): the device shows no cache-set aliasing to avoid
// H200: padded 0 of 7 weights, +0 B (alias stride 0 B, pad 128 B from profile 'h200')
// H200: argument #1 of @prefill_linear (tensor<4096x4096xbf16>): not padded: no alias stride (alias_stride = 0 from profile 'h200')
// H200: padded 0 of 1 weights, +0 B
// H200: padded 0 of 3 weights, +0 B
// H200: padded 0 of 1 weights, +0 B
// H200-IR-LABEL: func.func @decode_layer
// H200-IR-NOT: cachet.row_pitch
// H200-IR-LABEL: func.func @prefill_linear
// H200-IR-NOT: cachet.row_pitch
// H200-IR-LABEL: func.func @matmul_forms
// H200-IR-NOT: cachet.row_pitch
// H200-IR-LABEL: func.func @constant_weight
// H200-IR-NOT: extract_slice
// H200-IR: return
// EXAMPLE-DECODE-COUNT-6: padded: 2048 B rows are a multiple of the alias stride 2048 B; pitch 2176 B (1088 elements)
// EXAMPLE-DECODE: argument #8 of @decode_layer (tensor<1024x2816xbf16>): not padded: 5632 B rows are not a multiple of the alias stride 2048 B
// EXAMPLE-DECODE: padded 6 of 7 weights, +1048576 B
// EXAMPLE-PREFILL: argument #1 of @prefill_linear (tensor<4096x4096xbf16>): padded: 8192 B rows are a multiple of the alias stride 2048 B; pitch 8320 B (4160 elements), +524288 B
// TWICE: padded 6 of 7 weights, +1048576 B (alias stride 2048 B, pad 128 B from profile 'gfx1151')
// TWICE: padded 0 of 7 weights, +0 B
#mv_w = affine_map<(i, j) -> (i, j)>
#id1  = affine_map<(i) -> (i)>
module { // expected-remark {{cachet-pad-weight-rows: padded 6 of 7 weights, +1048576 B (alias stride 2048 B, pad 128 B from profile 'gfx1151')}}
func.func @decode_layer(%x: tensor<1024xbf16>, %a: tensor<1024xbf16>,
    %wq: tensor<1024x1024xbf16> {cachet.weight}, // expected-remark {{argument #2 of @decode_layer (tensor<1024x1024xbf16>): padded: 2048 B rows are a multiple of the alias stride 2048 B; pitch 2176 B (1088 elements), +131072 B}}
    %wk: tensor<256x1024xbf16> {cachet.weight}, // expected-remark {{argument #3 of @decode_layer (tensor<256x1024xbf16>): padded: 2048 B rows are a multiple of the alias stride 2048 B; pitch 2176 B (1088 elements), +32768 B}}
    %wv: tensor<256x1024xbf16> {cachet.weight}, // expected-remark {{argument #4 of @decode_layer (tensor<256x1024xbf16>): padded: 2048 B rows are a multiple of the alias stride 2048 B; pitch 2176 B (1088 elements), +32768 B}}
    %wo: tensor<1024x1024xbf16> {cachet.weight}, // expected-remark {{argument #5 of @decode_layer (tensor<1024x1024xbf16>): padded: 2048 B rows are a multiple of the alias stride 2048 B; pitch 2176 B (1088 elements), +131072 B}}
    %wg: tensor<2816x1024xbf16> {cachet.weight}, // expected-remark {{argument #6 of @decode_layer (tensor<2816x1024xbf16>): padded: 2048 B rows are a multiple of the alias stride 2048 B; pitch 2176 B (1088 elements), +360448 B}}
    %wu: tensor<2816x1024xbf16> {cachet.weight}, // expected-remark {{argument #7 of @decode_layer (tensor<2816x1024xbf16>): padded: 2048 B rows are a multiple of the alias stride 2048 B; pitch 2176 B (1088 elements), +360448 B}}
    %wd: tensor<1024x2816xbf16> {cachet.weight}) // expected-remark {{argument #8 of @decode_layer (tensor<1024x2816xbf16>): not padded: 5632 B rows are not a multiple of the alias stride 2048 B}}
    -> (tensor<1024xf32>, tensor<256xf32>, tensor<256xf32>, tensor<1024xf32>) {
  %z = arith.constant 0.0 : f32
  %e1024 = tensor.empty() : tensor<1024xf32>
  %e256 = tensor.empty() : tensor<256xf32>
  %e2816 = tensor.empty() : tensor<2816xf32>
  %z1024 = linalg.fill ins(%z : f32) outs(%e1024 : tensor<1024xf32>) -> tensor<1024xf32>
  %z256 = linalg.fill ins(%z : f32) outs(%e256 : tensor<256xf32>) -> tensor<256xf32>
  %z2816 = linalg.fill ins(%z : f32) outs(%e2816 : tensor<2816xf32>) -> tensor<2816xf32>
  %q = linalg.matvec ins(%wq, %x : tensor<1024x1024xbf16>, tensor<1024xbf16>) outs(%z1024 : tensor<1024xf32>) -> tensor<1024xf32>
  %k = linalg.matvec ins(%wk, %x : tensor<256x1024xbf16>, tensor<1024xbf16>) outs(%z256 : tensor<256xf32>) -> tensor<256xf32>
  %v = linalg.matvec ins(%wv, %x : tensor<256x1024xbf16>, tensor<1024xbf16>) outs(%z256 : tensor<256xf32>) -> tensor<256xf32>
  %o = linalg.matvec ins(%wo, %a : tensor<1024x1024xbf16>, tensor<1024xbf16>) outs(%z1024 : tensor<1024xf32>) -> tensor<1024xf32>
  %ob_e = tensor.empty() : tensor<1024xbf16>
  %ob = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%o : tensor<1024xf32>) outs(%ob_e : tensor<1024xbf16>) {
    ^bb0(%s: f32, %d: bf16):
      %t = arith.truncf %s : f32 to bf16
      linalg.yield %t : bf16
  } -> tensor<1024xbf16>
  %g = linalg.matvec ins(%wg, %ob : tensor<2816x1024xbf16>, tensor<1024xbf16>) outs(%z2816 : tensor<2816xf32>) -> tensor<2816xf32>
  %u = linalg.matvec ins(%wu, %ob : tensor<2816x1024xbf16>, tensor<1024xbf16>) outs(%z2816 : tensor<2816xf32>) -> tensor<2816xf32>
  %he = tensor.empty() : tensor<2816xbf16>
  %h = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%g, %u : tensor<2816xf32>, tensor<2816xf32>) outs(%he : tensor<2816xbf16>) {
    ^bb0(%gv: f32, %uv: f32, %d: bf16):
      %one = arith.constant 1.0 : f32
      %ng = arith.negf %gv : f32
      %ex = math.exp %ng : f32
      %den = arith.addf %one, %ex : f32
      %sig = arith.divf %gv, %den : f32
      %p = arith.mulf %sig, %uv : f32
      %t = arith.truncf %p : f32 to bf16
      linalg.yield %t : bf16
  } -> tensor<2816xbf16>
  %dn = linalg.matvec ins(%wd, %h : tensor<1024x2816xbf16>, tensor<2816xbf16>) outs(%z1024 : tensor<1024xf32>) -> tensor<1024xf32>
  return %q, %k, %v, %dn : tensor<1024xf32>, tensor<256xf32>, tensor<256xf32>, tensor<1024xf32>
}
}

// -----

// examples/prefill_linear_bf16.mlir: y = x W^T through linalg.matmul with
// transposed-B maps; the 8192 B rows of W get an 8320 B pitch.

// CHECK-LABEL: func.func @prefill_linear
// CHECK-SAME: %arg1: tensor<4096x4096xbf16> {cachet.row_pitch = 4160 : i64, cachet.weight}
// CHECK: linalg.matmul
// CHECK-SAME: ins(%arg0, %arg1 : tensor<128x4096xbf16>, tensor<4096x4096xbf16>)
module { // expected-remark {{padded 1 of 1 weights, +524288 B}}
func.func @prefill_linear(%x: tensor<128x4096xbf16>,
                          %w: tensor<4096x4096xbf16> {cachet.weight}) -> tensor<128x4096xf32> { // expected-remark {{argument #1 of @prefill_linear (tensor<4096x4096xbf16>): padded: 8192 B rows are a multiple of the alias stride 2048 B; pitch 8320 B (4160 elements), +524288 B}}
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x4096xf32>
  %zf = linalg.fill ins(%z : f32) outs(%e : tensor<128x4096xf32>) -> tensor<128x4096xf32>
  %y = linalg.matmul
         indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                          affine_map<(m, n, k) -> (n, k)>,
                          affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<128x4096xbf16>, tensor<4096x4096xbf16>)
         outs(%zf : tensor<128x4096xf32>) -> tensor<128x4096xf32>
  return %y : tensor<128x4096xf32>
}
}

// -----

// Plain linalg.matmul (B is [K, N]), linalg.batch_matmul, a weight read by
// two ops, and f16 / f32 weights; rows of unknown count still get a pitch.

// CHECK-LABEL: func.func @matmul_forms
// CHECK-SAME: %arg3: tensor<64x1024xf16> {cachet.row_pitch = 1088 : i64, cachet.weight}
// CHECK-SAME: %arg4: tensor<2x64x512xf32> {cachet.row_pitch = 544 : i64, cachet.weight}
// CHECK-SAME: %arg5: tensor<?x1024xbf16> {cachet.row_pitch = 1088 : i64, cachet.weight}
module { // expected-remark {{padded 3 of 3 weights, +24576 B}}
func.func @matmul_forms(%x: tensor<8x64xf16>, %bx: tensor<2x8x64xf32>, %v: tensor<1024xbf16>,
    %w: tensor<64x1024xf16> {cachet.weight}, // expected-remark {{argument #3 of @matmul_forms (tensor<64x1024xf16>): padded: 2048 B rows are a multiple of the alias stride 2048 B; pitch 2176 B (1088 elements), +8192 B}}
    %bw: tensor<2x64x512xf32> {cachet.weight}, // expected-remark {{argument #4 of @matmul_forms (tensor<2x64x512xf32>): padded: 2048 B rows are a multiple of the alias stride 2048 B; pitch 2176 B (544 elements), +16384 B}}
    %dw: tensor<?x1024xbf16> {cachet.weight}, // expected-remark {{argument #5 of @matmul_forms (tensor<?x1024xbf16>): padded: 2048 B rows are a multiple of the alias stride 2048 B; pitch 2176 B (1088 elements), +128 B per row (row count is dynamic)}}
    %y: tensor<8x1024xf32>, %by: tensor<2x8x512xf32>, %dy: tensor<?xf32>)
    -> (tensor<8x1024xf32>, tensor<8x1024xf32>, tensor<2x8x512xf32>, tensor<?xf32>) {
  %0 = linalg.matmul ins(%x, %w : tensor<8x64xf16>, tensor<64x1024xf16>) outs(%y : tensor<8x1024xf32>) -> tensor<8x1024xf32>
  %1 = linalg.matmul ins(%x, %w : tensor<8x64xf16>, tensor<64x1024xf16>) outs(%0 : tensor<8x1024xf32>) -> tensor<8x1024xf32>
  %2 = linalg.batch_matmul ins(%bx, %bw : tensor<2x8x64xf32>, tensor<2x64x512xf32>) outs(%by : tensor<2x8x512xf32>) -> tensor<2x8x512xf32>
  %3 = linalg.matvec ins(%dw, %v : tensor<?x1024xbf16>, tensor<1024xbf16>) outs(%dy : tensor<?xf32>) -> tensor<?xf32>
  return %0, %1, %2, %3 : tensor<8x1024xf32>, tensor<8x1024xf32>, tensor<2x8x512xf32>, tensor<?xf32>
}
}

// -----

// Constants: the padded constant holds every row followed by a zeroed gap of
// 128 B (32 f32), read back by an extract_slice of the original shape. Large
// constants print as hex: 0x0000803F is 1.0 (f32, little endian).

// CHECK-LABEL: func.func @constant_weight
// CHECK: %[[PADDED:.*]] = arith.constant dense<{{"0x((0000803F){128}){4}(00000000){32}((0000803F){128}){4}(00000000){32}"}}> : tensor<2x544xf32>
// CHECK: %[[W:.*]] = tensor.extract_slice %[[PADDED]][0, 0] [2, 512] [1, 1] : tensor<2x544xf32> to tensor<2x512xf32>
// CHECK: linalg.matvec ins(%[[W]], %{{.*}} : tensor<2x512xf32>, tensor<512xf32>)
module { // expected-remark {{padded 1 of 1 weights, +256 B}}
func.func @constant_weight(%x: tensor<512xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %w = arith.constant dense<1.0> : tensor<2x512xf32> // expected-remark {{arith.constant in @constant_weight (tensor<2x512xf32>): padded: 2048 B rows are a multiple of the alias stride 2048 B; pitch 2176 B (544 elements), +256 B}}
  %r = linalg.matvec ins(%w, %x : tensor<2x512xf32>, tensor<512xf32>) outs(%y : tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}
}

// -----

// A private memref.global constant read through memref.get_global: the
// global grows, each get_global is followed by a strided subview.

// CHECK: memref.global "private" constant @w : memref<2x1088xbf16> = dense<
// CHECK-LABEL: func.func @memref_global
// CHECK: %[[G:.*]] = memref.get_global @w : memref<2x1088xbf16>
// CHECK: %[[V:.*]] = memref.subview %[[G]][0, 0] [2, 1024] [1, 1] : memref<2x1088xbf16> to memref<2x1024xbf16, strided<[1088, 1]>>
// CHECK: linalg.matvec ins(%[[V]], %{{.*}} : memref<2x1024xbf16, strided<[1088, 1]>>, memref<1024xbf16>)
// CHECK-LABEL: func.func @memref_global_as_tensor
// CHECK: %[[G:.*]] = memref.get_global @w : memref<2x1088xbf16>
// CHECK: %[[V:.*]] = memref.subview %[[G]]
// CHECK: bufferization.to_tensor %[[V]] restrict : memref<2x1024xbf16, strided<[1088, 1]>> to tensor<2x1024xbf16>
module { // expected-remark {{padded 1 of 1 weights, +256 B}}
memref.global "private" constant @w : memref<2x1024xbf16> = dense<2.0> // expected-remark {{memref.global @w (memref<2x1024xbf16>): padded: 2048 B rows are a multiple of the alias stride 2048 B; pitch 2176 B (1088 elements), +256 B}}
func.func @memref_global(%x: memref<1024xbf16>, %y: memref<2xf32>) {
  %w = memref.get_global @w : memref<2x1024xbf16>
  linalg.matvec ins(%w, %x : memref<2x1024xbf16>, memref<1024xbf16>) outs(%y : memref<2xf32>)
  return
}
func.func @memref_global_as_tensor(%x: tensor<1024xbf16>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %m = memref.get_global @w : memref<2x1024xbf16>
  %w = bufferization.to_tensor %m restrict : memref<2x1024xbf16> to tensor<2x1024xbf16>
  %r = linalg.matvec ins(%w, %x : tensor<2x1024xbf16>, tensor<1024xbf16>) outs(%y : tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}
}

// -----

// An immutable ml_program.global: the global holds the padded tensor, each
// load is followed by an extract_slice.

// CHECK: ml_program.global private @w(dense<{{.*}}> : tensor<4x1088xf16>) : tensor<4x1088xf16>
// CHECK-LABEL: func.func @ml_program_global
// CHECK: %[[G:.*]] = ml_program.global_load_const @w : tensor<4x1088xf16>
// CHECK: %[[W:.*]] = tensor.extract_slice %[[G]][0, 0] [4, 1024] [1, 1] : tensor<4x1088xf16> to tensor<4x1024xf16>
// CHECK: linalg.matmul {{.*}} ins(%{{.*}}, %[[W]] : tensor<8x1024xf16>, tensor<4x1024xf16>)
module { // expected-remark {{padded 1 of 1 weights, +512 B}}
ml_program.global private @w(dense<0.5> : tensor<4x1024xf16>) : tensor<4x1024xf16> // expected-remark {{ml_program.global @w (tensor<4x1024xf16>): padded: 2048 B rows are a multiple of the alias stride 2048 B; pitch 2176 B (1088 elements), +512 B}}
func.func @ml_program_global(%x: tensor<8x1024xf16>, %y: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %w = ml_program.global_load_const @w : tensor<4x1024xf16>
  %r = linalg.matmul
         indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                          affine_map<(m, n, k) -> (n, k)>,
                          affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<8x1024xf16>, tensor<4x1024xf16>)
         outs(%y : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
}

// -----

// Never padded: integer, sub-byte and quantized weights (also when read by
// cachet.dequantize), other float types, weights no recognized op reads as
// its weight operand, and rows of dynamic length. Unmarked arguments and
// constants that no recognized op reads are not weights: no remark.

// CHECK-LABEL: func.func @never_padded
// CHECK-NOT: cachet.row_pitch
// CHECK-NOT: extract_slice
// CHECK: return
module { // expected-remark {{padded 0 of 7 weights, +0 B}}
func.func @never_padded(
    %i8w: tensor<16x2048xi8> {cachet.weight}, // expected-remark {{argument #0 of @never_padded (tensor<16x2048xi8>): not padded: integer element type i8: integer and sub-byte weights are never padded (kernels derive element offsets from the stride)}}
    %i4w: tensor<16x4096xi4> {cachet.weight}, // expected-remark {{argument #1 of @never_padded (tensor<16x4096xi4>): not padded: integer element type i4}}
    %q8w: tensor<16x64x!cachet.q8_0> {cachet.weight}, // expected-remark {{argument #2 of @never_padded (tensor<16x64x!cachet.q8_0>): not padded: quantized element type !cachet.q8_0: quantized weights are never padded (kernels derive block offsets from the stride)}}
    %f64w: tensor<16x256xf64> {cachet.weight}, // expected-remark {{argument #3 of @never_padded (tensor<16x256xf64>): not padded: element type f64 is not a dense f16, bf16 or f32 type}}
    %vec: tensor<1024xbf16> {cachet.weight}, // expected-remark {{argument #4 of @never_padded (tensor<1024xbf16>): not padded: not read as the weight operand of linalg.matvec, linalg.matmul, linalg.batch_matmul, another contraction or cachet.dequantize}}
    %lhs: tensor<16x1024xbf16> {cachet.weight}, // expected-remark {{argument #5 of @never_padded (tensor<16x1024xbf16>): not padded: not read as the weight operand}}
    %dyn: tensor<16x?xbf16> {cachet.weight}, // expected-remark {{argument #6 of @never_padded (tensor<16x?xbf16>): not padded: row length (innermost dimension) is dynamic}}
    %plain: tensor<16x1024xbf16>,
    %x8: tensor<2048xi8>, %x4: tensor<4096xi4>, %x64: tensor<256xf64>, %xd: tensor<?xbf16>,
    %y16: tensor<16xi32>, %yf: tensor<16xf32>, %yf64: tensor<16xf64>, %ym: tensor<16x16xf32>)
    -> (tensor<16xi32>, tensor<16xi32>, tensor<16x2048xf16>, tensor<16xf64>, tensor<16x16xf32>,
        tensor<16xf32>, tensor<16xf32>, tensor<2xf32>) {
  %0 = linalg.matvec ins(%i8w, %x8 : tensor<16x2048xi8>, tensor<2048xi8>) outs(%y16 : tensor<16xi32>) -> tensor<16xi32>
  %1 = linalg.matvec ins(%i4w, %x4 : tensor<16x4096xi4>, tensor<4096xi4>) outs(%y16 : tensor<16xi32>) -> tensor<16xi32>
  %2 = cachet.dequantize %q8w : tensor<16x64x!cachet.q8_0> -> tensor<16x2048xf16>
  %3 = linalg.matvec ins(%f64w, %x64 : tensor<16x256xf64>, tensor<256xf64>) outs(%yf64 : tensor<16xf64>) -> tensor<16xf64>
  // %lhs is the left-hand side: not the weight operand.
  %4 = linalg.matmul
         indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                          affine_map<(m, n, k) -> (n, k)>,
                          affine_map<(m, n, k) -> (m, n)>]
         ins(%lhs, %plain : tensor<16x1024xbf16>, tensor<16x1024xbf16>)
         outs(%ym : tensor<16x16xf32>) -> tensor<16x16xf32>
  %5 = linalg.matvec ins(%dyn, %xd : tensor<16x?xbf16>, tensor<?xbf16>) outs(%yf : tensor<16xf32>) -> tensor<16xf32>
  // An unmarked argument is not a weight.
  %6 = linalg.matvec ins(%plain, %vec : tensor<16x1024xbf16>, tensor<1024xbf16>) outs(%yf : tensor<16xf32>) -> tensor<16xf32>
  // A constant that no recognized op reads is not a weight.
  %c = arith.constant dense<1.0> : tensor<2x512xf32>
  %cy = arith.constant dense<0.0> : tensor<2xf32>
  %7 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%c : tensor<2x512xf32>) outs(%cy : tensor<2xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
  } -> tensor<2xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<16xi32>, tensor<16xi32>, tensor<16x2048xf16>, tensor<16xf64>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2xf32>
}
}

// -----

// The split q8_0 form: int8 values and f16 scales. The values are the
// weight operand of cachet.dequantize; the scales are not.

// CHECK-LABEL: func.func @split_q8_0
// CHECK-NOT: cachet.row_pitch
module { // expected-remark {{padded 0 of 2 weights, +0 B}}
func.func @split_q8_0(
    %qs: tensor<64x2048xi8> {cachet.weight}, // expected-remark {{argument #0 of @split_q8_0 (tensor<64x2048xi8>): not padded: integer element type i8}}
    %d: tensor<64x64xf16> {cachet.weight}) // expected-remark {{argument #1 of @split_q8_0 (tensor<64x64xf16>): not padded: not read as the weight operand}}
    -> tensor<64x2048xf16> {
  %w = cachet.dequantize %qs scales %d : tensor<64x2048xi8>, tensor<64x64xf16> -> tensor<64x2048xf16>
  return %w : tensor<64x2048xf16>
}
}

// -----

// Aliasing rows that cannot be rewritten: a weight that already has a pitch,
// a single row, a dense_resource whose blob is elided, a public global and a
// global whose loads need the identity layout.

// CHECK-LABEL: func.func @kept
// CHECK-SAME: {cachet.row_pitch = 1100 : i64, cachet.weight}
// CHECK: memref.get_global @public_w : memref<2x1024xbf16>
// CHECK: memref.get_global @escaping_w : memref<2x1024xbf16>
// CHECK-NOT: subview
// CHECK-NOT: extract_slice
module { // expected-remark {{padded 0 of 5 weights, +0 B}}
memref.global constant @public_w : memref<2x1024xbf16> = dense<1.0> // expected-remark {{memref.global @public_w (memref<2x1024xbf16>): not padded: 2048 B rows are a multiple of the alias stride 2048 B, but the global is public: its type is visible outside the module}}
memref.global "private" constant @escaping_w : memref<2x1024xbf16> = dense<1.0> // expected-remark {{memref.global @escaping_w (memref<2x1024xbf16>): not padded: 2048 B rows are a multiple of the alias stride 2048 B, but a memref.get_global of it is used by func.call, which needs the identity layout}}
func.func private @consume(memref<2x1024xbf16>)
func.func @kept(%x: tensor<1024xbf16>, %y: tensor<16xf32>, %xm: memref<1024xbf16>, %ym: memref<2xf32>,
    %w: tensor<16x1024xbf16> {cachet.row_pitch = 1100 : i64, cachet.weight}) // expected-remark {{argument #4 of @kept (tensor<16x1024xbf16>): not padded: 2048 B rows are a multiple of the alias stride 2048 B, but already has cachet.row_pitch}}
    -> (tensor<16xf32>, tensor<1xf32>) {
  %0 = linalg.matvec ins(%w, %x : tensor<16x1024xbf16>, tensor<1024xbf16>) outs(%y : tensor<16xf32>) -> tensor<16xf32>
  %row = arith.constant dense<1.0> : tensor<1x1024xbf16> // expected-remark {{arith.constant in @kept (tensor<1x1024xbf16>): not padded: a single row has no row stride}}
  %y1 = arith.constant dense<0.0> : tensor<1xf32>
  %1 = linalg.matvec ins(%row, %x : tensor<1x1024xbf16>, tensor<1024xbf16>) outs(%y1 : tensor<1xf32>) -> tensor<1xf32>
  %elided = arith.constant dense_resource<__elided__> : tensor<16x1024xbf16> // expected-remark {{arith.constant in @kept (tensor<16x1024xbf16>): not padded: 2048 B rows are a multiple of the alias stride 2048 B, but the dense_resource blob is not available}}
  %2 = linalg.matvec ins(%elided, %x : tensor<16x1024xbf16>, tensor<1024xbf16>) outs(%0 : tensor<16xf32>) -> tensor<16xf32>
  %p = memref.get_global @public_w : memref<2x1024xbf16>
  linalg.matvec ins(%p, %xm : memref<2x1024xbf16>, memref<1024xbf16>) outs(%ym : memref<2xf32>)
  %e = memref.get_global @escaping_w : memref<2x1024xbf16>
  linalg.matvec ins(%e, %xm : memref<2x1024xbf16>, memref<1024xbf16>) outs(%ym : memref<2xf32>)
  func.call @consume(%e) : (memref<2x1024xbf16>) -> ()
  return %2, %1 : tensor<16xf32>, tensor<1xf32>
}
}
