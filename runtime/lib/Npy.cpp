//===- Npy.cpp - checked .npy reading and writing -------------------------===//

#include "Npy.h"
#include "File.h"
#include "Memory.h"

#include <algorithm>
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

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

int64_t NpyHeader::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace {

/// Largest header this reader reads (numpy writes about a hundred bytes).
constexpr size_t kMaxHeaderLen = size_t(1) << 20;
/// Most dimensions an array may have (the format needs two).
constexpr size_t kMaxDims = 8;

/// The header dictionary numpy writes,
///   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
/// read with a strict subset of Python's literal syntax that
/// python/gnnc/data/format.py reads the same way:
/// - a dict of the keys 'descr', 'fortran_order' and 'shape', each once, in
///   any order, a comma after the last one allowed;
/// - strings in single or double quotes, of printable ASCII but backslashes;
/// - fortran_order True or False;
/// - shape a tuple of at most kMaxDims decimal integers (no sign, no leading
///   zero, at most 18 digits), a 1-tuple with its comma: (5,);
/// - spaces, tabs, newlines and carriage returns between the tokens and
///   after the dict (numpy pads with spaces and a newline), nothing else.
struct HeaderParser {
  const std::string &s;
  size_t p = 0;
  explicit HeaderParser(const std::string &s) : s(s) {}
  void ws() {
    while (p < s.size() &&
           (s[p] == ' ' || s[p] == '\t' || s[p] == '\n' || s[p] == '\r'))
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
    for (; p < s.size() && s[p] != q; ++p) {
      unsigned char c = static_cast<unsigned char>(s[p]);
      if (c < 0x20 || c > 0x7e || c == '\\')
        return false;
    }
    if (p >= s.size())
      return false;
    out = s.substr(start, p - start);
    ++p;
    return true;
  }
  /// A name (letters, digits, '_'): True or False.
  bool word(std::string &out) {
    ws();
    size_t start = p;
    while (p < s.size() &&
           (std::isalnum(static_cast<unsigned char>(s[p])) || s[p] == '_'))
      ++p;
    out = s.substr(start, p - start);
    return !out.empty();
  }
  bool integer(int64_t &out) {
    ws();
    size_t start = p;
    while (p < s.size() && std::isdigit(static_cast<unsigned char>(s[p])))
      ++p;
    size_t n = p - start;
    if (n == 0 || n > 18 || (n > 1 && s[start] == '0'))
      return false;
    out = std::strtoll(s.c_str() + start, nullptr, 10);
    return true;
  }
  bool shape(std::vector<int64_t> &out) {
    out.clear();
    if (!eat('('))
      return false;
    if (eat(')'))
      return true;
    while (true) {
      int64_t d;
      if (out.size() == kMaxDims || !integer(d))
        return false;
      out.push_back(d);
      if (eat(')'))
        return out.size() > 1; // (5) is 5, not a tuple
      if (!eat(','))
        return false;
      if (eat(')'))
        return true;
    }
  }
  bool atEnd() {
    ws();
    return p == s.size();
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

static std::string toString(__int128 n) {
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + n % 10));
    n /= 10;
  } while (n > 0);
  return digits;
}

