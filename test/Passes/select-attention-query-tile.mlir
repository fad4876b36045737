// The mma-sync kernel's query tile without a query-tile option: 8
// subgroups (128 rows) where the workgroups, spread over the profile's
// compute units (h200: 132), leave none with more rows than 4 subgroups
// would; else 4 (64 rows). resident-workgroups counts workgroups of 4
// subgroups, so 8-subgroup tiles get 1/2 of the workgroup memory at its
// default 3.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true dynamic-shared=true async-copy=true" -o /dev/null 2>&1 | FileCheck %s
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true dynamic-shared=true async-copy=true query-tile=64" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPT64
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true dynamic-shared=true async-copy=true query-tile=128 resident-workgroups=4" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPT128
// Fewer than 4 subgroups (2 of 32 rows) keep the budget of 1/3.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true dynamic-shared=true async-copy=true row-blocks=2 query-tile=64" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROWS32
// Static workgroup memory (48 KiB).
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="allow-mma-sync=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATIC
// Without mma-sync (the wmma kernel): 4 subgroups.
// RUN: cachet-opt %s -split-input-file -cachet-attach-device=profile=h200 -cachet-select-kernel-configs="dynamic-shared=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WMMA

// pp512, 32 query heads: 4 x 32 = 128 workgroups of 128 rows (one per
// unit: 128 rows) against 256 of 64 (two on some units: 128 rows).
// CHECK: remark: {{.*}} mma-sync flash-attention kernel {{.*}}: query tile 128 (8 subgroups of 16 rows: 8, as no compute unit then holds more rows than with 4, and each K/V tile serves twice the rows), key tile 64 {{.*}}, 4x32 workgroups of 256 threads, {{.*}} (budget: 1/2 of the profile's)
// OPT64: remark: {{.*}}: query tile 64 (4 subgroups of 16 rows), key tile 64 {{.*}}, 8x32 workgroups of 128 threads, {{.*}} (budget: 1/3 of the profile's)
// OPT128: remark: {{.*}}: query tile 128 (8 subgroups of 16 rows), {{.*}}, 4x32 workgroups of 256 threads, {{.*}} (budget: 1/2 of the profile's)
// ROWS32: remark: {{.*}}: query tile 64 (2 subgroups of 32 rows), {{.*}} (budget: 1/3 of the profile's)
// WMMA: remark: {{.*}} mma flash-attention kernel {{.*}}: query tile 64 (4 subgroups of 16 rows), {{.*}}, 8x32 workgroups of 128 threads
func.func @pp512(%q: tensor<32x512x128xf16>, %k: tensor<4608x8x128xf16>,
                 %v: tensor<4608x8x128xf16>) -> tensor<32x512x128xf16> {
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.088 causal 4096
      : tensor<32x512x128xf16>, tensor<4608x8x128xf16>, tensor<4608x8x128xf16> -> tensor<32x512x128xf16>
  return %o : tensor<32x512x128xf16>
}

// -----

// pp256: 2 x 32 = 64 workgroups of 128 rows (128 rows on a unit) against
// 128 of 64 (64 rows): 4 subgroups.
// CHECK: remark: {{.*}} mma-sync flash-attention kernel {{.*}}: query tile 64 (4 subgroups of 16 rows), key tile 64 {{.*}}, 4x32 workgroups of 128 threads, {{.*}} (budget: 1/3 of the profile's)
func.func @pp256(%q: tensor<32x256x128xf16>, %k: tensor<4352x8x128xf16>,
                 %v: tensor<4352x8x128xf16>) -> tensor<32x256x128xf16> {
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.088 causal 4096
      : tensor<32x256x128xf16>, tensor<4352x8x128xf16>, tensor<4352x8x128xf16> -> tensor<32x256x128xf16>
  return %o : tensor<32x256x128xf16>
}

// -----

// Head dimension 352 (V 64): 8 subgroups' tiles fit only a key tile of
// 16, 4 subgroups' one of 32, so auto keeps 4 and says why.
// CHECK: remark: {{.*}} mma-sync flash-attention kernel {{.*}}: query tile 64 (4 subgroups of 16 rows: 4, as 8 subgroups' tiles take a smaller key tile, none, or copies that do not divide among their threads), key tile 32 {{.*}}, 8x32 workgroups of 128 threads
func.func @d352(%q: tensor<32x512x352xf16>, %k: tensor<4608x8x352xf16>, %v: tensor<4608x8x64xf16>) -> tensor<32x512x64xf16> {
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.088 causal 4096
      : tensor<32x512x352xf16>, tensor<4608x8x352xf16>, tensor<4608x8x64xf16> -> tensor<32x512x64xf16>
  return %o : tensor<32x512x64xf16>
}

// -----

// Head dimension 256 (V 128) in static workgroup memory (48 KiB, no
// dynamic-shared): 8 subgroups' tiles fit no key tile, 4 subgroups' one of
// 16.
// STATIC: remark: {{.*}} mma-sync flash-attention kernel {{.*}}: query tile 64 (4 subgroups of 16 rows: 4, as 8 subgroups' tiles take a smaller key tile, none, or copies that do not divide among their threads), key tile 16
func.func @d256(%q: tensor<32x512x256xf16>, %k: tensor<4608x8x256xf16>, %v: tensor<4608x8x128xf16>) -> tensor<32x512x128xf16> {
  %o = cachet.attention %q, %k, %v layout <token_major> scale 0.088 causal 4096
      : tensor<32x512x256xf16>, tensor<4608x8x256xf16>, tensor<4608x8x128xf16> -> tensor<32x512x128xf16>
  return %o : tensor<32x512x128xf16>
}
