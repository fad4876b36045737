// RUN: cachet-opt %s -split-input-file -verify-diagnostics
// Every verifier message of the cachet dialect, one case each.

func.func @dequantize_rank0(%a: tensor<!cachet.q8_0>) {
  // expected-error @+1 {{operand 'input' must have rank >= 1}}
  %0 = cachet.dequantize %a : tensor<!cachet.q8_0> -> tensor<f16>
  return
}

// -----

func.func @dequantize_not_quantized(%a: tensor<4x32xf16>) {
  // expected-error @+1 {{operand 'input' must have a block-quantized element type (or i8 / i4 with 'scales'), got 'f16'}}
  %0 = cachet.dequantize %a : tensor<4x32xf16> -> tensor<4x32xf16>
  return
}

// -----

func.func @dequantize_split_not_i8(%a: tensor<4x32xi16>, %s: tensor<4x1xf16>) {
  // expected-error @+1 {{operand 'input' must have element type i8 (split q8_0 form) or i4 (split q4_0 form) when 'scales' is given, got 'i16'}}
  %0 = cachet.dequantize %a scales %s : tensor<4x32xi16>, tensor<4x1xf16> -> tensor<4x32xf16>
  return
}

// -----

func.func @dequantize_split_scales_f32(%a: tensor<4x32xi8>, %s: tensor<4x1xf32>) {
  // expected-error @+1 {{operand 'scales' must have element type f16, got 'f32'}}
  %0 = cachet.dequantize %a scales %s : tensor<4x32xi8>, tensor<4x1xf32> -> tensor<4x32xf16>
  return
}

// -----

func.func @dequantize_split_scales_rank(%a: tensor<4x32xi8>, %s: tensor<4xf16>) {
  // expected-error @+1 {{operand 'scales' must have the rank of 'input' (2), got 1}}
  %0 = cachet.dequantize %a scales %s : tensor<4x32xi8>, tensor<4xf16> -> tensor<4x32xf16>
  return
}

// -----

func.func @dequantize_split_dim_not_multiple_of_32(%a: tensor<4x48xi8>, %s: tensor<4x2xf16>) {
  // expected-error @+1 {{innermost dimension of 'input' (48) must be a multiple of 32, the q8_0 block size}}
  %0 = cachet.dequantize %a scales %s : tensor<4x48xi8>, tensor<4x2xf16> -> tensor<4x48xf16>
  return
}

// -----

func.func @dequantize_split_i4_dim_not_multiple_of_32(%a: tensor<4x48xi4>, %s: tensor<4x2xf16>) {
  // expected-error @+1 {{innermost dimension of 'input' (48) must be a multiple of 32, the q4_0 block size}}
  %0 = cachet.dequantize %a scales %s : tensor<4x48xi4>, tensor<4x2xf16> -> tensor<4x48xf16>
  return
}

// -----

func.func @dequant_transpose_split_i4(%a: tensor<16x2x128xi4>, %s: tensor<16x2x4xf16>, %i: tensor<2x16x128xf16>) {
  // expected-error @+1 {{KV caches take split q8_0 (i8 values), not split q4_0 (i4 values); store a 4-bit cache as !cachet.q4_0 blocks}}
  %0 = cachet.dequant_transpose %a scales %s into %i : tensor<16x2x128xi4>, tensor<16x2x4xf16> -> tensor<2x16x128xf16>
  return
}

// -----

func.func @dequantize_split_scales_outer(%a: tensor<4x64xi8>, %s: tensor<3x2xf16>) {
  // expected-error @+1 {{dimension 0 of 'scales' (3) must match 'input' (4)}}
  %0 = cachet.dequantize %a scales %s : tensor<4x64xi8>, tensor<3x2xf16> -> tensor<4x64xf16>
  return
}

// -----

func.func @dequantize_split_scale_not_per_block(%a: tensor<4x64xi8>, %s: tensor<4x4xf16>) {
  // expected-error @+1 {{innermost dimension of 'scales' (4) must be the innermost dimension of 'input' (64) divided by 32}}
  %0 = cachet.dequantize %a scales %s : tensor<4x64xi8>, tensor<4x4xf16> -> tensor<4x64xf16>
  return
}

