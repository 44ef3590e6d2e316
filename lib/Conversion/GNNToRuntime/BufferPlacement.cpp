//===- BufferPlacement.cpp - slot buffers in a capped fast tier -----------===//

#include "BufferPlacement.h"

#include "RowChunks.h"

#include "gnn/IR/GNNOps.h"
#include "gnnrt/GNNRuntime.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"

#include <cmath>
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::gnn;

void BufferPlacement::beginStep(Operation *op, Operation *last) {
  steps.push_back(Step{op, last, nullptr, {}});
}

void BufferPlacement::endStep(Operation *last) {
  Step &s = steps.back();
  if (!last || last == s.before)
    return; // the step emitted nothing
  s.first = s.before ? s.before->getNextNode() : &last->getBlock()->front();
}

void BufferPlacement::recordTake(int64_t id, Operation *call) {
  takes.push_back(Take{id, call, static_cast<int64_t>(steps.size()) - 1});
}

void BufferPlacement::recordChunks(ArrayRef<RowChunkStart> starts) {
  if (!steps.empty())
    steps.back().chunkStarts.assign(starts.begin(), starts.end());
}

void BufferPlacement::setFeaturesSlot(int64_t slot) {
  featuresSlot = slot;
  if (featuresSlotConstant)
    featuresSlotConstant->setAttr(
        "value",
        Builder(featuresSlotConstant->getContext()).getI64IntegerAttr(slot));
}

void BufferPlacement::recordWrite(int64_t id) {
  if (!steps.empty())
    steps.back().writes.push_back(id);
}

/// A byte count for messages: exact, with a binary-prefixed figure.
static std::string bytesText(uint64_t bytes) {
  std::string text = std::to_string(bytes) + " bytes";
  if (bytes >= 1024) {
    const char *units[] = {"KiB", "MiB", "GiB", "TiB"};
    double x = static_cast<double>(bytes);
    int u = -1;
    while (x >= 1024 && u < 3) {
      x /= 1024;
      ++u;
    }
    text += llvm::formatv(" ({0:F1} {1})", x, units[u]).str();
  }
  return text;
}

void BufferPlacement::emitDropAll(func::FuncOp fn, LoweringBuilder &lb) {
  lb.b.setInsertionPointToStart(&fn.getBody().front());
  lb.call(rt::Call::gnnrtDropAll, {lb.ctx});
}

/// What a tile moves reading `read` of its input chunk's `rows` rows of
/// `rowBytes` selectively, where the runtime's rule would filter them; none
/// where it would read the chunk whole. NeuGraph's rule filters when θ <
/// T_copy / (T_copy + T_trans); the runtime measures both throughputs at
/// start-up (runtime/lib/SelectiveLoad.cpp). Here a row read costs a bulk
/// read of its w bytes plus a fixed kRowReadOverheadBytes o (a call per
/// run of rows): T_copy = T_trans w / (w + o), so the threshold is
/// w / (2w + o). o = 3 KiB fits this machine's measurement (T_trans 13.6
/// GB/s; T_copy 3.4 GB/s at 1 KiB rows and 0.34 GB/s at 64-byte rows,
/// thresholds 0.20 and 0.024; the model gives 3.4 and 0.28 GB/s, 0.20 and
/// 0.020).
static constexpr uint64_t kRowReadOverheadBytes = 3072;
static std::optional<uint64_t> selectiveLoadBytes(uint64_t read, uint64_t rows,
                                                  uint64_t rowBytes) {
  if (rows == 0 || read > rows)
    return std::nullopt;
  // θ < w / (2w + o), in integers: read (2w + o) < rows w.
  const unsigned __int128 lhs = static_cast<unsigned __int128>(read) *
                                (2 * rowBytes + kRowReadOverheadBytes);
  const unsigned __int128 rhs = static_cast<unsigned __int128>(rows) * rowBytes;
  if (lhs >= rhs)
    return std::nullopt;
  return read * rowBytes;
}

/// Bytes the runtime's pages for `bytes` at any alignment may hold: the
/// whole pages it spans plus one at an edge (this machine's pages: the
/// program runs where it is compiled, or on one of the same kind).
static uint64_t pagesFor(uint64_t bytes) {
  static const uint64_t page = llvm::sys::Process::getPageSizeEstimate();
  return bytes == 0 ? 0 : ((bytes + page - 1) / page + 1) * page;
}

