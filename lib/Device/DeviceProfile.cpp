//===- DeviceProfile.cpp - built-in profiles, JSON loader, attribute -----===//

#include "cachet/Device/DeviceProfile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace cachet;
using llvm::Error;
using llvm::Expected;

//===----------------------------------------------------------------------===//
// Built-in profiles. Every figure and its source is in docs/device-profiles.md.
//===----------------------------------------------------------------------===//

static const DeviceProfile kBuiltinProfiles[] = {
    // NVIDIA H200 (measured): 60 MiB L2, 4.27 TB/s copy, no alias cliff.
    {"h200",
     "nvidia",
     "sm_90",
     128,
     62914560,
     0,
     0,
     132,
     4270.0,
     false,
     1.0,
     true,
     "bulk",
     {"16x16x16:f16->f32", "16x16x16:f16->f16"},
     32,
     232448},
    // NVIDIA RTX 4070 (quoted): 36 MiB L2, 504 GB/s, no PDL.
    {"rtx4070",
     "nvidia",
     "sm_89",
     128,
     37748736,
     0,
     0,
     46,
     504.0,
     false,
     1.0,
     false,
     "l2",
     {"16x16x16:f16->f32", "16x16x16:f16->f16"},
     32,
     101376},
    // NVIDIA RTX 2060 SUPER (quoted): 4 MiB L2.
    {"rtx2060s",
     "nvidia",
     "sm_75",
     128,
     4194304,
     0,
     0,
     34,
     448.0,
     false,
     1.0,
     false,
     "l2",
     {"16x16x16:f16->f32", "16x16x16:f16->f16"},
     32,
     65536},
    // AMD gfx1151 Strix Halo (quoted): 2048 B alias stride, pad 128 B, UMA.
    {"gfx1151",
     "amd",
     "gfx1151",
     128,
     2097152,
     2048,
     128,
     40,
     256.0,
     true,
     3.2,
     false,
     "none",
     {"16x16x16:f16->f32"},
     32,
     65536},
    // AMD gfx942 MI300X (quoted): 128 B lines x 4 sets.
    {"gfx942",
     "amd",
     "gfx942",
     128,
     4194304,
     512,
     128,
     304,
     5300.0,
     false,
     1.0,
     false,
     "none",
     {"16x16x16:f16->f32", "32x32x8:f16->f32"},
     64,
     65536},
    // Mesa lavapipe on the CI host CPU (measured): 64 B lines, 2048 B cliff.
    {"lavapipe",
     "mesa",
     "x86_64",
     64,
     2097152,
     2048,
     64,
     2,
     24.0,
     true,
     9.0,
     false,
     "none",
     {},
     8,
     32768},
};

ArrayRef<StringRef> cachet::getBuiltinProfileNames() {
  static const SmallVector<StringRef> names = llvm::to_vector(
      llvm::map_range(kBuiltinProfiles, [](const DeviceProfile &p) {
        return StringRef(p.name);
      }));
  return names;
}

Expected<DeviceProfile> cachet::getBuiltinProfile(StringRef name) {
  for (const DeviceProfile &profile : kBuiltinProfiles)
    if (profile.name == name)
      return profile;
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "unknown device profile '" + name +
          "' (built-ins: " + llvm::join(getBuiltinProfileNames(), ", ") +
          "; or give a path to a .json profile)");
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

namespace {
/// Reads the fields of one JSON profile object, reporting the first error
/// with the source name and the field.
class ProfileReader {
public:
  ProfileReader(const llvm::json::Object &object, StringRef source)
      : object(object), source(source) {}

  void readString(StringRef key, std::string &out) {
    if (const llvm::json::Value *value = find(key)) {
      if (std::optional<StringRef> s = value->getAsString())
        out = s->str();
      else
        fail(key, "expected a string");
    }
  }

  void readUnsigned(StringRef key, uint64_t &out) {
    if (const llvm::json::Value *value = find(key)) {
      std::optional<int64_t> i = value->getAsInteger();
      if (i && *i >= 0)
        out = static_cast<uint64_t>(*i);
      else
        fail(key, "expected a non-negative integer");
    }
  }

  void readNumber(StringRef key, double &out) {
    if (const llvm::json::Value *value = find(key)) {
      if (std::optional<double> d = value->getAsNumber())
        out = *d;
      else
        fail(key, "expected a number");
    }
  }

  void readBool(StringRef key, bool &out) {
    if (const llvm::json::Value *value = find(key)) {
      if (std::optional<bool> b = value->getAsBoolean())
        out = *b;
      else
        fail(key, "expected true or false");
    }
  }

  void readStrings(StringRef key, std::vector<std::string> &out) {
    const llvm::json::Value *value = find(key);
    if (!value)
      return;
    const llvm::json::Array *array = value->getAsArray();
    if (!array)
      return fail(key, "expected an array of strings");
    for (const llvm::json::Value &entry : *array) {
      std::optional<StringRef> s = entry.getAsString();
      if (!s)
        return fail(key, "expected an array of strings");
      out.push_back(s->str());
    }
  }

  /// Reports keys that no field reads (typos would otherwise be ignored).
  void rejectUnknownKeys(ArrayRef<StringRef> known) {
    for (const auto &entry : object)
      if (!llvm::is_contained(known, StringRef(entry.first)))
        fail(entry.first, "unknown field");
  }

  Error takeError() {
    if (message.empty())
      return Error::success();
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  }

private:
  const llvm::json::Value *find(StringRef key) {
    const llvm::json::Value *value = object.get(key);
    if (!value)
      fail(key, "missing");
    return value;
  }

