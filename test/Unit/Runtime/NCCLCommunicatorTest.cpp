//===- NCCLCommunicatorTest.cpp - the NCCL communicator -------------------===//
//
// Every collective of the NCCL communicator on GPU buffers against the
// values it must give (integer-valued floats: sums are exact in any order),
// as MPICommunicatorTest.cpp checks MPI's, written for any world size. The
// binary bootstraps NCCL over the single-process communicator (no MPI
// library, so that scripts/gpu-pack.sh carries it to a GPU machine as it
// is): a world of one rank on one GPU, where NCCL still runs every call,
// group and stream of the communicator. Skipped without a GPU.
//
//===----------------------------------------------------------------------===//

#include "AllToAllCase.h"
#include "Comm/NCCL.h"
#include "Communicator.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

using namespace gnnrt;

namespace {

std::shared_ptr<Communicator> &bootstrap() {
  static std::shared_ptr<Communicator> comm = createSingleProcessCommunicator();
  return comm;
}

/// Whether every rank has a GPU of its own (the ranks agree).
bool gpusForEveryRank() {
  static const bool ok = [] {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess)
      devices = 0;
    int64_t mine = localRank(bootstrap()->rank()) < devices ? 1 : 0, all = 0;
    bootstrap()->allReduce(&mine, &all, 1, ReduceOp::Min);
    return all == 1;
  }();
  return ok;
}

Communicator &world() {
  static std::unique_ptr<Communicator> comm =
      createNCCLCommunicator(bootstrap());
  return *comm;
}

#define NEED_GPUS()                                                            \
  do {                                                                         \
    if (!gpusForEveryRank())                                                   \
      GTEST_SKIP() << "not every rank has a GPU of its own";                   \
  } while (0)

/// A GPU buffer of `n` elements, from and to host vectors.
template <typename T>
class GPU {
public:
  explicit GPU(const std::vector<T> &host) : n(host.size()) {
    EXPECT_EQ(cudaMalloc(&data, std::max<size_t>(n, 1) * sizeof(T)),
              cudaSuccess);
    EXPECT_EQ(
        cudaMemcpy(data, host.data(), n * sizeof(T), cudaMemcpyHostToDevice),
        cudaSuccess);
  }
  ~GPU() { cudaFree(data); }
  std::vector<T> host() const {
    std::vector<T> out(n);
    EXPECT_EQ(
        cudaMemcpy(out.data(), data, n * sizeof(T), cudaMemcpyDeviceToHost),
        cudaSuccess);
    return out;
  }
  T *data = nullptr;
  size_t n;
};

/// Rank r's element i: a small integer, distinct across ranks.
float valueOf(int r, int64_t i) {
  return static_cast<float>((r + 1) * (i % 7) - 3 * r + (i % 5));
}

} // namespace

TEST(RuntimeNCCLCommunicator, AllReduceAndBroadcast) {
  NEED_GPUS();
  Communicator &comm = world();
  EXPECT_STREQ(comm.name(), "nccl");
  const int n = comm.size(), me = comm.rank();
  for (int64_t count : {int64_t(1), int64_t(1000), int64_t(4097)}) {
    std::vector<float> mine(count), sum(count, 0.0f), most(count);
    for (int64_t i = 0; i < count; ++i) {
      mine[i] = valueOf(me, i);
      for (int r = 0; r < n; ++r) {
        sum[i] += valueOf(r, i);
        most[i] = r == 0 ? valueOf(r, i) : std::max(most[i], valueOf(r, i));
      }
    }
    GPU<float> a(mine), b(std::vector<float>(count, -1.0f));
    comm.allReduce(a.data, b.data, count, ReduceOp::Sum);
    EXPECT_EQ(b.host(), sum);
    comm.allReduce(a.data, a.data, count, ReduceOp::Max); // in place
    EXPECT_EQ(a.host(), most);
    for (int root = 0; root < n; ++root) {
      std::vector<float> want(count);
      for (int64_t i = 0; i < count; ++i)
        want[i] = valueOf(root, i);
      GPU<float> c(me == root ? want : std::vector<float>(count, 0.0f));
      comm.broadcast(c.data, count, root);
      EXPECT_EQ(c.host(), want);
    }
  }
  GPU<int64_t> r(std::vector<int64_t>{me, 1});
  comm.allReduce(r.data, r.data, 2, ReduceOp::Sum);
  EXPECT_EQ(r.host(), (std::vector<int64_t>{int64_t(n) * (n - 1) / 2, n}));
  EXPECT_GE(comm.counted(Collective::AllReduce).calls, 7);
}

