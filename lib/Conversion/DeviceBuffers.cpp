//===- DeviceBuffers.cpp - device-resident buffers for kernel operands ---===//

#include "cachet/Analysis/Buffers.h"
#include "cachet/Conversion/Passes.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
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

/// Returns true if a launch, copy or fill may write the device buffer
/// `device` (or a view of it), other than the upload of `upload` into it.
bool deviceMayWrite(Value device, Value upload) {
  for (OpOperand &use : device.getUses()) {
    Operation *user = use.getOwner();
    if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
      if (view.getViewSource() == device &&
          deviceMayWrite(user->getResult(0), Value()))
        return true;
      continue;
    }
    if (auto copy = dyn_cast<gpu::MemcpyOp>(user)) {
      if (copy.getDst() == device && copy.getSrc() != upload)
        return true;
      continue;
    }
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(user)) {
      auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      unsigned index = use.getOperandNumber() -
                       launch.getKernelOperands().getBeginOperandIndex();
      if (!kernel || index >= kernel.getNumArguments() ||
          cachet::mayWriteBuffer(kernel.getArgument(index)))
        return true;
      continue;
    }
    if (isa<gpu::DeallocOp, func::ReturnOp, memref::DimOp,
            memref::ExtractStridedMetadataOp,
            memref::ExtractAlignedPointerAsIndexOp>(user))
      continue;
    return true;
  }
  return false;
}

/// Returns true if `buffer` or a view of it is used outside the block it is
/// defined in (after it, or by the block's terminator: yielded).
bool escapesBlock(Value buffer) {
  Block *block = buffer.getParentBlock();
  for (Operation *user : buffer.getUsers()) {
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (!inBlock || inBlock == block->getTerminator())
      return true;
    if (auto view = dyn_cast<ViewLikeOpInterface>(user);
        view && view.getViewSource() == buffer &&
        escapesBlock(user->getResult(0)))
      return true;
  }
  return false;
}

/// The last op of `block` that uses `root` (a buffer allocated in it) or a
/// view of it: the launches, copies and fills of the stream that are the
/// only uses of a device temporary, or the host loop holding them; null
/// when a use may keep the buffer past the work queued in `block` (a
/// return, a yield, a call, an op this pass does not know, a free).
Operation *getLastUse(Value root, Block &block) {
  Operation *last = root.getDefiningOp();
  SmallVector<Value> worklist{root};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value) {
        for (Value result : user->getResults())
          if (isa<MemRefType>(result.getType()))
            worklist.push_back(result);
      } else if (!isa<gpu::LaunchFuncOp, gpu::MemcpyOp, gpu::MemsetOp,
                      memref::DimOp, memref::ExtractStridedMetadataOp>(user)) {
        return nullptr;
      }
      Operation *ancestor = block.findAncestorOpInBlock(*user);
      if (!ancestor)
        return nullptr;
      if (last->isBeforeInBlock(ancestor))
        last = ancestor;
    }
  }
  return last;
}

/// Returns true if the runtime can copy `buffer` as one run of bytes.
bool isPlainBuffer(Value buffer) {
  return cachet::isPlainBuffer(cast<MemRefType>(buffer.getType()));
}

/// The runtime's zero-filled strided 2D upload (cachet/runtime.h).
constexpr StringLiteral kMemcpy2D = "cachetMgpuMemcpy2D";

/// Returns `memref`'s aligned pointer as an !llvm.ptr.
Value alignedPointer(OpBuilder &b, Location loc, Value memref) {
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value address = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), index);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), address);
}

/// The runtime's resident upload of constant data (cachet/runtime.h).
constexpr StringLiteral kResident = "cachetMgpuResident";

