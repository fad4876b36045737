// RUN: cachet-opt %s -split-input-file | FileCheck %s
// Round trip: parse, print, parse again and compare.
// RUN: cachet-opt %s -split-input-file | cachet-opt -split-input-file | FileCheck %s
// Generic form round trip.
// RUN: cachet-opt %s -split-input-file -mlir-print-op-generic | cachet-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func private @block_types
// CHECK-SAME: tensor<4x!cachet.q8_0>, tensor<4x!cachet.q4_0>, tensor<4x!cachet.q4_1>
// CHECK-SAME: tensor<4x!cachet.q5_0>, tensor<4x!cachet.q5_1>, tensor<4x!cachet.iq4_nl>
// CHECK-SAME: memref<4x!cachet.q8_0>, tensor<4x!cachet.q2_K>, tensor<4x!cachet.q4_K>, tensor<4x!cachet.q5_K>, tensor<4x!cachet.q6_K>
// CHECK-SAME: tensor<4x!cachet.tq2_0>, tensor<4x!cachet.tq1_0>, tensor<4x!cachet.q3_K>
func.func private @block_types(tensor<4x!cachet.q8_0>, tensor<4x!cachet.q4_0>,
    tensor<4x!cachet.q4_1>, tensor<4x!cachet.q5_0>, tensor<4x!cachet.q5_1>,
    tensor<4x!cachet.iq4_nl>, memref<4x!cachet.q8_0>, tensor<4x!cachet.q2_K>,
    tensor<4x!cachet.q4_K>,
    tensor<4x!cachet.q5_K>, tensor<4x!cachet.q6_K>, tensor<4x!cachet.tq2_0>, tensor<4x!cachet.tq1_0>,
    tensor<4x!cachet.q3_K>)

// -----

// The k-quants: 256 values per super-block.
// CHECK-LABEL: func.func @dequantize_k_quants
func.func @dequantize_k_quants(%a: tensor<16x2x!cachet.q4_K>,
    %b: tensor<?x4x!cachet.q6_K>) -> (tensor<16x512xf16>, tensor<?x1024xf32>) {
  // CHECK: cachet.dequantize %{{.*}} : tensor<16x2x!cachet.q4_K> -> tensor<16x512xf16>
  %0 = cachet.dequantize %a : tensor<16x2x!cachet.q4_K> -> tensor<16x512xf16>
  // CHECK: cachet.dequantize %{{.*}} : tensor<?x4x!cachet.q6_K> -> tensor<?x1024xf32>
  %1 = cachet.dequantize %b : tensor<?x4x!cachet.q6_K> -> tensor<?x1024xf32>
  return %0, %1 : tensor<16x512xf16>, tensor<?x1024xf32>
}

// -----

// CHECK-LABEL: func.func @dequantize_q5_K
func.func @dequantize_q5_K(%a: tensor<8x3x!cachet.q5_K>) -> tensor<8x768xbf16> {
  // CHECK: cachet.dequantize %{{.*}} : tensor<8x3x!cachet.q5_K> -> tensor<8x768xbf16>
  %0 = cachet.dequantize %a : tensor<8x3x!cachet.q5_K> -> tensor<8x768xbf16>
  return %0 : tensor<8x768xbf16>
}

// -----

// CHECK-LABEL: func.func @dequantize_packed
func.func @dequantize_packed(%q8: tensor<1024x2x4x!cachet.q8_0>,
    %q4: tensor<16x2x!cachet.q4_1>, %dyn: tensor<?x8x!cachet.iq4_nl>)
    -> (tensor<1024x2x128xf16>, tensor<16x64xf32>, tensor<?x256xbf16>) {
  // CHECK: cachet.dequantize %{{.*}} : tensor<1024x2x4x!cachet.q8_0> -> tensor<1024x2x128xf16>
  %0 = cachet.dequantize %q8 : tensor<1024x2x4x!cachet.q8_0> -> tensor<1024x2x128xf16>
  // CHECK: cachet.dequantize %{{.*}} : tensor<16x2x!cachet.q4_1> -> tensor<16x64xf32>
  %1 = cachet.dequantize %q4 : tensor<16x2x!cachet.q4_1> -> tensor<16x64xf32>
  // CHECK: cachet.dequantize %{{.*}} : tensor<?x8x!cachet.iq4_nl> -> tensor<?x256xbf16>
  %2 = cachet.dequantize %dyn : tensor<?x8x!cachet.iq4_nl> -> tensor<?x256xbf16>
  return %0, %1, %2 : tensor<1024x2x128xf16>, tensor<16x64xf32>, tensor<?x256xbf16>
}

