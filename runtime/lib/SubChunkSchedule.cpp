//===- SubChunkSchedule.cpp - NeuGraph's sub-chunk ordering ---------------===//

#include "SubChunkSchedule.h"

#include <algorithm>
#include <utility>

namespace gnnrt {

double simulateMakespan(const std::vector<SubChunkTimes> &times,
                        const std::vector<unsigned> &order) {
  double loaded = 0, computed = 0;
  for (unsigned i : order) {
    loaded += times[i].transfer;
    computed = std::max(loaded, computed) + times[i].compute;
  }
  return computed;
}

std::vector<unsigned> johnsonOrder(const std::vector<SubChunkTimes> &times) {
  std::vector<unsigned> first, last;
  for (unsigned i = 0, e = times.size(); i < e; ++i)
    (times[i].transfer <= times[i].compute ? first : last).push_back(i);
  std::stable_sort(first.begin(), first.end(), [&](unsigned a, unsigned b) {
    return times[a].transfer < times[b].transfer;
  });
  std::stable_sort(last.begin(), last.end(), [&](unsigned a, unsigned b) {
    return times[a].compute > times[b].compute;
  });
  first.insert(first.end(), last.begin(), last.end());
  return first;
}

SwapResult swapSchedule(const std::vector<SubChunkTimes> &times,
                        const std::vector<unsigned> &initial,
                        unsigned maxIterations) {
  SwapResult r;
  r.order = initial;
  r.initialMakespan = r.makespan = simulateMakespan(times, r.order);
  auto transferHeavy = [&](unsigned i) {
    return times[i].transfer > times[i].compute;
  };
  while (r.iterations < maxIterations) {
    // The heterogeneous pair (one transfer-heavy, one compute-heavy) whose
    // swap lowers the makespan most.
    double best = r.makespan;
    std::pair<size_t, size_t> bestPair{0, 0};
    for (size_t a = 0; a < r.order.size(); ++a)
      for (size_t b = a + 1; b < r.order.size(); ++b) {
        if (transferHeavy(r.order[a]) == transferHeavy(r.order[b]))
          continue;
        std::swap(r.order[a], r.order[b]);
        const double m = simulateMakespan(times, r.order);
        std::swap(r.order[a], r.order[b]);
        if (m < best) {
          best = m;
          bestPair = {a, b};
        }
      }
    if (!(best < r.makespan)) {
      r.converged = true;
      break;
    }
    std::swap(r.order[bestPair.first], r.order[bestPair.second]);
    r.makespan = best;
    ++r.iterations;
  }
  return r;
}

} // namespace gnnrt
