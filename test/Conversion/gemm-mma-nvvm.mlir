// A prefill's linear layer (a linalg.matmul reading its weight transposed,
// more rows of x than small-batch) as the mma-sync GEMM (NVVM,
// allow-mma-sync): workgroup tiles of x rows by weight rows, steps of 64
// columns (32 where 64 do not divide them) copied asynchronously into 3
// buffers of workgroup memory by default (the next two steps' copies in
// flight while one computes), ldmatrix operands, m16n8k16 mma.sync with
// f32 accumulators.
// The 32-column, 2-buffer tiling of 8 subgroups (static workgroup memory).
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{allow-mma-sync=true gemm-step=32 gemm-stages=2 gemm-subgroups=8},func.func(cachet-lower-matvec))' 2>/dev/null | FileCheck %s --check-prefix=TWO
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{allow-mma-sync=true},func.func(cachet-lower-matvec))' -verify-diagnostics | FileCheck %s
// gemm=false: the generic kernel (no allow-mma-sync, as on SPIR-V and
// ROCDL: the tiled GEMM, gemm-tiled.mlir).
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{allow-mma-sync=true gemm=false},func.func(cachet-lower-matvec))' 2>&1 >/dev/null | FileCheck %s --check-prefix=OFF
// The whole NVVM pipeline down to PTX.
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm chip=sm_90 format=isa" 2>/dev/null | FileCheck %s --check-prefix=PTX
// Three buffers of 64 columns, 128 x 256 tiles of 8 subgroups of 64 x 64
// (165888 bytes: dynamic workgroup memory), to PTX.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{allow-mma-sync=true gemm-tile-n=256 gemm-step=64 gemm-stages=3 gemm-subgroups=8},func.func(cachet-lower-matvec))' 2>&1 | FileCheck %s --check-prefix=STAGED
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm chip=sm_90 format=isa matvec-options={gemm-tile-n=256 gemm-step=64 gemm-stages=3 gemm-subgroups=8}" 2>/dev/null | FileCheck %s --check-prefix=STAGED-PTX
// A tile the subgroups do not divide among (128 x 128 by 3): the generic
// kernel, with the reason; a pass option out of range fails the pipeline.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{allow-mma-sync=true gemm-subgroups=3})' 2>&1 >/dev/null | FileCheck %s --check-prefix=UNEVEN
// RUN: not cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{allow-mma-sync=true gemm-stages=1})' 2>&1 | FileCheck %s --check-prefix=BAD-STAGES
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma-sync=true gemm-tile-n=256 gemm-step=128 gemm-stages=4 gemm-subgroups=8})' 2>&1 >/dev/null | FileCheck %s --check-prefix=TOO-BIG
// UNEVEN: generic kernel: a mat-mul of 256 rows of x, more than small-batch (8); not the mma-sync GEMM: 'workgroup' must be subgroups of 32 lanes ('subgroup' 32), each computing 64 rows of x by a multiple of 16 weight rows that divides the tile's 128
// BAD-STAGES: cachet-select-kernel-configs: bad gemm-stages 1: 0 (3 for mma-sync, 4 for wgmma) or 2 to 8
// TOO-BIG: not the mma-sync GEMM: its buffers take 417792 bytes of workgroup memory, more than the profile's 232448
// STAGED: mma-sync GEMM for a mat-mul of 256 rows of x: workgroup tiles of 128 rows of x by 256 weight rows, 8 subgroups of 64 x 64 each, steps of 64 columns copied asynchronously into 3 buffers of workgroup memory (165888 bytes, dynamic), ldmatrix operands
// STAGED: cachet-lower-matvec: mma-sync GEMM: 2 x 2 workgroups of 8 subgroups, each a 128 x 256 tile over 128 columns in steps of 64 (3 buffers, 165888 bytes of dynamic workgroup memory)
// STAGED-LABEL: func.func @bf16
// STAGED: %[[SIZE:.*]] = arith.constant 165888 : i32
// STAGED: gpu.launch {{.*}} dynamic_shared_memory_size %[[SIZE]]
// STAGED: gpu.dynamic_shared_memory
// STAGED: memref.view {{.*}} to memref<3x128x72xbf16, #gpu.address_space<workgroup>>
// STAGED: memref.view {{.*}} to memref<3x256x72xbf16, #gpu.address_space<workgroup>>
// Two steps in flight before the loop.
// STAGED-COUNT-2: nvgpu.device_async_create_group
// STAGED: scf.for
// STAGED: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// STAGED-NEXT: gpu.barrier
// STAGED: nvgpu.device_async_create_group
// STAGED-COUNT-32: nvgpu.ldmatrix
// STAGED-NOT: gpu.barrier
// STAGED: scf.yield
// STAGED-PTX: .extern .shared .align {{[0-9]+}} .b8
// STAGED-PTX: cp.async.wait_group {{[^;]*}}1;
// STAGED-PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// OFF-NOT: mma-sync GEMM
// OFF: generic kernel: a mat-mul of 256 rows of x, more than small-batch (8)
// PTX: cp.async.cg.shared.global
// PTX: cp.async.wait_group {{[^;]*}}1;
// PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX: bar.sync

