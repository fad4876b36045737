//===- BlockDecoder.cpp - decode ggml block-quantized values -------------===//

#include "BlockDecoder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace cachet;

namespace {
/// The iq4_nl code book.
constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                     1,    13,   25,  38,  53,  69,  89,  113};

} // namespace

BlockLayout cachet::getBlockLayout(BlockQuantizedType type) {
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

Value BlockDecoder::index(int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value BlockDecoder::i32(int32_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
}

BlockDecoder::BlockDecoder(OpBuilder &b, Location loc, BlockQuantizedType type,
                           std::function<Value(Value)> readByte)
    : b(b), loc(loc), type(type), layout(getBlockLayout(type)),
      readByteAt(std::move(readByte)) {}

Value BlockDecoder::decode(Value valueIndex) {
  Value c32 = index(32);
  Value block = arith::DivUIOp::create(b, loc, valueIndex, c32);
  Value lane = arith::RemUIOp::create(b, loc, valueIndex, c32);
  base = arith::MulIOp::create(b, loc, block, index(type.getBlockBytes()));
  Value d = readF16(0);
  Type f32 = b.getF32Type();
  if (layout.kind == QuantKind::Int8) {
    Value laneByte = readByteAt(
        arith::AddIOp::create(b, loc, arith::AddIOp::create(b, loc, base, lane),
                              index(layout.quantsOffset)));
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
        b, loc, arith::ShRUIOp::create(b, loc, highBits(), lane32), i32(1));
    quant = arith::OrIOp::create(b, loc, quant,
                                 arith::ShLIOp::create(b, loc, high, i32(4)));
  }
  if (layout.minOffset >= 0) {
    Value m = readF16(layout.minOffset);
    Value scaled = arith::MulFOp::create(
        b, loc, d, arith::UIToFPOp::create(b, loc, f32, quant));
    return arith::AddFOp::create(b, loc, scaled, m);
  }
  Value centered = arith::SubIOp::create(b, loc, quant, i32(layout.bias));
  return arith::MulFOp::create(b, loc, d,
                               arith::SIToFPOp::create(b, loc, f32, centered));
}

Value BlockDecoder::readU8(int64_t offset) {
  Value byte = readByteAt(arith::AddIOp::create(b, loc, base, index(offset)));
  return arith::ExtUIOp::create(b, loc, b.getI32Type(), byte);
}

Value BlockDecoder::readF16(int64_t offset) {
  Value lo = readU8(offset);
  Value hi = arith::ShLIOp::create(b, loc, readU8(offset + 1), i32(8));
  Value bits = arith::TruncIOp::create(b, loc, b.getI16Type(),
                                       arith::OrIOp::create(b, loc, lo, hi));
  Value half = arith::BitcastOp::create(b, loc, b.getF16Type(), bits);
  return arith::ExtFOp::create(b, loc, b.getF32Type(), half);
}

Value BlockDecoder::nibble(Value lane) {
  Value c16 = index(16);
  Value column = arith::RemUIOp::create(b, loc, lane, c16);
  Value half = arith::DivUIOp::create(b, loc, lane, c16);
  Value byte = readByteAt(
      arith::AddIOp::create(b, loc, arith::AddIOp::create(b, loc, base, column),
                            index(layout.quantsOffset)));
  Value wide = arith::ExtUIOp::create(b, loc, b.getI32Type(), byte);
  Value shift = arith::MulIOp::create(
      b, loc, arith::IndexCastUIOp::create(b, loc, b.getI32Type(), half),
      i32(4));
  return arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, wide, shift), i32(15));
}

Value BlockDecoder::highBits() {
  Value word = readU8(layout.highBitsOffset);
  for (int i = 1; i < 4; ++i)
    word = arith::OrIOp::create(
        b, loc, word,
        arith::ShLIOp::create(b, loc, readU8(layout.highBitsOffset + i),
                              i32(8 * i)));
  return word;
}

Value BlockDecoder::codeBook(Value quant) {
  Value result = i32(kIQ4NLValues[0]);
  for (int i = 1; i < 16; ++i) {
    Value isI =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, quant, i32(i));
    result = arith::SelectOp::create(b, loc, isI, i32(kIQ4NLValues[i]), result);
  }
  return result;
}
