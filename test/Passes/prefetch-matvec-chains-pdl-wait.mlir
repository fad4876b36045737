// Where a pdl kernel waits (pdl-wait) and which launches may load their
// weights before the wait: only those after a fence in their block.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="prefetch=pdl prefetch-max-bytes=0" -cachet-prefetch-matvec-chains -verify-diagnostics | FileCheck %s
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="prefetch=pdl prefetch-max-bytes=0 pdl-trigger=end" -cachet-prefetch-matvec-chains -mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=END
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="prefetch=pdl prefetch-max-bytes=0 pdl-wait=start" -cachet-prefetch-matvec-chains 2>/dev/null | FileCheck %s --check-prefix=START
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="prefetch=pdl prefetch-max-bytes=0 pdl-trigger=end" -cachet-prefetch-matvec-chains 2>/dev/null | FileCheck %s --check-prefix=ENDIR

// No fence before the first launch (a kernel launched before the function
// may still run and, with the trigger first, so may it for the second): both
// wait first. A zero fill (a launch without pdl) fences the third.
// CHECK-LABEL: func.func @fences
// CHECK: gpu.launch_func @mv::@mv_0
// CHECK: gpu.launch_func @mv::@mv_1
// CHECK: gpu.launch_func @fill::@fill
// CHECK: gpu.launch_func @mv::@mv
// The third (the kernel itself; the first two launch copies): its weight's
// load, then the wait in the first iteration, then x; again before the
// store (the loop may run no iteration) and before the return.
// CHECK: gpu.func @mv(%[[W:[^:]*]]: memref<128x64xf16>, %[[X:[^:]*]]: memref<64xf16>, %[[Y:[^:]*]]: memref<128xf32>)
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NOT: griddepcontrol.wait
// CHECK: scf.for %[[J:[^ ]*]] = %[[LB:[^ ]*]] to
// CHECK-NEXT: memref.load %[[W]]
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[J]], %[[LB]]
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// CHECK-NEXT: {{^ *[}]$}}
// CHECK-NEXT: memref.load %[[X]]
// CHECK: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// CHECK-NEXT: memref.store %{{.*}}, %[[Y]]
// CHECK: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// CHECK-NEXT: gpu.return
// CHECK: gpu.func @mv_1(
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// CHECK-NOT: griddepcontrol.wait
// CHECK: gpu.return
// CHECK: gpu.func @mv_0(
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// CHECK-NOT: griddepcontrol.wait
// CHECK: gpu.return

// With the trigger at the end, a pdl launch before is a fence: the second
// and third load first.
// END: step 1 of 3, {{.*}}; pdl: the first 0 B of the own weight prefetched (max-bytes), wait before the first read (a kernel launched before this block may still run: no fence before it here (a launch without pdl or that triggers at its end, a copy, a fill or a wait)), launch_dependents before returning
// END: step 2 of 3, {{.*}}; pdl: the first 0 B of the own weight prefetched (max-bytes), wait after the first loads of the weights (before the first access to other memory), launch_dependents before returning
// END: step 3 of 3, {{.*}}; pdl: the first 0 B of the own weight prefetched (max-bytes), wait after the first loads of the weights (before the first access to other memory), launch_dependents before returning

// With the trigger at the end, every return has a wait, then the trigger.
// ENDIR: gpu.func @mv(
// ENDIR-NOT: nvvm.griddepcontrol launch_dependents
// ENDIR: memref.store
// ENDIR-NOT: nvvm.griddepcontrol launch_dependents
// ENDIR: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// ENDIR-NEXT: nvvm.griddepcontrol launch_dependents
// ENDIR-NEXT: gpu.return

