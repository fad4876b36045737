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

// -----

// A returned view at an offset: the runtime's copies take the aligned
// pointer, so it is refused rather than copied from the wrong place.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<4x8xf32>) kernel { gpu.return }
  }
  func.func @offset_view() -> memref<8xf32, strided<[1], offset: 8>> {
    %c1 = arith.constant 1 : index
    %y = memref.alloc() : memref<4x8xf32>
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%y : memref<4x8xf32>)
    %row = memref.subview %y[1, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: 8>>
    // expected-error @+1 {{cachet-device-buffers: a returned view of a device buffer is not contiguous at offset 0}}
    return %row : memref<8xf32, strided<[1], offset: 8>>
  }
}

// -----

// A kernel buffer allocated in a loop and yielded out of it cannot be freed
// in the loop: a diagnostic, not a leak or a free of a live buffer.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<16xf32>) kernel { gpu.return }
  }
  func.func @loop_escape(%n: index, %init: memref<16xf32>) -> memref<16xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%b = %init) -> memref<16xf32> {
      // expected-error @+1 {{cachet-device-buffers: a kernel buffer allocated inside a loop or branch leaves it (yielded or used after it); it cannot be freed there}}
      %t = memref.alloc() : memref<16xf32>
      gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%t : memref<16xf32>)
      scf.yield %t : memref<16xf32>
    }
    return %r : memref<16xf32>
  }
}
