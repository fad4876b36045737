//===- LowerDequantTranspose.cpp - one-pass dequant-transpose kernels ----===//

#include "cachet/Analysis/DequantTransposeConfig.h"
#include "cachet/Conversion/BlockDecoder.h"
#include "cachet/Conversion/DequantTranspose.h"
#include "cachet/Conversion/Passes.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

#include <numeric>

namespace cachet {
#define GEN_PASS_DEF_LOWERDEQUANTTRANSPOSE
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;
using namespace cachet;

namespace {

/// The shapes of one dequant-transpose and how the kernel splits it.
struct Plan {
  BlockQuantizedType block;
  int64_t positions = 0, heads = 0, dim = 0;
  /// Bytes of one position's blocks of one head.
  int64_t rowBytes = 0;
  /// Positions per workgroup, bytes each workgroup stages, bytes per load.
  int64_t perGroup = 0, chunkBytes = 0, loadBytes = 0;
  /// Values per store, their bytes, threads per workgroup.
  int64_t values = 0, storeBytes = 0, threads = 0;
};

/// One store's worth of a dequant-transpose: item (h, p, c), c fastest,
/// is values [c V, (c + 1) V) of position p (of `rows` rows) of head h;
/// value c V + j is lane (c V + j) % 32 of block (c V + j) / 32 of row
/// (p, h) of the bytes that `readByte` reads.
struct DecodedItem {
  Value position, head, first;
  SmallVector<Value> values;
};

DecodedItem decodeItem(OpBuilder &b, Location loc, Value item, int64_t rows,
                       const Plan &plan, Type element,
                       const BlockDecoder::ByteReader &readByte) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  int64_t perRow = plan.dim / plan.values;
  DecodedItem d;
  Value c = arith::RemUIOp::create(b, loc, item, index(perRow));
  Value rest = arith::DivUIOp::create(b, loc, item, index(perRow));
  d.position = arith::RemUIOp::create(b, loc, rest, index(rows));
  d.head = arith::DivUIOp::create(b, loc, rest, index(rows));
  Value rowStart = arith::MulIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, d.position, index(plan.heads)),
          d.head),
      index(plan.rowBytes));
  d.first = arith::MulIOp::create(b, loc, c, index(plan.values));
  Value blockStart = arith::AddIOp::create(
      b, loc, rowStart,
      arith::MulIOp::create(b, loc,
                            arith::DivUIOp::create(b, loc, d.first, index(32)),
                            index(plan.block.getBlockBytes())));
  Value lane0 = arith::RemUIOp::create(b, loc, d.first, index(32));
  BlockDecoder decoder(b, loc, plan.block, readByte);
  for (int64_t j = 0; j < plan.values; ++j)
    d.values.push_back(castFloat(
        b, loc,
        decoder.decode(blockStart,
                       arith::AddIOp::create(b, loc, lane0, index(j))),
        element));
  return d;
}

/// Stores `values` at [head, position, first + j] of `out`: one vector
/// store of `storeBytes`, or one store per value.
void storeItem(OpBuilder &b, Location loc, Value out, Value head,
               Value position, Value first, ArrayRef<Value> values,
               bool scalarStores, int64_t storeBytes) {
  if (scalarStores) {
    for (auto [j, v] : llvm::enumerate(values))
      memref::StoreOp::create(
          b, loc, v, out,
          ValueRange{
              head, position,
              arith::AddIOp::create(
                  b, loc, first, arith::ConstantIndexOp::create(b, loc, j))});
    return;
  }
  Type element = values.front().getType();
  auto store = vector::StoreOp::create(
      b, loc,
      vector::FromElementsOp::create(
          b, loc, VectorType::get({int64_t(values.size())}, element), values),
      out, ValueRange{head, position, first});
  store.setAlignment(storeBytes);
}

