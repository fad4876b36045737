// RUN: cachet-opt %s -split-input-file -verify-diagnostics -cachet-device-buffers | FileCheck %s
// RUN: cachet-opt %s -split-input-file -cachet-device-buffers=resident-constants=false | FileCheck %s --check-prefix=PERCALL

// An argument goes through the runtime's cachetMgpuArgument (its resident
// device copy where the caller bound one, else an upload) and is ended by
// cachetMgpuArgumentEnd at the return (0: not written).
// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[X:.*]]: memref<16xf32>)
// CHECK: %[[XP:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: %[[P:.*]] = llvm.call @cachetMgpuArgument(%{{.*}}, %{{.*}}) : (!llvm.ptr, i64) -> !llvm.ptr
// CHECK: llvm.insertvalue %[[P]], %{{.*}}[0]
// CHECK: %[[DX:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<16xf32>
// CHECK: %[[Y:.*]] = gpu.alloc () : memref<16xf32>
// CHECK: %[[T:.*]] = gpu.alloc () : memref<16xf32>
// CHECK: gpu.launch_func @k::@k {{.*}} args(%[[DX]] : memref<16xf32>, %[[Y]] : memref<16xf32>)
// CHECK: gpu.memcpy %[[T]], %[[Y]]
// CHECK: gpu.dealloc %[[Y]]
// CHECK: %[[H:.*]] = memref.alloc() : memref<16xf32>
// CHECK: gpu.memcpy %[[H]], %[[T]]
// CHECK: gpu.dealloc %[[T]]
// CHECK-NOT: gpu.dealloc %[[DX]]
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: llvm.call @cachetMgpuArgumentEnd(%{{.*}}, %[[P]], %{{.*}}, %[[ZERO]]) : (!llvm.ptr, !llvm.ptr, i64, i32) -> ()
// CHECK: return %[[H]]
// CHECK: llvm.func @cachetMgpuArgument(!llvm.ptr, i64) -> !llvm.ptr
// CHECK: llvm.func @cachetMgpuArgumentEnd(!llvm.ptr, !llvm.ptr, i64, i32)
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<16xf32>, %b: memref<16xf32>) kernel { gpu.return }
  }
  func.func @f(%x: memref<16xf32>) -> memref<16xf32> {
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %y = memref.alloc() : memref<16xf32>
    %t = memref.alloc() : memref<16xf32>
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
        args(%x : memref<16xf32>, %y : memref<16xf32>)
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
        args(%t : memref<16xf32>, %t : memref<16xf32>)
    memref.copy %y, %t : memref<16xf32> to memref<16xf32>
    memref.dealloc %y : memref<16xf32>
    return %t : memref<16xf32>
  }
}

// -----

// Dynamic shapes keep their sizes.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[N:.*]] = memref.dim %{{.*}}, %c0
// CHECK: gpu.alloc (%[[N]]) : memref<?xf32>
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<?xf32>) kernel { gpu.return }
  }
  func.func @dynamic(%x: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    return
  }
}

// -----

// An argument a kernel writes (a KV cache appended in place) is copied back
// to the caller's buffer before the return, and a result that is that
// argument is returned as the argument itself, as in the CPU reference. An
// argument the kernels only read is not copied back.
// CHECK-LABEL: func.func @in_place
// CHECK-SAME: (%[[C:.*]]: memref<8x4xf32>, %[[X:.*]]: memref<2x4xf32>)
// CHECK: %[[PC:.*]] = llvm.call @cachetMgpuArgument(%{{.*}}, %{{.*}})
// CHECK: %[[DC:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<8x4xf32>
// CHECK: %[[PX:.*]] = llvm.call @cachetMgpuArgument(%{{.*}}, %{{.*}})
// CHECK: %[[DX:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<2x4xf32>
// CHECK: %[[S:.*]] = memref.subview %[[DC]][3, 0] [2, 4] [1, 1]
// CHECK: gpu.launch_func @k::@append {{.*}} args(%[[DX]] : memref<2x4xf32>, %[[S]] :
// CHECK: %[[NO:.*]] = arith.constant 0 : i32
// CHECK: llvm.call @cachetMgpuArgumentEnd(%{{.*}}, %[[PX]], %{{.*}}, %[[NO]])
// CHECK: %[[YES:.*]] = arith.constant 1 : i32
// CHECK: llvm.call @cachetMgpuArgumentEnd(%{{.*}}, %[[PC]], %{{.*}}, %[[YES]])
// CHECK: return %[[C]]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @append(%src: memref<2x4xf32>, %dst: memref<2x4xf32, strided<[4, 1], offset: 12>>) kernel {
      %i = gpu.thread_id x
      %j = gpu.block_id x
      %v = memref.load %src[%j, %i] : memref<2x4xf32>
      memref.store %v, %dst[%j, %i] : memref<2x4xf32, strided<[4, 1], offset: 12>>
      gpu.return
    }
  }
  func.func @in_place(%cache: memref<8x4xf32>, %x: memref<2x4xf32>) -> memref<8x4xf32> {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %slot = memref.subview %cache[3, 0] [2, 4] [1, 1] : memref<8x4xf32> to memref<2x4xf32, strided<[4, 1], offset: 12>>
    gpu.launch_func @k::@append blocks in (%c2, %c1, %c1) threads in (%c4, %c1, %c1)
        args(%x : memref<2x4xf32>, %slot : memref<2x4xf32, strided<[4, 1], offset: 12>>)
    return %cache : memref<8x4xf32>
  }
}

