//===- DumpKernelObjects.cpp - write serialized kernels to files ---------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace cachet {
#define GEN_PASS_DEF_DUMPKERNELOBJECTS
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// The file extension of `object`, by target and format.
StringRef extension(gpu::ObjectAttr object) {
  gpu::CompilationTarget format = object.getFormat();
  bool assembly = format == gpu::CompilationTarget::Assembly;
  if (isa<NVVM::NVVMTargetAttr>(object.getTarget()))
    return assembly                                   ? "ptx"
           : format == gpu::CompilationTarget::Fatbin ? "fatbin"
                                                      : "cubin";
  if (isa<ROCDL::ROCDLTargetAttr>(object.getTarget()))
    return assembly ? "s" : "hsaco";
  if (isa<spirv::TargetEnvAttr>(object.getTarget()))
    return "spv";
  return "bin";
}

struct DumpKernelObjectsPass final
    : public cachet::impl::DumpKernelObjectsBase<DumpKernelObjectsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (std::error_code ec = llvm::sys::fs::create_directories(directory)) {
      module.emitError("cachet-dump-kernel-objects: cannot create '")
          << directory << "': " << ec.message();
      return signalPassFailure();
    }
    for (auto binary : module.getOps<gpu::BinaryOp>()) {
      for (Attribute attr : binary.getObjects()) {
        auto object = cast<gpu::ObjectAttr>(attr);
        SmallString<128> path(directory.getValue());
        llvm::sys::path::append(path,
                                binary.getSymName() + "." + extension(object));
        std::error_code ec;
        llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
        if (ec) {
          binary.emitError("cachet-dump-kernel-objects: cannot write '")
              << path << "': " << ec.message();
          return signalPassFailure();
        }
        out << object.getObject().getValue();
      }
    }
    markAllAnalysesPreserved();
  }
};

} // namespace
