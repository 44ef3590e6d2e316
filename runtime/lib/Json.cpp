//===- Json.cpp - a minimal JSON reader -----------------------------------===//

#include "Json.h"

#include <cstdlib>

namespace gnnrt {

const JsonValue *JsonValue::get(const std::string &key) const {
  for (const auto &m : members)
    if (m.first == key)
      return &m.second;
  return nullptr;
}

std::string JsonValue::text() const {
  switch (kind) {
  case Null:
    return "null";
  case Bool:
    return b ? "true" : "false";
  case Int:
    return std::to_string(i);
  case Float:
    return std::to_string(f);
  case String:
    return s;
  case Array:
    return "[...]";
  case Object:
    return "{...}";
  }
  return "";
}

namespace {
struct Parser {
  const std::string &t;
  size_t p = 0;
  std::string error;
  int depth = 0;
  explicit Parser(const std::string &t) : t(t) {}
  void ws() {
    while (p < t.size() &&
           (t[p] == ' ' || t[p] == '\n' || t[p] == '\r' || t[p] == '\t'))
      ++p;
  }
  bool fail(const std::string &m) {
    if (error.empty())
      error = m + " at offset " + std::to_string(p);
    return false;
  }
  bool value(JsonValue &v) {
    if (++depth > 64)
      return fail("nesting too deep");
    ws();
    if (p >= t.size())
      return fail("unexpected end");
    char c = t[p];
    bool ok;
    if (c == '{')
      ok = object(v);
    else if (c == '[')
      ok = array(v);
    else if (c == '"') {
      v.kind = JsonValue::String;
      ok = string(v.s);
    } else if (c == 't' || c == 'f' || c == 'n')
      ok = literal(v);
    else
      ok = number(v);
    --depth;
    return ok;
  }
  bool literal(JsonValue &v) {
    auto match = [&](const char *w) {
      size_t n = std::char_traits<char>::length(w);
      if (t.compare(p, n, w) == 0) {
        p += n;
        return true;
      }
      return false;
    };
    if (match("true")) {
      v.kind = JsonValue::Bool;
      v.b = true;
      return true;
    }
    if (match("false")) {
      v.kind = JsonValue::Bool;
      v.b = false;
      return true;
    }
    if (match("null")) {
      v.kind = JsonValue::Null;
      return true;
    }
    return fail("unexpected token");
  }
  bool number(JsonValue &v) {
    size_t start = p;
    if (p < t.size() && t[p] == '-')
      ++p;
    bool isFloat = false;
    while (p < t.size() &&
           (std::isdigit(static_cast<unsigned char>(t[p])) || t[p] == '.' ||
            t[p] == 'e' || t[p] == 'E' || t[p] == '+' || t[p] == '-')) {
      if (t[p] == '.' || t[p] == 'e' || t[p] == 'E')
        isFloat = true;
      ++p;
    }
    if (p == start)
      return fail("unexpected character");
    std::string s = t.substr(start, p - start);
    char *end = nullptr;
    if (isFloat) {
      v.kind = JsonValue::Float;
      v.f = std::strtod(s.c_str(), &end);
    } else {
      v.kind = JsonValue::Int;
      v.i = std::strtoll(s.c_str(), &end, 10);
    }
    if (!end || *end)
      return fail("bad number");
    return true;
  }
  bool string(std::string &out) {
    ++p; // opening quote
    out.clear();
    while (p < t.size() && t[p] != '"') {
      char c = t[p++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (p >= t.size())
        return fail("unterminated string");
      char e = t[p++];
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
        if (p + 4 > t.size())
          return fail("bad escape");
        unsigned cp = std::strtoul(t.substr(p, 4).c_str(), nullptr, 16);
        p += 4;
        if (cp < 0x80)
          out += static_cast<char>(cp);
        else if (cp < 0x800) {
          out += static_cast<char>(0xc0 | (cp >> 6));
          out += static_cast<char>(0x80 | (cp & 0x3f));
        } else {
          out += static_cast<char>(0xe0 | (cp >> 12));
          out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
          out += static_cast<char>(0x80 | (cp & 0x3f));
        }
        break;
      }
      default:
        out += e;
      }
    }
    if (p >= t.size())
      return fail("unterminated string");
    ++p;
    return true;
  }
  bool array(JsonValue &v) {
    v.kind = JsonValue::Array;
    ++p;
    ws();
    if (p < t.size() && t[p] == ']') {
      ++p;
      return true;
    }
    while (true) {
      JsonValue item;
      if (!value(item))
        return false;
      v.items.push_back(std::move(item));
      ws();
      if (p < t.size() && t[p] == ',') {
        ++p;
        continue;
      }
      if (p < t.size() && t[p] == ']') {
        ++p;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }
  bool object(JsonValue &v) {
    v.kind = JsonValue::Object;
    ++p;
    ws();
    if (p < t.size() && t[p] == '}') {
      ++p;
      return true;
    }
    while (true) {
      ws();
      if (p >= t.size() || t[p] != '"')
        return fail("expected a key");
      std::string key;
      if (!string(key))
        return false;
      ws();
      if (p >= t.size() || t[p] != ':')
        return fail("expected ':'");
      ++p;
      JsonValue item;
      if (!value(item))
        return false;
      v.members.emplace_back(std::move(key), std::move(item));
      ws();
      if (p < t.size() && t[p] == ',') {
        ++p;
        continue;
      }
      if (p < t.size() && t[p] == '}') {
        ++p;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }
};
} // namespace

bool parseJson(const std::string &text, JsonValue &out, std::string &error) {
  Parser p(text);
  if (!p.value(out)) {
    error = p.error;
    return false;
  }
  p.ws();
  if (p.p != text.size()) {
    error = "trailing characters at offset " + std::to_string(p.p);
    return false;
  }
  return true;
}

} // namespace gnnrt
