//===- MergeIdenticalKernels.cpp - one gpu.module per distinct kernel ----===//
//
// Launches of identical outlined kernels (a model's layers) share one
// gpu.module, so that each distinct kernel is compiled once. See
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <cctype>

namespace cachet {
#define GEN_PASS_DEF_MERGEIDENTICALKERNELS
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {

/// `text` with every occurrence of `name` that is not the start of a longer
/// identifier replaced.
std::string replaceName(const std::string &text, StringRef name) {
  auto isIdent = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           c == '$' || c == '.';
  };
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    size_t at = text.find(name.data(), i, name.size());
    if (at == std::string::npos) {
      out.append(text, i, std::string::npos);
      break;
    }
    size_t end = at + name.size();
    bool whole = (end == text.size() || !isIdent(text[end]));
    out.append(text, i, at - i);
    out += whole ? "<self>" : std::string(name);
    i = end;
  }
  return out;
}

struct MergeIdenticalKernelsPass final
    : public cachet::impl::MergeIdenticalKernelsBase<
          MergeIdenticalKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp top = getOperation();
    // The kept module of each printed form, and how many each stands for.
    llvm::StringMap<gpu::GPUModuleOp> kept;
    llvm::DenseMap<Operation *, int> merged;
    SmallVector<gpu::GPUModuleOp> order;
    llvm::DenseMap<StringAttr, StringAttr> replacement;
    SmallVector<gpu::GPUModuleOp> erase;
    for (auto module : top.getOps<gpu::GPUModuleOp>()) {
      std::string text;
      llvm::raw_string_ostream os(text);
      // Its attributes but the name, then its body, numbered locally.
      for (NamedAttribute attr : module->getAttrs())
        if (attr.getName() != SymbolTable::getSymbolAttrName())
          os << attr.getName() << "=" << attr.getValue() << ";";
      for (Operation &op : module.getBody()->getOperations()) {
        op.print(os, OpPrintingFlags().useLocalScope());
        os << "\n";
        if (int64_t(text.size()) > maxCompareBytes)
          break;
      }
      if (int64_t(text.size()) > maxCompareBytes)
        continue;
      // A nested SPIR-V module is named after its gpu.module.
      std::string key = replaceName(text, ("__spv__" + module.getName()).str());
      auto [it, inserted] = kept.try_emplace(key, module);
      if (inserted)
        continue;
      replacement[module.getNameAttr()] = it->second.getNameAttr();
      if (merged[it->second]++ == 0)
        order.push_back(it->second);
      erase.push_back(module);
    }
    if (erase.empty())
      return;
    top.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      auto it = replacement.find(kernel.getRootReference());
      if (it == replacement.end())
        return;
      launch.setKernelAttr(
          SymbolRefAttr::get(it->second, kernel.getNestedReferences()));
    });
    for (gpu::GPUModuleOp module : erase)
      module.erase();
    for (gpu::GPUModuleOp module : order) {
      int count = merged[module];
      emitRemark(module.getLoc())
          << "cachet-merge-identical-kernels: @" << module.getName()
          << " stands for " << count << " identical kernel module"
          << (count == 1 ? "" : "s")
          << ": their launches use it, and it is compiled once";
    }
  }
};

} // namespace
