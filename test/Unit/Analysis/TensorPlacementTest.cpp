//===- TensorPlacementTest.cpp - ROC's DP placement against brute force ---===//
//
// The execution states of ROC's toy GIN (Table 3), the DP against an
// exhaustive search on random DAGs, the DP against the LRU and streaming
// baselines, the refusals, and every plan replayed by a simulator of the two
// tiers written here, apart from the library's own accounting.
//
//===----------------------------------------------------------------------===//

#include "gnn/Analysis/TensorPlacement.h"

#include "llvm/ADT/STLExtras.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace mlir::gnn;
using llvm::BitVector;

namespace {

/// Unwraps an Expected, failing the test (with the message) on an error.
template <typename T>
T take(llvm::Expected<T> value) {
  if (!value) {
    ADD_FAILURE() << llvm::toString(value.takeError());
    return T();
  }
  return std::move(*value);
}

std::string errorOf(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : std::string();
}

template <typename T>
std::string errorOf(llvm::Expected<T> value) {
  return value ? std::string() : llvm::toString(value.takeError());
}

//===----------------------------------------------------------------------===//
// ROC's toy GIN (Fig. 3, Table 3)
//===----------------------------------------------------------------------===//

/// h^1 = W_2 × ReLU(W_1 × Σ_{u∈N(v)} h_u^0) and its backward pass, numbered
/// as DIGEST-neugraph-roc.md §3.4 derives: 1 gather, 2 linear+ReLU, 3 linear,
/// 4 loss gradient, 5..7 the backward of 3, 2 and 1. Table 3 keeps `a` active
/// in {1..6}, so the backward gather (7) reads a as well as ∇L(a) and g.
struct ToyGIN {
  PlacementGraph graph;
  ToyGIN() {
    auto t = [&](const char *name, uint64_t bytes) {
      return graph.addTensor(name, bytes);
    };
    unsigned h0 = t("h0", 64), g = t("g", 200), w1 = t("w1", 16),
             w2 = t("w2", 8), y = t("y", 4), a = t("a", 64), b = t("b", 32),
             h1 = t("h1", 16), dh1 = t("dL/dh1", 16), db = t("dL/db", 32),
             dw2 = t("dL/dw2", 8), da = t("dL/da", 64), dw1 = t("dL/dw1", 16),
             dh0 = t("dL/dh0", 64);
    graph.addOp("1 gather", {h0, g}, {a});
    graph.addOp("2 linear+relu", {a, w1}, {b});
    graph.addOp("3 linear", {b, w2}, {h1});
    graph.addOp("4 loss grad", {h1, y}, {dh1});
    graph.addOp("5 linear bwd", {dh1, b, w2}, {db, dw2});
    graph.addOp("6 linear+relu bwd", {db, a, b, w1}, {da, dw1});
    graph.addOp("7 gather bwd", {da, g, a}, {dh0});
  }
};

std::set<std::string> names(const PlacementGraph &graph,
                            llvm::ArrayRef<unsigned> tensors) {
  std::set<std::string> result;
  for (unsigned t : tensors)
    result.insert(graph.getTensorName(t).str());
  return result;
}

TEST(TensorPlacement, ToyGINStatesAreTable3) {
  ToyGIN gin;
  std::vector<ExecutionState> states =
      take(enumerateExecutionStates(gin.graph));
  // Table 3: the chain gives the 7 non-empty prefixes, with these A(S).
  std::vector<std::set<std::string>> table3 = {
      {"g", "a"},
      {"g", "a", "b", "w1"},
      {"g", "a", "b", "h1", "w1", "w2"},
      {"g", "a", "b", "w1", "w2", "dL/dh1"},
      {"g", "a", "b", "w1", "dL/db"},
      {"g", "a", "dL/da"},
      {}};
  ASSERT_EQ(states.size(), table3.size() + 1);
  EXPECT_TRUE(states[0].ops.none());
  EXPECT_TRUE(states[0].active.empty());
  for (unsigned k = 1; k < states.size(); ++k) {
    BitVector prefix(gin.graph.getNumOps());
    prefix.set(0, k);
    EXPECT_EQ(states[k].ops, prefix) << "state " << k;
    EXPECT_EQ(names(gin.graph, states[k].active), table3[k - 1])
        << "A(S) of {1.." << k << "}";
    EXPECT_EQ(names(gin.graph, getActiveTensors(gin.graph, prefix)),
              table3[k - 1]);
  }
}

//===----------------------------------------------------------------------===//
// The independent references
//===----------------------------------------------------------------------===//

/// Each tensor's producer, found from the op lists alone (-1: a source).
std::vector<int> producersOf(const PlacementGraph &graph) {
  std::vector<int> producer(graph.getNumTensors(), -1);
  for (unsigned op = 0; op < graph.getNumOps(); ++op)
    for (unsigned t : graph.getOutputs(op))
      producer[t] = op;
  return producer;
}

/// The least bytes loaded over every op order and every choice of what stays
/// in fast memory after each op, by exhaustive search (memoised on what has
/// run and what is resident, which changes nothing of what is searched).
/// After an op, any subset of the fast tier may stay, except tensors no op
/// still to run reads: those are never read again, so keeping one can only
/// fill the tier. Returns UINT64_MAX when nothing fits.
class BruteForce {
public:
  BruteForce(const PlacementGraph &graph, uint64_t capacity)
      : graph(graph), capacity(capacity), producer(producersOf(graph)) {
    unsigned n = graph.getNumOps();
    inMask.resize(n);
    outMask.resize(n);
    for (unsigned op = 0; op < n; ++op) {
      for (unsigned t : graph.getInputs(op))
        inMask[op] |= 1u << t;
      for (unsigned t : graph.getOutputs(op))
        outMask[op] |= 1u << t;
    }
  }

