/*===- capi-test.c - embeds cachet through its C API --------------------===*\
|* Registers the dialect and passes through the C API, parses a module that  *|
|* uses cachet types and ops, runs cachet-attach-device and prints the       *|
|* result. test/CAPI/capi.test checks the output.                            *|
\*===----------------------------------------------------------------------===*/

#include "cachet-c/Dialect.h"

#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>
#include <stdlib.h>

static void printToStdout(MlirStringRef str, void *userData) {
  (void)userData;
  fwrite(str.data, 1, str.length, stdout);
}

static const char *kModule =
    "module {\n"
    "  %kq = builtin.unrealized_conversion_cast to "
    "tensor<16x2x4x!cachet.q4_0>\n"
    "  %k = cachet.dequantize %kq : tensor<16x2x4x!cachet.q4_0> -> "
    "tensor<16x2x128xf16>\n"
    "}\n";

/* Runs `pipeline` on `source` and prints the module, or reports failure. */
static int runPipeline(MlirContext ctx, const char *source,
                       const char *pipeline) {
  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(source));
  if (mlirModuleIsNull(module)) {
    printf("parse failed\n");
    return 1;
  }
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  MlirLogicalResult parsed = mlirParsePassPipeline(
      opm, mlirStringRefCreateFromCString(pipeline), printToStdout, NULL);
  if (mlirLogicalResultIsFailure(parsed)) {
    printf("\npipeline parse failed\n");
    mlirPassManagerDestroy(pm);
    mlirModuleDestroy(module);
    return 1;
  }
  MlirLogicalResult ran =
      mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
  int status = 0;
  if (mlirLogicalResultIsFailure(ran)) {
    fflush(stderr);
    printf("pass failed\n");
    status = 1;
  } else {
    mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
    printf("\n");
    fflush(stdout);
  }
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  return status;
}

int main(void) {
  MlirContext ctx = mlirContextCreate();
  MlirDialectHandle cachet = mlirGetDialectHandle__cachet__();
  mlirDialectHandleRegisterDialect(cachet, ctx);
  mlirDialectHandleLoadDialect(cachet, ctx);
  cachetRegisterPasses();

  printf("namespace: %.*s\n", (int)mlirDialectHandleGetNamespace(cachet).length,
         mlirDialectHandleGetNamespace(cachet).data);
  for (intptr_t i = 0, e = cachetGetNumBuiltinProfiles(); i < e; ++i) {
    MlirStringRef name = cachetGetBuiltinProfileName(i);
    printf("profile: %.*s\n", (int)name.length, name.data);
  }

  MlirType q8 =
      mlirTypeParseGet(ctx, mlirStringRefCreateFromCString("!cachet.q8_0"));
  MlirType f16 = mlirF16TypeGet(ctx);
  printf("q8_0 block-quantized: %d, bytes %u, values %u\n",
         cachetTypeIsBlockQuantized(q8),
         cachetBlockQuantizedTypeGetBlockBytes(q8),
         cachetBlockQuantizedTypeGetBlockValues(q8));
  printf("f16 block-quantized: %d, bytes %u, values %u\n",
         cachetTypeIsBlockQuantized(f16),
         cachetBlockQuantizedTypeGetBlockBytes(f16),
         cachetBlockQuantizedTypeGetBlockValues(f16));

  fflush(stdout);
  int status = runPipeline(
      ctx, kModule, "builtin.module(cachet-attach-device{profile=gfx1151})");
  status |= !runPipeline(
      ctx, kModule, "builtin.module(cachet-attach-device{profile=nosuch})");
  mlirContextDestroy(ctx);
  return status;
}