TEST(RuntimeNCCLCommunicator, ReduceScatterAndAllGather) {
  NEED_GPUS();
  Communicator &comm = world();
  const int n = comm.size(), me = comm.rank();
  const int64_t count = 513;
  std::vector<float> all(n * count), want(count, 0.0f), gathered(n * count);
  for (int64_t i = 0; i < n * count; ++i)
    all[i] = valueOf(me, i);
  for (int64_t i = 0; i < count; ++i)
    for (int r = 0; r < n; ++r)
      want[i] += valueOf(r, me * count + i);
  GPU<float> a(all), b(std::vector<float>(count, -1.0f));
  comm.reduceScatter(a.data, b.data, count, ReduceOp::Sum);
  EXPECT_EQ(b.host(), want);
  // In place: the whole input in recv, the rank's block at its start.
  comm.reduceScatter(a.data, a.data, count, ReduceOp::Sum);
  std::vector<float> front = a.host();
  front.resize(count);
  EXPECT_EQ(front, want);
  for (int r = 0; r < n; ++r)
    for (int64_t i = 0; i < count; ++i)
      gathered[r * count + i] = valueOf(r, i);
  std::vector<float> own(gathered.begin() + me * count,
                         gathered.begin() + (me + 1) * count);
  GPU<float> c(own), d(std::vector<float>(n * count, -1.0f));
  comm.allGather(c.data, d.data, count);
  EXPECT_EQ(d.host(), gathered);
  // In place: the rank's block already at rank() * count.
  std::vector<float> placed(n * count, -1.0f);
  std::copy(own.begin(), own.end(), placed.begin() + me * count);
  GPU<float> e(placed);
  comm.allGather(e.data + me * count, e.data, count);
  EXPECT_EQ(e.host(), gathered);
}

TEST(RuntimeNCCLCommunicator, VariableBlocks) {
  NEED_GPUS();
  Communicator &comm = world();
  const int n = comm.size(), me = comm.rank();
  // Rank q has q + 1 rows of 3 floats.
  std::vector<int64_t> rows(n), at(n);
  int64_t total = 0;
  for (int q = 0; q < n; ++q) {
    rows[q] = q + 1;
    at[q] = total;
    total += rows[q];
  }
  std::vector<float> own(3 * rows[me]), want(3 * total);
  for (int64_t i = 0; i < 3 * rows[me]; ++i)
    own[i] = valueOf(me, i);
  for (int q = 0; q < n; ++q)
    for (int64_t i = 0; i < 3 * rows[q]; ++i)
      want[3 * at[q] + i] = valueOf(q, i);
  GPU<float> a(own), b(std::vector<float>(3 * total, -1.0f));
  comm.allGatherV(a.data, rows[me], b.data, rows.data(), at.data(), 3);
  EXPECT_EQ(b.host(), want);
  // Reduce-scatter of blocks of rows[q] floats.
  std::vector<float> input(total), mineSum(rows[me], 0.0f);
  for (int64_t i = 0; i < total; ++i)
    input[i] = valueOf(me, i);
  for (int64_t i = 0; i < rows[me]; ++i)
    for (int r = 0; r < n; ++r)
      mineSum[i] += valueOf(r, at[me] + i);
  GPU<float> c(input), d(std::vector<float>(rows[me], -1.0f));
  comm.reduceScatterV(c.data, d.data, rows.data(), ReduceOp::Sum);
  EXPECT_EQ(d.host(), mineSum);
}

