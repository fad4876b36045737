//===- BlockDecoder.h - decode values of ggml blocks in IR -------*- C++
//-*-===//
//
// Emits the decoding of one value of a ggml block (q8_0, q4_0, q4_1, q5_0,
// q5_1, iq4_nl, the k-quants q2_K, q4_K, q5_K and q6_K, the ternary tq2_0 and
// tq1_0) as f32 arithmetic on its bytes. The bytes are read through a callback,
// so the same decoding serves the reference lowering (tensor elements) and
// hand-written kernels (global or workgroup memory): every path computes the
// same f32 value, bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_CONVERSION_BLOCKDECODER_H
#define CACHET_CONVERSION_BLOCKDECODER_H

#include "cachet/Dialect/CachetDialect.h"

#include "mlir/IR/Builders.h"

#include <functional>
#include <utility>

namespace cachet {

/// Converts a float `value` to `type` (extf, truncf or nothing): how every
/// lowering turns decoded f32 values (and other floats) into the element
/// type it stores, so that all of them round the same way.
mlir::Value castFloat(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                      mlir::Type type);

/// f32 `value` rounded to f16 (truncf) and widened back to f32 in integer
/// arithmetic on the f16 bits (exact: normal, subnormal, zero, inf, NaN).
/// For kernels that compute in f32 on values that must first be rounded to
/// f16 (K/V decoded from blocks, as the dequant-once scratch holds them):
/// Vulkan leaves narrowing conversions to the implementation, and a driver
/// may fold a truncf directly followed by an extf, skipping the rounding
/// that the scratch's stores keep.
mlir::Value roundToF16(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value value);

/// f32 `a` and `b` rounded to a packed bf16 pair, returned as its i32 word
/// (`a` in the low half): one cvt.rn.bf16x2.f32 on NVVM, where a bf16
/// rounded alone is an F2F on the slow conversion pipe. The pair is read as
/// an i32 because LLVM splits a vector truncf whose elements are used one
/// by one (widened again) into scalar conversions.
mlir::Value packBF16Pair(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a,
                         mlir::Value bValue);

/// The two bf16 values of a packed pair `word` (packBF16Pair) as f32, low
/// half first: a shift and a mask.
std::pair<mlir::Value, mlir::Value>
widenBF16Pair(mlir::OpBuilder &b, mlir::Location loc, mlir::Value word);

/// `a * b + c` with one rounding, for scalar floats: a vector.fma of
/// one-element vectors, which every target lowers to its fma instruction
/// (math.fma becomes a libdevice call on NVVM, unresolved where the
/// toolkit's libdevice is not found).
mlir::Value createFma(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a,
                      mlir::Value bValue, mlir::Value c);

/// Decodes values of blocks of one format.
class BlockDecoder {
public:
  /// Reads the byte at `offset` (an index) as an i8.
  using ByteReader = std::function<mlir::Value(
      mlir::OpBuilder &, mlir::Location, mlir::Value offset)>;

  BlockDecoder(mlir::OpBuilder &b, mlir::Location loc, BlockQuantizedType type,
               ByteReader readByte);

  /// Returns value `lane` (an index below the block size) of the block whose
  /// first byte is at `blockOffset`, as f32. Reads of the same byte within one
  /// block are emitted once per call (CSE merges the rest).
  mlir::Value decode(mlir::Value blockOffset, mlir::Value lane);

  /// Returns value `valueIndex` (an index) of a row of blocks that starts at
  /// byte 0: lane `valueIndex % V` of the block at byte
  /// `valueIndex / V * block bytes` (V the block size in values).
  mlir::Value decodeValue(mlir::Value valueIndex);

  /// Reads the little-endian 32-bit word at word index `word` (an index:
  /// bytes 4 * word .. 4 * word + 3 of a row) as an i32.
  using WordReader = std::function<mlir::Value(
      mlir::OpBuilder &, mlir::Location, mlir::Value word)>;

  /// Reads the little-endian 32-bit word at `indices` of the i8 buffer
  /// `bytes` (a 4-byte aligned vector<4xi8> load, given `attrs`) as an i32:
  /// what a WordReader of a kernel reads.
  static mlir::Value loadWord(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value bytes, mlir::ValueRange indices,
                              llvm::ArrayRef<mlir::NamedAttribute> attrs = {});