// -----

// CHECK-LABEL: func.func @dequantize_split_q8_0
func.func @dequantize_split_q8_0(%qs: tensor<1024x2x128xi8>, %d: tensor<1024x2x4xf16>)
    -> tensor<1024x2x128xf16> {
  // CHECK: cachet.dequantize %{{.*}} scales %{{.*}} : tensor<1024x2x128xi8>, tensor<1024x2x4xf16> -> tensor<1024x2x128xf16>
  %0 = cachet.dequantize %qs scales %d : tensor<1024x2x128xi8>, tensor<1024x2x4xf16> -> tensor<1024x2x128xf16>
  return %0 : tensor<1024x2x128xf16>
}

// -----

// CHECK-LABEL: func.func @dequantize_split_q4_0
func.func @dequantize_split_q4_0(%qs: tensor<4096x4096xi4>, %d: tensor<4096x128xf16>)
    -> tensor<4096x4096xbf16> {
  // CHECK: cachet.dequantize %{{.*}} scales %{{.*}} : tensor<4096x4096xi4>, tensor<4096x128xf16> -> tensor<4096x4096xbf16>
  %0 = cachet.dequantize %qs scales %d : tensor<4096x4096xi4>, tensor<4096x128xf16> -> tensor<4096x4096xbf16>
  return %0 : tensor<4096x4096xbf16>
}

// -----

// CHECK-LABEL: func.func @quantize_packed
func.func @quantize_packed(%x: tensor<64x2x128xf16>, %y: tensor<?x64xbf16>,
    %z: tensor<8x32xf32>)
    -> (tensor<64x2x4x!cachet.q4_0>, tensor<?x2x!cachet.iq4_nl>, tensor<8x1x!cachet.q8_0>) {
  // CHECK: cachet.quantize %{{.*}} : tensor<64x2x128xf16> -> tensor<64x2x4x!cachet.q4_0>
  %0 = cachet.quantize %x : tensor<64x2x128xf16> -> tensor<64x2x4x!cachet.q4_0>
  // CHECK: cachet.quantize %{{.*}} : tensor<?x64xbf16> -> tensor<?x2x!cachet.iq4_nl>
  %1 = cachet.quantize %y : tensor<?x64xbf16> -> tensor<?x2x!cachet.iq4_nl>
  // CHECK: cachet.quantize %{{.*}} rounding <even> : tensor<8x32xf32> -> tensor<8x1x!cachet.q8_0>
  %2 = cachet.quantize %z rounding <even> : tensor<8x32xf32> -> tensor<8x1x!cachet.q8_0>
  return %0, %1, %2 : tensor<64x2x4x!cachet.q4_0>, tensor<?x2x!cachet.iq4_nl>, tensor<8x1x!cachet.q8_0>
}

// -----

// CHECK-LABEL: func.func @quantize_split_q8_0
func.func @quantize_split_q8_0(%x: tensor<64x2x128xf16>)
    -> (tensor<64x2x128xi8>, tensor<64x2x4xf16>, tensor<64x2x128xi8>, tensor<64x2x4xf16>) {
  // CHECK: cachet.quantize %{{.*}} : tensor<64x2x128xf16> -> tensor<64x2x128xi8>, tensor<64x2x4xf16>
  %q, %s = cachet.quantize %x : tensor<64x2x128xf16> -> tensor<64x2x128xi8>, tensor<64x2x4xf16>
  // CHECK: cachet.quantize %{{.*}} rounding <even> : tensor<64x2x128xf16> -> tensor<64x2x128xi8>, tensor<64x2x4xf16>
  %q2, %s2 = cachet.quantize %x rounding <even> : tensor<64x2x128xf16> -> tensor<64x2x128xi8>, tensor<64x2x4xf16>
  return %q, %s, %q2, %s2 : tensor<64x2x128xi8>, tensor<64x2x4xf16>, tensor<64x2x128xi8>, tensor<64x2x4xf16>
}

