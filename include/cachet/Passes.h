//===- Passes.h - cachet passes -------------------------------------------===//

#ifndef CACHET_PASSES_H
#define CACHET_PASSES_H

#include "cachet/Analysis/AttentionConfig.h"
#include "cachet/Analysis/DequantTransposeConfig.h"
#include "cachet/Analysis/QuantizeConfig.h"
#include "cachet/Analysis/MatvecChain.h"
#include "cachet/Analysis/MatvecConfig.h"
#include "cachet/Analysis/PrefetchPlan.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace cachet {

#define GEN_PASS_DECL
#include "cachet/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cachet/Passes.h.inc"

/// The attention options cachet-select-kernel-configs takes from its option
/// text `text` (as the pass prints or parses it), so that a pass before it
/// can ask which kernel an attention will get; failure with `error`.
mlir::FailureOr<AttentionConfigOptions>
parseSelectAttentionOptions(llvm::StringRef text, std::string &error);

} // namespace cachet

#endif // CACHET_PASSES_H
