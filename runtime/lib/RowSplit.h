//===- RowSplit.h - how row partitioning splits the vertices ----*- C++ -*-===//
//
// Row partitioning (docs/Distributed.md) gives each of N processes a
// contiguous range of the vertices, [p(r), p(r+1)), with all their in-edges.
// The split points come from equal vertex counts (MG-GCN), equal in-edge
// counts, or ROC's learned cost model (DIGEST-neugraph-roc.md §3.3): a
// linear model of a range's step time over per-vertex features, fitted
// online from the processes' measured times, balanced by binary search over
// the features' prefix sums.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_ROWSPLIT_H
#define GNNRT_ROWSPLIT_H

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace gnnrt {

/// p(0..N): p(r) = floor(r V / N).
std::vector<int64_t> equalVertexSplit(int64_t numVertices, int parts);

/// p(0..N) from a CSC's offsets: p(r) is the first vertex whose in-edges
/// start at or after r E / N, kept strictly increasing so that every part
/// has a vertex (needs V >= N).
std::vector<int64_t> equalEdgeSplit(const std::vector<int64_t> &indptr,
                                    int parts);

/// ROC's features of one vertex v (Table 2 of the paper, the digest's exact
/// definitions): x1 = 1, x2 = |N(v)|, x3 = |C(v)| (the runs of consecutive
/// ids among its in-neighbours, ascending), x4 = sum over runs of
/// ceil(|c| / WS), x5 = sum over runs of ceil(|c| d_in / WS). On the CPU
/// WS is a cache line's floats (16) where the paper's GPU has a warp (32).
constexpr int kRocFeatures = 5;
using RocFeatures = std::array<double, kRocFeatures>;
RocFeatures rocFeatures(const int32_t *neighbours, int64_t count, int64_t width,
                        int64_t lineFloats);

/// The online cost model over the vertices 0..V-1 in order.
class RocPartitioner {
public:
  /// `perVertex`: each vertex's features.
  explicit RocPartitioner(const std::vector<RocFeatures> &perVertex);
  int64_t numVertices() const {
    return static_cast<int64_t>(prefix.size()) - 1;
  }
  /// x(G) of the range [lo, hi): the features' sums (O(1)).
  RocFeatures features(int64_t lo, int64_t hi) const;
  /// One measured step time of the range [lo, hi).
  void observe(int64_t lo, int64_t hi, double seconds);
  /// Refits w to every observation so far (least squares with a small
  /// ridge, w >= 0: the most negative weight's feature is dropped and the
  /// rest refitted). False until there are observations.
  bool fit();
  const RocFeatures &weights() const { return w; }
  /// The model's time of [lo, hi).
  double predict(int64_t lo, int64_t hi) const;
  /// The split into `parts` ranges of equal predicted time (each at least
  /// one vertex): p(r) by binary search over the predicted prefix.
  std::vector<int64_t> split(int parts) const;
  /// The largest predicted time of the ranges of `starts`.
  double predictedMax(const std::vector<int64_t> &starts) const;

private:
  std::vector<RocFeatures> prefix; // prefix[v]: the sums over [0, v)
  std::vector<std::pair<RocFeatures, double>> points;
  RocFeatures w{};
};

} // namespace gnnrt

#endif // GNNRT_ROWSPLIT_H