// -----

func.func @dequantize_result_int(%a: tensor<4x!cachet.q4_0>) {
  // expected-error @+1 {{result element type must be f16, bf16 or f32, got 'i32'}}
  %0 = cachet.dequantize %a : tensor<4x!cachet.q4_0> -> tensor<128xi32>
  return
}

// -----

func.func @dequantize_result_rank(%a: tensor<4x!cachet.q4_0>) {
  // expected-error @+1 {{result rank (2) must equal the rank of 'input' (1)}}
  %0 = cachet.dequantize %a : tensor<4x!cachet.q4_0> -> tensor<1x128xf16>
  return
}

// -----

func.func @dequantize_result_not_32_per_block(%a: tensor<2x4x!cachet.q5_0>) {
  // expected-error @+1 {{result dimension 1 (64) must be 128, 32 values per block of 'input'}}
  %0 = cachet.dequantize %a : tensor<2x4x!cachet.q5_0> -> tensor<2x64xf16>
  return
}

// -----

func.func @dequantize_result_outer(%a: tensor<4x64xi8>, %s: tensor<4x2xf16>) {
  // expected-error @+1 {{result dimension 0 (5) must be 4, the size of 'input' in values}}
  %0 = cachet.dequantize %a scales %s : tensor<4x64xi8>, tensor<4x2xf16> -> tensor<5x64xf16>
  return
}

// -----

func.func @dequantize_result_not_256_per_block(%a: tensor<2x4x!cachet.q4_K>) {
  // expected-error @+1 {{result dimension 1 (128) must be 1024, 256 values per block of 'input'}}
  %0 = cachet.dequantize %a : tensor<2x4x!cachet.q4_K> -> tensor<2x128xf16>
  return
}

// -----

func.func @dequantize_q5_K_not_256_per_block(%a: tensor<2x4x!cachet.q5_K>) {
  // expected-error @+1 {{result dimension 1 (992) must be 1024, 256 values per block of 'input'}}
  %0 = cachet.dequantize %a : tensor<2x4x!cachet.q5_K> -> tensor<2x992xf16>
  return
}

// -----

func.func @quantize_q2_K(%a: tensor<4x256xf16>) {
  // expected-error @+1 {{cachet.quantize writes the 32-value formats (q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl), not q2_K (a weight format of 256-value super-blocks)}}
  %0 = cachet.quantize %a : tensor<4x256xf16> -> tensor<4x1x!cachet.q2_K>
  return
}

// -----

func.func @dequant_transpose_q5_K(%a: tensor<16x2x1x!cachet.q5_K>, %i: tensor<2x16x256xf16>) {
  // expected-error @+1 {{KV caches take the 32-value formats (q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl), not q5_K (a weight format of 256-value super-blocks)}}
  %0 = cachet.dequant_transpose %a into %i : tensor<16x2x1x!cachet.q5_K> -> tensor<2x16x256xf16>
  return
}

// -----

func.func @dequant_transpose_k_quant(%a: tensor<16x2x1x!cachet.q6_K>, %i: tensor<2x16x256xf16>) {
  // expected-error @+1 {{KV caches take the 32-value formats (q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl), not q6_K (a weight format of 256-value super-blocks)}}
  %0 = cachet.dequant_transpose %a into %i : tensor<16x2x1x!cachet.q6_K> -> tensor<2x16x256xf16>
  return
}

// -----

func.func @dequant_transpose_rank(%a: tensor<16x4x!cachet.q8_0>, %i: tensor<16x128xf16>) {
  // expected-error @+1 {{operand 'input' must be a token-major KV cache [pos][kv_head][dim], got rank 2}}
  %0 = cachet.dequant_transpose %a into %i : tensor<16x4x!cachet.q8_0> -> tensor<16x128xf16>
  return
}

// -----

func.func @dequant_transpose_i16(%a: tensor<16x2x4x!cachet.q8_0>, %i: tensor<2x16x128xi16>) {
  // expected-error @+1 {{result element type must be f16, bf16 or f32, got 'i16'}}
  %0 = cachet.dequant_transpose %a into %i : tensor<16x2x4x!cachet.q8_0> -> tensor<2x16x128xi16>
  return
}

