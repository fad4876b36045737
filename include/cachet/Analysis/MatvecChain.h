//===- MatvecChain.h - chains of streaming mat-vec launches -----*- C++ -*-===//
//
// The matcher of `cachet-prefetch-matvec-chains`: finds, in host code after
// kernel outlining, the `gpu.launch_func` ops whose kernel streams a read-only
// weight matrix (each element read once), and groups consecutive ones into
// chains of steps whose next weight is known at the launch.
//
// A kernel streams its weight argument `W` (a rank-2 memref with the identity
// layout) when:
//  1. `W` is only read, by exactly one `memref.load` (and `memref.dim`);
//  2. that load sits in exactly one loop, an `scf.for` from 0 to the column
//     count (static, or `memref.dim W, 1`) with step 1 whose induction
//     variable is the column index (`scf.if` guards may enclose it);
//  3. the row index is defined outside that loop as
//     `thread_id x + block_id x * S` (operands in either order), `S` the
//     constant block size in x (the kernel's `known_block_size`, or the
//     launch's constant block size).
// Then each thread of a one-dimensional grid reads a row of its own, each
// element of it once: the read is streaming. cachet's lowered `linalg.matvec`
// has this form; a hand-written `gpu.func` that has it is accepted as well.
// A weight whose every use is a `vector.load` marked
// `cachet.streaming_weight` (cachet-lower-matvec's subgroup kernels) streams
// too; its block size S is the kernel's known block size in x (y = z = 1).
// A kernel may stream several marked weights (cachet-lower-matvec puts
// mat-vecs over one input in one kernel); a kernel whose weight has the
// structural form streams that one only.
//
// A step is one streaming launch, or a gate/up pair: two consecutive
// streaming launches whose weights have the same type, that share a
// read-only operand (the input vector) and whose two written operands (the
// gate and up results) are both operands of one later launch (the GLU)
// before the next streaming launch. The pair counts as one step: the step
// before it prefetches both weights, and the pair's second launch prefetches
// the step after it.
//
// A chain is a maximal sequence of steps in one block. The next weight of a
// step is the weight (or weights) of the following step; it is known when it
// is a host value that dominates the step's last launch and that no host op
// or kernel writes.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_ANALYSIS_MATVECCHAIN_H
#define CACHET_ANALYSIS_MATVECCHAIN_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>

namespace cachet {

/// The weight a kernel streams.
struct StreamingWeight {
  /// Index of the weight among the kernel's arguments (and the launch's
  /// kernel operands).
  unsigned argIndex = 0;
  /// The load of the weight (the first one, for marked vector loads).
  mlir::Operation *load = nullptr;
  /// The weight's type, `rows x cols x element`.
  mlir::MemRefType type;
  /// The constant `S` of the row index `thread_id x + block_id x * S`: a
  /// launch must use blocks of (S, 1, 1) and a grid of (n, 1, 1).
  int64_t blockSize = 0;
};

/// Returns the weights `kernel` streams (see the file comment; one, or
/// several marked ones, in argument order), or std::nullopt with `reason`
/// saying which condition failed.
std::optional<llvm::SmallVector<StreamingWeight, 1>>
matchStreamingWeights(mlir::gpu::GPUFuncOp kernel, std::string &reason);

/// Returns true if `kernel` never writes its argument `index` (it is only
/// read by loads, or not used at all).
bool isReadOnlyKernelArgument(mlir::gpu::GPUFuncOp kernel, unsigned index);

/// Returns true if `kernel` writes its argument `index` with `memref.store`.
bool isWrittenKernelArgument(mlir::gpu::GPUFuncOp kernel, unsigned index);

/// One launch of a chain step.
struct StreamingLaunch {
  mlir::gpu::LaunchFuncOp launch;
  mlir::gpu::GPUFuncOp kernel;
  /// The weights the kernel streams, all with one block size.
  llvm::SmallVector<StreamingWeight, 1> weights;

  /// Returns the host values of the weights.
  llvm::SmallVector<mlir::Value, 2> getWeights() const {
    mlir::gpu::LaunchFuncOp op = launch;
    llvm::SmallVector<mlir::Value, 2> values;
    for (const StreamingWeight &w : weights)
      values.push_back(op.getKernelOperands()[w.argIndex]);
    return values;
  }
  /// Returns the block size the row index of the weights assumes.
  int64_t getBlockSize() const { return weights.front().blockSize; }
};

/// One step of a chain: a streaming launch (of one or several weights) or a
/// gate/up pair of launches.
struct ChainStep {
  llvm::SmallVector<StreamingLaunch, 2> launches;

  /// Returns true for a gate/up pair.
  bool isGatePair() const { return launches.size() == 2; }
  /// Returns the host values of the step's weights, in launch order.
  llvm::SmallVector<mlir::Value, 2> getWeights() const;
  /// Returns the launch that ends the step (the one that prefetches).
  const StreamingLaunch &back() const { return launches.back(); }
};

/// Consecutive steps in one block. `nextWeightReasons[i]` is empty when the
/// weights of step i + 1 are known at the end of step i, else why not (also
/// for the last step, which has no next step).
struct MatvecChain {
  llvm::SmallVector<ChainStep> steps;
  llvm::SmallVector<std::string> nextWeightReasons;
};

/// A launch that is not part of any chain, and why.
struct RejectedLaunch {
  mlir::gpu::LaunchFuncOp launch;
  std::string reason;
};

/// The chains of one host function.
struct MatvecChains {
  llvm::SmallVector<MatvecChain> chains;
  llvm::SmallVector<RejectedLaunch> rejected;

  /// Returns the weights of every chain launch (no host op or kernel writes
  /// them: the matcher's read-only check).
  llvm::SmallDenseSet<mlir::Value> getChainWeights() const;
};

/// Finds the chains of streaming mat-vec launches among the `gpu.launch_func`
/// ops of `func` (any op with regions; launches are grouped per block).
/// Kernels are resolved through `symbolTables`.
MatvecChains findMatvecChains(mlir::Operation *func,
                              mlir::SymbolTableCollection &symbolTables);

/// The prefetch budget of one step (the cost function of
/// `cachet-prefetch-matvec-chains`): with `B` the bytes of the next step's
/// weights `next` (both of a gate/up pair), weight `w` gets
/// `min(fraction * B_w, maxBytes * B_w / B)` bytes, rounded down to whole
/// `line`s (so never past its end). Weights whose share is under one line
/// get 0. Returns std::nullopt, with `reason`, for a weight with a dynamic
/// shape or a non-identity layout.
std::optional<llvm::SmallVector<int64_t, 2>>
getPrefetchBytes(llvm::ArrayRef<mlir::MemRefType> next, double fraction,
                 int64_t maxBytes, int64_t line, std::string &reason);

} // namespace cachet

#endif // CACHET_ANALYSIS_MATVECCHAIN_H
