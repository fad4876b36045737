// RUN: cachet-opt %s -split-input-file -pass-pipeline="builtin.module(func.func(cachet-stream-loops))" -verify-diagnostics | FileCheck %s

// A loop as gpu-async-region leaves it: the work before it waited for,
// a stream created, used and synchronized per iteration, a new stream
// after it. The iterations go on the stream of the work before the loop,
// and the work after it continues there.

// CHECK-LABEL: func.func @moved
// CHECK-SAME: (%[[BUF:.*]]: memref<64xf32>, %[[N:.*]]: index)
// CHECK: %[[T:.*]] = gpu.launch_func async [%{{.*}}] @k::@k
// CHECK-NOT: gpu.wait
// CHECK: scf.for %[[I:.*]] =
// CHECK-NEXT: arith.addi
// CHECK-NEXT: %[[A:.*]] = gpu.launch_func async [%[[T]]] @k::@k
// CHECK-NEXT: }
// CHECK-NEXT: %[[B:.*]] = gpu.launch_func async [%[[T]]] @k::@k
// CHECK-NEXT: gpu.wait [%[[B]]]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%buf: memref<64xf32>, %i: index) kernel {
      gpu.return
    }
  }
  func.func @moved(%buf: memref<64xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %s0 = gpu.wait async
    %t = gpu.launch_func async [%s0] @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<64xf32>, %c0 : index)
    gpu.wait [%t]
    // expected-remark @below {{cachet-stream-loops: the loop's GPU work stays on the stream of the work before it}}
    scf.for %i = %c0 to %n step %c1 {
      %j = arith.addi %i, %c1 : index
      %s = gpu.wait async
      %a = gpu.launch_func async [%s] @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<64xf32>, %j : index)
      gpu.wait [%a]
    }
    %u = gpu.wait async
    %b = gpu.launch_func async [%u] @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<64xf32>, %c0 : index)
    gpu.wait [%b]
    return
  }
}

// -----

// Nothing GPU after the loop: the host waits for the stream right after it.

// CHECK-LABEL: func.func @wait_after
// CHECK: %[[T:.*]] = gpu.launch_func async [
// CHECK: scf.for
// CHECK-NEXT: gpu.launch_func async [%[[T]]]
// CHECK-NEXT: }
// CHECK-NEXT: gpu.wait [%[[T]]]
// CHECK-NEXT: memref.store
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%buf: memref<64xf32>) kernel {
      gpu.return
    }
  }
  func.func @wait_after(%buf: memref<64xf32>, %n: index, %x: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %s0 = gpu.wait async
    %t = gpu.launch_func async [%s0] @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<64xf32>)
    gpu.wait [%t]
    // expected-remark @below {{the loop's GPU work stays on the stream}}
    scf.for %i = %c0 to %n step %c1 {
      %s = gpu.wait async
      %a = gpu.launch_func async [%s] @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<64xf32>)
      gpu.wait [%a]
    }
    memref.store %x, %buf[%c0] : memref<64xf32>
    return
  }
}

// -----

// Negative: a host op with memory effects in the body must see each
// iteration's GPU work finished; the loop is kept as it is.

// CHECK-LABEL: func.func @host_memory
// CHECK: scf.for
// CHECK-NEXT: gpu.wait async
// CHECK-NEXT: gpu.launch_func
// CHECK-NEXT: gpu.wait [
// CHECK-NEXT: memref.store
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%buf: memref<64xf32>) kernel {
      gpu.return
    }
  }
  func.func @host_memory(%buf: memref<64xf32>, %n: index, %x: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %s0 = gpu.wait async
    %t = gpu.launch_func async [%s0] @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<64xf32>)
    gpu.wait [%t]
    // expected-remark @below {{cachet-stream-loops: kept: its body does not end by waiting for its GPU work}}
    scf.for %i = %c0 to %n step %c1 {
      %s = gpu.wait async
      %a = gpu.launch_func async [%s] @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<64xf32>)
      gpu.wait [%a]
      memref.store %x, %buf[%i] : memref<64xf32>
    }
    return
  }
}

// -----

// Negative: a host op with memory effects inside the chain.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%buf: memref<64xf32>) kernel {
      gpu.return
    }
  }
  func.func @host_load(%buf: memref<64xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %s0 = gpu.wait async
    %t = gpu.launch_func async [%s0] @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<64xf32>)
    gpu.wait [%t]
    // expected-remark @below {{cachet-stream-loops: kept: its body holds a host op with memory effects: 'memref.load'}}
    scf.for %i = %c0 to %n step %c1 {
      %s = gpu.wait async
      %v = memref.load %buf[%i] : memref<64xf32>
      %a = gpu.launch_func async [%s] @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<64xf32>)
      gpu.wait [%a]
    }
    return
  }
}

// -----

// Negative: no GPU work waited for right before the loop (the loop is the
// function's first GPU work): kept, and said so.

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%buf: memref<64xf32>) kernel {
      gpu.return
    }
  }
  func.func @first(%buf: memref<64xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    // expected-remark @below {{cachet-stream-loops: kept: no GPU work is waited for right before the loop}}
    scf.for %i = %c0 to %n step %c1 {
      %s = gpu.wait async
      %a = gpu.launch_func async [%s] @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<64xf32>)
      gpu.wait [%a]
    }
    return
  }
}

// -----

// A loop without GPU work is none of this pass's business: no remark.

// CHECK-LABEL: func.func @host_only
// CHECK: scf.for
// CHECK-NEXT: memref.store
func.func @host_only(%buf: memref<64xf32>, %n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    memref.store %x, %buf[%i] : memref<64xf32>
  }
  return
}
