// Options override the profile; invalid values fall back to no padding with a
// remark naming the condition; profiles without an alias stride pad nothing.
//
// Options alone, no profile: the small constants below get zeroed gaps.
// RUN: cachet-opt %s -split-input-file -cachet-pad-weight-rows="alias-stride=32 pad=16" 2>/dev/null | FileCheck %s --check-prefix=SMALL
// RUN: cachet-opt %s -split-input-file -cachet-pad-weight-rows="alias-stride=32 pad=16" -one-shot-bufferize=bufferize-function-boundaries 2>/dev/null | FileCheck %s --check-prefix=BUF
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=gfx1151 -cachet-pad-weight-rows=alias-stride=4096 2>&1 >/dev/null | FileCheck %s --check-prefix=STRIDE4K
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=gfx1151 -cachet-pad-weight-rows=pad=256 2>&1 >/dev/null | FileCheck %s --check-prefix=PAD256
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=gfx1151 -cachet-pad-weight-rows=alias-stride=3000 2>&1 >/dev/null | FileCheck %s --check-prefix=NOTPOW2
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=gfx1151 -cachet-pad-weight-rows=alias-stride=-7 2>&1 >/dev/null | FileCheck %s --check-prefix=NEGSTRIDE
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=gfx1151 -cachet-pad-weight-rows=alias-stride=0 2>&1 >/dev/null | FileCheck %s --check-prefix=ZEROSTRIDE
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=gfx1151 -cachet-pad-weight-rows=pad=2048 2>&1 >/dev/null | FileCheck %s --check-prefix=PADMULT
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=gfx1151 -cachet-pad-weight-rows=pad=0 2>&1 >/dev/null | FileCheck %s --check-prefix=PADZERO
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=gfx1151 -cachet-pad-weight-rows=pad=-5 2>&1 >/dev/null | FileCheck %s --check-prefix=PADNEG
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=gfx1151 -cachet-pad-weight-rows=pad=8 2>&1 >/dev/null | FileCheck %s --check-prefix=PADVEC
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=gfx1151 -cachet-pad-weight-rows=pad=6 2>&1 >/dev/null | FileCheck %s --check-prefix=PADELEM
// Invalid overrides leave the IR as it was.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=gfx1151 -cachet-pad-weight-rows=pad=8 2>/dev/null | FileCheck %s --check-prefix=UNCHANGED
// Profiles: h200 has no alias stride; an option supplies one, and the pad is
// then one cache line (h200's alias_pad is 0). gfx942: 512 B stride, 128 B
// pad. lavapipe: 2048 B stride, 64 B pad.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-pad-weight-rows 2>&1 >/dev/null | FileCheck %s --check-prefix=H200
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-pad-weight-rows 2>/dev/null | FileCheck %s --check-prefix=UNCHANGED
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-pad-weight-rows=alias-stride=2048 2>&1 >/dev/null | FileCheck %s --check-prefix=H200-STRIDE
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=gfx942 -cachet-pad-weight-rows 2>&1 >/dev/null | FileCheck %s --check-prefix=GFX942
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=lavapipe -cachet-pad-weight-rows 2>&1 >/dev/null | FileCheck %s --check-prefix=LAVAPIPE
// No profile and not both options: a warning, nothing padded.
// RUN: cachet-opt %s -split-input-file -cachet-pad-weight-rows 2>&1 >/dev/null | FileCheck %s --check-prefix=NOPROFILE
// RUN: cachet-opt %s -split-input-file -cachet-pad-weight-rows=pad=128 2>&1 >/dev/null | FileCheck %s --check-prefix=NOPROFILE
// RUN: cachet-opt %s -split-input-file -cachet-pad-weight-rows 2>/dev/null | FileCheck %s --check-prefix=UNCHANGED

// Three weights: bf16 with 2048 B rows, bf16 with 8192 B rows, f32 with
// 2048 B rows.

// STRIDE4K: argument #0 of @rows (tensor<4x1024xbf16>): not padded: 2048 B rows are not a multiple of the alias stride 4096 B
// STRIDE4K: argument #1 of @rows (tensor<4x4096xbf16>): padded: 8192 B rows are a multiple of the alias stride 4096 B; pitch 8320 B (4160 elements), +512 B
// STRIDE4K: argument #2 of @rows (tensor<4x512xf32>): not padded: 2048 B rows are not a multiple of the alias stride 4096 B
// STRIDE4K: padded 1 of 3 weights, +512 B (alias stride 4096 B, pad 128 B from profile 'gfx1151' overridden by option alias-stride=4096)

