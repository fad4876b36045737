// RUN: cachet-opt %s -split-input-file -cachet-select-kernel-configs 2>/dev/null | FileCheck %s --check-prefix=CONFIG
// RUN: cachet-opt %s -split-input-file -pass-pipeline='builtin.module(cachet-select-kernel-configs,func.func(cachet-lower-dequant-transpose))' -verify-diagnostics | FileCheck %s

// The dequant-transpose of 64 positions, 2 heads, D 64 of q4_0 after
// bufferization (cachet-lower-to-linalg's marked generic). The select pass
// puts its config on it (16 positions of 2 x 36 B per workgroup, 16-byte
// loads, 8 values per store); cachet-lower-dequant-transpose builds it.

#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// CONFIG-LABEL: func.func @chosen
// CONFIG: cachet.kernel_config = #cachet.kernel_config<variant = dequant_transpose_staged, tile = [16], workgroup = 256, vector_width = 8, load_bytes = 16>
// CHECK-LABEL: func.func @chosen
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c4, {{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}}) workgroup(%{{.*}} : memref<288xi32, 3>)
// CHECK: vector.load {{.*}} : memref<4608xi8>, vector<16xi8>
// CHECK: vector.store {{.*}} : memref<2x64x64xf16>, vector<8xf16>

  func.func @chosen(%arg0: memref<64x2x36xi8> {cachet.block_format = "q4_0"}) -> memref<2x64x64xf16> {
    %c15_i32 = arith.constant 15 : i32
    %c4_i32 = arith.constant 4 : i32
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %c1 = arith.constant 1 : index
    %c8_i32 = arith.constant 8 : i32
    %c18 = arith.constant 18 : index
    %c32 = arith.constant 32 : index
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<2x64x64xf16>
    // expected-remark @below {{dequant-transpose: 16 positions (1152 B) per workgroup of 256 threads, 16 B loads, 8 values per store}}
    linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel"]} outs(%alloc : memref<2x64x64xf16>) attrs =  {cachet.dequant_transpose = !cachet.q4_0} {
    ^bb0(%out: f16):
      %0 = linalg.index 1 : index
      %1 = linalg.index 0 : index
      %2 = linalg.index 2 : index
      %3 = arith.divui %2, %c32 : index
      %4 = arith.muli %3, %c18 : index
      %5 = arith.remui %2, %c32 : index
      %6 = memref.load %arg0[%0, %1, %4] : memref<64x2x36xi8>
      %7 = arith.extui %6 : i8 to i32
      %8 = arith.addi %4, %c1 : index
      %9 = memref.load %arg0[%0, %1, %8] : memref<64x2x36xi8>
      %10 = arith.extui %9 : i8 to i32
      %11 = arith.shli %10, %c8_i32 : i32
      %12 = arith.ori %7, %11 : i32
      %13 = arith.trunci %12 : i32 to i16
      %14 = arith.bitcast %13 : i16 to f16
      %15 = arith.extf %14 : f16 to f32
      %16 = arith.remui %5, %c16 : index
      %17 = arith.divui %5, %c16 : index
      %18 = arith.addi %4, %16 : index
      %19 = arith.addi %18, %c2 : index
      %20 = memref.load %arg0[%0, %1, %19] : memref<64x2x36xi8>
      %21 = arith.extui %20 : i8 to i32
      %22 = arith.index_castui %17 : index to i32
      %23 = arith.muli %22, %c4_i32 : i32
      %24 = arith.shrui %21, %23 : i32
      %25 = arith.andi %24, %c15_i32 : i32
      %26 = arith.subi %25, %c8_i32 : i32
      %27 = arith.sitofp %26 : i32 to f32
      %28 = arith.mulf %15, %27 : f32
      %29 = arith.truncf %28 : f32 to f16
      linalg.yield %29 : f16
    }
    return %alloc : memref<2x64x64xf16>
  }


// -----

// A config written in the input overrides the cost model: 4 positions per
// workgroup of 64 threads, 8-byte loads, 4 values per store.

