//===- BlockDecoder.cpp - decode values of ggml blocks in IR -------------===//

#include "cachet/Conversion/BlockDecoder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace cachet;

namespace {

//===----------------------------------------------------------------------===//
// Block formats
//===----------------------------------------------------------------------===//

/// How the quants of a block are stored: the 32-value formats, the
/// k-quants' 256-value super-blocks (q2_K: 2 bits with a 4-bit scale and
/// min per 16; q3_K: 2 bits plus a high-bit plane with a 6-bit scale per 16;
/// q4_K: nibbles with a 6-bit scale and min per 32; q5_K: the
/// same plus a bit plane; q6_K: 4 + 2 bits with an int8 scale per 16) and
/// the ternary ones (tq2_0: 2 bits; tq1_0: base-3 digits, five or four per
/// byte).
enum class QuantKind {
  Int8,
  Nibble,
  Nibble5,
  NibbleTable,
  K2,
  K3,
  K4,
  K5,
  K6,
  T2,
  T1
};

/// Byte layout of one ggml block (offsets in bytes from the block start; -1
/// where the field does not exist). `d` is at offset 0 except in q2_K,
/// q6_K and the ternary formats.
struct BlockLayout {
  QuantKind kind;
  int minOffset;
  int highBitsOffset;
  int quantsOffset;
  /// Subtracted from the integer quant (formats without `m`).
  int bias;
  /// The sub-block scales (k-quants), and `d`.
  int scalesOffset = -1;
  int scaleOffset = 0;
};

/// q4_K: `d`, `dmin`, 12 bytes of 6-bit scales and mins, 128 of nibbles.
/// q2_K: 16 bytes of 4-bit scales and mins, 64 of 2-bit quants, `d`,
/// `dmin`.
constexpr int kQ2KQuants = 16, kQ2KScale = 80, kQ2KMin = 82;
constexpr int kQ4KScales = 4, kQ4KQuants = 16;
/// q3_K: 32 bytes of high bits (bit 4h + t of byte l: value 128 h + 32 t +
/// l), 64 of 2-bit quants (as q2_K's), 12 of 6-bit scales, `d`.
constexpr int kQ3KQuants = 32, kQ3KScales = 96, kQ3KScale = 108;
/// q5_K: q4_K's fields with 32 bytes of fifth bits (bit j of byte l: value
/// 32 j + l) before the nibbles.
constexpr int kQ5KHigh = 16, kQ5KQuants = 48;
/// q6_K: 128 bytes of low nibbles, 64 of high bit pairs, 16 int8 scales,
/// then `d`.
constexpr int kQ6KHigh = 128, kQ6KScales = 192, kQ6KScale = 208;
/// tq2_0: 64 bytes of 2-bit quants, then `d`; tq1_0: 48 bytes of five
/// digits, 4 of four, then `d`.
constexpr int kTQ2Scale = 64, kTQ1High = 48, kTQ1Scale = 52;

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
      .Case([](IQ4_NLType) {
        return BlockLayout{QuantKind::NibbleTable, -1, -1, 2, 0};
      })
      .Case([](Q2_KType) {
        return BlockLayout{QuantKind::K2, kQ2KMin, -1, kQ2KQuants, 0, 0,
                           kQ2KScale};
      })
      .Case([](Q3_KType) {
        return BlockLayout{QuantKind::K3, -1,       0, kQ3KQuants, 4,
                           kQ3KScales,    kQ3KScale};
      })
      .Case([](Q4_KType) {
        return BlockLayout{QuantKind::K4, 2, -1, kQ4KQuants, 0, kQ4KScales};
      })
      .Case([](Q5_KType) {
        return BlockLayout{QuantKind::K5, 2, kQ5KHigh,
                           kQ5KQuants,    0, kQ4KScales};
      })
      .Case([](Q6_KType) {
        return BlockLayout{QuantKind::K6, -1,       kQ6KHigh, 0, 32,
                           kQ6KScales,    kQ6KScale};
      })
      .Case([](TQ2_0Type) {
        return BlockLayout{QuantKind::T2, -1, -1, 0, 1, -1, kTQ2Scale};
      })
      .Case([](TQ1_0Type) {
        return BlockLayout{QuantKind::T1, -1, kTQ1High, 0, 1, -1, kTQ1Scale};
      })
      .Default([](Type t) -> BlockLayout {
        // A block type added to the dialect without a layout here would
        // otherwise decode as another format's bytes.
        llvm::report_fatal_error(llvm::Twine("BlockDecoder: no layout for ") +
                                 cast<BlockQuantizedType>(t).getFormatName());
      });
}

Value indexConst(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value i32Const(OpBuilder &b, Location loc, int32_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
}

/// Index arithmetic with constants, for the k-quants' positions.
Value addIndex(OpBuilder &b, Location loc, Value a, int64_t c) {
  return c == 0 ? a
                : arith::AddIOp::create(b, loc, a, indexConst(b, loc, c))
                      .getResult();
}
Value mulIndex(OpBuilder &b, Location loc, Value a, int64_t c) {
  return arith::MulIOp::create(b, loc, a, indexConst(b, loc, c));
}
Value divIndex(OpBuilder &b, Location loc, Value a, int64_t c) {
  return arith::DivUIOp::create(b, loc, a, indexConst(b, loc, c));
}
Value remIndex(OpBuilder &b, Location loc, Value a, int64_t c) {
  return arith::RemUIOp::create(b, loc, a, indexConst(b, loc, c));
}
/// `value` (an index below 2^31) as i32.
Value toI32(OpBuilder &b, Location loc, Value value) {
  return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), value);
}
/// Where the `bits`-bit quant of value `first` lies in a k-quant or tq2_0
/// super-block whose quants (at `quantsOffset`) are runs of 32 bytes, each
/// holding 8 / `bits` runs of 32 values in its bit groups: byte
/// 32 (first / period) + first % 32, bits from bits * (first % period /
/// 32), period = 256 / bits. Returns the byte's offset (from `base`, or
/// from the block where `base` is null) and the shift (i32).
std::pair<Value, Value> getRunQuant(OpBuilder &b, Location loc, Value base,
                                    Value first, int64_t quantsOffset,
                                    int32_t bits) {
  int64_t period = 256 / bits;
  Value at = arith::AddIOp::create(
      b, loc, mulIndex(b, loc, divIndex(b, loc, first, period), 32),
      remIndex(b, loc, first, 32));
  if (base)
    at = arith::AddIOp::create(b, loc, base, at);
  Value shift = arith::MulIOp::create(
      b, loc,
      toI32(b, loc, divIndex(b, loc, remIndex(b, loc, first, period), 32)),
      i32Const(b, loc, bits));
  return {addIndex(b, loc, at, quantsOffset), shift};
}

/// Bits `shift` .. `shift + width - 1` of the i32 `word`.
Value bitsOf(OpBuilder &b, Location loc, Value word, Value shift,
             int32_t width) {
  return arith::AndIOp::create(b, loc,
                               arith::ShRUIOp::create(b, loc, word, shift),
                               i32Const(b, loc, (1 << width) - 1));
}

