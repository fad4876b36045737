//===- MatvecChain.cpp - chains of streaming mat-vec launches ------------===//

#include "cachet/Analysis/MatvecChain.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace cachet;

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// Returns true if `value` is `gpu.<Op> x`.
template <typename Op> static bool isDimensionX(Value value) {
  auto op = value.getDefiningOp<Op>();
  return op && op.getDimension() == gpu::Dimension::x;
}

/// Matches `row = thread_id x + block_id x * S` (operands of both ops in
/// either order) and returns S.
static std::optional<int64_t> matchRowIndex(Value row) {
  auto add = row.getDefiningOp<arith::AddIOp>();
  if (!add)
    return std::nullopt;
  for (auto [tid, product] : {std::pair(add.getLhs(), add.getRhs()),
                              std::pair(add.getRhs(), add.getLhs())}) {
    auto mul = product.getDefiningOp<arith::MulIOp>();
    if (!isDimensionX<gpu::ThreadIdOp>(tid) || !mul)
      continue;
    for (auto [bid, stride] : {std::pair(mul.getLhs(), mul.getRhs()),
                               std::pair(mul.getRhs(), mul.getLhs())}) {
      std::optional<int64_t> s = getConstantIntValue(stride);
      if (isDimensionX<gpu::BlockIdOp>(bid) && s && *s > 0)
        return s;
    }
  }
  return std::nullopt;
}

/// Returns true if `value` is the column count of `weight`: the static size
/// of dimension 1 or `memref.dim weight, 1`.
static bool isColumnCount(Value value, Value weight, MemRefType type) {
  if (std::optional<int64_t> c = getConstantIntValue(value))
    return !type.isDynamicDim(1) && *c == type.getDimSize(1);
  auto dim = value.getDefiningOp<memref::DimOp>();
  if (!dim || dim.getSource() != weight)
    return false;
  std::optional<int64_t> index = getConstantIntValue(dim.getIndex());
  return index && *index == 1;
}

/// Checks conditions 2 and 3 of the file comment for the one load of the
/// weight argument `weight`. Returns the block size S, or std::nullopt with
/// `reason`.
static std::optional<int64_t> matchStreamingLoad(memref::LoadOp load,
                                                 gpu::GPUFuncOp kernel,
                                                 Value weight, MemRefType type,
                                                 std::string &reason) {
  scf::ForOp loop;
  for (Operation *parent = load->getParentOp(); parent != kernel;
       parent = parent->getParentOp()) {
    if (isa<scf::IfOp>(parent))
      continue;
    auto forOp = dyn_cast<scf::ForOp>(parent);
    if (!forOp) {
      reason = "the weight load is nested in '" +
               parent->getName().getStringRef().str() +
               "', not in one scf.for over the columns";
      return std::nullopt;
    }
    if (loop) {
      reason = "the weight load is nested in two loops (elements may be read "
               "more than once)";
      return std::nullopt;
    }
    loop = forOp;
  }
  if (!loop) {
    reason = "the weight load is not in a loop over the columns";
    return std::nullopt;
  }
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (load.getIndices()[1] != loop.getInductionVar() || !lb || *lb != 0 ||
      !step || *step != 1 ||
      !isColumnCount(loop.getUpperBound(), weight, type)) {
    reason = "the column index is not the induction variable of a loop from "
             "0 to the column count with step 1";
    return std::nullopt;
  }
  Value row = load.getIndices()[0];
  if (!loop.isDefinedOutsideOfLoop(row)) {
    reason = "the row index varies inside the column loop";
    return std::nullopt;
  }
  std::optional<int64_t> blockSize = matchRowIndex(row);
  if (!blockSize) {
    reason = "the row index is not 'thread_id x + block_id x * <block size>'";
    return std::nullopt;
  }
  return blockSize;
}

