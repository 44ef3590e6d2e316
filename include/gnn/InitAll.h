//===- InitAll.h - register gnn dialects, passes and pipelines --*- C++ -*-===//

#ifndef GNN_INITALL_H
#define GNN_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::gnn {

/// Adds the dialects a gnn program may contain (gnn, func, arith) to
/// `registry`: what the tools must be able to parse.
void registerAllGNNDialects(DialectRegistry &registry);

/// Registers the gnn passes and named pipelines with the global registry.
void registerAllGNNPasses();

} // namespace mlir::gnn

#endif // GNN_INITALL_H
