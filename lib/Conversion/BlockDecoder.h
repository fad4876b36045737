//===- BlockDecoder.h - decode ggml block-quantized values ----*- C++ -*-===//
//
// The per-format decoding of one value from ggml block bytes, shared by the
// reference lowering (cachet-lower-to-linalg, reading a tensor) and the
// flash-attention kernels' in-kernel dequantization (cachet-lower-attention,
// reading a buffer): the same arithmetic, so both give the same f16 values.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_LIB_CONVERSION_BLOCKDECODER_H
#define CACHET_LIB_CONVERSION_BLOCKDECODER_H

#include "cachet/Dialect/CachetDialect.h"

#include "mlir/IR/Builders.h"

#include <functional>

namespace cachet {

/// How the 32 quants of a block are stored.
enum class QuantKind { Int8, Nibble, Nibble5, NibbleTable };

/// Byte layout of one ggml block (offsets in bytes from the block start; -1
/// where the field does not exist). `d` is always at offset 0.
struct BlockLayout {
  QuantKind kind;
  int minOffset;
  int highBitsOffset;
  int quantsOffset;
  /// Subtracted from the integer quant (formats without `m`).
  int bias;
};

/// Returns the byte layout of `type`'s blocks.
BlockLayout getBlockLayout(BlockQuantizedType type);

/// Emits the decoding of value `valueIndex` (along the innermost dimension,
/// in values) of a row of `type` blocks, as an f32 (as ggml computes it);
/// `readByte(offset)` emits the read of the row's byte at `offset` (an
/// index) and returns it as an i8.
class BlockDecoder {
public:
  BlockDecoder(mlir::OpBuilder &b, mlir::Location loc, BlockQuantizedType type,
               std::function<mlir::Value(mlir::Value)> readByte);

  /// Emits the decoding of value `valueIndex`.
  mlir::Value decode(mlir::Value valueIndex);

private:
  mlir::Value index(int64_t value);
  mlir::Value i32(int32_t value);
  /// Unsigned byte at `base + offset`, as i32.
  mlir::Value readU8(int64_t offset);
  /// Little-endian f16 at `base + offset`, as f32.
  mlir::Value readF16(int64_t offset);
  /// The 4-bit quant of `lane`: low nibbles hold lanes 0-15, high nibbles
  /// lanes 16-31.
  mlir::Value nibble(mlir::Value lane);
  /// The 32 high bits of q5 formats, a little-endian u32.
  mlir::Value highBits();
  /// kvalues[quant] of iq4_nl, as i32 (a select chain: no table in memory,
  /// so the kernel needs no extra buffer).
  mlir::Value codeBook(mlir::Value quant);

  mlir::OpBuilder &b;
  mlir::Location loc;
  BlockQuantizedType type;
  BlockLayout layout;
  std::function<mlir::Value(mlir::Value)> readByteAt;
  mlir::Value base;
};

} // namespace cachet

#endif // CACHET_LIB_CONVERSION_BLOCKDECODER_H
