// A kernel config in the IR whose key tile holds more than 1024 positions
// is an error naming the limit: a kernel reads keys to the end of the tile
// that holds the causal bound, and cachet-dequant-once-kv converts only
// 1024 positions past it.
// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-lower-attention -verify-diagnostics -o /dev/null

func.func @key_tile_large(%q: tensor<8x16x64xf16>, %k: tensor<2x4096x64xf16>,
                          %v: tensor<2x4096x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+1 {{cachet-lower-attention: cannot build #cachet.kernel_config<variant = attention_scalar, tile = [16, 2048]>: key tile 2048: at most 1024 positions (a kernel reads keys to the end of the tile that holds the causal bound, and dequant-once writes 1024 past it)}}
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_scalar, tile = [16, 2048]>}
      : tensor<8x16x64xf16>, tensor<2x4096x64xf16>, tensor<2x4096x64xf16>
      -> tensor<8x16x64xf16>
  return %o : tensor<8x16x64xf16>
}
