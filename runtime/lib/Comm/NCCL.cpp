//===- NCCL.cpp - the collectives of Communicator.h on NCCL ---------------===//
//
// One process per GPU: the NCCL communicator's buffers are GPU memory (the
// CUDA device's), and its collectives run on a stream of their own. The
// NCCL id is bootstrapped over another communicator (MPI's under mpirun, a
// world of one alone): rank 0 makes it, broadcasts it, and every rank joins
// with ncclCommInitRank on the GPU of its local rank.
//
// Ordering with the compute: the CUDA device runs everything on the legacy
// default stream, so each collective first makes its stream wait for the
// work enqueued there so far (an event), and a blocking collective returns
// once its stream is done. A non-blocking one records an event that wait()
// synchronises with. The layouts MPI has and NCCL has not are NCCL groups:
// all-to-all(v) as point-to-point sends and receives, all-gather(v) as one
// broadcast per root, reduce-scatter(v) as one reduce per root. Every NCCL
// and CUDA call is checked; a failure stops the run naming the expression
// and the library's error string.
//
//===----------------------------------------------------------------------===//

#include "Comm/NCCL.h"

#include "CUDA/Kernels.h"
#include "Context.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

using namespace gnnrt;

namespace {

void checkNCCL(ncclResult_t status, const char *expr) {
  if (status != ncclSuccess)
    fatal(std::string("'") + expr + "' failed: " + ncclGetErrorString(status));
}
#define GNNRT_NCCL_CHECK(expr) checkNCCL((expr), #expr)

ncclRedOp_t opOf(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return ncclSum;
  case ReduceOp::Max:
    return ncclMax;
  case ReduceOp::Min:
    return ncclMin;
  }
  fatal("unknown reduction");
}

template <typename T>
ncclDataType_t typeOf();
template <>
ncclDataType_t typeOf<float>() {
  return ncclFloat32;
}
template <>
ncclDataType_t typeOf<int64_t>() {
  return ncclInt64;
}

/// The count of elements, checked non-negative.
size_t elements(const char *what, int64_t count) {
  if (count < 0)
    fatal(std::string(what) + ": negative count " + std::to_string(count));
  return static_cast<size_t>(count);
}

class NCCLCommunicator final : public Communicator {
public:
  NCCLCommunicator(std::shared_ptr<Communicator> bootstrap, int ordinal)
      : boot(std::move(bootstrap)) {
    GNNRT_CUDA_CHECK(cudaSetDevice(ordinal));
    // The id's 128 bytes as 16 int64 words through the bootstrap.
    static_assert(sizeof(ncclUniqueId) % sizeof(int64_t) == 0,
                  "ncclUniqueId is not a whole number of words");
    constexpr int64_t kWords = sizeof(ncclUniqueId) / sizeof(int64_t);
    ncclUniqueId id;
    std::memset(&id, 0, sizeof id);
    if (boot->rank() == 0)
      GNNRT_NCCL_CHECK(ncclGetUniqueId(&id));
    int64_t words[kWords];
    std::memcpy(words, &id, sizeof id);
    boot->broadcast(words, kWords, 0);
    std::memcpy(&id, words, sizeof id);
    GNNRT_NCCL_CHECK(ncclCommInitRank(&comm, boot->size(), id, boot->rank()));
    GNNRT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    GNNRT_CUDA_CHECK(
        cudaEventCreateWithFlags(&computeDone, cudaEventDisableTiming));
  }
  ~NCCLCommunicator() override {
    for (auto &[id, event] : pending)
      cudaEventDestroy(event);
    if (scratch)
      cudaFree(scratch);
    cudaEventDestroy(computeDone);
    cudaStreamDestroy(stream);
    ncclCommDestroy(comm);
  }

