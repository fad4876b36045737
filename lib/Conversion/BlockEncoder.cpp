//===- BlockEncoder.cpp - encode ggml blocks in IR ------------------------===//
//
// The arithmetic follows ggml's reference quantizers step for step, in f32,
// with every C conversion spelled out: `(int8_t)f` truncates toward zero
// (arith.fptosi), `roundf` rounds halves away from zero (computed exactly
// from the truncation, so no target's round instruction decides a tie), and
// `GGML_FP32_TO_FP16` rounds to nearest even (arith.truncf).
//
//===----------------------------------------------------------------------===//

#include "cachet/Conversion/BlockEncoder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"

#include <cfloat>

using namespace mlir;
using namespace cachet;

namespace {

/// The formats, by how their scale and quants are computed.
enum class Format { Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL };

Format getFormat(BlockQuantizedType type) {
  return llvm::TypeSwitch<Type, Format>(type)
      .Case([](Q8_0Type) { return Format::Q8_0; })
      .Case([](Q4_0Type) { return Format::Q4_0; })
      .Case([](Q4_1Type) { return Format::Q4_1; })
      .Case([](Q5_0Type) { return Format::Q5_0; })
      .Case([](Q5_1Type) { return Format::Q5_1; })
      .Case([](IQ4_NLType) { return Format::IQ4_NL; })
      .Default([](Type t) -> Format {
        // A block type added to the dialect without an encoder here would
        // otherwise be written as another format's bytes.
        llvm::report_fatal_error(llvm::Twine("BlockEncoder: no format for ") +
                                 cast<BlockQuantizedType>(t).getFormatName());
      });
}

/// Byte offsets of the fields after `d` (-1 where a format has none).
struct Offsets {
  int min, highBits, quants;
};

Offsets getOffsets(Format format) {
  switch (format) {
  case Format::Q8_0:
  case Format::Q4_0:
  case Format::IQ4_NL:
    return {-1, -1, 2};
  case Format::Q4_1:
    return {2, -1, 4};
  case Format::Q5_0:
    return {-1, 2, 6};
  case Format::Q5_1:
    return {2, 4, 8};
  }
  llvm_unreachable("unknown format");
}

/// The iq4_nl code book (ggml's kvalues_iq4nl).
constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                     1,    13,   25,  38,  53,  69,  89,  113};

/// ggml's GROUP_MAX_EPS: an iq4_nl block below it gets scale 0.
constexpr float kGroupMaxEps = 1e-15f;

} // namespace

/// What a scan of the block's values yields. For the formats with a signed
/// scale `max` is the first value of largest magnitude; for q4_1 / q5_1
/// `min` and `max` are the extremes. `d` is the unrounded f32 scale (for
/// iq4_nl the first guess, `max / -127`), `id` its inverse as ggml computes
/// it, `tiny` (iq4_nl) whether the block is below GROUP_MAX_EPS.
struct BlockEncoder::Params {
  Value min, max, d, id, tiny;
};

BlockEncoder::BlockEncoder(OpBuilder &b, Location loc, BlockQuantizedType type,
                           Rounding rounding, ValueReader readValue)
    : b(b), loc(loc), type(type), rounding(rounding), readValue(readValue) {}

Value BlockEncoder::f32(double value) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
}

Value BlockEncoder::i32(int32_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
}