/// The second form: every use of `weight` is a `vector.load` marked
/// `cachet.streaming_weight`. Returns std::nullopt with `reason` empty when
/// no use is marked (try the structural form), set when some are but the
/// kernel does not qualify.
static std::optional<StreamingWeight> matchMarkedWeight(gpu::GPUFuncOp kernel,
                                                        BlockArgument weight,
                                                        MemRefType type,
                                                        std::string &reason) {
  auto isMarked = [](Operation *user) {
    return isa<vector::LoadOp>(user) &&
           user->hasAttr(CachetDialect::getStreamingWeightAttrName());
  };
  if (llvm::none_of(weight.getUsers(), isMarked))
    return std::nullopt;
  if (!llvm::all_of(weight.getUsers(), isMarked)) {
    reason = "it has marked streaming loads and other uses";
    return std::nullopt;
  }
  std::optional<ArrayRef<int32_t>> known = kernel.getKnownBlockSize();
  if (!known || known->size() != 3 || (*known)[1] != 1 || (*known)[2] != 1) {
    reason = "its marked streaming loads are in a kernel without a known "
             "one-dimensional block size";
    return std::nullopt;
  }
  return StreamingWeight{weight.getArgNumber(), *weight.getUsers().begin(),
                         type, (*known)[0]};
}

std::optional<SmallVector<StreamingWeight, 1>>
cachet::matchStreamingWeights(gpu::GPUFuncOp kernel, std::string &reason) {
  if (!kernel.isKernel()) {
    reason = "@" + kernel.getName().str() + " is not a kernel";
    return std::nullopt;
  }
  std::optional<StreamingWeight> found;
  SmallVector<StreamingWeight, 1> marked;
  std::string firstReason;
  for (BlockArgument arg : kernel.getArguments()) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (!type || type.getRank() != 2 || arg.use_empty())
      continue;
    std::string why;
    if (std::optional<StreamingWeight> weight =
            matchMarkedWeight(kernel, arg, type, why)) {
      marked.push_back(*weight);
      continue;
    }
    if (!why.empty()) {
      if (firstReason.empty())
        firstReason = "argument #" + std::to_string(arg.getArgNumber()) +
                      " (rank 2): " + why;
      continue;
    }
    SmallVector<memref::LoadOp> loads;
    bool onlyLoads = llvm::all_of(arg.getUsers(), [&](Operation *user) {
      auto load = dyn_cast<memref::LoadOp>(user);
      if (load)
        loads.push_back(load);
      return load || isa<memref::DimOp>(user);
    });
    std::optional<int64_t> blockSize;
    if (!type.getLayout().isIdentity())
      why = "it has a non-identity layout";
    else if (!onlyLoads)
      why = "it is not only read by memref.load";
    else if (loads.size() != 1)
      why = "it is loaded " + std::to_string(loads.size()) +
            " times (elements may be read more than once)";
    else
      blockSize = matchStreamingLoad(loads.front(), kernel, arg, type, why);
    if (!blockSize) {
      if (firstReason.empty())
        firstReason = "argument #" + std::to_string(arg.getArgNumber()) +
                      " (rank 2): " + why;
      continue;
    }
    if (found) {
      reason = "it streams two rank-2 arguments (#" +
               std::to_string(found->argIndex) + " and #" +
               std::to_string(arg.getArgNumber()) + ")";
      return std::nullopt;
    }
    found =
        StreamingWeight{arg.getArgNumber(), loads.front(), type, *blockSize};
  }
  if (found && !marked.empty()) {
    reason = "it streams two rank-2 arguments (#" +
             std::to_string(marked.front().argIndex) + " and #" +
             std::to_string(found->argIndex) + ")";
    return std::nullopt;
  }
  if (found)
    return SmallVector<StreamingWeight, 1>{*found};
  if (!marked.empty())
    return marked;
  reason = firstReason.empty() ? "it has no rank-2 memref argument it reads"
                               : firstReason;
  return std::nullopt;
}

bool cachet::isReadOnlyKernelArgument(gpu::GPUFuncOp kernel, unsigned index) {
  return llvm::all_of(kernel.getArgument(index).getUsers(), [](Operation *op) {
    return isa<memref::LoadOp, vector::LoadOp, memref::DimOp>(op);
  });
}

bool cachet::isWrittenKernelArgument(gpu::GPUFuncOp kernel, unsigned index) {
  Value arg = kernel.getArgument(index);
  return llvm::any_of(arg.getUsers(), [&](Operation *op) {
    auto store = dyn_cast<memref::StoreOp>(op);
    return store && store.getMemRef() == arg;
  });
}

//===----------------------------------------------------------------------===//
// Chains
//===----------------------------------------------------------------------===//

SmallVector<Value, 2> ChainStep::getWeights() const {
  SmallVector<Value, 2> weights;
  for (const StreamingLaunch &l : launches)
    llvm::append_range(weights, l.getWeights());
  return weights;
}

