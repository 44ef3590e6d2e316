//===- BudgetOptions.h - the options of the memory-budget passes -*- C++ -*-===//
//
// --gnn-chunk-tile and --gnn-place-tensors take the same two options, a
// budget in bytes and the dataset's meta.json whose sizes the estimates use,
// and size rows the same way.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECTS_GNN_TRANSFORMS_BUDGETOPTIONS_H
#define GNN_DIALECTS_GNN_TRANSFORMS_BUDGETOPTIONS_H

#include "gnn/IR/GNNTypes.h"
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

/// The elements of a row of a vertex or edge tensor, a `?` dimension counted
/// as the larger of the dataset's F and C (an estimate that errs large);
/// nullopt for other types (parameters, scalars).
inline std::optional<int64_t> rowElements(Type type, const DatasetMeta &m) {
  ArrayRef<int64_t> shape;
  if (auto v = dyn_cast<VertexTensorType>(type))
    shape = v.getRowShape();
  else if (auto e = dyn_cast<EdgeTensorType>(type))
    shape = e.getRowShape();
  else
    return std::nullopt;
  const int64_t unknown =
      std::max<int64_t>(std::max(m.numFeatures, m.numClasses), 1);
  int64_t n = 1;
  for (int64_t d : shape)
    n *= ShapedType::isDynamic(d) ? unknown : d;
  return n;
}

} // namespace mlir::gnn

#endif // GNN_DIALECTS_GNN_TRANSFORMS_BUDGETOPTIONS_H
