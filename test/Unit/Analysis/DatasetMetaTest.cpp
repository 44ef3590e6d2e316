//===- DatasetMetaTest.cpp - counts the passes read from a dataset --------===//
//
// The rows each tile of an aggregation in row chunks reads of its input
// chunk (countTileInputRows), against sets built here from the edge list on
// random graphs, at the runtime's chunk bounds; and the readers' refusals.
//
//===----------------------------------------------------------------------===//

#include "gnn/Support/DatasetMeta.h"

#include "gnnrt/GNNRuntime.h"

#include "../Runtime/TempDir.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace mlir::gnn;
using gnnrt::test::TempDir;

namespace {

/// Writes a one-dimensional .npy of `descr` (version 1).
template <typename T>
void writeNpy(const std::string &path, const char *descr,
              const std::vector<T> &values) {
  std::string header = "{'descr': '" + std::string(descr) +
                       "', 'fortran_order': False, 'shape': (" +
                       std::to_string(values.size()) + ",), }";
  while ((10 + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t length = header.size();
  out.write(reinterpret_cast<const char *>(&length), 2);
  out << header;
  out.write(reinterpret_cast<const char *>(values.data()),
            values.size() * sizeof(T));
}

/// A random graph in CSC (sources ascending within a destination), written
/// as a dataset's indptr.npy and indices.npy with a meta.json.
struct Graph {
  int64_t V;
  std::vector<std::pair<int32_t, int32_t>> edges; // (source, destination)
  std::vector<int64_t> indptr;
  std::vector<int32_t> indices;
  Graph(std::mt19937 &rng, int64_t V, int64_t draws) : V(V) {
    std::set<std::pair<int32_t, int32_t>> byDestination;
    std::uniform_int_distribution<int32_t> pick(0, V - 1);
    for (int64_t k = 0; k < draws; ++k) {
      // Skewed: half the sources from the first eighth of the vertices.
      int32_t u = pick(rng), v = pick(rng);
      if (k % 2)
        u = u / 8;
      byDestination.insert({v, u});
    }
    indptr.assign(V + 1, 0);
    for (auto [v, u] : byDestination) {
      edges.push_back({u, v});
      indices.push_back(u);
      ++indptr[v + 1];
    }
    for (int64_t v = 0; v < V; ++v)
      indptr[v + 1] += indptr[v];
  }
  std::string write(const std::string &dir) const {
    writeNpy(dir + "/indptr.npy", "<i8", indptr);
    writeNpy(dir + "/indices.npy", "<i4", indices);
    std::ofstream(dir + "/meta.json")
        << "{\"num_vertices\": " << V << ", \"num_edges\": " << edges.size()
        << ", \"num_features\": 4, \"num_classes\": 2}";
    return dir + "/meta.json";
  }
};

TEST(DatasetMeta, TileInputRowsAreTheDistinctOtherEnds) {
  std::mt19937 rng(12);
  int checked = 0;
  for (int trial = 0; trial < 12; ++trial) {
    // Enough vertices for several GNNRT_PARALLEL_CHUNK-aligned chunks.
    const int64_t V = 64 * (8 + trial * 5) + trial;
    Graph graph(rng, V, V * (1 + trial % 4));
    TempDir dir;
    ASSERT_FALSE(dir.path.empty());
    const std::string meta = graph.write(dir.path);
    std::string error;
    auto indptr = readIndptr(meta, error);
    ASSERT_TRUE(succeeded(indptr)) << error;
    EXPECT_EQ(*indptr, graph.indptr);
    for (int64_t K : {1, 2, 3, 4, 7}) {
      auto rows = countTileInputRows(meta, *indptr, K, error);
      ASSERT_TRUE(succeeded(rows)) << error;
      ASSERT_EQ(rows->chunks, K);
      auto chunkOf = [&](int64_t v) {
        int64_t c = 0;
        while (v >= gnnrtChunkRowBound(V, K, c + 1))
          ++c;
        return c;
      };
      // [side][out * K + in]: the set of input rows.
      std::vector<std::set<int32_t>> toDst(K * K), toSrc(K * K);
      for (auto [u, v] : graph.edges) {
        toDst[chunkOf(v) * K + chunkOf(u)].insert(u);
        toSrc[chunkOf(u) * K + chunkOf(v)].insert(v);
      }
      for (int64_t out = 0; out < K; ++out)
        for (int64_t in = 0; in < K; ++in) {
          EXPECT_EQ(rows->get(1, out, in),
                    static_cast<int64_t>(toDst[out * K + in].size()))
              << "V " << V << " K " << K << " tile " << out << "," << in;
          EXPECT_EQ(rows->get(0, out, in),
                    static_cast<int64_t>(toSrc[out * K + in].size()))
              << "V " << V << " K " << K << " tile " << out << "," << in;
          checked += !toDst[out * K + in].empty();
        }
    }
  }
  EXPECT_GT(checked, 500);
}

TEST(DatasetMeta, TileInputRowsRefuseBadIndices) {
  std::mt19937 rng(3);
  Graph graph(rng, 256, 600);
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  std::string error;
  {
    Graph bad = graph;
    bad.indices[5] = 256;
    const std::string meta = bad.write(dir.path);
    EXPECT_TRUE(failed(countTileInputRows(meta, bad.indptr, 2, error)));
    EXPECT_NE(error.find("edge 5 has source 256, outside [0, 256)"),
              std::string::npos)
        << error;
  }
  {
    Graph bad = graph;
    bad.indices.pop_back();
    const std::string meta = bad.write(dir.path);
    EXPECT_TRUE(failed(countTileInputRows(meta, bad.indptr, 2, error)));
    EXPECT_NE(error.find("edges where indptr.npy ends at"), std::string::npos)
        << error;
  }
  {
    const std::string meta = graph.write(dir.path);
    writeNpy(dir.path + "/indices.npy", "<i8",
             std::vector<int64_t>(graph.indices.begin(), graph.indices.end()));
    EXPECT_TRUE(failed(countTileInputRows(meta, graph.indptr, 2, error)));
    EXPECT_NE(error.find("not a C-order array of '<i4'"), std::string::npos)
        << error;
    std::remove((dir.path + "/indices.npy").c_str());
    EXPECT_TRUE(failed(countTileInputRows(meta, graph.indptr, 2, error)));
    EXPECT_NE(error.find("indices.npy: "), std::string::npos) << error;
  }
}

} // namespace
