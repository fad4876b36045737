// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-lower-attention -verify-diagnostics -o /dev/null

// An explicit mma config on a chunk: an error naming why.
func.func @mma_chunk(%q: tensor<8x64x128xf16>, %k: tensor<2x256x128xf16>,
                     %v: tensor<2x256x128xf16>, %p: index,
                     %acc: tensor<8x64x128xf32>, %m: tensor<8x64xf32>,
                     %l: tensor<8x64xf32>)
    -> (tensor<8x64x128xf32>, tensor<8x64xf32>, tensor<8x64xf32>) {
  // expected-error @+1 {{cachet-lower-attention: cannot build #cachet.kernel_config<variant = attention_mma, tile = [64, 32]>: a chunk of keys (cachet.attention_partial) carries its online-softmax state in the scalar, tiled and mma-sync kernels only}}
  %o, %m2, %l2 = cachet.attention_partial %q, %k, %v key_offset %p
      layout <head_major> scale 0.0883883461 into %acc, %m, %l
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_mma, tile = [64, 32]>}
      : tensor<8x64x128xf16>, tensor<2x256x128xf16>, tensor<2x256x128xf16>
      -> tensor<8x64x128xf32>, tensor<8x64xf32>, tensor<8x64xf32>
  return %o, %m2, %l2 : tensor<8x64x128xf32>, tensor<8x64xf32>, tensor<8x64xf32>
}
