// The GEMMs' siblings and epilogues (fuse-siblings, fuse-epilogues on
// their configs): the wgmma GEMM computes gate and up over the same x in one
// kernel (each tile half of each weight's rows) and silu(gate) * up as it
// stores the sums; a residual add after a GEMM runs in its epilogue; a
// result that only the epilogue reads is never written.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma-sync=true allow-wgmma=true gemm-tile-m=128},func.func(cachet-lower-matvec))' -verify-diagnostics | FileCheck %s
// fuse-siblings=false / fuse-epilogues=false: each mat-mul its own kernel,
// the generic left to the generic lowering.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma-sync=true allow-wgmma=true gemm-tile-m=128 fuse-siblings=false},func.func(cachet-lower-matvec))' 2>&1 | FileCheck %s --check-prefix=NOSIB
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma-sync=true allow-wgmma=true gemm-tile-m=128 fuse-epilogues=false},func.func(cachet-lower-matvec))' 2>&1 | FileCheck %s --check-prefix=NOEPI
// sm_90 (the mma-sync GEMM): epilogues, no siblings.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs{allow-mma-sync=true},func.func(cachet-lower-matvec))' 2>&1 | FileCheck %s --check-prefix=MMA
// To PTX.
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm chip=sm_90a format=isa matvec-options={gemm-tile-m=128}" 2>/dev/null | FileCheck %s --check-prefix=PTX

// NOSIB: cachet-lower-matvec: wgmma GEMM: 2 x 2 workgroups of 2 warpgroups, each a 128 x 128 tile over 128 columns in steps of 64 (4 buffers, 132096 bytes of dynamic workgroup memory); the zero fill of the result is done in the kernel{{$}}
// NOSIB: cachet-lower-matvec: wgmma GEMM: 2 x 2 workgroups {{.*}}; the zero fill of the result is done in the kernel; 1 element-wise op(s) over the results in its epilogue, 1 f32 result(s) never written
// NOEPI-NOT: in its epilogue
// NOEPI: cachet-lower-matvec: wgmma GEMM: 2 x 4 workgroups {{.*}}; one kernel for 2 mat-muls over the same x, each tile 64 rows of each weight{{$}}
// MMA: cachet-lower-matvec: mma-sync GEMM: {{.*}}; the zero fill of the result is done in the kernel{{$}}
// MMA: cachet-lower-matvec: mma-sync GEMM: {{.*}}; the zero fill of the result is done in the kernel; 1 element-wise op(s) over the results in its epilogue, 1 f32 result(s) never written
// MMA: cachet-lower-matvec: done by the GEMM kernel before it
// PTX-LABEL: .entry glu_kernel
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX: ex2.approx
// PTX: st.global.b32
// PTX-NOT: st.global.v2.b32
// PTX-LABEL: .entry residual_kept_kernel
// PTX: st.global.v2.b32
// PTX: st.global.b32

// Gate and up (256 rows each) over one x, then silu(gate) * up in bf16:
// one kernel of 2 x 4 workgroups, each tile 64 rows of each weight (one
// m64n128k16 accumulator per warpgroup: gate's sums in its first 64
// columns, up's in the rest); neither f32 result is written, and their
// buffers go.
// CHECK-LABEL: func.func @glu
// CHECK-NOT: memref.alloc() : memref<256x256xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{[_0-9]*}}, {{.*}} = %c4{{[_0-9]*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c256{{[_0-9]*}},
// CHECK: memref.view {{.*}} to memref<4x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// CHECK: scf.if
// CHECK-NOT: vector.store {{.*}} vector<2xf32>
// CHECK: math.exp
// CHECK: math.exp
// CHECK: vector.from_elements {{.*}} : vector<2xbf16>
// CHECK: vector.store {{.*}} {alignment = 4 : i64} : memref<256x256xbf16>, vector<2xbf16>
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.
// CHECK: return
func.func @glu(%x: memref<256x128xbf16>, %wg: memref<256x128xbf16>, %wu: memref<256x128xbf16>) -> memref<256x256xbf16> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %g = memref.alloc() : memref<256x256xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<256x256xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: wgmma GEMM}}
  // expected-remark @+1 {{cachet-lower-matvec: wgmma GEMM: 2 x 4 workgroups of 2 warpgroups, each a 128 x 128 tile over 128 columns in steps of 64 (4 buffers, 132096 bytes of dynamic workgroup memory); the zero fill of the result is done in the kernel; one kernel for 2 mat-muls over the same x, each tile 64 rows of each weight; 1 element-wise op(s) over the results in its epilogue, 2 f32 result(s) never written}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wg : memref<256x128xbf16>, memref<256x128xbf16>) outs(%g : memref<256x256xf32>)
  %u = memref.alloc() : memref<256x256xf32>
  linalg.fill ins(%zero : f32) outs(%u : memref<256x256xf32>)
  // expected-remark @+1 {{cachet-select-kernel-configs: wgmma GEMM}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wu : memref<256x128xbf16>, memref<256x128xbf16>) outs(%u : memref<256x256xf32>)
  %h = memref.alloc() : memref<256x256xbf16>
  // expected-remark @+1 {{cachet-lower-matvec: done by the GEMM kernel before it, on the sums each thread stores}}
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%g, %u : memref<256x256xf32>, memref<256x256xf32>) outs(%h : memref<256x256xbf16>) {
  ^bb0(%a: f32, %b: f32, %o: bf16):
    %n = arith.negf %a : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %s = arith.divf %a, %d : f32
    %p = arith.mulf %s, %b : f32
    %t = arith.truncf %p : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %g : memref<256x256xf32>
  memref.dealloc %u : memref<256x256xf32>
  return %h : memref<256x256xbf16>
}

