// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs,func.func(cachet-lower-matvec))' -verify-diagnostics

// stage-x takes a mat-vec's x: a config asking for it on a mat-mul is an
// error naming why.
func.func @stage_x(%w: memref<64x256xf16>, %x: memref<4x256xf16>, %y: memref<4x64xf32>) {
  // expected-remark @+2 {{cachet-select-kernel-configs: the config in the IR is kept}}
  // expected-error @+1 {{cachet-lower-matvec: cannot build #cachet.kernel_config<variant = matvec_subgroup, tile = [4, 1], workgroup = 128, subgroup = 32, vector_width = 8, loads = [4, 8], resident = [0, 0], stage_x = true>: stage_x takes a mat-vec's x, not a mat-mul's rows of x}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<4x256xf16>, memref<64x256xf16>) outs(%y : memref<4x64xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = matvec_subgroup, tile = [4, 1], workgroup = 128, subgroup = 32, vector_width = 8, loads = [4, 8], resident = [0, 0], stage_x = true>}
  return
}

// -----

// A GEMM config written into the IR on a mat-mul the GEMM cannot compute
// (f32 operands): an error naming why.
func.func @gemm_f32(%w: memref<128x64xf32>, %x: memref<256x64xf32>, %y: memref<256x128xf32>) {
  // expected-remark @+2 {{cachet-select-kernel-configs: the config in the IR is kept}}
  // expected-error @+1 {{cachet-lower-matvec: cannot build #cachet.kernel_config<variant = gemm_mma_sync, tile = [128, 128], workgroup = 256, subgroup = 32, stages = 2, pad_bytes = 16>: x and the weight are not both f16 or both bf16}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x64xf32>, memref<128x64xf32>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_mma_sync, tile = [128, 128], workgroup = 256, subgroup = 32, stages = 2, pad_bytes = 16>}
  return
}

// -----

// A tiled GEMM config on a mat-mul whose columns its step does not divide:
// an error naming why.
func.func @gemm_tiled_step(%w: memref<128x40xf16>, %x: memref<256x40xf16>, %y: memref<256x128xf32>) {
  // expected-remark @+2 {{cachet-select-kernel-configs: the config in the IR is kept}}
  // expected-error @+1 {{cachet-lower-matvec: cannot build #cachet.kernel_config<variant = gemm_tiled, tile = [64, 64, 16], workgroup = 256, vector_width = 4>: 40 columns are not a multiple of 16 (a step)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x40xf16>, memref<128x40xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_tiled, tile = [64, 64, 16], workgroup = 256, vector_width = 4>}
  return
}
