//===- RandomGraph.h - random datasets for the runtime's tests --*- C++ -*-===//
//
// A dataset of V vertices and E edges whose sources are drawn with a skew (a
// few hubs; the destinations with `skewDestinations`), vertex 0 with no
// in-edges and vertex 1 with no out-edges (where the sources are skewed),
// sources ascending within each destination (the format's order); one feature
// and one class, every vertex labelled 0 and in every split. Tests set what
// else they read.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_TEST_UNIT_RUNTIME_RANDOMGRAPH_H
#define GNN_TEST_UNIT_RUNTIME_RANDOMGRAPH_H

#include "Dataset.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace gnnrt {

inline Dataset randomDataset(int64_t V, int64_t E, std::mt19937 &rng,
                             bool skewDestinations = false) {
  Dataset ds;
  ds.numVertices = V;
  ds.numFeatures = 1;
  ds.numClasses = 1;
  std::uniform_int_distribution<int64_t> any(1, V - 1);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::vector<int32_t>> in(V);
  for (int64_t k = 0; k < E; ++k) {
    int64_t src = static_cast<int64_t>(std::pow(u(rng), 3.0) * V);
    if (src == 1)
      src = 2 % V;
    const int64_t other = any(rng);
    if (skewDestinations)
      in[src].push_back(static_cast<int32_t>(other));
    else
      in[other].push_back(static_cast<int32_t>(src));
  }
  ds.indptr.assign(V + 1, 0);
  for (int64_t v = 0; v < V; ++v) {
    std::sort(in[v].begin(), in[v].end());
    ds.indptr[v + 1] = ds.indptr[v] + static_cast<int64_t>(in[v].size());
    ds.indices.insert(ds.indices.end(), in[v].begin(), in[v].end());
  }
  ds.numEdges = ds.indptr[V];
  ds.features.assign(V, 0.0f);
  ds.labels.assign(V, 0);
  for (auto &m : ds.masks)
    m.assign(V, 1);
  return ds;
}

} // namespace gnnrt

#endif // GNN_TEST_UNIT_RUNTIME_RANDOMGRAPH_H
