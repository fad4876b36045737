// RUN: cachet-opt %s -split-input-file -cachet-dequant-once-kv -verify-diagnostics | FileCheck %s
// The decision on different device profiles (attached inline) and without one.

// No device profile: remark, no rewrite.
// CHECK-LABEL: func.func @no_profile
// CHECK-NOT: dequant_transpose
// CHECK: cachet.attention {{.*}} layout <token_major>
func.func @no_profile(%q: tensor<8x64x128xf16>, %kq: tensor<1024x2x4x!cachet.q8_0>, %vq: tensor<1024x2x4x!cachet.q8_0>) -> tensor<8x64x128xf16> {
  %k = cachet.dequantize %kq : tensor<1024x2x4x!cachet.q8_0> -> tensor<1024x2x128xf16>
  %v = cachet.dequantize %vq : tensor<1024x2x4x!cachet.q8_0> -> tensor<1024x2x128xf16>
  // expected-remark @below {{not rewritten: no device profile (cachet.device); run cachet-attach-device first}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 960 : tensor<8x64x128xf16>, tensor<1024x2x128xf16>, tensor<1024x2x128xf16> -> tensor<8x64x128xf16>
  return %o : tensor<8x64x128xf16>
}

// -----

// A unified-memory APU with cooperative matrices and a 3.2x strided-read
// penalty (gfx1151-like): the prefill pays by a wide margin.
// CHECK-LABEL: func.func @apu_prefill
// CHECK: cachet.dequant_transpose
// CHECK: cachet.attention {{.*}} layout <head_major>
module attributes {cachet.device = #cachet.device<name = "apu", vendor = "generic", arch = "x", cache_line = 128, l2_bytes = 4194304, alias_stride = 0, alias_pad = 0, compute_units = 16, dram_gbps = 256.0, unified_memory = true, strided_read_penalty = 3.2, pdl = false, l2_prefetch = "none", coop_matrix = ["16x16x16:f16->f32"], subgroup_size = 32, shared_memory_bytes = 65536>} {
  func.func @apu_prefill(%q: tensor<32x512x128xf16>, %kq: tensor<4096x8x4x!cachet.q8_0>, %vq: tensor<4096x8x4x!cachet.q8_0>) -> tensor<32x512x128xf16> {
    %k = cachet.dequantize %kq : tensor<4096x8x4x!cachet.q8_0> -> tensor<4096x8x128xf16>
    %v = cachet.dequantize %vq : tensor<4096x8x4x!cachet.q8_0> -> tensor<4096x8x128xf16>
    // expected-remark @below {{rewritten: queries per KV head 2048 (G=4 x Sq=512), tile 16 -> 128 passes; in-kernel dequant 22649.24 us vs dequant-once 8488.96 us (profile apu: dram 256.00 GB/s, strided-read penalty 3.20, coop matrix yes, dequant cost 1.00); scratch 16777216 bytes, 1.88x the 8912896-byte quantized K+V}}
    %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 3584 : tensor<32x512x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16> -> tensor<32x512x128xf16>
    return %o : tensor<32x512x128xf16>
  }
}

// -----

// A discrete GPU without cooperative matrices and no strided-read penalty:
// decoding in the kernel is cheaper than the f16 round trip.
// CHECK-LABEL: func.func @scalar_gpu
// CHECK-NOT: dequant_transpose
// CHECK: cachet.attention {{.*}} layout <token_major>
module attributes {cachet.device = #cachet.device<name = "scalar", vendor = "generic", arch = "x", cache_line = 128, l2_bytes = 4194304, alias_stride = 0, alias_pad = 0, compute_units = 16, dram_gbps = 900.0, unified_memory = false, strided_read_penalty = 1.0, pdl = false, l2_prefetch = "none", coop_matrix = [], subgroup_size = 32, shared_memory_bytes = 65536>} {
  func.func @scalar_gpu(%q: tensor<32x512x128xf16>, %kq: tensor<4096x8x4x!cachet.q4_0>, %vq: tensor<4096x8x4x!cachet.q4_0>) -> tensor<32x512x128xf16> {
    %k = cachet.dequantize %kq : tensor<4096x8x4x!cachet.q4_0> -> tensor<4096x8x128xf16>
    %v = cachet.dequantize %vq : tensor<4096x8x4x!cachet.q4_0> -> tensor<4096x8x128xf16>
    // expected-remark @below {{not rewritten: in-kernel dequant is cheaper: queries per KV head 2048 (G=4 x Sq=512), tile 32 -> 64 passes}}
    %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 3584 : tensor<32x512x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16> -> tensor<32x512x128xf16>
    return %o : tensor<32x512x128xf16>
  }
}