// -----

// A constant (a memref.get_global of a constant global) that a kernel reads
// stays resident: the runtime uploads it on the first call into the module's
// slot for it, and it is never freed or copied back.
// CHECK-LABEL: func.func @constant_weight
// CHECK: %[[G:.*]] = memref.get_global @w : memref<4x4xf32>
// CHECK: %[[SLOT:.*]] = llvm.mlir.addressof @__cachet_resident_w
// CHECK: %[[DEV:.*]] = llvm.call @cachetMgpuResident(%[[SLOT]], %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
// CHECK: llvm.insertvalue %[[DEV]], %{{.*}}[0]
// CHECK: %[[DG:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<4x4xf32>
// CHECK: gpu.launch_func @k::@k {{.*}} args(%[[DG]] : memref<4x4xf32>
// CHECK-NOT: gpu.memcpy %[[G]]
// CHECK-NOT: gpu.dealloc %[[DG]]
// CHECK: return
// CHECK: llvm.mlir.global internal @__cachet_resident_w() {{.*}} : !llvm.ptr
// CHECK-NEXT: llvm.mlir.zero
// CHECK: llvm.func @cachetMgpuResident(!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
// With resident-constants=false it is uploaded where it is taken, on every
// call, and never copied back.
// PERCALL-LABEL: func.func @constant_weight
// PERCALL: %[[G:.*]] = memref.get_global @w : memref<4x4xf32>
// PERCALL-NEXT: %[[DG:.*]] = gpu.alloc () : memref<4x4xf32>
// PERCALL-NEXT: gpu.memcpy %[[DG]], %[[G]]
// PERCALL: gpu.launch_func @k::@k {{.*}} args(%[[DG]] : memref<4x4xf32>
// PERCALL-NOT: gpu.memcpy %[[G]]
// PERCALL: gpu.dealloc %[[DG]]
module attributes {gpu.container_module} {
  memref.global "private" constant @w : memref<4x4xf32> = dense<1.0>
  gpu.module @k {
    gpu.func @k(%w: memref<4x4xf32>, %y: memref<4xf32>) kernel { gpu.return }
  }
  func.func @constant_weight() -> memref<4xf32> {
    %c1 = arith.constant 1 : index
    // expected-remark @below {{cachet-device-buffers: constant @w stays resident on the device (uploaded on the first call)}}
    %w = memref.get_global @w : memref<4x4xf32>
    %y = memref.alloc() : memref<4xf32>
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%w : memref<4x4xf32>, %y : memref<4xf32>)
    return %y : memref<4xf32>
  }
}

// -----

// A mutable global the device writes is copied back like an argument.
// CHECK-LABEL: func.func @mutable_global
// CHECK: %[[G:.*]] = memref.get_global @state
// CHECK: %[[DG:.*]] = gpu.alloc
// CHECK: gpu.launch_func
// CHECK: gpu.memcpy %[[G]], %[[DG]]
module attributes {gpu.container_module} {
  memref.global "private" @state : memref<4xf32> = dense<0.0>
  gpu.module @k {
    gpu.func @k(%s: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %s[%c0] : memref<4xf32>
      gpu.return
    }
  }
  func.func @mutable_global() {
    %c1 = arith.constant 1 : index
    %s = memref.get_global @state : memref<4xf32>
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%s : memref<4xf32>)
    return
  }
}

// -----

