//===- MPICommunicatorTest.cpp - the MPI communicator ---------------------===//
//
// Every collective of the MPI communicator against the values it must give,
// computed on each rank from the data every rank makes (integer-valued
// floats, so sums are exact in any order). Runs as one process under lit's
// GoogleTest format and as 2, 3 and 4 under mpirun
// (test/Runtime/mpi-communicator.test); every rank runs the same tests in the
// same order, as MPI requires.
//
//===----------------------------------------------------------------------===//

#include "AllToAllCase.h"
#include "Communicator.h"
#include "FeaturePull.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace gnnrt;

namespace {

constexpr int64_t kCounts[] = {0, 1, 1000, 4097};

/// A session directory of this process's own for MPI started alone (lit's
/// GoogleTest format runs these tests as one process, beside other tests'
/// mpiruns): MPI still starts an orted, whose directory under the shared
/// /tmp/ompi.<host>.<uid> another job's end may remove (test/lit.cfg.py).
/// It goes under $TMPDIR, which lit removes after the run (the orted
/// empties it after this process ends).
void ownSessionDirectory() {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") ||
      std::getenv("OMPI_MCA_orte_tmpdir_base"))
    return;
  const char *parent = std::getenv("TMPDIR");
  static std::string dir;
  dir = std::string(parent && *parent ? parent : "/tmp") +
        "/gnnrt-mpi-test-XXXXXX";
  if (mkdtemp(dir.data()))
    setenv("OMPI_MCA_orte_tmpdir_base", dir.c_str(), 0);
}

Communicator &world() {
  static std::unique_ptr<Communicator> comm = [] {
    ownSessionDirectory();
    return createMPICommunicator();
  }();
  return *comm;
}

/// The elements of the reduces in flight: 600,000 floats, ten pieces of the
/// own reduce sent by rendezvous; with GNNRT_MPI_PIECE_ELEMENTS, four
/// pieces of that size.
int64_t reduceCount() {
  const char *piece = std::getenv("GNNRT_MPI_PIECE_ELEMENTS");
  return piece && *piece ? 3 * std::atoll(piece) + 1 : int64_t(600000);
}

/// Rank r's element i: a small integer, distinct across ranks.
float valueOf(int r, int64_t i) {
  return static_cast<float>((r + 1) * (i % 7) - 3 * r + (i % 5));
}

} // namespace

TEST(RuntimeMPICommunicator, RanksMakeTheWorld) {
  Communicator &comm = world();
  EXPECT_STREQ(comm.name(), "mpi");
  ASSERT_GE(comm.rank(), 0);
  ASSERT_LT(comm.rank(), comm.size());
  int64_t r = comm.rank(), sum = 0;
  comm.allReduce(&r, &sum, 1, ReduceOp::Sum);
  EXPECT_EQ(sum, int64_t(comm.size()) * (comm.size() - 1) / 2);
}

TEST(RuntimeMPICommunicator, AllReduceMatchesTheRanksData) {
  Communicator &comm = world();
  const int n = comm.size(), me = comm.rank();
  for (int64_t count : kCounts)
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min})
      for (bool inPlace : {false, true}) {
        std::vector<float> send(count), recv(count, -1.0f), want(count);
        std::vector<int64_t> sendI(count), recvI(count, -1), wantI(count);
        for (int64_t i = 0; i < count; ++i) {
          send[i] = valueOf(me, i);
          sendI[i] = static_cast<int64_t>(valueOf(me, i)) << 33;
          for (int q = 0; q < n; ++q) {
            float v = valueOf(q, i);
            int64_t vi = static_cast<int64_t>(v) << 33;
            if (q == 0) {
              want[i] = v;
              wantI[i] = vi;
            } else if (op == ReduceOp::Sum) {
              want[i] += v;
              wantI[i] += vi;
            } else if (op == ReduceOp::Max) {
              want[i] = std::max(want[i], v);
              wantI[i] = std::max(wantI[i], vi);
            } else {
              want[i] = std::min(want[i], v);
              wantI[i] = std::min(wantI[i], vi);
            }
          }
        }
        if (inPlace) {
          recv = send;
          recvI = sendI;
          comm.allReduce(recv.data(), recv.data(), count, op);
          comm.allReduce(recvI.data(), recvI.data(), count, op);
        } else {
          comm.allReduce(send.data(), recv.data(), count, op);
          comm.allReduce(sendI.data(), recvI.data(), count, op);
        }
        ASSERT_EQ(recv, want) << "count " << count << " in place " << inPlace;
        ASSERT_EQ(recvI, wantI) << "count " << count;
      }
}

