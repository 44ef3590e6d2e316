//===- CPUDevice.cpp - the CPU device of gnnrt ----------------------------===//
//
// Host memory for both tiers (aligned, zeroed, huge pages for large blocks),
// which the host reads and writes in place; the graph and the edge data are
// kept as bindDataset built them; compiled kernels run on OpenMP threads; the
// compute methods forward to the OpenMP + OpenBLAS kernels (Kernels.cpp); the
// optimizer step is a plain loop.
//
//===----------------------------------------------------------------------===//

#include "CPU/Kernels.h"
#include "Context.h"
#include "Device.h"
#include "LongRows.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

using namespace gnnrt;
using namespace gnnrt::cpu;

namespace {

/// The 2 MiB pages of transparent huge pages.
constexpr size_t kHuge = size_t(2) << 20;

/// Whether blocks of a few MiB and more take 2 MiB pages: GNNRT_HUGE_PAGES=0
/// turns them off (for comparisons), 1 (the default) on; anything else is
/// refused rather than read as on.
bool hugePagesAllowed() {
  static const bool allowed = envFlag("GNNRT_HUGE_PAGES", true);
  return allowed;
}

/// Whether a block of `bytes` is a mapping of its own (allocateMapped) rather
/// than a block of the C heap.
bool mapsItsOwn(size_t bytes) { return bytes >= 2 * kHuge; }

/// `bytes` (at least 1) of zeroed memory from the C heap, 64-byte aligned,
/// for the small blocks; exits with "error: out of memory" when it fails.
void *allocateZeroed(size_t bytes) {
  constexpr size_t align = 64;
  bytes = (std::max<size_t>(bytes, 1) + align - 1) / align * align;
  void *p = nullptr;
  if (posix_memalign(&p, align, bytes) != 0 || !p)
    fatal("out of memory allocating " + std::to_string(bytes) + " bytes");
  std::memset(p, 0, bytes);
  return p;
}

/// A mapping of its own of `bytes` rounded up to whole 2 MiB pages, aligned
/// to them, for the large blocks: its size in `mapped`. Fresh anonymous
/// pages read as zero, so nothing clears them here, and nothing is
/// touched before the first use. A block freed goes back to the kernel at
/// once (munmap): blocks of the C heap stay resident after their free
/// wherever a live block lies above them, and the program's and the
/// start-up's frees left up to a sixth of a process's peak RSS there (GAT
/// on 4 processes, docs/Distributed.md).
void *allocateMapped(size_t bytes, size_t &mapped) {
  mapped = (bytes + kHuge - 1) / kHuge * kHuge;
  // Over-map by a page's alignment and trim both ends.
  const size_t span = mapped + kHuge;
  void *raw = mmap(nullptr, span, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED)
    fatal("out of memory allocating " + std::to_string(mapped) + " bytes");
  char *begin = static_cast<char *>(raw);
  char *p = reinterpret_cast<char *>(
      (reinterpret_cast<uintptr_t>(begin) + kHuge - 1) / kHuge * kHuge);
  if (p > begin)
    munmap(begin, static_cast<size_t>(p - begin));
  if (char *end = begin + span; p + mapped < end)
    munmap(p + mapped, static_cast<size_t>(end - (p + mapped)));
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
  // Buffers of a few MiB and more are read at random rows (a gather's
  // neighbours): 2 MiB pages keep their translations in the TLB (4 KiB pages
  // missed it on nearly every row, about a fifth of an aggregation's time).
  // Transparent huge pages are opt-in (madvise) on Debian's kernels, so the
  // request comes before the first touch.
  // Without them (GNNRT_HUGE_PAGES=0) the mapping asks for none, also
  // where the kernel's setting is "always".
  madvise(p, mapped, hugePagesAllowed() ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#endif
  return p;
}

/// The whole pages inside [ptr, ptr + bytes).
std::pair<char *, char *> innerPages(void *ptr, int64_t bytes) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t b = reinterpret_cast<uintptr_t>(ptr);
  const uintptr_t e = b + static_cast<uintptr_t>(bytes);
  const uintptr_t first = (b + page - 1) / page * page, last = e / page * page;
  return {reinterpret_cast<char *>(first), reinterpret_cast<char *>(last)};
}

class CPUDevice final : public Device {
  /// The mappings of allocateReleased and of the large blocks, and their
  /// sizes (freed by munmap).
  std::mutex mappedMutex;
  std::unordered_map<void *, size_t> mapped;

public:
  const char *name() const override { return "cpu"; }

