//===- CUDADevice.cpp - the CUDA device of gnnrt --------------------------===//
//
// Plain C++ against the CUDA runtime API and cuBLAS. Device-tier memory is
// cudaMalloc'd (zeroed with cudaMemset), host-tier memory is pinned
// (cudaMallocHost), copies are cudaMemcpy in the direction the tiers name and
// fills are cudaMemset. GPU memory is not host memory: the host reads it
// through staging copies (Device::hostView). The graph's arrays and the edge
// data are copied to GPU memory by bindGraph and bindEdgeData.
//
// The compute methods check their operands as the CPU device does and run
// the device's own kernels (Kernels.cu: gathers, scatters and SpMMs a warp
// per output row without atomics, sums of rows, the loss, dropout with the
// CPU device's masks, the optimizer steps) or cuBLAS (GEMMs; the typed GEMMs
// as one GEMM per type over rows grouped by a radix sort). Everything runs in
// order on the default stream, so each call is ordered after the ones
// before; the methods that return a value (the loss) or need the host's
// decision (the typed GEMMs' group sizes) wait for it. Scratch memory is one
// grow-only device-tier block, counted in `live` like every allocation.
//
// launch() (gnnrtParallelFor: kernels compiled for the CPU) is refused: a
// program compiled with --target=cuda launches its kernels through the
// mgpu* entry points instead (GPULaunch.cpp).
//
//===----------------------------------------------------------------------===//

#include "CUDA/CUDADevice.h"
#include "CUDA/Kernels.h"
#include "Context.h"
#include "Device.h"
#include "LongRows.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

using namespace gnnrt;

void gnnrt::cuda::checkCUDA(cudaError_t status, const char *expr) {
  if (status != cudaSuccess)
    fatal(std::string("'") + expr + "' failed with '" +
          cudaGetErrorName(status) + "': " + cudaGetErrorString(status));
}

/// Stops the run with "'<expr>' failed with '<status name>': <description>"
/// unless `expr` returns CUBLAS_STATUS_SUCCESS.
#define GNNRT_CUBLAS_CHECK(expr) checkCUBLAS((expr), #expr)

namespace {

void checkCUBLAS(cublasStatus_t status, const char *expr) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fatal(std::string("'") + expr + "' failed with '" +
          cublasGetStatusName(status) + "': " + cublasGetStatusString(status));
}

inline float *ptr(gnnrtMemRefF32 *m) { return m->aligned + m->offset; }
inline int32_t *ptr(gnnrtMemRefI32 *m) { return m->aligned + m->offset; }

cudaMemcpyKind kindOf(MemoryTier dstTier, MemoryTier srcTier) {
  const bool toDevice = dstTier == MemoryTier::Device;
  if (srcTier == MemoryTier::Device)
    return toDevice ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost;
  return toDevice ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost;
}

class CUDADevice final : public Device {
public:
  explicit CUDADevice(int ordinal) {
    GNNRT_CUDA_CHECK(cudaSetDevice(ordinal));
    GNNRT_CUBLAS_CHECK(cublasCreate(&blas));
    GNNRT_CUBLAS_CHECK(cublasSetStream(blas, kStream));
  }
  ~CUDADevice() override {
    releaseGraph();
    releaseEdgeData();
    for (void *p : lossMemory)
      free(p);
    if (scratchBlock)
      free(scratchBlock);
    cublasDestroy(blas);
  }

  const char *name() const override { return "cuda"; }

  void *allocate(int64_t bytes, MemoryTier tier) override {
    if (bytes < 0)
      fatal("cuda device: allocation of " + std::to_string(bytes) + " bytes");
    // cudaMalloc(0) gives no pointer: allocate at least one byte (both
    // allocators align to 256 bytes at least).
    const size_t size = static_cast<size_t>(std::max<int64_t>(bytes, 1));
    void *p = nullptr;
    if (tier == MemoryTier::Device) {
      checkCapacity(bytes); // before the GPU itself runs out
      GNNRT_CUDA_CHECK(cudaMalloc(&p, size));
      GNNRT_CUDA_CHECK(cudaMemset(p, 0, size));
    } else {
      GNNRT_CUDA_CHECK(cudaMallocHost(&p, size));
      std::memset(p, 0, size);
    }
    recordAllocation(p, bytes, tier);
    return p;
  }

