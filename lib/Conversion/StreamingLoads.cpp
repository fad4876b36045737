//===- StreamingLoads.cpp - Weight loads with a PTX cache operator --------===//
//
// Rewrites the vector.loads marked cachet.streaming_weight in NVVM modules as
// inline PTX loads with a cache operator (ld.global.cs by default). See
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Analysis/MatvecChain.h"
#include "cachet/Conversion/Passes.h"

#include "llvm/ADT/SmallVector.h"

namespace cachet {
#define GEN_PASS_DEF_STREAMINGLOADS
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// The PTX of a load of `words` 32-bit registers with `cache`, or empty for
/// `none`.
std::string getLoadAsm(StringRef cache, int64_t words) {
  std::string op = cache == "cs" ? "ld.global.cs" : "ld.global.nc.L1::no_allocate";
  if (words == 1)
    return op + ".b32 $0, [$1];";
  std::string text = op + ".v" + std::to_string(words) + ".b32 {";
  for (int64_t i = 0; i < words; ++i)
    text += (i ? ", $" : "$") + std::to_string(i);
  return text + "}, [$" + std::to_string(words) + "];";
}

/// Returns the i64 address of `memref[indices]`: its aligned pointer plus
/// its offset and the indices times its strides, in elements of `bytes`.
Value getElementAddress(OpBuilder &b, Location loc, Value memref,
                        ValueRange indices, int64_t bytes) {
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value linear = metadata.getOffset();
  for (auto [index, stride] : llvm::zip_equal(indices, metadata.getStrides()))
    linear = arith::AddIOp::create(
        b, loc, linear, arith::MulIOp::create(b, loc, index, stride));
  Value byteOffset = arith::MulIOp::create(
      b, loc, linear, arith::ConstantIndexOp::create(b, loc, bytes));
  Value pointer = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value address = arith::AddIOp::create(b, loc, pointer, byteOffset);
  return arith::IndexCastUIOp::create(b, loc, b.getI64Type(), address);
}

struct StreamingLoadsPass final
    : public cachet::impl::StreamingLoadsBase<StreamingLoadsPass> {
  using Base::Base;

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    if (cache != "cs" && cache != "nc-no-allocate" && cache != "none") {
      module.emitError("cachet-streaming-loads: unknown cache '")
          << cache << "' (cs, nc-no-allocate, none)";
      return signalPassFailure();
    }
    ArrayAttr targets = module.getTargetsAttr();
    bool nvvm = targets && !targets.empty() &&
                isa<NVVM::NVVMTargetAttr>(targets[0]);
    StringRef mark = cachet::getStreamingWeightAttrName();
    for (auto kernel : module.getOps<gpu::GPUFuncOp>()) {
      SmallVector<vector::LoadOp> loads;
      kernel.walk([&](vector::LoadOp load) {
        if (load->hasAttr(mark))
          loads.push_back(load);
      });
      if (loads.empty())
        continue;
      if (!nvvm) {
        kernel.emitRemark("cachet-streaming-loads: ")
            << loads.size() << " weight loads left alone: not an NVVM module";
        continue;
      }
      if (cache == "none") {
        kernel.emitRemark("cachet-streaming-loads: ")
            << loads.size() << " weight loads left alone: cache=none";
        continue;
      }
      int64_t rewritten = 0;
      std::string skipped;
      for (vector::LoadOp load : loads) {
        std::string why = rewrite(load);
        if (why.empty())
          ++rewritten;
        else if (skipped.empty())
          skipped = why;
      }
      InFlightDiagnostic remark = kernel.emitRemark("cachet-streaming-loads: ");
      remark << rewritten << " of " << loads.size() << " weight loads as "
             << (cache == "cs" ? "ld.global.cs" : "ld.global.nc.L1::no_allocate");
      if (!skipped.empty())
        remark << "; the others left alone (" << skipped << ")";
    }
  }

  /// Rewrites `load`; returns why not, or an empty string.
  std::string rewrite(vector::LoadOp load) {
    VectorType type = load.getVectorType();
    MemRefType memref = load.getMemRefType();
    Type element = type.getElementType();
    if (type.getRank() != 1 || !element.isIntOrFloat())
      return "not a 1-D vector of scalars";
    int64_t bits = type.getNumElements() * element.getIntOrFloatBitWidth();
    if (bits != 32 && bits != 64 && bits != 128)
      return "a load of " + std::to_string(bits) + " bits";
    if (Attribute space = memref.getMemorySpace()) {
      auto gpuSpace = dyn_cast<gpu::AddressSpaceAttr>(space);
      if (!gpuSpace || gpuSpace.getValue() != gpu::AddressSpace::Global)
        return "not global memory";
    }
    int64_t words = bits / 32;
    OpBuilder b(load);
    Location loc = load.getLoc();
    Value address = getElementAddress(b, loc, load.getBase(),
                                      load.getIndices(),
                                      element.getIntOrFloatBitWidth() / 8);
    Type i32 = b.getI32Type();
    SmallVector<Type> fields(words, i32);
    Type result = words == 1 ? i32
                             : LLVM::LLVMStructType::getLiteral(
                                   b.getContext(), fields);
    std::string constraints;
    for (int64_t i = 0; i < words; ++i)
      constraints += "=r,";
    constraints += "l";
    // No side effects: the weight is not written while the kernel runs, so
    // the load may move like any load of constant memory.
    auto asmOp = LLVM::InlineAsmOp::create(
        b, loc, result, ValueRange{address},
        b.getStringAttr(getLoadAsm(cache, words)),
        b.getStringAttr(constraints), /*has_side_effects=*/nullptr,
        /*is_align_stack=*/nullptr,
        LLVM::TailCallKindAttr::get(b.getContext(),
                                    LLVM::tailcallkind::TailCallKind::None),
        /*asm_dialect=*/nullptr, /*operand_attrs=*/nullptr);
    SmallVector<Value> values;
    if (words == 1)
      values.push_back(asmOp.getResult(0));
    else
      for (int64_t i = 0; i < words; ++i)
        values.push_back(
            LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0), i));
    Value vector = vector::FromElementsOp::create(
        b, loc, VectorType::get({words}, i32), values);
    Value cast = vector::BitCastOp::create(b, loc, type, vector);
    load.replaceAllUsesWith(cast);
    load.erase();
    return "";
  }
};

} // namespace