/// The `width`-bit field at bit 8 * (k % 4) of `words[k / 4]` (i32 words
/// of four bytes): value k's quant where each byte holds one (a bfe).
Value byteField(OpBuilder &b, Location loc, ArrayRef<Value> words, int64_t k,
                int32_t width) {
  Value word = words[k / 4];
  if (k % 4 != 0)
    word = arith::ShRUIOp::create(b, loc, word, i32Const(b, loc, 8 * (k % 4)));
  return arith::AndIOp::create(b, loc, word,
                               i32Const(b, loc, (1 << width) - 1));
}

/// `float(u - bias)` for an i32 `u` in [0, 2^23) and a small `bias`
/// (at most 128): `u` made the low bits of the f32 2^23 + u (an or), less
/// 2^23 + bias, exact. Integer and add only: NVIDIA GPUs run int-to-float
/// conversions at a quarter of the add rate or less, and a decoded weight
/// in a mat-vec took one per value.
Value biasedToF32(OpBuilder &b, Location loc, Value u, int32_t bias) {
  Value bits = arith::OrIOp::create(b, loc, u, i32Const(b, loc, 0x4B000000));
  return arith::SubFOp::create(
      b, loc, arith::BitcastOp::create(b, loc, b.getF32Type(), bits),
      arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                     llvm::APFloat(8388608.0f + bias)));
}

/// `words` each shifted right by the i32 `shift`: the nibbles at `shift` (0
/// or 4) of each byte brought to its low bits, once per word rather than
/// once per value.
SmallVector<Value> shiftWords(OpBuilder &b, Location loc, ArrayRef<Value> words,
                              Value shift) {
  SmallVector<Value> shifted;
  for (Value word : words)
    shifted.push_back(arith::ShRUIOp::create(b, loc, word, shift));
  return shifted;
}

/// q4_K's factors of sub-block j, ggml's `d * sc` and `dmin * m` (f32),
/// from the f32 `d` and `dmin` and the i32 bytes `a`, `b4` and `c` of its
/// scales at j % 4, j % 4 + 4 and j % 4 + 8 (`low`: j < 4). For j < 4 the
/// scale and min are the low 6 bits of a and b4, else the nibbles of c
/// with the top 2 bits of a and b4 above them.
std::pair<Value, Value> getQ4KFactors(OpBuilder &b, Location loc, Value d,
                                      Value dmin, Value a, Value b4, Value c,
                                      Value low) {
  Type f32 = b.getF32Type();
  Value c4 = i32Const(b, loc, 4), c6 = i32Const(b, loc, 6);
  Value mask6 = i32Const(b, loc, 63), mask4 = i32Const(b, loc, 15);
  auto top2 = [&](Value byte) -> Value {
    return arith::ShLIOp::create(b, loc,
                                 arith::ShRUIOp::create(b, loc, byte, c6), c4);
  };
  Value scaleHigh = arith::OrIOp::create(
      b, loc, arith::AndIOp::create(b, loc, c, mask4), top2(a));
  Value minHigh = arith::OrIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, c, c4), top2(b4));
  Value scale = arith::SelectOp::create(
      b, loc, low, arith::AndIOp::create(b, loc, a, mask6), scaleHigh);
  Value min = arith::SelectOp::create(
      b, loc, low, arith::AndIOp::create(b, loc, b4, mask6), minHigh);
  return {arith::MulFOp::create(b, loc, d,
                                arith::UIToFPOp::create(b, loc, f32, scale)),
          arith::MulFOp::create(b, loc, dmin,
                                arith::UIToFPOp::create(b, loc, f32, min))};
}

/// q2_K's factors of a run of 16, ggml's `d * (sc & 15)` and
/// `dmin * (sc >> 4)` (f32), from the f32 `d` and `dmin` and the i32 `sc`
/// (its low 8 bits).
std::pair<Value, Value> getQ2KFactors(OpBuilder &b, Location loc, Value d,
                                      Value dmin, Value sc) {
  Type f32 = b.getF32Type();
  Value scale = arith::AndIOp::create(b, loc, sc, i32Const(b, loc, 15));
  Value min = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, sc, i32Const(b, loc, 4)),
      i32Const(b, loc, 15));
  return {arith::MulFOp::create(b, loc, d,
                                arith::UIToFPOp::create(b, loc, f32, scale)),
          arith::MulFOp::create(b, loc, dmin,
                                arith::UIToFPOp::create(b, loc, f32, min))};
}

/// `factor * (q - bias)` for the i32 quant `q` and the f32 `factor`: the
/// value of a format whose quants are centred by a constant (q6_K's 32,
/// q3_K's 4, whose q holds its 2 low bits and at bit 2 its high bit, so
/// that q - 4 is ggml's `q2 - (high ? 0 : 4)`; the ternary formats' 1).
Value getCenteredValue(OpBuilder &b, Location loc, Value factor, Value q,
                       int32_t bias) {
  return arith::MulFOp::create(b, loc, factor, biasedToF32(b, loc, q, bias));
}

/// A q4_K value from its factors and its nibble q (i32): `d1 * q - m1`.
Value getQ4KValue(OpBuilder &b, Location loc, Value d1, Value m1, Value q) {
  return arith::SubFOp::create(
      b, loc, arith::MulFOp::create(b, loc, d1, biasedToF32(b, loc, q, 0)), m1);
}

/// A q6_K value from its factor `d * scale` and the i32 bytes holding its
/// low 4 bits (at `lowShift`) and high 2 bits (at `highShift`):
/// `d1 * (q - 32)`.
Value getQ6KValue(OpBuilder &b, Location loc, Value d1, Value lowByte,
                  Value lowShift, Value highByte, Value highShift) {
  Value q = arith::OrIOp::create(
      b, loc, bitsOf(b, loc, lowByte, lowShift, 4),
      arith::ShLIOp::create(b, loc, bitsOf(b, loc, highByte, highShift, 2),
                            i32Const(b, loc, 4)));
  return getCenteredValue(b, loc, d1, q, 32);
}

/// q3_K's factor of run j = i / 16, ggml's `d * (sc - 32)` (f32, exact: an
/// f16 times a 6-bit integer), from the f32 `d` and the i32 bytes `low`
/// (scales[j % 8]: the low 4 bits in its low nibble for j < 8, else its
/// high one) and `high` (scales[8 + j % 4]: the top 2 bits at 2 (j / 4)),
/// `j` an index: the 6-bit field and centering of a q6_K quant.
Value getQ3KFactor(OpBuilder &b, Location loc, Value d, Value low, Value high,
                   Value j) {
  Value j32 = toI32(b, loc, j);
  Value lowShift = arith::MulIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, j32, i32Const(b, loc, 3)),
      i32Const(b, loc, 4));
  Value highShift = arith::MulIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, j32, i32Const(b, loc, 2)),
      i32Const(b, loc, 2));
  return getQ6KValue(b, loc, d, low, lowShift, high, highShift);
}

/// 3^`digit` for the i32 `digit` (0 .. 4), as an i32.
Value getPow3(OpBuilder &b, Location loc, Value digit) {
  Value power = i32Const(b, loc, 1);
  for (int n = 1, p = 3; n < 5; ++n, p *= 3)
    power = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, digit,
                              i32Const(b, loc, n)),
        i32Const(b, loc, p), power);
  return power;
}

