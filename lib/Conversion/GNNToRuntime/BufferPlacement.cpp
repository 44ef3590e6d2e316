//===- BufferPlacement.cpp - slot buffers in a capped fast tier -----------===//

#include "BufferPlacement.h"

#include "llvm/Support/FormatVariadic.h"

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

LogicalResult
BufferPlacement::place(func::FuncOp fn, Operation *source,
                       const SlotPlanner &slots,
                       const DenseMap<StringRef, int64_t> &estimates,
                       uint64_t capacity, PlacementStrategy strategy,
                       LoweringBuilder &lb, BufferPlacementReport &report) {
  Block &entry = fn.getBody().front();
  const int64_t numSteps = steps.size();
  DenseMap<Operation *, int64_t> stepOf;
  {
    DenseMap<Operation *, int64_t> starts;
    for (int64_t k = 0; k < numSteps; ++k)
      if (steps[k].first)
        starts[steps[k].first] = k;
    int64_t current = -1;
    for (Operation &op : entry) {
      if (auto it = starts.find(&op); it != starts.end())
        current = it->second;
      stepOf[&op] = current;
    }
  }

  // The buffers: their slots, bytes, and the steps whose code names them.
  SmallVector<std::pair<int64_t, SizeKey>> planned = slots.getPlannedSizes();
  struct Use {
    int64_t slot;
    uint64_t bytes;
    int64_t taken, last;
    SmallVector<int64_t, 4> steps; // sorted, unique
  };
  std::vector<Use> uses(takes.size());
  const StringRef i32Name = rt::getName(rt::Call::gnnrtBufferI32);
  for (auto [t, take] : llvm::enumerate(takes)) {
    Use &u = uses[t];
    u.slot = planned[take.id].first;
    double elements = estimateElements(planned[take.id].second, estimates);
    u.bytes = static_cast<uint64_t>(std::ceil(std::max(elements, 0.0))) * 4;
    u.taken = u.last = take.step;
    if (take.call->getBlock() != &entry || take.step < 0)
      return source->emitError()
             << "buffer placement: a buffer is taken outside the function's "
                "sequence of steps (inside a loop); not supported";
    // Every user, through views made of the buffer in the same step.
    SmallVector<Value> work{take.call->getResult(0)};
    std::set<int64_t> seen{take.step};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      int64_t defStep = stepOf.lookup(v.getDefiningOp());
      for (Operation *user : v.getUsers()) {
        Operation *top = entry.findAncestorOpInBlock(*user);
        if (!top)
          return source->emitError() << "buffer placement: a buffer is used "
                                        "outside the function's body";
        int64_t k = stepOf.lookup(top);
        if (k < 0)
          return source->emitError()
                 << "buffer placement: a buffer is used before any step";
        seen.insert(k);
        bool view = top == user && !isa<func::CallOp>(user) &&
                    llvm::any_of(user->getResultTypes(),
                                 [](Type ty) { return isa<MemRefType>(ty); });
        if (!view)
          continue;
        if (v != take.call->getResult(0) && k != defStep)
          return source->emitError()
                 << "buffer placement: a view of a buffer is used by a later "
                    "step ("
                 << steps[k].op->getName() << "); not supported";
        for (Value r : user->getResults())
          if (isa<MemRefType>(r.getType()))
            work.push_back(r);
      }
    }
    u.steps.assign(seen.begin(), seen.end());
    u.last = u.steps.back();
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
    return success();
  }

  // The placement graph: a tensor per buffer, an op per step, and a token
  // from each step to the next that fixes the lowering's order.
  PlacementGraph graph;
  const unsigned numTakes = takes.size();
  for (auto [t, u] : llvm::enumerate(uses))
    graph.addTensor(("slot " + Twine(u.slot) + " #" + Twine(t)).str(), u.bytes);
  for (int64_t k = 0; k < numSteps; ++k)
    graph.addTensor(("order " + Twine(k)).str(), 0);
  std::vector<SmallVector<unsigned>> inputs(numSteps), outputs(numSteps);
  for (auto [t, u] : llvm::enumerate(uses))
    for (int64_t k : u.steps)
      (k == u.taken ? outputs : inputs)[k].push_back(t);
  for (int64_t k = 0; k < numSteps; ++k) {
    if (k > 0)
      inputs[k].push_back(numTakes + k - 1);
    outputs[k].push_back(numTakes + k);
    std::string name;
    llvm::raw_string_ostream os(name);
    os << steps[k].op->getName() << " " << steps[k].op->getLoc();
    graph.addOp(name, inputs[k], outputs[k]);
  }
  SmallVector<unsigned> order;
  for (int64_t k = 0; k < numSteps; ++k)
    order.push_back(k);

  report.strategy = stringifyPlacementStrategy(strategy).str();
  auto makePlan = [&]() -> llvm::Expected<PlacementPlan> {
    switch (strategy) {
    case PlacementStrategy::Optimal: {
      llvm::Expected<PlacementPlan> dp = planOptimalPlacement(graph, capacity);
      if (dp)
        return dp;
      report.strategy =
          "lru (dp not run: " + llvm::toString(dp.takeError()) + ")";
      return planLRUPlacement(graph, capacity, order);
    }
    case PlacementStrategy::LRU:
      return planLRUPlacement(graph, capacity, order);
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
    const unsigned worst = getLargestOp(graph);
    InFlightDiagnostic d = source->emitError();
    d << "the memory budget leaves " << bytesText(capacity)
      << " for the training state's buffers, below the minimum any plan "
         "needs, "
      << bytesText(plan->minCapacity) << ": '" << steps[worst].op->getName()
      << "' alone uses " << bytesText(plan->minCapacity)
      << " of buffers at once (raise the budget, or tile it into chunks)";
    d.attachNote(steps[worst].op->getLoc()) << "this op";
    return failure();
  }
  for (unsigned k = 0; k < plan->steps.size(); ++k)
    if (plan->steps[k].op != k)
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
  SmallVector<Value> current;
  for (const Take &t : takes)
    current.push_back(t.call->getResult(0));
  DenseMap<int64_t, int64_t> owner; // slot -> the buffer in it now
  auto ownerOf = [&](int64_t slot) -> int64_t {
    auto it = owner.find(slot);
    return it == owner.end() ? -1 : it->second;
  };
  SmallVector<bool> dirty(numTakes, false);
  DenseMap<int64_t, SmallVector<unsigned>> takenIn; // step -> buffers
  DenseMap<int64_t, unsigned> takeOfBuffer;           // planner id -> take
  for (unsigned t = 0; t < numTakes; ++t) {
    takenIn[uses[t].taken].push_back(t); // in block order
    takeOfBuffer[takes[t].id] = t;
  }
  // Where the copies after step k go: before the next step's code.
  auto nextCode = [&](int64_t k) -> Operation * {
    for (int64_t j = k + 1; j < numSteps; ++j)
      if (steps[j].first)
        return steps[j].first;
    return nullptr;
  };
  for (int64_t k = 0; k < numSteps; ++k) {
    const PlacementStep &step = plan->steps[k];
    // Before the step: fetch what it reads and is not resident.
    for (unsigned t : step.load) {
      if (t >= numTakes)
        continue;
      if (!steps[k].first || ownerOf(uses[t].slot) != t)
        return source->emitError()
               << "buffer placement: slot " << uses[t].slot
               << " holds another buffer when step " << k << " reads it";
      lb.b.setInsertionPoint(steps[k].first);
      lb.call(rt::Call::gnnrtFetch, {ctx, slotConst(uses[t].slot)});
      auto call = cast<func::CallOp>(takes[t].call);
      Value fresh =
          lb.call(call.getCallee() == i32Name ? rt::Call::gnnrtBufferI32
                                              : rt::Call::gnnrtBuffer,
                  {ctx, slotConst(uses[t].slot), call.getOperand(2)});
      Operation *retake = fresh.getDefiningOp();
      current[t].replaceUsesWithIf(fresh, [&](OpOperand &use) {
        Operation *top = entry.findAncestorOpInBlock(*use.getOwner());
        return top && top != retake && retake->isBeforeInBlock(top);
      });
      current[t] = fresh;
      report.fetchBytes += uses[t].bytes;
      ++report.fetches;
    }
    for (unsigned t : takenIn.lookup(k)) {
      owner[uses[t].slot] = t;
      dirty[t] = true;
    }
    for (int64_t id : steps[k].writes)
      dirty[takeOfBuffer.lookup(id)] = true;
    if (k + 1 == numSteps)
      break; // the output step: the logits stay for the driver
    Operation *at = nextCode(k);
    if (!at)
      return source->emitError()
             << "buffer placement: no code after step " << k;
    lb.b.setInsertionPoint(at);
    // After the step: what leaves the fast tier.
    for (unsigned t : step.evict) {
      if (t >= numTakes)
        continue;
      const int64_t slot = uses[t].slot;
      const bool mine = ownerOf(slot) == static_cast<int64_t>(t);
      if (uses[t].last <= k) { // dead
        if (mine) {
          lb.call(rt::Call::gnnrtDrop, {ctx, slotConst(slot), lb.cI64(0)});
          ++report.drops;
        }
        continue;
      }
      if (!mine)
        return source->emitError()
               << "buffer placement: slot " << slot
               << " holds another buffer while buffer #" << t << " is live";
      if (dirty[t]) {
        lb.call(rt::Call::gnnrtEvict, {ctx, slotConst(slot)});
        report.evictBytes += uses[t].bytes;
        ++report.evictions;
        dirty[t] = false;
      } else {
        lb.call(rt::Call::gnnrtDrop, {ctx, slotConst(slot), lb.cI64(1)});
        ++report.drops;
      }
    }
  }
  return success();
}
