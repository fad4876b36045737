// RUN: cachet-opt %s -split-input-file -cachet-raise-contractions -verify-diagnostics | FileCheck %s
// RUN: cachet-opt %s -split-input-file -cachet-raise-contractions=fold-transposes=false 2>&1 >/dev/null | FileCheck %s --check-prefix=KEEP
// RUN: cachet-opt %s -split-input-file -cachet-raise-contractions=fold-transposes=false 2>/dev/null | FileCheck %s --check-prefix=KEPT
// RUN: not cachet-opt %s -cachet-raise-contractions=fold-transposes=maybe 2>&1 | FileCheck %s --check-prefix=BADOPT

// BADOPT: for the --fold-transposes option: 'maybe' is invalid value for boolean argument

// A linear layer x W^T as a contraction generic (IREE's and torch-mlir's
// generalized form, cachet-gen --matmul=generic): f16 operands extended to
// the f32 accumulator. Raised to linalg.matmul with the transpose-b maps
// (the form the small-batch mat-vec kernels read).
// CHECK-LABEL: func.func @linear_generic
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xf16>, %[[W:.*]]: tensor<32x64xf16>
// CHECK-NOT: linalg.generic
// CHECK: linalg.matmul indexing_maps = [#[[A:.*]], #[[B:.*]], #[[C:.*]]] ins(%[[X]], %[[W]] : tensor<4x64xf16>, tensor<32x64xf16>)
func.func @linear_generic(%x: tensor<4x64xf16>, %w: tensor<32x64xf16>, %z: tensor<4x32xf32>) -> tensor<4x32xf32> {
  // expected-remark @+1 {{cachet-raise-contractions: raised a contraction generic to linalg.matmul with the transpose-b maps (x W^T, the weight read as its [N][K] rows)}}
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x64xf16>, tensor<32x64xf16>) outs(%z : tensor<4x32xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %ea = arith.extf %a : f16 to f32
    %eb = arith.extf %b : f16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// The weight as the first input, the loops in another order (k first) and
// both operations commuted: the same x W^T, the named op's operands in its
// own order. bf16 operands.
// CHECK-LABEL: func.func @linear_generic_commuted
// CHECK-SAME: (%[[W:.*]]: tensor<32x64xbf16>, %[[X:.*]]: tensor<2x64xbf16>
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[X]], %[[W]] : tensor<2x64xbf16>, tensor<32x64xbf16>)
func.func @linear_generic_commuted(%w: tensor<32x64xbf16>, %x: tensor<2x64xbf16>, %z: tensor<2x32xf32>) -> tensor<2x32xf32> {
  // expected-remark @+1 {{raised a contraction generic to linalg.matmul with the transpose-b maps}}
  %y = linalg.generic {indexing_maps = [affine_map<(k, m, n) -> (n, k)>, affine_map<(k, m, n) -> (m, k)>, affine_map<(k, m, n) -> (m, n)>], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%w, %x : tensor<32x64xbf16>, tensor<2x64xbf16>) outs(%z : tensor<2x32xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %eb, %ea : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x32xf32>
  return %y : tensor<2x32xf32>
}

// -----

// A decode projection y[n] += W[n, k] * x[k] as a generic: linalg.matvec.
// With x first and f32 throughout (no casts) it is the same mat-vec.
// CHECK-LABEL: func.func @matvec_generic
// CHECK-SAME: (%[[W:.*]]: tensor<32x64xf16>, %[[X:.*]]: tensor<64xf16>, %[[W2:.*]]: tensor<16x64xf32>, %[[X2:.*]]: tensor<64xf32>
// CHECK: linalg.matvec ins(%[[W]], %[[X]] : tensor<32x64xf16>, tensor<64xf16>)
// CHECK: linalg.matvec ins(%[[W2]], %[[X2]] : tensor<16x64xf32>, tensor<64xf32>)
func.func @matvec_generic(%w: tensor<32x64xf16>, %x: tensor<64xf16>, %w2: tensor<16x64xf32>, %x2: tensor<64xf32>, %z: tensor<32xf32>, %z2: tensor<16xf32>) -> (tensor<32xf32>, tensor<16xf32>) {
  // expected-remark @+1 {{raised a contraction generic to linalg.matvec}}
  %y = linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (n)>], iterator_types = ["parallel", "reduction"]}
      ins(%w, %x : tensor<32x64xf16>, tensor<64xf16>) outs(%z : tensor<32xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %ea = arith.extf %a : f16 to f32
    %eb = arith.extf %b : f16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  // expected-remark @+1 {{raised a contraction generic to linalg.matvec}}
  %y2 = linalg.generic {indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>], iterator_types = ["parallel", "reduction"]}
      ins(%x2, %w2 : tensor<64xf32>, tensor<16x64xf32>) outs(%z2 : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %y, %y2 : tensor<32xf32>, tensor<16xf32>
}

