//===- DecodeRowLanes.cpp - decode steps with rows read by lanes ----------===//
//
// The steps of the split-KV decode kernel (DecodeKernel.cpp) when its
// config's vector_width n is more than 1: each K/V row is read by
// `rowLanes` = head-dim / n lanes together, n values each, instead of by
// one thread.
//
//   lane l of a subgroup is part l % rowLanes of group l / rowLanes; each
//   lane holds values p * n .. p * n + n - 1 (its part p) of every query
//   row of the workgroup, as f32 registers (no workgroup memory), and its
//   slice of each row's accumulator;
//   per step, group g takes positions base + u * groups + g (u < unroll):
//   its lanes read their slices of the K rows (wide loads of f16/bf16, or
//   aligned 32-bit words of blocks decoded in registers), all `unroll` rows
//   before using them; each dot product is summed over the group's lanes by
//   a shuffle-xor tree (every lane of the group gets the same bits); the
//   group's online softmax (base 2) takes the step's scores at once; then
//   acc += P V with the lanes' slices of the V rows;
//   after the last step the subgroup's groups merge their states by
//   shuffles, and mergeDecodeSubgroups merges the subgroups.
//
// A subgroup reads rowLanes / subgroup whole rows per load instruction, so
// its loads are coalesced, where the position-per-thread steps read 32
// rows per instruction (one line each) and take Q from workgroup memory
// once per position.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"

#include "cachet/Conversion/BlockDecoder.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace cachet;
using namespace cachet::attention;

SmallVector<Value> KernelBuilder::readFloats(Value source, RowIndices at,
                                             Value first, int64_t n,
                                             int64_t perLoad, Type element) {
  if (Value scales = splitScales.lookup(source))
    return readSplitFloats(source, scales, at, first, n, perLoad, element);
  Type f32Type = b.getF32Type();
  int64_t bytes = element.getIntOrFloatBitWidth() / 8;
  SmallVector<Value> values;
  for (int64_t j = 0; j < n; j += perLoad) {
    SmallVector<Value> indices = at(addIndex(first, j));
    if (perLoad == 1) {
      values.push_back(castFloat(
          b, loc, memref::LoadOp::create(b, loc, source, indices), f32Type));
      continue;
    }
    auto load = vector::LoadOp::create(
        b, loc, VectorType::get({perLoad}, element), source, indices);
    load.setAlignment(perLoad * bytes);
    for (int64_t e = 0; e < perLoad; ++e)
      values.push_back(castFloat(
          b, loc, vector::ExtractOp::create(b, loc, load, e), f32Type));
  }
  return values;
}

SmallVector<Value> KernelBuilder::readSplitFloats(Value values, Value scales,
                                                  RowIndices at, Value first,
                                                  int64_t n, int64_t perLoad,
                                                  Type element) {
  Type f32Type = b.getF32Type();
  SmallVector<Value> result;
  // A load's values lie in one block of 32: loads are aligned to their
  // size, which divides 32.
  perLoad = std::clamp<int64_t>(perLoad, 1, 16);
  for (int64_t j = 0; j < n; j += perLoad) {
    Value x = addIndex(first, j);
    Value d = arith::ExtFOp::create(
        b, loc, f32Type,
        memref::LoadOp::create(
            b, loc, scales,
            at(arith::DivUIOp::create(b, loc, x, index(32)).getResult()))
            .getResult());
    SmallVector<Value> quants;
    if (perLoad == 1) {
      quants.push_back(memref::LoadOp::create(b, loc, values, at(x)));
    } else {
      auto load = vector::LoadOp::create(
          b, loc, VectorType::get({perLoad}, b.getI8Type()), values, at(x));
      load.setAlignment(perLoad);
      for (int64_t e = 0; e < perLoad; ++e)
        quants.push_back(vector::ExtractOp::create(b, loc, load, e));
    }
    for (Value q : quants) {
      // float(q) * d is exact in f32: one rounding to the element type.
      Value v = arith::MulFOp::create(
          b, loc, arith::SIToFPOp::create(b, loc, f32Type, q), d);
      if (!element.isF32())
        v = castFloat(b, loc, arith::TruncFOp::create(b, loc, element, v),
                      f32Type);
      result.push_back(v);
    }
  }
  return result;
}