LogicalResult BufferPlacement::place(
    func::FuncOp fn, Operation *source, const SlotPlanner &slots,
    const DenseMap<StringRef, int64_t> &estimates, ArrayRef<int64_t> chunkEdges,
    const TileInputRows *tileRows, uint64_t capacity,
    PlacementStrategy strategy, int64_t rowChunks, LoweringBuilder &lb,
    BufferPlacementReport &report) {
  Block &entry = fn.getBody().front();
  const int64_t numSteps = steps.size();
  const int64_t K = std::max<int64_t>(rowChunks, 1);

  // The sub-steps: a step, or each row chunk of a step that runs in chunks
  // and each tile of its aggregation after a chunk's first (RowChunks.h);
  // `chunk` -1 for a whole step.
  struct Sub {
    int64_t step, chunk, tile;
    Operation *first;
  };
  std::vector<Sub> subs;
  SmallVector<int64_t> firstSub(numSteps);
  for (int64_t k = 0; k < numSteps; ++k) {
    firstSub[k] = subs.size();
    if (K > 1 && !steps[k].chunkStarts.empty()) {
      for (const RowChunkStart &c : steps[k].chunkStarts)
        subs.push_back(Sub{k, c.chunk, c.tile, c.first});
    } else {
      subs.push_back(Sub{k, -1, 0, steps[k].first});
    }
  }
  const int64_t numSubs = subs.size();
  DenseMap<Operation *, int64_t> subOf;
  {
    DenseMap<Operation *, int64_t> starts;
    for (int64_t s = 0; s < numSubs; ++s)
      if (subs[s].first)
        starts[subs[s].first] = s;
    int64_t current = -1;
    for (Operation &op : entry) {
      if (auto it = starts.find(&op); it != starts.end())
        current = it->second;
      subOf[&op] = current;
    }
  }

  // The buffers: their slots, bytes, and the sub-steps whose code names them.
  SmallVector<std::pair<int64_t, SizeKey>> planned = slots.getPlannedSizes();
  struct Use {
    int64_t slot;
    uint64_t bytes;
    int64_t taken;                // the sub-step of the take
    SmallVector<int64_t, 4> subs; // sorted, unique
    // The row chunks each sub-step's code reads or writes (-1: all).
    std::map<int64_t, std::set<int64_t>> chunksUsed;
    // Of those, by sub-step, the input chunks of tiles (to the side of the
    // tile, -1 where two tiles of other sides read it) and the chunks
    // something else reads or writes: a chunk only tiles of one side read
    // may be fetched selectively (gnnrtFetchChunkFor).
    std::map<int64_t, std::map<int64_t, int64_t>> tileSide;
    // The ops that read it so, by sub-step and chunk.
    std::map<int64_t, std::map<int64_t, SmallVector<Operation *, 1>>>
        tileReaders;
    std::map<int64_t, std::set<int64_t>> otherChunks;
    bool chunked = false;
    // Per-edge values chunked by destination (isEdgeChunked): chunk c is
    // the in-edges of destination chunk c.
    bool edges = false;
    // Read-only and in the slow tier from the start (a source of the
    // placement's graph): fetched by its readers, dropped with the copy
    // kept, never taken or written (the features out of core).
    bool source = false;
  };
  // The features out of core (recordFeatures): one more buffer after the
  // takes, read-only, in the slow tier from the start, never taken.
  const bool features = featuresCall != nullptr;
  std::vector<Use> uses(takes.size() + (features ? 1 : 0));
  const unsigned featuresUse = takes.size();
  const StringRef i32Name = rt::getName(rt::Call::gnnrtBufferI32);
  // Every user of `root` in `u`, through views made of the buffer in the
  // same sub-step.
  auto findUses = [&](Value root, Use &u) -> LogicalResult {
    SmallVector<Value> work{root};
    std::set<int64_t> seen;
    if (u.taken >= 0)
      seen.insert(u.taken);
    while (!work.empty()) {
      Value v = work.pop_back_val();
      int64_t defSub = subOf.lookup(v.getDefiningOp());
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        Operation *top = entry.findAncestorOpInBlock(*user);
        if (!top)
          return source->emitError() << "buffer placement: a buffer is used "
                                        "outside the function's body";
        int64_t s = subOf.lookup(top);
        if (s < 0)
          return source->emitError()
                 << "buffer placement: a buffer is used before any step";
        seen.insert(s);
        std::optional<int64_t> input = inputChunkOf(use);
        const int64_t chunk = readsAllRows(use) ? -1
                              : input           ? *input
                                                : subs[s].chunk;
        u.chunksUsed[s].insert(chunk);
        std::optional<int64_t> side = tileSideOf(use);
        if (input && side && !u.edges) {
          auto [it, fresh] = u.tileSide[s].try_emplace(*input, *side);
          if (!fresh && it->second != *side)
            it->second = -1;
          u.tileReaders[s][*input].push_back(user);
        } else {
          u.otherChunks[s].insert(chunk);
        }
        bool view = top == user && !isa<func::CallOp>(user) &&
                    llvm::any_of(user->getResultTypes(),
                                 [](Type ty) { return isa<MemRefType>(ty); });
        if (!view)
          continue;
        if (v != root && s != defSub)
          return source->emitError()
                 << "buffer placement: a view of a buffer is used by a later "
                    "step ("
                 << steps[subs[s].step].op->getName() << "); not supported";
        for (Value r : user->getResults())
          if (isa<MemRefType>(r.getType()))
            work.push_back(r);
      }
    }
    u.subs.assign(seen.begin(), seen.end());
    return success();
  };
  for (auto [t, take] : llvm::enumerate(takes)) {
    Use &u = uses[t];
    u.slot = planned[take.id].first;
    double elements = estimateElements(planned[take.id].second, estimates);
    u.bytes = static_cast<uint64_t>(std::ceil(std::max(elements, 0.0))) * 4;
    if (take.call->getBlock() != &entry || take.step < 0)
      return source->emitError()
             << "buffer placement: a buffer is taken outside the function's "
                "sequence of steps (inside a loop); not supported";
    u.taken = subOf.lookup(take.call);
    u.edges = isEdgeChunked(take.call);
    if (failed(findUses(take.call->getResult(0), u)))
      return failure();
  }
  if (features) {
    Use &u = uses[featuresUse];
    if (featuresSlot < 0 || featuresCall->getBlock() != &entry)
      return source->emitError() << "buffer placement: the features out of "
                                    "core have no slot, or are taken in a "
                                    "loop";
    u.slot = featuresSlot;
    u.bytes =
        static_cast<uint64_t>(std::max<int64_t>(estimates.lookup("V"), 0)) *
        static_cast<uint64_t>(std::max<int64_t>(estimates.lookup("F"), 0)) * 4;
    u.taken = -1; // never produced: read from storage
    u.chunked = true;
    u.source = true;
    if (failed(findUses(featuresCall->getResult(0), u)))
      return failure();
  }
  // Buffers in chunks: f32 row buffers in slots that hold only those, and
  // edge-chunked buffers in slots that hold only those.
  if (K > 1) {
    std::map<int64_t, int> slotKind; // 1 rows, 2 edges, 0 mixed or other
    for (auto [t, take] : llvm::enumerate(takes)) {
      const int kind =
          uses[t].edges ? 2
          : isRowSize(planned[take.id].second) &&
                  cast<func::CallOp>(take.call).getCallee() != i32Name
              ? 1
              : 0;
      auto [it, fresh] = slotKind.try_emplace(uses[t].slot, kind);
      if (!fresh && it->second != kind)
        it->second = 0;
    }
    for (Use &u : uses) {
      u.chunked = u.source || slotKind[u.slot] != 0;
      u.edges = u.edges && u.chunked;
    }
  }

  // Everything fits at once: the slots as they are, nothing moves.
  std::map<int64_t, uint64_t> slotBytes;
  for (const Use &u : uses)
    slotBytes[u.slot] = std::max(slotBytes[u.slot], u.bytes);
  uint64_t allSlots = 0;
  for (auto [slot, bytes] : slotBytes)
    allSlots += bytes;
  report = BufferPlacementReport();
  report.capacity = capacity;
  if (allSlots <= capacity) {
    report.strategy = "none (every slot fits: " + bytesText(allSlots) + ")";
    report.peakBytes = allSlots;
    if (features) { // read once, then kept
      report.fetches = K;
      report.fetchBytes = uses[featuresUse].bytes;
      lb.b.setInsertionPointAfter(featuresCall);
      for (int64_t c = 0; c < K; ++c)
        lb.call(rt::Call::gnnrtFetchChunk,
                {lb.ctx, lb.cI64(featuresSlot), lb.cI64(c)});
    }
    return success();
  }

  // The placement's tensors: a buffer, or each row chunk of a chunked one
  // (its pages: what the runtime holds for it).
  struct Unit {
    unsigned take;
    int64_t chunk; // -1: the whole buffer
    uint64_t ioBytes;
    int64_t last = -1; // the last sub-step using it
  };
  std::vector<Unit> units;
  SmallVector<SmallVector<unsigned, 1>> unitsOf(uses.size());
  PlacementGraph graph;
  const int64_t estV = estimates.lookup("V");
  const int64_t estE = estimates.lookup("E");
  for (auto [t, u] : llvm::enumerate(uses)) {
    if (u.edges) {
      // Chunk c: the in-edges of destination chunk c (`chunkEdges`, or
      // every edge where the dataset's offsets are unknown: one chunk may
      // hold them all).
      const uint64_t edgeBytes = estE > 0 ? u.bytes / estE : 0;
      report.edgeChunks = true;
      for (int64_t c = 0; c < K; ++c) {
        const uint64_t n =
            static_cast<int64_t>(chunkEdges.size()) == K
                ? chunkEdges[c]
                : static_cast<uint64_t>(std::max<int64_t>(estE, 0));
        unitsOf[t].push_back(units.size());
        units.push_back(Unit{static_cast<unsigned>(t), c, n * edgeBytes});
        graph.addTensor(("slot " + Twine(u.slot) + " #" + Twine(t) +
                         " edge chunk " + Twine(c))
                            .str(),
                        pagesFor(n * edgeBytes));
      }
      continue;
    }
    if (!u.chunked) {
      unitsOf[t].push_back(units.size());
      units.push_back(Unit{static_cast<unsigned>(t), -1, u.bytes});
      graph.addTensor(("slot " + Twine(u.slot) + " #" + Twine(t)).str(),
                      u.bytes);
      continue;
    }
    const uint64_t rowBytes = estV > 0 ? u.bytes / estV : 0;
    for (int64_t c = 0; c < K; ++c) {
      const uint64_t rows =
          gnnrtChunkRowBound(estV, K, c + 1) - gnnrtChunkRowBound(estV, K, c);
      unitsOf[t].push_back(units.size());
      units.push_back(Unit{static_cast<unsigned>(t), c, rows * rowBytes});
      graph.addTensor(
          ("slot " + Twine(u.slot) + " #" + Twine(t) + " chunk " + Twine(c))
              .str(),
          pagesFor(rows * rowBytes));
    }
  }
  const unsigned numUnits = units.size();
  for (int64_t s = 0; s < numSubs; ++s)
    graph.addTensor(("order " + Twine(s)).str(), 0);
  // What sub-step s touches of buffer t: of a chunked buffer in a chunked
  // step, the chunks its code uses (its own chunk, a tile's input chunk, or
  // all where it reads every row; a chunk's first sub-step its own chunk
  // where the code does not name the buffer, a later tile nothing), else
  // all of it.
  auto touched = [&](unsigned t, int64_t s) -> SmallVector<unsigned, 1> {
    const Use &u = uses[t];
    if (!u.chunked || subs[s].chunk < 0)
      return unitsOf[t];
    auto it = u.chunksUsed.find(s);
    if (it == u.chunksUsed.end()) {
      if (subs[s].tile > 0)
        return {};
      return {unitsOf[t][subs[s].chunk]};
    }
    if (it->second.count(-1))
      return unitsOf[t];
    SmallVector<unsigned, 1> chunks;
    for (int64_t c : it->second)
      chunks.push_back(unitsOf[t][c]);
    return chunks;
  };
  std::vector<SmallVector<unsigned>> inputs(numSubs), outputs(numSubs);
  std::vector<SmallVector<unsigned>> created(numSubs), written(numSubs);
  SmallVector<bool> producedYet(numUnits, false);
  for (auto [t, u] : llvm::enumerate(uses)) {
    if (u.source) { // no producer
      for (int64_t s : u.subs)
        for (unsigned x : touched(t, s)) {
          units[x].last = std::max(units[x].last, s);
          if (!llvm::is_contained(inputs[s], x))
            inputs[s].push_back(x);
        }
      continue;
    }
    // Produced by the taking step: each chunk by its own sub-step when the
    // step runs in chunks.
    const int64_t step = subs[u.taken].step;
    for (int64_t s = firstSub[step]; s < numSubs && subs[s].step == step; ++s) {
      if (subs[s].chunk < 0 && s != u.taken)
        continue;
      for (unsigned x : touched(t, s))
        if (!producedYet[x]) {
          producedYet[x] = true;
          outputs[s].push_back(x);
          created[s].push_back(x);
        }
    }
    // Every chunk of the taking step writes what it touches of the buffer
    // (an outer sum or a sum of rows adds each chunk's share to it).
    for (int64_t s : u.subs)
      if (subs[s].step == step)
        llvm::append_range(written[s], touched(t, s));
    for (int64_t s : u.subs)
      for (unsigned x : touched(t, s)) {
        units[x].last = std::max(units[x].last, s);
        if (!llvm::is_contained(outputs[s], x) &&
            !llvm::is_contained(inputs[s], x))
          inputs[s].push_back(x);
      }
  }
  for (Unit &x : units)
    x.last = std::max(x.last, uses[x.take].taken);
  // The side of the tile for which sub-step s reads unit x (a chunk) as its
  // input only, neither creating nor writing it, and nothing else of s reads
  // it; else -1. Fetched for s and dropped right after, it is read
  // selectively (gnnrtFetchChunkFor).
  auto tileReadSide = [&](unsigned x, int64_t s) -> int64_t {
    const Unit &unit = units[x];
    const Use &u = uses[unit.take];
    if (subs[s].chunk < 0 || unit.chunk < 0 ||
        llvm::is_contained(created[s], x) || llvm::is_contained(written[s], x))
      return -1;
    auto tiles = u.tileSide.find(s);
    if (tiles == u.tileSide.end())
      return -1;
    auto side = tiles->second.find(unit.chunk);
    if (side == tiles->second.end())
      return -1;
    auto others = u.otherChunks.find(s);
    if (others != u.otherChunks.end() &&
        (others->second.count(unit.chunk) || others->second.count(-1)))
      return -1;
    return side->second;
  };
  DenseMap<int64_t, unsigned> takeOfBuffer; // planner id -> take
  for (auto [t, take] : llvm::enumerate(takes))
    takeOfBuffer[take.id] = t;
  for (int64_t s = 0; s < numSubs; ++s) {
    for (int64_t id : steps[subs[s].step].writes)
      for (unsigned x : touched(takeOfBuffer.lookup(id), s))
        written[s].push_back(x);
    if (s > 0)
      inputs[s].push_back(numUnits + s - 1);
    outputs[s].push_back(numUnits + s);
    std::string name;
    llvm::raw_string_ostream os(name);
    const Step &step = steps[subs[s].step];
    os << step.op->getName() << " " << step.op->getLoc();
    if (subs[s].chunk >= 0)
      os << " chunk " << subs[s].chunk;
    if (subs[s].tile > 0)
      os << " tile " << subs[s].tile;
    const unsigned op = graph.addOp(name, inputs[s], outputs[s]);
    // A tile input read selectively moves θ of its chunk, where the
    // runtime's rule would filter it (selectiveLoadBytes).
    if (!tileRows || tileRows->chunks != K || estV <= 0)
      continue;
    for (unsigned x : inputs[s]) {
      if (x >= numUnits)
        continue;
      const int64_t side = tileReadSide(x, s);
      if (side < 0)
        continue;
      const uint64_t rows = gnnrtChunkRowBound(estV, K, units[x].chunk + 1) -
                            gnnrtChunkRowBound(estV, K, units[x].chunk);
      const uint64_t read = tileRows->get(side, subs[s].chunk, units[x].chunk);
      if (std::optional<uint64_t> bytes =
              selectiveLoadBytes(read, rows, uses[units[x].take].bytes / estV))
        graph.setFilteredLoad(op, x, *bytes);
    }
  }
  SmallVector<unsigned> order;
  for (int64_t s = 0; s < numSubs; ++s)
    order.push_back(s);

  report.strategy = stringifyPlacementStrategy(strategy).str();
  auto makePlan = [&]() -> llvm::Expected<PlacementPlan> {
    switch (strategy) {
    case PlacementStrategy::Optimal: {
      // The lowering's order makes the states a chain (one per step), so the
      // table is small even with more active tensors than ROC's graphs
      // have: row chunks keep 13 to 20 live. The table and transition
      // limits still bound the work.
      PlacementLimits limits;
      limits.maxActiveTensors = 20;
      llvm::Expected<PlacementPlan> dp =
          planOptimalPlacement(graph, capacity, limits);
      if (dp)
        return dp;
      // Beyond its limits: the bounded search over the lowering's order,
      // never worse than LRU (whose plan it returns when it finds nothing
      // better).
      std::string why = llvm::toString(dp.takeError());
      llvm::Expected<PlacementPlan> bounded =
          planBoundedPlacement(graph, capacity, order);
      if (!bounded) {
        report.strategy =
            "lru (dp not run: " + why +
            "; bounded search failed: " + llvm::toString(bounded.takeError()) +
            ")";
        return planLRUPlacement(graph, capacity, order);
      }
      report.strategy = (bounded->strategy == PlacementStrategy::LRU
                             ? "lru (bounded search no better; dp not run: "
                             : "optimal-bounded (dp not run: ") +
                        why + ")";
      return bounded;
    }
    case PlacementStrategy::LRU:
      return planLRUPlacement(graph, capacity, order);
    case PlacementStrategy::Belady:
      return planBeladyPlacement(graph, capacity, order);
    case PlacementStrategy::Streaming:
      return planStreamingPlacement(graph, capacity, order);
    }
    llvm_unreachable("unknown placement strategy");
  };
  llvm::Expected<PlacementPlan> plan = makePlan();
  if (!plan)
    return source->emitError()
           << "buffer placement: " << llvm::toString(plan.takeError());
  report.minCapacity = plan->minCapacity;
  if (!plan->feasible) {
    // The step that needs the most.
    const Sub &worstSub = subs[getLargestOp(graph)];
    const Step &worst = steps[worstSub.step];
    InFlightDiagnostic d = source->emitError();
    d << "the memory budget leaves " << bytesText(capacity)
      << " for the training state's buffers, below the minimum any plan "
         "needs, "
      << bytesText(plan->minCapacity) << ": '" << worst.op->getName()
      << "' alone uses " << bytesText(plan->minCapacity)
      << " of buffers at once ("
      << (worstSub.chunk >= 0 ? "raise the budget"
          : K == 1 && isa<ApplyVertexOp>(worst.op)
              ? "raise the budget, or run the vertex stages in row chunks"
              : "raise the budget")
      << ")";
    d.attachNote(worst.op->getLoc()) << "this op";
    // What it holds at once, by buffer, largest first: a whole buffer of a
    // step run in row chunks is one in a slot that also holds buffers of
    // another kind; a chunked one with every chunk, one it reads at every
    // row (edge weights, an aggregation's input that is not tiled).
    const unsigned worstOp = getLargestOp(graph);
    struct Held {
      unsigned take;
      SmallVector<int64_t> chunks; // -1: the whole buffer
      uint64_t bytes = 0;
    };
    SmallVector<Held> held;
    for (ArrayRef<unsigned> list :
         {graph.getInputs(worstOp), graph.getOutputs(worstOp)})
      for (unsigned x : list) {
        if (x >= numUnits || graph.getBytes(x) == 0)
          continue;
        auto it = llvm::find_if(
            held, [&](const Held &h) { return h.take == units[x].take; });
        if (it == held.end()) {
          held.push_back(Held{units[x].take, {}, 0});
          it = std::prev(held.end());
        }
        if (llvm::is_contained(it->chunks, units[x].chunk))
          continue;
        it->chunks.push_back(units[x].chunk);
        it->bytes += graph.getBytes(x);
      }
    llvm::stable_sort(
        held, [](const Held &a, const Held &b) { return a.bytes > b.bytes; });
    std::string list;
    llvm::raw_string_ostream os(list);
    for (auto [i, h] : llvm::enumerate(held)) {
      if (i == 6) {
        os << ", and " << held.size() - i << " more";
        break;
      }
      const Use &u = uses[h.take];
      os << (i ? ", " : "") << "slot " << u.slot;
      const char *kind = u.edges ? " edge chunk" : " chunk";
      if (h.chunks.size() == 1 && h.chunks[0] < 0)
        os << (K > 1 ? " (whole)" : "");
      else if (static_cast<int64_t>(h.chunks.size()) == K)
        os << " (every" << kind << ")";
      else if (h.chunks.size() == 1)
        os << kind << " " << h.chunks[0];
      else
        os << kind << "s " << h.chunks.size() << " of " << K;
      os << " " << bytesText(h.bytes);
    }
    d.attachNote(worst.op->getLoc()) << "its buffers at once: " << os.str();
    return failure();
  }
  for (unsigned s = 0; s < plan->steps.size(); ++s)
    if (plan->steps[s].op != s)
      return source->emitError()
             << "buffer placement: the plan changed the lowering's order";

  // The copies. A planned function starts with nothing resident, so that the
  // run's peak is the larger of the functions' peaks (GNNToRuntime adds the
  // same to a function that fits when another is planned).
  report.planned = true;
  Value ctx = lb.ctx;
  emitDropAll(fn, lb);
  report.peakBytes = plan->peakBytes;
  auto slotConst = [&](int64_t slot) { return lb.cI64(slot); };
  // Chunked buffers are taken as chunks (each absent until its first use).
  for (auto [t, take] : llvm::enumerate(takes)) {
    if (!uses[t].chunked)
      continue;
    auto call = cast<func::CallOp>(take.call);
    lb.b.setInsertionPoint(call);
    Value chunked =
        uses[t].edges
            ? lb.call(rt::Call::gnnrtBufferEdgeChunks,
                      {ctx, call.getOperand(1), call.getOperand(2), lb.cI64(K)})
            : lb.call(rt::Call::gnnrtBufferChunks,
                      {ctx, call.getOperand(1), call.getOperand(2),
                       lb.toI64(lb.sizes.numV), lb.cI64(K)});
    call.getResult(0).replaceAllUsesWith(chunked);
    take.call = chunked.getDefiningOp();
    call.erase();
  }
  SmallVector<Value> current;
  for (const Take &t : takes)
    current.push_back(t.call->getResult(0));
  DenseMap<Operation *, int64_t> positions;
  for (auto [i, op] : llvm::enumerate(entry))
    positions[&op] = static_cast<int64_t>(i);
  DenseMap<int64_t, int64_t> owner; // slot -> the buffer in it now
  auto ownerOf = [&](int64_t slot) -> int64_t {
    auto it = owner.find(slot);
    return it == owner.end() ? -1 : it->second;
  };
  SmallVector<bool> dirty(numUnits, false);
  // Where the copies after sub-step s go: before the next one's code.
  auto nextCode = [&](int64_t s) -> Operation * {
    for (int64_t j = s + 1; j < numSubs; ++j)
      if (subs[j].first)
        return subs[j].first;
    return nullptr;
  };
  auto chunkCall = [&](rt::Call callee, const Unit &x,
                       std::optional<int64_t> keep = std::nullopt) {
    SmallVector<Value> args{ctx, slotConst(uses[x.take].slot),
                            lb.cI64(x.chunk)};
    if (keep)
      args.push_back(lb.cI64(*keep));
    lb.call(callee, args);
  };
  // The side of the tile for which sub-step s alone reads unit x (a chunk),
  // when it leaves the fast tier right after s; else -1.
  auto tileInputSide = [&](unsigned x, int64_t s) -> int64_t {
    if (s + 1 >= numSubs || !llvm::is_contained(plan->steps[s].evict, x))
      return -1;
    return tileReadSide(x, s);
  };
  auto calls = [](Operation *op, rt::Call callee) {
    auto call = dyn_cast_or_null<func::CallOp>(op);
    return call && call.getCallee() == rt::getName(callee);
  };
  // The call after a kernel argument that runs the kernel: the next call
  // after the other arguments, the kernel integers, the window of the
  // graph that a chunk's first tile opens and the fetches of the launch's
  // inputs placed before it (a tile's launch, or the call that replaced
  // it).
  auto kernelCallAfter = [&](Operation *arg) -> Operation * {
    if (!calls(arg, rt::Call::gnnrtKernelArg) &&
        !calls(arg, rt::Call::gnnrtKernelArgI32))
      return nullptr;
    Operation *op = arg->getNextNode();
    while (op &&
           (!isa<func::CallOp>(op) || calls(op, rt::Call::gnnrtKernelArg) ||
            calls(op, rt::Call::gnnrtKernelArgI32) ||
            calls(op, rt::Call::gnnrtKernelInt) ||
            calls(op, rt::Call::gnnrtGraphWindow) ||
            calls(op, rt::Call::gnnrtFetchChunkFor) ||
            calls(op, rt::Call::gnnrtTileInput)))
      op = op->getNextNode();
    return op;
  };
  // The readers of unit x (a chunk) in sub-step s.
  auto chunkReaders = [&](unsigned x, int64_t s) -> ArrayRef<Operation *> {
    const Unit &unit = units[x];
    const Use &u = uses[unit.take];
    auto readers = u.tileReaders.find(s);
    if (readers == u.tileReaders.end())
      return {};
    auto ops = readers->second.find(unit.chunk);
    if (ops == readers->second.end())
      return {};
    return ops->second;
  };
  // A tile input fetched for one tile alone is fetched where the tile
  // computes, in sub-chunks while it computes (the runtime's pipeline): a
  // gnnrtSpmmRows tile becomes gnnrtSpmmRowsFetch, a compiled kernel's tile
  // launch (the input its one neighbour-side argument of the chunk) becomes
  // gnnrtParallelForRangeFetch. The call takes the tile's place (its
  // sub-step may start at it; later copies find it at its position).
  auto fuseTile = [&](unsigned x, int64_t s, int64_t side) -> bool {
    const Unit &unit = units[x];
    const Use &u = uses[unit.take];
    ArrayRef<Operation *> readers = chunkReaders(x, s);
    if (readers.empty())
      return false;
    Operation *tile = readers.front();
    std::optional<TileLaunch> launch;
    if (readers.size() != 1 || !calls(tile, rt::Call::gnnrtSpmmRows) ||
        tile->getNumOperands() != 11) {
      // Kernel arguments of one tile launch.
      Operation *op = kernelCallAfter(tile);
      if (!op || llvm::any_of(readers, [&](Operation *reader) {
            return kernelCallAfter(reader) != op;
          }))
        return false;
      if (calls(op, rt::Call::gnnrtParallelForRangeFetch)) {
        // Fused already for another input of the tile: this one joins it.
        if (getConstantIntValue(op->getOperand(2)) != unit.chunk ||
            getConstantIntValue(op->getOperand(3)) != side)
          return false;
        Operation *before = op->getPrevNode();
        lb.b.setInsertionPoint(op);
        lb.call(rt::Call::gnnrtTileInput, {ctx, slotConst(u.slot)});
        const int64_t at = positions.lookup(op);
        for (Operation *o = before->getNextNode(); o != op;
             o = o->getNextNode())
          positions[o] = at;
        lb.b.setInsertionPoint(subs[s].first);
        return true;
      }
      launch = tileLaunchOf(op);
      if (!launch || launch->side != side)
        return false;
      tile = op;
    }
    Operation *before = tile->getPrevNode();
    lb.b.setInsertionPoint(tile);
    SmallVector<Value> args{ctx, slotConst(u.slot), lb.cI64(unit.chunk)};
    if (launch)
      llvm::append_range(
          args, SmallVector<Value>{lb.cI64(side), lb.cI64(launch->loInt),
                                   lb.cI64(launch->hiInt),
                                   lb.cI64(launch->inOrder ? 1 : 0)});
    llvm::append_range(args, tile->getOperands().drop_front());
    lb.call(launch ? rt::Call::gnnrtParallelForRangeFetch
                   : rt::Call::gnnrtSpmmRowsFetch,
            args);
    Operation *first = before ? before->getNextNode() : &entry.front();
    for (Sub &sub : subs)
      if (sub.first == tile)
        sub.first = first;
    const int64_t at = positions.lookup(tile);
    for (Operation *op = first; op != tile; op = op->getNextNode())
      positions[op] = at;
    positions.erase(tile);
    tile->erase();
    lb.b.setInsertionPoint(first);
    return true;
  };
  for (int64_t s = 0; s < numSubs; ++s) {
    const PlacementStep &step = plan->steps[s];
    // Before the sub-step: fetch what it reads and is not resident.
    for (unsigned x : step.load) {
      if (x >= numUnits)
        continue;
      const Unit &unit = units[x];
      const unsigned t = unit.take;
      if (!subs[s].first || (!uses[t].source && ownerOf(uses[t].slot) != t))
        return source->emitError() << "buffer placement: slot " << uses[t].slot
                                   << " holds another buffer when step "
                                   << subs[s].step << " reads it";
      lb.b.setInsertionPoint(subs[s].first);
      ++report.fetches;
      if (llvm::is_contained(step.filtered, x)) {
        // Read selectively by the runtime's rule, at the dataset's rows.
        for (auto [y, bytes] : graph.getFilteredLoads(s))
          if (y == x)
            report.fetchBytes += bytes;
        ++report.filteredFetches;
      } else {
        report.fetchBytes += unit.ioBytes;
      }
      if (unit.chunk >= 0) {
        // Read only for one tile of one side and dropped after it: the
        // runtime may read only the rows the tile's edges reach.
        const int64_t side = tileInputSide(x, s);
        if (side >= 0 && fuseTile(x, s, side)) {
          ++report.tileFetches;
          ++report.pipelinedTiles;
          continue;
        }
        if (side >= 0) {
          // Read by kernel arguments of one launch: fetched right before
          // it, where its chunk's window of the graph is open.
          ArrayRef<Operation *> readers = chunkReaders(x, s);
          Operation *launch =
              readers.empty() ? nullptr : kernelCallAfter(readers.front());
          if (launch && llvm::all_of(readers, [&](Operation *op) {
                return kernelCallAfter(op) == launch;
              }))
            lb.b.setInsertionPoint(launch);
          lb.call(rt::Call::gnnrtFetchChunkFor,
                  {ctx, slotConst(uses[t].slot), lb.cI64(unit.chunk),
                   lb.cI64(side), lb.cI64(subs[s].chunk)});
          ++report.tileFetches;
          continue;
        }
        chunkCall(rt::Call::gnnrtFetchChunk, unit);
        continue;
      }
      lb.call(rt::Call::gnnrtFetch, {ctx, slotConst(uses[t].slot)});
      auto call = cast<func::CallOp>(takes[t].call);
      Value fresh =
          lb.call(call.getCallee() == i32Name ? rt::Call::gnnrtBufferI32
                                              : rt::Call::gnnrtBuffer,
                  {ctx, slotConst(uses[t].slot), call.getOperand(2)});
      // The uses from the sub-step on (by the positions of the code before
      // the copies: asking the block after each insertion renumbers it, and
      // row chunks' tiles make blocks of 10^5 ops).
      const int64_t from = positions.lookup(subs[s].first);
      current[t].replaceUsesWithIf(fresh, [&](OpOperand &use) {
        Operation *top = entry.findAncestorOpInBlock(*use.getOwner());
        auto at = top ? positions.find(top) : positions.end();
        return at != positions.end() && at->second >= from;
      });
      current[t] = fresh;
    }
    // The chunks it creates get their memory: after the take in the
    // sub-step that takes the buffer, else before the sub-step.
    for (unsigned x : created[s]) {
      const Unit &unit = units[x];
      owner[uses[unit.take].slot] = unit.take;
      dirty[x] = true;
      if (unit.chunk < 0)
        continue;
      if (uses[unit.take].taken == s)
        lb.b.setInsertionPointAfter(takes[unit.take].call);
      else
        lb.b.setInsertionPoint(subs[s].first);
      chunkCall(rt::Call::gnnrtFetchChunk, unit);
    }
    for (unsigned x : written[s])
      dirty[x] = true;
    if (s + 1 == numSubs)
      break; // the output step: the logits stay for the driver
    Operation *at = nextCode(s);
    if (!at)
      return source->emitError()
             << "buffer placement: no code after step " << subs[s].step;
    lb.b.setInsertionPoint(at);
    // After the sub-step: what leaves the fast tier.
    for (unsigned x : step.evict) {
      if (x >= numUnits)
        continue;
      const Unit &unit = units[x];
      const int64_t slot = uses[unit.take].slot;
      if (uses[unit.take].source) { // its copy stays: no write
        chunkCall(rt::Call::gnnrtDropChunk, unit, 1);
        ++report.drops;
        continue;
      }
      const bool mine = ownerOf(slot) == static_cast<int64_t>(unit.take);
      if (unit.last <= s) { // dead
        if (mine) {
          if (unit.chunk >= 0)
            chunkCall(rt::Call::gnnrtDropChunk, unit, 0);
          else
            lb.call(rt::Call::gnnrtDrop, {ctx, slotConst(slot), lb.cI64(0)});
          ++report.drops;
        }
        continue;
      }
      if (!mine)
        return source->emitError() << "buffer placement: slot " << slot
                                   << " holds another buffer while buffer #"
                                   << unit.take << " is live";
      if (dirty[x]) {
        if (unit.chunk >= 0)
          chunkCall(rt::Call::gnnrtEvictChunk, unit);
        else
          lb.call(rt::Call::gnnrtEvict, {ctx, slotConst(slot)});
        report.evictBytes += unit.ioBytes;
        ++report.evictions;
        dirty[x] = false;
      } else {
        if (unit.chunk >= 0)
          chunkCall(rt::Call::gnnrtDropChunk, unit, 1);
        else
          lb.call(rt::Call::gnnrtDrop, {ctx, slotConst(slot), lb.cI64(1)});
        ++report.drops;
      }
    }
  }
  return success();
}
