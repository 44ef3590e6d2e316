//===- FusedGatherLowering.h - gnn.fused_gather -----------------*- C++ -*-===//
//
// A fused_gather whose body only copies or scales the neighbour's row is the
// runtime's SpMM (after an edge-parallel kernel for a computed per-edge
// scale); any other body becomes a kernel over the vertices and their edges
// (FusedGatherKernel.cpp), through the KernelEmitter. Per-edge values that
// several such kernels compute are kept in edge caches.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_CONVERSION_GNNTORUNTIME_FUSEDGATHERLOWERING_H
#define GNN_LIB_CONVERSION_GNNTORUNTIME_FUSEDGATHERLOWERING_H

#include "Buffers.h"
#include "KernelEmitter.h"

#include "gnn/IR/GNNOps.h"

#include <deque>
#include <tuple>

namespace mlir::gnn {

/// A per-edge value one fused_gather kernel stores for later ones, which
/// load it instead of recomputing it.
struct EdgeCache {
  FusedGatherOp producer;
  Value value; // in the producer's body
  Value buf;   // |E| x width floats
  int64_t width;
  int64_t slot;
  Operation *last; // the last fused_gather that may read it
};
/// A kernel's cached values: value of its body -> (cache, stores it).
using KernelCaches = SmallVector<std::tuple<Value, EdgeCache *, bool>>;

/// Which part of a fused gather a kernel computes. Where the runtime splits
/// long rows into pieces (gnnrtGraphPieceEdges > 0), `Rows` leaves them out,
/// `Pieces` writes each piece's partial row (no mean's division) into the
/// scratch buffer and `Combine` folds each long row's partials in piece
/// order into its result row and finishes it. `Whole`: every row, no
/// pieces.
enum class GatherPart { Whole, Rows, Pieces, Combine };

/// Emits a kernel of `fg` and its launch over its rows (or pieces, or long
/// rows): operands are the outputs (kernel operands 0..), `fg`'s row inputs
/// and parameters (`operands`, after the outputs), then the caches from
/// `firstCacheArg`, all set on the host by the caller, and for the
/// Pieces and Combine parts the scratch at `firstCacheArg + caches` (f32;
/// i32 too for an argument output: gnnrtPieceScratch(I32), pieces x the
/// outputs' widths). With `tileInts`, the kernel integers at those
/// positions are the range [lo, hi) of input rows whose edges it gathers
/// (a tile: RowChunks.h); the rows' results are set at the tile with
/// lo = 0 and finished (mean, empty max/min) at the one with hi = V, the
/// rows of the gathered side, or the kernel integer at `inputRowsInt` when
/// given (the input's rows: row partitioning's stages, where the sources
/// are every vertex and the destinations the own).
/// `launchRows` (host side, index): the pieces or long rows the Pieces and
/// Combine kernels run over.
LogicalResult emitFusedGatherKernel(
    LoweringBuilder &lb, KernelEmitter &kernels, FusedGatherOp fg,
    ArrayRef<Tensor> operands, const KernelCaches &caches,
    int64_t firstCacheArg,
    std::optional<std::pair<int64_t, int64_t>> tileInts = std::nullopt,
    GatherPart part = GatherPart::Whole, Value launchRows = Value(),
    int64_t inputRowsInt = -1);

/// The fused gathers of `body` that may keep a per-edge value for a later
/// one (an edge cache: the same value, as edgeCachesFor finds it), with
/// each later one that may read it: (writer, reader) pairs.
SmallVector<std::pair<Operation *, Operation *>> edgeCachePairs(Block &body);

class FusedGatherLowering {
public:
  FusedGatherLowering(LoweringBuilder &lb, Buffers &buffers,
                      KernelEmitter &kernels, int64_t edgeCacheBudget)
      : lb(lb), buffers(buffers), kernels(kernels),
        edgeCacheBudget(edgeCacheBudget) {}

