//===- CachetTypes.td - ggml block-quantized element types -*- tablegen -*-===//

#ifndef CACHET_DIALECT_CACHETTYPES_TD
#define CACHET_DIALECT_CACHETTYPES_TD

include "cachet/Dialect/CachetDialect.td"
include "cachet/Dialect/CachetTypeInterfaces.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

/// One ggml block of 32 values. `bytes` is the block size in bytes, `layout`
/// the byte layout and `formula` the value of element i, both as in ggml.
class Cachet_BlockType<string name, string typeMnemonic, int bytes,
                       bit hasMin, string layout, string formula>
    : TypeDef<Cachet_Dialect, name,
              [Cachet_BlockQuantizedTypeInterface, MemRefElementTypeInterface]> {
  let mnemonic = typeMnemonic;
  let summary = "ggml " # typeMnemonic # " block: 32 values in " # bytes # " bytes";
  let description = !strconcat([{
    One element is one ggml `}], typeMnemonic, [{` block of 32 values,
    byte-compatible with ggml. `d` and `m` are IEEE f16.

    * bytes per block: }], !cast<string>(bytes), [{
    * layout: }], layout, [{
    * value i (0 <= i < 32): }], formula, [{

    A tensor `tensor<... x N x !cachet.}], typeMnemonic,
    [{>` holds `32 * N` values along its innermost dimension. A llama.cpp KV
    cache of one layer is `tensor<S x Hkv x (D/32) x !cachet.}], typeMnemonic,
    [{>` (token-major).
  }]);
  let extraClassDeclaration = [{
    unsigned getBlockValues() const { return 32; }
    unsigned getBlockBytes() const { return }] # bytes # [{; }
    ::llvm::StringRef getFormatName() const { return "}] # typeMnemonic # [{"; }
    bool hasMinimum() const { return }] # !if(hasMin, "true", "false") # [{; }
  }];
}

def Cachet_Q8_0Type : Cachet_BlockType<"Q8_0", "q8_0", 34, 0,
    "`d`, `int8 qs[32]`", "`d * qs[i]`">;
def Cachet_Q4_0Type : Cachet_BlockType<"Q4_0", "q4_0", 18, 0,
    "`d`, `uint8 qs[16]`",
    "`d * ((i < 16 ? qs[i] & 15 : qs[i - 16] >> 4) - 8)`">;
def Cachet_Q4_1Type : Cachet_BlockType<"Q4_1", "q4_1", 20, 1,
    "`d`, `m`, `uint8 qs[16]`",
    "`d * nibble(i) + m`, nibble(i) = `i < 16 ? qs[i] & 15 : qs[i - 16] >> 4`">;
def Cachet_Q5_0Type : Cachet_BlockType<"Q5_0", "q5_0", 22, 0,
    "`d`, `uint8 qh[4]`, `uint8 qs[16]`",
    "`d * ((nibble(i) | bit(qh, i) << 4) - 16)`, bit(qh, i) = bit i of the "
    "little-endian 32-bit word `qh`">;
def Cachet_Q5_1Type : Cachet_BlockType<"Q5_1", "q5_1", 24, 1,
    "`d`, `m`, `uint8 qh[4]`, `uint8 qs[16]`",
    "`d * (nibble(i) | bit(qh, i) << 4) + m`">;
def Cachet_IQ4_NLType : Cachet_BlockType<"IQ4_NL", "iq4_nl", 18, 0,
    "`d`, `uint8 qs[16]`",
    "`d * kvalues[nibble(i)]`, kvalues = -127 -104 -83 -65 -49 -35 -22 -10 1 "
    "13 25 38 53 69 89 113">;

/// Any block-quantized element type.
def Cachet_AnyBlockType
    : Type<CPred<"::llvm::isa<::cachet::BlockQuantizedType>($_self)">,
           "ggml block-quantized type", "::cachet::BlockQuantizedType">;

#endif // CACHET_DIALECT_CACHETTYPES_TD
