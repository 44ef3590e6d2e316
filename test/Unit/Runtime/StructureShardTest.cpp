//===- StructureShardTest.cpp - P³'s hash-partitioned structure -----------===//
//
// The hash-partitioned structure (Sampler.h, StructureShard): the shards of
// N processes partition the vertices and their in-edges, each vertex's
// owner the same from its id alone; sampling from them (each hop's rows
// picked by their owners and pushed to every process) gives every process
// the whole graph's sampler's batch, bit for bit, for any fanouts and
// thread count. The N processes are N threads here, their all-gathers met
// at a shared board.
//
//===----------------------------------------------------------------------===//

#include "Communicator.h"
#include "Context.h"
#include "Sampler.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <random>
#include <set>
#include <thread>

using namespace gnnrt;

namespace {

/// Where N threads meet for their all-gathers: each posts its block, the
/// last one in wakes the others, each copies every block, and the board is
/// cleared once all have read (a generation count keeps rounds apart).
struct Board {
  explicit Board(int n) : blocks(n) {}
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::vector<int64_t>> blocks;
  int posted = 0, read = 0;
  int64_t generation = 0;

  std::vector<std::vector<int64_t>> exchange(int rank,
                                             std::vector<int64_t> block) {
    std::unique_lock<std::mutex> lock(mutex);
    // A round still being read: wait for it to clear.
    changed.wait(lock, [&] { return read == 0; });
    blocks[rank] = std::move(block);
    const int64_t mine = generation;
    if (++posted == static_cast<int>(blocks.size())) {
      ++generation;
      changed.notify_all();
    } else {
      changed.wait(lock, [&] { return generation != mine; });
    }
    std::vector<std::vector<int64_t>> all = blocks;
    if (++read == static_cast<int>(blocks.size())) {
      posted = read = 0;
      changed.notify_all();
    }
    return all;
  }
};

/// A communicator of one thread of N, with the all-gathers the sampler
/// uses; the other collectives are not called.
class ThreadCommunicator final : public Communicator {
public:
  ThreadCommunicator(Board &board, int rank) : board(board), me(rank) {}
  const char *name() const override { return "threads"; }
  int rank() const override { return me; }
  int size() const override { return static_cast<int>(board.blocks.size()); }

protected:
  void doAllGather(const int64_t *send, int64_t *recv, int64_t count) override {
    const auto all = board.exchange(me, {send, send + count});
    for (size_t r = 0; r < all.size(); ++r)
      std::copy(all[r].begin(), all[r].end(), recv + r * count);
  }
  void doAllGatherV(const int64_t *send, int64_t count, int64_t *recv,
                    const int64_t *counts, const int64_t *displs) override {
    EXPECT_EQ(counts[me], count);
    const auto all = board.exchange(me, {send, send + count});
    for (size_t r = 0; r < all.size(); ++r) {
      EXPECT_EQ(static_cast<int64_t>(all[r].size()), counts[r]);
      std::copy(all[r].begin(), all[r].end(), recv + displs[r]);
    }
  }
  [[noreturn]] static void unused() { fatal("not used by the sampler"); }
  void doAllReduce(const float *, float *, int64_t, ReduceOp) override {
    unused();
  }
  void doAllReduce(const int64_t *, int64_t *, int64_t, ReduceOp) override {
    unused();
  }
  void doBroadcast(float *, int64_t, int) override { unused(); }
  void doBroadcast(int64_t *, int64_t, int) override { unused(); }
  void doReduceScatter(const float *, float *, int64_t, ReduceOp) override {
    unused();
  }
  void doAllGather(const float *, float *, int64_t) override { unused(); }
  void doAllGatherV(const float *, int64_t, float *, const int64_t *,
                    const int64_t *, int64_t) override {
    unused();
  }
  void doReduceScatterV(const float *, float *, const int64_t *,
                        ReduceOp) override {
    unused();
  }
  Request doIAllReduce(const float *, float *, int64_t, ReduceOp) override {
    unused();
  }
  Request doIAllGather(const float *, float *, int64_t) override { unused(); }
  Request doIBroadcast(float *, int64_t, int) override { unused(); }
  void doWait(Request &) override { unused(); }
  void doAllToAllV(const float *, const int64_t *, const int64_t *, float *,
                   const int64_t *, const int64_t *, int64_t) override {
    unused();
  }
  void doAllToAllV(const int64_t *, const int64_t *, const int64_t *, int64_t *,
                   const int64_t *, const int64_t *, int64_t) override {
    unused();
  }
  Request doIReduce(const float *, float *, int64_t, int, ReduceOp) override {
    unused();
  }
  Request doIAllToAllV(const float *, const int64_t *, const int64_t *, float *,
                       const int64_t *, const int64_t *, int64_t) override {
    unused();
  }

private:
  Board &board;
  int me;
};

/// A power-law-ish graph: vertex v's in-degree up to maxDegree / (1 + v %
/// 7), the low ids the hubs; sources ascending and distinct in a row.
struct Graph {
  std::vector<int64_t> offsets{0};
  std::vector<int32_t> sources;
};

Graph skewedGraph(std::mt19937 &rng, int64_t V, int64_t maxDegree) {
  Graph g;
  std::uniform_int_distribution<int32_t> vertex(0, static_cast<int32_t>(V - 1));
  for (int64_t v = 0; v < V; ++v) {
    std::set<int32_t> row;
    const int64_t d =
        std::min<int64_t>(V, std::uniform_int_distribution<int64_t>(
                                 0, maxDegree / (1 + v % 7))(rng));
    while (static_cast<int64_t>(row.size()) < d)
      row.insert(vertex(rng));
    g.sources.insert(g.sources.end(), row.begin(), row.end());
    g.offsets.push_back(static_cast<int64_t>(g.sources.size()));
  }
  return g;
}

void expectSameBatch(const SampledBatch &a, const SampledBatch &b) {
  EXPECT_EQ(a.seeds, b.seeds);
  ASSERT_EQ(a.blocks.size(), b.blocks.size());
  for (size_t l = 0; l < a.blocks.size(); ++l) {
    const Block &x = a.blocks[l], &y = b.blocks[l];
    EXPECT_EQ(x.numDst, y.numDst) << "block " << l;
    EXPECT_EQ(x.numSrc, y.numSrc) << "block " << l;
    EXPECT_EQ(x.offsets, y.offsets) << "block " << l;
    EXPECT_EQ(x.sources, y.sources) << "block " << l;
    EXPECT_EQ(x.edgePositions, y.edgePositions) << "block " << l;
    EXPECT_EQ(x.vertices, y.vertices) << "block " << l;
  }
}

TEST(StructureShard, ShardsPartitionTheVerticesAndTheirInEdges) {
  std::mt19937 rng(11);
  const int64_t V = 3000;
  Graph g = skewedGraph(rng, V, 120);
  for (int N : {1, 2, 3, 4, 7}) {
    std::vector<int64_t> ownedBy(N, 0);
    int64_t edges = 0;
    std::vector<int> seen(V, 0);
    for (int r = 0; r < N; ++r) {
      StructureShard shard(g.offsets.data(), g.sources.data(), V, r, N);
      EXPECT_EQ(shard.rank(), r);
      edges += shard.numEdges();
      ownedBy[r] = shard.numVertices();
      EXPECT_GT(shard.bytes(), 0);
      for (int64_t v = 0; v < V; ++v) {
        const int64_t j = shard.find(v);
        EXPECT_EQ(j >= 0, StructureShard::owner(v, N) == r) << v;
        if (j < 0)
          continue;
        ++seen[v];
        // The row: the graph's sources, from the graph's position.
        ASSERT_EQ(shard.degree(j), g.offsets[v + 1] - g.offsets[v]);
        EXPECT_EQ(shard.firstPosition(j), g.offsets[v]);
        EXPECT_TRUE(std::equal(g.sources.begin() + g.offsets[v],
                               g.sources.begin() + g.offsets[v + 1],
                               shard.sourcesOf(j)));
      }
    }
    EXPECT_EQ(edges, static_cast<int64_t>(g.sources.size()));
    for (int64_t v = 0; v < V; ++v)
      EXPECT_EQ(seen[v], 1) << v;
    // The hash spreads the ids: every share within 20 % of V / N.
    for (int r = 0; r < N; ++r)
      EXPECT_NEAR(static_cast<double>(ownedBy[r]), static_cast<double>(V) / N,
                  0.2 * V / N)
          << "process " << r << " of " << N;
  }
}

TEST(StructureShard, EveryProcessSamplesTheWholeGraphsBatch) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 12; ++trial) {
    const int64_t V = 400 + 150 * trial;
    Graph g = skewedGraph(rng, V, 40 + 30 * (trial % 4));
    std::vector<int64_t> fanouts = {trial % 3 == 0 ? -1 : 2 + trial % 9,
                                    trial % 4 == 1 ? -1 : 3 + trial % 5};
    if (trial % 2)
      fanouts.push_back(1 + trial % 3);
    const int N = 2 + trial % 3;
    std::vector<int64_t> seeds(V);
    std::iota(seeds.begin(), seeds.end(), 0);
    std::shuffle(seeds.begin(), seeds.end(), rng);
    // The last trial's batch has no seed.
    seeds.resize(trial == 11 ? 0 : 1 + (7 * trial) % 60);
    NeighborSampler whole(g.offsets.data(), g.sources.data(), V, fanouts,
                          trial);
    const uint64_t batch = 3 * trial + 1;
    const SampledBatch expected = whole.sample(seeds, batch);
    Board board(N);
    std::vector<SampledBatch> got(N);
    std::vector<int64_t> pushed(N), calls(N);
    std::vector<std::thread> processes;
    for (int r = 0; r < N; ++r)
      processes.emplace_back([&, r] {
        ThreadCommunicator comm(board, r);
        StructureShard shard(g.offsets.data(), g.sources.data(), V, r, N);
        // The shard mode never reads the graph's arrays.
        NeighborSampler sampler(nullptr, nullptr, V, fanouts, trial);
        sampler.useShard(&shard, &comm);
        got[r] = sampler.sample(seeds, batch);
        pushed[r] = sampler.pushedValues();
        calls[r] = sampler.pushCalls();
      });
    for (std::thread &t : processes)
      t.join();
    // What the processes pushed: a count per expanded row and two values
    // per sampled edge, once over all of them; two all-gathers a hop.
    int64_t total = 0;
    for (int r = 0; r < N; ++r) {
      SCOPED_TRACE("trial " + std::to_string(trial) + ", process " +
                   std::to_string(r) + " of " + std::to_string(N));
      expectSameBatch(got[r], expected);
      EXPECT_EQ(calls[r], 2 * static_cast<int64_t>(fanouts.size()));
      total += pushed[r] - static_cast<int64_t>(fanouts.size());
    }
    int64_t expanded = 0;
    for (const Block &b : expected.blocks)
      expanded += b.numDst;
    // A row is expanded once: the kept rows are the outer block's.
    for (size_t l = 0; l + 1 < expected.blocks.size(); ++l)
      expanded -= expected.blocks[l + 1].numDst;
    EXPECT_EQ(total, expanded + 2 * expected.numEdges()) << "trial " << trial;
  }
}

TEST(StructureShard, OneProcessHoldsTheWholeGraph) {
  std::mt19937 rng(8);
  const int64_t V = 900;
  Graph g = skewedGraph(rng, V, 300);
  const std::vector<int64_t> fanouts = {5, 25};
  const std::vector<int64_t> seeds = {0, 1, 17, 400, 899};
  NeighborSampler whole(g.offsets.data(), g.sources.data(), V, fanouts, 4);
  Board board(1);
  ThreadCommunicator comm(board, 0);
  StructureShard shard(g.offsets.data(), g.sources.data(), V, 0, 1);
  EXPECT_EQ(shard.numEdges(), static_cast<int64_t>(g.sources.size()));
  NeighborSampler sampler(nullptr, nullptr, V, fanouts, 4);
  sampler.useShard(&shard, &comm);
  expectSameBatch(sampler.sample(seeds, 9), whole.sample(seeds, 9));
}

} // namespace
