// cachet-compile on the decode chain of examples/decode_matvec_chain.mlir
// (copied here): cachet-prefetch-matvec-chains runs after outlining and the
// target attribute, and what it emits reaches the PTX. The PTX is the
// escaped string of each gpu.binary, one line per kernel.
//
// sm_89 (rtx4070): prefetch.global.L2 as inline PTX (LLVM 22 selects the
// intrinsic only on sm_90), by the mat-vec kernels but not the last one.
// (auto decides for the generic mat-vec kernels; cachet's subgroup kernels,
// the default on NVVM, get only PDL from auto: see AUTOSG below.)
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_89 profile=rtx4070 matvec-kernel=generic format=isa" 2>/dev/null | FileCheck %s --check-prefix=SM89
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_89 profile=rtx4070 matvec-kernel=generic format=isa" 2>&1 >/dev/null | FileCheck %s --check-prefix=CAP4070
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_75 features=+ptx63 profile=rtx2060s matvec-kernel=generic format=isa" 2>&1 >/dev/null | FileCheck %s --check-prefix=CAP2060
//
// sm_90 with pdl-wait=start pdl-trigger=end: the wait before the first
// load, launch_dependents at the end.
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 prefetch=pdl prefetch-options={pdl-wait=start pdl-trigger=end} format=isa" 2>/dev/null | FileCheck %s --check-prefix=PDL
// The defaults: launch_dependents first, the first weight loads before the
// wait (the copies of the weights before the chain are fences), x after it.
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 prefetch=pdl prefetch-options={prefetch-max-bytes=0} format=isa" 2>/dev/null | FileCheck %s --check-prefix=PDLW
// prefetch-options reach the pass: pdl without the prologue's prefetch.
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 prefetch=pdl prefetch-options={prefetch-max-bytes=0} format=isa" 2>&1 >/dev/null | FileCheck %s --check-prefix=PDL0
// PDL0: step 1 of 4, {{.*}}; pdl: the first 0 and 0 and 0 B of the own weights prefetched (max-bytes), wait after the first loads of the weights (before the first access to other memory), launch_dependents first
// The PDL launches are queued back to back: the flags call comes after
// gpu-async-region, so it does not end the async region (which would
// synchronize the stream after every launch and leave the GPU idle while
// the host queues the next one).
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 prefetch=pdl format=isa" 2>/dev/null | grep -v gpu.binary | FileCheck %s --check-prefix=PDLHOST
// PDLHOST: llvm.call @cachetMgpuSetNextLaunchFlags
// PDLHOST-NOT: mgpuStreamSynchronize
// PDLHOST: llvm.call @cachetMgpuSetNextLaunchFlags
// PDLHOST-NOT: mgpuStreamSynchronize
// PDLHOST: llvm.call @cachetMgpuSetNextLaunchFlags
// PDLHOST-NOT: mgpuStreamSynchronize
// PDLHOST: llvm.call @cachetMgpuSetNextLaunchFlags
// PDLHOST-NOT: mgpuStreamSynchronize
// PDLHOST: gpu.launch_func
// PDLHOST: mgpuStreamSynchronize
// Kernels with x staged in workgroup memory (stage-x) get PDL as well, the wait
// comes before the copy of x and its barrier (no weight is loaded before). They get no next-weight
// prefetch (it would add kernel arguments before the workgroup
// attribution), which pdl+bulk says and l2 alone refuses.
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 prefetch=pdl matvec-options={stage-x=true} format=isa" 2>/dev/null | FileCheck %s --check-prefix=PDLSTAGED
// PDLSTAGED: gpu.binary @decode_layer_kernel_2
// PDLSTAGED-SAME: griddepcontrol.launch_dependents;
// PDLSTAGED-NOT: ld.global
// PDLSTAGED-SAME: griddepcontrol.wait;
// PDLSTAGED-SAME: ld.global
// PDLSTAGED-SAME: bar.sync
// PDLSTAGED-SAME: ld.shared
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 prefetch=pdl+bulk matvec-options={stage-x=true} format=isa" 2>&1 >/dev/null | FileCheck %s --check-prefix=PDLBULKSTAGED
// PDLBULKSTAGED: step 1 of 4, {{.*}}; sm_90 with PTX 8.0: pdl + bulk; no next-weight prefetch: the kernel has workgroup or private attributions; pdl: the first
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 prefetch=l2 matvec-options={stage-x=true} format=isa" 2>&1 >/dev/null | FileCheck %s --check-prefix=L2STAGED
// L2STAGED: step 1 of 4, {{.*}}; not rewritten: the kernel has workgroup or private attributions
// pdl-trigger=start lets the next grid launch before the kernel's own work
// (here with pdl-wait=start: the wait before any load).
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 prefetch=pdl prefetch-options={prefetch-max-bytes=0 pdl-trigger=start pdl-wait=start} format=isa" 2>&1 >/dev/null | FileCheck %s --check-prefix=PDLSTART-REMARK
// PDLSTART-REMARK: step 1 of 4, {{.*}}; pdl: the first 0 and 0 and 0 B of the own weights prefetched (max-bytes), wait before the first read, launch_dependents first
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 prefetch=pdl prefetch-options={prefetch-max-bytes=0 pdl-trigger=start pdl-wait=start} format=isa" 2>/dev/null | FileCheck %s --check-prefix=PDLSTART
// RUN: not cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 prefetch=pdl prefetch-options={pdl-trigger=middle} format=isa" 2>&1 | FileCheck %s --check-prefix=BADTRIGGER
// BADTRIGGER: for the --pdl-trigger option: Cannot find option named 'middle'!
// BADTRIGGER: error: cachet-compile: bad prefetch-options
// sm_90, auto on h200 with the generic kernels, and pdl+bulk asked for on
// the subgroup kernels (16-byte weight loads): pdl +
// cp.async.bulk.prefetch.L2.
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 matvec-kernel=generic format=isa" 2>/dev/null | FileCheck %s --check-prefix=H200
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 prefetch=pdl+bulk format=isa" 2>/dev/null | FileCheck %s --check-prefixes=H200,SUBGROUP
// auto on the subgroup kernels: pdl without prefetches, with the reason.
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 format=isa" 2>/dev/null | FileCheck %s --check-prefix=PDLW
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 format=isa" 2>/dev/null | FileCheck %s --check-prefix=NOPREFETCH
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 format=isa" 2>&1 >/dev/null | FileCheck %s --check-prefix=AUTOSG
// (cachet-lower-matvec puts Q/K/V, and gate/up, in one kernel each: four
// steps, two of several weights; K and V, computed by the same subgroups,
// take the kernel's first blocks.)
// AUTOSG: step 1 of 4, weights memref<256x1024xbf16> and memref<256x1024xbf16> and memref<1024x1024xbf16>; auto: cachet's subgroup mat-vec kernel streams at full occupancy; on the H200 no prefetch paid for it (bulk 0.95x, l2 0.99x, pdl with its prologue prefetch 0.94x of pdl without it; docs/BENCHMARKS.md), pdl with the trigger first and the weight loads before the wait did (1.06x of none, run 44), so pdl without prefetches; pdl: wait after the first loads of the weights (before the first access to other memory), launch_dependents first
// On a profile without pdl (rtx4070 on sm_89), auto leaves them alone.
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_89 profile=rtx4070 format=isa" 2>&1 >/dev/null | FileCheck %s --check-prefix=AUTOSG89
// AUTOSG89: step 1 of 4, {{.*}}; auto: cachet's subgroup mat-vec kernel streams at full occupancy; on the H200 no prefetch paid for it (bulk 0.95x, l2 0.99x, pdl with its prologue prefetch 0.94x of pdl without it; docs/BENCHMARKS.md), so none (an explicit mode forces one); not rewritten
// sm_90 with l2: the nvvm.prefetch intrinsic.
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 prefetch=l2 format=isa" 2>/dev/null | FileCheck %s --check-prefix=L2SM90
// rewrites=false or prefetch=off: no prefetch, no griddepcontrol.
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 rewrites=false format=isa" 2>/dev/null | FileCheck %s --check-prefix=NONE
// RUN: cachet-opt %s -cachet-compile="target=nvvm chip=sm_90 profile=h200 prefetch=off format=isa" 2>/dev/null | FileCheck %s --check-prefix=NONE
// RUN: not cachet-opt %s -cachet-compile="target=nvvm prefetch=sometimes" 2>&1 | FileCheck %s --check-prefix=BADMODE

