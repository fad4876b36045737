//===- Passes.h - passes of the cachet-compile pipeline -------------------===//

#ifndef CACHET_PIPELINES_PASSES_H
#define CACHET_PIPELINES_PASSES_H

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace cachet {

#define GEN_PASS_DECL
#include "cachet/Pipelines/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cachet/Pipelines/Passes.h.inc"

} // namespace cachet

#endif // CACHET_PIPELINES_PASSES_H