  /// Returns values `first` .. `first + n - 1` of the block at
  /// `blockOffset` (indices; the block in a row of `rowBytes` bytes, a
  /// multiple of 4, whose first byte is 4-aligned), each as f32 and bit for
  /// bit as decode() computes it, from aligned 32-bit words read through
  /// `readWord` (a word past the row's last is read as the last). `first`
  /// is a multiple of `n`, and takesSlice(type, n): `n` divides 32 (16 for
  /// the 4-bit formats, whose slice then lies in one half of the block's
  /// nibbles; for q6_K, whose slice then has one scale).
  llvm::SmallVector<mlir::Value> decodeSlice(const WordReader &readWord,
                                             mlir::Value blockOffset,
                                             mlir::Value first, int64_t n,
                                             int64_t rowBytes);

  /// Returns the values of decodeSlice() for q8_0 or q4_0 blocks rounded
  /// to f16, bit for bit, as `n / 2` vector<2xf16> pairs (values 2i, 2i+1):
  /// each quant made the low byte of f16 1024 + q (+ 128 for q8_0), less
  /// 1152 or 1032 (exact), times the block's f16 scale in f16 (one
  /// rounding of the exact product, as truncating the f32 product gives).
  /// Integer and f16 arithmetic only (no conversions).
  llvm::SmallVector<mlir::Value>
  decodeSliceF16Pairs(const WordReader &readWord, mlir::Value blockOffset,
                      mlir::Value first, int64_t n, int64_t rowBytes);

  /// The `n` q8_0 quants in the i32 `words` (four each, little-endian,
  /// signed) times the f32 scale `d`, each as f32: decodeSlice()'s values
  /// of q8_0 blocks, also for split q8_0 values (words of i8 values).
  static llvm::SmallVector<mlir::Value>
  decodeQ8Words(mlir::OpBuilder &b, mlir::Location loc,
                llvm::ArrayRef<mlir::Value> words, int64_t n, mlir::Value d);
  /// The q4_0 nibbles u in the i32 `words` (four each, one per byte, 0 ..
  /// 15, in value order) less 8 times the f32 scale `d`, each as f32:
  /// decodeSlice()'s values of q4_0 blocks, also for split q4_0 values.
  static llvm::SmallVector<mlir::Value>
  decodeQ4Words(mlir::OpBuilder &b, mlir::Location loc,
                llvm::ArrayRef<mlir::Value> words, int64_t n, mlir::Value d);
  /// The unsigned bytes u in the i32 `words` less `bias` times the f16
  /// scale `d`, as vector<2xf16> pairs (values 2i, 2i+1): 1024 + u made
  /// with getMagicF16Pairs, less 1024 + bias (exact), times `d` in f16 (one
  /// rounding of the exact product). q4_0 takes bias 8, tq2_0 bias 1.
  static llvm::SmallVector<mlir::Value>
  decodeUnsignedWordsF16Pairs(mlir::OpBuilder &b, mlir::Location loc,
                              llvm::ArrayRef<mlir::Value> words, mlir::Value d,
                              int64_t bias);
  /// Splits i32 words of packed nibbles (value 2i in the low nibble of
  /// byte i, value 2i + 1 in its high nibble: split q4_0 values) into
  /// twice as many words of one nibble per byte in value order.
  static llvm::SmallVector<mlir::Value>
  unpackNibbleWords(mlir::OpBuilder &b, mlir::Location loc,
                    llvm::ArrayRef<mlir::Value> words);
  /// The quants of values `first` .. `first + n - 1` of the q8_0 or q4_0
  /// block at `blockOffset` (as decodeSliceF16Pairs() takes them) as `n / 4`
  /// i32 words of four bytes in value order: q8_0's signed quants, q4_0's
  /// nibbles (0 .. 15, one per byte).
  llvm::SmallVector<mlir::Value> readSliceQuants(const WordReader &readWord,
                                                 mlir::Value blockOffset,
                                                 mlir::Value first, int64_t n,
                                                 int64_t rowBytes);
  /// The f16 scale `d` of the block at `blockOffset`.
  mlir::Value readScale(const WordReader &readWord, mlir::Value blockOffset,
                        int64_t rowBytes);
  /// The q8_0 quants in the i32 `words` times the f16 scale `d` as
  /// vector<2xf16> pairs, bit for bit as decodeSliceF16Pairs() computes
  /// them (q + 128 made the low byte of f16 1024 + q + 128, less 1152,
  /// times `d` in f16).
  static llvm::SmallVector<mlir::Value>
  decodeQ8WordsF16Pairs(mlir::OpBuilder &b, mlir::Location loc,
                        llvm::ArrayRef<mlir::Value> words, mlir::Value d);
  /// The four unsigned bytes u of the i32 `word` less `bias` (at most
  /// 128), as f32, exactly: each byte made the low byte of the f32 2^23 +
  /// u (a byte permutation, PTX prmt), less 2^23 + bias. No int-to-float
  /// conversion (a quarter of the add rate on NVIDIA GPUs).
  static llvm::SmallVector<mlir::Value> biasedBytesToF32(mlir::OpBuilder &b,
                                                         mlir::Location loc,
                                                         mlir::Value word,
                                                         int64_t bias);
  /// The f16 pairs (1024 + u0, 1024 + u1) and (1024 + u2, 1024 + u3) of
  /// the four unsigned bytes u of the i32 `bytes`: each byte made the low
  /// byte of an f16 whose high byte is 0x64 (a byte permutation, PTX prmt).
  static std::pair<mlir::Value, mlir::Value>
  getMagicF16Pairs(mlir::OpBuilder &b, mlir::Location loc, mlir::Value bytes);