  void free(void *ptr) override {
    if (recordFree(ptr) == MemoryTier::Device)
      GNNRT_CUDA_CHECK(cudaFree(ptr));
    else
      GNNRT_CUDA_CHECK(cudaFreeHost(ptr));
  }

  void copy(void *dst, MemoryTier dstTier, const void *src, MemoryTier srcTier,
            int64_t bytes) override {
    if (bytes < 0)
      fatal("cuda device: copy of " + std::to_string(bytes) + " bytes");
    if (bytes > 0 && dst != src)
      GNNRT_CUDA_CHECK(cudaMemcpy(dst, src, static_cast<size_t>(bytes),
                                  kindOf(dstTier, srcTier)));
    recordCopy(dstTier, srcTier, bytes);
  }

  void fill(void *dst, uint8_t value, int64_t bytes) override {
    if (bytes < 0)
      fatal("cuda device: fill of " + std::to_string(bytes) + " bytes");
    if (bytes > 0)
      GNNRT_CUDA_CHECK(cudaMemset(dst, value, static_cast<size_t>(bytes)));
  }

  bool deviceMemoryIsHostMemory() const override { return false; }

  int64_t freeDeviceMemory() const override {
    size_t free = 0, total = 0;
    GNNRT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return static_cast<int64_t>(free);
  }

  void bindGraph(GraphArrays graph, int which) override {
    if (which != 0)
      fatal("the CUDA device holds one graph: feature partitioning's whole "
            "graph is not supported on it yet");
    checkGraph(graph);
    releaseGraph();
    boundGraph.numVertices = static_cast<int64_t>(graph.inDegree.size());
    boundGraph.numSources = static_cast<int64_t>(graph.srcOffsets.size()) - 1;
    boundGraph.numEdges = static_cast<int64_t>(graph.src.size());
    boundGraph.offsets[0] = upload(graph.srcOffsets, graphMemory);
    boundGraph.offsets[1] = upload(graph.dstOffsets, graphMemory);
    boundGraph.index[0] = upload(graph.src, graphMemory);
    // Arrays the program does not read are empty: not uploaded, null.
    auto uploadIndex = [&](const std::vector<int32_t> &a) -> const int32_t * {
      return a.empty() ? nullptr : upload(a, graphMemory);
    };
    boundGraph.index[1] = uploadIndex(graph.dst);
    boundGraph.index[2] = uploadIndex(graph.csrEdge);
    boundGraph.index[3] = uploadIndex(graph.csrDst);
    boundGraph.degree[0] = upload(graph.inDegree, graphMemory);
    boundGraph.degree[1] = upload(graph.outDegree, graphMemory);
    // The long rows, by side (0: the CSR's, 1: the CSC's): the SpMMs' and
    // the compiled fused gathers' (DeviceGraph::longRows).
    const int64_t minPiece = longRowMinPiece(256);
    for (int side : {0, 1}) {
      const LongRowSplit split = splitLongRows(
          side == 0 ? graph.srcOffsets : graph.dstOffsets, minPiece);
      cuda::LongRows &rows = longRows[side];
      rows.pieceEdges = split.pieceEdges;
      rows.numRows = static_cast<int64_t>(split.longRows.size());
      rows.numPieces = split.numPieces();
      if (rows.numRows > 0) {
        rows.rows = upload(split.longRows, graphMemory);
        rows.pieceOffsets = upload(split.pieceOffsets, graphMemory);
        rows.pieceRow = upload(split.pieceRow, graphMemory);
      }
      boundGraph.longRows[side] = rows;
    }
    graphs[0] = boundGraph;
  }

  void bindEdgeData(std::vector<EdgeInputArrays> inputs) override {
    releaseEdgeData();
    for (const EdgeInputArrays &in : inputs)
      boundEdgeData.push_back(
          {upload(in.f32, edgeMemory), static_cast<int64_t>(in.f32.size()),
           upload(in.i32, edgeMemory), static_cast<int64_t>(in.i32.size())});
  }

  void launch(gnnrtContext *, KernelFn, int64_t, int64_t) override {
    fatal("the CUDA device cannot run compiled kernels built for the CPU "
          "(gnnrtParallelFor): compile the model with gnn-compile "
          "--target=cuda");
  }
  void synchronize() override { GNNRT_CUDA_CHECK(cudaDeviceSynchronize()); }