  void fail(StringRef key, StringRef what) {
    if (message.empty())
      message = (source + ": field '" + key + "': " + what).str();
  }

  const llvm::json::Object &object;
  StringRef source;
  std::string message;
};
} // namespace

Expected<DeviceProfile> cachet::parseProfileJSON(StringRef text,
                                                 StringRef source) {
  Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        source + ": invalid JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *object = json->getAsObject();
  if (!object)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   source + ": expected a JSON object");
  DeviceProfile p;
  ProfileReader reader(*object, source);
  reader.readString("name", p.name);
  reader.readString("vendor", p.vendor);
  reader.readString("arch", p.arch);
  reader.readUnsigned("cache_line", p.cacheLine);
  reader.readUnsigned("l2_bytes", p.l2Bytes);
  reader.readUnsigned("alias_stride", p.aliasStride);
  reader.readUnsigned("alias_pad", p.aliasPad);
  reader.readUnsigned("compute_units", p.computeUnits);
  reader.readNumber("dram_gbps", p.dramGbps);
  reader.readBool("unified_memory", p.unifiedMemory);
  reader.readNumber("strided_read_penalty", p.stridedReadPenalty);
  reader.readBool("pdl", p.pdl);
  reader.readString("l2_prefetch", p.l2Prefetch);
  reader.readStrings("coop_matrix", p.coopMatrix);
  reader.readUnsigned("subgroup_size", p.subgroupSize);
  reader.readUnsigned("shared_memory_bytes", p.sharedMemoryBytes);
  // "measurements" records how a probe obtained the figures; passes ignore it.
  reader.rejectUnknownKeys(
      {"name", "vendor", "arch", "cache_line", "l2_bytes", "alias_stride",
       "alias_pad", "compute_units", "dram_gbps", "unified_memory",
       "strided_read_penalty", "pdl", "l2_prefetch", "coop_matrix",
       "subgroup_size", "shared_memory_bytes", "measurements"});
  if (Error error = reader.takeError())
    return std::move(error);
  return p;
}

Expected<DeviceProfile> cachet::resolveProfile(StringRef nameOrPath) {
  if (!nameOrPath.contains('/') && !nameOrPath.ends_with(".json"))
    return getBuiltinProfile(nameOrPath);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(nameOrPath);
  if (!file)
    return llvm::createStringError(file.getError(),
                                   "cannot read device profile '" + nameOrPath +
                                       "': " + file.getError().message());
  return parseProfileJSON((*file)->getBuffer(), nameOrPath);
}

//===----------------------------------------------------------------------===//
// Attribute
//===----------------------------------------------------------------------===//

DeviceProfileAttr
cachet::getProfileAttr(MLIRContext *context, const DeviceProfile &p,
                       function_ref<InFlightDiagnostic()> emitError) {
  Builder b(context);
  SmallVector<Attribute> coop = llvm::to_vector(
      llvm::map_range(p.coopMatrix, [&](const std::string &s) -> Attribute {
        return b.getStringAttr(s);
      }));
  return DeviceProfileAttr::getChecked(
      emitError, context, StringRef(p.name), StringRef(p.vendor),
      StringRef(p.arch), p.cacheLine, p.l2Bytes, p.aliasStride, p.aliasPad,
      p.computeUnits, APFloat(p.dramGbps), p.unifiedMemory,
      APFloat(p.stridedReadPenalty), p.pdl, StringRef(p.l2Prefetch),
      b.getArrayAttr(coop), p.subgroupSize, p.sharedMemoryBytes);
}

DeviceProfileAttr cachet::lookupDeviceProfile(Operation *op) {
  for (Operation *cur = op; cur; cur = cur->getParentOp())
    if (isa<ModuleOp>(cur))
      if (auto attr = cur->getAttrOfType<DeviceProfileAttr>(
              CachetDialect::getDeviceAttrName()))
        return attr;
  return {};
}

bool cachet::hasCoopMatrix(DeviceProfileAttr profile, llvm::StringRef shape) {
  return profile && llvm::any_of(profile.getCoopMatrix(), [&](Attribute a) {
           auto str = dyn_cast<StringAttr>(a);
           return str && str.getValue() == shape;
         });
}

void cachet::declareCooperativeMatrixCheck(mlir::ModuleOp module) {
  if (module.lookupSymbol(kHasCooperativeMatrixF16))
    return;
  mlir::OpBuilder b = mlir::OpBuilder::atBlockBegin(module.getBody());
  mlir::Type i32 = b.getI32Type();
  mlir::LLVM::LLVMFuncOp::create(
      b, module.getLoc(), kHasCooperativeMatrixF16,
      mlir::LLVM::LLVMFunctionType::get(i32, {i32, i32, i32}));
}

mlir::Value cachet::buildCooperativeMatrixCheck(mlir::OpBuilder &b,
                                                mlir::Operation *op) {
  auto module = op->getParentOfType<mlir::ModuleOp>();
  auto callee = module ? module.lookupSymbol<mlir::LLVM::LLVMFuncOp>(
                             kHasCooperativeMatrixF16)
                       : mlir::LLVM::LLVMFuncOp();
  if (!callee)
    return {};
  mlir::Location loc = op->getLoc();
  mlir::Value sixteen = mlir::arith::ConstantIntOp::create(b, loc, 16, 32);
  mlir::Value has =
      mlir::LLVM::CallOp::create(b, loc, callee,
                                 mlir::ValueRange{sixteen, sixteen, sixteen})
          .getResult();
  mlir::Value zero = mlir::arith::ConstantIntOp::create(b, loc, 0, 32);
  return mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::ne,
                                     has, zero);
}
