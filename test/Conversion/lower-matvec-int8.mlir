// Mat-vecs over q8_0 / q4_0 blocks with stage-x: x quantized once per
// block to q8_0 blocks (i8 quants, f32 scales) in workgroup memory, each
// slice of the weight's quants multiplied with x's in 4-way signed byte
// dot products (extsi, muli, vector.reduction <add>: dp4a on NVVM), scaled
// by both blocks' scales. Formats without integer dot products keep the f16
// path and the remark says why.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{stage-x=true},func.func(cachet-lower-matvec))' -verify-diagnostics | FileCheck %s

// q4_0, f16 x: x's blocks quantized by each thread (amax, d = amax / 127,
// round) before a barrier; the weight's nibbles made signed bytes u - 8.
// CHECK-LABEL: func.func @q4_0
// CHECK: gpu.launch {{.*}} workgroup(%[[XQ:.*]] : memref<128xi8, #gpu.address_space<workgroup>>, %[[XD:.*]] : memref<4xf32, #gpu.address_space<workgroup>>)
// CHECK: math.absf
// CHECK: vector.store {{.*}}, %[[XQ]]
// CHECK: memref.store {{.*}}, %[[XD]]
// CHECK: gpu.barrier
// CHECK: vector.load %arg0[{{.*}}] {alignment = 4 : i64, cachet.streaming_weight} : memref<4x72xi8>, vector<4xi8>
// CHECK: arith.xori
// CHECK: vector.load %[[XQ]]
// CHECK: arith.extsi {{.*}} : vector<4xi8> to vector<4xi32>
// CHECK: vector.reduction <add>, {{.*}} : vector<4xi32> into i32
// CHECK: arith.sitofp {{.*}} : i32 to f32
// CHECK: memref.load %[[XD]]
// CHECK-NOT: vector.fma
func.func @q4_0(%w: memref<4x72xi8>, %x: memref<128xf16>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %y = memref.alloc() : memref<4xf32>
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4x128xf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<4x128xf16>) attrs = {cachet.block_dequantize = !cachet.q4_0} {
  ^bb0(%out: f16):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<4x72xi8>
    %f = arith.sitofp %b : i8 to f16
    linalg.yield %f : f16
  }
  linalg.fill ins(%cst : f32) outs(%y : memref<4xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel on q4_0 blocks decoded in registers (never materialized): 32 lanes per row, 4 subgroups per block, 4 (paired: 2) slices of 8 values per lane in flight, 2 rows per subgroup; x quantized once per block to 8-bit blocks in workgroup memory, 4-way integer dot products (stage-x)}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel: 32 lanes per row, 4 subgroups per block, 4 q4_0 slices of 8 values per lane in flight, 2 rows per subgroup; the blocks decoded in registers, the dequantized copy never written; x quantized once per block to 8-bit blocks in workgroup memory, 4-way integer dot products; the zero fill of the result is done in the kernel}}
  linalg.matvec ins(%a, %x : memref<4x128xf16>, memref<128xf16>) outs(%y : memref<4xf32>)
  memref.dealloc %a : memref<4x128xf16>
  return %y : memref<4xf32>
}

// -----

// Split q8_0: the values' signed bytes as they are.
// CHECK-LABEL: func.func @split_q8_0
// CHECK: gpu.launch {{.*}} workgroup(
// CHECK: vector.load %arg0[{{.*}}] {alignment = 8 : i64, cachet.streaming_weight} : memref<4x64xi8>, vector<8xi8>
// CHECK: vector.load %arg1[{{.*}}] {cachet.streaming_weight} : memref<4x2xf16>, vector<1xf16>
// CHECK-NOT: arith.xori
// CHECK: vector.reduction <add>, {{.*}} : vector<4xi32> into i32
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
  // expected-remark @+2 {{4-way integer dot products (stage-x)}}
  // expected-remark @+1 {{x quantized once per block to 8-bit blocks in workgroup memory, 4-way integer dot products}}
  linalg.matvec ins(%a, %x : memref<4x64xf32>, memref<64xf32>) outs(%y : memref<4xf32>)
  memref.dealloc %a : memref<4x64xf32>
  return %y : memref<4xf32>
}

// -----

// q4_1 has no integer dot product path: the f16 one, and why.
// CHECK-LABEL: func.func @q4_1
// CHECK-NOT: workgroup(
// CHECK: vector.fma
func.func @q4_1(%w: memref<4x80xi8>, %x: memref<128xf16>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %y = memref.alloc() : memref<4xf32>
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4x128xf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<4x128xf16>) attrs = {cachet.block_dequantize = !cachet.q4_1} {
  ^bb0(%out: f16):
    %i = linalg.index 0 : index
    %b = memref.load %w[%i, %c0] : memref<4x80xi8>
    %f = arith.sitofp %b : i8 to f16
    linalg.yield %f : f16
  }
  linalg.fill ins(%cst : f32) outs(%y : memref<4xf32>)
  // expected-remark @+2 {{slices of 8 values per lane in flight, 2 rows per subgroup; stage-x not taken: integer dot products take q8_0 and q4_0 blocks, not q4_1}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel}}
  linalg.matvec ins(%a, %x : memref<4x128xf16>, memref<128xf16>) outs(%y : memref<4xf32>)
  memref.dealloc %a : memref<4x128xf16>
  return %y : memref<4xf32>
}