/// Returns the declaration of runtime function `name` of type `type`,
/// declared as an llvm.func: llvm-request-c-wrappers would otherwise redirect
/// a func.func callee to a `_mlir_ciface_` wrapper.
LLVM::LLVMFuncOp getRuntimeFunction(OpBuilder &b, ModuleOp module,
                                    StringRef name,
                                    LLVM::LLVMFunctionType type) {
  if (auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return callee;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
}

/// Bytes of a static-shape buffer of `type`.
int64_t getBufferBytes(MemRefType type) {
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

Value memrefFromPointer(OpBuilder &b, Location loc, Value device,
                        MemRefType type);

/// Returns true if `global` can stay resident on the device: a constant of
/// static shape and identity layout.
bool canBeResident(memref::GlobalOp global) {
  return global && global.getConstant() && global.getType().hasStaticShape() &&
         global.getType().getLayout().isIdentity();
}

/// Replaces the kernel uses of constant `getGlobal` by its resident device
/// copy: `cachetMgpuResident` with the constant's own slot, the device
/// pointer then given the memref's descriptor. Returns the device memref.
Value emitResidentCopy(OpBuilder &b, memref::GetGlobalOp getGlobal,
                       memref::GlobalOp global) {
  auto module = getGlobal->getParentOfType<ModuleOp>();
  MLIRContext *context = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = b.getI64Type();
  Location loc = getGlobal.getLoc();

  // The slot: one zero-initialized pointer per constant and module.
  std::string slotName = ("__cachet_resident_" + global.getSymName()).str();
  if (!module.lookupSymbol<LLVM::GlobalOp>(slotName)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(module.getBody());
    auto slot =
        LLVM::GlobalOp::create(b, loc, ptr, /*isConstant=*/false,
                               LLVM::Linkage::Internal, slotName, Attribute());
    Block *init = b.createBlock(&slot.getInitializerRegion());
    b.setInsertionPointToStart(init);
    LLVM::ReturnOp::create(b, loc,
                           LLVM::ZeroOp::create(b, loc, ptr).getResult());
  }
  LLVM::LLVMFuncOp callee = getRuntimeFunction(
      b, module, kResident, LLVM::LLVMFunctionType::get(ptr, {ptr, ptr, i64}));

  MemRefType type = global.getType();
  Value slot = LLVM::AddressOfOp::create(b, loc, ptr, slotName);
  Value size = arith::ConstantIntOp::create(b, loc, i64, getBufferBytes(type));
  Value device = LLVM::CallOp::create(
                     b, loc, callee,
                     ValueRange{slot, alignedPointer(b, loc, getGlobal), size})
                     .getResult();
  return memrefFromPointer(b, loc, device, type);
}

/// The runtime's upload of a host argument, and its end at a return: a
/// buffer the caller made resident (cachetMgpuBindResident) is its device
/// copy, neither uploaded nor copied back nor freed (cachet/runtime.h).
constexpr StringLiteral kArgumentEnd = "cachetMgpuArgumentEnd";

/// Returns true if argument `arg` can be passed through cachetMgpuArgument:
/// a static shape and identity layout (one run of bytes).
bool canPassArgument(BlockArgument arg) {
  auto type = dyn_cast<MemRefType>(arg.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity();
}

/// Returns the device copy of argument `arg` (see canPassArgument): a call
/// to `cachetMgpuArgument` with its host pointer and size; sets `pointer` to
/// the call's result.
Value emitArgumentUpload(OpBuilder &b, BlockArgument arg, Value &pointer) {
  auto module = arg.getOwner()->getParentOp()->getParentOfType<ModuleOp>();
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Type i64 = b.getI64Type();
  Location loc = arg.getLoc();
  auto type = cast<MemRefType>(arg.getType());
  LLVM::LLVMFuncOp callee =
      getRuntimeFunction(b, module, cachet::kArgumentFunction,
                         LLVM::LLVMFunctionType::get(ptr, {ptr, i64}));
  Value size = arith::ConstantIntOp::create(b, loc, i64, getBufferBytes(type));
  Value device =
      LLVM::CallOp::create(b, loc, callee,
                           ValueRange{alignedPointer(b, loc, arg), size})
          .getResult();
  pointer = device;
  return memrefFromPointer(b, loc, device, type);
}

/// Ends the call's use of `device` (a pointer), the copy of argument `arg`
/// made by emitArgumentUpload: copied back into `arg` if `written`, then
/// freed (neither for a resident buffer). The device memref gets no new use:
/// the analyses of its kernels' launches see only them.
void emitArgumentEnd(OpBuilder &b, Location loc, BlockArgument arg,
                     Value device, bool written) {
  auto module = arg.getOwner()->getParentOp()->getParentOfType<ModuleOp>();
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Type i64 = b.getI64Type(), i32 = b.getI32Type();
  LLVM::LLVMFuncOp callee = getRuntimeFunction(
      b, module, kArgumentEnd,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(b.getContext()),
                                  {ptr, ptr, i64, i32}));
  auto type = cast<MemRefType>(arg.getType());
  LLVM::CallOp::create(
      b, loc, callee,
      ValueRange{
          alignedPointer(b, loc, arg), device,
          arith::ConstantIntOp::create(b, loc, i64, getBufferBytes(type)),
          arith::ConstantIntOp::create(b, loc, i32, written ? 1 : 0)});
}

/// Returns the memref of `type` (static shape, identity layout) at device
/// pointer `device`: its descriptor (finalize-memref-to-llvm's layout) cast
/// to the memref type; reconcile-unrealized-casts folds the cast into the
/// lowered uses.
Value memrefFromPointer(OpBuilder &b, Location loc, Value device,
                        MemRefType type) {
  MLIRContext *context = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = b.getI64Type();
  int64_t rank = type.getRank();
  SmallVector<Type> fields = {ptr, ptr, i64};
  if (rank) {
    fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
    fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
  }
  auto descriptorType = LLVM::LLVMStructType::getLiteral(context, fields);
  Value descriptor = LLVM::UndefOp::create(b, loc, descriptorType);
  auto insert = [&](Value value, ArrayRef<int64_t> position) {
    descriptor =
        LLVM::InsertValueOp::create(b, loc, descriptor, value, position);
  };
  insert(device, {0});
  insert(device, {1});
  insert(arith::ConstantIntOp::create(b, loc, i64, 0), {2});
  SmallVector<int64_t> strides;
  int64_t offset;
  (void)type.getStridesAndOffset(strides, offset);
  for (int64_t dim = 0; dim < rank; ++dim) {
    insert(arith::ConstantIntOp::create(b, loc, i64, type.getDimSize(dim)),
           {3, dim});
    insert(arith::ConstantIntOp::create(b, loc, i64, strides[dim]), {4, dim});
  }
  return UnrealizedConversionCastOp::create(b, loc, type, descriptor)
      .getResult(0);
}

/// Replaces a `memref.copy` from a host argument into a pitched device view
/// (see cachet-pitched-weights) with a call to the runtime's 2D upload,
/// which also zeroes the gap after each row.
LogicalResult emitPitchedUpload(OpBuilder &b, memref::CopyOp copy) {
  auto source = cast<MemRefType>(copy.getSource().getType());
  auto target = cast<MemRefType>(copy.getTarget().getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(target.getStridesAndOffset(strides, offset)) || offset != 0 ||
      !source.hasStaticShape() || !source.getLayout().isIdentity())
    return copy.emitError("cachet-device-buffers: a pitched upload needs a "
                          "static identity-layout source and a view at "
                          "offset 0");
  int64_t elementBytes = source.getElementTypeBitWidth() / 8;
  int64_t rowBytes = source.getShape().back() * elementBytes;
  int64_t pitchBytes = strides[strides.size() - 2] * elementBytes;
  int64_t rows = source.getNumElements() / source.getShape().back();

  auto module = copy->getParentOfType<ModuleOp>();
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Type i64 = b.getI64Type();
  LLVM::LLVMFuncOp callee =
      getRuntimeFunction(b, module, kMemcpy2D,
                         LLVM::LLVMFunctionType::get(
                             b.getI32Type(), {ptr, i64, ptr, i64, i64, i64}));
  Location loc = copy.getLoc();
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, value);
  };
  LLVM::CallOp::create(
      b, loc, callee,
      ValueRange{alignedPointer(b, loc, copy.getTarget()), constant(pitchBytes),
                 alignedPointer(b, loc, copy.getSource()), constant(rowBytes),
                 constant(rowBytes), constant(rows)});
  return success();
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
    if (auto copy = dyn_cast<memref::CopyOp>(user);
        copy &&
        copy->hasAttr(cachet::CachetDialect::getPitchedUploadAttrName())) {
      if (failed(emitPitchedUpload(b, copy)))
        return failure();
      copy.erase();
      continue;
    }
    if (auto copy = dyn_cast<memref::CopyOp>(user)) {
      if (!isPlainBuffer(copy.getSource()) || !isPlainBuffer(copy.getTarget()))
        return copy.emitError(
            "cachet-device-buffers: a copy between host and device of a view "
            "that is not contiguous at offset 0 (run "
            "cachet-host-compute-to-parallel first, which makes it a kernel)");
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
        kernelBuffers.insert(cachet::getRootBuffer(operand));

  Block &entry = func.getBody().front();
  OpBuilder b(func.getContext());
  SmallVector<Value> deviceBuffers;
  // Device buffers allocated in a nested block (a loop body): freed there.
  SmallVector<Value> scopedBuffers;
  // Resident copies of constants: on the device, never freed here.
  SmallVector<Value> residentBuffers;
  // The argument (or writable global) each device copy was uploaded from.
  DenseMap<Value, Value> uploadedFrom;
  // Device copies of arguments made by cachetMgpuArgument (perhaps resident
  // ones), with their arguments and pointers: ended by
  // cachetMgpuArgumentEnd.
  SmallVector<std::pair<Value, BlockArgument>> passedArguments;
  SmallVector<Value> passedPointers;
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
      Value device;
      if (canPassArgument(arg)) {
        Value pointer;
        device = emitArgumentUpload(b, arg, pointer);
        passedArguments.push_back({device, arg});
        passedPointers.push_back(pointer);
      } else {
        device = deviceAlloc(b, arg.getLoc(), arg);
        memcpy(b, arg.getLoc(), device, arg);
        deviceBuffers.push_back(device);
      }
      for (OpOperand *use : uses)
        use->set(device);
      uploadedFrom[device] = arg;
      continue;
    }
    if (auto global = buffer.getDefiningOp<memref::GetGlobalOp>()) {
      // A constant that kernels only read: resident, uploaded on the first
      // call. Another global: uploaded where it is taken, and copied back
      // like an argument if the device may write it.
      SmallVector<OpOperand *> uses = llvm::to_vector(llvm::map_range(
          global->getUses(), [](OpOperand &use) { return &use; }));
      auto symbol = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
          global, global.getNameAttr());
      b.setInsertionPointAfter(global);
      if (residentConstants && canBeResident(symbol) &&
          !deviceMayWrite(global, Value())) {
        Value device = emitResidentCopy(b, global, symbol);
        for (OpOperand *use : uses)
          use->set(device);
        residentBuffers.push_back(device);
        emitRemark(global.getLoc(), "cachet-device-buffers: constant @")
            << symbol.getSymName()
            << " stays resident on the device (uploaded on the first call)";
        continue;
      }
      Value device = deviceAlloc(b, global.getLoc(), global);
      memcpy(b, global.getLoc(), device, global);
      for (OpOperand *use : uses)
        use->set(device);
      deviceBuffers.push_back(device);
      if (!symbol || !symbol.getConstant())
        uploadedFrom[device] = global;
      continue;
    }
    auto alloc = buffer.getDefiningOp<memref::AllocOp>();
    if (!alloc) {
      Operation *producer = buffer.getDefiningOp();
      return launches.front().emitError(
                 "cachet-device-buffers: kernel operand produced by '")
             << producer->getName()
             << "' (only memref.alloc and memref.get_global results, function "
                "arguments and views of them can be moved to the device)";
    }
    // A buffer allocated in a loop body or branch is freed at the end of
    // its block (each iteration's), which needs it not to leave the block.
    bool nested = alloc->getBlock() != &entry;
    if (nested && escapesBlock(alloc.getResult()))
      return alloc.emitError(
          "cachet-device-buffers: a kernel buffer allocated inside a loop or "
          "branch leaves it (yielded or used after it); it cannot be freed "
          "there");
    b.setInsertionPoint(alloc);
    auto device = gpu::AllocOp::create(
        b, alloc.getLoc(), alloc.getType(), Type(), ValueRange(),
        alloc.getDynamicSizes(), alloc.getSymbolOperands(), false);
    alloc.replaceAllUsesWith(device.getMemref());
    alloc.erase();
    if (nested)
      scopedBuffers.push_back(device.getMemref());
    else
      deviceBuffers.push_back(device.getMemref());
  }

  SmallVector<Value> passedBuffers =
      llvm::to_vector(llvm::make_first_range(passedArguments));
  for (Value device : llvm::concat<Value>(deviceBuffers, passedBuffers,
                                          residentBuffers, scopedBuffers))
    if (failed(legalizeHostUses(b, device)))
      return failure();
  // Buffers of a nested block: freed before its terminator unless the host
  // code frees them itself.
  for (Value device : scopedBuffers) {
    if (llvm::any_of(device.getUsers(),
                     [](Operation *user) { return isa<gpu::DeallocOp>(user); }))
      continue;
    b.setInsertionPoint(device.getParentBlock()->getTerminator());
    gpu::DeallocOp::create(b, device.getLoc(), Type(), ValueRange(), device);
  }
  // Temporaries of the function's block: freed right after the last work
  // that uses them (the stream runs it in order, and the runtime hands the
  // memory to later work only), not at the return, so that a prefill does
  // not hold every layer's temporaries (each weight's dequantized copy)
  // at once.
  int64_t early = 0;
  for (Value device : deviceBuffers) {
    if (uploadedFrom.count(device) || !device.getDefiningOp<gpu::AllocOp>())
      continue;
    Operation *last = getLastUse(device, entry);
    if (!last || last == entry.getTerminator())
      continue;
    b.setInsertionPointAfter(last);
    gpu::DeallocOp::create(b, device.getLoc(), Type(), ValueRange(), device);
    ++early;
  }
  if (early > 0)
    emitRemark(func.getLoc(), "cachet-device-buffers: ")
        << early << " device temporar" << (early == 1 ? "y" : "ies")
        << " freed after the last work that uses "
        << (early == 1 ? "it" : "them");
  DenseSet<Value> onDevice(deviceBuffers.begin(), deviceBuffers.end());
  onDevice.insert(passedBuffers.begin(), passedBuffers.end());
  onDevice.insert(residentBuffers.begin(), residentBuffers.end());

  // Arguments the device writes (updated in place): the caller sees the
  // update, as with the CPU reference.
  SmallVector<std::pair<Value, Value>> writtenArguments;
  for (Value device : deviceBuffers)
    if (Value host = uploadedFrom.lookup(device);
        host && deviceMayWrite(device, host))
      writtenArguments.push_back({device, host});

  SmallVector<bool> passedWritten;
  for (auto [device, arg] : passedArguments)
    passedWritten.push_back(deviceMayWrite(device, arg));

  // Copy written arguments and results back; free what is still on the
  // device at every return. A result that is the device copy of an argument
  // is the argument itself, as in the reference.
  WalkResult walked = func.walk([&](func::ReturnOp ret) {
    b.setInsertionPoint(ret);
    for (auto [device, arg] : writtenArguments)
      memcpy(b, ret.getLoc(), arg, device);
    for (OpOperand &operand : ret->getOpOperands()) {
      Value value = operand.get();
      if (!onDevice.contains(cachet::getRootBuffer(value)))
        continue;
      if (!isPlainBuffer(value)) {
        ret.emitError("cachet-device-buffers: a returned view of a device "
                      "buffer is not contiguous at offset 0");
        return WalkResult::interrupt();
      }
      if (Value host = uploadedFrom.lookup(value);
          host && isa<BlockArgument>(host)) {
        operand.set(host);
        continue;
      }
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
    for (auto [passed, pointer, written] :
         llvm::zip_equal(passedArguments, passedPointers, passedWritten))
      emitArgumentEnd(b, ret.getLoc(), passed.second, pointer, written);
    return WalkResult::advance();
  });
  return failure(walked.wasInterrupted());
}

} // namespace