// PAD256: argument #0 of @rows (tensor<4x1024xbf16>): padded: 2048 B rows are a multiple of the alias stride 2048 B; pitch 2304 B (1152 elements), +1024 B
// PAD256: argument #1 of @rows (tensor<4x4096xbf16>): padded: 8192 B rows are a multiple of the alias stride 2048 B; pitch 8448 B (4224 elements), +1024 B
// PAD256: argument #2 of @rows (tensor<4x512xf32>): padded: 2048 B rows are a multiple of the alias stride 2048 B; pitch 2304 B (576 elements), +1024 B
// PAD256: padded 3 of 3 weights, +3072 B (alias stride 2048 B, pad 256 B from profile 'gfx1151' overridden by option pad=256)

// NOTPOW2-COUNT-3: not padded: invalid alias stride 3000 B: not a power of two
// NOTPOW2: padded 0 of 3 weights, +0 B
// NEGSTRIDE-COUNT-3: not padded: invalid alias stride -7 B: negative
// ZEROSTRIDE-COUNT-3: not padded: no alias stride (alias_stride = 0 from profile 'gfx1151' overridden by option alias-stride=0): the device shows no cache-set aliasing to avoid
// PADMULT-COUNT-3: not padded: invalid pad 2048 B: a multiple of the alias stride 2048 B (rows would alias again)
// PADZERO-COUNT-3: not padded: invalid pad 0 B: a multiple of the alias stride 2048 B
// PADNEG-COUNT-3: not padded: invalid pad -5 B: negative
// PADVEC-COUNT-3: not padded: invalid pad 8 B: not a multiple of the 16 B vector alignment the kernels need
// PADELEM: argument #0 of @rows (tensor<4x1024xbf16>): not padded: invalid pad 6 B: not a multiple of the 16 B vector alignment the kernels need
// PADELEM: argument #1 of @rows (tensor<4x4096xbf16>): not padded: invalid pad 6 B: not a multiple of the 16 B vector alignment the kernels need
// PADELEM: argument #2 of @rows (tensor<4x512xf32>): not padded: invalid pad 6 B: not a multiple of the element size 4 B

// H200-COUNT-3: not padded: no alias stride (alias_stride = 0 from profile 'h200'): the device shows no cache-set aliasing to avoid
// H200: padded 0 of 3 weights, +0 B (alias stride 0 B, pad 128 B from profile 'h200')
// H200-COUNT-2: not padded: no alias stride (alias_stride = 0 from profile 'h200')
// H200: padded 0 of 2 weights, +0 B

// H200-STRIDE: argument #0 of @rows (tensor<4x1024xbf16>): padded: 2048 B rows are a multiple of the alias stride 2048 B; pitch 2176 B (1088 elements), +512 B
// H200-STRIDE: padded 3 of 3 weights, +1536 B (alias stride 2048 B, pad 128 B from profile 'h200' overridden by option alias-stride=2048)

// GFX942: argument #0 of @rows (tensor<4x1024xbf16>): padded: 2048 B rows are a multiple of the alias stride 512 B; pitch 2176 B (1088 elements), +512 B
// GFX942: padded 3 of 3 weights, +1536 B (alias stride 512 B, pad 128 B from profile 'gfx942')
// LAVAPIPE: argument #0 of @rows (tensor<4x1024xbf16>): padded: 2048 B rows are a multiple of the alias stride 2048 B; pitch 2112 B (1056 elements), +256 B
// LAVAPIPE: padded 3 of 3 weights, +768 B (alias stride 2048 B, pad 64 B from profile 'lavapipe')

// NOPROFILE: warning: cachet-pad-weight-rows: no #cachet.device profile on the module (run cachet-attach-device first, or give both alias-stride and pad); nothing padded
// NOPROFILE-NOT: remark

// UNCHANGED-LABEL: func.func @rows
// UNCHANGED-NOT: cachet.row_pitch
// UNCHANGED-LABEL: func.func @small_constants
// UNCHANGED-NOT: extract_slice

