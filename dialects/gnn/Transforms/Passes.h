//===- Passes.h - gnn-to-gnn passes -----------------------------*- C++ -*-===//

#ifndef GNN_TRANSFORMS_PASSES_H
#define GNN_TRANSFORMS_PASSES_H

#include "gnn/IR/GNNDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::gnn {

#define GEN_PASS_DECL
#include "gnn/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gnn/Transforms/Passes.h.inc"

} // namespace mlir::gnn

#endif // GNN_TRANSFORMS_PASSES_H
