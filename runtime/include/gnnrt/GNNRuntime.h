//===- GNNRuntime.h - the gnnrt C ABI ---------------------------*- C++ -*-===//
//
// What compiled gnn programs call. One `extern "C"` block; opaque context
// handle; memref arguments as pointers to MLIR's descriptors (functions named
// `_mlir_ciface_*`, declared on the compiler side with
// `llvm.emit_c_interface`). Every tensor crosses the ABI as a flat f32 (or
// i32) memref; its logical shape travels as integer arguments.
//
// Entry points that take a `side` use 0 = src, 1 = dst (the order of
// `mlir::gnn::Side`); `acc` uses 0 sum, 1 mean, 2 max, 3 min (the order of
// `mlir::gnn::Accumulator`).
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_GNNRUNTIME_H
#define GNNRT_GNNRUNTIME_H

#include <stdint.h>

#define GNNRT_EXPORT __attribute__((visibility("default")))

/// Version of this ABI; bumped on any change of an entry point.
///   1: the first ABI.
///   2: gnnrtGemm and gnnrtSumRows take the context as their first argument,
///      like every other entry point that computes (there is no process-wide
///      device any more).
///   3: gnnrtSpmm takes `chunks`, the P of its P x P chunk tiling.
///   4: gnnrtEvict and gnnrtFetch move a slot buffer to the slow tier (the
///      spill file on the CPU) and back.
///   5: gnnrtDrop and gnnrtDropAll free slot buffers without a copy; a
///      fetch keeps the slot's copy in the slow tier.
///   6: gnnrtEvictRange, gnnrtFetchRange and gnnrtDropRange move ranges of a
///      slot buffer at the same address.
///   7: gnnrtParallelForRange runs a kernel over a range of rows and
///      gnnrtView makes a memref of a range of a buffer (the row chunks of a
///      step), gnnrtSpmmRows and gnnrtSoftmaxCrossEntropyRows compute a
///      range of rows of an aggregation and of the loss, gnnrtSumRowsAdd adds
///      rows to a sum;
///      gnnrtBufferChunks takes a slot as row chunks that gnnrtFetchChunk,
///      gnnrtEvictChunk and gnnrtDropChunk move.
///   8: gnnrtSpmmRows takes a range of input rows too (a tile of a row
///      chunk); fused-gather kernels read their tile's input range from
///      their kernel integers.
///   9: gnnrtSumGradients sums the gradients over the processes (one
///      all-reduce) between the last gradient and the first update.
///  10: row partitioning: gnnrtDim(4) is the graph's sources (every vertex;
///      |V| is the process's own), gnnrtAllGatherRows and
///      gnnrtReduceScatterRows move rows between the two,
///      gnnrtSpmmBroadcast aggregates over broadcast stages and
///      gnnrtSpmmReduce to the sources over reduce stages.
///  11: feature partitioning: gnnrtUseGraph selects the whole graph (every
///      vertex, every edge) or the own rows' for the calls that follow;
///      gnnrtDim(5) is the whole graph's edges.
///  12: gnnrtGradientReady announces a parameter's final gradient, which
///      goes out in a bucket of the processes' sum (gnnrtSumGradients waits
///      for the buckets); gnnrtDim(6) is the first own row among every
///      vertex's, gnnrtDim(7) and (8) the process's first feature column and
///      the dataset's columns, by which a partitioned program's dropout
///      draws the single-process mask.
///  13: gnnrtOwnRows takes the own rows of every vertex's rows and
///      gnnrtPadRows puts the own rows among zeros (a row-partitioned
///      program's replicated layers).
///  14: gnnrtFeaturesChunks takes the dataset's features as read-only row
///      chunks read from features.npy by ranges (the features out of core).
///  15: gnnrtGraphWindow makes the per-edge arrays of a range of rows
///      resident (the graph out of core).
///  16: gnnrtFetchChunkFor fetches a tile's input chunk, reading only the
///      rows the tile's edges reach when NeuGraph's rule says so (selective
///      loading); gnnrtSpmmRowsFetch fetches it as a tile of gnnrtSpmmRows
///      reads it, in sub-chunks that a prefetch thread reads while the tile
///      computes (NeuGraph's pipeline).
///  17: gnnrtBufferEdgeChunks takes a slot of per-edge values as chunks by
///      destination chunk (a fused gather's edge caches in row chunks).
///  18: gnnrtLevelRows gives the rows each level of the model computes (a
///      sampled batch's hops; |V| for a whole graph); gnnrtZeroRows zeroes
///      a range of a buffer.
///  19: gnnrtAllGatherWhole and gnnrtReduceScatterWhole move rows between
///      the own rows and the whole graph's (feature partitioning's syncs),
///      with the level of the rows a sampled batch needs (P³ on mini-
///      batches); gnnrtAllGatherRows and gnnrtReduceScatterRows keep the
///      own rows' graph's.
///  20: the dropout draw compiled code computes for gnnrtDropoutParam's key
///      is Random.h's 32-bit dropoutDraw (vectorisable), not mix64's.
///  21: gnnrtWholeLevelRows gives the rows each level computes on the whole
///      graph (P³'s shares ordered by level band) and
///      gnnrtSpmmBroadcastRows the first rows of gnnrtSpmmBroadcast from
///      the sources of a level, gnnrtSpmmReduceRows gnnrtSpmmReduce's
///      sums of a level's sources (the program on blocks of a partitioned
///      model: P³'s shares, co-batches).
///  22: long rows in pieces: gnnrtGraphLongRows, gnnrtGraphPieceOffsets,
///      gnnrtGraphPieceEdges, gnnrtPieceScratch and gnnrtPieceScratchI32.
///  23: gnnrtParallelForRangeFetch fetches a compiled kernel's tile inputs
///      (its slot's chunk and those gnnrtTileInput registered) in
///      sub-chunks as the kernel runs over them (NeuGraph's pipeline for a
///      fused gather's tiles).
///  24: gnnrtStageCount, gnnrtStageStart and gnnrtStageRows give a
///      compiled fused gather's neighbour rows in broadcast stages (row
///      partitioning: MG-GCN's stages for a kernel that is not an SpMM),
///      gnnrtReduceStageRows and gnnrtReduceStageSend run a kernel's sums
///      to the sources in reduce stages, each launched over its sources by
///      gnnrtParallelForRows (any first row).
///  25: gnnrtStageLevelEnd, and gnnrtReduceStageRows takes the level of
///      its part's sums (a kernel's reduce stages on a sampled batch's
///      blocks compute and reduce each owner's rows of that level only).
///  26: gnnrtVertexIds gives the bound graph's vertices' ids in the whole
///      graph (a rank's closure under shared preloading, a sampled batch),
///      by which the program that is not partitioned draws its dropout
///      masks: the whole graph's masks on any part of it;
///      gnnrtDropoutParam's `which` 3 is the key of locally numbered
///      elements.
///  27: gnnrtLevelInput and gnnrtSetLevelOutput: layer-wise evaluation
///      (--gnn-split-eval-levels), whose level functions read the lower
///      levels' values (cuts) at a block's rows and leave their own cuts
///      for the driver.
///  28: gnnrtCheckTypes: the types a fused gather's place_by_type or
///      take_by_type reads, checked before its kernel.
///  29: gnnrtReduceStageSources: a kernel in reduce stages reads a source
///      input in broadcast stages too (the sources it sums to).
#define GNNRT_API_VERSION 29

