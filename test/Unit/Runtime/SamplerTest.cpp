//===- SamplerTest.cpp - neighbour sampling into blocks -------------------===//
//
// The sampler's contract (Sampler.h) on random graphs: each row keeps
// min(fanout, degree) distinct in-edges that exist, in the graph's order,
// with the fanout of the layer that first reaches it; the blocks chain (a
// block's destinations are the next block's sources, listed first) and
// each is a prefix of the one before; a batch is the same for any thread count
// and differs between batches; picks are uniform; fanout -1 keeps every
// in-edge. The epoch's batches partition the selected vertices, shuffled per
// epoch. A seed share of a batch computes its seeds as the whole batch.
// P³'s whole graph of shares orders them by level band: a bijection that
// keeps each share's order and makes every level a prefix. Expansion-aware
// sampling holds the seeds and external vertices within its hops, at least
// min(fanout, candidates) per seed, uniformly and the same in every batch,
// and the blocks hold every in-edge among them; with every neighbour and the
// model's hops it is fanout -1.
//
//===----------------------------------------------------------------------===//

#include "Sampler.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

using namespace gnnrt;

namespace {

/// A random graph's CSC: `V` vertices, in-degrees up to `maxDegree`,
/// sources ascending and distinct within a row.
struct Graph {
  std::vector<int64_t> offsets{0};
  std::vector<int32_t> sources;
};

Graph randomGraph(std::mt19937 &rng, int64_t V, int64_t maxDegree) {
  Graph g;
  std::uniform_int_distribution<int64_t> degree(0, maxDegree);
  std::uniform_int_distribution<int32_t> vertex(0, static_cast<int32_t>(V - 1));
  for (int64_t v = 0; v < V; ++v) {
    std::set<int32_t> row;
    const int64_t d = degree(rng);
    while (static_cast<int64_t>(row.size()) < std::min(d, V))
      row.insert(vertex(rng));
    g.sources.insert(g.sources.end(), row.begin(), row.end());
    g.offsets.push_back(static_cast<int64_t>(g.sources.size()));
  }
  return g;
}

std::vector<int64_t> someSeeds(std::mt19937 &rng, int64_t V, size_t n) {
  std::vector<int64_t> all(V);
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(std::min<size_t>(n, V));
  return all;
}

TEST(Sampler, BlocksHoldTheirRowsEdges) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t V = 50 + trial * 37;
    Graph g = randomGraph(rng, V, 1 + trial % 12);
    const std::vector<int64_t> fanouts = {trial % 3 == 0 ? -1 : 1 + trial % 5,
                                          3, 1 + trial % 4};
    NeighborSampler sampler(g.offsets.data(), g.sources.data(), V, fanouts,
                            trial);
    std::vector<int64_t> seeds = someSeeds(rng, V, 7 + trial);
    SampledBatch b = sampler.sample(seeds, trial);
    ASSERT_EQ(b.blocks.size(), fanouts.size());
    EXPECT_EQ(b.blocks.back().numDst, static_cast<int64_t>(seeds.size()));
    for (size_t l = 0; l < b.blocks.size(); ++l) {
      const Block &k = b.blocks[l];
      // Destinations first; the next block's sources are these.
      std::vector<int64_t> dst =
          l + 1 < b.blocks.size() ? b.blocks[l + 1].vertices : seeds;
      ASSERT_EQ(k.numDst, static_cast<int64_t>(dst.size()));
      ASSERT_GE(k.numSrc, k.numDst);
      ASSERT_EQ(k.numSrc, static_cast<int64_t>(k.vertices.size()));
      EXPECT_TRUE(std::equal(dst.begin(), dst.end(), k.vertices.begin()));
      // Distinct source vertices.
      std::set<int64_t> distinct(k.vertices.begin(), k.vertices.end());
      EXPECT_EQ(distinct.size(), k.vertices.size());
      ASSERT_EQ(k.offsets.size(), static_cast<size_t>(k.numDst + 1));
      for (int64_t i = 0; i < k.numDst; ++i) {
        const int64_t v = dst[i];
        const int64_t degree = g.offsets[v + 1] - g.offsets[v];
        const int64_t kept = k.offsets[i + 1] - k.offsets[i];
        // Expanded once, by the outermost block holding it as a
        // destination, with that layer's fanout.
        size_t by = l;
        while (by + 1 < b.blocks.size() && i < b.blocks[by + 1].numDst)
          ++by;
        EXPECT_EQ(kept,
                  fanouts[by] < 0 ? degree : std::min(fanouts[by], degree));
        for (int64_t e = k.offsets[i]; e < k.offsets[i + 1]; ++e) {
          const int64_t p = k.edgePositions[e];
          // An in-edge of v, its source the relabelled one, in order.
          ASSERT_GE(p, g.offsets[v]);
          ASSERT_LT(p, g.offsets[v + 1]);
          ASSERT_GE(k.sources[e], 0);
          ASSERT_LT(k.sources[e], k.numSrc);
          EXPECT_EQ(k.vertices[k.sources[e]], g.sources[p]);
          if (e > k.offsets[i]) {
            EXPECT_LT(k.edgePositions[e - 1], p);
          }
        }
      }
      // The next block is a prefix of this one: its rows, the same ids.
      if (l + 1 < b.blocks.size()) {
        const Block &n = b.blocks[l + 1];
        const int64_t edges = n.offsets[n.numDst];
        EXPECT_TRUE(
            std::equal(n.offsets.begin(), n.offsets.end(), k.offsets.begin()));
        EXPECT_TRUE(
            std::equal(n.sources.begin(), n.sources.end(), k.sources.begin()));
        EXPECT_TRUE(std::equal(n.edgePositions.begin(), n.edgePositions.end(),
                               k.edgePositions.begin()));
        ASSERT_LE(edges, k.offsets[k.numDst]);
      }
    }
    // The levels: blocks[0]'s sources, then each block's destinations.
    std::vector<int64_t> levels = b.levelRows();
    ASSERT_EQ(levels.size(), fanouts.size() + 1);
    EXPECT_EQ(levels.front(), b.blocks.front().numSrc);
    EXPECT_EQ(levels.back(), static_cast<int64_t>(seeds.size()));
    EXPECT_TRUE(std::is_sorted(levels.rbegin(), levels.rend()));
    EXPECT_EQ(b.numEdges(),
              static_cast<int64_t>(b.blocks.front().sources.size()));
  }
}