  const char *name() const override { return "nccl"; }
  int rank() const override { return boot->rank(); }
  int size() const override { return boot->size(); }
  bool machineRanks(int &first, int &count) override {
    return boot->machineRanks(first, count);
  }

protected:
  void doAllReduce(const float *send, float *recv, int64_t count,
                   ReduceOp op) override {
    reduceAll(send, recv, count, op);
    finish();
  }
  void doAllReduce(const int64_t *send, int64_t *recv, int64_t count,
                   ReduceOp op) override {
    reduceAll(send, recv, count, op);
    finish();
  }
  void doBroadcast(float *data, int64_t count, int root) override {
    broadcastAll(data, count, root);
    finish();
  }
  void doBroadcast(int64_t *data, int64_t count, int root) override {
    broadcastAll(data, count, root);
    finish();
  }
  void doReduceScatter(const float *send, float *recv, int64_t count,
                       ReduceOp op) override {
    const size_t n = elements("reduceScatter", count);
    afterCompute();
    // In place here means the whole input in recv and the rank's block at
    // its start; NCCL's in place has the block at rank() * count instead:
    // reduce into scratch and copy.
    float *out = send == recv ? scratchFloats(n) : recv;
    GNNRT_NCCL_CHECK(
        ncclReduceScatter(send, out, n, ncclFloat32, opOf(op), comm, stream));
    if (out != recv)
      GNNRT_CUDA_CHECK(cudaMemcpyAsync(recv, out, n * sizeof(float),
                                       cudaMemcpyDeviceToDevice, stream));
    finish();
  }
  void doAllGather(const float *send, float *recv, int64_t count) override {
    gatherAll(send, recv, count);
    finish();
  }
  void doAllGather(const int64_t *send, int64_t *recv, int64_t count) override {
    gatherAll(send, recv, count);
    finish();
  }
  void doAllGatherV(const float *send, int64_t count, float *recv,
                    const int64_t *counts, const int64_t *displs,
                    int64_t rowWidth) override {
    if (counts[rank()] != count || rowWidth < 1)
      fatal("allGatherV: " + std::to_string(count) + " rows but counts[" +
            std::to_string(rank()) + "] is " + std::to_string(counts[rank()]));
    afterCompute();
    // One broadcast per root, each into its block of recv.
    GNNRT_NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < size(); ++r) {
      float *block = recv + displs[r] * rowWidth;
      GNNRT_NCCL_CHECK(ncclBroadcast(r == rank() ? send : block, block,
                                     elements("allGatherV", counts[r]) *
                                         static_cast<size_t>(rowWidth),
                                     ncclFloat32, r, comm, stream));
    }
    GNNRT_NCCL_CHECK(ncclGroupEnd());
    finish();
  }
  void doReduceScatterV(const float *send, float *recv, const int64_t *counts,
                        ReduceOp op) override {
    afterCompute();
    // One reduce per root: rank r's block of the ranks' inputs to rank r.
    GNNRT_NCCL_CHECK(ncclGroupStart());
    size_t at = 0;
    for (int r = 0; r < size(); ++r) {
      const size_t n = elements("reduceScatterV", counts[r]);
      GNNRT_NCCL_CHECK(ncclReduce(send + at, r == rank() ? recv : nullptr, n,
                                  ncclFloat32, opOf(op), r, comm, stream));
      at += n;
    }
    GNNRT_NCCL_CHECK(ncclGroupEnd());
    finish();
  }
  void doAllToAllV(const float *send, const int64_t *sendCounts,
                   const int64_t *sendDispls, float *recv,
                   const int64_t *recvCounts, const int64_t *recvDispls,
                   int64_t rowWidth) override {
    exchange(send, sendCounts, sendDispls, recv, recvCounts, recvDispls,
             rowWidth);
    finish();
  }
  void doAllToAllV(const int64_t *send, const int64_t *sendCounts,
                   const int64_t *sendDispls, int64_t *recv,
                   const int64_t *recvCounts, const int64_t *recvDispls,
                   int64_t rowWidth) override {
    exchange(send, sendCounts, sendDispls, recv, recvCounts, recvDispls,
             rowWidth);
    finish();
  }
  Request doIAllReduce(const float *send, float *recv, int64_t count,
                       ReduceOp op) override {
    reduceAll(send, recv, count, op);
    return issue();
  }
  Request doIAllGather(const float *send, float *recv, int64_t count) override {
    gatherAll(send, recv, count);
    return issue();
  }
  Request doIBroadcast(float *data, int64_t count, int root) override {
    broadcastAll(data, count, root);
    return issue();
  }
  Request doIReduce(const float *send, float *recv, int64_t count, int root,
                    ReduceOp op) override {
    checkRoot("iReduce", root);
    afterCompute();
    GNNRT_NCCL_CHECK(ncclReduce(send, recv, elements("iReduce", count),
                                ncclFloat32, opOf(op), root, comm, stream));
    return issue();
  }
  Request doIAllToAllV(const float *send, const int64_t *sendCounts,
                       const int64_t *sendDispls, float *recv,
                       const int64_t *recvCounts, const int64_t *recvDispls,
                       int64_t rowWidth) override {
    exchange(send, sendCounts, sendDispls, recv, recvCounts, recvDispls,
             rowWidth);
    return issue();
  }
  void doWait(Request &request) override {
    if (request.isNull())
      return;
    auto it = pending.find(request.id);
    if (it == pending.end())
      fatal("wait: request " + std::to_string(request.id) +
            " is not pending on this communicator");
    GNNRT_CUDA_CHECK(cudaEventSynchronize(it->second));
    GNNRT_CUDA_CHECK(cudaEventDestroy(it->second));
    pending.erase(it);
    request = Request();
  }

