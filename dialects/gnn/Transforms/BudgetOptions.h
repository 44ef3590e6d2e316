//===- BudgetOptions.h - the options of the memory-budget passes -*- C++ -*-===//
//
// --gnn-chunk-tile and --gnn-place-tensors take the same two options: a
// budget in bytes and the dataset's meta.json whose sizes the estimates use.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECTS_GNN_TRANSFORMS_BUDGETOPTIONS_H
#define GNN_DIALECTS_GNN_TRANSFORMS_BUDGETOPTIONS_H

#include "gnn/Support/DatasetMeta.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::gnn {

/// Checks `budget` (in [1, 2^62]) and reads `meta` (required), reporting on
/// `module` with `pass` as the prefix of the message.
inline FailureOr<DatasetMeta> readBudgetOptions(ModuleOp module,
                                                StringRef pass, int64_t budget,
                                                StringRef meta) {
  constexpr int64_t kMaxBudget = int64_t(1) << 62;
  if (budget < 1 || budget > kMaxBudget) {
    module.emitError() << pass << ": option budget must be in [1, "
                       << kMaxBudget << "] but is " << budget;
    return failure();
  }
  if (meta.empty()) {
    module.emitError() << pass
                       << ": needs the dataset's sizes (the option meta, "
                          "gnn-compile --dataset)";
    return failure();
  }
  std::string error;
  FailureOr<DatasetMeta> m = readDatasetMeta(meta, error);
  if (failed(m))
    module.emitError() << pass << ": " << error;
  return m;
}

} // namespace mlir::gnn

#endif // GNN_DIALECTS_GNN_TRANSFORMS_BUDGETOPTIONS_H
