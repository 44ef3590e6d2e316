//===- SubChunkSchedule.cpp - NeuGraph's sub-chunk ordering ---------------===//

#include "gnn/Analysis/SubChunkSchedule.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <utility>

using namespace mlir::gnn;

double mlir::gnn::simulateMakespan(llvm::ArrayRef<SubChunkTimes> times,
                                   llvm::ArrayRef<unsigned> order) {
  double loaded = 0, computed = 0;
  for (unsigned i : order) {
    loaded += times[i].transfer;
    computed = std::max(loaded, computed) + times[i].compute;
  }
  return computed;
}

llvm::SmallVector<unsigned>
mlir::gnn::johnsonOrder(llvm::ArrayRef<SubChunkTimes> times) {
  llvm::SmallVector<unsigned> first, last;
  for (unsigned i = 0, e = times.size(); i < e; ++i)
    (times[i].transfer <= times[i].compute ? first : last).push_back(i);
  llvm::stable_sort(first, [&](unsigned a, unsigned b) {
    return times[a].transfer < times[b].transfer;
  });
  llvm::stable_sort(last, [&](unsigned a, unsigned b) {
    return times[a].compute > times[b].compute;
  });
  llvm::append_range(first, last);
  return first;
}

SwapResult mlir::gnn::swapSchedule(llvm::ArrayRef<SubChunkTimes> times,
                                   llvm::ArrayRef<unsigned> initial,
                                   unsigned maxIterations) {
  SwapResult r;
  r.order.assign(initial.begin(), initial.end());
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
