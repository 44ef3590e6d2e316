//===- Kernels.cu - the CUDA device's own kernels -------------------------===//
//
// Aggregations give each output row to one warp, its lanes over the columns:
// the row's edges are reduced in segment order with no atomics, so results
// do not depend on the schedule and match the CPU device's order (sums of
// unit-weight rows bit for bit). Reductions over rows (sums, the loss) run in
// a fixed block order for the same reason. The dropout masks are the CPU
// device's counter-based draws (Random.h).
//
//===----------------------------------------------------------------------===//

#include "CUDA/Kernels.h"
#include "Random.h"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cmath>

namespace gnnrt::cuda {

namespace {

constexpr int kWarp = 32;
constexpr int kBlock = 256;
constexpr int kWarpsPerBlock = kBlock / kWarp;

/// Blocks of kBlock threads for one warp per item (at least one block).
unsigned warpBlocks(int64_t items) {
  return static_cast<unsigned>(
      std::max<int64_t>(1, (items + kWarpsPerBlock - 1) / kWarpsPerBlock));
}

/// Blocks of kBlock threads for a grid-stride loop over `n` items, capped so
/// that the grid stays within limits (each thread then takes several).
unsigned strideBlocks(int64_t n) {
  return static_cast<unsigned>(
      std::clamp<int64_t>((n + kBlock - 1) / kBlock, 1, int64_t(1) << 20));
}

void checkLaunch(const char *kernel) { checkCUDA(cudaGetLastError(), kernel); }

/// The warp's item (blockIdx.x * warps per block + warp) and lane.
__device__ inline int64_t warpItem() {
  return (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
}
__device__ inline int lane() { return threadIdx.x & (kWarp - 1); }

__device__ inline int64_t edgeAt(const Segments &seg, int64_t j) {
  return seg.edges ? seg.edges[j] : j;
}

//===----------------------------------------------------------------------===//
// Scatter and gathers
//===----------------------------------------------------------------------===//

/// One warp per edge: out[e, :] = in[src[e], :].
__global__ void scatterBySourceKernel(int64_t E, const int32_t *src,
                                      const float *in, float *out,
                                      int64_t width) {
  const int64_t e = warpItem();
  if (e >= E)
    return;
  const float *row = in + static_cast<int64_t>(src[e]) * width;
  float *o = out + e * width;
  for (int64_t i = lane(); i < width; i += kWarp)
    o[i] = row[i];
}

/// One warp per destination v: its row to each of its in-edges.
__global__ void scatterByDestinationKernel(int64_t V, const int64_t *offsets,
                                           const float *in, float *out,
                                           int64_t width) {
  const int64_t v = warpItem();
  if (v >= V)
    return;
  const float *row = in + v * width;
  for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e)
    for (int64_t i = lane(); i < width; i += kWarp)
      out[e * width + i] = row[i];
}

/// One warp per output row; each lane reduces its columns over the segment
/// in order (strict comparisons for max/min: ties keep the earlier edge).
__global__ void gatherKernel(int64_t V, Segments seg, int acc, const float *in,
                             float *out, int32_t *arg, int64_t width) {
  const int64_t v = warpItem();
  if (v >= V)
    return;
  const int64_t begin = seg.offsets[v], end = seg.offsets[v + 1];
  float *o = out + v * width;
  int32_t *a = arg ? arg + v * width : nullptr;
  for (int64_t i = lane(); i < width; i += kWarp) {
    if (begin == end) {
      o[i] = 0.0f;
      if (a)
        a[i] = -1;
      continue;
    }
    if (acc < 2) {
      float s = 0.0f;
      for (int64_t j = begin; j < end; ++j)
        s += in[edgeAt(seg, j) * width + i];
      if (acc == 1)
        s *= 1.0f / static_cast<float>(end - begin);
      o[i] = s;
      continue;
    }
    int64_t best = edgeAt(seg, begin);
    float m = in[best * width + i];
    for (int64_t j = begin + 1; j < end; ++j) {
      const int64_t e = edgeAt(seg, j);
      const float x = in[e * width + i];
      if (acc == 2 ? x > m : x < m) {
        m = x;
        best = e;
      }
    }
    o[i] = m;
    if (a)
      a[i] = static_cast<int32_t>(best);
  }
}

__global__ void gatherArgBackwardKernel(int64_t V, Segments seg, const float *g,
                                        const int32_t *arg, float *ge,
                                        int64_t width) {
  const int64_t v = warpItem();
  if (v >= V)
    return;
  for (int64_t j = seg.offsets[v]; j < seg.offsets[v + 1]; ++j) {
    const int64_t e = edgeAt(seg, j);
    for (int64_t i = lane(); i < width; i += kWarp)
      ge[e * width + i] = arg[v * width + i] == e ? g[v * width + i] : 0.0f;
  }
}

//===----------------------------------------------------------------------===//
// SpMM
//===----------------------------------------------------------------------===//

/// Adds w[edge(j)] * in[other[j], col + lane + 32 q] over the positions
/// [first, last), in order, to acc[q] (the columns where live[q]). The lanes
/// load the next 32 positions' input rows and weights at once and pass them
/// round with shuffles, so the row reads of several edges are in flight
/// together instead of each waiting for its index load. Reads of a row are
/// coalesced (the lanes take consecutive columns).
template <bool Weighted, int ColumnsPerLane>
__device__ inline void
accumulateEdges(int64_t first, int64_t last, const Segments &seg,
                const int32_t *other, const float *w, const float *in,
                int64_t width, int64_t col, const bool *live, float *acc) {
  const int l = lane();
  for (int64_t base = first; base < last; base += kWarp) {
    const int64_t j = base + l;
    int32_t mine = 0;
    float weight = 0.0f;
    if (j < last) {
      mine = other[j];
      weight = Weighted ? w[edgeAt(seg, j)] : 1.0f;
    }
    const int n = last - base < kWarp ? static_cast<int>(last - base) : kWarp;
#pragma unroll 4
    for (int t = 0; t < n; ++t) {
      const int64_t row = __shfl_sync(0xffffffffu, mine, t);
      const float c = Weighted ? __shfl_sync(0xffffffffu, weight, t) : 1.0f;
      const float *x = in + row * width + col + l;
#pragma unroll
      for (int q = 0; q < ColumnsPerLane; ++q)
        if (live[q])
          acc[q] += c * x[q * kWarp];
    }
  }
}

/// The warp's output row `o`: scale times the sum over the positions
/// [first, last), ColumnsPerLane x 32 columns per pass.
template <bool Weighted, int ColumnsPerLane>
__device__ inline void
spmmRow(int64_t first, int64_t last, const Segments &seg, const int32_t *other,
        const float *w, const float *in, int64_t width, float scale, float *o) {
  const int l = lane();
  constexpr int64_t kPass = int64_t(kWarp) * ColumnsPerLane;
  for (int64_t col = 0; col < width; col += kPass) {
    float acc[ColumnsPerLane] = {};
    bool live[ColumnsPerLane];
#pragma unroll
    for (int q = 0; q < ColumnsPerLane; ++q)
      live[q] = col + l + q * kWarp < width;
    accumulateEdges<Weighted, ColumnsPerLane>(first, last, seg, other, w, in,
                                              width, col, live, acc);
#pragma unroll
    for (int q = 0; q < ColumnsPerLane; ++q)
      if (live[q])
        o[col + l + q * kWarp] = acc[q] * scale;
  }
}

/// One warp per output row of at most split.pieceEdges positions (the long
/// ones are spmmPieceKernel's).
template <bool Weighted, int ColumnsPerLane>
__global__ void spmmKernel(int64_t begin, int64_t end, Segments seg,
                           LongRows split, const int32_t *other, const float *w,
                           const float *in, float *out, int64_t width,
                           bool mean) {
  const int64_t v = begin + warpItem();
  if (v >= end)
    return;
  const int64_t first = seg.offsets[v], last = seg.offsets[v + 1];
  if (split.numRows > 0 && last - first > split.pieceEdges)
    return;
  const float scale =
      mean && last > first ? 1.0f / static_cast<float>(last - first) : 1.0f;
  spmmRow<Weighted, ColumnsPerLane>(first, last, seg, other, w, in, width,
                                    scale, out + v * width);
}

/// One warp per piece of a long row in [begin, end): its partial row.
template <bool Weighted, int ColumnsPerLane>
__global__ void spmmPieceKernel(int64_t begin, int64_t end, Segments seg,
                                LongRows split, const int32_t *other,
                                const float *w, const float *in, float *partial,
                                int64_t width) {
  const int64_t p = warpItem();
  if (p >= split.numPieces)
    return;
  const int32_t index = split.pieceRow[p];
  const int64_t v = split.rows[index];
  if (v < begin || v >= end)
    return;
  const int64_t first =
      seg.offsets[v] + (p - split.pieceOffsets[index]) * split.pieceEdges;
  const int64_t last = first + split.pieceEdges < seg.offsets[v + 1]
                           ? first + split.pieceEdges
                           : seg.offsets[v + 1];
  spmmRow<Weighted, ColumnsPerLane>(first, last, seg, other, w, in, width, 1.0f,
                                    partial + p * width);
}

/// One warp per long row in [begin, end): its pieces' partial rows added in
/// piece order.
__global__ void spmmCombineKernel(int64_t begin, int64_t end, Segments seg,
                                  LongRows split, const float *partial,
                                  float *out, int64_t width, bool mean) {
  const int64_t i = warpItem();
  if (i >= split.numRows)
    return;
  const int64_t v = split.rows[i];
  if (v < begin || v >= end)
    return;
  const int64_t degree = seg.offsets[v + 1] - seg.offsets[v];
  const float scale = mean ? 1.0f / static_cast<float>(degree) : 1.0f;
  const int64_t p0 = split.pieceOffsets[i], p1 = split.pieceOffsets[i + 1];
  for (int64_t c = lane(); c < width; c += kWarp) {
    float s = 0.0f;
    for (int64_t p = p0; p < p1; ++p)
      s += partial[p * width + c];
    out[v * width + c] = s * scale;
  }
}

/// Launches the SpMM's kernels with the fewest columns per lane (up to 4)
/// that cover `width` in one pass.
template <bool Weighted, int ColumnsPerLane>
void launchSpmm(cudaStream_t stream, int64_t begin, int64_t end, Segments seg,
                const LongRows &split, const int32_t *other, const float *w,
                const float *in, float *out, int64_t width, bool mean,
                float *partial) {
  spmmKernel<Weighted, ColumnsPerLane>
      <<<warpBlocks(end - begin), kBlock, 0, stream>>>(
          begin, end, seg, split, other, w, in, out, width, mean);
  checkLaunch("spmm kernel");
  if (split.numRows == 0)
    return;
  spmmPieceKernel<Weighted, ColumnsPerLane>
      <<<warpBlocks(split.numPieces), kBlock, 0, stream>>>(
          begin, end, seg, split, other, w, in, partial, width);
  checkLaunch("spmm piece kernel");
  spmmCombineKernel<<<warpBlocks(split.numRows), kBlock, 0, stream>>>(
      begin, end, seg, split, partial, out, width, mean);
  checkLaunch("spmm combine kernel");
}

template <bool Weighted>
void launchSpmm(cudaStream_t stream, int64_t begin, int64_t end, Segments seg,
                const LongRows &split, const int32_t *other, const float *w,
                const float *in, float *out, int64_t width, bool mean,
                float *partial) {
  if (width <= kWarp)
    launchSpmm<Weighted, 1>(stream, begin, end, seg, split, other, w, in, out,
                            width, mean, partial);
  else if (width <= 2 * kWarp)
    launchSpmm<Weighted, 2>(stream, begin, end, seg, split, other, w, in, out,
                            width, mean, partial);
  else
    launchSpmm<Weighted, 4>(stream, begin, end, seg, split, other, w, in, out,
                            width, mean, partial);
}

//===----------------------------------------------------------------------===//
// Reductions over rows
//===----------------------------------------------------------------------===//

constexpr int64_t kSumRowsBlocks = 1024;

/// Block b sums its contiguous share of the rows, a thread per column.
__global__ void sumRowsPartialKernel(int64_t rows, int64_t width,
                                     int64_t blocks, const float *in,
                                     float *partial) {
  const int64_t b = blockIdx.x;
  const int64_t r0 = rows * b / blocks, r1 = rows * (b + 1) / blocks;
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
    float s = 0.0f;
    for (int64_t r = r0; r < r1; ++r)
      s += in[r * width + j];
    partial[b * width + j] = s;
  }
}

__global__ void sumRowsFinalKernel(int64_t width, int64_t blocks,
                                   const float *partial, float *out,
                                   bool accumulate) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= width)
    return;
  float s = accumulate ? out[j] : 0.0f;
  for (int64_t b = 0; b < blocks; ++b)
    s += partial[b * width + j];
  out[j] = s;
}

