//===- BlockDecoder.cpp - decode values of ggml blocks in IR -------------===//

#include "cachet/Conversion/BlockDecoder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"

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
      .Case([](IQ4_NLType) {
        return BlockLayout{QuantKind::NibbleTable, -1, -1, 2, 0};
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
  Value perBlock = indexConst(b, loc, type.getBlockValues());
  Value blockOffset = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, valueIndex, perBlock),
      indexConst(b, loc, type.getBlockBytes()));
  return decode(blockOffset,
                arith::RemUIOp::create(b, loc, valueIndex, perBlock));
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
  auto byteOf = [&](ArrayRef<Value> words, int64_t k) -> Value {
    Value word = words[k / 4];
    if (k % 4 != 0)
      word =
          arith::ShRUIOp::create(b, loc, word, i32Const(b, loc, 8 * (k % 4)));
    return arith::AndIOp::create(b, loc, word, i32Const(b, loc, 0xff));
  };
  // Block fields are 2-aligned: an f16 never straddles two words.
  auto readHalf = [&](int64_t offset) -> Value {
    Value at =
        arith::AddIOp::create(b, loc, blockOffset, indexConst(b, loc, offset));
    SmallVector<Value> words = readWindow(readWord, at, 2, 2, rowBytes);
    Value bits = arith::TruncIOp::create(b, loc, b.getI16Type(), words[0]);
    Value half = arith::BitcastOp::create(b, loc, b.getF16Type(), bits);
    return arith::ExtFOp::create(b, loc, f32, half);
  };
  Value d = readHalf(0);
  // Blocks have an even number of bytes, so a block and a slice of an even
  // number of values start at even bytes.
  int64_t align = n % 2 == 0 ? 2 : 1;
  SmallVector<Value> values;
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
  SmallVector<Value> words = readWindow(readWord, start, n, align, rowBytes);
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
    Value quant = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, byteOf(words, k), nibbleShift),
        i32Const(b, loc, 15));
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
      Value scaled = arith::MulFOp::create(
          b, loc, d, arith::UIToFPOp::create(b, loc, f32, quant));
      values.push_back(arith::AddFOp::create(b, loc, scaled, m));
      continue;
    }
    Value centered =
        arith::SubIOp::create(b, loc, quant, i32Const(b, loc, layout.bias));
    values.push_back(arith::MulFOp::create(
        b, loc, d, arith::SIToFPOp::create(b, loc, f32, centered)));
  }
  return values;
}

Value BlockDecoder::readScale(const WordReader &readWord, Value blockOffset,
                              int64_t rowBytes) {
  Value bits = arith::TruncIOp::create(
      b, loc, b.getI16Type(),
      readWindow(readWord, blockOffset, 2, 2, rowBytes)[0]);
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
  // q4_0's nibbles from column first % 16, shifted down by 4 in the block's
  // second half.
  auto [start, shift] = getNibbleStart(blockOffset, first, layout.quantsOffset);
  SmallVector<Value> words;
  for (Value word : readWindow(readWord, start, n, 2, rowBytes))
    words.push_back(arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, word, shift),
        i32Const(b, loc, 0x0F0F0F0F)));
  return words;
}

SmallVector<Value> BlockDecoder::decodeSliceF16Pairs(const WordReader &readWord,
                                                     Value blockOffset,
                                                     Value first, int64_t n,
                                                     int64_t rowBytes) {
  Type f16 = b.getF16Type();
  auto pairType = VectorType::get({2}, f16);
  Value d = readScale(readWord, blockOffset, rowBytes);
  SmallVector<Value> words =
      readSliceQuants(readWord, blockOffset, first, n, rowBytes);
  if (isa<Q8_0Type>(type))
    return decodeQ8WordsF16Pairs(b, loc, words, d);
  Value scale = vector::BroadcastOp::create(b, loc, pairType, d);
  Value bias = arith::ConstantOp::create(
      b, loc, pairType,
      DenseElementsAttr::get(pairType, b.getFloatAttr(f16, 1032)));
  SmallVector<Value> pairs;
  for (Value u : words) {
    // Four unsigned bytes u, the nibbles.
    auto [low, high] = getMagicF16Pairs(b, loc, u);
    for (Value h : {low, high})
      pairs.push_back(arith::MulFOp::create(
          b, loc, arith::SubFOp::create(b, loc, h, bias), scale));
  }
  return pairs;
}

SmallVector<Value> BlockDecoder::decodeQ8Words(OpBuilder &b, Location loc,
                                               ArrayRef<Value> words, int64_t n,
                                               Value d) {
  SmallVector<Value> values;
  for (int64_t k = 0; k < n; ++k) {
    Value word = words[k / 4];
    if (k % 4 != 0)
      word =
          arith::ShRUIOp::create(b, loc, word, i32Const(b, loc, 8 * (k % 4)));
    Value byte = arith::TruncIOp::create(b, loc, b.getI8Type(), word);
    Value q = arith::SIToFPOp::create(b, loc, b.getF32Type(), byte);
    values.push_back(arith::MulFOp::create(b, loc, q, d));
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
