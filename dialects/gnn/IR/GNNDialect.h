//===- GNNDialect.h - gnn dialect -------------------------------*- C++ -*-===//

#ifndef GNN_IR_GNNDIALECT_H
#define GNN_IR_GNNDIALECT_H

#include "mlir/IR/Dialect.h"

#include "gnn/IR/GNNOpsDialect.h.inc"

#include <string>

namespace mlir::gnn {

/// The counts in a dataset's meta.json (DESIGN.md's format), which passes
/// use as the sizes of a typical run; 0 where the file has none.
struct DatasetMeta {
  int64_t numVertices = 0, numEdges = 0, numFeatures = 0, numClasses = 0;
};

/// Reads the meta.json at `path`; on failure, a one-line reason in `error`.
FailureOr<DatasetMeta> readDatasetMeta(StringRef path, std::string &error);

} // namespace mlir::gnn

#endif // GNN_IR_GNNDIALECT_H
