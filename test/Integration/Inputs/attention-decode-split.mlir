// Decode attention over a split q8_0 KV cache as front ends write it: i8
// values and one f16 scale per 32 values, token-major, the new tokens'
// rows inserted in place at CAUSAL and the caches dequantized by generics
// (float(q) * scale, rounded to ELT). 8 query heads sharing 2 KV heads
// (GQA 4:1), SQ new tokens after CAUSAL = 300 - SQ cached ones, head dim
// 64. The integration tests substitute ELT, SQ and CAUSAL.
#id = affine_map<(p, h, x) -> (p, h, x)>
#block = affine_map<(p, h, x) -> (p, h, x floordiv 32)>
func.func @attention(%q: tensor<8xSQx64xELT>,
                     %kc: tensor<300x2x64xi8>, %ksc: tensor<300x2x2xf16>,
                     %vc: tensor<300x2x64xi8>, %vsc: tensor<300x2x2xf16>,
                     %kn: tensor<SQx2x64xi8>, %ksn: tensor<SQx2x2xf16>,
                     %vn: tensor<SQx2x64xi8>, %vsn: tensor<SQx2x2xf16>)
    -> (tensor<8xSQx64xELT>, tensor<300x2x64xi8>, tensor<300x2x2xf16>,
        tensor<300x2x64xi8>, tensor<300x2x2xf16>) {
  %kq = tensor.insert_slice %kn into %kc[CAUSAL, 0, 0] [SQ, 2, 64] [1, 1, 1]
      : tensor<SQx2x64xi8> into tensor<300x2x64xi8>
  %ks = tensor.insert_slice %ksn into %ksc[CAUSAL, 0, 0] [SQ, 2, 2] [1, 1, 1]
      : tensor<SQx2x2xf16> into tensor<300x2x2xf16>
  %vq = tensor.insert_slice %vn into %vc[CAUSAL, 0, 0] [SQ, 2, 64] [1, 1, 1]
      : tensor<SQx2x64xi8> into tensor<300x2x64xi8>
  %vs = tensor.insert_slice %vsn into %vsc[CAUSAL, 0, 0] [SQ, 2, 2] [1, 1, 1]
      : tensor<SQx2x2xf16> into tensor<300x2x2xf16>
  %ke = tensor.empty() : tensor<300x2x64xELT>
  %k = linalg.generic {indexing_maps = [#id, #block, #id],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%kq, %ks : tensor<300x2x64xi8>, tensor<300x2x2xf16>)
      outs(%ke : tensor<300x2x64xELT>) {
  ^bb0(%x: i8, %d: f16, %o: ELT):
    %f = arith.sitofp %x : i8 to f32
    %df = arith.extf %d : f16 to f32
    %m = arith.mulf %f, %df : f32
    %y = arith.truncf %m : f32 to ELT
    linalg.yield %y : ELT
  } -> tensor<300x2x64xELT>
  %ve = tensor.empty() : tensor<300x2x64xELT>
  %v = linalg.generic {indexing_maps = [#id, #block, #id],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%vq, %vs : tensor<300x2x64xi8>, tensor<300x2x2xf16>)
      outs(%ve : tensor<300x2x64xELT>) {
  ^bb0(%x: i8, %d: f16, %o: ELT):
    %f = arith.sitofp %x : i8 to f32
    %df = arith.extf %d : f16 to f32
    %m = arith.mulf %f, %df : f32
    %y = arith.truncf %m : f32 to ELT
    linalg.yield %y : ELT
  } -> tensor<300x2x64xELT>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal CAUSAL
      : tensor<8xSQx64xELT>, tensor<300x2x64xELT>, tensor<300x2x64xELT> -> tensor<8xSQx64xELT>
  return %o, %kq, %ks, %vq, %vs : tensor<8xSQx64xELT>, tensor<300x2x64xi8>,
      tensor<300x2x2xf16>, tensor<300x2x64xi8>, tensor<300x2x2xf16>
}