// SM89: gpu.binary @decode_layer_kernel_2
// SM89-SAME: .target sm_89
// SM89-SAME: prefetch.global.L2 [
// SM89: gpu.binary @decode_layer_kernel_10
// SM89-NOT: prefetch.global.L2
// SM89-SAME: ret;

// CAP4070: step 4 of 6, {{.*}}the last 46 CTAs prefetch (l2) 2883584 B of memref<2816x1024xbf16> and 2883584 B of memref<2816x1024xbf16> (fraction 0.5, max-bytes 9437184)
// CAP2060: step 4 of 6, {{.*}}the last 34 CTAs prefetch (l2) 524288 B of memref<2816x1024xbf16> and 524288 B of memref<2816x1024xbf16> (fraction 0.5, max-bytes 1048576)

// PDL: gpu.binary @decode_layer_kernel_2
// PDL-SAME: .target sm_90
// PDL-NOT: ld.global
// PDL-SAME: griddepcontrol.wait;
// PDL-SAME: ld.global
// PDL-SAME: griddepcontrol.launch_dependents;
// PDL-SAME: ret;

// PDLSTART: gpu.binary @decode_layer_kernel_2
// PDLSTART-NOT: ld.global
// PDLSTART-SAME: griddepcontrol.launch_dependents;
// PDLSTART-NOT: ld.global
// PDLSTART-SAME: griddepcontrol.wait;
// PDLSTART-SAME: ld.global
// PDLSTART-NOT: griddepcontrol.launch_dependents
// PDLSTART-SAME: ret;

