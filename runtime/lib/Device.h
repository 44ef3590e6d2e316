//===- Device.h - the device interface of gnnrt -----------------*- C++ -*-===//
//
// A context's device owns the run's memory (allocation, copies between host
// and device memory, byte counters, the host's access to device memory),
// holds the graph and the edge data, runs the compiled kernels
// (gnnrtParallelFor), implements every compute entry point of the C ABI
// (gnnrt/GNNRuntime.h), which forwards to it, and the optimizer step. The CPU
// device (CPU/: OpenMP + OpenBLAS) is the one the driver uses; the CUDA
// device (CUDA/, with GNN_ENABLE_CUDA) has its memory, graph and edge-data
// parts so far. Compute arguments are the ABI's memref descriptors, so a
// device sees exactly what compiled code passes.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_DEVICE_H
#define GNNRT_DEVICE_H

#include "LongRows.h"
#include "gnnrt/GNNRuntime.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace gnnrt {

/// Where memory lives. Device memory is what the compute methods and the
/// compiled kernels read and write; host memory is what the CPU addresses
/// (staging for transfers; pinned on a GPU). On the CPU the two coincide, but
/// every allocation and copy is still counted under the tier it names.
enum class MemoryTier { Host, Device };

/// A device's memory traffic in bytes, as requested by the callers (not
/// rounded up to the allocator's alignment).
struct MemoryCounters {
  /// Device-tier memory: bytes allocated and not yet freed, the highest
  /// `live` so far, and the totals allocated and freed.
  int64_t live = 0, peak = 0, allocated = 0, freed = 0;
  /// The same for host-tier memory.
  int64_t hostLive = 0, hostPeak = 0, hostAllocated = 0, hostFreed = 0;
  /// Bytes moved by copy(), by direction.
  int64_t copiedToDevice = 0, copiedToHost = 0, copiedOnDevice = 0,
          copiedOnHost = 0;
};

/// The graph's arrays as bindDataset builds them on the host; bindGraph
/// takes them over.
struct GraphArrays {
  std::vector<int64_t> dstOffsets; // [V+1] in-edges by destination (CSC)
  std::vector<int64_t> srcOffsets; // [S+1] out-edges by source (CSR); S = V
                                   // but in a row-partitioned program
  std::vector<int32_t> src;        // [E] source of each edge (CSC order)
  std::vector<int32_t> dst;        // [E] destination of each edge
  std::vector<int32_t> csrEdge;    // [E] edge ids, ascending within a source
  std::vector<int32_t> csrDst;     // [E] dst[csrEdge[p]]: read in order by
                                   // to-src gathers
  std::vector<float> inDegree, outDegree; // [V]
  /// The edges when the per-edge arrays are all empty because they stay on
  /// storage (the graph out of core: GraphOnStorage.h); -1 otherwise.
  int64_t edgesOnStorage = -1;
  int64_t numEdges() const {
    return edgesOnStorage >= 0 ? edgesOnStorage
                               : static_cast<int64_t>(src.size());
  }
};

/// One edge input of the model as bindDataset checked it: per edge (CSC
/// order), a row of f32 values or one i32 value; the other vector is empty.
struct EdgeInputArrays {
  std::vector<float> f32;
  std::vector<int32_t> i32;
};

/// The device's copy of one edge input, in its device-tier memory
/// (gnnrtEdgeDataF32 / gnnrtEdgeDataI32 return it).
struct DeviceEdgeInput {
  const float *f32 = nullptr;
  int64_t f32Size = 0; // elements
  const int32_t *i32 = nullptr;
  int64_t i32Size = 0;
};

/// The optimizer the driver selects (torch.optim semantics).
struct OptimizerConfig {
  enum Kind { Adam, SGD } kind = Adam;
  double lr = 0.01, weightDecay = 0.0, momentum = 0.9;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
};

/// A compiled kernel: rows [begin, end) of a parallel loop.
using KernelFn = void (*)(gnnrtContext *ctx, int64_t begin, int64_t end);

