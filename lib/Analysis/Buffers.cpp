//===- Buffers.cpp - questions about memref buffers -----------------------===//

#include "cachet/Analysis/Buffers.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

bool cachet::isArgumentDeviceCopy(Value buffer) {
  auto cast = buffer.getDefiningOp<UnrealizedConversionCastOp>();
  if (!cast || cast->getNumOperands() != 1)
    return false;
  Value descriptor = cast->getOperand(0);
  while (auto insert = descriptor.getDefiningOp<LLVM::InsertValueOp>()) {
    if (insert.getPosition() == ArrayRef<int64_t>{0}) {
      auto call = insert.getValue().getDefiningOp<LLVM::CallOp>();
      return call && call.getCallee() == kArgumentFunction;
    }
    descriptor = insert.getContainer();
  }
  return false;
}

bool cachet::isDistinctBuffer(Value buffer) {
  return buffer.getDefiningOp<memref::AllocOp>() ||
         buffer.getDefiningOp<gpu::AllocOp>() || isArgumentDeviceCopy(buffer);
}

Value cachet::getRootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

bool cachet::mayAlias(AliasAnalysis &aliases, Value a, Value b) {
  if (aliases.alias(a, b).isNo())
    return false;
  Value rootA = getRootBuffer(a), rootB = getRootBuffer(b);
  auto globalA = rootA.getDefiningOp<memref::GetGlobalOp>();
  auto globalB = rootB.getDefiningOp<memref::GetGlobalOp>();
  auto allocated = [](Value root) {
    return isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
        root.getDefiningOp());
  };
  if (globalA && globalB)
    return globalA.getName() == globalB.getName();
  return !((globalA && allocated(rootB)) || (globalB && allocated(rootA)));
}

bool cachet::mayWriteBuffer(Value buffer) {
  for (OpOperand &use : buffer.getUses()) {
    Operation *user = use.getOwner();
    if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
      if (view.getViewSource() == buffer && mayWriteBuffer(user->getResult(0)))
        return true;
      continue;
    }
    if (isa<memref::DimOp, memref::ExtractStridedMetadataOp,
            memref::ExtractAlignedPointerAsIndexOp>(user))
      continue;
    auto effects = dyn_cast<MemoryEffectOpInterface>(user);
    if (!effects)
      return true;
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffectsOnValue(buffer, instances);
    if (llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
          return isa<MemoryEffects::Write>(e.getEffect());
        }))
      return true;
  }
  return false;
}

bool cachet::isPlainBuffer(MemRefType type) {
  // An identity layout is row-major from offset 0, whatever the sizes.
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  return memref::isStaticShapeAndContiguousRowMajor(type) &&
         succeeded(type.getStridesAndOffset(strides, offset)) && offset == 0;
}

Value cachet::getOnlyBufferLoadedIn(Region &region) {
  Value buffer;
  WalkResult walk = region.walk([&](memref::LoadOp load) {
    Value memref = load.getMemRef();
    if (region.isAncestor(memref.getParentRegion()))
      return WalkResult::advance();
    if (buffer && buffer != memref)
      return WalkResult::interrupt();
    buffer = memref;
    return WalkResult::advance();
  });
  return walk.wasInterrupted() ? Value() : buffer;
}
