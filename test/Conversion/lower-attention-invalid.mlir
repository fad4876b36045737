// Bad options of cachet-select-kernel-configs are errors that name the
// option and its allowed values, before any IR is touched (exit status 1,
// no abort: `not` fails on a signal).
// RUN: not cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="attention-kernel=fast" 2>&1 | FileCheck %s --check-prefix=KERNEL
// RUN: not cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="tile-pad-bytes=8" 2>&1 | FileCheck %s --check-prefix=PAD
// RUN: not cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="resident-workgroups=0" 2>&1 | FileCheck %s --check-prefix=RESIDENT
// RUN: not cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="row-blocks=3" 2>&1 | FileCheck %s --check-prefix=ROWBLOCKS
// RUN: not cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="vector-bytes=6" 2>&1 | FileCheck %s --check-prefix=VECTOR
// Key tiles of more than 1024 positions (dequant-once converts 1024 past a
// causal bound: a kernel reads keys to the end of the tile holding it).
// RUN: not cachet-opt %s -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="key-tile=2048" 2>&1 | FileCheck %s --check-prefix=KEYTILE
// KEYTILE: cachet-select-kernel-configs: bad key-tile 2048: 0 (from the profile) up to 1024
// KERNEL: for the --attention-kernel option: Cannot find option named 'fast'!
// PAD: cachet-select-kernel-configs: bad tile-pad-bytes 8: a non-negative multiple of 16
// RESIDENT: cachet-select-kernel-configs: bad resident-workgroups 0: 1 or more
// ROWBLOCKS: cachet-select-kernel-configs: bad row-blocks 3: a power of two from 1
// VECTOR: cachet-select-kernel-configs: bad vector-bytes 6: a power of two from 2

// A query tile the mma kernel cannot split keeps the reference lowering,
// with a remark that names the option; the attention gets no config.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="attention-kernel=mma query-tile=24" 2>&1 | FileCheck %s --check-prefix=ROWS
// ROWS: remark: cachet-select-kernel-configs: reference lowering kept: query-tile 24 is not a multiple of 16 (the mma kernel's rows per subgroup)
// ROWS-LABEL: func.func @attention
// ROWS-NOT: cachet.kernel_config
// ROWS: return

// A config written in the input that the kernel cannot serve is an error of
// cachet-lower-attention naming the reason.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-lower-attention -verify-diagnostics -o /dev/null
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=lavapipe -cachet-lower-attention -verify-diagnostics -o /dev/null

func.func @attention(%q: tensor<2x4x32xf16>, %k: tensor<8x2x32xf16>, %v: tensor<8x2x32xf16>) -> tensor<2x4x32xf16> {
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.25
      : tensor<2x4x32xf16>, tensor<8x2x32xf16>, tensor<8x2x32xf16> -> tensor<2x4x32xf16>
  return %o : tensor<2x4x32xf16>
}

// -----

// More workgroup memory than any device has.
func.func @too_big(%q: tensor<2x4x32xf16>, %k: tensor<8x2x32xf16>, %v: tensor<8x2x32xf16>) -> tensor<2x4x32xf16> {
  // expected-error @+1 {{cachet-lower-attention: cannot build #cachet.kernel_config<variant = attention_scalar, tile = [1024, 1024]>: query tile 1024 and key tile 1024 need 4456448 bytes of static workgroup memory}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.25
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_scalar, tile = [1024, 1024]>}
      : tensor<2x4x32xf16>, tensor<8x2x32xf16>, tensor<8x2x32xf16> -> tensor<2x4x32xf16>
  return %o : tensor<2x4x32xf16>
}

// -----

// A scalar kernel runs one thread per query row.
func.func @threads(%q: tensor<2x4x32xf16>, %k: tensor<8x2x32xf16>, %v: tensor<8x2x32xf16>) -> tensor<2x4x32xf16> {
  // expected-error @+1 {{the scalar kernel runs one thread per query row: workgroup 64 is not the query tile 32}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.25
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_scalar, tile = [32, 8], workgroup = 64>}
      : tensor<2x4x32xf16>, tensor<8x2x32xf16>, tensor<8x2x32xf16> -> tensor<2x4x32xf16>
  return %o : tensor<2x4x32xf16>
}