TEST(Sampler, SameBatchAnyThreadsOtherBatchOtherBlocks) {
  std::mt19937 rng(5);
  const int64_t V = 2000;
  Graph g = randomGraph(rng, V, 40);
  NeighborSampler sampler(g.offsets.data(), g.sources.data(), V, {10, 5}, 42);
  std::vector<int64_t> seeds = someSeeds(rng, V, 300);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  SampledBatch one = sampler.sample(seeds, 9);
  omp_set_num_threads(std::max(2, threads));
  SampledBatch many = sampler.sample(seeds, 9);
  omp_set_num_threads(threads);
  for (size_t l = 0; l < one.blocks.size(); ++l) {
    EXPECT_EQ(one.blocks[l].edgePositions, many.blocks[l].edgePositions);
    EXPECT_EQ(one.blocks[l].vertices, many.blocks[l].vertices);
    EXPECT_EQ(one.blocks[l].sources, many.blocks[l].sources);
  }
  SampledBatch other = sampler.sample(seeds, 10);
  EXPECT_NE(one.blocks.back().edgePositions, other.blocks.back().edgePositions);
  NeighborSampler reseeded(g.offsets.data(), g.sources.data(), V, {10, 5}, 43);
  EXPECT_NE(one.blocks.back().edgePositions,
            reseeded.sample(seeds, 9).blocks.back().edgePositions);
}

