// RUN: cachet-opt %s -split-input-file -cachet-device-buffers -verify-diagnostics

// The host cannot read device memory: a diagnostic, not a crash later.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<16xf32>) kernel { gpu.return }
  }
  func.func @host_read() -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %y = memref.alloc() : memref<16xf32>
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%y : memref<16xf32>)
    // expected-error @+1 {{cachet-device-buffers: host operation 'memref.load' uses a buffer that lives on the device}}
    %v = memref.load %y[%c0] : memref<16xf32>
    return %v : f32
  }
}