  void scatter(gnnrtContext *, int64_t side, gnnrtMemRefF32 *in,
               gnnrtMemRefF32 *out, int64_t width) override {
    const int64_t V = graph().numVertices, E = graph().numEdges;
    needElements(in->sizes[0], V * width, "gnnrtScatter input");
    needElements(out->sizes[0], E * width, "gnnrtScatter output");
    cuda::scatter(kStream, V, E, side, graph().offsets[1], graph().index[0],
                  ptr(in), ptr(out), width);
  }
  void gather(gnnrtContext *, int64_t acc, int64_t side, gnnrtMemRefF32 *in,
              gnnrtMemRefF32 *out, gnnrtMemRefI32 *arg,
              int64_t width) override {
    const int64_t V = graph().numVertices, E = graph().numEdges;
    needElements(in->sizes[0], E * width, "gnnrtGather input");
    needElements(out->sizes[0], V * width, "gnnrtGather output");
    const bool extremum = acc == 2 || acc == 3;
    const bool withArg = extremum && arg && arg->sizes[0] > 0;
    if (withArg)
      needElements(arg->sizes[0], V * width, "gnnrtGather arg");
    cuda::gather(kStream, V, segmentsOf(side, "gnnrtGather"), acc, ptr(in), ptr(out),
                 withArg ? ptr(arg) : nullptr, width);
  }
  void gatherArgBackward(gnnrtContext *, int64_t side, gnnrtMemRefF32 *g,
                         gnnrtMemRefI32 *arg, gnnrtMemRefF32 *ge,
                         int64_t width) override {
    const int64_t V = graph().numVertices, E = graph().numEdges;
    needElements(g->sizes[0], V * width, "gnnrtGatherArgBackward gradient");
    needElements(arg->sizes[0], V * width, "gnnrtGatherArgBackward arg");
    needElements(ge->sizes[0], E * width, "gnnrtGatherArgBackward output");
    cuda::gatherArgBackward(kStream, V,
                            segmentsOf(side, "gnnrtGatherArgBackward"), ptr(g), ptr(arg),
                            ptr(ge), width);
  }
  void spmm(gnnrtContext *, int64_t side, int64_t mean, int64_t chunks,
            gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
            int64_t width) override {
    // The P x P chunk tiling keeps the CPU's input rows in cache; a warp per
    // output row reads its edges' rows from the GPU's L2 either way, so
    // the GPU computes the untiled product (equal up to rounding).
    if (chunks < 1)
      fatal("gnnrtSpmm: " + std::to_string(chunks) + " chunks");
    runSpmm("gnnrtSpmm", side, mean, weights, in, out, width, 0,
            graph().numVertices);
  }
  void spmmRows(gnnrtContext *, int64_t side, int64_t mean,
                gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in,
                gnnrtMemRefF32 *out, int64_t width, int64_t begin, int64_t end,
                int64_t inBegin, int64_t inEnd) override {
    // Tiles of the input come from row chunks under a memory budget, which
    // the CUDA target does not compile yet (gnn-compile refuses row chunks
    // and budget plans that are not all resident on the GPU).
    if (inBegin != 0 || inEnd != graph().numVertices)
      fatal("gnnrtSpmmRows: the CUDA device aggregates from all input rows "
            "only, not from rows [" +
            std::to_string(inBegin) + ", " + std::to_string(inEnd) + ")");
    runSpmm("gnnrtSpmmRows", side, mean, weights, in, out, width, begin, end);
  }
  void gemm(gnnrtContext *, int64_t transA, int64_t transB, int64_t m,
            int64_t n, int64_t k, float alpha, gnnrtMemRefF32 *a,
            gnnrtMemRefF32 *b, float beta, gnnrtMemRefF32 *c) override {
    if (m < 0 || n < 0 || k < 0 || m > INT32_MAX || n > INT32_MAX ||
        k > INT32_MAX)
      fatal("gnnrtGemm: dimensions " + std::to_string(m) + " x " +
            std::to_string(n) + " x " + std::to_string(k) +
            " outside cuBLAS's int range");
    needElements(a->sizes[0], m * k, "gnnrtGemm A");
    needElements(b->sizes[0], k * n, "gnnrtGemm B");
    needElements(c->sizes[0], m * n, "gnnrtGemm C");
    rowMajorGemm(transA, transB, m, n, k, alpha, ptr(a), transA ? m : k, ptr(b),
                 transB ? k : n, beta, ptr(c), n);
  }
  void sumRows(gnnrtContext *, int64_t rows, int64_t width, gnnrtMemRefF32 *in,
               gnnrtMemRefF32 *out, bool accumulate) override {
    needElements(in->sizes[0], rows * width, "gnnrtSumRows input");
    needElements(out->sizes[0], width, "gnnrtSumRows output");
    float *partial = static_cast<float *>(
        scratch({cuda::sumRowsPartials(rows) * width * 4})[0]);
    cuda::sumRows(kStream, rows, width, ptr(in), ptr(out), accumulate, partial);
  }
  void typedGemm(gnnrtContext *, int64_t rows, int64_t k, int64_t n,
                 int64_t numTypes, gnnrtMemRefF32 *x, gnnrtMemRefI32 *types,
                 gnnrtMemRefF32 *w, gnnrtMemRefF32 *out) override {
    needElements(x->sizes[0], rows * k, "gnnrtTypedGemm x");
    needElements(types->sizes[0], rows, "gnnrtTypedGemm types");
    needElements(w->sizes[0], numTypes * k * n, "gnnrtTypedGemm w");
    needElements(out->sizes[0], rows * n, "gnnrtTypedGemm out");
    const float *wt = ptr(w);
    perType(
        ptr(types), rows, numTypes, k, n,
        [&](int64_t tau, int64_t m, const int32_t *idx, float *px, float *py) {
          cuda::gatherRows(kStream, ptr(x), px, idx, m, k);
          rowMajorGemm(0, 0, m, n, k, 1.0f, px, k, wt + tau * k * n, n, 0.0f,
                       py, n);
          cuda::scatterRows(kStream, py, ptr(out), idx, m, n);
        });
  }
  void typedGemmTranspose(gnnrtContext *, int64_t rows, int64_t k, int64_t n,
                          int64_t numTypes, gnnrtMemRefF32 *g,
                          gnnrtMemRefI32 *types, gnnrtMemRefF32 *w,
                          gnnrtMemRefF32 *gx) override {
    needElements(g->sizes[0], rows * n, "gnnrtTypedGemmTranspose g");
    needElements(types->sizes[0], rows, "gnnrtTypedGemmTranspose types");
    needElements(w->sizes[0], numTypes * k * n, "gnnrtTypedGemmTranspose w");
    needElements(gx->sizes[0], rows * k, "gnnrtTypedGemmTranspose gx");
    const float *wt = ptr(w);
    perType(
        ptr(types), rows, numTypes, n, k,
        [&](int64_t tau, int64_t m, const int32_t *idx, float *pg, float *px) {
          cuda::gatherRows(kStream, ptr(g), pg, idx, m, n);
          rowMajorGemm(0, 1, m, k, n, 1.0f, pg, n, wt + tau * k * n, n, 0.0f,
                       px, k);
          cuda::scatterRows(kStream, px, ptr(gx), idx, m, k);
        });
  }
  void typedOuterSum(gnnrtContext *, int64_t rows, int64_t k, int64_t n,
                     int64_t numTypes, gnnrtMemRefF32 *x, gnnrtMemRefI32 *types,
                     gnnrtMemRefF32 *g, gnnrtMemRefF32 *gw) override {
    needElements(x->sizes[0], rows * k, "gnnrtTypedOuterSum x");
    needElements(types->sizes[0], rows, "gnnrtTypedOuterSum types");
    needElements(g->sizes[0], rows * n, "gnnrtTypedOuterSum g");
    needElements(gw->sizes[0], numTypes * k * n, "gnnrtTypedOuterSum gw");
    float *out = ptr(gw);
    // Types without rows keep a zero gradient.
    GNNRT_CUDA_CHECK(cudaMemsetAsync(
        out, 0, static_cast<size_t>(numTypes * k * n) * 4, kStream));
    perType(
        ptr(types), rows, numTypes, k, n,
        [&](int64_t tau, int64_t m, const int32_t *idx, float *px, float *pg) {
          cuda::gatherRows(kStream, ptr(x), px, idx, m, k);
          cuda::gatherRows(kStream, ptr(g), pg, idx, m, n);
          rowMajorGemm(1, 0, k, n, m, 1.0f, px, k, pg, n, 0.0f,
                       out + tau * k * n, n);
        });
  }
  float softmaxCrossEntropy(gnnrtContext *ctx, gnnrtMemRefF32 *logits,
                            gnnrtMemRefF32 *grad, int64_t classes,
                            int64_t split, int64_t begin,
                            int64_t end) override {
    const Dataset &ds = ctx->ds;
    const int64_t V = ds.numVertices;
    needElements(logits->sizes[0], V * classes,
                 "gnnrtSoftmaxCrossEntropy logits");
    const bool wantGrad = grad->sizes[0] > 0;
    if (wantGrad)
      needElements(grad->sizes[0], V * classes,
                   "gnnrtSoftmaxCrossEntropy gradient");
    if (split < 0 || split > 2)
      fatal("gnnrtSoftmaxCrossEntropy: unknown split");
    needRange(begin, end, V, "gnnrtSoftmaxCrossEntropy: rows");
    const LossData &data = lossData(ds);
    const int64_t count = data.count[split];
    const double inv = count ? 1.0 / static_cast<double>(count) : 0.0;
    const int64_t rows = end - begin;
    // The sum and the bad label side by side: one copy back.
    std::vector<void *> s = scratch({std::max<int64_t>(rows, 1) * 8,
                                     cuda::sumDoublesPartials(rows) * 8, 16});
    auto *rowLoss = static_cast<double *>(s[0]);
    auto *total = static_cast<double *>(s[2]);
    auto *badLabel = reinterpret_cast<int64_t *>(total + 1);
    GNNRT_CUDA_CHECK(cudaMemsetAsync(total, 0, 16, kStream));
    cuda::softmaxCrossEntropy(
        kStream, begin, end, ptr(logits), wantGrad ? ptr(grad) : nullptr,
        classes, data.labels, data.masks[split], inv, rowLoss, badLabel);
    if (rows > 0)
      cuda::sumDoubles(kStream, rowLoss, rows, static_cast<double *>(s[1]),
                       total);
    double result[2];
    GNNRT_CUDA_CHECK(
        cudaMemcpy(result, total, sizeof result, cudaMemcpyDeviceToHost));
    int64_t bad;
    std::memcpy(&bad, &result[1], sizeof bad);
    if (bad)
      fatal("label " + std::to_string(bad) + " >= number of logits " +
            std::to_string(classes));
    return static_cast<float>(result[0] * inv);
  }
  void dropout(gnnrtContext *ctx, int64_t op, double rate, gnnrtMemRefF32 *in,
               gnnrtMemRefF32 *out) override {
    const int64_t n = in->sizes[0];
    needElements(out->sizes[0], n, "gnnrtDropout output");
    if (ctx->dropoutOverride >= 0.0)
      rate = ctx->dropoutOverride;
    const float *x = ptr(in);
    float *y = ptr(out);
    if (!ctx->training || rate <= 0.0) {
      if (x != y && n > 0)
        GNNRT_CUDA_CHECK(cudaMemcpyAsync(y, x, static_cast<size_t>(n) * 4,
                                         cudaMemcpyDeviceToDevice, kStream));
      return;
    }
    cuda::dropout(
        kStream, n,
        dropoutKey(globalMaskSeed(ctx), static_cast<uint64_t>(ctx->step),
                   static_cast<uint64_t>(op)),
        dropoutThreshold(rate), static_cast<float>(1.0 / (1.0 - rate)), x, y);
  }

