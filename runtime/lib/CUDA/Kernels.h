//===- Kernels.h - the CUDA device's kernels --------------------*- C++ -*-===//
//
// Launchers of the CUDA device's own kernels (Kernels.cu, compiled by nvcc):
// the gathers, scatters and SpMMs over the graph (a warp per output row, no
// atomics: every output row has one writer and reduces its edges in segment
// order, as the CPU device does), sums of rows, the loss, dropout with the
// CPU device's counter-based masks, the optimizer steps and the row moves of
// the typed GEMMs. CUDADevice.cpp checks the operands and calls these; GEMMs
// go to cuBLAS there. Every launcher enqueues on `stream` and checks the
// launch.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_CUDA_KERNELS_H
#define GNNRT_CUDA_KERNELS_H

#include "LongRows.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace gnnrt::cuda {

/// Stops the run with "'<expr>' failed with '<error name>': <description>"
/// unless `status` is cudaSuccess.
void checkCUDA(cudaError_t status, const char *expr);
#define GNNRT_CUDA_CHECK(expr) ::gnnrt::cuda::checkCUDA((expr), #expr)

/// The edges reducing into vertex v, in segment order: positions
/// offsets[v] .. offsets[v+1], edge ids edges[j] (the position itself where
/// `edges` is null: the CSC).
struct Segments {
  const int64_t *offsets;
  const int32_t *edges;
};

/// out[e, :] = in[src[e], :] (side 0) or in[v, :] for the edges e of v's
/// in-segment (side 1, `dstOffsets`).
void scatter(cudaStream_t stream, int64_t V, int64_t E, int64_t side,
             const int64_t *dstOffsets, const int32_t *src, const float *in,
             float *out, int64_t width);

/// out[v, :] = sum (acc 0), mean (1), max (2) or min (3) of in[edge, :] over
/// v's segment; 0 for an empty one. For max and min, `arg` (may be null) gets
/// the winning edge (ties keep the earlier position), -1 for an empty
/// segment.
void gather(cudaStream_t stream, int64_t V, Segments seg, int64_t acc,
            const float *in, float *out, int32_t *arg, int64_t width);

/// gradEdges[e, :] = gradOut[v, :] where arg[v, :] == e, else 0, for the
/// edges e of each segment.
void gatherArgBackward(cudaStream_t stream, int64_t V, Segments seg,
                       const float *gradOut, const int32_t *arg,
                       float *gradEdges, int64_t width);

/// The long rows of one side's segments as splitLongRows (LongRows.h) chose
/// them, in GPU memory: rows of more than pieceEdges positions are added up
/// in pieces of pieceEdges (none when numRows is 0).
using LongRows = LongRowTable;

/// Rows [begin, end) of out: out[v, :] = scale * sum over v's positions j of
/// w[edge(j)] * in[other[j], :] (w = 1 where null; scale = 1/|segment| with
/// `mean`, else 1). A warp per row, in segment order; the long rows of
/// `split` a warp per piece into `partial` (numPieces x width floats), the
/// pieces then added in order.
void spmmRows(cudaStream_t stream, int64_t begin, int64_t end, Segments seg,
              const LongRows &split, const int32_t *other, const float *w,
              const float *in, float *out, int64_t width, bool mean,
              float *partial);

/// The number of partial sums sumRows uses for `rows` rows (its scratch is
/// that many rows of `width` floats).
int64_t sumRowsPartials(int64_t rows);
/// out[j] (+)= sum over the rows of in[rows, width], in a fixed order:
/// sumRowsPartials(rows) contiguous blocks of rows, each summed in row order
/// into `partial`, then the partials in block order.
void sumRows(cudaStream_t stream, int64_t rows, int64_t width, const float *in,
             float *out, bool accumulate, float *partial);

/// The softmax cross entropy of rows [begin, end) of logits[V, classes]
/// against labels, counted where mask[v] and label >= 0: rowLoss[v - begin]
/// gets the row's loss (0 elsewhere), grad (may be null) the row's gradient
/// with `inv` = 1 / count (0 rows elsewhere). A label >= classes is written to
/// `*badLabel` (which the caller zeroes and reads back).
void softmaxCrossEntropy(cudaStream_t stream, int64_t begin, int64_t end,
                         const float *logits, float *grad, int64_t classes,
                         const int64_t *labels, const uint8_t *mask, double inv,
                         double *rowLoss, int64_t *badLabel);

/// The number of partial sums sumDoubles uses for `n` values.
int64_t sumDoublesPartials(int64_t n);
/// *out = the sum of values[0 .. n) in a fixed order (blocks, then a tree in
/// each block, then the blocks' sums in order); `partial` holds
/// sumDoublesPartials(n) doubles.
void sumDoubles(cudaStream_t stream, const double *values, int64_t n,
                double *partial, double *out);

/// y[i] = draw(key, i) >= threshold ? x[i] * scale : 0 (Random.h).
void dropout(cudaStream_t stream, int64_t n, uint64_t key, uint32_t threshold,
             float scale, const float *x, float *y);

/// The optimizer steps of Device::optimizerStep, element-wise in double.
void sgdStep(cudaStream_t stream, int64_t n, double lr, double weightDecay,
             double momentum, bool first, float *param, const float *grad,
             float *m);
void adamStep(cudaStream_t stream, int64_t n, double lr, double weightDecay,
              double beta1, double beta2, double eps, double bc1, double bc2,
              float *param, const float *grad, float *m, float *v);

/// counts[t] (t < numTypes) = the rows of type t; counts[numTypes] = the rows
/// whose type is outside [0, numTypes). `counts` is zeroed first.
void countTypes(cudaStream_t stream, const int32_t *types, int64_t rows,
                int64_t numTypes, int64_t *counts);
/// order = the rows 0 .. rows-1 sorted by type, stably (ascending rows within
/// a type; a radix sort of the types with the rows as values). `iota` and
/// `keys` are scratch of `rows` int32 each, `temp` of `tempBytes` >=
/// sortByTypeTempBytes(rows) bytes.
size_t sortByTypeTempBytes(int64_t rows);
void sortByType(cudaStream_t stream, const int32_t *types, int64_t rows,
                int64_t numTypes, int32_t *iota, int32_t *keys, int32_t *order,
                void *temp, size_t tempBytes);
/// dst[i, :] = src[rows[i], :] (gatherRows) or dst[rows[i], :] = src[i, :]
/// (scatterRows) for i < n.
void gatherRows(cudaStream_t stream, const float *src, float *dst,
                const int32_t *rows, int64_t n, int64_t width);
void scatterRows(cudaStream_t stream, const float *src, float *dst,
                 const int32_t *rows, int64_t n, int64_t width);

/// c[i] = beta * c[i] (0 where beta is 0) for i < n.
void scale(cudaStream_t stream, float *c, int64_t n, float beta);

} // namespace gnnrt::cuda

#endif // GNNRT_CUDA_KERNELS_H