  void *allocate(int64_t bytes, MemoryTier tier) override {
    if (bytes < 0)
      fatal("cpu device: allocation of " + std::to_string(bytes) + " bytes");
    const size_t size = static_cast<size_t>(bytes);
    hugePagesAllowed(); // a bad GNNRT_HUGE_PAGES stops the first allocation
    void *p = nullptr;
    if (mapsItsOwn(size)) {
      size_t extent = 0;
      p = allocateMapped(size, extent);
      std::lock_guard<std::mutex> lock(mappedMutex);
      mapped[p] = extent;
    } else {
      p = allocateZeroed(size);
    }
    recordAllocation(p, bytes, tier);
    return p;
  }
  bool releasesPages() const override { return true; }
  void *allocateReleased(int64_t bytes) override {
    if (bytes < 0)
      fatal("cpu device: allocation of " + std::to_string(bytes) + " bytes");
    // Whole pages, never touched (no RSS) and inaccessible until restored.
    static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t size =
        (std::max<size_t>(static_cast<size_t>(bytes), 1) + page - 1) / page *
        page;
    void *p = mmap(nullptr, size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      fatal("out of address space reserving " + std::to_string(size) +
            " bytes");
    {
      std::lock_guard<std::mutex> lock(mappedMutex);
      mapped[p] = size;
    }
    recordReleasedAllocation(p, bytes);
    return p;
  }
  void free(void *ptr) override {
    recordFree(ptr);
    size_t size = 0;
    {
      std::lock_guard<std::mutex> lock(mappedMutex);
      auto it = mapped.find(ptr);
      if (it != mapped.end()) {
        size = it->second;
        mapped.erase(it);
      }
    }
    if (size)
      munmap(ptr, size);
    else
      std::free(ptr);
  }

protected:
  /// The whole pages inside the range go back to the kernel (MADV_DONTNEED)
  /// and become inaccessible (PROT_NONE), so that a kernel reading a range
  /// that is out faults instead of reading zeros; the pages at the edges,
  /// shared with the neighbouring rows, stay.
  int64_t releasePagesImpl(void *ptr, int64_t bytes) override {
    auto [begin, end] = innerPages(ptr, bytes);
    if (end <= begin)
      return 0;
    if (mprotect(begin, end - begin, PROT_NONE) != 0)
      fatal("cpu device: mprotect(PROT_NONE) failed on a released range");
    madvise(begin, end - begin, MADV_DONTNEED); // advice: the memory goes
    return end - begin;
  }
  void restorePagesImpl(void *ptr, int64_t bytes) override {
    auto [begin, end] = innerPages(ptr, bytes);
    if (end > begin &&
        mprotect(begin, end - begin, PROT_READ | PROT_WRITE) != 0)
      fatal("cpu device: mprotect(PROT_READ | PROT_WRITE) failed on a "
            "restored range");
  }

public:
  void copy(void *dst, MemoryTier dstTier, const void *src, MemoryTier srcTier,
            int64_t bytes) override {
    if (bytes < 0)
      fatal("cpu device: copy of " + std::to_string(bytes) + " bytes");
    if (bytes > 0 && dst != src)
      std::memcpy(dst, src, static_cast<size_t>(bytes));
    recordCopy(dstTier, srcTier, bytes);
  }
  void fill(void *dst, uint8_t value, int64_t bytes) override {
    if (bytes < 0)
      fatal("cpu device: fill of " + std::to_string(bytes) + " bytes");
    std::memset(dst, value, static_cast<size_t>(bytes));
  }
  bool deviceMemoryIsHostMemory() const override { return true; }

  void bindGraph(GraphArrays graph, int which) override {
    // Host memory is device memory: the arrays are kept as they are.
    checkGraph(graph);
    GraphArrays &a = arrays[which != 0];
    a = std::move(graph);
    DeviceGraph &d = graphs[which != 0];
    d.numVertices = static_cast<int64_t>(a.inDegree.size());
    d.numSources = static_cast<int64_t>(a.srcOffsets.size()) - 1;
    d.numEdges = a.numEdges();
    d.offsets[0] = a.srcOffsets.data();
    d.offsets[1] = a.dstOffsets.data();
    // Arrays the program does not read are empty: null. Out of core all are
    // (setGraphWindow points them at windows).
    auto data = [](const std::vector<int32_t> &v) {
      return v.empty() ? nullptr : v.data();
    };
    d.index[0] = data(a.src);
    d.index[1] = data(a.dst);
    d.index[2] = data(a.csrEdge);
    d.index[3] = data(a.csrDst);
    d.degree[0] = a.inDegree.data();
    d.degree[1] = a.outDegree.data();
    // Long rows in pieces only where a test asks (GNNRT_PIECE_EDGES): one
    // thread per row range balances without them (launch's dynamic
    // schedule), but the compiled kernels' pieces are checked here so.
    const int64_t minPiece = longRowMinPiece(0);
    for (int side : {0, 1}) {
      LongRowSplit &s = splits[which != 0][side];
      s = minPiece > 0
              ? splitLongRows(side == 0 ? a.srcOffsets : a.dstOffsets, minPiece)
              : LongRowSplit();
      d.longRows[side] = hostTable(s);
    }
    boundGraph = graphs[selected];
  }
  bool returnGraph(std::vector<int64_t> &dstOffsets,
                   std::vector<int32_t> &src) override {
    if (arrays[0].edgesOnStorage >= 0)
      return false; // the sources are in indices.npy
    dstOffsets = std::move(arrays[0].dstOffsets);
    src = std::move(arrays[0].src);
    arrays[0] = GraphArrays();
    graphs[0] = DeviceGraph();
    splits[0][0] = splits[0][1] = LongRowSplit();
    boundGraph = graphs[selected];
    return true;
  }
  void bindEdgeData(std::vector<EdgeInputArrays> inputs) override {
    // Kept as they are, like the graph.
    edgeInputs = std::move(inputs);
    boundEdgeData.clear();
    for (const EdgeInputArrays &in : edgeInputs)
      boundEdgeData.push_back(
          {in.f32.data(), static_cast<int64_t>(in.f32.size()), in.i32.data(),
           static_cast<int64_t>(in.i32.size())});
  }

  void launch(gnnrtContext *ctx, KernelFn kernel, int64_t begin,
              int64_t end) override {
    // Dynamic schedule: the rows of skewed degrees balance.
    constexpr int64_t kChunk = GNNRT_PARALLEL_CHUNK;
    const int64_t chunks = (end - begin + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t c = 0; c < chunks; ++c)
      kernel(ctx, begin + c * kChunk, std::min(end, begin + (c + 1) * kChunk));
  }
  void synchronize() override {} // every method returns when it is done

  void scatter(gnnrtContext *, int64_t side, gnnrtMemRefF32 *in,
               gnnrtMemRefF32 *out, int64_t w) override {
    cpuScatter(graph(), side, in, out, w);
  }
  void gather(gnnrtContext *, int64_t acc, int64_t side, gnnrtMemRefF32 *in,
              gnnrtMemRefF32 *out, gnnrtMemRefI32 *arg, int64_t w) override {
    cpuGather(graph(), acc, side, in, out, arg, w);
  }
  void gatherArgBackward(gnnrtContext *, int64_t side, gnnrtMemRefF32 *g,
                         gnnrtMemRefI32 *arg, gnnrtMemRefF32 *ge,
                         int64_t w) override {
    cpuGatherArgBackward(graph(), side, g, arg, ge, w);
  }
  void spmm(gnnrtContext *, int64_t side, int64_t mean, int64_t chunks,
            gnnrtMemRefF32 *wts, gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
            int64_t w) override {
    cpuSpmm(graph(), side, mean, chunks, wts, in, out, w);
  }
  void spmmRows(gnnrtContext *, int64_t side, int64_t mean, gnnrtMemRefF32 *wts,
                gnnrtMemRefF32 *in, gnnrtMemRefF32 *out, int64_t w,
                int64_t begin, int64_t end, int64_t inBegin,
                int64_t inEnd) override {
    cpuSpmmRows(graph(), side, mean, wts, in, out, w, begin, end, inBegin,
                inEnd);
  }
  void spmmStage(gnnrtContext *, int64_t mean, gnnrtMemRefF32 *wts,
                 const float *rows, int64_t lo, int64_t hi, gnnrtMemRefF32 *out,
                 int64_t w, int64_t end) override {
    cpuSpmmStage(graph(), mean, wts, rows, lo, hi, out, w, end);
  }
  void spmmSourceStage(gnnrtContext *, gnnrtMemRefF32 *wts, gnnrtMemRefF32 *in,
                       int64_t lo, int64_t hi, float *rows,
                       int64_t w) override {
    cpuSpmmSourceStage(graph(), wts, in, lo, hi, rows, w);
  }
  void gemm(gnnrtContext *, int64_t ta, int64_t tb, int64_t m, int64_t n,
            int64_t k, float alpha, gnnrtMemRefF32 *a, gnnrtMemRefF32 *b,
            float beta, gnnrtMemRefF32 *c) override {
    cpuGemm(ta, tb, m, n, k, alpha, a, b, beta, c);
  }
  void sumRows(gnnrtContext *, int64_t rows, int64_t width, gnnrtMemRefF32 *in,
               gnnrtMemRefF32 *out, bool accumulate) override {
    cpuSumRows(rows, width, in, out, accumulate);
  }
  void typedGemm(gnnrtContext *c, int64_t rows, int64_t k, int64_t n, int64_t t,
                 gnnrtMemRefF32 *x, gnnrtMemRefI32 *types, gnnrtMemRefF32 *w,
                 gnnrtMemRefF32 *out) override {
    cpuTypedGemm(c, rows, k, n, t, x, types, w, out);
  }
  void typedGemmTranspose(gnnrtContext *c, int64_t rows, int64_t k, int64_t n,
                          int64_t t, gnnrtMemRefF32 *g, gnnrtMemRefI32 *types,
                          gnnrtMemRefF32 *w, gnnrtMemRefF32 *gx) override {
    cpuTypedGemmTranspose(c, rows, k, n, t, g, types, w, gx);
  }
  void typedOuterSum(gnnrtContext *c, int64_t rows, int64_t k, int64_t n,
                     int64_t t, gnnrtMemRefF32 *x, gnnrtMemRefI32 *types,
                     gnnrtMemRefF32 *g, gnnrtMemRefF32 *gw) override {
    cpuTypedOuterSum(c, rows, k, n, t, x, types, g, gw);
  }
  float softmaxCrossEntropy(gnnrtContext *c, gnnrtMemRefF32 *logits,
                            gnnrtMemRefF32 *grad, int64_t classes,
                            int64_t split, int64_t begin,
                            int64_t end) override {
    return cpuSoftmaxCrossEntropy(c, logits, grad, classes, split, begin, end);
  }
  void dropout(gnnrtContext *c, int64_t op, double rate, gnnrtMemRefF32 *in,
               gnnrtMemRefF32 *out) override {
    cpuDropout(c, op, rate, in, out);
  }

  void optimizerStep(const OptimizerConfig &c, int64_t step, int64_t n,
                     float *param, const float *grad, float *m,
                     float *v) override {
    // One thread, in order: the loop gnnrtOptimizerUpdate ran on the host,
    // expression for expression, so that the rounding (and the FMAs the
    // compiler forms) stay the same.
    if (c.kind == OptimizerConfig::SGD) {
      const bool first = step == 1;
      for (int64_t i = 0; i < n; ++i) {
        double gi = grad[i] + c.weightDecay * param[i];
        if (c.momentum != 0.0) {
          double b = first ? gi : c.momentum * m[i] + gi;
          m[i] = static_cast<float>(b);
          gi = b;
        }
        param[i] = static_cast<float>(param[i] - c.lr * gi);
      }
      return;
    }
    const double bc1 = 1.0 - std::pow(c.beta1, static_cast<double>(step));
    const double bc2 = 1.0 - std::pow(c.beta2, static_cast<double>(step));
    for (int64_t i = 0; i < n; ++i) {
      double gi = grad[i] + c.weightDecay * param[i];
      double mi = c.beta1 * m[i] + (1.0 - c.beta1) * gi;
      double vi = c.beta2 * v[i] + (1.0 - c.beta2) * gi * gi;
      m[i] = static_cast<float>(mi);
      v[i] = static_cast<float>(vi);
      double denom = std::sqrt(vi) / std::sqrt(bc2) + c.eps;
      param[i] = static_cast<float>(param[i] - (c.lr / bc1) * mi / denom);
    }
  }

private:
  GraphArrays arrays[2];     // the own rows' graph, the whole graph
  LongRowSplit splits[2][2]; // by graph, then side
  std::vector<EdgeInputArrays> edgeInputs;
};

} // namespace

std::unique_ptr<Device> gnnrt::createCPUDevice() {
  return std::make_unique<CPUDevice>();
}