// -----

func.func @dequant_transpose_result_rank(%a: tensor<16x2x4x!cachet.q8_0>, %i: tensor<32x128xf16>) {
  // expected-error @+1 {{result must be head-major [kv_head][pos][dim], got rank 2}}
  %0 = cachet.dequant_transpose %a into %i : tensor<16x2x4x!cachet.q8_0> -> tensor<32x128xf16>
  return
}

// -----

func.func @dequant_transpose_not_transposed(%a: tensor<16x2x4x!cachet.q8_0>, %i: tensor<16x2x128xf16>) {
  // expected-error @+1 {{result dimension 0 (kv_head) is 16, expected 2 from the token-major input [pos][kv_head][dim]}}
  %0 = cachet.dequant_transpose %a into %i : tensor<16x2x4x!cachet.q8_0> -> tensor<16x2x128xf16>
  return
}

// -----

func.func @dequant_transpose_init_mismatch(%a: tensor<16x2x4x!cachet.q8_0>, %i: tensor<2x16x128xf32>) {
  // expected-error @+1 {{all of {init, result} have same type}}
  %0 = "cachet.dequant_transpose"(%a, %i) {operandSegmentSizes = array<i32: 1, 0, 1>} : (tensor<16x2x4x!cachet.q8_0>, tensor<2x16x128xf32>) -> tensor<2x16x128xf16>
  return
}

// -----

func.func @attention_query_rank(%q: tensor<64x128xf16>, %k: tensor<16x2x128xf16>, %v: tensor<16x2x128xf16>) {
  // expected-error @+1 {{operand 'query' must be [q_head][query][dim], got rank 2}}
  %0 = cachet.attention %q, %k, %v layout <token_major> scale 1.0 : tensor<64x128xf16>, tensor<16x2x128xf16>, tensor<16x2x128xf16> -> tensor<64x128xf16>
  return
}

// -----

func.func @attention_key_rank(%q: tensor<8x4x128xf16>, %k: tensor<16x256xf16>, %v: tensor<16x2x128xf16>) {
  // expected-error @+1 {{operand 'key' must be [pos][kv_head][dim] for layout token_major, got rank 2}}
  %0 = cachet.attention %q, %k, %v layout <token_major> scale 1.0 : tensor<8x4x128xf16>, tensor<16x256xf16>, tensor<16x2x128xf16> -> tensor<8x4x128xf16>
  return
}

// -----

func.func @attention_value_rank_head_major(%q: tensor<8x4x128xf16>, %k: tensor<2x16x128xf16>, %v: tensor<2x16x2x64xf16>) {
  // expected-error @+1 {{operand 'value' must be [kv_head][pos][dim] for layout head_major, got rank 4}}
  %0 = cachet.attention %q, %k, %v layout <head_major> scale 1.0 : tensor<8x4x128xf16>, tensor<2x16x128xf16>, tensor<2x16x2x64xf16> -> tensor<8x4x128xf16>
  return
}

// -----

func.func @attention_result_rank(%q: tensor<8x4x128xf16>, %k: tensor<16x2x128xf16>, %v: tensor<16x2x128xf16>) {
  // expected-error @+1 {{result must be [q_head][query][dim], got rank 2}}
  %0 = cachet.attention %q, %k, %v layout <token_major> scale 1.0 : tensor<8x4x128xf16>, tensor<16x2x128xf16>, tensor<16x2x128xf16> -> tensor<32x128xf16>
  return
}

// -----

func.func @attention_quantized_key(%q: tensor<8x4x128xf16>, %k: tensor<16x2x128xi8>, %v: tensor<16x2x128xf16>) {
  // expected-error @+1 {{element type of 'key' must be f16, bf16 or f32, got 'i8'}}
  %0 = cachet.attention %q, %k, %v layout <token_major> scale 1.0 : tensor<8x4x128xf16>, tensor<16x2x128xi8>, tensor<16x2x128xf16> -> tensor<8x4x128xf16>
  return
}

// -----

