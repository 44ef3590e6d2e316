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
// The non-blocking reduce (MG-GCN's reduce stages) is the communicator's
// own, on point-to-point messages: the other ranks send their pieces
// straight from their buffers, and the root receives them into two pieces'
// scratch per peer, adds them in rank order (the same sums on every run)
// and posts the next receives whenever it enters the communicator. OpenMPI's
// MPI_Ireduce (libnbc) held a temporary of the whole message per reduce in
// flight on the root and the tree's inner ranks (28 MB of a GAT rank's
// peak, docs/Distributed.md). GNNRT_MPI_IREDUCE=mpi goes back to it.
//
//===----------------------------------------------------------------------===//

#include "Communicator.h"
#include "Context.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
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

/// Whether iReduce is the communicator's own (GNNRT_MPI_IREDUCE unset or
/// "own") or MPI_Ireduce ("mpi", for comparisons); anything else is
/// refused.
bool ownReduceOfEnvironment() {
  const char *text = std::getenv("GNNRT_MPI_IREDUCE");
  if (!text || !*text || !std::strcmp(text, "own"))
    return true;
  if (!std::strcmp(text, "mpi"))
    return false;
  fatal(std::string("GNNRT_MPI_IREDUCE must be 'own' or 'mpi' but is '") +
        text + "'");
}

/// The elements of one piece of the own reduce: 256 KiB of floats, so that
/// a root's scratch is 512 KiB per peer and reduce in flight. (GAT on 4
/// processes at the arxiv shape, docs/benchmarks/distributed-gat-s48*: 1 MiB
/// pieces peaked 13 MiB higher per process, 64 KiB ones 4 MiB lower; the
/// time in collectives was the same.)
constexpr int64_t kReducePiece = int64_t(1) << 16;

/// dst[i] = x[0][i] op x[1][i] op ... op x[k-1][i], left to right, for
/// i < n; dst may be one of the x.
void combine(float *dst, const float *const *x, int k, int64_t n, ReduceOp op) {
  constexpr int64_t kBlock = 1024;
  float acc[kBlock];
  for (int64_t at = 0; at < n; at += kBlock) {
    const int64_t m = std::min(kBlock, n - at);
    std::copy(x[0] + at, x[0] + at + m, acc);
    for (int r = 1; r < k; ++r) {
      const float *y = x[r] + at;
      switch (op) {
      case ReduceOp::Sum:
        for (int64_t i = 0; i < m; ++i)
          acc[i] += y[i];
        break;
      case ReduceOp::Max:
        for (int64_t i = 0; i < m; ++i)
          acc[i] = std::max(acc[i], y[i]);
        break;
      case ReduceOp::Min:
        for (int64_t i = 0; i < m; ++i)
          acc[i] = std::min(acc[i], y[i]);
        break;
      }
    }
    std::copy(acc, acc + m, dst + at);
  }
}