// A limit on the edges: a batch within it is the batch (the same blocks),
// one past it is not built (truncated, no block), for every limit around
// the batch's edge count, any fanouts (-1 too) and an empty batch.
TEST(Sampler, EdgeLimitStopsOnlyBatchesPastIt) {
  std::mt19937 rng(21);
  for (int trial = 0; trial < 10; ++trial) {
    const int64_t V = 300 + 100 * trial;
    Graph g = randomGraph(rng, V, 5 + 4 * trial);
    const std::vector<int64_t> fanouts = {trial % 2 ? -1 : 4, -1,
                                          trial % 3 ? 3 : -1};
    NeighborSampler sampler(g.offsets.data(), g.sources.data(), V, fanouts,
                            trial);
    const std::vector<int64_t> seeds =
        someSeeds(rng, V, trial == 9 ? 0 : 1 + 5 * trial);
    const SampledBatch whole = sampler.sample(seeds, 3);
    EXPECT_FALSE(whole.truncated);
    const int64_t E = whole.numEdges();
    for (int64_t limit : {int64_t{0}, E / 2, E - 1, E, E + 1, 10 * E + 5}) {
      if (limit < 0)
        continue;
      const SampledBatch b = sampler.sample(seeds, 3, limit);
      SCOPED_TRACE("trial " + std::to_string(trial) + ", " + std::to_string(E) +
                   " edges, limit " + std::to_string(limit));
      EXPECT_EQ(b.truncated, E > limit);
      if (b.truncated) {
        EXPECT_TRUE(b.blocks.empty());
        continue;
      }
      ASSERT_EQ(b.blocks.size(), whole.blocks.size());
      for (size_t l = 0; l < b.blocks.size(); ++l) {
        EXPECT_EQ(b.blocks[l].offsets, whole.blocks[l].offsets);
        EXPECT_EQ(b.blocks[l].edgePositions, whole.blocks[l].edgePositions);
        EXPECT_EQ(b.blocks[l].vertices, whole.blocks[l].vertices);
      }
    }
  }
}

TEST(Sampler, PicksAreUniform) {
  // One destination with 10 in-edges, fanout 3: each edge is kept with
  // probability 3/10; over 20,000 batches each count is within 5 sigma.
  Graph g;
  g.offsets = {0, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10};
  for (int32_t u = 1; u <= 10; ++u)
    g.sources.push_back(u);
  NeighborSampler sampler(g.offsets.data(), g.sources.data(), 11, {3}, 1);
  std::map<int64_t, int> kept;
  const int batches = 20000;
  for (int b = 0; b < batches; ++b) {
    SampledBatch batch = sampler.sample({0}, b);
    for (int64_t p : batch.blocks[0].edgePositions)
      ++kept[p];
  }
  const double mean = batches * 0.3, sigma = std::sqrt(batches * 0.3 * 0.7);
  ASSERT_EQ(kept.size(), 10u);
  for (auto [p, n] : kept)
    EXPECT_NEAR(n, mean, 5 * sigma) << "edge " << p;
}

/// Each vertex's hops from `seeds` along in-edges (-1: unreached).
std::vector<int64_t> inHops(const Graph &g, const std::vector<int64_t> &seeds,
                            int64_t V) {
  std::vector<int64_t> hop(V, -1), frontier = seeds;
  for (int64_t s : seeds)
    hop[s] = 0;
  for (int64_t h = 1; !frontier.empty(); ++h) {
    std::vector<int64_t> next;
    for (int64_t x : frontier)
      for (int64_t p = g.offsets[x]; p < g.offsets[x + 1]; ++p)
        if (hop[g.sources[p]] < 0) {
          hop[g.sources[p]] = h;
          next.push_back(g.sources[p]);
        }
    frontier = std::move(next);
  }
  return hop;
}

