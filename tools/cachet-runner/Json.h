//===- Json.h - a small JSON reader for the runtime-only tools -----------===//
//
// The runner and the probe run on GPU servers without LLVM, so they cannot use
// llvm::json. This reads the JSON cachet writes (manifests, profiles):
// objects, arrays, strings with the common escapes, numbers, booleans, null.
//
//===----------------------------------------------------------------------===//

#ifndef CACHET_TOOLS_JSON_H
#define CACHET_TOOLS_JSON_H

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cachet::json {

/// A parsed JSON value.
struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Value> array;
  std::map<std::string, Value> object;

  /// Returns the member `key` of an object, or nullptr.
  const Value *get(const std::string &key) const {
    auto it = object.find(key);
    return it == object.end() ? nullptr : &it->second;
  }
};

/// Parses `text`. On error returns false and sets `error` (with the offset).
bool parse(const std::string &text, Value &result, std::string &error);

} // namespace cachet::json

#endif // CACHET_TOOLS_JSON_H