Value BlockEncoder::index(int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value BlockEncoder::select(Value cond, Value a, Value c) {
  return arith::SelectOp::create(b, loc, cond, a, c);
}

BlockEncoder::BlockEncoder(OpBuilder &b, Location loc, BlockQuantizedType type,
                           Rounding rounding, LaneValues values)
    : b(b), loc(loc), type(type), rounding(rounding), laneValues(values) {
  assert(values.lanes > 0 && 32 % values.lanes == 0 &&
         values.width % values.lanes == 0 &&
         int64_t(values.slots.size()) == 32 / values.lanes &&
         "a block's lanes must hold its 32 values");
}

Value BlockEncoder::shuffle(Value value, int64_t fromLane) {
  Value lane = arith::AddIOp::create(b, loc, laneValues->first, i32(fromLane));
  return gpu::ShuffleOp::create(b, loc, value, lane, i32(laneValues->width),
                                gpu::ShuffleMode::IDX)
      .getShuffleResult();
}

SmallVector<Value> BlockEncoder::forEachValue(ValueRange init, TermsFn terms,
                                              BodyFn body) {
  if (laneValues) {
    // Each lane computes its own values' terms; then every lane reads value
    // j's from lane j % lanes, in order, and carries the same values.
    int64_t lanes = laneValues->lanes;
    SmallVector<SmallVector<Value>> own;
    for (Value x : laneValues->slots)
      own.push_back(terms(b, x));
    SmallVector<Value> carried(init);
    for (int64_t j = 0; j < 32; ++j) {
      SmallVector<Value> shuffled;
      for (Value t : own[j / lanes])
        shuffled.push_back(shuffle(t, j % lanes));
      carried = body(b, shuffled, carried);
    }
    return carried;
  }
  Value lb = index(0), ub = index(32), step = index(1);
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, step, init,
      [&](OpBuilder &nb, Location nloc, Value lane, ValueRange carried) {
        Value x = readValue(nb, nloc, lane);
        scf::YieldOp::create(nb, nloc, body(nb, terms(nb, x), carried));
      });
  return SmallVector<Value>(loop.getResults());
}

Value BlockEncoder::valueIndex(int64_t slot) {
  return arith::AddIOp::create(b, loc, laneValues->lane,
                               i32(laneValues->lanes * slot));
}

Value BlockEncoder::firstOf(arith::CmpFPredicate better, Value value, Value j,
                            Value than, Value thanJ) {
  Value strictly = arith::CmpFOp::create(b, loc, better, value, than);
  Value equal =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, value, than);
  Value earlier =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, j, thanJ);
  return arith::OrIOp::create(b, loc, strictly,
                              arith::AndIOp::create(b, loc, equal, earlier));
}

SmallVector<Value> BlockEncoder::butterfly(
    SmallVector<Value> values,
    function_ref<SmallVector<Value>(ValueRange, ValueRange)> combine) {
  for (int64_t offset = 1; offset < laneValues->lanes; offset *= 2) {
    SmallVector<Value> other;
    for (Value v : values)
      other.push_back(gpu::ShuffleOp::create(b, loc, v, i32(offset),
                                             i32(laneValues->width),
                                             gpu::ShuffleMode::XOR)
                          .getShuffleResult());
    values = combine(values, other);
  }
  return values;
}

SmallVector<Value>
BlockEncoder::scanValues(ValueRange init, BodyFn body,
                         function_ref<SmallVector<Value>()> tree,
                         bool nanTakesOrder) {
  auto value = [](OpBuilder &, Value x) -> SmallVector<Value> { return {x}; };
  if (!laneValues)
    return forEachValue(init, value, body);
  if (!nanTakesOrder)
    return tree();
  // A block with a NaN takes the scan in order (whose result depends on
  // where the NaN is); else the lanes combine their values in a tree, which
  // for values that are not NaN gives the same result.
  Value nan = i32(0);
  for (Value x : laneValues->slots) {
    Value isNaN =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
    nan = arith::OrIOp::create(
        b, loc, nan, arith::ExtUIOp::create(b, loc, b.getI32Type(), isNaN));
  }
  nan = butterfly({nan}, [&](ValueRange mine, ValueRange other) {
    return SmallVector<Value>{
        arith::OrIOp::create(b, loc, mine[0], other[0]).getResult()};
  })[0];
  Value anyNaN =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, nan, i32(0));
  auto ifOp = scf::IfOp::create(b, loc, ValueRange(init).getTypes(), anyNaN,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    scf::YieldOp::create(b, loc, forEachValue(init, value, body));
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, tree());
  }
  return SmallVector<Value>(ifOp.getResults());
}