/// tq1_0's base-3 digit of the i32 byte `byte` whose power of 3 is `power`
/// (getPow3 of the digit), as ggml extracts it:
/// `(uint8)(byte * 3^digit) * 3 >> 8`.
Value getBase3DigitOf(OpBuilder &b, Location loc, Value byte, Value power) {
  Value q =
      arith::AndIOp::create(b, loc, arith::MulIOp::create(b, loc, byte, power),
                            i32Const(b, loc, 255));
  return arith::ShRUIOp::create(
      b, loc, arith::MulIOp::create(b, loc, q, i32Const(b, loc, 3)),
      i32Const(b, loc, 8));
}

/// tq1_0's base-3 digit `digit` (i32, 0 .. 4) of the i32 byte `byte`.
Value getBase3Digit(OpBuilder &b, Location loc, Value byte, Value digit) {
  return getBase3DigitOf(b, loc, byte, getPow3(b, loc, digit));
}

/// Where value `v` (an index below 256) of a tq1_0 block lies: three runs,
/// 160 values over bytes 0 .. 31 (digit v / 32), 80 over bytes 32 .. 47
/// (digit (v - 160) / 16), 16 over the 4 bytes at `highOffset` (digit
/// (v - 240) / 4). The byte's offset in the block, the digit (i32), and
/// whether v is in the last run.
struct TQ1Position {
  Value byte, digit, inLast;
};
TQ1Position getTQ1Position(OpBuilder &b, Location loc, Value v,
                           int64_t highOffset) {
  Value inSecond = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, v,
                                         indexConst(b, loc, 160));
  Value inLast = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, v,
                                       indexConst(b, loc, 240));
  Value second = addIndex(b, loc, v, -160), last = addIndex(b, loc, v, -240);
  auto pick = [&](Value a, Value bValue, Value c) -> Value {
    return arith::SelectOp::create(
        b, loc, inLast, c,
        arith::SelectOp::create(b, loc, inSecond, bValue, a));
  };
  Value byte = pick(remIndex(b, loc, v, 32),
                    addIndex(b, loc, remIndex(b, loc, second, 16), 32),
                    addIndex(b, loc, remIndex(b, loc, last, 4), highOffset));
  Value digit =
      toI32(b, loc,
            pick(divIndex(b, loc, v, 32), divIndex(b, loc, second, 16),
                 divIndex(b, loc, last, 4)));
  return {byte, digit, inLast};
}

/// q6_K's factor `d * scale` from the f32 `d` and the scale's byte (the low
/// 8 bits of the i32 `byte`, signed).
Value getQ6KFactor(OpBuilder &b, Location loc, Value d, Value byte) {
  Value scale = arith::TruncIOp::create(b, loc, b.getI8Type(), byte);
  return arith::MulFOp::create(
      b, loc, d, arith::SIToFPOp::create(b, loc, b.getF32Type(), scale));
}

} // namespace

Value cachet::createFma(OpBuilder &b, Location loc, Value a, Value bValue,
                        Value c) {
  auto type = VectorType::get({1}, a.getType());
  auto one = [&](Value v) {
    return vector::BroadcastOp::create(b, loc, type, v).getResult();
  };
  Value fma = vector::FMAOp::create(b, loc, one(a), one(bValue), one(c));
  return vector::ExtractOp::create(b, loc, fma, ArrayRef<int64_t>{0});
}

/// Converts a float `value` to `type` (extf, truncf or nothing).
Value cachet::castFloat(OpBuilder &b, Location loc, Value value, Type type) {
  Type from = value.getType();
  if (from == type)
    return value;
  if (from.getIntOrFloatBitWidth() < type.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, type, value);
  return arith::TruncFOp::create(b, loc, type, value);
}

Value cachet::roundToF16(OpBuilder &b, Location loc, Value value) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  Value half = arith::TruncFOp::create(b, loc, b.getF16Type(), value);
  Value bits = arith::ExtUIOp::create(
      b, loc, i32, arith::BitcastOp::create(b, loc, b.getI16Type(), half));
  Value sign = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, bits, c(0x8000)), c(16));
  Value exponent = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, c(10)), c(0x1f));
  Value mantissa = arith::AndIOp::create(b, loc, bits, c(0x3ff));
  Value wideMantissa = arith::ShLIOp::create(b, loc, mantissa, c(13));
  // Normal: the exponent rebiased from 15 to 127.
  Value normal = arith::OrIOp::create(
      b, loc,
      arith::ShLIOp::create(
          b, loc, arith::AddIOp::create(b, loc, exponent, c(112)), c(23)),
      wideMantissa);
  // Infinity and NaN keep their mantissa.
  Value special = arith::OrIOp::create(b, loc, c(0x7f800000), wideMantissa);
  // Zero and subnormals: mantissa * 2^-24, exact in f32.
  Value tiny = arith::BitcastOp::create(
      b, loc, i32,
      arith::MulFOp::create(
          b, loc, arith::UIToFPOp::create(b, loc, f32, mantissa),
          arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0x1p-24))));
  Value magnitude = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, exponent, c(0)),
      tiny,
      arith::SelectOp::create(b, loc,
                              arith::CmpIOp::create(b, loc,
                                                    arith::CmpIPredicate::eq,
                                                    exponent, c(31)),
                              special, normal));
  return arith::BitcastOp::create(
      b, loc, f32, arith::OrIOp::create(b, loc, magnitude, sign));
}

Value cachet::packBF16Pair(OpBuilder &b, Location loc, Value a, Value bValue) {
  Value pair = vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, b.getF32Type()), ValueRange{a, bValue});
  Value rounded = arith::TruncFOp::create(
      b, loc, VectorType::get({2}, b.getBF16Type()), pair);
  return vector::ExtractOp::create(
      b, loc,
      vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getI32Type()),
                                rounded),
      ArrayRef<int64_t>{0});
}

std::pair<Value, Value> cachet::widenBF16Pair(OpBuilder &b, Location loc,
                                              Value word) {
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  Value low = arith::ShLIOp::create(
      b, loc, word, arith::ConstantIntOp::create(b, loc, i32, 16));
  Value high = arith::AndIOp::create(
      b, loc, word,
      arith::ConstantIntOp::create(b, loc, i32,
                                   static_cast<int32_t>(0xFFFF0000u)));
  return {arith::BitcastOp::create(b, loc, f32, low),
          arith::BitcastOp::create(b, loc, f32, high)};
}

BlockDecoder::BlockDecoder(OpBuilder &b, Location loc, BlockQuantizedType type,
                           ByteReader readByte)
    : b(b), loc(loc), type(type), readByte(readByte) {}

Value BlockDecoder::decode(Value blockOffset, Value lane) {
  const BlockLayout layout = getBlockLayout(type);
  base = blockOffset;
  if (layout.kind == QuantKind::K2 || layout.kind == QuantKind::K3 ||
      layout.kind == QuantKind::K4 || layout.kind == QuantKind::K5 ||
      layout.kind == QuantKind::K6 || layout.kind == QuantKind::T2 ||
      layout.kind == QuantKind::T1)
    return decodeSuperBlock(lane);
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
    Value scaled =
        arith::MulFOp::create(b, loc, d, biasedToF32(b, loc, quant, 0));
    return arith::AddFOp::create(b, loc, scaled, m);
  }
  return arith::MulFOp::create(b, loc, d,
                               biasedToF32(b, loc, quant, layout.bias));
}

