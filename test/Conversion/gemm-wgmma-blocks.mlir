// A prefill's linear layer over a block weight on sm_90a: the wgmma GEMM
// decodes the blocks itself (gemm_wgmma with load_bytes = 16, or 4 where
// the rows do not keep 16-byte pieces aligned). Each step's bytes of the
// blocks (64 values of a row: 68 for q8_0, 36 for q4_0) are copied by
// cp.async with the step's x into `stages` buffers, consecutive threads
// taking consecutive pieces of a row, from the piece holding the step's
// first byte; once a barrier has published them, each thread decodes 8
// values of a row into a double-buffered, 128-byte-swizzled weight tile,
// the next step's while this step's wgmma runs. The dequantized copy (its
// generic, alloc and dealloc) is erased.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma-sync=true allow-wgmma=true gemm-decode-blocks=true},func.func(cachet-lower-matvec))' -verify-diagnostics | FileCheck %s
// To PTX with chip=sm_90a.
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm chip=sm_90a format=isa matvec-options={gemm-decode-blocks=true}" 2>/dev/null | FileCheck %s --check-prefix=PTX
// By default (gemm-decode-blocks=false): the copy, with the reason.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma-sync=true allow-wgmma=true})' 2>&1 >/dev/null | FileCheck %s --check-prefix=OFF
// One producer warpgroup (384 threads): it copies and decodes, named
// barriers 2-3 (tiles full) and 4-5 (tiles multiplied) hand steps over,
// barrier 1 orders the producer's own copies and decodes.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma-sync=true allow-wgmma=true gemm-decode-blocks=true gemm-decode-producers=1},func.func(cachet-lower-matvec))' 2>&1 | FileCheck %s --check-prefix=PRODUCER
// PRODUCER: remark: cachet-select-kernel-configs: wgmma GEMM for a mat-mul of 256 rows of x: {{.*}}(no dequantized copy) by 1 producer warpgroup(s) (128 more threads), named barriers handing the tiles over
// PRODUCER: remark: cachet-lower-matvec: wgmma GEMM: {{.*}} by producer warpgroups (its dequantized copy erased)
// PRODUCER-LABEL: func.func @q8_bf16
// PRODUCER: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{[_0-9]*}}, {{.*}} = %c3{{[_0-9]*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c384{{[_0-9]*}}, {{.*}})
// PRODUCER: scf.if
// PRODUCER: nvgpu.device_async_copy
// PRODUCER: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32{{[_0-9]*}}
// PRODUCER: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c384_i32{{[_0-9]*}}
// PRODUCER: scf.for
// PRODUCER: nvvm.barrier id = %{{.*}} number_of_threads = %c384_i32{{[_0-9]*}}
// PRODUCER: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c384_i32{{[_0-9]*}}
// PRODUCER: } else {
// PRODUCER: scf.for
// PRODUCER: nvvm.barrier id = %{{.*}} number_of_threads = %c384_i32{{[_0-9]*}}
// PRODUCER: nvvm.wgmma.mma_async
// PRODUCER: nvvm.wgmma.wait.group.sync.aligned 1
// PRODUCER: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c384_i32{{[_0-9]*}}
// A bad producer count.
// RUN: not cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{gemm-decode-producers=3})' 2>&1 | FileCheck %s --check-prefix=BADPRODUCERS
// BADPRODUCERS: gemm-decode-producers
// Two buffers: no step in flight to decode from while one multiplies.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma-sync=true allow-wgmma=true gemm-decode-blocks=true gemm-stages=2})' 2>&1 >/dev/null | FileCheck %s --check-prefix=TWO
// OFF: wgmma GEMM for a mat-mul of 256 rows of x: {{.*}}; the q8_0 weight dequantized by a kernel of its own first (not decoded in the GEMM: gemm-decode-blocks=false)
// TWO: wgmma GEMM for a mat-mul of 256 rows of x: {{.*}}; the q8_0 weight dequantized by a kernel of its own first (not decoded in the GEMM: 2 buffers: decoding a step while the one before multiplies takes 3 or more)
// PTX-LABEL: .entry q8_bf16_kernel
// PTX-SAME: cp.async.cg.shared.global [{{[^]]*}}+98304], [{{[^]]*}}], 16;
// PTX-SAME: cp.async.wait_group {{[^;]*}}2;\0A{{[^;]*}}bar.sync
// PTX-SAME: fence.proxy.async.shared::cta;
// PTX-SAME: wgmma.fence.sync.aligned;
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-SAME: cp.async.wait_group {{[^;]*}}1;\0A{{[^;]*}}wgmma.wait_group.sync.aligned {{[^;]*}}1;\0A{{[^;]*}}bar.sync
// PTX-SAME: fence.proxy.async.shared::cta;