BlockEncoder::Params BlockEncoder::scan() {
  Format format = getFormat(type);
  Params params;
  auto cmp = [&](OpBuilder &nb, arith::CmpFPredicate pred, Value l, Value r) {
    return arith::CmpFOp::create(nb, loc, pred, l, r).getResult();
  };
  auto sel = [&](OpBuilder &nb, Value c, Value l, Value r) {
    return arith::SelectOp::create(nb, loc, c, l, r).getResult();
  };
  // id = d ? 1 / d : 0, as C tests a float (NaN is true).
  auto inverse = [&](Value d) {
    Value nonZero = cmp(b, arith::CmpFPredicate::UNE, d, f32(0));
    return select(nonZero, arith::DivFOp::create(b, loc, f32(1), d), f32(0));
  };
  if (format == Format::Q8_0) {
    // amax = MAX(amax, fabsf(v)), MAX(a, b) being a > b ? a : b.
    auto body = [&](OpBuilder &nb, ValueRange t,
                    ValueRange c) -> SmallVector<Value> {
      Value a = math::AbsFOp::create(nb, loc, t[0]);
      return {sel(nb, cmp(nb, arith::CmpFPredicate::OGT, c[0], a), c[0], a)};
    };
    SmallVector<Value> r = scanValues(
        {f32(0)}, body,
        [&]() {
          // Of finite values the largest magnitude, in any order.
          SmallVector<Value> m{f32(0)};
          for (Value x : laneValues->slots)
            m = body(b, {x}, m);
          return butterfly(m, [&](ValueRange mine, ValueRange other) {
            Value larger = cmp(b, arith::CmpFPredicate::OGT, other[0], mine[0]);
            return SmallVector<Value>{sel(b, larger, other[0], mine[0])};
          });
        },
        /*nanTakesOrder=*/true);
    params.max = r[0];
    params.d = arith::DivFOp::create(b, loc, params.max, f32(127));
    params.id = inverse(params.d);
    return params;
  }
  if (format == Format::Q4_1 || format == Format::Q5_1) {
    auto body = [&](OpBuilder &nb, ValueRange t,
                    ValueRange c) -> SmallVector<Value> {
      Value x = t[0];
      return {sel(nb, cmp(nb, arith::CmpFPredicate::OLT, x, c[0]), x, c[0]),
              sel(nb, cmp(nb, arith::CmpFPredicate::OGT, x, c[1]), x, c[1])};
    };
    SmallVector<Value> r = scanValues(
        {f32(FLT_MAX), f32(-FLT_MAX)}, body, [&]() -> SmallVector<Value> {
          // The first of the smallest and of the largest values (equal
          // ones, +0 and -0, keep the first): each with its index.
          SmallVector<Value> c{f32(FLT_MAX), i32(32), f32(-FLT_MAX), i32(32)};
          for (auto [k, x] : llvm::enumerate(laneValues->slots)) {
            Value j = valueIndex(k);
            Value lt = cmp(b, arith::CmpFPredicate::OLT, x, c[0]);
            Value gt = cmp(b, arith::CmpFPredicate::OGT, x, c[2]);
            c = {sel(b, lt, x, c[0]), sel(b, lt, j, c[1]), sel(b, gt, x, c[2]),
                 sel(b, gt, j, c[3])};
          }
          c = butterfly(c, [&](ValueRange mine, ValueRange other) {
            Value lt = firstOf(arith::CmpFPredicate::OLT, other[0], other[1],
                               mine[0], mine[1]);
            Value gt = firstOf(arith::CmpFPredicate::OGT, other[2], other[3],
                               mine[2], mine[3]);
            return SmallVector<Value>{
                sel(b, lt, other[0], mine[0]), sel(b, lt, other[1], mine[1]),
                sel(b, gt, other[2], mine[2]), sel(b, gt, other[3], mine[3])};
          });
          return {c[0], c[2]};
        });
    params.min = r[0];
    params.max = r[1];
    Value range = arith::SubFOp::create(b, loc, params.max, params.min);
    params.d = arith::DivFOp::create(b, loc, range,
                                     f32(format == Format::Q4_1 ? 15 : 31));
    params.id = inverse(params.d);
    return params;
  }
  // The first value of largest magnitude: updated only on a strictly larger
  // one.
  auto body = [&](OpBuilder &nb, ValueRange t,
                  ValueRange c) -> SmallVector<Value> {
    Value x = t[0];
    Value a = math::AbsFOp::create(nb, loc, x);
    Value larger = cmp(nb, arith::CmpFPredicate::OLT, c[0], a);
    return {sel(nb, larger, a, c[0]), sel(nb, larger, x, c[1])};
  };
  SmallVector<Value> r =
      scanValues({f32(0), f32(0)}, body, [&]() -> SmallVector<Value> {
        // The first value of the largest magnitude: the magnitude, its
        // index (32: none above 0) and the value.
        SmallVector<Value> c{f32(0), i32(32), f32(0)};
        for (auto [k, x] : llvm::enumerate(laneValues->slots)) {
          Value a = math::AbsFOp::create(b, loc, x);
          Value larger = cmp(b, arith::CmpFPredicate::OLT, c[0], a);
          c = {sel(b, larger, a, c[0]), sel(b, larger, valueIndex(k), c[1]),
               sel(b, larger, x, c[2])};
        }
        c = butterfly(c, [&](ValueRange mine, ValueRange other) {
          Value take = firstOf(arith::CmpFPredicate::OGT, other[0], other[1],
                               mine[0], mine[1]);
          return SmallVector<Value>{sel(b, take, other[0], mine[0]),
                                    sel(b, take, other[1], mine[1]),
                                    sel(b, take, other[2], mine[2])};
        });
        return {c[0], c[2]};
      });
  Value amax = r[0];
  params.max = r[1];
  double divisor = format == Format::Q4_0   ? -8
                   : format == Format::Q5_0 ? -16
                                            : kIQ4NLValues[0];
  params.d = arith::DivFOp::create(b, loc, params.max, f32(divisor));
  if (format != Format::IQ4_NL) {
    params.id = inverse(params.d);
    return params;
  }
  params.tiny = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, amax,
                                      f32(kGroupMaxEps));
  params.id = arith::DivFOp::create(b, loc, f32(1), params.d);
  return params;
}