TEST(Sampler, ExpansionAwareHoldsTheInducedSubgraphOfItsHops) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t V = 60 + trial * 23, L = 2 + trial % 2;
    Graph g = randomGraph(rng, V, 2 + trial % 9);
    const int64_t maxHop = trial % 4 == 3 ? -1 : trial % 4; // 0, 1, 2, all
    const int64_t fanout = trial % 5 == 4 ? -1 : trial % 5; // 0 .. 3, all
    NeighborSampler sampler(g.offsets.data(), g.sources.data(), V,
                            std::vector<int64_t>(L, 5), trial);
    sampler.useExpansionAware(maxHop, fanout);
    const std::vector<int64_t> seeds = someSeeds(rng, V, 3 + trial % 7);
    const SampledBatch b = sampler.sample(seeds, trial);
    ASSERT_EQ(static_cast<int64_t>(b.blocks.size()), L);
    const Block &input = b.blocks.front();
    std::set<int64_t> held(input.vertices.begin(), input.vertices.end());
    ASSERT_EQ(held.size(), input.vertices.size());
    const std::set<int64_t> inner(seeds.begin(), seeds.end());
    const std::vector<int64_t> hop = inHops(g, seeds, V);
    const int64_t hops = maxHop < 0 ? L : std::min(maxHop, L);
    int64_t external = 0;
    for (int64_t w : held) {
      external += !inner.count(w);
      // Within the hops (a pick at hop h is at most h from the seeds).
      EXPECT_GE(hop[w], 0);
      EXPECT_LE(hop[w], hops) << "vertex " << w;
    }
    if (fanout < 0) {
      // Every neighbour: the exact closure of those hops.
      for (int64_t v = 0; v < V; ++v) {
        EXPECT_EQ(held.count(v), hop[v] >= 0 && hop[v] <= hops ? 1u : 0u);
      }
    } else {
      int64_t bound = 0, power = 1;
      for (int64_t h = 0; h < hops; ++h)
        bound += power *= fanout;
      EXPECT_LE(external, static_cast<int64_t>(seeds.size()) * bound);
      // Each seed picked min(fanout, its distinct external neighbours).
      for (int64_t x : seeds) {
        std::set<int64_t> candidates, picked;
        for (int64_t p = g.offsets[x]; p < g.offsets[x + 1]; ++p)
          if (!inner.count(g.sources[p])) {
            candidates.insert(g.sources[p]);
            if (held.count(g.sources[p]))
              picked.insert(g.sources[p]);
          }
        if (hops > 0) {
          EXPECT_GE(picked.size(), std::min<size_t>(candidates.size(), fanout));
        }
      }
    }
    // The blocks: seeds last, each a prefix of the one before, and every
    // destination's in-edges from held vertices, none other (induced).
    EXPECT_TRUE(std::equal(seeds.begin(), seeds.end(),
                           b.blocks.back().vertices.begin()));
    for (int64_t l = 0; l < L; ++l) {
      const Block &k = b.blocks[l];
      for (int64_t i = 0; i < k.numDst; ++i) {
        const int64_t v = k.vertices[i];
        std::vector<int64_t> want;
        for (int64_t p = g.offsets[v]; p < g.offsets[v + 1]; ++p)
          if (held.count(g.sources[p]))
            want.push_back(p);
        EXPECT_EQ(
            std::vector<int64_t>(k.edgePositions.begin() + k.offsets[i],
                                 k.edgePositions.begin() + k.offsets[i + 1]),
            want);
        for (int64_t e = k.offsets[i]; e < k.offsets[i + 1]; ++e) {
          EXPECT_EQ(k.vertices[k.sources[e]], g.sources[k.edgePositions[e]]);
        }
      }
      if (l + 1 < L) {
        const Block &n = b.blocks[l + 1];
        EXPECT_EQ(k.numDst, n.numSrc);
        EXPECT_TRUE(std::equal(n.vertices.begin(), n.vertices.end(),
                               k.vertices.begin()));
        EXPECT_TRUE(std::equal(n.edgePositions.begin(), n.edgePositions.end(),
                               k.edgePositions.begin()));
      }
    }
    // Drawn once: another batch of the same seeds holds the same blocks.
    const SampledBatch again = sampler.sample(seeds, trial + 1000);
    for (int64_t l = 0; l < L; ++l) {
      EXPECT_EQ(again.blocks[l].vertices, b.blocks[l].vertices);
      EXPECT_EQ(again.blocks[l].edgePositions, b.blocks[l].edgePositions);
    }
    // Every neighbour over the model's hops is fanout -1 at every hop.
    if (maxHop < 0 && fanout < 0) {
      NeighborSampler all(g.offsets.data(), g.sources.data(), V,
                          std::vector<int64_t>(L, -1), trial);
      const SampledBatch a = all.sample(seeds, trial);
      for (int64_t l = 0; l < L; ++l) {
        EXPECT_EQ(a.blocks[l].vertices, b.blocks[l].vertices);
        EXPECT_EQ(a.blocks[l].offsets, b.blocks[l].offsets);
        EXPECT_EQ(a.blocks[l].edgePositions, b.blocks[l].edgePositions);
        EXPECT_EQ(a.blocks[l].sources, b.blocks[l].sources);
      }
    }
  }
}