/// One thread per row: the loss with one f32 exponential per logit (kept in
/// the gradient row) summed in double, as the CPU device computes it.
__global__ void
softmaxCrossEntropyKernel(int64_t begin, int64_t end, const float *z, float *gz,
                          int64_t classes, const int64_t *labels,
                          const uint8_t *mask, double inv, double *rowLoss,
                          unsigned long long *badLabel) {
  const int64_t v =
      begin + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= end)
    return;
  const float *row = z + v * classes;
  float *grow = gz ? gz + v * classes : nullptr;
  const int64_t y = labels[v];
  double loss = 0.0;
  if (!mask[v] || y < 0) {
    if (grow)
      for (int64_t c = 0; c < classes; ++c)
        grow[c] = 0.0f;
  } else if (y >= classes) {
    atomicMax(badLabel, static_cast<unsigned long long>(y));
  } else {
    float mx = row[0];
    for (int64_t c = 1; c < classes; ++c)
      mx = fmaxf(mx, row[c]);
    double sum = 0.0;
    for (int64_t c = 0; c < classes; ++c) {
      const float e = expf(row[c] - mx);
      if (grow)
        grow[c] = e;
      sum += e;
    }
    loss = mx + log(sum) - row[y];
    if (grow) {
      const float scale = static_cast<float>(inv / sum);
      for (int64_t c = 0; c < classes; ++c)
        grow[c] *= scale;
      grow[y] -= static_cast<float>(inv);
    }
  }
  rowLoss[v - begin] = loss;
}

