//===- DequantOnceCost.h - does dequantizing a KV cache once pay? ---------===//
//
// The cost function behind cachet-dequant-once-kv. It compares, for one
// attention over a block-quantized token-major KV cache, two ways of running
// it on the device described by a profile:
//
//   in-kernel   every query tile dequantizes the K/V rows it reads. One KV
//               head's rows are Hkv rows apart in a token-major cache, so
//               every read pays the strided-read penalty.
//   once        one cachet.dequant_transpose reads the quantized cache
//               sequentially and writes f16 [kv_head][pos][dim]; every query
//               tile then reads contiguous f16 rows.
//
// With
//   G * Sq  queries per KV head,   T  query rows per tile (the M of the
//   profile's f16 cooperative-matrix shape, else its subgroup size),
//   P = ceil(G * Sq / T)  passes over K/V (one per tile of a head group),
//   Bq  quantized K+V bytes,  Bf  f16 K+V bytes = 2 * Hkv * S * (D + Dv),
//   pen  strided_read_penalty when Hkv > 1 (else 1),
//   c    in-kernel dequant cost in f16-byte equivalents per value decoded:
//        1 with cooperative matrices (a quantized tile cannot be loaded into
//        a cooperative matrix directly: it is decoded and staged through
//        shared memory, about one more f16 tile round trip), 0.25 without
//        (a scalar kernel overlaps the decode with its dot products),
//   bw   dram_gbps (1 GB/s = 1e3 bytes per microsecond),
//
//   t_in_kernel = P * (Bq * pen + c * Bf) / bw
//   t_once      = (Bq + Bf) / bw + P * Bf / bw
//
// and the rewrite pays when t_once < t_in_kernel. unified_memory is not a
// separate term: what it changes (LPDDR bandwidth, the penalty of reading
// one head at a time) is already in dram_gbps and strided_read_penalty.
// Decode-shaped attention (G * Sq below `min-queries`) is never rewritten:
// one tile reads K/V once anyway, and the extra launch and scratch round
// trip per token are latency the byte model does not count.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_ANALYSIS_DEQUANTONCECOST_H
#define CACHET_ANALYSIS_DEQUANTONCECOST_H

#include "cachet/Dialect/CachetDialect.h"

#include <cstdint>

namespace cachet {

/// The shapes of one attention over a quantized token-major KV cache.
struct KVAttentionShape {
  int64_t queryHeads = 0; ///< Hq
  int64_t queries = 0;    ///< Sq
  int64_t kvHeads = 0;    ///< Hkv
  int64_t positions = 0;  ///< S
  int64_t headDim = 0;    ///< D
  int64_t valueDim = 0;   ///< Dv
  /// Bytes of the quantized K and V caches together.
  int64_t quantizedBytes = 0;
};

/// The numbers of one decision, for the remark.
struct DequantOnceEstimate {
  int64_t queriesPerKVHead = 0; ///< G * Sq
  int64_t tile = 0;             ///< T
  int64_t passes = 0;           ///< P
  double penalty = 1;           ///< pen
  double dequantCost = 0;       ///< c
  bool coopMatrix = false;      ///< the profile lists an f16 coop shape
  int64_t f16Bytes = 0;         ///< Bf
  double inKernelMicros = 0;    ///< t_in_kernel
  double onceMicros = 0;        ///< t_once
  /// t_once < t_in_kernel.
  bool pays() const { return onceMicros < inKernelMicros; }
};

/// Evaluates the cost function above for `shape` on `profile`. A negative
/// `dequantCost` selects the profile-derived default for c.
DequantOnceEstimate estimateDequantOnce(DeviceProfileAttr profile,
                                        const KVAttentionShape &shape,
                                        double dequantCost = -1);

} // namespace cachet

#endif // CACHET_ANALYSIS_DEQUANTONCECOST_H
