// The split q4_0 weights a front end writes for int4 (i4 values less the
// zero point 8, one f16 scale per 32, dequantized by a linalg.generic
// feeding linalg.matvec), through the whole NVVM pipeline on the H200
// profile: raised to cachet.dequantize, the i4 arguments passed as bytes
// (two values each), and one kernel per mat-vec reads the bytes and scales
// where they are, the nibbles unpacked in registers by byte permutations
// (the f16 copy is never written). The two mat-vecs are a chain: pdl, the
// weight loads and their decoding issued before the wait.
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 format=isa" 2>&1 | FileCheck %s
// CHECK-COUNT-2: remark: cachet-raise-dequantize: raised to cachet.dequantize: split q4_0 of 'tensor<{{64x256|256x64}}xi4>' to 'f16'
// CHECK: cachet-select-kernel-configs: subgroup kernel on split q4_0 (i4 values two per byte, f16 scales) blocks decoded in registers (never materialized)
// CHECK: cachet-lower-matvec: subgroup kernel: 32 lanes per row, {{.*}} split q4_0 slices of 8 values per lane in flight, 2 rows per subgroup; the blocks decoded in registers, the dequantized copy never written
// CHECK-COUNT-2: .entry
// CHECK: griddepcontrol.launch_dependents
// CHECK: ld.global.b32
// CHECK: ld.global.b16
// CHECK: prmt.b32
// CHECK: mul.rn.f16x2
// CHECK: griddepcontrol.wait
// CHECK: fma.rn.f32
// CHECK-NOT: .entry
// The same kernels for ROCDL (gfx942): the nibble words in dword loads,
// the f16 pairs multiplied packed.
// RUN: cachet-opt %s -cachet-compile="target=rocdl chip=gfx942 format=isa" 2>&1 | FileCheck %s --check-prefix=GCN
// GCN: cachet-lower-matvec: subgroup kernel: {{.*}} split q4_0 slices of 8 values per lane in flight
// GCN: global_load_dword
// GCN: v_pk_mul_f16
// GCN: .amdhsa_kernel chain_kernel
func.func @chain(%q0: tensor<64x256xi4> {cachet.weight}, %s0: tensor<64x8xf16> {cachet.weight},
                 %q1: tensor<256x64xi4> {cachet.weight}, %s1: tensor<256x2xf16> {cachet.weight},
                 %x: tensor<256xf16>) -> tensor<256xf32> {
  %z = arith.constant 0.0 : f32
  %de0 = tensor.empty() : tensor<64x256xf16>
  %d0 = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c floordiv 32)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%q0, %s0 : tensor<64x256xi4>, tensor<64x8xf16>) outs(%de0 : tensor<64x256xf16>) {
    ^bb0(%qv: i4, %sv: f16, %o: f16):
      %zp = arith.constant 8.0 : f16
      %i = arith.extui %qv : i4 to i32
      %u = arith.uitofp %i : i32 to f16
      %c = arith.subf %u, %zp : f16
      %m = arith.mulf %c, %sv : f16
      linalg.yield %m : f16
  } -> tensor<64x256xf16>
  %e0 = tensor.empty() : tensor<64xf32>
  %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<64xf32>) -> tensor<64xf32>
  %y0 = linalg.matvec ins(%d0, %x : tensor<64x256xf16>, tensor<256xf16>) outs(%f0 : tensor<64xf32>) -> tensor<64xf32>
  %he = tensor.empty() : tensor<64xf16>
  %h = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%y0 : tensor<64xf32>) outs(%he : tensor<64xf16>) {
    ^bb0(%a: f32, %o: f16):
      %t = arith.truncf %a : f32 to f16
      linalg.yield %t : f16
  } -> tensor<64xf16>
  %de1 = tensor.empty() : tensor<256x64xf16>
  %d1 = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c floordiv 32)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%q1, %s1 : tensor<256x64xi4>, tensor<256x2xf16>) outs(%de1 : tensor<256x64xf16>) {
    ^bb0(%qv: i4, %sv: f16, %o: f16):
      %zp = arith.constant 8.0 : f16
      %i = arith.extui %qv : i4 to i32
      %u = arith.uitofp %i : i32 to f16
      %c = arith.subf %u, %zp : f16
      %m = arith.mulf %c, %sv : f16
      linalg.yield %m : f16
  } -> tensor<256x64xf16>
  %e1 = tensor.empty() : tensor<256xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<256xf32>) -> tensor<256xf32>
  %y1 = linalg.matvec ins(%d1, %h : tensor<256x64xf16>, tensor<64xf16>) outs(%f1 : tensor<256xf32>) -> tensor<256xf32>
  return %y1 : tensor<256xf32>
}
