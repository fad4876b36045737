// RUN: cachet-opt %s -split-input-file -cachet-raise-attention 2>/dev/null | FileCheck %s
// RUN: cachet-opt %s -split-input-file -cachet-raise-attention -verify-diagnostics -o /dev/null

// A bf16 model: K/V dequantized to bf16 (float(q) * float(scale) in f32,
// truncated once to bf16, which is what cachet.dequantize to bf16 computes),
// bf16 query and output, f32 softmax.
// CHECK-LABEL: func.func @attn
// CHECK-DAG: %[[K:.*]] = cachet.dequantize %arg1 scales %arg2 : tensor<1024x2x128xi8>, tensor<1024x2x4xf16> -> tensor<1024x2x128xbf16>
// CHECK-DAG: %[[V:.*]] = cachet.dequantize %arg3 scales %arg4 : tensor<1024x2x128xi8>, tensor<1024x2x4xf16> -> tensor<1024x2x128xbf16>
// CHECK: cachet.attention %arg0, %[[K]], %[[V]] layout <token_major> scale 0.0883883461 causal 960 : tensor<8x64x128xbf16>, tensor<1024x2x128xbf16>, tensor<1024x2x128xbf16> -> tensor<8x64x128xbf16>
#id3   = affine_map<(a, b, c) -> (a, b, c)>
#blk   = affine_map<(a, b, c) -> (a, b, c floordiv 32)>
#kt    = affine_map<(h, d, s) -> (s, h floordiv 4, d)>
#kto   = affine_map<(h, d, s) -> (h, d, s)>
#vb    = affine_map<(h, s, d) -> (s, h floordiv 4, d)>
#vbo   = affine_map<(h, s, d) -> (h, s, d)>
func.func @attn(%q: tensor<8x64x128xbf16>,
    %kq: tensor<1024x2x128xi8>, %ks: tensor<1024x2x4xf16>,
    %vq: tensor<1024x2x128xi8>, %vs: tensor<1024x2x4xf16>) -> tensor<8x64x128xbf16> {
  %cst0 = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.08838834764831845 : f32   // 1/sqrt(128)
  // Dequantize K and V: x = float(q) * scale[block].
  %ke = tensor.empty() : tensor<1024x2x128xbf16>
  %k = linalg.generic {indexing_maps = [#id3, #blk, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%kq, %ks : tensor<1024x2x128xi8>, tensor<1024x2x4xf16>) outs(%ke : tensor<1024x2x128xbf16>) {
    ^bb0(%a: i8, %s: f16, %o: bf16):
      %f = arith.sitofp %a : i8 to f32
      %s32 = arith.extf %s : f16 to f32
      %m = arith.mulf %f, %s32 : f32
      %t = arith.truncf %m : f32 to bf16
      linalg.yield %t : bf16
  } -> tensor<1024x2x128xbf16>
  %ve = tensor.empty() : tensor<1024x2x128xbf16>
  %v = linalg.generic {indexing_maps = [#id3, #blk, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%vq, %vs : tensor<1024x2x128xi8>, tensor<1024x2x4xf16>) outs(%ve : tensor<1024x2x128xbf16>) {
    ^bb0(%a: i8, %s: f16, %o: bf16):
      %f = arith.sitofp %a : i8 to f32
      %s32 = arith.extf %s : f16 to f32
      %m = arith.mulf %f, %s32 : f32
      %t = arith.truncf %m : f32 to bf16
      linalg.yield %t : bf16
  } -> tensor<1024x2x128xbf16>
  // K^T broadcast to the query heads: kT[h, d, s] = k[s, h / 4, d].
  %kte = tensor.empty() : tensor<8x128x1024xbf16>
  %kT = linalg.generic {indexing_maps = [#kt, #kto], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k : tensor<1024x2x128xbf16>) outs(%kte : tensor<8x128x1024xbf16>) {
    ^bb0(%a: bf16, %o: bf16):
      linalg.yield %a : bf16
  } -> tensor<8x128x1024xbf16>
  // Scores = Q K^T, accumulated in f32.
  %se = tensor.empty() : tensor<8x64x1024xf32>
  %sz = linalg.fill ins(%cst0 : f32) outs(%se : tensor<8x64x1024xf32>) -> tensor<8x64x1024xf32>
  %sc = linalg.batch_matmul ins(%q, %kT : tensor<8x64x128xbf16>, tensor<8x128x1024xbf16>)
                            outs(%sz : tensor<8x64x1024xf32>) -> tensor<8x64x1024xf32>
  // Scale and causal mask: query i sits at absolute position 960 + i.
  %me = tensor.empty() : tensor<8x64x1024xf32>
  %masked = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sc : tensor<8x64x1024xf32>) outs(%me : tensor<8x64x1024xf32>) {
    ^bb0(%x: f32, %o: f32):
      %i = linalg.index 1 : index
      %j = linalg.index 2 : index
      %c960 = arith.constant 960 : index
      %pos = arith.addi %i, %c960 : index
      %visible = arith.cmpi ule, %j, %pos : index
      %xs = arith.mulf %x, %scale : f32
      %r = arith.select %visible, %xs, %ninf : f32
      linalg.yield %r : f32
  } -> tensor<8x64x1024xf32>
  %pe = tensor.empty() : tensor<8x64x1024xf32>
  // expected-remark @below {{cachet-raise-attention: raised to cachet.attention: Hq=8, Hkv=2 (GQA 4), Sq=64, S=1024, D=128, Dv=128, K split q8_0, V split q8_0, causal offset 960, f32 accumulation}}
  %p = linalg.softmax dimension(2) ins(%masked : tensor<8x64x1024xf32>) outs(%pe : tensor<8x64x1024xf32>) -> tensor<8x64x1024xf32>
  %p16e = tensor.empty() : tensor<8x64x1024xbf16>
  %p16 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p : tensor<8x64x1024xf32>) outs(%p16e : tensor<8x64x1024xbf16>) {
    ^bb0(%x: f32, %o: bf16):
      %t = arith.truncf %x : f32 to bf16
      linalg.yield %t : bf16
  } -> tensor<8x64x1024xbf16>
  // V broadcast to the query heads: vB[h, s, d] = v[s, h / 4, d].
  %vbe = tensor.empty() : tensor<8x1024x128xbf16>
  %vB = linalg.generic {indexing_maps = [#vb, #vbo], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v : tensor<1024x2x128xbf16>) outs(%vbe : tensor<8x1024x128xbf16>) {
    ^bb0(%a: bf16, %o: bf16):
      linalg.yield %a : bf16
  } -> tensor<8x1024x128xbf16>
  %oe = tensor.empty() : tensor<8x64x128xf32>
  %oz = linalg.fill ins(%cst0 : f32) outs(%oe : tensor<8x64x128xf32>) -> tensor<8x64x128xf32>
  %o = linalg.batch_matmul ins(%p16, %vB : tensor<8x64x1024xbf16>, tensor<8x1024x128xbf16>)
                           outs(%oz : tensor<8x64x128xf32>) -> tensor<8x64x128xf32>
  %r16e = tensor.empty() : tensor<8x64x128xbf16>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%o : tensor<8x64x128xf32>) outs(%r16e : tensor<8x64x128xbf16>) {
    ^bb0(%x: f32, %y: bf16):
      %t = arith.truncf %x : f32 to bf16
      linalg.yield %t : bf16
  } -> tensor<8x64x128xbf16>
  return %r : tensor<8x64x128xbf16>
}

// -----

// The scale rounded to bf16 before the product changes the values that
// cachet.dequantize would give: not raised.
// CHECK-LABEL: func.func @attn_bf16_product
// CHECK-NOT: cachet.attention
#id3   = affine_map<(a, b, c) -> (a, b, c)>
#blk   = affine_map<(a, b, c) -> (a, b, c floordiv 32)>
#kt    = affine_map<(h, d, s) -> (s, h floordiv 4, d)>
#kto   = affine_map<(h, d, s) -> (h, d, s)>
#vb    = affine_map<(h, s, d) -> (s, h floordiv 4, d)>
#vbo   = affine_map<(h, s, d) -> (h, s, d)>
func.func @attn_bf16_product(%q: tensor<8x64x128xbf16>,
    %kq: tensor<1024x2x128xi8>, %ks: tensor<1024x2x4xf16>,
    %vq: tensor<1024x2x128xi8>, %vs: tensor<1024x2x4xf16>) -> tensor<8x64x128xbf16> {
  %cst0 = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.08838834764831845 : f32   // 1/sqrt(128)
  // Dequantize K and V: x = float(q) * scale[block].
  %ke = tensor.empty() : tensor<1024x2x128xbf16>
  %k = linalg.generic {indexing_maps = [#id3, #blk, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%kq, %ks : tensor<1024x2x128xi8>, tensor<1024x2x4xf16>) outs(%ke : tensor<1024x2x128xbf16>) {
    ^bb0(%a: i8, %s: f16, %o: bf16):
      %f = arith.sitofp %a : i8 to bf16
      %s32 = arith.extf %s : f16 to f32
      %sb = arith.truncf %s32 : f32 to bf16
      %m = arith.mulf %f, %sb : bf16
      linalg.yield %m : bf16
  } -> tensor<1024x2x128xbf16>
  %ve = tensor.empty() : tensor<1024x2x128xbf16>
  %v = linalg.generic {indexing_maps = [#id3, #blk, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%vq, %vs : tensor<1024x2x128xi8>, tensor<1024x2x4xf16>) outs(%ve : tensor<1024x2x128xbf16>) {
    ^bb0(%a: i8, %s: f16, %o: bf16):
      %f = arith.sitofp %a : i8 to bf16
      %s32 = arith.extf %s : f16 to f32
      %sb = arith.truncf %s32 : f32 to bf16
      %m = arith.mulf %f, %sb : bf16
      linalg.yield %m : bf16
  } -> tensor<1024x2x128xbf16>
  // K^T broadcast to the query heads: kT[h, d, s] = k[s, h / 4, d].
  %kte = tensor.empty() : tensor<8x128x1024xbf16>
  %kT = linalg.generic {indexing_maps = [#kt, #kto], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k : tensor<1024x2x128xbf16>) outs(%kte : tensor<8x128x1024xbf16>) {
    ^bb0(%a: bf16, %o: bf16):
      linalg.yield %a : bf16
  } -> tensor<8x128x1024xbf16>
  // Scores = Q K^T, accumulated in f32.
  %se = tensor.empty() : tensor<8x64x1024xf32>
  %sz = linalg.fill ins(%cst0 : f32) outs(%se : tensor<8x64x1024xf32>) -> tensor<8x64x1024xf32>
  %sc = linalg.batch_matmul ins(%q, %kT : tensor<8x64x128xbf16>, tensor<8x128x1024xbf16>)
                            outs(%sz : tensor<8x64x1024xf32>) -> tensor<8x64x1024xf32>
  // Scale and causal mask: query i sits at absolute position 960 + i.
  %me = tensor.empty() : tensor<8x64x1024xf32>
  %masked = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sc : tensor<8x64x1024xf32>) outs(%me : tensor<8x64x1024xf32>) {
    ^bb0(%x: f32, %o: f32):
      %i = linalg.index 1 : index
      %j = linalg.index 2 : index
      %c960 = arith.constant 960 : index
      %pos = arith.addi %i, %c960 : index
      %visible = arith.cmpi ule, %j, %pos : index
      %xs = arith.mulf %x, %scale : f32
      %r = arith.select %visible, %xs, %ninf : f32
      linalg.yield %r : f32
  } -> tensor<8x64x1024xf32>
  %pe = tensor.empty() : tensor<8x64x1024xf32>
  // expected-remark @below {{cachet-raise-attention: not raised: K dequantize generic body is not float(q) * scale}}
  %p = linalg.softmax dimension(2) ins(%masked : tensor<8x64x1024xf32>) outs(%pe : tensor<8x64x1024xf32>) -> tensor<8x64x1024xf32>
  %p16e = tensor.empty() : tensor<8x64x1024xbf16>
  %p16 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p : tensor<8x64x1024xf32>) outs(%p16e : tensor<8x64x1024xbf16>) {
    ^bb0(%x: f32, %o: bf16):
      %t = arith.truncf %x : f32 to bf16
      linalg.yield %t : bf16
  } -> tensor<8x64x1024xbf16>
  // V broadcast to the query heads: vB[h, s, d] = v[s, h / 4, d].
  %vbe = tensor.empty() : tensor<8x1024x128xbf16>
  %vB = linalg.generic {indexing_maps = [#vb, #vbo], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v : tensor<1024x2x128xbf16>) outs(%vbe : tensor<8x1024x128xbf16>) {
    ^bb0(%a: bf16, %o: bf16):
      linalg.yield %a : bf16
  } -> tensor<8x1024x128xbf16>
  %oe = tensor.empty() : tensor<8x64x128xf32>
  %oz = linalg.fill ins(%cst0 : f32) outs(%oe : tensor<8x64x128xf32>) -> tensor<8x64x128xf32>
  %o = linalg.batch_matmul ins(%p16, %vB : tensor<8x64x1024xbf16>, tensor<8x1024x128xbf16>)
                           outs(%oz : tensor<8x64x128xf32>) -> tensor<8x64x128xf32>
  %r16e = tensor.empty() : tensor<8x64x128xbf16>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%o : tensor<8x64x128xf32>) outs(%r16e : tensor<8x64x128xbf16>) {
    ^bb0(%x: f32, %y: bf16):
      %t = arith.truncf %x : f32 to bf16
      linalg.yield %t : bf16
  } -> tensor<8x64x128xbf16>
  return %r : tensor<8x64x128xbf16>
}
