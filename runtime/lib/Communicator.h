//===- Communicator.h - the collectives of gnnrt ----------------*- C++ -*-===//
//
// A context's place in a world of processes that train one model together:
// its rank, the world's size and the collectives that data-parallel and
// graph-partitioned training need. The single-process communicator
// (Comm/SingleProcess.cpp) is the default; an MPI or NCCL one implements the
// same methods. Buffers are in the memory the communicator works on (host
// memory for MPI, the device's memory for NCCL) and follow MPI's rules: a
// collective is called by every rank in the same order, with the same counts,
// and distinct send and receive buffers do not overlap.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_COMMUNICATOR_H
#define GNNRT_COMMUNICATOR_H

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace gnnrt {

/// The reduction of allReduce and reduceScatter, element by element.
enum class ReduceOp { Sum, Max, Min };

/// A pending non-blocking collective, completed by Communicator::wait; null
/// once waited for (and as constructed).
struct Request {
  int64_t id = 0;
  bool isNull() const { return id == 0; }
};

/// The collectives, as the counters name them.
enum class Collective {
  AllReduce,
  Broadcast,
  ReduceScatter,
  AllGather,
  AllToAll
};
constexpr int kNumCollectives = 5;
/// "allreduce", "broadcast", "reduce_scatter", "allgather", "alltoall" (the
/// --json summary's keys).
const char *collectiveName(Collective c);

/// One collective's calls on this rank and the bytes this rank put into
/// them: its send buffer (allReduce and allGather: count elements;
/// reduceScatter: size() * count; broadcast: count, on every rank;
/// allToAllV: the rows it sends to the other ranks). The non-blocking forms
/// count as their blocking ones.
struct CollectiveCount {
  int64_t calls = 0;
  int64_t bytes = 0;
  /// Wall time inside the blocking calls (a non-blocking call's issue only),
  /// waiting for the other ranks included: the communication share of a
  /// step.
  double seconds = 0.0;
};

class Communicator {
public:
  virtual ~Communicator() = default;
  /// A short name for logs ("single-process", "mpi", "nccl").
  virtual const char *name() const = 0;
  /// This process's rank, in [0, size()).
  virtual int rank() const = 0;
  /// The number of processes.
  virtual int size() const = 0;
  /// Whether threads other than the one that created the communicator may
  /// call it, one at a time (MPI_THREAD_SERIALIZED).
  virtual bool anyThread() const { return true; }
  /// Whether two threads may be inside collectives of two communicators
  /// (this one and a split of it) at once (MPI_THREAD_MULTIPLE; with MPI,
  /// asked for where GNNRT_MPI_THREAD_MULTIPLE is set when it starts).
  virtual bool concurrentThreads() const { return false; }

  /// recv[i] = op over the ranks of their send[i], for i < count, on every
  /// rank. In place when send == recv.
  void allReduce(const float *send, float *recv, int64_t count, ReduceOp op) {
    Timed timed(record(Collective::AllReduce, count, sizeof(float)));
    doAllReduce(send, recv, count, op);
  }
  void allReduce(const int64_t *send, int64_t *recv, int64_t count,
                 ReduceOp op) {
    Timed timed(record(Collective::AllReduce, count, sizeof(int64_t)));
    doAllReduce(send, recv, count, op);
  }
  /// data[0, count) of rank `root` to every rank.
  void broadcast(float *data, int64_t count, int root) {
    Timed timed(record(Collective::Broadcast, count, sizeof(float)));
    doBroadcast(data, count, root);
  }
  void broadcast(int64_t *data, int64_t count, int root) {
    Timed timed(record(Collective::Broadcast, count, sizeof(int64_t)));
    doBroadcast(data, count, root);
  }
  /// Rank r receives recv[i] = op over the ranks of their
  /// send[r * count + i], for i < count (send has size() * count elements;
  /// MPI_Reduce_scatter_block). In place when send == recv: recv holds the
  /// size() * count elements on entry and its first count on return.
  void reduceScatter(const float *send, float *recv, int64_t count,
                     ReduceOp op) {
    Timed timed(
        record(Collective::ReduceScatter, count * size(), sizeof(float)));
    doReduceScatter(send, recv, count, op);
  }
  /// recv[r * count + i] = send[i] of rank r, for every rank r and i < count,
  /// on every rank (recv has size() * count elements). In place when
  /// send == recv + rank() * count: the rank's block is already there.
  void allGather(const float *send, float *recv, int64_t count) {
    Timed timed(record(Collective::AllGather, count, sizeof(float)));
    doAllGather(send, recv, count);
  }
  void allGather(const int64_t *send, int64_t *recv, int64_t count) {
    Timed timed(record(Collective::AllGather, count, sizeof(int64_t)));
    doAllGather(send, recv, count);
  }
  /// Blocks of different sizes (MPI_Allgatherv): rank r's `count` rows of
  /// `rowWidth` floats (counts[r] rows on every rank) land at
  /// recv + displs[r] * rowWidth, on every rank; counts and displs (in rows)
  /// have size() entries. Counted in floats.
  void allGatherV(const float *send, int64_t count, float *recv,
                  const int64_t *counts, const int64_t *displs,
                  int64_t rowWidth = 1) {
    Timed timed(record(Collective::AllGather, count * rowWidth, sizeof(float)));
    doAllGatherV(send, count, recv, counts, displs, rowWidth);
  }
  /// allGatherV of int64 values, in rows of one value: P³'s hash-partitioned
  /// structure pushes each hop's sampled in-edges so (Sampler.h,
  /// StructureShard). Counted with the all-gathers. A host-memory exchange:
  /// communicators of device memory (NCCL) refuse it.
  void allGatherV(const int64_t *send, int64_t count, int64_t *recv,
                  const int64_t *counts, const int64_t *displs) {
    Timed timed(record(Collective::AllGather, count, sizeof(int64_t)));
    doAllGatherV(send, count, recv, counts, displs);
  }
  /// allGatherV, not counted: the driver's reassembly of what it writes
  /// (feature shards of the parameters for --save-params), no part of
  /// training's communication.
  void allGatherVUncounted(const float *send, int64_t count, float *recv,
                           const int64_t *counts, const int64_t *displs,
                           int64_t rowWidth = 1) {
    doAllGatherV(send, count, recv, counts, displs, rowWidth);
  }
  /// Blocks of different sizes (MPI_Reduce_scatter): send has the sum of
  /// counts (size() entries) elements, in rank order; rank r receives
  /// recv[i] = op over the ranks of their send[counts[0] + ... +
  /// counts[r-1] + i], for i < counts[r].
  void reduceScatterV(const float *send, float *recv, const int64_t *counts,
                      ReduceOp op) {
    int64_t total = 0;
    for (int r = 0; r < size(); ++r)
      total += counts[r];
    Timed timed(record(Collective::ReduceScatter, total, sizeof(float)));
    doReduceScatterV(send, recv, counts, op);
  }
  /// Personalised exchange (MPI_Alltoallv, in rows of `rowWidth` elements):
  /// this rank sends sendCounts[r] rows from send + sendDispls[r] *
  /// rowWidth to rank r and receives recvCounts[r] rows from rank r at
  /// recv + recvDispls[r] * rowWidth; every array has size() entries, and
  /// rank r's sendCounts[q] must equal rank q's recvCounts[r]. Counted: the
  /// rows sent to the other ranks (the own block is a local copy).
  void allToAllV(const float *send, const int64_t *sendCounts,
                 const int64_t *sendDispls, float *recv,
                 const int64_t *recvCounts, const int64_t *recvDispls,
                 int64_t rowWidth = 1) {
    Timed timed(record(Collective::AllToAll,
                       sentToOthers(sendCounts) * rowWidth, sizeof(float)));
    doAllToAllV(send, sendCounts, sendDispls, recv, recvCounts, recvDispls,
                rowWidth);
  }
  void allToAllV(const int64_t *send, const int64_t *sendCounts,
                 const int64_t *sendDispls, int64_t *recv,
                 const int64_t *recvCounts, const int64_t *recvDispls,
                 int64_t rowWidth = 1) {
    Timed timed(record(Collective::AllToAll,
                       sentToOthers(sendCounts) * rowWidth, sizeof(int64_t)));
    doAllToAllV(send, sendCounts, sendDispls, recv, recvCounts, recvDispls,
                rowWidth);
  }
  /// allToAllV of floats without waiting (MPI_Ialltoallv): neither buffer
  /// may be touched until wait() on the returned request returns; the count
  /// and displacement arrays may (the communicator keeps copies). Counted as
  /// allToAllV. P³'s pipeline issues its syncs so (Pipeline.h).
  Request iAllToAllV(const float *send, const int64_t *sendCounts,
                     const int64_t *sendDispls, float *recv,
                     const int64_t *recvCounts, const int64_t *recvDispls,
                     int64_t rowWidth = 1) {
    Timed timed(record(Collective::AllToAll,
                       sentToOthers(sendCounts) * rowWidth, sizeof(float)));
    return doIAllToAllV(send, sendCounts, sendDispls, recv, recvCounts,
                        recvDispls, rowWidth);
  }
  /// allReduce and allGather without waiting: neither buffer may be touched
  /// until wait() on the returned request returns.
  Request iAllReduce(const float *send, float *recv, int64_t count,
                     ReduceOp op) {
    Timed timed(record(Collective::AllReduce, count, sizeof(float)));
    return doIAllReduce(send, recv, count, op);
  }
  Request iAllGather(const float *send, float *recv, int64_t count) {
    Timed timed(record(Collective::AllGather, count, sizeof(float)));
    return doIAllGather(send, recv, count);
  }
  /// recv[i] = op over the ranks of their send[i] on rank `root` only,
  /// without waiting (MPI_Ireduce; in place at the root when send == recv;
  /// recv is not read elsewhere). Counted with the reduce-scatters: a
  /// staged reduce-scatter is one per part.
  Request iReduce(const float *send, float *recv, int64_t count, int root,
                  ReduceOp op) {
    Timed timed(record(Collective::ReduceScatter, count, sizeof(float)));
    return doIReduce(send, recv, count, root, op);
  }
  /// broadcast without waiting (MPI_Ibcast): `data` is not to be touched
  /// until wait().
  Request iBroadcast(float *data, int64_t count, int root) {
    Timed timed(record(Collective::Broadcast, count, sizeof(float)));
    return doIBroadcast(data, count, root);
  }
  /// Returns when `request` is complete and makes it null; a null request
  /// returns at once. Stops the run on a request this communicator did not
  /// issue or already completed. The time spent waiting adds to
  /// waitSeconds() (a non-blocking collective's counter has its issue).
  void wait(Request &request) {
    const auto start = std::chrono::steady_clock::now();
    doWait(request);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    std::lock_guard<std::mutex> lock(tally->mutex);
    tally->waited += seconds;
  }
  /// The seconds spent in wait() so far (a split's included).
  double waitSeconds() const { return tally->waited; }
  /// Lets the pending non-blocking collectives move on without waiting for
  /// them (MPI progresses a request only inside MPI calls: P³'s pipeline
  /// calls this between the segments of its batches).
  virtual void progress() {}

  /// What this rank's collectives moved so far (the --json summary's
  /// "communication"), those of the communicators split from this one
  /// included.
  const CollectiveCount &counted(Collective c) const {
    return tally->counts[static_cast<int>(c)];
  }

  /// The processes whose `color` is this one's, ranked by `key` (ties by
  /// rank): a communicator of their own (MPI_Comm_split), whose collectives
  /// count in this one's counters. Every rank calls it, in the same order
  /// as the collectives. Stops the run where the communicator cannot split.
  std::unique_ptr<Communicator> split(int color, int key) {
    std::unique_ptr<Communicator> part = doSplit(color, key);
    part->tally = tally;
    return part;
  }
  /// The processes on this process's machine (MPI_Comm_split_type's shared
  /// memory) as ranks [first, first + count); false where they are not
  /// consecutive ranks. A communicator that cannot tell says every process
  /// shares one machine.
  virtual bool machineRanks(int &first, int &count) {
    first = 0;
    count = size();
    return true;
  }

protected:
  // The collectives, above, for each implementation.
  virtual void doAllReduce(const float *send, float *recv, int64_t count,
                           ReduceOp op) = 0;
  virtual void doAllReduce(const int64_t *send, int64_t *recv, int64_t count,
                           ReduceOp op) = 0;
  virtual void doBroadcast(float *data, int64_t count, int root) = 0;
  virtual void doBroadcast(int64_t *data, int64_t count, int root) = 0;
  virtual void doReduceScatter(const float *send, float *recv, int64_t count,
                               ReduceOp op) = 0;
  virtual void doAllGather(const float *send, float *recv, int64_t count) = 0;
  virtual void doAllGather(const int64_t *send, int64_t *recv,
                           int64_t count) = 0;
  virtual void doAllGatherV(const float *send, int64_t count, float *recv,
                            const int64_t *counts, const int64_t *displs,
                            int64_t rowWidth) = 0;
  virtual void doAllGatherV(const int64_t *send, int64_t count, int64_t *recv,
                            const int64_t *counts, const int64_t *displs);
  virtual void doReduceScatterV(const float *send, float *recv,
                                const int64_t *counts, ReduceOp op) = 0;
  virtual Request doIAllReduce(const float *send, float *recv, int64_t count,
                               ReduceOp op) = 0;
  virtual Request doIAllGather(const float *send, float *recv,
                               int64_t count) = 0;
  virtual Request doIBroadcast(float *data, int64_t count, int root) = 0;
  virtual void doWait(Request &request) = 0;
  virtual void doAllToAllV(const float *send, const int64_t *sendCounts,
                           const int64_t *sendDispls, float *recv,
                           const int64_t *recvCounts, const int64_t *recvDispls,
                           int64_t rowWidth) = 0;
  virtual void doAllToAllV(const int64_t *send, const int64_t *sendCounts,
                           const int64_t *sendDispls, int64_t *recv,
                           const int64_t *recvCounts, const int64_t *recvDispls,
                           int64_t rowWidth) = 0;
  virtual Request doIReduce(const float *send, float *recv, int64_t count,
                            int root, ReduceOp op) = 0;
  virtual Request doIAllToAllV(const float *send, const int64_t *sendCounts,
                               const int64_t *sendDispls, float *recv,
                               const int64_t *recvCounts,
                               const int64_t *recvDispls, int64_t rowWidth) = 0;
  /// split() without the counters (they are the parent's).
  virtual std::unique_ptr<Communicator> doSplit(int color, int key);

private:
  int64_t sentToOthers(const int64_t *sendCounts) {
    int64_t rows = 0;
    for (int r = 0; r < size(); ++r)
      if (r != rank())
        rows += sendCounts[r];
    return rows;
  }
  /// The counters, shared with the communicators split from this one (whose
  /// collectives another thread may call: concurrentThreads).
  struct Tally {
    CollectiveCount counts[kNumCollectives];
    double waited = 0.0;
    std::mutex mutex;
  };
  /// A collective's count, counted, and the lock of its tally.
  struct Counted {
    CollectiveCount &n;
    std::mutex &mutex;
  };
  Counted record(Collective c, int64_t elements, size_t elementBytes) {
    std::lock_guard<std::mutex> lock(tally->mutex);
    CollectiveCount &n = tally->counts[static_cast<int>(c)];
    ++n.calls;
    n.bytes +=
        std::max<int64_t>(elements, 0) * static_cast<int64_t>(elementBytes);
    return {n, tally->mutex};
  }
  /// Adds the time until its end to a count's seconds.
  class Timed {
  public:
    explicit Timed(Counted counted)
        : counted(counted), start(std::chrono::steady_clock::now()) {}
    ~Timed() {
      const double seconds = std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - start)
                                 .count();
      std::lock_guard<std::mutex> lock(counted.mutex);
      counted.n.seconds += seconds;
    }

  private:
    Counted counted;
    std::chrono::steady_clock::time_point start;
  };
  std::shared_ptr<Tally> tally = std::make_shared<Tally>();
};

/// A world of one process (rank 0): reductions are the identity, gathers
/// and scatters copies, requests complete when issued.
std::unique_ptr<Communicator> createSingleProcessCommunicator();

/// MPI_COMM_WORLD (Comm/MPI.cpp, in gnnrt_mpi where MPI was found):
/// initialises MPI unless the program did, finalises it at exit.
std::unique_ptr<Communicator> createMPICommunicator();

} // namespace gnnrt

#endif // GNNRT_COMMUNICATOR_H
