// The mma-sync flash-attention kernel (NVVM): m16n8k16 nvgpu.mma.sync on
// fragments read by nvgpu.ldmatrix (V transposed), the scores, softmax and
// P in registers (a row's max over its quad by xor shuffles), the output
// stored as two columns per lane.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="attention-kernel=mma-sync dynamic-shared=true async-copy=true" -cachet-lower-attention 2>/dev/null | FileCheck %s
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="attention-kernel=mma-sync dynamic-shared=true async-copy=true" -cachet-lower-attention 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
//
// auto takes mma-sync only with allow-mma-sync (cachet-compile sets it on
// NVVM); without it, the wmma kernel.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=AUTO
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs -cachet-lower-attention 2>&1 >/dev/null | FileCheck %s --check-prefix=NOSYNC
//
// Two 16-row blocks per subgroup: Q's operands are read per key tile.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="attention-kernel=mma-sync dynamic-shared=true async-copy=true row-blocks=2 query-tile=64" -cachet-lower-attention 2>&1 >/dev/null | FileCheck %s --check-prefix=ROWS
//
// Profiles mma.sync cannot serve keep the reference lowering.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=gfx942 -cachet-select-kernel-configs="attention-kernel=mma-sync" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=WAVE64
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=lavapipe -cachet-select-kernel-configs="attention-kernel=mma-sync" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=NOCOOP
//
// bf16 on the tiled kernel (lavapipe's default: one f32 workgroup buffer,
// Q/K columns and V rows converted as they are staged, fused multiply-adds)
// and on the scalar kernel (K/V tiles staged as f32).
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=lavapipe -cachet-select-kernel-configs -cachet-lower-attention 2>&1 | FileCheck %s --check-prefix=TILED
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=lavapipe -cachet-select-kernel-configs=attention-kernel=scalar -cachet-lower-attention 2>&1 | FileCheck %s --check-prefix=SCALAR

// CHECK-LABEL: func.func @head_major
// CHECK: gpu.launch
// CHECK: gpu.dynamic_shared_memory
// CHECK: nvgpu.device_async_copy
// CHECK: scf.for
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x136xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: gpu.shuffle  xor
// CHECK: math.exp2
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK: nvgpu.mma.sync
// CHECK: scf.yield
// CHECK-NOT: xf32, #gpu.address_space<workgroup>>
// CHECK: vector.store %{{.*}} {alignment = 4 : i64} : memref<8x64x128xf16>, vector<2xf16>
// REMARK: remark: cachet-select-kernel-configs: mma-sync flash-attention kernel (nvgpu.mma.sync m16n8k16 f16, f32 accumulate, softmax in registers): query tile 64 (4 subgroups of 16 rows), key tile 64 (69632 bytes of workgroup memory), 1x8 workgroups of 128 threads, GQA 4:1 (profile h200; subgroup 32, 232448 bytes of workgroup memory); tile rows padded by 16 bytes, dynamic workgroup memory (budget: 1/3 of the profile's), K/V double-buffered by asynchronous copies (16-byte vectors)
// AUTO: #cachet.kernel_config<variant = attention_mma_sync
// NOSYNC: mma flash-attention kernel (gpu.subgroup_mma
// ROWS: mma-sync flash-attention kernel {{.*}}: query tile 64 (2 subgroups of 32 rows), key tile 64
// WAVE64: reference lowering kept: attention-kernel=mma-sync: subgroups of 64 lanes (mma.sync takes 32)
// WAVE64-NOT: cachet.kernel_config
// NOCOOP: reference lowering kept: attention-kernel=mma-sync: the profile has no 16x16x16:f16->f32 cooperative matrix
// NOCOOP-NOT: cachet.kernel_config
func.func @head_major(%q: tensor<8x64x128xf16>, %k: tensor<2x256x128xf16>,
                      %v: tensor<2x256x128xf16>) -> tensor<8x64x128xf16> {
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.0883883461 causal 192
      : tensor<8x64x128xf16>, tensor<2x256x128xf16>, tensor<2x256x128xf16> -> tensor<8x64x128xf16>
  return %o : tensor<8x64x128xf16>
}

// -----