/// Reads the header of the open file `f`, leaving it at the data.
static bool readHeader(FILE *f, const std::string &name, NpyHeader &header,
                       std::string &error) {
  unsigned char head[12];
  size_t got = std::fread(head, 1, 10, f);
  if (got < 6 || std::memcmp(head, "\x93NUMPY", 6) != 0) {
    error = name + ": not an .npy file (bad magic)";
    return false;
  }
  if (got < 10) {
    error = name + ": truncated .npy header";
    return false;
  }
  unsigned major = head[6], minor = head[7];
  size_t headerLen = 0, offset = 0;
  if (major < 1 || major > 3 || minor != 0) {
    error = name + ": unsupported .npy version " + std::to_string(major) + "." +
            std::to_string(minor);
    return false;
  }
  if (major == 1) {
    headerLen = head[8] | (head[9] << 8);
    offset = 10;
  } else {
    if (std::fread(head + 10, 1, 2, f) < 2) {
      error = name + ": truncated .npy header";
      return false;
    }
    headerLen = head[8] | (head[9] << 8) | (head[10] << 16) |
                (static_cast<size_t>(head[11]) << 24);
    offset = 12;
  }
  if (headerLen > kMaxHeaderLen) {
    error = name + ": corrupt .npy header (" + std::to_string(headerLen) +
            " bytes long)";
    return false;
  }
  std::string text(headerLen, '\0');
  if (std::fread(&text[0], 1, headerLen, f) < headerLen) {
    error = name + ": truncated .npy header";
    return false;
  }

  HeaderParser hp(text);
  std::string descr;
  bool have[3] = {false, false, false};
  static const char *keys[3] = {"descr", "fortran_order", "shape"};
  auto corrupt = [&](const std::string &why) {
    error =
        name + ": corrupt .npy header" + (why.empty() ? "" : " (" + why + ")");
    return false;
  };
  if (!hp.eat('{'))
    return corrupt("");
  if (!hp.eat('}')) {
    while (true) {
      std::string key;
      if (!hp.str(key) || !hp.eat(':'))
        return corrupt("");
      int k = 0;
      while (k < 3 && key != keys[k])
        ++k;
      if (k == 3)
        return corrupt("unknown key '" + key + "'");
      if (have[k])
        return corrupt("duplicate key '" + key + "'");
      have[k] = true;
      if (k == 0) {
        if (!hp.str(descr))
          return corrupt("descr");
      } else if (k == 1) {
        std::string w;
        if (!hp.word(w) || (w != "True" && w != "False"))
          return corrupt("fortran_order");
        header.fortranOrder = w == "True";
      } else if (!hp.shape(header.shape)) {
        return corrupt("shape");
      }
      if (hp.eat('}'))
        break;
      if (!hp.eat(','))
        return corrupt("");
      if (hp.eat('}'))
        break;
    }
  }
  if (!hp.atEnd())
    return corrupt("");
  for (int k = 0; k < 3; ++k)
    if (!have[k])
      return corrupt(std::string("missing key '") + keys[k] + "'");
  header.dtype = parseDescr(descr);
  if (header.dtype == DType::Unknown) {
    error = name + ": unsupported dtype '" + descr + "'";
    return false;
  }
  if (header.fortranOrder) {
    error = name + ": Fortran-ordered arrays are not supported";
    return false;
  }
  // The bytes the shape spans, zero dimensions counted as 1 (what numpy
  // checks), at most 2^62: products of dimensions never overflow an int64.
  const __int128 itemSize = dtypeSize(header.dtype);
  __int128 span = 1, elems = 1;
  for (int64_t d : header.shape) {
    span *= std::max<int64_t>(d, 1);
    elems *= d;
    if (span * itemSize > (static_cast<__int128>(1) << 62)) {
      error = name + ": corrupt .npy header (shape too large)";
      return false;
    }
  }
  // Overflow-safe size check against the file.
  __int128 need = static_cast<__int128>(offset + headerLen) + elems * itemSize;
  struct stat st;
  if (::fstat(::fileno(f), &st) != 0) {
    error = name + ": " + std::strerror(errno);
    return false;
  }
  if (static_cast<__int128>(st.st_size) < need) {
    error = name + ": truncated: header announces " + toString(need) +
            " bytes, file has " + std::to_string(st.st_size);
    return false;
  }
  header.dataOffset = offset + headerLen;
  return true;
}

/// readNpyInto on the open file `f`.
/// Reads the header of `f` and checks its dtype and rank against the
/// expected ones (DType::Unknown, rank -1: any).
static bool readCheckedHeader(FILE *f, const std::string &name, DType expected,
                              int rank, NpyHeader &header, std::string &error) {
  if (!readHeader(f, name, header, error))
    return false;
  if (expected != DType::Unknown && header.dtype != expected) {
    error = name + ": dtype " + dtypeName(header.dtype) +
            " but the format needs " + dtypeName(expected);
    return false;
  }
  if (rank >= 0 && static_cast<int>(header.shape.size()) != rank) {
    error = name + ": rank " + std::to_string(header.shape.size()) +
            " (shape " + shapeText(header.shape) + ") but " +
            std::to_string(rank) + " expected";
    return false;
  }
  return true;
}