Value BlockDecoder::decodeValue(Value valueIndex) {
  Value perBlock = indexConst(b, loc, type.getBlockValues());
  Value blockOffset = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, valueIndex, perBlock),
      indexConst(b, loc, type.getBlockBytes()));
  return decode(blockOffset,
                arith::RemUIOp::create(b, loc, valueIndex, perBlock));
}

Value BlockDecoder::decodeSuperBlock(Value lane) {
  const BlockLayout layout = getBlockLayout(type);
  Type i32 = b.getI32Type();
  // The unsigned byte at `base + offset` (a dynamic index), as i32.
  auto u8At = [&](Value offset) -> Value {
    return arith::ExtUIOp::create(
        b, loc, i32,
        readByte(b, loc, arith::AddIOp::create(b, loc, base, offset)));
  };
  if (layout.kind == QuantKind::T2) {
    // Bits 2t of the byte 32 (lane / 128) + lane % 32, t = lane % 128 / 32.
    auto [at, shift] = getRunQuant(b, loc, Value(), lane, 0, 2);
    Value q = bitsOf(b, loc, u8At(at), shift, 2);
    return getCenteredValue(b, loc, readF16(layout.scaleOffset), q, 1);
  }
  if (layout.kind == QuantKind::T1) {
    TQ1Position at = getTQ1Position(b, loc, lane, layout.highBitsOffset);
    return getCenteredValue(b, loc, readF16(layout.scaleOffset),
                            getBase3Digit(b, loc, u8At(at.byte), at.digit), 1);
  }
  if (layout.kind == QuantKind::K3) {
    // The 2 low bits as q2_K's; the high bit lane / 32 of hmask[lane % 32];
    // the scale of run lane / 16.
    Value j = divIndex(b, loc, lane, 16);
    Value d1 = getQ3KFactor(
        b, loc, readF16(layout.scaleOffset),
        u8At(addIndex(b, loc, remIndex(b, loc, j, 8), layout.scalesOffset)),
        u8At(addIndex(b, loc, remIndex(b, loc, j, 4), layout.scalesOffset + 8)),
        j);
    auto [at, shift] =
        getRunQuant(b, loc, Value(), lane, layout.quantsOffset, 2);
    Value high = bitsOf(b, loc,
                        u8At(addIndex(b, loc, remIndex(b, loc, lane, 32),
                                      layout.highBitsOffset)),
                        toI32(b, loc, divIndex(b, loc, lane, 32)), 1);
    Value q = arith::OrIOp::create(
        b, loc, bitsOf(b, loc, u8At(at), shift, 2),
        arith::ShLIOp::create(b, loc, high, i32Const(b, loc, 2)));
    return getCenteredValue(b, loc, d1, q, 4);
  }
  if (layout.kind == QuantKind::K2) {
    // Bits 2t of the byte 32 (lane / 128) + lane % 32, t = lane % 128 / 32;
    // the scale and min of run lane / 16.
    auto [d1, m1] = getQ2KFactors(
        b, loc, readF16(layout.scaleOffset), readF16(layout.minOffset),
        u8At(
            addIndex(b, loc, divIndex(b, loc, lane, 16), layout.scalesOffset)));
    auto [at, shift] =
        getRunQuant(b, loc, Value(), lane, layout.quantsOffset, 2);
    return getQ4KValue(b, loc, d1, m1, bitsOf(b, loc, u8At(at), shift, 2));
  }
  if (layout.kind == QuantKind::K4 || layout.kind == QuantKind::K5) {
    // Sub-block j = lane / 32; its nibbles in the 32 bytes of lane / 64,
    // low for the first 32 of each 64; q5_K's fifth bit is bit j of
    // qh[lane % 32].
    Value j = divIndex(b, loc, lane, 32);
    Value jLow = remIndex(b, loc, j, 4);
    Value low = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j,
                                      indexConst(b, loc, 4));
    auto [d1, m1] = getQ4KFactors(
        b, loc, readF16(0), readF16(layout.minOffset),
        u8At(addIndex(b, loc, jLow, layout.scalesOffset)),
        u8At(addIndex(b, loc, jLow, layout.scalesOffset + 4)),
        u8At(addIndex(b, loc, jLow, layout.scalesOffset + 8)), low);
    auto [at, shift] =
        getRunQuant(b, loc, Value(), lane, layout.quantsOffset, 4);
    Value q = bitsOf(b, loc, u8At(at), shift, 4);
    if (layout.kind == QuantKind::K5)
      q = arith::OrIOp::create(
          b, loc, q,
          arith::ShLIOp::create(
              b, loc,
              bitsOf(b, loc,
                     u8At(addIndex(b, loc, remIndex(b, loc, lane, 32),
                                   layout.highBitsOffset)),
                     toI32(b, loc, j), 1),
              i32Const(b, loc, 4)));
    return getQ4KValue(b, loc, d1, m1, q);
  }
  // q6_K: half h = lane / 128, quarter t of it, position l in the quarter.
  Value h = divIndex(b, loc, lane, 128);
  Value r = remIndex(b, loc, lane, 128);
  Value t = divIndex(b, loc, r, 32);
  Value l = remIndex(b, loc, r, 32);
  Value lowAt = arith::AddIOp::create(
      b, loc, arith::AddIOp::create(b, loc, mulIndex(b, loc, h, 64), l),
      mulIndex(b, loc, remIndex(b, loc, t, 2), 32));
  Value highAt = addIndex(
      b, loc, arith::AddIOp::create(b, loc, mulIndex(b, loc, h, 32), l),
      layout.highBitsOffset);
  Value scaleAt =
      addIndex(b, loc,
               arith::AddIOp::create(
                   b, loc,
                   arith::AddIOp::create(b, loc, mulIndex(b, loc, h, 8),
                                         divIndex(b, loc, l, 16)),
                   mulIndex(b, loc, t, 2)),
               layout.scalesOffset);
  Value d1 = getQ6KFactor(b, loc, readF16(layout.scaleOffset), u8At(scaleAt));
  Value lowShift = arith::MulIOp::create(
      b, loc, toI32(b, loc, divIndex(b, loc, t, 2)), i32Const(b, loc, 4));
  Value highShift =
      arith::MulIOp::create(b, loc, toI32(b, loc, t), i32Const(b, loc, 2));
  return getQ6KValue(b, loc, d1, u8At(lowAt), lowShift, u8At(highAt),
                     highShift);
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

/// kvalues[quant] of iq4_nl, as i32 (from constants in registers: no
/// table in memory, so the kernel needs no extra buffer).
Value BlockDecoder::codeBook(Value quant) {
  // The 16 entries as four little-endian i32 words of four bytes: bits 3
  // and 2 of the quant pick the word, bits 1 and 0 its byte (about ten
  // integer ops instead of a chain of fifteen compares and selects).
  Value words[4];
  for (int w = 0; w < 4; ++w) {
    uint32_t packed = 0;
    for (int k = 0; k < 4; ++k)
      packed |= uint32_t(uint8_t(kIQ4NLValues[4 * w + k])) << (8 * k);
    words[w] = i32Const(b, loc, static_cast<int32_t>(packed));
  }
  auto bitSet = [&](int32_t bit) -> Value {
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, quant, i32Const(b, loc, bit)),
        i32Const(b, loc, 0));
  };
  Value bit2 = bitSet(4);
  Value word = arith::SelectOp::create(
      b, loc, bitSet(8),
      arith::SelectOp::create(b, loc, bit2, words[3], words[2]),
      arith::SelectOp::create(b, loc, bit2, words[1], words[0]));
  Value shift = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, quant, i32Const(b, loc, 3)),
      i32Const(b, loc, 3));
  Value byte = arith::TruncIOp::create(
      b, loc, b.getI8Type(), arith::ShRUIOp::create(b, loc, word, shift));
  return arith::ExtSIOp::create(b, loc, b.getI32Type(), byte);
}

