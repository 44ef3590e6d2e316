//===- Npy.cpp - checked .npy reading and writing -------------------------===//

#include "Npy.h"
#include "File.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace gnnrt {

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "float32";
  case DType::F64:
    return "float64";
  case DType::I32:
    return "int32";
  case DType::I64:
    return "int64";
  case DType::Bool:
    return "bool";
  case DType::U8:
    return "uint8";
  case DType::I16:
    return "int16";
  case DType::Unknown:
    break;
  }
  return "unknown";
}

size_t dtypeSize(DType t) {
  switch (t) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::Bool:
  case DType::U8:
    return 1;
  case DType::I16:
    return 2;
  case DType::Unknown:
    break;
  }
  return 0;
}

int64_t NpyHeader::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace {

/// A tiny parser for the header dictionary numpy writes:
/// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
struct DictParser {
  const std::string &s;
  size_t p = 0;
  explicit DictParser(const std::string &s) : s(s) {}
  void ws() {
    while (p < s.size() && (s[p] == ' ' || s[p] == '\n' || s[p] == '\t'))
      ++p;
  }
  bool eat(char c) {
    ws();
    if (p < s.size() && s[p] == c) {
      ++p;
      return true;
    }
    return false;
  }
  bool str(std::string &out) {
    ws();
    if (p >= s.size() || (s[p] != '\'' && s[p] != '"'))
      return false;
    char q = s[p++];
    size_t start = p;
    while (p < s.size() && s[p] != q)
      ++p;
    if (p >= s.size())
      return false;
    out = s.substr(start, p - start);
    ++p;
    return true;
  }
  bool word(std::string &out) {
    ws();
    size_t start = p;
    while (p < s.size() && std::isalpha(static_cast<unsigned char>(s[p])))
      ++p;
    out = s.substr(start, p - start);
    return !out.empty();
  }
  bool integer(int64_t &out) {
    ws();
    size_t start = p;
    while (p < s.size() && std::isdigit(static_cast<unsigned char>(s[p])))
      ++p;
    if (p == start || p - start > 18)
      return false;
    out = std::strtoll(s.c_str() + start, nullptr, 10);
    return true;
  }
};

DType parseDescr(const std::string &d) {
  if (d == "<f4")
    return DType::F32;
  if (d == "<f8")
    return DType::F64;
  if (d == "<i4")
    return DType::I32;
  if (d == "<i8")
    return DType::I64;
  if (d == "|b1")
    return DType::Bool;
  if (d == "|u1")
    return DType::U8;
  if (d == "<i2")
    return DType::I16;
  return DType::Unknown;
}

} // namespace

/// Opens `path` (a regular file only) for stdio reading.
static FILE *openNpy(const std::string &path, const std::string &name,
                     std::string &error) {
  int fd = openRegularFile(path, name, error);
  if (fd < 0)
    return nullptr;
  FILE *f = ::fdopen(fd, "rb");
  if (!f) {
    error = name + ": " + std::strerror(errno);
    ::close(fd);
  }
  return f;
}

