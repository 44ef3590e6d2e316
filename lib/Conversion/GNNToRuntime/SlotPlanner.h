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

/// Whether `key` is V times factors of F and C only: a row buffer, whose
/// rows a step run in row chunks reads and writes by chunk.
bool isRowSize(const SizeKey &key);

class SlotPlanner {
public:
  /// A new buffer of `size` (of i32 elements with `i32`; per-edge values
  /// taken as chunks by destination with `edgeChunks`: an edge cache in row
  /// chunks) from now until release().
  int64_t take(const SizeKey &size, bool i32 = false, bool edgeChunks = false);
  /// With row chunks, an f32 row buffer (isRowSize) never shares a slot with
  /// a buffer of another kind, nor an edge-chunked one: the placement moves
  /// a slot by chunks only when every buffer it holds is chunked the same
  /// way, so one parameter-sized buffer in the slot would make it whole in
  /// every step.
  void setSeparateRowBuffers(bool enable) { separateRows = enable; }
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
    int kind; // 0 other, 1 an f32 row buffer, 2 edge-chunked
    int64_t taken, released = std::numeric_limits<int64_t>::max();
    SmallVector<Operation *> slotConstants;
  };
  std::vector<BufferUse> buffers;
  SmallVector<int64_t> slotNumbers; // by buffer, after plan()
  int64_t clock = 0;
  bool separateRows = false;
};

} // namespace mlir::gnn

#endif // GNN_LIB_CONVERSION_GNNTORUNTIME_SLOTPLANNER_H
