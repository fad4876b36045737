// RUN: cachet-opt %s -split-input-file -cachet-lower-to-linalg -verify-diagnostics

// expected-error @+1 {{cachet-lower-to-linalg: a declaration cannot return a block-quantized tensor}}
func.func private @returns_blocks() -> tensor<4x!cachet.q8_0>

// -----

func.func @strided_insert(%x: tensor<2x32xf16>, %c: tensor<8x1x!cachet.q4_0>) -> tensor<8x1x!cachet.q4_0> {
  %q = cachet.quantize %x : tensor<2x32xf16> -> tensor<2x1x!cachet.q4_0>
  // expected-error @+1 {{cachet-lower-to-linalg: only unit-stride, rank-preserving insertions into block-quantized tensors are supported}}
  %r = tensor.insert_slice %q into %c[0, 0] [2, 1] [2, 1] : tensor<2x1x!cachet.q4_0> into tensor<8x1x!cachet.q4_0>
  return %r : tensor<8x1x!cachet.q4_0>
}

// -----

func.func @not_traceable(%a: tensor<4x!cachet.q8_0>, %c: i1) -> tensor<128xf16> {
  %b = tensor.empty() : tensor<4x!cachet.q8_0>
  %s = arith.select %c, %a, %b : tensor<4x!cachet.q8_0>
  // expected-error @+1 {{cachet-lower-to-linalg: cannot trace the block-quantized operand to a function argument; it is produced by 'arith.select'}}
  %0 = cachet.dequantize %s : tensor<4x!cachet.q8_0> -> tensor<128xf16>
  return %0 : tensor<128xf16>
}

// -----

func.func private @use(tensor<4x!cachet.q8_0>)
func.func @other_user(%a: tensor<4x!cachet.q8_0>) {
  // expected-error @+1 {{cachet-lower-to-linalg: 'func.call' uses a block-quantized tensor; only cachet.dequantize, cachet.dequant_transpose, tensor.extract_slice, tensor.insert_slice, bufferization.materialize_in_destination and func.return can}}
  func.call @use(%a) : (tensor<4x!cachet.q8_0>) -> ()
  return
}

// -----

func.func @dynamic_heads(%q: tensor<?x4x32xf16>, %k: tensor<16x2x32xf16>, %v: tensor<16x2x32xf16>) -> tensor<?x4x32xf16> {
  // expected-error @+1 {{cachet-lower-to-linalg: the query and KV head counts must be static (the GQA map needs their ratio)}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 1.0
      : tensor<?x4x32xf16>, tensor<16x2x32xf16>, tensor<16x2x32xf16> -> tensor<?x4x32xf16>
  return %o : tensor<?x4x32xf16>
}

// -----

// expected-error @+1 {{cachet-lower-to-linalg: result #0 is an i4 tensor; i4 values are read (split q4_0 weights), not returned}}
func.func @i4_result(%q: tensor<4x32xi4>) -> tensor<4x32xi4> {
  return %q : tensor<4x32xi4>
}

// -----

// expected-error @+1 {{cachet-lower-to-linalg: argument #0: an i4 tensor's innermost dimension must be static and even (two values per byte), got 33}}
func.func @i4_odd(%q: tensor<4x33xi4>) {
  return
}

// -----

func.func private @use_i4(tensor<4x32xi4>)
func.func @i4_other_user(%q: tensor<4x32xi4>) {
  // expected-error @+1 {{cachet-lower-to-linalg: 'func.call' uses an i4 tensor; only cachet.dequantize, element-wise linalg.generic ops, tensor.extract_slice and tensor.expand_shape can}}
  func.call @use_i4(%q) : (tensor<4x32xi4>) -> ()
  return
}
