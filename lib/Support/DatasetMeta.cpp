//===- DatasetMeta.cpp - a dataset's meta.json, for cost models -----------===//

#include "gnn/Support/DatasetMeta.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gnnrt/GNNRuntime.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>

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
    error = "cannot read '" + path.str() +
            "': " + std::to_string(status.getSize()) +
            " bytes, more than the " + std::to_string(kMaxMetaBytes) +
            " a meta.json may have";
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

namespace {
/// A .npy file of a dataset, mapped: its elements after the header.
struct NpyArray {
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  StringRef values;
  uint64_t size = 0;
};
} // namespace

/// Maps the array `name` next to the meta.json at `metaPath`: C order, of
/// dtype `descr` (elements of `elementBytes`), one dimension; on failure,
/// the file and a reason in `error`.
static FailureOr<NpyArray> mapNpy(StringRef metaPath, StringRef name,
                                  StringRef descr, uint64_t elementBytes,
                                  std::string &error) {
  llvm::SmallString<256> path(metaPath);
  llvm::sys::path::remove_filename(path);
  llvm::sys::path::append(path, name);
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
  if (!header.contains(("'descr': '" + descr + "'").str()) ||
      !header.contains("'fortran_order': False"))
    return fail(("not a C-order array of '" + descr + "'").str());
  size_t shape = header.find("'shape': (");
  uint64_t n = 0;
  if (shape == StringRef::npos ||
      header.substr(shape + 10).consumeInteger(10, n))
    return fail("no shape");
  StringRef values = data.substr(start + headerLength);
  if (n > values.size() / elementBytes)
    return fail("shorter than its shape");
  return NpyArray{std::move(*buffer), values.take_front(n * elementBytes), n};
}

FailureOr<std::vector<int64_t>> mlir::gnn::readIndptr(StringRef metaPath,
                                                      std::string &error) {
  FailureOr<NpyArray> array = mapNpy(metaPath, "indptr.npy", "<i8", 8, error);
  if (failed(array))
    return failure();
  if (array->size == 0) {
    error = "indptr.npy: empty";
    return failure();
  }
  std::vector<int64_t> indptr(array->size);
  std::memcpy(indptr.data(), array->values.data(), array->size * 8);
  for (size_t v = 1; v < indptr.size(); ++v)
    if (indptr[v] < indptr[v - 1]) {
      error = "indptr.npy: not monotone";
      return failure();
    }
  return indptr;
}

/// Row chunk c's first row of `V` rows in `chunks` (gnnrtChunkRowBound,
/// without its overflow at large V).
static int64_t rowChunkBound(int64_t V, int64_t chunks, int64_t c) {
  constexpr int64_t kAlign = GNNRT_PARALLEL_CHUNK;
  if (c >= chunks)
    return V;
  return static_cast<int64_t>(static_cast<unsigned __int128>(V) * c / chunks) /
         kAlign * kAlign;
}

FailureOr<gnn::TileInputRows>
mlir::gnn::countTileInputRows(StringRef metaPath,
                              const std::vector<int64_t> &indptr,
                              int64_t chunks, std::string &error) {
  const int64_t V = static_cast<int64_t>(indptr.size()) - 1;
  if (V <= 0 || chunks < 1 || chunks > V || indptr.front() != 0 ||
      V > std::numeric_limits<int32_t>::max()) {
    error = "no rows to count";
    return failure();
  }
  FailureOr<NpyArray> indices =
      mapNpy(metaPath, "indices.npy", "<i4", 4, error);
  if (failed(indices))
    return failure();
  if (static_cast<int64_t>(indices->size) != indptr.back()) {
    error = "indices.npy: " + std::to_string(indices->size) +
            " edges where indptr.npy ends at " + std::to_string(indptr.back());
    return failure();
  }
  std::vector<int64_t> bounds(chunks + 1);
  for (int64_t c = 0; c <= chunks; ++c)
    bounds[c] = rowChunkBound(V, chunks, c);
  auto chunkOf = [&](int64_t v) {
    return static_cast<int64_t>(
               std::upper_bound(bounds.begin() + 1, bounds.end(), v) -
               bounds.begin()) -
           1;
  };
  gnn::TileInputRows rows;
  rows.chunks = chunks;
  rows.toDestinations.assign(chunks * chunks, 0);
  rows.toSources.assign(chunks * chunks, 0);
  // To the destinations, tile (k, i): the distinct sources in chunk i of
  // the in-edges of destination chunk k (marked with k + 1). To the
  // sources, tile (k, i): the distinct destinations in chunk i of the
  // out-edges of source chunk k (each destination once per source chunk).
  std::vector<int32_t> marked(V, 0);
  std::vector<int64_t> lastDestination(chunks, -1);
  const auto *sources =
      reinterpret_cast<const unsigned char *>(indices->values.data());
  for (int64_t k = 0; k < chunks; ++k)
    for (int64_t d = bounds[k]; d < bounds[k + 1]; ++d)
      for (int64_t e = indptr[d]; e < indptr[d + 1]; ++e) {
        int32_t u;
        std::memcpy(&u, sources + 4 * e, 4);
        if (u < 0 || u >= V) {
          error = "indices.npy: edge " + std::to_string(e) + " has source " +
                  std::to_string(u) + ", outside [0, " + std::to_string(V) +
                  ")";
          return failure();
        }
        const int64_t i = chunkOf(u);
        if (marked[u] != k + 1) {
          marked[u] = static_cast<int32_t>(k + 1);
          ++rows.toDestinations[k * chunks + i];
        }
        if (lastDestination[i] != d) {
          lastDestination[i] = d;
          ++rows.toSources[i * chunks + k];
        }
      }
  return rows;
}

std::vector<int64_t>
mlir::gnn::rowChunkEdges(const std::vector<int64_t> &indptr, int64_t chunks) {
  const int64_t V = static_cast<int64_t>(indptr.size()) - 1;
  chunks = std::max<int64_t>(chunks, 1);
  std::vector<int64_t> edges;
  for (int64_t k = 0; k < chunks; ++k)
    edges.push_back(indptr[rowChunkBound(V, chunks, k + 1)] -
                    indptr[rowChunkBound(V, chunks, k)]);
  return edges;
}

int64_t mlir::gnn::mostRowChunkEdges(const std::vector<int64_t> &indptr,
                                     int64_t chunks) {
  std::vector<int64_t> edges = rowChunkEdges(indptr, chunks);
  return *std::max_element(edges.begin(), edges.end());
}
