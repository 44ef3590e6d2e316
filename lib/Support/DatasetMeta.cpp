//===- DatasetMeta.cpp - a dataset's meta.json, for cost models -----------===//

#include "gnn/Support/DatasetMeta.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

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