class MPICommunicator final : public Communicator {
public:
  MPICommunicator() {
    threads = initialiseMPI();
    // A communicator of its own over the world's processes: two of them
    // (each numbering its reduces from 0) never match each other's
    // messages.
    GNNRT_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    GNNRT_MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    enlist();
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
    // So must they all reduce the same way: the own reduce where every
    // rank has it.
    int own = ownReduceOfEnvironment() ? 1 : 0;
    if (worldSize > 1)
      GNNRT_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &own, 1, MPI_INT, MPI_MIN,
                                    MPI_COMM_WORLD));
    ownReduce = own != 0;
  }
  ~MPICommunicator() override {
    // Collectives still in flight complete here, while their buffers are
    // alive: freeing a non-blocking collective's request is erroneous in
    // MPI (3.1, section 5.12), and MPI_Finalize would write into buffers
    // released meanwhile. Every rank issued them, so the wait ends.
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (finalised) {
      delist();
      return;
    }
    settle();
    delist();
    for (auto &[id, p] : pending)
      MPI_Waitall(static_cast<int>(p.requests.size()), p.requests.data(),
                  MPI_STATUSES_IGNORE);
    if (comm != MPI_COMM_WORLD)
      MPI_Comm_free(&comm);
  }

  /// A split of `parent` (doSplit): its own MPI communicator, the parent's
  /// thread support and pieces.
  MPICommunicator(const MPICommunicator &parent, MPI_Comm part)
      : comm(part), threads(parent.threads), piece(parent.piece),
        ownReduce(parent.ownReduce) {
    enlist();
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
    settle();
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
    settle();
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
    settle();
    std::vector<int> n, at;
    gatherCounts(count, counts, displs, "values", n, at);
    GNNRT_MPI_CHECK(MPI_Allgatherv(send, n[myRank], MPI_INT64_T, recv,
                                   n.data(), at.data(), MPI_INT64_T, comm));
  }
  void doReduceScatterV(const float *send, float *recv, const int64_t *counts,
                        ReduceOp op) override {
    settle();
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
    advanceReductions();
    std::vector<MPI_Request> requests;
    for (auto [at, n] : pieces("iAllReduce", count)) {
      GNNRT_MPI_CHECK(MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send + at,
                                     recv + at, n, MPI_FLOAT, opOf(op), comm,
                                     &requests.emplace_back()));
    }
    return issue(std::move(requests));
  }
  Request doIAllGather(const float *send, float *recv, int64_t count) override {
    advanceReductions();
    const int n = blockCount("iAllGather", count);
    MPI_Request request;
    GNNRT_MPI_CHECK(MPI_Iallgather(inPlaceGather(send, recv, count), n,
                                   MPI_FLOAT, recv, n, MPI_FLOAT, comm,
                                   &request));
    return issue(request);
  }
  Request doIReduce(const float *send, float *recv, int64_t count, int root,
                    ReduceOp op) override {
    advanceReductions(); // the stages' reduces move on at each stage
    if (root < 0 || root >= worldSize)
      fatal("iReduce: root " + std::to_string(root) + " outside the world of " +
            std::to_string(worldSize) + " processes");
    if (ownReduce)
      return reduceToRoot(send, recv, count, root, op);
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
    advanceReductions();
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
    advanceReductions();
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
    settle();
    MPI_Comm part;
    GNNRT_MPI_CHECK(MPI_Comm_split(comm, color, key, &part));
    return std::make_unique<MPICommunicator>(*this, part);
  }
  bool machineRanks(int &first, int &count) override {
    // Not counted: the machine's own communicator, not the training's.
    settle();
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
    advanceReductions();
  }
  void doWait(Request &request) override {
    if (request.isNull())
      return;
    auto it = pending.find(request.id);
    bool own = false, anyOwn = false;
    {
      std::lock_guard<std::recursive_mutex> lock(reduceMutex);
      own = reductions.count(request.id) != 0;
      for (MPICommunicator *c : everyCommunicator)
        anyOwn = anyOwn || !c->reductions.empty();
    }
    if (it == pending.end() && !own)
      fatal("wait: request " + std::to_string(request.id) +
            " is not pending on this communicator");
    if (!anyOwn) {
      GNNRT_MPI_CHECK(MPI_Waitall(static_cast<int>(it->second.requests.size()),
                                  it->second.requests.data(),
                                  MPI_STATUSES_IGNORE));
      pending.erase(it);
    } else {
      // While it waits, this rank also adds and receives the pieces of the
      // reduces it is the root of, on every communicator: a rank waiting
      // for its sends to reach one root may be the root another rank's
      // sends wait for.
      waitAdvancing(request.id);
    }
    request = Request();
  }

