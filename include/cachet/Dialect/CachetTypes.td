//===- CachetTypes.td - ggml block-quantized element types -*- tablegen -*-===//

#ifndef CACHET_DIALECT_CACHETTYPES_TD
#define CACHET_DIALECT_CACHETTYPES_TD

include "cachet/Dialect/CachetDialect.td"
include "cachet/Dialect/CachetTypeInterfaces.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

/// One ggml block of `values` values (32, or 256 for the k-quants' super-
/// blocks). `bytes` is the block size in bytes, `layout` the byte layout and
/// `formula` the value of element i, both as in ggml.
class Cachet_BlockType<string name, string typeMnemonic, int values, int bytes,
                       bit hasMin, string layout, string formula>
    : TypeDef<Cachet_Dialect, name,
              [Cachet_BlockQuantizedTypeInterface, MemRefElementTypeInterface]> {
  let mnemonic = typeMnemonic;
  let summary = "ggml " # typeMnemonic # " block: " # values # " values in " #
                bytes # " bytes";
  let description = !strconcat([{
    One element is one ggml `}], typeMnemonic, [{` block of }],
    !cast<string>(values), [{ values, byte-compatible with ggml. `d`, `m`
    and `dmin` are IEEE f16.

    * bytes per block: }], !cast<string>(bytes), [{
    * layout: }], layout, [{
    * value i (0 <= i < }], !cast<string>(values), [{): }], formula, [{

    A tensor `tensor<... x N x !cachet.}], typeMnemonic,
    [{>` holds `}], !cast<string>(values), [{ * N` values along its innermost
    dimension. }],
    !if(!eq(values, 32),
        "A llama.cpp KV cache of one layer is `tensor<S x Hkv x (D/32) x "
            # "!cachet." # typeMnemonic # ">` (token-major).",
        "A super-block format for weights (GGUF files' k-quants and "
            # "ternary formats): "
            # "`cachet.dequantize` and the mat-vec kernels take it; KV "
            # "caches (`cachet.dequant_transpose`, attention) and "
            # "`cachet.quantize` take the 32-value formats only."));
  let extraClassDeclaration = [{
    unsigned getBlockValues() const { return }] # values # [{; }
    unsigned getBlockBytes() const { return }] # bytes # [{; }
    ::llvm::StringRef getFormatName() const { return "}] # typeMnemonic # [{"; }
    bool hasMinimum() const { return }] # !if(hasMin, "true", "false") # [{; }
  }];
}

def Cachet_Q8_0Type : Cachet_BlockType<"Q8_0", "q8_0", 32, 34, 0,
    "`d`, `int8 qs[32]`", "`d * qs[i]`">;
def Cachet_Q4_0Type : Cachet_BlockType<"Q4_0", "q4_0", 32, 18, 0,
    "`d`, `uint8 qs[16]`",
    "`d * ((i < 16 ? qs[i] & 15 : qs[i - 16] >> 4) - 8)`">;
def Cachet_Q4_1Type : Cachet_BlockType<"Q4_1", "q4_1", 32, 20, 1,
    "`d`, `m`, `uint8 qs[16]`",
    "`d * nibble(i) + m`, nibble(i) = `i < 16 ? qs[i] & 15 : qs[i - 16] >> 4`">;
def Cachet_Q5_0Type : Cachet_BlockType<"Q5_0", "q5_0", 32, 22, 0,
    "`d`, `uint8 qh[4]`, `uint8 qs[16]`",
    "`d * ((nibble(i) | bit(qh, i) << 4) - 16)`, bit(qh, i) = bit i of the "
    "little-endian 32-bit word `qh`">;
def Cachet_Q5_1Type : Cachet_BlockType<"Q5_1", "q5_1", 32, 24, 1,
    "`d`, `m`, `uint8 qh[4]`, `uint8 qs[16]`",
    "`d * (nibble(i) | bit(qh, i) << 4) + m`">;
def Cachet_IQ4_NLType : Cachet_BlockType<"IQ4_NL", "iq4_nl", 32, 18, 0,
    "`d`, `uint8 qs[16]`",
    "`d * kvalues[nibble(i)]`, kvalues = -127 -104 -83 -65 -49 -35 -22 -10 1 "
    "13 25 38 53 69 89 113">;

