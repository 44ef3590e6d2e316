//===- DatasetMeta.cpp - a dataset's meta.json, for cost models -----------===//

#include "gnn/Support/DatasetMeta.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gnnrt/GNNRuntime.h"

#include <algorithm>
#include <cstring>

#include <optional>
#include <tuple>

using namespace mlir;
using llvm::StringRef;

/// The most nested arrays and objects read (the runtime's loader has the
/// same bound); llvm::json::parse recurses once per level.
static constexpr int kMaxJsonDepth = 64;
/// meta.json is a few hundred bytes; anything much larger is not one.
static constexpr uint64_t kMaxMetaBytes = uint64_t(1) << 20;

/// What a file that is not a regular file is, for the message.
static StringRef kindOf(llvm::sys::fs::file_type type) {
  using llvm::sys::fs::file_type;
  switch (type) {
  case file_type::directory_file:
    return "a directory";
  case file_type::fifo_file:
    return "a FIFO";
  case file_type::character_file:
    return "a character device";
  case file_type::block_file:
    return "a block device";
  case file_type::socket_file:
    return "a socket";
  default:
    return "something else";
  }
}

/// Whether `text` nests deeper than kMaxJsonDepth, outside strings.
static bool tooDeep(StringRef text) {
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

FailureOr<gnn::DatasetMeta> gnn::readDatasetMeta(StringRef path,
                                                 std::string &error) {
  // Only a regular file: a FIFO would block the open, a device never end.
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status)) {
    error = "cannot read '" + path.str() + "': " + ec.message();
    return failure();
  }
  if (!llvm::sys::fs::is_regular_file(status)) {
    error = "cannot read '" + path.str() + "': is " +
            kindOf(status.type()).str() + ", not a regular file";
    return failure();
  }
  if (status.getSize() > kMaxMetaBytes) {
    error = "cannot read '" + path.str() + "': " +
            std::to_string(status.getSize()) + " bytes, more than the " +
            std::to_string(kMaxMetaBytes) + " a meta.json may have";
    return failure();
  }
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) {
    error = "cannot read '" + path.str() + "': " + buf.getError().message();
    return failure();
  }
  if (tooDeep((*buf)->getBuffer())) {
    error = "'" + path.str() + "' nests more than " +
            std::to_string(kMaxJsonDepth) + " arrays and objects";
    return failure();
  }
  auto json = llvm::json::parse((*buf)->getBuffer());
  const llvm::json::Object *obj = json ? json->getAsObject() : nullptr;
  if (!obj) {
    if (!json)
      llvm::consumeError(json.takeError());
    error = "'" + path.str() + "' is not a JSON object";
    return failure();
  }
  // Each count, when present, is an integer in the loaders' bounds
  // (runtime/lib/Dataset.cpp): int32 vertex and edge ids, rows of at most
  // 2^24 elements.
  DatasetMeta meta;
  constexpr int64_t kMaxCount = INT32_MAX, kMaxWidth = int64_t(1) << 24;
  for (auto [key, field, hi] :
       {std::tuple{"num_vertices", &meta.numVertices, kMaxCount},
        std::tuple{"num_edges", &meta.numEdges, kMaxCount},
        std::tuple{"num_features", &meta.numFeatures, kMaxWidth},
        std::tuple{"num_classes", &meta.numClasses, kMaxWidth}}) {
    const llvm::json::Value *v = obj->get(key);
    if (!v)
      continue;
    std::optional<int64_t> n = v->getAsInteger();
    if (!n || *n < 0 || *n > hi) {
      std::string shown;
      llvm::raw_string_ostream os(shown);
      os << *v;
      error = "'" + path.str() + "': " + key + " must be an integer in [0, " +
              std::to_string(hi) + "] but is " + os.str();
      return failure();
    }
    *field = *n;
  }
  return meta;
}

FailureOr<std::vector<int64_t>> mlir::gnn::readIndptr(StringRef metaPath,
                                                      std::string &error) {
  llvm::SmallString<256> path(metaPath);
  llvm::sys::path::remove_filename(path);
  llvm::sys::path::append(path, "indptr.npy");
  auto fail = [&](const std::string &why) {
    error = std::string(path) + ": " + why;
    return failure();
  };
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail(buffer.getError().message());
  StringRef data = (*buffer)->getBuffer();
  // The .npy format: magic, version, header length (2 bytes in version 1,
  // 4 after), a Python dict literal, the data.
  if (data.size() < 10 || !data.starts_with("\x93NUMPY"))
    return fail("not a .npy file");
  const unsigned major = static_cast<unsigned char>(data[6]);
  const size_t lengthBytes = major == 1 ? 2 : 4;
  if (data.size() < 8 + lengthBytes)
    return fail("truncated header");
  uint64_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= uint64_t(static_cast<unsigned char>(data[8 + i]))
                    << (8 * i);
  const size_t start = 8 + lengthBytes;
  if (data.size() < start + headerLength)
    return fail("truncated header");
  StringRef header = data.substr(start, headerLength);
  if (!header.contains("'descr': '<i8'") ||
      !header.contains("'fortran_order': False"))
    return fail("not a C-order int64 array");
  size_t shape = header.find("'shape': (");
  uint64_t n = 0;
  if (shape == StringRef::npos ||
      header.substr(shape + 10).consumeInteger(10, n))
    return fail("no shape");
  StringRef values = data.substr(start + headerLength);
  if (n == 0 || values.size() < n * 8)
    return fail("shorter than its shape");
  std::vector<int64_t> indptr(n);
  std::memcpy(indptr.data(), values.data(), n * 8);
  for (size_t v = 1; v < n; ++v)
    if (indptr[v] < indptr[v - 1])
      return fail("not monotone");
  return indptr;
}

std::vector<int64_t>
mlir::gnn::rowChunkEdges(const std::vector<int64_t> &indptr, int64_t chunks) {
  const int64_t V = static_cast<int64_t>(indptr.size()) - 1;
  constexpr int64_t kAlign = GNNRT_PARALLEL_CHUNK;
  chunks = std::max<int64_t>(chunks, 1);
  std::vector<int64_t> edges;
  int64_t lo = 0;
  for (int64_t k = 1; k <= chunks; ++k) {
    const int64_t hi =
        k == chunks ? V
                    : static_cast<int64_t>(static_cast<unsigned __int128>(V) *
                                           k / chunks) /
                          kAlign * kAlign;
    edges.push_back(indptr[hi] - indptr[lo]);
    lo = hi;
  }
  return edges;
}

int64_t mlir::gnn::mostRowChunkEdges(const std::vector<int64_t> &indptr,
                                     int64_t chunks) {
  std::vector<int64_t> edges = rowChunkEdges(indptr, chunks);
  return *std::max_element(edges.begin(), edges.end());
}
