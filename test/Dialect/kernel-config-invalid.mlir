// RUN: cachet-opt %s -split-input-file -verify-diagnostics

func.func @no_tile(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                   %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+2 {{#cachet.kernel_config<variant = attention_scalar>: 'tile' must have two positive entries (query rows, key positions)}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_scalar, tile = [32]>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @key_tile(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                    %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+2 {{the key tile 24 is not a multiple of 16 (the mma kernels' column block)}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_mma, tile = [64, 24]>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @stages(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                  %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+2 {{'stages = 2' needs 'dynamic_shared = true'}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_mma_sync, tile = [64, 64], stages = 2>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @lazy(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+2 {{'lazy_rescale' needs 'warp_sync = true'}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_mma, tile = [64, 64], lazy_rescale = true>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @wrong_op(%a: tensor<4x8xf16>, %x: tensor<8xf16>, %y: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error @+1 {{'cachet.kernel_config' of variant attention_scalar must be on a cachet.attention}}
  %r = linalg.matvec {cachet.kernel_config = #cachet.kernel_config<variant = attention_scalar, tile = [32, 16]>}
      ins(%a, %x : tensor<4x8xf16>, tensor<8xf16>) outs(%y : tensor<4xf16>) -> tensor<4xf16>
  return %r : tensor<4xf16>
}

// -----

func.func @not_a_config(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                        %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+1 {{'cachet.kernel_config' must be a #cachet.kernel_config}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = "mma"}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @bad_variant(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                       %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+3 {{expected ::cachet::KernelVariant to be one of: attention_scalar, attention_mma, attention_mma_sync, matvec_subgroup, matvec_generic, dequant_transpose_staged, dequant_transpose_direct}}
  // expected-error @+2 {{failed to parse Cachet_KernelConfigAttr parameter 'variant'}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_fast, tile = [1, 1]>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @staged_tile(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                       %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+2 {{#cachet.kernel_config<variant = dequant_transpose_staged>: 'tile' must have one positive entry (positions per workgroup)}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = dequant_transpose_staged, tile = [4, 4], workgroup = 64, load_bytes = 16>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @direct_load_bytes(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                             %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+2 {{the direct kernel takes no 'tile' or 'load_bytes'}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = dequant_transpose_direct, workgroup = 64, load_bytes = 16>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @load_bytes_on_matvec(%a: memref<8x8xf32>, %x: memref<8xf32>,
                                %y: memref<8xf32>) {
  // expected-error @+1 {{only the staged dequant-transpose and the decode kernel take 'load_bytes'}}
  linalg.matvec {cachet.kernel_config = #cachet.kernel_config<variant = matvec_generic, load_bytes = 16>}
      ins(%a, %x : memref<8x8xf32>, memref<8xf32>) outs(%y : memref<8xf32>)
  return
}

// -----

func.func @dequant_on_attention(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                                %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+1 {{'cachet.kernel_config' of variant dequant_transpose_direct must be on a linalg.generic marked cachet.dequant_transpose}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = dequant_transpose_direct, workgroup = 64>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @split_scalar(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                        %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+2 {{only the decode kernel takes 'split'}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_scalar, tile = [32, 16], split = 4>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @decode_threads(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                          %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+2 {{the decode kernel reads one KV position per thread per step: workgroup 64 is not the key tile 128}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode, tile = [4, 128], workgroup = 64>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @decode_load_bytes(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                             %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+2 {{'load_bytes' must be 0 or a power of two up to 16, got 3}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode, tile = [4, 128], load_bytes = 3>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @decode_row_blocks(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                             %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+2 {{the decode kernel takes no 'row_blocks', 'pad_bytes', 'warp_sync' or 'lazy_rescale'}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode, tile = [4, 128], pad_bytes = 16>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @decode_dynamic_unstaged(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                                   %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+2 {{the decode kernel's dynamic workgroup memory holds its staged K/V rows: 'dynamic_shared' needs 'stages = 2'}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode, tile = [4, 128], dynamic_shared = true>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @decode_lanes_staged(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                               %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+2 {{the decode kernel reads rows by lanes together ('vector_width' > 1) only with 'stages = 1'}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode, tile = [4, 32], workgroup = 128, vector_width = 8, stages = 2, dynamic_shared = true>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @decode_mma_workgroup(%q: tensor<32x1x128xf16>, %k: tensor<4096x8x128xf16>,
                                %v: tensor<4096x8x128xf16>) -> tensor<32x1x128xf16> {
  // expected-error @+2 {{the mma-sync decode kernel needs 'workgroup' (threads), whole subgroups of 32 lanes, got 0}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode_mma_sync, tile = [4, 64], vector_width = 8>}
      : tensor<32x1x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16>
      -> tensor<32x1x128xf16>
  return %o : tensor<32x1x128xf16>
}

// -----

func.func @decode_mma_rows(%q: tensor<32x8x128xf16>, %k: tensor<4096x8x128xf16>,
                           %v: tensor<4096x8x128xf16>) -> tensor<32x8x128xf16> {
  // expected-error @+2 {{the mma-sync decode kernel computes at most 16 query rows (one m16 block), got 32}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode_mma_sync, tile = [32, 64], workgroup = 128, vector_width = 8>}
      : tensor<32x8x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16>
      -> tensor<32x8x128xf16>
  return %o : tensor<32x8x128xf16>
}

// -----

func.func @decode_mma_key_tile(%q: tensor<32x1x128xf16>, %k: tensor<4096x8x128xf16>,
                               %v: tensor<4096x8x128xf16>) -> tensor<32x1x128xf16> {
  // expected-error @+2 {{the key tile 48 is not a multiple of 16 positions per subgroup (64)}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode_mma_sync, tile = [4, 48], workgroup = 128, vector_width = 8>}
      : tensor<32x1x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16>
      -> tensor<32x1x128xf16>
  return %o : tensor<32x1x128xf16>
}

// -----

func.func @decode_mma_run(%q: tensor<32x1x128xf16>, %k: tensor<4096x8x128xf16>,
                          %v: tensor<4096x8x128xf16>) -> tensor<32x1x128xf16> {
  // expected-error @+2 {{the mma-sync decode kernel's 'vector_width' (K values in a run per lane) must be 8 or more, got 4}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode_mma_sync, tile = [4, 64], workgroup = 128, vector_width = 4>}
      : tensor<32x1x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16>
      -> tensor<32x1x128xf16>
  return %o : tensor<32x1x128xf16>
}

// -----

func.func @decode_mma_stages(%q: tensor<32x1x128xf16>, %k: tensor<4096x8x128xf16>,
                             %v: tensor<4096x8x128xf16>) -> tensor<32x1x128xf16> {
  // expected-error @+2 {{the mma-sync decode kernel holds its K/V in registers: no 'dynamic_shared'}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode_mma_sync, tile = [4, 64], workgroup = 128, vector_width = 8, stages = 2, dynamic_shared = true>}
      : tensor<32x1x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16>
      -> tensor<32x1x128xf16>
  return %o : tensor<32x1x128xf16>
}

// -----

func.func @gemm_tile(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{#cachet.kernel_config<variant = gemm_mma_sync>: 'tile' must be [rows of x, weight rows] or [rows of x, weight rows, columns per step], multiples of 64, 32 and 16}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_mma_sync, tile = [96, 128], workgroup = 256, subgroup = 32>}
  return
}

// -----

func.func @gemm_workgroup(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{'workgroup' must be subgroups of 32 lanes ('subgroup' 32), each computing 64 rows of x by a multiple of 16 weight rows that divides the tile's 128}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_mma_sync, tile = [128, 128], workgroup = 96, subgroup = 32, stages = 2>}
  return
}

// -----

func.func @gemm_extra(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{the GEMM takes only 'tile', 'workgroup', 'subgroup', 'stages', 'pad_bytes', 'dynamic_shared' and 'fuse_epilogues' (and the wgmma GEMM 'load_bytes' and 'fuse_siblings')}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_mma_sync, tile = [128, 128], workgroup = 256, subgroup = 32, stages = 2, stage_x = true>}
  return
}

// -----

func.func @gemm_mma_siblings(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{'fuse_siblings' needs the wgmma GEMM over a float weight (no 'load_bytes'): siblings share its tiles}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_mma_sync, tile = [128, 128], workgroup = 256, subgroup = 32, stages = 2, fuse_siblings = true>}
  return
}

// -----

func.func @gemm_wgmma_blocks_siblings(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{'fuse_siblings' needs the wgmma GEMM over a float weight (no 'load_bytes'): siblings share its tiles}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_wgmma, tile = [128, 128], workgroup = 256, subgroup = 32, stages = 4, dynamic_shared = true, fuse_siblings = true, load_bytes = 16>}
  return
}

// -----

func.func @gemm_stages(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{'stages' must be 2 to 8 (steps buffered in workgroup memory), got 1}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_mma_sync, tile = [128, 128], workgroup = 256, subgroup = 32, stages = 1>}
  return
}

// -----

func.func @gemm_pieces(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{'workgroup' (512) must divide the 16-byte pieces of a step of x's and of the weight's rows (256, 512)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_mma_sync, tile = [128, 256, 16], workgroup = 512, subgroup = 32, stages = 2>}
  return
}

// -----

func.func @gemm_dynamic_shared(%x: memref<256x128xf16>, %w: memref<256x128xf16>, %y: memref<256x256xf32>) {
  // expected-error @+3 {{the buffers take 165888 bytes of workgroup memory: more than 48 KiB needs 'dynamic_shared'}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<256x128xf16>) outs(%y : memref<256x256xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_mma_sync, tile = [128, 256, 64], workgroup = 256, subgroup = 32, stages = 3, pad_bytes = 16>}
  return
}

// -----

func.func @wgmma_workgroup(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{'workgroup' must be one warpgroup of 128 threads per 64 rows of x (256; 384 or 512 with one or two producer warpgroups where 'load_bytes' decodes blocks), 'subgroup' 32}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_wgmma, tile = [128, 128], workgroup = 128, subgroup = 32, stages = 4, dynamic_shared = true>}
  return
}

// -----

func.func @wgmma_static(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{the buffers are unpadded ('pad_bytes' 0) in dynamic workgroup memory ('dynamic_shared')}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_wgmma, tile = [128, 128], workgroup = 256, subgroup = 32, stages = 4>}
  return
}

// -----

func.func @wgmma_tile(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{'tile' must be [rows of x, weight rows]: a multiple of 64 up to 256 (one warpgroup per 64) and a multiple of 8 up to 256 (a wgmma's n)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_wgmma, tile = [128, 264], workgroup = 256, subgroup = 32, stages = 4, dynamic_shared = true>}
  return
}

// -----

func.func @attention_wgmma_workgroup(%q: tensor<8x128x128xf16>, %k: tensor<2x256x128xf16>,
                                     %v: tensor<2x256x128xf16>) -> tensor<8x128x128xf16> {
  // expected-error @+2 {{#cachet.kernel_config<variant = attention_wgmma>: 'workgroup' must be one warpgroup of 128 threads per 64 query rows (256), 'subgroup' 0 or 32}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_wgmma, tile = [128, 64], workgroup = 128, vector_width = 8, dynamic_shared = true>}
      : tensor<8x128x128xf16>, tensor<2x256x128xf16>, tensor<2x256x128xf16>
      -> tensor<8x128x128xf16>
  return %o : tensor<8x128x128xf16>
}

// -----

func.func @attention_wgmma_tile(%q: tensor<8x128x128xf16>, %k: tensor<2x256x128xf16>,
                                %v: tensor<2x256x128xf16>) -> tensor<8x128x128xf16> {
  // expected-error @+2 {{'tile' must be [query rows, key positions]: a multiple of 64 up to 256 (one warpgroup per 64 rows) and a multiple of 16 up to 256 (a wgmma's n)}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_wgmma, tile = [96, 64], workgroup = 192, vector_width = 8, dynamic_shared = true>}
      : tensor<8x128x128xf16>, tensor<2x256x128xf16>, tensor<2x256x128xf16>
      -> tensor<8x128x128xf16>
  return %o : tensor<8x128x128xf16>
}

// -----

func.func @attention_wgmma_padded(%q: tensor<8x128x128xf16>, %k: tensor<2x256x128xf16>,
                                  %v: tensor<2x256x128xf16>) -> tensor<8x128x128xf16> {
  // expected-error @+2 {{the wgmma kernel's tiles are unpadded 128-byte swizzles in dynamic workgroup memory, filled in 16-byte vectors: 'vector_width = 8', 'dynamic_shared', no 'row_blocks', 'pad_bytes', 'warp_sync' or 'lazy_rescale'}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_wgmma, tile = [128, 64], workgroup = 256, vector_width = 8, pad_bytes = 16, dynamic_shared = true>}
      : tensor<8x128x128xf16>, tensor<2x256x128xf16>, tensor<2x256x128xf16>
      -> tensor<8x128x128xf16>
  return %o : tensor<8x128x128xf16>
}

// -----

func.func @wgmma_load_bytes(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{'load_bytes' must be 0 (the weight as it is), or 4 or 16 (a block weight's bytes copied in pieces of that many and decoded in the kernel), got 8}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_wgmma, tile = [128, 128], workgroup = 256, subgroup = 32, stages = 4, dynamic_shared = true, load_bytes = 8>}
  return
}

// -----

func.func @wgmma_producer_without_blocks(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{'workgroup' must be one warpgroup of 128 threads per 64 rows of x (256; 384 or 512 with one or two producer warpgroups where 'load_bytes' decodes blocks), 'subgroup' 32}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_wgmma, tile = [128, 128], workgroup = 384, subgroup = 32, stages = 4, dynamic_shared = true>}
  return
}

// -----

// A fallback belongs beside the mma kernel it replaces where the device
// lacks cooperative matrices.
func.func @fallback_without_mma(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                                %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+1 {{'cachet.fallback_kernel_config' must be on a cachet.attention whose 'cachet.kernel_config' is of variant attention_mma}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_scalar, tile = [32, 32]>,
       cachet.fallback_kernel_config = #cachet.kernel_config<variant = attention_scalar, tile = [32, 32]>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @fallback_is_mma(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                           %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+1 {{'cachet.fallback_kernel_config' cannot be the mma kernel it replaces}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_mma, tile = [64, 32]>,
       cachet.fallback_kernel_config = #cachet.kernel_config<variant = attention_mma, tile = [64, 32]>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @fallback_not_attention(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                                  %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+1 {{'cachet.fallback_kernel_config' must be an attention #cachet.kernel_config}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_mma, tile = [64, 32]>,
       cachet.fallback_kernel_config = "scalar"}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @gemm_tiled_tile(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{#cachet.kernel_config<variant = gemm_tiled>: 'tile' must be [rows of x, weight rows, columns per step], multiples of 4, 4 and 8}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_tiled, tile = [128, 128], workgroup = 256, vector_width = 8>}
  return
}

// -----

func.func @gemm_tiled_threads(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{'vector_width' (6, weight rows per thread) must be a multiple of 4 dividing the tile's 128, and 'workgroup' (256) threads of that many must divide the tile's 128 x 128 sums}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_tiled, tile = [128, 128, 16], workgroup = 256, vector_width = 6>}
  return
}

// -----

func.func @gemm_tiled_rows(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{each thread's 2 rows of x (the tile's 64 x 128 sums over 1024 threads of 4 weight rows) must be a multiple of 4 dividing 64}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_tiled, tile = [64, 128, 16], workgroup = 1024, vector_width = 4>}
  return
}

// -----

func.func @gemm_tiled_memory(%x: memref<256x512xf16>, %w: memref<128x512xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{a step's f32 tiles take 65536 bytes of workgroup memory, more than 48 KiB}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x512xf16>, memref<128x512xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_tiled, tile = [128, 128, 64], workgroup = 256, vector_width = 8>}
  return
}

// -----

func.func @gemm_tiled_extra(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{the tiled GEMM takes only 'tile', 'workgroup', 'subgroup', 'vector_width' and 'fuse_epilogues'}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_tiled, tile = [128, 128, 16], workgroup = 256, vector_width = 8, stages = 2>}
  return
}

// -----

func.func @gemm_tiled_huge(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{'workgroup' must be at most 1024 threads, got 4611686018427387904}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_tiled, tile = [128, 128, 16], workgroup = 4611686018427387904, vector_width = 4>}
  return
}

// -----

func.func @attention_tiled_tile(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                                %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+2 {{#cachet.kernel_config<variant = attention_tiled>: 'tile' must be [query rows, key positions, columns per step]: a multiple of 4 up to 256, up to 1024 and up to 32}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_tiled, tile = [64, 64], workgroup = 256>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @attention_tiled_threads(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                                   %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+2 {{'workgroup' (200) must be a multiple of the query tile's 16 groups of 4 rows}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_tiled, tile = [64, 64, 16], workgroup = 200>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @attention_tiled_step(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                                %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+2 {{a step of 24 positions must divide the key tile 64}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_tiled, tile = [64, 64, 24], workgroup = 256>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @attention_tiled_stages(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                                  %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+2 {{the tiled attention kernel takes only 'tile', 'workgroup' and 'subgroup'}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_tiled, tile = [64, 64, 16], workgroup = 256, stages = 2, dynamic_shared = true>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

// A thread's scores are in registers: at most 16 positions each.
func.func @attention_tiled_keys(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                                %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+2 {{the 1 threads per group of rows must divide the key tile 999 into at most 16 positions a thread (its scores are in registers)}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_tiled, tile = [4, 999, 1], workgroup = 1>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

func.func @gemm_mma_tile(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{#cachet.kernel_config<variant = gemm_mma>: 'tile' must be [rows of x, weight rows, columns per step], multiples of 32, 32 and 16}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_mma, tile = [48, 64, 32], workgroup = 128, subgroup = 32, vector_width = 4>}
  return
}

// -----

func.func @gemm_mma_workgroup(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{'workgroup' must be one subgroup of 32 lanes per 32 x 32 of the 64 x 64 tile (128), at most 1024 threads, got 256}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_mma, tile = [64, 64, 32], workgroup = 256, subgroup = 32, vector_width = 4>}
  return
}

// -----

func.func @gemm_mma_memory(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+3 {{the f16 step tiles and the f32 sums take 83968 bytes of workgroup memory, more than 49152}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_mma, tile = [128, 128, 32], workgroup = 512, subgroup = 32, vector_width = 4>}
  return
}

// -----

// The mma GEMM's fallback is the tiled GEMM.
func.func @gemm_mma_fallback(%x: memref<256x128xf16>, %w: memref<128x128xf16>, %y: memref<256x128xf32>) {
  // expected-error @+1 {{'cachet.fallback_kernel_config' of a gemm_mma config must be a gemm_tiled #cachet.kernel_config}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xf16>, memref<128x128xf16>) outs(%y : memref<256x128xf32>)
      {cachet.kernel_config = #cachet.kernel_config<variant = gemm_mma, tile = [64, 64, 32], workgroup = 128, subgroup = 32, vector_width = 4>,
       cachet.fallback_kernel_config = #cachet.kernel_config<variant = matvec_generic>}
  return
}