// -----

// The residual after a projection: h = x + o in bf16, read as pairs; o is
// returned too, so it is still stored.
// CHECK-LABEL: func.func @residual_kept
// CHECK: gpu.launch
// CHECK: vector.store {{.*}} {alignment = 8 : i64} : memref<256x128xf32>, vector<2xf32>
// CHECK: vector.load {{.*}} {alignment = 4 : i64} : memref<256x128xbf16>, vector<2xbf16>
// CHECK: vector.store {{.*}} {alignment = 4 : i64} : memref<256x128xbf16>, vector<2xbf16>
// CHECK-NOT: linalg.generic
func.func @residual_kept(%x: memref<256x128xbf16>, %w: memref<128x128xbf16>, %res: memref<256x128xbf16>) -> (memref<256x128xbf16>, memref<256x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %o = memref.alloc() : memref<256x128xf32>
  linalg.fill ins(%zero : f32) outs(%o : memref<256x128xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: wgmma GEMM}}
  // expected-remark @+1 {{cachet-lower-matvec: wgmma GEMM: 2 x 1 workgroups of 2 warpgroups, each a 128 x 128 tile over 128 columns in steps of 64 (4 buffers, 132096 bytes of dynamic workgroup memory); the zero fill of the result is done in the kernel; 1 element-wise op(s) over the results in its epilogue}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<256x128xbf16>, memref<128x128xbf16>) outs(%o : memref<256x128xf32>)
  %h = memref.alloc() : memref<256x128xbf16>
  // expected-remark @+1 {{cachet-lower-matvec: done by the GEMM kernel before it}}
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%res, %o : memref<256x128xbf16>, memref<256x128xf32>) outs(%h : memref<256x128xbf16>) {
  ^bb0(%r: bf16, %v: f32, %out: bf16):
    %e = arith.extf %r : bf16 to f32
    %s = arith.addf %e, %v : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  }
  return %h, %o : memref<256x128xbf16>, memref<256x128xf32>
}

// -----

// Not an epilogue: the generic reads the result transposed (its own
// kernel, with the reason); not siblings: the weights' rows differ.
// CHECK-LABEL: func.func @negative
// CHECK: gpu.launch
// CHECK: linalg.generic
// CHECK: gpu.launch
func.func @negative(%x: memref<128x128xbf16>, %wa: memref<128x128xbf16>, %wb: memref<256x128xbf16>) -> (memref<128x128xbf16>, memref<128x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<128x128xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<128x128xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: wgmma GEMM}}
  // expected-remark @+1 {{cachet-lower-matvec: wgmma GEMM: 1 x 1 workgroups of 2 warpgroups, each a 128 x 128 tile over 128 columns in steps of 64 (4 buffers, 132096 bytes of dynamic workgroup memory); the zero fill of the result is done in the kernel}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wa : memref<128x128xbf16>, memref<128x128xbf16>) outs(%a : memref<128x128xf32>)
  %h = memref.alloc() : memref<128x128xbf16>
  // expected-remark @+1 {{cachet-lower-matvec: not in the epilogue of the mat-mul kernel before it: its indexing maps are not identities}}
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<128x128xf32>) outs(%h : memref<128x128xbf16>) {
  ^bb0(%v: f32, %out: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  }
  %b = memref.alloc() : memref<128x256xf32>
  linalg.fill ins(%zero : f32) outs(%b : memref<128x256xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: wgmma GEMM}}
  // expected-remark @+1 {{cachet-lower-matvec: wgmma GEMM: 1 x 2 workgroups}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wb : memref<128x128xbf16>, memref<256x128xbf16>) outs(%b : memref<128x256xf32>)
  return %h, %b : memref<128x128xbf16>, memref<128x256xf32>
}