/// ggml's best_index_int8 over the iq4_nl code book: the index of the entry
/// nearest to `x` (the upper one of a pair unless the lower one is strictly
/// nearer, the differences rounded to f32 as in C) and the entry itself.
static std::pair<Value, Value> bestIndex(OpBuilder &b, Location loc, Value x) {
  auto f32 = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  auto i32 = [&](int32_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };
  auto sel = [&](Value c, Value l, Value r) -> Value {
    return arith::SelectOp::create(b, loc, c, l, r);
  };
  // The binary search ends with lo = kvalues[upper - 1] <= x < kvalues[upper].
  Value upper = i32(1), lo = f32(kIQ4NLValues[0]), hi = f32(kIQ4NLValues[1]);
  for (int k = 1; k < 15; ++k) {
    Value above = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x,
                                        f32(kIQ4NLValues[k]));
    upper = sel(above, i32(k + 1), upper);
    lo = sel(above, f32(kIQ4NLValues[k]), lo);
    hi = sel(above, f32(kIQ4NLValues[k + 1]), hi);
  }
  Value lowerNearer = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OLT, arith::SubFOp::create(b, loc, x, lo),
      arith::SubFOp::create(b, loc, hi, x));
  Value best =
      sel(lowerNearer, arith::SubIOp::create(b, loc, upper, i32(1)), upper);
  Value value = sel(lowerNearer, lo, hi);
  Value first = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, x,
                                      f32(kIQ4NLValues[0]));
  Value last = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x,
                                     f32(kIQ4NLValues[15]));
  best = sel(first, i32(0), sel(last, i32(15), best));
  value =
      sel(first, f32(kIQ4NLValues[0]), sel(last, f32(kIQ4NLValues[15]), value));
  return {best, value};
}

/// `roundf(value)` (or, with rounding <even>, `roundevenf`) as i32, for
/// |value| < 2^23: the truncation and the fraction it leaves are exact.
Value BlockEncoder::roundToInt(Value value) {
  Value t = arith::FPToSIOp::create(b, loc, b.getI32Type(), value);
  Value fraction = arith::SubFOp::create(
      b, loc, value, arith::SIToFPOp::create(b, loc, b.getF32Type(), t));
  auto cmp = [&](arith::CmpFPredicate pred, double c) -> Value {
    return arith::CmpFOp::create(b, loc, pred, fraction, f32(c));
  };
  Value up, down;
  if (rounding == Rounding::Away) {
    up = cmp(arith::CmpFPredicate::OGE, 0.5);
    down = cmp(arith::CmpFPredicate::OLE, -0.5);
  } else {
    Value odd =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                              arith::AndIOp::create(b, loc, t, i32(1)), i32(0));
    up = arith::OrIOp::create(
        b, loc, cmp(arith::CmpFPredicate::OGT, 0.5),
        arith::AndIOp::create(b, loc, cmp(arith::CmpFPredicate::OEQ, 0.5),
                              odd));
    down = arith::OrIOp::create(
        b, loc, cmp(arith::CmpFPredicate::OLT, -0.5),
        arith::AndIOp::create(b, loc, cmp(arith::CmpFPredicate::OEQ, -0.5),
                              odd));
  }
  Value plus = arith::ExtUIOp::create(b, loc, b.getI32Type(), up);
  Value minus = arith::ExtUIOp::create(b, loc, b.getI32Type(), down);
  return arith::SubIOp::create(b, loc, arith::AddIOp::create(b, loc, t, plus),
                               minus);
}