func.func @attention_kv_mismatch(%q: tensor<8x4x128xf16>, %k: tensor<16x2x128xf16>, %v: tensor<32x2x128xf16>) {
  // expected-error @+1 {{operands 'key' 'tensor<16x2x128xf16>' and 'value' 'tensor<32x2x128xf16>' must have the same kv_head and pos sizes in layout token_major [pos][kv_head][dim]}}
  %0 = cachet.attention %q, %k, %v layout <token_major> scale 1.0 : tensor<8x4x128xf16>, tensor<16x2x128xf16>, tensor<32x2x128xf16> -> tensor<8x4x128xf16>
  return
}

// -----

func.func @attention_head_dim(%q: tensor<8x4x64xf16>, %k: tensor<16x2x128xf16>, %v: tensor<16x2x128xf16>) {
  // expected-error @+1 {{head dim of 'key' (128) must equal the head dim of 'query' (64)}}
  %0 = cachet.attention %q, %k, %v layout <token_major> scale 1.0 : tensor<8x4x64xf16>, tensor<16x2x128xf16>, tensor<16x2x128xf16> -> tensor<8x4x128xf16>
  return
}

// -----

func.func @attention_bad_head_ratio(%q: tensor<6x4x128xf16>, %k: tensor<16x4x128xf16>, %v: tensor<16x4x128xf16>) {
  // expected-error @+1 {{bad head ratio: query heads (6) must be a multiple of KV heads (4) in layout token_major [pos][kv_head][dim]}}
  %0 = cachet.attention %q, %k, %v layout <token_major> scale 1.0 : tensor<6x4x128xf16>, tensor<16x4x128xf16>, tensor<16x4x128xf16> -> tensor<6x4x128xf16>
  return
}

// -----

func.func @attention_layout_shape_mismatch(%q: tensor<8x4x128xf16>, %k: tensor<2x16x128xf16>, %v: tensor<2x16x128xf16>) {
  // A head-major cache declared token_major reads 16 KV heads: 8 is no multiple.
  // expected-error @+1 {{bad head ratio: query heads (8) must be a multiple of KV heads (16) in layout token_major [pos][kv_head][dim]}}
  %0 = cachet.attention %q, %k, %v layout <token_major> scale 1.0 : tensor<8x4x128xf16>, tensor<2x16x128xf16>, tensor<2x16x128xf16> -> tensor<8x4x128xf16>
  return
}

// -----

func.func @attention_result_shape(%q: tensor<8x4x128xf16>, %k: tensor<16x2x128xf16>, %v: tensor<16x2x64xf16>) {
  // expected-error @+1 {{result shape 'tensor<8x4x128xf16>' must be [8, 4, 64] ([q_head][query][value dim])}}
  %0 = cachet.attention %q, %k, %v layout <token_major> scale 1.0 : tensor<8x4x128xf16>, tensor<16x2x128xf16>, tensor<16x2x64xf16> -> tensor<8x4x128xf16>
  return
}

// -----

func.func @attention_mask_type(%q: tensor<8x4x128xf16>, %k: tensor<16x2x128xf16>, %v: tensor<16x2x128xf16>, %m: tensor<4x16xi1>) {
  // expected-error @+1 {{element type of 'mask' must be f16, bf16 or f32, got 'i1'}}
  %0 = cachet.attention %q, %k, %v mask %m layout <token_major> scale 1.0 : tensor<8x4x128xf16>, tensor<16x2x128xf16>, tensor<16x2x128xf16>, tensor<4x16xi1> -> tensor<8x4x128xf16>
  return
}

// -----

func.func @attention_mask_shape(%q: tensor<8x4x128xf16>, %k: tensor<16x2x128xf16>, %v: tensor<16x2x128xf16>, %m: tensor<16x4xf32>) {
  // expected-error @+1 {{operand 'mask' 'tensor<16x4xf32>' must be [query][pos] or [q_head][query][pos] ([4, 16] or [8, 4, 16])}}
  %0 = cachet.attention %q, %k, %v mask %m layout <token_major> scale 1.0 : tensor<8x4x128xf16>, tensor<16x2x128xf16>, tensor<16x2x128xf16>, tensor<16x4xf32> -> tensor<8x4x128xf16>
  return
}

// -----