  uint64_t solve() { return search(0, 0); }

private:
  uint64_t bytes(uint32_t tensors) const {
    uint64_t sum = 0;
    for (unsigned t = 0; t < graph.getNumTensors(); ++t)
      if (tensors & (1u << t))
        sum += graph.getBytes(t);
    return sum;
  }

  uint64_t search(uint32_t done, uint32_t resident) {
    unsigned n = graph.getNumOps();
    if (done == (1u << n) - 1)
      return 0;
    auto key = std::make_pair(done, resident);
    if (auto it = memo.find(key); it != memo.end())
      return it->second;
    uint64_t best = UINT64_MAX;
    for (unsigned op = 0; op < n; ++op) {
      if (done & (1u << op))
        continue;
      bool ready = true;
      for (unsigned t : graph.getInputs(op))
        if (producer[t] >= 0 && !(done & (1u << producer[t])))
          ready = false;
      if (!ready)
        continue;
      uint32_t working = resident | inMask[op] | outMask[op];
      if (bytes(working) > capacity)
        continue;
      uint32_t loaded = inMask[op] & ~resident;
      uint64_t load = bytes(loaded);
      uint32_t after = done | (1u << op);
      uint32_t stillRead = 0;
      for (unsigned other = 0; other < n; ++other)
        if (!(after & (1u << other)))
          stillRead |= inMask[other];
      uint32_t candidates = working & stillRead;
      // Every subset of the candidates, the empty one last.
      for (uint32_t keep = candidates;; keep = (keep - 1) & candidates) {
        uint64_t rest = search(after, keep);
        // A filtered load that does not stay moves its record's bytes.
        uint64_t moved = load;
        for (auto [t, filtered] : graph.getFilteredLoads(op))
          if ((loaded & ~keep) & (1u << t))
            moved -= graph.getBytes(t) - filtered;
        if (rest != UINT64_MAX)
          best = std::min(best, moved + rest);
        if (keep == 0)
          break;
      }
    }
    memo[key] = best;
    return best;
  }

  const PlacementGraph &graph;
  uint64_t capacity;
  std::vector<int> producer;
  std::vector<uint32_t> inMask, outMask;
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> memo;
};

/// Replays `plan` on a model of the two tiers: loads need a valid slow copy
/// (a source, or a tensor written back before), ops need their inputs in the
/// fast tier and their producers run, the fast tier never holds more than
/// `capacity`, what a step keeps is what the fast tier holds after it, and
/// every program output ends in the slow tier. The bytes moved must be the
/// plan's.
testing::AssertionResult replay(const PlacementGraph &graph,
                                const PlacementPlan &plan, uint64_t capacity) {
  using testing::AssertionFailure;
  std::vector<int> producer = producersOf(graph);
  std::set<unsigned> fast, slow, done;
  for (unsigned t = 0; t < graph.getNumTensors(); ++t)
    if (producer[t] < 0)
      slow.insert(t);
  auto fastBytes = [&] {
    uint64_t sum = 0;
    for (unsigned t : fast)
      sum += graph.getBytes(t);
    return sum;
  };
  uint64_t loads = 0, writes = 0, peak = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlacementStep &step = plan.steps[i];
    unsigned op = step.op;
    if (op >= graph.getNumOps() || done.count(op))
      return AssertionFailure()
             << "step " << i << " runs op " << op << " again or out of range";
    for (unsigned t : graph.getInputs(op))
      if (producer[t] >= 0 && !done.count(producer[t]))
        return AssertionFailure()
               << "step " << i << " runs op " << op << " before its producer";
    for (unsigned t : step.load) {
      if (fast.count(t))
        return AssertionFailure() << "step " << i << " reloads resident " << t;
      if (!slow.count(t))
        return AssertionFailure() << "step " << i << " loads tensor " << t
                                  << ", which has no copy in the slow tier";
      fast.insert(t);
      // A filtered load (its record's bytes) leaves after the op; an input
      // with a record that leaves is filtered.
      uint64_t moved = graph.getBytes(t);
      bool record = false;
      for (auto [u, filtered] : graph.getFilteredLoads(op))
        if (u == t) {
          moved = filtered;
          record = true;
        }
      const bool leaves = llvm::is_contained(step.evict, t);
      if (llvm::is_contained(step.filtered, t) != (record && leaves))
        return AssertionFailure() << "step " << i << " loads " << t
                                  << (record && leaves ? " whole" : " filtered")
                                  << " where it should not";
      loads += record && leaves ? moved : graph.getBytes(t);
    }
    for (unsigned t : graph.getInputs(op))
      if (!fast.count(t))
        return AssertionFailure() << "step " << i << " lacks input " << t;
    for (unsigned t : graph.getOutputs(op))
      fast.insert(t);
    uint64_t used = fastBytes();
    if (used > capacity)
      return AssertionFailure() << "step " << i << " holds " << used
                                << " bytes, capacity " << capacity;
    if (used != step.workingSetBytes)
      return AssertionFailure() << "step " << i << " reports a working set of "
                                << step.workingSetBytes << ", not " << used;
    peak = std::max(peak, used);
    for (unsigned t : step.writeBack) {
      if (!fast.count(t) || slow.count(t))
        return AssertionFailure() << "step " << i << " writes back " << t
                                  << ", not resident or already written";
      slow.insert(t);
      writes += graph.getBytes(t);
    }
    for (unsigned t : step.evict) {
      if (!fast.erase(t))
        return AssertionFailure() << "step " << i << " evicts absent " << t;
    }
    if (fast != std::set<unsigned>(step.keep.begin(), step.keep.end()))
      return AssertionFailure()
             << "step " << i << " keeps other tensors than it says";
    done.insert(op);
  }
  if (done.size() != graph.getNumOps())
    return AssertionFailure() << "the plan runs " << done.size() << " of "
                              << graph.getNumOps() << " ops";
  if (!fast.empty())
    return AssertionFailure() << "tensors left in the fast tier";
  for (unsigned t = 0; t < graph.getNumTensors(); ++t)
    if (graph.isProgramOutput(t) && !slow.count(t))
      return AssertionFailure() << "program output " << t << " is lost";
  if (loads != plan.loadBytes || writes != plan.writeBytes ||
      peak != plan.peakBytes)
    return AssertionFailure()
           << "replay moves " << loads << "/" << writes << " bytes, peak "
           << peak << "; the plan says " << plan.loadBytes << "/"
           << plan.writeBytes << ", peak " << plan.peakBytes;
  return testing::AssertionSuccess();
}