static bool readNpyFrom(FILE *f, const std::string &name, DType expected,
                        int rank, NpyHeader &header,
                        void *(*resize)(void *, size_t), void *target,
                        std::string &error) {
  if (!readCheckedHeader(f, name, expected, rank, header, error))
    return false;
  // At most 2^62 (readHeader): no overflow.
  const int64_t bytes =
      header.numElements() * static_cast<int64_t>(dtypeSize(header.dtype));
  if (!checkMemory(name + ": its data", bytes, error))
    return false;
  void *data = resize(target, static_cast<size_t>(bytes));
  // readHeader left `f` at the data.
  if (bytes != 0 && std::fread(data, 1, static_cast<size_t>(bytes), f) !=
                        static_cast<size_t>(bytes)) {
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

/// Closes a file read for its data (under --uncached-reads its pages leave
/// the page cache: File.h).
static void closeRead(FILE *f) {
  dropCachedRange(fileno(f), 0, 0);
  forgetCachedFile(fileno(f));
  std::fclose(f);
}

bool readNpyInto(const std::string &path, const std::string &name,
                 DType expected, int rank, NpyHeader &header,
                 void *(*resize)(void *, size_t), void *target,
                 std::string &error) {
  FILE *f = openNpy(path, name, error);
  if (!f)
    return false;
  bool ok = readNpyFrom(f, name, expected, rank, header, resize, target, error);
  closeRead(f);
  return ok;
}

bool readNpyRows(const std::string &path, const std::string &name,
                 DType expected, int rank, const NpyRange &range,
                 NpyHeader &header, void *(*resize)(void *, size_t),
                 void *target, std::string &error) {
  FILE *f = openNpy(path, name, error);
  if (!f)
    return false;
  auto fail = [&](const std::string &message) {
    error = message;
    closeRead(f);
    return false;
  };
  if (!readCheckedHeader(f, name, expected, rank, header, error))
    return fail(error);
  if (header.shape.empty())
    return fail(name + ": a scalar (shape ()) has no rows to read");
  const int64_t rows = header.shape[0];
  int64_t rowElements = 1;
  for (size_t d = 1; d < header.shape.size(); ++d)
    rowElements *= header.shape[d];
  const int64_t colEnd = range.colEnd < 0 ? rowElements : range.colEnd;
  auto text = [](int64_t b, int64_t e) {
    return "[" + std::to_string(b) + ", " + std::to_string(e) + ")";
  };
  if (range.begin < 0 || range.end < range.begin || range.end > rows)
    return fail(name + ": rows " + text(range.begin, range.end) + " of " +
                std::to_string(rows) + " (shape " + shapeText(header.shape) +
                ")");
  if (range.colBegin < 0 || colEnd < range.colBegin || colEnd > rowElements)
    return fail(name + ": columns " + text(range.colBegin, colEnd) + " of " +
                std::to_string(rowElements) + " per row (shape " +
                shapeText(header.shape) + ")");
  const int64_t size = static_cast<int64_t>(dtypeSize(header.dtype));
  const int64_t width = colEnd - range.colBegin;
  const int64_t bytes = (range.end - range.begin) * width * size;
  if (!checkMemory(name + ": rows " + text(range.begin, range.end), bytes,
                   error))
    return fail(error);
  auto *data = static_cast<char *>(resize(target, static_cast<size_t>(bytes)));
  // One read for whole rows, one per row for a range of columns (readHeader
  // checked that the file holds the announced data).
  auto readAt = [&](int64_t element, char *to, int64_t n) {
    const off_t at = static_cast<off_t>(header.dataOffset) +
                     static_cast<off_t>(element * size);
    return n == 0 || (::fseeko(f, at, SEEK_SET) == 0 &&
                      std::fread(to, 1, static_cast<size_t>(n), f) ==
                          static_cast<size_t>(n));
  };
  bool ok = true;
  if (width == rowElements) {
    ok = readAt(range.begin * rowElements, data, bytes);
  } else {
    for (int64_t r = range.begin; ok && r < range.end;
         ++r, data += width * size)
      ok = readAt(r * rowElements + range.colBegin, data, width * size);
  }
  if (!ok)
    return fail(name + ": truncated");
  closeRead(f);
  return true;
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
  // Whole or not at all: a failed write leaves no truncated .npy behind.
  return writeWholeFile(
      path, {{head, sizeof(head)}, {dict.data(), dict.size()}, {data, bytes}},
      error);
}

} // namespace gnnrt