// bf16 x [256][128] times a bf16 weight [384][128] read transposed, into a
// zero-filled f32 result: 2 x 3 workgroups of 4 subgroups of 64 x 64, 3
// buffers of 64 columns in dynamic workgroup memory.
// CHECK-LABEL: func.func @bf16
// CHECK-NOT: linalg.fill
// CHECK: %[[SIZE:.*]] = arith.constant 110592 : i32
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{[_0-9]*}}, {{.*}} = %c3{{[_0-9]*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c128{{[_0-9]*}}, {{.*}}) dynamic_shared_memory_size %[[SIZE]]
// CHECK: %[[A:.*]] = memref.view {{.*}} to memref<3x128x72xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[B:.*]] = memref.view {{.*}} to memref<3x128x72xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %arg0{{.*}}, %[[A]]{{.*}}, 8 {bypassL1}
// CHECK: nvgpu.device_async_copy %arg1{{.*}}, %[[B]]{{.*}}, 8 {bypassL1}
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<2x2xf32>, {{.*}} !nvgpu.device.async.token)
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// Each 16 columns: 4 x-row and 4 weight-row ldmatrix, 4 x 8 mma.sync.
// CHECK-COUNT-8: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<3x128x72xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK-COUNT-32: nvvm.mma.sync
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
// TWO-LABEL: func.func @bf16
// TWO: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{[_0-9]*}}, {{.*}} = %c3{{[_0-9]*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c256{{[_0-9]*}}, {{.*}}) workgroup(%[[A:.*]] : memref<2x128x40xbf16, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<2x128x40xbf16, #gpu.address_space<workgroup>>)
// TWO: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// TWO-NEXT: gpu.barrier
// TWO-COUNT-6: nvgpu.ldmatrix %{{.*}} : memref<2x128x40xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// TWO-COUNT-16: nvvm.mma.sync
// TWO-NOT: gpu.barrier
// TWO: scf.yield
// CHECK: scf.if
// CHECK: vector.store {{.*}} {alignment = 8 : i64} : memref<256x384xf32>, vector<2xf32>
// CHECK-NOT: linalg.matmul
func.func @bf16(%x: memref<256x128xbf16>, %w: memref<384x128xbf16>) -> memref<256x384xf32> {
  %cst = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<256x384xf32>
  linalg.fill ins(%cst : f32) outs(%y : memref<256x384xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: mma-sync GEMM for a mat-mul of 256 rows of x: workgroup tiles of 128 rows of x by 128 weight rows, 4 subgroups of 64 x 64 each, steps of 64 columns copied asynchronously into 3 buffers of workgroup memory (110592 bytes, dynamic), ldmatrix operands, m16n8k16 mma.sync on bf16 with f32 accumulators}}
  // expected-remark @+1 {{cachet-lower-matvec: mma-sync GEMM: 2 x 3 workgroups of 4 subgroups, each a 128 x 128 tile over 128 columns in steps of 64 (3 buffers, 110592 bytes of dynamic workgroup memory); the zero fill of the result is done in the kernel}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xbf16>, memref<384x128xbf16>) outs(%y : memref<256x384xf32>)
  return %y : memref<256x384xf32>
}

