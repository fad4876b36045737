// stage-x: each block copies x into workgroup memory once, waits at a
// barrier, and its subgroups read x from there.
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs{stage-x=true},func.func(cachet-lower-matvec))' -verify-diagnostics | FileCheck %s
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs,func.func(cachet-lower-matvec))' 2>/dev/null | FileCheck %s --check-prefix=OFF
// On NVVM the staged reads are ld.shared and the block has one barrier.
// RUN: cachet-opt %s -split-input-file -cachet-compile="target=nvvm chip=sm_90 matvec-kernel=subgroup matvec-options={stage-x=true} format=isa" 2>/dev/null | FileCheck %s --check-prefix=PTX

// CHECK-LABEL: func.func @qkv
// CHECK: gpu.launch blocks({{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in ({{.*}}) workgroup(%[[XS:.*]] : memref<256xf16, #gpu.address_space<workgroup>>)
// CHECK: %[[FIRST:.*]] = arith.muli %[[TX]], %c8
// CHECK: scf.for %[[K:.*]] = %[[FIRST]] to %c256{{.*}} step %c1024
// CHECK-NEXT: %[[V:.*]] = vector.load %arg0[%[[K]]] {alignment = 16 : i64} : memref<256xf16>, vector<8xf16>
// CHECK-NEXT: vector.store %[[V]], %[[XS]][%[[K]]] {alignment = 16 : i64}
// CHECK: gpu.barrier
// CHECK-NOT: vector.load %arg0
// CHECK: vector.load %[[XS]]
// CHECK-NOT: vector.load %arg0
// CHECK: gpu.terminator
// OFF-LABEL: func.func @qkv
// OFF-NOT: workgroup(
// OFF-NOT: gpu.barrier
// OFF: vector.load %arg0
// PTX: gpu.binary @qkv_kernel
// PTX-SAME: .shared .align {{[0-9]+}} .b8 __wg_qkv_kernel_0[512];
// PTX-SAME: bar.sync
// PTX-SAME: ld.shared.v4.b32
func.func @qkv(%x: memref<256xf16>, %wq: memref<64x256xf16>, %wk: memref<16x256xf16>, %wv: memref<16x256xf16>) -> (memref<64xf32>, memref<16xf32>, memref<16xf32>) {
  %q = memref.alloc() : memref<64xf32>
  %k = memref.alloc() : memref<16xf32>
  %v = memref.alloc() : memref<16xf32>
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{8 16-byte loads per lane in flight, 1 rows per subgroup; x staged in workgroup memory once per block; one kernel for 3 mat-vecs}}
  linalg.matvec ins(%wq, %x : memref<64x256xf16>, memref<256xf16>) outs(%q : memref<64xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{x staged in workgroup memory once per block}}
  linalg.matvec ins(%wk, %x : memref<16x256xf16>, memref<256xf16>) outs(%k : memref<16xf32>)
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel}}
  // expected-remark @+1 {{x staged in workgroup memory once per block}}
  linalg.matvec ins(%wv, %x : memref<16x256xf16>, memref<256xf16>) outs(%v : memref<16xf32>)
  return %q, %k, %v : memref<64xf32>, memref<16xf32>, memref<16xf32>
}

// -----

// An x of 64 KiB is more than a block's static workgroup memory (48 KiB on
// CUDA without an opt-in): read from global memory as without the option.
// CHECK-LABEL: func.func @long_rows
// CHECK-NOT: workgroup(
// CHECK-NOT: gpu.barrier
// CHECK: vector.load %arg1
func.func @long_rows(%w: memref<4x32768xf16>, %x: memref<32768xf16>, %y: memref<4xf32>) {
  // expected-remark @+2 {{cachet-select-kernel-configs: subgroup kernel: 32 lanes per row, 4 subgroups per block, 4 (paired: 8) 16-byte loads per lane in flight; x (65536 bytes) not staged: more than the static workgroup memory of a block}}
  // expected-remark @+1 {{cachet-lower-matvec: subgroup kernel: 32 lanes per row, 4 subgroups per block, 4 16-byte loads per lane in flight, 1 rows per subgroup}}
  linalg.matvec ins(%w, %x : memref<4x32768xf16>, memref<32768xf16>) outs(%y : memref<4xf32>)
  return
}
