/*===- cachet-c/Dialect.h - C API of the cachet dialect and passes ------===*\
|*                                                                            *|
|* Embedding cachet from C (or from a language with a C FFI): the dialect     *|
|* handle, pass registration and the built-in device profiles. Link           *|
|* libCachetCAPI.so, which also exports the upstream MLIR C API (mlir-c/IR.h, *|
|* mlir-c/Pass.h).                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef CACHET_C_DIALECT_H
#define CACHET_C_DIALECT_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Returns the handle of the cachet dialect (mlirDialectHandleRegisterDialect
 *  and mlirDialectHandleLoadDialect take it). */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Cachet, cachet);

/** Registers every cachet pass and the cachet-compile pipeline with the
 *  global registry, so that mlirParsePassPipeline accepts them. Safe to call
 *  more than once. */
MLIR_CAPI_EXPORTED void cachetRegisterPasses(void);

/** Returns true if `type` is a cachet block-quantized element type. */
MLIR_CAPI_EXPORTED bool cachetTypeIsBlockQuantized(MlirType type);

/** Returns the bytes of one block of a block-quantized type, 0 otherwise. */
MLIR_CAPI_EXPORTED unsigned
cachetBlockQuantizedTypeGetBlockBytes(MlirType type);

/** Returns the values one block of a block-quantized type holds, 0
 *  otherwise. */
MLIR_CAPI_EXPORTED unsigned
cachetBlockQuantizedTypeGetBlockValues(MlirType type);

/** Returns the number of built-in device profiles. */
MLIR_CAPI_EXPORTED intptr_t cachetGetNumBuiltinProfiles(void);

/** Returns the name of built-in device profile `pos`. */
MLIR_CAPI_EXPORTED MlirStringRef cachetGetBuiltinProfileName(intptr_t pos);

#ifdef __cplusplus
}
#endif

#endif /* CACHET_C_DIALECT_H */