// START: gpu.func @mv(
// START-NEXT: nvvm.griddepcontrol launch_dependents
// START-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// START-NOT: griddepcontrol.wait
// START: gpu.return
module attributes {gpu.container_module} {
  func.func @fences(%x: memref<64xf16>, %w1: memref<128x64xf16>, %w2: memref<128x64xf16>, %w3: memref<128x64xf16>) {
    %y1 = memref.alloc() : memref<128xf32>
    %y2 = memref.alloc() : memref<128xf32>
    %y3 = memref.alloc() : memref<128xf32>
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    // expected-remark @below {{step 1 of 3, weight memref<128x64xf16>; sm_90 with PTX 8.0: pdl; pdl: the first 0 B of the own weight prefetched (max-bytes), wait before the first read (a kernel launched before this block may still run: no fence before it here (a launch without pdl or that triggers at its end, a copy, a fill or a wait)), launch_dependents first}}
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>)
    // expected-remark @below {{step 2 of 3, weight memref<128x64xf16>; sm_90 with PTX 8.0: pdl; pdl: the first 0 B of the own weight prefetched (max-bytes), wait before the first read (a kernel launched before this block may still run}}
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w2 : memref<128x64xf16>, %x : memref<64xf16>, %y2 : memref<128xf32>)
    // expected-remark @below {{not part of a chain}}
    gpu.launch_func @fill::@fill blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%y3 : memref<128xf32>)
    // expected-remark @below {{step 3 of 3, weight memref<128x64xf16>; sm_90 with PTX 8.0: pdl; pdl: the first 0 B of the own weight prefetched (max-bytes), wait after the first loads of the weights (before the first access to other memory), launch_dependents first}}
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w3 : memref<128x64xf16>, %x : memref<64xf16>, %y3 : memref<128xf32>)
    return
  }
  gpu.module @fill [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    gpu.func @fill(%y: memref<128xf32>) kernel {
      %c32 = arith.constant 32 : index
      %zero = arith.constant 0.0 : f32
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %base = arith.muli %c32, %bid : index
      %row = arith.addi %base, %tid : index
      memref.store %zero, %y[%row] : memref<128xf32>
      gpu.return
    }
  }
  gpu.module @mv [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
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

// The fill before the second launch writes a function argument, which may
// be the second weight's buffer: that launch waits first.
// CHECK-LABEL: func.func @aliasing
module attributes {gpu.container_module} {
  func.func @aliasing(%x: memref<64xf16>, %w1: memref<128x64xf16>, %w2: memref<128x64xf16>, %out: memref<128xf32>) {
    %y1 = memref.alloc() : memref<128xf32>
    %y2 = memref.alloc() : memref<128xf32>
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    // expected-remark @below {{not part of a chain}}
    gpu.launch_func @fill::@fill blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%y1 : memref<128xf32>)
    // expected-remark @below {{step 1 of 2, weight memref<128x64xf16>; sm_90 with PTX 8.0: pdl; pdl: the first 0 B of the own weight prefetched (max-bytes), wait after the first loads of the weights (before the first access to other memory), launch_dependents first}}
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>)
    // expected-remark @below {{not part of a chain}}
    gpu.launch_func @fill::@fill blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%out : memref<128xf32>)
    // expected-remark @below {{step 2 of 2, weight memref<128x64xf16>; sm_90 with PTX 8.0: pdl; pdl: the first 0 B of the own weight prefetched (max-bytes), wait before the first read (the kernel of a launch before it may write a buffer that may alias its weights), launch_dependents first}}
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w2 : memref<128x64xf16>, %x : memref<64xf16>, %y2 : memref<128xf32>)
    return
  }
  gpu.module @fill [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    gpu.func @fill(%y: memref<128xf32>) kernel {
      %c32 = arith.constant 32 : index
      %zero = arith.constant 0.0 : f32
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %base = arith.muli %c32, %bid : index
      %row = arith.addi %base, %tid : index
      memref.store %zero, %y[%row] : memref<128xf32>
      gpu.return
    }
  }
  gpu.module @mv [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
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

// A copy is a fence; a kernel that loads x before its weight waits before
// x (nothing is loaded before the wait); a launch before the next one that
// passes a pointer, or an op with regions between the fence and the launch,
// keep the wait first.
// CHECK-LABEL: func.func @shapes
// CHECK: gpu.func @xfirst_0(%[[W:[^:]*]]: memref<128x64xf16>, %[[X:[^:]*]]: memref<64xf16>
// CHECK: scf.for
// CHECK-NEXT: arith.cmpi eq
// CHECK-NEXT: scf.if
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// CHECK-NEXT: {{^ *[}]$}}
// CHECK-NEXT: memref.load %[[X]]
// CHECK-NEXT: memref.load %[[W]]
module attributes {gpu.container_module} {
  func.func @shapes(%x: memref<64xf16>, %xh: memref<64xf16>, %w1: memref<128x64xf16>, %w2: memref<128x64xf16>, %w3: memref<128x64xf16>, %p: !llvm.ptr, %c: i1) {
    %y1 = memref.alloc() : memref<128xf32>
    %y2 = memref.alloc() : memref<128xf32>
    %y3 = memref.alloc() : memref<128xf32>
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    gpu.memcpy %x, %xh : memref<64xf16>, memref<64xf16>
    // expected-remark @below {{step 1 of 3, weight memref<128x64xf16>; sm_90 with PTX 8.0: pdl; pdl: the first 0 B of the own weight prefetched (max-bytes), wait after the first loads of the weights (before the first access to other memory), launch_dependents first}}
    gpu.launch_func @mv::@xfirst blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>)
    // expected-remark @below {{not part of a chain}}
    gpu.launch_func @poke::@poke blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%p : !llvm.ptr)
    // expected-remark @below {{step 2 of 3, weight memref<128x64xf16>; sm_90 with PTX 8.0: pdl; pdl: the first 0 B of the own weight prefetched (max-bytes), wait before the first read (a launch before it passes a !llvm.ptr, which may point into its weights), launch_dependents first}}
    gpu.launch_func @mv::@xfirst blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w2 : memref<128x64xf16>, %x : memref<64xf16>, %y2 : memref<128xf32>)
    scf.if %c {
      memref.dealloc %y1 : memref<128xf32>
    }
    // expected-remark @below {{step 3 of 3, weight memref<128x64xf16>; sm_90 with PTX 8.0: pdl; pdl: the first 0 B of the own weight prefetched (max-bytes), wait before the first read (an op with regions or a call comes before it in its block, after the last fence), launch_dependents first}}
    gpu.launch_func @mv::@xfirst blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w3 : memref<128x64xf16>, %x : memref<64xf16>, %y3 : memref<128xf32>)
    return
  }
  gpu.module @poke [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    gpu.func @poke(%p: !llvm.ptr) kernel {
      %zero = llvm.mlir.constant(0 : i32) : i32
      llvm.store %zero, %p : i32, !llvm.ptr
      gpu.return
    }
  }
  gpu.module @mv [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    gpu.func @xfirst(%w: memref<128x64xf16>, %x: memref<64xf16>, %y: memref<128xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %zero = arith.constant 0.0 : f32
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %base = arith.muli %c32, %bid : index
      %row = arith.addi %base, %tid : index
      %acc = scf.for %j = %c0 to %c64 step %c1 iter_args(%a = %zero) -> f32 {
        %xv = memref.load %x[%j] : memref<64xf16>
        %wv = memref.load %w[%row, %j] : memref<128x64xf16>
        %p = arith.mulf %wv, %xv : f16
        %pf = arith.extf %p : f16 to f32
        %s = arith.addf %a, %pf : f32
        scf.yield %s : f32
      }
      memref.store %acc, %y[%row] : memref<128xf32>
      gpu.return
    }
  }
}

