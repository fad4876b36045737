// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=rtx4070 -cachet-select-kernel-configs -verify-diagnostics | FileCheck %s --check-prefix=PLAN
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=rtx4070 -cachet-select-kernel-configs -cachet-prefetch-matvec-chains -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s

// #cachet.prefetch_plan is the decision of cachet-select-kernel-configs for
// a launch of a mat-vec chain; cachet-prefetch-matvec-chains carries it out.
// The cost model's plan for the first launch (rtx4070, sm_89: l2, half the
// next weight, one CTA per SM) and an empty plan for the last one:

// PLAN-LABEL: func.func @chosen
// PLAN: gpu.launch_func @mv::@mv {{.*}} {cachet.prefetch_plan = #cachet.prefetch_plan<next = l2, next_bytes = [8192], ctas = 46>}
// PLAN: gpu.launch_func @mv::@mv {{.*}} {cachet.prefetch_plan = #cachet.prefetch_plan<>}

// CHECK-LABEL: func.func @chosen
// CHECK: %c8192 = arith.constant 8192 : index

module attributes {gpu.container_module} {
  func.func @chosen(%x: memref<64xf16>, %w1: memref<128x64xf16>, %w2: memref<128x64xf16>, %y1: memref<128xf32>, %y2: memref<128xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    // expected-remark @below {{step 1 of 2}}
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>)
    // expected-remark @below {{step 2 of 2}}
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w2 : memref<128x64xf16>, %x : memref<64xf16>, %y2 : memref<128xf32>)
    return
  }
  gpu.module @mv [#nvvm.target<chip = "sm_89", features = "+ptx80">] {
    gpu.func @mv(%w: memref<128x64xf16>, %x: memref<64xf16>, %y: memref<128xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %zero = arith.constant 0.0 : f32
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %base = arith.muli %c32, %bid : index
      %row = arith.addi %base, %tid : index
      %in = arith.cmpi ult, %row, %c128 : index
      scf.if %in {
        %acc = scf.for %j = %c0 to %c64 step %c1 iter_args(%a = %zero) -> f32 {
          %wv = memref.load %w[%row, %j] : memref<128x64xf16>
          %xv = memref.load %x[%j] : memref<64xf16>
          %p = arith.mulf %wv, %xv : f16
          %pf = arith.extf %p : f16 to f32
          %s = arith.addf %a, %pf : f32
          scf.yield %s : f32
        }
        memref.store %acc, %y[%row] : memref<128xf32>
      }
      gpu.return
    }
  }
}

// -----

// A plan written in the input overrides the cost model: it is kept (with a
// remark) and carried out, 4096 B by the last 2 CTAs.

// PLAN-LABEL: func.func @written
// PLAN: gpu.launch_func @mv::@mv {{.*}} {cachet.prefetch_plan = #cachet.prefetch_plan<next = l2, next_bytes = [4096], ctas = 2>}

// CHECK-LABEL: func.func @written
// CHECK: gpu.func @mv_0(
// CHECK: arith.minui %c4{{.*}}, %c2
// CHECK: %c4096 = arith.constant 4096 : index
// CHECK: llvm.inline_asm has_side_effects "prefetch.global.L2 [$0];", "l"

module attributes {gpu.container_module} {
  func.func @written(%x: memref<64xf16>, %w1: memref<128x64xf16>, %w2: memref<128x64xf16>, %y1: memref<128xf32>, %y2: memref<128xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    // expected-remark @below {{the plan in the IR is kept}}
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>) {cachet.prefetch_plan = #cachet.prefetch_plan<next = l2, next_bytes = [4096], ctas = 2>}
    // expected-remark @below {{step 2 of 2}}
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w2 : memref<128x64xf16>, %x : memref<64xf16>, %y2 : memref<128xf32>)
    return
  }
  gpu.module @mv [#nvvm.target<chip = "sm_89", features = "+ptx80">] {
    gpu.func @mv(%w: memref<128x64xf16>, %x: memref<64xf16>, %y: memref<128xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %zero = arith.constant 0.0 : f32
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %base = arith.muli %c32, %bid : index
      %row = arith.addi %base, %tid : index
      %in = arith.cmpi ult, %row, %c128 : index
      scf.if %in {
        %acc = scf.for %j = %c0 to %c64 step %c1 iter_args(%a = %zero) -> f32 {
          %wv = memref.load %w[%row, %j] : memref<128x64xf16>
          %xv = memref.load %x[%j] : memref<64xf16>
          %p = arith.mulf %wv, %xv : f16
          %pf = arith.extf %p : f16 to f32
          %s = arith.addf %a, %pf : f32
          scf.yield %s : f32
        }
        memref.store %acc, %y[%row] : memref<128xf32>
      }
      gpu.return
    }
  }
}