// -----

// CHECK-LABEL: func.func @dequant_transpose
func.func @dequant_transpose(%k: tensor<1024x2x4x!cachet.q5_1>,
    %qs: tensor<512x8x64xi8>, %d: tensor<512x8x2xf16>)
    -> (tensor<2x1024x128xf16>, tensor<8x512x64xf32>) {
  %s0 = tensor.empty() : tensor<2x1024x128xf16>
  // CHECK: cachet.dequant_transpose %{{.*}} into %{{.*}} : tensor<1024x2x4x!cachet.q5_1> -> tensor<2x1024x128xf16>
  %0 = cachet.dequant_transpose %k into %s0 : tensor<1024x2x4x!cachet.q5_1> -> tensor<2x1024x128xf16>
  %s1 = tensor.empty() : tensor<8x512x64xf32>
  // CHECK: cachet.dequant_transpose %{{.*}} scales %{{.*}} into %{{.*}} : tensor<512x8x64xi8>, tensor<512x8x2xf16> -> tensor<8x512x64xf32>
  %1 = cachet.dequant_transpose %qs scales %d into %s1 : tensor<512x8x64xi8>, tensor<512x8x2xf16> -> tensor<8x512x64xf32>
  return %0, %1 : tensor<2x1024x128xf16>, tensor<8x512x64xf32>
}

// -----

// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<8x64x128xf16>, %k: tensor<1024x2x128xf16>,
    %v: tensor<1024x2x128xf16>, %kh: tensor<2x1024x128xf16>,
    %vh: tensor<2x1024x64xf16>, %m: tensor<64x1024xf32>, %m3: tensor<8x64x1024xf16>)
    -> (tensor<8x64x128xf16>, tensor<8x64x64xf32>, tensor<8x64x128xbf16>) {
  // CHECK: cachet.attention %{{.*}}, %{{.*}}, %{{.*}} layout <token_major> scale 0.0883883461 causal 960 :
  // CHECK-SAME: tensor<8x64x128xf16>, tensor<1024x2x128xf16>, tensor<1024x2x128xf16> -> tensor<8x64x128xf16>
  %0 = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 960
      : tensor<8x64x128xf16>, tensor<1024x2x128xf16>, tensor<1024x2x128xf16> -> tensor<8x64x128xf16>
  // CHECK: cachet.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} layout <head_major> scale 1.250000e-01 {accumulator = f16} :
  // CHECK-SAME: tensor<8x64x128xf16>, tensor<2x1024x128xf16>, tensor<2x1024x64xf16>, tensor<64x1024xf32> -> tensor<8x64x64xf32>
  %1 = cachet.attention %q, %kh, %vh mask %m layout <head_major> scale 0.125 {accumulator = f16}
      : tensor<8x64x128xf16>, tensor<2x1024x128xf16>, tensor<2x1024x64xf16>, tensor<64x1024xf32> -> tensor<8x64x64xf32>
  // CHECK: cachet.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} layout <token_major> scale 1.000000e+00 causal 0 :
  %2 = cachet.attention %q, %k, %v mask %m3 layout <token_major> scale 1.0 causal 0
      : tensor<8x64x128xf16>, tensor<1024x2x128xf16>, tensor<1024x2x128xf16>, tensor<8x64x1024xf16> -> tensor<8x64x128xbf16>
  return %0, %1, %2 : tensor<8x64x128xf16>, tensor<8x64x64xf32>, tensor<8x64x128xbf16>
}

// -----

// CHECK-LABEL: func.func @attention_gqa_one_dynamic
func.func @attention_gqa_one_dynamic(%q: tensor<4x?x64xf32>, %k: tensor<4x?x64xf32>,
    %v: tensor<4x?x64xf32>) -> tensor<4x?x64xf32> {
  // CHECK: cachet.attention {{.*}} layout <head_major>
  %0 = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      : tensor<4x?x64xf32>, tensor<4x?x64xf32>, tensor<4x?x64xf32> -> tensor<4x?x64xf32>
  return %0 : tensor<4x?x64xf32>
}

// -----