func.func @attention_causal_twice(%q: tensor<8x4x128xf16>, %k: tensor<16x2x128xf16>, %v: tensor<16x2x128xf16>, %n: index) {
  // expected-error @+1 {{takes a constant 'causal_offset' or a 'causal_position' operand, not both}}
  %0 = "cachet.attention"(%q, %k, %v, %n) <{causal_offset = 3 : i64, kv_layout = #cachet.kv_layout<token_major>, scale = 1.0 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1>}> : (tensor<8x4x128xf16>, tensor<16x2x128xf16>, tensor<16x2x128xf16>, index) -> tensor<8x4x128xf16>
  return
}

// -----

func.func @attention_negative_causal(%q: tensor<8x4x128xf16>, %k: tensor<16x2x128xf16>, %v: tensor<16x2x128xf16>) {
  // expected-error @+1 {{'causal_offset' must be >= 0 (positions cached before the first query), got -1}}
  %0 = cachet.attention %q, %k, %v layout <token_major> scale 1.0 causal -1 : tensor<8x4x128xf16>, tensor<16x2x128xf16>, tensor<16x2x128xf16> -> tensor<8x4x128xf16>
  return
}

// -----

func.func @attention_accumulator(%q: tensor<8x4x128xf16>, %k: tensor<16x2x128xf16>, %v: tensor<16x2x128xf16>) {
  // expected-error @+1 {{'accumulator' must be f16 or f32, got 'bf16'}}
  %0 = cachet.attention %q, %k, %v layout <token_major> scale 1.0 {accumulator = bf16} : tensor<8x4x128xf16>, tensor<16x2x128xf16>, tensor<16x2x128xf16> -> tensor<8x4x128xf16>
  return
}

// -----

func.func @attention_partial_out_type(%q: tensor<8x4x128xf16>, %k: tensor<2x16x128xf16>, %v: tensor<2x16x128xf16>, %p: index, %acc: tensor<8x4x128xf16>, %mx: tensor<8x4xf32>, %sm: tensor<8x4xf32>) {
  // expected-error @+1 {{result 'out' must have element type f32, got 'f16'}}
  %o, %m, %l = cachet.attention_partial %q, %k, %v key_offset %p layout <head_major> scale 1.0 into %acc, %mx, %sm : tensor<8x4x128xf16>, tensor<2x16x128xf16>, tensor<2x16x128xf16> -> tensor<8x4x128xf16>, tensor<8x4xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @attention_partial_max_shape(%q: tensor<8x4x128xf16>, %k: tensor<2x16x128xf16>, %v: tensor<2x16x128xf16>, %p: index, %acc: tensor<8x4x128xf32>, %mx: tensor<8x16xf32>, %sm: tensor<8x4xf32>) {
  // expected-error @+1 {{result 'max' 'tensor<8x16xf32>' must be f32 [8, 4] ([q_head][query])}}
  %o, %m, %l = cachet.attention_partial %q, %k, %v key_offset %p layout <head_major> scale 1.0 into %acc, %mx, %sm : tensor<8x4x128xf16>, tensor<2x16x128xf16>, tensor<2x16x128xf16> -> tensor<8x4x128xf32>, tensor<8x16xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @attention_partial_sum_type(%q: tensor<8x4x128xf16>, %k: tensor<2x16x128xf16>, %v: tensor<2x16x128xf16>, %p: index, %acc: tensor<8x4x128xf32>, %mx: tensor<8x4xf32>, %sm: tensor<8x4xf16>) {
  // expected-error @+1 {{result 'sum' 'tensor<8x4xf16>' must be f32 [8, 4] ([q_head][query])}}
  %o, %m, %l = cachet.attention_partial %q, %k, %v key_offset %p layout <head_major> scale 1.0 into %acc, %mx, %sm : tensor<8x4x128xf16>, tensor<2x16x128xf16>, tensor<2x16x128xf16> -> tensor<8x4x128xf32>, tensor<8x4xf32>, tensor<8x4xf16>
  return
}

// -----

func.func @attention_partial_head_ratio(%q: tensor<6x4x128xf16>, %k: tensor<4x16x128xf16>, %v: tensor<4x16x128xf16>, %p: index, %acc: tensor<6x4x128xf32>, %mx: tensor<6x4xf32>, %sm: tensor<6x4xf32>) {
  // expected-error @+1 {{bad head ratio: query heads (6) must be a multiple of KV heads (4) in layout head_major [kv_head][pos][dim]}}
  %o, %m, %l = cachet.attention_partial %q, %k, %v key_offset %p layout <head_major> scale 1.0 into %acc, %mx, %sm : tensor<6x4x128xf16>, tensor<4x16x128xf16>, tensor<4x16x128xf16> -> tensor<6x4x128xf32>, tensor<6x4xf32>, tensor<6x4xf32>
  return
}

// -----

// expected-error @+1 {{device profile: 'name' must not be empty}}
module attributes {cachet.device = #cachet.device<name = "", vendor = "nvidia", arch = "sm_90", cache_line = 128, l2_bytes = 0, alias_stride = 0, alias_pad = 0, compute_units = 1, dram_gbps = 1.0, unified_memory = false, strided_read_penalty = 1.0, pdl = false, l2_prefetch = "none", coop_matrix = [], subgroup_size = 32, shared_memory_bytes = 0>} {}

// -----

// expected-error @+1 {{device profile 'p': 'vendor' must be nvidia, amd, mesa or generic, got 'intel'}}
module attributes {cachet.device = #cachet.device<name = "p", vendor = "intel", arch = "x", cache_line = 128, l2_bytes = 0, alias_stride = 0, alias_pad = 0, compute_units = 1, dram_gbps = 1.0, unified_memory = false, strided_read_penalty = 1.0, pdl = false, l2_prefetch = "none", coop_matrix = [], subgroup_size = 32, shared_memory_bytes = 0>} {}

// -----

// expected-error @+1 {{device profile 'p': 'cache_line' must be a power of two, got 96}}
module attributes {cachet.device = #cachet.device<name = "p", vendor = "amd", arch = "x", cache_line = 96, l2_bytes = 0, alias_stride = 0, alias_pad = 0, compute_units = 1, dram_gbps = 1.0, unified_memory = false, strided_read_penalty = 1.0, pdl = false, l2_prefetch = "none", coop_matrix = [], subgroup_size = 32, shared_memory_bytes = 0>} {}

// -----

// expected-error @+1 {{device profile 'p': 'dram_gbps' must be positive}}
module attributes {cachet.device = #cachet.device<name = "p", vendor = "amd", arch = "x", cache_line = 128, l2_bytes = 0, alias_stride = 0, alias_pad = 0, compute_units = 1, dram_gbps = 0.0, unified_memory = false, strided_read_penalty = 1.0, pdl = false, l2_prefetch = "none", coop_matrix = [], subgroup_size = 32, shared_memory_bytes = 0>} {}

// -----

// expected-error @+1 {{device profile 'p': 'strided_read_penalty' must be >= 1.0, got 5.000000e-01}}
module attributes {cachet.device = #cachet.device<name = "p", vendor = "amd", arch = "x", cache_line = 128, l2_bytes = 0, alias_stride = 0, alias_pad = 0, compute_units = 1, dram_gbps = 1.0, unified_memory = false, strided_read_penalty = 0.5, pdl = false, l2_prefetch = "none", coop_matrix = [], subgroup_size = 32, shared_memory_bytes = 0>} {}

// -----

// expected-error @+1 {{device profile 'p': 'l2_prefetch' must be none, l2, bulk, s_prefetch_data or global_prefetch, got 'tma'}}
module attributes {cachet.device = #cachet.device<name = "p", vendor = "nvidia", arch = "x", cache_line = 128, l2_bytes = 0, alias_stride = 0, alias_pad = 0, compute_units = 1, dram_gbps = 1.0, unified_memory = false, strided_read_penalty = 1.0, pdl = false, l2_prefetch = "tma", coop_matrix = [], subgroup_size = 32, shared_memory_bytes = 0>} {}

// -----

// expected-error @+1 {{device profile 'p': 'coop_matrix' entries must look like "16x16x16:f16->f32", got "16x16:f16->f32"}}
module attributes {cachet.device = #cachet.device<name = "p", vendor = "nvidia", arch = "x", cache_line = 128, l2_bytes = 0, alias_stride = 0, alias_pad = 0, compute_units = 1, dram_gbps = 1.0, unified_memory = false, strided_read_penalty = 1.0, pdl = false, l2_prefetch = "none", coop_matrix = ["16x16:f16->f32"], subgroup_size = 32, shared_memory_bytes = 0>} {}

// -----

// expected-error @+1 {{device profile 'p': 'subgroup_size' must be a power of two, got 0}}
module attributes {cachet.device = #cachet.device<name = "p", vendor = "nvidia", arch = "x", cache_line = 128, l2_bytes = 0, alias_stride = 0, alias_pad = 0, compute_units = 1, dram_gbps = 1.0, unified_memory = false, strided_read_penalty = 1.0, pdl = false, l2_prefetch = "none", coop_matrix = [], subgroup_size = 0, shared_memory_bytes = 0>} {}

// -----

// expected-error @+2 {{expected 'true' or 'false'}}
// expected-error @+1 {{failed to parse Cachet_DeviceProfileAttr parameter 'unified_memory' which is to be a `bool`}}
module attributes {cachet.device = #cachet.device<name = "p", vendor = "nvidia", arch = "x", cache_line = 128, l2_bytes = 0, alias_stride = 0, alias_pad = 0, compute_units = 1, dram_gbps = 1.0, unified_memory = 1, strided_read_penalty = 1.0, pdl = false, l2_prefetch = "none", coop_matrix = [], subgroup_size = 32, shared_memory_bytes = 0>} {}

// -----

func.func @quantize_k_quant(%a: tensor<4x256xf16>) {
  // expected-error @+1 {{cachet.quantize writes the 32-value formats (q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl), not q4_K (a weight format of 256-value super-blocks)}}
  %0 = cachet.quantize %a : tensor<4x256xf16> -> tensor<4x1x!cachet.q4_K>
  return
}

// -----

func.func @quantize_rank0(%a: tensor<f16>) {
  // expected-error @+1 {{operand 'input' must have rank >= 1}}
  %0 = cachet.quantize %a : tensor<f16> -> tensor<!cachet.q8_0>
  return
}

// -----

func.func @quantize_input_int(%a: tensor<4x32xi8>) {
  // expected-error @+1 {{operand 'input' must have element type f16, bf16 or f32, got 'i8'}}
  %0 = cachet.quantize %a : tensor<4x32xi8> -> tensor<4x1x!cachet.q8_0>
  return
}

// -----

func.func @quantize_not_multiple_of_32(%a: tensor<4x48xf16>) {
  // expected-error @+1 {{innermost dimension of 'input' (48) must be a multiple of 32, the block size}}
  %0 = cachet.quantize %a : tensor<4x48xf16> -> tensor<4x1x!cachet.q8_0>
  return
}

// -----

func.func @quantize_rank(%a: tensor<4x64xf16>) {
  // expected-error @+1 {{result rank (1) must equal the rank of 'input' (2)}}
  %0 = cachet.quantize %a : tensor<4x64xf16> -> tensor<8x!cachet.q4_0>
  return
}

// -----

func.func @quantize_packed_with_scales(%a: tensor<4x64xf16>) {
  // expected-error @+1 {{a block-quantized result takes no 'scales' result (only the split q8_0 form, i8 quants, has one)}}
  %q, %s = cachet.quantize %a : tensor<4x64xf16> -> tensor<4x2x!cachet.q8_0>, tensor<4x2xf16>
  return
}

// -----

func.func @quantize_result_float(%a: tensor<4x64xf16>) {
  // expected-error @+1 {{result must have a block-quantized element type, or i8 with a 'scales' result (split q8_0 form), got 'f16'}}
  %0 = cachet.quantize %a : tensor<4x64xf16> -> tensor<4x64xf16>
  return
}

// -----

func.func @quantize_split_no_scales(%a: tensor<4x64xf16>) {
  // expected-error @+1 {{the split q8_0 form (i8 result) needs a 'scales' result, one f16 per 32 values}}
  %0 = cachet.quantize %a : tensor<4x64xf16> -> tensor<4x64xi8>
  return
}

// -----

func.func @quantize_rounding_even_q4_0(%a: tensor<4x64xf16>) {
  // expected-error @+1 {{rounding <even> is for q8_0 only; q4_0 rounds as ggml's reference does}}
  %0 = cachet.quantize %a rounding <even> : tensor<4x64xf16> -> tensor<4x2x!cachet.q4_0>
  return
}

// -----

func.func @quantize_outer_dim(%a: tensor<4x64xf16>) {
  // expected-error @+1 {{result dimension 0 (3) must match 'input' (4)}}
  %0 = cachet.quantize %a : tensor<4x64xf16> -> tensor<3x2x!cachet.q5_1>
  return
}

// -----

func.func @quantize_blocks(%a: tensor<4x64xf16>) {
  // expected-error @+1 {{innermost result dimension (64) must be 2, one block per 32 values of 'input'}}
  %0 = cachet.quantize %a : tensor<4x64xf16> -> tensor<4x64x!cachet.q5_1>
  return
}

// -----

func.func @quantize_split_quants(%a: tensor<4x64xf16>) {
  // expected-error @+1 {{innermost result dimension (32) must be 64, one i8 quant per value of 'input'}}
  %q, %s = cachet.quantize %a : tensor<4x64xf16> -> tensor<4x32xi8>, tensor<4x2xf16>
  return
}

// -----

func.func @quantize_split_scales_f32(%a: tensor<4x64xf16>) {
  // expected-error @+1 {{result 'scales' must have element type f16, got 'f32'}}
  %q, %s = cachet.quantize %a : tensor<4x64xf16> -> tensor<4x64xi8>, tensor<4x2xf32>
  return
}

// -----

func.func @quantize_split_scales_rank(%a: tensor<4x64xf16>) {
  // expected-error @+1 {{result 'scales' must have the rank of 'input' (2), got 1}}
  %q, %s = cachet.quantize %a : tensor<4x64xf16> -> tensor<4x64xi8>, tensor<8xf16>
  return
}

// -----

func.func @quantize_split_scales_outer(%a: tensor<4x64xf16>) {
  // expected-error @+1 {{dimension 0 of 'scales' (3) must match 'input' (4)}}
  %q, %s = cachet.quantize %a : tensor<4x64xf16> -> tensor<4x64xi8>, tensor<3x2xf16>
  return
}

// -----

func.func @quantize_split_scales_blocks(%a: tensor<4x64xf16>) {
  // expected-error @+1 {{innermost dimension of 'scales' (4) must be 2, one scale per 32 values of 'input'}}
  %q, %s = cachet.quantize %a : tensor<4x64xf16> -> tensor<4x64xi8>, tensor<4x4xf16>
  return
}

// -----

// expected-error @+1 {{'cachet.argmax_of' of result 0 names result 2, not another result}}
func.func private @argmax_of_out_of_range() -> (tensor<1xi32> {cachet.argmax_of = 2 : i64}, tensor<4x8xf32>)

// -----

// expected-error @+1 {{'cachet.argmax_of': result 0 must be a shaped integer result and result 1 a shaped float result of rank 1 or more}}
func.func private @argmax_of_float_index() -> (tensor<1xf32> {cachet.argmax_of = 1 : i64}, tensor<4x8xf32>)

// -----

// expected-error @+1 {{'cachet.argmax_of' must be an integer attribute on a function result}}
func.func private @argmax_of_not_integer() -> (tensor<1xi32> {cachet.argmax_of = "logits"}, tensor<4x8xf32>)

// -----

func.func @attention_partial_state_type(%q: tensor<8x4x128xf16>, %k: tensor<2x16x128xf16>, %v: tensor<2x16x128xf16>, %p: index, %acc: tensor<8x4x128xf32>, %mx: tensor<8x4xf32>, %sm: tensor<8x4xf32>) {
  // expected-error @+1 {{failed to verify that all of {max_in, max} have same type}}
  %o, %m, %l = "cachet.attention_partial"(%q, %k, %v, %p, %acc, %mx, %sm) {kv_layout = #cachet.kv_layout<head_major>, scale = 1.0 : f32} : (tensor<8x4x128xf16>, tensor<2x16x128xf16>, tensor<2x16x128xf16>, index, tensor<8x4x128xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8x4x128xf32>, tensor<8x8xf32>, tensor<8x4xf32>)
  return
}