TEST(RuntimeMPICommunicator, BroadcastFromEveryRoot) {
  Communicator &comm = world();
  for (int root = 0; root < comm.size(); ++root) {
    std::vector<float> data(1000), want(1000);
    std::vector<int64_t> dataI(3), wantI(3);
    for (int64_t i = 0; i < 1000; ++i) {
      data[i] = valueOf(comm.rank(), i);
      want[i] = valueOf(root, i);
    }
    for (int64_t i = 0; i < 3; ++i) {
      dataI[i] = comm.rank() * 1000 + i;
      wantI[i] = root * 1000 + i;
    }
    comm.broadcast(data.data(), 1000, root);
    comm.broadcast(dataI.data(), 3, root);
    ASSERT_EQ(data, want) << "root " << root;
    ASSERT_EQ(dataI, wantI) << "root " << root;
  }
}

TEST(RuntimeMPICommunicator, ReduceScatterGivesEachRankItsBlock) {
  Communicator &comm = world();
  const int n = comm.size(), me = comm.rank();
  for (int64_t count : kCounts)
    for (bool inPlace : {false, true}) {
      std::vector<float> send(n * count), recv(inPlace ? n * count : count);
      for (int64_t i = 0; i < n * count; ++i)
        send[i] = valueOf(me, i);
      std::vector<float> want(count, 0.0f);
      for (int64_t i = 0; i < count; ++i)
        for (int q = 0; q < n; ++q)
          want[i] += valueOf(q, me * count + i);
      const CollectiveCount before = comm.counted(Collective::ReduceScatter);
      if (inPlace) {
        recv = send;
        comm.reduceScatter(recv.data(), recv.data(), count, ReduceOp::Sum);
        recv.resize(count);
      } else {
        comm.reduceScatter(send.data(), recv.data(), count, ReduceOp::Sum);
      }
      ASSERT_EQ(recv, want) << "count " << count << " in place " << inPlace;
      // The counters: one call, this rank's send buffer (all n blocks).
      const CollectiveCount after = comm.counted(Collective::ReduceScatter);
      EXPECT_EQ(after.calls, before.calls + 1);
      EXPECT_EQ(after.bytes, before.bytes + n * count * 4);
    }
}

TEST(RuntimeMPICommunicator, AllGatherAndNonBlockingCollectives) {
  Communicator &comm = world();
  const int n = comm.size(), me = comm.rank();
  for (int64_t count : kCounts) {
    std::vector<float> send(count), want(n * count);
    std::vector<int64_t> sendI(count), wantI(n * count);
    for (int64_t i = 0; i < count; ++i) {
      send[i] = valueOf(me, i);
      sendI[i] = me * 100000 + i;
    }
    for (int q = 0; q < n; ++q)
      for (int64_t i = 0; i < count; ++i) {
        want[q * count + i] = valueOf(q, i);
        wantI[q * count + i] = q * 100000 + i;
      }
    std::vector<float> recv(n * count, -1.0f);
    std::vector<int64_t> recvI(n * count, -1);
    comm.allGather(send.data(), recv.data(), count);
    comm.allGather(sendI.data(), recvI.data(), count);
    ASSERT_EQ(recv, want) << "count " << count;
    ASSERT_EQ(recvI, wantI) << "count " << count;
    // In place: the rank's block is already in recv.
    std::vector<float> inPlace(n * count, -1.0f);
    std::copy(send.begin(), send.end(), inPlace.begin() + me * count);
    comm.allGather(inPlace.data() + me * count, inPlace.data(), count);
    ASSERT_EQ(inPlace, want) << "in place, count " << count;
    // Non-blocking: done by wait, the requests null afterwards.
    std::vector<float> gathered(n * count, -1.0f), summed(count, -1.0f);
    Request g = comm.iAllGather(send.data(), gathered.data(), count);
    Request s =
        comm.iAllReduce(send.data(), summed.data(), count, ReduceOp::Sum);
    comm.wait(s);
    comm.wait(g);
    EXPECT_TRUE(g.isNull() && s.isNull());
    comm.wait(g); // a null request returns at once
    ASSERT_EQ(gathered, want);
    std::vector<float> wantSum(count, 0.0f);
    for (int64_t i = 0; i < count; ++i)
      for (int q = 0; q < n; ++q)
        wantSum[i] += valueOf(q, i);
    ASSERT_EQ(summed, wantSum);
  }
}

