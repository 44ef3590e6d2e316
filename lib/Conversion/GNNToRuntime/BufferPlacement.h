//===- BufferPlacement.h - slot buffers in a capped fast tier ---*- C++ -*-===//
//
// Issue 18's placement, on the buffers the lowering really allocates: once a
// function is lowered and its slots are numbered, each slot buffer is a
// tensor (its bytes at the dataset's sizes) and each lowered gnn op a step
// that uses the buffers its code names. A placement (ROC's DP over the
// lowering's order, LRU or streaming; gnn/Analysis/TensorPlacement.h) keeps
// the steps' working sets within a capacity, and its copies become runtime
// calls between the steps:
//
//   - gnnrtFetch before a step reads a buffer that is not resident, then
//     gnnrtBuffer again: the memref taken before is invalid after a fetch,
//     so every later use takes the new one;
//   - after a step, for each buffer that leaves the fast tier: gnnrtDrop
//     with no copy when no later step uses it, gnnrtEvict when a step wrote
//     it since its last copy, else gnnrtDrop keeping the copy (no I/O);
//   - gnnrtDropAll first: nothing of the previous call is resident (also in
//     a function that fits when the other one is planned; when both fit,
//     nothing changes and the slots stay allocated across calls).
//
// The lowering's order is kept (the DP chooses what stays resident, not the
// order: a reordering would move emitted code). A buffer is written by the
// step that takes it and by every step that binds another value to it (an
// in-place stage); those are what make a copy stale.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_CONVERSION_GNNTORUNTIME_BUFFERPLACEMENT_H
#define GNN_LIB_CONVERSION_GNNTORUNTIME_BUFFERPLACEMENT_H

#include "LoweringBuilder.h"
#include "RowChunks.h"
#include "SlotPlanner.h"

#include "gnn/Analysis/TensorPlacement.h"
#include "gnn/Support/DatasetMeta.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::gnn {

/// What the placement did to one function, for remarks and the model
/// description; bytes at the dataset's sizes.
struct BufferPlacementReport {
  bool planned = false;
  std::string strategy; // "dp", "lru" or "streaming"; why DP did not run
  uint64_t capacity = 0, minCapacity = 0, peakBytes = 0, unplacedBytes = 0;
  uint64_t fetchBytes = 0, evictBytes = 0;
  int64_t fetches = 0, evictions = 0, drops = 0;
  /// Of the fetches, those of a tile's input chunk read by that tile only
  /// (gnnrtFetchChunkFor: the runtime may read only the rows it needs).
  int64_t tileFetches = 0;
  /// Of those, the ones the plan expects the runtime to read selectively
  /// (their θ below the rule's threshold at the dataset's rows): counted in
  /// fetchBytes at the rows their tiles read.
  int64_t filteredFetches = 0;
  /// Of the tile fetches, the tiles of a gnnrtSpmmRows that fetch their input
  /// in sub-chunks as they compute (gnnrtSpmmRowsFetch).
  int64_t pipelinedTiles = 0;
  /// Whether some buffer is edge-chunked (its chunks sized by the row
  /// chunks' in-edges).
  bool edgeChunks = false;
  /// The graph out of core: the windows the function opens and the bytes
  /// they read at the dataset's sizes (an average row chunk's edges, each
  /// with the per-edge arrays the program reads).
  int64_t windows = 0;
  uint64_t windowBytes = 0;
};

class BufferPlacement {
public:
  /// The lowering is about to lower `op` (a step); `last` is the block's last
  /// op before its code (null for none).
  void beginStep(Operation *op, Operation *last);
  /// The step's code ends at `last` (the block's last op now).
  void endStep(Operation *last);
  /// Planner buffer `id` is taken by the gnnrtBuffer(I32) call `call`.
  void recordTake(int64_t id, Operation *call);
  /// The current step runs as row chunks whose sub-steps start at `starts`
  /// (RowChunks.h): each is a step of the placement, touching its chunk of
  /// the row buffers (and its tile's input chunk of an aggregation's input).
  void recordChunks(ArrayRef<RowChunkStart> starts);
  /// The current step writes buffer `id` in place.
  void recordWrite(int64_t id);
  /// The features are read out of core: `call` (gnnrtFeaturesChunks) takes
  /// them as row chunks in the slot that the i64 constant `slot` names.
  /// They are read-only tensors that start in the slow tier: the plan
  /// fetches their chunks and drops them (never a write).
  void recordFeatures(Operation *call, Operation *slot) {
    featuresCall = call;
    featuresSlotConstant = slot;
  }
  /// Sets the features' slot (patching the constant of recordFeatures).
  void setFeaturesSlot(int64_t slot);

  /// Places the buffers of `fn` (lowered, its slots numbered by `slots`) in a
  /// fast tier of `capacity` bytes with `strategy`, sizes compared at
  /// `estimates`; an edge-chunked buffer's chunk c holds `chunkEdges[c]`
  /// edges (the in-edges of destination row chunk c at the dataset's sizes;
  /// empty when unknown: every edge). With `tileRows` (the dataset's, for
  /// the same row chunks; null when unknown), a tile input fetched for its
  /// tile alone costs the rows the tile reads where the runtime's rule
  /// would read only those. Does nothing when every slot
  /// fits at once. Errors (on `source`) when the capacity is below what one
  /// step needs, naming it.
  LogicalResult place(func::FuncOp fn, Operation *source,
                      const SlotPlanner &slots,
                      const DenseMap<StringRef, int64_t> &estimates,
                      ArrayRef<int64_t> chunkEdges,
                      const TileInputRows *tileRows, uint64_t capacity,
                      PlacementStrategy strategy, int64_t rowChunks,
                      LoweringBuilder &lb, BufferPlacementReport &report);

  /// Inserts gnnrtDropAll at the start of `fn` (what place() does to a
  /// function it plans).
  static void emitDropAll(func::FuncOp fn, LoweringBuilder &lb);

private:
  struct Step {
    Operation *op;                  // the gnn op
    Operation *before = nullptr;    // the block's last op before its code
    Operation *first = nullptr;     // its code's first op (null: none)
    SmallVector<int64_t, 2> writes; // buffers written in place
    SmallVector<RowChunkStart> chunkStarts; // its row chunks' sub-steps
  };
  struct Take {
    int64_t id;
    Operation *call;
    int64_t step;
  };
  std::vector<Step> steps;
  std::vector<Take> takes;
  Operation *featuresCall = nullptr, *featuresSlotConstant = nullptr;
  int64_t featuresSlot = -1;
};

} // namespace mlir::gnn

#endif // GNN_LIB_CONVERSION_GNNTORUNTIME_BUFFERPLACEMENT_H