// A returned prefix of a device buffer with a dynamic size, cast to an
// identity layout (as bufferization returns an extract_slice): contiguous
// from offset 0, so copied to the host like a whole buffer.
// CHECK-LABEL: func.func @dynamic_prefix
// CHECK: %[[D:.*]] = gpu.alloc () : memref<4x8xf32>
// CHECK: %[[V:.*]] = memref.cast
// CHECK: %[[H:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: gpu.memcpy %[[H]], %[[V]] : memref<?xf32>, memref<?xf32>
// CHECK: return %[[H]]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<4x8xf32>) kernel { gpu.return }
  }
  func.func @dynamic_prefix(%n: index) -> memref<?xf32> {
    %c1 = arith.constant 1 : index
    %y = memref.alloc() : memref<4x8xf32>
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%y : memref<4x8xf32>)
    %prefix = memref.subview %y[0, 0] [1, %n] [1, 1] : memref<4x8xf32> to memref<?xf32, strided<[1]>>
    %cast = memref.cast %prefix : memref<?xf32, strided<[1]>> to memref<?xf32>
    return %cast : memref<?xf32>
  }
}

// -----

// A kernel buffer allocated in a loop body (a chunked attention's
// temporaries) is freed at the end of each iteration.
// CHECK-LABEL: func.func @loop_temporary
// CHECK: scf.for
// CHECK: %[[T:.*]] = gpu.alloc () : memref<16xf32>
// CHECK: gpu.launch_func @k::@k {{.*}} args(%[[T]] : memref<16xf32>)
// CHECK: gpu.dealloc %[[T]] : memref<16xf32>
// CHECK-NEXT: }
// CHECK-NOT: gpu.dealloc %[[T]]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<16xf32>) kernel { gpu.return }
  }
  func.func @loop_temporary(%n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %n step %c1 {
      %t = memref.alloc() : memref<16xf32>
      gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%t : memref<16xf32>)
    }
    return
  }
}

// -----

// Temporaries are freed right after the last work that uses them (through
// views too; a host loop using one counts as its use), not at the return:
// %a after the second launch, %s after the loop; the returned %r stays
// until the return.
// CHECK-LABEL: func.func @early_free
// CHECK: %[[A:.*]] = gpu.alloc () : memref<16xf32>
// CHECK: %[[S:.*]] = gpu.alloc () : memref<32xf32>
// CHECK: %[[R:.*]] = gpu.alloc () : memref<16xf32>
// CHECK: gpu.launch_func @k::@k {{.*}} args(%[[A]] : memref<16xf32>, %[[R]] : memref<16xf32>)
// CHECK: %[[V:.*]] = memref.subview %[[A]][0] [8] [1]
// CHECK: gpu.launch_func @k::@v {{.*}} args(%[[V]]
// CHECK-NEXT: gpu.dealloc %[[A]]
// CHECK: scf.for
// CHECK: gpu.launch_func @k::@k {{.*}} args(%{{.*}} : memref<16xf32>, %[[R]] : memref<16xf32>)
// CHECK: }
// CHECK-NEXT: gpu.dealloc %[[S]]
// CHECK: gpu.memcpy %{{.*}}, %[[R]]
// CHECK: gpu.dealloc %[[R]]
// CHECK-NOT: gpu.dealloc
// CHECK: return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<16xf32>, %b: memref<16xf32>) kernel { gpu.return }
    gpu.func @v(%a: memref<8xf32, strided<[1]>>) kernel { gpu.return }
  }
  func.func @early_free() -> memref<16xf32> {
    // expected-remark @-1 {{cachet-device-buffers: 2 device temporaries freed after the last work that uses them}}
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %a = memref.alloc() : memref<16xf32>
    %s = memref.alloc() : memref<32xf32>
    %r = memref.alloc() : memref<16xf32>
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
        args(%a : memref<16xf32>, %r : memref<16xf32>)
    %v = memref.subview %a[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
    gpu.launch_func @k::@v blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
        args(%v : memref<8xf32, strided<[1]>>)
    scf.for %i = %c0 to %c2 step %c1 {
      %off = arith.muli %i, %c16 : index
      %h = memref.subview %s[%off] [16] [1] : memref<32xf32> to memref<16xf32, strided<[1], offset: ?>>
      %hc = memref.cast %h : memref<16xf32, strided<[1], offset: ?>> to memref<16xf32>
      gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
          args(%hc : memref<16xf32>, %r : memref<16xf32>)
    }
    return %r : memref<16xf32>
  }
}