  /// Whether decodeSliceF16Pairs() takes slices of `n` values of `type`.
  static bool takesF16Pairs(BlockQuantizedType type, int64_t n) {
    return (llvm::isa<Q8_0Type>(type) || llvm::isa<Q4_0Type>(type) ||
            llvm::isa<TQ2_0Type>(type)) &&
           n % 4 == 0 && takesSlice(type, n);
  }

  /// Whether decodeSlice() takes slices of `n` values of `type` (q8_0's
  /// bytes are whole values; a 4-bit slice lies in one half of the
  /// nibbles; q4_K's and q5_K's in one sub-block of 32, with one scale and
  /// min; q2_K's and q6_K's in one run of 16, with one scale; tq2_0's in
  /// one run of 32 bytes and bit pair; tq1_0's, of at most 16 values, in
  /// one run of bytes and digit, or in the last 16 values, whose digit
  /// changes every 4).
  static bool takesSlice(BlockQuantizedType type, int64_t n) {
    if (llvm::isa<TQ1_0Type>(type))
      return n >= 1 && 16 % n == 0;
    return n >= 1 && 32 % n == 0 &&
           (llvm::isa<Q8_0Type, Q4_KType, Q5_KType>(type) ||
            llvm::isa<TQ2_0Type>(type) || n <= 16);
  }

private:
  /// decode() for the k-quants' super-blocks (q2_K, q4_K, q5_K, q6_K).
  mlir::Value decodeSuperBlock(mlir::Value lane);
  mlir::Value readU8(int64_t offset);
  mlir::Value readF16(int64_t offset);
  mlir::Value nibble(mlir::Value lane);
  mlir::Value highBits();
  mlir::Value codeBook(mlir::Value quant);
  /// The first byte of the nibbles of values `first` .. of the block at
  /// `blockOffset` (column `first % 16` of its quants at `quantsOffset`)
  /// and the i32 shift (0 or 4) that brings them down.
  std::pair<mlir::Value, mlir::Value> getNibbleStart(mlir::Value blockOffset,
                                                     mlir::Value first,
                                                     int64_t quantsOffset);
  /// The `n` bytes from byte `start` (an index, a multiple of 2) as words
  /// shifted right by the i32 `shift` and masked by `mask`: one quant of a
  /// slice in each byte.
  llvm::SmallVector<mlir::Value> readFields(const WordReader &readWord,
                                            mlir::Value start,
                                            mlir::Value shift, uint32_t mask,
                                            int64_t n, int64_t rowBytes);
  /// `count` bytes from byte `start` (an index, a multiple of `align`) of
  /// a row of `rowBytes` bytes, as i32 words holding 4 bytes each
  /// (little-endian), from aligned words shifted into place.
  llvm::SmallVector<mlir::Value> readWindow(const WordReader &readWord,
                                            mlir::Value start, int64_t count,
                                            int64_t align, int64_t rowBytes);

  mlir::OpBuilder &b;
  mlir::Location loc;
  BlockQuantizedType type;
  ByteReader readByte;
  mlir::Value base;
};

} // namespace cachet

#endif // CACHET_CONVERSION_BLOCKDECODER_H
