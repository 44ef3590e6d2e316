//===- ReadAhead.h - hints for the reads a run repeats ----------*- C++ -*-===//
//
// Out of core, a training step reads the same ranges of the spill file and
// the dataset in the same order every epoch (the placement's fetches, the
// features' and the graph's chunks). Each read of 64 KiB or more is learnt
// as the successor of the read before it on the same thread; once a read
// completes, the reads that followed it last time are hinted to the kernel
// (posix_fadvise POSIX_FADV_WILLNEED), which reads them into the page cache
// while the step computes. A hint moves no data of ours and costs no memory
// of the budget: the wrong guess wastes a disk read, never a result. What
// matters only where the reads wait on a device (files larger than memory,
// or --uncached-reads); from the page cache a hint is a cheap no-op.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_READAHEAD_H
#define GNNRT_READAHEAD_H

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace gnnrt {

class ReadAhead {
public:
  /// Reads smaller than this are neither learnt nor hinted (the kernel's
  /// own read-ahead serves sequential small reads; the selective filter's
  /// scattered runs would fill the table).
  static constexpr int64_t kMinBytes = 64 << 10;
  /// At most this many bytes are hinted after one read.
  static constexpr int64_t kMostBytes = int64_t(64) << 20;

  /// The process's (readAt's).
  static ReadAhead &process();

  /// How many learnt reads follow each read with a hint (0: none).
  void setDepth(int reads);
  int depth() const { return depth_; }

  /// The read of [offset, offset + bytes) of `fd` has completed on this
  /// thread: learns it as the successor of this thread's read before, and
  /// hints the reads that followed it last time (up to depth() reads and
  /// kMostBytes), skipping itself and repeats.
  void completed(int fd, int64_t offset, int64_t bytes);

  /// The hints given and their bytes, the reads learnt (distinct ranges).
  struct Counters {
    int64_t hints = 0, hintedBytes = 0, learnt = 0;
  };
  Counters counters() const;

  /// Forgets every read learnt (the table and the threads' last reads).
  void reset();

private:
  struct Key {
    int fd = -1;
    int64_t offset = 0, bytes = 0;
    bool operator==(const Key &o) const {
      return fd == o.fd && offset == o.offset && bytes == o.bytes;
    }
  };
  struct Hash {
    size_t operator()(const Key &k) const;
  };
  mutable std::mutex mutex;
  std::unordered_map<Key, Key, Hash> next;
  int depth_ = 2;
  uint64_t generation = 0; // reset() makes the threads' last reads stale
  Counters count;
};

} // namespace gnnrt

#endif // GNNRT_READAHEAD_H
