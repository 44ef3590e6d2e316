//===- DatasetMeta.cpp - a dataset's meta.json, for cost models -----------===//

#include "gnn/Support/DatasetMeta.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using llvm::StringRef;

/// The most nested arrays and objects read (the runtime's loader has the
/// same bound); llvm::json::parse recurses once per level.
static constexpr int kMaxJsonDepth = 64;
/// meta.json is a few hundred bytes; anything much larger is not one.
static constexpr uint64_t kMaxMetaBytes = uint64_t(1) << 24;

/// Where `text` nests deeper than kMaxJsonDepth, outside strings.
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
  // A FIFO would block the read until a writer comes, a device never end.
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status)) {
    error = "cannot read '" + path.str() + "': " + ec.message();
    return failure();
  }
  if (status.type() != llvm::sys::fs::file_type::regular_file) {
    error = "'" + path.str() + "' is not a regular file";
    return failure();
  }
  if (status.getSize() > kMaxMetaBytes) {
    error = "'" + path.str() + "' is " + std::to_string(status.getSize()) +
            " bytes, too large for a meta.json";
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
  DatasetMeta meta;
  meta.numVertices = obj->getInteger("num_vertices").value_or(0);
  meta.numEdges = obj->getInteger("num_edges").value_or(0);
  meta.numFeatures = obj->getInteger("num_features").value_or(0);
  meta.numClasses = obj->getInteger("num_classes").value_or(0);
  // The loaders' bounds (runtime/lib/Dataset.cpp): sizes outside them are no
  // dataset the executable would train on.
  const struct {
    const char *key;
    int64_t value, max;
  } counts[] = {{"num_vertices", meta.numVertices, INT32_MAX},
                {"num_edges", meta.numEdges, INT32_MAX},
                {"num_features", meta.numFeatures, int64_t(1) << 24},
                {"num_classes", meta.numClasses, int64_t(1) << 24}};
  for (const auto &c : counts)
    if (c.value < 0 || c.value > c.max) {
      error = "'" + path.str() + "': '" + c.key + "' is " +
              std::to_string(c.value) + ", outside [0, " +
              std::to_string(c.max) + "]";
      return failure();
    }
  return meta;
}