/// The quant of value `lane` (an index) as i32, before packing.
Value BlockEncoder::quant(const Params &params, Value lane) {
  return quantOf(params, readValue(b, loc, lane));
}

Value BlockEncoder::quantOf(const Params &params, Value x) {
  Format format = getFormat(type);
  auto truncated = [&](Value v, double offset) -> Value {
    return arith::FPToSIOp::create(
        b, loc, b.getI32Type(), arith::AddFOp::create(b, loc, v, f32(offset)));
  };
  switch (format) {
  case Format::Q8_0:
    return roundToInt(arith::MulFOp::create(b, loc, x, params.id));
  case Format::Q4_0:
  case Format::Q5_0: {
    bool q4 = format == Format::Q4_0;
    Value scaled = arith::MulFOp::create(b, loc, x, params.id);
    return arith::MinSIOp::create(b, loc, i32(q4 ? 15 : 31),
                                  truncated(scaled, q4 ? 8.5 : 16.5));
  }
  case Format::Q4_1:
  case Format::Q5_1: {
    Value scaled = arith::MulFOp::create(
        b, loc, arith::SubFOp::create(b, loc, x, params.min), params.id);
    Value q = truncated(scaled, 0.5);
    return format == Format::Q4_1 ? arith::MinSIOp::create(b, loc, i32(15), q)
                                  : q;
  }
  case Format::IQ4_NL:
    return select(
        params.tiny, i32(8),
        bestIndex(b, loc, arith::MulFOp::create(b, loc, params.id, x)).first);
  }
  llvm_unreachable("unknown format");
}

/// The iq4_nl scale: the least-squares fit `sum(w q x) / sum(w q q)` of the
/// quants picked with the first guess, `w = x * x`; 0 for a tiny block.
Value BlockEncoder::iq4Scale(const Params &params) {
  // A value's terms w q x and w q q; the sums add them in order.
  SmallVector<Value> sums = forEachValue(
      {f32(0), f32(0)},
      [&](OpBuilder &nb, Value x) -> SmallVector<Value> {
        Value q =
            bestIndex(nb, loc, arith::MulFOp::create(nb, loc, params.id, x))
                .second;
        Value w = arith::MulFOp::create(nb, loc, x, x);
        Value wq = arith::MulFOp::create(nb, loc, w, q);
        return {arith::MulFOp::create(nb, loc, wq, x),
                arith::MulFOp::create(nb, loc, wq, q)};
      },
      [&](OpBuilder &nb, ValueRange t, ValueRange c) -> SmallVector<Value> {
        return {arith::AddFOp::create(nb, loc, c[0], t[0]),
                arith::AddFOp::create(nb, loc, c[1], t[1])};
      });
  Value positive =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, sums[1], f32(0));
  Value d =
      select(positive, arith::DivFOp::create(b, loc, sums[0], sums[1]), f32(0));
  return select(params.tiny, f32(0), d);
}

/// Byte `which` (an index, 0 or 1) of `value` (f32) rounded to f16, as i8.
Value BlockEncoder::halfByte(Value value, Value which) {
  Value half = arith::TruncFOp::create(b, loc, b.getF16Type(), value);
  Value bits = arith::ExtUIOp::create(
      b, loc, b.getI32Type(),
      arith::BitcastOp::create(b, loc, b.getI16Type(), half));
  Value shift = arith::MulIOp::create(
      b, loc, arith::IndexCastUIOp::create(b, loc, b.getI32Type(), which),
      i32(8));
  return arith::TruncIOp::create(b, loc, b.getI8Type(),
                                 arith::ShRUIOp::create(b, loc, bits, shift));
}

Value BlockEncoder::storedScale(const Params &params) {
  return getFormat(type) == Format::IQ4_NL ? iq4Scale(params) : params.d;
}