// bf16 x [256][256] times a q8_0 weight [384][256] (rows of 272 bytes)
// dequantized to bf16: 128 x 128 tiles; 4 buffers of x (64 KiB) and of
// block bytes (a step's 68 bytes from a 16-byte piece: 5 pieces, 80 bytes
// a row), 2 of the decoded weight (32 KiB).
// CHECK-LABEL: func.func @q8_bf16
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref<384x256xbf16>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{[_0-9]*}}, {{.*}} = %c3{{[_0-9]*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c256{{[_0-9]*}}, {{.*}}) dynamic_shared_memory_size %c140288_i32
// CHECK: memref.view {{.*}} to memref<4x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<4x128x80xi8, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %arg0[{{.*}}], %{{.*}}[{{.*}}], 16 {bypassL1} : memref<384x272xi8> to memref<4x128x80xi8, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_create_group
// Step 0 decoded before the loop: words read back from workgroup memory.
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 2 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: vector.load %{{.*}} : memref<4x128x80xi8, #gpu.address_space<workgroup>>, vector<4xi8>
// CHECK: arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: nvvm.fence.proxy
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.device_async_copy
// CHECK: vector.store {{.*}} : memref<2x128x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: nvvm.fence.proxy
// CHECK: scf.yield
// CHECK-NOT: memref.dealloc
func.func @q8_bf16(%q: memref<384x272xi8>, %x: memref<256x256xbf16>) -> memref<256x384xf32> {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<384x256xbf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<384x256xbf16>) attrs = {cachet.block_dequantize = !cachet.q8_0} {
  ^bb0(%out: bf16):
    %i = linalg.index 0 : index
    %b = memref.load %q[%i, %c0] : memref<384x272xi8>
    %f = arith.sitofp %b : i8 to bf16
    linalg.yield %f : bf16
  }
  %y = memref.alloc() : memref<256x384xf32>
  linalg.fill ins(%cst : f32) outs(%y : memref<256x384xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: wgmma GEMM for a mat-mul of 256 rows of x: workgroup tiles of 128 rows of x by 128 weight rows, 2 warpgroups, steps of 64 columns copied asynchronously into 4 buffers of dynamic workgroup memory (140288 bytes) in the 128-byte swizzle, wgmma.mma_async m64n128k16 on bf16 with f32 accumulators; the q8_0 weight's blocks decoded in the kernel: each step's 68 bytes per row copied by 16-byte cp.async with x's (80 buffered), decoded in workgroup memory into a double-buffered bf16 tile (no dequantized copy)}}
  // expected-remark @+1 {{cachet-lower-matvec: wgmma GEMM: 2 x 3 workgroups of 2 warpgroups, each a 128 x 128 tile over 256 columns in steps of 64 (4 buffers, 140288 bytes of dynamic workgroup memory); the zero fill of the result is done in the kernel; the q8_0 weight decoded in the kernel from its blocks' 68 bytes per row and step (its dequantized copy erased)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %a : memref<256x256xbf16>, memref<384x256xbf16>) outs(%y : memref<256x384xf32>)
  memref.dealloc %a : memref<384x256xbf16>
  return %y : memref<256x384xf32>
}

// -----

// A short prefill (20 rows of x) over q4_0 dequantized to f16: one
// warpgroup (64-row tiles); a step's 36 bytes of a row from a 16-byte
// piece (3 pieces, 48 bytes: 384 copies, 3 per thread); the values as f16
// pairs (integer and f16 arithmetic, as the copy holds them); the result
// accumulates.
// CHECK-LABEL: func.func @q4_f16_short
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{[_0-9]*}}, {{.*}} = %c1{{[_0-9]*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c128{{[_0-9]*}}, {{.*}})
// CHECK: memref.view {{.*}} to memref<4x128x48xi8, #gpu.address_space<workgroup>>
// CHECK-COUNT-3: nvgpu.device_async_copy %arg0
// CHECK: vector.store {{.*}} : memref<2x128x64xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: nvvm.wgmma.mma_async
// CHECK: arith.addf
func.func @q4_f16_short(%q: memref<128x144xi8>, %x: memref<20x256xf16>, %y: memref<20x128xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<128x256xf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<128x256xf16>) attrs = {cachet.block_dequantize = !cachet.q4_0} {
  ^bb0(%out: f16):
    %i = linalg.index 0 : index
    %b = memref.load %q[%i, %c0] : memref<128x144xi8>
    %f = arith.sitofp %b : i8 to f16
    linalg.yield %f : f16
  }
  // expected-remark @+2 {{the q4_0 weight's blocks decoded in the kernel: each step's 36 bytes per row copied by 16-byte cp.async with x's (48 buffered), decoded in workgroup memory into a double-buffered f16 tile (no dequantized copy)}}
  // expected-remark @+1 {{cachet-lower-matvec: wgmma GEMM: 1 x 1 workgroups of 1 warpgroups, each a 64 x 128 tile over 256 columns in steps of 64 (4 buffers, 91136 bytes of dynamic workgroup memory); the q4_0 weight decoded in the kernel from its blocks' 36 bytes per row and step (its dequantized copy erased)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %a : memref<20x256xf16>, memref<128x256xf16>) outs(%y : memref<20x128xf32>)
  memref.dealloc %a : memref<128x256xf16>
  return
}

