//===- MPI.cpp - the communicator of MPI_COMM_WORLD and its splits --------===//
//
// The collectives of Communicator.h on MPI (OpenMPI): MPI_Allreduce,
// MPI_Bcast, MPI_Reduce_scatter_block, MPI_Allgather and their non-blocking
// forms, on host memory. MPI is initialised by the first communicator
// (MPI_Init_thread, serialised: one thread at a time talks to MPI, which
// P³'s pipeline needs: each batch in flight runs on a thread of its own,
// one at a time) unless the program did, and finalised at exit.
// Errors return to the caller (MPI_ERRORS_RETURN) and stop the run naming
// the call and MPI's message. MPI counts are `int`: all-reduces, reduces and
// broadcasts, blocking or not, go in pieces of at most 2^30 elements (a
// non-blocking one is one request of several MPI requests); a gather or
// scatter block of more than INT_MAX elements per rank stops the run.
//
//===----------------------------------------------------------------------===//

#include "Communicator.h"
#include "Context.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

using namespace gnnrt;

namespace {

void checkMPI(int status, const char *expr) {
  if (status == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  fatal(std::string("'") + expr + "' failed: " + std::string(text, length));
}
#define GNNRT_MPI_CHECK(expr) checkMPI((expr), #expr)

MPI_Op opOf(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return MPI_SUM;
  case ReduceOp::Max:
    return MPI_MAX;
  case ReduceOp::Min:
    return MPI_MIN;
  }
  fatal("unknown reduction");
}

template <typename T>
MPI_Datatype typeOf();
template <>
MPI_Datatype typeOf<float>() {
  return MPI_FLOAT;
}
template <>
MPI_Datatype typeOf<int64_t>() {
  return MPI_INT64_T;
}

/// Initialises MPI once (unless the program did) and finalises it at exit.
/// Returns the thread support MPI provides.
int initialiseMPI() {
  static const int provided = [] {
    int initialised = 0, provided = MPI_THREAD_SINGLE;
    GNNRT_MPI_CHECK(MPI_Initialized(&initialised));
    if (initialised) {
      GNNRT_MPI_CHECK(MPI_Query_thread(&provided));
    } else {
      // MPI_THREAD_MULTIPLE only where asked for (--structure hash samples
      // on a thread of its own with a communicator of its own): it may cost
      // every call a lock.
      const char *multiple = std::getenv("GNNRT_MPI_THREAD_MULTIPLE");
      const int wanted = multiple && *multiple && std::strcmp(multiple, "0")
                             ? MPI_THREAD_MULTIPLE
                             : MPI_THREAD_SERIALIZED;
      GNNRT_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, wanted, &provided));
      std::atexit([] {
        int finalised = 0;
        MPI_Finalized(&finalised);
        if (!finalised)
          MPI_Finalize();
      });
    }
    GNNRT_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    return provided;
  }();
  return provided;
}

/// The pieces of at most this many elements that all-reduces, reduces and
/// broadcasts take (MPI counts are int); GNNRT_MPI_PIECE_ELEMENTS, an
/// integer in [1, 2^30], makes them smaller (tests cut small counts into
/// pieces with it).
int64_t pieceElementsOfEnvironment() {
  constexpr int64_t kMost = int64_t(1) << 30;
  const char *text = std::getenv("GNNRT_MPI_PIECE_ELEMENTS");
  if (!text || !*text)
    return kMost;
  char *end = nullptr;
  const long long n = std::strtoll(text, &end, 10);
  if (*end || n < 1 || n > kMost)
    fatal(std::string("GNNRT_MPI_PIECE_ELEMENTS must be an integer in [1, ") +
          std::to_string(kMost) + "] but is '" + text + "'");
  return static_cast<int64_t>(n);
}