/// The device's copies of the graph, in its device-tier memory, numbered as
/// the C ABI numbers them.
struct DeviceGraph {
  /// numVertices: the destinations (the rows of vertex tensors); numSources:
  /// the sources (every vertex of a row-partitioned program, else the same).
  int64_t numVertices = 0, numSources = 0, numEdges = 0;
  /// The rows of an aggregation to `side` (0 src, 1 dst).
  int64_t rowsOn(int64_t side) const {
    return side == 1 ? numVertices : numSources;
  }
  /// gnnrtGraphOffsets: by side, 0 = srcOffsets (CSR), 1 = dstOffsets (CSC).
  const int64_t *offsets[2] = {};
  /// gnnrtGraphIndex: 0 = src, 1 = dst, 2 = csrEdge, 3 = csrDst.
  const int32_t *index[4] = {};
  /// gnnrtDegree: 0 = in-degree, 1 = out-degree.
  const float *degree[2] = {};
  /// The long rows of the aggregations to `side` split into pieces
  /// (LongRows.h; gnnrtGraphLongRows, gnnrtGraphPieceOffsets,
  /// gnnrtGraphPieceEdges).
  LongRowTable longRows[2];
};

class Device {
public:
  virtual ~Device() = default;
  /// A short name for logs ("cpu", "cuda").
  virtual const char *name() const = 0;

  //===--------------------------------------------------------------------===//
  // Memory
  //===--------------------------------------------------------------------===//

  /// `bytes` (>= 0) of zeroed memory in `tier`, 64-byte aligned and valid
  /// (non-null, distinct) even for 0 bytes; stops the run when it fails.
  virtual void *allocate(int64_t bytes, MemoryTier tier) = 0;
  /// `bytes` (>= 0) of device-tier memory whose pages start given back
  /// (releasePages of every whole page): reserved addresses that count in
  /// `live` only as restorePages makes pages usable (a buffer whose chunks
  /// the program moves, gnnrtBufferChunks). Page-aligned, contents
  /// unspecified. The default allocates the whole and counts it (a device
  /// that cannot give memory back at an address). Freed with free().
  virtual void *allocateReleased(int64_t bytes) {
    return allocate(bytes, MemoryTier::Device);
  }
  /// Whether releasePages gives whole pages back (and allocateReleased
  /// reserves addresses only); false where the memory is kept.
  virtual bool releasesPages() const { return false; }
  /// Frees memory from allocate(); stops the run on any other pointer.
  virtual void free(void *ptr) = 0;
  /// Copies `bytes` from `src` in `srcTier` to `dst` in `dstTier` (not
  /// overlapping unless equal). A host-tier pointer may be any host memory.
  /// Returns when the copy is done.
  virtual void copy(void *dst, MemoryTier dstTier, const void *src,
                    MemoryTier srcTier, int64_t bytes) = 0;
  /// Sets `bytes` of device-tier memory at `dst` to `value` (memset; the
  /// gradients are zeroed with it). Counts nothing.
  virtual void fill(void *dst, uint8_t value, int64_t bytes) = 0;
  /// What allocate, free and copy did so far.
  MemoryCounters memoryCounters() const;
  /// The most device-tier memory live at once (0: no cap): an allocation
  /// past it stops the run with the sizes and the cap. The driver sets it
  /// to --mem-budget on a device whose memory is not the host's (the GPU's
  /// pool; on the CPU the budget is the process's resident memory).
  void setCapacity(int64_t bytes);
  int64_t capacity() const;
  /// Device-tier memory free now (cudaMemGetInfo on a GPU); -1 where the
  /// device memory is the host's (availableMemory() answers).
  virtual int64_t freeDeviceMemory() const { return -1; }
  /// Gives the memory of `bytes` of device-tier memory at `ptr` (inside one
  /// allocation) back, keeping the addresses: what it returns is counted out
  /// of `live` until restorePages. The contents are lost; touching them
  /// before restorePages is an error the device may trap (the CPU faults).
  /// Returns the bytes given back (whole pages inside the range on the CPU;
  /// 0 where the device cannot, which then keeps the memory).
  int64_t releasePages(void *ptr, int64_t bytes);
  /// Makes a range given back by releasePages usable again (zeroed on the
  /// CPU); `released` is what releasePages returned for it.
  void restorePages(void *ptr, int64_t bytes, int64_t released);