private:
  /// The root's side of an own reduce in flight: its pieces are
  /// received into two slots of scratch per peer (piece k into slot k % 2)
  /// and added in rank order, in piece order.
  struct Reduction {
    const float *own = nullptr; // the root's operand
    float *out = nullptr;       // the result (may be `own`)
    int64_t count = 0, pieceElements = 0, pieces = 0;
    int64_t added = 0; // pieces added so far
    ReduceOp op = ReduceOp::Sum;
    int tag = 0;
    std::unique_ptr<float[]> scratch;  // slots * (size - 1) pieces
    int64_t scratchElements = 0;       // its capacity
    std::vector<MPI_Request> receives; // slot * (size - 1) + peer index
  };

  /// iReduce on point-to-point messages (the file's header): each other
  /// rank sends its pieces to the root at once, from `send`; the root posts
  /// the receives of its first two pieces here and the others as pieces
  /// are added (advance).
  Request reduceToRoot(const float *send, float *recv, int64_t count, int root,
                       ReduceOp op) {
    if (count < 0)
      fatal("iReduce: negative count " + std::to_string(count));
    // Every rank numbers its reduces alike (collectives are issued in one
    // order): a reduce's messages carry its number, so the pieces of two
    // reduces to one root in flight never match each other's receives.
    const int tag = static_cast<int>(reduceCount++ % 32768);
    const int64_t each = std::min(piece, kReducePiece);
    const int64_t n = (count + each - 1) / each;
    Request r{nextId++};
    if (myRank != root) {
      std::vector<MPI_Request> sends;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t at = k * each;
        GNNRT_MPI_CHECK(
            MPI_Isend(send + at, static_cast<int>(std::min(each, count - at)),
                      MPI_FLOAT, root, tag, comm, &sends.emplace_back()));
      }
      pending[r.id] = {std::move(sends), {}};
      return r;
    }
    std::lock_guard<std::recursive_mutex> lock(reduceMutex);
    Reduction &red = reductions[r.id];
    red.own = send;
    red.out = recv;
    red.count = count;
    red.pieceElements = std::min(each, count); // the scratch's pieces
    red.pieces = n;
    red.op = op;
    red.tag = tag;
    const int peers = worldSize - 1;
    if (peers > 0 && n > 0) {
      // Two slots of pieces, one where there is one piece.
      const int64_t slots = std::min<int64_t>(n, 2);
      red.scratch =
          takeScratch(slots * peers * red.pieceElements, red.scratchElements);
      red.receives.assign(slots * peers, MPI_REQUEST_NULL);
      for (int64_t k = 0; k < slots; ++k)
        postPiece(red, k);
    } else if (send != recv) {
      std::copy(send, send + count, recv);
    }
    if (peers == 0 || n == 0)
      red.added = n;
    return r;
  }
  /// Posts the receives of piece `k` of `red` from every peer.
  void postPiece(Reduction &red, int64_t k) {
    const int peers = worldSize - 1;
    const int64_t at = k * red.pieceElements;
    const int n = static_cast<int>(std::min(red.pieceElements, red.count - at));
    const int slot = static_cast<int>(k % 2);
    for (int q = 0; q < peers; ++q) {
      const int source = q < myRank ? q : q + 1;
      float *into =
          red.scratch.get() + (int64_t(slot) * peers + q) * red.pieceElements;
      GNNRT_MPI_CHECK(MPI_Irecv(into, n, MPI_FLOAT, source, red.tag, comm,
                                &red.receives[slot * peers + q]));
    }
  }
  /// Adds the pieces of `red` that have arrived, in order, and posts the
  /// receives two pieces on; gives the scratch back once every piece is
  /// added. Returns whether every piece is.
  bool advance(Reduction &red) {
    const int peers = worldSize - 1;
    while (red.added < red.pieces) {
      const int64_t k = red.added;
      const int slot = static_cast<int>(k % 2);
      int done = 0;
      GNNRT_MPI_CHECK(MPI_Testall(peers, red.receives.data() + slot * peers,
                                  &done, MPI_STATUSES_IGNORE));
      if (!done)
        return false;
      const int64_t at = k * red.pieceElements;
      const int64_t n = std::min(red.pieceElements, red.count - at);
      operands.resize(worldSize);
      for (int r = 0; r < worldSize; ++r) {
        const int q = r < myRank ? r : r - 1;
        operands[r] = r == myRank
                          ? red.own + at
                          : red.scratch.get() +
                                (int64_t(slot) * peers + q) * red.pieceElements;
      }
      combine(red.out + at, operands.data(), worldSize, n, red.op);
      ++red.added;
      if (k + 2 < red.pieces)
        postPiece(red, k + 2);
    }
    giveScratch(std::move(red.scratch), red.scratchElements);
    return true;
  }
  /// advance of every own reduce this rank is the root of, on every
  /// communicator of the process: a rank waiting on one communicator may be
  /// the root that another communicator's sends wait for. Returns whether
  /// all are complete.
  static bool advanceReductions() {
    std::lock_guard<std::recursive_mutex> lock(reduceMutex);
    bool all = true;
    for (MPICommunicator *c : everyCommunicator)
      for (auto &[id, red] : c->reductions)
        all = c->advance(red) && all;
    return all;
  }
  /// Adds this communicator to everyCommunicator, or takes it out.
  void enlist() {
    std::lock_guard<std::recursive_mutex> lock(reduceMutex);
    everyCommunicator.push_back(this);
  }
  void delist() {
    std::lock_guard<std::recursive_mutex> lock(reduceMutex);
    everyCommunicator.erase(
        std::find(everyCommunicator.begin(), everyCommunicator.end(), this));
  }
  /// Returns when request `id` (in `pending` or `reductions`) is complete,
  /// and forgets it; adds the other reduces' pieces meanwhile.
  void waitAdvancing(int64_t id) {
    while (true) {
      bool done = true;
      if (auto it = pending.find(id); it != pending.end()) {
        int flag = 0;
        GNNRT_MPI_CHECK(MPI_Testall(
            static_cast<int>(it->second.requests.size()),
            it->second.requests.data(), &flag, MPI_STATUSES_IGNORE));
        if (flag)
          pending.erase(it);
        else
          done = false;
      }
      advanceReductions();
      {
        std::lock_guard<std::recursive_mutex> lock(reduceMutex);
        if (auto it = reductions.find(id); it != reductions.end()) {
          if (it->second.added == it->second.pieces)
            reductions.erase(it);
          else
            done = false;
        }
      }
      if (done)
        return;
    }
  }
  /// Adds every piece of the own reduces this rank is the root of, on every
  /// communicator (their requests stay, for wait): before a blocking
  /// collective, inside which it could not, while another rank may wait for
  /// them before it joins. (Its sends move on inside MPI.)
  static void settle() {
    while (!advanceReductions()) {
    }
  }
  /// Scratch of at least `elements` floats (kept from an earlier reduce
  /// where one is large enough), its capacity in `capacity`.
  std::unique_ptr<float[]> takeScratch(int64_t elements, int64_t &capacity) {
    auto it = spare.lower_bound(elements);
    if (it == spare.end()) {
      capacity = elements;
      return std::unique_ptr<float[]>(new float[elements]);
    }
    capacity = it->first;
    std::unique_ptr<float[]> p = std::move(it->second);
    spare.erase(it);
    return p;
  }
  /// Keeps the two largest scratch buffers for the next reduces.
  void giveScratch(std::unique_ptr<float[]> p, int64_t elements) {
    if (!p)
      return;
    spare.emplace(elements, std::move(p));
    while (spare.size() > 2)
      spare.erase(spare.begin());
  }

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
    settle();
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
    settle();
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
    settle();
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
    settle();
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
  /// The own reduces (ownReduce): their number so far, those this rank is
  /// the root of until waited for, the scratch kept for the next ones, and
  /// advance's pointers.
  bool ownReduce = true;
  int64_t reduceCount = 0;
  std::map<int64_t, Reduction> reductions;
  /// Every communicator of the process, and the lock of it and of each
  /// one's reductions and spare scratch (threads with communicators of
  /// their own, under MPI_THREAD_MULTIPLE, advance each other's).
  static inline std::recursive_mutex reduceMutex;
  static inline std::vector<MPICommunicator *> everyCommunicator;
  std::multimap<int64_t, std::unique_ptr<float[]>> spare;
  std::vector<const float *> operands;
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