// A personalised exchange: rank r sends (r + q) % 3 + q rows of 2 floats to
// rank q, and ids as int64; each rank checks what it received from every
// rank and that the counter holds the rows it sent to the others.
TEST(RuntimeMPICommunicator, AllToAllVDeliversEachPairsRows) {
  Communicator &comm = world();
  const AllToAllCase c(comm.rank(), comm.size());
  std::vector<float> recv(c.want.size(), -1.0f);
  std::vector<int64_t> gotIds(c.wantIds.size(), -1);
  const CollectiveCount before = comm.counted(Collective::AllToAll);
  comm.allToAllV(c.send.data(), c.sc.data(), c.sd.data(), recv.data(),
                 c.rc.data(), c.rd.data(), AllToAllCase::kWidth);
  comm.allToAllV(c.ids.data(), c.sc.data(), c.sd.data(), gotIds.data(),
                 c.rc.data(), c.rd.data());
  EXPECT_EQ(recv, c.want);
  EXPECT_EQ(gotIds, c.wantIds);
  const CollectiveCount after = comm.counted(Collective::AllToAll);
  EXPECT_EQ(after.calls - before.calls, 2);
  EXPECT_EQ(after.bytes - before.bytes, c.toOthers * (2 * 4 + 8));
}

// P³'s pipeline: two exchanges in flight at once, a blocking collective
// issued between them, completed out of order; the count arrays changed
// after the issue (the communicator keeps its copies).
TEST(RuntimeMPICommunicator, NonBlockingAllToAllV) {
  Communicator &comm = world();
  const int n = comm.size(), me = comm.rank();
  auto exchange = [&](int salt, std::vector<int64_t>(&layout)[4],
                      std::vector<float> &send, std::vector<float> &recv) {
    for (auto &v : layout)
      v.assign(n, 0);
    int64_t sent = 0, received = 0;
    for (int q = 0; q < n; ++q) {
      layout[0][q] = (me + q + salt) % 3 + 1;
      layout[1][q] = sent;
      sent += layout[0][q];
      layout[2][q] = (q + me + salt) % 3 + 1;
      layout[3][q] = received;
      received += layout[2][q];
    }
    send.resize(3 * sent);
    recv.assign(3 * received, -1.0f);
    for (int q = 0; q < n; ++q)
      for (int64_t k = 0; k < 3 * layout[0][q]; ++k)
        send[3 * layout[1][q] + k] =
            static_cast<float>(10000 * salt + 1000 * me + 100 * q + k);
    return comm.iAllToAllV(send.data(), layout[0].data(), layout[1].data(),
                           recv.data(), layout[2].data(), layout[3].data(), 3);
  };
  std::vector<int64_t> first[4], second[4];
  std::vector<float> sendA, recvA, sendB, recvB;
  const CollectiveCount before = comm.counted(Collective::AllToAll);
  Request a = exchange(1, first, sendA, recvA);
  float one = 1.0f, ranks = 0.0f;
  comm.allReduce(&one, &ranks, 1, ReduceOp::Sum);
  Request b = exchange(2, second, sendB, recvB);
  std::vector<int64_t> kept[4];
  for (int i = 0; i < 4; ++i) {
    kept[i] = first[i];
    std::fill(first[i].begin(), first[i].end(), 99);
  }
  comm.wait(b);
  comm.wait(a);
  EXPECT_TRUE(a.isNull() && b.isNull());
  EXPECT_EQ(ranks, static_cast<float>(n));
  auto check = [&](int salt, const std::vector<int64_t>(&layout)[4],
                   const std::vector<float> &recv) {
    for (int q = 0; q < n; ++q)
      for (int64_t k = 0; k < 3 * layout[2][q]; ++k)
        ASSERT_EQ(recv[3 * layout[3][q] + k],
                  static_cast<float>(10000 * salt + 1000 * q + 100 * me + k));
  };
  check(1, kept, recvA);
  check(2, second, recvB);
  const CollectiveCount after = comm.counted(Collective::AllToAll);
  int64_t toOthers = 0;
  for (int q = 0; q < n; ++q)
    if (q != me)
      toOthers += kept[0][q] + second[0][q];
  EXPECT_EQ(after.calls - before.calls, 2);
  EXPECT_EQ(after.bytes - before.bytes, toOthers * 3 * 4);
}