/// Fills `plan` for `op` from `config`; returns why it cannot be built, or
/// "".
std::string makePlan(linalg::GenericOp op, KernelConfigAttr config,
                     Plan &plan) {
  std::string reason;
  std::optional<DequantTransposeShape> shape =
      getDequantTransposeShape(op, reason);
  if (!shape)
    return reason;
  if (std::string why = whyNotDequantTransposeConfig(*shape, config);
      !why.empty())
    return why;
  plan.block = shape->block;
  plan.positions = shape->positions;
  plan.heads = shape->heads;
  plan.rowBytes = shape->rowBytes;
  plan.dim = shape->dim;
  plan.values = config.getVectorWidth();
  plan.storeBytes = plan.values * shape->elementBytes;
  plan.threads = config.getWorkgroup();
  if (config.getVariant() == KernelVariant::DequantTransposeStaged) {
    plan.perGroup = config.getTile()[0];
    plan.chunkBytes = plan.perGroup * plan.heads * plan.rowBytes;
    plan.loadBytes = config.getLoadBytes();
  }
  return "";
}

/// Returns the buffer `view` is the start of (a memref.subview at offsets 0
/// with unit strides of a statically shaped memref), or `view`.
Value getStaticStart(Value view) {
  auto subview = view.getDefiningOp<memref::SubViewOp>();
  if (!subview || !subview.getSourceType().hasStaticShape() ||
      !llvm::all_of(subview.getStaticOffsets(),
                    [](int64_t o) { return o == 0; }) ||
      !llvm::all_of(subview.getStaticStrides(),
                    [](int64_t s) { return s == 1; }))
    return view;
  return subview.getSource();
}

/// Builds the dequant-transpose kernels, adapted to the target by
/// `workgroupAlloc` and `scalarStores` (the pass's options).
struct DequantTransposeBuilder {
  bool workgroupAlloc = false, scalarStores = false;

  /// Replaces `op` by the kernel of `config`; returns why it cannot, or "".
  std::string build(RewriterBase &rewriter, linalg::GenericOp op,
                    KernelConfigAttr config) const {
    Plan plan;
    if (std::string reason = makePlan(op, config, plan); !reason.empty())
      return reason;
    if (config.getVariant() == KernelVariant::DequantTransposeDirect)
      lowerDirect(rewriter, op, plan);
    else
      lower(rewriter, op, plan);
    return "";
  }

