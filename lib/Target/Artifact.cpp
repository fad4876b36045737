//===- Artifact.cpp - compile once, run on a machine without MLIR --------===//

#include "cachet/Target/Artifact.h"

#include "cachet/Analysis/Buffers.h"
#include "cachet/Dialect/CachetDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
using namespace cachet;

namespace {

/// The host code runs on GPU servers whose CPUs we do not know: a baseline
/// every x86-64 server of the last decade has (F16C converts f16 natively).
constexpr llvm::StringLiteral kHostCPU = "x86-64-v3";

/// Returns the manifest name of a scalar element type.
std::string elementName(Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  type.print(os);
  return name;
}

/// Describes one ranked memref or tensor for the manifest.
FailureOr<llvm::json::Object> describe(Location loc, Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return emitError(loc, "artifact: entry arguments and results must be "
                          "statically shaped tensors, got ")
           << type;
  llvm::json::Array shape;
  for (int64_t size : shaped.getShape())
    shape.push_back(size);
  return llvm::json::Object{{"shape", std::move(shape)},
                            {"element", elementName(shaped.getElementType())}};
}

/// Builds manifest.json from the entry as the GPU pipeline sees it after
/// cachet's rewrites and the lowering of block types to bytes.
FailureOr<llvm::json::Object> buildManifest(ModuleOp module,
                                            const ArtifactOptions &options) {
  OwningOpRef<ModuleOp> clone = module.clone();
  // The GPU build reports the rewrites' remarks; this pass over a copy would
  // only repeat them.
  ScopedDiagnosticHandler dropRemarks(
      module.getContext(), [](Diagnostic &diag) {
        return success(diag.getSeverity() == DiagnosticSeverity::Remark);
      });
  PassManager pm(module.getContext());
  std::string pipeline =
      options.compile.profile.empty()
          ? std::string()
          : "cachet-attach-device{profile=" + options.compile.profile + "},";
  pipeline += "cachet-pad-weight-rows,cachet-lower-to-linalg";
  if (failed(parsePassPipeline(pipeline, pm)) || failed(pm.run(*clone)))
    return failure();
  auto entry = clone->lookupSymbol<func::FuncOp>(options.entry);
  llvm::json::Array arguments, results;
  for (auto [index, type] : llvm::enumerate(entry.getArgumentTypes())) {
    FailureOr<llvm::json::Object> arg = describe(entry.getLoc(), type);
    if (failed(arg))
      return failure();
    if (auto format = entry.getArgAttrOfType<StringAttr>(
            index, CachetDialect::getBlockFormatAttrName()))
      (*arg)["block_format"] = format.getValue().str();
    if (auto pitch = entry.getArgAttrOfType<IntegerAttr>(
            index, CachetDialect::getRowPitchAttrName()))
      (*arg)["row_pitch"] = pitch.getInt();
    (*arg)["weight"] =
        static_cast<bool>(entry.getArgAttr(index, "cachet.weight"));
    arguments.push_back(std::move(*arg));
  }
  for (auto [index, type] : llvm::enumerate(entry.getResultTypes())) {
    FailureOr<llvm::json::Object> result = describe(entry.getLoc(), type);
    if (failed(result))
      return failure();
    if (auto format = entry.getResultAttrOfType<StringAttr>(
            index, CachetDialect::getBlockFormatAttrName()))
      (*result)["block_format"] = format.getValue().str();
    if (auto of = entry.getResultAttrOfType<IntegerAttr>(
            index, cachet::CachetDialect::getArgmaxOfAttrName()))
      (*result)["argmax_of"] = of.getInt();
    results.push_back(std::move(*result));
  }
  // In-place state, as the CPU reference has it after bufferization:
  // arguments the entry writes, and results that are (views of) arguments.
  PassManager bufferize(module.getContext());
  if (failed(parsePassPipeline(kBufferizeFunctions, bufferize)) ||
      failed(bufferize.run(*clone)))
    return failure();
  entry = clone->lookupSymbol<func::FuncOp>(options.entry);
  for (BlockArgument arg : entry.getArguments())
    if (isa<MemRefType>(arg.getType()))
      (*arguments[arg.getArgNumber()].getAsObject())["updated"] =
          cachet::mayWriteBuffer(arg);
  entry.walk([&](func::ReturnOp ret) {
    for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
      while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
        value = view.getViewSource();
      if (auto arg = dyn_cast<BlockArgument>(value);
          arg && arg.getOwner()->getParentOp() == entry)
        (*results[index].getAsObject())["aliases"] =
            static_cast<int64_t>(arg.getArgNumber());
    }
  });

  const char *targets[] = {"spirv", "nvvm", "rocdl"};
  return llvm::json::Object{
      {"entry", options.entry},
      {"target", targets[static_cast<int>(options.compile.target.getValue())]},
      {"chip", options.compile.chip.getValue()},
      {"profile", options.compile.profile.getValue()},
      {"arguments", std::move(arguments)},
      {"results", std::move(results)},
      {"variants", llvm::json::Object{{"gpu", "gpu.so"},
                                      {"gpu-norewrite", "gpu-norewrite.so"},
                                      {"reference", "ref.so"}}}};
}