// -----

// A CPU-like device (no cooperative matrix, subgroup 8, 9x strided-read
// penalty), decode shape: below min-queries whatever the penalty.
// CHECK-LABEL: func.func @cpu_decode
// CHECK-NOT: dequant_transpose
module attributes {cachet.device = #cachet.device<name = "cpu", vendor = "generic", arch = "x", cache_line = 128, l2_bytes = 4194304, alias_stride = 0, alias_pad = 0, compute_units = 16, dram_gbps = 24.0, unified_memory = true, strided_read_penalty = 9.0, pdl = false, l2_prefetch = "none", coop_matrix = [], subgroup_size = 8, shared_memory_bytes = 65536>} {
  func.func @cpu_decode(%q: tensor<8x1x64xf16>, %kq: tensor<512x2x2x!cachet.iq4_nl>, %vq: tensor<512x2x2x!cachet.iq4_nl>) -> tensor<8x1x64xf16> {
    %k = cachet.dequantize %kq : tensor<512x2x2x!cachet.iq4_nl> -> tensor<512x2x64xf16>
    %v = cachet.dequantize %vq : tensor<512x2x2x!cachet.iq4_nl> -> tensor<512x2x64xf16>
    // expected-remark @below {{not rewritten: decode-shaped: 4 < min-queries 32; queries per KV head 4 (G=4 x Sq=1), tile 8 -> 1 passes}}
    %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 511 : tensor<8x1x64xf16>, tensor<512x2x64xf16>, tensor<512x2x64xf16> -> tensor<8x1x64xf16>
    return %o : tensor<8x1x64xf16>
  }
}

// -----

// The same device, prefill: rewritten.
// CHECK-LABEL: func.func @cpu_prefill
// CHECK: cachet.dequant_transpose {{.*}} : tensor<512x2x2x!cachet.iq4_nl> -> tensor<2x512x64xf16>
module attributes {cachet.device = #cachet.device<name = "cpu", vendor = "generic", arch = "x", cache_line = 128, l2_bytes = 4194304, alias_stride = 0, alias_pad = 0, compute_units = 16, dram_gbps = 24.0, unified_memory = true, strided_read_penalty = 9.0, pdl = false, l2_prefetch = "none", coop_matrix = [], subgroup_size = 8, shared_memory_bytes = 65536>} {
  func.func @cpu_prefill(%q: tensor<8x64x64xf16>, %kq: tensor<512x2x2x!cachet.iq4_nl>, %vq: tensor<512x2x2x!cachet.iq4_nl>) -> tensor<8x64x64xf16> {
    %k = cachet.dequantize %kq : tensor<512x2x2x!cachet.iq4_nl> -> tensor<512x2x64xf16>
    %v = cachet.dequantize %vq : tensor<512x2x2x!cachet.iq4_nl> -> tensor<512x2x64xf16>
    // expected-remark @below {{rewritten: queries per KV head 256 (G=4 x Sq=64), tile 8 -> 32 passes}}
    %o = cachet.attention %q, %k, %v layout <token_major> scale 0.0883883461 causal 448 : tensor<8x64x64xf16>, tensor<512x2x64xf16>, tensor<512x2x64xf16> -> tensor<8x64x64xf16>
    return %o : tensor<8x64x64xf16>
  }
}
