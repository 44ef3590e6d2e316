//===- DatasetMeta.cpp - a dataset's meta.json, for cost models -----------===//

#include "gnn/Support/DatasetMeta.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <optional>
#include <tuple>

using namespace mlir;
using llvm::StringRef;

FailureOr<gnn::DatasetMeta> gnn::readDatasetMeta(StringRef path,
                                                 std::string &error) {
  // Only a regular file: a FIFO would block the open, a device never end.
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status)) {
    error = "cannot read '" + path.str() + "': " + ec.message();
    return failure();
  }
  if (!llvm::sys::fs::is_regular_file(status)) {
    error = "'" + path.str() + "' is not a regular file";
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
  // Each count, when present, is an integer in a range the cost models'
  // arithmetic stays exact in (widths as large as a row may be).
  DatasetMeta meta;
  constexpr int64_t kMaxCount = int64_t(1) << 40, kMaxWidth = int64_t(1) << 24;
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