Value BlockEncoder::encodeByte(Value byte) {
  Params params = scan();
  return encodeByte(byte, params, [&]() { return storedScale(params); });
}

Value BlockEncoder::encodeByte(Value byte, const Params &params,
                               function_ref<Value()> scale) {
  Format format = getFormat(type);
  Offsets offsets = getOffsets(format);
  Type i8 = b.getI8Type();
  // Emits `cond ? thenFn() : elseFn()` as an scf.if yielding an i8, so that
  // a byte computes only its own field.
  auto branch = [&](Value cond, function_ref<Value()> thenFn,
                    function_ref<Value()> elseFn) -> Value {
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{i8}, cond,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    scf::YieldOp::create(b, loc, thenFn());
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, elseFn());
    return ifOp.getResult(0);
  };
  auto below = [&](int64_t bound) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, byte,
                                 index(bound));
  };
  auto field = [&](int offset) -> Value {
    return arith::SubIOp::create(b, loc, byte, index(offset));
  };

  // qs: q8_0 holds quant j, the nibble formats quants j and j + 16.
  auto quants = [&]() -> Value {
    Value j = field(offsets.quants);
    if (format == Format::Q8_0)
      return arith::TruncIOp::create(b, loc, i8, quant(params, j));
    Value low = arith::AndIOp::create(b, loc, quant(params, j), i32(15));
    Value high = arith::AndIOp::create(
        b, loc, quant(params, arith::AddIOp::create(b, loc, j, index(16))),
        i32(15));
    Value packed = arith::OrIOp::create(
        b, loc, low, arith::ShLIOp::create(b, loc, high, i32(4)));
    return arith::TruncIOp::create(b, loc, i8, packed);
  };
  std::function<Value()> rest = quants;
  if (offsets.highBits >= 0) {
    // qh byte k: bit i is bit 4 of quant 8k + i.
    rest = [&, quants]() -> Value {
      return branch(
          below(offsets.quants),
          [&]() -> Value {
            Value first = arith::MulIOp::create(b, loc, field(offsets.highBits),
                                                index(8));
            Value lb = index(0), ub = index(8), step = index(1);
            auto loop = scf::ForOp::create(
                b, loc, lb, ub, step, ValueRange{i32(0)},
                [&](OpBuilder &nb, Location, Value bit, ValueRange acc) {
                  OpBuilder::InsertionGuard guard(b);
                  b.setInsertionPoint(nb.getInsertionBlock(),
                                      nb.getInsertionPoint());
                  Value q =
                      quant(params, arith::AddIOp::create(b, loc, first, bit));
                  Value high = arith::AndIOp::create(
                      b, loc, arith::ShRUIOp::create(b, loc, q, i32(4)),
                      i32(1));
                  Value shift =
                      arith::IndexCastUIOp::create(b, loc, b.getI32Type(), bit);
                  scf::YieldOp::create(
                      b, loc,
                      ValueRange{arith::OrIOp::create(
                          b, loc, acc[0],
                          arith::ShLIOp::create(b, loc, high, shift))});
                });
            return arith::TruncIOp::create(b, loc, i8, loop.getResult(0));
          },
          quants);
    };
  }
  std::function<Value()> afterScale = rest;
  if (offsets.min >= 0)
    afterScale = [&, rest]() -> Value {
      return branch(
          below(offsets.min + 2),
          [&]() { return halfByte(params.min, field(offsets.min)); }, rest);
    };
  return branch(
      below(2), [&]() -> Value { return halfByte(scale(), byte); }, afterScale);
}

std::pair<SmallVector<Value>, Value> BlockEncoder::encodeQ8Block() {
  Params params = scan();
  SmallVector<Value> quants;
  for (int64_t lane = 0; lane < 32; ++lane)
    quants.push_back(arith::TruncIOp::create(b, loc, b.getI8Type(),
                                             quant(params, index(lane))));
  return {quants, arith::TruncFOp::create(b, loc, b.getF16Type(), params.d)};
}

std::pair<Value, Value> BlockEncoder::encodeQ8(Value lane) {
  Params params = scan();
  Value q = arith::TruncIOp::create(b, loc, b.getI8Type(), quant(params, lane));
  Value d = arith::TruncFOp::create(b, loc, b.getF16Type(), params.d);
  return {q, d};
}

