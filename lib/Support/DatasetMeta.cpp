//===- DatasetMeta.cpp - a dataset's meta.json, for cost models -----------===//

#include "gnn/Support/DatasetMeta.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using llvm::StringRef;

/// The most bytes a meta.json may have: its counts and a few names take
/// hundreds; what is larger is not one.
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
    return "not a regular file";
  }
}

FailureOr<gnn::DatasetMeta> gnn::readDatasetMeta(StringRef path,
                                                 std::string &error) {
  // Stat before opening: opening a FIFO blocks until a writer comes, and a
  // device such as /dev/zero reads without end.
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status)) {
    error = "cannot read '" + path.str() + "': " + ec.message();
    return failure();
  }
  if (status.type() != llvm::sys::fs::file_type::regular_file) {
    StringRef kind = kindOf(status.type());
    error = "cannot read '" + path.str() + "': " +
            (kind.starts_with("a ") ? "is " + kind.str() +
                                          ", not a regular file"
                                    : kind.str());
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
  auto json = llvm::json::parse((*buf)->getBuffer());
  const llvm::json::Object *obj = json ? json->getAsObject() : nullptr;
  if (!obj) {
    if (!json)
      llvm::consumeError(json.takeError());
    error = "'" + path.str() + "' is not a JSON object";
    return failure();
  }
  DatasetMeta meta;
  for (auto [key, field] : {std::pair{"num_vertices", &meta.numVertices},
                            {"num_edges", &meta.numEdges},
                            {"num_features", &meta.numFeatures},
                            {"num_classes", &meta.numClasses}}) {
    const llvm::json::Value *value = obj->get(key);
    if (!value)
      continue;
    std::optional<int64_t> n = value->getAsInteger();
    if (!n || *n < 0) {
      error = "'" + path.str() + "': '" + key +
              "' must be a non-negative integer";
      return failure();
    }
    *field = *n;
  }
  return meta;
}
