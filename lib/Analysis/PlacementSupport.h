//===- PlacementSupport.h - what the placement planners share --*- C++ -*-===//
//
// Internal to lib/Analysis: the derived facts of a placement graph and the
// helpers that TensorPlacement.cpp (the DP, the baselines, the accounting)
// and BoundedPlacement.cpp (the bounded search) both use.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_ANALYSIS_PLACEMENTSUPPORT_H
#define GNN_LIB_ANALYSIS_PLACEMENTSUPPORT_H

#include "gnn/Analysis/TensorPlacement.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace mlir::gnn::placement {

/// A string error with `message`.
llvm::Error makeError(const llvm::Twine &message);

/// Producers, readers and predecessors of a verified graph.
struct GraphFacts {
  explicit GraphFacts(const PlacementGraph &graph);

  std::vector<int> producer;
  /// readers[t]: the ops reading tensor t.
  std::vector<llvm::BitVector> readers;
  /// preds[op]: the ops writing a tensor `op` reads.
  std::vector<llvm::BitVector> preds;
  /// IN(op) ∪ OUT(op), sorted.
  std::vector<llvm::SmallVector<unsigned, 8>> touched;
};

/// The set bits of `set`, ascending.
llvm::SmallVector<unsigned, 4> toList(const llvm::BitVector &set);

/// The empty plan of a capacity below the minimum.
PlacementPlan infeasiblePlan(PlacementStrategy strategy, uint64_t capacity,
                             uint64_t minCapacity);

/// `order` when given, else the topological order taking the lowest ready id.
llvm::SmallVector<unsigned> defaultOrder(const PlacementGraph &graph,
                                         const GraphFacts &facts,
                                         llvm::ArrayRef<unsigned> order);

} // namespace mlir::gnn::placement

#endif // GNN_LIB_ANALYSIS_PLACEMENTSUPPORT_H
