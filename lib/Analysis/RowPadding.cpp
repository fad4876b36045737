//===- RowPadding.cpp - when padding weight rows pays off ----------------===//

#include "cachet/Analysis/RowPadding.h"

#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace cachet;

std::optional<RowPadParams>
cachet::resolveRowPadParams(DeviceProfileAttr profile,
                            int64_t aliasStrideOption, int64_t padOption,
                            std::string &reason) {
  bool strideFromProfile = aliasStrideOption == -1;
  bool padFromProfile = padOption == -1;
  if (!profile && (strideFromProfile || padFromProfile)) {
    reason = "no #cachet.device profile on the module (run "
             "cachet-attach-device first, or give both alias-stride and pad)";
    return std::nullopt;
  }
  RowPadParams params;
  params.aliasStride = strideFromProfile
                           ? static_cast<int64_t>(profile.getAliasStride())
                           : aliasStrideOption;
  if (!padFromProfile)
    params.pad = padOption;
  else if (profile.getAliasPad() != 0)
    params.pad = static_cast<int64_t>(profile.getAliasPad());
  else
    params.pad = static_cast<int64_t>(profile.getCacheLine());

  llvm::raw_string_ostream os(params.origin);
  if (strideFromProfile || padFromProfile)
    os << "profile '" << profile.getName() << "'";
  if (!strideFromProfile || !padFromProfile) {
    os << (params.origin.empty() ? "" : " overridden by ") << "option";
    if (!strideFromProfile)
      os << " alias-stride=" << aliasStrideOption;
    if (!padFromProfile)
      os << " pad=" << padOption;
  }
  return params;
}

RowPadDecision cachet::decideRowPad(const RowPadParams &params,
                                    const WeightRowShape &shape) {
  RowPadDecision decision;
  llvm::raw_string_ostream os(decision.reason);
  int64_t stride = params.aliasStride;
  int64_t pad = params.pad;
  int64_t rowBytes = shape.getRowBytes();

  if (stride == 0) {
    os << "no alias stride (alias_stride = 0 from " << params.origin
       << "): the device shows no cache-set aliasing to avoid";
    return decision;
  }
  if (stride < 0) {
    os << "invalid alias stride " << stride << " B: negative";
    return decision;
  }
  if (!llvm::isPowerOf2_64(static_cast<uint64_t>(stride))) {
    os << "invalid alias stride " << stride << " B: not a power of two";
    return decision;
  }
  if (pad < 0) {
    os << "invalid pad " << pad << " B: negative";
    return decision;
  }
  if (pad % stride == 0) {
    os << "invalid pad " << pad << " B: a multiple of the alias stride "
       << stride << " B (rows would alias again)";
    return decision;
  }
  if (pad % shape.elementBytes != 0) {
    os << "invalid pad " << pad << " B: not a multiple of the element size "
       << shape.elementBytes << " B";
    return decision;
  }
  if (pad % kRowPadVectorAlignment != 0) {
    os << "invalid pad " << pad << " B: not a multiple of the "
       << kRowPadVectorAlignment << " B vector alignment the kernels need";
    return decision;
  }
  if (shape.rows && *shape.rows <= 1) {
    os << "a single row has no row stride";
    return decision;
  }
  if (rowBytes % stride != 0) {
    os << rowBytes << " B rows are not a multiple of the alias stride "
       << stride << " B";
    return decision;
  }
  decision.pad = pad;
  os << rowBytes << " B rows are a multiple of the alias stride " << stride
     << " B";
  return decision;
}
