//===- SubChunkSchedule.h - NeuGraph's sub-chunk ordering -------*- C++ -*-===//
//
// NeuGraph pipelines a column of edge sub-chunks: while one is computed, the
// next ones are loaded (DIGEST-neugraph-roc.md §2.4). The order matters when
// sub-chunks are heterogeneous; NeuGraph improves a random order by swapping
// pairs of sub-chunks, one transfer-heavy and one compute-heavy, as long as
// the simulated time drops. The simulation is the two-stage flow shop
//   L_i = L_{i-1} + t_i,  C_i = max(L_i, C_{i-1}) + c_i,  makespan = C_n
// (transfers in order on one link, computes in order on one device), for
// which Johnson's rule is optimal: the oracle the swap heuristic is checked
// against. The runtime orders a tile's sub-chunks with it from their
// profiled times (TilePipeline.h).
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_SUBCHUNKSCHEDULE_H
#define GNNRT_SUBCHUNKSCHEDULE_H

#include <vector>

namespace gnnrt {

/// One sub-chunk's profiled times: transferring it in, computing on it.
struct SubChunkTimes {
  double transfer = 0, compute = 0;
};

/// The flow shop's makespan of running `times` in `order`.
double simulateMakespan(const std::vector<SubChunkTimes> &times,
                        const std::vector<unsigned> &order);

/// Johnson's rule: the sub-chunks whose transfer is at most their compute
/// first, by increasing transfer; then the others by decreasing compute.
/// Optimal for the two-stage flow shop.
std::vector<unsigned> johnsonOrder(const std::vector<SubChunkTimes> &times);

/// What the swap heuristic did.
struct SwapResult {
  std::vector<unsigned> order;
  double initialMakespan = 0, makespan = 0;
  unsigned iterations = 0; // swaps made
  bool converged = false;  // no improving swap left (else the cap stopped it)
};

/// NeuGraph's swap heuristic: from `initial` (a random order in NeuGraph),
/// repeatedly swap the pair of sub-chunks, one whose transfer is shorter
/// than its compute and one the opposite, that lowers the simulated
/// makespan most; stop when no such swap improves it or after
/// `maxIterations` swaps. The makespan never increases.
SwapResult swapSchedule(const std::vector<SubChunkTimes> &times,
                        const std::vector<unsigned> &initial,
                        unsigned maxIterations = 1000);

} // namespace gnnrt

#endif // GNNRT_SUBCHUNKSCHEDULE_H
