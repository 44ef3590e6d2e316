//===- SingleProcess.cpp - the communicator of a world of one -------------===//
//
// Rank 0 of 1: a reduction over one rank is its input, a gather or a scatter
// of one block is a copy, and every request is complete when issued (it is
// still handed out, and must be waited for, as with MPI).
//
//===----------------------------------------------------------------------===//

#include "Communicator.h"
#include "Context.h"

#include <cstring>
#include <string>
#include <unordered_set>

using namespace gnnrt;

namespace {

class SingleProcessCommunicator final : public Communicator {
public:
  const char *name() const override { return "single-process"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::unique_ptr<Communicator> doSplit(int color, int) override {
    if (color < 0)
      fatal("split: negative color " + std::to_string(color));
    return std::make_unique<SingleProcessCommunicator>();
  }

  void doAllReduce(const float *send, float *recv, int64_t count,
                   ReduceOp) override {
    copy("allReduce", send, recv, count);
  }
  void doAllReduce(const int64_t *send, int64_t *recv, int64_t count,
                   ReduceOp) override {
    copy("allReduce", send, recv, count);
  }
  void doBroadcast(float *, int64_t count, int root) override {
    checkBroadcast(count, root);
  }
  void doBroadcast(int64_t *, int64_t count, int root) override {
    checkBroadcast(count, root);
  }
  void doReduceScatter(const float *send, float *recv, int64_t count,
                       ReduceOp) override {
    // Rank 0's block is the first; in place, it is already there.
    copy("reduceScatter", send, recv, count);
  }
  void doAllGather(const float *send, float *recv, int64_t count) override {
    copy("allGather", send, recv, count);
  }
  void doAllGather(const int64_t *send, int64_t *recv, int64_t count) override {
    copy("allGather", send, recv, count);
  }
  void doAllGatherV(const float *send, int64_t count, float *recv,
                    const int64_t *counts, const int64_t *displs,
                    int64_t rowWidth) override {
    if (counts[0] != count || displs[0] < 0 || rowWidth < 1)
      fatal("allGatherV: counts, displacements and width disagree");
    copy("allGatherV", send, recv + displs[0] * rowWidth, count * rowWidth);
  }
  void doAllGatherV(const int64_t *send, int64_t count, int64_t *recv,
                    const int64_t *counts, const int64_t *displs) override {
    if (counts[0] != count || displs[0] < 0)
      fatal("allGatherV: counts and displacements disagree");
    copy("allGatherV", send, recv + displs[0], count);
  }
  void doReduceScatterV(const float *send, float *recv, const int64_t *counts,
                        ReduceOp) override {
    copy("reduceScatterV", send, recv, counts[0]);
  }
  void doAllToAllV(const float *send, const int64_t *sendCounts,
                   const int64_t *sendDispls, float *recv,
                   const int64_t *recvCounts, const int64_t *recvDispls,
                   int64_t rowWidth) override {
    exchange(send, sendCounts, sendDispls, recv, recvCounts, recvDispls,
             rowWidth);
  }
  void doAllToAllV(const int64_t *send, const int64_t *sendCounts,
                   const int64_t *sendDispls, int64_t *recv,
                   const int64_t *recvCounts, const int64_t *recvDispls,
                   int64_t rowWidth) override {
    exchange(send, sendCounts, sendDispls, recv, recvCounts, recvDispls,
             rowWidth);
  }
  Request doIAllReduce(const float *send, float *recv, int64_t count,
                       ReduceOp op) override {
    doAllReduce(send, recv, count, op);
    return issue();
  }
  Request doIAllGather(const float *send, float *recv, int64_t count) override {
    doAllGather(send, recv, count);
    return issue();
  }
  Request doIReduce(const float *send, float *recv, int64_t count, int root,
                    ReduceOp) override {
    checkBroadcast(count, root); // the same checks: count and root 0
    copy("iReduce", send, recv, count);
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
  Request doIBroadcast(float *, int64_t count, int root) override {
    checkBroadcast(count, root);
    return issue();
  }
  void doWait(Request &request) override {
    if (request.isNull())
      return;
    if (!pending.erase(request.id))
      fatal("wait: request " + std::to_string(request.id) +
            " is not pending on this communicator");
    request = Request();
  }

private:
  /// recv[0, count) = send[0, count), unless in place.
  template <typename T>
  static void copy(const char *what, const T *send, T *recv, int64_t count) {
    if (count < 0)
      fatal(std::string(what) + ": negative count " + std::to_string(count));
    if (count > 0 && send != recv)
      std::memmove(recv, send, static_cast<size_t>(count) * sizeof(T));
  }
  static void checkBroadcast(int64_t count, int root) {
    if (count < 0)
      fatal("broadcast: negative count " + std::to_string(count));
    if (root != 0)
      fatal("broadcast: root " + std::to_string(root) +
            " outside the world of 1 process");
  }
  Request issue() {
    Request r{nextId++};
    pending.insert(r.id);
    return r;
  }

  /// The own block, the only one in a world of one.
  template <typename T>
  void exchange(const T *send, const int64_t *sendCounts,
                const int64_t *sendDispls, T *recv, const int64_t *recvCounts,
                const int64_t *recvDispls, int64_t rowWidth) {
    if (sendCounts[0] != recvCounts[0] || sendCounts[0] < 0 ||
        sendDispls[0] < 0 || recvDispls[0] < 0 || rowWidth < 1)
      fatal("allToAllV: counts, displacements and width disagree");
    copy("allToAllV", send + sendDispls[0] * rowWidth,
         recv + recvDispls[0] * rowWidth, sendCounts[0] * rowWidth);
  }

  int64_t nextId = 1;
  std::unordered_set<int64_t> pending;
};

} // namespace

const char *gnnrt::collectiveName(Collective c) {
  switch (c) {
  case Collective::AllReduce:
    return "allreduce";
  case Collective::Broadcast:
    return "broadcast";
  case Collective::ReduceScatter:
    return "reduce_scatter";
  case Collective::AllGather:
    return "allgather";
  case Collective::AllToAll:
    return "alltoall";
  }
  return "unknown";
}

void Communicator::doAllGatherV(const int64_t *, int64_t, int64_t *,
                                const int64_t *, const int64_t *) {
  fatal(std::string("the ") + name() +
        " communicator exchanges device memory, not the host's int64 "
        "values of an all-gather");
}

std::unique_ptr<Communicator> Communicator::doSplit(int, int) {
  fatal(std::string("the ") + name() +
        " communicator cannot split its processes into groups yet");
}

std::unique_ptr<Communicator> gnnrt::createSingleProcessCommunicator() {
  return std::make_unique<SingleProcessCommunicator>();
}
