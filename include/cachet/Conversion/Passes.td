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
    that already has the attribute keeps it. The module's SPIR-V target (from
    `spirv-attach-target`) is mirrored into `spirv.target_env`, where the
    SPIR-V dialect conversions that run inside the gpu.module look for it,
    with the subgroup size of the device profile (`#cachet.device`) where
    there is one: `gpu.shuffle` converts only at the target's subgroup size.

    Before:

    ```mlir
    gpu.func @k(%a: memref<256xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>}
    ```

    After:

    ```mlir
    gpu.func @k(%a: memref<256xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>,
        spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [64, 1, 1]>}
    ```

    and the enclosing `gpu.module @m [#spirv.target_env<...>]` gets
    `attributes {spirv.target_env = #spirv.target_env<...>}`.
  }];
  let options = [
    ListOption<"workgroupSize", "workgroup-size", "int32_t",
               "Workgroup size for kernels without known_block_size (x,y,z)">,
  ];
  let dependentDialects = ["::mlir::spirv::SPIRVDialect"];
}

def WorkgroupAllocs
    : Pass<"cachet-workgroup-allocs", "mlir::gpu::GPUModuleOp"> {
  let summary = "Turn gpu.func workgroup attributions into memref.alloc (SPIR-V)";
  let description = [{
    `convert-gpu-to-spirv` lowers workgroup memory allocated with
    `memref.alloc` in the Workgroup storage class (to a Workgroup-class
    `spirv.GlobalVariable`) but leaves the workgroup attributions of a
    `gpu.func` unconverted, and its memory-space map does not know
    `#gpu.address_space<workgroup>`. Kernels built as `gpu.launch` with
    `workgroup(...)` attributions (cachet-lower-attention) get their
    attributions replaced by allocations in `#spirv.storage_class<Workgroup>`
    at the start of the kernel before the SPIR-V conversion.

    Before:

    ```mlir
    gpu.func @k(%a: memref<64xf16>) workgroup(%t: memref<32x64xf16, #gpu.address_space<workgroup>>) kernel {
      ... %t ...
    }
    ```

    After:

    ```mlir
    gpu.func @k(%a: memref<64xf16>) kernel {
      %t = memref.alloc() : memref<32x64xf16, #spirv.storage_class<Workgroup>>
      ... %t ...
    }
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::spirv::SPIRVDialect"];
}

def AlignWorkgroupMemory
    : Pass<"cachet-align-workgroup-memory", "mlir::gpu::GPUModuleOp"> {
  let summary = "Align the workgroup attributions of every gpu.func";
  let description = [{
    The NVVM and ROCDL lowerings turn a workgroup attribution into a
    shared-memory global aligned to its `llvm.align` attribute, or only to its
    element type without one. Matrix loads from workgroup memory (`wmma.load`
    of gpu.subgroup_mma_load_matrix needs 32-byte aligned rows) need more.
    This pass sets `llvm.align = alignment` on every workgroup attribution
    that has no alignment yet; an alignment that is not a positive power of
    two is an error.

    Before:

    ```mlir
    gpu.func @k() workgroup(%t : memref<32x128xf16, #gpu.address_space<workgroup>>) kernel
    ```

    After:

    ```mlir
    gpu.func @k() workgroup(%t : memref<32x128xf16, #gpu.address_space<workgroup>> {llvm.align = 128 : i64}) kernel
    ```
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"128",
           "Alignment in bytes (a power of two)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def KernelOccupancy : Pass<"cachet-kernel-occupancy", "mlir::gpu::GPUModuleOp"> {
  let summary = "Turn cachet.min_workgroups_per_sm marks into nvvm.minctasm";
  let description = [{
    Runs on NVVM gpu.modules after kernel outlining, before
    `convert-gpu-to-nvvm`. A kernel generator that sizes a kernel's
    workgroup memory for N workgroups per SM (cachet-lower-attention with
    `occupancy-hint`) marks ops of its body with
    `cachet.min_workgroups_per_sm = N` (attributes of `gpu.launch` do not
    survive outlining; those of its ops do). This pass gives each kernel
    `nvvm.minctasm` = the largest N marked in it, which NVPTX emits as
    `.minnctapersm`: ptxas then keeps the registers per thread low enough for
    N workgroups (on the H200 the mma attention kernel goes from 176 to 168
    registers, without spills, for 3 workgroups of 128 threads). The marks
    are removed. Each decision is a remark.

    Before:

    ```mlir
    gpu.func @attention_kernel(...) kernel {
      ...
      %d = gpu.subgroup_mma_compute %a, %b, %c {cachet.min_workgroups_per_sm = 3 : i64} ...
    ```

    After:

    ```mlir
    gpu.func @attention_kernel(...) kernel attributes {nvvm.minctasm = 3 : i32} {
      ...
      %d = gpu.subgroup_mma_compute %a, %b, %c ...
    ```
  }];
}

def Int8DotProducts
    : Pass<"cachet-int8-dot-products", "mlir::gpu::GPUModuleOp"> {
  let summary = "4-way int8 dot products as NVVM's dp4a";
  let description = [{
    Runs on NVVM gpu.modules before `convert-gpu-to-nvvm`. Kernels write a
    4-way dot product of signed bytes portably (cachet-lower-matvec's
    mat-vec over q8_0 / q4_0 blocks with x quantized in workgroup memory):
    the two `vector<4xi8>` sign-extended to i32, multiplied, and summed
    into an i32 accumulator by `vector.reduction <add>`. That is what SPIR-V
    and ROCDL run; NVPTX does not form `dp4a` from it (four multiplies and
    adds per word), so this pass rewrites each such reduction into
    `nvvm.dot.accumulate.4way` (PTX `dp4a.s32.s32`). The sum is the same:
    each product fits 15 bits and the instruction adds them to the
    accumulator in 32-bit two's complement, as the adds do. Each kernel
    rewritten is a remark.

    Before:

    ```mlir
    %ea = arith.extsi %a : vector<4xi8> to vector<4xi32>
    %eb = arith.extsi %b : vector<4xi8> to vector<4xi32>
    %p = arith.muli %ea, %eb : vector<4xi32>
    %s = vector.reduction <add>, %p, %acc : vector<4xi32> into i32
    ```

    After:

    ```mlir
    %s = nvvm.dot.accumulate.4way %a <signed>, %b <signed>, %acc : vector<4xi8>, vector<4xi8>
    ```
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def ExternDynamicSharedMemory
    : Pass<"cachet-extern-dynamic-shared-memory", "mlir::gpu::GPUModuleOp"> {
  let summary = "Give the dynamic shared-memory global external linkage";
  let description = [{
    `convert-gpu-to-nvvm` lowers `gpu.dynamic_shared_memory` to a zero-sized
    `llvm.mlir.global internal` in address space 3. The NVPTX backend emits
    an internal global as a static `.shared` variable of its (zero) size, so
    every view of it aliases one byte: only an external global becomes the
    `.extern .shared` array that the launch's dynamic shared memory backs.
    This pass runs after the lowering, on the LLVM globals of a GPU module:
    each zero-sized address-space-3 global that is not external becomes
    external, aligned to at least `alignment` bytes (`wmma.load` needs 32).

    Before:

    ```mlir
    llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
    ```

    After:

    ```mlir
    llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
    ```
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"128",
           "Least alignment in bytes (a power of two)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def HoistSPIRVVariables
    : Pass<"cachet-hoist-spirv-variables", "mlir::spirv::ModuleOp"> {
  let summary = "Move Function-storage spirv.Variable ops to the entry block";
  let description = [{
    SPIR-V requires every `OpVariable` of the Function storage class to be
    among the first instructions of the first block of its function. The
    SCF to SPIR-V conversion puts the variables that carry an `scf.for`'s
    results right before the loop, so a loop with results inside another
    loop (the flash-attention kernels' dot products and row sums inside the
    KV-tile loop) gets a variable in the loop body, which lavapipe allocates
    anew on every iteration until its stack overflows. This pass moves every
    variable without an initializer to the start of the entry block; a
    variable has no operands then, and every use sees the same storage.

    Before:

    ```mlir
    spirv.func @k() "None" {
      spirv.mlir.loop {
        ...
        %v = spirv.Variable : !spirv.ptr<f32, Function>
        spirv.mlir.loop { ... }
      }
    }
    ```

    After:

    ```mlir
    spirv.func @k() "None" {
      %v = spirv.Variable : !spirv.ptr<f32, Function>
      spirv.mlir.loop {
        ...
        spirv.mlir.loop { ... }
      }
    }
    ```
  }];
}

def ScalarizeVectorMemory
    : Pass<"cachet-scalarize-vector-memory", "mlir::gpu::GPUModuleOp"> {
  let summary = "Split vector loads and stores on memrefs of their element "
                "type into scalar ones";
  let description = [{
    SPIR-V's Logical addressing has no pointer casts: a load or store must
    reach its value through a variable or an access chain. Upstream's
    vector-to-SPIR-V lowering reaches a `vector<4xf16>` in a
    `memref<...xf16>` through an `OpBitcast` of the element's pointer, which
    validators reject ("OpLoad Pointer ... is not a logical pointer") and a
    driver need not accept. Run before `convert-gpu-to-spirv`, this pass
    turns each `vector.load` / `vector.store` of a 1-D vector of more than
    one element, on a memref of the vector's element type, into one
    `memref.load` / `memref.store` per element along the innermost index
    (the same elements; the driver may merge them again). The loaded
    vector's strided slices and single-element extracts take the scalars
    directly, so a vector of more than four elements that is only used in
    such pieces (a 16-byte load of f16 computed in pieces of four) never
    exists. Other vector memory ops are left alone. Kernel buffers that
    only aligned vector loads read are left to `cachet-spirv-word-loads`
    before this pass, which reads them in words instead.

    Before:

    ```mlir
    %v = vector.load %m[%i, %j] : memref<64x128xf16, 3>, vector<4xf16>
    ```

    After:

    ```mlir
    %j1 = arith.addi %j, %c1 : index
    ...
    %e0 = memref.load %m[%i, %j] : memref<64x128xf16, 3>
    %e1 = memref.load %m[%i, %j1] : memref<64x128xf16, 3>
    ...
    %v = vector.from_elements %e0, %e1, %e2, %e3 : vector<4xf16>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def SPIRVWordLoads : Pass<"cachet-spirv-word-loads", "mlir::ModuleOp"> {
  let summary = "Access kernel buffers that only aligned vector loads and "
                "stores use in 32-bit words";
  let description = [{
    SPIR-V's Logical addressing reaches a value only through a variable of
    its type: a `vector<4xf16>` load from a `memref<...xf16>` has no SPIR-V
    form, and `cachet-scalarize-vector-memory` splits it into one load per
    element (a bf16 row read 2 bytes at a time, a q8_0 word a byte at a
    time). This pass, run before `cachet-emulate-bf16-storage`, gives a
    kernel's buffer argument a buffer type of 32-bit words where every use
    is a `vector.load` or `vector.store` of one width, 4, 8 or 16 bytes,
    whose `alignment` is that width: the element type becomes `i32`,
    `vector<2xi32>` or `vector<4xi32>`, the innermost dimension (and every
    stride) is divided by the elements per access, each load becomes one
    `memref.load` of a word and a `vector.bitcast` to the loaded vector,
    each store (of at most 4 values) a bit cast of the value and one
    `memref.store` (`cachet-emulate-bf16-storage` takes the bit casts of
    bf16 vectors through i16). The SPIR-V buffer is then an
    array of that word type: one load instruction per vector. A load of
    more than four elements (16 bytes of f16 or i8) is rewritten only where
    it is used in word-aligned pieces of at most four elements (bit casts,
    strided slices, single extracts), which the bit-cast bubbling patterns
    then take to the words, leaving no vector SPIR-V cannot hold. The host
    passes the same buffer through an `unrealized_conversion_cast` (the
    same bytes; `cachet-spirv-word-launch-operands` gives it a scalar
    element type before `gpu-to-llvm`). Each argument rewritten, and each
    one that vector loads or stores use but that keeps its accesses, gets
    a remark with the reason.

    Before:

    ```mlir
    gpu.func @k(%w: memref<64x128xf16>, ...) kernel {
      %v = vector.load %w[%r, %c] {alignment = 8 : i64}
          : memref<64x128xf16>, vector<4xf16>
    ```

    After:

    ```mlir
    gpu.func @k(%w: memref<64x32xvector<2xi32>>, ...) kernel {
      %c4 = arith.constant 4 : index
      %cw = arith.divui %c, %c4 : index
      %words = memref.load %w[%r, %cw] : memref<64x32xvector<2xi32>>
      %v = vector.bitcast %words : vector<2xi32> to vector<4xf16>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def SPIRVWordLaunchOperands
    : Pass<"cachet-spirv-word-launch-operands", "mlir::ModuleOp"> {
  let summary = "Give launch operands of word buffers a scalar element type";
  let description = [{
    Upstream's `gpu-to-llvm` passes each buffer of a SPIR-V kernel with its
    size (`intersperse-sizes-for-kernels`), which it takes only from a
    memref of integer or float elements. Run after `gpu-module-to-binary`
    (when no `gpu.func` is left to check launch operand types against),
    this pass casts each launch operand of a buffer of vector words
    (`cachet-spirv-word-loads`) to the same bytes as a buffer of their
    elements.

    Before:

    ```mlir
    %w = builtin.unrealized_conversion_cast %a
        : memref<64x128xf16> to memref<64x32xvector<2xi32>>
    gpu.launch_func @kernels::@k ... args(%w : memref<64x32xvector<2xi32>>)
    ```

    After:

    ```mlir
    %s = builtin.unrealized_conversion_cast %w
        : memref<64x32xvector<2xi32>> to memref<64x64xi32>
    gpu.launch_func @kernels::@k ... args(%s : memref<64x64xi32>)
    ```
  }];
}

def GuardZeroTripLoops
    : Pass<"cachet-guard-zero-trip-loops", "mlir::gpu::GPUModuleOp"> {
  let summary = "Give an scf.for that may run no iteration its initial "
                "values as results on SPIR-V";
  let description = [{
    Upstream's scf-to-spirv keeps the results of an `scf.for` in Function
    variables that only the loop's `scf.yield` stores: a loop that runs no
    iteration leaves them uninitialized, where `scf.for` defines its results
    as the initial values. Kernels meet such loops wherever a trip count is
    known at run time only: the attention kernel's key tiles of a KV chunk
    that the causal mask hides entirely (a chunked dequant-once over a
    cache longer than the position) read an undefined row max and sum and
    wrote NaN. Run before `convert-gpu-to-spirv`, this pass follows each
    `scf.for` with results whose trip count is not a positive constant by
    an `scf.if` on `lb < ub` (unsigned where the loop compares unsigned)
    that yields the loop's results when it ran, else its initial values:
    what `scf.for` means, on every target. `scf.if` rather than
    `arith.select` takes every type a loop carries (vectors longer than
    SPIR-V's, cooperative matrices), and scf-to-spirv stores its results
    on both branches. A remark on each kernel module counts the loops it
    guarded.

    Before:

    ```mlir
    %r:2 = scf.for %t = %c0 to %tiles step %c1
        iter_args(%m = %max0, %s = %sum0) -> (f32, f32) { ... }
    ```

    After:

    ```mlir
    %r:2 = scf.for %t = %c0 to %tiles step %c1
        iter_args(%m = %max0, %s = %sum0) -> (f32, f32) { ... }
    %ran = arith.cmpi slt, %c0, %tiles : index
    %g:2 = scf.if %ran -> (f32, f32) {
      scf.yield %r#0, %r#1 : f32, f32
    } else {
      scf.yield %max0, %sum0 : f32, f32
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def SPIRVInterfaceVersion
    : Pass<"cachet-spirv-interface-version", "mlir::spirv::ModuleOp"> {
  let summary = "Raise a spirv.module to SPIR-V 1.4 where its entry points "
                "list global variables other than inputs and outputs";
  let description = [{
    Up to SPIR-V 1.3 an entry point's interface lists its Input and Output
    variables only; from 1.4 on it lists every global variable the entry
    point uses. `spirv-lower-abi-attrs` follows the target environment's
    version, so under a 1.4-or-later target (the SPIR-V 1.6 target of the
    mma attention kernel) every entry point lists its storage buffers and
    workgroup variables, while `spirv-update-vce`, which deduces the version
    from the ops alone, may then lower the module to 1.0: an interface a
    validator or driver rejects ("OpEntryPoint interfaces must be
    OpVariables with Storage Class of Input(1) or Output(3)"). This pass,
    run after `spirv-update-vce`, raises such a module's version to 1.4 and
    keeps its capabilities and extensions; other modules are left as they
    are.

    Before:

    ```mlir
    spirv.module Logical GLSL450 requires #spirv.vce<v1.0, [Shader], [...]> {
      spirv.GlobalVariable @arg bind(0, 0) : !spirv.ptr<..., StorageBuffer>
      ...
      spirv.EntryPoint "GLCompute" @k, @arg
    }
    ```

    After:

    ```mlir
    spirv.module Logical GLSL450 requires #spirv.vce<v1.4, [Shader], [...]> {
      ...
    }
    ```
  }];
}

def SPIRVSubgroupSize
    : Pass<"cachet-spirv-subgroup-size", "mlir::spirv::ModuleOp"> {
  let summary = "Record in a spirv.module the subgroup size its kernels were "
                "compiled for, where they use subgroup operations";
  let description = [{
    Kernels that shuffle, reduce or hold cooperative matrices across a
    subgroup are written for the subgroup size of the device profile (the
    target environment's `subgroup_size`): a 32-lane shuffle tree on a device
    that runs 8-lane subgroups (lavapipe) or 64-lane ones (AMD's wave64)
    computes wrong values without any error. Vulkan fixes a kernel's
    subgroup size at pipeline creation (VK_EXT_subgroup_size_control, core in
    1.3), not in SPIR-V, whose `SubgroupSize` execution mode is for OpenCL
    kernels only. So this pass gives a module that uses subgroup operations
    (`spirv.GroupNonUniform*`, `spirv.Group*`, `spirv.KHR.*` subgroup and
    cooperative-matrix ops, or the Subgroup* / NumSubgroups built-ins) an
    unused specialization constant, `@cachet_subgroup_size`, with the
    reserved SpecId 0x63616368 (`CACHET_SPIRV_SUBGROUP_SIZE_SPEC_ID` in
    cachet/runtime.h) and the subgroup size as its value. The Vulkan runtime
    reads it when it creates a kernel's pipeline: it asks for that size where
    the device can run it, and refuses the kernel (CACHET_ERROR_UNSUPPORTED,
    naming both sizes) where it cannot, instead of computing wrong values.
    A module without subgroup operations runs at any subgroup size and is
    left as it is. The requirement holds for every entry point of the
    module (cachet outlines one kernel per module). Each module gets a
    remark either way.

    Before (target environment with `subgroup_size = 32`):

    ```mlir
    spirv.module Logical GLSL450 requires #spirv.vce<v1.3, [Shader,
        GroupNonUniformShuffle], []> {
      spirv.func @k() "None" {
        %s = spirv.GroupNonUniformShuffleXor <Subgroup> %v, %c16 : f32, i32
        ...
      }
      spirv.EntryPoint "GLCompute" @k, ...
    }
    ```

    After:

    ```mlir
    spirv.module Logical GLSL450 requires #spirv.vce<v1.3, [Shader,
        GroupNonUniformShuffle], []> {
      spirv.SpecConstant @cachet_subgroup_size spec_id(1667326824) = 32 : i32
      spirv.func @k() "None" { ... }
      spirv.EntryPoint "GLCompute" @k, ...
    }
    ```

    A module that already declares the constant keeps it if its value is
    the target's subgroup size; a different value, or another constant
    with the reserved SpecId, is an error.
  }];
}

def SPIRVCoopMatrixTargets
    : Pass<"cachet-spirv-coop-matrix-targets", "mlir::ModuleOp"> {
  let summary = "KHR cooperative matrices in the SPIR-V target of the "
                "gpu.modules that use them";
  let description = [{
    Runs after `spirv-attach-target` and before `convert-gpu-to-spirv`.
    Every `gpu.module` with an op on a `!gpu.mma_matrix` value (the mma
    attention kernel's `gpu.subgroup_mma_*`) gets, in each of its
    `#spirv.target_env` targets, capability `CooperativeMatrixKHR`,
    extension `SPV_KHR_cooperative_matrix` and at least SPIR-V 1.6 (which
    that extension's operations need); the other modules keep the target
    they have. Only the modules that use cooperative matrices then declare
    the capability, which the runtime refuses to run on a Vulkan device
    without `VK_KHR_cooperative_matrix`: such a module still loads there,
    its kernels are refused when launched, and an attention with a fallback
    kernel launches the fallback (see `cachet-lower-attention`). A remark
    names each module upgraded.

    Before:

    ```mlir
    gpu.module @attention_kernel [#spirv.target_env<#spirv.vce<v1.3,
        [Shader, Float16, ...], [SPV_KHR_16bit_storage, ...]>, ...>] {
      gpu.func @attention_kernel(...) kernel {
        %a = gpu.subgroup_mma_load_matrix ... -> !gpu.mma_matrix<16x16xf16, "AOp">
        ...
      }
    }
    ```

    After:

    ```mlir
    gpu.module @attention_kernel [#spirv.target_env<#spirv.vce<v1.6,
        [Shader, Float16, ..., CooperativeMatrixKHR],
        [SPV_KHR_16bit_storage, ..., SPV_KHR_cooperative_matrix]>, ...>] {
      ...
    }
    ```
  }];
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

def LowerToLinalg : Pass<"cachet-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower cachet ops and block-quantized tensors to linalg";
  let description = [{
    Gives every cachet op a reference implementation in upstream dialects, so
    that the generic GPU pipeline (and the CPU reference) can compile it:

    * a function argument `tensor<... x N x !cachet.FMT>` becomes the raw
      ggml bytes, `tensor<... x (N * block bytes) x i8>`, marked
      `{cachet.block_format = "FMT"}` so a runtime knows how to fill it;
      `tensor.extract_slice` of such a tensor becomes a slice of the bytes;
      a function result of a block type becomes its bytes as well (marked
      the same way), and so do `tensor.empty` and `tensor.insert_slice` of
      block-typed tensors (a KV cache append), so that bufferization can
      write the new blocks into the cache in place;
    * an i4 function argument or constant (split q4_0 weights) becomes its
      bytes, two values per byte with the even one in the low nibble
      (`tensor<... x N x i4>` to `tensor<... x N/2 x i8>`, an argument marked
      `{cachet.block_format = "i4"}`); a `linalg.generic` reading it reads
      the byte at half the innermost index and takes the nibble of its
      parity, widened with integer ops so that no i4 arithmetic is left
      (SPIR-V has no 4-bit integers); reshapes of the innermost dimension
      and even slices follow the bytes; an i4 result is an error;
    * `cachet.dequantize` and `cachet.dequant_transpose` become a
      `linalg.generic` over the result that decodes each value from its
      block with the formula of the format (computed in f32, rounded once to
      the result type, as ggml does);
    * `cachet.quantize` to packed blocks becomes two `linalg.generic`s: one
      over the blocks, whose body scans the block's 32 values
      (`tensor.extract`) once for its f32 scale, the scale's inverse and,
      for q4_1 / q5_1, its minimum (iq4_nl: a flag for a block below
      GROUP_MAX_EPS), then one over the result's bytes, which reads those
      and the values its quants hold and computes its byte with ggml's
      reference rounding in f32 (the GPU pipeline makes each one kernel;
      a prefill's 512 x 8 x 128 K read each value once per byte of its
      block before); split q8_0: one over the quants, each iteration also
      writing its block's f16 scale;
    * `cachet.attention` becomes `Q K^T` (with the GQA head map and the KV
      layout folded into the indexing maps), scale / causal mask / additive
      mask, `linalg.softmax` (decomposed), and `P V`, accumulated in the
      `accumulator` type;
    * `ml_program.global_load_const` becomes `ml_program.global_load` of the
      same immutable global, which upstream bufferization turns into a
      constant `memref.global`.

    Before:

    ```mlir
    func.func @f(%kq: tensor<16x2x4x!cachet.q8_0>) -> tensor<16x2x128xf16> {
      %k = cachet.dequantize %kq : tensor<16x2x4x!cachet.q8_0> -> tensor<16x2x128xf16>
      return %k : tensor<16x2x128xf16>
    }
    ```

    After:

    ```mlir
    func.func @f(%kq: tensor<16x2x136xi8> {cachet.block_format = "q8_0"}) -> tensor<16x2x128xf16> {
      %e = tensor.empty() : tensor<16x2x128xf16>
      %k = linalg.generic {...} outs(%e : tensor<16x2x128xf16>) {
        // d = f16 at bytes [34 b, 34 b + 1], q = i8 at 34 b + 2 + i
      } -> tensor<16x2x128xf16>
      return %k : tensor<16x2x128xf16>
    }
    ```

    A block-quantized value the pass cannot trace back to a function
    argument (or a slice of one) is an error naming its producer.
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::ml_program::MLProgramDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def ReductionsInner : Pass<"cachet-reductions-inner", "mlir::func::FuncOp"> {
  let summary = "Move the reduction dimensions of linalg.generic ops after "
                "their parallel ones";
  let description = [{
    `convert-linalg-to-parallel-loops` keeps the order of a linalg op's
    iteration space: a reduction dimension before a parallel one (a sum over
    the positions of a `[pos][head][dim]` cache, as front ends write it)
    becomes a sequential host loop around the parallel loop, so one kernel
    launch per reduction step, each with an index argument. This pass
    permutes the iteration space of such `linalg.generic` ops so that every
    parallel dimension comes first and the reduction dimensions keep their
    relative order: each output element accumulates its terms in the same
    order as before, so values do not change; the reductions become loops
    inside one kernel. A named op (which has no free iteration order) is
    left alone, and the pass emits a remark for each permuted op.

    Before:

    ```mlir
    linalg.generic {indexing_maps = [affine_map<(s, h, d) -> (s, h, d)>,
                                     affine_map<(s, h, d) -> (h, d)>],
                    iterator_types = ["reduction", "parallel", "parallel"]}
    ```

    After:

    ```mlir
    linalg.generic {indexing_maps = [affine_map<(h, d, s) -> (s, h, d)>,
                                     affine_map<(h, d, s) -> (h, d)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}
    ```
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def LowerReductions : Pass<"cachet-lower-reductions", "mlir::func::FuncOp"> {
  let summary = "One workgroup per output of a row or full reduction, the "
                "row split over its threads";
  let description = [{
    `convert-linalg-to-parallel-loops` gives each output element of a
    reduction one GPU thread, which walks the whole row: an RMSNorm's sum of
    squares over 4096 values in decode, or a reduction to a 0-d tensor, runs
    on one thread. This pass (on buffers, after `cachet-reductions-inner`)
    replaces such a `linalg.generic` by a `gpu.launch` with one workgroup per
    output element: each of `workgroup-size` threads folds every
    `workgroup-size`-th element of the row into a partial, the partials are
    combined by a tree in workgroup memory, and thread 0 combines the result
    with the output's initial value.

    It takes a generic with one output, its parallel dimensions first and
    one reduction dimension last, static shapes, an output indexed by the
    parallel dimensions only, and a payload `yield combine(%out, f(ins))`
    (or `combine(f(ins), %out)`) where `combine` is `arith.addf`,
    `arith.maximumf`, `arith.minimumf`, `arith.maxnumf` or `arith.minnumf`
    on floats and `%out` has no other use; or a greedy decoder's argmax,
    two outputs (a float value, an integer index) with the payload
    `c = cmpf ogt t, %v` (or `olt %v, t`), `yield select(c, t, %v),
    select(c, j, %i)` where j is the reduced position (linalg.index,
    through an index_cast): each thread keeps (value, index) from (-inf,
    the index type's largest value), the tree takes the larger value and
    on a tie the lower index, and thread 0 steps the outputs' initial
    values with the total as the payload does, so the result is the first
    index of the maximum, bit for bit the sequential loop's (on the H200
    the one-thread argmax over Llama-3's 128256 logits took 7.6 ms of a
    16 ms decode step).

    The kernel also takes what a front end writes around a reduction, so
    that a whole RMSNorm (or a softmax's max and x - max) is one kernel:
    the `linalg.fill` of each output right before it (its value is the
    initial one); then, for a single output indexed by the parallel
    dimensions in order, the element-wise generic right after it that reads
    the output (an RMSNorm's rsqrt(sum / n + eps), computed by every thread
    of the workgroup), and the generic over the same rows plus one
    innermost dimension that reads the output (or that element-wise
    result) broadcast along it (the RMSNorm's x * r * w: each thread takes
    every `workgroup-size`-th element of its row). Only ops that touch no
    memory may lie between them; none is taken where a buffer the kernel
    writes may be one that another part of it reads (a row op writing the
    reduction's input, say), except a row op's own element read in place.
    The output and the element-wise result are stored (by thread 0, after
    the others have read the initial value) only if something else reads
    them; otherwise their buffers go. In a Llama decode step this takes an
    RMSNorm from four kernels to one. Contractions (mat-mul and
    mat-vec, which have their own kernels), reductions shorter than
    `min-reduction-size` and anything else are left to the generic
    lowering. The partials are summed in another order than the sequential
    loop's (values change within float rounding); rewrites off and on run
    the same kernel. Each decision is a remark.

    ```mlir
    // Before: a sum of squares over 4096 values into a 0-d buffer
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>,
                                     affine_map<(d0) -> ()>],
                    iterator_types = ["reduction"]}
        ins(%x : memref<4096xf32>) outs(%acc : memref<f32>) {
    ^bb0(%in: f32, %out: f32):
      %sq = arith.mulf %in, %in : f32
      %sum = arith.addf %out, %sq : f32
      linalg.yield %sum : f32
    }
    // After
    gpu.launch blocks(...) in (%gx = %c1, ...) threads(%tx, ...) in
        (%bx = %c256, ...) workgroup(%partials : memref<256xf32, 3>) {
      // %tx folds x[%tx], x[%tx + 256], ... from 0.0; a tree over
      // %partials; thread 0 adds the total to %acc[]
    }
    ```

    ```mlir
    // Before: an RMSNorm over the rows of x [T][4096]
    linalg.fill ins(%zero : f32) outs(%ss : memref<Txf32>)
    linalg.generic {... iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<Tx4096xbf16>) outs(%ss : memref<Txf32>) // += x * x
    linalg.generic {... iterator_types = ["parallel"]}
        ins(%ss : memref<Txf32>) outs(%r : memref<Txf32>)   // rsqrt(s/n+eps)
    linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d0),
                                     (d0, d1) -> (d1), (d0, d1) -> (d0, d1)],
                    iterator_types = ["parallel", "parallel"]}
        ins(%x, %r, %w : ...) outs(%y : memref<Tx4096xbf16>) // x * r * w
    // After: one kernel, T workgroups
    gpu.launch blocks(...) in (%gx = %cT, ...) threads(%tx, ...) in
        (%bx = %c256, ...) workgroup(%partials : memref<256xf32, 3>) {
      // the sum as above, from 0.0; every thread: r = rsqrt(total / n +
      // eps), then y[row][j] = x[row][j] * r * w[j] for j = %tx, %tx + 256,
      // ...; %ss and %r are never stored
    }
    ```
  }];
  let options = [
    Option<"workgroupSize", "workgroup-size", "int64_t", /*default=*/"256",
           "Threads per output element (a power of two)">,
    Option<"minReductionSize", "min-reduction-size", "int64_t",
           /*default=*/"128",
           "Rows shorter than this keep one thread per output">,
    Option<"maxWorkgroupSize", "max-workgroup-size", "int64_t",
           /*default=*/"1024",
           "With few outputs, threads per output up to this (a power of "
           "two): doubled from workgroup-size while each thread still "
           "folds more than 4 values and outputs x threads stays under "
           "65536">,
    Option<"maxUnrolledRounds", "max-unrolled-rounds", "int64_t",
           /*default=*/"16",
           "Rows of whole rounds (the row's length over the threads) up to "
           "this many: each thread's loads emitted together, then folded in "
           "order (the same bytes as the loop); longer rows a loop of one "
           "load per iteration (16: a prefill RMSNorm of 4096 at 256 "
           "threads, 1.01-1.02x the 8B model's pp512 on an H100, run 142)">,
    Option<"fuseNeighbours", "fuse-neighbours", "bool", /*default=*/"true",
           "Take the outputs' fills before the reduction, and the "
           "element-wise and row ops after it, into its kernel">,
    Option<"subgroupSize", "subgroup-size", "int64_t", /*default=*/"0",
           "Where not 0, the fixed subgroup size of the target (32 on "
           "NVVM): the tree's last steps, within the first subgroup, "
           "combine 32-bit partials by gpu.shuffle down instead of through "
           "workgroup memory with a barrier each (the same pairs in the "
           "same order: the same bytes); 0 keeps the whole tree in "
           "workgroup memory (SPIR-V, whose subgroup size the device "
           "picks)">,
  ];
  let dependentDialects = ["mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def HostComputeToParallel
    : Pass<"cachet-host-compute-to-parallel", "mlir::func::FuncOp"> {
  let summary = "Put buffer computations left outside parallel loops into "
                "one-iteration parallel loops, so they run on the GPU";
  let description = [{
    `convert-linalg-to-parallel-loops` gives a linalg op without a parallel
    dimension (a reduction to a 0-d tensor, such as the sum of squares of
    an RMSNorm over a vector; an argmax; an element-wise op on 0-d tensors;
    a fill of a 0-d buffer) as sequential `scf.for` loops or bare
    `memref.load` / `memref.store` ops in the host function. Their buffers
    live on the device (`cachet-device-buffers`), where the host cannot
    read them. This pass wraps each run of such ops (with the pure ops
    between them) into an `scf.parallel` of one iteration, which the
    pipeline then maps to a kernel of one thread.

    A run is wrapped only if no value it defines is used after it; a run
    whose loaded value the host needs (a dynamic size or index) stays on the
    host, with a remark, and `cachet-device-buffers` reports it. Each
    wrapped run gets a remark: it runs on a single GPU thread.

    A `memref.copy` whose source or target is not contiguous at offset 0
    (an `insert_slice` into a KV cache or along an inner dimension, a
    `tensor.concat`) becomes a parallel loop of element copies, which runs
    as a kernel: the runtime copies one run of bytes from a buffer's aligned
    pointer (upstream's `gpu.memcpy` lowering drops a view's offset).
    Copies of whole buffers stay copies, and so do pitched weight uploads
    (`cachet.pitched_upload`).

    Before:

    ```mlir
    %sum = memref.alloc() : memref<f32>
    memref.store %zero, %sum[] : memref<f32>
    scf.for %i = %c0 to %c4096 step %c1 {
      %x = memref.load %v[%i] : memref<4096xf32>
      %s = memref.load %sum[] : memref<f32>
      %p = arith.mulf %x, %x : f32
      %n = arith.addf %s, %p : f32
      memref.store %n, %sum[] : memref<f32>
    }
    ```

    After:

    ```mlir
    %sum = memref.alloc() : memref<f32>
    scf.parallel (%t) = (%c0) to (%c1) step (%c1) {
      memref.store %zero, %sum[] : memref<f32>
      scf.for %i = %c0 to %c4096 step %c1 { ... }
      scf.reduce
    }
    ```
  }];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

def DeviceBuffers : Pass<"cachet-device-buffers", "mlir::ModuleOp"> {
  let summary = "Keep every buffer a kernel touches resident on the device";
  let description = [{
    After kernel outlining, host functions still allocate with `memref.alloc`
    and pass host memory to `gpu.launch_func`. This pass moves that memory to
    the device, so that data stays there from one launch to the next and only
    the function's inputs and outputs cross the bus, once each:

    * a `memref.alloc` whose buffer a kernel uses becomes `gpu.alloc`, and
      its `memref.dealloc` a `gpu.dealloc`; `memref.copy` between such
      buffers becomes `gpu.memcpy`;
    * a function argument a kernel uses (of static shape) is passed through
      the runtime's `cachetMgpuArgument` at function entry: the device copy
      the caller keeps resident (`cachetMgpuBindResident`: weights and KV
      caches that stay on the device across calls), else a new upload; at
      every return `cachetMgpuArgumentEnd` copies it back into the argument
      if a kernel or copy may write it (an argument updated in place, such
      as a KV cache appended with `insert_slice`, so the caller sees the
      update as with the CPU reference) and frees it, neither for a resident
      copy. An argument of dynamic shape is copied to a `gpu.alloc` buffer
      and back the same way;
    * a constant global (`memref.get_global` of a `constant` memref.global,
      what bufferization makes of `arith.constant` and immutable
      `ml_program.global`s) that kernels only read stays resident: the
      runtime's `cachetMgpuResident` uploads it on the first call and
      returns the same device copy after, through a zero-initialized slot
      (an `llvm.mlir.global` per constant) in the module, with a remark;
      `resident-constants=false` uploads it on every call instead;
    * a global that is not constant is uploaded where it is taken and, if a
      kernel may write it, copied back like an argument;
    * a returned device buffer is copied into a new host buffer before the
      return, except the device copy of an argument, for which the argument
      itself is returned (the result aliases it, as in the reference);
      device buffers are freed at every return, except a temporary of the
      function's block (a `memref.alloc` there) whose uses, through views,
      are all launches, copies, fills or host loops holding them: it is
      freed right after the last of them (the stream runs the work in
      order and the runtime hands freed memory to later work only), with
      one remark per function counting them, so that a prefill does not
      hold every layer's temporaries (each weight's dequantized copy) at
      once;
    * a `memref.copy` marked `cachet.pitched_upload` (from
      `cachet-pitched-weights`) becomes a call to the runtime's zero-filled
      strided 2D upload, `cachetMgpuMemcpy2D`.

    Run `gpu-async-region` afterwards to chain the copies and launches on one
    stream. A host operation other than these that touches a device buffer is
    an error naming it (the host cannot dereference device memory).

    Before:

    ```mlir
    func.func @f(%x: memref<16xf32>) -> memref<16xf32> {
      %y = memref.alloc() : memref<16xf32>
      gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
          args(%x : memref<16xf32>, %y : memref<16xf32>)
      return %y : memref<16xf32>
    }
    ```

    After:

    ```mlir
    func.func @f(%x: memref<16xf32>) -> memref<16xf32> {
      %p = llvm.call @cachetMgpuArgument(%xPtr, %c64) : (!llvm.ptr, i64) -> !llvm.ptr
      %dx = builtin.unrealized_conversion_cast %pDescriptor
          : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<16xf32>
      %y = gpu.alloc () : memref<16xf32>
      gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
          args(%dx : memref<16xf32>, %y : memref<16xf32>)
      %h = memref.alloc() : memref<16xf32>
      gpu.memcpy %h, %y : memref<16xf32>, memref<16xf32>
      gpu.dealloc %y : memref<16xf32>
      llvm.call @cachetMgpuArgumentEnd(%xPtr, %p, %c64, %notWritten)
          : (!llvm.ptr, !llvm.ptr, i64, i32) -> ()
      return %h : memref<16xf32>
    }
    ```
  }];
  let options = [
    Option<"residentConstants", "resident-constants", "bool",
           /*default=*/"true",
           "Upload each constant global once and keep it on the device "
           "(false: upload it on every call)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect"];
}

def EmulateBF16Storage
    : Pass<"cachet-emulate-bf16-storage", "mlir::ModuleOp"> {
  let summary = "Store bf16 kernel buffers as i16 for targets without bf16";
  let description = [{
    Vulkan devices (lavapipe included) have no bf16 type. This pass gives
    every kernel buffer argument of element type bf16 the element type i16 (the
    same bits): each `memref.load` becomes a load of i16 and an
    `arith.bitcast` to bf16 (a `vector.load` whose elements are only
    extracted, a load of an i16 vector and a bitcast per element), each
    `memref.store` the reverse.
    The host passes
    the same buffer through an `unrealized_conversion_cast` that lowering to
    LLVM folds away (both types have the same descriptor). Together with
    `arith-emulate-unsupported-floats` and `arith-expand{include-bf16}`, no
    bf16 remains in the kernels. A `vector.bitcast` from or to a vector of
    bf16 (a bf16 pair packed into a word, a word read as bf16 by
    `cachet-spirv-word-loads`) becomes a bitcast of the i16 vector and an
    element-wise `arith.bitcast`, which the same passes fold; a single
    element extracted from such a vector is taken from the i16 one. A bf16 buffer used by anything but loads
    and stores is an error naming the use.

    Before:

    ```mlir
    gpu.func @k(%a: memref<8xbf16>) kernel {
      %x = memref.load %a[%i] : memref<8xbf16>
    ```

    After:

    ```mlir
    gpu.func @k(%a: memref<8xi16>) kernel {
      %bits = memref.load %a[%i] : memref<8xi16>
      %x = arith.bitcast %bits : i16 to bf16
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def PitchedWeights : Pass<"cachet-pitched-weights", "mlir::ModuleOp"> {
  let summary = "Read padded weight arguments through a pitched buffer";
  let description = [{
    Runs after bufferization. A function argument that
    `cachet-pad-weight-rows` marked `cachet.row_pitch = P` (elements) gets a
    buffer whose innermost dimension is P; every use of the argument reads
    the `strided<[..., P, 1]>` view of it instead, so the kernels walk rows
    P elements apart. The argument is copied into the view by a
    `memref.copy` marked `cachet.pitched_upload`, which
    `cachet-device-buffers` turns into the runtime's zero-filled strided 2D
    upload (`cachetMgpuMemcpy2D`). The function's signature does not change.

    Before:

    ```mlir
    func.func @f(%w: memref<4x1024xbf16> {cachet.row_pitch = 1056 : i64}, ...) {
      linalg.matvec ins(%w, %x : memref<4x1024xbf16>, ...) ...
    ```

    After:

    ```mlir
    func.func @f(%w: memref<4x1024xbf16> {cachet.row_pitch = 1056 : i64}, ...) {
      %p = memref.alloc() : memref<4x1056xbf16>
      %v = memref.subview %p[0, 0] [4, 1024] [1, 1]
          : memref<4x1056xbf16> to memref<4x1024xbf16, strided<[1056, 1]>>
      memref.copy %w, %v {cachet.pitched_upload} : ...
      linalg.matvec ins(%v, %x : memref<4x1024xbf16, strided<[1056, 1]>>, ...) ...
    ```

    An argument whose pitch is smaller than its rows, or whose type is not a
    statically shaped identity-layout memref, is an error naming it.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def DumpKernelObjects
    : Pass<"cachet-dump-kernel-objects", "mlir::ModuleOp"> {
  let summary = "Write each serialized kernel object to a file";
  let description = [{
    After `gpu-module-to-binary`, writes the object of every `gpu.binary` to
    `directory/NAME.EXT`, NAME being the binary's symbol and EXT following
    its target and format: `.cubin`, `.ptx` or `.fatbin` (NVVM), `.hsaco` or
    `.s` (ROCDL), `.spv` (SPIR-V), `.bin` otherwise. The IR is not changed.
    This is how a disassembler (`cuobjdump`, `llvm-objdump --mcpu=gfx942`,
    `spirv-dis`) gets at what cachet generated:

    ```sh
    cachet-opt in.mlir -cachet-compile="target=rocdl chip=gfx942" \
        -cachet-dump-kernel-objects=directory=out
    llvm-objdump -d --mcpu=gfx942 out/*.hsaco
    ```

    A folder or file that cannot be written is an error naming it.
  }];
  let options = [
    Option<"directory", "directory", "std::string", /*default=*/"\".\"",
           "Folder the objects are written to (created if missing)">,
  ];
}

def StreamLoops : Pass<"cachet-stream-loops", "mlir::func::FuncOp"> {
  let summary = "Keep a host loop's GPU work on the stream before it";
  let description = [{
    Upstream's `gpu-async-region` ends the async region at an `scf.for`:
    the host waits for the GPU work before the loop, and every iteration
    creates a stream (`gpu.wait async`), chains its work on it, then
    synchronizes and destroys it (`gpu.wait [...]`). In a chunked
    dequant-once attention (cachet-dequant-once-kv with
    `max-scratch-bytes`) that cost about 90 us per chunk on the H200
    (docs/BENCHMARKS.md, run 62). cachet-compile runs this pass right after
    `gpu-async-region` on NVVM and ROCDL (SPIR-V unrolls the chunks).

    Where the loop is preceded by a wait on one token and its body is one
    chain (a new stream first, a wait on its last token right before the
    terminator, every other op either an async GPU op or free of memory
    effects), the iterations' work goes on the stream of the work before
    the loop: the lowering maps a token to its stream, and one stream runs
    its work in the order it was issued. The work after the loop continues
    on that stream (it replaces a new stream there), or the host waits for
    it right after the loop. Every loop with GPU work gets a remark: kept,
    and why, or moved.

    Before:

    ```mlir
    gpu.wait [%t]
    scf.for %i = %c0 to %n step %c1 {
      %s = gpu.wait async
      %a = gpu.launch_func async [%s] @k::@k ... args(..., %i : index)
      gpu.wait [%a]
    }
    %u = gpu.wait async
    %b = gpu.launch_func async [%u] @k2::@k2 ...
    ```

    After:

    ```mlir
    scf.for %i = %c0 to %n step %c1 {
      %a = gpu.launch_func async [%t] @k::@k ... args(..., %i : index)
    }
    %b = gpu.launch_func async [%t] @k2::@k2 ...
    ```
  }];
}

def SinkViewsIntoKernels
    : Pass<"cachet-sink-views-into-kernels", "mlir::func::FuncOp"> {
  let summary = "Build views at run-time offsets inside the kernels that "
                "read them (SPIR-V)";
  let description = [{
    A kernel that reads a view at an offset known only at run time (the
    RoPE rows or the KV cache rows of a decode step at a position argument,
    a `tensor.extract_slice` / `insert_slice` with a dynamic offset) takes a
    memref with a dynamic-offset layout. SPIR-V storage buffers carry no
    offset, so `convert-gpu-to-spirv` cannot lower such a kernel argument
    ("failed to legalize operation 'gpu.func'"). This pass moves each memref
    view op (`memref.subview`, `memref.reinterpret_cast`, `memref.cast`,
    `memref.expand_shape`, `memref.collapse_shape`) whose result has a
    dynamic offset or stride, and that a `gpu.launch` body uses, into that
    body (the chain of such views, from the first one at a dynamic offset).
    After outlining, the
    kernel takes the root buffer and the offsets as scalars, and
    `fold-memref-alias-ops` folds the view into its loads and stores. The
    host keeps its own uses of the view. cachet-compile runs it on SPIR-V
    before `gpu-kernel-outlining`; the kernels compute the same addresses.

    Before:

    ```mlir
    %row = memref.subview %cos[%pos, 0] [1, 32] [1, 1]
        : memref<16x32xf32> to memref<1x32xf32, strided<[32, 1], offset: ?>>
    gpu.launch blocks(...) threads(...) {
      %c = memref.load %row[%c0, %tx]
          : memref<1x32xf32, strided<[32, 1], offset: ?>>
      ...
    }
    ```

    After:

    ```mlir
    gpu.launch blocks(...) threads(...) {
      %row = memref.subview %cos[%pos, 0] [1, 32] [1, 1]
          : memref<16x32xf32> to memref<1x32xf32, strided<[32, 1], offset: ?>>
      %c = memref.load %row[%c0, %tx]
          : memref<1x32xf32, strided<[32, 1], offset: ?>>
      ...
    }
    ```
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def ScalarKernelArguments
    : Pass<"cachet-scalar-kernel-arguments", "mlir::ModuleOp"> {
  let summary = "Pass SPIR-V kernels their scalar arguments in buffers";
  let description = [{
    A kernel argument that is not a memref (a decode step's position, a
    chunk's offset) has no lowering on SPIR-V: the Vulkan launch convention
    binds buffers only (`gpu-to-llvm` with bare pointers and interspersed
    sizes rejects the launch). This pass gives each such argument of a
    kernel a one-element device buffer instead: the kernel loads the value
    at entry (an `index` travels as `i32`, the SPIR-V index width), and
    each `gpu.launch_func` of the kernel first writes the value into a new
    `gpu.alloc` buffer (`gpu.memcpy` from a host `memref.alloca`), which is
    freed after the launch. cachet-compile runs it on SPIR-V right after
    `cachet-device-buffers`.

    Before:

    ```mlir
    gpu.func @k(%buf: memref<16xf32>, %pos: index) kernel { ... }
    gpu.launch_func @m::@k blocks in (...) threads in (...)
        args(%b : memref<16xf32>, %p : index)
    ```

    After:

    ```mlir
    gpu.func @k(%buf: memref<16xf32>, %posBuf: memref<1xi32>) kernel {
      %v = memref.load %posBuf[%c0] : memref<1xi32>
      %pos = arith.index_cast %v : i32 to index
      ...
    }
    %h = memref.alloca() : memref<1xi32>
    memref.store %pi32, %h[%c0] : memref<1xi32>
    %d = gpu.alloc () : memref<1xi32>
    gpu.memcpy %d, %h : memref<1xi32>, memref<1xi32>
    gpu.launch_func @m::@k blocks in (...) threads in (...)
        args(%b : memref<16xf32>, %d : memref<1xi32>)
    gpu.dealloc %d : memref<1xi32>
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::memref::MemRefDialect"];
}

def LowerLaunchAttributes
    : Pass<"cachet-lower-launch-attributes", "mlir::ModuleOp"> {
  let summary = "Tell the runtime how to launch marked kernels";
  let description = [{
    `cachet-prefetch-matvec-chains` marks the launches whose kernels wait on
    `griddepcontrol` with `cachet.pdl`. Upstream's `gpu-to-llvm` launches
    every kernel the same way, so this pass puts a call to the runtime's
    `cachetMgpuSetNextLaunchFlags(CACHET_LAUNCH_PDL)` right before each
    marked launch: the next `mgpuLaunchKernel` of the thread then uses
    programmatic stream serialization (CUDA `cuLaunchKernelEx`).
    cachet-compile runs it after `gpu-async-region`: a call before that pass
    ends the launch's async region, and the stream is then synchronized
    after every marked launch (on the H200 that made a PDL chain of
    mat-vecs 0.76-0.79x as fast as one without PDL).

    Before:

    ```mlir
    gpu.launch_func @k::@k blocks in (...) threads in (...) args(...) {cachet.pdl}
    ```

    After:

    ```mlir
    %flags = llvm.mlir.constant(1 : i32) : i32
    %0 = llvm.call @cachetMgpuSetNextLaunchFlags(%flags) : (i32) -> i32
    gpu.launch_func @k::@k blocks in (...) threads in (...) args(...) {cachet.pdl}
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def LowerAttention : Pass<"cachet-lower-attention", "mlir::ModuleOp"> {
  let summary = "Flash-attention kernels for cachet.attention";
  let description = [{
    Replaces each `cachet.attention` (static shapes, f16/bf16/f32 operands, f32
    accumulator; token-major or head-major K/V, GQA, causal offset, additive
    mask) by a flash-attention kernel: a `gpu.launch` over buffers, one
    workgroup per (query tile, query head), query head `h` reading KV head
    `h floordiv (Hq / Hkv)`. The KV range (up to the causal bound of the
    tile's last row) is walked in key tiles staged through workgroup memory
    with an online softmax in f32. Token-major and head-major K/V run the
    same arithmetic in the same order, so an attention over a dequantized
    cache and the same attention over its head-major dequant-once scratch
    give identical bytes.

    A K or V operand that is `cachet.dequantize` of a token-major packed
    cache (a function argument of a ggml block type, no separate scales) is
    decoded inside the kernel while its tiles load, from the ggml bytes,
    with the reference's per-format arithmetic (computed in f32, rounded
    once to the dequantized type); the dequantize goes away. This is the
    in-kernel-dequantization baseline dequant-once is measured against, and
    gives the same bytes as the kernel over the dequant-once scratch.
    The decode kernels (`attention_decode` but for its staged form, and
    `attention_decode_mma_sync`) also read a split q8_0 cache that way: `i8`
    values `[pos][kv_head][dim]` and `f16` scales `[pos][kv_head][dim / 32]`
    (function arguments or their in-place updates, the form front ends
    write), each value `float(q) * scale` rounded once to the dequantized
    type, so a decode step writes no dequantized copy of the cache; the
    other kernels read such a cache through its dequantize.

    ```mlir
    // Before: a decode step's attention over split q8_0 K/V.
    %k = cachet.dequantize %kq scales %ks : tensor<32768x8x128xi8>,
        tensor<32768x8x4xf16> -> tensor<32768x8x128xf16>
    // (V alike)
    %o = cachet.attention %q, %k, %v layout <token_major> ... {cachet.kernel_config =
        #cachet.kernel_config<variant = attention_decode_mma_sync, ...>}
    // After: one kernel reads %kq / %ks (16-byte loads of the values, the
    // block's scale) and %vq / %vs; no dequantize is left.
    gpu.launch ... {
      %w = vector.load %kq_buffer[%pos, %head, %x] : memref<32768x8x128xi8, ...>, vector<16xi8>
      %d = memref.load %ks_buffer[%pos, %head, %block] : memref<32768x8x4xf16, ...>
      ...
    }
    ```

    A `cachet.attention_partial` (one chunk of keys, as
    `cachet-dequant-once-kv` emits under `max-scratch-bytes`) gets the
    scalar or mma-sync kernel with its key offset: the kernel reads the
    online-softmax state before its first key tile (the accumulators, each
    row's max and sum) and writes it back, in place, after its last; causal
    masking compares absolute positions. Since the kernels keep that state
    from tile to tile anyway (the mma-sync kernel sums each tile's P over
    the lanes of a row), chunks on key-tile boundaries give the bytes of one
    pass. The state operands become writable `bufferization.to_buffer` and
    the results `to_tensor restrict writable` of the same buffers.

    The pass runs on tensors, before bufferization and before
    `cachet-lower-to-linalg`: the operands become `bufferization.to_buffer`
    (a packed cache through an `unrealized_conversion_cast` to its bytes,
    which cachet-lower-to-linalg folds into the byte argument), the result a
    `memref.alloc` wrapped in `bufferization.to_tensor restrict writable`.

    The pass decides nothing: it builds the kernel of each op's
    `#cachet.kernel_config` (set by `cachet-select-kernel-configs`, which
    documents the choice, or written in the input). An op that also has a
    `cachet.fallback_kernel_config` (the mma kernel's, on SPIR-V) gets both
    kernels, chosen at run time by the runtime's answer:

    ```mlir
    %has = llvm.call @cachetMgpuHasCooperativeMatrixF16(%c16, %c16, %c16)
        : (i32, i32, i32) -> i32
    %coop = arith.cmpi ne, %has, %c0 : i32
    %o = scf.if %coop -> (tensor<1x64x8x64xf16>) {
      // the mma kernel (KHR cooperative matrices)
    } else {
      // the fallback's kernel
    }
    ``` An op without one keeps
    the reference lowering of `cachet-lower-to-linalg`; a config the kernel
    cannot serve (element types, head dimensions, subgroups, workgroup
    memory; see `whyNotAttentionConfig`) is an error naming the reason.
    `populateLowerAttentionPatterns` (cachet/Conversion/Attention.h) gives
    the same lowering as a rewrite pattern.

    Kernels (the config's `variant`):

    * `attention_scalar`: one thread per query row, one pass of online
      softmax in base 2 over the key tiles: per tile the row's max moves to
      the tile's, `P = exp2(score - max)` is rounded to V's element type (as
      `P V` takes it), `O = alpha O + P V` and the sum adds the rounded P;
      the output is `O * (1 / sum)` (the mma kernels' arithmetic, so that a
      chunk's state can be handed on). The scores and the f32 output rows
      live in workgroup memory. Runs on every target (lavapipe included).
      Query tile: two subgroups of rows, at least 32,
      halved (down to 32) until the accumulator rows leave room for a key
      tile.
    * `attention_tiled`: the scalar kernel's online softmax with the
      products blocked in registers, for targets without matrix
      instructions the attention can use (bf16 on SPIR-V, devices without
      cooperative matrices, ROCDL). Threads form groups sharing 4 query
      rows; each thread sums 4 rows by a slice of the key tile's positions
      of `Q K^T` and the same rows by a slice of the value columns of `P V`
      on f32 fused multiply-adds. Steps of head-dim columns of Q and K, then
      steps of positions of V, are staged in one f32 workgroup buffer (K/V
      decoded from blocks as the dequant-once scratch holds them); the rows'
      maxima and sums over a key tile go through workgroup memory, folded in
      the threads' order, so a chunk's state carries over as in the scalar
      kernel. Runs on every target.
    * `attention_mma`: one pass (FlashAttention-2 style). `Q K^T` and `P V` are
      16x16x16 f16 matrix multiply-accumulates with f32 accumulators
      (`gpu.subgroup_mma_*`; `wmma` on NVVM, `OpCooperativeMatrix*KHR` on
      SPIR-V). Each of four subgroups owns 16 query rows: its Q operands are
      loaded once, its output accumulators stay in registers across the key
      tiles. Per key tile the subgroup stores its scores to workgroup
      memory; lanes that share a row (subgroup / 16 of them) scale and mask
      them, take the row max with shuffles, write `P = exp2(s - max)` as
      f16 and a 16-column broadcast of `alpha = exp2(oldMax - max)`, which
      rescales the accumulators elementwise before `O += P V`; the row sum
      adds the rounded P. The output is divided by the sum at the end. K
      and V tiles travel through registers in `vector-bytes` vectors, the
      next tile's loads issued before the current tile is multiplied (K/V
      decoded in the kernel are written to the tile as they decode); with
      `async-copy` (NVVM, dynamic memory, f16 K/V) they are double buffered
      instead and filled by `nvgpu.device_async_copy` (cp.async, zero-filled
      past the last position), one barrier per key tile. With `async-copy`
      and K and V both packed (rows of a multiple of 4 bytes), the blocks'
      bytes are double buffered instead (16-, 8- or 4-byte copies) and each
      key tile, once its copies are in and the next tile's started, is
      decoded in workgroup memory into single f16 K and V tiles, eight
      values of one block per thread, rounded as the dequant-once scratch
      holds them; the tiles are those the f16 double buffers would get, so
      rewrites off and on give the same bytes. Tile
      rows are padded by `tile-pad-bytes` so that the 16 rows of an operand
      fall in different banks (on the H200 this alone is 4x). With
      `dynamic-shared` the tiles are views of one dynamic allocation, above
      48 KiB where the profile allows (budget: the profile's workgroup
      memory over `resident-workgroups`); with `warp-sync` a subgroup
      orders its private staging with `nvvm.bar.warp.sync` instead of a
      workgroup barrier. `cachet-compile` sets all three on NVVM. Needs f16
      Q/K/V, head dimensions that are multiples of 16, subgroups of 16, 32
      or 64 lanes and a profile whose `coop_matrix` lists
      `16x16x16:f16->f32`.
    * `attention_mma_sync` (NVVM): the same one-pass kernel on PTX's `mma.sync`
      (`nvgpu.mma.sync` m16n8k16 f16 with f32 accumulators; for bf16 Q, K
      and V, `nvvm.mma.sync` m16n8k16 bf16, which `nvgpu.mma.sync` of LLVM
      22 lacks), whose fragment layout is known: lane `4g + t` holds rows `g` and `g + 8`, columns
      `2t, 2t + 1` of each 8-column block. Operands come from the padded
      workgroup-memory tiles through `nvgpu.ldmatrix` (four 8x8 matrices a
      load; V transposed as it loads), Q's once per subgroup. The scores
      never leave registers: a row's max is the max of the lane's scores
      and its quad's (two xor shuffles), `P = exp2(s - max)` rounded to f16
      (bf16) is packed from the score fragments straight into the A operand of
      `P V`, the accumulators are rescaled by `alpha` row by row, and the
      row sums stay per lane until the end. No workgroup memory beyond the
      Q, K and V tiles (and the second K/V buffers), so the default key
      tile is 64. Same tiles and options as `mma` otherwise (`row-blocks`:
      Q's operands are read per key tile with more than one). Needs 32-lane
      subgroups as well.
    The scalar kernel's dot products and `P V` sums are unrolled. An
    attention no kernel takes (dynamic shapes, an f16 accumulator, other
    element types) gets no config from cachet-select-kernel-configs, which
    says why in a remark.

    Before:

    ```mlir
    %o = cachet.attention %q, %k, %v layout <head_major> scale 0.125 causal 48
        {cachet.kernel_config = #cachet.kernel_config<variant = attention_scalar,
           tile = [32, 64], workgroup = 32, subgroup = 8>}
        : tensor<8x16x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16>
        -> tensor<8x16x64xf16>
    ```

    After (abridged; the scalar kernel, as on lavapipe):

    ```mlir
    %qb = bufferization.to_buffer %q read_only : tensor<8x16x64xf16> to memref<8x16x64xf16, strided<[?, ?, ?], offset: ?>>
    ...
    %ob = memref.alloc() : memref<8x16x64xf16>
    gpu.launch blocks(%bx, %by, %bz) in (%c1, %c8, %c1)
               threads(%tx, %ty, %tz) in (%c32, %c1, %c1)
               workgroup(%kt : memref<64x64xf16, #gpu.address_space<workgroup>>,
                         %vt : memref<64x64xf16, #gpu.address_space<workgroup>>,
                         %acc : memref<32x64xf32, #gpu.address_space<workgroup>>,
                         %sc : memref<32x64xf32, #gpu.address_space<workgroup>>) {
      %r:2 = scf.for %t = %c0 to %tiles step %c1 iter_args(%max = %ninf, %sum = %zero) -> (f32, f32) {
        gpu.barrier
        ... K tile to workgroup memory ...
        gpu.barrier
        ... scores, new max, rescaled sum ...
      }
      scf.for %t = %c0 to %tiles step %c1 {
        ... K and V tiles, scores, P = exp(s - max) / sum as f16, O += P V ...
      }
      ...
    }
    %o = bufferization.to_tensor %ob restrict writable : memref<8x16x64xf16> to tensor<8x16x64xf16>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::gpu::GPUDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def LowerMatvec : Pass<"cachet-lower-matvec", "mlir::func::FuncOp"> {
  let summary = "Mat-vec kernels with a subgroup per row and wide loads, "
                "siblings and element-wise epilogues fused";
  let description = [{
    Runs after bufferization, after `cachet-select-kernel-configs`: the
    kernel's parameters below (`subgroup-size`, `rows-per-block`,
    `load-bytes`, `loads-per-lane`, `rows-per-subgroup`, `blocks-per-cu`,
    `stage-x` and their `paired-` forms) are that pass's options, kept on
    each mat-vec as its `#cachet.kernel_config` (variant `matvec_subgroup`;
    `tile = [rows-per-block, rows-per-subgroup]`, `vector_width` the
    elements of one load, `loads` and `resident` `[alone, paired]`). A
    mat-vec without one, or with `matvec_generic`, is left alone; a config
    the kernel cannot serve is an error naming the reason. Mat-vecs joined
    in one kernel have equal configs. Replaces each `linalg.matvec` on memrefs
    (`y += A x`, A `[M, K]` of f16, bf16 or f32 with unit inner stride and
    rows aligned to `load-bytes` (16 by default), which padded row pitches
    keep; x contiguous, y f32) by a `gpu.launch` in which one subgroup of
    `subgroup-size` lanes computes a row. Blocks are one-dimensional:
    `rows-per-block` subgroups of consecutive threads. Each lane loads
    `load-bytes` of the row and of x at a time (`vector.load` with that
    alignment), issues `loads-per-lane` such loads before it adds their
    products (so that many are in flight), keeps a vector of f32 partial
    sums, and reduces them at the end; the lanes' sums are added with a
    `gpu.shuffle xor` butterfly and lane 0 adds the row's sum to y (a
    `linalg.fill` of +0.0 into y right before the mat-vec is done by the
    kernel, which stores `0.0 + sum`: the same value, one launch fewer).
    With `rows-per-subgroup` R > 1 a subgroup computes R consecutive rows
    and each load of x serves all R. With `blocks-per-cu` N > 0 (and
    `paired-blocks-per-cu` for the kernels of the next paragraph) the grid
    is N blocks per compute unit of the device profile, each looping over
    the kernel's blocks (`scf.for` from its block id, step the grid), and
    the loop is marked `cachet.min_workgroups_per_sm = N`, which
    cachet-kernel-occupancy makes `.minnctapersm` on NVVM, so that the whole
    grid is resident. On the H200 it did not pay: the Llama-3-8B chain took
    0.247-0.252 ms with N = 4, 6 or 8 against 0.245-0.246 ms without
    (docs/BENCHMARKS.md), so it is off by default. With `stage-x` each block
    first copies x into workgroup memory (a `workgroup` attribution of the
    launch; `load-bytes` vectors, a `gpu.barrier` after) and its subgroups
    read x from there, so only weight loads are in flight from global
    memory (on the H200 the Q/K/V kernel needs 83 registers instead of 103).
    An x larger than 48 KiB (CUDA's static limit) or than the profile's
    workgroup memory stays in global memory, with a remark.
    cachet-prefetch-matvec-chains gives staged kernels PDL (its wait comes
    before the copy) but no next-weight prefetch, which would add kernel
    arguments (a remark says so). Off by default: not measured on a GPU yet
    (lavapipe runs it, test/Integration/matvec-fused.test). The weight's loads carry
    `cachet.streaming_weight`, which cachet-prefetch-matvec-chains
    recognizes. The summation order is fixed by the shape and the options,
    not by the schedule: the same inputs give the same bits on every run. A
    mat-vec that does not qualify is left to the generic lowering, with a
    remark naming the failed condition.

    Fewer launches (`fuse-siblings`, `fuse-epilogues`; a decode step's
    launch boundaries cost as much as its small mat-vecs):
    - Consecutive mat-vecs over the same x (the Q/K/V projections, gate and
      up) become one kernel. Mat-vecs with the same row count are computed
      by the same subgroups, one accumulator per weight row, so each load of
      x serves all of them; each row count takes its own range of blocks.
      A kernel with such shared subgroups keeps `paired-loads-per-lane`
      loads per lane in flight (8 by default: 3% faster on the H200's
      Llama-3-8B chain than 4, 16 slower), the others `loads-per-lane`.
      Ops between the mat-vecs stay where they are when they may run before
      the kernel: no op between reads a result of an earlier mat-vec or
      writes what it reads (memory effects and local alias analysis).
    - An element-wise `linalg.generic` right after them (ops in between as
      above) that reads results of mat-vecs with one row count, and
      otherwise only buffers of the same rows that the kernel does not
      write (a residual: `h = x + o`), all through identity maps, and
      whose body is pure scalar code (a conversion to bf16, `silu(gate) *
      up`, the residual add) is computed by the lane that stores the row:
      with the same ops on the same values, so the same bits. The
      mat-vecs' results are still stored. Its result must not alias the
      mat-vecs' buffers, nor a buffer it reads other than its own
      element read in place.

    A small-batch `linalg.matmul` (`y[m][n] += x[m][k] W[n][k]`, the
    transpose-b maps, M static rows of x; configured by
    cachet-select-kernel-configs up to its `small-batch`) is built the same
    way, with x `[M, K]` and y `[M, N]`: each lane's decoded weight slice
    (each load) is multiplied with the M rows of x, into one f32
    accumulator per (weight row, row of x), each slice a chain of
    `vector.fma` on one-element vectors; the butterfly and the stores run
    per row of x (`y[m][row]`), siblings over the same x share the kernel
    and a 2-D element-wise epilogue over their results is fused as above.
    stage-x takes a mat-vec's x only.

    `matvec_mma_sync` (NVVM; selected with allow-mma-sync for f16 x and an
    f16 weight or blocks dequantized to f16, rows a multiple of 16, K of
    128, M <= 8): the small-batch mat-mul on m16n8k16 `nvgpu.mma.sync`. A
    block is `tile[0]` subgroups sharing 16 weight rows, subgroup w taking
    steps w, w + tile[0], ... of 128 columns; in a step lane l (g = l / 4,
    q = l % 4) decodes values 32q .. 32q + 31 of rows g and g + 8 into f16
    pairs (q8_0 / q4_0 / tq2_0 by integer and f16 arithmetic, the other
    formats in f32 rounded once) and reads the same columns of row g of x;
    each 8 values fill the lane's k-slots of two mma k-steps in the weight
    and x fragments alike (the k order within an mma is free), so nothing
    is converted to f32. The f32 accumulators are added across the
    subgroups in workgroup memory, in subgroup order, by subgroup 0, whose
    lanes store `y[n][row]` and the epilogues. On the H200 it ran M = 8
    mat-muls 1.11-2.13x faster than the FMA kernel (run 101).

    `gemm_mma_sync` (NVVM; selected with allow-mma-sync for a mat-mul of
    more rows of x than `small-batch`, a prefill's linear layer: f16 or
    bf16 x and weight, f32 y, K a multiple of the step, static shapes): a
    tiled GEMM on m16n8k16 mma.sync. Workgroup (bx, by) computes the
    `tile[0] x tile[1]` block of y at rows bx tile[0] of x and by tile[1]
    of the weight (the x tiles of one weight tile are neighbours in the
    grid, so each weight byte comes from memory about once); each of its
    `workgroup / 32` subgroups owns 64 rows by an equal share of the weight
    rows (32: 16 f32 accumulator fragments in registers, 64: 32). Steps of
    `tile[2]` (default 32) columns of both tiles are copied by
    `nvgpu.device_async_copy` (16 bytes each, L1 bypassed) into `stages`
    buffers of workgroup memory (dynamic with `dynamic_shared`) whose rows
    are padded by `pad_bytes` (16: `nvgpu.ldmatrix` reads 8 rows without
    bank conflicts), the copies of the next `stages - 1` steps in flight
    while one computes; one barrier per step (after the wait for its
    copies, before the copies into the buffer the previous step read).
    Operands come by `nvgpu.ldmatrix` (x rows
    are A, weight rows the column-major B: both K-contiguous, no
    transposition), products by `nvvm.mma.sync` in column order; rows past
    M or N are read clamped and never stored. A `linalg.fill` of +0.0 right
    before is done by the kernel; else it adds y's value once at the end.
    A block weight's dequantized copy is still written by its own kernel
    first: where the GEMM's weight is the buffer a block dequantize
    (`cachet.block_dequantize`, packed or split) writes and nothing else
    reads, that generic becomes a kernel of 256-thread workgroups, each
    thread decoding 8 values of a row from the blocks' aligned 32-bit
    words (as the mat-vec kernel decodes them: the same values) and
    storing them with one vector store (q8_0 prefill 1.65-1.98x on an
    H100, docs/BENCHMARKS.md run 114); else the generic stays, with a
    remark naming why. A `gemm_wgmma` config with `load_bytes` (16 or 4)
    decodes a packed weight of 32-value blocks in the GEMM instead: each
    64-value step's block bytes are copied beside x's by cp.async of that
    many bytes and decoded in workgroup memory into a double-buffered
    weight tile (by the multiplying warpgroups between their products,
    or, with `workgroup = 2 * tile[0] + 128` or `+ 256`, by producer
    warpgroups that named barriers hand the tiles to and from); the
    dequantize and its copy are erased:

    ```mlir
    // Before (a q8_0 weight's copy, then the GEMM):
    linalg.generic {...} outs(%w : memref<384x256xbf16>)
        attrs = {cachet.block_dequantize = !cachet.q8_0} {...}
    linalg.matmul {cachet.kernel_config = #cachet.kernel_config<
        variant = gemm_wgmma, tile = [128, 128], workgroup = 256,
        subgroup = 32, stages = 4, dynamic_shared = true, load_bytes = 16>}
        ins(%x, %w : memref<256x256xbf16>, memref<384x256xbf16>) ...
    // After: one gpu.launch; buffers memref<4x128x64xbf16> (x),
    // memref<2x128x64xbf16> (the decoded weight), memref<4x128x80xi8>
    // (the blocks' bytes), nvgpu.device_async_copy of 16 bytes from the
    // packed memref<384x272xi8>, decoded, nvvm.wgmma.mma_async.
    ```

    `gemm_tiled` (every target; selected without allow-mma-sync, so on
    SPIR-V and ROCDL, where the mat-mul kept the generic kernel before:
    f16 or bf16 x and weight, f32 y, K a multiple of the step): the same
    product on f32 fused multiply-adds. Workgroup (bx, by) computes the
    `tile[0] x tile[1]` block of y with `workgroup` threads; each step of
    `tile[2]` columns is read in 16-byte loads (SPIR-V: one `vector<4xi32>`
    word each), converted to f32 and stored transposed (`[column][row]`)
    into workgroup memory between two barriers, and the next step's loads
    are issued before this step's products so that they are in flight
    while it computes. Each thread sums `vector_width` weight rows by
    `tile[0] * tile[1] / (workgroup * vector_width)` rows of x, both in
    runs of 4 read as `vector<4xf32>` from workgroup memory, with
    `vector.fma` over the columns in order; the stores and epilogues are
    the mma-sync GEMM's:

    ```mlir
    // Before:
    linalg.matmul {cachet.kernel_config = #cachet.kernel_config<
        variant = gemm_tiled, tile = [128, 128, 16], workgroup = 256,
        vector_width = 8>}
        ins(%x, %w : memref<256x128xbf16>, memref<384x128xbf16>) ...
    // After: one gpu.launch of 2 x 3 workgroups of 256 threads, workgroup
    // memory memref<16x128xf32> twice, an scf.for over the 8 steps
    // carrying 16 vector<4xf32> sums and the next step's 16 values,
    // vector.fma, pairs stored under scf.if.
    ```

    The GEMMs take `fuse-siblings` and `fuse-epilogues` from their configs
    too, with the conditions above. The element-wise op runs where each
    thread stores a pair of sums (row r, columns c and c + 1): its inputs
    read as pairs, its body cloned per column, its result stored as one
    pair; a GEMM result that nothing but the op reads (its buffer's
    other users the mat-mul, its zero fill and deallocs) is never written,
    and its buffer goes. The wgmma GEMM also takes the mat-muls after it
    over the same x with the same weight rows (gate and up; K and V), where
    the tile's weight rows divide among them in multiples of 8: tile row
    i of weight j is row `by tile[1] / n + i` of it, so one thread holds
    the sums of every weight at a row and column, which the epilogue
    combines (`silu(gate) * up` straight from the accumulators):

    ```mlir
    // Before (a prefill's gate, up and GLU):
    linalg.fill ins(%zero : f32) outs(%g : memref<512x14336xf32>)
    linalg.matmul {cachet.kernel_config = #cachet.kernel_config<
        variant = gemm_wgmma, tile = [128, 256], workgroup = 256,
        subgroup = 32, stages = 4, dynamic_shared = true,
        fuse_siblings = true, fuse_epilogues = true>}
        ins(%x, %Wg : memref<512x4096xbf16>, memref<14336x4096xbf16>)
        outs(%g : memref<512x14336xf32>)
    linalg.fill ins(%zero : f32) outs(%u : memref<512x14336xf32>)
    linalg.matmul {... the same config ...}
        ins(%x, %Wu : memref<512x4096xbf16>, memref<14336x4096xbf16>)
        outs(%u : memref<512x14336xf32>)
    linalg.generic {indexing_maps = [#id, #id, #id], ...}
        ins(%g, %u : memref<512x14336xf32>, memref<512x14336xf32>)
        outs(%h : memref<512x14336xbf16>) { ... silu(gate) * up, truncf ... }
    // After: one gpu.launch of 4 x 112 workgroups, each tile 128 rows of
    // each weight; m64n256k16 wgmma; per pair of sums the silu, the
    // product and one vector.store of vector<2xbf16> into %h. %g and %u
    // are no longer allocated.
    ```

    Each decision is a remark: the kernel of each mat-vec, which mat-vecs
    share a kernel, which generic is an epilogue, and why a mat-vec or
    generic that reads the group's values was not fused.

    Before (one decoder layer's projections and GLU, abridged):

    ```mlir
    linalg.matvec ins(%Wg, %x : memref<14336x4096xbf16>, memref<4096xbf16>)
                  outs(%g : memref<14336xf32>)
    linalg.matvec ins(%Wu, %x : memref<14336x4096xbf16>, memref<4096xbf16>)
                  outs(%u : memref<14336xf32>)
    %h = memref.alloc() : memref<14336xbf16>
    linalg.generic {indexing_maps = [#id, #id, #id], ...}
        ins(%g, %u : memref<14336xf32>, memref<14336xf32>)
        outs(%h : memref<14336xbf16>) { ... silu(gate) * up, truncf ... }
    ```

    After (abridged; 32 lanes, 4 rows per block, 4 loads per lane):

    ```mlir
    %h = memref.alloc() : memref<14336xbf16>
    gpu.launch blocks(%bx, %by, %bz) in (%c3584, %c1, %c1)
               threads(%tx, %ty, %tz) in (%c128, %c1, %c1) {
      %lane = arith.remui %tx, %c32 : index
      %row = ... %bx * 4 + %tx / 32
      %acc:2 = scf.for %k = ... to %c4096 step %c1024
          iter_args(%a = %zeros, %b = %zeros) -> (vector<8xf32>, vector<8xf32>) {
        %x0 = vector.load %x[%k] {alignment = 16} : memref<4096xbf16>, vector<8xbf16>
        %g0 = vector.load %Wg[%row, %k] {alignment = 16, cachet.streaming_weight}
            : memref<14336x4096xbf16>, vector<8xbf16>
        %u0 = vector.load %Wu[%row, %k] {alignment = 16, cachet.streaming_weight}
            : memref<14336x4096xbf16>, vector<8xbf16>
        ... three more of each, 256 columns apart; extf, mulf, addf ...
      }
      %sg = vector.reduction <add>, %acc#0, %zero : vector<8xf32> into f32
      %s, %v = gpu.shuffle xor %sg, %c16, %c32 : f32
      ... the same for %acc#1 ...
      scf.if %lane_is_0 {
        memref.store %gate, %g[%row] : memref<14336xf32>
        memref.store %up, %u[%row] : memref<14336xf32>
        ... the generic's body on %gate, %up ...
        memref.store %hv, %h[%row] : memref<14336xbf16>
      }
    }
    ```

    `subgroup-size=0` (the default) takes the subgroup size of the module's
    device profile (`#cachet.device`), or 32 without one.

    `max-vector-elements=N` (SPIR-V: 4, its widest vectors) keeps a float
    kernel's arithmetic on vectors of at most N values: each wider load of
    the weight and of x (16 bytes of bf16: 8 values) is sliced into pieces
    of N right after it, each piece converted and multiplied alone into an
    accumulator of N partial sums (the load itself stays one 16-byte
    load: `cachet-spirv-word-loads` reads it as 4 words).
  }];
  let options = [
    Option<"maxVectorElements", "max-vector-elements", "int64_t",
           /*default=*/"0",
           "the most values of a vector the float kernels compute on "
           "(0: a whole load's)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::nvgpu::NVGPUDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def LowerDequantTranspose
    : Pass<"cachet-lower-dequant-transpose", "mlir::func::FuncOp"> {
  let summary = "One-pass kernels for packed cachet.dequant_transpose";
  let description = [{
    Runs after bufferization. cachet-lower-to-linalg marks the
    `linalg.generic` of each packed `cachet.dequant_transpose` with
    `cachet.dequant_transpose = <block type>`; this pass replaces each one
    that carries a `#cachet.kernel_config` (set by
    `cachet-select-kernel-configs`, or written in the input) by the kernel
    it names, which reads each block once and writes the head-major rows
    with wide stores. It decides nothing: a config it cannot build is an
    error naming the cause; an op without one keeps the generic kernel.

    * `dequant_transpose_staged`: a workgroup takes `tile[0]` consecutive
      positions: their blocks are contiguous in the token-major cache, so
      the workgroup stages them into workgroup memory with coalesced
      `load_bytes` loads (each thread issues all of its loads before it
      stores any), then each thread decodes `vector_width` values of one
      head's row (the decoding of the reference lowering, so the values are
      the same bits) and writes them with one vector store; consecutive
      threads write consecutive bytes of a head's rows.
    * `dequant_transpose_direct`: each thread decodes one store's values
      from bytes read straight from global memory (no workgroup memory, no
      barrier); on the H200 it ran 1.53-1.68 TB/s against the staged
      kernel's 1.85-1.90 (docs/BENCHMARKS.md), so the select pass keeps
      `staged` by default.

    The options only adapt the code to the target (SPIR-V).
    `populateLowerDequantTransposePatterns`
    (cachet/Conversion/DequantTranspose.h) gives the same lowering as a
    rewrite pattern (test/Conversion/lowering-patterns.mlir checks that
    mlir::walkAndApplyPatterns with it gives this pass's IR).

    Before (after bufferization; 1024 positions, 2 KV heads, D 128, q8_0):

    ```mlir
    linalg.generic {...} ins(%kq : memref<1024x2x136xi8>)
        outs(%k : memref<2x1024x128xf16>)
        attrs = {cachet.dequant_transpose = !cachet.q8_0} {...}
    ```

    After (abridged):

    ```mlir
    %flat = memref.collapse_shape %kq [[0, 1, 2]]
        : memref<1024x2x136xi8> into memref<278528xi8>
    gpu.launch blocks(...) in (%c64, %c1, %c1)
               threads(...) in (%c256, %c1, %c1)
               workgroup(%staged : memref<1088xi32, 3>) {
      // 16 positions, 272 16-byte loads of the chunk: every thread loads
      // one, threads 0-15 a second, all before the first store.
      %v = vector.load %flat[...] : memref<278528xi8>, vector<16xi8>
      %w:4 = scf.if (%tx < 16) { the second load } else { zeros }
      ... memref.store of the words to %staged ...
      gpu.barrier
      scf.for %item = %tx to %c512 step %c256 { // 8 values per item
        ... decode from %staged ...
        vector.store %vals, %k[%h, %pos, %d] : memref<2x1024x128xf16>, vector<8xf16>
      }
    }
    ```
  }];
  let options = [
    Option<"workgroupAlloc", "workgroup-alloc", "bool", /*default=*/"false",
           "Stage in a memref.alloc of workgroup memory inside the kernel "
           "(for SPIR-V) instead of a workgroup attribution of the launch">,
    Option<"scalarStores", "scalar-stores", "bool", /*default=*/"false",
           "Store the values one by one (for SPIR-V, whose vector stores to "
           "scalar buffers need pointer casts)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def LowerQuantize : Pass<"cachet-lower-quantize", "mlir::func::FuncOp"> {
  let summary = "One kernel for a cachet.quantize to packed blocks: a "
                "subgroup's lanes per block";
  let description = [{
    Runs after bufferization. cachet-lower-to-linalg lowers a
    `cachet.quantize` to packed blocks into one generic of one iteration
    per byte (marked `cachet.quantize = <block type>` and
    `cachet.quantize_rounding`), each scanning its block's 32 values for
    the scale (and q4_1 / q5_1's minimum, iq4_nl's fit) before computing
    its byte: as a generic kernel, a thread per byte (10.5 us for a
    prefill's K of 512 tokens x 8 heads x 128 into a q8_0 cache on an
    H100, docs/BENCHMARKS.md run 141).

    This pass replaces each such generic that carries a
    `#cachet.kernel_config<variant = quantize_subgroup, workgroup = N,
    subgroup = W>` (set by `cachet-select-kernel-configs`, or written in
    the input) by one kernel where L = min(W, 32) consecutive lanes of a
    subgroup of W hold a block, each lane 32 / L of its values (value
    `lane + L * k` in its k-th register: loads of consecutive values
    across the lanes), N / L blocks per workgroup, the grid from the block
    count, no launch for a run-time count of 0. The scans combine the
    lanes' values in a tree of xor shuffles where that gives the scan's
    result (the largest magnitude; the minimum and the maximum and the
    first value of the largest magnitude, each with its index so that
    equal values keep the first, as the scan in order does); q8_0's MAX,
    which keeps a NaN until the next value, reads the block's values in
    order through `gpu.shuffle idx` in a block with a NaN; iq4_nl's fit
    adds its terms in order the same way. Every lane carries the same
    values, computed by the same f32 operations in the same order as the
    reference lowering's (BlockEncoder), so the bytes are the same bits.
    Each lane computes its own values' quants, q5's high bits are ORed
    over the lanes, and each byte of the block is stored by one lane. A
    lane past the last block reads the last block again (every lane takes
    part in the shuffles) and stores nothing.

    It decides nothing: a config it cannot build is an error naming the
    cause; a generic without one keeps the generic kernel.

    Before (after bufferization; 4 tokens x 2 heads x 64 values, q8_0):

    ```mlir
    linalg.generic {...} outs(%bytes : memref<4x2x68xi8>)
        attrs = {cachet.kernel_config = #cachet.kernel_config<
                   variant = quantize_subgroup, workgroup = 64,
                   subgroup = 32>,
                 cachet.quantize = !cachet.q8_0,
                 cachet.quantize_rounding = #cachet.rounding<away>} {
      // byte j % 34 of block j / 34 of row (t, h): its block's largest
      // magnitude (32 loads), then the scale's bytes or a quant
    }
    ```

    After (abridged: two blocks per workgroup, a value per lane):

    ```mlir
    gpu.launch blocks(...) in (%c8, %c1, %c1) threads(...) in (%c64, %c1, %c1) {
      %block = block x 2 + thread / 32     // %read = min(%block, 15)
      %x = memref.load %values[%t, %h, %b32 + lane]   // (t, h, b) of %read
      // any NaN in the block: 5 xor shuffles; if so the scan in order
      // (32 idx shuffles), else the largest magnitude in 5 xor shuffles
      %m = gpu.shuffle xor %a, %c1_i32, %c32_i32 : f32
      ...
      scf.if (lane < 2 and %block < 16) {
        memref.store %d, %bytes[%t, %h, %b34 + lane]  // the scale's bytes
      }
      scf.if (%block < 16) {
        memref.store %q, %bytes[%t, %h, %b34 + 2 + lane]  // the quant
      }
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
}

#endif // CACHET_CONVERSION_PASSES_TD

def InnermostDimFirst
    : Pass<"cachet-innermost-dim-first", "mlir::func::FuncOp"> {
  let summary = "Put the innermost dimension of a generic kernel's parallel "
                "loop first, where the tiling puts the threads";
  let description = [{
    The generic kernels come from `convert-linalg-to-parallel-loops`: one
    `scf.parallel` per linalg op, its dimensions in the op's loop order,
    the innermost (last) one indexing consecutive elements of row-major
    buffers. The upstream tiling (`scf-parallel-loop-tiling` with the
    workgroup size) splits the first dimension over the threads of a
    workgroup. So a decode step's `[1][4096]` element-wise op ran 4096
    workgroups with 1 thread of 64 busy, and a `[rows][columns]` op (a
    packed weight dequantized for a prefill's GEMM) had the threads of a
    workgroup walk down a column, each access a row apart (on the H200
    the 8B-shaped prefill, which dequantizes its q8_0 weights that way,
    took 261 ms with q8_0 weights against 79 ms with bf16 ones, runs
    105-106; 121 ms after this pass and the early frees of
    cachet-device-buffers, run 108). This pass, run before the
    tiling, moves the innermost dimension of each outermost `scf.parallel`
    of two or more dimensions (without reductions) to the front, the
    others after it in their order: consecutive threads then take
    consecutive elements. Only the order of the loop's dimensions
    changes: every iteration computes what it computed before, so values
    are the same bits. One remark per function counts the loops.

    Before:

    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%c512, %c4096) step (%c1, %c1) {
      ... %x[%i, %j] ...
    }
    ```

    After:

    ```mlir
    scf.parallel (%j, %i) = (%c0, %c0) to (%c4096, %c512) step (%c1, %c1) {
      ... %x[%i, %j] ...
    }
    ```
  }];
  let dependentDialects = ["mlir::scf::SCFDialect"];
}

def UnitTransposesToReshapes
    : Pass<"cachet-unit-transposes-to-reshapes", "mlir::func::FuncOp"> {
  let summary = "Make a transpose that only moves unit dimensions a reshape, "
                "so that it copies nothing";
  let description = [{
    Front ends write the heads-first transposes of attention for any number
    of tokens: `[T][H][D]` to `[H][T][D]` for the queries, and back for the
    output. In decode (T = 1) such a `linalg.transpose` keeps every
    element where it is in memory (it moves a dimension of extent 1 only),
    yet the generic lowering makes it a kernel that copies the tensor, two
    per layer in a Llama decode step. This pass (on tensors) replaces a
    `linalg.transpose` with static shapes whose permutation keeps the
    dimensions of extent other than 1 in order by a
    `tensor.collapse_shape` of its input to one dimension and a
    `tensor.expand_shape` to its result's shape: bufferization makes them
    views of the input's buffer (a copy only where that buffer is not
    contiguous). The same elements in the same places: values are the same
    bits. One remark per transpose replaced; a transpose that moves
    dimensions of other extents is left alone, silently (most are).

    ```mlir
    // Before
    %q = linalg.transpose ins(%rope : tensor<1x32x128xbf16>)
                          outs(%e : tensor<32x1x128xbf16>)
                          permutation = [1, 0, 2]
    // After
    %flat = tensor.collapse_shape %rope [[0, 1, 2]]
        : tensor<1x32x128xbf16> into tensor<4096xbf16>
    %q = tensor.expand_shape %flat [[0, 1, 2]] output_shape [32, 1, 128]
        : tensor<4096xbf16> into tensor<32x1x128xbf16>
    ```
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def OrderGridDims : Pass<"cachet-order-grid-dims", "mlir::func::FuncOp"> {
  let summary = "Map the largest dimension of a generic kernel's grid to x";
  let description = [{
    `gpu-map-parallel-loops` maps the dimensions of an outermost
    `scf.parallel` to the grid in order: the first to x, the second to y,
    the third to z. CUDA, HIP and most Vulkan drivers allow at most 65535
    workgroups along y and z (x allows 2^31 - 1), so a generic kernel whose
    second or third dimension is longer fails at launch ("grid dimension 1
    is 128256, the device allows 1 to 65535": a mat-mul of 512 rows by a
    128256-entry vocabulary). This pass, run after the parallel loops are
    tiled and before they are mapped, swaps such a dimension with the first
    one. Only the order of the loop's dimensions changes: every iteration
    computes what it computed before. Each swap is a remark; a loop whose
    first dimension is longer than the limit as well stays, with a remark.

    Vulkan promises only 65535 workgroups along x too (lavapipe and several
    drivers allow no more; `max-grid-x`, which cachet-compile sets to 65535
    for SPIR-V): a first dimension of W > max-grid-x workgroups (an
    element-wise kernel over a 32768-position KV cache: 131072) is split as
    W = X * Y, X <= max-grid-x on grid x and Y <= max-grid-yz on a new last
    dimension (y, or z behind a second one), the old induction variable
    `lb + (wy * X + wx) * step`. Without a free dimension or such a factor
    the loop stays, with a remark.

    Split (`max-grid-x=65535`), before:

    ```mlir
    scf.parallel (%i) = (%c0) to (%c33554432) step (%c256) {
      scf.parallel (%t) = (%c0) to (%c256) step (%c1) { ... %i ... }
    }
    ```

    After (131072 = 32768 * 4):

    ```mlir
    scf.parallel (%wx, %wy) = (%c0, %c0) to (%c32768, %c4)
        step (%c1, %c1) {
      %r = arith.muli %wy, %c32768 : index
      %w = arith.addi %r, %wx : index
      %s = arith.muli %w, %c256 : index
      %i = arith.addi %c0, %s : index
      scf.parallel (%t) = (%c0) to (%c256) step (%c1) { ... %i ... }
    }
    ```

    Before (`max-grid-yz=65535`):

    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%c512, %c128256)
        step (%c256, %c1) {
      scf.parallel (%t) = (%c0) to (%c256) step (%c1) { ... }
    }
    ```

    After:

    ```mlir
    scf.parallel (%j, %i) = (%c0, %c0) to (%c128256, %c512)
        step (%c1, %c256) {
      scf.parallel (%t) = (%c0) to (%c256) step (%c1) { ... }
    }
    ```
  }];
  let options = [
    Option<"maxGridYZ", "max-grid-yz", "int64_t", /*default=*/"65535",
           "The most workgroups the grid's y and z dimensions allow">,
    Option<"maxGridX", "max-grid-x", "int64_t", /*default=*/"2147483647",
           "The most workgroups the grid's x dimension allows">,
  ];
  let dependentDialects = ["mlir::scf::SCFDialect"];
}

def CoarsenElementwise
    : Pass<"cachet-coarsen-elementwise", "mlir::func::FuncOp"> {
  let summary = "Give each thread of a large element-wise generic kernel "
                "several elements, their loads issued together";
  let description = [{
    After `scf-parallel-loop-tiling`, a generic kernel's thread computes one
    element: it loads its inputs, waits for them, stores and exits. A
    prefill's element-wise ops are large (`[512][14336]`: 114688 workgroups
    of 64 threads) and each thread keeps only a few bytes in flight, so
    they stream far below the memory's rate: on an H100 the 8B-shaped bf16
    prefill's residual adds (an f32 GEMM result plus a bf16 row into a bf16
    row, 16 MB) took 22 us each and its `silu(gate) * up` 72 us, 0.7 TB/s
    (run 133).

    This pass, run between the tiling and `gpu-map-parallel-loops`, takes
    each tiled loop nest (an outermost `scf.parallel` whose body is one
    inner `scf.parallel` over the tile) with at least `min-workgroups`
    workgroups and makes each thread compute `factor` elements of one
    dimension, a tile apart: the first (the threads') where `factor` tiles
    divide it, else the first other dimension they divide (a RoPE's
    `[128][512][32]`: 4 tokens per thread), so that a warp's accesses stay
    consecutive. The outer step grows `factor` times, and the inner body
    is cloned `factor` times with that index advanced by the tile, every
    clone's loads and arithmetic before any clone's store. That
    order is only valid where no store can write what a load reads: the
    inner body must be one block of loads, stores and side-effect-free ops
    without regions, every stored buffer a `memref.alloc` of the function
    (through views) that no load of the body reads. Every element is
    computed by the same operations as before: values are the same bits.

    Loops with fewer workgroups keep one element per thread (a decode
    step's, whose grids are small: fewer threads would leave the device
    idle). The default threshold is one full wave of the generic kernels'
    64-thread workgroups (32 per compute unit): beyond it the workgroups
    run in several waves, and fewer threads with 4 loads each keep more
    bytes in flight. A remark names each loop coarsened and each large loop left with
    the reason; one per function counts the small ones.

    Before (`factor=4`, the tile of 64 threads):

    ```mlir
    scf.parallel (%i, %r) = (%c0, %c0) to (%c4096, %c512) step (%c64, %c1) {
      scf.parallel (%t, %u) = (%c0, %c0) to (%c64, %c1) step (%c1, %c1) {
        %c = arith.addi %t, %i : index
        %a = memref.load %x[%r, %c] : memref<512x4096xf32>
        %y = arith.truncf %a : f32 to bf16
        memref.store %y, %out[%r, %c] : memref<512x4096xbf16>
      }
    }
    ```

    After:

    ```mlir
    scf.parallel (%i, %r) = (%c0, %c0) to (%c4096, %c512) step (%c256, %c1) {
      scf.parallel (%t, %u) = (%c0, %c0) to (%c64, %c1) step (%c1, %c1) {
        %t1 = arith.addi %t, %c64 : index
        ... %t2 = %t + 128, %t3 = %t + 192
        %c0 = arith.addi %t, %i : index
        %a0 = memref.load %x[%r, %c0] : memref<512x4096xf32>
        %y0 = arith.truncf %a0 : f32 to bf16
        %c1 = arith.addi %t1, %i : index
        %a1 = memref.load %x[%r, %c1] : memref<512x4096xf32>
        ... the clones of %t2 and %t3
        memref.store %y0, %out[%r, %c0] : memref<512x4096xbf16>
        memref.store %y1, %out[%r, %c1] : memref<512x4096xbf16>
        ...
      }
    }
    ```
  }];
  let options = [
    Option<"factor", "factor", "int64_t", /*default=*/"4",
           "Elements per thread along the threads' dimension (1 leaves "
           "every kernel as it is)">,
    Option<"minWorkgroups", "min-workgroups", "int64_t", /*default=*/"0",
           "Workgroups a loop needs before it is coarsened; 0: 32 per "
           "compute unit of the module's device profile, or 4096 without "
           "one">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect"];
}

def SinkIntoLaunches : Pass<"cachet-sink-into-launches", "mlir::func::FuncOp"> {
  let summary = "Clone the constants and index computations a gpu.launch "
                "uses into its body, in time linear in the function";
  let description = [{
    Before kernels are outlined, each `gpu.launch` gets its own copy of the
    values it uses that are cheap to recompute (constants, `memref.dim`,
    `arith.cmpi`, `arith.select`, and chains of them whose other operands
    the launch uses anyway), so that they do not become kernel arguments.
    Upstream `gpu-launch-sink-index-computations` does the same, with the
    same choice of values and the same order of the copies, but replaces
    the uses one launch at a time with `replaceAllUsesInRegionWith`, which
    visits every use of the value in the whole function: the canonicalizer
    hoists one `arith.constant 0 : index` for a whole function, used by
    every launch, so a model's thousands of launches took time quadratic
    in their number (1.4 s of a 32-layer decode's 17 s). This pass renames
    the operands while it walks each body once. Nothing a kernel computes
    changes. A remark per function says how many values it copied into
    how many launches.

    Before:

    ```mlir
    %c0 = arith.constant 0 : index
    %d = memref.dim %buf, %c0 : memref<?xf32>
    gpu.launch blocks(...) in (...) threads(...) in (...) {
      %cmp = arith.cmpi slt, %tx, %d : index
      ...
    }
    ```

    After:

    ```mlir
    %c0 = arith.constant 0 : index
    %d = memref.dim %buf, %c0 : memref<?xf32>
    gpu.launch blocks(...) in (...) threads(...) in (...) {
      %c0_1 = arith.constant 0 : index
      %d_1 = memref.dim %buf, %c0_1 : memref<?xf32>
      %cmp = arith.cmpi slt, %tx, %d_1 : index
      ...
    }
    ```
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def MergeIdenticalKernels
    : Pass<"cachet-merge-identical-kernels", "mlir::ModuleOp"> {
  let summary = "Compile each distinct kernel once: launches of identical "
                "kernels share one gpu.module";
  let description = [{
    `gpu-kernel-outlining` gives every launch its own `gpu.module`, and a
    model repeats its layers: a 32-layer decoder has 32 copies of each of
    its kernels, and `gpu-module-to-binary` compiles every copy (LLVM's
    back end and ptxas; most of a model's compile time). This pass, run
    right before `gpu-module-to-binary` (and for NVVM and ROCDL also once
    the launch plans have specialized the kernels, before they are
    converted to the target, so each distinct kernel is converted once),
    finds the `gpu.module`s whose
    contents and attributes are identical (printed, the kernel function,
    its attributes and any nested module included; a nested SPIR-V
    module's name, derived from its gpu.module's, left out), keeps the first of each group, points the `gpu.launch_func`
    ops of the others at it and erases them. The kernels are the same code,
    so nothing a launch computes changes. A remark on each kept module says
    how many it stands for; `max-compare-bytes` bounds the printed size of a
    module this pass compares (larger ones are kept as they are).

    Before:

    ```mlir
    gpu.module @model_kernel [#nvvm.target] { gpu.func @model_kernel(...) kernel { A } }
    gpu.module @model_kernel_7 [#nvvm.target] { gpu.func @model_kernel(...) kernel { A } }
    gpu.launch_func @model_kernel::@model_kernel ...
    gpu.launch_func @model_kernel_7::@model_kernel ...
    ```

    After:

    ```mlir
    gpu.module @model_kernel [#nvvm.target] { gpu.func @model_kernel(...) kernel { A } }
    gpu.launch_func @model_kernel::@model_kernel ...
    gpu.launch_func @model_kernel::@model_kernel ...
    ```
  }];
  let options = [
    Option<"maxCompareBytes", "max-compare-bytes", "int64_t",
           /*default=*/"16777216",
           "Modules printing to more bytes than this are not compared">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}