//===----------------------------------------------------------------------===//
// Slices from aligned words
//===----------------------------------------------------------------------===//

SmallVector<Value> BlockDecoder::readWindow(const WordReader &readWord,
                                            Value start, int64_t count,
                                            int64_t align, int64_t rowBytes) {
  Type i32 = b.getI32Type();
  Value first = arith::ShRUIOp::create(b, loc, start, indexConst(b, loc, 2));
  // The bytes' offset into the first word, in bits (0, 8, 16 or 24).
  Value shift = arith::MulIOp::create(
      b, loc,
      arith::IndexCastUIOp::create(
          b, loc, i32,
          arith::AndIOp::create(b, loc, start, indexConst(b, loc, 3))),
      i32Const(b, loc, 8));
  // The aligned words the bytes can touch: at most 4 - align bytes before
  // them in the first. Words past the row are read as its last (their
  // bytes are shifted out or unused).
  int64_t words = (count + 3) / 4;
  int64_t rawWords = (count + (align >= 4 ? 0 : 4 - align) + 3) / 4;
  Value lastWord = indexConst(b, loc, rowBytes / 4 - 1);
  SmallVector<Value> raw;
  for (int64_t i = 0; i < rawWords; ++i) {
    Value at = arith::AddIOp::create(b, loc, first, indexConst(b, loc, i));
    raw.push_back(
        readWord(b, loc, arith::MinUIOp::create(b, loc, at, lastWord)));
  }
  if (align >= 4)
    return raw;
  // Word i of the bytes: the high bits of raw word i and the low bits of
  // raw word i + 1, in 32-bit shifts (by 1, then 31 - shift: no shift by
  // 32 where shift is 0).
  SmallVector<Value> aligned;
  Value up = arith::SubIOp::create(b, loc, i32Const(b, loc, 31), shift);
  for (int64_t i = 0; i < words; ++i) {
    Value word = arith::ShRUIOp::create(b, loc, raw[i], shift);
    if (i + 1 < rawWords)
      word = arith::OrIOp::create(
          b, loc, word,
          arith::ShLIOp::create(
              b, loc,
              arith::ShLIOp::create(b, loc, raw[i + 1], i32Const(b, loc, 1)),
              up));
    aligned.push_back(word);
  }
  return aligned;
}

std::pair<Value, Value> BlockDecoder::getNibbleStart(Value blockOffset,
                                                     Value first,
                                                     int64_t quantsOffset) {
  Value c16 = indexConst(b, loc, 16);
  Value column = arith::RemUIOp::create(b, loc, first, c16);
  Value shift = arith::MulIOp::create(
      b, loc,
      arith::IndexCastUIOp::create(b, loc, b.getI32Type(),
                                   arith::DivUIOp::create(b, loc, first, c16)),
      i32Const(b, loc, 4));
  Value start = arith::AddIOp::create(
      b, loc, arith::AddIOp::create(b, loc, blockOffset, column),
      indexConst(b, loc, quantsOffset));
  return {start, shift};
}

