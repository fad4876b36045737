// 16 blocks of 32 ELEM values (Inputs/ggml_blocks.py encode writes them)
// quantized to FMT: the result is the ggml bytes, 16 blocks.
func.func @quantize(%x: tensor<16x32xELEM>) -> tensor<16x1x!cachet.FMT> {
  %q = cachet.quantize %x : tensor<16x32xELEM> -> tensor<16x1x!cachet.FMT>
  return %q : tensor<16x1x!cachet.FMT>
}
