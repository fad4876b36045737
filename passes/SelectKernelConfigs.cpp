//===- SelectKernelConfigs.cpp - choose each op's kernel ------------------===//
//
// Puts a #cachet.kernel_config on every op a cachet lowering builds a kernel
// for, from the cost models of lib/Analysis and the device profile, with a
// remark per decision. A config already in the IR is kept. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cachet/Analysis/AttentionConfig.h"
#include "cachet/Analysis/DequantTransposeConfig.h"
#include "cachet/Analysis/MatvecConfig.h"
#include "cachet/Analysis/PrefetchPlan.h"
#include "cachet/Analysis/QuantizeConfig.h"
#include "cachet/Device/DeviceProfile.h"
#include "cachet/Passes.h"

namespace cachet {
#define GEN_PASS_DEF_SELECTKERNELCONFIGS
#include "cachet/Passes.h.inc"
} // namespace cachet

using namespace mlir;
using namespace cachet;

namespace {

struct SelectKernelConfigsPass final
    : public cachet::impl::SelectKernelConfigsBase<SelectKernelConfigsPass> {
  using Base::Base;

  AttentionConfigOptions getAttentionOptions() const {
    AttentionConfigOptions o;
    o.kernel = attentionKernel;
    o.allowMmaSync = allowMmaSync;
    o.allowMma = allowMma;
    o.mmaFallback = mmaFallback;
    o.allowWgmma = allowWgmma;
    o.attentionWgmma = attentionWgmma;
    o.wgmmaStages = attentionWgmmaStages;
    o.queryTile = queryTile;
    o.keyTile = keyTile;
    o.vectorBytes = vectorBytes;
    o.tilePadBytes = tilePadBytes;
    o.dynamicShared = dynamicShared;
    o.residentWorkgroups = residentWorkgroups;
    o.occupancyHint = occupancyHint;
    o.asyncCopy = asyncCopy;
    o.rowBlocks = rowBlocks;
    o.lazyRescale = lazyRescale;
    o.warpSync = warpSync;
    o.decodeRows = decodeRows;
    o.decodeSplit = decodeSplit;
    o.decodeThreads = decodeThreads;
    o.decodeLoadBytes = decodeLoadBytes;
    o.decodeStages = decodeStages;
    o.decodeRowValues = decodeRowValues;
    o.decodeUnroll = decodeUnroll;
    o.decodeMmaSync = decodeMmaSync;
    o.decodeMmaUnroll = decodeMmaUnroll;
    o.decodeMmaStages = decodeMmaStages;
    o.decodeWorkgroupsPerUnit = decodeWorkgroupsPerUnit;
    o.decodeBlockWorkgroupsPerUnit = decodeBlockWorkgroupsPerUnit;
    o.decodeWorkgroupRows = decodeWorkgroupRows;
    return o;
  }

  /// Range-checks the options as they are parsed: a bad one fails the
  /// pipeline that names it, before any IR is touched.
  MatvecConfigOptions getMatvecOptions() const {
    MatvecConfigOptions o;
    o.kernel = matvecKernel;
    o.subgroupSize = subgroupSize;
    o.rowsPerBlock = rowsPerBlock;
    o.loadsPerLane = loadsPerLane;
    o.pairedLoadsPerLane = pairedLoadsPerLane;
    o.blocksPerCU = blocksPerCU;
    o.pairedBlocksPerCU = pairedBlocksPerCU;
    o.stageX = stageX;
    o.rowsPerSubgroup = rowsPerSubgroup;
    o.loadBytes = loadBytes;
    o.blockSlice = blockSlice;
    o.splitBlockSlice = splitBlockSlice;
    o.superBlockSlice = superBlockSlice;
    o.blockRowsPerSubgroup = blockRowsPerSubgroup;
    o.blockPairedLoadsPerLane = blockPairedLoadsPerLane;
    o.bf16Vectors = bf16Vectors;
    o.fuseSiblings = fuseSiblings;
    o.fuseEpilogues = fuseEpilogues;
    o.smallBatch = smallBatch;
    o.smallBatchLoads = smallBatchLoads;
    o.mmaSync = allowMmaSync;
    o.smallBatchMma = smallBatchMma;
    o.smallBatchMmaRows = smallBatchMmaRows;
    o.smallBatchMmaSteps = smallBatchMmaSteps;
    o.bf16BlockMma = bf16BlockMma;
    o.gemm = gemm;
    o.gemmTileM = gemmTileM;
    o.gemmTileN = gemmTileN;
    o.gemmStep = gemmStep;
    o.gemmSubgroups = gemmSubgroups;
    o.gemmStages = gemmStages;
    o.gemmFillEighths = gemmFillEighths;
    o.mma = allowMma;
    o.gemmMma = gemmMma;
    o.mmaFallback = mmaFallback;
    o.wgmma = allowWgmma;
    o.gemmWgmma = gemmWgmma;
    o.gemmDecodeBlocks = gemmDecodeBlocks;
    o.gemmDecodeProducers = gemmDecodeProducers;
    return o;
  }

  /// The launch-plan options as lib/Analysis/PrefetchPlan takes them.
  PrefetchPlanOptions getPrefetchOptions() const {
    PrefetchPlanOptions o;
    o.mode = prefetch;
    o.fraction = prefetchFraction;
    o.maxBytes = prefetchMaxBytes;
    o.ctas = prefetchCtas;
    o.trigger = pdlTrigger;
    o.wait = pdlWait;
    return o;
  }

  /// The dequant-transpose options as lib/Analysis takes them.
  DequantTransposeConfigOptions getDequantTransposeOptions() const {
    DequantTransposeConfigOptions o;
    o.kernel = dequantTransposeKernel;
    o.positionsPerGroup = positionsPerGroup;
    o.maxWorkgroupBytes = maxWorkgroupBytes;
    o.threads = dequantTransposeThreads;
    o.loadBytes = dequantTransposeLoadBytes;
    o.storeBytes = dequantTransposeStoreBytes;
    return o;
  }

  /// The quantize options as lib/Analysis takes them.
  QuantizeConfigOptions getQuantizeOptions() const {
    QuantizeConfigOptions o;
    o.kernel = quantizeKernel;
    o.threads = quantizeThreads;
    o.subgroupSize = subgroupSize;
    return o;
  }

  /// Why an option is out of range, or "".
  std::string checkOptions() const {
    std::string bad = checkAttentionConfigOptions(getAttentionOptions());
    if (bad.empty())
      bad = checkMatvecConfigOptions(getMatvecOptions());
    if (bad.empty())
      bad = checkDequantTransposeConfigOptions(getDequantTransposeOptions());
    if (bad.empty())
      bad = checkQuantizeConfigOptions(getQuantizeOptions());
    return bad.empty() ? checkPrefetchPlanOptions(getPrefetchOptions()) : bad;
  }

  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(Pass::initializeOptions(options, errorHandler)))
      return failure();
    if (std::string bad = checkOptions(); !bad.empty())
      return errorHandler("cachet-select-kernel-configs: " + bad);
    return success();
  }

  /// Puts the config `decide` returns on `op` with a remark saying why,
  /// unless `op` has one (kept, with a remark); an empty remark is no
  /// decision.
  template <typename Decide>
  static void configure(Operation *op, Decide decide) {
    StringRef name = CachetDialect::getKernelConfigAttrName();
    if (op->hasAttr(name)) {
      emitRemark(op->getLoc(),
                 "cachet-select-kernel-configs: the config in the IR is "
                 "kept");
      return;
    }
    auto [config, remark] = decide();
    if (remark.empty())
      return;
    emitRemark(op->getLoc(), "cachet-select-kernel-configs: ") << remark;
    if (config)
      op->setAttr(name, config);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    AttentionConfigOptions attention = getAttentionOptions();
    MatvecConfigOptions matvec = getMatvecOptions();
    if (std::string bad = checkOptions(); !bad.empty()) {
      module.emitError("cachet-select-kernel-configs: ") << bad;
      return signalPassFailure();
    }
    DeviceProfileAttr profile = lookupDeviceProfile(module);
    DequantTransposeConfigOptions dequant = getDequantTransposeOptions();
    module.walk([&](Operation *op) {
      if (!isa<AttentionOp, AttentionPartialOp>(op))
        return;
      configure(op, [&] {
        AttentionDecision d = selectAttentionConfig(op, profile, attention);
        if (d.fallback)
          op->setAttr(CachetDialect::getFallbackKernelConfigAttrName(),
                      d.fallback);
        return std::make_pair(d.config, d.remark);
      });
    });
    module.walk([&](Operation *op) {
      if (!getMatvecOperands(op))
        return;
      configure(op, [&] {
        MatvecDecision d = selectMatvecConfig(op, profile, matvec);
        if (d.fallback) {
          // cachet-lower-matvec (a pass on functions) calls the check the
          // module declares.
          op->setAttr(CachetDialect::getFallbackKernelConfigAttrName(),
                      d.fallback);
          declareCooperativeMatrixCheck(module);
        }
        // No config (on tensors): no decision yet, no remark.
        return std::make_pair(d.config, d.config ? d.remark : std::string());
      });
    });
    module.walk([&](linalg::GenericOp op) {
      if (!op->hasAttr(CachetDialect::getDequantTransposeAttrName()) ||
          !op.hasPureBufferSemantics())
        return;
      configure(op, [&] {
        DequantTransposeDecision d = selectDequantTransposeConfig(op, dequant);
        return std::make_pair(d.config, d.remark);
      });
    });
    QuantizeConfigOptions quantize = getQuantizeOptions();
    module.walk([&](linalg::GenericOp op) {
      if (!op->hasAttr(CachetDialect::getQuantizeAttrName()) ||
          !op.hasPureBufferSemantics())
        return;
      configure(op, [&] {
        QuantizeDecision d = selectQuantizeConfig(op, profile, quantize);
        return std::make_pair(d.config, d.remark);
      });
    });
    selectPrefetchPlans(
        module, profile, getPrefetchOptions(),
        [](Operation *op, const Twine &text) {
          emitRemark(op->getLoc(), "cachet-select-kernel-configs: ") << text;
        });
  }
};

} // namespace

FailureOr<AttentionConfigOptions>
cachet::parseSelectAttentionOptions(StringRef text, std::string &error) {
  SelectKernelConfigsPass pass;
  if (failed(pass.initializeOptions(text, [&](const Twine &message) {
        error = message.str();
        return failure();
      })))
    return failure();
  return pass.getAttentionOptions();
}