// K/V decoded from q8_0 blocks in the kernel, an additive mask: the blocks'
// bytes (68 per row: 4-byte copies) are double buffered by asynchronous
// copies; Q, read once, shares their memory, so every subgroup has read it
// before the first copy. Each key tile waits for its copies, starts the
// next tile's into the other buffer and decodes a whole block per thread
// into the f16 K and V tiles: the scale, then the nine aligned words that
// hold its 32 bytes, as f16 pairs (1024 + byte + 128, less 1152, times the
// scale; exact), stored as four vectors of eight. Each score is masked element by
// element where a tile needs it (the mask read at the lane's row and
// column).
// CHECK-LABEL: func.func @masked_q8_0
// CHECK: %[[Q:.*]] = memref.view %{{.*}}[%[[KPAT:c18432.*]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x72xf16, #gpu.address_space<workgroup>>
// CHECK: %[[KT:.*]] = memref.view %{{.*}}[%c0{{.*}}][] : {{.*}} to memref<64x72xf16, #gpu.address_space<workgroup>>
// CHECK: %[[KP:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128x68xi8, #gpu.address_space<workgroup>>
// CHECK: %[[VP:.*]] = memref.view %{{.*}}[%c27136{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128x68xi8, #gpu.address_space<workgroup>>
// CHECK: nvgpu.ldmatrix %[[Q]]
// CHECK: gpu.barrier
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: nvgpu.device_async_copy %{{.*}}, %[[KP]][%{{.*}}, %{{.*}}], 4, %{{.*}} : memref<80x2x68xi8, strided<[?, ?, 1], offset: ?>> to memref<128x68xi8, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %{{.*}}, %[[VP]][%{{.*}}, %{{.*}}], 4, %{{.*}} : memref<80x2x68xi8, strided<[?, ?, 1], offset: ?>> to memref<128x68xi8, #gpu.address_space<workgroup>>
// CHECK: %[[G:.*]] = nvgpu.device_async_create_group
// CHECK: scf.for {{.*}} iter_args({{.*}}, %[[T:.*]] = %[[G]])
// CHECK: nvgpu.device_async_wait %[[T]] {numGroups = 0 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK: vector.load %[[KP]][%{{.*}}, %{{.*}}] {alignment = 2 : i64} : memref<128x68xi8, #gpu.address_space<workgroup>>, vector<2xi8>
// CHECK-COUNT-9: vector.load %[[KP]][%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<128x68xi8, #gpu.address_space<workgroup>>, vector<4xi8>
// CHECK: arith.xori %{{.*}}, %c-2139062144{{.*}} : i32
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 4, 1, 5] : vector<4xi8>, vector<4xi8>
// CHECK: arith.subf %{{.*}}, %cst{{.*}} : vector<2xf16>
// CHECK-NEXT: arith.mulf %{{.*}}, %{{.*}} : vector<2xf16>
// CHECK-COUNT-4: vector.store %{{.*}}, %[[KT]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<64x72xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: vector.load %[[VP]]
// CHECK: gpu.barrier
// CHECK: nvgpu.mma.sync
// CHECK: scf.if
// CHECK: memref.load %{{.*}} : memref<4x40x80xf16, strided<[?, ?, 1], offset: ?>>
// CHECK: vector.from_elements
// CHECK: nvgpu.device_async_wait
// REMARK: remark: cachet-select-kernel-configs: mma-sync flash-attention kernel {{.*}}, key tile 64 (35840 bytes of workgroup memory), {{.*}}; K decoded from q8_0 blocks in the kernel; V decoded from q8_0 blocks in the kernel; {{.*}}, K/V blocks double-buffered by asynchronous copies (4- and 4-byte) and decoded in workgroup memory (16-byte vectors)
func.func @masked_q8_0(%q: tensor<4x40x64xf16>, %kq: tensor<80x2x2x!cachet.q8_0>,
                       %vq: tensor<80x2x2x!cachet.q8_0>, %m: tensor<4x40x80xf16>) -> tensor<4x40x64xf16> {
  %k = cachet.dequantize %kq : tensor<80x2x2x!cachet.q8_0> -> tensor<80x2x64xf16>
  %v = cachet.dequantize %vq : tensor<80x2x2x!cachet.q8_0> -> tensor<80x2x64xf16>
  %o = cachet.attention %q, %k, %v mask %m layout <token_major> scale 0.125
      : tensor<4x40x64xf16>, tensor<80x2x64xf16>, tensor<80x2x64xf16>, tensor<4x40x80xf16> -> tensor<4x40x64xf16>
  return %o : tensor<4x40x64xf16>
}