// Row partitioning's collectives: blocks of different sizes (the ranks'
// row ranges), and the broadcasts of its stages.
TEST(RuntimeMPICommunicator, VariableBlocksAndNonBlockingBroadcast) {
  Communicator &comm = world();
  const int n = comm.size(), me = comm.rank();
  // Rank q has q + 1 rows of 3 floats.
  std::vector<int64_t> counts(n), displs(n);
  int64_t total = 0;
  for (int q = 0; q < n; ++q) {
    counts[q] = 3 * (q + 1);
    displs[q] = total;
    total += counts[q];
  }
  std::vector<float> own(counts[me]), all(total, -1.0f), want(total);
  for (int64_t i = 0; i < counts[me]; ++i)
    own[i] = valueOf(me, i);
  for (int q = 0; q < n; ++q)
    for (int64_t i = 0; i < counts[q]; ++i)
      want[displs[q] + i] = valueOf(q, i);
  comm.allGatherV(own.data(), counts[me], all.data(), counts.data(),
                  displs.data());
  ASSERT_EQ(all, want);
  // The same in rows of 3 floats (counts and displacements in rows).
  std::vector<int64_t> rowCounts(n), rowDispls(n);
  for (int q = 0; q < n; ++q) {
    rowCounts[q] = counts[q] / 3;
    rowDispls[q] = displs[q] / 3;
  }
  std::vector<float> byRows(total, -1.0f);
  comm.allGatherV(own.data(), rowCounts[me], byRows.data(), rowCounts.data(),
                  rowDispls.data(), 3);
  ASSERT_EQ(byRows, want);
  // The same of int64 values past 2^53 (the hash-partitioned structure's
  // push): no float on the way.
  std::vector<int64_t> ownIds(counts[me]), allIds(total, -1), wantIds(total);
  for (int64_t i = 0; i < counts[me]; ++i)
    ownIds[i] = (int64_t{1} << 60) + 1000 * me + i;
  for (int q = 0; q < n; ++q)
    for (int64_t i = 0; i < counts[q]; ++i)
      wantIds[displs[q] + i] = (int64_t{1} << 60) + 1000 * q + i;
  const int64_t gathersBefore = comm.counted(Collective::AllGather).calls;
  comm.allGatherV(ownIds.data(), counts[me], allIds.data(), counts.data(),
                  displs.data());
  ASSERT_EQ(allIds, wantIds);
  EXPECT_EQ(comm.counted(Collective::AllGather).calls, gathersBefore + 1);
  // Every rank's partials of all rows: rank r receives the sums of its own.
  std::vector<float> partial(total), sum(counts[me], -1.0f);
  for (int64_t i = 0; i < total; ++i)
    partial[i] = valueOf(me, i);
  comm.reduceScatterV(partial.data(), sum.data(), counts.data(), ReduceOp::Sum);
  for (int64_t i = 0; i < counts[me]; ++i) {
    float s = 0.0f;
    for (int q = 0; q < n; ++q)
      s += valueOf(q, displs[me] + i);
    ASSERT_EQ(sum[i], s) << "element " << i;
  }
  // Each root in turn, two broadcasts in flight.
  std::vector<std::vector<float>> data(n);
  std::vector<Request> pending(n);
  for (int root = 0; root < n; ++root) {
    data[root].assign(counts[root], -1.0f);
    if (root == me)
      for (int64_t i = 0; i < counts[root]; ++i)
        data[root][i] = valueOf(root, i);
    pending[root] = comm.iBroadcast(data[root].data(), counts[root], root);
    if (root > 0)
      comm.wait(pending[root - 1]);
  }
  comm.wait(pending[n - 1]);
  for (int root = 0; root < n; ++root)
    for (int64_t i = 0; i < counts[root]; ++i)
      ASSERT_EQ(data[root][i], valueOf(root, i)) << "root " << root;
}