/// Reads the header of the open file `f`, leaving it at the data.
static bool readHeader(FILE *f, const std::string &name, NpyHeader &header,
                       std::string &error) {
  unsigned char head[12];
  size_t got = std::fread(head, 1, 10, f);
  if (got < 10 || std::memcmp(head, "\x93NUMPY", 6) != 0) {
    error =
        name + (got < 10 && got >= 6 && std::memcmp(head, "\x93NUMPY", 6) == 0
                    ? ": truncated .npy header"
                    : ": not an .npy file (bad magic)");
    return false;
  }
  unsigned major = head[6];
  size_t headerLen = 0, offset = 0;
  if (major == 1) {
    headerLen = head[8] | (head[9] << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (std::fread(head + 10, 1, 2, f) < 2) {
      error = name + ": truncated .npy header";
      return false;
    }
    headerLen = head[8] | (head[9] << 8) | (head[10] << 16) |
                (static_cast<size_t>(head[11]) << 24);
    offset = 12;
  } else {
    error = name + ": unsupported .npy version " + std::to_string(major);
    return false;
  }
  if (headerLen > (1u << 20)) {
    error = name + ": corrupt .npy header";
    return false;
  }
  std::string text(headerLen, '\0');
  if (std::fread(&text[0], 1, headerLen, f) < headerLen) {
    error = name + ": truncated .npy header";
    return false;
  }

  DictParser dp(text);
  std::string descr;
  bool haveDescr = false, haveOrder = false, haveShape = false;
  if (!dp.eat('{')) {
    error = name + ": corrupt .npy header";
    return false;
  }
  while (!dp.eat('}')) {
    std::string key;
    if (!dp.str(key) || !dp.eat(':')) {
      error = name + ": corrupt .npy header";
      return false;
    }
    if (key == "descr") {
      if (!dp.str(descr)) {
        error = name + ": corrupt .npy header";
        return false;
      }
      haveDescr = true;
    } else if (key == "fortran_order") {
      std::string w;
      if (!dp.word(w) || (w != "True" && w != "False")) {
        error = name + ": corrupt .npy header";
        return false;
      }
      header.fortranOrder = w == "True";
      haveOrder = true;
    } else if (key == "shape") {
      if (!dp.eat('(')) {
        error = name + ": corrupt .npy header";
        return false;
      }
      header.shape.clear();
      while (!dp.eat(')')) {
        int64_t d;
        if (!dp.integer(d) || header.shape.size() > 8) {
          error = name + ": corrupt .npy header (shape)";
          return false;
        }
        header.shape.push_back(d);
        dp.eat(',');
      }
      haveShape = true;
    } else {
      error = name + ": corrupt .npy header (unknown key '" + key + "')";
      return false;
    }
    dp.eat(',');
  }
  if (!haveDescr || !haveOrder || !haveShape) {
    error = name + ": corrupt .npy header";
    return false;
  }
  header.dtype = parseDescr(descr);
  if (header.dtype == DType::Unknown) {
    error = name + ": unsupported dtype '" + descr + "'";
    return false;
  }
  if (header.fortranOrder) {
    error = name + ": Fortran-ordered arrays are not supported";
    return false;
  }
  // Overflow-safe size check against the file.
  __int128 need = static_cast<__int128>(offset + headerLen);
  __int128 elems = 1;
  for (int64_t d : header.shape) {
    elems *= d;
    if (elems > (static_cast<__int128>(1) << 62)) {
      error = name + ": corrupt .npy header (shape too large)";
      return false;
    }
  }
  need += elems * static_cast<__int128>(dtypeSize(header.dtype));
  struct stat st;
  if (::fstat(::fileno(f), &st) != 0) {
    error = name + ": " + std::strerror(errno);
    return false;
  }
  if (static_cast<__int128>(st.st_size) < need) {
    error = name + ": truncated: header announces " +
            std::to_string(static_cast<long long>(need)) + " bytes, file has " +
            std::to_string(static_cast<long long>(st.st_size));
    return false;
  }
  header.dataOffset = offset + headerLen;
  return true;
}

/// readNpy on the open file `f`.
static bool readNpyFrom(FILE *f, const std::string &name, DType expected,
                        int rank, NpyHeader &header, std::vector<char> &data,
                        std::string &error) {
  if (!readHeader(f, name, header, error))
    return false;
  if (expected != DType::Unknown && header.dtype != expected) {
    error = name + ": dtype " + dtypeName(header.dtype) +
            " but the format needs " + dtypeName(expected);
    return false;
  }
  if (rank >= 0 && static_cast<int>(header.shape.size()) != rank) {
    error = name + ": rank " + std::to_string(header.shape.size()) + " but " +
            std::to_string(rank) + " expected";
    return false;
  }
  size_t bytes =
      static_cast<size_t>(header.numElements()) * dtypeSize(header.dtype);
  data.resize(bytes);
  // readHeader left `f` at the data.
  if (bytes != 0 && std::fread(data.data(), 1, bytes, f) != bytes) {
    error = name + ": truncated";
    return false;
  }
  return true;
}

bool readNpyHeader(const std::string &path, const std::string &name,
                   NpyHeader &header, std::string &error) {
  FILE *f = openNpy(path, name, error);
  if (!f)
    return false;
  bool ok = readHeader(f, name, header, error);
  std::fclose(f);
  return ok;
}

bool readNpy(const std::string &path, const std::string &name, DType expected,
             int rank, NpyHeader &header, std::vector<char> &data,
             std::string &error) {
  FILE *f = openNpy(path, name, error);
  if (!f)
    return false;
  bool ok = readNpyFrom(f, name, expected, rank, header, data, error);
  std::fclose(f);
  return ok;
}

static const char *descrOf(DType t) {
  switch (t) {
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::Bool:
    return "|b1";
  case DType::U8:
    return "|u1";
  case DType::I16:
    return "<i2";
  case DType::Unknown:
    break;
  }
  return "?";
}

bool writeNpy(const std::string &path, DType dtype,
              const std::vector<int64_t> &shape, const void *data,
              std::string &error) {
  std::string dict = std::string("{'descr': '") + descrOf(dtype) +
                     "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i)
    dict += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1)
    dict += ",";
  dict += "), }";
  size_t total = 10 + dict.size() + 1;
  size_t pad = (64 - total % 64) % 64;
  dict += std::string(pad, ' ') + "\n";
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  unsigned char head[10] = {0x93,
                            'N',
                            'U',
                            'M',
                            'P',
                            'Y',
                            1,
                            0,
                            static_cast<unsigned char>(dict.size() & 0xff),
                            static_cast<unsigned char>(dict.size() >> 8)};
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  size_t bytes = static_cast<size_t>(n) * dtypeSize(dtype);
  bool ok = std::fwrite(head, 1, 10, f) == 10 &&
            std::fwrite(dict.data(), 1, dict.size(), f) == dict.size() &&
            (bytes == 0 || std::fwrite(data, 1, bytes, f) == bytes);
  ok = (std::fclose(f) == 0) && ok;
  if (!ok)
    error = path + ": write failed";
  return ok;
}

} // namespace gnnrt