  void optimizerStep(const OptimizerConfig &c, int64_t step, int64_t n,
                     float *param, const float *grad, float *m,
                     float *v) override {
    if (c.kind == OptimizerConfig::SGD) {
      cuda::sgdStep(kStream, n, c.lr, c.weightDecay, c.momentum, step == 1,
                    param, grad, m);
      return;
    }
    const double bc1 = 1.0 - std::pow(c.beta1, static_cast<double>(step));
    const double bc2 = 1.0 - std::pow(c.beta2, static_cast<double>(step));
    cuda::adamStep(kStream, n, c.lr, c.weightDecay, c.beta1, c.beta2, c.eps,
                   bc1, bc2, param, grad, m, v);
  }

private:
  /// Everything runs on the legacy default stream (ordered with the
  /// synchronous copies).
  static constexpr cudaStream_t kStream = nullptr;

  /// The labels and the split masks in GPU memory, and each split's count of
  /// labelled vertices (the loss's mean), for one dataset.
  struct LossData {
    const Dataset *ds = nullptr;
    int64_t numVertices = -1;
    const int64_t *labels = nullptr;
    const uint8_t *masks[3] = {};
    int64_t count[3] = {};
  };

  const LossData &lossData(const Dataset &ds) {
    const int64_t V = ds.numVertices;
    if (loss.ds == &ds && loss.numVertices == V)
      return loss;
    for (void *p : lossMemory)
      free(p);
    lossMemory.clear();
    if (static_cast<int64_t>(ds.labels.size()) < V)
      fatal("gnnrtSoftmaxCrossEntropy: " + std::to_string(ds.labels.size()) +
            " labels for " + std::to_string(V) + " vertices");
    loss = LossData();
    loss.ds = &ds;
    loss.numVertices = V;
    loss.labels = upload(ds.labels, lossMemory);
    for (int s = 0; s < 3; ++s) {
      if (static_cast<int64_t>(ds.masks[s].size()) < V)
        fatal("gnnrtSoftmaxCrossEntropy: mask of " +
              std::to_string(ds.masks[s].size()) + " entries for " +
              std::to_string(V) + " vertices");
      loss.masks[s] = upload(ds.masks[s], lossMemory);
      for (int64_t u = 0; u < V; ++u)
        loss.count[s] += ds.masks[s][u] && ds.labels[u] >= 0;
    }
    return loss;
  }