// -----

// x W with W [in][out] (no transpose): a default-map linalg.matmul, and a
// batched product (attention's Q K^T and P V in the generic form): a
// default-map linalg.batch_matmul, which the attention matcher reads.
// CHECK-LABEL: func.func @matmul_and_batch
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x64xf16>, tensor<64x32xf16>)
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x4x64xf16>, tensor<2x64x8xf16>)
func.func @matmul_and_batch(%x: tensor<4x64xf16>, %w: tensor<64x32xf16>, %z: tensor<4x32xf32>,
                            %q: tensor<2x4x64xf16>, %k: tensor<2x64x8xf16>, %zb: tensor<2x4x8xf32>) -> (tensor<4x32xf32>, tensor<2x4x8xf32>) {
  // expected-remark @+1 {{raised a contraction generic to linalg.matmul (x W, the weight read as [K][N])}}
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x64xf16>, tensor<64x32xf16>) outs(%z : tensor<4x32xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %ea = arith.extf %a : f16 to f32
    %eb = arith.extf %b : f16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x32xf32>
  // expected-remark @+1 {{raised a contraction generic to linalg.batch_matmul}}
  %s = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x64xf16>, tensor<2x64x8xf16>) outs(%zb : tensor<2x4x8xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %ea = arith.extf %a : f16 to f32
    %eb = arith.extf %b : f16 to f32
    %m = arith.mulf %ea, %eb : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  return %y, %s : tensor<4x32xf32>, tensor<2x4x8xf32>
}

// -----

// torch-mlir's aten.linear: aten.t of the weight (linalg.transpose) feeding
// aten.mm (a default-map linalg.matmul). The transpose is folded into the
// matmul's maps, which now reads W's rows; the dead transpose and its init
// go. With fold-transposes=false it stays, with a remark.
// CHECK-LABEL: func.func @torch_linear
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xf16>, %[[W:.*]]: tensor<32x64xf16>
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[X]], %[[W]] : tensor<4x64xf16>, tensor<32x64xf16>)
// KEEP: raise-contractions.mlir:[[@LINE+11]]:8: remark: cachet-raise-contractions: the transposed weight is kept (fold-transposes=false)
// KEPT-LABEL: func.func @torch_linear
// KEPT: linalg.transpose
// KEPT: linalg.matmul ins
func.func @torch_linear(%x: tensor<4x64xf16>, %w: tensor<32x64xf16> {cachet.weight}) -> tensor<4x32xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf16>
  %wt = linalg.transpose ins(%w : tensor<32x64xf16>) outs(%e : tensor<64x32xf16>) permutation = [1, 0]
  %ze = tensor.empty() : tensor<4x32xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%ze : tensor<4x32xf32>) -> tensor<4x32xf32>
  // expected-remark @+1 {{cachet-raise-contractions: folded the transpose of the weight 'tensor<32x64xf16>' into the matmul's maps (x W^T, W read as its [N][K] rows)}}
  %y = linalg.matmul ins(%x, %wt : tensor<4x64xf16>, tensor<64x32xf16>) outs(%z : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// The transpose as a generic that only moves its input (older torch-mlir),
// of a constant weight; a second reader keeps it alive.
// CHECK-LABEL: func.func @transpose_generic_constant
// CHECK: %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<8x16xf32>
// CHECK: %[[T:.*]] = linalg.generic
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%{{.*}}, %[[W]] : tensor<1x16xf32>, tensor<8x16xf32>)
// CHECK: return %{{.*}}, %[[T]]
func.func @transpose_generic_constant(%x: tensor<1x16xf32>, %z: tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<16x8xf32>) {
  %w = arith.constant dense<0.5> : tensor<8x16xf32>
  %e = tensor.empty() : tensor<16x8xf32>
  %wt = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<8x16xf32>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<16x8xf32>
  // expected-remark @+1 {{folded the transpose of the weight 'tensor<8x16xf32>' into the matmul's maps (x W^T, W read as its [N][K] rows); the transpose stays for its other uses}}
  %y = linalg.matmul ins(%x, %wt : tensor<1x16xf32>, tensor<16x8xf32>) outs(%z : tensor<1x8xf32>) -> tensor<1x8xf32>
  return %y, %wt : tensor<1x8xf32>, tensor<16x8xf32>
}