// -----

// f16, 20 rows of x (a short prefill): 64-row tiles of 4 subgroups, rows
// past 20 read clamped and never stored; the result accumulates (no zero
// fill), so the kernel adds to it; a q8_0 weight is dequantized by a kernel
// of its own first: a thread per 8 values of a row (128 x 256 / 8 = 4096:
// 16 workgroups), decoded from aligned words, one 16-byte store.
// CHECK-LABEL: func.func @f16_short
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c16{{[_0-9]*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c256{{[_0-9]*}}, {{.*}})
// CHECK: vector.load %arg0[{{.*}}] {alignment = 4 : i64, cachet.streaming_weight} : memref<128x272xi8>, vector<4xi8>
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<128x256xf16>, vector<8xf16>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{[_0-9]*}}, {{.*}} = %c1{{[_0-9]*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c128{{[_0-9]*}}, {{.*}}) dynamic_shared_memory_size
// CHECK: memref.view {{.*}} to memref<3x64x72xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<3x128x72xf16, #gpu.address_space<workgroup>>
// CHECK: arith.minui %{{.*}}, %c19
// CHECK: nvvm.mma.sync {{.*}}f16
// CHECK: vector.load %{{.*}} : memref<20x128xf32>, vector<2xf32>
// CHECK: arith.addf
// CHECK: vector.store
func.func @f16_short(%q: memref<128x272xi8>, %x: memref<20x256xf16>, %y: memref<20x128xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<128x256xf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<128x256xf16>) attrs = {cachet.block_dequantize = !cachet.q8_0} {
  ^bb0(%out: f16):
    %i = linalg.index 0 : index
    %b = memref.load %q[%i, %c0] : memref<128x272xi8>
    %f = arith.sitofp %b : i8 to f16
    linalg.yield %f : f16
  }
  // expected-remark @+3 {{cachet-select-kernel-configs: mma-sync GEMM for a mat-mul of 20 rows of x: workgroup tiles of 64 rows of x by 128 weight rows, 4 subgroups of 64 x 32 each, steps of 64 columns copied asynchronously into 3 buffers of workgroup memory (82944 bytes, dynamic), ldmatrix operands, m16n8k16 mma.sync on f16 with f32 accumulators; the q8_0 weight dequantized by a kernel of its own first}}
  // expected-remark @+2 {{cachet-lower-matvec: the q8_0 weight's copy for the GEMM is dequantized by 16 workgroups of 256 threads, each thread decoding 8 values of a row from aligned 32-bit words and storing them at once}}
  // expected-remark @+1 {{cachet-lower-matvec: mma-sync GEMM: 1 x 1 workgroups of 4 subgroups, each a 64 x 128 tile over 256 columns in steps of 64 (3 buffers, 82944 bytes of dynamic workgroup memory)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %a : memref<20x256xf16>, memref<128x256xf16>) outs(%y : memref<20x128xf32>)
  memref.dealloc %a : memref<128x256xf16>
  return
}

// -----

