//===- CUDADevice.cpp - the CUDA device of gnnrt --------------------------===//
//
// Plain C++ against the CUDA runtime API. Device-tier memory is cudaMalloc'd
// (zeroed with cudaMemset), host-tier memory is pinned (cudaMallocHost),
// copies are cudaMemcpy in the direction the tiers name and fills are
// cudaMemset; all of it on the default stream, so each call is ordered after
// the ones before. GPU memory is not host memory: the host reads it through
// staging copies (Device::hostView). The graph's arrays and the edge data are
// copied to GPU memory by bindGraph and bindEdgeData. Kernel launches, the
// compute methods and the optimizer step are the next step: until then they
// stop the run.
//
//===----------------------------------------------------------------------===//

#include "CUDA/CUDADevice.h"
#include "Context.h"
#include "Device.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

using namespace gnnrt;

/// Stops the run with "'<expr>' failed with '<error name>': <description>"
/// unless `expr` returns cudaSuccess.
#define GNNRT_CUDA_CHECK(expr) checkCUDA((expr), #expr)

namespace {

void checkCUDA(cudaError_t status, const char *expr) {
  if (status != cudaSuccess)
    fatal(std::string("'") + expr + "' failed with '" +
          cudaGetErrorName(status) + "': " + cudaGetErrorString(status));
}

cudaMemcpyKind kindOf(MemoryTier dstTier, MemoryTier srcTier) {
  const bool toDevice = dstTier == MemoryTier::Device;
  if (srcTier == MemoryTier::Device)
    return toDevice ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost;
  return toDevice ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost;
}

[[noreturn]] void unimplemented(const char *op) {
  fatal(std::string("the CUDA device does not implement ") + op + " yet");
}

class CUDADevice final : public Device {
public:
  explicit CUDADevice(int ordinal) { GNNRT_CUDA_CHECK(cudaSetDevice(ordinal)); }
  ~CUDADevice() override {
    releaseGraph();
    releaseEdgeData();
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

  void bindGraph(GraphArrays graph) override {
    checkGraph(graph);
    releaseGraph();
    boundGraph.numVertices = static_cast<int64_t>(graph.inDegree.size());
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
  }

  void bindEdgeData(std::vector<EdgeInputArrays> inputs) override {
    releaseEdgeData();
    for (const EdgeInputArrays &in : inputs)
      boundEdgeData.push_back(
          {upload(in.f32, edgeMemory), static_cast<int64_t>(in.f32.size()),
           upload(in.i32, edgeMemory), static_cast<int64_t>(in.i32.size())});
  }

  void launch(gnnrtContext *, KernelFn, int64_t, int64_t) override {
    unimplemented("launch");
  }
  void synchronize() override { GNNRT_CUDA_CHECK(cudaDeviceSynchronize()); }

  void scatter(gnnrtContext *, int64_t, gnnrtMemRefF32 *, gnnrtMemRefF32 *,
               int64_t) override {
    unimplemented("scatter");
  }
  void gather(gnnrtContext *, int64_t, int64_t, gnnrtMemRefF32 *,
              gnnrtMemRefF32 *, gnnrtMemRefI32 *, int64_t) override {
    unimplemented("gather");
  }
  void gatherArgBackward(gnnrtContext *, int64_t, gnnrtMemRefF32 *,
                         gnnrtMemRefI32 *, gnnrtMemRefF32 *, int64_t) override {
    unimplemented("gatherArgBackward");
  }
  void spmm(gnnrtContext *, int64_t, int64_t, int64_t, gnnrtMemRefF32 *,
            gnnrtMemRefF32 *, gnnrtMemRefF32 *, int64_t) override {
    unimplemented("spmm");
  }
  void spmmRows(gnnrtContext *, int64_t, int64_t, gnnrtMemRefF32 *,
                gnnrtMemRefF32 *, gnnrtMemRefF32 *, int64_t, int64_t,
                int64_t) override {
    unimplemented("spmmRows");
  }
  void gemm(gnnrtContext *, int64_t, int64_t, int64_t, int64_t, int64_t, float,
            gnnrtMemRefF32 *, gnnrtMemRefF32 *, float,
            gnnrtMemRefF32 *) override {
    unimplemented("gemm");
  }
  void sumRows(gnnrtContext *, int64_t, int64_t, gnnrtMemRefF32 *,
               gnnrtMemRefF32 *, bool) override {
    unimplemented("sumRows");
  }
  void typedGemm(gnnrtContext *, int64_t, int64_t, int64_t, int64_t,
                 gnnrtMemRefF32 *, gnnrtMemRefI32 *, gnnrtMemRefF32 *,
                 gnnrtMemRefF32 *) override {
    unimplemented("typedGemm");
  }
  void typedGemmTranspose(gnnrtContext *, int64_t, int64_t, int64_t, int64_t,
                          gnnrtMemRefF32 *, gnnrtMemRefI32 *, gnnrtMemRefF32 *,
                          gnnrtMemRefF32 *) override {
    unimplemented("typedGemmTranspose");
  }
  void typedOuterSum(gnnrtContext *, int64_t, int64_t, int64_t, int64_t,
                     gnnrtMemRefF32 *, gnnrtMemRefI32 *, gnnrtMemRefF32 *,
                     gnnrtMemRefF32 *) override {
    unimplemented("typedOuterSum");
  }
  float softmaxCrossEntropy(gnnrtContext *, gnnrtMemRefF32 *, gnnrtMemRefF32 *,
                            int64_t, int64_t, int64_t, int64_t) override {
    unimplemented("softmaxCrossEntropy");
  }
  void dropout(gnnrtContext *, int64_t, double, gnnrtMemRefF32 *,
               gnnrtMemRefF32 *) override {
    unimplemented("dropout");
  }

  void optimizerStep(const OptimizerConfig &, int64_t, int64_t, float *,
                     const float *, float *, float *) override {
    unimplemented("optimizerStep");
  }

private:
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
    boundGraph = DeviceGraph();
  }

  void releaseEdgeData() {
    for (void *p : edgeMemory)
      free(p);
    edgeMemory.clear();
    boundEdgeData.clear();
  }

  std::vector<void *> graphMemory, edgeMemory;
};

} // namespace

std::unique_ptr<Device> gnnrt::createCUDADevice(int ordinal) {
  return std::make_unique<CUDADevice>(ordinal);
}
