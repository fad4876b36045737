//===- LowerMatvec.cpp - subgroup-per-row mat-vec kernels ----------------===//

#include "cachet/Conversion/Passes.h"
#include "cachet/Dialect/CachetDialect.h"

#include "cachet/Analysis/Buffers.h"
#include "cachet/Analysis/MatvecChain.h"
#include "cachet/Analysis/MatvecConfig.h"
#include "cachet/Conversion/BlockDecoder.h"
#include "cachet/Conversion/BlockEncoder.h"
#include "cachet/Device/DeviceProfile.h"

#include "MmaSync.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace cachet {
#define GEN_PASS_DEF_LOWERMATVEC
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

using cachet::mayAlias;

namespace {

/// Returns the `linalg.fill` of +0.0 that writes the result buffer of `op`
/// (a mat-vec or small-batch mat-mul) right before it (nothing in between),
/// or null. The kernel then stores `0.0 + sum` itself: the same value (also
/// for a sum of -0.0) in one launch instead of two.
linalg::FillOp getZeroFill(Operation *op) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  std::optional<cachet::MatvecOperands> operands =
      cachet::getMatvecOperands(op);
  if (!fill || !operands || fill.getOutputs().size() != 1 ||
      fill.getOutputs()[0] != operands->y)
    return {};
  auto zero = fill.getInputs()[0].getDefiningOp<arith::ConstantFloatOp>();
  if (!zero || !zero.value().isPosZero())
    return {};
  return fill;
}

/// One mat-vec (or small-batch mat-mul) of a kernel.
struct Member {
  Operation *op;
  cachet::MatvecOperands operands;
  /// The zero fill of y the kernel does, or null (it adds to y's value).
  linalg::FillOp fill;
  /// The blocks the kernel decodes in place of a dequantized weight, or
  /// none (it reads the float weight).
  std::optional<cachet::BlockWeight> blocks;

  Value getMatrix() const { return operands.weight; }
  /// The buffer the kernel reads the weight from: the blocks or the matrix.
  Value getWeight() const { return blocks ? blocks->bytes : getMatrix(); }
  /// Every buffer the kernel reads the weight from (a split weight's
  /// scales too).
  SmallVector<Value, 2> getWeights() const {
    SmallVector<Value, 2> weights{getWeight()};
    if (blocks && blocks->scales)
      weights.push_back(blocks->scales);
    return weights;
  }
  cachet::BlockQuantizedType getBlockType() const {
    return blocks ? blocks->block : cachet::BlockQuantizedType();
  }
  Value getOutput() const { return operands.y; }
  int64_t getRows() const {
    return cast<MemRefType>(getMatrix().getType()).getDimSize(0);
  }
};

/// The mat-vecs of a kernel with one row count: subgroup s of the class
/// computes the same rows of each, sharing its loads of x; `epilogues` are
/// element-wise ops over their results done by the lane that stores them.
struct RowClass {
  SmallVector<Member> members;
  SmallVector<linalg::GenericOp> epilogues;
};

/// The mat-vecs of one kernel, all over the same x. The kernel is launched
/// where `anchor` (the last mat-vec or epilogue) is.
struct Group {
  Value x;
  SmallVector<RowClass> classes;
  Operation *anchor = nullptr;

  size_t getNumMembers() const {
    size_t n = 0;
    for (const RowClass &c : classes)
      n += c.members.size();
    return n;
  }
};

/// Returns why `op`, which runs between a group's mat-vecs (or before its
/// epilogue) in program order, may not run before the kernel that computes
/// `members`: it reads what they write, or writes what they read or write.
/// Empty if it may.
std::string getConflict(Operation *op, Value x, ArrayRef<Member> members,
                        AliasAnalysis &aliases) {
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  if (!effects)
    return "its memory effects are unknown";
  for (const MemoryEffects::EffectInstance &effect : *effects) {
    if (isa<MemoryEffects::Allocate>(effect.getEffect()))
      continue;
    Value value = effect.getValue();
    if (!value)
      return "it has a memory effect on no particular value";
    bool write = !isa<MemoryEffects::Read>(effect.getEffect());
    for (const Member &m : members) {
      if (mayAlias(aliases, value, m.getOutput()))
        return "it may access the result of the mat-vec it would precede";
      if (write && (mayAlias(aliases, value, x) ||
                    llvm::any_of(m.getWeights(), [&](Value weight) {
                      return mayAlias(aliases, value, weight);
                    })))
        return "it may write an input of the mat-vec it would precede";
    }
  }
  return "";
}

/// Returns the class of `group` whose results `generic` reads element-wise
/// (identity maps; other inputs buffers of the same rows that the kernel
/// does not write, such as a residual), if it may be done in the kernel's
/// epilogue: pure scalar body, result written to a buffer no mat-vec of the
/// group uses. Else null, with
/// `reason` set where it reads a result of the group.
RowClass *matchEpilogue(linalg::GenericOp generic, Group &group,
                        AliasAnalysis &aliases, std::string &reason) {
  // The class whose result `input` is, or null.
  auto ownerOf = [&](Value input) -> RowClass * {
    for (RowClass &c : group.classes)
      for (const Member &m : c.members)
        if (m.getOutput() == input)
          return &c;
    return nullptr;
  };
  if (!generic.hasPureBufferSemantics() ||
      llvm::none_of(generic.getDpsInputs(), ownerOf))
    return nullptr;
  RowClass *found = nullptr;
  for (Value input : generic.getDpsInputs())
    if (RowClass *c = ownerOf(input); c && !found)
      found = c;
  if (llvm::any_of(generic.getDpsInputs(), [&](Value input) {
        RowClass *c = ownerOf(input);
        return c && c != found;
      })) {
    reason = "it reads the results of mat-vecs with another row count";
    return nullptr;
  }
  // One parallel loop per dimension of the results (two for a mat-mul's).
  auto yType = cast<MemRefType>(found->members.front().getOutput().getType());
  if (generic.getNumLoops() != yType.getRank() ||
      generic.getNumParallelLoops() != yType.getRank() ||
      generic.getNumDpsInits() != 1) {
    reason = yType.getRank() == 1
                 ? "it is not one parallel loop with one result"
                 : "it is not a parallel loop per dimension of the results "
                   "with one result";
    return nullptr;
  }
  if (!llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); })) {
    reason = "its indexing maps are not identities";
    return nullptr;
  }
  Value out = generic.getDpsInits()[0];
  auto outType = dyn_cast<MemRefType>(out.getType());
  if (!outType || !outType.getLayout().isIdentity() ||
      outType.getShape() != yType.getShape()) {
    reason = "its result is not a contiguous buffer of the mat-vecs' rows";
    return nullptr;
  }
  for (const RowClass &c : group.classes)
    for (const Member &m : c.members) {
      SmallVector<Value, 4> buffers = m.getWeights();
      buffers.append({group.x, m.getOutput()});
      for (Value v : buffers)
        if (mayAlias(aliases, out, v)) {
          reason = "its result may alias a buffer of the mat-vecs";
          return nullptr;
        }
    }
  // Another input (a residual) is read at the row by the lane that stores
  // it: nothing the kernel writes may be it, except the epilogue's own
  // result read in place.
  for (Value input : generic.getDpsInputs()) {
    if (ownerOf(input) || !isa<MemRefType>(input.getType()))
      continue;
    if (input != out && mayAlias(aliases, out, input)) {
      reason = "its result may alias a buffer it reads";
      return nullptr;
    }
    for (const RowClass &c : group.classes)
      for (const Member &m : c.members)
        if (mayAlias(aliases, m.getOutput(), input)) {
          reason = "it reads a buffer that a mat-vec of the kernel may write";
          return nullptr;
        }
  }
  for (Operation &op : generic.getBody()->without_terminator())
    if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op) ||
        isa<linalg::IndexOp>(op)) {
      reason = "its body has '" + op.getName().getStringRef().str() +
               "', which is not a pure scalar op";
      return nullptr;
    }
  return found;
}