/// The bytes of every source tensor some op reads: what any plan loads at
/// least once.
uint64_t sourceBytes(const PlacementGraph &graph) {
  std::vector<int> producer = producersOf(graph);
  std::set<unsigned> read;
  for (unsigned op = 0; op < graph.getNumOps(); ++op)
    for (unsigned t : graph.getInputs(op))
      if (producer[t] < 0)
        read.insert(t);
  uint64_t sum = 0;
  for (unsigned t : read)
    sum += graph.getBytes(t);
  return sum;
}

/// A random DAG of 1..maxOps ops over at most 16 tensors: 1..3 sources, each
/// op writing 1..2 new tensors and reading 1..3 earlier ones. Ops are added
/// in a shuffled order so that ids are not a topological order.
PlacementGraph randomGraph(std::mt19937 &rng, unsigned maxOps) {
  auto pick = [&](unsigned lo, unsigned hi) {
    return std::uniform_int_distribution<unsigned>(lo, hi)(rng);
  };
  PlacementGraph graph;
  unsigned numOps = pick(1, maxOps);
  std::vector<unsigned> available;
  for (unsigned s = 0, e = pick(1, 3); s < e; ++s)
    available.push_back(
        graph.addTensor("src" + std::to_string(s), pick(1, 24)));
  struct Op {
    std::vector<unsigned> in, out;
  };
  std::vector<Op> ops;
  for (unsigned op = 0; op < numOps; ++op) {
    Op o;
    for (unsigned k = 0, e = pick(1, 3); k < e; ++k)
      o.in.push_back(available[pick(0, available.size() - 1)]);
    unsigned outs =
        graph.getNumTensors() + 2 * (numOps - op) <= 16 ? pick(1, 2) : 1;
    for (unsigned k = 0; k < outs; ++k) {
      unsigned t = graph.addTensor(
          "t" + std::to_string(op) + "." + std::to_string(k), pick(0, 24));
      o.out.push_back(t);
      available.push_back(t);
    }
    ops.push_back(o);
  }
  std::shuffle(ops.begin(), ops.end(), rng);
  for (unsigned i = 0; i < ops.size(); ++i)
    graph.addOp("op" + std::to_string(i), ops[i].in, ops[i].out);
  EXPECT_EQ(errorOf(graph.verify()), "");
  return graph;
}

/// Gives about a third of `graph`'s op inputs a filtered load of 0 to all
/// of their bytes.
void addRandomFilteredLoads(std::mt19937 &rng, PlacementGraph &graph) {
  for (unsigned op = 0; op < graph.getNumOps(); ++op)
    for (unsigned t : graph.getInputs(op))
      if (std::uniform_int_distribution<int>(0, 2)(rng) == 0)
        graph.setFilteredLoad(
            op, t,
            std::uniform_int_distribution<uint64_t>(0, graph.getBytes(t))(rng));
}

/// The optimal, LRU and streaming plans at `capacity`.
std::vector<PlacementPlan> allPlans(const PlacementGraph &graph,
                                    uint64_t capacity) {
  std::vector<PlacementPlan> plans;
  plans.push_back(take(planOptimalPlacement(graph, capacity)));
  plans.push_back(take(planLRUPlacement(graph, capacity)));
  plans.push_back(take(planStreamingPlacement(graph, capacity)));
  return plans;
}

/// Capacities to try: one below the minimum, the minimum, a few random ones
/// between it and the total, and the total.
std::vector<uint64_t> capacities(std::mt19937 &rng,
                                 const PlacementGraph &graph) {
  uint64_t lo = getMinimumCapacity(graph), hi = graph.getTotalBytes();
  std::vector<uint64_t> caps = {lo, hi};
  if (lo > 0)
    caps.push_back(lo - 1);
  for (int k = 0; k < 4; ++k)
    caps.push_back(std::uniform_int_distribution<uint64_t>(lo, hi)(rng));
  llvm::sort(caps);
  caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
  return caps;
}

//===----------------------------------------------------------------------===//
// States on random DAGs
//===----------------------------------------------------------------------===//

TEST(TensorPlacement, StatesAreExactlyTheDownwardClosedSets) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    PlacementGraph graph = randomGraph(rng, 8);
    unsigned n = graph.getNumOps();
    std::vector<int> producer = producersOf(graph);
    // Every subset of ops, kept when it holds the producer of every input of
    // its ops; A(S) straight from the definition.
    std::map<std::vector<bool>, std::set<unsigned>> expected;
    for (uint32_t subset = 0; subset < (1u << n); ++subset) {
      bool closed = true;
      for (unsigned op = 0; op < n; ++op)
        if (subset & (1u << op))
          for (unsigned t : graph.getInputs(op))
            if (producer[t] >= 0 && !(subset & (1u << producer[t])))
              closed = false;
      if (!closed)
        continue;
      std::set<unsigned> active;
      for (unsigned t = 0; t < graph.getNumTensors(); ++t) {
        bool readInside = false, readOutside = false;
        for (unsigned op = 0; op < n; ++op)
          if (llvm::is_contained(graph.getInputs(op), t))
            (subset & (1u << op) ? readInside : readOutside) = true;
        bool there =
            producer[t] >= 0 ? bool(subset & (1u << producer[t])) : readInside;
        if (there && readOutside)
          active.insert(t);
      }
      std::vector<bool> key(n);
      for (unsigned op = 0; op < n; ++op)
        key[op] = subset & (1u << op);
      expected[key] = active;
    }
    std::vector<ExecutionState> states = take(enumerateExecutionStates(graph));
    ASSERT_EQ(states.size(), expected.size()) << "trial " << trial;
    std::set<std::vector<bool>> seen;
    for (const ExecutionState &state : states) {
      std::vector<bool> key(n);
      for (unsigned op = 0; op < n; ++op)
        key[op] = state.ops.test(op);
      EXPECT_TRUE(seen.insert(key).second) << "a state is listed twice";
      ASSERT_TRUE(expected.count(key)) << "not downward closed";
      EXPECT_EQ(std::set<unsigned>(state.active.begin(), state.active.end()),
                expected[key]);
    }
    EXPECT_TRUE(states.front().ops.none());
    EXPECT_TRUE(states.back().ops.all());
  }
}