// H200: gpu.binary @decode_layer_kernel_2
// H200-SAME: griddepcontrol.launch_dependents;
// H200-SAME: cp.async.bulk.prefetch.L2.global
// SUBGROUP-SAME: ld.global.v4.b32
// H200-SAME: griddepcontrol.wait;
// SUBGROUP-SAME: shfl.sync.bfly.b32
// H200-SAME: cp.async.bulk.prefetch.L2.global
// H200-SAME: griddepcontrol.wait;
// H200-SAME: ret;

// PDLW: gpu.binary @decode_layer_kernel_2
// PDLW-SAME: griddepcontrol.launch_dependents;
// PDLW-NOT: griddepcontrol.wait
// PDLW-SAME: ld.global.v4.b32
// PDLW-SAME: griddepcontrol.wait;
// PDLW-SAME: ld.global.v4.b32
// PDLW-SAME: shfl.sync.bfly.b32
// PDLW-SAME: griddepcontrol.wait;
// PDLW-SAME: st.global
// PDLW-SAME: griddepcontrol.wait;
// PDLW-SAME: ret;
// NOPREFETCH-NOT: prefetch.global.L2
// NOPREFETCH-NOT: cp.async.bulk.prefetch

// L2SM90: gpu.binary @decode_layer_kernel_2
// L2SM90-SAME: prefetch.global.L2 \09[
// L2SM90-NOT: griddepcontrol

// BADMODE: for the --prefetch option: Cannot find option named 'sometimes'!

// NONE-NOT: prefetch.global.L2
// NONE-NOT: cp.async.bulk.prefetch
// NONE-NOT: griddepcontrol

