// RUN: cachet-opt %s -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma-sync=true allow-wgmma=true},func.func(cachet-lower-matvec))' -verify-diagnostics

// A config that asks a plain bf16 weight to be decoded from blocks.
func.func @not_blocks(%x: memref<256x128xbf16>, %w: memref<128x128xbf16>, %y: memref<256x128xf32>) {
  // expected-remark @+2 {{cachet-select-kernel-configs: the config in the IR is kept}}
  // expected-error @+1 {{cachet-lower-matvec: cannot build #cachet.kernel_config<variant = gemm_wgmma, tile = [128, 128], workgroup = 256, subgroup = 32, stages = 4, dynamic_shared = true, load_bytes = 4>: 'load_bytes' decodes a block weight in the kernel, and the weight is not one}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xbf16>, memref<128x128xbf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_wgmma, tile = [128, 128], workgroup = 256, subgroup = 32, stages = 4, dynamic_shared = true, load_bytes = 4>}
  return
}