  /// The function's fused_gathers in order (edge caches look ahead), and,
  /// where it all-gathers rows, the values each kernel will load from an
  /// edge cache; after setTiles.
  void collect(Operation *function);
  /// Whether lowering `fg` reads its row input `input`: an SpMM reads its
  /// rows; a compiled kernel reads a block argument of `input` where
  /// something it computes reads it, but not through a value it loads from
  /// an edge cache (GAT's backward kernels load the attention terms that
  /// read the source's rows). After collect().
  bool kernelReads(FusedGatherOp fg, Value input) const;
  /// Kernels read the range of input rows to gather from (RowChunks.h's
  /// tiles; CPU kernels in row chunks).
  void setTiles(bool enable) { tiles = enable; }
  /// Long rows in pieces (emitFusedGatherKernel's), where not in tiles.
  void setLongRowPieces(bool enable) { longRowPieces = enable; }
  LogicalResult lower(FusedGatherOp fg);
  /// The rows `fg` aggregates when it is an untiled sum or mean of the
  /// neighbours' rows with no per-edge scale computed from its inputs (what
  /// gnnrtSpmmBroadcast and gnnrtSpmmReduce run in stages); null otherwise.
  static Value stageableSpmmInput(FusedGatherOp fg);
  /// Whether `fg` runs as a compiled kernel (not as an SpMM), whose
  /// neighbour input `rows` (an all-gather's) may then arrive in broadcast
  /// stages: a gather to the destinations reading `rows` as one source
  /// input only, not tiled.
  static bool kernelCanStage(FusedGatherOp fg, Value rows);
  /// Whether `fg` runs as a compiled kernel summing to the sources whose
  /// every output's one reader is a reduce-scatter, which may then run in
  /// reduce stages: each stage over one process's sources.
  static bool kernelCanReduce(FusedGatherOp fg);
  /// Row partitioning's stages (FunctionLowering's plans): the all-gathers
  /// whose one reader runs as gnnrtSpmmBroadcast or as a kernel over
  /// broadcast stages, with the tensor of own rows each gathers; the
  /// aggregations to the source whose one reader, a
  /// reduce-scatter, runs with them as gnnrtSpmmReduce, with its result;
  /// and where the lowered collectives are recorded.
  void setStages(const DenseMap<Value, Value> *gathers,
                 const DenseMap<Value, Value> *reduces,
                 SmallVector<std::pair<std::string, SizeKey>> *collectives,
                 const DenseMap<Value, int64_t> *levels = nullptr) {
    stagedGathers = gathers;
    stagedReduces = reduces;
    rowCollectives = collectives;
    reduceLevels = levels;
  }

private:
  /// The SpMM when the body is one; `lowered` tells whether it was.
  LogicalResult lowerAsSpmm(FusedGatherOp fg, bool &lowered);
  /// weights[e] = `scale` (a one-element value of `fg`'s body computed from
  /// one-element rows) for every edge, by an edge-parallel kernel.
  LogicalResult computeEdgeScalars(FusedGatherOp fg, Value scale,
                                   Value weights);
  LogicalResult lowerAsKernel(FusedGatherOp fg);
  /// Edge caches of the kernel of `fg`: its per-edge row reductions and
  /// exponentials (within the budget) that a live cache holds (loaded) or
  /// that a later fused_gather computes too (stored, in a new cache).
  KernelCaches edgeCachesFor(FusedGatherOp fg);
  /// The caches of `fg`'s kernel as edgeCachesFor decides them, given the
  /// `live` caches and the budget's floats `used` (both updated: a stored
  /// value adds a cache to `live` without its buffer).
  KernelCaches decideCaches(FusedGatherOp fg, std::deque<EdgeCache> &live,
                            int64_t &used);
  /// Whether `fg` is lowered as a compiled kernel (not as an SpMM).
  bool runsAsKernel(FusedGatherOp fg) const;
  /// The values each kernel loads from an edge cache (cacheLoads).
  void planCacheLoads();
  /// Frees the caches nothing after `op` reads.
  void releaseEdgeCaches(Operation *op);

  LoweringBuilder &lb;
  Buffers &buffers;
  KernelEmitter &kernels;
  std::deque<EdgeCache> edgeCaches;
  SmallVector<FusedGatherOp> fusedGathers; // of the function, in order
  int64_t edgeCacheBudget;                 // floats per edge
  int64_t edgeCacheFloatsUsed = 0;
  DenseMap<Operation *, DenseSet<Value>> cacheLoads;
  bool tiles = false;
  bool longRowPieces = false;
  const DenseMap<Value, Value> *stagedGathers = nullptr;
  const DenseMap<Value, Value> *stagedReduces = nullptr;
  /// The level beyond which each staged reduce's result is zero (the
  /// program on blocks), by result; none: every row.
  const DenseMap<Value, int64_t> *reduceLevels = nullptr;
  SmallVector<std::pair<std::string, SizeKey>> *rowCollectives = nullptr;
};

} // namespace mlir::gnn

#endif // GNN_LIB_CONVERSION_GNNTORUNTIME_FUSEDGATHERLOWERING_H