//===----------------------------------------------------------------------===//
// The DP
//===----------------------------------------------------------------------===//

/// What the DP did on the random DAGs of bruteForceAgreement.
struct Agreement {
  int solved = 0;
  /// Plans that load less than streaming.
  int cached = 0;
  /// Steps with a filtered load, and inputs with a record loaded whole
  /// (they stay for later ops).
  int filtered = 0, keptWhole = 0;
};

/// The DP against the exhaustive search on 300 random DAGs (with random
/// filtered loads when `filtered`), each plan replayed.
static Agreement bruteForceAgreement(unsigned seed, bool filtered) {
  std::mt19937 rng(seed);
  Agreement a;
  for (int trial = 0; trial < 300; ++trial) {
    PlacementGraph graph = randomGraph(rng, 8);
    if (filtered)
      addRandomFilteredLoads(rng, graph);
    for (uint64_t cap : capacities(rng, graph)) {
      uint64_t brute = BruteForce(graph, cap).solve();
      PlacementPlan plan = take(planOptimalPlacement(graph, cap));
      if (brute == UINT64_MAX) {
        EXPECT_FALSE(plan.feasible) << "trial " << trial << " cap " << cap;
        continue;
      }
      EXPECT_TRUE(plan.feasible) << "trial " << trial << " cap " << cap;
      EXPECT_EQ(plan.loadBytes, brute) << "trial " << trial << " cap " << cap;
      if (!plan.feasible || plan.loadBytes != brute)
        return a;
      EXPECT_TRUE(replay(graph, plan, cap)) << "trial " << trial;
      PlacementPlan streaming = take(planStreamingPlacement(graph, cap));
      ++a.solved;
      a.cached += plan.loadBytes < streaming.loadBytes;
      for (const PlacementStep &step : plan.steps) {
        a.filtered += !step.filtered.empty();
        for (auto [t, bytes] : graph.getFilteredLoads(step.op))
          a.keptWhole += llvm::is_contained(step.load, t) &&
                         !llvm::is_contained(step.filtered, t) &&
                         bytes < graph.getBytes(t);
      }
    }
  }
  return a;
}

TEST(TensorPlacement, OptimalEqualsBruteForceOnRandomDAGs) {
  Agreement a = bruteForceAgreement(2024, false);
  // The comparison means something only if caching often pays.
  EXPECT_GT(a.solved, 1000);
  EXPECT_GT(a.cached, a.solved / 4);
}

TEST(TensorPlacement, OptimalEqualsBruteForceWithFilteredLoads) {
  Agreement a = bruteForceAgreement(31, true);
  EXPECT_GT(a.solved, 1000);
  // Both choices occur: a filtered load taken, and an input with a record
  // loaded whole because it stays.
  EXPECT_GT(a.filtered, 100);
  EXPECT_GT(a.keptWhole, 10);
}

TEST(TensorPlacement, FilteredLoadsAreCheaperToStreamThanToKeep) {
  // A (100 bytes, 10 of them read by each of its two readers) and B (100
  // bytes, read whole twice), in a fast tier that holds both. Keeping both
  // loads 200 bytes; the DP keeps B and reads A filtered twice (10 + 100 +
  // 10 = 120 bytes).
  auto build = [](uint64_t filtered) {
    PlacementGraph graph;
    unsigned a = graph.addTensor("A", 100), b = graph.addTensor("B", 100);
    unsigned x[4];
    for (unsigned i = 0; i < 4; ++i)
      x[i] = graph.addTensor("x" + std::to_string(i), 0);
    graph.addOp("reads A", {a}, {x[0]});
    graph.addOp("reads B", {b, x[0]}, {x[1]});
    graph.addOp("reads A again", {a, x[1]}, {x[2]});
    graph.addOp("reads B again", {b, x[2]}, {x[3]});
    if (filtered < 100) {
      graph.setFilteredLoad(0, a, filtered);
      graph.setFilteredLoad(2, a, filtered);
    }
    return graph;
  };
  PlacementGraph graph = build(10);
  PlacementPlan dp = take(planOptimalPlacement(graph, 200));
  ASSERT_TRUE(dp.feasible);
  EXPECT_EQ(dp.loadBytes, 120u);
  EXPECT_TRUE(replay(graph, dp, 200));
  EXPECT_EQ(names(graph, dp.steps[0].filtered), std::set<std::string>{"A"});
  EXPECT_EQ(names(graph, dp.steps[2].filtered), std::set<std::string>{"A"});
  EXPECT_TRUE(names(graph, dp.steps[1].keep).count("B"));
  EXPECT_EQ(take(planOptimalPlacement(build(100), 200)).loadBytes, 200u);
  // The bounded search finds it too; streaming pays 10 + 100 + 10 + 100;
  // LRU keeps both and pays 200 (its choice ignores the records).
  PlacementPlan bounded = take(planBoundedPlacement(graph, 200));
  EXPECT_EQ(bounded.loadBytes, 120u);
  EXPECT_TRUE(replay(graph, bounded, 200));
  EXPECT_EQ(take(planStreamingPlacement(graph, 200)).loadBytes, 220u);
  EXPECT_EQ(take(planLRUPlacement(graph, 200)).loadBytes, 200u);
  // Where two filtered reads move more than one whole one, A stays.
  PlacementGraph dense = build(60);
  PlacementPlan whole = take(planOptimalPlacement(dense, 200));
  EXPECT_EQ(whole.loadBytes, 200u);
  EXPECT_TRUE(whole.steps[0].filtered.empty());
  EXPECT_TRUE(replay(dense, whole, 200));
}