private:
  /// The stream waits for the compute enqueued on the default stream.
  void afterCompute() {
    GNNRT_CUDA_CHECK(cudaEventRecord(computeDone, nullptr));
    GNNRT_CUDA_CHECK(cudaStreamWaitEvent(stream, computeDone, 0));
  }
  /// A blocking collective returns with its results in place.
  void finish() { GNNRT_CUDA_CHECK(cudaStreamSynchronize(stream)); }
  /// A non-blocking one: an event that wait() synchronises with.
  Request issue() {
    cudaEvent_t done;
    GNNRT_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    GNNRT_CUDA_CHECK(cudaEventRecord(done, stream));
    Request r{nextId++};
    pending[r.id] = done;
    return r;
  }
  void checkRoot(const char *what, int root) const {
    if (root < 0 || root >= size())
      fatal(std::string(what) + ": root " + std::to_string(root) +
            " outside the world of " + std::to_string(size()) + " processes");
  }
  float *scratchFloats(size_t n) {
    if (n > scratchSize) {
      if (scratch)
        GNNRT_CUDA_CHECK(cudaFree(scratch));
      GNNRT_CUDA_CHECK(
          cudaMalloc(&scratch, std::max<size_t>(n, 1) * sizeof(float)));
      scratchSize = n;
    }
    return static_cast<float *>(scratch);
  }
  template <typename T>
  void reduceAll(const T *send, T *recv, int64_t count, ReduceOp op) {
    afterCompute();
    GNNRT_NCCL_CHECK(ncclAllReduce(send, recv, elements("allReduce", count),
                                   typeOf<T>(), opOf(op), comm, stream));
  }
  template <typename T>
  void broadcastAll(T *data, int64_t count, int root) {
    checkRoot("broadcast", root);
    afterCompute();
    GNNRT_NCCL_CHECK(ncclBroadcast(data, data, elements("broadcast", count),
                                   typeOf<T>(), root, comm, stream));
  }
  template <typename T>
  void gatherAll(const T *send, T *recv, int64_t count) {
    // NCCL's in place is this interface's: the rank's block already at
    // recv + rank() * count.
    afterCompute();
    GNNRT_NCCL_CHECK(ncclAllGather(send, recv, elements("allGather", count),
                                   typeOf<T>(), comm, stream));
  }
  /// All-to-all(v) in rows of `rowWidth` elements: a send and a receive per
  /// other rank in one group, the own block a device copy.
  template <typename T>
  void exchange(const T *send, const int64_t *sendCounts,
                const int64_t *sendDispls, T *recv, const int64_t *recvCounts,
                const int64_t *recvDispls, int64_t rowWidth) {
    if (rowWidth < 1)
      fatal("allToAllV: rows of " + std::to_string(rowWidth) + " elements");
    const size_t w = static_cast<size_t>(rowWidth);
    afterCompute();
    const int me = rank();
    if (sendCounts[me] != recvCounts[me])
      fatal("allToAllV: the own block sends " + std::to_string(sendCounts[me]) +
            " rows and receives " + std::to_string(recvCounts[me]));
    if (sendCounts[me] > 0)
      GNNRT_CUDA_CHECK(cudaMemcpyAsync(
          recv + recvDispls[me] * rowWidth, send + sendDispls[me] * rowWidth,
          elements("allToAllV", sendCounts[me]) * w * sizeof(T),
          cudaMemcpyDeviceToDevice, stream));
    GNNRT_NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < size(); ++r) {
      if (r == me)
        continue;
      if (sendCounts[r] > 0)
        GNNRT_NCCL_CHECK(ncclSend(send + sendDispls[r] * rowWidth,
                                  elements("allToAllV", sendCounts[r]) * w,
                                  typeOf<T>(), r, comm, stream));
      if (recvCounts[r] > 0)
        GNNRT_NCCL_CHECK(ncclRecv(recv + recvDispls[r] * rowWidth,
                                  elements("allToAllV", recvCounts[r]) * w,
                                  typeOf<T>(), r, comm, stream));
    }
    GNNRT_NCCL_CHECK(ncclGroupEnd());
  }

  std::shared_ptr<Communicator> boot;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t computeDone = nullptr;
  void *scratch = nullptr;
  size_t scratchSize = 0;
  int64_t nextId = 1;
  std::unordered_map<int64_t, cudaEvent_t> pending;
};

} // namespace

int gnnrt::localRank(int rank) {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                           "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"}) {
    const char *value = std::getenv(name);
    if (!value || !*value)
      continue;
    char *end = nullptr;
    const long n = std::strtol(value, &end, 10);
    if (!*end && n >= 0)
      return static_cast<int>(n);
  }
  return rank;
}

std::unique_ptr<Communicator>
gnnrt::createNCCLCommunicator(std::shared_ptr<Communicator> bootstrap) {
  int devices = 0;
  GNNRT_CUDA_CHECK(cudaGetDeviceCount(&devices));
  if (devices < 1)
    fatal("the NCCL communicator needs a GPU and CUDA sees none");
  const int ordinal = localRank(bootstrap->rank()) % devices;
  return std::make_unique<NCCLCommunicator>(std::move(bootstrap), ordinal);
}
