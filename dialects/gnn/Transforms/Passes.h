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

/// The module's one `gnn.model` function for a pass that runs before
/// --gnn-autodiff; null after an error on the module: no such function,
/// several, or @gnn_train_step / @gnn_eval there already (`why` ends that
/// message: what the user ran out of order).
func::FuncOp getUndifferentiatedModel(ModuleOp module, StringRef why);

} // namespace mlir::gnn

#endif // GNN_TRANSFORMS_PASSES_H