// MG-GCN's reduce stages: every rank's partial sums reduced to each root in
// turn, two reduces in flight, in place at the root (the stage's own rows)
// and from a separate buffer; with GNNRT_MPI_PIECE_ELEMENTS set
// (mpi-communicator.test) each in several pieces.
TEST(RuntimeMPICommunicator, NonBlockingReducesToEveryRoot) {
  Communicator &comm = world();
  const int n = comm.size(), me = comm.rank();
  for (int64_t count : kCounts) {
    std::vector<std::vector<float>> partial(n), result(n);
    std::vector<Request> pending(n);
    for (int root = 0; root < n; ++root) {
      partial[root].resize(count);
      for (int64_t i = 0; i < count; ++i)
        partial[root][i] = valueOf(me, i + root);
      // Odd roots receive into a buffer of their own, even ones in place.
      float *recv = partial[root].data();
      if (root % 2) {
        result[root].assign(count, -1.0f);
        recv = result[root].data();
      }
      pending[root] =
          comm.iReduce(partial[root].data(), recv, count, root, ReduceOp::Sum);
      if (root > 0)
        comm.wait(pending[root - 1]);
    }
    comm.wait(pending[n - 1]);
    const std::vector<float> &got = me % 2 ? result[me] : partial[me];
    for (int64_t i = 0; i < count; ++i) {
      float s = 0.0f;
      for (int q = 0; q < n; ++q)
        s += valueOf(q, i + me);
      ASSERT_EQ(got[i], s) << "count " << count << " element " << i;
    }
  }
}

// Reduces in flight in any number, two to each root, waited for in reverse
// order around a blocking collective that rank 0 joins first and the others
// after their waits, then a crossed pair (rank 0 waits first for the reduce
// to the last rank, the last rank for the one to rank 0): a root adds the
// pieces of every reduce whenever it waits, and completes them before a
// blocking collective (the own reduce of Comm/MPI.cpp), so no rank waits on
// one that a blocked root will not add. 600,000 floats are ten pieces of
// the own reduce, sent by rendezvous: a root that stopped adding would
// hang this test (mpi-communicator.test runs it under a timeout); with
// GNNRT_MPI_PIECE_ELEMENTS, four pieces of that size.
TEST(RuntimeMPICommunicator, ReducesInFlightCompleteInAnyOrder) {
  Communicator &comm = world();
  const int n = comm.size(), me = comm.rank();
  const int64_t kCount = reduceCount();
  const ReduceOp ops[] = {ReduceOp::Sum, ReduceOp::Max};
  std::vector<std::vector<float>> data(2 * n + 2);
  std::vector<Request> pending(2 * n + 2);
  auto issue = [&](int k, int root, ReduceOp op) {
    data[k].resize(kCount);
    for (int64_t i = 0; i < kCount; ++i)
      data[k][i] = valueOf(me, i + k);
    pending[k] = comm.iReduce(data[k].data(), data[k].data(), kCount, root, op);
  };
  for (int k = 0; k < 2 * n; ++k)
    issue(k, k % n, ops[k / n]);
  int64_t r = me, sum = 0;
  if (me == 0)
    comm.allReduce(&r, &sum, 1, ReduceOp::Sum);
  for (int k = 2 * n - 1; k >= 0; --k)
    comm.wait(pending[k]);
  if (me != 0)
    comm.allReduce(&r, &sum, 1, ReduceOp::Sum);
  EXPECT_EQ(sum, int64_t(n) * (n - 1) / 2);
  // The others start late, so that rank 0's pieces of its reduce arrive
  // only while it waits for the other one.
  if (me != 0)
    usleep(200000);
  issue(2 * n, 0, ReduceOp::Sum);
  issue(2 * n + 1, n - 1, ReduceOp::Sum);
  if (me == 0)
    comm.wait(pending[2 * n + 1]);
  comm.wait(pending[2 * n]);
  comm.wait(pending[2 * n + 1]);
  auto check = [&](int k, ReduceOp op) {
    for (int64_t i = 0; i < kCount; ++i) {
      float want = valueOf(0, i + k);
      for (int q = 1; q < n; ++q)
        want = op == ReduceOp::Sum ? want + valueOf(q, i + k)
                                   : std::max(want, valueOf(q, i + k));
      ASSERT_EQ(data[k][i], want) << "reduce " << k << " element " << i;
    }
  };
  for (int k = me; k < 2 * n; k += n)
    check(k, ops[k / n]);
  if (me == 0)
    check(2 * n, ReduceOp::Sum);
  if (me == n - 1)
    check(2 * n + 1, ReduceOp::Sum);
}

