#!/usr/bin/env python3
"""Prints a prefill mat-mul as front ends write it: y = x W^T on tensors.

Usage: gemm.py M N K DTYPE (x [M][K], W [N][K] of DTYPE, y [M][N] f32).
"""
import sys

m, n, k, t = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
maps = ("[affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, "
        "affine_map<(m, n, k) -> (m, n)>]")
print(f"""func.func @gemm(%x: tensor<{m}x{k}x{t}>, %w: tensor<{n}x{k}x{t}>) -> tensor<{m}x{n}xf32> {{
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{m}x{n}xf32>
  %y0 = linalg.fill ins(%cst : f32) outs(%e : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %y = linalg.matmul indexing_maps = {maps}
      ins(%x, %w : tensor<{m}x{k}x{t}>, tensor<{n}x{k}x{t}>) outs(%y0 : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  return %y : tensor<{m}x{n}xf32>
}}""")
