// RUN: cachet-opt %s -split-input-file -verify-diagnostics

module attributes {gpu.container_module} {
func.func @line(%w: memref<16x16xf16>) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{#cachet.prefetch_plan: 'line' must be positive, got 0}}
  gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%w : memref<16x16xf16>) {cachet.prefetch_plan = #cachet.prefetch_plan<line = 0>}
  return
}
gpu.module @k {
  gpu.func @k(%w: memref<16x16xf16>) kernel {
    gpu.return
  }
}
}

// -----

module attributes {gpu.container_module} {
func.func @bytes(%w: memref<16x16xf16>) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{#cachet.prefetch_plan: bytes must be non-negative multiples of 'line' (128), got 100}}
  gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%w : memref<16x16xf16>) {cachet.prefetch_plan = #cachet.prefetch_plan<next = l2, next_bytes = [100], ctas = 1>}
  return
}
gpu.module @k {
  gpu.func @k(%w: memref<16x16xf16>) kernel {
    gpu.return
  }
}
}

// -----

module attributes {gpu.container_module} {
func.func @next_alone(%w: memref<16x16xf16>) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{#cachet.prefetch_plan: 'next' and 'next_bytes' come together}}
  gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%w : memref<16x16xf16>) {cachet.prefetch_plan = #cachet.prefetch_plan<next = l2, ctas = 1>}
  return
}
gpu.module @k {
  gpu.func @k(%w: memref<16x16xf16>) kernel {
    gpu.return
  }
}
}

// -----

module attributes {gpu.container_module} {
func.func @no_ctas(%w: memref<16x16xf16>) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{#cachet.prefetch_plan: 'next = l2' needs 'ctas' of 1 or more}}
  gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%w : memref<16x16xf16>) {cachet.prefetch_plan = #cachet.prefetch_plan<next = l2, next_bytes = [128]>}
  return
}
gpu.module @k {
  gpu.func @k(%w: memref<16x16xf16>) kernel {
    gpu.return
  }
}
}

// -----

module attributes {gpu.container_module} {
func.func @own_no_pdl(%w: memref<16x16xf16>) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{#cachet.prefetch_plan: 'own' (the pdl prologue) needs 'pdl = true'}}
  gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%w : memref<16x16xf16>) {cachet.prefetch_plan = #cachet.prefetch_plan<own = bulk, own_bytes = [128]>}
  return
}
gpu.module @k {
  gpu.func @k(%w: memref<16x16xf16>) kernel {
    gpu.return
  }
}
}

// -----

module attributes {gpu.container_module} {
func.func @trigger_no_pdl(%w: memref<16x16xf16>) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{#cachet.prefetch_plan: 'trigger' and 'wait' need 'pdl = true'}}
  gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%w : memref<16x16xf16>) {cachet.prefetch_plan = #cachet.prefetch_plan<trigger = end>}
  return
}
gpu.module @k {
  gpu.func @k(%w: memref<16x16xf16>) kernel {
    gpu.return
  }
}
}

// -----

module attributes {gpu.container_module} {
func.func @bad_kind(%w: memref<16x16xf16>) {
  %c1 = arith.constant 1 : index
  // expected-error @+2 {{expected ::cachet::PrefetchKind to be one of: none, l2, bulk, s_prefetch_data, global_prefetch}}
  // expected-error @+1 {{failed to parse Cachet_PrefetchPlanAttr parameter 'next'}}
  gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%w : memref<16x16xf16>) {cachet.prefetch_plan = #cachet.prefetch_plan<next = l3>}
  return
}
}

// -----

module attributes {gpu.container_module} {
func.func @not_a_plan(%w: memref<16x16xf16>) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'cachet.prefetch_plan' must be a #cachet.prefetch_plan}}
  gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%w : memref<16x16xf16>) {cachet.prefetch_plan = #cachet.kernel_config<variant = matvec_generic>}
  return
}
gpu.module @k {
  gpu.func @k(%w: memref<16x16xf16>) kernel {
    gpu.return
  }
}
}

// -----

module attributes {gpu.container_module} {
func.func @not_a_launch(%w: memref<16x16xf16>) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'cachet.prefetch_plan' must be on a gpu.launch_func}}
  %z = arith.constant {cachet.prefetch_plan = #cachet.prefetch_plan<>} 0 : index
  return
}
gpu.module @k {
  gpu.func @k(%w: memref<16x16xf16>) kernel {
    gpu.return
  }
}
}