  /// The aggregation's segments to `side`, as the CPU device reads them
  /// (`what` names the entry point; with `edgeIds` false the caller reads
  /// no edge's value, and the edge ids need not have been built).
  cuda::Segments segmentsOf(int64_t side, const char *what,
                            bool edgeIds = true) const {
    if (side == 1)
      return {graph().offsets[1], nullptr};
    if (edgeIds)
      needGraphIndex(graph(), 2, graph().numEdges, what);
    return {graph().offsets[0], graph().index[2]};
  }

  void runSpmm(const std::string &entry, int64_t side, int64_t mean,
               gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
               int64_t width, int64_t begin, int64_t end) {
    const int64_t V = graph().numVertices, E = graph().numEdges;
    needElements(in->sizes[0], V * width, entry + " input");
    needElements(out->sizes[0], V * width, entry + " output");
    const bool weighted = weights->sizes[0] > 0;
    if (weighted)
      needElements(weights->sizes[0], E, entry + " weights");
    const cuda::LongRows &split = longRows[side == 1];
    auto *partial =
        static_cast<float *>(scratch({split.numPieces * width * 4})[0]);
    if (side == 0)
      needGraphIndex(graph(), 3, graph().numEdges, entry.c_str());
    cuda::spmmRows(kStream, begin, end,
                   segmentsOf(side, entry.c_str(), weighted), split,
                   side == 1 ? graph().index[0] : graph().index[3],
                   weighted ? ptr(weights) : nullptr, ptr(in), ptr(out), width,
                   mean != 0, partial);
  }

