//===- SlotPlanner.cpp - runtime slots for a function's buffers -----------===//

#include "SlotPlanner.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::gnn;

/// k when `v` is ceil(|V| / k) computed as (|V| + k - 1) / k (the chunk
/// count of a parallel loop over the vertices).
static std::optional<int64_t> chunksOf(Value v, Value numV) {
  auto d = v.getDefiningOp<arith::DivUIOp>();
  if (!d)
    return std::nullopt;
  auto add = d.getLhs().getDefiningOp<arith::AddIOp>();
  std::optional<int64_t> k = getConstantIntValue(d.getRhs());
  if (!add || add.getLhs() != numV || !k || *k <= 0)
    return std::nullopt;
  std::optional<int64_t> c = getConstantIntValue(add.getRhs());
  if (!c || *c != *k - 1)
    return std::nullopt;
  return k;
}

SizeKey gnn::getSizeKey(Value numElements, const GraphSizes &sizes) {
  Value numV = sizes.numV, numE = sizes.numE, numF = sizes.numF,
        numC = sizes.numC;
  SizeKey key;
  SmallVector<std::string> dynamic;
  std::function<void(Value)> walk = [&](Value v) {
    if (auto m = v.getDefiningOp<arith::MulIOp>()) {
      walk(m.getLhs());
      walk(m.getRhs());
    } else if (std::optional<int64_t> c = getConstantIntValue(v)) {
      key.factor *= *c;
    } else if (std::optional<int64_t> k = chunksOf(v, numV)) {
      // Chunks of a parallel loop over the vertices (onlySummed's partials).
      dynamic.push_back("V/" + std::to_string(*k));
    } else if (v == sizes.numS && v != numV) {
      dynamic.push_back("S"); // every vertex, in a partitioned function
    } else if (sizes.numEW && v == sizes.numEW && v != numE) {
      dynamic.push_back("W"); // every edge, in a feature-partitioned one
    } else if (v == numV || v == numE || v == numF || v == numC) {
      dynamic.push_back(v == numV   ? "V"
                        : v == numE ? "E"
                        : v == numF ? "F"
                                    : "C");
    } else {
      dynamic.push_back(
          llvm::utohexstr(reinterpret_cast<uintptr_t>(v.getAsOpaquePointer())));
    }
  };
  walk(numElements);
  llvm::sort(dynamic);
  key.dynamic = llvm::join(dynamic, "*");
  return key;
}

double gnn::estimateElements(const SizeKey &key,
                             const DenseMap<StringRef, int64_t> &estimates) {
  double n = static_cast<double>(key.factor);
  for (StringRef part : llvm::split(StringRef(key.dynamic), '*')) {
    if (part.empty())
      continue;
    auto [name, divisor] = part.split('/');
    auto it = estimates.find(name);
    double x = it != estimates.end() ? static_cast<double>(it->second) : 1000.0;
    int64_t by = 1;
    if (!divisor.empty() && !divisor.getAsInteger(10, by) && by > 0)
      x = std::ceil(x / static_cast<double>(by));
    n *= x;
  }
  return n;
}

bool gnn::isRowSize(const SizeKey &key) {
  int64_t vertices = 0;
  for (StringRef part : llvm::split(StringRef(key.dynamic), '*')) {
    if (part == "V")
      ++vertices;
    else if (!part.empty() && part != "F" && part != "C")
      return false;
  }
  return vertices == 1;
}

int64_t SlotPlanner::take(const SizeKey &size, bool i32, bool edgeChunks) {
  const int kind = edgeChunks ? 2 : !i32 && isRowSize(size) ? 1 : 0;
  buffers.push_back({size, kind, clock++,
                     std::numeric_limits<int64_t>::max(), {}});
  return static_cast<int64_t>(buffers.size()) - 1;
}

void SlotPlanner::release(int64_t id) {
  if (buffers[id].released == std::numeric_limits<int64_t>::max())
    buffers[id].released = clock++;
}

/// The runtime keeps each slot's largest allocation, so a slot costs the size
/// of its largest buffer. Sizes are products of constants and of |V|, |E|, F,
/// C or other run-time values, compared through `estimates` (the dataset's
/// when gnn-compile has one; the plan is correct for any sizes, only its
/// economy depends on them).
void SlotPlanner::plan(const DenseMap<StringRef, int64_t> &estimates) {
  SmallVector<double> sizes;
  SmallVector<int64_t> order;
  for (int64_t i = 0, e = buffers.size(); i < e; ++i) {
    sizes.push_back(estimateElements(buffers[i].size, estimates));
    order.push_back(i);
  }
  llvm::stable_sort(order,
                    [&](int64_t x, int64_t y) { return sizes[x] > sizes[y]; });
  struct Slot {
    double capacity = 0;
    SmallVector<int64_t> members;
    int kind = 0;
  };
  SmallVector<Slot> slots;
  SmallVector<int64_t> slotOfBuffer(buffers.size(), -1);
  auto overlaps = [&](const BufferUse &a, const BufferUse &b) {
    return !(a.released < b.taken || b.released < a.taken);
  };
  for (int64_t id : order) {
    const BufferUse &use = buffers[id];
    const double size = sizes[id];
    int best = -1;
    for (int s = 0, e = slots.size(); s < e; ++s) {
      if (separateRows && slots[s].kind != use.kind)
        continue;
      if (llvm::any_of(slots[s].members, [&](int64_t other) {
            return overlaps(use, buffers[other]);
          }))
        continue;
      if (best < 0) {
        best = s;
        continue;
      }
      const double have = slots[s].capacity, cur = slots[best].capacity;
      const bool fits = have >= size, curFits = cur >= size;
      if (fits != curFits ? fits : (fits ? have < cur : have > cur))
        best = s;
    }
    if (best < 0) {
      best = static_cast<int>(slots.size());
      slots.emplace_back();
      slots.back().kind = use.kind;
    }
    slots[best].capacity = std::max(slots[best].capacity, size);
    slots[best].members.push_back(id);
    slotOfBuffer[id] = best;
  }
  // Largest first, so that the training step's and the evaluation's big
  // slots coincide (the runtime keeps the larger of the two per slot).
  SmallVector<int> byCapacity;
  for (int s = 0, e = slots.size(); s < e; ++s)
    byCapacity.push_back(s);
  llvm::stable_sort(byCapacity, [&](int x, int y) {
    return slots[x].capacity > slots[y].capacity;
  });
  SmallVector<int64_t> number(slots.size());
  for (int rank = 0, e = byCapacity.size(); rank < e; ++rank)
    number[byCapacity[rank]] = rank;
  slotNumbers.clear();
  for (int64_t id = 0, e = buffers.size(); id < e; ++id) {
    slotNumbers.push_back(number[slotOfBuffer[id]]);
    for (Operation *c : buffers[id].slotConstants)
      c->setAttr("value", Builder(c->getContext())
                              .getI64IntegerAttr(slotNumbers.back()));
  }
}

SmallVector<std::pair<int64_t, SizeKey>> SlotPlanner::getPlannedSizes() const {
  SmallVector<std::pair<int64_t, SizeKey>> sizes;
  for (auto [slot, use] : llvm::zip_equal(slotNumbers, buffers))
    sizes.emplace_back(slot, use.size);
  return sizes;
}