SmallVector<Value> BlockDecoder::decodeSlice(const WordReader &readWord,
                                             Value blockOffset, Value first,
                                             int64_t n, int64_t rowBytes) {
  const BlockLayout layout = getBlockLayout(type);
  Type f32 = b.getF32Type(), i32 = b.getI32Type();

  // Block fields are 2-aligned: an f16 never straddles two words.
  auto readHalf = [&](int64_t offset) -> Value {
    Value at =
        arith::AddIOp::create(b, loc, blockOffset, indexConst(b, loc, offset));
    SmallVector<Value> words = readWindow(readWord, at, 2, 2, rowBytes);
    Value bits = arith::TruncIOp::create(b, loc, b.getI16Type(), words[0]);
    Value half = arith::BitcastOp::create(b, loc, b.getF16Type(), bits);
    return arith::ExtFOp::create(b, loc, f32, half);
  };
  // Blocks have an even number of bytes, so a block and a slice of an even
  // number of values start at even bytes.
  int64_t align = n % 2 == 0 ? 2 : 1;
  SmallVector<Value> values;
  // The k-quants with a min (q2_K, q4_K, q5_K): getQ4KValue's
  // `d1 * q - m1` with q the `width`-bit field of each value's byte in
  // `words`, as one fma, bit for bit: d1 = d * scale (an f16 times at most
  // 6 bits) and d1 * q (at most 5 more) are exact in f32, so the
  // subtraction is the only rounding either way (also where a target
  // computes the fma as a multiply and an add).
  auto scaledLessMin = [&](Value d1, Value m1, ArrayRef<Value> words,
                           int32_t width) {
    Value negM1 = arith::NegFOp::create(b, loc, m1);
    for (int64_t k = 0; k < n; ++k)
      values.push_back(createFma(
          b, loc, d1,
          biasedToF32(b, loc, byteField(b, loc, words, k, width), 0), negM1));
    return values;
  };
  if (layout.kind == QuantKind::T2) {
    Value d = readHalf(layout.scaleOffset);
    SmallVector<Value> words =
        readSliceQuants(readWord, blockOffset, first, n, rowBytes);
    for (int64_t k = 0; k < n; ++k)
      values.push_back(
          getCenteredValue(b, loc, d, byteField(b, loc, words, k, 2), 1));
    return values;
  }
  if (layout.kind == QuantKind::T1) {
    // 54-byte blocks: 2-aligned. As decode() reads them: values 0 .. 159
    // are digit first / 32 of the bytes from first % 32, values 160 .. 239
    // digit (first - 160) / 16 of the bytes from 32 + (first - 160) % 16,
    // values 240 .. 255 digit (v - 240) / 4 of byte 48 + v % 4. A slice of
    // n <= 16 values (n dividing 16) lies in one run of the first two, with
    // one digit; in the last run one of more than 4 values takes bytes
    // 48 .. 51 again with the next digit every 4 values.
    TQ1Position at = getTQ1Position(b, loc, first, layout.highBitsOffset);
    Value inLast = at.inLast, digit = at.digit;
    Value d = readHalf(layout.scaleOffset);
    SmallVector<Value> words = readWindow(
        readWord, arith::AddIOp::create(b, loc, blockOffset, at.byte), n, align,
        rowBytes);
    SmallVector<Value> powers = {getPow3(b, loc, digit)};
    for (int64_t j = 1; j < n / 4; ++j)
      powers.push_back(getPow3(
          b, loc, arith::AddIOp::create(b, loc, digit, i32Const(b, loc, j))));
    for (int64_t k = 0; k < n; ++k) {
      Value byte = byteField(b, loc, words, k, 8);
      Value power = powers[0];
      if (k >= 4) {
        byte = arith::SelectOp::create(
            b, loc, inLast, byteField(b, loc, words, k % 4, 8), byte);
        power = arith::SelectOp::create(b, loc, inLast, powers[k / 4], power);
      }
      values.push_back(
          getCenteredValue(b, loc, d, getBase3DigitOf(b, loc, byte, power), 1));
    }
    return values;
  }
  if (layout.kind == QuantKind::K3) {
    // 110-byte blocks: 2-aligned. The slice lies in one run of 16 (j =
    // first / 16) with one scale; its 2-bit quants as q2_K's, its high
    // bits bit first / 32 of the hmask bytes from first % 32, both brought
    // to each byte's bits 0-1 and 2 a word at a time.
    Value j = divIndex(b, loc, first, 16);
    auto scaleByte = [&](Value at, int64_t offset) {
      Value in = arith::AddIOp::create(b, loc, blockOffset, at);
      return readWindow(readWord, addIndex(b, loc, in, offset), 1, 1,
                        rowBytes)[0];
    };
    Value d1 = getQ3KFactor(
        b, loc, readHalf(layout.scaleOffset),
        scaleByte(remIndex(b, loc, j, 8), layout.scalesOffset),
        scaleByte(remIndex(b, loc, j, 4), layout.scalesOffset + 8), j);
    auto [start, shift] =
        getRunQuant(b, loc, blockOffset, first, layout.quantsOffset, 2);
    SmallVector<Value> lows = shiftWords(
        b, loc, readWindow(readWord, start, n, align, rowBytes), shift);
    Value highAt = addIndex(
        b, loc,
        arith::AddIOp::create(b, loc, blockOffset, remIndex(b, loc, first, 32)),
        layout.highBitsOffset);
    SmallVector<Value> highs =
        shiftWords(b, loc, readWindow(readWord, highAt, n, align, rowBytes),
                   toI32(b, loc, divIndex(b, loc, first, 32)));
    SmallVector<Value> quants;
    for (auto [low, high] : llvm::zip(lows, highs))
      quants.push_back(arith::OrIOp::create(
          b, loc,
          arith::AndIOp::create(b, loc, low, i32Const(b, loc, 0x03030303)),
          arith::ShLIOp::create(
              b, loc,
              arith::AndIOp::create(b, loc, high, i32Const(b, loc, 0x01010101)),
              i32Const(b, loc, 2))));
    for (int64_t k = 0; k < n; ++k)
      values.push_back(
          getCenteredValue(b, loc, d1, byteField(b, loc, quants, k, 3), 4));
    return values;
  }
  if (layout.kind == QuantKind::K2) {
    // 84-byte blocks: 4-aligned, as is a slice of a multiple of 4. The
    // slice lies in one run of 16 (first / 16), with one scale byte; its
    // 2-bit quants are bits 2t of the bytes from 32 (first / 128) +
    // first % 32, t = first % 128 / 32.
    auto [d1, m1] = getQ2KFactors(
        b, loc, readHalf(layout.scaleOffset), readHalf(layout.minOffset),
        readWindow(readWord,
                   addIndex(b, loc,
                            arith::AddIOp::create(b, loc, blockOffset,
                                                  divIndex(b, loc, first, 16)),
                            layout.scalesOffset),
                   1, 1, rowBytes)[0]);
    auto [start, shift] =
        getRunQuant(b, loc, blockOffset, first, layout.quantsOffset, 2);
    SmallVector<Value> words = shiftWords(
        b, loc,
        readWindow(readWord, start, n, n % 4 == 0 ? 4 : align, rowBytes),
        shift);
    return scaledLessMin(d1, m1, words, 2);
  }
  if (layout.kind == QuantKind::K4 || layout.kind == QuantKind::K5) {
    // 144- and 176-byte blocks: 4-aligned, as is a slice of a multiple of
    // 4. The slice lies in sub-block j = first / 32; its 12 bytes of
    // scales are three aligned words, j % 4 picks a byte of each.
    Value j = divIndex(b, loc, first, 32);
    SmallVector<Value> scales =
        readWindow(readWord, addIndex(b, loc, blockOffset, layout.scalesOffset),
                   12, 4, rowBytes);
    Value byteShift = arith::MulIOp::create(
        b, loc, toI32(b, loc, remIndex(b, loc, j, 4)), i32Const(b, loc, 8));
    Value low = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j,
                                      indexConst(b, loc, 4));
    auto [d1, m1] =
        getQ4KFactors(b, loc, readHalf(0), readHalf(layout.minOffset),
                      bitsOf(b, loc, scales[0], byteShift, 8),
                      bitsOf(b, loc, scales[1], byteShift, 8),
                      bitsOf(b, loc, scales[2], byteShift, 8), low);
    auto [start, shift] =
        getRunQuant(b, loc, blockOffset, first, layout.quantsOffset, 4);
    int64_t wordAlign = n % 4 == 0 ? 4 : align;
    SmallVector<Value> words = shiftWords(
        b, loc, readWindow(readWord, start, n, wordAlign, rowBytes), shift);
    int32_t width = 4;
    if (layout.kind == QuantKind::K5) {
      // q5_K: bit j of the slice's qh bytes (at first % 32) made bit 4 of
      // each nibble's byte, four values per word.
      Value highAt =
          addIndex(b, loc,
                   arith::AddIOp::create(b, loc, blockOffset,
                                         remIndex(b, loc, first, 32)),
                   layout.highBitsOffset);
      SmallVector<Value> highs = shiftWords(
          b, loc, readWindow(readWord, highAt, n, wordAlign, rowBytes),
          toI32(b, loc, j));
      for (size_t w = 0; w < words.size(); ++w)
        words[w] = arith::OrIOp::create(
            b, loc,
            arith::AndIOp::create(b, loc, words[w],
                                  i32Const(b, loc, 0x0F0F0F0F)),
            arith::ShLIOp::create(
                b, loc,
                arith::AndIOp::create(b, loc, highs[w],
                                      i32Const(b, loc, 0x01010101)),
                i32Const(b, loc, 4)));
      width = 5;
    }
    return scaledLessMin(d1, m1, words, width);
  }
  if (layout.kind == QuantKind::K6) {
    // 210-byte blocks: 2-aligned. The slice lies in one run of 16 values
    // of quarter t of half h, with one scale.
    Value h = divIndex(b, loc, first, 128);
    Value r = remIndex(b, loc, first, 128);
    Value t = divIndex(b, loc, r, 32);
    Value l = remIndex(b, loc, r, 32);
    Value lowAt = arith::AddIOp::create(
        b, loc, blockOffset,
        arith::AddIOp::create(
            b, loc, arith::AddIOp::create(b, loc, mulIndex(b, loc, h, 64), l),
            mulIndex(b, loc, remIndex(b, loc, t, 2), 32)));
    Value highAt =
        addIndex(b, loc,
                 arith::AddIOp::create(
                     b, loc, blockOffset,
                     arith::AddIOp::create(b, loc, mulIndex(b, loc, h, 32), l)),
                 layout.highBitsOffset);
    Value scaleAt =
        addIndex(b, loc,
                 arith::AddIOp::create(
                     b, loc, blockOffset,
                     arith::AddIOp::create(
                         b, loc,
                         arith::AddIOp::create(b, loc, mulIndex(b, loc, h, 8),
                                               divIndex(b, loc, l, 16)),
                         mulIndex(b, loc, t, 2))),
                 layout.scalesOffset);
    Value d1 = getQ6KFactor(b, loc, readHalf(layout.scaleOffset),
                            readWindow(readWord, scaleAt, 1, 1, rowBytes)[0]);
    Value lowShift = arith::MulIOp::create(
        b, loc, toI32(b, loc, divIndex(b, loc, t, 2)), i32Const(b, loc, 4));
    Value highShift =
        arith::MulIOp::create(b, loc, toI32(b, loc, t), i32Const(b, loc, 2));
    SmallVector<Value> lows = readWindow(readWord, lowAt, n, align, rowBytes);
    SmallVector<Value> highs = readWindow(readWord, highAt, n, align, rowBytes);
    // Four 6-bit quants per word, each in its byte: (low nibble | high bit
    // pair << 4) ^ 32, which read as a signed 6-bit field is q - 32.
    SmallVector<Value> quants;
    for (auto [lowWord, highWord] : llvm::zip(lows, highs)) {
      Value low = arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, lowWord, lowShift),
          i32Const(b, loc, 0x0F0F0F0F));
      Value high = arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, highWord, highShift),
          i32Const(b, loc, 0x03030303));
      quants.push_back(arith::OrIOp::create(
          b, loc, low,
          arith::ShLIOp::create(b, loc, high, i32Const(b, loc, 4))));
    }
    for (int64_t k = 0; k < n; ++k)
      values.push_back(arith::MulFOp::create(
          b, loc, d1,
          biasedToF32(b, loc, byteField(b, loc, quants, k, 6), 32)));
    return values;
  }
  Value d = readHalf(0);
  if (layout.kind == QuantKind::Int8) {
    Value start = arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, blockOffset, first),
        indexConst(b, loc, layout.quantsOffset));
    return decodeQ8Words(b, loc,
                         readWindow(readWord, start, n, align, rowBytes), n, d);
  }
  // 4-bit quants: value i in the low nibble of byte i % 16, or the high one
  // for i >= 16; the slice lies in one half.
  auto [start, nibbleShift] =
      getNibbleStart(blockOffset, first, layout.quantsOffset);
  SmallVector<Value> words = shiftWords(
      b, loc, readWindow(readWord, start, n, align, rowBytes), nibbleShift);
  Value high, firstBit;
  if (layout.kind == QuantKind::Nibble5) {
    high = readWindow(
        readWord,
        arith::AddIOp::create(b, loc, blockOffset,
                              indexConst(b, loc, layout.highBitsOffset)),
        4, 2, rowBytes)[0];
    firstBit = arith::IndexCastUIOp::create(b, loc, i32, first);
  }
  Value m = layout.minOffset >= 0 ? readHalf(layout.minOffset) : Value();
  for (int64_t k = 0; k < n; ++k) {
    Value quant = byteField(b, loc, words, k, 4);
    if (layout.kind == QuantKind::NibbleTable) {
      values.push_back(arith::MulFOp::create(
          b, loc, d, arith::SIToFPOp::create(b, loc, f32, codeBook(quant))));
      continue;
    }
    if (layout.kind == QuantKind::Nibble5) {
      Value bit = arith::AddIOp::create(b, loc, firstBit, i32Const(b, loc, k));
      Value h = arith::AndIOp::create(b, loc,
                                      arith::ShRUIOp::create(b, loc, high, bit),
                                      i32Const(b, loc, 1));
      quant = arith::OrIOp::create(
          b, loc, quant, arith::ShLIOp::create(b, loc, h, i32Const(b, loc, 4)));
    }
    if (m) {
      Value scaled =
          arith::MulFOp::create(b, loc, d, biasedToF32(b, loc, quant, 0));
      values.push_back(arith::AddFOp::create(b, loc, scaled, m));
      continue;
    }
    values.push_back(arith::MulFOp::create(
        b, loc, d, biasedToF32(b, loc, quant, layout.bias)));
  }
  return values;
}

