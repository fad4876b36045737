// Mat-vec decisions as #cachet.kernel_config: chosen on buffers only, the
// generic kernel where the subgroup kernel cannot serve the op, a config in
// the input kept (and built), a bad one an error of cachet-lower-matvec
// (@bad fails the lowering run: `not`).
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="matvec-kernel=generic" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=GENERIC
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="rows-per-block=8 blocks-per-cu=2 stage-x=true fuse-siblings=false" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=OPTIONS
// RUN: not cachet-opt %s -split-input-file -mlir-print-op-on-diagnostic=false -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},cachet-select-kernel-configs,func.func(cachet-lower-matvec))' 2>/dev/null | FileCheck %s --check-prefix=LOWERED
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-attach-device{profile=h200},func.func(cachet-lower-matvec))' -verify-diagnostics -o /dev/null

// CHECK-LABEL: func.func @chosen
// CHECK: linalg.matvec {cachet.kernel_config = #cachet.kernel_config<variant = matvec_subgroup, tile = [4, 1], workgroup = 128, subgroup = 32, vector_width = 8, loads = [4, 8], resident = [0, 0], fuse_siblings = true, fuse_epilogues = true>}
// GENERIC-LABEL: func.func @chosen
// GENERIC: #cachet.kernel_config<variant = matvec_generic>
// OPTIONS-LABEL: func.func @chosen
// OPTIONS: #cachet.kernel_config<variant = matvec_subgroup, tile = [8, 1], workgroup = 256, subgroup = 32, vector_width = 8, loads = [4, 8], resident = [2, 2], stage_x = true, fuse_epilogues = true>
// LOWERED-LABEL: func.func @chosen
// LOWERED: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c128
// LOWERED-NOT: linalg.matvec
// LOWERED: return
func.func @chosen(%w: memref<64x256xf16>, %x: memref<256xf16>, %y: memref<64xf32>) {
  linalg.matvec ins(%w, %x : memref<64x256xf16>, memref<256xf16>) outs(%y : memref<64xf32>)
  return
}

// -----

// Rows of 100 f16 are not 16-byte multiples.
// CHECK-LABEL: func.func @misaligned
// CHECK: #cachet.kernel_config<variant = matvec_generic>
func.func @misaligned(%w: memref<64x100xf16>, %x: memref<100xf16>, %y: memref<64xf32>) {
  linalg.matvec ins(%w, %x : memref<64x100xf16>, memref<100xf16>) outs(%y : memref<64xf32>)
  return
}

// -----

// On tensors nothing is decided yet.
// CHECK-LABEL: func.func @tensors
// CHECK-NOT: cachet.kernel_config
// CHECK: return
func.func @tensors(%w: tensor<64x256xf16>, %x: tensor<256xf16>, %y: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.matvec ins(%w, %x : tensor<64x256xf16>, tensor<256xf16>) outs(%y : tensor<64xf32>) -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// Written in the input: two subgroups a block, kept and built.
// CHECK-LABEL: func.func @written
// CHECK: #cachet.kernel_config<variant = matvec_subgroup, tile = [2, 1], workgroup = 64, subgroup = 32, vector_width = 8, loads = [2, 2], resident = [0, 0]>
// LOWERED-LABEL: func.func @written
// LOWERED: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c64
func.func @written(%w: memref<64x256xf16>, %x: memref<256xf16>, %y: memref<64xf32>) {
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel: 32 lanes per row, 2 subgroups per block, 2 16-byte loads per lane in flight}}
  linalg.matvec {cachet.kernel_config = #cachet.kernel_config<variant = matvec_subgroup, tile = [2, 1], workgroup = 64, subgroup = 32, vector_width = 8, loads = [2, 2], resident = [0, 0]>}
      ins(%w, %x : memref<64x256xf16>, memref<256xf16>) outs(%y : memref<64xf32>)
  return
}

// -----

// A written config the kernel cannot serve: rows of 100 f16 in 16-byte loads.
func.func @bad(%w: memref<64x100xf16>, %x: memref<100xf16>, %y: memref<64xf32>) {
  // expected-error @+1 {{cachet-lower-matvec: cannot build #cachet.kernel_config<variant = matvec_subgroup, tile = [4, 1], workgroup = 128, subgroup = 32, vector_width = 8, loads = [4, 4], resident = [0, 0]>: the weight's rows are not unit-stride and 16-byte aligned}}
  linalg.matvec {cachet.kernel_config = #cachet.kernel_config<variant = matvec_subgroup, tile = [4, 1], workgroup = 128, subgroup = 32, vector_width = 8, loads = [4, 4], resident = [0, 0]>}
      ins(%w, %x : memref<64x100xf16>, memref<100xf16>) outs(%y : memref<64xf32>)
  return
}
