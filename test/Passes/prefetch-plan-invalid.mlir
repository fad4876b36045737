// RUN: cachet-opt %s -split-input-file -cachet-prefetch-matvec-chains -verify-diagnostics

// Plans cachet-prefetch-matvec-chains cannot carry out are errors naming the
// cause.

module attributes {gpu.container_module} {
  func.func @bulk_on_sm89(%x: memref<64xf16>, %w1: memref<128x64xf16>, %w2: memref<128x64xf16>, %y1: memref<128xf32>, %y2: memref<128xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    // expected-error @below {{cannot carry out #cachet.prefetch_plan<next = bulk, next_bytes = [4096], ctas = 2>: bulk prefetch needs sm_90 and PTX 8.0, the target is sm_89 with PTX 8.0}}
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>) {cachet.prefetch_plan = #cachet.prefetch_plan<next = bulk, next_bytes = [4096], ctas = 2>}
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

module attributes {gpu.container_module} {
  func.func @pdl_on_sm89(%x: memref<64xf16>, %w1: memref<128x64xf16>, %w2: memref<128x64xf16>, %y1: memref<128xf32>, %y2: memref<128xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    // expected-error @below {{griddepcontrol needs sm_90 and PTX 7.8, the target is sm_89 with PTX 8.0}}
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>) {cachet.prefetch_plan = #cachet.prefetch_plan<pdl = true>}
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

module attributes {gpu.container_module} {
  func.func @no_next(%x: memref<64xf16>, %w1: memref<128x64xf16>, %w2: memref<128x64xf16>, %y1: memref<128xf32>, %y2: memref<128xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>)
    // expected-error @below {{no next weights: no streaming mat-vec launch follows in this block}}
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w2 : memref<128x64xf16>, %x : memref<64xf16>, %y2 : memref<128xf32>) {cachet.prefetch_plan = #cachet.prefetch_plan<next = l2, next_bytes = [4096], ctas = 2>}
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

module attributes {gpu.container_module} {
  func.func @too_many_bytes(%x: memref<64xf16>, %w1: memref<128x64xf16>, %w2: memref<128x64xf16>, %y1: memref<128xf32>, %y2: memref<128xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    // expected-error @below {{'next_bytes' asks for 32768 B of memref<128x64xf16>}}
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>) {cachet.prefetch_plan = #cachet.prefetch_plan<next = l2, next_bytes = [32768], ctas = 2>}
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

module attributes {gpu.container_module} {
  func.func @two_entries(%x: memref<64xf16>, %w1: memref<128x64xf16>, %w2: memref<128x64xf16>, %y1: memref<128xf32>, %y2: memref<128xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    // expected-error @below {{'next_bytes' has 2 entries, the next step has 1 weights}}
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>) {cachet.prefetch_plan = #cachet.prefetch_plan<next = l2, next_bytes = [128, 128], ctas = 2>}
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

module attributes {gpu.container_module} {
  func.func @unsafe_wait(%x: memref<64xf16>, %w1: memref<128x64xf16>, %w2: memref<128x64xf16>, %y1: memref<128xf32>, %y2: memref<128xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    // expected-error @below {{'wait = after_weight_loads' is unsafe: a kernel launched before this block may still run}}
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w1 : memref<128x64xf16>, %x : memref<64xf16>, %y1 : memref<128xf32>) {cachet.prefetch_plan = #cachet.prefetch_plan<pdl = true, wait = after_weight_loads>}
    gpu.launch_func @mv::@mv blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) args(%w2 : memref<128x64xf16>, %x : memref<64xf16>, %y2 : memref<128xf32>)
    return
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