Value BlockDecoder::readScale(const WordReader &readWord, Value blockOffset,
                              int64_t rowBytes) {
  Value bits = arith::TruncIOp::create(
      b, loc, b.getI16Type(),
      readWindow(
          readWord,
          addIndex(b, loc, blockOffset, getBlockLayout(type).scaleOffset), 2, 2,
          rowBytes)[0]);
  return arith::BitcastOp::create(b, loc, b.getF16Type(), bits);
}

SmallVector<Value> BlockDecoder::readSliceQuants(const WordReader &readWord,
                                                 Value blockOffset, Value first,
                                                 int64_t n, int64_t rowBytes) {
  const BlockLayout layout = getBlockLayout(type);
  if (layout.kind == QuantKind::Int8)
    return readWindow(
        readWord,
        arith::AddIOp::create(b, loc,
                              arith::AddIOp::create(b, loc, blockOffset, first),
                              indexConst(b, loc, layout.quantsOffset)),
        n, 2, rowBytes);
  if (layout.kind == QuantKind::T2) {
    // tq2_0: bits 2t of bytes 32 (first / 128) + first % 32 .., with
    // t = first % 128 / 32 (66-byte blocks: 2-aligned).
    Value start = arith::AddIOp::create(
        b, loc, blockOffset,
        arith::AddIOp::create(
            b, loc, mulIndex(b, loc, divIndex(b, loc, first, 128), 32),
            remIndex(b, loc, first, 32)));
    Value shift = arith::MulIOp::create(
        b, loc,
        toI32(b, loc, divIndex(b, loc, remIndex(b, loc, first, 128), 32)),
        i32Const(b, loc, 2));
    return readFields(readWord, start, shift, 0x03030303, n, rowBytes);
  }
  // q4_0's nibbles from column first % 16, shifted down by 4 in the block's
  // second half.
  auto [start, shift] = getNibbleStart(blockOffset, first, layout.quantsOffset);
  return readFields(readWord, start, shift, 0x0F0F0F0F, n, rowBytes);
}

SmallVector<Value> BlockDecoder::readFields(const WordReader &readWord,
                                            Value start, Value shift,
                                            uint32_t mask, int64_t n,
                                            int64_t rowBytes) {
  SmallVector<Value> words;
  for (Value word : readWindow(readWord, start, n, 2, rowBytes))
    words.push_back(arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, word, shift),
        i32Const(b, loc, static_cast<int32_t>(mask))));
  return words;
}

SmallVector<Value> BlockDecoder::decodeSliceF16Pairs(const WordReader &readWord,
                                                     Value blockOffset,
                                                     Value first, int64_t n,
                                                     int64_t rowBytes) {
  Value d = readScale(readWord, blockOffset, rowBytes);
  SmallVector<Value> words =
      readSliceQuants(readWord, blockOffset, first, n, rowBytes);
  if (isa<Q8_0Type>(type))
    return decodeQ8WordsF16Pairs(b, loc, words, d);
  // q4_0: q - 8; tq2_0: q - 1. The product with d is exact in f16 too for
  // tq2_0 (or overflows as rounding the f32 product does).
  return decodeUnsignedWordsF16Pairs(b, loc, words, d,
                                     isa<TQ2_0Type>(type) ? 1 : 8);
}