/// Block b: a tree over its contiguous share of the values.
__global__ void sumDoublesKernel(const double *values, int64_t n,
                                 int64_t blocks, double *partial) {
  __shared__ double tree[kBlock];
  const int64_t b = blockIdx.x;
  const int64_t i0 = n * b / blocks, i1 = n * (b + 1) / blocks;
  double s = 0.0;
  for (int64_t i = i0 + threadIdx.x; i < i1; i += blockDim.x)
    s += values[i];
  tree[threadIdx.x] = s;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half)
      tree[threadIdx.x] += tree[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    partial[b] = tree[0];
}

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

__global__ void dropoutKernel(int64_t n, uint64_t key, uint32_t threshold,
                              float scale, const float *x, float *y) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = dropoutDraw(key, static_cast<uint64_t>(i)) >= threshold
               ? x[i] * scale
               : 0.0f;
}

__global__ void sgdKernel(int64_t n, double lr, double weightDecay,
                          double momentum, bool first, float *param,
                          const float *grad, float *m) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double gi = grad[i] + weightDecay * param[i];
    if (momentum != 0.0) {
      const double b = first ? gi : momentum * m[i] + gi;
      m[i] = static_cast<float>(b);
      gi = b;
    }
    param[i] = static_cast<float>(param[i] - lr * gi);
  }
}

