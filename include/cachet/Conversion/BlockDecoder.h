//===- BlockDecoder.h - decode values of ggml blocks in IR -------*- C++
//-*-===//
//
// Emits the decoding of one value of a ggml block (q8_0, q4_0, q4_1, q5_0,
// q5_1, iq4_nl) as f32 arithmetic on its bytes. The bytes are read through a
// callback, so the same decoding serves the reference lowering (tensor
// elements) and hand-written kernels (global or workgroup memory): every
// path computes the same f32 value, bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_CONVERSION_BLOCKDECODER_H
#define CACHET_CONVERSION_BLOCKDECODER_H

#include "cachet/Dialect/CachetDialect.h"

#include "mlir/IR/Builders.h"

#include <functional>

namespace cachet {

/// Converts a float `value` to `type` (extf, truncf or nothing): how every
/// lowering turns decoded f32 values (and other floats) into the element
/// type it stores, so that all of them round the same way.
mlir::Value castFloat(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                      mlir::Type type);

/// Decodes values of blocks of one format.
class BlockDecoder {
public:
  /// Reads the byte at `offset` (an index) as an i8.
  using ByteReader = std::function<mlir::Value(
      mlir::OpBuilder &, mlir::Location, mlir::Value offset)>;

  BlockDecoder(mlir::OpBuilder &b, mlir::Location loc, BlockQuantizedType type,
               ByteReader readByte);

  /// Returns value `lane` (an index in [0, 32)) of the block whose first
  /// byte is at `blockOffset`, as f32. Reads of the same byte within one
  /// block are emitted once per call (CSE merges the rest).
  mlir::Value decode(mlir::Value blockOffset, mlir::Value lane);

  /// Returns value `valueIndex` (an index) of a row of blocks that starts at
  /// byte 0: lane `valueIndex % 32` of the block at byte
  /// `valueIndex / 32 * block bytes`.
  mlir::Value decodeValue(mlir::Value valueIndex);

private:
  mlir::Value readU8(int64_t offset);
  mlir::Value readF16(int64_t offset);
  mlir::Value nibble(mlir::Value lane);
  mlir::Value highBits();
  mlir::Value codeBook(mlir::Value quant);

  mlir::OpBuilder &b;
  mlir::Location loc;
  BlockQuantizedType type;
  ByteReader readByte;
  mlir::Value base;
};

} // namespace cachet

#endif // CACHET_CONVERSION_BLOCKDECODER_H
