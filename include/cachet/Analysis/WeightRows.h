//===- WeightRows.h - find the weights of mat-vec and mat-mul ops -*- C++
//-*-===//
//
// The matcher of `cachet-pad-weight-rows`: finds the weights of a module and
// the ops that read them as their weight operand, and says whether a
// weight's type has rows that padding may change.
//
// A weight is a function argument marked `{cachet.weight}`, or a constant
// (`arith.constant`, `memref.global constant`, an immutable
// `ml_program.global`) that reaches a weight operand directly or through
// `memref.get_global`, `ml_program.global_load_const` /
// `ml_program.global_load` and `bufferization.to_tensor`. Weight operands are
// the matrix of `linalg.matvec`, the right-hand side of `linalg.matmul` and
// `linalg.batch_matmul` (default indexing maps or transposed-B maps), and the
// input of `cachet.dequantize`.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_ANALYSIS_WEIGHTROWS_H
#define CACHET_ANALYSIS_WEIGHTROWS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace cachet {

/// Name of the function argument attribute that states the padded row pitch
/// of a weight, in elements (the stride of the second-innermost dimension).
constexpr llvm::StringLiteral getRowPitchAttrName() {
  return llvm::StringLiteral("cachet.row_pitch");
}

/// Where the storage of a weight is defined.
enum class WeightStorage {
  Argument,       ///< a function argument marked {cachet.weight}
  ArithConstant,  ///< an arith.constant
  MemRefGlobal,   ///< a memref.global constant
  MLProgramGlobal ///< an immutable ml_program.global
};

/// One weight of a module: its storage and the ops that read it as their
/// weight operand.
struct Weight {
  WeightStorage storage;
  /// The function argument, for WeightStorage::Argument.
  mlir::BlockArgument argument;
  /// The arith.constant, memref.global or ml_program.global; null for an
  /// argument.
  mlir::Operation *definingOp = nullptr;
  /// The stored type (the argument's, the constant's or the global's type).
  mlir::ShapedType type;
  /// Ops that read the weight as their weight operand, in IR order. Empty
  /// only for an argument marked {cachet.weight} that no such op reads.
  llvm::SmallVector<mlir::Operation *> consumers;

  /// Returns where remarks about the weight go.
  mlir::Location getLoc() const;
  /// Returns a short description, e.g. "argument #2 of @f" or "global @w".
  std::string describe() const;
};

/// Finds every weight of `module`: first the marked arguments of each
/// function, then constants, in IR order. A constant or global is one
/// weight however many ops read it.
llvm::SmallVector<Weight> findWeights(mlir::ModuleOp module);

/// Returns the operands of `op` that may be weights if `op` is a recognized
/// consumer: the weight operand of linalg.matvec, linalg.matmul and
/// linalg.batch_matmul (default or transposed-B maps) and cachet.dequantize;
/// the inputs of rank 2 or more of any other contraction
/// (`linalg::isaContractionOpInterface`, e.g. a contraction linalg.generic,
/// transposed or not). Empty for any other op.
llvm::SmallVector<mlir::OpOperand *> getWeightOperands(mlir::Operation *op);

/// The row geometry of a weight: the innermost dimension is a row, every
/// other dimension counts rows.
struct WeightRowShape {
  /// Number of rows, or std::nullopt if a leading dimension is dynamic.
  std::optional<int64_t> rows;
  int64_t rowElements = 0;
  int64_t elementBytes = 0;

  /// Returns the bytes of one unpadded row.
  int64_t getRowBytes() const { return rowElements * elementBytes; }
};

/// Returns the row shape of `type` if padding its rows is allowed: a ranked
/// type of rank >= 2 with a static innermost dimension, an f16, bf16 or f32
/// element type and, for a memref, the identity layout. Otherwise returns
/// std::nullopt and sets `reason` to the condition that failed (quantized,
/// integer and sub-byte weights are never padded: their kernels derive
/// element offsets from the stride).
std::optional<WeightRowShape> getPaddableRowShape(mlir::ShapedType type,
                                                  std::string &reason);

} // namespace cachet

#endif // CACHET_ANALYSIS_WEIGHTROWS_H