// -----

// Waits in both branches of an scf.if whose branches access other memory,
// in the first iteration of an outer loop whose body starts with a nested
// loop (before it), and again after the loop (it may run no iteration).
// CHECK-LABEL: func.func @branches
// CHECK: gpu.func @branchy_0(%[[W:[^:]*]]: memref<128x64xf16>, %[[X:[^:]*]]: memref<64xf16>, %[[Y:[^:]*]]: memref<128xf32>, %[[C:[^:]*]]: i1)
// CHECK: scf.if %[[C]] {
// CHECK-NEXT: vector.load %[[W]]
// CHECK-NEXT: vector.extract
// CHECK-NEXT: arith.extf
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// CHECK-NEXT: memref.store
// CHECK-NEXT: } else {
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// CHECK-NEXT: memref.load %[[X]]
// CHECK: scf.for %[[I:[^ ]*]] = %[[LB:[^ ]*]] to
// CHECK-NEXT: arith.cmpi eq, %[[I]], %[[LB]]
// CHECK-NEXT: scf.if
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// CHECK-NEXT: {{^ *[}]$}}
// CHECK-NEXT: scf.for
// CHECK: scf.yield
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// CHECK-NEXT: memref.store
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// CHECK-NEXT: gpu.return
module attributes {gpu.container_module} {
  func.func @branches(%x: memref<64xf16>, %xh: memref<64xf16>, %w1: memref<128x64xf16>, %w2: memref<128x64xf16>, %c: i1) {
    %y1 = memref.alloc() : memref<128xf32>
    %y2 = memref.alloc() : memref<128xf32>
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    gpu.memcpy %x, %xh : memref<64xf16>, memref<64xf16>
    // expected-remark @below {{step 1 of 2, weight memref<128x64xf16>; sm_90 with PTX 8.0: pdl; pdl: the first 0 B of the own weight prefetched (max-bytes), wait after the first loads of the weights}}
    gpu.launch_func @mv::@branchy blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>, %c : i1)
    // expected-remark @below {{step 2 of 2, weight memref<128x64xf16>; sm_90 with PTX 8.0: pdl; pdl: the first 0 B of the own weight prefetched (max-bytes), wait after the first loads of the weights}}
    gpu.launch_func @mv::@branchy blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w2 : memref<128x64xf16>, %x : memref<64xf16>, %y2 : memref<128xf32>, %c : i1)
    return
  }
  gpu.module @mv [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    gpu.func @branchy(%w: memref<128x64xf16>, %x: memref<64xf16>, %y: memref<128xf32>, %c: i1) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %zero = arith.constant 0.0 : f32
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %base = arith.muli %c32, %bid : index
      %row = arith.addi %base, %tid : index
      scf.if %c {
        %w0 = vector.load %w[%row, %c0] {cachet.streaming_weight} : memref<128x64xf16>, vector<8xf16>
        %e = vector.extract %w0[0] : f16 from vector<8xf16>
        %f = arith.extf %e : f16 to f32
        memref.store %f, %y[%row] : memref<128xf32>
      } else {
        %x0 = memref.load %x[%c0] : memref<64xf16>
        %f = arith.extf %x0 : f16 to f32
        memref.store %f, %y[%row] : memref<128xf32>
      }
      %acc = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %zero) -> f32 {
        %inner = scf.for %j = %c8 to %c64 step %c8 iter_args(%b = %a) -> f32 {
          %wvv = vector.load %w[%row, %j] {cachet.streaming_weight} : memref<128x64xf16>, vector<8xf16>
          %wv = vector.extract %wvv[0] : f16 from vector<8xf16>
          %xv = memref.load %x[%j] : memref<64xf16>
          %p = arith.mulf %wv, %xv : f16
          %pf = arith.extf %p : f16 to f32
          %s = arith.addf %b, %pf : f32
          scf.yield %s : f32
        }
        scf.yield %inner : f32
      }
      memref.store %acc, %y[%row] : memref<128xf32>
      gpu.return
    }
  }
}