TEST(TensorPlacement, OptimalAtMostLRUAtMostStreaming) {
  std::mt19937 rng(99);
  std::vector<PlacementGraph> graphs;
  graphs.push_back(ToyGIN().graph);
  for (int trial = 0; trial < 300; ++trial)
    graphs.push_back(randomGraph(rng, 8));
  int lruWorse = 0;
  for (const PlacementGraph &graph : graphs) {
    for (uint64_t cap = getMinimumCapacity(graph); cap <= graph.getTotalBytes();
         cap += 1 + cap / 16) {
      PlacementPlan dp = take(planOptimalPlacement(graph, cap));
      PlacementPlan lru = take(planLRUPlacement(graph, cap));
      PlacementPlan streaming = take(planStreamingPlacement(graph, cap));
      ASSERT_TRUE(dp.feasible && lru.feasible && streaming.feasible);
      EXPECT_LE(dp.loadBytes, lru.loadBytes) << "cap " << cap;
      EXPECT_LE(lru.loadBytes, streaming.loadBytes) << "cap " << cap;
      EXPECT_TRUE(replay(graph, lru, cap));
      EXPECT_TRUE(replay(graph, streaming, cap));
      lruWorse += dp.loadBytes < lru.loadBytes;
    }
  }
  EXPECT_GT(lruWorse, 0) << "LRU was optimal everywhere: a weak test";
}

// Belady's MIN (the tensor read again last leaves first) is a valid plan
// between the DP's optimum and streaming; it differs from LRU (better on
// some graphs) since only its victims differ.
TEST(TensorPlacement, BeladyBetweenOptimalAndStreaming) {
  std::mt19937 rng(17);
  std::vector<PlacementGraph> graphs;
  graphs.push_back(ToyGIN().graph);
  for (int trial = 0; trial < 300; ++trial)
    graphs.push_back(randomGraph(rng, 8));
  int beladyBetter = 0;
  for (const PlacementGraph &graph : graphs) {
    for (uint64_t cap = getMinimumCapacity(graph); cap <= graph.getTotalBytes();
         cap += 1 + cap / 16) {
      PlacementPlan dp = take(planOptimalPlacement(graph, cap));
      PlacementPlan belady = take(planBeladyPlacement(graph, cap));
      PlacementPlan lru = take(planLRUPlacement(graph, cap));
      PlacementPlan streaming = take(planStreamingPlacement(graph, cap));
      ASSERT_TRUE(belady.feasible);
      EXPECT_EQ(belady.strategy, PlacementStrategy::Belady);
      EXPECT_LE(dp.loadBytes, belady.loadBytes) << "cap " << cap;
      EXPECT_LE(belady.loadBytes, streaming.loadBytes) << "cap " << cap;
      EXPECT_TRUE(replay(graph, belady, cap));
      beladyBetter += belady.loadBytes < lru.loadBytes;
    }
  }
  EXPECT_GT(beladyBetter, 0) << "Belady never beat LRU: its victims are LRU's";
}

TEST(TensorPlacement, CostIsNonIncreasingInCapacity) {
  std::mt19937 rng(5);
  std::vector<PlacementGraph> graphs;
  graphs.push_back(ToyGIN().graph);
  for (int trial = 0; trial < 200; ++trial)
    graphs.push_back(randomGraph(rng, 8));
  for (const PlacementGraph &graph : graphs) {
    uint64_t previous = UINT64_MAX;
    for (uint64_t cap = getMinimumCapacity(graph);
         cap <= graph.getTotalBytes() + 1; ++cap) {
      PlacementPlan plan = take(planOptimalPlacement(graph, cap));
      ASSERT_TRUE(plan.feasible);
      EXPECT_LE(plan.loadBytes, previous) << "cap " << cap;
      EXPECT_LE(plan.peakBytes, cap);
      previous = plan.loadBytes;
    }
  }
}

TEST(TensorPlacement, LargeCapacityLoadsEachSourceOnce) {
  std::mt19937 rng(11);
  std::vector<PlacementGraph> graphs;
  graphs.push_back(ToyGIN().graph);
  for (int trial = 0; trial < 100; ++trial)
    graphs.push_back(randomGraph(rng, 8));
  for (const PlacementGraph &graph : graphs) {
    uint64_t total = graph.getTotalBytes();
    for (uint64_t cap : {total, 2 * total + 1}) {
      PlacementPlan dp = take(planOptimalPlacement(graph, cap));
      PlacementPlan lru = take(planLRUPlacement(graph, cap));
      EXPECT_EQ(dp.loadBytes, sourceBytes(graph));
      EXPECT_EQ(lru.loadBytes, sourceBytes(graph));
      // Nothing is evicted while read later: only program outputs go back.
      uint64_t outputs = 0;
      for (unsigned t = 0; t < graph.getNumTensors(); ++t)
        if (graph.isProgramOutput(t))
          outputs += graph.getBytes(t);
      EXPECT_EQ(lru.writeBytes, outputs);
      EXPECT_TRUE(replay(graph, dp, cap));
    }
  }
  // The toy GIN: h0, g, w1, w2 and y, once each.
  ToyGIN gin;
  PlacementPlan plan = take(planOptimalPlacement(gin.graph, 10000));
  EXPECT_EQ(plan.loadBytes, 64u + 200 + 16 + 8 + 4);
}

