// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=rtx4070 -cachet-select-kernel-configs -cachet-prefetch-matvec-chains -verify-diagnostics | FileCheck %s

// A hand-written streaming mat-vec kernel (row = block_id * 32 + thread_id,
// guarded, one load of each weight element) launched twice: the first
// launch gets its own copy of the kernel, with the next weight as an extra
// argument and the prefetch epilogue; the last launch is left alone.

// CHECK-LABEL: func.func @shared
// CHECK: gpu.launch_func @mv::@mv_0 {{.*}} args(%[[W1:.*]] : memref<128x64xf16>, %{{.*}} : memref<64xf16>, %{{.*}} : memref<128xf32>, %[[W2:.*]] : memref<128x64xf16>)
// CHECK: gpu.launch_func @mv::@mv {{.*}} args(%[[W2]] : memref<128x64xf16>, %{{.*}} : memref<64xf16>, %{{.*}} : memref<128xf32>)
// CHECK: gpu.func @mv(%{{.*}}: memref<128x64xf16>, %{{.*}}: memref<64xf16>, %{{.*}}: memref<128xf32>) kernel
// CHECK-NOT: llvm.inline_asm
// CHECK: gpu.return
// CHECK: gpu.func @mv_0({{.*}}, %[[NEXT:.*]]: memref<128x64xf16>) kernel
// CHECK: scf.for
// CHECK: memref.load
// CHECK: %[[N:.*]] = arith.minui %c4{{.*}}, %c46
// CHECK: %[[FIRST:.*]] = arith.subi %c4{{.*}}, %[[N]]
// CHECK: %[[LAST:.*]] = arith.cmpi uge, %{{.*}}, %[[FIRST]]
// CHECK: scf.if %[[LAST]]
// CHECK: %c8192 = arith.constant 8192 : index
// CHECK: memref.extract_aligned_pointer_as_index %[[NEXT]]
// CHECK: scf.for
// CHECK: llvm.inline_asm has_side_effects "prefetch.global.L2 [$0];", "l"
// CHECK: gpu.return
module attributes {gpu.container_module} {
  func.func @shared(%x: memref<64xf16>, %w1: memref<128x64xf16>, %w2: memref<128x64xf16>, %y1: memref<128xf32>, %y2: memref<128xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    // expected-remark @below {{step 1 of 2, weight memref<128x64xf16>; auto: profile rtx4070 has pdl = false, l2_prefetch = l2; sm_89 with PTX 8.0: l2; the last 46 CTAs prefetch (l2) 8192 B of memref<128x64xf16> (fraction 0.5, max-bytes 9437184)}}
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>)
    // expected-remark @below {{step 2 of 2, weight memref<128x64xf16>; auto: profile rtx4070 has pdl = false, l2_prefetch = l2; sm_89 with PTX 8.0: l2; no prefetch: no streaming mat-vec launch follows in this block; not rewritten}}
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

// Kernels whose weight reads are not provably streaming: a second load of
// the weight, a second loop around the column loop, rows and columns swapped.
// None is changed.

// CHECK-LABEL: func.func @not_streaming
// CHECK-COUNT-3: args(%{{[^,]*}} : memref<128x64xf16>, %{{[^,]*}} : memref<64xf16>, %{{[^,]*}} : memref<128xf32>)
// CHECK-NOT: llvm.inline_asm
module attributes {gpu.container_module} {
  func.func @not_streaming(%x: memref<64xf16>, %w1: memref<128x64xf16>, %w2: memref<128x64xf16>, %w3: memref<128x64xf16>, %y: memref<128xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    // expected-remark @below {{not part of a chain: kernel @twice does not stream a weight: argument #0 (rank 2): it is loaded 2 times (elements may be read more than once)}}
    gpu.launch_func @twice::@twice blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y : memref<128xf32>)
    // expected-remark @below {{not part of a chain: kernel @nested does not stream a weight: argument #0 (rank 2): the weight load is nested in two loops (elements may be read more than once)}}
    gpu.launch_func @nested::@nested blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w2 : memref<128x64xf16>, %x : memref<64xf16>, %y : memref<128xf32>)
    // expected-remark @below {{not part of a chain: kernel @transposed does not stream a weight: argument #0 (rank 2): the column index is not the induction variable of a loop from 0 to the column count with step 1}}
    gpu.launch_func @transposed::@transposed blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w3 : memref<128x64xf16>, %x : memref<64xf16>, %y : memref<128xf32>)
    return
  }
  gpu.module @twice [#nvvm.target<chip = "sm_89", features = "+ptx80">] {
    gpu.func @twice(%w: memref<128x64xf16>, %x: memref<64xf16>, %y: memref<128xf32>) kernel {
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
          %again = memref.load %w[%row, %c0] : memref<128x64xf16>
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
  gpu.module @nested [#nvvm.target<chip = "sm_89", features = "+ptx80">] {
    gpu.func @nested(%w: memref<128x64xf16>, %x: memref<64xf16>, %y: memref<128xf32>) kernel {
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
        %acc = scf.for %r = %c0 to %c1 step %c1 iter_args(%a0 = %zero) -> f32 {
        %acc0 = scf.for %j = %c0 to %c64 step %c1 iter_args(%a = %a0) -> f32 {
          %wv = memref.load %w[%row, %j] : memref<128x64xf16>
          %xv = memref.load %x[%j] : memref<64xf16>
          %p = arith.mulf %wv, %xv : f16
          %pf = arith.extf %p : f16 to f32
          %s = arith.addf %a, %pf : f32
          scf.yield %s : f32
        }
        scf.yield %acc0 : f32
        }
        memref.store %acc, %y[%row] : memref<128xf32>
      }
      gpu.return
    }
  }
  gpu.module @transposed [#nvvm.target<chip = "sm_89", features = "+ptx80">] {
    gpu.func @transposed(%w: memref<128x64xf16>, %x: memref<64xf16>, %y: memref<128xf32>) kernel {
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
          %wv = memref.load %w[%j, %row] : memref<128x64xf16>
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

// The next weight is only loaded after the first launch (unknown there); a
// weight the host overwrites is not read-only; a launch whose block size is
// not the one the row index assumes.

// CHECK-LABEL: func.func @unknown_next
// CHECK-NOT: args({{.*}}, %{{.*}} : memref<128x64xf16>, %{{.*}} : memref<128x64xf16>)
// CHECK-NOT: llvm.inline_asm
module attributes {gpu.container_module} {
  memref.global "private" constant @late : memref<128x64xf16> = dense<1.0>
  func.func @unknown_next(%x: memref<64xf16>, %w1: memref<128x64xf16>, %w3: memref<128x64xf16>, %src: memref<128x64xf16>, %y1: memref<128xf32>, %y2: memref<128xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    // expected-remark @below {{step 1 of 2, weight memref<128x64xf16>; auto: profile rtx4070 has pdl = false, l2_prefetch = l2; sm_89 with PTX 8.0: l2; no prefetch: the next weight is not defined before this launch; not rewritten}}
    gpu.launch_func @a::@a blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>)
    %w2 = memref.get_global @late : memref<128x64xf16>
    // expected-remark @below {{step 2 of 2}}
    gpu.launch_func @b::@b blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w2 : memref<128x64xf16>, %x : memref<64xf16>, %y2 : memref<128xf32>)
    memref.copy %src, %w3 : memref<128x64xf16> to memref<128x64xf16>
    // expected-remark @below {{not part of a chain: its weight is not read-only in host code: 'memref.copy' may write it}}
    gpu.launch_func @c::@c blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w3 : memref<128x64xf16>, %x : memref<64xf16>, %y2 : memref<128xf32>)
    // expected-remark @below {{not part of a chain: the launch is not a 1-D grid of (32, 1, 1) blocks, which its row index assumes}}
    gpu.launch_func @a::@a blocks in (%c4, %c1, %c1) threads in (%c64, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>)
    return
  }
  gpu.module @a [#nvvm.target<chip = "sm_89", features = "+ptx80">] {
    gpu.func @a(%w: memref<128x64xf16>, %x: memref<64xf16>, %y: memref<128xf32>) kernel {
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
  gpu.module @b [#nvvm.target<chip = "sm_89", features = "+ptx80">] {
    gpu.func @b(%w: memref<128x64xf16>, %x: memref<64xf16>, %y: memref<128xf32>) kernel {
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
  gpu.module @c [#nvvm.target<chip = "sm_89", features = "+ptx80">] {
    gpu.func @c(%w: memref<128x64xf16>, %x: memref<64xf16>, %y: memref<128xf32>) kernel {
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

// SPIR-V kernels get an empty plan, and kernels without a target attribute
// no plan (a later run plans them once the target is attached), each with a
// remark.

// CHECK-LABEL: func.func @spirv
// CHECK: gpu.launch_func @s::@s {{.*}} {cachet.prefetch_plan = #cachet.prefetch_plan<>}
// CHECK-NEXT: gpu.launch_func @n::@n
// CHECK-NOT: cachet.prefetch_plan
// CHECK-SAME: {{$}}
// CHECK-NOT: args({{.*}}, %{{.*}} : memref<128x64xf16>, %{{.*}} : memref<128x64xf16>)
// CHECK-NOT: llvm.inline_asm
module attributes {gpu.container_module} {
  func.func @spirv(%x: memref<64xf16>, %w1: memref<128x64xf16>, %w2: memref<128x64xf16>, %y1: memref<128xf32>, %y2: memref<128xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    // expected-remark @below {{step 1 of 3, weight memref<128x64xf16>; SPIR-V target: no prefetch or dependent-launch instruction; not rewritten}}
    gpu.launch_func @s::@s blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>)
    // expected-remark @below {{no plan yet: the kernel's gpu.module has no target attribute}}
    gpu.launch_func @n::@n blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w2 : memref<128x64xf16>, %x : memref<64xf16>, %y2 : memref<128xf32>)
    // expected-remark @below {{step 3 of 3}}
    gpu.launch_func @s::@s blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>)
    return
  }
  gpu.module @s [#spirv.target_env<#spirv.vce<v1.3, [Shader], []>, #spirv.resource_limits<>>] {
    gpu.func @s(%w: memref<128x64xf16>, %x: memref<64xf16>, %y: memref<128xf32>) kernel {
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
  gpu.module @n {
    gpu.func @n(%w: memref<128x64xf16>, %x: memref<64xf16>, %y: memref<128xf32>) kernel {
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

// Next weights with a dynamic row or column count: no byte range can be
// fixed in the kernel, so nothing is prefetched. A column loop bounded by
// memref.dim is streaming too.

// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: llvm.inline_asm
module attributes {gpu.container_module} {
  func.func @dynamic(%x: memref<64xf16>, %w1: memref<?x64xf16>, %w2: memref<?x64xf16>, %w3: memref<128x?xf16>, %y1: memref<128xf32>, %y2: memref<128xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    // expected-remark @below {{step 1 of 3, weight memref<?x64xf16>; auto: profile rtx4070 has pdl = false, l2_prefetch = l2; sm_89 with PTX 8.0: l2; no prefetch: the next weight has a dynamic shape or a non-identity layout; not rewritten}}
    gpu.launch_func @d::@d blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<?x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>)
    // expected-remark @below {{step 2 of 3, weight memref<?x64xf16>; auto: profile rtx4070 has pdl = false, l2_prefetch = l2; sm_89 with PTX 8.0: l2; no prefetch: the next weight has a dynamic shape or a non-identity layout; not rewritten}}
    gpu.launch_func @d::@d blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w2 : memref<?x64xf16>, %x : memref<64xf16>, %y2 : memref<128xf32>)
    // expected-remark @below {{step 3 of 3, weight memref<128x?xf16>}}
    gpu.launch_func @dc::@dc blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w3 : memref<128x?xf16>, %x : memref<64xf16>, %y2 : memref<128xf32>)
    return
  }
  gpu.module @d [#nvvm.target<chip = "sm_89", features = "+ptx80">] {
    gpu.func @d(%w: memref<?x64xf16>, %x: memref<64xf16>, %y: memref<128xf32>) kernel {
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
          %wv = memref.load %w[%row, %j] : memref<?x64xf16>
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
  gpu.module @dc [#nvvm.target<chip = "sm_89", features = "+ptx80">] {
    gpu.func @dc(%w: memref<128x?xf16>, %x: memref<64xf16>, %y: memref<128xf32>) kernel {
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
        %cols = memref.dim %w, %c1 : memref<128x?xf16>
        %acc = scf.for %j = %c0 to %cols step %c1 iter_args(%a = %zero) -> f32 {
          %wv = memref.load %w[%row, %j] : memref<128x?xf16>
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

// A kernel with a workgroup attribution is matched but not rewritten.

// CHECK-LABEL: func.func @attribution
// CHECK-NOT: llvm.inline_asm
module attributes {gpu.container_module} {
  func.func @attribution(%x: memref<64xf16>, %w1: memref<128x64xf16>, %w2: memref<128x64xf16>, %y1: memref<128xf32>, %y2: memref<128xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    // expected-remark @below {{step 1 of 2, weight memref<128x64xf16>; auto: profile rtx4070 has pdl = false, l2_prefetch = l2; sm_89 with PTX 8.0: l2; not rewritten: the kernel has workgroup or private attributions}}
    gpu.launch_func @wg::@wg blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>)
    // expected-remark @below {{step 2 of 2}}
    gpu.launch_func @wg::@wg blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w2 : memref<128x64xf16>, %x : memref<64xf16>, %y2 : memref<128xf32>)
    return
  }
  gpu.module @wg [#nvvm.target<chip = "sm_89", features = "+ptx80">] {
    gpu.func @wg(%w: memref<128x64xf16>, %x: memref<64xf16>, %y: memref<128xf32>) workgroup(%scratch: memref<32xf32, #gpu.address_space<workgroup>>) kernel {
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
