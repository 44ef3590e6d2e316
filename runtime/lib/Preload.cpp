//===- Preload.cpp - a rank's part of the graph for shared preloading -----===//

#include "Preload.h"

#include <algorithm>

using namespace gnnrt;

VertexRange gnnrt::equalVertexRange(int64_t numVertices, int rank, int size) {
  return {numVertices * rank / size, numVertices * (rank + 1) / size};
}

void gnnrt::labelledCounts(const Dataset &ds, int64_t counts[3]) {
  for (int s = 0; s < 3; ++s) {
    counts[s] = 0;
    for (int64_t v = 0; v < ds.numVertices; ++v)
      counts[s] += ds.masks[s][v] && ds.labels[v] >= 0;
  }
}

void gnnrt::buildPreloadPart(const Dataset &full, VertexRange inner,
                             int64_t hops, Dataset &local, PreloadPart &part) {
  const int64_t V = full.numVertices, E = full.numEdges;
  const std::vector<int64_t> &indptr = full.indptr;
  const std::vector<int32_t> &indices = full.indices;
  // The out-edges (CSR) for the closure and the out-degrees.
  std::vector<int64_t> outOffsets(V + 1, 0);
  for (int64_t e = 0; e < E; ++e)
    ++outOffsets[indices[e] + 1];
  for (int64_t v = 0; v < V; ++v)
    outOffsets[v + 1] += outOffsets[v];
  std::vector<int32_t> outDst(E);
  {
    std::vector<int64_t> fill(outOffsets.begin(), outOffsets.end() - 1);
    for (int64_t v = 0; v < V; ++v)
      for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e)
        outDst[fill[indices[e]]++] = static_cast<int32_t>(v);
  }

  // Breadth-first from the inner vertices, `hops` levels along both
  // directions.
  std::vector<uint8_t> held(V, 0);
  std::vector<int64_t> frontier, next;
  for (int64_t v = inner.begin; v < inner.end; ++v) {
    held[v] = 1;
    frontier.push_back(v);
  }
  for (int64_t level = 0; level < hops && !frontier.empty(); ++level) {
    next.clear();
    auto reach = [&](int64_t u) {
      if (!held[u]) {
        held[u] = 1;
        next.push_back(u);
      }
    };
    for (int64_t v : frontier) {
      for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e)
        reach(indices[e]);
      for (int64_t p = outOffsets[v]; p < outOffsets[v + 1]; ++p)
        reach(outDst[p]);
    }
    frontier.swap(next);
  }

  part.inner = inner;
  part.hops = hops;
  part.globalIds.clear();
  std::vector<int64_t> localId(V, -1);
  for (int64_t v = 0; v < V; ++v)
    if (held[v]) {
      localId[v] = static_cast<int64_t>(part.globalIds.size());
      part.globalIds.push_back(v);
    }
  const int64_t n = static_cast<int64_t>(part.globalIds.size());
  const int64_t F = full.numFeatures;

  local = Dataset();
  local.name = full.name;
  local.source = full.source;
  local.numVertices = n;
  local.numFeatures = F;
  local.numClasses = full.numClasses;
  local.directed = full.directed;
  local.selfLoops = full.selfLoops;
  local.indptr.assign(n + 1, 0);
  local.features.resize(static_cast<size_t>(n * F));
  local.labels.resize(n);
  for (int s = 0; s < 3; ++s)
    local.masks[s].assign(n, 0);
  part.inDegree.resize(n);
  part.outDegree.resize(n);
  std::vector<int64_t> keptEdges;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t g = part.globalIds[i];
    for (int64_t e = indptr[g]; e < indptr[g + 1]; ++e)
      if (localId[indices[e]] >= 0) {
        local.indices.push_back(static_cast<int32_t>(localId[indices[e]]));
        keptEdges.push_back(e);
      }
    local.indptr[i + 1] = static_cast<int64_t>(local.indices.size());
    std::copy(full.features.begin() + g * F,
              full.features.begin() + (g + 1) * F,
              local.features.begin() + i * F);
    local.labels[i] = full.labels[g];
    const bool own = g >= inner.begin && g < inner.end;
    for (int s = 0; s < 3; ++s)
      local.masks[s][i] = own && full.masks[s][g];
    part.inDegree[i] = static_cast<float>(indptr[g + 1] - indptr[g]);
    part.outDegree[i] = static_cast<float>(outOffsets[g + 1] - outOffsets[g]);
  }
  local.numEdges = static_cast<int64_t>(keptEdges.size());
  for (const auto &[name, data] : full.edgeData) {
    EdgeData &d = local.edgeData[name];
    d.isInt = data.isInt;
    d.width = data.width;
    for (int64_t e : keptEdges) {
      if (data.isInt)
        d.i32.push_back(data.i32[e]);
      else
        d.f32.insert(d.f32.end(), data.f32.begin() + e * data.width,
                     data.f32.begin() + (e + 1) * data.width);
    }
  }
}