// SMALL-LABEL: func.func @rows
// SMALL-SAME: %arg0: tensor<4x1024xbf16> {cachet.row_pitch = 1032 : i64, cachet.weight}
// SMALL-SAME: %arg1: tensor<4x4096xbf16> {cachet.row_pitch = 4104 : i64, cachet.weight}
// SMALL-SAME: %arg2: tensor<4x512xf32> {cachet.row_pitch = 516 : i64, cachet.weight}
func.func @rows(%w2k: tensor<4x1024xbf16> {cachet.weight},
                %w8k: tensor<4x4096xbf16> {cachet.weight},
                %wf: tensor<4x512xf32> {cachet.weight},
                %x2k: tensor<1024xbf16>, %x8k: tensor<4096xbf16>, %xf: tensor<512xf32>,
                %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = linalg.matvec ins(%w2k, %x2k : tensor<4x1024xbf16>, tensor<1024xbf16>) outs(%y : tensor<4xf32>) -> tensor<4xf32>
  %1 = linalg.matvec ins(%w8k, %x8k : tensor<4x4096xbf16>, tensor<4096xbf16>) outs(%y : tensor<4xf32>) -> tensor<4xf32>
  %2 = linalg.matvec ins(%wf, %xf : tensor<4x512xf32>, tensor<512xf32>) outs(%y : tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Small constants with 32 B rows (alias-stride=32 pad=16): every value stays
// where it was, the 16 B gap after each row is zero.

// SMALL-LABEL: func.func @small_constants
// SMALL: %[[F:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01, 1.300000e+01, 1.400000e+01, 1.500000e+01, 1.600000e+01, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<2x12xf32>
// SMALL: %[[FS:.*]] = tensor.extract_slice %[[F]][0, 0] [2, 8] [1, 1] : tensor<2x12xf32> to tensor<2x8xf32>
// SMALL: %[[B:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00, 9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01, 1.300000e+01, 1.400000e+01, 1.500000e+01, 1.600000e+01, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [-1.000000e+00, -2.000000e+00, -3.000000e+00, -4.000000e+00, -5.000000e+00, -6.000000e+00, -7.000000e+00, -8.000000e+00, -9.000000e+00, -1.000000e+01, -1.100000e+01, -1.200000e+01, -1.300000e+01, -1.400000e+01, -1.500000e+01, -1.600000e+01, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<2x24xbf16>
// SMALL: %[[BS:.*]] = tensor.extract_slice %[[B]][0, 0] [2, 16] [1, 1] : tensor<2x24xbf16> to tensor<2x16xbf16>
// SMALL: linalg.matvec ins(%[[FS]], %{{.*}} : tensor<2x8xf32>, tensor<8xf32>)
// SMALL: linalg.matvec ins(%[[BS]], %{{.*}} : tensor<2x16xbf16>, tensor<16xbf16>)
// BUF-LABEL: func.func @small_constants
// BUF-DAG: %[[F:.*]] = memref.get_global @{{.*}} : memref<2x12xf32>
// BUF-DAG: %[[FV:.*]] = memref.subview %[[F]][0, 0] [2, 8] [1, 1] : memref<2x12xf32> to memref<2x8xf32, strided<[12, 1]>>
// BUF-DAG: %[[B:.*]] = memref.get_global @{{.*}} : memref<2x24xbf16>
// BUF-DAG: %[[BV:.*]] = memref.subview %[[B]][0, 0] [2, 16] [1, 1] : memref<2x24xbf16> to memref<2x16xbf16, strided<[24, 1]>>
// BUF: linalg.matvec ins(%[[FV]], %{{.*}} : memref<2x8xf32, strided<[12, 1]>>,
// BUF: linalg.matvec ins(%[[BV]], %{{.*}} : memref<2x16xbf16, strided<[24, 1]>>,
func.func @small_constants(%x: tensor<8xf32>, %xb: tensor<16xbf16>, %y: tensor<2xf32>)
    -> (tensor<2xf32>, tensor<2xf32>) {
  %f = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
                             [9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]]> : tensor<2x8xf32>
  %b = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0],
                             [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0, -10.0, -11.0, -12.0, -13.0, -14.0, -15.0, -16.0]]> : tensor<2x16xbf16>
  %0 = linalg.matvec ins(%f, %x : tensor<2x8xf32>, tensor<8xf32>) outs(%y : tensor<2xf32>) -> tensor<2xf32>
  %1 = linalg.matvec ins(%b, %xb : tensor<2x16xbf16>, tensor<16xbf16>) outs(%y : tensor<2xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// A dense_resource constant (how importers store large weights): the padded
// blob holds 1.0 .. 8.0, a 16 B zero gap, 9.0 .. 16.0, a 16 B zero gap.

// SMALL-LABEL: func.func @resource_constant
// SMALL: %[[R:.*]] = arith.constant dense_resource<w_padded> : tensor<2x12xf32>
// SMALL: tensor.extract_slice %[[R]][0, 0] [2, 8] [1, 1] : tensor<2x12xf32> to tensor<2x8xf32>
// SMALL: w_padded: "0x040000000000803F0000004000004040000080400000A0400000C0400000E0400000004100000000000000000000000000000000000010410000204100003041000040410000504100006041000070410000804100000000000000000000000000000000"
func.func @resource_constant(%x: tensor<8xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %w = arith.constant dense_resource<w> : tensor<2x8xf32>
  %0 = linalg.matvec ins(%w, %x : tensor<2x8xf32>, tensor<8xf32>) outs(%y : tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F0000004000004040000080400000A0400000C0400000E040000000410000104100002041000030410000404100005041000060410000704100008041"
    }
  }
#-}
