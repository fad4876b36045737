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

#endif // CACHET_PIPELINES_PASSES_TD
