//===- BoundedPlacement.cpp - the placement past the DP's limits ----------===//
//
// planBoundedPlacement (gnn/Analysis/TensorPlacement.h): a beam search over
// one op order, for graphs whose DP table is beyond its limits.
//
//===----------------------------------------------------------------------===//

#include "gnn/Analysis/TensorPlacement.h"

#include "PlacementSupport.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <optional>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::placement;
using llvm::ArrayRef;
using llvm::BitVector;
using llvm::SmallVector;

//===----------------------------------------------------------------------===//
// The bounded search over one order
//===----------------------------------------------------------------------===//
//
// Over a fixed order the states are its prefixes, and what is left to decide
// is which cached tensors leave the fast tier when an op's working set would
// not fit. Dropping is free and can wait until it is needed, so a
// configuration after step i is the largest keepable set: what the fast tier
// held, the op's inputs and outputs, less what no later op reads. Before op
// i + 1, a configuration whose working set would not fit drops a subset of
// the tensors the op does not touch; the search branches over a bounded
// family of such subsets: Belady's (farthest next use first), the largest
// first, and, for each droppable tensor, that one first and then Belady's.
// Each step keeps the `beamWidth` cheapest configurations (the same set
// reached twice keeps its cheaper way; ties prefer more bytes cached), and
// the answer is the cheapest final one, or LRU's plan over the same order
// where that loads fewer bytes, so the result never loads more than LRU.

namespace {
/// What one beam search found: its cost and the keep sets of its schedule.
struct BeamResult {
  uint64_t cost = 0;
  std::vector<SmallVector<unsigned, 4>> keep;
};
} // namespace

/// The beam search over the order `ops`; with `useRecords`, the filtered
/// loads are choices with their costs, else every load is charged whole
/// (the plan's accounting may then find it cheaper). None when no final
/// configuration is reached.
static std::optional<BeamResult>
beamSearch(const PlacementGraph &graph, const GraphFacts &facts,
           ArrayRef<unsigned> ops, uint64_t capacity, unsigned beamWidth,
           bool useRecords) {
  const unsigned numOps = ops.size(), numTensors = graph.getNumTensors();
  // The positions at which each tensor is read, ascending.
  std::vector<SmallVector<unsigned, 4>> reads(numTensors);
  for (unsigned i = 0; i < numOps; ++i)
    for (unsigned t : graph.getInputs(ops[i]))
      reads[t].push_back(i);
  auto nextRead = [&](unsigned t, unsigned after) -> unsigned {
    auto it = llvm::upper_bound(reads[t], after);
    return it == reads[t].end() ? numOps : *it;
  };
  auto bytesOf = [&](const BitVector &set) {
    uint64_t bytes = 0;
    for (unsigned t : set.set_bits())
      bytes += graph.getBytes(t);
    return bytes;
  };

  struct Entry {
    BitVector config; // the largest keepable set after the step (freed
                      // once the next step is searched)
    SmallVector<unsigned, 4> kept; // what was kept into the step's op
    uint64_t cost = 0, cachedBytes = 0;
    int parent = -1;
    // The filtered loads of the step's op that `config` keeps, charged
    // whole, with the bytes they save if the next step drops them.
    SmallVector<std::pair<unsigned, uint64_t>, 1> wholeFiltered;
  };
  std::vector<std::vector<Entry>> beams(numOps + 1);
  beams[0].push_back(Entry{BitVector(numTensors), {}, 0, 0, -1});
  BitVector touched(numTensors);
  for (unsigned i = 0; i < numOps; ++i) {
    const unsigned op = ops[i];
    touched.reset();
    for (unsigned t : facts.touched[op])
      touched.set(t);
    const uint64_t touchedBytes = graph.getBytes(facts.touched[op]);
    std::vector<Entry> next;
    llvm::DenseMap<BitVector, unsigned> seen;
    SmallVector<std::pair<unsigned, uint64_t>, 1> whole;
    auto addConfig = [&](unsigned from, const BitVector &kept, BitVector config,
                         uint64_t cost) {
      auto [it, fresh] = seen.try_emplace(config, next.size());
      if (!fresh && next[it->second].cost <= cost)
        return;
      Entry entry{config,          toList(kept),           cost,
                  bytesOf(config), static_cast<int>(from), whole};
      if (fresh)
        next.push_back(std::move(entry));
      else
        next[it->second] = std::move(entry);
    };
    auto add = [&](unsigned from, const BitVector &kept) {
      const Entry &e = beams[i][from];
      uint64_t cost = e.cost;
      // The previous op's filtered loads charged whole that leave now
      // moved only their filtered bytes.
      for (auto [t, saved] : e.wholeFiltered)
        if (!kept.test(t))
          cost -= saved;
      for (unsigned t : graph.getInputs(op))
        if (!kept.test(t))
          cost += graph.getBytes(t);
      BitVector config = kept;
      config |= touched;
      for (unsigned t : config.set_bits())
        if (reads[t].empty() || reads[t].back() <= i)
          config.reset(t);
      // The filtered inputs it loads: dead ones leave (filtered); the
      // others are tried all kept (whole) and all dropped (filtered).
      uint64_t dropped = cost;
      BitVector lean = config;
      whole.clear();
      if (!useRecords) {
        addConfig(from, kept, config, cost);
        return;
      }
      for (auto [t, bytes] : graph.getFilteredLoads(op)) {
        if (kept.test(t))
          continue;
        const uint64_t saved = graph.getBytes(t) - bytes;
        dropped -= saved;
        if (config.test(t)) {
          lean.reset(t);
          whole.emplace_back(t, saved);
        } else {
          cost -= saved;
        }
      }
      const bool choice = !whole.empty();
      addConfig(from, kept, config, cost);
      if (choice) {
        whole.clear();
        addConfig(from, kept, lean, dropped);
      }
    };
    for (unsigned from = 0; from < beams[i].size(); ++from) {
      const BitVector &config = beams[i][from].config;
      BitVector outside = config;
      outside.reset(touched);
      uint64_t need = touchedBytes + bytesOf(outside);
      if (need <= capacity) {
        add(from, config);
        continue;
      }
      SmallVector<unsigned> droppable(outside.set_bits().begin(),
                                      outside.set_bits().end());
      // Drops tensors in `rank` order (after `first`) until the op fits.
      auto dropUntilFits = [&](SmallVector<unsigned> rank, int first) {
        BitVector kept = config;
        uint64_t bytes = need;
        if (first >= 0) {
          kept.reset(first);
          bytes -= graph.getBytes(first);
        }
        for (unsigned t : rank) {
          if (bytes <= capacity)
            break;
          if (!kept.test(t))
            continue;
          kept.reset(t);
          bytes -= graph.getBytes(t);
        }
        add(from, kept);
      };
      SmallVector<unsigned> belady = droppable;
      llvm::stable_sort(belady, [&](unsigned a, unsigned b) {
        unsigned na = nextRead(a, i), nb = nextRead(b, i);
        if (na != nb)
          return na > nb;
        return graph.getBytes(a) > graph.getBytes(b);
      });
      SmallVector<unsigned> largest = droppable;
      llvm::stable_sort(largest, [&](unsigned a, unsigned b) {
        return graph.getBytes(a) > graph.getBytes(b);
      });
      dropUntilFits(belady, -1);
      dropUntilFits(largest, -1);
      for (unsigned t : droppable)
        dropUntilFits(belady, static_cast<int>(t));
    }
    // The cheapest `beamWidth`, more bytes cached first on ties.
    llvm::stable_sort(next, [](const Entry &a, const Entry &b) {
      if (a.cost != b.cost)
        return a.cost < b.cost;
      return a.cachedBytes > b.cachedBytes;
    });
    if (next.size() > beamWidth)
      next.resize(beamWidth);
    beams[i + 1] = std::move(next);
    for (Entry &e : beams[i])
      e.config = BitVector();
  }
  // The cheapest final configuration (nothing is active after the last op).
  const std::vector<Entry> &last = beams[numOps];
  if (last.empty())
    return std::nullopt;
  BeamResult result{last.front().cost, {}};
  result.keep.resize(numOps);
  int at = 0;
  for (unsigned i = numOps; i > 0; --i) {
    const Entry &e = beams[i][at];
    if (i >= 2)
      result.keep[i - 2] = e.kept;
    at = e.parent;
  }
  return result;
}