// -----

// The decode kernel's workgroups share the query rows of one KV head: here
// 4 (GQA 1:1 x 4 queries), which 8 does not divide.
func.func @decode_rows(%q: tensor<2x4x32xf16>, %k: tensor<8x2x32xf16>, %v: tensor<8x2x32xf16>) -> tensor<2x4x32xf16> {
  // expected-error @+1 {{the decode kernel's query rows 8 do not divide the 4 rows of one KV head (group 1 x 4 queries)}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.25
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode, tile = [8, 32]>}
      : tensor<2x4x32xf16>, tensor<8x2x32xf16>, tensor<8x2x32xf16> -> tensor<2x4x32xf16>
  return %o : tensor<2x4x32xf16>
}

// -----

// Each lane owns a slice of the value dimension: 32 values over 64 lanes
// leave none.
func.func @decode_subgroup(%q: tensor<2x4x32xf16>, %k: tensor<8x2x32xf16>, %v: tensor<8x2x32xf16>) -> tensor<2x4x32xf16> {
  // expected-error @+1 {{the value dimension 32 is not a multiple of the subgroup 64 (each lane owns a slice of it)}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.25
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode, tile = [4, 64], subgroup = 64>}
      : tensor<2x4x32xf16>, tensor<8x2x32xf16>, tensor<8x2x32xf16> -> tensor<2x4x32xf16>
  return %o : tensor<2x4x32xf16>
}

// -----

// Rows read by lanes together: 32 values a row at 16 a lane are 2 lanes,
// 32 threads 16 groups of them, which 8 positions a step do not fill.
func.func @decode_lanes_step(%q: tensor<2x4x32xf16>, %k: tensor<8x2x32xf16>, %v: tensor<8x2x32xf16>) -> tensor<2x4x32xf16> {
  // expected-error @+1 {{the decode kernel's 8 positions per step are not a multiple of its 16 groups of lanes}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.25
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode, tile = [4, 8], workgroup = 32, vector_width = 16>}
      : tensor<2x4x32xf16>, tensor<8x2x32xf16>, tensor<8x2x32xf16> -> tensor<2x4x32xf16>
  return %o : tensor<2x4x32xf16>
}

// -----

// 64 values a lane would be half a lane per row of 32.
func.func @decode_lanes_width(%q: tensor<2x4x32xf16>, %k: tensor<8x2x32xf16>, %v: tensor<8x2x32xf16>) -> tensor<2x4x32xf16> {
  // expected-error @+1 {{vector_width 64: the head dimension 32 is not a multiple of 64}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.25
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode, tile = [4, 32], workgroup = 32, vector_width = 64>}
      : tensor<2x4x32xf16>, tensor<8x2x32xf16>, tensor<8x2x32xf16> -> tensor<2x4x32xf16>
  return %o : tensor<2x4x32xf16>
}

// -----

// The decode kernel's shuffles span one subgroup: the h200's has 32 lanes
// (on lavapipe, 8).
func.func @decode_device_subgroup(%q: tensor<2x4x32xf16>, %k: tensor<8x2x32xf16>, %v: tensor<8x2x32xf16>) -> tensor<2x4x32xf16> {
  // expected-error-re @+1 {{the decode kernel's subgroup 16 is not the device's {{32|8}} (its shuffles span one subgroup)}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.25
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode, tile = [4, 64], subgroup = 16>}
      : tensor<2x4x32xf16>, tensor<8x2x32xf16>, tensor<8x2x32xf16> -> tensor<2x4x32xf16>
  return %o : tensor<2x4x32xf16>
}

// -----

// The mma-sync decode kernel decodes whole q8_0 blocks per run of a lane's
// K values: runs of 16 would split them.
func.func @decode_mma_run(%q: tensor<32x1x128xf16>, %kq: tensor<4096x8x4x!cachet.q8_0>, %vq: tensor<4096x8x4x!cachet.q8_0>) -> tensor<32x1x128xf16> {
  %k = cachet.dequantize %kq : tensor<4096x8x4x!cachet.q8_0> -> tensor<4096x8x128xf16>
  %v = cachet.dequantize %vq : tensor<4096x8x4x!cachet.q8_0> -> tensor<4096x8x128xf16>
  // expected-error @+1 {{vector_width 16: each lane's K values come in runs of 8 or more dividing head-dim / 4 (32), whole blocks where K is decoded from blocks}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode_mma_sync, tile = [4, 64], workgroup = 128, vector_width = 16>}
      : tensor<32x1x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16> -> tensor<32x1x128xf16>
  return %o : tensor<32x1x128xf16>
}

