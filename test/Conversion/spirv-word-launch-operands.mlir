// RUN: cachet-opt %s -split-input-file -cachet-spirv-word-launch-operands | FileCheck %s

// After gpu-module-to-binary: the launch operands of buffers of vector
// words (cachet-spirv-word-loads) are cast to buffers of their i32
// elements, the same bytes (upstream's gpu-to-llvm takes the size it passes
// with each buffer only from int or float elements); other operands stay.
// CHECK-LABEL: func.func @launch
// CHECK-SAME: (%[[W:.*]]: memref<64x128xf16>, %[[X:.*]]: memref<128xbf16>, %[[Y:.*]]: memref<64xf32>, %[[P:.*]]: memref<64x136xf16>)
// CHECK: %[[WV:.*]] = builtin.unrealized_conversion_cast %[[W]] : memref<64x128xf16> to memref<64x32xvector<2xi32>>
// CHECK: %[[XV:.*]] = builtin.unrealized_conversion_cast %[[X]] : memref<128xbf16> to memref<16xvector<4xi32>>
// CHECK: %[[PV:.*]] = builtin.unrealized_conversion_cast %[[P]] : memref<64x136xf16> to memref<64x16xvector<4xi32>, strided<[17, 1]>>
// CHECK: %[[WS:.*]] = builtin.unrealized_conversion_cast %[[WV]] : memref<64x32xvector<2xi32>> to memref<64x64xi32>
// CHECK: %[[XS:.*]] = builtin.unrealized_conversion_cast %[[XV]] : memref<16xvector<4xi32>> to memref<64xi32>
// CHECK: %[[PS:.*]] = builtin.unrealized_conversion_cast %[[PV]] : memref<64x16xvector<4xi32>, strided<[17, 1]>> to memref<64x64xi32, strided<[68, 1]>>
// CHECK: gpu.launch_func @k::@mv {{.*}} args(%[[WS]] : memref<64x64xi32>, %[[XS]] : memref<64xi32>, %[[Y]] : memref<64xf32>, %[[PS]] : memref<64x64xi32, strided<[68, 1]>>)
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#spirv.target_env<#spirv.vce<v1.3, [Shader], [SPV_KHR_storage_buffer_storage_class]>, #spirv.resource_limits<>>, "">]
  func.func @launch(%w: memref<64x128xf16>, %x: memref<128xbf16>, %y: memref<64xf32>, %p: memref<64x136xf16>) {
    %c1 = arith.constant 1 : index
    %wv = builtin.unrealized_conversion_cast %w : memref<64x128xf16> to memref<64x32xvector<2xi32>>
    %xv = builtin.unrealized_conversion_cast %x : memref<128xbf16> to memref<16xvector<4xi32>>
    %pv = builtin.unrealized_conversion_cast %p : memref<64x136xf16> to memref<64x16xvector<4xi32>, strided<[17, 1]>>
    gpu.launch_func @k::@mv blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%wv : memref<64x32xvector<2xi32>>, %xv : memref<16xvector<4xi32>>, %y : memref<64xf32>,
             %pv : memref<64x16xvector<4xi32>, strided<[17, 1]>>)
    return
  }
}
