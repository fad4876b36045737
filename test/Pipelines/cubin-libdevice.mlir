// Kernels whose math becomes libdevice calls (here math.exp, __nv_expf)
// assemble without CUDA_ROOT / CUDA_HOME / CUDA_PATH in the environment:
// cachet-compile then takes /usr/local/cuda (where its libdevice is) as the
// toolkit, and the calls are linked instead of left undefined for ptxas.
// REQUIRES: ptxas, cuda-libdevice
// RUN: env -u CUDA_ROOT -u CUDA_HOME -u CUDA_PATH cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 format=bin" -o /dev/null 2>&1 | FileCheck %s --allow-empty
// The toolkit option still wins: a folder without ptxas fails, naming it.
// RUN: not cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 format=bin toolkit=%t.missing" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
// CHECK-NOT: error
// MISSING: error
func.func @silu(%x: tensor<256xf32>) -> tensor<256xf32> {
  %e = tensor.empty() : tensor<256xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<256xf32>) outs(%e : tensor<256xf32>) {
  ^bb0(%v: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %v : f32
    %ex = math.exp %n : f32
    %d = arith.addf %one, %ex : f32
    %s = arith.divf %v, %d : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  return %y : tensor<256xf32>
}
