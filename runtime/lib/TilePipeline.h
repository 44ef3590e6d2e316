//===- TilePipeline.h - NeuGraph's sub-chunk pipeline -----------*- C++ -*-===//
//
// Issue 18 (NeuGraph §3.2, the digest's §2.4): a tile of an aggregation whose
// input chunk is in the slow tier runs as k sub-chunks, each a range of the
// input chunk's rows and the tile's edges from it, so that a prefetch thread
// reads sub-chunk j + 1 while the program computes on sub-chunk j. The order
// of a tile's sub-chunks is NeuGraph's swap heuristic (SubChunkSchedule.h)
// over their times profiled in the tile's first visits, from a random
// order; the sub-chunk with the input's first row stays first and the one
// with its last row last (the aggregation stores the first and divides a
// mean in the last: gnnrtSpmmRows). Total bytes read are the same as
// without sub-chunks (the digest's behaviour 16).
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_TILEPIPELINE_H
#define GNNRT_TILEPIPELINE_H

#include "SubChunkSchedule.h"

#include <array>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gnnrt {

class TilePipeline {
public:
  TilePipeline() = default;
  TilePipeline(const TilePipeline &) = delete;
  TilePipeline &operator=(const TilePipeline &) = delete;
  ~TilePipeline();

  /// Sub-chunks per tile (the executable's --sub-chunks; 1: none).
  int64_t subChunks = 4;
  /// Visits of a tile whose times are profiled before its order is fixed.
  static constexpr int kProfiledVisits = 2;

  /// A tile: (slot, input chunk, side, first output row, site: 0 for an
  /// aggregation, the kernel for a compiled kernel's tile).
  using Key = std::array<int64_t, 5>;

  /// The order of tile `key`'s `n` sub-chunks: in order while it is
  /// profiled, then the swap heuristic's from a random order (seeded by
  /// the key), sub-chunk 0 first where `pinFirst` and n - 1 last where
  /// `pinLast`.
  std::vector<unsigned> orderFor(const Key &key, unsigned n, bool pinFirst,
                                 bool pinLast);

  /// How tile `key` runs: pipelined while it is profiled (its first
  /// kProfiledVisits visits), then once unpipelined for a baseline (one
  /// read, then one compute: recordBaseline), then pipelined where its
  /// profiled visits took below `gain` times the baseline, else unpipelined
  /// (where the copies are work for the cores that compute, as from the
  /// page cache on a machine whose cores all compute, or too short for the
  /// hand-offs between the threads, they do not overlap).
  enum class Plan { Pipelined, Baseline, Unpipelined };
  Plan planFor(const Key &key) const;
  void recordBaseline(const Key &key, double seconds);
  double gain = 0.95;

  /// Runs read(j) for each j of `order` on the prefetch thread, in order,
  /// and compute(j) here as soon as read(j) is done; `times` gets each
  /// sub-chunk's read and compute seconds, and the key's profile too. False
  /// with the first failed read's message (the reads after it are skipped,
  /// and no compute runs after it).
  bool run(const Key &key, const std::vector<unsigned> &order,
           const std::function<bool(unsigned, std::string &)> &read,
           const std::function<void(unsigned)> &compute, std::string &error);

  /// Pipelined tiles; their reads' and computes' seconds summed, and their
  /// wall time; the tiles whose fixed order differs from the index order.
  int64_t tiles = 0, reordered = 0;
  /// Tiles whose pipeline was turned off after their baseline, and the
  /// unpipelined visits (baselines included).
  int64_t offTiles = 0, unpipelined = 0;
  double readSeconds = 0, computeSeconds = 0, wallSeconds = 0;
  /// The "pipeline" member of the --json summary's "memory" object.
  std::string json() const;

private:
  struct Profile {
    std::vector<SubChunkTimes> sum;
    int visits = 0;
    double wall = 0;                    // the profiled visits' wall time
    bool measured = false, off = false; // the baseline and the decision
    std::vector<unsigned> order;        // fixed after kProfiledVisits
  };
  std::map<Key, Profile> profiles;

  // The prefetch thread and its jobs (one tile's reads at a time).
  void loop();
  std::thread worker;
  std::mutex mutex;
  std::condition_variable wake, done;
  bool stop = false, failed = false;
  const std::function<bool(unsigned, std::string &)> *reader = nullptr;
  std::vector<unsigned> jobs;
  size_t next = 0, finished = 0;
  std::vector<double> jobSeconds;
  std::vector<bool> jobOk;
  std::string jobError;
};

} // namespace gnnrt

#endif // GNNRT_TILEPIPELINE_H