/// Returns true if `value` is the constant `expected`.
static bool isConstant(Value value, int64_t expected) {
  std::optional<int64_t> c = getConstantIntValue(value);
  return c && *c == expected;
}

/// Returns the kernel of `launch`, or null.
static gpu::GPUFuncOp lookupKernel(gpu::LaunchFuncOp launch,
                                   SymbolTableCollection &symbolTables) {
  return symbolTables.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
      launch, launch.getKernel());
}

/// Returns true if no op of the host code writes `weight`: every use reads
/// it (a kernel operand the kernel only reads, `memref.dim`, the source of a
/// `memref.copy`). Sets `reason` otherwise.
static bool isReadOnlyOnHost(Value weight, SymbolTableCollection &symbolTables,
                             std::string &reason) {
  // The upload of a device-resident weight (cachet-device-buffers): a copy
  // into it that precedes, in its block, every launch that reads it.
  auto isUpload = [&](Operation *user) {
    auto copy = dyn_cast<gpu::MemcpyOp>(user);
    if (!copy || copy.getDst() != weight)
      return false;
    return llvm::all_of(weight.getUsers(), [&](Operation *other) {
      return !isa<gpu::LaunchFuncOp>(other) ||
             (other->getBlock() == copy->getBlock() &&
              copy->isBeforeInBlock(other));
    });
  };
  for (OpOperand &use : weight.getUses()) {
    Operation *user = use.getOwner();
    // Freeing the buffer ends its life; it writes no value a kernel reads.
    if (isa<memref::DimOp, gpu::DeallocOp>(user) || isUpload(user))
      continue;
    if (auto copy = dyn_cast<memref::CopyOp>(user);
        copy && copy.getSource() == weight && copy.getTarget() != weight)
      continue;
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(user)) {
      gpu::GPUFuncOp kernel = lookupKernel(launch, symbolTables);
      unsigned first = launch.getKernelOperands().getBeginOperandIndex();
      if (kernel && use.getOperandNumber() >= first &&
          isReadOnlyKernelArgument(kernel, use.getOperandNumber() - first))
        continue;
    }
    reason = "'" + user->getName().getStringRef().str() + "' may write it";
    return false;
  }
  return true;
}

/// Returns the host values `launch` passes to arguments its kernel writes.
static SmallVector<Value> getWrittenOperands(const StreamingLaunch &l) {
  SmallVector<Value> written;
  gpu::LaunchFuncOp launch = l.launch;
  for (auto [i, operand] : llvm::enumerate(launch.getKernelOperands()))
    if (isWrittenKernelArgument(l.kernel, i))
      written.push_back(operand);
  return written;
}

/// Returns true if `a` and `b` (consecutive streaming launches) are a
/// gate/up pair feeding one launch before `end` (the next streaming launch,
/// or null for the end of the block). See the file comment.
static bool isGatePair(const StreamingLaunch &a, const StreamingLaunch &b,
                       Operation *end) {
  if (a.weights.size() != 1 || b.weights.size() != 1 ||
      a.weights.front().type != b.weights.front().type)
    return false;
  bool sharesInput = false;
  gpu::LaunchFuncOp gateLaunch = a.launch, upLaunch = b.launch;
  for (auto [i, operand] : llvm::enumerate(gateLaunch.getKernelOperands())) {
    if (i == a.weights.front().argIndex ||
        !isReadOnlyKernelArgument(a.kernel, i))
      continue;
    for (auto [j, other] : llvm::enumerate(upLaunch.getKernelOperands()))
      if (other == operand && j != b.weights.front().argIndex &&
          isReadOnlyKernelArgument(b.kernel, j))
        sharesInput = true;
  }
  SmallVector<Value> gate = getWrittenOperands(a);
  SmallVector<Value> up = getWrittenOperands(b);
  if (!sharesInput || gate.size() != 1 || up.size() != 1 ||
      gate.front() == up.front())
    return false;
  for (Operation *op = upLaunch->getNextNode(); op && op != end;
       op = op->getNextNode()) {
    auto glu = dyn_cast<gpu::LaunchFuncOp>(op);
    if (glu && llvm::is_contained(glu.getKernelOperands(), gate.front()) &&
        llvm::is_contained(glu.getKernelOperands(), up.front()))
      return true;
  }
  return false;
}

