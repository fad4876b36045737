// RUN: cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="dynamic-shared=true async-copy=true warp-sync=true row-blocks=2 resident-workgroups=2" -cachet-lower-attention 2>&1 >/dev/null | FileCheck %s

// Rewrites off and on must give the same bytes, so the mma kernel picks the
// same tiles whether K/V are decoded in the kernel (rewrites off: the
// blocks' bytes double-buffered by asynchronous copies, decoded into single
// f16 tiles) or read from the f16 dequant-once scratch (rewrites on: f16
// double-buffered by asynchronous copies). The tiles are sized for the f16
// double buffers in both: with the budget of two workgroups per SM (116224
// bytes) the single-buffered layout would fit a key tile of 64 (100352
// bytes), the double-buffered one only 32. Each remark gives the memory
// its kernel allocates. (The integration test's shapes: with different
// tiles they differed in 20480 bytes on the H200.)
// CHECK: remark: cachet-select-kernel-configs: mma flash-attention kernel {{.*}}: query tile 128 (4 subgroups of 32 rows), key tile 32 (75264 bytes of workgroup memory), {{.*}}; K decoded from q8_0 blocks in the kernel; V decoded from q8_0 blocks in the kernel; {{.*}}, K/V blocks double-buffered by asynchronous copies (4- and 4-byte) and decoded in workgroup memory
// CHECK: remark: cachet-select-kernel-configs: mma flash-attention kernel {{.*}}: query tile 128 (4 subgroups of 32 rows), key tile 32 (75776 bytes of workgroup memory), {{.*}}, K/V double-buffered by asynchronous copies
func.func @off_and_on(%q: tensor<4x40x64xf16>, %kq: tensor<80x2x2x!cachet.q8_0>, %vq: tensor<80x2x2x!cachet.q8_0>,
                      %kh: tensor<2x80x64xf16>, %vh: tensor<2x80x64xf16>) -> (tensor<4x40x64xf16>, tensor<4x40x64xf16>) {
  %k = cachet.dequantize %kq : tensor<80x2x2x!cachet.q8_0> -> tensor<80x2x64xf16>
  %v = cachet.dequantize %vq : tensor<80x2x2x!cachet.q8_0> -> tensor<80x2x64xf16>
  %off = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 40
      : tensor<4x40x64xf16>, tensor<80x2x64xf16>, tensor<80x2x64xf16> -> tensor<4x40x64xf16>
  %on = cachet.attention %q, %kh, %vh layout <head_major> scale 0.125 causal 40
      : tensor<4x40x64xf16>, tensor<2x80x64xf16>, tensor<2x80x64xf16> -> tensor<4x40x64xf16>
  return %off, %on : tensor<4x40x64xf16>, tensor<4x40x64xf16>
}