llvm::Expected<PlacementPlan>
mlir::gnn::planBoundedPlacement(const PlacementGraph &graph, uint64_t capacity,
                                ArrayRef<unsigned> order, unsigned beamWidth) {
  if (llvm::Error error = graph.verify())
    return std::move(error);
  uint64_t minCapacity = getMinimumCapacity(graph);
  if (capacity < minCapacity)
    return infeasiblePlan(PlacementStrategy::Optimal, capacity, minCapacity);
  llvm::Expected<PlacementPlan> best = planLRUPlacement(graph, capacity, order);
  if (!best || graph.getNumOps() == 0)
    return best;
  GraphFacts facts(graph);
  SmallVector<unsigned> ops = defaultOrder(graph, facts, order);
  bool records = false;
  for (unsigned op = 0; op < graph.getNumOps(); ++op)
    records |= !graph.getFilteredLoads(op).empty();
  // With filtered loads, also the search that charges every load whole: the
  // choices of cheap loads now can cost more later in a narrow beam, and
  // its schedule is accounted at the true costs.
  for (bool useRecords : {true, false}) {
    if (!useRecords && !records)
      break;
    std::optional<BeamResult> found = beamSearch(
        graph, facts, ops, capacity, std::max(beamWidth, 1u), useRecords);
    if (!found)
      continue;
    auto plan = buildPlacementPlan(graph, capacity, PlacementStrategy::Optimal,
                                   ops, found->keep);
    if (!plan)
      return plan.takeError();
    if (useRecords ? plan->loadBytes != found->cost
                   : plan->loadBytes > found->cost)
      return makeError("internal error: the bounded search's schedule loads " +
                       llvm::Twine(plan->loadBytes) + " bytes, its cost is " +
                       llvm::Twine(found->cost));
    if (plan->loadBytes < best->loadBytes) // never more than LRU
      best = std::move(plan);
  }
  return best;
}
