// IR lowered by upstream passes (gpu-to-llvm with the bare-pointer and
// interspersed-size kernel convention, SPIR-V from gpu-module-to-binary) runs
// under mlir-runner with libcachet_runtime.so providing the mgpu* functions:
// once with host memrefs as kernel arguments, once with device buffers from
// gpu.alloc that stay resident across two launches.
// REQUIRES: vulkan

// RUN: mlir-opt %s -convert-scf-to-cf -test-vulkan-runner-pipeline > %t.mlir
// RUN: mlir-runner %t.mlir -e host_memory --entry-point-result=void \
// RUN:   --shared-libs=%cachet_lib_dir/libcachet_runtime.so,%mlir_runner_utils \
// RUN:   | FileCheck %s --check-prefix=HOST
// RUN: mlir-runner %t.mlir -e device_memory --entry-point-result=void \
// RUN:   --shared-libs=%cachet_lib_dir/libcachet_runtime.so,%mlir_runner_utils \
// RUN:   | FileCheck %s --check-prefix=DEVICE

// out = 2 * x + 10 with x = 0..15.
// HOST: [10,  12,  14,  16,  18,  20,  22,  24,  26,  28,  30,  32,  34,  36,  38,  40]
// Twice on the device: 2 * (2 * x + 10) + 10.
// DEVICE: [30,  34,  38,  42,  46,  50,  54,  58,  62,  66,  70,  74,  78,  82,  86,  90]

module attributes {
  gpu.container_module,
  spirv.target_env = #spirv.target_env<
    #spirv.vce<v1.0, [Shader], [SPV_KHR_storage_buffer_storage_class]>,
    #spirv.resource_limits<>>
} {
  gpu.module @kernels {
    gpu.func @twice_plus(%x: memref<16xf32>, %y: memref<16xf32>,
                         %out: memref<16xf32>) kernel attributes {
        spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [4, 1, 1]>} {
      %i = gpu.global_id x
      %a = memref.load %x[%i] : memref<16xf32>
      %b = memref.load %y[%i] : memref<16xf32>
      %two = arith.constant 2.0 : f32
      %a2 = arith.mulf %a, %two : f32
      %s = arith.addf %a2, %b : f32
      memref.store %s, %out[%i] : memref<16xf32>
      gpu.return
    }
  }

  func.func @inputs() -> (memref<16xf32>, memref<16xf32>, memref<16xf32>) {
    %x = memref.alloc() : memref<16xf32>
    %y = memref.alloc() : memref<16xf32>
    %out = memref.alloc() : memref<16xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %ten = arith.constant 10.0 : f32
    %zero = arith.constant 0.0 : f32
    scf.for %i = %c0 to %c16 step %c1 {
      %ii = arith.index_cast %i : index to i32
      %f = arith.sitofp %ii : i32 to f32
      memref.store %f, %x[%i] : memref<16xf32>
      memref.store %ten, %y[%i] : memref<16xf32>
      memref.store %zero, %out[%i] : memref<16xf32>
    }
    return %x, %y, %out : memref<16xf32>, memref<16xf32>, memref<16xf32>
  }

  func.func @host_memory() {
    %x, %y, %out = call @inputs()
        : () -> (memref<16xf32>, memref<16xf32>, memref<16xf32>)
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @kernels::@twice_plus
        blocks in (%c4, %c1, %c1) threads in (%c4, %c1, %c1)
        args(%x : memref<16xf32>, %y : memref<16xf32>, %out : memref<16xf32>)
    %p = memref.cast %out : memref<16xf32> to memref<*xf32>
    call @printMemrefF32(%p) : (memref<*xf32>) -> ()
    return
  }

  func.func @device_memory() {
    %x, %y, %out = call @inputs()
        : () -> (memref<16xf32>, memref<16xf32>, memref<16xf32>)
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %t0 = gpu.wait async
    %dx, %t1 = gpu.alloc async [%t0] () : memref<16xf32>
    %dy, %t2 = gpu.alloc async [%t1] () : memref<16xf32>
    %dout, %t3 = gpu.alloc async [%t2] () : memref<16xf32>
    %t4 = gpu.memcpy async [%t3] %dx, %x : memref<16xf32>, memref<16xf32>
    %t5 = gpu.memcpy async [%t4] %dy, %y : memref<16xf32>, memref<16xf32>
    %t6 = gpu.launch_func async [%t5] @kernels::@twice_plus
        blocks in (%c4, %c1, %c1) threads in (%c4, %c1, %c1)
        args(%dx : memref<16xf32>, %dy : memref<16xf32>, %dout : memref<16xf32>)
    %t7 = gpu.launch_func async [%t6] @kernels::@twice_plus
        blocks in (%c4, %c1, %c1) threads in (%c4, %c1, %c1)
        args(%dout : memref<16xf32>, %dy : memref<16xf32>, %dx : memref<16xf32>)
    %t8 = gpu.memcpy async [%t7] %out, %dx : memref<16xf32>, memref<16xf32>
    %t9 = gpu.dealloc async [%t8] %dx : memref<16xf32>
    %t10 = gpu.dealloc async [%t9] %dy : memref<16xf32>
    %t11 = gpu.dealloc async [%t10] %dout : memref<16xf32>
    gpu.wait [%t11]
    %p = memref.cast %out : memref<16xf32> to memref<*xf32>
    call @printMemrefF32(%p) : (memref<*xf32>) -> ()
    return
  }

  func.func private @printMemrefF32(%ptr: memref<*xf32>)
}