TEST(Sampler, ExpansionAwarePicksAreUniformAndSpareTheSeeds) {
  // Seed 0 with in-neighbours 1 .. 10 and seed 11, fanout 3, one hop: seed
  // 11 is always held (an inner vertex, never sampled) and each external
  // neighbour with probability 3/10 over 20,000 sampler seeds (5 sigma).
  Graph g;
  g.offsets = {0};
  for (int32_t u = 1; u <= 11; ++u)
    g.sources.push_back(u);
  g.offsets.push_back(11);
  for (int v = 1; v <= 11; ++v)
    g.offsets.push_back(11);
  std::map<int64_t, int> held;
  const int draws = 20000;
  for (int s = 0; s < draws; ++s) {
    NeighborSampler sampler(g.offsets.data(), g.sources.data(), 12, {1, 1}, s);
    sampler.useExpansionAware(1, 3);
    const SampledBatch b = sampler.sample({0, 11}, 0);
    ASSERT_EQ(b.blocks.front().vertices.size(), 5u);
    for (int64_t v : b.blocks.front().vertices)
      ++held[v];
  }
  EXPECT_EQ(held[0], draws);
  EXPECT_EQ(held[11], draws);
  const double mean = draws * 0.3, sigma = std::sqrt(draws * 0.3 * 0.7);
  for (int64_t u = 1; u <= 10; ++u)
    EXPECT_NEAR(held[u], mean, 5 * sigma) << "vertex " << u;
}

TEST(Sampler, PicksOfLongRowsAreUniform) {
  // A hub: 200 in-edges, fanout 5 (Floyd's algorithm, not a draw per
  // in-edge): 5 distinct in-edges in order, each kept with probability
  // 5/200, and both of the first two with 5 * 4 / (200 * 199), over 40,000
  // batches within 5 sigma.
  Graph g;
  const int64_t d = 200, k = 5;
  // Vertex 0's in-edges, all from vertex 1 (which has none).
  g.offsets = {0, d, d};
  g.sources.assign(d, 1);
  NeighborSampler sampler(g.offsets.data(), g.sources.data(), 2, {k}, 4);
  std::vector<int> kept(d, 0);
  int both = 0;
  const int batches = 40000;
  for (int b = 0; b < batches; ++b) {
    const std::vector<int64_t> p =
        sampler.sample({0}, b).blocks[0].edgePositions;
    ASSERT_EQ(static_cast<int64_t>(p.size()), k);
    ASSERT_TRUE(std::is_sorted(p.begin(), p.end()));
    ASSERT_EQ(std::adjacent_find(p.begin(), p.end()), p.end());
    for (int64_t e : p)
      ++kept[e];
    both += p[0] == 0 && p[1] == 1;
  }
  const double q = static_cast<double>(k) / d;
  const double mean = batches * q, sigma = std::sqrt(batches * q * (1 - q));
  for (int64_t e = 0; e < d; ++e) {
    EXPECT_NEAR(kept[e], mean, 5 * sigma) << "edge " << e;
  }
  const double q2 = static_cast<double>(k * (k - 1)) / (d * (d - 1));
  EXPECT_NEAR(both, batches * q2, 5 * std::sqrt(batches * q2));
}

TEST(Sampler, EpochBatchesPartitionTheSelection) {
  std::vector<int64_t> selected;
  for (int64_t v = 0; v < 1000; v += 3)
    selected.push_back(v);
  auto batches = epochBatches(selected, 64, 7, 0);
  ASSERT_EQ(batches.size(), (selected.size() + 63) / 64);
  std::vector<int64_t> all;
  for (size_t i = 0; i < batches.size(); ++i) {
    EXPECT_EQ(batches[i].size(),
              i + 1 < batches.size() ? 64u : selected.size() - 64 * i);
    all.insert(all.end(), batches[i].begin(), batches[i].end());
  }
  EXPECT_NE(all, selected); // shuffled
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, selected);
  EXPECT_EQ(epochBatches(selected, 64, 7, 0), batches);
  EXPECT_NE(epochBatches(selected, 64, 7, 1), batches);
  EXPECT_NE(epochBatches(selected, 64, 8, 0), batches);
  EXPECT_TRUE(epochBatches({}, 64, 7, 0).empty());
}

