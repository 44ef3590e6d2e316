//===- Buffers.h - where gnn values live, and until when --------*- C++ -*-===//
//
// Maps every gnn value of the function being lowered to its Tensor, takes
// slot buffers for new tensors (gnnrtBuffer through the SlotPlanner), and
// releases a slot once every value bound to its buffer is past its last
// reader, so that later buffers may share it.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_CONVERSION_GNNTORUNTIME_BUFFERS_H
#define GNN_LIB_CONVERSION_GNNTORUNTIME_BUFFERS_H

#include "BufferPlacement.h"
#include "LoweringBuilder.h"
#include "SlotPlanner.h"

#include <map>

namespace mlir::gnn {

class Buffers {
public:
  Buffers(LoweringBuilder &lb, SlotPlanner &slots, BufferPlacement &placement)
      : lb(lb), slots(slots), placement(placement) {}

  /// A new f32 (i32) buffer of `numElements` from a slot, released when the
  /// values bound to it are dead (or by release()).
  Value buffer(Value numElements);
  Value bufferI32(Value numElements);
  /// A slot buffer of `numElements` floats outside the liveness of values:
  /// its slot id is returned in `slot`, for releaseSlot(). With
  /// `edgeChunks`, per-edge values that the placement moves by destination
  /// chunks (markEdgeChunks: an edge cache in row chunks).
  Value unboundBuffer(Value numElements, int64_t &slot,
                      bool edgeChunks = false);
  void releaseSlot(int64_t slot) { releaseNowOrAtStepEnd(slot); }
  /// Releases the slot of `buffer()`'s result `buf` now.
  void release(Value buf) {
    assert(slotOf.count(buf) && "not a slot buffer");
    releaseNowOrAtStepEnd(slotOf.lookup(buf));
  }
  /// With row chunks (RowChunks.h) a step's code runs once per chunk, so a
  /// buffer the step uses is in use until its last chunk: slots are then
  /// released only between steps (expireStep), never to a buffer taken
  /// later in the same step.
  void setReleaseBetweenStepsOnly(bool enable) { betweenStepsOnly = enable; }
  /// Whether `buf` came from buffer() or bufferI32().
  bool isSlotBuffer(Value buf) const { return slotOf.count(buf); }
  SizeKey sizeKey(Value numElements) const {
    return getSizeKey(numElements, lb.ownSizes);
  }

  Tensor make(Value buf, Value rows, bool batched, SmallVector<Value> dims) {
    return Tensor{buf, rows, batched, dims, lb.product(dims)};
  }
  Tensor alloc(Value rows, bool batched, SmallVector<Value> dims) {
    Value size = lb.product(dims);
    return Tensor{buffer(lb.mul(rows, size)), rows, batched, dims, size};
  }

  /// Maps a gnn value to where it lives and, for slot buffers, records it as
  /// a holder until its last use.
  void bind(Value v, const Tensor &t);
  /// Where `v` lives (a copy: binding may move the map's entries).
  Tensor lookup(Value v) const { return values.lookup(v); }
  /// Releases the slots whose holders are all dead after op index `upTo`
  /// (inside a step: not with setReleaseBetweenStepsOnly).
  void expire(int64_t upTo) {
    if (!betweenStepsOnly)
      expireUpTo(upTo);
  }
  /// The same after a step, with the releases held back during it.
  void expireStep(int64_t upTo);

  /// Numbers the ops of `body` in the order they are lowered (a stage's body
  /// ops, then the stage) and records each value's last reader.
  void computeLastUses(Block &body);
  /// `reader` reads `v` although it is no operand (an SpMM reads the
  /// scatter's input that it folds).
  void addRead(Operation *reader, Value v);
  /// The index of `op` (0 if it is not numbered).
  int64_t indexOfOp(Operation *op) const { return opIndex.lookup(op); }
  /// The index of `op`, else of its nearest indexed ancestor (a yield is read
  /// when its stage binds the results); past the end for none (the return).
  int64_t indexOf(Operation *op) const;
  int64_t lastUseOf(Value v) const { return lastUse.lookup(v); }
  /// The gnn values ever bound to `buf`.
  ArrayRef<Value> valuesBoundTo(Value buf) const {
    auto it = boundTo.find(buf);
    return it == boundTo.end() ? ArrayRef<Value>() : ArrayRef(it->second);
  }

private:
  Value slotBuffer(rt::Call call, Value numElements, int64_t &slot,
                   bool edgeChunks = false);

  LoweringBuilder &lb;
  SlotPlanner &slots;
  BufferPlacement &placement;
  DenseMap<Value, Tensor> values;
  DenseMap<Operation *, int64_t> opIndex;
  int64_t numIndexed = 0; // ops in opIndex
  DenseMap<Value, int64_t> lastUse;
  DenseMap<Value, int64_t> slotOf;  // buffer -> its id in the planner
  DenseMap<Value, int64_t> holders; // buffer -> live gnn values mapped to it
  DenseMap<Value, SmallVector<Value>> boundTo;    // buffer -> gnn values, ever
  std::map<int64_t, SmallVector<Value>> expiring; // index -> buffers to release
  int64_t expiredUpTo = -1;
  bool betweenStepsOnly = false;
  SmallVector<int64_t> heldBack; // slots released during the step

  void expireUpTo(int64_t upTo);
  void releaseNowOrAtStepEnd(int64_t slot) {
    if (betweenStepsOnly)
      heldBack.push_back(slot);
    else
      slots.release(slot);
  }
};

} // namespace mlir::gnn

#endif // GNN_LIB_CONVERSION_GNNTORUNTIME_BUFFERS_H