// The crossed pair on two communicators of the same processes (a split):
// rank 0 roots a reduce on the split and waits on the world first, the
// last rank roots one on the world and waits on the split first. A root
// adds the pieces of its reduces on every communicator while it waits on
// any.
TEST(RuntimeMPICommunicator, ReducesOnTwoCommunicatorsCompleteInAnyOrder) {
  Communicator &comm = world();
  const int n = comm.size(), me = comm.rank();
  std::unique_ptr<Communicator> part = comm.split(0, me);
  ASSERT_EQ(part->rank(), me);
  const int64_t kCount = reduceCount();
  std::vector<float> x(kCount), y(kCount);
  for (int64_t i = 0; i < kCount; ++i) {
    x[i] = valueOf(me, i);
    y[i] = valueOf(me, i + 1);
  }
  if (me != 0)
    usleep(200000);
  Request onPart = part->iReduce(x.data(), x.data(), kCount, 0, ReduceOp::Sum);
  Request onWorld =
      comm.iReduce(y.data(), y.data(), kCount, n - 1, ReduceOp::Sum);
  if (me == 0)
    comm.wait(onWorld);
  part->wait(onPart);
  comm.wait(onWorld);
  for (int64_t i = 0; i < kCount; ++i) {
    float sx = 0.0f, sy = 0.0f;
    for (int q = 0; q < n; ++q) {
      sx += valueOf(q, i);
      sy += valueOf(q, i + 1);
    }
    if (me == 0) {
      ASSERT_EQ(x[i], sx) << "element " << i;
    }
    if (me == n - 1) {
      ASSERT_EQ(y[i], sy) << "element " << i;
    }
  }
}

/// Rank r's element i of values whose float sum depends on the order:
/// +-1e8 beside small integers.
float orderedValue(int r, int64_t i) {
  switch ((r + i) % 3) {
  case 0:
    return 1e8f;
  case 1:
    return -1e8f;
  default:
    return static_cast<float>(r + 1);
  }
}

// The own reduce adds in rank order, left to right, whatever arrives first
// (the same sums on every run), at the root only: the others' buffers keep
// their values. Sum and Min, to the last rank, from a separate buffer.
TEST(RuntimeMPICommunicator, OwnReduceAddsInRankOrder) {
  const char *how = std::getenv("GNNRT_MPI_IREDUCE");
  if (how && !std::strcmp(how, "mpi"))
    GTEST_SKIP() << "MPI_Ireduce's order is MPI's";
  Communicator &comm = world();
  const int n = comm.size(), me = comm.rank(), root = n - 1;
  constexpr int64_t kCount = 70001;
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min}) {
    std::vector<float> mine(kCount), out(kCount, -7.0f);
    for (int64_t i = 0; i < kCount; ++i)
      mine[i] = orderedValue(me, i);
    const std::vector<float> before(mine);
    Request r = comm.iReduce(mine.data(), out.data(), kCount, root, op);
    comm.wait(r);
    EXPECT_EQ(mine, before);
    for (int64_t i = 0; i < kCount; ++i) {
      float want = orderedValue(0, i);
      for (int q = 1; q < n; ++q)
        want = op == ReduceOp::Sum ? want + orderedValue(q, i)
                                   : std::min(want, orderedValue(q, i));
      ASSERT_EQ(out[i], me == root ? want : -7.0f) << "element " << i;
    }
  }
}

