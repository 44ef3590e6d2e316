//===- RowChunks.h - a step over the vertices in row chunks -----*- C++ -*-===//
//
// Issue 18's row chunks of a step (docs/MemoryBudget.md, "Row chunks of the
// steps"): once a step over the vertices is lowered (a vertex stage, an
// aggregation, a fused gather, an outer sum, a sum of rows, the loss), its
// code runs K times, chunk k over the rows [b_k, b_{k+1}) only, so that each
// run touches 1/K of the step's row buffers. What these steps do to a row
// depends on that row of their row operands only, so the chunks compute what
// the whole step did; the boundaries are multiples of GNNRT_PARALLEL_CHUNK,
// so a kernel's partial sums per chunk are the same. Sums over the rows
// (outer sums, sums of rows, the loss) add the chunks' shares. An
// aggregation reads its input at the neighbours' rows: in each chunk it runs
// as K tiles, tile i over the edges from input chunk i (NeuGraph's P x P
// chunks), so that a tile reads one chunk of its input.
//
// The calls are restricted to the chunk: gnnrtParallelFor over the vertices
// becomes gnnrtParallelForRange, a GEMM over the vertices takes gnnrtView
// ranges of its row operands, gnnrtSpmm becomes tiles of gnnrtSpmmRows, and
// so on. A step whose code does anything else over the rows (a loop in the
// function, another runtime call) stays whole.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_CONVERSION_GNNTORUNTIME_ROWCHUNKS_H
#define GNN_LIB_CONVERSION_GNNTORUNTIME_ROWCHUNKS_H

#include "LoweringBuilder.h"

