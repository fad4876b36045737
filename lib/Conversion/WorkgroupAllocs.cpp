//===- WorkgroupAllocs.cpp - workgroup attributions to memref.alloc ------===//
//
// convert-gpu-to-spirv converts workgroup memory that is allocated with
// memref.alloc in the Workgroup storage class (into Workgroup-class global
// variables) but not the workgroup attributions of a gpu.func; this pass
// turns the latter into the former.
// See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"

namespace cachet {
#define GEN_PASS_DEF_WORKGROUPALLOCS
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {
/// Replaces the workgroup attributions of every gpu.func by memref.alloc.
struct WorkgroupAllocsPass final
    : public cachet::impl::WorkgroupAllocsBase<WorkgroupAllocsPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](gpu::GPUFuncOp func) {
      unsigned count = func.getNumWorkgroupAttributions();
      if (count == 0)
        return;
      Block &entry = func.getBody().front();
      OpBuilder b = OpBuilder::atBlockBegin(&entry);
      unsigned first = func.getFirstWorkgroupAttributionIndex();
      for (unsigned i = 0; i < count; ++i) {
        BlockArgument arg = entry.getArgument(first + i);
        // The SPIR-V storage class itself: the memory-space map of
        // convert-gpu-to-spirv does not know #gpu.address_space.
        auto type = cast<MemRefType>(arg.getType());
        auto workgroup = spirv::StorageClassAttr::get(
            b.getContext(), spirv::StorageClass::Workgroup);
        Value alloc = memref::AllocOp::create(
            b, arg.getLoc(),
            MemRefType::get(type.getShape(), type.getElementType(),
                            type.getLayout(), workgroup));
        arg.replaceAllUsesWith(alloc);
      }
      entry.eraseArguments(first, count);
      func->setAttr(func.getNumWorkgroupAttributionsAttrName(),
                    b.getI64IntegerAttr(0));
    });
  }
};
} // namespace
