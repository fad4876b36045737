//===- RowPadding.h - when padding weight rows pays off --------*- C++ -*-===//
//
// The cost function of `cachet-pad-weight-rows`. A cache maps an address to
// a set by (address / line) mod sets, so addresses `line x sets` bytes apart
// (the alias stride) share a set. When a weight's row size is a multiple of
// the alias stride, the same column of consecutive rows lands in one set and
// a kernel that walks rows in parallel thrashes it. Growing the row stride
// by a pad that is not a multiple of the alias stride spreads those columns
// over the sets.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_ANALYSIS_ROWPADDING_H
#define CACHET_ANALYSIS_ROWPADDING_H

#include "cachet/Analysis/WeightRows.h"
#include "cachet/Dialect/CachetDialect.h"

#include <cstdint>
#include <optional>
#include <string>

namespace cachet {

/// Alignment in bytes that a pad must keep: the kernels read rows with
/// 16-byte vector loads.
constexpr int64_t kRowPadVectorAlignment = 16;

/// The parameters of the decision, after options override the profile.
struct RowPadParams {
  /// Bytes between addresses that share a cache set (line x sets); 0 means
  /// no aliasing was measured for the device.
  int64_t aliasStride = 0;
  /// Bytes added to each aliasing row.
  int64_t pad = 0;
  /// Says where the values came from, for remarks, e.g. "profile 'gfx1151'".
  std::string origin;
};

/// Resolves the parameters: a non-negative option wins over the profile
/// (`alias_stride`; `alias_pad`, where 0 means one `cache_line`). A negative
/// option other than -1 is kept so that decideRowPad rejects it. Returns
/// std::nullopt, with `reason` set, when a parameter is neither given as an
/// option nor available from a profile.
std::optional<RowPadParams> resolveRowPadParams(DeviceProfileAttr profile,
                                                int64_t aliasStrideOption,
                                                int64_t padOption,
                                                std::string &reason);

/// The decision for one weight.
struct RowPadDecision {
  /// Bytes added to each row; 0 means the weight keeps its layout.
  int64_t pad = 0;
  /// Why, as a remark fragment: the condition that held or failed.
  std::string reason;
};

/// Decides whether the rows of a weight with row shape `shape` are padded.
/// Pads by `params.pad` if and only if:
///   - the alias stride is non-zero (the device aliases at all),
///   - the alias stride is a power of two (a cache set index is a bit field),
///   - the pad is positive and not a multiple of the alias stride (such a
///     pad maps every row to the same set again),
///   - the pad is a multiple of the element size and of
///     kRowPadVectorAlignment (the kernels' element and vector alignment),
///   - the weight has more than one row, and
///   - the row size in bytes is a multiple of the alias stride.
RowPadDecision decideRowPad(const RowPadParams &params,
                            const WeightRowShape &shape);

} // namespace cachet

#endif // CACHET_ANALYSIS_ROWPADDING_H
