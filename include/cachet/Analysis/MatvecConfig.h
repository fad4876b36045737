//===- MatvecConfig.h - which mat-vec kernel, which parameters ------------===//
//
// The cost model behind the #cachet.kernel_config of a linalg.matvec on
// buffers (or of a small-batch linalg.matmul reading its weight transposed):
// cachet's subgroup kernel (a subgroup per row, wide loads, several in flight)
// where it can serve the op, with its subgroups per block, rows per subgroup,
// loads in flight, resident grid and staging of x, or the generic lowering;
// a mat-mul of more rows of x takes the mma-sync GEMM on NVVM.
// cachet-select-kernel-configs calls selectMatvecConfig; cachet-lower-matvec
// checks a config with whyNotMatvecConfig and builds it.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_ANALYSIS_MATVECCONFIG_H
#define CACHET_ANALYSIS_MATVECCONFIG_H

#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <string>

namespace cachet {

/// The mat-vec kernels `matvec-kernel` may ask for.
/// Blocks: the subgroup kernel for block-quantized weights only (the
/// generic lowering for float weights).
enum class MatvecKernelChoice { Auto, Subgroup, Generic, Blocks };

/// Static workgroup memory a block may have on every target (CUDA's limit
/// without an opt-in).
constexpr int64_t kMatvecStaticSharedBytes = 48 * 1024;

/// The knobs of the mat-vec cost model (cachet-select-kernel-configs'
/// options).
struct MatvecConfigOptions {
  MatvecKernelChoice kernel = MatvecKernelChoice::Auto;
  /// Lanes per row; 0: the profile's subgroup size (32 without one).
  int64_t subgroupSize = 0;
  int64_t rowsPerBlock = 4, loadsPerLane = 4, pairedLoadsPerLane = 8;
  int64_t blocksPerCU = 0, pairedBlocksPerCU = 0;
  int64_t rowsPerSubgroup = 1, loadBytes = 16;
  /// Values of a block each lane decodes per load round, and rows per
  /// subgroup (block weights).
  int64_t blockSlice = 8, blockRowsPerSubgroup = 2;
  /// The block slice of split q8_0 weights (0: blockSlice).
  int64_t splitBlockSlice = 0;
  /// The block slice of the k-quants' super-blocks (0: blockSlice).
  int64_t superBlockSlice = 16;
  /// paired-loads-per-lane of a kernel over block weights (0: the float
  /// kernels' setting).
  int64_t blockPairedLoadsPerLane = 2;
  bool stageX = false, bf16Vectors = true;
  bool fuseSiblings = true, fuseEpilogues = true;
  /// The most rows of x (tokens) a linalg.matmul reading its weight
  /// transposed may have to run on the mat-vec kernel (0: none).
  int64_t smallBatch = 8;
  /// A small-batch mat-mul of M rows of x keeps at most smallBatchLoads / M
  /// loads per lane in flight (0: no cap).
  int64_t smallBatchLoads = 16;
  /// The target has m16n8k16 mma.sync (NVVM), and small-batch-mma: f16
  /// small-batch mat-muls take the mma-sync kernel where it serves them.
  bool mmaSync = false, smallBatchMma = true;
  /// The fewest rows of x from which every weight format takes the
  /// mma-sync kernel (fewer: q4_0 and q4_K blocks only).
  int64_t smallBatchMmaRows = 5;
  /// 128-column steps a subgroup of the mma-sync kernel loads before its
  /// mma.syncs (the config's loads).
  int64_t smallBatchMmaSteps = 1;
  /// With mmaSync: a mat-vec or small-batch mat-mul over blocks
  /// dequantized to bf16 takes the mma-sync kernel at any number of rows
  /// of x (bf16 pairs multiplied on mma.sync; a mat-vec's x in column 0 of
  /// B) where it serves it.
  bool bf16BlockMma = false;
  /// With mmaSync: a mat-mul of more rows of x than smallBatch takes the
  /// mma-sync GEMM where it serves it.
  bool gemm = true;
  /// The GEMM's workgroup tile (rows of x, 0: 128, or 64 for at most 64
  /// rows; weight rows), columns per step, subgroups (0: one per 64 x 32
  /// of the tile) and buffered steps.
  int64_t gemmTileM = 0, gemmTileN = 0, gemmStep = 0, gemmSubgroups = 0,
          gemmStages = 0;
  /// wgmma: 128 x 128 tiles whose grid gives workgroups to fewer than this
  /// many eighths of the compute units take 64-row tiles (0: never).
  int64_t gemmFillEighths = 7;
  /// Where the tiled GEMM would run an f16 mat-mul: with mma (the target
  /// lowers gpu.subgroup_mma) and gemmMma, the mma GEMM (gemm_mma) where
  /// the profile has 16x16x16:f16->f32 cooperative matrices, and with
  /// mmaFallback the tiled GEMM beside it as the run-time fallback.
  bool mma = false, gemmMma = false, mmaFallback = false;
  /// The target has sm_90a's warpgroup MMA, and gemm-wgmma: the GEMM runs
  /// on it where it serves the mat-mul.
  bool wgmma = false, gemmWgmma = true;
  /// With wgmma: the GEMM decodes a packed block weight of 32-value
  /// blocks in the kernel (gemm_wgmma with load_bytes) where it can.
  bool gemmDecodeBlocks = false;
  /// With gemmDecodeBlocks: producer warpgroups that decode (workgroup
  /// 2 * tile[0] + 128 each; 0: the multiplying ones decode).
  int64_t gemmDecodeProducers = 0;
};

/// The operands of an op the mat-vec kernel computes: a linalg.matvec
/// (`y[n] += W[n][k] x[k]`), or a linalg.matmul reading its weight
/// transposed (the transpose-b maps: `y[m][n] += x[m][k] W[n][k]`, a batch
/// of M tokens), whose M rows of x the kernel multiplies each decoded slice
/// of the weight with.
struct MatvecOperands {
  mlir::Value weight, x, y;
  /// The rows of x (M; 1 for a mat-vec; ShapedType::kDynamic where not
  /// static).
  int64_t columns = 1;
  /// x and y have the tokens as their first dimension (a mat-mul).
  bool batched = false;
};

/// Returns `op`'s operands where it is a linalg.matvec or a linalg.matmul
/// with the transpose-b maps (and the default signed cast), else
/// std::nullopt.
std::optional<MatvecOperands> getMatvecOperands(mlir::Operation *op);

/// Returns "" or which option is out of range, and its allowed values.
std::string checkMatvecConfigOptions(const MatvecConfigOptions &options);

/// A mat-vec's weight that is a cachet.dequantize of packed blocks (the
/// generic cachet-lower-to-linalg marked cachet.block_dequantize, writing a
/// buffer of its own that only the mat-vec reads): the subgroup kernel
/// reads the blocks and decodes them in registers, and the generic, its
/// buffer and the buffer's dealloc go away.
///
/// A split q8_0 weight (i8 values and f16 scales, a raised front-end
/// dequantization) is read the same way: `bytes` is then the values, one
/// byte each, and `scales` the `rows x cols/32` f16 scales. So is a split
/// q4_0 weight (`block` q4_0): `bytes` holds its i4 values two per byte, the
/// even one in the low nibble.
struct BlockWeight {
  /// The blocks' bytes, `rows x rowBytes` (i8).
  mlir::Value bytes;
  /// The split form's f16 scales; null for packed blocks.
  mlir::Value scales;
  BlockQuantizedType block;
  mlir::linalg::GenericOp dequantize;
  /// The buffer the generic writes and the mat-vec reads.
  mlir::Value buffer;
  int64_t rowBytes = 0;
};

/// Returns `op`'s block weight. Returns std::nullopt with `reason` empty
/// where the weight is not a dequantized block buffer at all, and set where
/// it is but the kernel cannot read the blocks in its place.
std::optional<BlockWeight> getBlockWeight(mlir::Operation *op,
                                          std::string &reason);

/// Returns why the subgroup kernel with `lanes` lanes per row and
/// `loadBytes`-byte loads cannot serve `op`, or "".
std::string whyNotSubgroupMatvec(mlir::Operation *op, int64_t lanes,
                                 int64_t loadBytes, bool bf16Vectors);

/// The decision for one mat-vec; `remark` says what was chosen and why. A
/// mat-vec on tensors gets neither (its buffers' layouts decide).
struct MatvecDecision {
  KernelConfigAttr config;
  /// The kernel launched where the device cannot run `config`'s (the mma
  /// GEMM's tiled GEMM, without cooperative matrices), or null.
  KernelConfigAttr fallback;
  std::string remark;
};

/// Chooses the kernel of `op` (an op getMatvecOperands takes) on `profile`
/// (may be null: defaults).
MatvecDecision selectMatvecConfig(mlir::Operation *op,
                                  DeviceProfileAttr profile,
                                  const MatvecConfigOptions &options);

/// Returns why the wgmma GEMM with `stages` buffers cannot decode a
/// mat-mul's block weight `w` in the kernel (gemm_wgmma with load_bytes),
/// or "": packed blocks of 32 values whose 64-value steps are whole 32-bit
/// words, and 3 or more buffers (a step decoded while the one before it
/// multiplies, the one after it in flight).
std::string whyNotGemmStagedBlocks(const BlockWeight &w, int64_t stages);

/// The bytes per copy of the wgmma GEMM that decodes `w` in the kernel:
/// 16 where its rows keep 16-byte pieces aligned, else 4.
int64_t getGemmStagedPieceBytes(const BlockWeight &w);

/// The bytes of one 64-value step of a row of `w`'s blocks (blocks of 32
/// values or fewer).
inline int64_t getGemmStagedStepBytes(const BlockWeight &w) {
  return 64 / w.block.getBlockValues() * w.block.getBlockBytes();
}

/// Returns why the mma-sync GEMM (gemm_mma_sync) cannot compute `op`, a
/// linalg.matmul reading its weight transposed, or "": static shapes, x and
/// the weight both f16 or both bf16, an f32 result, columns a multiple of
/// `step`, an even number of weight rows, contiguous rows aligned for 16-byte
/// copies (8-byte stores of the result), and at most 65535 workgroups of
/// `tileN` weight rows (grid y).
std::string whyNotGemm(mlir::Operation *op, int64_t tileN, int64_t step);

/// Returns why the subgroup kernel of `config` cannot be built for `op`, or
/// "" (also for matvec_generic, which leaves `op` alone).
std::string whyNotMatvecConfig(mlir::Operation *op, KernelConfigAttr config);

} // namespace cachet

#endif // CACHET_ANALYSIS_MATVECCONFIG_H