TEST(RuntimeNCCLCommunicator, AllToAllV) {
  NEED_GPUS();
  Communicator &comm = world();
  const AllToAllCase c(comm.rank(), comm.size());
  const int w = AllToAllCase::kWidth;
  const CollectiveCount before = comm.counted(Collective::AllToAll);
  GPU<float> a(c.send), b(std::vector<float>(c.want.size(), -1.0f)),
      d(std::vector<float>(c.want.size(), -1.0f));
  GPU<int64_t> i(c.ids), j(std::vector<int64_t>(c.wantIds.size(), -1));
  comm.allToAllV(a.data, c.sc.data(), c.sd.data(), b.data, c.rc.data(),
                 c.rd.data(), w);
  comm.allToAllV(i.data, c.sc.data(), c.sd.data(), j.data, c.rc.data(),
                 c.rd.data());
  Request r = comm.iAllToAllV(a.data, c.sc.data(), c.sd.data(), d.data,
                              c.rc.data(), c.rd.data(), w);
  comm.wait(r);
  EXPECT_TRUE(r.isNull());
  EXPECT_EQ(b.host(), c.want);
  EXPECT_EQ(d.host(), c.want);
  EXPECT_EQ(j.host(), c.wantIds);
  const CollectiveCount after = comm.counted(Collective::AllToAll);
  EXPECT_EQ(after.calls - before.calls, 3);
  EXPECT_EQ(after.bytes - before.bytes, c.toOthers * (2 * 4 * 2 + 8));
}

TEST(RuntimeNCCLCommunicator, NonBlockingCollectives) {
  NEED_GPUS();
  Communicator &comm = world();
  const int n = comm.size(), me = comm.rank();
  const int64_t count = 777;
  std::vector<float> mine(count), sum(count, 0.0f), gathered(n * count);
  for (int64_t i = 0; i < count; ++i) {
    mine[i] = valueOf(me, i);
    for (int r = 0; r < n; ++r) {
      sum[i] += valueOf(r, i);
      gathered[r * count + i] = valueOf(r, i);
    }
  }
  GPU<float> a(mine), reduced(std::vector<float>(count, -1.0f)),
      all(std::vector<float>(n * count, -1.0f)), toRoot(mine),
      fromLast(me == n - 1 ? mine : std::vector<float>(count, 0.0f));
  Request r1 = comm.iAllReduce(a.data, reduced.data, count, ReduceOp::Sum);
  Request r2 = comm.iAllGather(a.data, all.data, count);
  Request r3 = comm.iReduce(toRoot.data, toRoot.data, count, 0, ReduceOp::Sum);
  Request r4 = comm.iBroadcast(fromLast.data, count, n - 1);
  comm.wait(r4);
  comm.wait(r2);
  comm.wait(r1);
  comm.wait(r3);
  EXPECT_EQ(reduced.host(), sum);
  EXPECT_EQ(all.host(), gathered);
  if (me == 0) {
    EXPECT_EQ(toRoot.host(), sum);
  }
  std::vector<float> last(count);
  for (int64_t i = 0; i < count; ++i)
    last[i] = valueOf(n - 1, i);
  EXPECT_EQ(fromLast.host(), last);
}

// The GPU of a process: its local rank from the launcher's environment
// (host-only: runs without a GPU).
TEST(RuntimeNCCLLocalRank, FromTheLaunchersEnvironment) {
  const char *names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                         "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"};
  for (const char *name : names)
    unsetenv(name);
  EXPECT_EQ(localRank(5), 5);
  setenv("SLURM_LOCALID", "2", 1);
  EXPECT_EQ(localRank(5), 2);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1); // OpenMPI's first
  EXPECT_EQ(localRank(5), 3);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "x", 1); // not a number: the next
  EXPECT_EQ(localRank(5), 2);
  for (const char *name : names)
    unsetenv(name);
}