MatvecChains cachet::findMatvecChains(Operation *func,
                                      SymbolTableCollection &symbolTables) {
  MatvecChains result;
  llvm::MapVector<Block *, SmallVector<StreamingLaunch>> perBlock;
  func->walk([&](gpu::LaunchFuncOp launch) {
    gpu::GPUFuncOp kernel = lookupKernel(launch, symbolTables);
    if (!kernel) {
      result.rejected.push_back({launch, "its kernel is not a gpu.func here"});
      return;
    }
    std::string reason;
    std::optional<SmallVector<StreamingWeight, 1>> weights =
        matchStreamingWeights(kernel, reason);
    if (!weights) {
      result.rejected.push_back(
          {launch, "kernel @" + kernel.getName().str() +
                       " does not stream a weight: " + reason});
      return;
    }
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    int64_t blockSize = weights->front().blockSize;
    if (!isConstant(block.x, blockSize) || !isConstant(block.y, 1) ||
        !isConstant(block.z, 1) || !isConstant(grid.y, 1) ||
        !isConstant(grid.z, 1)) {
      result.rejected.push_back(
          {launch, "the launch is not a 1-D grid of (" +
                       std::to_string(blockSize) +
                       ", 1, 1) blocks, which its row index assumes"});
      return;
    }
    StreamingLaunch streaming{launch, kernel, *weights};
    for (Value host : streaming.getWeights()) {
      if (!isReadOnlyOnHost(host, symbolTables, reason)) {
        result.rejected.push_back(
            {launch, "its weight is not read-only in host code: " + reason});
        return;
      }
    }
    perBlock[launch->getBlock()].push_back(std::move(streaming));
  });

  DominanceInfo dominance(func);
  for (auto &[block, launches] : perBlock) {
    MatvecChain chain;
    for (size_t i = 0; i < launches.size();) {
      ChainStep step;
      step.launches.push_back(launches[i]);
      Operation *end = i + 2 < launches.size()
                           ? launches[i + 2].launch.getOperation()
                           : nullptr;
      if (i + 1 < launches.size() &&
          isGatePair(launches[i], launches[i + 1], end)) {
        step.launches.push_back(launches[i + 1]);
        ++i;
      }
      ++i;
      chain.steps.push_back(std::move(step));
    }
    for (size_t i = 0; i < chain.steps.size(); ++i) {
      std::string reason;
      if (i + 1 == chain.steps.size()) {
        reason = "no streaming mat-vec launch follows in this block";
      } else {
        Operation *launch = chain.steps[i].back().launch;
        for (Value next : chain.steps[i + 1].getWeights()) {
          if (!dominance.properlyDominates(next, launch)) {
            reason = "the next weight is not defined before this launch";
            break;
          }
        }
      }
      chain.nextWeightReasons.push_back(std::move(reason));
    }
    result.chains.push_back(std::move(chain));
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Budget
//===----------------------------------------------------------------------===//

std::optional<SmallVector<int64_t, 2>>
cachet::getPrefetchBytes(ArrayRef<MemRefType> next, double fraction,
                         int64_t maxBytes, int64_t line, std::string &reason) {
  SmallVector<int64_t, 2> sizes;
  for (MemRefType type : next) {
    if (!type.hasStaticShape() || !type.getLayout().isIdentity()) {
      reason = "the next weight has a dynamic shape or a non-identity layout";
      return std::nullopt;
    }
    sizes.push_back(
        (type.getNumElements() * type.getElementTypeBitWidth() + 7) / 8);
  }
  int64_t total = 0;
  for (int64_t size : sizes)
    total += size;
  SmallVector<int64_t, 2> bytes;
  for (int64_t size : sizes) {
    auto byFraction = static_cast<int64_t>(fraction * size);
    auto byCap = static_cast<int64_t>(static_cast<double>(maxBytes) * size /
                                      std::max<int64_t>(total, 1));
    bytes.push_back(std::min(byFraction, byCap) / line * line);
  }
  return bytes;
}

llvm::SmallDenseSet<Value> MatvecChains::getChainWeights() const {
  llvm::SmallDenseSet<Value> weights;
  for (const MatvecChain &chain : chains)
    for (const ChainStep &step : chain.steps)
      for (Value weight : step.getWeights())
        weights.insert(weight);
  return weights;
}