TEST(TensorPlacement, BelowTheMinimumIsInfeasible) {
  ToyGIN gin;
  // Op 6 reads dL/db, a, b, w1 and writes dL/da, dL/dw1: 224 bytes; op 7
  // needs 64 + 200 + 64 + 64 = 392.
  uint64_t minimum = getMinimumCapacity(gin.graph);
  EXPECT_EQ(minimum, 392u);
  // The op that needs it (what the errors name): the first with 392 bytes.
  const PlacementGraph &g = gin.graph;
  auto opBytes = [&](unsigned op) {
    return g.getBytes(g.getInputs(op)) + g.getBytes(g.getOutputs(op));
  };
  const unsigned largest = getLargestOp(g);
  EXPECT_EQ(opBytes(largest), minimum);
  for (unsigned op = 0; op < largest; ++op)
    EXPECT_LT(opBytes(op), minimum) << g.getOpName(op).str();
  PlacementGraph empty;
  EXPECT_EQ(getLargestOp(empty), 0u);
  EXPECT_EQ(getMinimumCapacity(empty), 0u);
  for (const PlacementPlan &p : allPlans(gin.graph, minimum - 1)) {
    EXPECT_FALSE(p.feasible) << stringifyPlacementStrategy(p.strategy).str();
    EXPECT_EQ(p.minCapacity, minimum);
    EXPECT_TRUE(p.steps.empty());
  }
  // The capacity is not strict: a working set of exactly the capacity fits.
  for (const PlacementPlan &p : allPlans(gin.graph, minimum)) {
    EXPECT_TRUE(p.feasible) << stringifyPlacementStrategy(p.strategy).str();
    EXPECT_EQ(p.peakBytes, minimum);
    EXPECT_TRUE(replay(gin.graph, p, minimum));
  }
}

TEST(TensorPlacement, ToyGINPlansReplay) {
  ToyGIN gin;
  uint64_t minimum = getMinimumCapacity(gin.graph);
  uint64_t streamingBytes = 0;
  for (unsigned op = 0; op < gin.graph.getNumOps(); ++op)
    streamingBytes += gin.graph.getBytes(gin.graph.getInputs(op));
  for (uint64_t cap = minimum; cap <= gin.graph.getTotalBytes(); cap += 8) {
    PlacementPlan dp = take(planOptimalPlacement(gin.graph, cap));
    PlacementPlan lru = take(planLRUPlacement(gin.graph, cap));
    PlacementPlan streaming = take(planStreamingPlacement(gin.graph, cap));
    EXPECT_TRUE(replay(gin.graph, dp, cap)) << "cap " << cap;
    EXPECT_TRUE(replay(gin.graph, lru, cap)) << "cap " << cap;
    EXPECT_TRUE(replay(gin.graph, streaming, cap)) << "cap " << cap;
    EXPECT_EQ(streaming.loadBytes, streamingBytes);
    EXPECT_LE(dp.loadBytes, lru.loadBytes);
    EXPECT_EQ(dp.loadBytes, BruteForce(gin.graph, cap).solve());
  }
}

TEST(TensorPlacement, LRUEvictsTheLeastRecentlyUsed) {
  // Weights A, B, C of 10 bytes; a chain p -> q -> r -> s -> u of 1-byte
  // tensors; op0 reads A, op1 B, op2 C, op3 A again, op4 B again. With 22
  // bytes, op2 (C, q, r) leaves room for one of A and B: LRU evicts A, used
  // last by op0, and reloads it for op3.
  PlacementGraph graph;
  unsigned a = graph.addTensor("A", 10), b = graph.addTensor("B", 10),
           c = graph.addTensor("C", 10), p = graph.addTensor("p", 1),
           q = graph.addTensor("q", 1), r = graph.addTensor("r", 1),
           s = graph.addTensor("s", 1), u = graph.addTensor("u", 1);
  graph.addOp("op0", {a}, {p});
  graph.addOp("op1", {b, p}, {q});
  graph.addOp("op2", {c, q}, {r});
  graph.addOp("op3", {a, r}, {s});
  graph.addOp("op4", {b, s}, {u});
  PlacementPlan lru = take(planLRUPlacement(graph, 22));
  ASSERT_EQ(lru.steps.size(), 5u);
  using List = llvm::SmallVector<unsigned, 4>;
  EXPECT_EQ(lru.steps[0].keep, (List{a, p}));
  EXPECT_EQ(lru.steps[1].keep, (List{b, q}));
  EXPECT_EQ(lru.steps[1].evict, (List{a, p}));
  EXPECT_EQ(lru.steps[3].load, (List{a}));
  EXPECT_TRUE(lru.steps[4].load.empty());
  EXPECT_EQ(lru.loadBytes, 40u);
  EXPECT_EQ(lru.writeBytes, 1u);
  EXPECT_TRUE(replay(graph, lru, 22));
  // One weight must be reloaded whatever the order: the DP agrees.
  EXPECT_EQ(take(planOptimalPlacement(graph, 22)).loadBytes, 40u);
  // With 32 bytes nothing is evicted.
  EXPECT_EQ(take(planLRUPlacement(graph, 32)).loadBytes, 30u);
}

//===----------------------------------------------------------------------===//
// Bounds and bad input
//===----------------------------------------------------------------------===//

