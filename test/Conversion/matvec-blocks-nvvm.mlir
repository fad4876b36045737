// A q8_0 mat-vec as a front end writes it, through the whole NVVM pipeline:
// one kernel reads the packed rows (the f16 copy is never written), the
// quants made f16 by byte permutes, the products with the scale in f16, the
// sums fused multiply-adds.
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 format=isa" 2>&1 | FileCheck %s
// CHECK: remark: cachet-lower-matvec: subgroup kernel: 32 lanes per row, {{.*}} q8_0 slices of 8 values per lane in flight, 2 rows per subgroup; the blocks decoded in registers, the dequantized copy never written
// CHECK-COUNT-1: .entry
// CHECK: prmt.b32
// CHECK: mul.rn.f16x2
// CHECK: fma.rn.f32
// CHECK-NOT: .entry
// On the H200 profile (which has pdl) auto launches it without pdl: pdl
// measured slower for a lone block kernel (a chain of them takes it).
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 format=isa" 2>&1 | FileCheck %s --check-prefix=H200
// H200: auto: a lone launch of cachet's subgroup mat-vec kernel over packed blocks; on the H200 pdl made one slower (0.88-0.96x of none on a lone q8_0 mat-vec, docs/BENCHMARKS.md run 79; a chain of them takes it), so none
// H200-NOT: griddepcontrol
func.func @matvec(%w: tensor<64x8x!cachet.q8_0> {cachet.weight}, %x: tensor<256xf16>) -> tensor<64xf32> {
  %z = arith.constant 0.0 : f32
  %d = cachet.dequantize %w : tensor<64x8x!cachet.q8_0> -> tensor<64x256xf16>
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %y = linalg.matvec ins(%d, %x : tensor<64x256xf16>, tensor<256xf16>) outs(%f : tensor<64xf32>) -> tensor<64xf32>
  return %y : tensor<64xf32>
}