// -----

// q4_0 blocks staged in workgroup memory (36-byte rows) are decoded eight
// values at a time in the row's order: values 16 h + i of a block are the
// low (h = 0) or high (h = 1) nibbles of its bytes i, so each thread reads
// the scale and the three aligned words around its eight bytes and shifts
// them by 4 h before masking the nibbles (f16 1024 + nibble, less 1032,
// times the scale; exact).
// CHECK-LABEL: func.func @q4_0_in_order
// CHECK: %[[KT:.*]] = memref.view %{{.*}}[%c0{{.*}}][] : {{.*}} to memref<64x72xf16, #gpu.address_space<workgroup>>
// CHECK: %[[KP:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128x36xi8, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: vector.load %[[KP]][%{{.*}}, %{{.*}}] {alignment = 2 : i64} : memref<128x36xi8, #gpu.address_space<workgroup>>, vector<2xi8>
// CHECK: arith.remui %{{.*}}, %c16{{.*}} : index
// CHECK-COUNT-3: vector.load %[[KP]][%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<128x36xi8, #gpu.address_space<workgroup>>, vector<4xi8>
// CHECK: %[[H:.*]] = arith.divui %{{.*}}, %c16{{.*}} : index
// CHECK: %[[S4:.*]] = arith.muli %[[H]], %c4{{.*}} : index
// CHECK: %[[S:.*]] = arith.index_cast %[[S4]] : index to i32
// CHECK: %[[N:.*]] = arith.shrui %{{.*}}, %[[S]] : i32
// CHECK: arith.andi %[[N]], %c252645135_i32{{.*}} : i32
// CHECK: arith.subf
// CHECK: arith.shrui %{{.*}}, %[[S]] : i32
// CHECK: vector.store %{{.*}}, %[[KT]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<64x72xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// REMARK: remark: cachet-select-kernel-configs: mma-sync flash-attention kernel {{.*}}; K decoded from q4_0 blocks in the kernel; V decoded from q4_0 blocks in the kernel; {{.*}}, K/V blocks double-buffered by asynchronous copies (4- and 4-byte) and decoded in workgroup memory (16-byte vectors)
func.func @q4_0_in_order(%q: tensor<4x40x64xf16>, %kq: tensor<80x2x2x!cachet.q4_0>,
                         %vq: tensor<80x2x2x!cachet.q4_0>) -> tensor<4x40x64xf16> {
  %k = cachet.dequantize %kq : tensor<80x2x2x!cachet.q4_0> -> tensor<80x2x64xf16>
  %v = cachet.dequantize %vq : tensor<80x2x2x!cachet.q4_0> -> tensor<80x2x64xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125
      : tensor<4x40x64xf16>, tensor<80x2x64xf16>, tensor<80x2x64xf16> -> tensor<4x40x64xf16>
  return %o : tensor<4x40x64xf16>
}

// -----