SmallVector<Value> KernelBuilder::decodeRowSlice(Value source, RowIndices at,
                                                 Value first, int64_t n,
                                                 int64_t dim,
                                                 BlockQuantizedType block,
                                                 Type element) {
  Type f32Type = b.getF32Type();
  SmallVector<Value> values;
  if (!block) {
    // Vectors of up to 16 bytes that every row's slices are aligned to.
    int64_t bytes = element.getIntOrFloatBitWidth() / 8;
    int64_t perLoad = n;
    while (perLoad > 1 &&
           (perLoad * bytes > 16 || (dim * bytes) % (perLoad * bytes) != 0))
      perLoad /= 2;
    return readFloats(source, at, first, n, perLoad, element);
  }
  // Blocks: aligned 32-bit words of the row (its bytes as i8).
  int64_t rowBytes = dim / 32 * block.getBlockBytes();
  auto readWord = [&](OpBuilder &rb, Location rl, Value word) -> Value {
    Value byteAt = arith::MulIOp::create(
        rb, rl, word, arith::ConstantIndexOp::create(rb, rl, 4));
    return BlockDecoder::loadWord(rb, rl, source, at(byteAt));
  };
  BlockDecoder decoder(b, loc, block, nullptr);
  Value blockOffset = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, first, index(32)),
      index(block.getBlockBytes()));
  Value inBlock = arith::RemUIOp::create(b, loc, first, index(32));
  for (Value v :
       decoder.decodeSlice(readWord, blockOffset, inBlock, n, rowBytes))
    values.push_back(castFloat(b, loc, castFloat(b, loc, v, element), f32Type));
  return values;
}