// -----

// q4_1 blocks are not among those the mma-sync decode kernel decodes.
func.func @decode_mma_q4_1(%q: tensor<32x1x128xf16>, %kq: tensor<4096x8x4x!cachet.q4_1>, %vq: tensor<4096x8x4x!cachet.q4_1>) -> tensor<32x1x128xf16> {
  %k = cachet.dequantize %kq : tensor<4096x8x4x!cachet.q4_1> -> tensor<4096x8x128xf16>
  %v = cachet.dequantize %vq : tensor<4096x8x4x!cachet.q4_1> -> tensor<4096x8x128xf16>
  // expected-error @+1 {{q4_1 blocks (it decodes q8_0 and q4_0 into f16 or bf16 pairs in registers)}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_decode_mma_sync, tile = [4, 64], workgroup = 128, vector_width = 32>}
      : tensor<32x1x128xf16>, tensor<4096x8x128xf16>, tensor<4096x8x128xf16> -> tensor<32x1x128xf16>
  return %o : tensor<32x1x128xf16>
}

// -----

// The tiled kernel's step of head-dim columns divides the head dimension,
// and its threads per row group divide the value dimension.
func.func @tiled_step(%q: tensor<2x4x40xf16>, %k: tensor<8x2x40xf16>, %v: tensor<8x2x40xf16>) -> tensor<2x4x40xf16> {
  // expected-error @+1 {{a step of 16 columns does not divide the head dimension 40}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.25
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_tiled, tile = [64, 64, 16], workgroup = 128>}
      : tensor<2x4x40xf16>, tensor<8x2x40xf16>, tensor<8x2x40xf16> -> tensor<2x4x40xf16>
  return %o : tensor<2x4x40xf16>
}

// -----

func.func @tiled_columns(%q: tensor<2x4x40xf16>, %k: tensor<8x2x40xf16>, %v: tensor<8x2x40xf16>) -> tensor<2x4x40xf16> {
  // expected-error @+1 {{the value dimension 40 is not a multiple of the 16 threads sharing a group of rows}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.25
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_tiled, tile = [64, 64, 8], workgroup = 256>}
      : tensor<2x4x40xf16>, tensor<8x2x40xf16>, tensor<8x2x40xf16> -> tensor<2x4x40xf16>
  return %o : tensor<2x4x40xf16>
}

// -----

// The thread's value columns (in registers) and its staging (unrolled) are
// bounded.
func.func @tiled_registers(%q: tensor<2x4x256xf16>, %k: tensor<8x2x256xf16>, %v: tensor<8x2x256xf16>) -> tensor<2x4x256xf16> {
  // expected-error @+1 {{each thread would hold 64 value columns of its 4 rows (value dimension 256 over 4 threads a group), more than 32}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.25
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_tiled, tile = [4, 16, 4], workgroup = 4>}
      : tensor<2x4x256xf16>, tensor<8x2x256xf16>, tensor<8x2x256xf16> -> tensor<2x4x256xf16>
  return %o : tensor<2x4x256xf16>
}

// -----

func.func @tiled_staging(%q: tensor<2x4x32xf16>, %k: tensor<8x2x32xf16>, %v: tensor<8x2x32xf16>) -> tensor<2x4x32xf16> {
  // expected-error @+1 {{each thread would stage 136 values a step (steps of 32 over 16 threads), more than 64}}
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.25
      {cachet.kernel_config = #cachet.kernel_config<variant = attention_tiled, tile = [4, 32, 32], workgroup = 16>}
      : tensor<2x4x32xf16>, tensor<8x2x32xf16>, tensor<8x2x32xf16> -> tensor<2x4x32xf16>
  return %o : tensor<2x4x32xf16>
}