  /// C[m, n] = alpha op(A) op(B) + beta C, all row-major with leading
  /// dimensions lda, ldb, ldc: the column-major product C^T = op(B)^T
  /// op(A)^T. k = 0 scales C (cuBLAS leaves it as it is).
  void rowMajorGemm(int64_t transA, int64_t transB, int64_t m, int64_t n,
                    int64_t k, float alpha, const float *a, int64_t lda,
                    const float *b, int64_t ldb, float beta, float *c,
                    int64_t ldc) {
    if (m == 0 || n == 0)
      return;
    if (k == 0) {
      cuda::scale(kStream, c, m * n, beta);
      return;
    }
    GNNRT_CUBLAS_CHECK(
        cublasSgemm(blas, transB ? CUBLAS_OP_T : CUBLAS_OP_N,
                    transA ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                    static_cast<int>(m), static_cast<int>(k), &alpha, b,
                    static_cast<int>(ldb), a, static_cast<int>(lda), &beta, c,
                    static_cast<int>(ldc)));
  }

  /// Groups the rows by type (types outside [0, numTypes) stop the run) and
  /// calls `body(tau, m, rows of type tau, packedIn, packedOut)` for each
  /// type with m > 0 rows, with packing buffers of m x `inWidth` and m x
  /// `outWidth` floats.
  template <typename Body>
  void perType(const int32_t *types, int64_t rows, int64_t numTypes,
               int64_t inWidth, int64_t outWidth, Body body) {
    if (numTypes < 1 || numTypes > INT32_MAX)
      fatal("typed linear: " + std::to_string(numTypes) + " types");
    if (rows == 0)
      return;
    std::vector<int64_t> counts(numTypes + 1);
    {
      auto *deviceCounts =
          static_cast<int64_t *>(scratch({(numTypes + 1) * 8})[0]);
      cuda::countTypes(kStream, types, rows, numTypes, deviceCounts);
      GNNRT_CUDA_CHECK(cudaMemcpy(counts.data(), deviceCounts,
                                  counts.size() * 8, cudaMemcpyDeviceToHost));
    }
    if (counts[numTypes])
      fatal(std::to_string(counts[numTypes]) + " edge types outside [0, " +
            std::to_string(numTypes) + ") of the typed linear's weight");
    int64_t widest = 0;
    for (int64_t t = 0; t < numTypes; ++t)
      widest = std::max(widest, counts[t]);
    const size_t temp = cuda::sortByTypeTempBytes(rows);
    std::vector<void *> s =
        scratch({rows * 4, rows * 4, rows * 4, static_cast<int64_t>(temp),
                 widest * inWidth * 4, widest * outWidth * 4});
    auto *order = static_cast<int32_t *>(s[2]);
    cuda::sortByType(kStream, types, rows, numTypes,
                     static_cast<int32_t *>(s[0]), static_cast<int32_t *>(s[1]),
                     order, s[3], temp);
    int64_t offset = 0;
    for (int64_t tau = 0; tau < numTypes; ++tau) {
      if (counts[tau])
        body(tau, counts[tau], order + offset, static_cast<float *>(s[4]),
             static_cast<float *>(s[5]));
      offset += counts[tau];
    }
  }

