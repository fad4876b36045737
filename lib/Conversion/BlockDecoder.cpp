//===- BlockDecoder.cpp - decode values of ggml blocks in IR -------------===//

#include "cachet/Conversion/BlockDecoder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace cachet;

namespace {

//===----------------------------------------------------------------------===//
// Block formats
//===----------------------------------------------------------------------===//

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

/// The iq4_nl code book.
constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                     1,    13,   25,  38,  53,  69,  89,  113};

BlockLayout getBlockLayout(BlockQuantizedType type) {
  return llvm::TypeSwitch<Type, BlockLayout>(type)
      .Case([](Q8_0Type) {
        return BlockLayout{QuantKind::Int8, -1, -1, 2, 0};
      })
      .Case([](Q4_0Type) {
        return BlockLayout{QuantKind::Nibble, -1, -1, 2, 8};
      })
      .Case([](Q4_1Type) {
        return BlockLayout{QuantKind::Nibble, 2, -1, 4, 0};
      })
      .Case([](Q5_0Type) {
        return BlockLayout{QuantKind::Nibble5, -1, 2, 6, 16};
      })
      .Case([](Q5_1Type) {
        return BlockLayout{QuantKind::Nibble5, 2, 4, 8, 0};
      })
      .Default([](Type) {
        return BlockLayout{QuantKind::NibbleTable, -1, -1, 2, 0};
      });
}

Value indexConst(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value i32Const(OpBuilder &b, Location loc, int32_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
}

} // namespace

/// Converts a float `value` to `type` (extf, truncf or nothing).
Value cachet::castFloat(OpBuilder &b, Location loc, Value value, Type type) {
  Type from = value.getType();
  if (from == type)
    return value;
  if (from.getIntOrFloatBitWidth() < type.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, type, value);
  return arith::TruncFOp::create(b, loc, type, value);
}

BlockDecoder::BlockDecoder(OpBuilder &b, Location loc, BlockQuantizedType type,
                           ByteReader readByte)
    : b(b), loc(loc), type(type), readByte(readByte) {}

Value BlockDecoder::decode(Value blockOffset, Value lane) {
  const BlockLayout layout = getBlockLayout(type);
  base = blockOffset;
  Value d = readF16(0);
  Type f32 = b.getF32Type();
  if (layout.kind == QuantKind::Int8) {
    Value laneByte = readByte(
        b, loc,
        arith::AddIOp::create(b, loc, arith::AddIOp::create(b, loc, base, lane),
                              indexConst(b, loc, layout.quantsOffset)));
    Value q = arith::SIToFPOp::create(b, loc, f32, laneByte);
    return arith::MulFOp::create(b, loc, q, d);
  }
  Value quant = nibble(lane);
  if (layout.kind == QuantKind::NibbleTable)
    return arith::MulFOp::create(
        b, loc, d, arith::SIToFPOp::create(b, loc, f32, codeBook(quant)));
  if (layout.kind == QuantKind::Nibble5) {
    Value lane32 = arith::IndexCastUIOp::create(b, loc, b.getI32Type(), lane);
    Value high = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, highBits(), lane32),
        i32Const(b, loc, 1));
    quant = arith::OrIOp::create(
        b, loc, quant,
        arith::ShLIOp::create(b, loc, high, i32Const(b, loc, 4)));
  }
  if (layout.minOffset >= 0) {
    Value m = readF16(layout.minOffset);
    Value scaled = arith::MulFOp::create(
        b, loc, d, arith::UIToFPOp::create(b, loc, f32, quant));
    return arith::AddFOp::create(b, loc, scaled, m);
  }
  Value centered =
      arith::SubIOp::create(b, loc, quant, i32Const(b, loc, layout.bias));
  return arith::MulFOp::create(b, loc, d,
                               arith::SIToFPOp::create(b, loc, f32, centered));
}

Value BlockDecoder::decodeValue(Value valueIndex) {
  Value c32 = indexConst(b, loc, 32);
  Value blockOffset = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, valueIndex, c32),
      indexConst(b, loc, type.getBlockBytes()));
  return decode(blockOffset, arith::RemUIOp::create(b, loc, valueIndex, c32));
}

/// Unsigned byte at `base + offset`, as i32.
Value BlockDecoder::readU8(int64_t offset) {
  Value byte = readByte(
      b, loc, arith::AddIOp::create(b, loc, base, indexConst(b, loc, offset)));
  return arith::ExtUIOp::create(b, loc, b.getI32Type(), byte);
}

/// Little-endian f16 at `base + offset`, as f32.
Value BlockDecoder::readF16(int64_t offset) {
  Value lo = readU8(offset);
  Value hi =
      arith::ShLIOp::create(b, loc, readU8(offset + 1), i32Const(b, loc, 8));
  Value bits = arith::TruncIOp::create(b, loc, b.getI16Type(),
                                       arith::OrIOp::create(b, loc, lo, hi));
  Value half = arith::BitcastOp::create(b, loc, b.getF16Type(), bits);
  return arith::ExtFOp::create(b, loc, b.getF32Type(), half);
}

/// The 4-bit quant of `lane`: low nibbles hold lanes 0-15, high nibbles
/// lanes 16-31.
Value BlockDecoder::nibble(Value lane) {
  const BlockLayout layout = getBlockLayout(type);
  Value c16 = indexConst(b, loc, 16);
  Value column = arith::RemUIOp::create(b, loc, lane, c16);
  Value half = arith::DivUIOp::create(b, loc, lane, c16);
  Value byte = readByte(
      b, loc,
      arith::AddIOp::create(b, loc, arith::AddIOp::create(b, loc, base, column),
                            indexConst(b, loc, layout.quantsOffset)));
  Value wide = arith::ExtUIOp::create(b, loc, b.getI32Type(), byte);
  Value shift = arith::MulIOp::create(
      b, loc, arith::IndexCastUIOp::create(b, loc, b.getI32Type(), half),
      i32Const(b, loc, 4));
  return arith::AndIOp::create(b, loc,
                               arith::ShRUIOp::create(b, loc, wide, shift),
                               i32Const(b, loc, 15));
}

/// The 32 high bits of q5 formats, a little-endian u32.
Value BlockDecoder::highBits() {
  const BlockLayout layout = getBlockLayout(type);
  Value word = readU8(layout.highBitsOffset);
  for (int i = 1; i < 4; ++i)
    word = arith::OrIOp::create(
        b, loc, word,
        arith::ShLIOp::create(b, loc, readU8(layout.highBitsOffset + i),
                              i32Const(b, loc, 8 * i)));
  return word;
}

/// kvalues[quant] of iq4_nl, as i32 (a select chain: no table in memory,
/// so the kernel needs no extra buffer).
Value BlockDecoder::codeBook(Value quant) {
  Value result = i32Const(b, loc, kIQ4NLValues[0]);
  for (int i = 1; i < 16; ++i) {
    Value isI = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, quant,
                                      i32Const(b, loc, i));
    result = arith::SelectOp::create(b, loc, isI,
                                     i32Const(b, loc, kIQ4NLValues[i]), result);
  }
  return result;
}