namespace mlir::gnn {

/// Whether `use`, in a step run as row chunks, reads every row of its
/// operand (an aggregation's edge weights, a fused gather's edge inputs and
/// parameters, a neighbour-side operand that is not tiled), not only its
/// chunk's.
bool readsAllRows(OpOperand &use);
/// The input chunk `use` reads, when it reads that chunk of its operand's
/// rows only: the input of one tile of an aggregation (gnnrtSpmmRows) or a
/// neighbour-side operand of one tile of a fused gather's kernel.
std::optional<int64_t> inputChunkOf(OpOperand &use);
/// The side of the tile whose input `use` is (inputChunkOf): 1 when the
/// tile's rows are destinations reading their in-edges' sources, 0 when
/// sources reading their out-edges' destinations; nothing when unknown.
std::optional<int64_t> tileSideOf(OpOperand &use);
/// Marks a kernel argument call (gnnrtKernelArg) whose buffer the kernel
/// reads at any row (a fused gather's edge inputs and parameters).
void markReadsAllRows(Operation *kernelArg);
/// The same for operands `operands` of a kernel launch (gpu.launch_func).
void markReadsAllRows(Operation *launch, ArrayRef<int32_t> operands);
/// Marks a kernel argument call whose buffer the kernel reads at the rows
/// of the other ends of its rows' edges (a fused gather's neighbour-side
/// operand): all rows, or in a tile of the kernel only the tile's input
/// chunk.
void markNeighbourRows(Operation *kernelArg);
/// Marks the launch (gnnrtParallelFor) of a kernel over the vertices that
/// reads the input range of its tile, [lo, hi), from its kernel integers
/// `loInt` and `hiInt` (a fused gather's kernel: FusedGatherKernel.cpp),
/// and the edges of its rows on `side` (1: in-edges of destination rows, 0:
/// out-edges of source rows). In row chunks, each chunk runs it once per
/// input chunk, in order. `inOrder`: the kernel keeps the first of equal
/// values (an argmax), so a tile's input must be visited in its order.
void markTiledLaunch(Operation *launch, int64_t loInt, int64_t hiInt,
                     int64_t side, bool inOrder);
/// A tile's launch of a kernel marked with markTiledLaunch, as row chunks
/// emit it (gnnrtParallelForRange after the kernel integers set to the
/// tile's input range).
struct TileLaunch {
  int64_t loInt, hiInt, side;
  bool inOrder;
};
/// The tile launch `op` is, if it is one.
std::optional<TileLaunch> tileLaunchOf(Operation *op);
/// Marks `loop` as row partitioning's stages of a compiled kernel
/// (FusedGatherLowering): broadcast stages, each iteration asking
/// gnnrtStageRows for a stage's rows and launching the kernel over the own
/// rows (gnnrtParallelFor), which a level's rows (the program on blocks)
/// restrict to the level's first rows and the stages to the sources'
/// level; or reduce stages (gnnrtReduceStageRows, the kernel over a
/// stage's sources, gnnrtReduceStageSend), which run whole (to-source
/// aggregations of a partitioned program compute every row). Row chunks
/// are refused.
void markStageLoop(Operation *loop);
/// Marks the take (gnnrtBuffer) of a buffer of per-edge values indexed by
/// edge id that steps in row chunks read and write only at the in-edges of
/// the destination chunk they touch (a fused gather's edge cache: a to-dst
/// kernel's rows are its chunk's destinations; a to-src kernel's tile i
/// reads the edges to destination chunk i), so that the placement moves it
/// by those chunks (gnnrtBufferEdgeChunks).
void markEdgeChunks(Operation *take);
/// Whether `take` was marked so.
bool isEdgeChunked(Operation *take);
/// Once the placement has read them: removes those marks, and the kernel
/// buffers that tiles set again (for the placement to see their uses) where
/// they are still set (no fetch took the buffer again in between).
void finishRowChunks(ModuleOp module);

/// Where a sub-step of a step run in row chunks starts: its chunk and its
/// tile (the input chunk of the step's aggregation the sub-step starts,
/// 0 for the chunk's first).
struct RowChunkStart {
  Operation *first;
  int64_t chunk;
  int64_t tile;
};

/// A step restricted to its first rows (RowLevels.h): rows [0, rows), its
/// aggregation's edges from input rows [0, inputs) (null: every row);
/// `level` the level of `rows` (a staged aggregation's sources are of the
/// level before).
struct RowRange {
  Value rows, inputs;
  int64_t level = 0;
};

/// Runs the code of one lowered step (a vertex stage, an aggregation, an
/// outer sum), the ops after `before` (from the block's start when null)
/// through `last`, as `chunks` row chunks. An aggregation (gnnrtSpmm, or a
/// fused gather's kernel marked with markTiledLaunch) runs in each chunk
/// as `chunks` tiles, one per input chunk in order (NeuGraph's chunks,
/// column-major: the output chunk stays while the input chunks stream);
/// each tile after the first starts a sub-step. With lb.rowColumnTiles, a
/// step whose only row work is its aggregation runs its tiles in
/// row-column order instead (each chunk's first, then the second of every
/// chunk, ...: the input chunk stays while the output chunks stream), the
/// sub-steps returned in that order.
/// Returns where the sub-steps start (chunk 0's first, ...), or nothing
/// when the code cannot be chunked (or is empty, or `chunks` < 2).
/// A value the code defined that the chunks replaced (the loss: the sum of
/// the chunks' shares) is in `replaced`. With the graph out of core
/// (lb.graphOutOfCore) each chunk of an aggregation first opens the window
/// of its rows' edges (gnnrtGraphWindow).
/// With `range` (and `chunks` 1) the code runs once over the range's rows,
/// its aggregation as one tile over the range's inputs. `refused` is set
/// when the code holds something that cannot run over fewer rows, and
/// `refusedBy` (when given) to that op.
SmallVector<RowChunkStart>
chunkStageRows(Block &block, Operation *before, Operation *last, int64_t chunks,
               LoweringBuilder &lb, DenseMap<Value, Value> &replaced,
               const RowRange *range = nullptr, bool *refused = nullptr,
               Operation **refusedBy = nullptr);

} // namespace mlir::gnn

#endif // GNN_LIB_CONVERSION_GNNTORUNTIME_ROWCHUNKS_H