  /// Device-tier pieces of the given sizes in bytes, each 256-byte aligned,
  /// carved from one grow-only block (valid until the next call; the work
  /// queued on the stream before it is ordered before any reuse).
  std::vector<void *> scratch(std::initializer_list<int64_t> sizes) {
    int64_t total = 0;
    for (int64_t bytes : sizes)
      total += (std::max<int64_t>(bytes, 0) + 255) / 256 * 256;
    if (total > scratchBytes) {
      if (scratchBlock)
        free(scratchBlock);
      scratchBlock = nullptr;
      scratchBlock = allocate(total, MemoryTier::Device);
      scratchBytes = total;
    }
    std::vector<void *> pieces;
    char *at = static_cast<char *>(scratchBlock);
    for (int64_t bytes : sizes) {
      pieces.push_back(at);
      at += (std::max<int64_t>(bytes, 0) + 255) / 256 * 256;
    }
    return pieces;
  }

  /// A device-tier copy of `host`, recorded in `owned` (freed by
  /// releaseGraph or releaseEdgeData).
  template <typename T>
  const T *upload(const std::vector<T> &host, std::vector<void *> &owned) {
    const int64_t bytes = static_cast<int64_t>(host.size() * sizeof(T));
    void *p = allocate(bytes, MemoryTier::Device);
    copy(p, MemoryTier::Device, host.data(), MemoryTier::Host, bytes);
    owned.push_back(p);
    return static_cast<const T *>(p);
  }

  void releaseGraph() {
    for (void *p : graphMemory)
      free(p);
    graphMemory.clear();
    boundGraph = graphs[0] = DeviceGraph();
    longRows[0] = longRows[1] = cuda::LongRows();
  }

  void releaseEdgeData() {
    for (void *p : edgeMemory)
      free(p);
    edgeMemory.clear();
    boundEdgeData.clear();
  }

  std::vector<void *> graphMemory, edgeMemory, lossMemory;
  LossData loss;
  /// The SpMMs' long rows by side, set by bindGraph.
  cuda::LongRows longRows[2];
  void *scratchBlock = nullptr;
  int64_t scratchBytes = 0;
  cublasHandle_t blas = nullptr;
};

} // namespace

std::unique_ptr<Device> gnnrt::createCUDADevice(int ordinal) {
  return std::make_unique<CUDADevice>(ordinal);
}
