//===- Passes.h - cachet passes -------------------------------------------===//

#ifndef CACHET_PASSES_H
#define CACHET_PASSES_H

#include "cachet/Dialect/CachetDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace cachet {

#define GEN_PASS_DECL
#include "cachet/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cachet/Passes.h.inc"

} // namespace cachet

#endif // CACHET_PASSES_H
