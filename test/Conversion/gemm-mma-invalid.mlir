// A hand-written mma GEMM with a fallback in a module that does not
// declare the runtime check the fallback is called through (the
// declaration comes with cachet-select-kernel-configs' choice): a
// diagnostic naming it, not an abort.
// RUN: cachet-opt %s -pass-pipeline='builtin.module(func.func(cachet-lower-matvec))' -verify-diagnostics -o /dev/null

func.func @undeclared(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+1 {{cachet-lower-matvec: cannot build the fallback #cachet.kernel_config<variant = gemm_tiled, tile = [64, 64, 32], workgroup = 256, vector_width = 4>: the module does not declare cachetMgpuHasCooperativeMatrixF16 (cachet-select-kernel-configs declares it where it chooses a fallback)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_mma, tile = [64, 64, 32], workgroup = 128, subgroup = 32, vector_width = 4, pad_bytes = 16>,
       cachet.fallback_kernel_config = #cachet.kernel_config<variant = gemm_tiled, tile = [64, 64, 32], workgroup = 256, vector_width = 4>}
  return
}