class MPICommunicator final : public Communicator {
public:
  MPICommunicator() {
    threads = initialiseMPI();
    comm = MPI_COMM_WORLD;
    GNNRT_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &myRank));
    GNNRT_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &worldSize));
    // An error on one rank ends them all (the others would wait in their
    // next collective), naming the rank.
    if (worldSize > 1)
      setFatalHandler("rank " + std::to_string(myRank) + " of " +
                          std::to_string(worldSize) + ": ",
                      [](int code) { MPI_Abort(MPI_COMM_WORLD, code); });
    // Every rank must cut a collective into the same pieces: the least
    // size any rank was given.
    piece = pieceElementsOfEnvironment();
    if (worldSize > 1)
      GNNRT_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &piece, 1, MPI_INT64_T,
                                    MPI_MIN, MPI_COMM_WORLD));
  }
  ~MPICommunicator() override {
    // Collectives still in flight complete here, while their buffers are
    // alive: freeing a non-blocking collective's request is erroneous in
    // MPI (3.1, section 5.12), and MPI_Finalize would write into buffers
    // released meanwhile. Every rank issued them, so the wait ends.
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (finalised)
      return;
    for (auto &[id, p] : pending)
      MPI_Waitall(static_cast<int>(p.requests.size()), p.requests.data(),
                  MPI_STATUSES_IGNORE);
    if (comm != MPI_COMM_WORLD)
      MPI_Comm_free(&comm);
  }

  /// A split of `parent` (doSplit): its own MPI communicator, the parent's
  /// thread support and pieces.
  MPICommunicator(const MPICommunicator &parent, MPI_Comm part)
      : comm(part), threads(parent.threads), piece(parent.piece) {
    GNNRT_MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    GNNRT_MPI_CHECK(MPI_Comm_rank(comm, &myRank));
    GNNRT_MPI_CHECK(MPI_Comm_size(comm, &worldSize));
  }

  const char *name() const override { return "mpi"; }
  bool anyThread() const override { return threads >= MPI_THREAD_SERIALIZED; }
  bool concurrentThreads() const override {
    return threads >= MPI_THREAD_MULTIPLE;
  }
  int rank() const override { return myRank; }
  int size() const override { return worldSize; }

  void doAllReduce(const float *send, float *recv, int64_t count,
                   ReduceOp op) override {
    reduceAll(send, recv, count, op);
  }
  void doAllReduce(const int64_t *send, int64_t *recv, int64_t count,
                   ReduceOp op) override {
    reduceAll(send, recv, count, op);
  }
  void doBroadcast(float *data, int64_t count, int root) override {
    broadcastAll(data, count, root);
  }
  void doBroadcast(int64_t *data, int64_t count, int root) override {
    broadcastAll(data, count, root);
  }
  void doReduceScatter(const float *send, float *recv, int64_t count,
                       ReduceOp op) override {
    const int n = blockCount("reduceScatter", count);
    GNNRT_MPI_CHECK(MPI_Reduce_scatter_block(send == recv ? MPI_IN_PLACE : send,
                                             recv, n, MPI_FLOAT, opOf(op),
                                             comm));
  }
  void doAllGather(const float *send, float *recv, int64_t count) override {
    gatherAll(send, recv, count);
  }
  void doAllGather(const int64_t *send, int64_t *recv, int64_t count) override {
    gatherAll(send, recv, count);
  }
  /// allGatherV's `counts` and `displs` as MPI's ints in `n` and `at`,
  /// this process's `count` (of `unit`) checked against its entry.
  void gatherCounts(int64_t count, const int64_t *counts,
                    const int64_t *displs, const char *unit,
                    std::vector<int> &n, std::vector<int> &at) const {
    n.resize(worldSize);
    at.resize(worldSize);
    for (int r = 0; r < worldSize; ++r) {
      n[r] = blockCount("allGatherV", counts[r]);
      at[r] = blockCount("allGatherV", displs[r]);
    }
    if (counts[myRank] != count)
      fatal("allGatherV: " + std::to_string(count) + " " + unit +
            " but counts[" + std::to_string(myRank) + "] is " +
            std::to_string(counts[myRank]));
  }
  void doAllGatherV(const float *send, int64_t count, float *recv,
                    const int64_t *counts, const int64_t *displs,
                    int64_t rowWidth) override {
    // Counts and displacements in rows (a contiguous type of the row's
    // floats): a graph's rows overflow MPI's int counts of floats long
    // before its row count does.
    std::vector<int> n, at;
    gatherCounts(count, counts, displs, "rows", n, at);
    const int width = blockCount("allGatherV", rowWidth);
    if (width < 1)
      fatal("allGatherV: rows of " + std::to_string(rowWidth) + " floats");
    MPI_Datatype row;
    GNNRT_MPI_CHECK(MPI_Type_contiguous(width, MPI_FLOAT, &row));
    GNNRT_MPI_CHECK(MPI_Type_commit(&row));
    GNNRT_MPI_CHECK(MPI_Allgatherv(send, n[myRank], row, recv, n.data(),
                                   at.data(), row, comm));
    GNNRT_MPI_CHECK(MPI_Type_free(&row));
  }
  void doAllGatherV(const int64_t *send, int64_t count, int64_t *recv,
                    const int64_t *counts, const int64_t *displs) override {
    std::vector<int> n, at;
    gatherCounts(count, counts, displs, "values", n, at);
    GNNRT_MPI_CHECK(MPI_Allgatherv(send, n[myRank], MPI_INT64_T, recv,
                                   n.data(), at.data(), MPI_INT64_T, comm));
  }
  void doReduceScatterV(const float *send, float *recv, const int64_t *counts,
                        ReduceOp op) override {
    std::vector<int> n(worldSize);
    for (int r = 0; r < worldSize; ++r)
      n[r] = blockCount("reduceScatterV", counts[r]);
    GNNRT_MPI_CHECK(
        MPI_Reduce_scatter(send, recv, n.data(), MPI_FLOAT, opOf(op), comm));
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
    std::vector<MPI_Request> requests;
    for (auto [at, n] : pieces("iAllReduce", count)) {
      GNNRT_MPI_CHECK(MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send + at,
                                     recv + at, n, MPI_FLOAT, opOf(op), comm,
                                     &requests.emplace_back()));
    }
    return issue(std::move(requests));
  }
  Request doIAllGather(const float *send, float *recv, int64_t count) override {
    const int n = blockCount("iAllGather", count);
    MPI_Request request;
    GNNRT_MPI_CHECK(MPI_Iallgather(inPlaceGather(send, recv, count), n,
                                   MPI_FLOAT, recv, n, MPI_FLOAT, comm,
                                   &request));
    return issue(request);
  }
  Request doIReduce(const float *send, float *recv, int64_t count, int root,
                    ReduceOp op) override {
    if (root < 0 || root >= worldSize)
      fatal("iReduce: root " + std::to_string(root) + " outside the world of " +
            std::to_string(worldSize) + " processes");
    std::vector<MPI_Request> requests;
    for (auto [at, n] : pieces("iReduce", count)) {
      GNNRT_MPI_CHECK(
          MPI_Ireduce(send == recv && myRank == root ? MPI_IN_PLACE : send + at,
                      recv ? recv + at : recv, n, MPI_FLOAT, opOf(op), root,
                      comm, &requests.emplace_back()));
    }
    return issue(std::move(requests));
  }
  Request doIBroadcast(float *data, int64_t count, int root) override {
    if (root < 0 || root >= worldSize)
      fatal("iBroadcast: root " + std::to_string(root) +
            " outside the world of " + std::to_string(worldSize) +
            " processes");
    std::vector<MPI_Request> requests;
    for (auto [at, n] : pieces("iBroadcast", count)) {
      GNNRT_MPI_CHECK(MPI_Ibcast(data + at, n, MPI_FLOAT, root, comm,
                                 &requests.emplace_back()));
    }
    return issue(std::move(requests));
  }
  Request doIAllToAllV(const float *send, const int64_t *sendCounts,
                       const int64_t *sendDispls, float *recv,
                       const int64_t *recvCounts, const int64_t *recvDispls,
                       int64_t rowWidth) override {
    // The count arrays must outlive the request: kept with it. A datatype
    // freed while an operation uses it stays valid for that operation.
    std::vector<int> counts;
    MPI_Datatype row = exchangeLayout<float>(sendCounts, sendDispls, recvCounts,
                                             recvDispls, rowWidth, counts);
    const int n = worldSize;
    MPI_Request request;
    GNNRT_MPI_CHECK(MPI_Ialltoallv(send, counts.data(), counts.data() + n, row,
                                   recv, counts.data() + 2 * n,
                                   counts.data() + 3 * n, row, comm, &request));
    GNNRT_MPI_CHECK(MPI_Type_free(&row));
    return issue(request, std::move(counts));
  }
  std::unique_ptr<Communicator> doSplit(int color, int key) override {
    if (color < 0)
      fatal("split: negative color " + std::to_string(color));
    MPI_Comm part;
    GNNRT_MPI_CHECK(MPI_Comm_split(comm, color, key, &part));
    return std::make_unique<MPICommunicator>(*this, part);
  }
  bool machineRanks(int &first, int &count) override {
    // Not counted: the machine's own communicator, not the training's.
    MPI_Comm machine;
    GNNRT_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, myRank,
                                        MPI_INFO_NULL, &machine));
    int ends[2] = {-myRank, myRank};
    GNNRT_MPI_CHECK(MPI_Comm_size(machine, &count));
    GNNRT_MPI_CHECK(
        MPI_Allreduce(MPI_IN_PLACE, ends, 2, MPI_INT, MPI_MAX, machine));
    GNNRT_MPI_CHECK(MPI_Comm_free(&machine));
    first = -ends[0];
    return ends[1] - first + 1 == count;
  }
  void progress() override {
    // A request MPI_Test completes becomes MPI_REQUEST_NULL, which the wait
    // then returns at once for.
    for (auto &[id, p] : pending)
      for (MPI_Request &r : p.requests) {
        int done = 0;
        GNNRT_MPI_CHECK(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
      }
  }
  void doWait(Request &request) override {
    if (request.isNull())
      return;
    auto it = pending.find(request.id);
    if (it == pending.end())
      fatal("wait: request " + std::to_string(request.id) +
            " is not pending on this communicator");
    GNNRT_MPI_CHECK(MPI_Waitall(static_cast<int>(it->second.requests.size()),
                                it->second.requests.data(),
                                MPI_STATUSES_IGNORE));
    pending.erase(it);
    request = Request();
  }

private:
  /// `count` as an MPI count: non-negative and at most INT_MAX.
  static int blockCount(const char *what, int64_t count) {
    if (count < 0)
      fatal(std::string(what) + ": negative count " + std::to_string(count));
    if (count > INT_MAX)
      fatal(std::string(what) + ": " + std::to_string(count) +
            " elements per rank, more than MPI's " + std::to_string(INT_MAX));
    return static_cast<int>(count);
  }
  /// MPI_Alltoallv in rows (a contiguous type of the row's elements), so
  /// that counts and displacements of rows fit MPI's ints.
  template <typename T>
  void exchange(const T *send, const int64_t *sendCounts,
                const int64_t *sendDispls, T *recv, const int64_t *recvCounts,
                const int64_t *recvDispls, int64_t rowWidth) {
    std::vector<int> counts;
    MPI_Datatype row = exchangeLayout<T>(sendCounts, sendDispls, recvCounts,
                                         recvDispls, rowWidth, counts);
    const int n = worldSize;
    GNNRT_MPI_CHECK(MPI_Alltoallv(send, counts.data(), counts.data() + n, row,
                                  recv, counts.data() + 2 * n,
                                  counts.data() + 3 * n, row, comm));
    GNNRT_MPI_CHECK(MPI_Type_free(&row));
  }
  /// An all-to-all's counts and displacements as MPI's ints, in `counts`
  /// (send counts, send displacements, receive counts, receive
  /// displacements, size() each), and its row type (committed; the caller
  /// frees it).
  template <typename T>
  MPI_Datatype
  exchangeLayout(const int64_t *sendCounts, const int64_t *sendDispls,
                 const int64_t *recvCounts, const int64_t *recvDispls,
                 int64_t rowWidth, std::vector<int> &counts) {
    const int n = worldSize;
    counts.resize(4 * n);
    for (int r = 0; r < n; ++r) {
      counts[r] = blockCount("allToAllV", sendCounts[r]);
      counts[n + r] = blockCount("allToAllV", sendDispls[r]);
      counts[2 * n + r] = blockCount("allToAllV", recvCounts[r]);
      counts[3 * n + r] = blockCount("allToAllV", recvDispls[r]);
    }
    const int width = blockCount("allToAllV", rowWidth);
    if (width < 1)
      fatal("allToAllV: rows of " + std::to_string(rowWidth) + " elements");
    MPI_Datatype row;
    GNNRT_MPI_CHECK(MPI_Type_contiguous(width, typeOf<T>(), &row));
    GNNRT_MPI_CHECK(MPI_Type_commit(&row));
    return row;
  }
  template <typename T>
  void reduceAll(const T *send, T *recv, int64_t count, ReduceOp op) {
    if (count < 0)
      fatal("allReduce: negative count " + std::to_string(count));
    for (int64_t at = 0; at < count; at += piece) {
      const int n = static_cast<int>(std::min(piece, count - at));
      GNNRT_MPI_CHECK(MPI_Allreduce(send == recv ? MPI_IN_PLACE : send + at,
                                    recv + at, n, typeOf<T>(), opOf(op), comm));
    }
  }
  template <typename T>
  void broadcastAll(T *data, int64_t count, int root) {
    if (count < 0)
      fatal("broadcast: negative count " + std::to_string(count));
    if (root < 0 || root >= worldSize)
      fatal("broadcast: root " + std::to_string(root) +
            " outside the world of " + std::to_string(worldSize) +
            " processes");
    for (int64_t at = 0; at < count; at += piece) {
      const int n = static_cast<int>(std::min(piece, count - at));
      GNNRT_MPI_CHECK(MPI_Bcast(data + at, n, typeOf<T>(), root, comm));
    }
  }
  /// MPI_IN_PLACE where the rank's block already is in recv.
  template <typename T>
  const void *inPlaceGather(const T *send, T *recv, int64_t count) const {
    return send == recv + static_cast<int64_t>(myRank) * count
               ? MPI_IN_PLACE
               : static_cast<const void *>(send);
  }
  template <typename T>
  void gatherAll(const T *send, T *recv, int64_t count) {
    const int n = blockCount("allGather", count);
    GNNRT_MPI_CHECK(MPI_Allgather(inPlaceGather(send, recv, count), n,
                                  typeOf<T>(), recv, n, typeOf<T>(), comm));
  }
  Request issue(MPI_Request request, std::vector<int> counts = {}) {
    return issue(std::vector<MPI_Request>{request}, std::move(counts));
  }
  Request issue(std::vector<MPI_Request> requests,
                std::vector<int> counts = {}) {
    Request r{nextId++};
    pending[r.id] = {std::move(requests), std::move(counts)};
    return r;
  }
  /// [0, count) as pieces (first element, count) of at most `piece`
  /// (one empty piece for count 0: every rank still calls MPI).
  std::vector<std::pair<int64_t, int>> pieces(const char *what,
                                              int64_t count) const {
    if (count < 0)
      fatal(std::string(what) + ": negative count " + std::to_string(count));
    std::vector<std::pair<int64_t, int>> out;
    for (int64_t at = 0; at == 0 || at < count; at += piece)
      out.emplace_back(at, static_cast<int>(std::min(piece, count - at)));
    return out;
  }

  /// A request not waited for yet (its MPI requests, one per piece), and the
  /// arrays MPI reads until then.
  struct Pending {
    std::vector<MPI_Request> requests;
    std::vector<int> counts;
  };
  /// MPI_COMM_WORLD, or a split of it.
  MPI_Comm comm = MPI_COMM_NULL;
  int myRank = 0, worldSize = 1, threads = MPI_THREAD_SINGLE;
  int64_t piece = 0; // elements per piece (pieceElementsOfEnvironment)
  int64_t nextId = 1;
  std::unordered_map<int64_t, Pending> pending;
};

} // namespace

std::unique_ptr<Communicator> gnnrt::createMPICommunicator() {
  return std::make_unique<MPICommunicator>();
}

/// The driver's hook (gnnrt_main.cpp declares it weak): gnn-compile links
/// this archive with -u gnnrtCreateMPICommunicator where MPI was found.
extern "C" gnnrt::Communicator *gnnrtCreateMPICommunicator() {
  return gnnrt::createMPICommunicator().release();
}