__global__ void adamKernel(int64_t n, double lr, double weightDecay,
                           double beta1, double beta2, double eps, double bc1,
                           double bc2, float *param, const float *grad,
                           float *m, float *v) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double gi = grad[i] + weightDecay * param[i];
    const double mi = beta1 * m[i] + (1.0 - beta1) * gi;
    const double vi = beta2 * v[i] + (1.0 - beta2) * gi * gi;
    m[i] = static_cast<float>(mi);
    v[i] = static_cast<float>(vi);
    const double denom = sqrt(vi) / sqrt(bc2) + eps;
    param[i] = static_cast<float>(param[i] - (lr / bc1) * mi / denom);
  }
}

__global__ void scaleKernel(float *c, int64_t n, float beta) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    c[i] = beta == 0.0f ? 0.0f : beta * c[i];
}

//===----------------------------------------------------------------------===//
// Typed GEMMs: rows grouped by type
//===----------------------------------------------------------------------===//

__global__ void countTypesKernel(const int32_t *types, int64_t rows,
                                 int64_t numTypes, unsigned long long *counts) {
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       r < rows; r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int32_t t = types[r];
    atomicAdd(&counts[t >= 0 && t < numTypes ? t : numTypes], 1ULL);
  }
}

/// iota[r] = r: the values the radix sort orders by type.
__global__ void iotaKernel(int64_t rows, int32_t *iota) {
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       r < rows; r += static_cast<int64_t>(gridDim.x) * blockDim.x)
    iota[r] = static_cast<int32_t>(r);
}

