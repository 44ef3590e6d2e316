//===- Buffers.cpp - where gnn values live, and until when ----------------===//

#include "Buffers.h"

#include <functional>

using namespace mlir;
using namespace mlir::gnn;

Value Buffers::slotBuffer(rt::Call call, Value numElements, int64_t &slot,
                          bool edgeChunks) {
  slot = slots.take(sizeKey(numElements), call == rt::Call::gnnrtBufferI32,
                    edgeChunks);
  Value id = lb.cI64(-1);
  slots.addSlotConstant(slot, id.getDefiningOp());
  Value buf = lb.call(call, {lb.ctx, id, lb.toI64(numElements)});
  if (edgeChunks)
    markEdgeChunks(buf.getDefiningOp());
  placement.recordTake(slot, buf.getDefiningOp());
  return buf;
}

Value Buffers::buffer(Value numElements) {
  int64_t slot;
  Value buf = slotBuffer(rt::Call::gnnrtBuffer, numElements, slot);
  slotOf[buf] = slot;
  return buf;
}

Value Buffers::bufferI32(Value numElements) {
  int64_t slot;
  Value buf = slotBuffer(rt::Call::gnnrtBufferI32, numElements, slot);
  slotOf[buf] = slot;
  return buf;
}

Value Buffers::unboundBuffer(Value numElements, int64_t &slot,
                             bool edgeChunks) {
  return slotBuffer(rt::Call::gnnrtBuffer, numElements, slot, edgeChunks);
}

void Buffers::bind(Value v, const Tensor &t) {
  values[v] = t;
  if (!slotOf.count(t.buf))
    return;
  // A second value in a buffer: the op binding it may have written it (an
  // in-place stage), which makes a copy of it in the slow tier stale.
  if (!boundTo[t.buf].empty())
    placement.recordWrite(slotOf.lookup(t.buf));
  boundTo[t.buf].push_back(v);
  ++holders[t.buf];
  auto it = lastUse.find(v);
  int64_t last = it != lastUse.end() ? it->second : -1;
  expiring[std::max(last, expiredUpTo + 1)].push_back(t.buf);
}

void Buffers::expireStep(int64_t upTo) {
  for (int64_t slot : heldBack)
    slots.release(slot);
  heldBack.clear();
  expireUpTo(upTo);
}

void Buffers::expireUpTo(int64_t upTo) {
  while (!expiring.empty() && expiring.begin()->first <= upTo) {
    for (Value buf : expiring.begin()->second)
      if (--holders[buf] == 0)
        slots.release(slotOf[buf]);
    expiring.erase(expiring.begin());
  }
  expiredUpTo = std::max(expiredUpTo, upTo);
}

int64_t Buffers::indexOf(Operation *op) const {
  while (op && !opIndex.count(op))
    op = op->getParentOp();
  return op ? opIndex.lookup(op) : numIndexed;
}

void Buffers::computeLastUses(Block &body) {
  // The order ops are lowered in: a stage's body ops, then the stage (which
  // binds its results and is the last reader of its inputs and yields).
  int64_t next = 0;
  std::function<void(Block &)> number = [&](Block &block) {
    for (Operation &op : block.without_terminator()) {
      for (Region &r : op.getRegions())
        for (Block &inner : r)
          number(inner);
      opIndex[&op] = next++;
    }
  };
  number(body);
  numIndexed = next;
  body.walk([&](Operation *op) {
    for (Value r : op->getResults()) {
      int64_t last = opIndex.count(op) ? opIndex.lookup(op) : -1;
      for (Operation *u : r.getUsers())
        last = std::max(last, indexOf(u));
      lastUse[r] = last;
    }
    for (Region &region : op->getRegions())
      for (BlockArgument arg : region.getArguments()) {
        int64_t last = opIndex.lookup(op);
        for (Operation *u : arg.getUsers())
          last = std::max(last, indexOf(u));
        lastUse[arg] = last;
      }
  });
  for (BlockArgument arg : body.getArguments())
    lastUse[arg] = next; // parameters live to the end
  // Values the function returns (the logits) live to the end.
  for (Value v : body.getTerminator()->getOperands())
    lastUse[v] = next;
}

void Buffers::addRead(Operation *reader, Value v) {
  lastUse[v] = std::max(lastUse.lookup(v), opIndex.lookup(reader));
}
