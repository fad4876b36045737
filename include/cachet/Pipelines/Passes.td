//===- Passes.td - passes of the cachet-compile pipeline ---*- tablegen -*-===//

#ifndef CACHET_PIPELINES_PASSES_TD
#define CACHET_PIPELINES_PASSES_TD

include "mlir/Pass/PassBase.td"

def CheckCompileInput : Pass<"cachet-check-compile-input", "mlir::ModuleOp"> {
  let summary = "Reject, with a diagnostic, IR that upstream passes of "
                "cachet-compile crash on";
  let description = [{
    `cachet-compile` runs upstream passes (`one-shot-bufferize`,
    `expand-strided-metadata`) that crash, rather than fail, on some valid IR.
    This pass runs first in `cachet-compile` and `cachet-compile-reference`
    and turns each such input into an error naming the op and the cause:

    - an `ml_program.global` whose type is not a ranked tensor (the
      `ml_program` bufferization of LLVM 22 casts every global's type to a
      tensor type);
    - a `tensor.expand_shape` or `memref.expand_shape` that expands one
      dimension into more than one dynamic size (`expand-strided-metadata`
      of LLVM 22 cannot compute the strides of such a group).

    Everything else is left untouched.

    ```mlir
    // error: 'ml_program.global' of type 'i64' is not supported by
    // cachet-compile: one-shot-bufferize bufferizes ranked tensor globals only
    ml_program.global private mutable @seed(0 : i64) : i64
    ```
  }];
}

def KeepArgumentUpdates
    : Pass<"cachet-keep-argument-updates", "mlir::func::FuncOp"> {
  let summary = "Keep a tensor.insert_slice that covers a whole function "
                "argument as an update of that argument";
  let description = [{
    A front end appends to a KV cache passed as an argument with
    `tensor.insert_slice %new into %cache[...]`. One-shot bufferization with
    function boundaries writes the new rows into the caller's buffer, and
    the caller expects that. When the slice covers the whole destination
    (a cache of `T` rows receiving `T` new ones), `insert_slice`'s folder
    replaces it by `%new`, which any later greedy rewrite applies: the
    argument is then left as it was. Whether the caller's buffer changes
    would depend on the sizes and on which passes ran.

    This pass, first in `cachet-compile` and `cachet-compile-reference`,
    rewrites each whole-destination `tensor.insert_slice` whose destination
    is a function argument (directly, or through earlier `insert_slice`s or
    destination-style ops writing into it) to
    `bufferization.materialize_in_destination`, which nothing folds away and
    which bufferizes to a copy into the argument's buffer. Each rewrite is a
    remark. Partial slices and destinations that are not arguments are left
    alone.

    ```mlir
    // Before
    func.func @append(%new: tensor<4x64xf16>, %cache: tensor<4x64xf16>)
        -> tensor<4x64xf16> {
      %0 = tensor.insert_slice %new into %cache[0, 0] [4, 64] [1, 1]
          : tensor<4x64xf16> into tensor<4x64xf16>
      return %0 : tensor<4x64xf16>
    }
    // After
    func.func @append(%new: tensor<4x64xf16>, %cache: tensor<4x64xf16>)
        -> tensor<4x64xf16> {
      %0 = bufferization.materialize_in_destination %new in %cache
          : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
      return %0 : tensor<4x64xf16>
    }
    ```
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect"];
}

def ReturnArguments : Pass<"cachet-return-arguments", "mlir::func::FuncOp"> {
  let summary = "Return arguments, not clones of them, after ownership-based "
                "buffer deallocation";
  let description = [{
    `cachet-compile-reference` frees its temporaries with upstream's
    `buffer-deallocation-pipeline`. That pipeline gives the caller ownership
    of every result, so a result that is a function argument (a KV cache
    updated in place and returned) is returned as a `bufferization.clone` of
    it: a copy the caller must free, where the GPU variants and the manifest
    (`"aliases"`) return the argument itself. This pass, right after the
    deallocation pipeline, returns the argument (or the view of it) instead
    and erases the clone. The caller owns its arguments, so ownership is
    not lost; clones of anything else (a returned constant global) stay.

    ```mlir
    // Before
    %0 = bufferization.clone %cache : memref<4x64xf16> to memref<4x64xf16>
    return %0 : memref<4x64xf16>
    // After
    return %cache : memref<4x64xf16>
    ```
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect"];
}

#endif // CACHET_PIPELINES_PASSES_TD