// A communicator destroyed with collectives in flight completes them first
// (the driver's context may end with a request nobody waited for): the
// sums are there as soon as the destructor returns. Large enough that the
// all-reduce is not done by the time it is issued, unless cut into tiny
// pieces (GNNRT_MPI_PIECE_ELEMENTS): then 64 pieces, not a million.
TEST(RuntimeMPICommunicator, DestroyingCompletesCollectivesInFlight) {
  world(); // MPI started, with its session directory
  std::unique_ptr<Communicator> comm = createMPICommunicator();
  const int n = comm->size(), me = comm->rank();
  const char *piece = std::getenv("GNNRT_MPI_PIECE_ELEMENTS");
  const int64_t kCount =
      piece && *piece ? 64 * std::atoll(piece) : int64_t(1) << 22;
  std::vector<float> x(kCount), y(kCount, -1.0f), z(kCount);
  for (int64_t i = 0; i < kCount; ++i)
    x[i] = z[i] = valueOf(me, i);
  Request sum = comm->iAllReduce(x.data(), y.data(), kCount, ReduceOp::Sum);
  Request broadcast = comm->iBroadcast(z.data(), kCount, n - 1);
  std::vector<float> w(x);
  Request reduce = comm->iReduce(w.data(), w.data(), kCount, 0, ReduceOp::Sum);
  EXPECT_FALSE(sum.isNull() || broadcast.isNull() || reduce.isNull());
  comm.reset();
  for (int64_t i = 0; i < kCount; ++i) {
    float s = 0.0f;
    for (int q = 0; q < n; ++q)
      s += valueOf(q, i);
    ASSERT_EQ(y[i], s) << "element " << i;
    ASSERT_EQ(z[i], valueOf(n - 1, i)) << "element " << i;
    if (me == 0) {
      ASSERT_EQ(w[i], s) << "element " << i;
    }
  }
}

TEST(RuntimeMPICommunicator, SplitsCollectWithinTheirGroups) {
  // Groups of 2 consecutive ranks (the last alone when the world is odd),
  // ranked in reverse within each: their collectives reach their own
  // members only, and count in the world's counters.
  Communicator &comm = world();
  const int n = comm.size(), me = comm.rank(), group = me / 2;
  const int members = std::min(2, n - 2 * group);
  std::unique_ptr<Communicator> part = comm.split(group, -me);
  ASSERT_EQ(part->size(), members);
  EXPECT_EQ(part->rank(), 2 * group + members - 1 - me);
  const int64_t before = comm.counted(Collective::AllReduce).calls;
  const double waitedBefore = comm.waitSeconds();
  int64_t r = me, sum = 0;
  part->allReduce(&r, &sum, 1, ReduceOp::Sum);
  EXPECT_EQ(sum, members == 2 ? 4 * group + 1 : me);
  std::vector<float> rows(5, static_cast<float>(me));
  Request request = part->iBroadcast(rows.data(), 5, 0);
  part->wait(request);
  // Root 0 of the group is its highest rank.
  EXPECT_EQ(rows,
            std::vector<float>(5, static_cast<float>(2 * group + members - 1)));
  EXPECT_EQ(comm.counted(Collective::AllReduce).calls, before + 1);
  EXPECT_GE(comm.waitSeconds(), waitedBefore);
  // The world's own collectives still reach every rank.
  comm.allReduce(&r, &sum, 1, ReduceOp::Sum);
  EXPECT_EQ(sum, int64_t(n) * (n - 1) / 2);
  // mpirun on one machine: every rank there, consecutive.
  int first = -1, count = -1;
  EXPECT_TRUE(comm.machineRanks(first, count));
  EXPECT_EQ(first, 0);
  EXPECT_EQ(count, n);
}