#ifdef __cplusplus
extern "C" {
#endif

/// MLIR's descriptor of a rank-1 memref (StridedMemRefType<T, 1>).
typedef struct {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} gnnrtMemRefF32;

typedef struct {
  int32_t *allocated;
  int32_t *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} gnnrtMemRefI32;

typedef struct {
  int64_t *allocated;
  int64_t *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} gnnrtMemRefI64;

/// Opaque run-time context: the dataset, the graph's CSC and CSR, the
/// parameters, gradients, optimizer state, buffers and configuration.
typedef struct gnnrtContext gnnrtContext;

GNNRT_EXPORT uint64_t gnnrtGetAPIVersion(void);

/// Sizes the program is bound to: 0 = |V|, 1 = |E|, 2 = features F,
/// 3 = classes C, 4 = the graph's sources S, 5 = the whole graph's edges
/// (feature partitioning; |E| elsewhere). With feature partitioning F is
/// the process's feature columns. In a row-partitioned program
/// (docs/Distributed.md) |V| counts the process's own vertices (the
/// destinations of its edges, the rows of its vertex tensors) and S every
/// vertex (the sources); elsewhere S = |V|. 6 = the first of the
/// process's own vertices among every vertex (0 unless split by rows or
/// features), 7 = its first feature column (0 unless split by features),
/// 8 = the dataset's feature columns.
GNNRT_EXPORT int64_t gnnrtDim(gnnrtContext *ctx, int64_t which);

/// The rows level `level` of the model computes (docs/MiniBatch.md, "The
/// program on blocks"): a sampled batch's vertices are ordered by the hop
/// that reached them, and level l's rows are the first gnnrtLevelRows(l)
/// (level 0: every vertex of the batch, the last level: its seeds); a
/// level's aggregation reads sources among the level before's rows only.
/// |V| for a whole graph and for a level beyond the bound graph's.
GNNRT_EXPORT int64_t gnnrtLevelRows(gnnrtContext *ctx, int64_t level);
/// The same on the whole graph of feature partitioning: every vertex's
/// rows, or under P³ mini-batch training the shares' rows of the level
/// (the whole graph orders them by level band: Sampler.h's
/// shareLevelRows).
GNNRT_EXPORT int64_t gnnrtWholeLevelRows(gnnrtContext *ctx, int64_t level);

/// Feature partitioning (docs/Distributed.md): the graph the calls that
/// follow run on, 0 the own rows' (the default), 1 the whole graph (every
/// vertex a destination, every edge; gnnrtDim(4) vertices, gnnrtDim(5)
/// edges). In one process the two are the same.
GNNRT_EXPORT void gnnrtUseGraph(gnnrtContext *ctx, int64_t which);

/// The graph's segment offsets (|V| + 1 entries): side 1 = in-edges by
/// destination (CSC; the edges of v are the edge ids offsets[v] ..
/// offsets[v+1]), side 0 = out-edges by source (CSR; positions into
/// gnnrtGraphIndex(2)).
GNNRT_EXPORT void _mlir_ciface_gnnrtGraphOffsets(gnnrtMemRefI64 *result,
                                                 gnnrtContext *ctx,
                                                 int64_t side);
/// The calls that follow read the per-edge arrays of the rows [lo, hi) of
/// `side` (0: out-edges by source, the CSR's arrays 2 and 3; 1: in-edges by
/// destination, arrays 0 and 1) and of no other rows on that side. With the
/// graph out of core (the model description's `graph-out-of-core` record)
/// this reads them from storage into a window that replaces the side's last
/// one (nothing is read when it is the same; an empty range frees it);
/// with the graph in memory it only checks the range.
GNNRT_EXPORT void gnnrtGraphWindow(gnnrtContext *ctx, int64_t side, int64_t lo,
                                   int64_t hi);
/// Per-edge arrays (|E| entries): 0 = the source of each edge, 1 = its
/// destination, 2 = the edge ids in CSR order, 3 = the destinations in CSR
/// order (array 1 at array 2's ids, so that a to-src traversal reads them
/// in order).
GNNRT_EXPORT void _mlir_ciface_gnnrtGraphIndex(gnnrtMemRefI32 *result,
                                               gnnrtContext *ctx,
                                               int64_t which);
/// The rows of the aggregations to `side` (0 src, 1 dst) that are split
/// into pieces of gnnrtGraphPieceEdges positions (0: none is; the CUDA
/// device splits rows of more than 256, the CPU device only under
/// GNNRT_PIECE_EDGES): `which` 0 = the long rows, ascending; 1 = each
/// piece's index into them. Piece k of long row j (pieceOffsets[j] <= k <
/// pieceOffsets[j+1]) holds the row's positions from offsets[row] +
/// (k - pieceOffsets[j]) * pieceEdges, at most pieceEdges of them.
/// The global id of each vertex of the bound graph (its row in the whole
/// graph's tensors): a rank's closure under shared preloading, a sampled
/// batch's subgraph. Empty (no element) where the bound graph is the whole
/// graph or a partitioned program runs: row r is then the single-process
/// tensor's row r, or gnnrtDim 6's numbering. Read-only, in device-tier
/// memory; valid until the next graph is bound.
GNNRT_EXPORT void _mlir_ciface_gnnrtVertexIds(gnnrtMemRefI32 *result,
                                              gnnrtContext *ctx);
GNNRT_EXPORT void _mlir_ciface_gnnrtGraphLongRows(gnnrtMemRefI32 *result,
                                                  gnnrtContext *ctx,
                                                  int64_t side, int64_t which);
/// Each long row's first piece (the long rows + 1 entries).
GNNRT_EXPORT void _mlir_ciface_gnnrtGraphPieceOffsets(gnnrtMemRefI64 *result,
                                                      gnnrtContext *ctx,
                                                      int64_t side);
GNNRT_EXPORT int64_t gnnrtGraphPieceEdges(gnnrtContext *ctx, int64_t side);
/// Device memory for the pieces' partial rows: at least `count` floats
/// (gnnrtPieceScratch) or 32-bit integers (gnnrtPieceScratchI32), the
/// context's, grown as asked and reused by every call (contents
/// unspecified).
GNNRT_EXPORT void _mlir_ciface_gnnrtPieceScratch(gnnrtMemRefF32 *result,
                                                 gnnrtContext *ctx,
                                                 int64_t count);
GNNRT_EXPORT void _mlir_ciface_gnnrtPieceScratchI32(gnnrtMemRefI32 *result,
                                                    gnnrtContext *ctx,
                                                    int64_t count);

/// Compiled kernels run by gnnrtParallelFor read their operands from the
/// context: buffer `index` and integer `index`, set before the call.
GNNRT_EXPORT void _mlir_ciface_gnnrtKernelArg(gnnrtContext *ctx, int64_t index,
                                              gnnrtMemRefF32 *buffer);
GNNRT_EXPORT void _mlir_ciface_gnnrtKernelArgGet(gnnrtMemRefF32 *result,
                                                 gnnrtContext *ctx,
                                                 int64_t index);
GNNRT_EXPORT void _mlir_ciface_gnnrtKernelArgI32(gnnrtContext *ctx,
                                                 int64_t index,
                                                 gnnrtMemRefI32 *buffer);
GNNRT_EXPORT void _mlir_ciface_gnnrtKernelArgI32Get(gnnrtMemRefI32 *result,
                                                    gnnrtContext *ctx,
                                                    int64_t index);
GNNRT_EXPORT void gnnrtKernelInt(gnnrtContext *ctx, int64_t index,
                                 int64_t value);
GNNRT_EXPORT int64_t gnnrtKernelIntGet(gnnrtContext *ctx, int64_t index);

/// Rows per call of a gnnrtParallelFor kernel.
#define GNNRT_PARALLEL_CHUNK 32

/// Runs `kernel(ctx, begin, end)` over [0, n) on the context's threads
/// (dynamic schedule: skewed degrees balance), once for each chunk
/// [c * GNNRT_PARALLEL_CHUNK, min(n, (c + 1) * GNNRT_PARALLEL_CHUNK)). Kernels
/// rely on that split: one that sums rows keeps a partial per chunk, so its
/// result does not depend on the threads.
GNNRT_EXPORT void
gnnrtParallelFor(gnnrtContext *ctx,
                 void (*kernel)(gnnrtContext *, int64_t, int64_t), int64_t n);
/// gnnrtParallelFor over rows [begin, end) only: the chunks
/// [begin + c * GNNRT_PARALLEL_CHUNK, ...) clipped at `end`. `begin` is a
/// multiple of GNNRT_PARALLEL_CHUNK (so a kernel's partial per chunk is the
/// one gnnrtParallelFor would use) and 0 <= begin <= end; else the run stops
/// with an error.
GNNRT_EXPORT void gnnrtParallelForRange(gnnrtContext *ctx,
                                        void (*kernel)(gnnrtContext *, int64_t,
                                                       int64_t),
                                        int64_t begin, int64_t end);
/// The same for a kernel whose rows are each computed on their own (no
/// partial per chunk: a fused gather's), over any rows [begin, end) with
/// 0 <= begin <= end (ABI 24: a reduce stage's sources).
GNNRT_EXPORT void gnnrtParallelForRows(gnnrtContext *ctx,
                                       void (*kernel)(gnnrtContext *, int64_t,
                                                      int64_t),
                                       int64_t begin, int64_t end);

/// A buffer of `numElements` floats owned by the context and identified by
/// `slot`: allocated on the first call, the same memory on every later call
/// (so nothing is allocated per epoch). Contents are unspecified.
GNNRT_EXPORT void _mlir_ciface_gnnrtBuffer(gnnrtMemRefF32 *result,
                                           gnnrtContext *ctx, int64_t slot,
                                           int64_t numElements);

/// Elements [offset, offset + count) of `buffer` as a memref of their own
/// (its data pointer at element `offset`): a row chunk of a buffer for an
/// entry point that takes whole memrefs (gnnrtGemm). The range must lie in
/// the buffer; else the run stops with an error.
GNNRT_EXPORT void _mlir_ciface_gnnrtView(gnnrtMemRefF32 *result,
                                         gnnrtContext *ctx,
                                         gnnrtMemRefF32 *buffer, int64_t offset,
                                         int64_t count);

/// Parameter `index` (declaration order) and its gradient buffer.
GNNRT_EXPORT void _mlir_ciface_gnnrtParam(gnnrtMemRefF32 *result,
                                          gnnrtContext *ctx, int64_t index);
GNNRT_EXPORT void _mlir_ciface_gnnrtGrad(gnnrtMemRefF32 *result,
                                         gnnrtContext *ctx, int64_t index);

/// The features [V, F]; per-vertex in- (0) or out- (1) degree as floats;
/// edge data by index into the model's edge inputs.
GNNRT_EXPORT void _mlir_ciface_gnnrtFeatures(gnnrtMemRefF32 *result,
                                             gnnrtContext *ctx);
GNNRT_EXPORT void _mlir_ciface_gnnrtDegree(gnnrtMemRefF32 *result,
                                           gnnrtContext *ctx, int64_t dir);
/// Layer-wise evaluation (ABI 27): cut `cut` [V, rowSize] at the bound
/// block's rows, which the driver bound before calling a level function.
GNNRT_EXPORT void _mlir_ciface_gnnrtLevelInput(gnnrtMemRefF32 *result,
                                               gnnrtContext *ctx, int64_t cut,
                                               int64_t rowSize);
GNNRT_EXPORT void _mlir_ciface_gnnrtEdgeDataF32(gnnrtMemRefF32 *result,
                                                gnnrtContext *ctx,
                                                int64_t index);
GNNRT_EXPORT void _mlir_ciface_gnnrtEdgeDataI32(gnnrtMemRefI32 *result,
                                                gnnrtContext *ctx,
                                                int64_t index);

/// out[e, :] = in[src(e) or dst(e), :] for rows of `width` floats.
GNNRT_EXPORT void _mlir_ciface_gnnrtScatter(gnnrtContext *ctx, int64_t side,
                                            gnnrtMemRefF32 *in,
                                            gnnrtMemRefF32 *out, int64_t width);
/// gnnrtSpmm's output rows [begin, end) only (0 <= begin <= end <= V), from
/// their edges whose other end is in [inBegin, inEnd) (a tile: a row chunk
/// of an aggregation over an input chunk, ABI 8); the other rows of `out`
/// are not touched. A row's tile with inBegin = 0 is stored, a later one
/// added to it; a mean divides by the row's whole edge count in the tile
/// with inEnd = V. So the tiles over input ranges from 0 to V, in order,
/// compute the untiled rows up to reassociation, and [0, V) is untiled.
GNNRT_EXPORT void
_mlir_ciface_gnnrtSpmmRows(gnnrtContext *ctx, int64_t side, int64_t mean,
                           gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in,
                           gnnrtMemRefF32 *out, int64_t width, int64_t begin,
                           int64_t end, int64_t inBegin, int64_t inEnd);

/// out[v, :] = reduce over edges e with dst(e) = v (side 1) or src(e) = v
/// (side 0) of in[e, :]. Vertices without edges get 0. For max/min, `arg`
/// (size V * width) receives the chosen edge per element: the lowest CSC
/// position among ties; -1 where there is none.
GNNRT_EXPORT void _mlir_ciface_gnnrtGather(gnnrtContext *ctx, int64_t acc,
                                           int64_t side, gnnrtMemRefF32 *in,
                                           gnnrtMemRefF32 *out,
                                           gnnrtMemRefI32 *arg, int64_t width);

/// Backward of a max/min gather: gradEdges[e, i] = gradOut[v, i] where
/// arg[v, i] = e, 0 elsewhere.
GNNRT_EXPORT void _mlir_ciface_gnnrtGatherArgBackward(
    gnnrtContext *ctx, int64_t side, gnnrtMemRefF32 *gradOut,
    gnnrtMemRefI32 *arg, gnnrtMemRefF32 *gradEdges, int64_t width);

/// Weighted aggregation without an edge tensor (scatter, per-edge scale and
/// gather in one pass):
/// out[v, :] = sum over edges e into v (side 1; out of v for side 0) of
/// w[e] * in[other end of e, :], divided by the number of such edges when
/// `mean` is set; `w` may have size 0 (all weights 1). With `chunks` P > 1
/// the vertices are cut into P equal chunks and the edges into the P x P
/// chunks between them (--gnn-chunk-tile): each output chunk is done over
/// the input chunks in turn (forward: a destination chunk over the source
/// chunks, column-major over the CSC; backward: a source chunk over the
/// destination chunks, row-major over the CSR), so that one input chunk and
/// one output chunk are worked on at a time. The sums are the same up to
/// reassociation.
GNNRT_EXPORT void _mlir_ciface_gnnrtSpmm(gnnrtContext *ctx, int64_t side,
                                         int64_t mean, int64_t chunks,
                                         gnnrtMemRefF32 *weights,
                                         gnnrtMemRefF32 *in,
                                         gnnrtMemRefF32 *out, int64_t width);

/// out[j] = sum over r < rows of in[r * width + j] (a parameter gradient
/// summed over vertices); in parallel, the result depends only on the thread
/// count.
GNNRT_EXPORT void _mlir_ciface_gnnrtSumRows(gnnrtContext *ctx, int64_t rows,
                                            int64_t width, gnnrtMemRefF32 *in,
                                            gnnrtMemRefF32 *out);
/// out[j] += sum over r < rows of in[r * width + j] (a row chunk's share of
/// gnnrtSumRows: ABI 7).
GNNRT_EXPORT void _mlir_ciface_gnnrtSumRowsAdd(gnnrtContext *ctx, int64_t rows,
                                               int64_t width,
                                               gnnrtMemRefF32 *in,
                                               gnnrtMemRefF32 *out);

/// Zeroes elements [begin, begin + count) of `buf` (the rows of a tensor
/// that a level's step left out and a later step reads as zeros: ABI 18).
GNNRT_EXPORT void _mlir_ciface_gnnrtZeroRows(gnnrtContext *ctx,
                                             gnnrtMemRefF32 *buf, int64_t begin,
                                             int64_t count);

/// C[M, N] = alpha * op(A) op(B) + beta * C, row-major, op = transpose when
/// the flag is set (OpenBLAS sgemm on the CPU device).
GNNRT_EXPORT void _mlir_ciface_gnnrtGemm(gnnrtContext *ctx, int64_t transA,
                                         int64_t transB, int64_t m, int64_t n,
                                         int64_t k, float alpha,
                                         gnnrtMemRefF32 *a, gnnrtMemRefF32 *b,
                                         float beta, gnnrtMemRefF32 *c);

/// Typed linear (GG-NN): out[r, :] = x[r, :] @ w[types[r]] with w of shape
/// [T, K, N]; a grouped GEMM. Types outside [0, T) stop the run with an error.
GNNRT_EXPORT void
_mlir_ciface_gnnrtTypedGemm(gnnrtContext *ctx, int64_t rows, int64_t k,
                            int64_t n, int64_t numTypes, gnnrtMemRefF32 *x,
                            gnnrtMemRefI32 *types, gnnrtMemRefF32 *w,
                            gnnrtMemRefF32 *out);

/// Stops the run unless every element of `types` is in [0, numTypes): the
/// edge types that a fused gather's place_by_type or take_by_type (GG-NN's
/// typed sum by slots) reads, as gnnrtTypedGemm checks its own.
GNNRT_EXPORT void _mlir_ciface_gnnrtCheckTypes(gnnrtContext *ctx,
                                               gnnrtMemRefI32 *types,
                                               int64_t numTypes);

/// Transpose of the typed linear (its input gradient):
/// gx[r, :] = w[types[r]] @ g[r, :] with w of shape [T, K, N].
GNNRT_EXPORT void
_mlir_ciface_gnnrtTypedGemmTranspose(gnnrtContext *ctx, int64_t rows, int64_t k,
                                     int64_t n, int64_t numTypes,
                                     gnnrtMemRefF32 *g, gnnrtMemRefI32 *types,
                                     gnnrtMemRefF32 *w, gnnrtMemRefF32 *gx);

/// Weight gradient of the typed linear: gw[t] = sum over rows r of type t of
/// x[r, :]^T g[r, :] (written, not accumulated).
GNNRT_EXPORT void
_mlir_ciface_gnnrtTypedOuterSum(gnnrtContext *ctx, int64_t rows, int64_t k,
                                int64_t n, int64_t numTypes, gnnrtMemRefF32 *x,
                                gnnrtMemRefI32 *types, gnnrtMemRefF32 *g,
                                gnnrtMemRefF32 *gw);

/// An int32 buffer, like gnnrtBuffer (the same slot numbering).
GNNRT_EXPORT void _mlir_ciface_gnnrtBufferI32(gnnrtMemRefI32 *result,
                                              gnnrtContext *ctx, int64_t slot,
                                              int64_t numElements);

/// The slow tier (issue 18): explicit copies of a slot buffer between the
/// fast tier (device memory; resident memory on the CPU) and the slow tier
/// (storage on the CPU: the executable's --spill-dir).
///
/// gnnrtEvict writes slot `slot`'s buffer (its whole size, f32 or i32 alike)
/// to the slow tier and frees its memory; the slot stays known with its size.
/// Evicting an evicted slot does nothing. A slot never allocated by
/// gnnrtBuffer, a run without a spill directory and a failed write (a full
/// disk, the file size limit) stop the run with an error; a failed write
/// leaves what was evicted before intact.
///
/// gnnrtFetch allocates an evicted slot's buffer again (on the device, so its
/// memory counters see it) and reads its bytes back: the contents are those
/// it had when evicted, bit for bit; fetching a resident slot does nothing.
/// The copy stays in the slow tier until the slot is evicted again or
/// dropped with keepCopy 0.
/// Memrefs taken from the slot before the eviction are invalid after it: take
/// them again with gnnrtBuffer after the fetch.
///
/// gnnrtBuffer (and gnnrtBufferI32) on an evicted slot stops the run with an
/// error naming the slot: a fetch is never implicit, so the bytes moved are
/// exactly the copies the program makes.
GNNRT_EXPORT void gnnrtEvict(gnnrtContext *ctx, int64_t slot);
GNNRT_EXPORT void gnnrtFetch(gnnrtContext *ctx, int64_t slot);

/// gnnrtDrop frees slot `slot`'s buffer without writing it. With `keepCopy`
/// non-zero the program asserts that the slot's copy in the slow tier is
/// current (it has not written the buffer since the fetch): the slot is then
/// evicted, as after gnnrtEvict, at no I/O; a slot without a copy of its size
/// stops the run. With `keepCopy` 0 the contents are dead: the buffer and
/// any copy are freed and the slot is as if never allocated (the next
/// gnnrtBuffer allocates it). Dropping a slot that holds nothing does
/// nothing. gnnrtDropAll drops every slot with `keepCopy` 0 (a function that
/// runs under a placement plan starts with it: nothing of the previous
/// call's buffers is resident).
GNNRT_EXPORT void gnnrtDrop(gnnrtContext *ctx, int64_t slot, int64_t keepCopy);
GNNRT_EXPORT void gnnrtDropAll(gnnrtContext *ctx);

/// Ranges of a slot buffer (ABI 6; the chunks of issue 18's chunked
/// placement): elements [offset, offset + count) of slot `slot`'s resident
/// buffer move to the slow tier and back *at the same address*, so memrefs
/// taken before stay valid and nothing is taken again. gnnrtEvictRange
/// writes the range and gives its memory back (on the CPU the whole pages
/// inside it, which become inaccessible: a kernel touching a range that is
/// out faults instead of reading garbage; the device's `live` counter drops
/// by what was given back); gnnrtFetchRange makes the memory usable again
/// and reads the range back, keeping the copy; gnnrtDropRange gives the
/// memory back with the copy kept (`keepCopy` non-zero: the program asserts
/// it has not written the range since its fetch; no copy is an error) or
/// forgets the range (`keepCopy` 0: contents dead; its memory is usable
/// again). A slot's ranges are disjoint (a range overlapping another of
/// other bounds is an error); evicting a range that is out, or fetching one
/// that is resident, does nothing. gnnrtEvict, and gnnrtBuffer growing the
/// slot, refuse a slot with ranges out; gnnrtDrop(slot, 0) and gnnrtDropAll
/// forget its ranges. A device that cannot give memory back at an address
/// (CUDA, until its virtual memory management is used) keeps the memory and
/// still makes the copies. (The declarations follow the chunked slots'.)
///
/// Chunked slots (ABI 7; issue 18's placement of row chunks): a buffer of
/// `numElements` floats in slot `slot`, `rows` rows of numElements / rows
/// floats (a whole number; 0 <= rows < 2^31), in `chunks` chunks (1 to
/// 4096): chunk c is the
/// rows [b_c, b_{c+1}), b_c = floor(floor(c rows / chunks) / 32) * 32 for
/// c < chunks (32 = GNNRT_PARALLEL_CHUNK: the lowering's row chunks) and
/// b_chunks = rows. Each chunk is absent (no memory: its pages are given
/// back and inaccessible; contents dead), resident, or out (its contents in
/// the spill file). gnnrtBufferChunks takes the slot with every chunk
/// absent (a slot holding a plain buffer, or other chunks, is taken again:
/// none of its chunks may be out); taking it with the same shape again
/// changes nothing and returns the same memref. gnnrtFetchChunk makes a
/// chunk resident: an absent one only gets its memory, an out one is read
/// back (the copy stays). gnnrtEvictChunk writes a resident chunk and gives
/// its memory back (an absent one is an error). gnnrtDropChunk gives a
/// chunk's memory back keeping its copy (`keepCopy` non-zero: the program
/// asserts it is current; none is an error) or makes it absent. Memory goes
/// by pages: a page stays while a resident chunk overlaps it. gnnrtBuffer,
/// gnnrtEvict and gnnrtFetch refuse a chunked slot with chunks out;
/// gnnrtDrop(slot, 0) and gnnrtDropAll forget the chunks. Needs the spill
/// store (a model with a placement plan always has one).
/// The first row b_c of chunk `c` (0 <= c <= chunks) of `rows` rows in
/// `chunks` chunks, as gnnrtBufferChunks and the compiler's row chunks take
/// them.
static inline int64_t gnnrtChunkRowBound(int64_t rows, int64_t chunks,
                                         int64_t c) {
  if (c >= chunks)
    return rows;
  return c * rows / chunks / GNNRT_PARALLEL_CHUNK * GNNRT_PARALLEL_CHUNK;
}

GNNRT_EXPORT void _mlir_ciface_gnnrtBufferChunks(gnnrtMemRefF32 *result,
                                                 gnnrtContext *ctx,
                                                 int64_t slot,
                                                 int64_t numElements,
                                                 int64_t rows, int64_t chunks);
/// A chunked slot of per-edge values (ABI 17; issue 18, a fused gather's
/// edge caches in row chunks): `numElements` floats, |E| rows of
/// numElements / |E| floats indexed by edge id (the CSC's positions), in
/// `chunks` chunks by destination: chunk c is the in-edges of the
/// destination rows [b_c, b_{c+1}) of gnnrtChunkRowBound (|V|, chunks), the
/// edges [dstOffsets[b_c], dstOffsets[b_{c+1}]). Otherwise as
/// gnnrtBufferChunks (gnnrtFetchChunkFor refuses it: its chunks are not rows
/// of vertices). Needs the bound graph's offsets in memory the host
/// addresses.
GNNRT_EXPORT void _mlir_ciface_gnnrtBufferEdgeChunks(gnnrtMemRefF32 *result,
                                                     gnnrtContext *ctx,
                                                     int64_t slot,
                                                     int64_t numElements,
                                                     int64_t chunks);
/// The dataset's features [V, F] as a chunked slot (ABI 14; issue 18, the
/// features out of core): slot `slot` holds V rows of F floats in `chunks`
/// chunks, every chunk out at first, its copy the rows of features.npy, which
/// gnnrtFetchChunk reads by ranges. They are read-only: gnnrtDropChunk gives
/// a chunk's memory back whatever `keepCopy` says, gnnrtEvictChunk is an
/// error, and gnnrtDrop(slot, 0) and gnnrtDropAll leave every chunk out but
/// the slot taken. Taking it again with the same count changes nothing;
/// gnnrtBuffer and gnnrtBufferChunks refuse the slot. Needs a run whose
/// driver kept the features on storage (the model description's
/// `features-out-of-core` record).
GNNRT_EXPORT void _mlir_ciface_gnnrtFeaturesChunks(gnnrtMemRefF32 *result,
                                                   gnnrtContext *ctx,
                                                   int64_t slot,
                                                   int64_t chunks);
GNNRT_EXPORT void gnnrtFetchChunk(gnnrtContext *ctx, int64_t slot,
                                  int64_t chunk);
/// gnnrtFetchChunkFor is gnnrtFetchChunk for a step that reads the chunk
/// only as the input of one tile of an aggregation (ABI 16; issue 18,
/// NeuGraph's selective loading): the tile's rows are output chunk
/// `outChunk` (of the slot's count) on `side` (1: destinations, reading the
/// sources of their in-edges; 0: sources, reading the destinations of their
/// out-edges). A chunk that is out is read whole, or, when the fraction θ
/// of its rows those edges reach is below T_copy / (T_copy + T_trans)
/// (measured; the executable's --selective-loads), only those rows: the
/// chunk is then resident for that tile only and must be dropped next
/// (gnnrtDropChunk; gnnrtFetchChunk reads it whole, gnnrtEvictChunk
/// refuses it).
GNNRT_EXPORT void gnnrtFetchChunkFor(gnnrtContext *ctx, int64_t slot,
                                     int64_t chunk, int64_t side,
                                     int64_t outChunk);
/// gnnrtSpmmRowsFetch is gnnrtFetchChunkFor(slot, chunk, side, the chunk of
/// rows [begin, end)) followed by gnnrtSpmmRows(side, mean, weights, in, out,
/// width, begin, end, inBegin, inEnd), where `in` is the slot's buffer and
/// [inBegin, inEnd) the chunk's rows. A chunk that is out is read in
/// sub-chunks (the executable's --sub-chunks, ranges of its rows), each
/// read by a prefetch thread while the tile computes on the ones read
/// before, in the order NeuGraph's swap heuristic gives the times profiled
/// in the tile's first visits (the sub-chunk with input row 0 first, the one
/// with the last input row last).
GNNRT_EXPORT void _mlir_ciface_gnnrtSpmmRowsFetch(
    gnnrtContext *ctx, int64_t slot, int64_t chunk, int64_t side, int64_t mean,
    gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
    int64_t width, int64_t begin, int64_t end, int64_t inBegin, int64_t inEnd);
/// gnnrtParallelForRangeFetch is gnnrtFetchChunkFor(slot, chunk, side, the
/// chunk of rows [begin, end)) followed by gnnrtParallelForRange(kernel,
/// begin, end) for a compiled kernel's tile (ABI 23; a fused gather's
/// kernel in row chunks) whose input rows are kernel integers `loInt` and
/// `hiInt`, set to the chunk's rows of the slot's count. A chunk that is
/// out is read in sub-chunks as by gnnrtSpmmRowsFetch, and the kernel runs
/// over the rows once per sub-chunk with the integers set to its input
/// rows (and set back after): in the input's order where `inOrder` is
/// non-zero (a kernel that keeps the first of equal values, an argmax),
/// else in the order of gnnrtSpmmRowsFetch. The slots gnnrtTileInput
/// registered since the last such call are inputs of the tile too: the
/// same chunk of each is fetched alike and read in the same sub-chunks.
GNNRT_EXPORT void
gnnrtParallelForRangeFetch(gnnrtContext *ctx, int64_t slot, int64_t chunk,
                           int64_t side, int64_t loInt, int64_t hiInt,
                           int64_t inOrder,
                           void (*kernel)(gnnrtContext *, int64_t, int64_t),
                           int64_t begin, int64_t end);
/// Registers chunked slot `slot` as another input of the tile the next
/// gnnrtParallelForRangeFetch runs (ABI 23).
GNNRT_EXPORT void gnnrtTileInput(gnnrtContext *ctx, int64_t slot);
GNNRT_EXPORT void gnnrtEvictChunk(gnnrtContext *ctx, int64_t slot,
                                  int64_t chunk);
GNNRT_EXPORT void gnnrtDropChunk(gnnrtContext *ctx, int64_t slot, int64_t chunk,
                                 int64_t keepCopy);

GNNRT_EXPORT void gnnrtEvictRange(gnnrtContext *ctx, int64_t slot,
                                  int64_t offset, int64_t count);
GNNRT_EXPORT void gnnrtFetchRange(gnnrtContext *ctx, int64_t slot,
                                  int64_t offset, int64_t count);
GNNRT_EXPORT void gnnrtDropRange(gnnrtContext *ctx, int64_t slot,
                                 int64_t offset, int64_t count,
                                 int64_t keepCopy);

/// Masked mean softmax cross-entropy of logits [V, C] over the vertices of
/// split `split` (0 train, 1 val, 2 test) with a label; writes d loss /
/// d logits into `grad` unless it has size 0. Returns the loss.
GNNRT_EXPORT float _mlir_ciface_gnnrtSoftmaxCrossEntropy(gnnrtContext *ctx,
                                                         gnnrtMemRefF32 *logits,
                                                         gnnrtMemRefF32 *grad,
                                                         int64_t classes,
                                                         int64_t split);
/// The vertices [begin, end) of gnnrtSoftmaxCrossEntropy (0 <= begin <= end
/// <= V): their share of the loss (their losses over the count of the whole
/// split: the shares of a partition of the vertices add up to the loss) and
/// their rows of the gradient; other rows untouched (a row chunk: ABI 7).
GNNRT_EXPORT float _mlir_ciface_gnnrtSoftmaxCrossEntropyRows(
    gnnrtContext *ctx, gnnrtMemRefF32 *logits, gnnrtMemRefF32 *grad,
    int64_t classes, int64_t split, int64_t begin, int64_t end);

/// The mask of dropout op `op` at this step, for compiled code that applies
/// it inline (the same mask as gnnrtDropout's): `which` 0 gives the key, 1 the
/// threshold, 2 the scale's f32 bits. Element i is kept when
/// dropoutDraw(key, i) >= threshold (runtime/lib/Random.h: murmur3's 32-bit
/// finaliser of i's halves in Weyl sequences and the key's, 24 bits; since
/// ABI 20), and is then
/// multiplied by the scale; not training (or rate 0): threshold 0, scale 1.
/// A row- or feature-partitioned program numbers the elements as the
/// single-process tensor does (global row times the global width plus the
/// global column, gnnrtDim 6 to 8), and its key is then the same on every
/// process: the masks are the single-process ones. So does the program that
/// is not partitioned on a part of the graph (gnnrtVertexIds: a closure, a
/// sampled batch), element (r, j) being (ids[r] * width + j). `which` 3
/// gives the key of elements numbered locally (an edge stage's): each
/// process's own stream, independent of the others' (ABI 26).
GNNRT_EXPORT int64_t gnnrtDropoutParam(gnnrtContext *ctx, int64_t op,
                                       double rate, int64_t which);

/// Inverted dropout with a counter-based mask of (seed, step, op, element):
/// out = in * mask / (1 - rate) when training, out = in otherwise. The
/// backward call recomputes the same mask. `rate` < 0 means "the op's
/// default" is overridden by the run's --dropout when given.
GNNRT_EXPORT void _mlir_ciface_gnnrtDropout(gnnrtContext *ctx, int64_t op,
                                            double rate, gnnrtMemRefF32 *in,
                                            gnnrtMemRefF32 *out);
GNNRT_EXPORT void _mlir_ciface_gnnrtDropoutBackward(gnnrtContext *ctx,
                                                    int64_t op, double rate,
                                                    gnnrtMemRefF32 *gradOut,
                                                    gnnrtMemRefF32 *gradIn);

/// Row partitioning (docs/Distributed.md): process r of N owns the vertices
/// [p(r), p(r+1)), p(r) = floor(r S / N). gnnrtAllGatherRows gives every
/// process every vertex's row: out[v] = the owner's in[v - p(owner)]
/// (in: |V| rows, out: S rows of `width` floats). gnnrtReduceScatterRows
/// sums the processes' rows of every vertex into the owners':
/// out[v] = sum over the processes of their in[p(r) + v] (in: S rows, out:
/// |V|). In one process both copy.
GNNRT_EXPORT void _mlir_ciface_gnnrtAllGatherRows(gnnrtContext *ctx,
                                                  gnnrtMemRefF32 *in,
                                                  gnnrtMemRefF32 *out,
                                                  int64_t width);
/// MG-GCN's staged aggregation (§4.3): out[v] for the own vertices v = the
/// weighted sum (mean when set) of in[u] over v's in-edges u -> v, where in
/// holds the own rows and the others' are broadcast in N stages: at stage j
/// the owner of [p(j), p(j+1)) broadcasts its rows into one of two
/// alternating buffers, the broadcast of j+1 is issued before the stage-j
/// sums, which read only the edges from [p(j), p(j+1)). The same sums as an
/// all-gather and gnnrtSpmm, without every vertex's rows at once; in one
/// process gnnrtSpmm. `weights` per edge or empty.
GNNRT_EXPORT void
_mlir_ciface_gnnrtSpmmBroadcast(gnnrtContext *ctx, int64_t mean,
                                gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in,
                                gnnrtMemRefF32 *out, int64_t width);
/// The same for the own rows [0, end) alone (a sampled batch's level: a
/// co-batch's or P³ share's own rows of the level), whose edges read
/// sources of level `sourceLevel`: on a co-batch each stage broadcasts only
/// its owner's rows of that level (ctx->rowLevels).
GNNRT_EXPORT void
_mlir_ciface_gnnrtSpmmBroadcastRows(gnnrtContext *ctx, int64_t mean,
                                    gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in,
                                    gnnrtMemRefF32 *out, int64_t width,
                                    int64_t end, int64_t sourceLevel);
/// The broadcast stages of a compiled kernel (a fused gather to the
/// destinations whose neighbour rows are an all-gather's, gnnc's lowering
/// runs it once per stage over the edges from the stage's rows): the
/// number of stages (the processes when the rows are split, else 1), the
/// first row of stage j among every vertex's (stage `count`: the
/// sources' count), and stage j's rows, as a memref that row u of every
/// vertex's rows is read from, u * width on, for u in the stage's range
/// (its data shifted: other rows are not there). `own` holds the process's
/// own rows. Stage 0 issues the broadcast of the first stage's rows; stage
/// j waits for its rows and issues stage j + 1's into the other of two
/// buffers, so the stages must be asked for in order, each after the
/// kernel of the one before has run. In one process the one stage is `own`.
/// `sourceLevel` >= 0 (the program on blocks): a co-batch's stage j
/// broadcasts only its owner's rows of that level (ctx->rowLevels), as
/// gnnrtSpmmBroadcastRows does; -1: every row.
GNNRT_EXPORT int64_t gnnrtStageCount(gnnrtContext *ctx);
GNNRT_EXPORT int64_t gnnrtStageStart(gnnrtContext *ctx, int64_t stage);
/// The end of stage j's rows of `level` among every vertex's: a co-batch's
/// stage j holds its owner's rows, whose rows of a level are a prefix
/// (ctx->rowLevels); -1, one process, or no levels: gnnrtStageStart(j + 1).
/// Asked in a reduce-stage loop, at least the rows its parts send.
GNNRT_EXPORT int64_t gnnrtStageLevelEnd(gnnrtContext *ctx, int64_t stage,
                                        int64_t level);
GNNRT_EXPORT void _mlir_ciface_gnnrtStageRows(gnnrtMemRefF32 *result,
                                              gnnrtContext *ctx,
                                              gnnrtMemRefF32 *own,
                                              int64_t width, int64_t stage,
                                              int64_t sourceLevel);
/// The reduce stages of a compiled kernel (a fused gather summing to the
/// sources whose outputs' one reader each is a reduce-scatter): stage j's
/// kernel writes the partial sums of the sources [p(j), p(j+1)) of its
/// output `part` (of `width` floats, at `rowOffset` of the `totalWidth`
/// floats of all the outputs' rows) into the memref gnnrtReduceStageRows
/// gives (row u at u * width, shifted as gnnrtStageRows's), the owner's
/// into `own` (its rows of that output's result) in place, and
/// gnnrtReduceStageSend reduces them to the owner (a non-blocking reduce)
/// while stage j + 1 computes. Asking for stage j's first part waits for
/// stage j - 2's reduces (their buffer); the last part's send of the last
/// stage waits for all (and ends the loop: its parts are forgotten). In one
/// process the one stage is `own`; closed shares sum every source's rows
/// and keep their own. `level` >= 0 (the program on blocks):
/// the part's sums are zero beyond the sources of that level, so stage j
/// reduces only its owner's rows of the level (gnnrtStageLevelEnd), and
/// the owner's own rows beyond them are set to zero; -1: every row. The
/// part's `width`, place and level are stage 0's at every stage.
GNNRT_EXPORT void _mlir_ciface_gnnrtReduceStageRows(
    gnnrtMemRefF32 *result, gnnrtContext *ctx, gnnrtMemRefF32 *own,
    int64_t width, int64_t stage, int64_t part, int64_t rowOffset,
    int64_t totalWidth, int64_t level);
GNNRT_EXPORT void _mlir_ciface_gnnrtReduceStageSend(
    gnnrtContext *ctx, gnnrtMemRefF32 *own, int64_t width, int64_t stage,
    int64_t part, int64_t parts, int64_t rowOffset, int64_t totalWidth);
/// A source input of a kernel in reduce stages, in broadcast stages of its
/// own: at stage j (after gnnrtReduceStageRows of the same stage) the rows
/// of the sources [p(j), p(j+1)) that the stage's kernel sums to, as
/// gnnrtStageRows gives them (row u at u * width), from two receive buffers
/// of their own, stage j + 1's broadcast issued while stage j computes;
/// `own` and `width` are stage 0's at every stage. On a co-batch only the
/// owner's rows of the reduce parts' lowest level move (the sources whose
/// sums the kernel computes, gnnrtStageLevelEnd). In one process the own
/// rows; closed shares: the own rows among zeros.
GNNRT_EXPORT void _mlir_ciface_gnnrtReduceStageSources(gnnrtMemRefF32 *result,
                                                       gnnrtContext *ctx,
                                                       gnnrtMemRefF32 *own,
                                                       int64_t width,
                                                       int64_t stage);
/// Its adjoint in stages: out[v] for the own vertices v = the sum over the
/// processes of their weighted sums over v's out-edges of their own rows
/// `in` (what an aggregation to the source and gnnrtReduceScatterRows
/// compute). At stage j each process sums the sources [p(j), p(j+1)) into
/// one of two alternating buffers (the owner into `out`) and reduces them
/// to the owner (a non-blocking reduce) while stage j + 1 computes. In one
/// process gnnrtSpmm to the sources.
GNNRT_EXPORT void _mlir_ciface_gnnrtSpmmReduce(gnnrtContext *ctx,
                                               gnnrtMemRefF32 *weights,
                                               gnnrtMemRefF32 *in,
                                               gnnrtMemRefF32 *out,
                                               int64_t width);
/// The same when the sums are zero beyond the sources' level `level` (the
/// program on blocks): a co-batch's processes compute and reduce only
/// each owner's rows of that level (ctx->rowLevels), and the own rows
/// beyond are zero; elsewhere gnnrtSpmmReduce.
GNNRT_EXPORT void
_mlir_ciface_gnnrtSpmmReduceRows(gnnrtContext *ctx, gnnrtMemRefF32 *weights,
                                 gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
                                 int64_t width, int64_t level);
GNNRT_EXPORT void _mlir_ciface_gnnrtReduceScatterRows(gnnrtContext *ctx,
                                                      gnnrtMemRefF32 *in,
                                                      gnnrtMemRefF32 *out,
                                                      int64_t width);
/// The same two between the own rows and the whole graph's (feature
/// partitioning: the sync that sums the processes' partial contractions of
/// their feature columns into the owners' rows, its adjoint that gives
/// every process the owners' gradient rows, and layer 1's reads of own
/// rows' values). On a whole graph they are gnnrtReduceScatterRows and
/// gnnrtAllGatherRows. Under P³ mini-batch training (docs/MiniBatch.md)
/// the whole graph holds every process's share of the batch by level band
/// (gnnrtWholeLevelRows), and each process's rows are its share: they move
/// only each share's first gnnrtLevelRows(`level`) rows, by all-to-all (P³'s
/// pull of the partial rows to their owner, which sums them, and the push of
/// the gradient rows back), and the other rows of `out` are zero.
GNNRT_EXPORT void _mlir_ciface_gnnrtAllGatherWhole(gnnrtContext *ctx,
                                                   gnnrtMemRefF32 *in,
                                                   gnnrtMemRefF32 *out,
                                                   int64_t width,
                                                   int64_t level);
GNNRT_EXPORT void _mlir_ciface_gnnrtReduceScatterWhole(gnnrtContext *ctx,
                                                       gnnrtMemRefF32 *in,
                                                       gnnrtMemRefF32 *out,
                                                       int64_t width,
                                                       int64_t level);
/// Replicated layers (--gnn-partition-rows replicate=k): gnnrtOwnRows
/// copies the process's own rows out of every vertex's, out[v] =
/// in[p(rank) + v] (in: S rows, out: |V|); gnnrtPadRows is its adjoint,
/// out[p(rank) + v] = in[v] and zero at the other vertices (in: |V| rows,
/// out: S). Neither communicates; in one process both copy.
GNNRT_EXPORT void _mlir_ciface_gnnrtOwnRows(gnnrtContext *ctx,
                                            gnnrtMemRefF32 *in,
                                            gnnrtMemRefF32 *out, int64_t width);
GNNRT_EXPORT void _mlir_ciface_gnnrtPadRows(gnnrtContext *ctx,
                                            gnnrtMemRefF32 *in,
                                            gnnrtMemRefF32 *out, int64_t width);

/// Parameter `index`'s gradient (gnnrtGrad) is final for this step: it joins
/// the bucket being filled, whose all-reduce over the processes is issued
/// (non-blocking) once the bucket holds the executable's --bucket-bytes;
/// the backward goes on meanwhile. Nothing in a world of one, nor for a
/// feature shard.
GNNRT_EXPORT void gnnrtGradientReady(gnnrtContext *ctx, int64_t index);

/// Sums every parameter's gradient over the processes training together
/// (data-parallel ranks, docs/Distributed.md): the gradients not announced
/// by gnnrtGradientReady go out in a last bucket, then every bucket's
/// all-reduce is waited for; nothing in a world of one. The training step
/// calls it once, after the last gradient is written and before the first
/// gnnrtOptimizerUpdate.
GNNRT_EXPORT void gnnrtSumGradients(gnnrtContext *ctx);

/// One step of the run's optimizer on parameter `index` with its gradient.
GNNRT_EXPORT void gnnrtOptimizerUpdate(gnnrtContext *ctx, int64_t index);

/// Records where the program left the logits [V, C] (for accuracy,
/// predictions and dumps) and the loss.
GNNRT_EXPORT void _mlir_ciface_gnnrtSetOutput(gnnrtContext *ctx,
                                              gnnrtMemRefF32 *logits,
                                              float loss);

/// Records where a level function left cut `cut` [V, rowSize] (its first
/// gnnrtLevelRows(1) rows: the block's destinations), for the driver (ABI
/// 27).
GNNRT_EXPORT void _mlir_ciface_gnnrtSetLevelOutput(gnnrtContext *ctx,
                                                   int64_t cut,
                                                   gnnrtMemRefF32 *rows,
                                                   int64_t rowSize);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // GNNRT_GNNRUNTIME_H
