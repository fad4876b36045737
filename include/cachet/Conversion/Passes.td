//===- Passes.td - cachet lowering pass declarations -------*- tablegen -*-===//

#ifndef CACHET_CONVERSION_PASSES_TD
#define CACHET_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def SetSPIRVEntryPointABI
    : Pass<"cachet-set-spirv-entry-point-abi", "mlir::gpu::GPUModuleOp"> {
  let summary = "Give every gpu.func kernel a spirv.entry_point_abi";
  let description = [{
    `convert-gpu-to-spirv` only converts kernels that carry a
    `spirv.entry_point_abi` attribute. This pass derives it from the
    workgroup size the kernel was outlined with (`known_block_size`), or
    from the `workgroup-size` option for kernels that have none. A kernel
    that already has the attribute keeps it.

    Before:

    ```mlir
    gpu.func @k(%a: memref<256xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>}
    ```

    After:

    ```mlir
    gpu.func @k(%a: memref<256xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>,
        spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [64, 1, 1]>}
    ```
  }];
  let options = [
    ListOption<"workgroupSize", "workgroup-size", "int32_t",
               "Workgroup size for kernels without known_block_size (x,y,z)">,
  ];
  let dependentDialects = ["::mlir::spirv::SPIRVDialect"];
}

def NestSPIRVModules : Pass<"cachet-nest-spirv-modules", "mlir::ModuleOp"> {
  let summary = "Move each spirv.module into the gpu.module it was converted from";
  let description = [{
    `convert-gpu-to-spirv` emits `spirv.module @__spv__NAME` next to
    `gpu.module @NAME`; `gpu-module-to-binary` serializes the spirv.module
    found inside a gpu.module. This pass moves each one inside its source
    module so that the SPIR-V target attribute of the gpu.module serializes
    it. A spirv.module without a matching gpu.module is an error.

    Before:

    ```mlir
    spirv.module @__spv__k Logical GLSL450 { ... }
    gpu.module @k [#spirv.target_env<...>] { gpu.func @k(...) kernel { ... } }
    ```

    After:

    ```mlir
    gpu.module @k [#spirv.target_env<...>] {
      spirv.module @__spv__k Logical GLSL450 { ... }
      gpu.func @k(...) kernel { ... }
    }
    ```
  }];
}

def StripCachetAttributes
    : Pass<"cachet-strip-attributes", "mlir::ModuleOp"> {
  let summary = "Drop cachet's compile-time attributes before translation";
  let description = [{
    Removes every discardable attribute of the `cachet` namespace (the device
    profile `cachet.device`, `cachet.weight` argument marks, ...) so that the
    output of `cachet-compile` translates with upstream `mlir-translate
    --mlir-to-llvmir`, which does not know the cachet dialect. An operation
    of the cachet dialect that is still present at this point was not lowered:
    that is an error naming the op.

    Before:

    ```mlir
    module attributes {cachet.device = #cachet.device<...>, gpu.container_module} {
      llvm.func @f(%w: !llvm.ptr {cachet.weight}) { ... }
    }
    ```

    After:

    ```mlir
    module attributes {gpu.container_module} {
      llvm.func @f(%w: !llvm.ptr) { ... }
    }
    ```
  }];
}

#endif // CACHET_CONVERSION_PASSES_TD