  /// The direct kernel: thread i writes the `values` values of store i of
  /// the head-major result (consecutive threads, consecutive stores), each
  /// decoded from bytes read straight from global memory (the L1 cache
  /// serves a block's neighbours); no workgroup memory, no barrier.
  void lowerDirect(RewriterBase &rewriter, linalg::GenericOp op,
                   const Plan &plan) const {
    rewriter.setInsertionPoint(op);
    OpBuilder &b = rewriter;
    Location loc = op.getLoc();
    Value bytes = getDequantTransposeBytes(op), out = op.getDpsInits()[0];
    Type element = cast<MemRefType>(out.getType()).getElementType();
    auto index = [&](OpBuilder &ib, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(ib, loc, v);
    };
    auto flat = memref::CollapseShapeOp::create(
        b, loc, bytes, SmallVector<ReassociationIndices>{{0, 1, 2}});
    int64_t perRow = plan.dim / plan.values;
    int64_t items = plan.heads * plan.positions * perRow;
    Value one = index(b, 1);
    auto launch = gpu::LaunchOp::create(
        b, loc, index(b, llvm::divideCeil(items, plan.threads)), one, one,
        index(b, plan.threads), one, one);
    OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
    Value item = arith::AddIOp::create(
        kb, loc,
        arith::MulIOp::create(kb, loc, launch.getBlockIds().x,
                              index(kb, plan.threads)),
        launch.getThreadIds().x);
    Value inRange = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult,
                                          item, index(kb, items));
    auto guard = scf::IfOp::create(kb, loc, inRange, /*withElseRegion=*/false);
    OpBuilder tb = OpBuilder::atBlockBegin(guard.thenBlock());
    DecodedItem d =
        decodeItem(tb, loc, item, plan.positions, plan, element,
                   [&](OpBuilder &rb, Location l, Value offset) -> Value {
                     return memref::LoadOp::create(rb, l, flat, offset);
                   });
    storeItem(tb, loc, out, d.head, d.position, d.first, d.values, scalarStores,
              plan.storeBytes);
    gpu::TerminatorOp::create(kb, loc);
    rewriter.eraseOp(op);
  }

  void lower(RewriterBase &rewriter, linalg::GenericOp op,
             const Plan &plan) const {
    rewriter.setInsertionPoint(op);
    OpBuilder &b = rewriter;
    Location loc = op.getLoc();
    Value bytes = getDequantTransposeBytes(op), out = op.getDpsInits()[0];
    auto index = [&](OpBuilder &ib, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(ib, loc, v);
    };
    // A run-time number of positions (the bytes' first dimension): a
    // workgroup per group of them, the last one's loads and stores cut at
    // it (the config makes loads whole positions). The kernel reads and
    // writes the buffers the two views start, which have static shapes
    // (SPIR-V takes no multi-dimensional dynamic ones).
    bool dynamic = ShapedType::isDynamic(plan.positions);
    Value positions;
    if (dynamic) {
      positions = memref::DimOp::create(b, loc, bytes, 0);
      bytes = getStaticStart(bytes);
      out = getStaticStart(out);
    }
    Type element = cast<MemRefType>(out.getType()).getElementType();
    Type i32 = b.getI32Type();
    int64_t words = plan.chunkBytes / 4;
    // Workgroup memory as the numeric address space 3, which both
    // convert-gpu-to-nvvm and convert-gpu-to-spirv map (the latter does not
    // map #gpu.address_space<workgroup> in LLVM 22).
    Attribute workgroup = b.getI64IntegerAttr(3);
    auto stagedType =
        MemRefType::get({words}, i32, MemRefLayoutAttrInterface(), workgroup);
    // The bytes as one flat row, so that a load may cross rows.
    auto flat = memref::CollapseShapeOp::create(
        b, loc, bytes, SmallVector<ReassociationIndices>{{0, 1, 2}});

    Value one = index(b, 1);
    Value grid = dynamic ? arith::CeilDivUIOp::create(b, loc, positions,
                                                      index(b, plan.perGroup))
                               .getResult()
                         : index(b, plan.positions / plan.perGroup);
    // Workgroup memory: an attribution of the launch (NVVM, ROCDL) or an
    // allocation in the kernel (SPIR-V, whose lowering makes it a Workgroup
    // variable; LLVM 22's does not convert attributions).
    SmallVector<Type, 1> attributions;
    if (!workgroupAlloc)
      attributions.push_back(stagedType);
    auto launch = gpu::LaunchOp::create(
        b, loc, grid, one, one, index(b, plan.threads), one, one,
        /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{}, attributions);
    OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
    Value staged =
        workgroupAlloc
            ? memref::AllocOp::create(kb, loc, stagedType).getResult()
            : Value(launch.getWorkgroupAttributions()[0]);
    Value tid = launch.getThreadIds().x;
    Value group = launch.getBlockIds().x;
    Value nThreads = index(kb, plan.threads);

    // Stage: the workgroup's positions are contiguous in the token-major
    // bytes; load them `loadBytes` at a time into workgroup memory.
    int64_t perLoad = plan.loadBytes / 4;
    Value chunkStart =
        arith::MulIOp::create(kb, loc, group, index(kb, plan.chunkBytes));
    auto byteVec = VectorType::get({plan.loadBytes}, kb.getI8Type());
    auto wordVec = VectorType::get({perLoad}, i32);
    // Load i of the chunk, as `perLoad` little-endian words.
    auto loadWords = [&](OpBuilder &lb, Location l,
                         Value i) -> SmallVector<Value> {
      Value offset = arith::AddIOp::create(
          lb, l, chunkStart,
          arith::MulIOp::create(lb, l, i, index(lb, plan.loadBytes)));
      SmallVector<Value> words;
      if (perLoad > 1) {
        auto load = vector::LoadOp::create(lb, l, byteVec, flat, offset);
        load.setAlignment(plan.loadBytes);
        Value asWords = vector::BitCastOp::create(lb, l, wordVec, load);
        for (int64_t w = 0; w < perLoad; ++w)
          words.push_back(vector::ExtractOp::create(lb, l, asWords, w));
        return words;
      }
      // One little-endian word from four byte loads (SPIR-V has no
      // one-element vectors to bitcast to, nor vector loads of i8).
      Value word = arith::ConstantIntOp::create(lb, l, i32, 0);
      for (int64_t k = 0; k < 4; ++k) {
        Value byte = arith::ExtUIOp::create(
            lb, l, i32,
            memref::LoadOp::create(lb, l, flat,
                                   ValueRange{arith::AddIOp::create(
                                       lb, l, offset, index(lb, k))}));
        word = arith::OrIOp::create(
            lb, l, word,
            arith::ShLIOp::create(
                lb, l, byte, arith::ConstantIntOp::create(lb, l, i32, 8 * k)));
      }
      words.push_back(word);
      return words;
    };
    // Scalar stores: SPIR-V takes no vector stores to workgroup memory.
    auto storeWords = [&](OpBuilder &lb, Location l, Value i,
                          ArrayRef<Value> words) {
      Value word0 = arith::MulIOp::create(lb, l, i, index(lb, perLoad));
      for (int64_t w = 0; w < perLoad; ++w)
        memref::StoreOp::create(
            lb, l, words[w], staged,
            ValueRange{arith::AddIOp::create(lb, l, word0, index(lb, w))});
    };
    // Every thread issues all its loads before its first store, so they are
    // in flight together (a loop would wait for each before the next).
    int64_t loads = plan.chunkBytes / plan.loadBytes;
    int64_t rounds = llvm::divideCeil(loads, plan.threads);
    // With a run-time number of positions: the group's positions, and the
    // loads that hold them.
    Value groupRows, validLoads;
    if (dynamic) {
      groupRows = arith::MinUIOp::create(
          kb, loc, index(kb, plan.perGroup),
          arith::SubIOp::create(
              kb, loc, positions,
              arith::MulIOp::create(kb, loc, group, index(kb, plan.perGroup))));
      validLoads = arith::MulIOp::create(
          kb, loc, groupRows,
          index(kb, plan.heads * plan.rowBytes / plan.loadBytes));
    }
    SmallVector<Value> indices;
    SmallVector<SmallVector<Value>> staging;
    SmallVector<Value> guards;
    auto zeroWords = [&](OpBuilder &lb, Location l) {
      return SmallVector<Value>(
          perLoad, arith::ConstantIntOp::create(lb, l, i32, 0).getResult());
    };
    for (int64_t r = 0; r < rounds; ++r) {
      Value i =
          arith::AddIOp::create(kb, loc, tid, index(kb, r * plan.threads));
      indices.push_back(i);
      bool full = (r + 1) * plan.threads <= loads;
      if (full && !dynamic) {
        guards.push_back({});
        staging.push_back(loadWords(kb, loc, i));
        continue;
      }
      Value inBounds =
          arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, i,
                                dynamic ? validLoads : index(kb, loads));
      guards.push_back(inBounds);
      auto guarded = scf::IfOp::create(
          kb, loc, inBounds,
          [&](OpBuilder &tb, Location l) {
            scf::YieldOp::create(tb, l, loadWords(tb, l, i));
          },
          [&](OpBuilder &eb, Location l) {
            scf::YieldOp::create(eb, l, zeroWords(eb, l));
          });
      staging.push_back(llvm::to_vector_of<Value>(guarded.getResults()));
    }
    for (int64_t r = 0; r < rounds; ++r) {
      if (!guards[r]) {
        storeWords(kb, loc, indices[r], staging[r]);
        continue;
      }
      scf::IfOp::create(kb, loc, guards[r], [&](OpBuilder &tb, Location l) {
        storeWords(tb, l, indices[r], staging[r]);
        scf::YieldOp::create(tb, l);
      });
    }
    gpu::BarrierOp::create(kb, loc);

    // Decode: item (h, p, c) writes values [c * V, (c + 1) * V) of head h,
    // position p of the chunk: consecutive threads write consecutive
    // `storeBytes` of a head's rows.
    int64_t perRow = plan.dim / plan.values;
    int64_t items = plan.heads * plan.perGroup * perRow;
    BlockDecoder::ByteReader readByte = [&](OpBuilder &rb, Location l,
                                            Value offset) -> Value {
      Value word = memref::LoadOp::create(
          rb, l, staged,
          ValueRange{arith::DivUIOp::create(rb, l, offset, index(rb, 4))});
      Value shift = arith::MulIOp::create(
          rb, l,
          arith::IndexCastUIOp::create(
              rb, l, i32, arith::RemUIOp::create(rb, l, offset, index(rb, 4))),
          arith::ConstantIntOp::create(rb, l, i32, 8));
      return arith::TruncIOp::create(
          rb, l, rb.getI8Type(), arith::ShRUIOp::create(rb, l, word, shift));
    };
    scf::ForOp::create(
        kb, loc, tid, index(kb, items), nThreads, ValueRange{},
        [&](OpBuilder &lb, Location l, Value item, ValueRange) {
          DecodedItem d =
              decodeItem(lb, l, item, plan.perGroup, plan, element, readByte);
          Value position = arith::AddIOp::create(
              lb, l,
              arith::MulIOp::create(lb, l, group, index(lb, plan.perGroup)),
              d.position);
          if (!dynamic) {
            storeItem(lb, l, out, d.head, position, d.first, d.values,
                      scalarStores, plan.storeBytes);
          } else {
            Value inGroup = arith::CmpIOp::create(
                lb, l, arith::CmpIPredicate::ult, d.position, groupRows);
            scf::IfOp::create(lb, l, inGroup, [&](OpBuilder &tb, Location tl) {
              storeItem(tb, tl, out, d.head, position, d.first, d.values,
                        scalarStores, plan.storeBytes);
              scf::YieldOp::create(tb, tl);
            });
          }
          scf::YieldOp::create(lb, l);
        });
    gpu::TerminatorOp::create(kb, loc);
    rewriter.eraseOp(op);
  }
};