// -----

// q8_0 rows of 340 bytes (320 values): 16-byte pieces would not stay
// aligned, so 4-byte ones (a step's 68 bytes, 17 words).
// CHECK-LABEL: func.func @q8_words
// CHECK: memref.view {{.*}} to memref<4x128x68xi8, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %arg0[{{.*}}], %{{.*}}[{{.*}}], 4 : memref<128x340xi8> to memref<4x128x68xi8, #gpu.address_space<workgroup>>
func.func @q8_words(%q: memref<128x340xi8>, %x: memref<256x320xf16>, %y: memref<256x128xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<128x320xf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<128x320xf16>) attrs = {cachet.block_dequantize = !cachet.q8_0} {
  ^bb0(%out: f16):
    %i = linalg.index 0 : index
    %b = memref.load %q[%i, %c0] : memref<128x340xi8>
    %f = arith.sitofp %b : i8 to f16
    linalg.yield %f : f16
  }
  // expected-remark @+2 {{the q8_0 weight's blocks decoded in the kernel: each step's 68 bytes per row copied by 4-byte cp.async with x's (68 buffered)}}
  // expected-remark @+1 {{cachet-lower-matvec: wgmma GEMM}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %a : memref<256x320xf16>, memref<128x320xf16>) outs(%y : memref<256x128xf32>)
  memref.dealloc %a : memref<128x320xf16>
  return
}

// -----

// q4_K (super-blocks of 256 values): a kernel of its own writes the copy
// the GEMM reads, with the reason (64 x 64 tiles: 2 of 128 x 128 would
// leave the h200 profile's compute units idle).
// CHECK-LABEL: func.func @q4k
// CHECK: gpu.launch
// CHECK: vector.store {{.*}} : memref<128x256xbf16>, vector<8xbf16>
// CHECK: gpu.launch
// CHECK: memref.view {{.*}} to memref<4x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<4x64x64xbf16, #gpu.address_space<workgroup>>
func.func @q4k(%q: memref<128x144xi8>, %x: memref<256x256xbf16>, %y: memref<256x128xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<128x256xbf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<128x256xbf16>) attrs = {cachet.block_dequantize = !cachet.q4_K} {
  ^bb0(%out: bf16):
    %i = linalg.index 0 : index
    %b = memref.load %q[%i, %c0] : memref<128x144xi8>
    %f = arith.sitofp %b : i8 to bf16
    linalg.yield %f : bf16
  }
  // expected-remark @+3 {{the q4_K weight dequantized by a kernel of its own first (not decoded in the GEMM: its blocks hold 256 values (the GEMM decodes blocks of 32))}}
  // expected-remark @+2 {{cachet-lower-matvec: the q4_K weight's copy for the GEMM is dequantized by 16 workgroups of 256 threads}}
  // expected-remark @+1 {{cachet-lower-matvec: wgmma GEMM: 4 x 2 workgroups of 1 warpgroups, each a 64 x 64 tile over 256 columns in steps of 64 (4 buffers, 66560 bytes of dynamic workgroup memory)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %a : memref<256x256xbf16>, memref<128x256xbf16>) outs(%y : memref<256x128xf32>)
  memref.dealloc %a : memref<128x256xbf16>
  return
}

// -----

// Split q8_0 (i8 values and f16 scales apart): the copy, with the reason.
// CHECK-LABEL: func.func @split
// CHECK: vector.store {{.*}} : memref<128x256xbf16>, vector<8xbf16>
func.func @split(%q: memref<128x256xi8>, %sc: memref<128x8xf16>, %x: memref<256x256xbf16>, %y: memref<256x128xf32>) {
  %a = memref.alloc() : memref<128x256xbf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j floordiv 32)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%q, %sc : memref<128x256xi8>, memref<128x8xf16>) outs(%a : memref<128x256xbf16>) attrs = {cachet.block_dequantize = !cachet.q8_0} {
  ^bb0(%qv: i8, %sv: f16, %out: bf16):
    %f = arith.sitofp %qv : i8 to f32
    %s = arith.extf %sv : f16 to f32
    %m = arith.mulf %f, %s : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  }
  // expected-remark @+3 {{the q8_0 weight dequantized by a kernel of its own first (not decoded in the GEMM: its split form (values and scales apart) is dequantized first; only packed blocks are decoded in the GEMM)}}
  // expected-remark @+2 {{cachet-lower-matvec: the q8_0 (split) weight's copy for the GEMM}}
  // expected-remark @+1 {{cachet-lower-matvec: wgmma GEMM}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %a : memref<256x256xbf16>, memref<128x256xbf16>) outs(%y : memref<256x128xf32>)
  memref.dealloc %a : memref<128x256xbf16>
  return
}
