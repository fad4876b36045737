//===- CachetTypeInterfaces.td - block-quantized type interface -*- tablegen -*-===//

#ifndef CACHET_DIALECT_CACHETTYPEINTERFACES_TD
#define CACHET_DIALECT_CACHETTYPEINTERFACES_TD

include "mlir/IR/OpBase.td"

def Cachet_BlockQuantizedTypeInterface
    : TypeInterface<"BlockQuantizedType"> {
  let cppNamespace = "::cachet";
  let description = [{
    An element type that stands for one block of a ggml block-quantized format:
    `getBlockValues()` values stored in `getBlockBytes()` bytes. A tensor of
    such elements whose innermost dimension is `n` holds `n * getBlockValues()`
    values along that dimension.
  }];
  let methods = [
    InterfaceMethod<"Returns the number of values one block holds.",
                    "unsigned", "getBlockValues">,
    InterfaceMethod<"Returns the number of bytes one block occupies.",
                    "unsigned", "getBlockBytes">,
    InterfaceMethod<"Returns the format's ggml name, for example `q8_0`.",
                    "::llvm::StringRef", "getFormatName">,
    InterfaceMethod<"Returns true if the block stores an f16 offset `m`.",
                    "bool", "hasMinimum">,
  ];
}

#endif // CACHET_DIALECT_CACHETTYPEINTERFACES_TD