  //===--------------------------------------------------------------------===//
  // Host access to device memory
  //===--------------------------------------------------------------------===//
  //
  // Host code (the driver, accuracy) never dereferences device-tier memory
  // itself: it reads through hostView, writes with copy() from the host tier
  // and sets constants with fill(). On the CPU device all three touch the
  // memory in place (a view is the pointer itself; a write from the host is
  // the memcpy the host would do), so the CPU path copies nothing more than
  // before.

  /// Whether device-tier memory is host memory that the host may address (the
  /// CPU device; not a discrete GPU).
  virtual bool deviceMemoryIsHostMemory() const = 0;
  /// The host's read-only view of `bytes` of device-tier memory at `src`,
  /// once the work issued so far is done (synchronize()). Where device memory
  /// is host memory, `src` itself: no copy, nothing counted, `staging`
  /// untouched. Otherwise `src` is copied into `staging` (resized to `bytes`;
  /// counted as a copy to the host) and its data returned. The view is valid
  /// while `staging` and the memory are unchanged.
  const void *hostView(const void *src, int64_t bytes,
                       std::vector<char> &staging);

  //===--------------------------------------------------------------------===//
  // Graph
  //===--------------------------------------------------------------------===//

  /// Takes over the graph's arrays (copies them to device memory, or keeps
  /// them where host memory is device memory). Replaces a graph bound
  /// before. `which` 0 is the graph the program runs on (a partitioned
  /// program's own rows); 1 is feature partitioning's whole graph
  /// (`gnn.graph whole`, docs/Distributed.md), which graph() returns after
  /// selectGraph(1).
  virtual void bindGraph(GraphArrays graph, int which = 0) = 0;
  /// Gives graph 0's CSC (its offsets by destination and sources: the
  /// arrays bindGraph took, at the same addresses) back to the caller and
  /// unbinds it; false, keeping it, where the device holds copies (its
  /// memory is not host memory). Mini-batch training binds its whole graph
  /// for an evaluation without a second copy of the sampler's.
  virtual bool returnGraph(std::vector<int64_t> &dstOffsets,
                           std::vector<int32_t> &src) {
    return false;
  }
  /// The selected graph (all null before bindGraph).
  const DeviceGraph &graph() const { return boundGraph; }
  /// Selects the graph graph() returns: 0, or the whole graph bound as 1
  /// (gnnrtUseGraph). Stops the run when none is bound as 1.
  void selectGraph(int which);
  /// The graph out of core: graph 0's per-edge array `which` (gnnrtGraphIndex
  /// numbering) is read at `data` for the edges [first, ...) of a window
  /// (GraphOnStorage.h; null: none). Host-memory devices only.
  void setGraphWindow(int which, const int32_t *data, int64_t first);
  /// Whether a whole graph is bound (bindGraph(..., 1)).
  bool hasWholeGraph() const { return graphs[1].offsets[1] != nullptr; }
  /// Takes over the model's edge inputs, numbered as the model info lists
  /// them (copies them to device memory, or keeps them where host memory is
  /// device memory). Replaces edge data bound before.
  virtual void bindEdgeData(std::vector<EdgeInputArrays> inputs) = 0;
  /// The bound edge inputs (none before bindEdgeData).
  const std::vector<DeviceEdgeInput> &edgeData() const { return boundEdgeData; }

  //===--------------------------------------------------------------------===//
  // Execution
  //===--------------------------------------------------------------------===//

  /// gnnrtParallelFor(Range): runs `kernel(ctx, b, e)` once for each chunk
  /// [b, e) = [begin + c * GNNRT_PARALLEL_CHUNK, min(end, b +
  /// GNNRT_PARALLEL_CHUNK)) of [begin, end), in any order and concurrently;
  /// returns when all have run.
  virtual void launch(gnnrtContext *ctx, KernelFn kernel, int64_t begin,
                      int64_t end) = 0;
  /// Waits until the work issued to the device is done.
  virtual void synchronize() = 0;

  //===--------------------------------------------------------------------===//
  // Compute: the C ABI's entry points of the same names
  //===--------------------------------------------------------------------===//

