//===- ChunkTile.cpp - --gnn-chunk-tile -----------------------------------===//
//
// NeuGraph's P x P chunk tiling of the aggregations, P the smallest that fits
// a memory budget (Passes.td has the estimate); the runtime's gnnrtSpmm runs
// the tiles.
//
//===----------------------------------------------------------------------===//

#include "BudgetOptions.h"

#include "gnn/IR/GNNOps.h"
#include "gnn/Support/DatasetMeta.h"
#include "gnn/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GNNCHUNKTILE
#include "gnn/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {

/// An aggregation's row widths: vertex rows read or written per vertex, edge
/// rows read per edge.
struct Widths {
  int64_t vertex = 0, edge = 0;
};

Widths widthsOf(Operation *op, const DatasetMeta &m) {
  Widths w;
  auto add = [&](Value v) {
    (isa<EdgeTensorType>(v.getType()) ? w.edge : w.vertex) +=
        *rowElements(v.getType(), m);
  };
  if (auto g = dyn_cast<GatherOp>(op)) {
    add(g.getInput());
    add(g.getResult());
  } else if (auto fg = dyn_cast<FusedGatherOp>(op)) {
    for (Value v : fg.getRowInputs())
      add(v);
    for (Value v : fg.getOuts())
      add(v);
  }
  return w;
}

/// mem(P) of Passes.td, saturating far above any budget.
int64_t chunkBytes(int64_t V, int64_t E, const Widths &w, int64_t P) {
  const __int128 rows = (V + P - 1) / P;
  const __int128 edges = (static_cast<__int128>(E) + static_cast<__int128>(P) * P - 1) /
                         (static_cast<__int128>(P) * P);
  const __int128 bytes = rows * 4 * w.vertex + edges * (4 + 4 * w.edge) +
                         (rows + 1) * 8;
  return bytes > (static_cast<__int128>(1) << 62)
             ? int64_t(1) << 62
             : static_cast<int64_t>(bytes);
}

struct GNNChunkTile : public mlir::gnn::impl::GNNChunkTileBase<GNNChunkTile> {
  using GNNChunkTileBase::GNNChunkTileBase;

  void runOnOperation() final {
    ModuleOp module = getOperation();
    FailureOr<DatasetMeta> m =
        readBudgetOptions(module, "gnn-chunk-tile", budget, meta);
    if (failed(m))
      return signalPassFailure();
    const int64_t V = std::max<int64_t>(m->numVertices, 1), E = m->numEdges;

    WalkResult result = module.walk([&](Operation *op) {
      if (!isa<GatherOp, FusedGatherOp>(op))
        return WalkResult::advance();
      const Widths w = widthsOf(op, *m);
      const int64_t least = chunkBytes(V, E, w, V);
      if (least > budget) {
        op->emitError() << "gnn-chunk-tile: a budget of " << budget.getValue()
                        << " bytes is below the " << least
                        << " bytes any chunk tiling of this aggregation "
                           "needs (P = |V| = "
                        << V << ")";
        return WalkResult::interrupt();
      }
      // The smallest P with chunkBytes(P) <= budget; chunkBytes is
      // non-increasing in P.
      int64_t lo = 1, hi = V;
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (chunkBytes(V, E, w, mid) <= budget)
          hi = mid;
        else
          lo = mid + 1;
      }
      if (lo > 1)
        op->setAttr(GNNDialect::kChunksAttrName,
                    IntegerAttr::get(IntegerType::get(op->getContext(), 64),
                                     lo));
      else
        op->removeAttr(GNNDialect::kChunksAttrName);
      op->emitRemark() << "chunk tiling: P = " << lo << " (" << lo << " x "
                       << lo << " edge chunks, working set "
                       << chunkBytes(V, E, w, lo) << " of "
                       << budget.getValue() << " bytes)";
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
