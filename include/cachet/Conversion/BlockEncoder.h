//===- BlockEncoder.h - encode ggml blocks in IR ----------------*- C++ -*-===//
//
// Emits the encoding of one ggml block (q8_0, q4_0, q4_1, q5_0, q5_1,
// iq4_nl) from its 32 values with the f32 arithmetic of ggml's reference
// quantizers (`quantize_row_*_ref`). The values are read through a callback,
// so the reference lowering (tensor elements) and a hand-written kernel can
// share it and write the same bytes; or a group of a subgroup's lanes holds
// the block (LaneValues), each lane a few of its values, and the scans run
// over the lanes' values through shuffles in the same order, so that those
// bytes are the same bits too.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_CONVERSION_BLOCKENCODER_H
#define CACHET_CONVERSION_BLOCKENCODER_H

#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

#include <functional>
#include <optional>
#include <utility>

namespace cachet {

/// Encodes blocks of one format. Each call scans the block's 32 values (an
/// scf.for) and computes what it returns from them, so that every byte of a
/// block can be computed independently (one GPU thread per byte); or the
/// lanes holding a block (LaneValues) scan it together once and each store
/// some of its bytes (encodeLaneBytes), the same bytes.
class BlockEncoder {
public:
  /// Reads value `lane` (an index in [0, 32)) of the block as f32.
  using ValueReader = std::function<mlir::Value(mlir::OpBuilder &,
                                                mlir::Location, mlir::Value)>;

  BlockEncoder(mlir::OpBuilder &b, mlir::Location loc, BlockQuantizedType type,
               Rounding rounding, ValueReader readValue);

  /// A block held by `lanes` consecutive lanes of a subgroup: this lane
  /// holds values `lane + lanes * k` (as f32) in `slots[k]`; the other
  /// lanes' values are read with gpu.shuffle (idx, of `width`, the
  /// subgroup's size), so every use must be reached by all lanes of the
  /// subgroup (no divergent branch around the encoder's code).
  struct LaneValues {
    llvm::SmallVector<mlir::Value> slots;
    /// This lane's place in the block's group ([0, lanes)) and the
    /// subgroup lane of the group's first lane (i32 each).
    mlir::Value lane, first;
    /// Lanes per block (a power of two dividing 32) and the subgroup size.
    int64_t lanes = 32, width = 32;
  };
  BlockEncoder(mlir::OpBuilder &b, mlir::Location loc, BlockQuantizedType type,
               Rounding rounding, LaneValues laneValues);

  /// A byte this lane stores (LaneValues): its offset in the block (an
  /// index), its value (i8) and whether this lane stores it (i1).
  struct LaneByte {
    mlir::Value offset, value, stores;
  };
  /// The block's bytes, spread over its lanes (LaneValues): each byte is
  /// one lane's, and equals encodeByte's. The scans read the other lanes'
  /// values in the block's order, so the arithmetic is the same.
  llvm::SmallVector<LaneByte> encodeLaneBytes();

  /// Returns byte `byte` (an index in [0, block bytes)) of the block, as i8.
  mlir::Value encodeByte(mlir::Value byte);

  /// Returns the q8_0 quant of value `lane` (an index), as i8, and the
  /// block's scale `d`, as f16 (the split q8_0 form).
  std::pair<mlir::Value, mlir::Value> encodeQ8(mlir::Value lane);

  /// Returns the 32 q8_0 quants of the block (i8, scanning it once) and its
  /// scale `d` (f16).
  std::pair<llvm::SmallVector<mlir::Value>, mlir::Value> encodeQ8Block();

private:
  struct Params;
  /// Carries `init` over the block's 32 values in order: `terms` computes
  /// a value's terms (read in a loop, or for a lane's own values, then
  /// shuffled), `body` the next carried values from them.
  using TermsFn = llvm::function_ref<llvm::SmallVector<mlir::Value>(
      mlir::OpBuilder &, mlir::Value)>;
  using BodyFn = llvm::function_ref<llvm::SmallVector<mlir::Value>(
      mlir::OpBuilder &, mlir::ValueRange, mlir::ValueRange)>;
  llvm::SmallVector<mlir::Value> forEachValue(mlir::ValueRange init,
                                              TermsFn terms, BodyFn body);
  mlir::Value shuffle(mlir::Value value, int64_t fromLane);
  /// The scan of the block's values (forEachValue of `body` over them);
  /// for a block held by lanes, `tree` (combining the lanes' values with
  /// butterfly), which must give the scan's result, or with
  /// `nanTakesOrder` the scan's where a value is NaN (q8_0's MAX keeps a
  /// NaN until the next value) and `tree`'s where none is.
  llvm::SmallVector<mlir::Value>
  scanValues(mlir::ValueRange init, BodyFn body,
             llvm::function_ref<llvm::SmallVector<mlir::Value>()> tree,
             bool nanTakesOrder = false);
  /// Combines `values` over the block's lanes with xor shuffles:
  /// `combine(mine, other)` returns the values both lanes keep.
  llvm::SmallVector<mlir::Value>
  butterfly(llvm::SmallVector<mlir::Value> values,
            llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::ValueRange,
                                                              mlir::ValueRange)>
                combine);
  /// The index in the block (i32) of this lane's value in `slot`.
  mlir::Value valueIndex(int64_t slot);
  /// Whether candidate (`value`, index `j`) comes before (`than`,
  /// `thanJ`): `better` holds strictly, or they are equal and `j` is the
  /// earlier (as the in-order scan keeps the first).
  mlir::Value firstOf(mlir::arith::CmpFPredicate better, mlir::Value value,
                      mlir::Value j, mlir::Value than, mlir::Value thanJ);
  Params scan();
  /// encodeByte from `params`; `scale` computes the scale the block
  /// stores (in the branch of the scale's bytes).
  mlir::Value encodeByte(mlir::Value byte, const Params &params,
                         llvm::function_ref<mlir::Value()> scale);
  mlir::Value quant(const Params &params, mlir::Value lane);
  /// The quant of value `x` (f32) as i32, before packing.
  mlir::Value quantOf(const Params &params, mlir::Value x);
  mlir::Value iq4Scale(const Params &params);
  /// The scale the block stores, before its rounding to f16: d, or
  /// iq4_nl's least-squares fit.
  mlir::Value storedScale(const Params &params);
  mlir::Value halfByte(mlir::Value value, mlir::Value which);
  mlir::Value roundToInt(mlir::Value value);
  mlir::Value select(mlir::Value cond, mlir::Value a, mlir::Value b);
  mlir::Value f32(double value);
  mlir::Value i32(int32_t value);
  mlir::Value index(int64_t value);

  mlir::OpBuilder &b;
  mlir::Location loc;
  BlockQuantizedType type;
  Rounding rounding;
  ValueReader readValue;
  /// Set for a block held by a subgroup's lanes.
  std::optional<LaneValues> laneValues;
};

} // namespace cachet

#endif // CACHET_CONVERSION_BLOCKENCODER_H