// Feature-pulling data parallel: a matrix of 7-float rows split unevenly
// into the ranges of one copy (rank 0's empty with 3 or more ranges), held
// once, twice (an even world) or by every rank; every rank asks for rows
// of every range, its own included, some twice, in a scrambled order, and
// gets each row's values from its copy's holder; the all-to-alls carry the
// counts, the ids and the rows asked of others, nothing else.
TEST(RuntimeMPICommunicator, FeaturePullerGivesEveryRowAsked) {
  Communicator &comm = world();
  const int n = comm.size(), me = comm.rank();
  constexpr int64_t kWidth = 7, kRows = 53;
  auto value = [](int64_t v, int64_t c) {
    return static_cast<float>(100 * v + c);
  };
  auto asks = [](int r, int64_t k) { return (k * (r + 3)) % 5 != 0; };
  auto row = [](int r, int64_t k) { return (k * 17 + 5 * r) % kRows; };
  for (int copies : {1, 2, n}) {
    if (n % copies != 0)
      continue;
    const int groups = n / copies;
    std::vector<int64_t> starts(groups + 1, kRows);
    starts[0] = 0;
    for (int p = 1; p < groups; ++p)
      starts[p] = groups >= 3 && p == 1 ? 0 : kRows * p * p / (groups * groups);
    const int range = me % groups;
    std::vector<float> own;
    for (int64_t v = starts[range]; v < starts[range + 1]; ++v)
      for (int64_t c = 0; c < kWidth; ++c)
        own.push_back(value(v, c));
    FeaturePuller puller(comm, starts, own.data(), kWidth, copies);
    for (int64_t v = 0; v < kRows; ++v) {
      const int p = puller.range(v), o = puller.owner(v);
      EXPECT_TRUE(starts[p] <= v && v < starts[p + 1]) << v;
      EXPECT_EQ(o, me / groups * groups + p) << v;
    }
    std::vector<int64_t> asked;
    for (int64_t k = 0; k < 2 * kRows; ++k)
      if (asks(me, k))
        asked.push_back(row(me, k));
    std::vector<float> got(asked.size() * kWidth, -1.0f);
    const CollectiveCount before = comm.counted(Collective::AllToAll);
    const int64_t featureBefore = puller.featureBytesSent();
    const int64_t pulled = puller.pull(
        asked.data(), static_cast<int64_t>(asked.size()), got.data());
    const CollectiveCount after = comm.counted(Collective::AllToAll);
    int64_t others = 0;
    for (size_t i = 0; i < asked.size(); ++i) {
      others += puller.owner(asked[i]) != me;
      for (int64_t c = 0; c < kWidth; ++c)
        ASSERT_EQ(got[i * kWidth + c], value(asked[i], c))
            << i << " " << c << " copies " << copies;
    }
    EXPECT_EQ(pulled, others);
    // What the others asked of this rank: the rows of its range that the
    // ranks of its copy asked for.
    int64_t given = 0;
    for (int q = 0; q < n; ++q)
      for (int64_t k = 0; q != me && q / groups == me / groups && k < 2 * kRows;
           ++k)
        given += asks(q, k) && puller.range(row(q, k)) == range;
    EXPECT_EQ(after.calls - before.calls, 3);
    EXPECT_EQ(puller.featureBytesSent() - featureBefore, given * kWidth * 4);
    EXPECT_EQ(puller.requestBytesSent(), (n - 1 + others) * 8);
    EXPECT_EQ(after.bytes - before.bytes,
              puller.featureBytesSent() + puller.requestBytesSent());
    if (copies == n) {
      EXPECT_EQ(pulled, 0) << "every rank holds every row";
    }
    // Two pulls in flight at once, another collective between their start
    // and finish (mini-batch training's prefetch): each gets its rows.
    const std::vector<int64_t> reversed(asked.rbegin(), asked.rend());
    const int64_t count = static_cast<int64_t>(asked.size());
    std::vector<float> first(asked.size() * kWidth, -1.0f),
        second(asked.size() * kWidth, -1.0f);
    FeaturePuller::Pending a = puller.start(asked.data(), count, first.data());
    FeaturePuller::Pending b =
        puller.start(reversed.data(), count, second.data());
    float one = 1.0f, ranks = 0.0f;
    comm.allReduce(&one, &ranks, 1, ReduceOp::Sum);
    EXPECT_EQ(ranks, static_cast<float>(n));
    EXPECT_EQ(puller.finish(b), others);
    EXPECT_EQ(puller.finish(a), others);
    for (size_t i = 0; i < asked.size(); ++i)
      for (int64_t c = 0; c < kWidth; ++c) {
        ASSERT_EQ(first[i * kWidth + c], value(asked[i], c)) << i;
        ASSERT_EQ(second[i * kWidth + c], value(reversed[i], c)) << i;
      }
  }
}