SmallVector<Value> KernelBuilder::decodeSteps(
    const DecodeFrame &f, Value count, int64_t stepPositions, ValueRange init,
    function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  Value steps = arith::CeilDivUIOp::create(b, loc, count, index(stepPositions));
  auto loop = scf::ForOp::create(b, loc, index(0), steps, index(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value base = arith::AddIOp::create(
        b, loc, f.start,
        arith::MulIOp::create(b, loc, loop.getInductionVar(),
                              index(stepPositions)));
    scf::YieldOp::create(b, loc, body(base, loop.getRegionIterArgs()));
  }
  return stateAfterSteps(steps, init, loop.getResults());
}

SmallVector<Value> KernelBuilder::decodeRowLanes(Value query, Value key,
                                                 Value value,
                                                 const DecodeFrame &f,
                                                 Value count, Value &firstDim,
                                                 Value &owner) {
  Type f32Type = b.getF32Type();
  const int64_t rows = c.queryTile, lanes = c.subgroup;
  const int64_t rowLanes = c.rowLanes, unroll = c.unroll;
  const int64_t n = s.headDim / rowLanes, valueN = s.valueDim / rowLanes;
  const int64_t groups = c.threads / rowLanes;
  const int64_t stepPositions = groups * unroll;
  Value part = arith::RemUIOp::create(b, loc, f.lane, index(rowLanes));
  Value group = arith::DivUIOp::create(b, loc, f.thread, index(rowLanes));
  Value minusInf = f32(-std::numeric_limits<double>::infinity());
  Value zero = f32(0);

  // The lane's part of every query row, as f32 (read once: scalar loads,
  // which need no alignment of Q's rows).
  Value firstQ = arith::MulIOp::create(b, loc, part, index(n));
  SmallVector<Value> q;
  for (int64_t r = 0; r < rows; ++r) {
    auto [head, row] = decodeRow(f, index(r));
    for (int64_t j = 0; j < n; ++j) {
      Value x = memref::LoadOp::create(
          b, loc, query, ValueRange{head, row, addIndex(firstQ, j)});
      q.push_back(castFloat(b, loc, x, f32Type));
    }
  }
  Value firstV = arith::MulIOp::create(b, loc, part, index(valueN));

  // The loop state: each row's running max and sum (uniform over a group of
  // lanes), then the lane's accumulator slices.
  SmallVector<Value> init;
  init.append(rows, minusInf);
  init.append(rows, zero);
  init.append(rows * valueN, zero);
  SmallVector<Value> state = decodeSteps(
      f, count, stepPositions, init, [&](Value base, ValueRange carried) {
        Value first = arith::AddIOp::create(b, loc, base, group);
        SmallVector<Value> pos(unroll), readPos(unroll);
        SmallVector<SmallVector<Value>> k(unroll);
        for (int64_t u = 0; u < unroll; ++u) {
          pos[u] = addIndex(first, u * groups);
          readPos[u] = arith::MinUIOp::create(b, loc, pos[u], f.last);
          k[u] = decodeRowSlice(
              key, [&](Value x) { return kvIndices(f.kvHead, readPos[u], x); },
              firstQ, n, s.headDim, s.keyBlock, s.keyElement);
        }
        // The V rows' loads go out with K's: they do not wait for the scores.
        SmallVector<SmallVector<Value>> v(unroll);
        for (int64_t u = 0; u < unroll; ++u)
          v[u] = decodeRowSlice(
              value,
              [&](Value x) { return kvIndices(f.kvHead, readPos[u], x); },
              firstV, valueN, s.valueDim, s.valueBlock, s.valueElement);
        // Scaled, masked scores in base 2; -inf past the split.
        Value log2e = f32(kLog2E);
        SmallVector<SmallVector<Value>> scores(unroll,
                                               SmallVector<Value>(rows));
        for (int64_t u = 0; u < unroll; ++u) {
          Value inRange = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ult, pos[u], f.end);
          for (int64_t r = 0; r < rows; ++r) {
            Value dot = zero;
            for (int64_t j = 0; j < n; ++j)
              dot = createFma(b, loc, q[r * n + j], k[u][j], dot);
            dot = reduceAcrossLanes(dot, rowLanes, lanes, LaneCombine::Sum);
            auto [head, row] = decodeRow(f, index(r));
            Value score = maskedScore(dot, f.scale, f.mask, head, row, row,
                                      pos[u], f.causal);
            scores[u][r] = arith::SelectOp::create(
                b, loc, inRange, arith::MulFOp::create(b, loc, score, log2e),
                minusInf);
          }
        }
        // The group's online softmax over the step's positions.
        SmallVector<Value> next(carried.begin(), carried.end());
        SmallVector<SmallVector<Value>> probs(unroll, SmallVector<Value>(rows));
        for (int64_t r = 0; r < rows; ++r) {
          Value tileMax = scores[0][r];
          for (int64_t u = 1; u < unroll; ++u)
            tileMax = arith::MaximumFOp::create(b, loc, tileMax, scores[u][r]);
          SoftmaxRescale step =
              foldRowMax(carried[r], tileMax, /*lanes=*/1, lanes, minusInf);
          Value tileSum = zero;
          for (int64_t u = 0; u < unroll; ++u) {
            probs[u][r] = softmaxWeight(
                step.none, zero,
                arith::SubFOp::create(b, loc, scores[u][r], step.newMax),
                /*base2=*/true);
            tileSum = arith::AddFOp::create(b, loc, tileSum, probs[u][r]);
          }
          next[r] = step.newMax;
          next[rows + r] = rescaledSum(carried[rows + r], step.alpha, tileSum);
          for (int64_t j = 0; j < valueN; ++j) {
            Value &acc = next[2 * rows + r * valueN + j];
            acc = arith::MulFOp::create(b, loc, acc, step.alpha);
          }
        }
        // O += P V with the lanes' slices of the V rows (read with K's).
        for (int64_t u = 0; u < unroll; ++u) {
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < valueN; ++j) {
              Value &acc = next[2 * rows + r * valueN + j];
              acc = createFma(b, loc, probs[u][r], v[u][j], acc);
            }
        }
        return next;
      });

  // The subgroup's groups merged pairwise by shuffles: both lanes of a pair
  // compute the same sums (in swapped order, which adds alike).
  for (int64_t offset = rowLanes; offset < lanes; offset *= 2) {
    auto other = [&](Value v) -> Value {
      return gpu::ShuffleOp::create(b, loc, v, offset, lanes,
                                    gpu::ShuffleMode::XOR)
          .getShuffleResult();
    };
    for (int64_t r = 0; r < rows; ++r) {
      Value m = state[r], otherM = other(m);
      Value max = arith::MaximumFOp::create(b, loc, m, otherM);
      Value own = stateWeight(m, max), theirs = stateWeight(otherM, max);
      auto merge = [&](Value &v) {
        Value o = other(v);
        v = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, v, own),
                                  arith::MulFOp::create(b, loc, o, theirs));
      };
      merge(state[rows + r]);
      for (int64_t j = 0; j < valueN; ++j)
        merge(state[2 * rows + r * valueN + j]);
      state[r] = max;
    }
  }
  firstDim = firstV;
  owner = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, f.lane,
                                index(rowLanes));
  return state;
}
