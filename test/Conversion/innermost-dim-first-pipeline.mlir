// The generic lowering as cachet-compile runs it: a decode step's [1][4096]
// element-wise op is 64 workgroups of 64 threads, each thread one element
// (was 4096 workgroups, one thread of 64 busy).
// RUN: cachet-opt %s -pass-pipeline='builtin.module(func.func(convert-linalg-to-parallel-loops,cachet-innermost-dim-first,scf-parallel-loop-tiling{parallel-loop-tile-sizes=64 no-min-max-bounds=true},gpu-map-parallel-loops,convert-parallel-loops-to-gpu,canonicalize))' 2>/dev/null | FileCheck %s --check-prefix=PIPE

// PIPE-LABEL: func.func @generic
// PIPE: gpu.launch blocks({{.*}}) in ({{.*}} = %c64{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c64{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
func.func @generic(%x: memref<1x4096xf32>, %y: memref<1x4096xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<1x4096xf32>) outs(%y : memref<1x4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %in : f32
    linalg.yield %d : f32
  }
  return
}