/// Returns the config of `op`, a marked dequant-transpose, or null.
KernelConfigAttr getConfig(linalg::GenericOp op) {
  if (!op->hasAttr(CachetDialect::getDequantTransposeAttrName()))
    return {};
  return op->getAttrOfType<KernelConfigAttr>(
      CachetDialect::getKernelConfigAttrName());
}

struct LowerDequantTransposePass final
    : public cachet::impl::LowerDequantTransposeBase<
          LowerDequantTransposePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (getConfig(op))
        ops.push_back(op);
    });
    DequantTransposeBuilder builder{workgroupAlloc, scalarStores};
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      KernelConfigAttr config = getConfig(op);
      if (std::string why = builder.build(rewriter, op, config); !why.empty()) {
        op.emitError("cachet-lower-dequant-transpose: cannot build ")
            << config << ": " << why;
        return signalPassFailure();
      }
    }
  }
};

/// A marked dequant-transpose to the kernel of its #cachet.kernel_config.
struct LowerDequantTransposePattern final
    : OpRewritePattern<linalg::GenericOp> {
  LowerDequantTransposePattern(MLIRContext *context,
                               DequantTransposeBuilder builder)
      : OpRewritePattern(context), builder(builder) {}

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    KernelConfigAttr config = getConfig(op);
    if (!config)
      return rewriter.notifyMatchFailure(op, "no #cachet.kernel_config");
    Plan plan;
    if (std::string why = makePlan(op, config, plan); !why.empty())
      return rewriter.notifyMatchFailure(op, why);
    (void)builder.build(rewriter, op, config);
    return success();
  }

  DequantTransposeBuilder builder;
};

} // namespace

void cachet::populateLowerDequantTransposePatterns(RewritePatternSet &patterns,
                                                   bool workgroupAlloc,
                                                   bool scalarStores) {
  patterns.add<LowerDequantTransposePattern>(
      patterns.getContext(),
      DequantTransposeBuilder{workgroupAlloc, scalarStores});
}