// Packed V after f16 K, and q8_0 rows of 34 bytes (no 4-byte copy divides
// them): the blocks are decoded value by value from global memory into the
// tiles, through registers.
// CHECK-LABEL: func.func @packed_value_only
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: scf.for
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: return
// CHECK-LABEL: func.func @q8_0_rows_of_34_bytes
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: return
// REMARK: remark: cachet-select-kernel-configs: mma-sync flash-attention kernel {{.*}}; V decoded from q4_1 blocks in the kernel; {{.*}}, K/V through registers (16-byte vectors)
// REMARK: remark: cachet-select-kernel-configs: mma-sync flash-attention kernel {{.*}}; K decoded from q8_0 blocks in the kernel; V decoded from q8_0 blocks in the kernel; {{.*}}, K/V through registers (16-byte vectors)
func.func @packed_value_only(%q: tensor<4x40x64xf16>, %k: tensor<80x2x64xf16>,
                             %vq: tensor<80x2x2x!cachet.q4_1>) -> tensor<4x40x64xf16> {
  %v = cachet.dequantize %vq : tensor<80x2x2x!cachet.q4_1> -> tensor<80x2x64xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 40
      : tensor<4x40x64xf16>, tensor<80x2x64xf16>, tensor<80x2x64xf16> -> tensor<4x40x64xf16>
  return %o : tensor<4x40x64xf16>
}
func.func @q8_0_rows_of_34_bytes(%q: tensor<4x40x32xf16>, %kq: tensor<80x2x1x!cachet.q8_0>,
                                 %vq: tensor<80x2x1x!cachet.q8_0>) -> tensor<4x40x32xf16> {
  %k = cachet.dequantize %kq : tensor<80x2x1x!cachet.q8_0> -> tensor<80x2x32xf16>
  %v = cachet.dequantize %vq : tensor<80x2x1x!cachet.q8_0> -> tensor<80x2x32xf16>
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.125 causal 40
      : tensor<4x40x32xf16>, tensor<80x2x32xf16>, tensor<80x2x32xf16> -> tensor<4x40x32xf16>
  return %o : tensor<4x40x32xf16>
}

// -----

// bf16 Q, K and V: the same kernel on bf16 fragments. nvgpu.mma.sync of
// LLVM 22 has no bf16, so the multiply-accumulates are nvvm.mma.sync on the
// bf16 pairs packed into i32.
// CHECK-LABEL: func.func @bf16
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x136xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: nvgpu.mma.sync
// CHECK: vector.store %{{.*}} : memref<8x64x128xbf16>, vector<2xbf16>
// REMARK: remark: cachet-select-kernel-configs: mma-sync flash-attention kernel (nvvm.mma.sync m16n8k16 bf16, f32 accumulate, softmax in registers): query tile 64
// NOSYNC: remark: cachet-select-kernel-configs: tiled flash-attention kernel (f32 fused multiply-adds; Q, K and V are not all f16)
// TILED: remark: cachet-select-kernel-configs: tiled flash-attention kernel (f32 fused multiply-adds; the profile has no 16x16x16:f16->f32 cooperative matrix)
// TILED-LABEL: func.func @bf16
// TILED: gpu.launch {{.*}} threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{.*}} workgroup(%[[SMEM:.*]] : memref<6432xf32, #gpu.address_space<workgroup>>)
// TILED: scf.for
// TILED: scf.for
// TILED: gpu.barrier
// TILED: memref.load %{{.*}} : memref<8x64x128xbf16
// TILED: arith.extf %{{.*}} : bf16 to f32
// TILED: gpu.barrier
// TILED: math.fma
// TILED: math.exp2
// TILED: arith.truncf %{{.*}} : f32 to bf16
// TILED: scf.for
// TILED: math.fma
// TILED: arith.truncf %{{.*}} : f32 to bf16
// TILED: memref.store %{{.*}} : memref<8x64x128xbf16
// SCALAR: remark: cachet-select-kernel-configs: scalar flash-attention kernel (attention-kernel=scalar)
// SCALAR-LABEL: func.func @bf16
// SCALAR: gpu.launch {{.*}} workgroup(%{{.*}} : memref<{{[0-9]+}}x128xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<{{[0-9]+}}x128xf32, #gpu.address_space<workgroup>>
// SCALAR: memref.load %{{.*}} : memref<2x256x128xbf16, strided<[?, ?, 1], offset: ?>>
// SCALAR: arith.extf %{{.*}} : bf16 to f32
func.func @bf16(%q: tensor<8x64x128xbf16>, %k: tensor<2x256x128xbf16>,
                %v: tensor<2x256x128xbf16>) -> tensor<8x64x128xbf16> {
  %o = cachet.attention %q, %k, %v layout <head_major> scale 0.0883883461 causal 192
      : tensor<8x64x128xbf16>, tensor<2x256x128xbf16>, tensor<2x256x128xbf16> -> tensor<8x64x128xbf16>
  return %o : tensor<8x64x128xbf16>
}