TEST(TensorPlacement, RefusesTooManyStates) {
  // 20 independent ops: 2^20 states.
  PlacementGraph graph;
  for (int i = 0; i < 20; ++i) {
    unsigned in = graph.addTensor("x" + std::to_string(i), 1);
    unsigned out = graph.addTensor("y" + std::to_string(i), 1);
    graph.addOp("op" + std::to_string(i), {in}, {out});
  }
  auto start = std::chrono::steady_clock::now();
  std::string error = errorOf(planOptimalPlacement(graph, 100));
  EXPECT_NE(error.find("more than 65536 valid execution states"),
            std::string::npos)
      << error;
  EXPECT_NE(errorOf(enumerateExecutionStates(graph)), "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // The baselines need no states.
  EXPECT_TRUE(take(planLRUPlacement(graph, 100)).feasible);
}

TEST(TensorPlacement, RefusesTooManyActiveTensors) {
  // 13 weights read by the first and the last op of a chain.
  PlacementGraph graph;
  std::vector<unsigned> weights;
  for (int i = 0; i < 13; ++i)
    weights.push_back(graph.addTensor("w" + std::to_string(i), 1));
  unsigned x = graph.addTensor("x", 1), y = graph.addTensor("y", 1);
  graph.addOp("first", weights, {x});
  std::vector<unsigned> lastInputs = weights;
  lastInputs.push_back(x);
  graph.addOp("last", lastInputs, {y});
  std::string error = errorOf(planOptimalPlacement(graph, 100));
  EXPECT_NE(error.find("14 active tensors, over the limit of 12"),
            std::string::npos)
      << error;
  PlacementLimits limits;
  limits.maxActiveTensors = 14;
  PlacementPlan plan = take(planOptimalPlacement(graph, 100, limits));
  EXPECT_EQ(plan.loadBytes, 13u);
  limits.maxTableEntries = 1000;
  EXPECT_NE(errorOf(planOptimalPlacement(graph, 100, limits))
                .find("over the limit of 1000"),
            std::string::npos);
}

TEST(TensorPlacement, SixteenStatesAndFourThousandCacheSetsSolveFast) {
  // A chain of 15 ops (16 states); 11 weights read by the first and the last
  // op, so that most states have 12 active tensors: 4096 cache sets.
  PlacementGraph graph;
  std::vector<unsigned> weights;
  for (int i = 0; i < 11; ++i)
    weights.push_back(graph.addTensor("w" + std::to_string(i), 10 + i));
  unsigned prev = graph.addTensor("x", 50);
  std::vector<unsigned> firstInputs = weights;
  firstInputs.push_back(prev);
  for (int i = 0; i < 15; ++i) {
    unsigned out = graph.addTensor("h" + std::to_string(i), 30 + 7 * (i % 4));
    if (i == 0)
      graph.addOp("op0", firstInputs, {out});
    else if (i == 14) {
      std::vector<unsigned> lastInputs = weights;
      lastInputs.push_back(prev);
      graph.addOp("op14", lastInputs, {out});
    } else {
      graph.addOp("op" + std::to_string(i), {prev, weights[i % 11]}, {out});
    }
    prev = out;
  }
  std::vector<ExecutionState> states = take(enumerateExecutionStates(graph));
  ASSERT_EQ(states.size(), 16u);
  size_t widest = 0;
  for (const ExecutionState &state : states)
    widest = std::max(widest, state.active.size());
  EXPECT_EQ(widest, 12u);
  auto start = std::chrono::steady_clock::now();
  uint64_t minimum = getMinimumCapacity(graph);
  for (uint64_t cap = minimum; cap <= graph.getTotalBytes(); cap += 40) {
    PlacementPlan dp = take(planOptimalPlacement(graph, cap));
    PlacementPlan lru = take(planLRUPlacement(graph, cap));
    EXPECT_LE(dp.loadBytes, lru.loadBytes);
    EXPECT_TRUE(replay(graph, dp, cap));
  }
  // Sub-second per solve in a Release build; generous for a loaded machine.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(TensorPlacement, RejectsInvalidGraphs) {
  {
    PlacementGraph graph;
    unsigned a = graph.addTensor("a", 1), b = graph.addTensor("b", 1);
    graph.addOp("f", {a}, {b});
    graph.addOp("g", {b}, {a});
    EXPECT_NE(errorOf(graph.verify()).find("do not form a DAG"),
              std::string::npos);
    EXPECT_NE(errorOf(planOptimalPlacement(graph, 10)), "");
    EXPECT_NE(errorOf(planLRUPlacement(graph, 10)), "");
  }
  {
    PlacementGraph graph;
    unsigned a = graph.addTensor("a", 1), b = graph.addTensor("b", 1);
    graph.addOp("f", {a}, {b});
    graph.addOp("g", {a}, {b});
    EXPECT_EQ(errorOf(graph.verify()),
              "tensor 'b' is written by ops 'f' and 'g'");
  }
  {
    PlacementGraph graph;
    unsigned a = graph.addTensor("a", 1);
    graph.addOp("f", {a}, {a});
    EXPECT_EQ(errorOf(graph.verify()), "op 'f' reads its own output 'a'");
  }
  {
    PlacementGraph graph;
    graph.addOp("f", {3}, {});
    EXPECT_EQ(errorOf(graph.verify()), "op 'f' reads tensor 3 of 0");
  }
  {
    PlacementGraph graph;
    unsigned a = graph.addTensor("a", 8), b = graph.addTensor("b", 8);
    graph.addOp("f", {a}, {b});
    graph.setFilteredLoad(0, b, 1);
    EXPECT_EQ(errorOf(graph.verify()),
              "op 'f' has a filtered load of tensor 1, which it does not read");
    PlacementGraph over;
    a = over.addTensor("a", 8);
    over.addOp("f", {a}, {});
    over.setFilteredLoad(0, a, 9);
    EXPECT_EQ(errorOf(over.verify()), "op 'f' has a filtered load of 9 bytes "
                                      "of tensor 'a', which has 8");
  }
  {
    // An order that is not topological, and a keep set of absent tensors.
    ToyGIN gin;
    EXPECT_NE(
        errorOf(planLRUPlacement(gin.graph, 10000, {1, 0, 2, 3, 4, 5, 6})), "");
    std::vector<llvm::SmallVector<unsigned, 4>> keep(7);
    keep[0] = {4}; // y is not loaded before op 4.
    EXPECT_NE(
        errorOf(buildPlacementPlan(gin.graph, 10000, PlacementStrategy::LRU,
                                   {0, 1, 2, 3, 4, 5, 6}, keep))
            .find("not in fast memory"),
        std::string::npos);
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// The bounded search (beyond the DP's limits)
//===----------------------------------------------------------------------===//

/// Over the DP's own order on random DAGs (with random filtered loads when
/// `filtered`), the bounded search is at least the optimum and at most LRU;
/// returns the cases solved and those at the optimum.
static std::pair<int, int> boundedAgainstTheOptimum(unsigned seed,
                                                    bool filtered) {
  std::mt19937 rng(seed);
  int solved = 0, optimal = 0;
  for (int trial = 0; trial < 300; ++trial) {
    PlacementGraph graph = randomGraph(rng, 8);
    if (filtered)
      addRandomFilteredLoads(rng, graph);
    for (uint64_t cap : capacities(rng, graph)) {
      PlacementPlan dp = take(planOptimalPlacement(graph, cap));
      if (!dp.feasible) {
        EXPECT_FALSE(take(planBoundedPlacement(graph, cap)).feasible);
        continue;
      }
      // Over the DP's own order, the bounded search is at least the optimum
      // and at most LRU over that order.
      llvm::SmallVector<unsigned> order;
      for (const PlacementStep &step : dp.steps)
        order.push_back(step.op);
      PlacementPlan bounded = take(planBoundedPlacement(graph, cap, order));
      PlacementPlan lru = take(planLRUPlacement(graph, cap, order));
      EXPECT_TRUE(bounded.feasible) << "trial " << trial;
      if (!bounded.feasible)
        continue;
      EXPECT_TRUE(replay(graph, bounded, cap)) << "trial " << trial;
      EXPECT_GE(bounded.loadBytes, dp.loadBytes) << "trial " << trial;
      EXPECT_LE(bounded.loadBytes, lru.loadBytes) << "trial " << trial;
      ++solved;
      optimal += bounded.loadBytes == dp.loadBytes;
    }
  }
  return {solved, optimal};
}

TEST(TensorPlacement, BoundedSearchBetweenTheOptimumAndLRU) {
  auto [solved, optimal] = boundedAgainstTheOptimum(77, false);
  EXPECT_GT(solved, 1000);
  // Measured: every one of 1559 cases reaches the optimum over the DP's
  // order.
  EXPECT_GT(optimal, solved * 95 / 100) << optimal << " of " << solved;
}

TEST(TensorPlacement, BoundedSearchWithFilteredLoads) {
  auto [solved, optimal] = boundedAgainstTheOptimum(78, true);
  EXPECT_GT(solved, 1000);
  EXPECT_GT(optimal, solved * 90 / 100) << optimal << " of " << solved;
}

/// A chain of `numOps` row-chunk-like ops over many tensors: each op reads
/// 1..3 of the last `window` tensors written (or a weight) and writes one;
/// sizes vary 1..40.
static PlacementGraph randomChain(std::mt19937 &rng, unsigned numOps,
                                  unsigned window) {
  auto pick = [&](unsigned lo, unsigned hi) {
    return std::uniform_int_distribution<unsigned>(lo, hi)(rng);
  };
  PlacementGraph graph;
  std::vector<unsigned> weights, written;
  for (unsigned w = 0; w < 6; ++w)
    weights.push_back(graph.addTensor("w" + std::to_string(w), pick(1, 40)));
  for (unsigned op = 0; op < numOps; ++op) {
    std::vector<unsigned> in;
    for (unsigned k = 0, e = pick(1, 3); k < e; ++k) {
      if (written.empty() || pick(0, 4) == 0)
        in.push_back(weights[pick(0, weights.size() - 1)]);
      else
        in.push_back(
            written[written.size() - 1 -
                    pick(0, std::min<unsigned>(window, written.size()) - 1)]);
    }
    unsigned out = graph.addTensor("t" + std::to_string(op), pick(1, 40));
    graph.addOp("op" + std::to_string(op), in, {out});
    written.push_back(out);
  }
  EXPECT_EQ(errorOf(graph.verify()), "");
  return graph;
}

TEST(TensorPlacement, BoundedSearchPlansWhereTheDPCannot) {
  std::mt19937 rng(5);
  int beatLRU = 0, cases = 0;
  for (int trial = 0; trial < 40; ++trial) {
    PlacementGraph graph = randomChain(rng, 120, 40);
    const uint64_t lo = getMinimumCapacity(graph);
    for (uint64_t cap : {lo, lo + 40, lo * 2, lo * 4}) {
      PlacementPlan bounded = take(planBoundedPlacement(graph, cap));
      PlacementPlan lru = take(planLRUPlacement(graph, cap));
      PlacementPlan streaming = take(planStreamingPlacement(graph, cap));
      EXPECT_TRUE(bounded.feasible) << "trial " << trial;
      if (!bounded.feasible)
        continue;
      EXPECT_TRUE(replay(graph, bounded, cap)) << "trial " << trial;
      EXPECT_LE(bounded.loadBytes, lru.loadBytes) << "trial " << trial;
      EXPECT_LE(lru.loadBytes, streaming.loadBytes) << "trial " << trial;
      beatLRU += bounded.loadBytes < lru.loadBytes;
      ++cases;
    }
    // The exact DP refuses these (dozens of active tensors).
    if (trial == 0) {
      EXPECT_NE(errorOf(planOptimalPlacement(graph, lo * 2)), "");
    }
  }
  // Measured: it beats LRU in all 160 cases, loading 1.48x fewer bytes on
  // average (2.57x at most), and 5.1x fewer than streaming.
  EXPECT_GT(beatLRU, cases / 2) << "the search rarely beat LRU: a weak test";
}