SmallVector<BlockEncoder::LaneByte> BlockEncoder::encodeLaneBytes() {
  assert(laneValues && "encodeLaneBytes needs a block held by lanes");
  Format format = getFormat(type);
  Offsets offsets = getOffsets(format);
  const LaneValues &lv = *laneValues;
  int64_t lanes = lv.lanes, slots = 32 / lanes;
  Type i8 = b.getI8Type();
  Value yes = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  auto laneIndex = [&](int64_t k) -> Value {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(),
                                        valueIndex(k));
  };
  auto byteOf = [&](Value v) -> Value {
    return arith::TruncIOp::create(b, loc, i8, v);
  };

  Params params = scan();
  Value scale = storedScale(params);
  SmallVector<Value> quants;
  for (Value x : lv.slots)
    quants.push_back(quantOf(params, x));

  // The header: the scale's bytes, q4_1 / q5_1's minimum's, q5's high bits.
  SmallVector<Value> header{halfByte(scale, index(0)),
                            halfByte(scale, index(1))};
  if (offsets.min >= 0) {
    header.push_back(halfByte(params.min, index(0)));
    header.push_back(halfByte(params.min, index(1)));
  }
  if (offsets.highBits >= 0) {
    // Bit j of the 32-bit qh is bit 4 of quant j: each lane sets its
    // values' bits, then the group's lanes OR theirs together.
    Value bits = i32(0);
    for (int64_t k = 0; k < slots; ++k) {
      Value high = arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, quants[k], i32(4)), i32(1));
      bits = arith::OrIOp::create(
          b, loc, bits, arith::ShLIOp::create(b, loc, high, valueIndex(k)));
    }
    bits = butterfly({bits}, [&](ValueRange mine, ValueRange other) {
      return SmallVector<Value>{
          arith::OrIOp::create(b, loc, mine[0], other[0]).getResult()};
    })[0];
    for (int64_t k = 0; k < 4; ++k)
      header.push_back(
          byteOf(arith::ShRUIOp::create(b, loc, bits, i32(8 * k))));
  }
  assert(int64_t(header.size()) == offsets.quants && "header fields");

  SmallVector<LaneByte> bytes;
  // Header byte h = lane + lanes * m is lane h % lanes's.
  int64_t headerBytes = offsets.quants;
  for (int64_t m = 0; lanes * m < headerBytes; ++m) {
    Value h = laneIndex(m);
    Value value = header[lanes * m];
    for (int64_t c = lanes * m + 1; c < std::min(lanes * (m + 1), headerBytes);
         ++c)
      value = select(
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, h, index(c)),
          header[c], value);
    Value stores = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, h,
                                         index(headerBytes));
    bytes.push_back({h, value, stores});
  }
  auto quantByte = [&](int64_t k) -> Value {
    return arith::AddIOp::create(b, loc, laneIndex(k), index(headerBytes));
  };
  if (format == Format::Q8_0) {
    // Quant j in byte 2 + j.
    for (int64_t k = 0; k < slots; ++k)
      bytes.push_back({quantByte(k), byteOf(quants[k]), yes});
    return bytes;
  }
  // The nibble formats: byte j (< 16) holds quants j and j + 16.
  auto packed = [&](Value low, Value high) -> Value {
    Value l = arith::AndIOp::create(b, loc, low, i32(15));
    Value h = arith::AndIOp::create(b, loc, high, i32(15));
    return byteOf(arith::OrIOp::create(
        b, loc, l, arith::ShLIOp::create(b, loc, h, i32(4))));
  };
  if (lanes == 32) {
    // Quant j + 16 is lane j + 16's.
    Value high = gpu::ShuffleOp::create(b, loc, quants[0], i32(16),
                                        i32(lv.width), gpu::ShuffleMode::XOR)
                     .getShuffleResult();
    Value stores = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         lv.lane, i32(16));
    bytes.push_back({quantByte(0), packed(quants[0], high), stores});
    return bytes;
  }
  // Quant j + 16 is the same lane's, 16 / lanes slots on.
  for (int64_t k = 0; lanes * k < 16; ++k)
    bytes.push_back(
        {quantByte(k), packed(quants[k], quants[k + 16 / lanes]), yes});
  return bytes;
}
