//===- SlotPlanner.h - runtime slots for a function's buffers ---*- C++ -*-===//
//
// Every buffer a lowered function takes is a `gnnrtBuffer` slot; the slot
// number is a constant patched once the function's buffers and their live
// ranges are all known (plan()). Depends on nothing but the IR it patches.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_CONVERSION_GNNTORUNTIME_SLOTPLANNER_H
#define GNN_LIB_CONVERSION_GNNTORUNTIME_SLOTPLANNER_H

#include "LoweringBuilder.h"

#include <limits>
#include <string>
#include <vector>

namespace mlir::gnn {

/// A buffer size as a constant factor times dynamic factors (numV, numE,
/// numF, numC or other values, by name), so that sizes can be compared.
struct SizeKey {
  int64_t factor = 1;
  std::string dynamic;
  bool operator==(const SizeKey &o) const {
    return factor == o.factor && dynamic == o.dynamic;
  }
};

/// The size key of `numElements`, a product of index values.
SizeKey getSizeKey(Value numElements, const GraphSizes &sizes);

/// The elements of `key` at the sizes `estimates` ("V", "E", "F", "C"); a
/// factor with no estimate counts as 1000.
double estimateElements(const SizeKey &key,
                        const DenseMap<StringRef, int64_t> &estimates);

class SlotPlanner {
public:
  /// A new buffer of `size` from now until release().
  int64_t take(const SizeKey &size);
  /// `constant` (an i64 arith.constant) becomes buffer `id`'s slot number.
  void addSlotConstant(int64_t id, Operation *constant) {
    buffers[id].slotConstants.push_back(constant);
  }
  /// Buffer `id` is not read after now; later buffers may share its slot.
  void release(int64_t id);
  /// Gives every buffer a runtime slot, greedy by size (largest first, into
  /// the slot that holds no buffer live at the same time and fits it most
  /// tightly, else the one that grows least, else a new slot); slots are
  /// numbered from 0 by decreasing size. Sizes are compared at `estimates`
  /// ("V", "E", "F", "C").
  void plan(const DenseMap<StringRef, int64_t> &estimates);

  /// After plan(): each buffer's slot and size, for the model description
  /// the driver checks memory with.
  SmallVector<std::pair<int64_t, SizeKey>> getPlannedSizes() const;

private:
  /// Every buffer the function takes, with the times (a counter of takes and
  /// releases) it is live: [taken, released]. Two buffers may share a slot
  /// when one is released before the other is taken.
  struct BufferUse {
    SizeKey size;
    int64_t taken, released = std::numeric_limits<int64_t>::max();
    SmallVector<Operation *> slotConstants;
  };
  std::vector<BufferUse> buffers;
  SmallVector<int64_t> slotNumbers; // by buffer, after plan()
  int64_t clock = 0;
};

} // namespace mlir::gnn

#endif // GNN_LIB_CONVERSION_GNNTORUNTIME_SLOTPLANNER_H