// CHECK-LABEL: func.func @attention_partial
func.func @attention_partial(%q: tensor<8x64x128xf16>, %k: tensor<2x256x128xf16>,
    %v: tensor<2x256x128xf16>, %p: index, %acc: tensor<8x64x128xf32>,
    %mx: tensor<8x64xf32>, %sm: tensor<8x64xf32>)
    -> (tensor<8x64x128xf32>, tensor<8x64xf32>, tensor<8x64xf32>) {
  // CHECK: cachet.attention_partial %{{.*}}, %{{.*}}, %{{.*}} key_offset %{{.*}} layout <head_major> scale 0.0883883461 causal 960 into %{{.*}}, %{{.*}}, %{{.*}} {accumulator = f16} :
  // CHECK-SAME: tensor<8x64x128xf16>, tensor<2x256x128xf16>, tensor<2x256x128xf16> -> tensor<8x64x128xf32>, tensor<8x64xf32>, tensor<8x64xf32>
  %o, %m, %l = cachet.attention_partial %q, %k, %v key_offset %p layout <head_major>
      scale 0.0883883461 causal 960 into %acc, %mx, %sm {accumulator = f16}
      : tensor<8x64x128xf16>, tensor<2x256x128xf16>, tensor<2x256x128xf16>
      -> tensor<8x64x128xf32>, tensor<8x64xf32>, tensor<8x64xf32>
  return %o, %m, %l : tensor<8x64x128xf32>, tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// The causal offset as a run-time index value.

// CHECK-LABEL: func.func @attention_causal_position
func.func @attention_causal_position(%q: tensor<32x1x128xf16>,
    %k: tensor<4096x8x128xf16>, %v: tensor<4096x8x128xf16>, %n: index,
    %kh: tensor<8x256x128xf16>, %p: index, %acc: tensor<32x1x128xf32>,
    %mx: tensor<32x1xf32>, %sm: tensor<32x1xf32>)
    -> (tensor<32x1x128xf16>, tensor<32x1x128xf32>, tensor<32x1xf32>, tensor<32x1xf32>) {
  // CHECK: cachet.attention %arg0, %arg1, %arg2 layout <token_major> scale 0.0883883461 causal %arg3 :
  %0 = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal %n
      : tensor<32x1x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16> -> tensor<32x1x128xf16>
  // CHECK: cachet.attention_partial %arg0, %arg4, %arg4 key_offset %arg5 layout <head_major> scale 0.0883883461 causal %arg3 into
  %o, %m, %l = cachet.attention_partial %q, %kh, %kh key_offset %p layout <head_major>
      scale 0.0883883461 causal %n into %acc, %mx, %sm
      : tensor<32x1x128xf16>, tensor<8x256x128xf16>, tensor<8x256x128xf16>
      -> tensor<32x1x128xf32>, tensor<32x1xf32>, tensor<32x1xf32>
  return %0, %o, %m, %l : tensor<32x1x128xf16>, tensor<32x1x128xf32>, tensor<32x1xf32>, tensor<32x1xf32>
}

// -----

// CHECK: module attributes {cachet.device = #cachet.device<name = "custom", vendor = "generic", arch = "x", cache_line = 64, l2_bytes = 1048576, alias_stride = 4096, alias_pad = 64, compute_units = 8, dram_gbps = 1.005000e+02, unified_memory = true, strided_read_penalty = 2.500000e+00, pdl = false, l2_prefetch = "none", coop_matrix = [], subgroup_size = 16, shared_memory_bytes = 49152>}
module attributes {cachet.device = #cachet.device<name = "custom", vendor = "generic",
    arch = "x", cache_line = 64, l2_bytes = 1048576, alias_stride = 4096,
    alias_pad = 64, compute_units = 8, dram_gbps = 100.5, unified_memory = true,
    strided_read_penalty = 2.5, pdl = false, l2_prefetch = "none", coop_matrix = [],
    subgroup_size = 16, shared_memory_bytes = 49152>} {
}

// The next token as the argmax of the last row of the logits.
// CHECK-LABEL: func.func private @argmax_of
// CHECK-SAME: tensor<1xi32> {cachet.argmax_of = 1 : i64}
func.func private @argmax_of() -> (tensor<1xi32> {cachet.argmax_of = 1 : i64}, tensor<4x8xf32>)