// -----

// Negative: contractions that are not x W^T, x W, W x or a default batched
// product keep their generic, each with the reason.
// CHECK-LABEL: func.func @not_raised
// CHECK-COUNT-6: linalg.generic
// CHECK-NOT: linalg.matmul
// CHECK-NOT: linalg.matvec
func.func @not_raised(%x: tensor<4x64xf16>, %w: tensor<32x64xf16>, %xt: tensor<64x4xf16>,
                      %xi: tensor<4x64xi8>, %wi: tensor<32x64xi8>, %zi: tensor<4x32xi32>,
                      %q: tensor<2x4x64xf16>, %k: tensor<2x8x64xf16>, %zb: tensor<2x4x8xf32>,
                      %x3: tensor<4x2x32xf16>, %w3: tensor<8x2x32xf16>,
                      %z: tensor<4x32xf32>, %z8: tensor<4x8xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x32xi32>, tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x32xf32>) {
  // expected-remark @+1 {{cachet-raise-contractions: not raised: the product is not of the two inputs, each as it is or extended to the accumulator type with arith.extf}}
  %scaled = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x64xf16>, tensor<32x64xf16>) outs(%z : tensor<4x32xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %ea = arith.extf %a : f16 to f32
    %eb = arith.extf %b : f16 to f32
    %m = arith.mulf %ea, %eb : f32
    %c = arith.constant 0.5 : f32
    %h = arith.mulf %m, %c : f32
    %s = arith.addf %acc, %h : f32
    linalg.yield %s : f32
  } -> tensor<4x32xf32>
  // expected-remark @+1 {{cachet-raise-contractions: not raised: a rank-3 contraction whose maps are neither x W ((m, k), (k, n)) nor x W^T ((m, k), (n, k)) into (m, n)}}
  %xT = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xt, %w : tensor<64x4xf16>, tensor<32x64xf16>) outs(%z : tensor<4x32xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %ea = arith.extf %a : f16 to f32
    %eb = arith.extf %b : f16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x32xf32>
  // expected-remark @+1 {{cachet-raise-contractions: not raised: the accumulator is not a float (integer products keep their generic)}}
  %int = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xi, %wi : tensor<4x64xi8>, tensor<32x64xi8>) outs(%zi : tensor<4x32xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %ea = arith.extsi %a : i8 to i32
    %eb = arith.extsi %b : i8 to i32
    %fa = arith.sitofp %ea : i32 to f32
    %m = arith.muli %ea, %eb : i32
    %fm = arith.mulf %fa, %fa : f32
    %s = arith.addi %acc, %m : i32
    linalg.yield %s : i32
  } -> tensor<4x32xi32>
  // expected-remark @+1 {{cachet-raise-contractions: not raised: a rank-4 contraction whose maps are not a batch_matmul's default (b, m, k), (b, k, n) -> (b, m, n)}}
  %qk = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x64xf16>, tensor<2x8x64xf16>) outs(%zb : tensor<2x4x8xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %ea = arith.extf %a : f16 to f32
    %eb = arith.extf %b : f16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4x8xf32>
  // expected-remark @+1 {{cachet-raise-contractions: not raised: more than one reduction loop}}
  %two = linalg.generic {indexing_maps = [affine_map<(m, n, h, k) -> (m, h, k)>, affine_map<(m, n, h, k) -> (n, h, k)>, affine_map<(m, n, h, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x3, %w3 : tensor<4x2x32xf16>, tensor<8x2x32xf16>) outs(%z8 : tensor<4x8xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %ea = arith.extf %a : f16 to f32
    %eb = arith.extf %b : f16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  // expected-remark @+1 {{cachet-raise-contractions: not raised: the body computes more than acc + a * b}}
  %square = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x64xf16>, tensor<32x64xf16>) outs(%z : tensor<4x32xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %ea = arith.extf %a : f16 to f32
    %eb = arith.extf %b : f16 to f32
    %sq = arith.mulf %ea, %ea : f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x32xf32>
  return %scaled, %xT, %int, %qk, %two, %square : tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x32xi32>, tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x32xf32>
}

// -----

// Reductions that are not products of two inputs (a norm's sum of squares,
// softmax's sum) are not contractions: no remark, untouched.
// CHECK-LABEL: func.func @sum_of_squares
// CHECK: linalg.generic
func.func @sum_of_squares(%x: tensor<4x64xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(m, k) -> (m, k)>, affine_map<(m, k) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x64xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %a, %a : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