#mv_w = affine_map<(i, j) -> (i, j)>
#mv_x = affine_map<(i, j) -> (j)>
#mv_y = affine_map<(i, j) -> (i)>
#id1  = affine_map<(i) -> (i)>
func.func @decode_layer(%x: tensor<1024xbf16>, %a: tensor<1024xbf16>,
    %wq: tensor<1024x1024xbf16> {cachet.weight}, %wk: tensor<256x1024xbf16> {cachet.weight},
    %wv: tensor<256x1024xbf16> {cachet.weight}, %wo: tensor<1024x1024xbf16> {cachet.weight},
    %wg: tensor<2816x1024xbf16> {cachet.weight}, %wu: tensor<2816x1024xbf16> {cachet.weight},
    %wd: tensor<1024x2816xbf16> {cachet.weight})
    -> (tensor<1024xf32>, tensor<256xf32>, tensor<256xf32>, tensor<1024xf32>) {
  %z = arith.constant 0.0 : f32
  %e1024 = tensor.empty() : tensor<1024xf32>
  %e256 = tensor.empty() : tensor<256xf32>
  %e2816 = tensor.empty() : tensor<2816xf32>
  %z1024 = linalg.fill ins(%z : f32) outs(%e1024 : tensor<1024xf32>) -> tensor<1024xf32>
  %z256 = linalg.fill ins(%z : f32) outs(%e256 : tensor<256xf32>) -> tensor<256xf32>
  %z2816 = linalg.fill ins(%z : f32) outs(%e2816 : tensor<2816xf32>) -> tensor<2816xf32>
  %q = linalg.matvec ins(%wq, %x : tensor<1024x1024xbf16>, tensor<1024xbf16>) outs(%z1024 : tensor<1024xf32>) -> tensor<1024xf32>
  %k = linalg.matvec ins(%wk, %x : tensor<256x1024xbf16>, tensor<1024xbf16>) outs(%z256 : tensor<256xf32>) -> tensor<256xf32>
  %v = linalg.matvec ins(%wv, %x : tensor<256x1024xbf16>, tensor<1024xbf16>) outs(%z256 : tensor<256xf32>) -> tensor<256xf32>
  %o = linalg.matvec ins(%wo, %a : tensor<1024x1024xbf16>, tensor<1024xbf16>) outs(%z1024 : tensor<1024xf32>) -> tensor<1024xf32>
  %ob_e = tensor.empty() : tensor<1024xbf16>
  %ob = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%o : tensor<1024xf32>) outs(%ob_e : tensor<1024xbf16>) {
    ^bb0(%s: f32, %d: bf16):
      %t = arith.truncf %s : f32 to bf16
      linalg.yield %t : bf16
  } -> tensor<1024xbf16>
  %g = linalg.matvec ins(%wg, %ob : tensor<2816x1024xbf16>, tensor<1024xbf16>) outs(%z2816 : tensor<2816xf32>) -> tensor<2816xf32>
  %u = linalg.matvec ins(%wu, %ob : tensor<2816x1024xbf16>, tensor<1024xbf16>) outs(%z2816 : tensor<2816xf32>) -> tensor<2816xf32>
  %he = tensor.empty() : tensor<2816xbf16>
  %h = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%g, %u : tensor<2816xf32>, tensor<2816xf32>) outs(%he : tensor<2816xbf16>) {
    ^bb0(%gv: f32, %uv: f32, %d: bf16):
      %one = arith.constant 1.0 : f32
      %ng = arith.negf %gv : f32
      %ex = math.exp %ng : f32
      %den = arith.addf %one, %ex : f32
      %sig = arith.divf %gv, %den : f32
      %p = arith.mulf %sig, %uv : f32
      %t = arith.truncf %p : f32 to bf16
      linalg.yield %t : bf16
  } -> tensor<2816xbf16>
  %dn = linalg.matvec ins(%wd, %h : tensor<1024x2816xbf16>, tensor<2816xbf16>) outs(%z1024 : tensor<1024xf32>) -> tensor<1024xf32>
  return %q, %k, %v, %dn : tensor<1024xf32>, tensor<256xf32>, tensor<256xf32>, tensor<1024xf32>
}