  virtual void scatter(gnnrtContext *ctx, int64_t side, gnnrtMemRefF32 *in,
                       gnnrtMemRefF32 *out, int64_t width) = 0;
  virtual void gather(gnnrtContext *ctx, int64_t acc, int64_t side,
                      gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
                      gnnrtMemRefI32 *arg, int64_t width) = 0;
  virtual void gatherArgBackward(gnnrtContext *ctx, int64_t side,
                                 gnnrtMemRefF32 *gradOut, gnnrtMemRefI32 *arg,
                                 gnnrtMemRefF32 *gradEdges, int64_t width) = 0;
  virtual void spmm(gnnrtContext *ctx, int64_t side, int64_t mean,
                    int64_t chunks, gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in,
                    gnnrtMemRefF32 *out, int64_t width) = 0;
  /// gnnrtSpmmRows: the output rows [begin, end) from the input rows
  /// [inBegin, inEnd) (a tile; both ranges checked by the entry point).
  virtual void spmmRows(gnnrtContext *ctx, int64_t side, int64_t mean,
                        gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in,
                        gnnrtMemRefF32 *out, int64_t width, int64_t begin,
                        int64_t end, int64_t inBegin, int64_t inEnd) = 0;
  /// One stage of gnnrtSpmmBroadcast (row partitioning): the own rows'
  /// weighted sums over their in-edges from the sources [lo, hi), whose rows
  /// `rows` (device memory) holds, row u at rows + (u - lo) * width; the
  /// stage with lo = 0 stores, later ones add, a mean divides at hi = S;
  /// only the own rows [0, end) (a sampled batch's level).
  virtual void spmmStage(gnnrtContext *ctx, int64_t mean,
                         gnnrtMemRefF32 *weights, const float *rows, int64_t lo,
                         int64_t hi, gnnrtMemRefF32 *out, int64_t width,
                         int64_t end);
  /// One stage of gnnrtSpmmReduce (row partitioning): the sources
  /// [lo, hi)'s weighted sums over their out-edges (this process's edges)
  /// of the own rows `in`, into `rows` (device memory, row u at
  /// rows + (u - lo) * width).
  virtual void spmmSourceStage(gnnrtContext *ctx, gnnrtMemRefF32 *weights,
                               gnnrtMemRefF32 *in, int64_t lo, int64_t hi,
                               float *rows, int64_t width);
  virtual void gemm(gnnrtContext *ctx, int64_t transA, int64_t transB,
                    int64_t m, int64_t n, int64_t k, float alpha,
                    gnnrtMemRefF32 *a, gnnrtMemRefF32 *b, float beta,
                    gnnrtMemRefF32 *c) = 0;
  /// out[j] = sum over the rows of in[rows, width].
  /// gnnrtSumRows, or gnnrtSumRowsAdd with `accumulate`.
  virtual void sumRows(gnnrtContext *ctx, int64_t rows, int64_t width,
                       gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
                       bool accumulate) = 0;
  virtual void typedGemm(gnnrtContext *ctx, int64_t rows, int64_t k, int64_t n,
                         int64_t numTypes, gnnrtMemRefF32 *x,
                         gnnrtMemRefI32 *types, gnnrtMemRefF32 *w,
                         gnnrtMemRefF32 *out) = 0;
  virtual void typedGemmTranspose(gnnrtContext *ctx, int64_t rows, int64_t k,
                                  int64_t n, int64_t numTypes,
                                  gnnrtMemRefF32 *g, gnnrtMemRefI32 *types,
                                  gnnrtMemRefF32 *w, gnnrtMemRefF32 *gx) = 0;
  virtual void typedOuterSum(gnnrtContext *ctx, int64_t rows, int64_t k,
                             int64_t n, int64_t numTypes, gnnrtMemRefF32 *x,
                             gnnrtMemRefI32 *types, gnnrtMemRefF32 *g,
                             gnnrtMemRefF32 *gw) = 0;
  /// Over the rows [begin, end) (gnnrtSoftmaxCrossEntropyRows; all of them
  /// for gnnrtSoftmaxCrossEntropy).
  virtual float softmaxCrossEntropy(gnnrtContext *ctx, gnnrtMemRefF32 *logits,
                                    gnnrtMemRefF32 *grad, int64_t classes,
                                    int64_t split, int64_t begin,
                                    int64_t end) = 0;
  virtual void dropout(gnnrtContext *ctx, int64_t op, double rate,
                       gnnrtMemRefF32 *in, gnnrtMemRefF32 *out) = 0;