/// Moves bf16 values through memory as i16. x86 has no bf16 registers: the
/// backend legalizes a bf16 load (then bitcast to i16, as arith-expand
/// leaves every bf16 value) by extending it to float and truncating it back
/// with a call to `__truncsfbf2`, which neither libgcc 12 nor the GPU
/// servers' libraries define. With i16 loads and stores the bitcast pairs
/// fold away.
void loadAndStoreBF16AsI16(llvm::Module &module) {
  llvm::Type *i16 = llvm::Type::getInt16Ty(module.getContext());
  SmallVector<llvm::Instruction *> dead;
  for (llvm::Function &function : module)
    for (llvm::Instruction &inst : llvm::instructions(function)) {
      if (auto *load = dyn_cast<llvm::LoadInst>(&inst);
          load && load->getType()->isBFloatTy()) {
        llvm::IRBuilder<> b(load);
        llvm::LoadInst *bits = b.CreateAlignedLoad(
            i16, load->getPointerOperand(), load->getAlign());
        bits->setVolatile(load->isVolatile());
        llvm::Value *value = b.CreateBitCast(bits, load->getType());
        load->replaceAllUsesWith(value);
        dead.push_back(load);
      } else if (auto *store = dyn_cast<llvm::StoreInst>(&inst);
                 store && store->getValueOperand()->getType()->isBFloatTy()) {
        llvm::IRBuilder<> b(store);
        llvm::Value *bits = b.CreateBitCast(store->getValueOperand(), i16);
        b.CreateAlignedStore(bits, store->getPointerOperand(),
                             store->getAlign(), store->isVolatile());
        dead.push_back(store);
      }
    }
  for (llvm::Instruction *inst : dead)
    inst->eraseFromParent();
  // bitcast(bitcast(x : i16) : bf16) : i16 is x.
  for (llvm::Function &function : module)
    for (llvm::Instruction &inst :
         llvm::make_early_inc_range(llvm::instructions(function)))
      if (auto *outer = dyn_cast<llvm::BitCastInst>(&inst))
        if (auto *inner = dyn_cast<llvm::BitCastInst>(outer->getOperand(0));
            inner && inner->getSrcTy() == outer->getDestTy()) {
          outer->replaceAllUsesWith(inner->getOperand(0));
          outer->eraseFromParent();
        }
}

/// Adds `void _cachet_packed_<entry>(void **args)`, which calls
/// `_mlir_ciface_<entry>` with `args[i]` as its i-th parameter (a pointer:
/// the results' struct, then one memref descriptor per argument; a scalar
/// parameter is loaded from the pointer). A caller passes any number of
/// arguments through one call, without a C prototype per count.
LogicalResult addPackedEntry(llvm::Module &module, StringRef entry) {
  llvm::Function *callee = module.getFunction(("_mlir_ciface_" + entry).str());
  if (!callee)
    return failure();
  llvm::LLVMContext &context = module.getContext();
  auto *ptr = llvm::PointerType::getUnqual(context);
  auto *type =
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr}, false);
  llvm::Function *packed =
      llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                             ("_cachet_packed_" + entry).str(), module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", packed));
  SmallVector<llvm::Value *> args;
  for (auto [index, param] : llvm::enumerate(callee->args())) {
    llvm::Value *slot = b.CreateConstInBoundsGEP1_64(
        ptr, packed->getArg(0), static_cast<uint64_t>(index));
    llvm::Value *pointer = b.CreateLoad(ptr, slot);
    args.push_back(param.getType()->isPointerTy()
                       ? pointer
                       : b.CreateLoad(param.getType(), pointer));
  }
  b.CreateCall(callee, args);
  b.CreateRetVoid();
  return success();
}

/// The host code of the GPU variants is launch glue (buffers, descriptors,
/// mgpu calls) in a few huge basic blocks: at -O3 SelectionDAG's list
/// scheduler, quadratic in a block's size, took about a third of the 8B
/// model's compile; -O0 (FastISel) compiles it in a fraction of that, with
/// the host time per launch within its spread and the 8B decoder's tokens
/// per second at most 0.8% lower on the H200 (docs/BENCHMARKS.md, run 158).
/// The CPU reference computes everything on the host: -O3.
constexpr llvm::CodeGenOptLevel kGpuHostOptLevel = llvm::CodeGenOptLevel::None;
constexpr llvm::CodeGenOptLevel kReferenceOptLevel =
    llvm::CodeGenOptLevel::Aggressive;