__global__ void moveRowsKernel(const float *src, float *dst,
                               const int32_t *rows, int64_t n, int64_t width,
                               bool gather) {
  const int64_t i = warpItem();
  if (i >= n)
    return;
  const int64_t r = rows[i];
  const float *s = src + (gather ? r : i) * width;
  float *d = dst + (gather ? i : r) * width;
  for (int64_t c = lane(); c < width; c += kWarp)
    d[c] = s[c];
}

/// The number of bits the radix sort looks at for types below `numTypes`.
int typeBits(int64_t numTypes) {
  int bits = 1;
  while (bits < 31 && (int64_t(1) << bits) < numTypes)
    ++bits;
  return bits;
}

} // namespace

//===----------------------------------------------------------------------===//
// Launchers
//===----------------------------------------------------------------------===//

void scatter(cudaStream_t stream, int64_t V, int64_t E, int64_t side,
             const int64_t *dstOffsets, const int32_t *src, const float *in,
             float *out, int64_t width) {
  if (width == 0)
    return;
  if (side == 1) {
    if (V == 0)
      return;
    scatterByDestinationKernel<<<warpBlocks(V), kBlock, 0, stream>>>(
        V, dstOffsets, in, out, width);
  } else {
    if (E == 0)
      return;
    scatterBySourceKernel<<<warpBlocks(E), kBlock, 0, stream>>>(E, src, in, out,
                                                                width);
  }
  checkLaunch("scatter kernel");
}

void gather(cudaStream_t stream, int64_t V, Segments seg, int64_t acc,
            const float *in, float *out, int32_t *arg, int64_t width) {
  if (V == 0 || width == 0)
    return;
  gatherKernel<<<warpBlocks(V), kBlock, 0, stream>>>(
      V, seg, static_cast<int>(acc), in, out, arg, width);
  checkLaunch("gather kernel");
}

void gatherArgBackward(cudaStream_t stream, int64_t V, Segments seg,
                       const float *gradOut, const int32_t *arg,
                       float *gradEdges, int64_t width) {
  if (V == 0 || width == 0)
    return;
  gatherArgBackwardKernel<<<warpBlocks(V), kBlock, 0, stream>>>(
      V, seg, gradOut, arg, gradEdges, width);
  checkLaunch("gather arg backward kernel");
}

void spmmRows(cudaStream_t stream, int64_t begin, int64_t end, Segments seg,
              const LongRows &split, const int32_t *other, const float *w,
              const float *in, float *out, int64_t width, bool mean,
              float *partial) {
  if (end <= begin || width == 0)
    return;
  if (w)
    launchSpmm<true>(stream, begin, end, seg, split, other, w, in, out, width,
                     mean, partial);
  else
    launchSpmm<false>(stream, begin, end, seg, split, other, w, in, out, width,
                      mean, partial);
}

int64_t sumRowsPartials(int64_t rows) {
  return std::clamp<int64_t>(rows, 1, kSumRowsBlocks);
}

void sumRows(cudaStream_t stream, int64_t rows, int64_t width, const float *in,
             float *out, bool accumulate, float *partial) {
  if (width == 0)
    return;
  const int64_t blocks = sumRowsPartials(rows);
  const int threads = static_cast<int>(std::min<int64_t>(width, kBlock));
  sumRowsPartialKernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      rows, width, blocks, in, partial);
  checkLaunch("sum rows kernel");
  sumRowsFinalKernel<<<static_cast<unsigned>((width + kBlock - 1) / kBlock),
                       kBlock, 0, stream>>>(width, blocks, partial, out,
                                            accumulate);
  checkLaunch("sum rows final kernel");
}

void softmaxCrossEntropy(cudaStream_t stream, int64_t begin, int64_t end,
                         const float *logits, float *grad, int64_t classes,
                         const int64_t *labels, const uint8_t *mask, double inv,
                         double *rowLoss, int64_t *badLabel) {
  if (end <= begin)
    return;
  static_assert(sizeof(unsigned long long) == sizeof(int64_t));
  softmaxCrossEntropyKernel<<<
      static_cast<unsigned>((end - begin + kBlock - 1) / kBlock), kBlock, 0,
      stream>>>(begin, end, logits, grad, classes, labels, mask, inv, rowLoss,
                reinterpret_cast<unsigned long long *>(badLabel));
  checkLaunch("softmax cross entropy kernel");
}