#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @written
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c16{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c64{{.*}}) workgroup(%{{.*}} : memref<72xi32, 3>)
// CHECK: vector.load {{.*}} : memref<4608xi8>, vector<8xi8>
// CHECK: vector.store {{.*}} : memref<2x64x64xf16>, vector<4xf16>

  func.func @written(%arg0: memref<64x2x36xi8> {cachet.block_format = "q4_0"}) -> memref<2x64x64xf16> {
    %c15_i32 = arith.constant 15 : i32
    %c4_i32 = arith.constant 4 : i32
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %c1 = arith.constant 1 : index
    %c8_i32 = arith.constant 8 : i32
    %c18 = arith.constant 18 : index
    %c32 = arith.constant 32 : index
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<2x64x64xf16>
    // expected-remark @below {{the config in the IR is kept}}
    linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel"]} outs(%alloc : memref<2x64x64xf16>) attrs =  {cachet.dequant_transpose = !cachet.q4_0, cachet.kernel_config = #cachet.kernel_config<variant = dequant_transpose_staged, tile = [4], workgroup = 64, vector_width = 4, load_bytes = 8>} {
    ^bb0(%out: f16):
      %0 = linalg.index 1 : index
      %1 = linalg.index 0 : index
      %2 = linalg.index 2 : index
      %3 = arith.divui %2, %c32 : index
      %4 = arith.muli %3, %c18 : index
      %5 = arith.remui %2, %c32 : index
      %6 = memref.load %arg0[%0, %1, %4] : memref<64x2x36xi8>
      %7 = arith.extui %6 : i8 to i32
      %8 = arith.addi %4, %c1 : index
      %9 = memref.load %arg0[%0, %1, %8] : memref<64x2x36xi8>
      %10 = arith.extui %9 : i8 to i32
      %11 = arith.shli %10, %c8_i32 : i32
      %12 = arith.ori %7, %11 : i32
      %13 = arith.trunci %12 : i32 to i16
      %14 = arith.bitcast %13 : i16 to f16
      %15 = arith.extf %14 : f16 to f32
      %16 = arith.remui %5, %c16 : index
      %17 = arith.divui %5, %c16 : index
      %18 = arith.addi %4, %16 : index
      %19 = arith.addi %18, %c2 : index
      %20 = memref.load %arg0[%0, %1, %19] : memref<64x2x36xi8>
      %21 = arith.extui %20 : i8 to i32
      %22 = arith.index_castui %17 : index to i32
      %23 = arith.muli %22, %c4_i32 : i32
      %24 = arith.shrui %21, %23 : i32
      %25 = arith.andi %24, %c15_i32 : i32
      %26 = arith.subi %25, %c8_i32 : i32
      %27 = arith.sitofp %26 : i32 to f32
      %28 = arith.mulf %15, %27 : f32
      %29 = arith.truncf %28 : f32 to f16
      linalg.yield %29 : f16
    }
    return %alloc : memref<2x64x64xf16>
  }


// -----

// A config the kernel cannot build is an error naming the cause.

#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

  func.func @unbuildable(%arg0: memref<64x2x36xi8> {cachet.block_format = "q4_0"}) -> memref<2x64x64xf16> {
    %c15_i32 = arith.constant 15 : i32
    %c4_i32 = arith.constant 4 : i32
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %c1 = arith.constant 1 : index
    %c8_i32 = arith.constant 8 : i32
    %c18 = arith.constant 18 : index
    %c32 = arith.constant 32 : index
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<2x64x64xf16>
    // expected-remark @below {{the config in the IR is kept}}
    // expected-error @below {{cannot build #cachet.kernel_config<variant = dequant_transpose_staged, tile = [5], workgroup = 64, vector_width = 8, load_bytes = 16>: 64 positions are not a multiple of tile 5}}
    linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel"]} outs(%alloc : memref<2x64x64xf16>) attrs =  {cachet.dequant_transpose = !cachet.q4_0, cachet.kernel_config = #cachet.kernel_config<variant = dequant_transpose_staged, tile = [5], workgroup = 64, vector_width = 8, load_bytes = 16>} {
    ^bb0(%out: f16):
      %0 = linalg.index 1 : index
      %1 = linalg.index 0 : index
      %2 = linalg.index 2 : index
      %3 = arith.divui %2, %c32 : index
      %4 = arith.muli %3, %c18 : index
      %5 = arith.remui %2, %c32 : index
      %6 = memref.load %arg0[%0, %1, %4] : memref<64x2x36xi8>
      %7 = arith.extui %6 : i8 to i32
      %8 = arith.addi %4, %c1 : index
      %9 = memref.load %arg0[%0, %1, %8] : memref<64x2x36xi8>
      %10 = arith.extui %9 : i8 to i32
      %11 = arith.shli %10, %c8_i32 : i32
      %12 = arith.ori %7, %11 : i32
      %13 = arith.trunci %12 : i32 to i16
      %14 = arith.bitcast %13 : i16 to f16
      %15 = arith.extf %14 : f16 to f32
      %16 = arith.remui %5, %c16 : index
      %17 = arith.divui %5, %c16 : index
      %18 = arith.addi %4, %16 : index
      %19 = arith.addi %18, %c2 : index
      %20 = memref.load %arg0[%0, %1, %19] : memref<64x2x36xi8>
      %21 = arith.extui %20 : i8 to i32
      %22 = arith.index_castui %17 : index to i32
      %23 = arith.muli %22, %c4_i32 : i32
      %24 = arith.shrui %21, %23 : i32
      %25 = arith.andi %24, %c15_i32 : i32
      %26 = arith.subi %25, %c8_i32 : i32
      %27 = arith.sitofp %26 : i32 to f32
      %28 = arith.mulf %15, %27 : f32
      %29 = arith.truncf %28 : f32 to f16
      linalg.yield %29 : f16
    }
    return %alloc : memref<2x64x64xf16>
  }