struct LowerMatvecPass final
    : public cachet::impl::LowerMatvecBase<LowerMatvecPass> {
  using Base::Base;

  /// The compute units of the module's device profile (0 without one).
  int64_t computeUnits = 0;

  /// The kernel parameters of the group being lowered, from its
  /// #cachet.kernel_config.
  int64_t rowsPerBlock = 4, loadsPerLane = 4, pairedLoadsPerLane = 4;
  int64_t blocksPerCU = 0, pairedBlocksPerCU = 0, rowsPerSubgroup = 1;
  int64_t loadBytes = 16;
  bool stageX = false;
  /// With stage_x over blocks: x's q8_0 quants (i8) and scales (f32) in
  /// workgroup memory, set while a kernel is built.
  Value xQuants, xScales;

  /// The block weight of each candidate mat-vec (cachet::getBlockWeight),
  /// found once.
  llvm::DenseMap<Operation *, std::optional<cachet::BlockWeight>> blockWeights;

  void runOnOperation() override {
    cachet::DeviceProfileAttr profile =
        cachet::lookupDeviceProfile(getOperation());
    computeUnits =
        profile ? static_cast<int64_t>(profile.getComputeUnits()) : 0;
    StringRef name = cachet::CachetDialect::getKernelConfigAttrName();
    llvm::DenseSet<Operation *> candidates;
    SmallVector<Operation *> gemms;
    bool failedConfig = false;
    getOperation().walk([&](Operation *op) {
      if (!cachet::getMatvecOperands(op))
        return;
      auto config = op->getAttrOfType<cachet::KernelConfigAttr>(name);
      if (!config ||
          (config.getVariant() != cachet::KernelVariant::MatvecSubgroup &&
           config.getVariant() != cachet::KernelVariant::MatvecMmaSync &&
           config.getVariant() != cachet::KernelVariant::GemmMmaSync &&
           config.getVariant() != cachet::KernelVariant::GemmWgmma &&
           config.getVariant() != cachet::KernelVariant::GemmTiled &&
           config.getVariant() != cachet::KernelVariant::GemmMma))
        return;
      if (std::string why = cachet::whyNotMatvecConfig(op, config);
          !why.empty()) {
        op->emitError("cachet-lower-matvec: cannot build ")
            << config << ": " << why;
        failedConfig = true;
        return;
      }
      if (config.getVariant() == cachet::KernelVariant::GemmMmaSync ||
          config.getVariant() == cachet::KernelVariant::GemmWgmma ||
          config.getVariant() == cachet::KernelVariant::GemmTiled ||
          config.getVariant() == cachet::KernelVariant::GemmMma) {
        // The mma GEMM's fallback (the tiled GEMM) is built beside it, and
        // called through the check the module declares.
        if (auto fallback = op->getAttrOfType<cachet::KernelConfigAttr>(
                cachet::CachetDialect::getFallbackKernelConfigAttrName())) {
          std::string why;
          if (config.getVariant() != cachet::KernelVariant::GemmMma ||
              fallback.getVariant() != cachet::KernelVariant::GemmTiled)
            why = "a GEMM's fallback is the tiled GEMM beside the mma GEMM";
          else if (!op->getParentOfType<ModuleOp>().lookupSymbol(
                       cachet::kHasCooperativeMatrixF16))
            why = ("the module does not declare " +
                   cachet::kHasCooperativeMatrixF16 +
                   " (cachet-select-kernel-configs declares it where it "
                   "chooses a fallback)")
                      .str();
          else
            why = cachet::whyNotMatvecConfig(op, fallback);
          if (!why.empty()) {
            op->emitError("cachet-lower-matvec: cannot build the fallback ")
                << fallback << ": " << why;
            failedConfig = true;
            return;
          }
        }
        gemms.push_back(op);
        return;
      }
      candidates.insert(op);
      std::string reason;
      blockWeights[op] = cachet::getBlockWeight(op, reason);
    });
    if (failedConfig)
      return signalPassFailure();
    // The GEMMs: each with the GEMMs over the same x after it (siblings,
    // wgmma) and an element-wise op over their results (the epilogue),
    // where their configs allow it. A block weight the kernel decodes
    // itself (load_bytes) is the member's blocks; any other is read from
    // its dequantized copy, written by a kernel of its own.
    {
      llvm::DenseSet<Operation *> gemmSet(gemms.begin(), gemms.end());
      llvm::DenseMap<Operation *, std::optional<cachet::BlockWeight>> copies;
      for (Operation *op : gemms) {
        auto config = op->getAttrOfType<cachet::KernelConfigAttr>(name);
        std::string reason;
        std::optional<cachet::BlockWeight> w =
            cachet::getBlockWeight(op, reason);
        // whyNotMatvecConfig checked that the kernel decodes these blocks.
        if (w && config.getLoadBytes() > 0)
          blockWeights[op] = w;
        else if (w)
          copies[op] = w;
        else if (!reason.empty())
          emitRemark(op->getLoc(),
                     "cachet-lower-matvec: the GEMM's weight keeps its "
                     "generic dequantization: ")
              << reason;
      }
      AliasAnalysis gemmAliases(getOperation());
      SmallVector<Group> gemmGroups;
      llvm::DenseSet<Operation *> grouped;
      for (Operation *op : gemms)
        if (!grouped.contains(op))
          gemmGroups.push_back(
              formGroup(op, gemmSet, grouped, gemmAliases, /*gemm=*/true));
      for (Operation *op : gemms)
        if (std::optional<cachet::BlockWeight> w = copies.lookup(op))
          lowerGemmWeightDequantize(*w, op, maxVectorElements);
      for (Group &group : gemmGroups)
        lowerGemm(group);
    }
    AliasAnalysis aliases(getOperation());
    SmallVector<Group> groups;
    llvm::DenseSet<Operation *> grouped;
    getOperation().walk([&](Operation *op) {
      if (candidates.contains(op) && !grouped.contains(op))
        groups.push_back(formGroup(op, candidates, grouped, aliases));
    });
    for (Group &group : groups) {
      auto config = group.classes.front()
                        .members.front()
                        .op->getAttrOfType<cachet::KernelConfigAttr>(name);
      if (config.getVariant() == cachet::KernelVariant::MatvecMmaSync)
        lowerMma(group, config.getTile()[0], config.getLoads()[0]);
      else
        lower(group);
    }
  }

  /// Whether the kernel of `group` must still store the result of `m`: it
  /// is read by more than the member, its zero fill, the group's epilogues
  /// and deallocs, or is not a buffer of its own.
  static bool storesResult(const Member &m, const RowClass &c) {
    Value y = m.getOutput();
    if (c.epilogues.empty() || !y.getDefiningOp<memref::AllocOp>())
      return true;
    return llvm::any_of(y.getUsers(), [&](Operation *user) {
      return user != m.op && user != m.fill && !isa<memref::DeallocOp>(user) &&
             !llvm::is_contained(c.epilogues, user);
    });
  }

  /// The GEMM's sums as `vector<2xT>` loads of `buffer` at (row, col) and
  /// (row, col + 1): one vector load where its rows are contiguous.
  static Value loadPair(OpBuilder &b, Location loc, Value buffer, Value row,
                        Value col) {
    auto type = cast<MemRefType>(buffer.getType());
    auto pairType = VectorType::get({2}, type.getElementType());
    SmallVector<int64_t> strides;
    int64_t offset;
    if (succeeded(type.getStridesAndOffset(strides, offset)) &&
        strides.back() == 1) {
      auto load = vector::LoadOp::create(b, loc, pairType, buffer,
                                         ValueRange{row, col});
      if (type.getLayout().isIdentity())
        load.setAlignment(2 * type.getElementTypeBitWidth() / 8);
      return load;
    }
    Value next = arith::AddIOp::create(
        b, loc, col, arith::ConstantIndexOp::create(b, loc, 1));
    return vector::FromElementsOp::create(
        b, loc, pairType,
        ValueRange{
            memref::LoadOp::create(b, loc, buffer, ValueRange{row, col}),
            memref::LoadOp::create(b, loc, buffer, ValueRange{row, next})});
  }

  /// The tiles of the GEMM `config` (MmaSync.h).
  static cachet::GemmTiles getGemmTiles(cachet::KernelConfigAttr config) {
    cachet::GemmTiles tiles;
    tiles.m = config.getTile()[0];
    tiles.n = config.getTile()[1];
    if (config.getTile().size() > 2)
      tiles.k = config.getTile()[2];
    tiles.stages = config.getStages();
    tiles.subgroups = config.getWorkgroup() / 32;
    tiles.padBytes = config.getPadBytes();
    tiles.dynamicShared = config.getDynamicShared();
    switch (config.getVariant()) {
    case cachet::KernelVariant::GemmWgmma:
      tiles.k = 64;
      break;
    case cachet::KernelVariant::GemmTiled:
      tiles.threads = config.getWorkgroup();
      tiles.threadColumns = config.getVectorWidth();
      break;
    case cachet::KernelVariant::GemmMma:
      tiles.threads = config.getWorkgroup();
      tiles.subgroup = config.getSubgroup();
      tiles.vectorWidth = config.getVectorWidth();
      break;
    default:
      break;
    }
    return tiles;
  }

  /// Replaces the mat-muls of `group` (one, or siblings over the same x on
  /// the wgmma GEMM), their zero fills and epilogues by the GEMM of their
  /// config (MmaSync.h), where the group's anchor is. A member with blocks
  /// (the wgmma GEMM with load_bytes) decodes its block weight itself: the
  /// dequantize, and the copy it wrote, are erased. A result that only the
  /// epilogues read is not written.
  void lowerGemm(Group &group) {
    RowClass &c = group.classes.front();
    const Member &first = c.members.front();
    auto config = first.op->getAttrOfType<cachet::KernelConfigAttr>(
        cachet::CachetDialect::getKernelConfigAttrName());
    const cachet::BlockWeight *blocks = first.blocks ? &*first.blocks : nullptr;
    cachet::MatvecOperands operands = first.operands;
    auto fallback = first.op->getAttrOfType<cachet::KernelConfigAttr>(
        cachet::CachetDialect::getFallbackKernelConfigAttrName());
    cachet::GemmTiles tiles = getGemmTiles(config);
    bool wgmma = config.getVariant() == cachet::KernelVariant::GemmWgmma;
    bool tiled = config.getVariant() == cachet::KernelVariant::GemmTiled;
    bool mma = config.getVariant() == cachet::KernelVariant::GemmMma;
    auto x = cast<MemRefType>(operands.x.getType());
    auto w = cast<MemRefType>(operands.weight.getType());
    int64_t weights = static_cast<int64_t>(c.members.size());
    // With blocks (only the wgmma GEMM takes load_bytes): what the kernel
    // copies and decodes, and who decodes it.
    cachet::GemmStagedBlocks staged;
    if (blocks) {
      staged.bytes = blocks->bytes;
      staged.rowBytes = blocks->rowBytes;
      staged.blockValues = blocks->block.getBlockValues();
      staged.blockBytes = blocks->block.getBlockBytes();
      staged.pieceBytes = config.getLoadBytes();
      Type element = w.getElementType();
      cachet::BlockQuantizedType block = blocks->block;
      int64_t stepBytes = staged.stepBytes();
      staged.decode = [block, element, stepBytes](
                          OpBuilder &db, Location dl,
                          const cachet::BlockDecoder::WordReader &readWord,
                          Value blockOffset, Value first, int64_t n) {
        return decodeBlocksAs(db, dl, block, readWord, blockOffset, first, n,
                              stepBytes, element);
      };
      tiles.stagedRowBytes = staged.pitch();
      tiles.producers = (config.getWorkgroup() - 2 * tiles.m) / 128;
    }
    SmallVector<bool> stores;
    for (const Member &m : c.members)
      stores.push_back(storesResult(m, c));
    InFlightDiagnostic diag =
        emitRemark(first.op->getLoc(), "cachet-lower-matvec: ")
        << (wgmma   ? "wgmma"
            : tiled ? "tiled"
            : mma   ? "mma"
                    : "mma-sync")
        << " GEMM: ";
    diag << llvm::divideCeil(x.getDimSize(0), tiles.m) << " x "
         << llvm::divideCeil(w.getDimSize(0), tiles.n / weights)
         << " workgroups of "
         << (wgmma   ? tiles.m / 64
             : tiled ? tiles.threads
             : mma   ? tiles.threads / tiles.subgroup
                     : tiles.subgroups)
         << (wgmma   ? " warpgroups"
             : tiled ? " threads"
                     : " subgroups")
         << ", each a " << tiles.m << " x " << tiles.n << " tile over "
         << x.getDimSize(1) << " columns in steps of " << tiles.k;
    if (tiled)
      diag << " (" << tiles.tiledBytes() << " bytes of workgroup memory, f32)";
    else if (mma)
      diag << " (16x16x16 f16 cooperative matrices, "
           << cachet::getMmaGemmBytes(tiles.m, tiles.n, tiles.k, tiles.padBytes)
           << " bytes of workgroup memory)";
    else
      diag << " (" << tiles.stages << " buffers";
    if (tiles.dynamicShared)
      diag << ", " << (wgmma ? tiles.wgmmaBytes() : tiles.bytes())
           << " bytes of dynamic workgroup memory";
    if (!tiled && !mma)
      diag << ")";
    if (fallback)
      diag << "; the tiled GEMM beside it, launched where the device does "
              "not run 16x16x16 f16 cooperative matrices";
    if (first.fill)
      diag << "; the zero fill of the result is done in the kernel";
    if (weights > 1)
      diag << "; one kernel for " << weights
           << " mat-muls over the same x, each tile " << tiles.n / weights
           << " rows of each weight";
    if (!c.epilogues.empty()) {
      diag << "; " << c.epilogues.size()
           << " element-wise op(s) over the results in its epilogue";
      int64_t unstored = llvm::count(stores, false);
      if (unstored > 0)
        diag << ", " << unstored << " f32 result(s) never written";
    }
    if (blocks)
      diag << "; the " << blocks->block.getFormatName()
           << " weight decoded in the kernel from its blocks' "
           << staged.stepBytes() << " bytes per row and step"
           << (tiles.producers > 0 ? " by producer warpgroups" : "")
           << " (its dequantized copy erased)";
    diag.report();
    for (linalg::GenericOp generic : c.epilogues)
      emitRemark(generic.getLoc(),
                 "cachet-lower-matvec: done by the GEMM kernel "
                 "before it, on the sums each thread stores");

    cachet::GemmStore store = [&](OpBuilder &sb, Location loc, Value row,
                                  Value col, ArrayRef<Value> pairs) {
      IRMapping results;
      for (auto [m, pair, stored] : llvm::zip(c.members, pairs, stores)) {
        Value y = m.getOutput();
        Value sum = pair;
        if (!m.fill) {
          auto old = vector::LoadOp::create(sb, loc, pair.getType(), y,
                                            ValueRange{row, col});
          old.setAlignment(8);
          sum = arith::AddFOp::create(sb, loc, old, pair);
        }
        if (stored) {
          auto st =
              vector::StoreOp::create(sb, loc, sum, y, ValueRange{row, col});
          st.setAlignment(8);
        }
        results.map(y, sum);
      }
      for (linalg::GenericOp generic : c.epilogues)
        emitEpilogue(sb, loc, generic, results, {row, col}, /*width=*/2);
    };
    OpBuilder b(group.anchor);
    Location loc = first.op->getLoc();
    if (wgmma) {
      SmallVector<Value> matrices;
      for (const Member &m : c.members)
        matrices.push_back(m.getMatrix());
      cachet::buildGemmWgmma(b, loc, operands.x, matrices, store, tiles,
                             blocks ? &staged : nullptr);
    } else if (tiled) {
      cachet::buildGemmTiled(b, loc, operands.x, operands.weight, store, tiles);
    } else if (mma && fallback) {
      // Both kernels, the device's answer choosing (each writes the same
      // results).
      Value has = cachet::buildCooperativeMatrixCheck(b, first.op);
      auto ifOp = scf::IfOp::create(b, loc, TypeRange(), has,
                                    /*withElseRegion=*/true);
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      cachet::buildGemmMma(b, loc, operands.x, operands.weight, store, tiles);
      b.setInsertionPointToStart(ifOp.elseBlock());
      cachet::buildGemmTiled(b, loc, operands.x, operands.weight, store,
                             getGemmTiles(fallback));
    } else if (mma) {
      cachet::buildGemmMma(b, loc, operands.x, operands.weight, store, tiles);
    } else {
      cachet::buildGemmMmaSync(b, loc, operands.x, operands.weight, store,
                               tiles);
    }
    for (linalg::GenericOp generic : c.epilogues)
      generic.erase();
    for (auto [m, stored] : llvm::zip(c.members, stores)) {
      m.op->erase();
      if (m.fill)
        m.fill.erase();
      if (m.blocks)
        eraseDequantizedCopy(*m.blocks);
      if (stored)
        continue;
      // Nothing reads the result any more: its buffer and deallocs go.
      Value y = m.getOutput();
      for (Operation *user : llvm::make_early_inc_range(y.getUsers()))
        user->erase();
      y.getDefiningOp()->erase();
    }
  }

  /// Erases `w`'s dequantize and, where nothing else uses it, the buffer
  /// it wrote (its alloc and deallocs).
  static void eraseDequantizedCopy(const cachet::BlockWeight &w) {
    Value buffer = w.buffer;
    w.dequantize->erase();
    auto alloc = buffer.getDefiningOp<memref::AllocOp>();
    if (!alloc || !llvm::all_of(buffer.getUsers(), [](Operation *user) {
          return isa<memref::DeallocOp>(user);
        }))
      return;
    for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
      user->erase();
    alloc->erase();
  }

  /// Replaces the dequantization of the GEMM `gemm`'s block weight `w` (a
  /// generic writing the whole copy the GEMM reads, one thread per value
  /// with byte loads) by a kernel of one thread per slice of 8 values of a
  /// row: decoded from the blocks' aligned 32-bit words as the mat-vec
  /// kernel decodes them (the same values), stored with one vector store.
  /// The copy is still written: the GEMM reads it (issue 23 would decode
  /// in the GEMM's producers).
  static void lowerGemmWeightDequantize(cachet::BlockWeight w, Operation *gemm,
                                        int64_t maxVectorElements) {
    // Slices of 8 values, or of the target's widest vector (SPIR-V: 4, the
    // mat-vec's block-slice there: its decoders build no wider vector).
    constexpr int64_t threads = 256;
    int64_t slice =
        maxVectorElements > 0 ? std::min<int64_t>(8, maxVectorElements) : 8;
    auto out = cast<MemRefType>(w.buffer.getType());
    Type element = out.getElementType();
    int64_t rows = out.getDimSize(0), cols = out.getDimSize(1);
    int64_t perRow = cols / slice, items = rows * perRow;
    emitRemark(gemm->getLoc(), "cachet-lower-matvec: the ")
        << w.block.getFormatName() << (w.scales ? " (split)" : "")
        << " weight's copy for the GEMM is dequantized by "
        << llvm::divideCeil(items, threads) << " workgroups of " << threads
        << " threads, each thread decoding " << slice
        << " values of a row from aligned 32-bit words and storing them "
           "at once";
    Location loc = w.dequantize.getLoc();
    OpBuilder b(w.dequantize);
    auto index = [&](OpBuilder &ib, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(ib, loc, v);
    };
    Value one = index(b, 1);
    auto launch = gpu::LaunchOp::create(
        b, loc, index(b, llvm::divideCeil(items, threads)), one, one,
        index(b, threads), one, one);
    OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
    Value item = arith::AddIOp::create(
        kb, loc,
        arith::MulIOp::create(kb, loc, launch.getBlockIds().x,
                              index(kb, threads)),
        launch.getThreadIds().x);
    auto inRange = scf::IfOp::create(
        kb, loc,
        arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, item,
                              index(kb, items)),
        /*withElse=*/false);
    {
      OpBuilder ib = OpBuilder::atBlockBegin(&inRange.getThenRegion().front());
      Value row = arith::DivUIOp::create(ib, loc, item, index(ib, perRow));
      Value k = arith::MulIOp::create(
          ib, loc, arith::RemUIOp::create(ib, loc, item, index(ib, perRow)),
          index(ib, slice));
      Value values = decodeSliceAs(ib, loc, w, row, k, slice, element);
      auto store = vector::StoreOp::create(ib, loc, values, w.buffer,
                                           ValueRange{row, k});
      store.setAlignment(slice * element.getIntOrFloatBitWidth() / 8);
    }
    gpu::TerminatorOp::create(kb, loc);
    w.dequantize->erase();
  }

  /// Takes the kernel parameters of `group` from the config of its first
  /// mat-vec (every member has the same); returns the lanes per row.
  int64_t readConfig(const Group &group) {
    auto config = group.classes.front()
                      .members.front()
                      .op->getAttrOfType<cachet::KernelConfigAttr>(
                          cachet::CachetDialect::getKernelConfigAttrName());
    rowsPerBlock = config.getTile()[0];
    rowsPerSubgroup = config.getTile()[1];
    loadsPerLane = config.getLoads()[0];
    pairedLoadsPerLane = config.getLoads()[1];
    blocksPerCU = config.getResident()[0];
    pairedBlocksPerCU = config.getResident()[1];
    auto x = cast<MemRefType>(group.x.getType());
    loadBytes = config.getVectorWidth() * (x.getElementTypeBitWidth() / 8);
    stageX = config.getStageX();
    return config.getSubgroup();
  }

  /// Starts a group at `first` and adds what follows it in its block: the
  /// mat-vecs over the same x (fuse-siblings) and then an element-wise op
  /// over their results (fuse-epilogues), as long as the ops in between may
  /// run before the kernel. With `gemm` the candidates are GEMMs: siblings
  /// only on the wgmma GEMM, of the same rows, each taking an equal part
  /// of a tile's weight rows (a multiple of 8).
  Group formGroup(Operation *first,
                  const llvm::DenseSet<Operation *> &candidates,
                  llvm::DenseSet<Operation *> &grouped, AliasAnalysis &aliases,
                  bool gemm = false) {
    auto config = first->getAttrOfType<cachet::KernelConfigAttr>(
        cachet::CachetDialect::getKernelConfigAttrName());
    bool fuseSiblings = config.getFuseSiblings();
    bool fuseEpilogues = config.getFuseEpilogues();
    StringRef kind = gemm ? "mat-mul" : "mat-vec";
    Group group;
    group.x = cachet::getMatvecOperands(first)->x;
    group.anchor = first;
    SmallVector<Member> members;
    auto add = [&](Operation *op) {
      Member m{op, *cachet::getMatvecOperands(op), getZeroFill(op),
               blockWeights.lookup(op)};
      members.push_back(m);
      grouped.insert(op);
      group.anchor = op;
      for (RowClass &c : group.classes)
        if (c.members.front().getRows() == m.getRows()) {
          c.members.push_back(m);
          return;
        }
      group.classes.push_back(RowClass{{m}, {}});
    };
    add(first);
    auto blockTypeOf = [&](Operation *op) {
      std::optional<cachet::BlockWeight> w = blockWeights.lookup(op);
      return w ? w->block : cachet::BlockQuantizedType();
    };
    // A candidate's weight has x's element type: one x, one element type
    // (and one number of rows of x).
    for (Operation *op = first->getNextNode(); op; op = op->getNextNode()) {
      std::optional<cachet::MatvecOperands> next =
          cachet::getMatvecOperands(op);
      // A GEMM config with fuse_siblings is the wgmma GEMM over float
      // weights (verified): the siblings need the same rows, each an equal
      // part of the tile's, a multiple of 8.
      auto gemmSibling = [&] {
        int64_t parts = static_cast<int64_t>(members.size()) + 1;
        return cast<MemRefType>(next->weight.getType()).getDimSize(0) ==
                   members.front().getRows() &&
               config.getTile()[1] % (8 * parts) == 0;
      };
      if (next && candidates.contains(op) && fuseSiblings &&
          next->x == group.x &&
          blockTypeOf(op) == members.front().getBlockType() &&
          op->getAttr(cachet::CachetDialect::getKernelConfigAttrName()) ==
              first->getAttr(
                  cachet::CachetDialect::getKernelConfigAttrName()) &&
          (!gemm || gemmSibling())) {
        Member sibling{op, *next, {}, blockWeights.lookup(op)};
        // Blocks of one kernel run in any order: no mat-vec may write what
        // another reads or writes.
        Value out = next->y;
        std::string conflict;
        for (const Member &m : members)
          if (mayAlias(aliases, out, group.x) ||
              mayAlias(aliases, out, m.getOutput()) ||
              llvm::any_of(
                  m.getWeights(),
                  [&](Value w) { return mayAlias(aliases, out, w); }) ||
              llvm::any_of(sibling.getWeights(), [&](Value w) {
                return mayAlias(aliases, w, m.getOutput());
              }))
            conflict = "its buffers may alias those of another mat-vec";
        if (conflict.empty()) {
          add(op);
          continue;
        }
        emitRemark(op->getLoc(),
                   "cachet-lower-matvec: not in one kernel with the ")
            << kind << " before it over the same x: " << conflict;
        break;
      }
      if (auto generic = dyn_cast<linalg::GenericOp>(op);
          generic && fuseEpilogues) {
        std::string reason;
        if (RowClass *c = matchEpilogue(generic, group, aliases, reason)) {
          c->epilogues.push_back(generic);
          group.anchor = generic;
          break;
        }
        if (!reason.empty()) {
          emitRemark(generic.getLoc(),
                     "cachet-lower-matvec: not in the epilogue of "
                     "the ")
              << kind << " kernel before it: " << reason;
          break;
        }
      }
      // The zero fill of a later mat-vec of the group is done by the kernel.
      if (auto fill = dyn_cast<linalg::FillOp>(op)) {
        Operation *after = fill->getNextNode();
        if (after && getZeroFill(after) == fill)
          continue;
      }
      if (next)
        break;
      std::string conflict = getConflict(op, group.x, members, aliases);
      if (conflict.empty())
        continue;
      // Say why where the next mat-vec is one over the same x (one over
      // another x would have ended the group anyway; scanning past it made
      // this pass quadratic in a model's layers).
      for (Operation *later = op->getNextNode(); later;
           later = later->getNextNode()) {
        if (!candidates.contains(later))
          continue;
        if (fuseSiblings && cachet::getMatvecOperands(later)->x == group.x)
          emitRemark(op->getLoc(), "cachet-lower-matvec: the ")
              << kind << " kernel before it is not joined with the " << kind
              << " over the same x after it: " << conflict;
        break;
      }
      break;
    }
    // Classes whose subgroups compute more mat-vecs (K and V beside Q) take
    // the grid's first blocks: theirs run longest, so they start in the
    // first wave instead of trailing the kernel. (Q/K/V over q8_0 weights
    // ran at 1.32 TB/s with Q's 512 blocks first and K/V's 128 after, run
    // 112; 20.2 -> 19.2 us with K/V first, run 113: not its main bound.)
    llvm::stable_sort(group.classes, [](const RowClass &a, const RowClass &c) {
      return a.members.size() > c.members.size();
    });
    return group;
  }

  /// Emits the kernel of `group` where its anchor is and erases the ops it
  /// replaces. Each row class takes consecutive blocks of a one-dimensional
  /// grid; a block is `rowsPerBlock` subgroups of `lanes` consecutive
  /// threads, and subgroup s of a class computes rows s * R to s * R + R - 1
  /// of each mat-vec of the class (R = rows-per-subgroup where it divides the
  /// rows, else 1), so each load of x serves every row of the subgroup.
  void lower(Group &group) {
    int64_t lanes = readConfig(group);
    Location loc = group.anchor->getLoc();
    OpBuilder b(group.anchor);
    auto index = [&](OpBuilder &ib, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(ib, loc, v);
    };
    auto perSubgroupOf = [&](const RowClass &c) {
      return c.members.front().getRows() % rowsPerSubgroup == 0
                 ? rowsPerSubgroup
                 : 1;
    };
    SmallVector<int64_t> firstBlock;
    int64_t blocks = 0;
    for (const RowClass &c : group.classes) {
      firstBlock.push_back(blocks);
      int64_t subgroups = c.members.front().getRows() / perSubgroupOf(c);
      blocks += llvm::divideCeil(subgroups, rowsPerBlock);
    }
    // A kernel whose subgroups compute rows of several mat-vecs (gate/up,
    // K/V) may keep a different number of loads in flight.
    bool paired = llvm::any_of(
        group.classes, [](const RowClass &c) { return c.members.size() > 1; });
    int64_t loads = paired ? pairedLoadsPerLane : loadsPerLane;
    // A resident grid: `blocks-per-cu` blocks per compute unit, each
    // looping over the kernel's blocks, so that no wave of blocks is left
    // partly filled and every block starts at once.
    int64_t perCU = paired ? pairedBlocksPerCU : blocksPerCU;
    int64_t grid = blocks;
    if (perCU > 0 && computeUnits > 0)
      grid = std::min(blocks, perCU * computeUnits);
    auto xType = cast<MemRefType>(group.x.getType());
    // cachet-select-kernel-configs stages x only where it fits.
    bool staged = stageX;
    remark(group, lanes, loads, perSubgroupOf, perCU, grid, blocks, staged);

    Value one = index(b, 1);
    // stage-x: x in workgroup memory, copied once per block.
    // Over blocks: x quantized to q8_0 blocks, i8 quants and f32 scales.
    bool int8 = staged && group.classes.front().members.front().blocks;
    SmallVector<Type> shared;
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                gpu::AddressSpace::Workgroup);
    if (int8) {
      int64_t k = xType.getDimSize(0);
      shared.push_back(MemRefType::get({k}, b.getI8Type(), nullptr, workgroup));
      shared.push_back(
          MemRefType::get({k / 32}, b.getF32Type(), nullptr, workgroup));
    } else if (staged) {
      shared.push_back(MemRefType::get(xType.getShape(), xType.getElementType(),
                                       nullptr, workgroup));
    }
    int64_t threads = lanes * rowsPerBlock;
    auto launch = gpu::LaunchOp::create(
        b, loc, index(b, grid), one, one, index(b, threads), one, one,
        /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{}, shared);
    OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
    Value tid = launch.getThreadIds().x;
    Value block = launch.getBlockIds().x;
    Value x = group.x;
    xQuants = xScales = Value();
    if (int8) {
      xQuants = launch.getWorkgroupAttributions()[0];
      xScales = launch.getWorkgroupAttributions()[1];
      emitQuantizeX(kb, loc, group.x, tid, threads);
    } else if (staged) {
      x = launch.getWorkgroupAttributions()[0];
      emitStageX(kb, loc, group.x, x, tid, threads);
    }
    if (grid < blocks) {
      auto loop = scf::ForOp::create(kb, loc, block, index(kb, blocks),
                                     index(kb, grid));
      // Registers for every block of the grid at once (nvvm.minctasm).
      loop->setAttr(cachet::CachetDialect::getMinWorkgroupsPerSMAttrName(),
                    kb.getI64IntegerAttr(perCU));
      block = loop.getInductionVar();
      kb.setInsertionPoint(loop.getBody()->getTerminator());
    }
    forEachClass(kb, loc, group, block, firstBlock,
                 [&](OpBuilder &body, const RowClass &rowClass, Value local) {
                   emitClass(body, loc, x, rowClass, perSubgroupOf(rowClass),
                             local, tid, lanes, loads);
                 });
    kb.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(kb, loc);
    eraseReplaced(group);
  }

  /// Emits `emit(builder, class, local block id)` for each row class of
  /// `group`, class c in blocks [firstBlock[c], firstBlock[c + 1]): an
  /// if/else chain on the block id `block`.
  static void
  forEachClass(OpBuilder &kb, Location loc, const Group &group, Value block,
               ArrayRef<int64_t> firstBlock,
               function_ref<void(OpBuilder &, const RowClass &, Value)> emit) {
    auto index = [&](OpBuilder &ib, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(ib, loc, v);
    };
    OpBuilder cb = kb;
    for (auto [c, rowClass] : llvm::enumerate(group.classes)) {
      OpBuilder body = cb;
      if (c + 1 < group.classes.size()) {
        Value inClass =
            arith::CmpIOp::create(cb, loc, arith::CmpIPredicate::ult, block,
                                  index(cb, firstBlock[c + 1]));
        auto ifOp = scf::IfOp::create(cb, loc, inClass, /*withElse=*/true);
        body = OpBuilder::atBlockBegin(&ifOp.getThenRegion().front());
        cb = OpBuilder::atBlockBegin(&ifOp.getElseRegion().front());
      }
      Value local =
          arith::SubIOp::create(body, loc, block, index(body, firstBlock[c]));
      emit(body, rowClass, local);
    }
  }

  /// The end of a member's kernel remark: the zero fill done in the kernel,
  /// the mat-vecs sharing it.
  static void remarkFillAndSharing(InFlightDiagnostic &diag, const Member &m,
                                   const RowClass &c, size_t total) {
    if (m.fill)
      diag << "; the zero fill of the result is done in the kernel";
    if (total > 1)
      diag << "; one kernel for " << total << " mat-vecs over the same x, "
           << c.members.size() << " of them with " << m.getRows()
           << " rows computed by the same subgroups";
  }

  /// The remarks on the epilogues of `c`.
  static void remarkEpilogues(const RowClass &c) {
    for (linalg::GenericOp generic : c.epilogues)
      emitRemark(generic.getLoc(),
                 "cachet-lower-matvec: done by the mat-vec kernel "
                 "before it, in the lane that stores each row");
  }

  /// Erases the ops the kernel of `group` replaces: its mat-vecs, their
  /// zero fills and epilogues, and the dequantized copies of block weights.
  static void eraseReplaced(Group &group) {
    for (RowClass &c : group.classes) {
      for (linalg::GenericOp generic : c.epilogues)
        generic.erase();
      for (Member &m : c.members) {
        if (m.fill)
          m.fill.erase();
        m.op->erase();
        if (!m.blocks)
          continue;
        // The dequantized copy is never written: its generic, buffer and
        // deallocs go.
        m.blocks->dequantize.erase();
        Value buffer = m.blocks->buffer;
        for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
          user->erase();
        buffer.getDefiningOp()->erase();
      }
    }
  }

  /// Emits the mma-sync kernel of the small-batch mat-muls of `group`
  /// (f16 or bf16 x [M][K], weights of that type or blocks dequantized to
  /// it, M <= 8, rows a multiple of 16, K of 128), or of its mat-vecs (x
  /// [K]: M = 1, y[row] stored), where its anchor is. Each row class takes
  /// a block per 16 weight rows; a block is `warps` subgroups of 32 lanes,
  /// subgroup w taking steps w, w + warps, ... of 128 columns. In a step,
  /// lane l (g = l / 4, q = l % 4) decodes values 32 q .. 32 q + 31 of the
  /// step of rows g and g + 8 into 16-bit pairs and reads the same columns of
  /// row g of x (row M - 1 for g >= M: columns past M are never stored);
  /// each 8 values are two m16n8k16 mma.sync k-steps, their 4 + 4 values
  /// the lane's k-slots (2q, 2q + 1) and (2q + 8, 2q + 9) in the A (weight
  /// rows) and B (x) fragments alike, so the order of k within an mma does
  /// not matter. The f32 accumulators (rows g and g + 8, columns 2q and
  /// 2q + 1) are added across subgroups in workgroup memory, in subgroup
  /// order, by subgroup 0, whose lanes store y[n][row] and the epilogues.
  void lowerMma(Group &group, int64_t warps, int64_t steps) {
    Location loc = group.anchor->getLoc();
    OpBuilder b(group.anchor);
    auto index = [&](OpBuilder &ib, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(ib, loc, v);
    };
    SmallVector<int64_t> firstBlock;
    int64_t blocks = 0;
    size_t maxMembers = 0;
    for (const RowClass &c : group.classes) {
      firstBlock.push_back(blocks);
      blocks += c.members.front().getRows() / 16;
      maxMembers = std::max(maxMembers, c.members.size());
    }
    size_t total = group.getNumMembers();
    for (const RowClass &c : group.classes) {
      for (const Member &m : c.members) {
        InFlightDiagnostic diag = emitRemark(
            m.op->getLoc(), "cachet-lower-matvec: mma-sync kernel: ");
        StringRef half =
            cast<MemRefType>(m.getMatrix().getType()).getElementType().isBF16()
                ? "bf16"
                : "f16";
        diag << warps << " subgroups per block share 16 weight rows, ";
        if (m.operands.batched)
          diag << m.operands.columns << " rows of x; the ";
        else
          diag << "a mat-vec (x in column 0 of the mma's B); the ";
        if (m.blocks)
          diag << (m.blocks->scales ? "split " : "")
               << m.blocks->block.getFormatName() << " blocks decoded to "
               << half << " pairs in registers, the dequantized copy never "
               << "written";
        else
          diag << half << " weight read in 16-byte loads";
        diag << "; m16n8k16 mma.sync on " << half << ", f32 accumulators";
        if (steps > 1)
          diag << "; " << steps
               << " steps of 128 columns per subgroup loaded before their "
                  "mma.syncs";
        remarkFillAndSharing(diag, m, c, total);
      }
      remarkEpilogues(c);
    }
    Value one = index(b, 1);
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                gpu::AddressSpace::Workgroup);
    // Each member's four partial sums per lane and subgroup.
    auto partialsType =
        MemRefType::get({static_cast<int64_t>(maxMembers) * warps * 32 * 4},
                        b.getF32Type(), nullptr, workgroup);
    auto launch = gpu::LaunchOp::create(
        b, loc, index(b, blocks), one, one, index(b, 32 * warps), one, one,
        /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{}, TypeRange{partialsType});
    OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
    Value tid = launch.getThreadIds().x;
    Value block = launch.getBlockIds().x;
    Value partials = launch.getWorkgroupAttributions()[0];
    forEachClass(kb, loc, group, block, firstBlock,
                 [&](OpBuilder &body, const RowClass &rowClass, Value local) {
                   emitMmaClass(body, loc, group.x, rowClass, local, tid, warps,
                                steps, partials);
                 });
    kb.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(kb, loc);
    eraseReplaced(group);
  }

  /// Emits the 16 rows of `rowClass` of block `local` on mma.sync (see
  /// lowerMma): subgroup w takes the 128-column steps w, w + warps, ...,
  /// `steps` of them per iteration, all their weight slices loaded before
  /// the mma.syncs, which add them in that order.
  void emitMmaClass(OpBuilder &kb, Location loc, Value x,
                    const RowClass &rowClass, Value local, Value tid,
                    int64_t warps, int64_t steps, Value partials) {
    auto index = [&](OpBuilder &ib, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(ib, loc, v);
    };
    const cachet::MatvecOperands &shape = rowClass.members.front().operands;
    int64_t columns = shape.columns;
    bool batched = shape.batched;
    auto type =
        cast<MemRefType>(rowClass.members.front().getMatrix().getType());
    int64_t cols = type.getDimSize(1);
    // f16 or bf16: the weight's (dequantized) element type, x's too.
    Type half = type.getElementType(), f32 = kb.getF32Type();
    auto aType = VectorType::get({4, 2}, half);
    auto bType = VectorType::get({2, 2}, half);
    auto cType = VectorType::get({2, 2}, f32);
    Value lane = arith::RemUIOp::create(kb, loc, tid, index(kb, 32));
    Value warp = arith::DivUIOp::create(kb, loc, tid, index(kb, 32));
    Value g = arith::DivUIOp::create(kb, loc, lane, index(kb, 4));
    Value q = arith::RemUIOp::create(kb, loc, lane, index(kb, 4));
    Value row0 = arith::AddIOp::create(
        kb, loc, arith::MulIOp::create(kb, loc, local, index(kb, 16)), g);
    Value row1 = arith::AddIOp::create(kb, loc, row0, index(kb, 8));
    Value xRow = arith::MinUIOp::create(kb, loc, g, index(kb, columns - 1));
    Value zeros = arith::ConstantOp::create(
        kb, loc, cType, DenseElementsAttr::get(cType, 0.0f));
    auto pairsOf = [&](OpBuilder &lb, Location l, Value v) {
      SmallVector<Value> pairs;
      for (int64_t p = 0; p < 4; ++p)
        pairs.push_back(vector::ShuffleOp::create(
            lb, l, v, v, ArrayRef<int64_t>{2 * p, 2 * p + 1}));
      return pairs;
    };
    auto fragment = [&](OpBuilder &lb, Location l, VectorType t,
                        ArrayRef<Value> pairs) {
      Value f = arith::ConstantOp::create(
          lb, l, t, DenseElementsAttr::get(t, lb.getFloatAttr(half, 0)));
      for (auto [i, pair] : llvm::enumerate(pairs))
        f = vector::InsertOp::create(lb, l, pair, f,
                                     ArrayRef<int64_t>{int64_t(i)});
      return f;
    };
    SmallVector<Value> init(rowClass.members.size(), zeros);
    auto loop = scf::ForOp::create(
        kb, loc, warp, index(kb, cols / 128), index(kb, warps * steps), init,
        [&](OpBuilder &lb, Location l, Value first, ValueRange accs) {
          // ks[u][j]: the columns of step first + u * warps this lane's
          // slice j starts at.
          SmallVector<SmallVector<Value>> ks(steps);
          for (int64_t u = 0; u < steps; ++u) {
            Value step =
                arith::AddIOp::create(lb, l, first, index(lb, u * warps));
            Value base = arith::AddIOp::create(
                lb, l, arith::MulIOp::create(lb, l, step, index(lb, 128)),
                arith::MulIOp::create(lb, l, q, index(lb, 32)));
            for (int64_t j = 0; j < 4; ++j)
              ks[u].push_back(
                  arith::AddIOp::create(lb, l, base, index(lb, 8 * j)));
          }
          // The weight loads first (PDL may issue them before its wait):
          // weights[m][r][j], values k_j .. k_j + 7 of row r as f16 or
          // bf16 (blocks: as the dequantize rounds them).
          auto slice = [&](const Member &m, Value row, Value k) -> Value {
            if (m.blocks)
              return decodeSliceAs(lb, l, *m.blocks, row, k, 8, half);
            auto v = vector::LoadOp::create(lb, l, VectorType::get({8}, half),
                                            m.getMatrix(), ValueRange{row, k});
            v.setAlignment(16);
            v->setAttr(cachet::CachetDialect::getStreamingWeightAttrName(),
                       lb.getUnitAttr());
            return v;
          };
          // weights[u][m][r][j].
          SmallVector<SmallVector<SmallVector<SmallVector<Value>>>> weights(
              steps);
          for (int64_t u = 0; u < steps; ++u)
            for (const Member &m : rowClass.members) {
              weights[u].emplace_back();
              for (Value row : {row0, row1}) {
                weights[u].back().emplace_back();
                // A lane's 32 values of a q8_0 row are one block: decoded
                // at once, the words its slices share are loaded once.
                if (m.blocks && isa<cachet::Q8_0Type>(m.blocks->block)) {
                  Value block =
                      decodeSliceAs(lb, l, *m.blocks, row, ks[u][0], 32, half);
                  for (int64_t j = 0; j < 4; ++j)
                    weights[u].back().back().push_back(
                        vector::ShuffleOp::create(
                            lb, l, block, block,
                            llvm::to_vector(
                                llvm::seq<int64_t>(8 * j, 8 * j + 8))));
                  continue;
                }
                for (Value k : ks[u])
                  weights[u].back().back().push_back(slice(m, row, k));
              }
            }
          SmallVector<Value> result(accs.begin(), accs.end());
          for (int64_t u = 0; u < steps; ++u)
            for (auto [j, k] : llvm::enumerate(ks[u])) {
              auto xv = vector::LoadOp::create(
                  lb, l, VectorType::get({8}, half), x,
                  batched ? ValueRange{xRow, k} : ValueRange{k});
              xv.setAlignment(16);
              SmallVector<Value> xp = pairsOf(lb, l, xv);
              for (size_t m = 0; m < rowClass.members.size(); ++m) {
                SmallVector<Value> p0 = pairsOf(lb, l, weights[u][m][0][j]);
                SmallVector<Value> p1 = pairsOf(lb, l, weights[u][m][1][j]);
                for (int64_t s = 0; s < 2; ++s) {
                  Value a = fragment(
                      lb, l, aType,
                      {p0[2 * s], p1[2 * s], p0[2 * s + 1], p1[2 * s + 1]});
                  Value bv = fragment(lb, l, bType, {xp[2 * s], xp[2 * s + 1]});
                  result[m] =
                      half.isF16()
                          ? nvgpu::MmaSyncOp::create(
                                lb, l, a, bv, result[m],
                                ArrayRef<int64_t>{16, 8, 16})
                                .getResult()
                          : cachet::emitPackedMmaSync(lb, l, a, bv, result[m]);
                }
              }
            }
          scf::YieldOp::create(lb, l, result);
        });
    // The subgroups' sums to workgroup memory, added by subgroup 0.
    auto partialAt = [&](OpBuilder &ib, size_t m, Value w, int64_t e) -> Value {
      // ((m * warps + w) * 32 + lane) * 4 + e
      Value mw = arith::AddIOp::create(ib, loc, index(ib, m * warps), w);
      Value ml = arith::AddIOp::create(
          ib, loc, arith::MulIOp::create(ib, loc, mw, index(ib, 32)), lane);
      return arith::AddIOp::create(
          ib, loc, arith::MulIOp::create(ib, loc, ml, index(ib, 4)),
          index(ib, e));
    };
    for (size_t m = 0; m < rowClass.members.size(); ++m)
      for (int64_t e = 0; e < 4; ++e)
        memref::StoreOp::create(
            kb, loc,
            vector::ExtractOp::create(kb, loc, loop.getResult(m),
                                      ArrayRef<int64_t>{e / 2, e % 2}),
            partials, ValueRange{partialAt(kb, m, warp, e)});
    gpu::BarrierOp::create(kb, loc);
    Value first = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::eq, warp,
                                        index(kb, 0));
    auto store = scf::IfOp::create(kb, loc, first, /*withElse=*/false);
    OpBuilder sb = OpBuilder::atBlockBegin(&store.getThenRegion().front());
    // sums[m][e]: rows (row0, row0, row1, row1), columns (2q, 2q + 1) x 2.
    SmallVector<SmallVector<Value>> sums(rowClass.members.size());
    for (size_t m = 0; m < rowClass.members.size(); ++m)
      for (int64_t e = 0; e < 4; ++e) {
        Value sum = memref::LoadOp::create(
            sb, loc, partials, ValueRange{partialAt(sb, m, index(sb, 0), e)});
        for (int64_t w = 1; w < warps; ++w)
          sum = arith::AddFOp::create(
              sb, loc, sum,
              memref::LoadOp::create(
                  sb, loc, partials,
                  ValueRange{partialAt(sb, m, index(sb, w), e)}));
        sums[m].push_back(sum);
      }
    Value zero = arith::ConstantOp::create(sb, loc, sb.getF32FloatAttr(0));
    for (int64_t e = 0; e < 4; ++e) {
      // A mat-vec's one column (of x, of y) is column 0 of the lanes
      // with q = 0.
      if (!batched && e % 2 != 0)
        continue;
      Value row = e < 2 ? row0 : row1;
      Value n = arith::AddIOp::create(
          sb, loc, arith::MulIOp::create(sb, loc, q, index(sb, 2)),
          index(sb, e % 2));
      Value inBatch = arith::CmpIOp::create(sb, loc, arith::CmpIPredicate::ult,
                                            n, index(sb, columns));
      auto ifOp = scf::IfOp::create(sb, loc, inBatch, /*withElse=*/false);
      OpBuilder yb = OpBuilder::atBlockBegin(&ifOp.getThenRegion().front());
      SmallVector<Value> memberSums;
      for (const SmallVector<Value> &memberSum : sums)
        memberSums.push_back(memberSum[e]);
      emitStores(yb, loc, rowClass,
                 batched ? ValueRange{n, row} : ValueRange{row}, memberSums,
                 zero);
    }
  }

  /// Stores y = old + sums[m] at `at` for each mat-vec m of `rowClass`
  /// (old: `zero`, +0.0, where the kernel does the zero fill), then the
  /// epilogues of `at` over those values.
  static void emitStores(OpBuilder &b, Location loc, const RowClass &rowClass,
                         ValueRange at, ArrayRef<Value> sums, Value zero) {
    IRMapping results;
    for (auto [member, sum] : llvm::zip(rowClass.members, sums)) {
      Value out = member.getOutput();
      Value old = member.fill
                      ? zero
                      : memref::LoadOp::create(b, loc, out, at).getResult();
      Value y = arith::AddFOp::create(b, loc, old, sum);
      memref::StoreOp::create(b, loc, y, out, at);
      results.map(out, y);
    }
    for (linalg::GenericOp generic : rowClass.epilogues)
      emitEpilogue(b, loc, generic, results, at);
  }

  /// Quantizes `x` into xQuants / xScales, q8_0 blocks as ggml's
  /// quantize_row_q8_0 computes them (the scale rounded to f16, kept as
  /// f32): thread t of the block's `threads` quantizes blocks t,
  /// t + threads, ...; then the block waits at a barrier.
  void emitQuantizeX(OpBuilder &kb, Location loc, Value x, Value tid,
                     int64_t threads) {
    auto type = cast<MemRefType>(x.getType());
    Type element = type.getElementType();
    auto index = [&](OpBuilder &ib, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(ib, loc, v);
    };
    scf::ForOp::create(
        kb, loc, tid, index(kb, type.getDimSize(0) / 32), index(kb, threads),
        ValueRange{},
        [&](OpBuilder &lb, Location l, Value blockIndex, ValueRange) {
          Value base = arith::MulIOp::create(lb, l, blockIndex, index(lb, 32));
          // The block's 32 values, loaded as vectors of up to 16 bytes.
          int64_t width =
              std::min<int64_t>(32, 128 / element.getIntOrFloatBitWidth());
          SmallVector<Value> values;
          for (int64_t i = 0; i < 32; i += width) {
            auto v = vector::LoadOp::create(
                lb, l, VectorType::get({width}, element), x,
                ValueRange{arith::AddIOp::create(lb, l, base, index(lb, i))});
            v.setAlignment(width * element.getIntOrFloatBitWidth() / 8);
            for (int64_t j = 0; j < width; ++j)
              values.push_back(cachet::castFloat(
                  lb, l,
                  vector::ExtractOp::create(lb, l, v, ArrayRef<int64_t>{j}),
                  lb.getF32Type()));
          }
          // The block's values: from the loaded vectors where the lane is
          // known, else (the encoder's scan loop) read again from x.
          cachet::BlockEncoder encoder(
              lb, l, cachet::Q8_0Type::get(lb.getContext()),
              cachet::Rounding::Away,
              [&](OpBuilder &rb, Location rl, Value lane) -> Value {
                if (std::optional<int64_t> at = getConstantIntValue(lane))
                  return values[*at];
                Value v = memref::LoadOp::create(
                    rb, rl, x,
                    ValueRange{arith::AddIOp::create(rb, rl, base, lane)});
                return cachet::castFloat(rb, rl, v, rb.getF32Type());
              });
          auto [quants, d] = encoder.encodeQ8Block();
          for (int64_t i = 0; i < 32; i += 4) {
            Value word = vector::FromElementsOp::create(
                lb, l, VectorType::get({4}, lb.getI8Type()),
                ArrayRef<Value>(quants).slice(i, 4));
            auto st = vector::StoreOp::create(
                lb, l, word, xQuants,
                ValueRange{arith::AddIOp::create(lb, l, base, index(lb, i))});
            st.setAlignment(4);
          }
          memref::StoreOp::create(
              lb, l, arith::ExtFOp::create(lb, l, lb.getF32Type(), d), xScales,
              ValueRange{blockIndex});
          scf::YieldOp::create(lb, l);
        });
    gpu::BarrierOp::create(kb, loc);
  }

  /// Returns acc + the dot product of the 4 signed bytes of `a` and `x`
  /// (each an i32 word or a vector<4xi8>; sign-extended products summed in
  /// i32: nvvm's dp4a where cachet-int8-dot-products rewrites it).
  static Value emitDot4(OpBuilder &b, Location loc, Value a, Value x,
                        Value acc) {
    auto bytes = VectorType::get({4}, b.getI8Type());
    auto wide = VectorType::get({4}, b.getI32Type());
    auto asBytes = [&](Value v) -> Value {
      if (v.getType() == bytes)
        return v;
      return vector::BitCastOp::create(
          b, loc, bytes,
          vector::FromElementsOp::create(
              b, loc, VectorType::get({1}, b.getI32Type()), ValueRange{v}));
    };
    Value products = arith::MulIOp::create(
        b, loc, arith::ExtSIOp::create(b, loc, wide, asBytes(a)),
        arith::ExtSIOp::create(b, loc, wide, asBytes(x)));
    return vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                       products, acc);
  }

  /// Returns, as a vector<1xf32>, the dot product of values `k` ..
  /// `k + n - 1` of row `row` of `w` (q8_0 or q4_0 quants, read as
  /// decodeSlice reads them) with x's quants in xQuants, times both scales.
  Value dotSlice(OpBuilder &b, Location loc, const cachet::BlockWeight &w,
                 Value row, Value k, int64_t n) {
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    SmallVector<Value> words;
    Value d;
    if (w.scales) {
      words = loadSplitQuants(b, loc, w, row, k, n);
      d = loadSplitScale(b, loc, w, row, k);
    } else {
      cachet::BlockDecoder::WordReader readWord = getWordReader(w, row);
      auto [blockOffset, first] = getBlockAt(b, loc, w, k);
      cachet::BlockDecoder decoder(b, loc, w.block, nullptr);
      words =
          decoder.readSliceQuants(readWord, blockOffset, first, n, w.rowBytes);
      d = decoder.readScale(readWord, blockOffset, w.rowBytes);
    }
    auto i32 = [&](uint32_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                          static_cast<int32_t>(v));
    };
    if (isa<cachet::Q4_0Type>(w.block))
      // Nibbles u to signed bytes u - 8: (u + 120) ^ 128 in each byte.
      for (Value &word : words)
        word = arith::XOrIOp::create(
            b, loc, arith::AddIOp::create(b, loc, word, i32(0x78787878)),
            i32(0x80808080));
    Value acc = i32(0);
    for (auto [i, word] : llvm::enumerate(words)) {
      auto xw = vector::LoadOp::create(
          b, loc, VectorType::get({4}, b.getI8Type()), xQuants,
          ValueRange{arith::AddIOp::create(b, loc, k, index(4 * i))});
      xw.setAlignment(4);
      acc = emitDot4(b, loc, word, xw, acc);
    }
    Value xd = memref::LoadOp::create(
        b, loc, xScales,
        ValueRange{arith::DivUIOp::create(b, loc, k, index(32))});
    Value scale = arith::MulFOp::create(
        b, loc, arith::ExtFOp::create(b, loc, b.getF32Type(), d), xd);
    Value dot = arith::MulFOp::create(
        b, loc, arith::SIToFPOp::create(b, loc, b.getF32Type(), acc), scale);
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({1}, b.getF32Type()), ValueRange{dot});
  }

  /// Copies `x` into the workgroup buffer `staged`: each of the block's
  /// `threads` threads copies every `threads`-th vector of `load-bytes`,
  /// then the block waits at a barrier.
  void emitStageX(OpBuilder &kb, Location loc, Value x, Value staged, Value tid,
                  int64_t threads) {
    auto type = cast<MemRefType>(x.getType());
    Type element = type.getElementType();
    int64_t width = loadBytes / (element.getIntOrFloatBitWidth() / 8);
    auto vecType = VectorType::get({width}, element);
    Value start = arith::MulIOp::create(
        kb, loc, tid, arith::ConstantIndexOp::create(kb, loc, width));
    scf::ForOp::create(
        kb, loc, start,
        arith::ConstantIndexOp::create(kb, loc, type.getDimSize(0)),
        arith::ConstantIndexOp::create(kb, loc, width * threads), ValueRange{},
        [&](OpBuilder &lb, Location l, Value k, ValueRange) {
          auto v = vector::LoadOp::create(lb, l, vecType, x, ValueRange{k});
          v.setAlignment(loadBytes);
          auto st = vector::StoreOp::create(lb, l, v, staged, ValueRange{k});
          st.setAlignment(loadBytes);
          scf::YieldOp::create(lb, l);
        });
    gpu::BarrierOp::create(kb, loc);
  }

  /// The remarks on the mat-vecs and epilogues of `group`.
  void remark(const Group &group, int64_t lanes, int64_t loads,
              llvm::function_ref<int64_t(const RowClass &)> perSubgroupOf,
              int64_t perCU, int64_t grid, int64_t blocks, bool staged) {
    size_t total = group.getNumMembers();
    for (const RowClass &c : group.classes) {
      for (const Member &m : c.members) {
        InFlightDiagnostic diag = emitRemark(
            m.op->getLoc(), "cachet-lower-matvec: subgroup kernel: ");
        diag << lanes << " lanes per row, " << rowsPerBlock
             << " subgroups per block, " << loads << " ";
        if (m.blocks)
          diag << (m.blocks->scales ? "split " : "")
               << m.blocks->block.getFormatName() << " slices of "
               << loadBytes / (cast<MemRefType>(group.x.getType())
                                   .getElementTypeBitWidth() /
                               8)
               << " values";
        else
          diag << loadBytes << "-byte loads";
        diag << " per lane in flight, " << perSubgroupOf(c)
             << " rows per subgroup";
        if (m.blocks)
          diag << "; the blocks decoded in registers, the dequantized copy "
                  "never written";
        if (staged && m.blocks)
          diag << "; x quantized once per block to 8-bit blocks in workgroup "
                  "memory, 4-way integer dot products";
        else if (staged)
          diag << "; x staged in workgroup memory once per block";
        if (grid < blocks)
          diag << "; a resident grid of " << grid << " blocks (" << perCU
               << " per compute unit) loops over " << blocks;
        else if (perCU > 0 && computeUnits <= 0)
          diag << "; one block per " << rowsPerBlock
               << " subgroups: blocks-per-cu needs the compute units of a "
                  "#cachet.device profile";
        if (m.operands.batched && m.operands.columns == 1)
          diag << "; a mat-mul of one row of x (a mat-vec)";
        else if (m.operands.batched)
          diag << "; a small-batch mat-mul: each weight slice multiplied "
                  "with the "
               << m.operands.columns << " rows of x, an accumulator each";
        remarkFillAndSharing(diag, m, c, total);
      }
      remarkEpilogues(c);
    }
  }

  /// Emits the rows of `rowClass` for the block `local` of the class.
  void emitClass(OpBuilder &kb, Location loc, Value vec,
                 const RowClass &rowClass, int64_t perSubgroup, Value local,
                 Value tid, int64_t lanes, int64_t loads) {
    auto index = [&](OpBuilder &ib, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(ib, loc, v);
    };
    auto type =
        cast<MemRefType>(rowClass.members.front().getMatrix().getType());
    Type element = type.getElementType();
    int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
    // Float weights: `width` elements per load; blocks: slices of `width`
    // values (x loaded alike).
    int64_t width = loadBytes / (element.getIntOrFloatBitWidth() / 8);
    int64_t subgroups = rows / perSubgroup;
    Value lane = arith::RemUIOp::create(kb, loc, tid, index(kb, lanes));
    Value subgroup = arith::AddIOp::create(
        kb, loc, arith::MulIOp::create(kb, loc, local, index(kb, rowsPerBlock)),
        arith::DivUIOp::create(kb, loc, tid, index(kb, lanes)));
    Value inRange = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult,
                                          subgroup, index(kb, subgroups));
    auto ifOp = scf::IfOp::create(kb, loc, inRange, /*withElse=*/false);
    OpBuilder ib = OpBuilder::atBlockBegin(&ifOp.getThenRegion().front());
    SmallVector<Value> rowIds;
    Value row0 =
        arith::MulIOp::create(ib, loc, subgroup, index(ib, perSubgroup));
    for (int64_t r = 0; r < perSubgroup; ++r)
      rowIds.push_back(arith::AddIOp::create(ib, loc, row0, index(ib, r)));
    // A small-batch mat-mul multiplies each weight slice with its `columns`
    // rows of x (all members share x).
    const cachet::MatvecOperands &shape = rowClass.members.front().operands;
    int64_t columns = shape.columns;
    // One accumulator per (mat-vec, row) slot, mat-vec-major, and per row of
    // x.
    struct Slot {
      Value matrix, row;
      const Member *member;
    };
    SmallVector<Slot> slots;
    for (const Member &m : rowClass.members)
      for (Value row : rowIds)
        slots.push_back({m.getWeight(), row, &m});
    Type f32 = ib.getF32Type();
    auto vecType = VectorType::get({width}, element);
    auto f32Vec = VectorType::get({width}, f32);
    // Integer dot products (x quantized in workgroup memory) give one sum
    // per slice; so do a mat-mul's slices, each a chain of fused
    // multiply-adds into its row of x's accumulator (a vector per row of x
    // would take `columns` times the registers).
    bool int8 = static_cast<bool>(xQuants);
    // Float weights on a target with narrower vectors than a load
    // (max-vector-elements): each load sliced into pieces of `piece` values.
    bool blockClass = llvm::any_of(rowClass.members,
                                   [](const Member &m) { return m.blocks; });
    int64_t piece = width;
    if (maxVectorElements > 0 && width > maxVectorElements && !blockClass &&
        !int8)
      piece = maxVectorElements;
    auto accType = int8 || columns > 1 ? VectorType::get({1}, f32)
                   : piece < width     ? VectorType::get({piece}, f32)
                                       : f32Vec;
    Value zeros = arith::ConstantOp::create(
        ib, loc, accType, DenseElementsAttr::get(accType, 0.0f));
    // Each lane accumulates `width` partial sums per slot; `loadsPerLane`
    // loads of x and of each slot's row are issued before their products are
    // added, so that many 16-byte loads per lane and row are in flight, and
    // each load of x serves every slot.
    auto body = [&](OpBuilder &lb, Location l, Value k0, ValueRange accs,
                    int64_t loads) -> SmallVector<Value> {
      auto load = [&](Value memref, ValueRange indices, bool weight) {
        auto v = vector::LoadOp::create(lb, l, vecType, memref, indices);
        v.setAlignment(loadBytes);
        if (weight)
          v->setAttr(cachet::CachetDialect::getStreamingWeightAttrName(),
                     lb.getUnitAttr());
        return v.getResult();
      };
      // The weight loads come first: nothing they read is written by a
      // kernel, so a dependent launch may issue them before it waits for the
      // grid before it (cachet-prefetch-matvec-chains
      // pdl-wait=after-weight-loads).
      SmallVector<Value> ks, x;
      SmallVector<SmallVector<Value>> a(slots.size());
      for (int64_t u = 0; u < loads; ++u)
        ks.push_back(
            arith::AddIOp::create(lb, l, k0, index(lb, u * width * lanes)));
      for (Value k : ks)
        for (auto [s, slot] : llvm::enumerate(slots))
          a[s].push_back(
              int8 ? dotSlice(lb, l, *slot.member->blocks, slot.row, k, width)
              : slot.member->blocks ? decodeSlice(lb, l, *slot.member->blocks,
                                                  slot.row, k, width, element)
                                    : load(slot.matrix, ValueRange{slot.row, k},
                                           /*weight=*/true));
      SmallVector<Value> result(accs.begin(), accs.end());
      if (int8) {
        // The scaled integer dot products (x's quants in workgroup memory).
        for (int64_t u = 0; u < loads; ++u)
          for (size_t s = 0; s < slots.size(); ++s)
            result[s] = arith::AddFOp::create(lb, l, result[s], a[s][u]);
        return result;
      }
      // x[u * columns + c]: row c of x at the u-th load's columns.
      for (Value k : ks)
        for (int64_t c = 0; c < columns; ++c) {
          SmallVector<Value, 2> at{k};
          if (shape.batched)
            at.insert(at.begin(), index(lb, c));
          x.push_back(load(vec, at, /*weight=*/false));
        }
      auto toF32 = [&](Value v) -> Value {
        auto type = cast<VectorType>(v.getType());
        return type.getElementType().isF32()
                   ? v
                   : arith::ExtFOp::create(lb, l, type.clone(f32), v);
      };
      // Piece `p` of `piece` values of the load `v`, in f32.
      auto slice = [&](Value v, int64_t p) -> Value {
        Value part = vector::ExtractStridedSliceOp::create(
            lb, l, v, ArrayRef<int64_t>{p * piece}, ArrayRef<int64_t>{piece},
            ArrayRef<int64_t>{1});
        return toF32(part);
      };
      if (columns > 1) {
        // One-element vectors: vector.fma is an fma instruction on every
        // target (math.fma on scalars is a libdevice call on NVVM).
        auto elements = [&](Value v) {
          SmallVector<Value> e;
          for (int64_t p = 0; p < width / piece; ++p) {
            Value part = piece < width ? slice(v, p) : toF32(v);
            for (int64_t j = 0; j < piece; ++j)
              e.push_back(vector::BroadcastOp::create(
                  lb, l, accType,
                  vector::ExtractOp::create(lb, l, part,
                                            ArrayRef<int64_t>{j})));
          }
          return e;
        };
        for (int64_t u = 0; u < loads; ++u) {
          SmallVector<SmallVector<Value>> xs;
          for (int64_t c = 0; c < columns; ++c)
            xs.push_back(elements(x[u * columns + c]));
          for (size_t s = 0; s < slots.size(); ++s) {
            SmallVector<Value> as = elements(a[s][u]);
            for (int64_t c = 0; c < columns; ++c) {
              Value &acc = result[s * columns + c];
              for (int64_t j = 0; j < width; ++j)
                acc = vector::FMAOp::create(lb, l, as[j], xs[c][j], acc);
            }
          }
        }
        return result;
      }
      if (piece < width) {
        // Pieces of `piece` values of each load, converted and multiplied
        // alone.
        for (int64_t u = 0; u < loads; ++u)
          for (int64_t p = 0; p < width / piece; ++p) {
            Value xv = slice(x[u], p);
            for (size_t s = 0; s < slots.size(); ++s)
              result[s] = arith::AddFOp::create(
                  lb, l, result[s],
                  arith::MulFOp::create(lb, l, slice(a[s][u], p), xv));
          }
        return result;
      }
      for (int64_t u = 0; u < loads; ++u) {
        Value xv = toF32(x[u]);
        // Decoded blocks take fused multiply-adds (float weights keep the
        // kernel's products and sums as they were measured).
        for (size_t s = 0; s < slots.size(); ++s)
          result[s] =
              slots[s].member->blocks
                  ? vector::FMAOp::create(lb, l, a[s][u], xv, result[s])
                        .getResult()
                  : arith::AddFOp::create(
                        lb, l, result[s],
                        arith::MulFOp::create(lb, l, toF32(a[s][u]), xv))
                        .getResult();
      }
      return result;
    };
    int64_t round = width * lanes;
    int64_t unrolled = round * loads;
    int64_t mainCols = cols / unrolled * unrolled;
    Value start = arith::MulIOp::create(ib, loc, lane, index(ib, width));
    SmallVector<Value> accs(slots.size() * columns, zeros);
    if (mainCols > 0)
      accs = scf::ForOp::create(
                 ib, loc, start, index(ib, mainCols), index(ib, unrolled), accs,
                 [&](OpBuilder &lb, Location l, Value k, ValueRange iter) {
                   scf::YieldOp::create(lb, l, body(lb, l, k, iter, loads));
                 })
                 .getResults();
    bool blocks = blockClass;
    if (mainCols < cols && blocks) {
      // Kernels over blocks run the last partial round in every lane (the
      // lanes past the row's end decode a slice of the round's first lane
      // and keep their sums), so that control flow stays uniform up to the
      // subgroup's shuffles: Vulkan does not promise that lanes reconverge
      // after a loop whose trip count differs between them.
      accs =
          scf::ForOp::create(
              ib, loc, index(ib, mainCols), index(ib, cols), index(ib, round),
              accs,
              [&](OpBuilder &lb, Location l, Value k0, ValueRange iter) {
                Value k = arith::AddIOp::create(lb, l, k0, start);
                Value inRow = arith::CmpIOp::create(
                    lb, l, arith::CmpIPredicate::ult, k, index(lb, cols));
                Value at = arith::SelectOp::create(lb, l, inRow, k, k0);
                SmallVector<Value> next = body(lb, l, at, iter, 1);
                // A vector condition: SPIR-V's select takes no scalar
                // one for vectors.
                Value keep = vector::BroadcastOp::create(
                    lb, l,
                    VectorType::get({accType.getNumElements()}, lb.getI1Type()),
                    inRow);
                for (auto [n, old] : llvm::zip(next, iter))
                  n = arith::SelectOp::create(lb, l, keep, n, old);
                scf::YieldOp::create(lb, l, next);
              })
              .getResults();
    } else if (mainCols < cols) {
      accs = scf::ForOp::create(
                 ib, loc,
                 arith::AddIOp::create(ib, loc, start, index(ib, mainCols)),
                 index(ib, cols), index(ib, round), accs,
                 [&](OpBuilder &lb, Location l, Value k, ValueRange iter) {
                   scf::YieldOp::create(lb, l, body(lb, l, k, iter, 1));
                 })
                 .getResults();
    }
    Value zero = arith::ConstantOp::create(ib, loc, ib.getF32FloatAttr(0));
    Value width32 =
        arith::ConstantIntOp::create(ib, loc, ib.getI32Type(), lanes);
    SmallVector<Value> sums;
    for (Value acc : accs) {
      Value sum = vector::ReductionOp::create(
          ib, loc, vector::CombiningKind::ADD, acc, zero);
      for (int64_t offset = lanes / 2; offset > 0; offset /= 2) {
        Value o =
            arith::ConstantIntOp::create(ib, loc, ib.getI32Type(), offset);
        auto shuffle = gpu::ShuffleOp::create(ib, loc, sum, o, width32,
                                              gpu::ShuffleMode::XOR);
        sum = arith::AddFOp::create(ib, loc, sum, shuffle.getShuffleResult());
      }
      sums.push_back(sum);
    }
    Value first = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq, lane,
                                        index(ib, 0));
    auto store = scf::IfOp::create(ib, loc, first, /*withElse=*/false);
    OpBuilder sb = OpBuilder::atBlockBegin(&store.getThenRegion().front());
    for (auto [r, row] : llvm::enumerate(rowIds)) {
      for (int64_t c = 0; c < columns; ++c) {
        // y = old + sum for each mat-vec of the class, then the epilogues
        // of the row over those values (y[c][row] of a mat-mul).
        SmallVector<Value, 2> at{row};
        if (shape.batched)
          at.insert(at.begin(), index(sb, c));
        SmallVector<Value> memberSums;
        for (size_t m = 0; m < rowClass.members.size(); ++m)
          memberSums.push_back(sums[(m * rowIds.size() + r) * columns + c]);
        emitStores(sb, loc, rowClass, at, memberSums, zero);
      }
    }
  }

  /// Returns the byte offset in its row of the block holding value `k` of
  /// `w` and `k`'s index in that block.
  static std::pair<Value, Value> getBlockAt(OpBuilder &b, Location loc,
                                            const cachet::BlockWeight &w,
                                            Value k) {
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    int64_t values = w.block.getBlockValues();
    Value blockOffset = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, k, index(values)),
        index(w.block.getBlockBytes()));
    return {blockOffset, arith::RemUIOp::create(b, loc, k, index(values))};
  }

  /// Reads word `word` (an index) of row `row` of `w`'s blocks: an aligned
  /// 4-byte load marked as a streaming weight load.
  static cachet::BlockDecoder::WordReader
  getWordReader(const cachet::BlockWeight &w, Value row) {
    Value bytes = w.bytes;
    return [bytes, row](OpBuilder &rb, Location rl, Value word) -> Value {
      Value byteAt = arith::MulIOp::create(
          rb, rl, word, arith::ConstantIndexOp::create(rb, rl, 4));
      return cachet::BlockDecoder::loadWord(
          rb, rl, bytes, ValueRange{row, byteAt},
          rb.getNamedAttr(cachet::CachetDialect::getStreamingWeightAttrName(),
                          rb.getUnitAttr()));
    };
  }

  /// Returns the quants of split values `k` .. `k + n - 1` of row `row` of
  /// `w` as `n / 4` i32 words of four bytes in value order: q8_0's signed
  /// i8 values, or q4_0's nibbles (0 .. 15, unpacked from two per byte).
  static SmallVector<Value> loadSplitQuants(OpBuilder &b, Location loc,
                                            const cachet::BlockWeight &w,
                                            Value row, Value k, int64_t n) {
    if (!isa<cachet::Q4_0Type>(w.block))
      return loadSplitWords(b, loc, w, row, k, n);
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    SmallVector<Value> packed;
    if (n >= 8) {
      // Values k .. k + n - 1 are bytes k / 2 .. (k + n) / 2 - 1.
      packed = loadSplitWords(
          b, loc, w, row, arith::DivUIOp::create(b, loc, k, index(2)), n / 2);
    } else {
      // Half a word (n = 4): the aligned word, shifted by 4 (k % 8).
      Value word = cachet::BlockDecoder::loadWord(
          b, loc, w.bytes,
          ValueRange{row,
                     arith::MulIOp::create(
                         b, loc, arith::DivUIOp::create(b, loc, k, index(8)),
                         index(4))},
          b.getNamedAttr(cachet::CachetDialect::getStreamingWeightAttrName(),
                         b.getUnitAttr()));
      Value shift = arith::IndexCastUIOp::create(
          b, loc, b.getI32Type(),
          arith::MulIOp::create(
              b, loc, arith::RemUIOp::create(b, loc, k, index(8)), index(4)));
      packed.push_back(arith::ShRUIOp::create(b, loc, word, shift));
    }
    SmallVector<Value> words =
        cachet::BlockDecoder::unpackNibbleWords(b, loc, packed);
    words.resize(n / 4);
    return words;
  }

  /// Returns the `n / 4` words of split q8_0 bytes `k` .. `k + n - 1` of
  /// row `row` of `w`: one aligned load of the slice where the rows keep it
  /// aligned, else a load per word; marked as streaming weight loads.
  static SmallVector<Value> loadSplitWords(OpBuilder &b, Location loc,
                                           const cachet::BlockWeight &w,
                                           Value row, Value k, int64_t n) {
    auto streaming = b.getNamedAttr(
        cachet::CachetDialect::getStreamingWeightAttrName(), b.getUnitAttr());
    SmallVector<Value> words;
    auto bytesType = cast<MemRefType>(w.bytes.getType());
    SmallVector<int64_t> strides;
    int64_t offset = 0;
    if (llvm::isPowerOf2_64(n) && n <= 16 &&
        succeeded(bytesType.getStridesAndOffset(strides, offset)) &&
        strides[0] % n == 0 && offset % n == 0) {
      auto load =
          vector::LoadOp::create(b, loc, VectorType::get({n}, b.getI8Type()),
                                 w.bytes, ValueRange{row, k});
      load.setAlignment(n);
      load->setAttr(streaming.getName(), streaming.getValue());
      Value asWords = vector::BitCastOp::create(
          b, loc, VectorType::get({n / 4}, b.getI32Type()), load);
      for (int64_t i = 0; i < n / 4; ++i)
        words.push_back(
            vector::ExtractOp::create(b, loc, asWords, ArrayRef<int64_t>{i}));
      return words;
    }
    for (int64_t i = 0; i < n; i += 4)
      words.push_back(cachet::BlockDecoder::loadWord(
          b, loc, w.bytes,
          ValueRange{row,
                     arith::AddIOp::create(
                         b, loc, k, arith::ConstantIndexOp::create(b, loc, i))},
          streaming));
    return words;
  }

  /// Returns the f16 scale of split q8_0 value `k` of row `row` of `w` (a
  /// streaming weight load).
  static Value loadSplitScale(OpBuilder &b, Location loc,
                              const cachet::BlockWeight &w, Value row,
                              Value k) {
    auto scaleLoad = vector::LoadOp::create(
        b, loc, VectorType::get({1}, b.getF16Type()), w.scales,
        ValueRange{row,
                   arith::DivUIOp::create(
                       b, loc, k, arith::ConstantIndexOp::create(b, loc, 32))});
    scaleLoad->setAttr(cachet::CachetDialect::getStreamingWeightAttrName(),
                       b.getUnitAttr());
    return vector::ExtractOp::create(b, loc, scaleLoad.getResult(),
                                     ArrayRef<int64_t>{0});
  }

  /// Returns values `k` .. `k + n - 1` of row `row` of `w` as a
  /// vector<n x f16>, as the dequantize to f16 rounds them: q8_0 / q4_0 /
  /// tq2_0 (packed or split) decoded as f16 pairs (integer and f16
  /// arithmetic), the other formats decoded in f32 and rounded as one
  /// vector. (In the mat-vec, whose f16 values are widened again, NVVM
  /// emits a scalar cvt.rn.f16.f32 per value, not the packed
  /// cvt.rn.f16x2.f32: roundThrough's i32 read would force the packed
  /// one; not measured yet.)
  static Value decodeSliceF16(OpBuilder &b, Location loc,
                              const cachet::BlockWeight &w, Value row, Value k,
                              int64_t n) {
    if (w.scales) {
      // Split q8_0 / q4_0: the values' aligned words, the block's f16
      // scale.
      SmallVector<Value> words = loadSplitQuants(b, loc, w, row, k, n);
      Value d = loadSplitScale(b, loc, w, row, k);
      return joinF16Pairs(
          b, loc,
          isa<cachet::Q4_0Type>(w.block)
              ? cachet::BlockDecoder::decodeUnsignedWordsF16Pairs(b, loc, words,
                                                                  d, 8)
              : cachet::BlockDecoder::decodeQ8WordsF16Pairs(b, loc, words, d));
    }
    auto [blockOffset, first] = getBlockAt(b, loc, w, k);
    return decodeBlocksAs(b, loc, w.block, getWordReader(w, row), blockOffset,
                          first, n, w.rowBytes, b.getF16Type());
  }

  /// Returns values `first` .. `first + n - 1` of the packed block at byte
  /// `blockOffset` of a row of `rowBytes` bytes whose words `readWord`
  /// reads, as a vector<n x `element`>, rounded as the dequantize rounds
  /// them (what decodeSliceAs returns for packed blocks): f16 from q8_0 /
  /// q4_0 / tq2_0 as f16 pairs, the rest decoded in f32 and rounded as one
  /// vector. The GEMM that decodes blocks in workgroup memory reads them
  /// through this too, so its values are the copy's.
  static Value decodeBlocksAs(OpBuilder &b, Location loc,
                              cachet::BlockQuantizedType block,
                              const cachet::BlockDecoder::WordReader &readWord,
                              Value blockOffset, Value first, int64_t n,
                              int64_t rowBytes, Type element) {
    cachet::BlockDecoder decoder(b, loc, block, nullptr);
    if (element.isF16() && cachet::BlockDecoder::takesF16Pairs(block, n))
      return joinF16Pairs(b, loc,
                          decoder.decodeSliceF16Pairs(readWord, blockOffset,
                                                      first, n, rowBytes));
    Value slice = vector::FromElementsOp::create(
        b, loc, VectorType::get({n}, b.getF32Type()),
        decoder.decodeSlice(readWord, blockOffset, first, n, rowBytes));
    if (element.isF32())
      return slice;
    return arith::TruncFOp::create(b, loc, VectorType::get({n}, element),
                                   slice);
  }

  /// Returns the vector<2xf16> `pairs` (a power of two of them) joined
  /// into one vector.
  static Value joinF16Pairs(OpBuilder &b, Location loc,
                            SmallVector<Value> pairs) {
    while (pairs.size() > 1) {
      SmallVector<Value> joined;
      for (size_t i = 0; i < pairs.size(); i += 2) {
        int64_t half = cast<VectorType>(pairs[i].getType()).getNumElements();
        joined.push_back(vector::ShuffleOp::create(
            b, loc, pairs[i], pairs[i + 1],
            llvm::to_vector(llvm::seq<int64_t>(0, 2 * half))));
      }
      pairs = std::move(joined);
    }
    return pairs.front();
  }

  /// Returns values `k` .. `k + n - 1` of row `row` of `w` as a vector of
  /// f32, each rounded to `element` as the dequantize rounds it: decoded
  /// from the aligned 32-bit words that hold them (4-byte vector loads
  /// marked as streaming weight loads).
  static Value decodeSlice(OpBuilder &b, Location loc,
                           const cachet::BlockWeight &w, Value row, Value k,
                           int64_t n, Type element) {
    if (element.isF16())
      return arith::ExtFOp::create(b, loc, VectorType::get({n}, b.getF32Type()),
                                   decodeSliceF16(b, loc, w, row, k, n));
    return roundThrough(b, loc, decodeSliceF32(b, loc, w, row, k, n), element);
  }

  /// Returns the same values as a vector<n x `element`> (what the
  /// dequantize stores): f16 as decodeSliceF16 decodes it, others rounded
  /// from f32 as one vector.
  static Value decodeSliceAs(OpBuilder &b, Location loc,
                             const cachet::BlockWeight &w, Value row, Value k,
                             int64_t n, Type element) {
    if (element.isF16())
      return decodeSliceF16(b, loc, w, row, k, n);
    Value values = vector::FromElementsOp::create(
        b, loc, VectorType::get({n}, b.getF32Type()),
        decodeSliceF32(b, loc, w, row, k, n));
    if (element.isF32())
      return values;
    return arith::TruncFOp::create(b, loc, VectorType::get({n}, element),
                                   values);
  }

  /// The f32 values (not rounded to an element type) of decodeSlice for
  /// element types other than f16.
  static SmallVector<Value> decodeSliceF32(OpBuilder &b, Location loc,
                                           const cachet::BlockWeight &w,
                                           Value row, Value k, int64_t n) {
    if (w.scales) {
      // Split q8_0 / q4_0: the values' aligned words, the block's f16
      // scale.
      SmallVector<Value> words = loadSplitQuants(b, loc, w, row, k, n);
      Value d32 = arith::ExtFOp::create(b, loc, b.getF32Type(),
                                        loadSplitScale(b, loc, w, row, k));
      return isa<cachet::Q4_0Type>(w.block)
                 ? cachet::BlockDecoder::decodeQ4Words(b, loc, words, n, d32)
                 : cachet::BlockDecoder::decodeQ8Words(b, loc, words, n, d32);
    }
    auto [blockOffset, first] = getBlockAt(b, loc, w, k);
    cachet::BlockDecoder decoder(b, loc, w.block, nullptr);
    return decoder.decodeSlice(getWordReader(w, row), blockOffset, first, n,
                               w.rowBytes);
  }

  /// Returns the f32 `values` each rounded to `element` and widened back,
  /// as one vector<n x f32>. bf16 goes in pairs: one packed conversion per
  /// two values (PTX cvt.rn.bf16x2.f32; a vector truncf whose result is
  /// widened again is folded into scalar conversions, so the pair is read
  /// as an i32 first), widened by a shift and a mask. Conversions from f32
  /// run at a quarter of the add rate on NVIDIA GPUs: per value, this and
  /// the decoder's int-to-float-free quants took a bf16-rounded q8_0
  /// mat-vec from 40.2 to 32.6 us (14336x4096, H100,
  /// bench/q8-bf16-decode.cu), as fast as not rounding at all.
  static Value roundThrough(OpBuilder &b, Location loc,
                            SmallVector<Value> values, Type element) {
    auto f32Vec =
        VectorType::get({static_cast<int64_t>(values.size())}, b.getF32Type());
    if (!element.isBF16() || values.size() % 2 != 0) {
      for (Value &v : values)
        v = cachet::castFloat(b, loc, cachet::castFloat(b, loc, v, element),
                              b.getF32Type());
      return vector::FromElementsOp::create(b, loc, f32Vec, values);
    }
    SmallVector<Value> rounded;
    for (size_t i = 0; i < values.size(); i += 2) {
      auto [low, high] = cachet::widenBF16Pair(
          b, loc, cachet::packBF16Pair(b, loc, values[i], values[i + 1]));
      rounded.push_back(low);
      rounded.push_back(high);
    }
    return vector::FromElementsOp::create(b, loc, f32Vec, rounded);
  }

  /// Emits the body of the element-wise `generic` at `width` (1, or 2 for
  /// a GEMM's pair of sums) consecutive elements from `at` (the row; a
  /// mat-mul's row of x and row): its inputs the values `results` maps their
  /// buffers to (scalars, or vector<2xT> pairs), other buffers loaded there
  /// (a residual), its body once per element, its result stored there (a
  /// pair by one vector store) and mapped in `results`.
  static void emitEpilogue(OpBuilder &b, Location loc,
                           linalg::GenericOp generic, IRMapping &results,
                           ValueRange at, int64_t width = 1) {
    auto load = [&](Value buffer) -> Value {
      if (width == 1)
        return memref::LoadOp::create(b, loc, buffer, at);
      return loadPair(b, loc, buffer, at[0], at[1]);
    };
    Block *body = generic.getBody();
    // The block arguments taking a value per element, and the others
    // (scalars).
    SmallVector<std::pair<BlockArgument, Value>> loaded, scalars;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      // A result of the kernel, else a buffer read at `at` (a residual),
      // else a scalar.
      Value value = results.lookupOrNull(input->get());
      if (!value && isa<MemRefType>(input->get().getType()))
        value = load(input->get());
      BlockArgument arg = generic.getMatchingBlockArgument(input);
      if (value)
        loaded.push_back({arg, value});
      else
        scalars.push_back({arg, input->get()});
    }
    OpOperand *init = generic.getDpsInitOperand(0);
    BlockArgument outArg = generic.getMatchingBlockArgument(init);
    if (!outArg.use_empty())
      loaded.push_back({outArg, load(init->get())});
    SmallVector<Value, 2> values;
    for (int64_t e = 0; e < width; ++e) {
      IRMapping mapping;
      for (auto [arg, value] : loaded)
        mapping.map(arg, width == 1 ? value
                                    : vector::ExtractOp::create(
                                          b, loc, value, ArrayRef<int64_t>{e})
                                          .getResult());
      for (auto [arg, scalar] : scalars)
        mapping.map(arg, scalar);
      for (Operation &op : body->without_terminator())
        b.clone(op, mapping);
      values.push_back(
          mapping.lookupOrDefault(body->getTerminator()->getOperand(0)));
    }
    Value result = values.front();
    if (width == 1) {
      memref::StoreOp::create(b, loc, result, init->get(), at);
    } else {
      auto outType = cast<MemRefType>(init->get().getType());
      result = vector::FromElementsOp::create(
          b, loc, VectorType::get({width}, outType.getElementType()), values);
      auto store = vector::StoreOp::create(b, loc, result, init->get(), at);
      store.setAlignment(width * outType.getElementTypeBitWidth() / 8);
    }
    results.map(init->get(), result);
  }
};

} // namespace