/// Each seed's value after the model's hops, from the blocks: level 0 is
/// `input` (by global id); level l + 1 of a vertex sums over its in-edges
/// the source's level l value over the source's out-degree (`outDegree`,
/// by local id), times a weight of the edge's graph position.
std::map<int64_t, double> seedValues(const SampledBatch &b,
                                     const std::vector<double> &input,
                                     const std::vector<float> &outDegree) {
  const Block &in = b.blocks.front();
  const std::vector<int64_t> rows = b.levelRows();
  std::vector<double> h(in.numSrc);
  for (int64_t v = 0; v < in.numSrc; ++v)
    h[v] = input[in.vertices[v]];
  for (size_t l = 1; l < rows.size(); ++l) {
    std::vector<double> next(rows[l], 0.0);
    for (int64_t v = 0; v < rows[l]; ++v)
      for (int64_t e = in.offsets[v]; e < in.offsets[v + 1]; ++e)
        next[v] += h[in.sources[e]] / outDegree[in.sources[e]] *
                   (1.0 + 0.01 * static_cast<double>(in.edgePositions[e] % 7));
    h = std::move(next);
  }
  std::map<int64_t, double> values;
  for (size_t s = 0; s < b.seeds.size(); ++s)
    values[b.seeds[s]] = h[s];
  return values;
}

TEST(Sampler, SeedSharesComputeTheirSeedsAsTheWholeBatch) {
  // Data-parallel mini-batch training (seedShare): the processes' shares
  // of a batch hold their seeds' closures with every in-edge, levels as
  // prefixes, and the whole batch's degrees, so each seed's value after
  // the hops is the whole batch's.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 12; ++trial) {
    const int64_t V = 80 + trial * 41;
    Graph g = randomGraph(rng, V, 2 + trial % 9);
    const std::vector<int64_t> fanouts =
        trial % 2 ? std::vector<int64_t>{4, 3} : std::vector<int64_t>{-1, 2, 3};
    NeighborSampler sampler(g.offsets.data(), g.sources.data(), V, fanouts,
                            trial);
    const SampledBatch b = sampler.sample(someSeeds(rng, V, 9 + trial), trial);
    std::vector<double> input(V);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    for (double &x : input)
      x = value(rng);
    // The whole batch's out-degrees, by local id.
    const Block &in = b.blocks.front();
    std::vector<float> outDegree(in.numSrc, 0.0f);
    for (int32_t u : in.sources)
      outDegree[u] += 1.0f;
    const std::map<int64_t, double> whole = seedValues(b, input, outDegree);
    const int64_t n = static_cast<int64_t>(b.seeds.size());
    for (int64_t parts : {1, 2, 3, 5}) {
      std::map<int64_t, double> shared;
      for (int64_t r = 0; r < parts; ++r) {
        std::vector<float> degrees[2];
        const int64_t begin = n * r / parts, end = n * (r + 1) / parts;
        const SampledBatch s = seedShare(b, begin, end, degrees);
        ASSERT_EQ(s.seeds, std::vector<int64_t>(b.seeds.begin() + begin,
                                                b.seeds.begin() + end));
        const std::vector<int64_t> rows = s.levelRows();
        ASSERT_EQ(rows.size(), fanouts.size() + 1);
        EXPECT_EQ(rows.back(), end - begin);
        EXPECT_TRUE(std::is_sorted(rows.rbegin(), rows.rend()));
        const Block &k = s.blocks.front();
        ASSERT_EQ(degrees[1].size(), static_cast<size_t>(k.numSrc));
        ASSERT_EQ(degrees[0].size(), static_cast<size_t>(k.numSrc));
        // Every block a prefix of blocks[0]; each destination keeps its
        // in-edges in the whole batch (by graph position), and its degrees.
        std::map<int64_t, int64_t> local; // global id -> whole batch's
        for (int64_t v = 0; v < in.numSrc; ++v)
          local[in.vertices[v]] = v;
        for (int64_t v = 0; v < k.numSrc; ++v) {
          const int64_t o = local.at(k.vertices[v]);
          EXPECT_EQ(degrees[1][v], outDegree[o]);
          if (v >= k.numDst)
            continue;
          std::multiset<int64_t> mine(k.edgePositions.begin() + k.offsets[v],
                                      k.edgePositions.begin() +
                                          k.offsets[v + 1]);
          std::multiset<int64_t> theirs(
              in.edgePositions.begin() + in.offsets[o],
              in.edgePositions.begin() + in.offsets[o + 1]);
          EXPECT_EQ(mine, theirs);
          EXPECT_EQ(degrees[0][v], static_cast<float>(theirs.size()));
          for (int64_t e = k.offsets[v]; e < k.offsets[v + 1]; ++e)
            EXPECT_EQ(g.sources[k.edgePositions[e]], k.vertices[k.sources[e]]);
        }
        for (size_t l = 1; l < s.blocks.size(); ++l) {
          EXPECT_EQ(s.blocks[l].numSrc, s.blocks[l - 1].numDst);
          EXPECT_TRUE(std::equal(s.blocks[l].offsets.begin(),
                                 s.blocks[l].offsets.end(), k.offsets.begin()));
        }
        for (auto [seed, x] : seedValues(s, input, degrees[1]))
          shared[seed] = x;
      }
      ASSERT_EQ(shared.size(), whole.size());
      for (auto [seed, x] : whole)
        EXPECT_NEAR(shared[seed], x, 1e-9 * (1.0 + std::abs(x)))
            << "seed " << seed << " in " << parts << " parts";
    }
    // No seeds: one vertex, no edge, no seed.
    std::vector<float> degrees[2];
    const SampledBatch none = seedShare(b, 2, 2, degrees);
    EXPECT_TRUE(none.seeds.empty());
    EXPECT_EQ(none.numEdges(), 0);
    for (int64_t rows : none.levelRows())
      EXPECT_EQ(rows, 1);
  }
}

