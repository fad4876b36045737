//===- StripCachetAttributes.cpp - drop cachet attributes ----------------===//

#include "cachet/Conversion/Passes.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace cachet {
#define GEN_PASS_DEF_STRIPCACHETATTRIBUTES
#include "cachet/Conversion/Passes.h.inc"
} // namespace cachet

using namespace mlir;

namespace {
/// Returns true for a discardable attribute name in the cachet namespace.
bool isCachetAttr(NamedAttribute attr) {
  return attr.getName().getValue().starts_with("cachet.");
}

/// Removes the cachet attributes of `attrs`; returns the remaining ones.
SmallVector<NamedAttribute> withoutCachetAttrs(ArrayRef<NamedAttribute> attrs) {
  return llvm::filter_to_vector(
      attrs, [](NamedAttribute attr) { return !isCachetAttr(attr); });
}

/// Drops cachet attributes everywhere and rejects unlowered cachet ops.
struct StripCachetAttributesPass final
    : public cachet::impl::StripCachetAttributesBase<
          StripCachetAttributesPass> {
  using Base::Base;

  void runOnOperation() override {
    WalkResult result = getOperation()->walk([&](Operation *op) {
      if (isa<cachet::CachetDialect>(op->getDialect())) {
        op->emitError("cachet-strip-attributes: '")
            << op->getName() << "' was not lowered before translation";
        return WalkResult::interrupt();
      }
      SmallVector<StringAttr> names;
      for (NamedAttribute attr : op->getDiscardableAttrs())
        if (isCachetAttr(attr))
          names.push_back(attr.getName());
      for (StringAttr name : names)
        op->removeDiscardableAttr(name);
      if (auto func = dyn_cast<FunctionOpInterface>(op)) {
        for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
          func.setArgAttrs(i, withoutCachetAttrs(func.getArgAttrs(i)));
        for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
          func.setResultAttrs(i, withoutCachetAttrs(func.getResultAttrs(i)));
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
