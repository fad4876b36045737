// RUN: cachet-opt %s -split-input-file | cachet-opt -split-input-file | FileCheck %s
// RUN: cachet-opt %s -split-input-file --verify-roundtrip

// Every parameter but the variant and the tile may be left out; the printer
// leaves out those at their defaults.
// CHECK-LABEL: func.func @attention_config
// CHECK: cachet.attention
// CHECK-SAME: cachet.kernel_config = #cachet.kernel_config<variant = attention_scalar, tile = [32, 16], workgroup = 32>
func.func @attention_config(%q: tensor<8x16x64xf16>, %k: tensor<2x64x64xf16>,
                            %v: tensor<2x64x64xf16>) -> tensor<8x16x64xf16> {
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_scalar,
                                                    tile = [32, 16],
                                                    workgroup = 32>}
      : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}

// -----

// CHECK-LABEL: func.func @mma_sync_config
// CHECK: #cachet.kernel_config<variant = attention_mma_sync, tile = [64, 64], workgroup = 128, subgroup = 32, vector_width = 8, stages = 2, pad_bytes = 16, dynamic_shared = true, warp_sync = true>
func.func @mma_sync_config(%q: tensor<8x64x64xf16>, %k: tensor<2x64x64xf16>,
                           %v: tensor<2x64x64xf16>) -> tensor<8x64x64xf16> {
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_mma_sync,
          tile = [64, 64], workgroup = 128, subgroup = 32, vector_width = 8,
          stages = 2, pad_bytes = 16, dynamic_shared = true, warp_sync = true>}
      : tensor<8x64x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
      -> tensor<8x64x64xf16>
  return %o : tensor<8x64x64xf16>
}
