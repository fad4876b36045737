//===- Json.cpp - a small JSON reader for the runtime-only tools ---------===//

#include "Json.h"

#include <cctype>
#include <cstdlib>

using namespace cachet::json;

namespace {
class Parser {
public:
  explicit Parser(const std::string &text) : text(text) {}

  bool parseDocument(Value &value, std::string &error) {
    if (!parseValue(value) || (skipSpace(), pos != text.size())) {
      error = message.empty() ? "trailing characters" : message;
      error += " at offset " + std::to_string(pos);
      return false;
    }
    return true;
  }

private:
  void skipSpace() {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }

  bool fail(const char *what) {
    if (message.empty())
      message = what;
    return false;
  }

  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  bool parseLiteral(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (text.compare(pos, n, word) != 0)
      return fail("unexpected token");
    pos += n;
    return true;
  }

  bool parseString(std::string &out) {
    if (!consume('"'))
      return fail("expected a string");
    while (pos < text.size() && text[pos] != '"') {
      char c = text[pos++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= text.size())
        return fail("unterminated escape");
      char e = text[pos++];
      switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u': {
        if (pos + 4 > text.size())
          return fail("bad \\u escape");
        unsigned code = std::strtoul(text.substr(pos, 4).c_str(), nullptr, 16);
        pos += 4;
        // cachet writes ASCII; keep other code points as UTF-8.
        if (code < 0x80) {
          out += static_cast<char>(code);
        } else if (code < 0x800) {
          out += static_cast<char>(0xC0 | (code >> 6));
          out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
          out += static_cast<char>(0xE0 | (code >> 12));
          out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (code & 0x3F));
        }
        break;
      }
      default:
        out += e;
        break;
      }
    }
    if (pos >= text.size())
      return fail("unterminated string");
    ++pos;
    return true;
  }

  bool parseValue(Value &value) {
    skipSpace();
    if (pos >= text.size())
      return fail("unexpected end of input");
    char c = text[pos];
    if (c == '{') {
      ++pos;
      value.kind = Value::Kind::Object;
      if (consume('}'))
        return true;
      do {
        std::string key;
        skipSpace();
        if (!parseString(key) || !consume(':'))
          return fail("expected \"key\": value");
        if (!parseValue(value.object[key]))
          return false;
      } while (consume(','));
      return consume('}') || fail("expected '}'");
    }
    if (c == '[') {
      ++pos;
      value.kind = Value::Kind::Array;
      if (consume(']'))
        return true;
      do {
        value.array.emplace_back();
        if (!parseValue(value.array.back()))
          return false;
      } while (consume(','));
      return consume(']') || fail("expected ']'");
    }
    if (c == '"') {
      value.kind = Value::Kind::String;
      return parseString(value.string);
    }
    if (c == 't' || c == 'f') {
      value.kind = Value::Kind::Bool;
      value.boolean = c == 't';
      return parseLiteral(c == 't' ? "true" : "false");
    }
    if (c == 'n')
      return parseLiteral("null");
    char *end = nullptr;
    value.number = std::strtod(text.c_str() + pos, &end);
    if (end == text.c_str() + pos)
      return fail("unexpected character");
    value.kind = Value::Kind::Number;
    pos = end - text.c_str();
    return true;
  }

  const std::string &text;
  size_t pos = 0;
  std::string message;
};
} // namespace

bool cachet::json::parse(const std::string &text, Value &result,
                         std::string &error) {
  return Parser(text).parseDocument(result, error);
}
