//===- AttachDevice.cpp - attach a device profile to the module ----------===//

#include "cachet/Device/DeviceProfile.h"
#include "cachet/Passes.h"

#include "llvm/ADT/StringExtras.h"

namespace cachet {
#define GEN_PASS_DEF_ATTACHDEVICE
#include "cachet/Passes.h.inc"
} // namespace cachet

using namespace mlir;
using namespace cachet;
using llvm::Expected;

namespace {
/// Resolves the `profile` option and stores it on the module.
struct AttachDevicePass final
    : public cachet::impl::AttachDeviceBase<AttachDevicePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (profile.empty()) {
      module.emitError("cachet-attach-device: no profile given; use "
                       "profile=NAME (")
          << llvm::join(getBuiltinProfileNames(), ", ") << ") or a .json path";
      return signalPassFailure();
    }
    Expected<DeviceProfile> resolved = resolveProfile(profile);
    if (!resolved) {
      module.emitError("cachet-attach-device: ")
          << llvm::toString(resolved.takeError());
      return signalPassFailure();
    }
    DeviceProfileAttr attr = getProfileAttr(&getContext(), *resolved, [&]() {
      return module.emitError("cachet-attach-device: profile '")
             << profile << "': ";
    });
    if (!attr)
      return signalPassFailure();
    module->setAttr(CachetDialect::getDeviceAttrName(), attr);
  }
};
} // namespace
