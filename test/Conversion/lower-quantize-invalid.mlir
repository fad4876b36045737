// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(cachet-lower-quantize))' -verify-diagnostics

// A quantize config where no quantize is: the verifier names the op it
// must be on.

#id = affine_map<(d0) -> (d0)>
func.func @unmarked(%x: memref<64xf32>, %y: memref<64xf32>) {
  // expected-error @below {{'cachet.kernel_config' of variant quantize_subgroup must be on a linalg.generic marked cachet.quantize}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : memref<64xf32>) outs(%y : memref<64xf32>) attrs = {cachet.kernel_config = #cachet.kernel_config<variant = quantize_subgroup, workgroup = 64, subgroup = 32>} {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// The kernel takes threads only.

#id = affine_map<(d0) -> (d0)>
func.func @bad_config(%x: memref<64xf32>, %y: memref<68xi8>) {
  // expected-error @below {{#cachet.kernel_config<variant = quantize_subgroup>: 'workgroup' (threads) must be positive, got 0}}
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%y : memref<68xi8>) attrs = {cachet.kernel_config = #cachet.kernel_config<variant = quantize_subgroup>, cachet.quantize = !cachet.q8_0} {
  ^bb0(%b: i8):
    linalg.yield %b : i8
  }
  return
}

// -----

// A marked generic with an input (not the reference lowering's form): the
// config cannot be built, and the error says why.

#id = affine_map<(d0) -> (d0)>
func.func @with_input(%x: memref<68xf32>, %y: memref<68xi8>) {
  // expected-error @below {{cachet-lower-quantize: cannot build #cachet.kernel_config<variant = quantize_subgroup, workgroup = 64, subgroup = 32>: not on buffers with one result and no inputs (run after bufferization)}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : memref<68xf32>) outs(%y : memref<68xi8>) attrs = {cachet.kernel_config = #cachet.kernel_config<variant = quantize_subgroup, workgroup = 64, subgroup = 32>, cachet.quantize = !cachet.q8_0} {
  ^bb0(%a: f32, %b: i8):
    %q = arith.fptosi %a : f32 to i8
    linalg.yield %q : i8
  }
  return
}

// -----

// The subgroup kernel's shuffle width must be a power of two dividing the
// workgroup.

#id = affine_map<(d0) -> (d0)>
func.func @bad_width(%y: memref<68xi8>) {
  // expected-error @below {{#cachet.kernel_config<variant = quantize_subgroup>: 'subgroup' (the shuffles' width) must be a power of two dividing 'workgroup' (48), got 32}}
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%y : memref<68xi8>) attrs = {cachet.kernel_config = #cachet.kernel_config<variant = quantize_subgroup, workgroup = 48, subgroup = 32>, cachet.quantize = !cachet.q8_0} {
  ^bb0(%b: i8):
    linalg.yield %b : i8
  }
  return
}

// -----

#id = affine_map<(d0) -> (d0)>
func.func @no_width(%y: memref<68xi8>) {
  // expected-error @below {{#cachet.kernel_config<variant = quantize_subgroup>: 'subgroup' (the shuffles' width) must be a power of two dividing 'workgroup' (64), got 0}}
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%y : memref<68xi8>) attrs = {cachet.kernel_config = #cachet.kernel_config<variant = quantize_subgroup, workgroup = 64>, cachet.quantize = !cachet.q8_0} {
  ^bb0(%b: i8):
    linalg.yield %b : i8
  }
  return
}
