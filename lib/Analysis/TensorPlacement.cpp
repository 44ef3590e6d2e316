//===- TensorPlacement.cpp - ROC's DP placement over two tiers ------------===//
//
// The DP over execution states (ROC §5) with the recurrence of Algorithm 1
// corrected, the LRU and streaming baselines, and the accounting they share.
// docs/MemoryBudget.md states the model and the correction.
//
//===----------------------------------------------------------------------===//

#include "gnn/Analysis/TensorPlacement.h"

#include "PlacementSupport.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cassert>
#include <limits>

using namespace mlir;
using namespace mlir::gnn;
using llvm::ArrayRef;
using llvm::BitVector;
using llvm::SmallVector;
using llvm::StringRef;

using namespace mlir::gnn::placement;

llvm::Error placement::makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// PlacementGraph
//===----------------------------------------------------------------------===//

unsigned PlacementGraph::addTensor(StringRef name, uint64_t bytes) {
  tensorNames.push_back(name.str());
  tensorBytes.push_back(bytes);
  return tensorBytes.size() - 1;
}

static SmallVector<unsigned, 4> sortedUnique(ArrayRef<unsigned> ids) {
  SmallVector<unsigned, 4> result(ids.begin(), ids.end());
  llvm::sort(result);
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

unsigned PlacementGraph::addOp(StringRef name, ArrayRef<unsigned> inputs,
                               ArrayRef<unsigned> outputs) {
  opNames.push_back(name.str());
  opInputs.push_back(sortedUnique(inputs));
  opOutputs.push_back(sortedUnique(outputs));
  opFiltered.emplace_back();
  return opInputs.size() - 1;
}

void PlacementGraph::setFilteredLoad(unsigned op, unsigned tensor,
                                     uint64_t bytes) {
  auto &list = opFiltered[op];
  auto it = llvm::lower_bound(list, tensor,
                              [](const std::pair<unsigned, uint64_t> &entry,
                                 unsigned t) { return entry.first < t; });
  if (it != list.end() && it->first == tensor)
    it->second = bytes;
  else
    list.insert(it, {tensor, bytes});
}

int PlacementGraph::getProducer(unsigned tensor) const {
  for (unsigned op = 0, e = getNumOps(); op < e; ++op)
    if (llvm::is_contained(opOutputs[op], tensor))
      return op;
  return -1;
}

bool PlacementGraph::isProgramOutput(unsigned tensor) const {
  if (isSource(tensor))
    return false;
  return llvm::none_of(opInputs, [&](const SmallVector<unsigned, 4> &in) {
    return llvm::is_contained(in, tensor);
  });
}

uint64_t PlacementGraph::getBytes(ArrayRef<unsigned> tensors) const {
  uint64_t sum = 0;
  for (unsigned t : tensors)
    sum += tensorBytes[t];
  return sum;
}

uint64_t PlacementGraph::getTotalBytes() const {
  uint64_t sum = 0;
  for (uint64_t bytes : tensorBytes)
    sum += bytes;
  return sum;
}

llvm::Error PlacementGraph::verify() const {
  unsigned numTensors = getNumTensors(), numOps = getNumOps();
  // Every byte sum the planners form is a sum over distinct tensors.
  uint64_t total = 0;
  for (unsigned t = 0; t < numTensors; ++t) {
    if (tensorBytes[t] > (uint64_t(1) << 62) - total)
      return makeError("tensor sizes sum to more than 2^62 bytes");
    total += tensorBytes[t];
  }
  std::vector<int> producer(numTensors, -1);
  for (unsigned op = 0; op < numOps; ++op) {
    for (unsigned t : opInputs[op])
      if (t >= numTensors)
        return makeError("op '" + opNames[op] + "' reads tensor " +
                         llvm::Twine(t) + " of " + llvm::Twine(numTensors));
    for (unsigned t : opOutputs[op]) {
      if (t >= numTensors)
        return makeError("op '" + opNames[op] + "' writes tensor " +
                         llvm::Twine(t) + " of " + llvm::Twine(numTensors));
      if (producer[t] >= 0)
        return makeError("tensor '" + tensorNames[t] + "' is written by ops '" +
                         opNames[producer[t]] + "' and '" + opNames[op] + "'");
      producer[t] = op;
      if (llvm::is_contained(opInputs[op], t))
        return makeError("op '" + opNames[op] + "' reads its own output '" +
                         tensorNames[t] + "'");
    }
    for (auto [t, bytes] : opFiltered[op]) {
      if (!llvm::is_contained(opInputs[op], t))
        return makeError("op '" + opNames[op] +
                         "' has a filtered load of tensor " + llvm::Twine(t) +
                         ", which it does not read");
      if (bytes > tensorBytes[t])
        return makeError("op '" + opNames[op] + "' has a filtered load of " +
                         llvm::Twine(bytes) + " bytes of tensor '" +
                         tensorNames[t] + "', which has " +
                         llvm::Twine(tensorBytes[t]));
    }
  }
  // Kahn's algorithm over the edges producer(t) -> reader of t.
  std::vector<unsigned> pending(numOps, 0);
  std::vector<SmallVector<unsigned, 4>> successors(numOps);
  for (unsigned op = 0; op < numOps; ++op)
    for (unsigned t : opInputs[op])
      if (producer[t] >= 0) {
        successors[producer[t]].push_back(op);
        ++pending[op];
      }
  SmallVector<unsigned> ready;
  for (unsigned op = 0; op < numOps; ++op)
    if (pending[op] == 0)
      ready.push_back(op);
  unsigned done = 0;
  while (!ready.empty()) {
    unsigned op = ready.pop_back_val();
    ++done;
    for (unsigned next : successors[op])
      if (--pending[next] == 0)
        ready.push_back(next);
  }
  if (done != numOps) {
    for (unsigned op = 0; op < numOps; ++op)
      if (pending[op] != 0)
        return makeError("the ops do not form a DAG: op '" + opNames[op] +
                         "' is on or after a cycle");
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Derived facts shared by the planners
//===----------------------------------------------------------------------===//

GraphFacts::GraphFacts(const PlacementGraph &graph) {
  unsigned numTensors = graph.getNumTensors(), numOps = graph.getNumOps();
  producer.assign(numTensors, -1);
  readers.assign(numTensors, BitVector(numOps));
  preds.assign(numOps, BitVector(numOps));
  touched.resize(numOps);
  for (unsigned op = 0; op < numOps; ++op)
    for (unsigned t : graph.getOutputs(op))
      producer[t] = op;
  for (unsigned op = 0; op < numOps; ++op) {
    for (unsigned t : graph.getInputs(op)) {
      readers[t].set(op);
      if (producer[t] >= 0)
        preds[op].set(producer[t]);
    }
    touched[op].append(graph.getInputs(op).begin(), graph.getInputs(op).end());
    touched[op].append(graph.getOutputs(op).begin(),
                       graph.getOutputs(op).end());
    llvm::sort(touched[op]);
  }
}

/// A(S) given the facts: t is active when an op outside S reads it and an op
/// in S wrote it or, for a source tensor, read it.
static SmallVector<unsigned, 8> activeTensors(const GraphFacts &facts,
                                              const BitVector &ops) {
  SmallVector<unsigned, 8> active;
  for (unsigned t = 0, e = facts.readers.size(); t < e; ++t) {
    const BitVector &readers = facts.readers[t];
    // Some reader outside S: readers \ S is not empty.
    if (!readers.test(ops))
      continue;
    bool inState = facts.producer[t] >= 0 ? ops.test(facts.producer[t])
                                          : readers.anyCommon(ops);
    if (inState)
      active.push_back(t);
  }
  return active;
}

SmallVector<unsigned, 8>
mlir::gnn::getActiveTensors(const PlacementGraph &graph, const BitVector &ops) {
  return activeTensors(GraphFacts(graph), ops);
}

/// The ideals of the DAG, level by level (level k holds the k-op states).
static llvm::Expected<std::vector<BitVector>>
enumerateIdeals(const PlacementGraph &graph, const GraphFacts &facts,
                size_t maxStates) {
  unsigned numOps = graph.getNumOps();
  std::vector<BitVector> states{BitVector(numOps)};
  size_t levelBegin = 0;
  for (unsigned level = 0; level < numOps; ++level) {
    size_t levelEnd = states.size();
    llvm::DenseSet<BitVector> seen;
    for (size_t i = levelBegin; i < levelEnd; ++i) {
      for (unsigned op = 0; op < numOps; ++op) {
        // `op` can run next when it has not run and its predecessors have.
        if (states[i].test(op) || facts.preds[op].test(states[i]))
          continue;
        BitVector next = states[i];
        next.set(op);
        if (!seen.insert(next).second)
          continue;
        if (states.size() >= maxStates)
          return makeError(
              "the op DAG has more than " + llvm::Twine(maxStates) +
              " valid execution states (ROC's DP is for models with few; "
              "coarsen the DAG or raise PlacementLimits::maxStates)");
        states.push_back(std::move(next));
      }
    }
    levelBegin = levelEnd;
  }
  return states;
}

llvm::Expected<std::vector<ExecutionState>>
mlir::gnn::enumerateExecutionStates(const PlacementGraph &graph,
                                    const PlacementLimits &limits) {
  if (llvm::Error error = graph.verify())
    return std::move(error);
  GraphFacts facts(graph);
  auto ideals = enumerateIdeals(graph, facts, limits.maxStates);
  if (!ideals)
    return ideals.takeError();
  std::vector<ExecutionState> states;
  states.reserve(ideals->size());
  for (BitVector &ops : *ideals) {
    ExecutionState state;
    state.active = activeTensors(facts, ops);
    state.ops = std::move(ops);
    states.push_back(std::move(state));
  }
  return states;
}

/// The bytes an op uses at once: its inputs' and its outputs'.
static uint64_t opBytes(const PlacementGraph &graph, unsigned op) {
  return graph.getBytes(graph.getInputs(op)) +
         graph.getBytes(graph.getOutputs(op));
}

unsigned mlir::gnn::getLargestOp(const PlacementGraph &graph) {
  unsigned largest = 0;
  for (unsigned op = 1, e = graph.getNumOps(); op < e; ++op)
    if (opBytes(graph, op) > opBytes(graph, largest))
      largest = op;
  return largest;
}

uint64_t mlir::gnn::getMinimumCapacity(const PlacementGraph &graph) {
  return graph.getNumOps() ? opBytes(graph, getLargestOp(graph)) : 0;
}

StringRef mlir::gnn::stringifyPlacementStrategy(PlacementStrategy strategy) {
  switch (strategy) {
  case PlacementStrategy::Optimal:
    return "optimal";
  case PlacementStrategy::LRU:
    return "lru";
  case PlacementStrategy::Belady:
    return "belady";
  case PlacementStrategy::Streaming:
    return "streaming";
  }
  llvm_unreachable("unknown placement strategy");
}

//===----------------------------------------------------------------------===//
// The shared accounting
//===----------------------------------------------------------------------===//

SmallVector<unsigned, 4> placement::toList(const BitVector &set) {
  SmallVector<unsigned, 4> list;
  for (unsigned t : set.set_bits())
    list.push_back(t);
  return list;
}

PlacementPlan placement::infeasiblePlan(PlacementStrategy strategy,
                                        uint64_t capacity,
                                        uint64_t minCapacity) {
  PlacementPlan plan;
  plan.strategy = strategy;
  plan.capacity = capacity;
  plan.minCapacity = minCapacity;
  plan.feasible = false;
  return plan;
}

llvm::Expected<PlacementPlan> mlir::gnn::buildPlacementPlan(
    const PlacementGraph &graph, uint64_t capacity, PlacementStrategy strategy,
    ArrayRef<unsigned> order, ArrayRef<SmallVector<unsigned, 4>> keep) {
  if (llvm::Error error = graph.verify())
    return std::move(error);
  unsigned numOps = graph.getNumOps(), numTensors = graph.getNumTensors();
  if (order.size() != numOps || keep.size() != numOps)
    return makeError("a plan needs one step and one keep set per op (" +
                     llvm::Twine(numOps) + " ops, " +
                     llvm::Twine(order.size()) + " steps, " +
                     llvm::Twine(keep.size()) + " keep sets)");
  GraphFacts facts(graph);
  // The position of each tensor's last reader in `order`, -1 for none.
  std::vector<int> lastRead(numTensors, -1);
  BitVector done(numOps);
  for (unsigned i = 0; i < numOps; ++i) {
    unsigned op = order[i];
    if (op >= numOps || done.test(op))
      return makeError("the order does not run every op exactly once");
    if (facts.preds[op].test(done))
      return makeError("the order runs op '" + graph.getOpName(op) +
                       "' before an op whose output it reads");
    done.set(op);
    for (unsigned t : graph.getInputs(op))
      lastRead[t] = i;
  }

  PlacementPlan plan;
  plan.strategy = strategy;
  plan.capacity = capacity;
  plan.minCapacity = getMinimumCapacity(graph);
  plan.feasible = true;
  BitVector resident(numTensors), dirty(numTensors), working(numTensors),
      kept(numTensors);
  for (unsigned i = 0; i < numOps; ++i) {
    unsigned op = order[i];
    PlacementStep step;
    step.op = op;
    for (unsigned t : graph.getInputs(op))
      if (!resident.test(t))
        step.load.push_back(t);
    working = resident;
    for (unsigned t : facts.touched[op])
      working.set(t);
    for (unsigned t : working.set_bits())
      step.workingSetBytes += graph.getBytes(t);
    if (step.workingSetBytes > capacity)
      return makeError("step " + llvm::Twine(i) + " (op '" +
                       graph.getOpName(op) + "') needs " +
                       llvm::Twine(step.workingSetBytes) +
                       " bytes of fast memory, above the capacity of " +
                       llvm::Twine(capacity));
    for (unsigned t : graph.getOutputs(op))
      dirty.set(t);
    kept.reset();
    for (unsigned t : keep[i]) {
      if (t >= numTensors || !working.test(t))
        return makeError("step " + llvm::Twine(i) + " keeps tensor " +
                         llvm::Twine(t) + ", which is not in fast memory");
      kept.set(t);
    }
    if (i + 1 == numOps && kept.any())
      return makeError("the last step keeps tensors in fast memory");
    for (unsigned t : working.set_bits()) {
      if (kept.test(t))
        continue;
      step.evict.push_back(t);
      bool readLater = lastRead[t] > static_cast<int>(i);
      if (dirty.test(t) && (readLater || facts.readers[t].none())) {
        step.writeBack.push_back(t);
        dirty.reset(t);
      }
    }
    step.keep = toList(kept);
    resident = kept;
    // A filtered load moves its record's bytes when it does not stay.
    uint64_t loaded = graph.getBytes(step.load);
    for (auto [t, bytes] : graph.getFilteredLoads(op))
      if (!kept.test(t) && llvm::is_contained(step.load, t)) {
        step.filtered.push_back(t);
        loaded -= graph.getBytes(t) - bytes;
      }
    plan.loadBytes += loaded;
    plan.writeBytes += graph.getBytes(step.writeBack);
    plan.peakBytes = std::max(plan.peakBytes, step.workingSetBytes);
    plan.steps.push_back(std::move(step));
  }
  return plan;
}

SmallVector<unsigned> placement::defaultOrder(const PlacementGraph &graph,
                                              const GraphFacts &facts,
                                              ArrayRef<unsigned> order) {
  if (!order.empty())
    return SmallVector<unsigned>(order.begin(), order.end());
  unsigned numOps = graph.getNumOps();
  BitVector done(numOps);
  SmallVector<unsigned> result;
  while (result.size() < numOps) {
    for (unsigned op = 0; op < numOps; ++op) {
      if (done.test(op) || facts.preds[op].test(done))
        continue;
      done.set(op);
      result.push_back(op);
      break;
    }
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Baselines
//===----------------------------------------------------------------------===//

llvm::Expected<PlacementPlan>
mlir::gnn::planStreamingPlacement(const PlacementGraph &graph,
                                  uint64_t capacity, ArrayRef<unsigned> order) {
  if (llvm::Error error = graph.verify())
    return std::move(error);
  uint64_t minCapacity = getMinimumCapacity(graph);
  if (capacity < minCapacity)
    return infeasiblePlan(PlacementStrategy::Streaming, capacity, minCapacity);
  GraphFacts facts(graph);
  SmallVector<unsigned> ops = defaultOrder(graph, facts, order);
  std::vector<SmallVector<unsigned, 4>> keep(graph.getNumOps());
  return buildPlacementPlan(graph, capacity, PlacementStrategy::Streaming, ops,
                            keep);
}

/// LRU or Belady's MIN (`strategy`): the same eviction loop with another
/// victim.
static llvm::Expected<PlacementPlan>
planEvictingPlacement(const PlacementGraph &graph, uint64_t capacity,
                      ArrayRef<unsigned> order, PlacementStrategy strategy) {
  if (llvm::Error error = graph.verify())
    return std::move(error);
  uint64_t minCapacity = getMinimumCapacity(graph);
  if (capacity < minCapacity)
    return infeasiblePlan(strategy, capacity, minCapacity);
  GraphFacts facts(graph);
  SmallVector<unsigned> ops = defaultOrder(graph, facts, order);
  unsigned numOps = graph.getNumOps(), numTensors = graph.getNumTensors();
  if (ops.size() != numOps)
    return makeError("the order does not run every op exactly once");
  // Positions in `ops` of each tensor's last reader (-1 for none); an order
  // that is not a permutation is reported by buildPlacementPlan.
  std::vector<int> lastRead(numTensors, -1);
  // Belady: each tensor's reading positions, in order, and the next one
  // not yet passed.
  std::vector<SmallVector<unsigned, 2>> reads(numTensors);
  std::vector<unsigned> nextRead(numTensors, 0);
  for (unsigned i = 0; i < numOps; ++i)
    if (ops[i] < numOps)
      for (unsigned t : graph.getInputs(ops[i])) {
        lastRead[t] = i;
        if (reads[t].empty() || reads[t].back() != i)
          reads[t].push_back(i);
      }
  // The position of t's next read after position i (numOps: none).
  auto readAfter = [&](unsigned t, unsigned i) -> unsigned {
    unsigned &at = nextRead[t];
    while (at < reads[t].size() && reads[t][at] <= i)
      ++at;
    return at < reads[t].size() ? reads[t][at] : numOps;
  };
  const bool belady = strategy == PlacementStrategy::Belady;

  std::vector<SmallVector<unsigned, 4>> keep(numOps);
  BitVector resident(numTensors);
  std::vector<uint64_t> lastUse(numTensors, 0);
  uint64_t clock = 0;
  for (unsigned i = 0; i < numOps; ++i) {
    unsigned op = ops[i];
    if (op >= numOps)
      break;
    ArrayRef<unsigned> touched = facts.touched[op];
    // Evict least recently used tensors the op does not touch until its
    // working set fits; what is evicted here is what step i-1 did not keep.
    uint64_t bytes = graph.getBytes(touched);
    for (unsigned t : resident.set_bits())
      if (!llvm::is_contained(touched, t))
        bytes += graph.getBytes(t);
    while (bytes > capacity) {
      int victim = -1;
      unsigned victimNext = 0;
      for (unsigned t : resident.set_bits()) {
        if (llvm::is_contained(touched, t))
          continue;
        if (!belady) {
          if (victim < 0 || lastUse[t] < lastUse[victim])
            victim = t;
          continue;
        }
        unsigned next = readAfter(t, i);
        if (victim < 0 || next > victimNext ||
            (next == victimNext &&
             graph.getBytes(t) > graph.getBytes(victim))) {
          victim = t;
          victimNext = next;
        }
      }
      assert(victim >= 0 && "capacity >= minimum capacity");
      resident.reset(victim);
      bytes -= graph.getBytes(victim);
    }
    if (i > 0)
      keep[i - 1] = toList(resident);
    for (unsigned t : touched) {
      resident.set(t);
      lastUse[t] = ++clock;
    }
    // A tensor no later op reads leaves the fast tier at once.
    for (unsigned t : toList(resident))
      if (lastRead[t] <= static_cast<int>(i))
        resident.reset(t);
  }
  return buildPlacementPlan(graph, capacity, strategy, ops, keep);
}

llvm::Expected<PlacementPlan>
mlir::gnn::planLRUPlacement(const PlacementGraph &graph, uint64_t capacity,
                            ArrayRef<unsigned> order) {
  return planEvictingPlacement(graph, capacity, order, PlacementStrategy::LRU);
}

llvm::Expected<PlacementPlan>
mlir::gnn::planBeladyPlacement(const PlacementGraph &graph, uint64_t capacity,
                               ArrayRef<unsigned> order) {
  return planEvictingPlacement(graph, capacity, order,
                               PlacementStrategy::Belady);
}

//===----------------------------------------------------------------------===//
// The DP over execution states
//===----------------------------------------------------------------------===//
//
// ROC's Algorithm 1 as printed sets T' = (T \ OUT(o)) ∩ A(S') with no choice
// left, so its natural top-level call Cost(all ops, ∅) never caches anything.
// This is the corrected recurrence (DIGEST-neugraph-roc.md §3.4): T' ranges
// over the cache sets of S' that, with the op's inputs and outputs, fit and
// can leave T behind,
//
//   Cost(∅, ∅) = 0
//   Cost(S, T) = min over o ∈ S with S' = S \ {o} valid,
//                     T' ⊆ A(S') with T ⊆ T' ∪ IN(o) ∪ OUT(o) and
//                     size(T' ∪ IN(o) ∪ OUT(o)) ≤ cap,
//                of Cost(S', T') + size(IN(o) \ T'),
//
// for T ⊆ A(S), and the answer is Cost(all ops, ∅). A cache set only ever
// holds active tensors: keeping a tensor no later op reads only takes space,
// and loading a source tensor before its first reader costs the same bytes
// and more space. The capacity test is `≤` where ROC prints `<`: a budget of
// B bytes admits a working set of B bytes.
//
// It runs forward. Relaxing (S', T') through o gives the largest set the
// fast tier can keep, U = (T' ∪ IN(o) ∪ OUT(o)) ∩ A(S); every T ⊆ U is then
// reachable at the same cost, so Reach(S, U) is taken first and Cost(S, T)
// = min over U ⊇ T of Reach(S, U) is one superset-minimum pass per state.
// Time O(Σ_transitions 2^|A(S')| + Σ_S |A(S)| 2^|A(S)|) rather than the
// naive O(S² T²); space O(Σ_S 2^|A(S)|).

namespace {
/// How (S, U) was reached: from cache set `mask` of state `state` via `op`.
struct DPParent {
  uint32_t state = 0, mask = 0, op = 0;
};

/// The DP's row for one state; masks are over the state's A(S) list.
struct DPRow {
  /// Reach(S, U) and its parent.
  std::vector<uint64_t> reach;
  std::vector<DPParent> parent;
  /// Cost(S, T), and the U it came from.
  std::vector<uint64_t> cost;
  std::vector<uint32_t> from;
};
} // namespace

static constexpr uint64_t kInfinity = std::numeric_limits<uint64_t>::max();

llvm::Expected<PlacementPlan>
mlir::gnn::planOptimalPlacement(const PlacementGraph &graph, uint64_t capacity,
                                const PlacementLimits &limits) {
  if (llvm::Error error = graph.verify())
    return std::move(error);
  uint64_t minCapacity = getMinimumCapacity(graph);
  if (capacity < minCapacity)
    return infeasiblePlan(PlacementStrategy::Optimal, capacity, minCapacity);
  // No ops, no steps (and ∅ would be DenseMap's empty key below).
  if (graph.getNumOps() == 0)
    return buildPlacementPlan(graph, capacity, PlacementStrategy::Optimal, {},
                              {});
  GraphFacts facts(graph);
  auto ideals = enumerateIdeals(graph, facts, limits.maxStates);
  if (!ideals)
    return ideals.takeError();
  const std::vector<BitVector> &states = *ideals;
  unsigned numOps = graph.getNumOps(), numStates = states.size();

  // Bound the work before allocating anything.
  std::vector<SmallVector<unsigned, 8>> active(numStates);
  llvm::DenseMap<BitVector, unsigned> index;
  uint64_t tableEntries = 0;
  unsigned maxActive = std::min(limits.maxActiveTensors, 31u);
  for (unsigned s = 0; s < numStates; ++s) {
    active[s] = activeTensors(facts, states[s]);
    if (active[s].size() > maxActive)
      return makeError(
          "a valid execution state of " + llvm::Twine(states[s].count()) +
          " ops has " + llvm::Twine(active[s].size()) +
          " active tensors, over the limit of " + llvm::Twine(maxActive) +
          " (2^" + llvm::Twine(maxActive) + " cache sets per state)");
    tableEntries += uint64_t(1) << active[s].size();
    index[states[s]] = s;
  }
  if (tableEntries > limits.maxTableEntries)
    return makeError("the DP table would hold " + llvm::Twine(tableEntries) +
                     " (state, cache set) entries, over the limit of " +
                     llvm::Twine(limits.maxTableEntries));
  uint64_t transitions = 0;
  for (unsigned s = 0; s < numStates; ++s)
    for (unsigned op = 0; op < numOps; ++op)
      if (!states[s].test(op) && !facts.preds[op].test(states[s]))
        transitions += uint64_t(1) << active[s].size();
  if (transitions > limits.maxTransitions)
    return makeError("the DP would relax " + llvm::Twine(transitions) +
                     " transitions, over the limit of " +
                     llvm::Twine(limits.maxTransitions));

  std::vector<DPRow> rows(numStates);
  for (unsigned s = 0; s < numStates; ++s) {
    size_t width = size_t(1) << active[s].size();
    rows[s].reach.assign(width, kInfinity);
    rows[s].parent.resize(width);
  }
  rows[0].reach[0] = 0;

  std::vector<uint64_t> prevBytes;
  std::vector<uint32_t> mapped;
  for (unsigned s = 0; s < numStates; ++s) {
    DPRow &row = rows[s];
    ArrayRef<unsigned> prevActive = active[s];
    size_t width = size_t(1) << prevActive.size();
    // Cost(S, T) = min over U ⊇ T of Reach(S, U): every incoming transition
    // comes from a smaller state, relaxed already.
    row.cost = row.reach;
    row.from.resize(width);
    for (uint32_t m = 0; m < width; ++m)
      row.from[m] = m;
    for (unsigned bit = 0; bit < prevActive.size(); ++bit)
      for (uint32_t m = 0; m < width; ++m)
        if (!(m & (1u << bit)) && row.cost[m | (1u << bit)] < row.cost[m]) {
          row.cost[m] = row.cost[m | (1u << bit)];
          row.from[m] = row.from[m | (1u << bit)];
        }
    row.reach = {};

    // size(T') for every cache set T' of S.
    prevBytes.assign(width, 0);
    for (uint32_t m = 1; m < width; ++m)
      prevBytes[m] = prevBytes[m & (m - 1)] +
                     graph.getBytes(prevActive[llvm::countr_zero(m)]);

    for (unsigned op = 0; op < numOps; ++op) {
      if (states[s].test(op) || facts.preds[op].test(states[s]))
        continue;
      BitVector nextOps = states[s];
      nextOps.set(op);
      unsigned next = index.lookup(nextOps);
      ArrayRef<unsigned> nextActive = active[next];
      auto bitIn = [&](ArrayRef<unsigned> list, unsigned t) -> uint32_t {
        auto it = llvm::lower_bound(list, t);
        return it != list.end() && *it == t ? 1u << (it - list.begin()) : 0;
      };
      ArrayRef<unsigned> inputs = graph.getInputs(op);
      uint64_t inBytes = graph.getBytes(inputs);
      uint64_t touchedBytes = inBytes + graph.getBytes(graph.getOutputs(op));
      // IN(o) ∩ A(S') as a mask of S' (OUT(o) is never active before o), and
      // (IN(o) ∪ OUT(o)) ∩ A(S ∪ {o}) as a mask of the next state.
      uint32_t inPrev = 0, touchedNext = 0;
      for (unsigned t : inputs)
        inPrev |= bitIn(prevActive, t);
      for (unsigned t : facts.touched[op])
        touchedNext |= bitIn(nextActive, t);
      // T' ∩ A(S ∪ {o}) as a mask of the next state, for every T'.
      mapped.assign(width, 0);
      for (uint32_t m = 1; m < width; ++m)
        mapped[m] = mapped[m & (m - 1)] |
                    bitIn(nextActive, prevActive[llvm::countr_zero(m)]);
      // The op's filtered loads: their bits in S' and in the next state,
      // and the bytes a load saves when it leaves after the op.
      struct Filtered {
        uint32_t prevBit, nextBit;
        uint64_t saved;
      };
      SmallVector<Filtered, 2> filtered;
      for (auto [t, bytes] : graph.getFilteredLoads(op))
        filtered.push_back(Filtered{bitIn(prevActive, t), bitIn(nextActive, t),
                                    graph.getBytes(t) - bytes});
      DPRow &nextRow = rows[next];
      auto relax = [&](uint32_t m, uint32_t keepable, uint64_t cost) {
        if (cost < nextRow.reach[keepable]) {
          nextRow.reach[keepable] = cost;
          nextRow.parent[keepable] = DPParent{s, m, op};
        }
      };
      SmallVector<std::pair<uint32_t, uint64_t>, 2> choices;
      for (uint32_t m = 0; m < width; ++m) {
        if (row.cost[m] == kInfinity)
          continue;
        uint64_t cachedInputs = prevBytes[m & inPrev];
        uint64_t workingSet = prevBytes[m] + touchedBytes - cachedInputs;
        if (workingSet > capacity)
          continue;
        uint64_t cost = row.cost[m] + (inBytes - cachedInputs);
        uint32_t keepable = mapped[m] | touchedNext;
        if (filtered.empty()) {
          relax(m, keepable, cost);
          continue;
        }
        // A filtered input it loads (not in T') that no later op reads
        // leaves after it and moves its filtered bytes; one a later op
        // reads may stay (whole) or leave (filtered): both are relaxed.
        choices.clear();
        for (const Filtered &f : filtered) {
          if (m & f.prevBit)
            continue;
          if (f.nextBit)
            choices.emplace_back(f.nextBit, f.saved);
          else
            cost -= f.saved;
        }
        for (uint32_t pick = 0; pick < (1u << choices.size()); ++pick) {
          uint32_t keep = keepable;
          uint64_t c = cost;
          for (auto [i, choice] : llvm::enumerate(choices))
            if (pick & (1u << i)) {
              keep &= ~choice.first;
              c -= choice.second;
            }
          relax(m, keep, c);
        }
      }
    }
    // Only `from` and `parent` are needed from here on.
    if (s + 1 != numStates)
      row.cost = {};
  }

  // Walk back from (all ops, ∅).
  unsigned last = numStates - 1;
  assert(states[last].all() && active[last].empty());
  uint64_t optimum = rows[last].cost[0];
  assert(optimum != kInfinity && "streaming fits whenever cap >= minimum");
  SmallVector<unsigned> order;
  std::vector<SmallVector<unsigned, 4>> keep;
  unsigned s = last;
  uint32_t mask = 0;
  while (s != 0) {
    SmallVector<unsigned, 4> kept;
    for (unsigned bit = 0; bit < active[s].size(); ++bit)
      if (mask & (1u << bit))
        kept.push_back(active[s][bit]);
    const DPParent &parent = rows[s].parent[rows[s].from[mask]];
    order.push_back(parent.op);
    keep.push_back(std::move(kept));
    s = parent.state;
    mask = parent.mask;
  }
  std::reverse(order.begin(), order.end());
  std::reverse(keep.begin(), keep.end());
  auto plan = buildPlacementPlan(graph, capacity, PlacementStrategy::Optimal,
                                 order, keep);
  if (plan && plan->loadBytes != optimum)
    return makeError("internal error: the DP's schedule loads " +
                     llvm::Twine(plan->loadBytes) + " bytes, its cost is " +
                     llvm::Twine(optimum));
  return plan;
}