SmallVector<Value> BlockDecoder::decodeUnsignedWordsF16Pairs(
    OpBuilder &b, Location loc, ArrayRef<Value> words, Value d, int64_t bias) {
  Type f16 = b.getF16Type();
  auto pairType = VectorType::get({2}, f16);
  Value scale = vector::BroadcastOp::create(b, loc, pairType, d);
  Value magicBias = arith::ConstantOp::create(
      b, loc, pairType,
      DenseElementsAttr::get(pairType, b.getFloatAttr(f16, 1024 + bias)));
  SmallVector<Value> pairs;
  for (Value u : words) {
    // Four unsigned bytes u (nibbles, tq2_0's 2-bit quants).
    auto [low, high] = getMagicF16Pairs(b, loc, u);
    for (Value h : {low, high})
      pairs.push_back(arith::MulFOp::create(
          b, loc, arith::SubFOp::create(b, loc, h, magicBias), scale));
  }
  return pairs;
}

SmallVector<Value> BlockDecoder::decodeQ4Words(OpBuilder &b, Location loc,
                                               ArrayRef<Value> words, int64_t n,
                                               Value d) {
  SmallVector<Value> values;
  for (int64_t k = 0; k < n; ++k) {
    values.push_back(arith::MulFOp::create(
        b, loc, d, biasedToF32(b, loc, byteField(b, loc, words, k, 4), 8)));
  }
  return values;
}

SmallVector<Value> BlockDecoder::unpackNibbleWords(OpBuilder &b, Location loc,
                                                   ArrayRef<Value> words) {
  auto bytesType = VectorType::get({4}, b.getI8Type());
  auto wordType = VectorType::get({1}, b.getI32Type());
  auto asBytes = [&](Value word) -> Value {
    return vector::BitCastOp::create(
        b, loc, bytesType,
        vector::FromElementsOp::create(b, loc, wordType, ValueRange{word}));
  };
  SmallVector<Value> unpacked;
  for (Value word : words) {
    // Even values in the low nibbles, odd ones in the high; interleaved
    // byte by byte (a PTX prmt each).
    Value mask = i32Const(b, loc, 0x0F0F0F0F);
    Value even = asBytes(arith::AndIOp::create(b, loc, word, mask));
    Value odd = asBytes(arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, word, i32Const(b, loc, 4)),
        mask));
    static const int64_t orders[2][4] = {{0, 4, 1, 5}, {2, 6, 3, 7}};
    for (ArrayRef<int64_t> order : orders) {
      Value bytes = vector::ShuffleOp::create(b, loc, even, odd, order);
      unpacked.push_back(vector::ExtractOp::create(
          b, loc, vector::BitCastOp::create(b, loc, wordType, bytes),
          ArrayRef<int64_t>{0}));
    }
  }
  return unpacked;
}

SmallVector<Value> BlockDecoder::decodeQ8Words(OpBuilder &b, Location loc,
                                               ArrayRef<Value> words, int64_t n,
                                               Value d) {
  // q + 128 per byte (an xor per word), less 128 as f32.
  SmallVector<Value> values;
  for (int64_t k = 0; k < n; k += 4) {
    SmallVector<Value> q = biasedBytesToF32(
        b, loc,
        arith::XOrIOp::create(
            b, loc, words[k / 4],
            i32Const(b, loc, static_cast<int32_t>(0x80808080u))),
        128);
    for (int64_t j = 0; j < 4 && k + j < n; ++j)
      values.push_back(arith::MulFOp::create(b, loc, q[j], d));
  }
  return values;
}

SmallVector<Value> BlockDecoder::biasedBytesToF32(OpBuilder &b, Location loc,
                                                  Value word, int64_t bias) {
  // Each byte made the low byte of the f32 2^23 + u by a byte permutation
  // (PTX prmt), less 2^23 + bias: exact, no int-to-float conversion.
  Type i8 = b.getI8Type(), f32 = b.getF32Type();
  auto bytesType = VectorType::get({4}, i8);
  auto wordType = VectorType::get({1}, b.getI32Type());
  Value magic = arith::ConstantOp::create(
      b, loc, bytesType,
      DenseElementsAttr::get(bytesType,
                             ArrayRef<APInt>{APInt(8, 0), APInt(8, 0),
                                             APInt(8, 0), APInt(8, 0x4B)}));
  Value offset = arith::ConstantFloatOp::create(
      b, loc, cast<FloatType>(f32),
      llvm::APFloat(static_cast<float>(8388608 + bias)));
  Value u = vector::BitCastOp::create(
      b, loc, bytesType,
      vector::FromElementsOp::create(b, loc, wordType, ValueRange{word}));
  SmallVector<Value> values;
  for (int64_t k = 0; k < 4; ++k) {
    Value bits = vector::BitCastOp::create(
        b, loc, wordType,
        vector::ShuffleOp::create(b, loc, u, magic,
                                  ArrayRef<int64_t>{k, 4, 5, 7}));
    values.push_back(arith::SubFOp::create(
        b, loc,
        arith::BitcastOp::create(
            b, loc, f32,
            vector::ExtractOp::create(b, loc, bits, ArrayRef<int64_t>{0})),
        offset));
  }
  return values;
}

SmallVector<Value> BlockDecoder::decodeQ8WordsF16Pairs(OpBuilder &b,
                                                       Location loc,
                                                       ArrayRef<Value> words,
                                                       Value d) {
  Type f16 = b.getF16Type();
  auto pairType = VectorType::get({2}, f16);
  Value scale = vector::BroadcastOp::create(b, loc, pairType, d);
  Value bias = arith::ConstantOp::create(
      b, loc, pairType,
      DenseElementsAttr::get(pairType, b.getFloatAttr(f16, 1152)));
  SmallVector<Value> pairs;
  for (Value word : words) {
    // Four unsigned bytes u = q + 128.
    Value u = arith::XOrIOp::create(b, loc, word, i32Const(b, loc, 0x80808080));
    auto [low, high] = getMagicF16Pairs(b, loc, u);
    for (Value h : {low, high})
      pairs.push_back(arith::MulFOp::create(
          b, loc, arith::SubFOp::create(b, loc, h, bias), scale));
  }
  return pairs;
}

std::pair<Value, Value>
BlockDecoder::getMagicF16Pairs(OpBuilder &b, Location loc, Value bytes) {
  Type i8 = b.getI8Type();
  auto bytesType = VectorType::get({4}, i8);
  Value u = vector::BitCastOp::create(
      b, loc, bytesType,
      vector::FromElementsOp::create(
          b, loc, VectorType::get({1}, b.getI32Type()), ValueRange{bytes}));
  Value magic = arith::ConstantOp::create(
      b, loc, bytesType,
      DenseElementsAttr::get(bytesType, b.getIntegerAttr(i8, 0x64)));
  auto pairType = VectorType::get({2}, b.getF16Type());
  auto pair = [&](ArrayRef<int64_t> mask) -> Value {
    return vector::BitCastOp::create(
        b, loc, pairType, vector::ShuffleOp::create(b, loc, u, magic, mask));
  };
  return {pair({0, 4, 1, 5}), pair({2, 6, 3, 7})};
}

Value BlockDecoder::loadWord(OpBuilder &b, Location loc, Value bytes,
                             ValueRange indices,
                             ArrayRef<NamedAttribute> attrs) {
  auto load = vector::LoadOp::create(
      b, loc, VectorType::get({4}, b.getI8Type()), bytes, indices);
  load.setAlignment(4);
  for (NamedAttribute attr : attrs)
    load->setAttr(attr.getName(), attr.getValue());
  Value word = vector::BitCastOp::create(
      b, loc, VectorType::get({1}, b.getI32Type()), load);
  return vector::ExtractOp::create(b, loc, word, 0);
}
