// Debian's own mlir-opt loads cachet as a dialect and pass plugin.
// RUN: mlir-opt %s --load-dialect-plugin=%cachet_lib_dir/libCachetPlugin.so --load-pass-plugin=%cachet_lib_dir/libCachetPlugin.so --pass-pipeline='builtin.module(cachet-attach-device{profile=gfx1151})' | FileCheck %s
// Without the plugin the dialect is unknown.
// RUN: not mlir-opt %s 2>&1 | FileCheck %s --check-prefix=NOPLUGIN

// CHECK: module attributes {cachet.device = #cachet.device<name = "gfx1151"
// CHECK-LABEL: func.func @f
// CHECK: cachet.dequantize %{{.*}} : tensor<16x2x4x!cachet.q4_0> -> tensor<16x2x128xf16>
// NOPLUGIN: type created with unregistered dialect
func.func @f(%a: tensor<16x2x4x!cachet.q4_0>) -> tensor<16x2x128xf16> {
  %0 = cachet.dequantize %a : tensor<16x2x4x!cachet.q4_0> -> tensor<16x2x128xf16>
  return %0 : tensor<16x2x128xf16>
}
