//===- CachetAttrs.td - cachet attributes ------------------*- tablegen -*-===//

#ifndef CACHET_DIALECT_CACHETATTRS_TD
#define CACHET_DIALECT_CACHETATTRS_TD

include "cachet/Dialect/CachetDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// KV cache layout
//===----------------------------------------------------------------------===//

def Cachet_TokenMajor : I32EnumAttrCase<"TokenMajor", 0, "token_major">;
def Cachet_HeadMajor : I32EnumAttrCase<"HeadMajor", 1, "head_major">;
def Cachet_KVLayout : I32EnumAttr<"KVLayout",
    "layout of a KV cache operand",
    [Cachet_TokenMajor, Cachet_HeadMajor]> {
  let cppNamespace = "::cachet";
  let genSpecializedAttr = 0;
}
def Cachet_KVLayoutAttr : EnumAttr<Cachet_Dialect, Cachet_KVLayout, "kv_layout"> {
  let summary = "KV cache layout: token_major [pos][kv_head][dim] or "
                "head_major [kv_head][pos][dim]";
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Rounding of cachet.quantize
//===----------------------------------------------------------------------===//

def Cachet_RoundAway : I32EnumAttrCase<"Away", 0, "away">;
def Cachet_RoundEven : I32EnumAttrCase<"Even", 1, "even">;
def Cachet_Rounding : I32EnumAttr<"Rounding",
    "how cachet.quantize rounds q8_0 quants",
    [Cachet_RoundAway, Cachet_RoundEven]> {
  let cppNamespace = "::cachet";
  let genSpecializedAttr = 0;
}
def Cachet_RoundingAttr : EnumAttr<Cachet_Dialect, Cachet_Rounding, "rounding"> {
  let summary = "q8_0 quant rounding: away (C roundf, ggml's reference: "
                "halves away from zero) or even (halves to even, "
                "math.roundeven)";
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Device profile
//===----------------------------------------------------------------------===//

/// A double, stored as an APFloat (hashable), written as a plain number.
class Cachet_F64Parameter<string desc>
    : AttrParameter<"::llvm::APFloat", desc> {
  let comparator = "$_lhs.bitwiseIsEqual($_rhs)";
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::APFloat> {
    double value;
    if ($_parser.parseFloat(value))
      return ::mlir::failure();
    return ::llvm::APFloat(value);
  }() }];
  let printer = [{ $_printer << $_self.convertToDouble() }];
}

class Cachet_BoolParameter<string desc> : AttrParameter<"bool", desc> {
  let parser = [{ [&]() -> ::mlir::FailureOr<bool> {
    if (::mlir::succeeded($_parser.parseOptionalKeyword("true")))
      return true;
    if (::mlir::succeeded($_parser.parseOptionalKeyword("false")))
      return false;
    return $_parser.emitError($_parser.getCurrentLocation(),
                              "expected 'true' or 'false'");
  }() }];
  let printer = [{ $_printer << ($_self ? "true" : "false") }];
}

def Cachet_DeviceProfileAttr : AttrDef<Cachet_Dialect, "DeviceProfile"> {
  let mnemonic = "device";
  let summary = "cache geometry, bandwidth and capabilities of one device";
  let description = [{
    The device profile every cachet pass reads from the module attribute
    `cachet.device`. `cachet-attach-device{profile=NAME|file.json}` attaches
    one; docs/device-profiles.md documents every field and where the
    built-in values come from.

    ```mlir
    module attributes {cachet.device = #cachet.device<name = "gfx1151",
        vendor = "amd", arch = "gfx1151", cache_line = 128, l2_bytes = 2097152,
        alias_stride = 2048, alias_pad = 128, compute_units = 40,
        dram_gbps = 256.0, unified_memory = true, strided_read_penalty = 3.2,
        pdl = false, l2_prefetch = "none",
        coop_matrix = ["16x16x16:f16->f32"], subgroup_size = 32,
        shared_memory_bytes = 65536>} {}
    ```
  }];
  let parameters = (ins
    StringRefParameter<"profile name">:$name,
    StringRefParameter<"vendor: nvidia, amd, mesa or generic">:$vendor,
    StringRefParameter<"architecture, for example sm_90 or gfx1151">:$arch,
    "uint64_t":$cache_line,
    "uint64_t":$l2_bytes,
    "uint64_t":$alias_stride,
    "uint64_t":$alias_pad,
    "uint64_t":$compute_units,
    Cachet_F64Parameter<"DRAM bandwidth in GB/s">:$dram_gbps,
    Cachet_BoolParameter<"host and device share memory">:$unified_memory,
    Cachet_F64Parameter<"strided / sequential read time">:$strided_read_penalty,
    Cachet_BoolParameter<"programmatic dependent launch">:$pdl,
    StringRefParameter<"L2 prefetch instruction kind">:$l2_prefetch,
    "::mlir::ArrayAttr":$coop_matrix,
    "uint64_t":$subgroup_size,
    "uint64_t":$shared_memory_bytes
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // CACHET_DIALECT_CACHETATTRS_TD