// -----

// An op between the mat-muls writes x: the first kernel runs where it is,
// the second is not joined with it, with the reason.
// CHECK-LABEL: func.func @conflict
// CHECK-COUNT-2: gpu.launch
func.func @conflict(%x: memref<128x128xbf16>, %wa: memref<128x128xbf16>, %wb: memref<128x128xbf16>) -> (memref<128x128xf32>, memref<128x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 1.0 : bf16
  %ya = memref.alloc() : memref<128x128xf32>
  linalg.fill ins(%zero : f32) outs(%ya : memref<128x128xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: wgmma GEMM}}
  // expected-remark @+1 {{cachet-lower-matvec: wgmma GEMM: 1 x 1 workgroups of 2 warpgroups, each a 128 x 128 tile over 128 columns in steps of 64 (4 buffers, 132096 bytes of dynamic workgroup memory); the zero fill of the result is done in the kernel}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wa : memref<128x128xbf16>, memref<128x128xbf16>) outs(%ya : memref<128x128xf32>)
  // expected-remark @+1 {{cachet-lower-matvec: the mat-mul kernel before it is not joined with the mat-mul over the same x after it: it may write an input of the mat-vec it would precede}}
  linalg.fill ins(%c : bf16) outs(%x : memref<128x128xbf16>)
  %yb = memref.alloc() : memref<128x128xf32>
  linalg.fill ins(%zero : f32) outs(%yb : memref<128x128xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: wgmma GEMM}}
  // expected-remark @+1 {{cachet-lower-matvec: wgmma GEMM}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wb : memref<128x128xbf16>, memref<128x128xbf16>) outs(%yb : memref<128x128xf32>)
  return %ya, %yb : memref<128x128xf32>, memref<128x128xf32>
}

// -----

// Llama-3-8B's gate and up at 512 tokens: 224 weight rows per tile, 112 of
// each weight (4 x 128 workgroups in 4 waves on 132 compute units, against
// 4 x 112 in 4 waves with 256). A step of 112 rows is 896 16-byte pieces,
// which the 256 threads do not divide: in the last round the threads past
// them copy piece 895 again instead of reading past the weight's rows.
// CHECK-LABEL: func.func @glu_waves
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c4{{[_0-9]*}}, {{.*}} = %c128{{[_0-9]*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c256{{[_0-9]*}},
// CHECK: arith.minui %{{.*}}, %c895
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 224, k = 16>
func.func @glu_waves(%x: memref<512x4096xbf16>, %wg: memref<14336x4096xbf16>, %wu: memref<14336x4096xbf16>) -> memref<512x14336xbf16> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %g = memref.alloc() : memref<512x14336xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<512x14336xf32>)
  // expected-remark @+2 {{(224 weight rows per tile, 112 of each of 2 mat-muls over the same x: 512 workgroups in 4 wave(s) of one per compute unit, against 448 in 4 with 256)}}
  // expected-remark @+1 {{cachet-lower-matvec: wgmma GEMM: 4 x 128 workgroups of 2 warpgroups, each a 128 x 224 tile over 4096 columns in steps of 64 (4 buffers, 181248 bytes of dynamic workgroup memory); the zero fill of the result is done in the kernel; one kernel for 2 mat-muls over the same x, each tile 112 rows of each weight; 1 element-wise op(s) over the results in its epilogue, 2 f32 result(s) never written}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wg : memref<512x4096xbf16>, memref<14336x4096xbf16>) outs(%g : memref<512x14336xf32>)
  %u = memref.alloc() : memref<512x14336xf32>
  linalg.fill ins(%zero : f32) outs(%u : memref<512x14336xf32>)
  // expected-remark @+1 {{(224 weight rows per tile, 112 of each of 2 mat-muls}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wu : memref<512x4096xbf16>, memref<14336x4096xbf16>) outs(%u : memref<512x14336xf32>)
  %h = memref.alloc() : memref<512x14336xbf16>
  // expected-remark @+1 {{cachet-lower-matvec: done by the GEMM kernel before it, on the sums each thread stores}}
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%g, %u : memref<512x14336xf32>, memref<512x14336xf32>) outs(%h : memref<512x14336xbf16>) {
  ^bb0(%a: f32, %b: f32, %o: bf16):
    %n = arith.negf %a : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %s = arith.divf %a, %d : f32
    %p = arith.mulf %s, %b : f32
    %t = arith.truncf %p : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %g : memref<512x14336xf32>
  memref.dealloc %u : memref<512x14336xf32>
  return %h : memref<512x14336xbf16>
}
