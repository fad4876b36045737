//===- Dialect.cpp - C API of the cachet dialect and passes --------------===//

#include "cachet-c/Dialect.h"

#include "cachet/Conversion/Passes.h"
#include "cachet/Device/DeviceProfile.h"
#include "cachet/Dialect/CachetDialect.h"
#include "cachet/Passes.h"
#include "cachet/Pipelines/Pipelines.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Cachet, cachet, cachet::CachetDialect)

void cachetRegisterPasses(void) {
  cachet::registerCachetPasses();
  cachet::registerCachetConversionPasses();
  cachet::registerCachetPipelines();
}

bool cachetTypeIsBlockQuantized(MlirType type) {
  return llvm::isa<cachet::BlockQuantizedType>(unwrap(type));
}

unsigned cachetBlockQuantizedTypeGetBlockBytes(MlirType type) {
  if (auto block = llvm::dyn_cast<cachet::BlockQuantizedType>(unwrap(type)))
    return block.getBlockBytes();
  return 0;
}

unsigned cachetBlockQuantizedTypeGetBlockValues(MlirType type) {
  if (auto block = llvm::dyn_cast<cachet::BlockQuantizedType>(unwrap(type)))
    return block.getBlockValues();
  return 0;
}

intptr_t cachetGetNumBuiltinProfiles(void) {
  return static_cast<intptr_t>(cachet::getBuiltinProfileNames().size());
}

MlirStringRef cachetGetBuiltinProfileName(intptr_t pos) {
  return wrap(cachet::getBuiltinProfileNames()[pos]);
}
