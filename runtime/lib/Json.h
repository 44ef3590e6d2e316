//===- Json.h - a minimal JSON reader for meta.json -------------*- C++ -*-===//
//
// Objects, arrays, strings (with escapes), integers, floats, booleans, null:
// RFC 8259 in UTF-8, read as strictly as Python's json.loads (the Python
// validator reads meta.json with it), plus: at most 64 arrays and objects
// nested in one another, no duplicate keys, integers outside int64 read as
// floats. Enough for meta.json; no exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_JSON_H
#define GNNRT_JSON_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gnnrt {

struct JsonValue {
  enum Kind { Null, Bool, Int, Float, String, Array, Object } kind = Null;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> members;

  const JsonValue *get(const std::string &key) const;
  bool truthy() const {
    return kind == Bool ? b : kind == Int ? i != 0 : false;
  }
  /// The value as text (strings unquoted), for messages.
  std::string text() const;
};

bool parseJson(const std::string &text, JsonValue &out, std::string &error);

/// `s` as a JSON string literal (quotes, backslashes and control characters
/// escaped).
std::string jsonString(const std::string &s);

} // namespace gnnrt

#endif // GNNRT_JSON_H