int64_t sumDoublesPartials(int64_t n) {
  return std::clamp<int64_t>((n + kBlock - 1) / kBlock, 1, 1024);
}

void sumDoubles(cudaStream_t stream, const double *values, int64_t n,
                double *partial, double *out) {
  const int64_t blocks = sumDoublesPartials(n);
  sumDoublesKernel<<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(
      values, n, blocks, partial);
  checkLaunch("sum kernel");
  sumDoublesKernel<<<1, kBlock, 0, stream>>>(partial, blocks, 1, out);
  checkLaunch("sum final kernel");
}

void dropout(cudaStream_t stream, int64_t n, uint64_t key, uint32_t threshold,
             float scale, const float *x, float *y) {
  if (n == 0)
    return;
  dropoutKernel<<<strideBlocks(n), kBlock, 0, stream>>>(n, key, threshold,
                                                        scale, x, y);
  checkLaunch("dropout kernel");
}

void sgdStep(cudaStream_t stream, int64_t n, double lr, double weightDecay,
             double momentum, bool first, float *param, const float *grad,
             float *m) {
  if (n == 0)
    return;
  sgdKernel<<<strideBlocks(n), kBlock, 0, stream>>>(
      n, lr, weightDecay, momentum, first, param, grad, m);
  checkLaunch("sgd kernel");
}

void adamStep(cudaStream_t stream, int64_t n, double lr, double weightDecay,
              double beta1, double beta2, double eps, double bc1, double bc2,
              float *param, const float *grad, float *m, float *v) {
  if (n == 0)
    return;
  adamKernel<<<strideBlocks(n), kBlock, 0, stream>>>(
      n, lr, weightDecay, beta1, beta2, eps, bc1, bc2, param, grad, m, v);
  checkLaunch("adam kernel");
}

void scale(cudaStream_t stream, float *c, int64_t n, float beta) {
  if (n == 0)
    return;
  scaleKernel<<<strideBlocks(n), kBlock, 0, stream>>>(c, n, beta);
  checkLaunch("scale kernel");
}

void countTypes(cudaStream_t stream, const int32_t *types, int64_t rows,
                int64_t numTypes, int64_t *counts) {
  GNNRT_CUDA_CHECK(cudaMemsetAsync(
      counts, 0, static_cast<size_t>(numTypes + 1) * sizeof(int64_t), stream));
  if (rows == 0)
    return;
  countTypesKernel<<<strideBlocks(rows), kBlock, 0, stream>>>(
      types, rows, numTypes, reinterpret_cast<unsigned long long *>(counts));
  checkLaunch("count types kernel");
}

size_t sortByTypeTempBytes(int64_t rows) {
  size_t bytes = 0;
  GNNRT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, bytes, static_cast<const int32_t *>(nullptr),
      static_cast<int32_t *>(nullptr), static_cast<const int32_t *>(nullptr),
      static_cast<int32_t *>(nullptr), rows));
  return bytes;
}

void sortByType(cudaStream_t stream, const int32_t *types, int64_t rows,
                int64_t numTypes, int32_t *iota, int32_t *keys, int32_t *order,
                void *temp, size_t tempBytes) {
  if (rows == 0)
    return;
  iotaKernel<<<strideBlocks(rows), kBlock, 0, stream>>>(rows, iota);
  checkLaunch("iota kernel");
  GNNRT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, tempBytes, types, keys,
                                                   iota, order, rows, 0,
                                                   typeBits(numTypes), stream));
}

void gatherRows(cudaStream_t stream, const float *src, float *dst,
                const int32_t *rows, int64_t n, int64_t width) {
  if (n == 0 || width == 0)
    return;
  moveRowsKernel<<<warpBlocks(n), kBlock, 0, stream>>>(src, dst, rows, n, width,
                                                       true);
  checkLaunch("gather rows kernel");
}

void scatterRows(cudaStream_t stream, const float *src, float *dst,
                 const int32_t *rows, int64_t n, int64_t width) {
  if (n == 0 || width == 0)
    return;
  moveRowsKernel<<<warpBlocks(n), kBlock, 0, stream>>>(src, dst, rows, n, width,
                                                       false);
  checkLaunch("scatter rows kernel");
}

} // namespace gnnrt::cuda
