//===- DatasetMeta.cpp - a dataset's meta.json, for cost models -----------===//

#include "gnn/Support/DatasetMeta.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using llvm::StringRef;

FailureOr<gnn::DatasetMeta> gnn::readDatasetMeta(StringRef path,
                                                 std::string &error) {
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
  meta.numVertices = obj->getInteger("num_vertices").value_or(0);
  meta.numEdges = obj->getInteger("num_edges").value_or(0);
  meta.numFeatures = obj->getInteger("num_features").value_or(0);
  meta.numClasses = obj->getInteger("num_classes").value_or(0);
  return meta;
}
