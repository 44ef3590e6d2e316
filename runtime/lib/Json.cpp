//===- Json.cpp - a minimal JSON reader -----------------------------------===//

#include "Json.h"

#include <cstdio>

#include <cerrno>
#include <cstdlib>
#include <set>

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

/// Most arrays and objects nested in one another (the Python validator has
/// the same limit).
constexpr int kMaxDepth = 64;

/// Whether `t` is well-formed UTF-8 (Unicode 15, table 3-7: no overlong
/// forms, no surrogates, nothing above U+10FFFF), as Python's strict UTF-8
/// decoder wants; sets `bad` to the offset of the first bad byte.
bool isUtf8(const std::string &t, size_t &bad) {
  const auto *u = reinterpret_cast<const unsigned char *>(t.data());
  const size_t n = t.size();
  for (size_t i = 0; i < n;) {
    unsigned c = u[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    unsigned lo = 0x80, hi = 0xbf; // range of the second byte
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c == 0xe0)
        lo = 0xa0;
      else if (c == 0xed)
        hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c == 0xf0)
        lo = 0x90;
      else if (c == 0xf4)
        hi = 0x8f;
    } else {
      bad = i;
      return false;
    }
    for (size_t k = 1; k < len; ++k) {
      unsigned d = i + k < n ? u[i + k] : 0;
      if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xbf)) {
        bad = i;
        return false;
      }
    }
    i += len;
  }
  return true;
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

void appendUtf8(std::string &out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

/// RFC 8259 JSON, as Python's json.loads reads it (strict: no NaN or
/// Infinity, no control characters in strings), but a duplicate key in an
/// object is an error and integers outside int64 are read as floats.
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
    ws();
    if (p >= t.size())
      return fail("unexpected end");
    char c = t[p];
    if (c == '{' || c == '[') {
      if (++depth > kMaxDepth)
        return fail("more than " + std::to_string(kMaxDepth) +
                    " nested arrays and objects");
      bool ok = c == '{' ? object(v) : array(v);
      --depth;
      return ok;
    }
    if (c == '"') {
      v.kind = JsonValue::String;
      return string(v.s);
    }
    if (c == 't' || c == 'f' || c == 'n')
      return literal(v);
    if (c == '-' || isDigit(c))
      return number(v);
    return fail("unexpected character");
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
  /// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  bool number(JsonValue &v) {
    size_t start = p;
    auto digits = [&] {
      size_t from = p;
      while (p < t.size() && isDigit(t[p]))
        ++p;
      return p > from;
    };
    if (t[p] == '-')
      ++p;
    if (p < t.size() && t[p] == '0')
      ++p;
    else if (!digits())
      return fail("bad number");
    bool isFloat = false;
    if (p < t.size() && t[p] == '.') {
      ++p;
      isFloat = true;
      if (!digits())
        return fail("bad number");
    }
    if (p < t.size() && (t[p] == 'e' || t[p] == 'E')) {
      ++p;
      isFloat = true;
      if (p < t.size() && (t[p] == '+' || t[p] == '-'))
        ++p;
      if (!digits())
        return fail("bad number");
    }
    std::string s = t.substr(start, p - start);
    if (!isFloat) {
      errno = 0;
      long long i = std::strtoll(s.c_str(), nullptr, 10);
      if (errno != ERANGE) {
        v.kind = JsonValue::Int;
        v.i = i;
        return true;
      }
    }
    // A float, or an integer outside int64 (which counts as no integer).
    v.kind = JsonValue::Float;
    v.f = std::strtod(s.c_str(), nullptr);
    return true;
  }
  bool hex4(unsigned &out) {
    if (p + 4 > t.size())
      return fail("bad \\u escape");
    out = 0;
    for (int k = 0; k < 4; ++k) {
      int h = hexValue(t[p + k]);
      if (h < 0)
        return fail("bad \\u escape");
      out = out * 16 + static_cast<unsigned>(h);
    }
    p += 4;
    return true;
  }
  bool string(std::string &out) {
    ++p; // opening quote
    out.clear();
    while (p < t.size() && t[p] != '"') {
      char c = t[p];
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in string");
      ++p;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (p >= t.size())
        return fail("unterminated string");
      char e = t[p++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        unsigned cp = 0;
        if (!hex4(cp))
          return false;
        // A surrogate pair is one code point; a lone surrogate stays as it
        // is (Python keeps it too).
        if (cp >= 0xd800 && cp < 0xdc00 && t.compare(p, 2, "\\u") == 0) {
          size_t save = p;
          p += 2;
          unsigned low = 0;
          if (!hex4(low))
            return false;
          if (low >= 0xdc00 && low < 0xe000)
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          else
            p = save;
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        --p;
        return fail("bad escape");
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
    std::set<std::string> keys;
    while (true) {
      ws();
      if (p >= t.size() || t[p] != '"')
        return fail("expected a key");
      size_t keyAt = p;
      std::string key;
      if (!string(key))
        return false;
      if (!keys.insert(key).second) {
        p = keyAt;
        return fail("duplicate key '" + key + "'");
      }
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
  size_t bad;
  if (!isUtf8(text, bad)) {
    error = "invalid UTF-8 at offset " + std::to_string(bad);
    return false;
  }
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

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

} // namespace gnnrt