  //===--------------------------------------------------------------------===//
  // Optimizer
  //===--------------------------------------------------------------------===//

  /// Step `step` (1, 2, ...) of `config`'s optimizer on `n` parameters, in
  /// device-tier memory: `param` -= update(`grad` + weightDecay * `param`),
  /// computed in double and stored as f32. SGD: `m` is the momentum buffer
  /// (null when momentum is 0; set to the gradient on step 1), `v` unused.
  /// Adam: `m` and `v` are the first and second moments (zero before step
  /// 1), with bias correction by `step`. gnnrtOptimizerUpdate forwards here.
  virtual void optimizerStep(const OptimizerConfig &config, int64_t step,
                             int64_t n, float *param, const float *grad,
                             float *m, float *v) = 0;

protected:
  /// Bookkeeping for the implementations of allocate, free and copy: they
  /// call these so that every device counts the same way.
  void recordAllocation(void *ptr, int64_t bytes, MemoryTier tier);
  /// An allocateReleased allocation of `bytes`: counted in `live` by
  /// restorePages only (its pages must all be released again before free).
  void recordReleasedAllocation(void *ptr, int64_t bytes);
  /// Forgets `ptr` and returns its tier; stops the run on a pointer that is
  /// not a live allocation.
  MemoryTier recordFree(void *ptr);
  void recordCopy(MemoryTier dstTier, MemoryTier srcTier, int64_t bytes);
  /// Stops the run when `bytes` more device-tier memory would pass the
  /// capacity (setCapacity): for a device to call before it allocates
  /// (recordAllocation checks again, with the count).
  void checkCapacity(int64_t bytes) const;
  /// The device's part of releasePages and restorePages: by default nothing
  /// is given back.
  virtual int64_t releasePagesImpl(void *ptr, int64_t bytes) { return 0; }
  virtual void restorePagesImpl(void *ptr, int64_t bytes) {}
  /// Checks that `graph`'s arrays agree in size; stops the run otherwise.
  static void checkGraph(const GraphArrays &graph);

  /// Set by bindGraph and bindEdgeData: each graph bound, and the selected
  /// one (a copy of graphs[selected]).
  DeviceGraph boundGraph;
  DeviceGraph graphs[2];
  int selected = 0;
  std::vector<DeviceEdgeInput> boundEdgeData;

private:
  struct Allocation {
    int64_t bytes;
    MemoryTier tier;
    int64_t counted; // what free() takes off `live` (0: allocateReleased)
  };
  /// Whether `bytes` more device-tier memory would pass the capacity
  /// (memoryMutex held).
  bool passesCapacity(int64_t bytes) const;
  mutable std::mutex memoryMutex;
  MemoryCounters counters;
  int64_t capacityBytes = 0;
  std::unordered_map<const void *, Allocation> allocations;
};

/// `size` floats of zeroed device-tier memory of `device`, freed with the
/// buffer.
struct Buffer {
  Device *device = nullptr;
  float *data = nullptr;
  int64_t size = 0;
  /// From allocateReleased: its pages are usable only where restored.
  bool released = false;
  Buffer(Device &device, int64_t n);
  /// With allocateReleased (`released`) or allocate.
  Buffer(Device &device, int64_t n, bool released);
  ~Buffer();
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
};

/// `b`'s floats, `b` replaced by a zeroed buffer of `floats` first where
/// it holds fewer (a scratch kept across calls that only grows).
float *grownBuffer(Device &device, std::unique_ptr<Buffer> &b, int64_t floats);

/// The CPU device (always built; CPU/CPUDevice.cpp).
std::unique_ptr<Device> createCPUDevice();

} // namespace gnnrt

#endif // GNNRT_DEVICE_H
