//===- ScalarKernelArguments.cpp - scalar kernel arguments in buffers ----===//
//
// The Vulkan launch convention binds buffers only: this pass passes each
// scalar argument of a SPIR-V kernel in a one-element device buffer. See
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace cachet {
#define GEN_PASS_DEF_SCALARKERNELARGUMENTS
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// The element type of the buffer that carries a scalar of `type`: i32 for
/// index (SPIR-V's index width), the type itself otherwise.
Type carrierType(Type type) {
  return type.isIndex() ? IntegerType::get(type.getContext(), 32) : type;
}

/// Converts `value` (of a scalar type) to the carrier type and back.
Value toCarrier(OpBuilder &b, Location loc, Value value) {
  if (!value.getType().isIndex())
    return value;
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), value);
}
Value fromCarrier(OpBuilder &b, Location loc, Value value, Type type) {
  if (!type.isIndex())
    return value;
  return arith::IndexCastOp::create(b, loc, type, value);
}

struct ScalarKernelArgumentsPass final
    : public cachet::impl::ScalarKernelArgumentsBase<
          ScalarKernelArgumentsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Kernels with scalar arguments: which positions are scalars.
    DenseMap<gpu::GPUFuncOp, SmallVector<unsigned>> scalars;
    module.walk([&](gpu::GPUFuncOp func) {
      if (!func.isKernel())
        return;
      SmallVector<unsigned> positions;
      for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
        if (type.isIntOrIndexOrFloat())
          positions.push_back(i);
      if (!positions.empty())
        scalars[func] = positions;
    });
    if (scalars.empty())
      return;

    SymbolTableCollection symbols;
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto func = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      auto it = func ? scalars.find(func) : scalars.end();
      if (it == scalars.end())
        return;
      OpBuilder b(launch);
      Location loc = launch.getLoc();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      SmallVector<Value> buffers;
      for (unsigned i : it->second) {
        Value value = launch.getKernelOperands()[i];
        auto type = MemRefType::get({1}, carrierType(value.getType()));
        Value host = memref::AllocaOp::create(b, loc, type);
        memref::StoreOp::create(b, loc, toCarrier(b, loc, value), host,
                                ValueRange{zero});
        Value device = gpu::AllocOp::create(b, loc, type, Type(), ValueRange(),
                                            ValueRange(), ValueRange(), false)
                           .getMemref();
        gpu::MemcpyOp::create(b, loc, Type(), ValueRange(), device, host);
        launch.getKernelOperandsMutable().slice(i, 1).assign(device);
        buffers.push_back(device);
      }
      b.setInsertionPointAfter(launch);
      for (Value device : buffers)
        gpu::DeallocOp::create(b, loc, Type(), ValueRange(), device);
    });

    for (auto &[func, positions] : scalars) {
      Block &entry = func.getBody().front();
      OpBuilder b(func.getContext());
      b.setInsertionPointToStart(&entry);
      Location loc = func.getLoc();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      SmallVector<Type> inputs(func.getArgumentTypes());
      for (unsigned i : positions) {
        BlockArgument arg = entry.getArgument(i);
        Type scalar = arg.getType();
        auto type = MemRefType::get({1}, carrierType(scalar));
        arg.setType(type);
        inputs[i] = type;
        Value loaded = memref::LoadOp::create(b, loc, arg, ValueRange{zero});
        Value value = fromCarrier(b, loc, loaded, scalar);
        arg.replaceAllUsesExcept(value, loaded.getDefiningOp());
      }
      func.setFunctionType(
          FunctionType::get(func.getContext(), inputs, func.getResultTypes()));
    }
  }
};

} // namespace