/// Runs `build` on a clone of `module`, translates the result to LLVM IR and
/// links its host code, compiled at `hostOptLevel`, into the shared object
/// `path`.
LogicalResult
buildSharedObject(ModuleOp module, const ArtifactOptions &options,
                  function_ref<LogicalResult(OpPassManager &)> build,
                  StringRef path, llvm::CodeGenOptLevel hostOptLevel) {
  OwningOpRef<ModuleOp> clone = module.clone();
  PassManager pm(module.getContext());
  if (failed(build(pm)))
    return failure();
  // Without verifyEachPass the IR is verified once, after the last pass (as
  // clang leaves LLVM's verifier off between passes): the 8B model's
  // functions have thousands of ops per kernel and dozens of passes.
  pm.enableVerifier(options.verifyEachPass);
  // The pass manager's command-line options (--mlir-timing, ...) where the
  // tool registered them.
  if (options.passManagerCLOptions) {
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    applyDefaultTimingPassManagerCLOptions(pm);
  }
  if (failed(pm.run(*clone)))
    return failure();
  if (!options.verifyEachPass && failed(verify(*clone)))
    return module.emitError("artifact: the compiled module of ")
           << path << " does not verify (a pass produced invalid IR; "
           << "--verify-each names it)";

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*clone, llvmContext, path);
  if (!llvmModule)
    return module.emitError("artifact: translation to LLVM IR failed for ")
           << path;

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError("artifact: ") << error;
  llvm::TargetOptions targetOptions;
  // The kernels are loaded by global constructors: glibc runs .init_array.
  targetOptions.UseInitArray = true;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, kHostCPU, "", targetOptions, llvm::Reloc::PIC_, std::nullopt,
      hostOptLevel));
  llvmModule->setDataLayout(machine->createDataLayout());
  loadAndStoreBF16AsI16(*llvmModule);
  if (failed(addPackedEntry(*llvmModule, options.entry)))
    return module.emitError("artifact: no _mlir_ciface_")
           << options.entry << " in " << path;
  llvmModule->setTargetTriple(triple);

  std::string object = (path + ".o").str();
  {
    std::error_code ec;
    llvm::ToolOutputFile out(object, ec, llvm::sys::fs::OF_None);
    if (ec)
      return module.emitError("artifact: cannot write ")
             << object << ": " << ec.message();
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, out.os(), nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return module.emitError("artifact: the host target cannot emit objects");
    codegen.run(*llvmModule);
    out.keep();
  }

  std::string pathString = path.str();
  SmallVector<StringRef> args = {options.linker, "-shared", "-o", pathString,
                                 object};
  std::string linkError;
  int status = llvm::sys::ExecuteAndWait(options.linker, args, std::nullopt, {},
                                         0, 0, &linkError);
  llvm::sys::fs::remove(object);
  if (status != 0)
    return module.emitError("artifact: linking ")
           << path << " with " << options.linker << " failed"
           << (linkError.empty() ? "" : ": ") << linkError;
  return success();
}

} // namespace

LogicalResult cachet::emitArtifact(ModuleOp module,
                                   const ArtifactOptions &options) {
  if (!module.lookupSymbol<func::FuncOp>(options.entry))
    return module.emitError("artifact: no function @") << options.entry;
  DialectRegistry registry;
  registerAllToLLVMIRTranslations(registry);
  module.getContext()->appendDialectRegistry(registry);

  if (std::error_code ec = llvm::sys::fs::create_directories(options.directory))
    return module.emitError("artifact: cannot create ")
           << options.directory << ": " << ec.message();
  auto file = [&](StringRef name) {
    SmallString<128> path(options.directory);
    llvm::sys::path::append(path, name);
    return std::string(path);
  };

  FailureOr<llvm::json::Object> manifest = buildManifest(module, options);
  if (failed(manifest))
    return failure();

  auto emitError = [&](const Twine &message) -> LogicalResult {
    return module.emitError(message);
  };
  for (bool rewrites : {true, false}) {
    if (!options.gpu)
      continue;
    CompileOptions compile;
    compile.copyOptionValuesFrom(options.compile);
    compile.rewrites = rewrites;
    if (failed(buildSharedObject(
            module, options,
            [&](OpPassManager &pm) {
              return buildCachetCompilePipeline(pm, compile, emitError);
            },
            file(rewrites ? "gpu.so" : "gpu-norewrite.so"), kGpuHostOptLevel)))
      return failure();
  }
  if (options.reference &&
      failed(buildSharedObject(
          module, options,
          [&](OpPassManager &pm) {
            return buildCachetReferencePipeline(pm, options.compile, emitError);
          },
          file("ref.so"), kReferenceOptLevel)))
    return failure();

  std::error_code ec;
  llvm::raw_fd_ostream out(file("manifest.json"), ec);
  if (ec)
    return module.emitError("artifact: cannot write manifest.json: ")
           << ec.message();
  out << llvm::formatv("{0:2}", llvm::json::Value(std::move(*manifest)))
      << "\n";
  return success();
}