def Cachet_Q2_KType : Cachet_BlockType<"Q2_K", "q2_K", 256, 84, 1,
    "`uint8 scales[16]`, `uint8 qs[64]`, `d`, `dmin` (last); run s = i / 16 "
    "(16 values) has the 4-bit scale `scales[s] & 15` and min "
    "`scales[s] >> 4`",
    "`(d * (scales[s] & 15)) * q - (dmin * (scales[s] >> 4))` with q = bits "
    "2t, 2t + 1 of `qs[32 (i / 128) + i % 32]`, t = (i % 128) / 32">;
def Cachet_Q3_KType : Cachet_BlockType<"Q3_K", "q3_K", 256, 110, 0,
    "`uint8 hmask[32]`, `uint8 qs[64]`, `uint8 scales[12]`, `d` (last); "
    "with h = i / 128, r = i % 128, t = r / 32, l = r % 32: the low 2 bits "
    "of q are bits 2t, 2t + 1 of `qs[32 h + l]`, its high bit bit 4h + t of "
    "`hmask[l]`; the 6-bit scale j = i / 16 is the low nibble of "
    "`scales[j]` (j < 8) or the high nibble of `scales[j - 8]`, with bits "
    "2 (j / 4), 2 (j / 4) + 1 of `scales[8 + j % 4]` above it",
    "`(d * (sc(j) - 32)) * (q2 - (high bit ? 0 : 4))` with q2 the low 2 bits">;
def Cachet_Q4_KType : Cachet_BlockType<"Q4_K", "q4_K", 256, 144, 1,
    "`d`, `dmin`, `uint8 scales[12]`, `uint8 qs[128]`; sub-block j (32 "
    "values) has a 6-bit scale sc(j) and min m(j): for j < 4 `scales[j] & 63` "
    "and `scales[j + 4] & 63`, else `(scales[j + 4] & 15) | (scales[j - 4] "
    ">> 6) << 4` and `(scales[j + 4] >> 4) | (scales[j] >> 6) << 4`",
    "`(d * sc(j)) * q - (dmin * m(j))` with j = i / 32 and q the low nibble "
    "of `qs[32 * (i / 64) + i % 32]` for i % 64 < 32, else its high nibble">;
def Cachet_Q5_KType : Cachet_BlockType<"Q5_K", "q5_K", 256, 176, 1,
    "`d`, `dmin`, `uint8 scales[12]` (as q4_K's), `uint8 qh[32]`, "
    "`uint8 qs[128]`; the fifth bit of value i is bit j = i / 32 of "
    "`qh[i % 32]`",
    "`(d * sc(j)) * q - (dmin * m(j))` with q the nibble of `qs[32 * (i / "
    "64) + i % 32]` (low for i % 64 < 32, else high) plus 16 where that "
    "bit is set">;
def Cachet_Q6_KType : Cachet_BlockType<"Q6_K", "q6_K", 256, 210, 0,
    "`uint8 ql[128]`, `uint8 qh[64]`, `int8 scales[16]`, `d` (last); with "
    "h = i / 128, r = i % 128, t = r / 32, l = r % 32: the low 4 bits of q in "
    "`ql[64 h + l + 32 (t % 2)]` (low nibble for t < 2, else high), the high "
    "2 in bits 2t, 2t + 1 of `qh[32 h + l]`",
    "`(d * scales[8 h + l / 16 + 2 t]) * (q - 32)`">;

def Cachet_TQ2_0Type : Cachet_BlockType<"TQ2_0", "tq2_0", 256, 66, 0,
    "`uint8 qs[64]`, `d` (last): four 2-bit quants per byte",
    "`(q - 1) * d` (ternary) with q = bits 2t, 2t + 1 of "
    "`qs[32 (i / 128) + i % 32]`, t = (i % 128) / 32">;
def Cachet_TQ1_0Type : Cachet_BlockType<"TQ1_0", "tq1_0", 256, 54, 0,
    "`uint8 qs[48]`, `uint8 qh[4]`, `d` (last): five base-3 digits per byte "
    "of qs, four per byte of qh",
    "`(t - 1) * d` (ternary) with t = `(uint8)(b * 3^n) * 3 >> 8` and: for "
    "i < 160, b = `qs[i % 32]`, n = i / 32; for i < 240, b = "
    "`qs[32 + (i - 160) % 16]`, n = (i - 160) / 16; else b = "
    "`qh[(i - 240) % 4]`, n = (i - 240) / 4">;

/// Any block-quantized element type.
def Cachet_AnyBlockType
    : Type<CPred<"::llvm::isa<::cachet::BlockQuantizedType>($_self)">,
           "ggml block-quantized type", "::cachet::BlockQuantizedType">;

#endif // CACHET_DIALECT_CACHETTYPES_TD
