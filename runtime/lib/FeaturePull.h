//===- FeaturePull.h - feature rows pulled from their owners ----*- C++ -*-===//
//
// Feature-pulling data parallel (DistDGL's mini-batch training on several
// machines; docs/MiniBatch.md): the features are split by rows over the
// processes, and each batch's input rows that a process does not hold are
// pulled from the processes that do. The features P³ is compared with: it
// moves layer 1's partial activations instead (DIGEST-mggcn-granndis-p3.md
// §3.7).
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_FEATUREPULL_H
#define GNNRT_FEATUREPULL_H

#include "Communicator.h"

#include <cstdint>
#include <vector>

namespace gnnrt {

/// The rows of a matrix of `width` floats are cut into G = comm.size() /
/// `copies` ranges, [starts[p], starts[p + 1]) (`starts` has G + 1 entries,
/// non-decreasing, from 0), each held by `copies` processes (P³'s c-way
/// feature replication, DIGEST-mggcn-granndis-p3.md §3.5): process r holds
/// range r mod G (`own`, its first row first), and asks for a row of range
/// p the process p + G floor(r / G), the one holding it among the G
/// processes of r's copy (with `copies` 1: its only holder). `copies` must
/// divide comm.size().
class FeaturePuller {
public:
  FeaturePuller(Communicator &comm, std::vector<int64_t> starts,
                const float *own, int64_t width, int copies = 1);

  /// The range of row `v`.
  int range(int64_t v) const;
  /// The process this one asks for row `v` (itself for its own range).
  int owner(int64_t v) const;
  /// The ranges' first rows and the end (G + 1 entries), and the copies.
  const std::vector<int64_t> &rangeStarts() const { return starts; }
  int copies() const { return comm.size() / groups; }

  /// Collective (every process calls it, each with rows of its own): row
  /// vertices[i] to out + i * width, for i < n (ids in [0, starts.back())).
  /// The own rows are copied; the others come from their owners in three
  /// all-to-alls: how many rows each process asks of each (an int64 per
  /// pair), the ids asked (an int64 per row) and the rows (width floats per
  /// row). The ids a process is asked are checked against its range.
  /// Returns the rows this process pulled from the others.
  int64_t pull(const int64_t *vertices, int64_t n, float *out);

  /// A pull whose rows are still on their way: start() has copied the own
  /// rows, exchanged the counts and ids and sent the rows asked of this
  /// process without waiting (a non-blocking all-to-all); finish() waits for
  /// the rows and puts them in place. In between the caller trains (DistDGL
  /// prefetches a batch's features so) and calls other collectives in the
  /// same order on every process. start() writes the own rows into `out`,
  /// finish() the pulled ones. Move-only: the request's buffers are its own.
  struct Pending {
    Pending() = default;
    Pending(Pending &&) = default;
    Pending &operator=(Pending &&) = default;
    Pending(const Pending &) = delete;
    Pending &operator=(const Pending &) = delete;

    float *out = nullptr;
    int64_t pulled = 0;
    std::vector<int64_t> slots; // out's row of each received row
    std::vector<float> sent, received;
    Request request;
    bool started = false;
  };
  Pending start(const int64_t *vertices, int64_t n, float *out);
  /// Returns the rows pulled from the others (pull()'s result).
  int64_t finish(Pending &pending);

  /// What pull() sent to the other processes so far: the rows this process
  /// gave them (features) and the ids and counts it asked with (requests),
  /// in bytes, as the communicator counts them.
  int64_t featureBytesSent() const { return rowsSent * width * 4; }
  int64_t requestBytesSent() const { return requestsSent * 8; }

private:
  Communicator &comm;
  std::vector<int64_t> starts;
  const float *own;
  int64_t width;
  int groups, ownRange, copyBase; // G, r mod G, G floor(r / G)
  int64_t rowsSent = 0, requestsSent = 0;
};

} // namespace gnnrt

#endif // GNNRT_FEATUREPULL_H
