//===- CommunicatorTest.cpp - the single-process communicator -------------===//
//
// Rank 0 of 1 on random data: every reduction is the identity (bit for bit,
// whatever the operation), gathers and scatters copy, in place leaves the
// data as it is, non-blocking collectives are done by wait() and their
// requests are null afterwards.
//
//===----------------------------------------------------------------------===//

#include "Communicator.h"
#include "Context.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

using namespace gnnrt;

namespace {

constexpr int64_t kCounts[] = {0, 1, 31, 1000, 4097};
constexpr ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min};

std::vector<float> randomFloats(int64_t n, std::mt19937 &rng) {
  std::normal_distribution<float> normal(0.0f, 100.0f);
  std::vector<float> v(n);
  for (float &f : v)
    f = normal(rng);
  return v;
}

std::vector<int64_t> randomInts(int64_t n, std::mt19937 &rng) {
  std::uniform_int_distribution<int64_t> any(INT64_MIN, INT64_MAX);
  std::vector<int64_t> v(n);
  for (int64_t &x : v)
    x = any(rng);
  return v;
}

/// Bitwise equality (a float reduction over one rank must not even
/// canonicalise a NaN or flip a zero's sign).
template <typename T>
bool sameBits(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() &&
         (a.empty() ||
          std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

} // namespace

TEST(RuntimeCommunicator, SingleProcessIsRankZeroOfOne) {
  std::unique_ptr<Communicator> comm = createSingleProcessCommunicator();
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
  EXPECT_STREQ(comm->name(), "single-process");
  // A context starts with one.
  gnnrtContext ctx;
  ASSERT_NE(ctx.comm, nullptr);
  EXPECT_EQ(ctx.comm->size(), 1);
  EXPECT_EQ(ctx.comm->rank(), 0);
}

TEST(RuntimeCommunicator, AllReduceIsTheIdentity) {
  std::unique_ptr<Communicator> comm = createSingleProcessCommunicator();
  std::mt19937 rng(11);
  for (int64_t n : kCounts) {
    for (ReduceOp op : kOps) {
      std::vector<float> send = randomFloats(n, rng);
      if (n > 2) { // values a real reduction would have to get right
        send[0] = -0.0f;
        send[1] = std::numeric_limits<float>::quiet_NaN();
      }
      const std::vector<float> original = send;
      std::vector<float> recv(n, 42.0f);
      comm->allReduce(send.data(), recv.data(), n, op);
      EXPECT_TRUE(sameBits(recv, original)) << n;
      EXPECT_TRUE(sameBits(send, original)) << n;
      // In place.
      comm->allReduce(send.data(), send.data(), n, op);
      EXPECT_TRUE(sameBits(send, original)) << n;

      std::vector<int64_t> sendI = randomInts(n, rng), recvI(n, 7);
      const std::vector<int64_t> originalI = sendI;
      comm->allReduce(sendI.data(), recvI.data(), n, op);
      EXPECT_EQ(recvI, originalI);
      comm->allReduce(sendI.data(), sendI.data(), n, op);
      EXPECT_EQ(sendI, originalI);
    }
  }
}

TEST(RuntimeCommunicator, BroadcastFromRankZeroKeepsTheData) {
  std::unique_ptr<Communicator> comm = createSingleProcessCommunicator();
  std::mt19937 rng(12);
  for (int64_t n : kCounts) {
    std::vector<float> data = randomFloats(n, rng);
    const std::vector<float> original = data;
    comm->broadcast(data.data(), n, 0);
    EXPECT_TRUE(sameBits(data, original));
    std::vector<int64_t> dataI = randomInts(n, rng);
    const std::vector<int64_t> originalI = dataI;
    comm->broadcast(dataI.data(), n, 0);
    EXPECT_EQ(dataI, originalI);
  }
}

TEST(RuntimeCommunicator, ReduceScatterAndAllGatherCopyOneBlock) {
  std::unique_ptr<Communicator> comm = createSingleProcessCommunicator();
  std::mt19937 rng(13);
  for (int64_t n : kCounts) {
    const std::vector<float> original = randomFloats(n, rng);
    for (ReduceOp op : kOps) {
      std::vector<float> send = original, recv(n, -1.0f);
      comm->reduceScatter(send.data(), recv.data(), n, op);
      EXPECT_TRUE(sameBits(recv, original));
      EXPECT_TRUE(sameBits(send, original));
      comm->reduceScatter(send.data(), send.data(), n, op);
      EXPECT_TRUE(sameBits(send, original));
    }
    std::vector<float> send = original, recv(n, -1.0f);
    comm->allGather(send.data(), recv.data(), n);
    EXPECT_TRUE(sameBits(recv, original));
    EXPECT_TRUE(sameBits(send, original));
    // In place: rank 0's block starts at recv + 0 * n.
    comm->allGather(recv.data() + comm->rank() * n, recv.data(), n);
    EXPECT_TRUE(sameBits(recv, original));

    const std::vector<int64_t> originalI = randomInts(n, rng);
    std::vector<int64_t> sendI = originalI, recvI(n, 3);
    comm->allGather(sendI.data(), recvI.data(), n);
    EXPECT_EQ(recvI, originalI);
    comm->allGather(recvI.data(), recvI.data(), n);
    EXPECT_EQ(recvI, originalI);
  }
}

TEST(RuntimeCommunicator, NonBlockingCollectivesAreDoneByWait) {
  std::unique_ptr<Communicator> comm = createSingleProcessCommunicator();
  std::mt19937 rng(14);
  for (int64_t n : kCounts) {
    const std::vector<float> a = randomFloats(n, rng), b = randomFloats(n, rng);
    std::vector<float> sendA = a, recvA(n, 0.0f), inPlace = b,
                       gathered(n, 0.0f);
    // Three requests in flight, waited for in another order.
    Request r1 = comm->iAllReduce(sendA.data(), recvA.data(), n, ReduceOp::Sum);
    Request r2 =
        comm->iAllReduce(inPlace.data(), inPlace.data(), n, ReduceOp::Max);
    Request r3 = comm->iAllGather(sendA.data(), gathered.data(), n);
    EXPECT_FALSE(r1.isNull());
    EXPECT_FALSE(r2.isNull());
    EXPECT_FALSE(r3.isNull());
    EXPECT_NE(r1.id, r2.id);
    EXPECT_NE(r2.id, r3.id);
    comm->wait(r3);
    comm->wait(r1);
    comm->wait(r2);
    EXPECT_TRUE(r1.isNull() && r2.isNull() && r3.isNull());
    EXPECT_TRUE(sameBits(recvA, a));
    EXPECT_TRUE(sameBits(inPlace, b));
    EXPECT_TRUE(sameBits(gathered, a));
    // A null request (a completed one) returns at once.
    comm->wait(r1);
    Request none;
    comm->wait(none);

    // In-place all-gather.
    std::vector<float> block = b;
    Request r4 = comm->iAllGather(block.data(), block.data(), n);
    comm->wait(r4);
    EXPECT_TRUE(sameBits(block, b));
  }
}

// The counters (the --json summary's "communication"): calls and the bytes
// of this rank's send buffer per collective, the non-blocking forms counted
// as their blocking ones, reduceScatter's input as size() blocks.
TEST(RuntimeCommunicator, CountersCountCallsAndSendBytes) {
  std::unique_ptr<Communicator> comm = createSingleProcessCommunicator();
  for (int c = 0; c < kNumCollectives; ++c) {
    EXPECT_EQ(comm->counted(static_cast<Collective>(c)).calls, 0);
    EXPECT_EQ(comm->counted(static_cast<Collective>(c)).bytes, 0);
  }
  std::vector<float> f(100);
  std::vector<int64_t> i(100);
  comm->allReduce(f.data(), f.data(), 7, ReduceOp::Sum);
  comm->allReduce(i.data(), i.data(), 5, ReduceOp::Max);
  Request r = comm->iAllReduce(f.data(), f.data(), 11, ReduceOp::Sum);
  comm->wait(r);
  comm->broadcast(f.data(), 13, 0);
  comm->broadcast(i.data(), 2, 0);
  comm->reduceScatter(f.data(), f.data(), 17, ReduceOp::Sum);
  comm->allGather(f.data(), f.data(), 19);
  comm->allGather(i.data(), i.data(), 3);
  r = comm->iAllGather(f.data(), f.data(), 23);
  comm->wait(r);
  const CollectiveCount ar = comm->counted(Collective::AllReduce);
  EXPECT_EQ(ar.calls, 3);
  EXPECT_EQ(ar.bytes, 7 * 4 + 5 * 8 + 11 * 4);
  const CollectiveCount bc = comm->counted(Collective::Broadcast);
  EXPECT_EQ(bc.calls, 2);
  EXPECT_EQ(bc.bytes, 13 * 4 + 2 * 8);
  const CollectiveCount rs = comm->counted(Collective::ReduceScatter);
  EXPECT_EQ(rs.calls, 1);
  EXPECT_EQ(rs.bytes, 17 * 4 * comm->size());
  const CollectiveCount ag = comm->counted(Collective::AllGather);
  EXPECT_EQ(ag.calls, 3);
  EXPECT_EQ(ag.bytes, 19 * 4 + 3 * 8 + 23 * 4);
  EXPECT_STREQ(collectiveName(Collective::ReduceScatter), "reduce_scatter");
  EXPECT_STREQ(collectiveName(Collective::AllToAll), "alltoall");
}

TEST(RuntimeCommunicator, ASplitIsAWorldOfOneCountingInItsParent) {
  std::unique_ptr<Communicator> comm = createSingleProcessCommunicator();
  std::unique_ptr<Communicator> part = comm->split(3, 0);
  EXPECT_EQ(part->rank(), 0);
  EXPECT_EQ(part->size(), 1);
  std::vector<float> f(4, 2.0f);
  part->allReduce(f.data(), f.data(), 4, ReduceOp::Sum);
  Request r = part->iBroadcast(f.data(), 3, 0);
  part->wait(r);
  EXPECT_EQ(f, std::vector<float>(4, 2.0f));
  // The split's collectives are the parent's counts.
  EXPECT_EQ(comm->counted(Collective::AllReduce).calls, 1);
  EXPECT_EQ(comm->counted(Collective::AllReduce).bytes, 16);
  EXPECT_EQ(comm->counted(Collective::Broadcast).bytes, 12);
  comm->allReduce(f.data(), f.data(), 1, ReduceOp::Sum);
  EXPECT_EQ(part->counted(Collective::AllReduce).calls, 2);
  int first = -1, count = -1;
  EXPECT_TRUE(comm->machineRanks(first, count));
  EXPECT_EQ(first, 0);
  EXPECT_EQ(count, 1);
}

TEST(RuntimeCommunicator, AllToAllCopiesTheOwnBlockAndCountsNothingSent) {
  // A world of one: the own block is a local copy, no byte leaves.
  std::unique_ptr<Communicator> comm = createSingleProcessCommunicator();
  std::vector<float> send = {9, 9, 1, 2, 3, 4, 5, 6}, recv(10, -1.0f);
  const int64_t sendCount[] = {3}, sendAt[] = {1}, recvAt[] = {2};
  comm->allToAllV(send.data(), sendCount, sendAt, recv.data(), sendCount,
                  recvAt, 2);
  EXPECT_EQ(recv, (std::vector<float>{-1, -1, -1, -1, 1, 2, 3, 4, 5, 6}));
  std::vector<int64_t> ids = {7, 8}, got(2, 0);
  const int64_t two[] = {2}, zero[] = {0};
  comm->allToAllV(ids.data(), two, zero, got.data(), two, zero);
  EXPECT_EQ(got, ids);
  // Non-blocking: complete when issued, and still waited for.
  std::vector<float> again(10, -1.0f);
  Request r = comm->iAllToAllV(send.data(), sendCount, sendAt, again.data(),
                               sendCount, recvAt, 2);
  EXPECT_FALSE(r.isNull());
  comm->wait(r);
  EXPECT_TRUE(r.isNull());
  EXPECT_EQ(again, recv);
  EXPECT_EQ(comm->counted(Collective::AllToAll).calls, 3);
  EXPECT_EQ(comm->counted(Collective::AllToAll).bytes, 0);
}

TEST(RuntimeCommunicatorDeathTest, MisuseStopsTheRun) {
  std::unique_ptr<Communicator> comm = createSingleProcessCommunicator();
  float x[2] = {1.0f, 2.0f};
  EXPECT_EXIT(comm->broadcast(x, 2, 1), testing::ExitedWithCode(1),
              "error: broadcast: root 1 outside the world of 1 process");
  EXPECT_EXIT(comm->allReduce(x, x + 1, -1, ReduceOp::Sum),
              testing::ExitedWithCode(1), "error: allReduce: negative count");
  Request forged{42};
  EXPECT_EXIT(comm->wait(forged), testing::ExitedWithCode(1),
              "error: wait: request 42 is not pending");
}
