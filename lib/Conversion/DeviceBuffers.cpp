//===- DeviceBuffers.cpp - device-resident buffers for kernel operands ---===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace cachet {
#define GEN_PASS_DEF_DEVICEBUFFERS
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// Returns the dynamic sizes of `value` (a memref), read with memref.dim.
SmallVector<Value> dynamicSizes(OpBuilder &b, Location loc, Value value) {
  SmallVector<Value> sizes;
  auto type = cast<MemRefType>(value.getType());
  for (auto [dim, size] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(size))
      sizes.push_back(memref::DimOp::create(b, loc, value, dim));
  return sizes;
}

/// Returns a device buffer shaped like `like`.
Value deviceAlloc(OpBuilder &b, Location loc, Value like) {
  auto type = cast<MemRefType>(like.getType());
  return gpu::AllocOp::create(b, loc, type, /*asyncToken=*/Type(),
                              /*asyncDependencies=*/ValueRange(),
                              dynamicSizes(b, loc, like),
                              /*symbolOperands=*/ValueRange(),
                              /*hostShared=*/false)
      .getMemref();
}

void memcpy(OpBuilder &b, Location loc, Value dst, Value src) {
  gpu::MemcpyOp::create(b, loc, /*asyncToken=*/Type(),
                        /*asyncDependencies=*/ValueRange(), dst, src);
}

struct DeviceBuffersPass final
    : public cachet::impl::DeviceBuffersBase<DeviceBuffersPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(runOnFunction(func)))
        return signalPassFailure();
  }

  LogicalResult runOnFunction(func::FuncOp func);
};

/// Returns the buffer `value` is a view of (through subviews, reshapes and
/// casts), or `value` itself.
Value getRootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

/// Checks the host uses of device buffer `value` (and of its views), turning
/// `memref.copy` into `gpu.memcpy` and `memref.dealloc` into `gpu.dealloc`.
LogicalResult legalizeHostUses(OpBuilder &b, Value value) {
  for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
    Operation *user = use.getOwner();
    if (isa<gpu::LaunchFuncOp, gpu::MemcpyOp, gpu::DeallocOp, func::ReturnOp,
            memref::DimOp, memref::ExtractStridedMetadataOp>(user))
      continue;
    if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
      if (view.getViewSource() == value &&
          failed(legalizeHostUses(b, user->getResult(0))))
        return failure();
      continue;
    }
    b.setInsertionPoint(user);
    if (auto copy = dyn_cast<memref::CopyOp>(user)) {
      memcpy(b, copy.getLoc(), copy.getTarget(), copy.getSource());
      copy.erase();
      continue;
    }
    if (isa<memref::DeallocOp>(user)) {
      gpu::DeallocOp::create(b, user->getLoc(), Type(), ValueRange(), value);
      user->erase();
      continue;
    }
    return user->emitError("cachet-device-buffers: host operation '")
           << user->getName() << "' uses a buffer that lives on the device";
  }
  return success();
}

LogicalResult DeviceBuffersPass::runOnFunction(func::FuncOp func) {
  SmallVector<gpu::LaunchFuncOp> launches;
  func.walk([&](gpu::LaunchFuncOp op) { launches.push_back(op); });
  if (launches.empty())
    return success();

  // Buffers the kernels read or write (roots of the views they get), in
  // first-use order.
  SetVector<Value> kernelBuffers;
  for (gpu::LaunchFuncOp launch : launches)
    for (Value operand : launch.getKernelOperands())
      if (isa<MemRefType>(operand.getType()))
        kernelBuffers.insert(getRootBuffer(operand));

  Block &entry = func.getBody().front();
  OpBuilder b(func.getContext());
  SmallVector<Value> deviceBuffers;
  for (Value buffer : kernelBuffers) {
    if (auto arg = dyn_cast<BlockArgument>(buffer)) {
      if (arg.getOwner() != &entry)
        return launches.front().emitError(
            "cachet-device-buffers: a kernel operand is a block argument of a "
            "nested region");
      // Every use of the argument reads the device copy from now on (the
      // host ones are checked below).
      SmallVector<OpOperand *> uses = llvm::to_vector(
          llvm::map_range(arg.getUses(), [](OpOperand &use) { return &use; }));
      b.setInsertionPointToStart(&entry);
      Value device = deviceAlloc(b, arg.getLoc(), arg);
      memcpy(b, arg.getLoc(), device, arg);
      for (OpOperand *use : uses)
        use->set(device);
      deviceBuffers.push_back(device);
      continue;
    }
    auto alloc = buffer.getDefiningOp<memref::AllocOp>();
    if (!alloc) {
      Operation *producer = buffer.getDefiningOp();
      return launches.front().emitError(
                 "cachet-device-buffers: kernel operand produced by '")
             << producer->getName()
             << "' (only memref.alloc results, function arguments and views "
                "of them can be moved to the device)";
    }
    b.setInsertionPoint(alloc);
    auto device = gpu::AllocOp::create(
        b, alloc.getLoc(), alloc.getType(), Type(), ValueRange(),
        alloc.getDynamicSizes(), alloc.getSymbolOperands(), false);
    alloc.replaceAllUsesWith(device.getMemref());
    alloc.erase();
    deviceBuffers.push_back(device.getMemref());
  }

  for (Value device : deviceBuffers)
    if (failed(legalizeHostUses(b, device)))
      return failure();
  DenseSet<Value> onDevice(deviceBuffers.begin(), deviceBuffers.end());

  // Copy results back; free what is still on the device at every return.
  WalkResult walked = func.walk([&](func::ReturnOp ret) {
    b.setInsertionPoint(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      Value value = operand.get();
      if (!onDevice.contains(value))
        continue;
      auto host = memref::AllocOp::create(b, ret.getLoc(),
                                          cast<MemRefType>(value.getType()),
                                          dynamicSizes(b, ret.getLoc(), value));
      memcpy(b, ret.getLoc(), host, value);
      operand.set(host);
    }
    for (Value device : deviceBuffers) {
      bool freed = llvm::any_of(device.getUsers(), [](Operation *user) {
        return isa<gpu::DeallocOp>(user);
      });
      if (!freed)
        gpu::DeallocOp::create(b, ret.getLoc(), Type(), ValueRange(), device);
    }
    return WalkResult::advance();
  });
  return failure(walked.wasInterrupted());
}

} // namespace