TEST(Sampler, ShareBandsMakeEachLevelAPrefix) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    const int shares = 1 + trial % 5, L = 1 + trial % 3;
    std::vector<std::vector<int64_t>> levels(shares);
    for (std::vector<int64_t> &l : levels) {
      // n_0 >= ... >= n_L >= 1 (a share without seeds: one row throughout).
      l.assign(L + 1, 1);
      if (rng() % 4 == 0)
        continue;
      for (int b = L; b >= 0; --b)
        l[b] = (b == L ? 1 : l[b + 1]) + static_cast<int64_t>(rng() % 7);
    }
    int64_t total = 0;
    for (const std::vector<int64_t> &l : levels)
      total += l[0];
    EXPECT_EQ(shareLevelRows(levels, 0), total);
    std::vector<int> seen(total, 0);
    for (int s = 0; s < shares; ++s) {
      std::vector<int64_t> at(levels[s][0], -1);
      forEachShareRun(levels, s, levels[s][0],
                      [&](int64_t row, int64_t whole, int64_t count) {
                        for (int64_t i = 0; i < count; ++i) {
                          at[row + i] = whole + i;
                          ++seen[whole + i];
                        }
                      });
      for (int64_t i = 0; i < levels[s][0]; ++i) {
        ASSERT_GE(at[i], 0) << "share " << s << " row " << i;
        if (i > 0) {
          EXPECT_LT(at[i - 1], at[i]); // the share's order
        }
        // Row i is in level l's rows of the share iff its place is in the
        // whole graph's.
        for (int l = 0; l <= L; ++l)
          EXPECT_EQ(i < levels[s][l], at[i] < shareLevelRows(levels, l))
              << "share " << s << " row " << i << " level " << l;
      }
      // The first `rows` rows alone: the same places.
      const int64_t rows = levels[s][L] + 1;
      forEachShareRun(levels, s, rows,
                      [&](int64_t row, int64_t whole, int64_t count) {
                        EXPECT_LE(row + count, rows);
                        for (int64_t i = 0; i < count; ++i)
                          EXPECT_EQ(at[row + i], whole + i);
                      });
    }
    EXPECT_TRUE(
        std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  }
}

TEST(Sampler, ParsesFanouts) {
  std::vector<int64_t> f;
  std::string error;
  ASSERT_TRUE(parseFanouts("25,10", f, error));
  EXPECT_EQ(f, (std::vector<int64_t>{25, 10}));
  ASSERT_TRUE(parseFanouts("-1", f, error));
  EXPECT_EQ(f, (std::vector<int64_t>{-1}));
  for (const char *bad : {"", "0", "25,", ",10", "-2", "x", "10,y",
                          "99999999999999999999", "4294967296"}) {
    EXPECT_FALSE(parseFanouts(bad, f, error)) << bad;
    EXPECT_NE(error.find("positive count or -1"), std::string::npos);
  }
}

} // namespace