// Split q8_0 (i8 values and f16 scales, as a front end writes it) to bf16:
// each thread loads its 8 values' aligned words and its block's scale,
// decodes in f32 and rounds the 8 values to bf16 once (one vector truncf:
// packed conversions, as stored), one 16-byte store.
// CHECK-LABEL: func.func @split_bf16
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c16{{[_0-9]*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c256{{[_0-9]*}}, {{.*}})
// CHECK: vector.load %arg0[{{.*}}] {alignment = 8 : i64, cachet.streaming_weight} : memref<128x256xi8>, vector<8xi8>
// CHECK: vector.load %arg1[{{.*}}] {cachet.streaming_weight} : memref<128x8xf16>, vector<1xf16>
// CHECK-NOT: vector<2xbf16>
// CHECK: arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK-NEXT: vector.store {{.*}} {alignment = 16 : i64} : memref<128x256xbf16>, vector<8xbf16>
// CHECK: gpu.launch
// CHECK: nvvm.mma.sync {{.*}}bf16
func.func @split_bf16(%q: memref<128x256xi8>, %sc: memref<128x8xf16>, %x: memref<20x256xbf16>, %y: memref<20x128xf32>) {
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
  // expected-remark @+3 {{cachet-select-kernel-configs: mma-sync GEMM}}
  // expected-remark @+2 {{cachet-lower-matvec: the q8_0 (split) weight's copy for the GEMM is dequantized by 16 workgroups of 256 threads, each thread decoding 8 values of a row from aligned 32-bit words and storing them at once}}
  // expected-remark @+1 {{cachet-lower-matvec: mma-sync GEMM}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %a : memref<20x256xbf16>, memref<128x256xbf16>) outs(%y : memref<20x128xf32>)
  memref.dealloc %a : memref<128x256xbf16>
  return
}

// -----

// The dequantized copy is also read by a memref.copy: its generic stays
// (the kernel would do the same, but the copy's other reader is not this
// pass's to reason about), with the reason.
// CHECK-LABEL: func.func @copy_read_twice
// CHECK: linalg.generic
// CHECK: memref.copy
func.func @copy_read_twice(%q: memref<128x272xi8>, %x: memref<20x256xf16>, %y: memref<20x128xf32>, %k: memref<128x256xf16>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<128x256xf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<128x256xf16>) attrs = {cachet.block_dequantize = !cachet.q8_0} {
  ^bb0(%out: f16):
    %i = linalg.index 0 : index
    %b = memref.load %q[%i, %c0] : memref<128x272xi8>
    %f = arith.sitofp %b : i8 to f16
    linalg.yield %f : f16
  }
  memref.copy %a, %k : memref<128x256xf16> to memref<128x256xf16>
  // expected-remark @+3 {{cachet-select-kernel-configs: mma-sync GEMM}}
  // expected-remark @+2 {{cachet-lower-matvec: the GEMM's weight keeps its generic dequantization: the dequantized q8_0 weight is also read by 'memref.copy'}}
  // expected-remark @+1 {{cachet-lower-matvec: mma-sync GEMM}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %a : memref<20x256xf16>, memref<128x256xf16>) outs(%y : memref<20x128xf32>)
  memref.dealloc %a : memref<128x256xf16>
  return
}

// -----

// Not the GEMM, each with the reason: columns not a multiple of 32, f32
// operands, an odd number of weight rows, a dynamic shape.
func.func @not_gemm(%x: memref<256x48xbf16>, %w: memref<128x48xbf16>, %y: memref<256x128xf32>,
                    %xf: memref<256x64xf32>, %wf: memref<128x64xf32>, %yf: memref<256x128xf32>,
                    %xo: memref<256x64xf16>, %wo: memref<127x64xf16>, %yo: memref<256x127xf32>,
                    %xd: memref<?x64xf16>, %wd: memref<128x64xf16>, %yd: memref<?x128xf32>) {
  // expected-remark @+1 {{generic kernel: a mat-mul of 256 rows of x, more than small-batch (8); not the mma-sync GEMM: 48 columns are not a multiple of 32 (a step)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x48xbf16>, memref<128x48xbf16>) outs(%y : memref<256x128xf32>)
  // expected-remark @+1 {{not the mma-sync GEMM: x and the weight are not both f16 or both bf16}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%xf, %wf : memref<256x64xf32>, memref<128x64xf32>) outs(%yf : memref<256x128xf32>)
  // expected-remark @+1 {{not the mma-sync GEMM: 127 weight rows are odd (pairs of results are stored together)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%xo, %wo : memref<256x64xf16>, memref<127x64xf16>) outs(%yo : memref<256x127xf32>)
  // expected-remark @+1 {{generic kernel: a mat-mul with a dynamic number of rows of x}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%xd, %wd : memref<?x64xf16>, memref<128x64xf16>) outs(%yd : memref<?x128xf32>)
  return
}
