//===- PreloadTest.cpp - a rank's part of the graph (Preload.h) ----------===//
//
// buildPreloadPart against a closure computed independently (distances by
// breadth-first search over an adjacency matrix), on random graphs, with
// and without sampling; loadPreloadPart against it; the equal vertex split;
// the model description's hops record; readStoredRows (mini-batches with
// the features on storage) against the loaded features.
//
//===----------------------------------------------------------------------===//

#include "Preload.h"
#include "Context.h"
#include "Npy.h"
#include "TempDir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>

#include <unistd.h>

using namespace gnnrt;

namespace {

/// A random dataset in the format's order: V vertices, about E edges
/// (duplicates dropped), features [V, 3], labels, masks, f32 [E, 2] and i32
/// edge data.
Dataset randomDataset(std::mt19937_64 &rng, int64_t V, int64_t E) {
  std::vector<std::vector<int32_t>> in(V);
  for (int64_t i = 0; i < E; ++i)
    in[rng() % V].push_back(static_cast<int32_t>(rng() % V));
  Dataset ds;
  ds.name = "random";
  ds.numVertices = V;
  ds.numFeatures = 3;
  ds.numClasses = 4;
  ds.indptr.push_back(0);
  for (auto &sources : in) {
    std::sort(sources.begin(), sources.end());
    sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
    ds.indices.insert(ds.indices.end(), sources.begin(), sources.end());
    ds.indptr.push_back(static_cast<int64_t>(ds.indices.size()));
  }
  ds.numEdges = static_cast<int64_t>(ds.indices.size());
  for (int64_t i = 0; i < V * 3; ++i)
    ds.features.push_back(static_cast<float>(i));
  for (int64_t v = 0; v < V; ++v) {
    ds.labels.push_back(static_cast<int64_t>(rng() % 5) - 1); // some -1
    for (auto &mask : ds.masks)
      mask.push_back(rng() % 2);
  }
  EdgeData &f = ds.edgeData["weight"];
  f.width = 2;
  EdgeData &t = ds.edgeData["type"];
  t.isInt = true;
  for (int64_t e = 0; e < ds.numEdges; ++e) {
    f.f32.push_back(static_cast<float>(e));
    f.f32.push_back(-static_cast<float>(e));
    t.i32.push_back(static_cast<int32_t>(e * 7));
  }
  return ds;
}

/// Each vertex's distance from `inner` along edges of either direction, up
/// to `most` hops (-1 beyond), by breadth-first search over an adjacency
/// matrix: independent of Preload.cpp's passes over the edges.
std::vector<int64_t> hopDistances(const Dataset &full, VertexRange inner,
                                  int64_t most) {
  const int64_t V = full.numVertices;
  std::vector<std::vector<bool>> adj(V, std::vector<bool>(V, false));
  for (int64_t v = 0; v < V; ++v)
    for (int64_t e = full.indptr[v]; e < full.indptr[v + 1]; ++e)
      adj[full.indices[e]][v] = adj[v][full.indices[e]] = true;
  std::vector<int64_t> dist(V, -1);
  for (int64_t v = inner.begin; v < inner.end; ++v)
    dist[v] = 0;
  for (int64_t d = 0; d < most; ++d)
    for (int64_t v = 0; v < V; ++v)
      if (dist[v] == d)
        for (int64_t u = 0; u < V; ++u)
          if (adj[v][u] && dist[u] < 0)
            dist[u] = d + 1;
  return dist;
}

/// Writes `ds` as a dataset directory (DESIGN.md's format).
void saveDataset(const Dataset &ds, const std::string &dir) {
  std::string error;
  const int64_t V = ds.numVertices, E = ds.numEdges;
  auto write = [&](const std::string &file, DType type,
                   const std::vector<int64_t> &shape, const void *data) {
    ASSERT_TRUE(writeNpy(dir + "/" + file, type, shape, data, error)) << error;
  };
  write("indptr.npy", DType::I64, {V + 1}, ds.indptr.data());
  write("indices.npy", DType::I32, {E}, ds.indices.data());
  write("features.npy", DType::F32, {V, ds.numFeatures}, ds.features.data());
  write("labels.npy", DType::I64, {V}, ds.labels.data());
  const char *splits[] = {"train", "val", "test"};
  for (int s = 0; s < 3; ++s)
    write(std::string(splits[s]) + "_mask.npy", DType::Bool, {V},
          ds.masks[s].data());
  std::string names;
  for (const auto &[name, d] : ds.edgeData) {
    names += (names.empty() ? "\"" : ", \"") + name + "\"";
    if (d.isInt)
      write("edge_" + name + ".npy", DType::I32, {E}, d.i32.data());
    else
      write("edge_" + name + ".npy", DType::F32, {E, d.width}, d.f32.data());
  }
  std::ofstream meta(dir + "/meta.json");
  meta << "{\"format_version\": 1, \"name\": \"" << ds.name
       << "\", \"num_vertices\": " << V << ", \"num_edges\": " << E
       << ", \"num_features\": " << ds.numFeatures
       << ", \"num_classes\": " << ds.numClasses
       << ", \"directed\": true, \"self_loops\": false, \"source\": \"test\", "
          "\"edge_data\": ["
       << names << "]}";
}

} // namespace

TEST(Preload, EqualVertexRangesCoverTheVertices) {
  for (int64_t V : {1, 2, 7, 1000, 1001})
    for (int size = 1; size <= 9 && size <= V; ++size) {
      int64_t at = 0;
      for (int r = 0; r < size; ++r) {
        VertexRange range = equalVertexRange(V, r, size);
        EXPECT_EQ(range.begin, at);
        EXPECT_GE(range.end - range.begin, V / size);
        EXPECT_LE(range.end - range.begin, V / size + 1);
        at = range.end;
      }
      EXPECT_EQ(at, V);
    }
}

// The part holds exactly the vertices within `hops` undirected hops of its
// range, every edge between them in CSC order with its data, and the full
// graph's degrees; only its own vertices are in the splits.
TEST(Preload, PartIsTheClosureWithItsEdges) {
  std::mt19937_64 rng(20261125);
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t V = 1 + rng() % 60, E = rng() % 150;
    const Dataset full = randomDataset(rng, V, E);
    const int size = 1 + static_cast<int>(rng() % std::min<int64_t>(V, 5));
    const int rank = static_cast<int>(rng() % size);
    const int64_t hops = rng() % 4;
    const VertexRange inner = equalVertexRange(V, rank, size);

    const std::vector<int64_t> dist = hopDistances(full, inner, hops);
    std::vector<float> inDeg(V, 0), outDeg(V, 0);
    for (int64_t v = 0; v < V; ++v)
      for (int64_t e = full.indptr[v]; e < full.indptr[v + 1]; ++e) {
        inDeg[v] += 1;
        outDeg[full.indices[e]] += 1;
      }

    Dataset local;
    PreloadPart part;
    buildPreloadPart(full, inner, hops, local, part);
    std::vector<int64_t> expected;
    for (int64_t v = 0; v < V; ++v)
      if (dist[v] >= 0)
        expected.push_back(v);
    ASSERT_EQ(part.globalIds, expected) << "trial " << trial;
    // The local dataset carries them: its rows' dropout masks (Dataset.h).
    ASSERT_EQ(local.vertexIds, expected) << "trial " << trial;
    const int64_t n = local.numVertices;
    ASSERT_EQ(n, static_cast<int64_t>(expected.size()));
    ASSERT_EQ(static_cast<int64_t>(local.indptr.size()), n + 1);

    // The edges, in the full graph's CSC order, with their data.
    int64_t kept = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t g = expected[i];
      EXPECT_EQ(local.labels[i], full.labels[g]);
      for (int64_t c = 0; c < 3; ++c)
        EXPECT_EQ(local.features[i * 3 + c], full.features[g * 3 + c]);
      const bool own = g >= inner.begin && g < inner.end;
      for (int s = 0; s < 3; ++s)
        EXPECT_EQ(local.masks[s][i], own && full.masks[s][g]);
      EXPECT_EQ(part.inDegree[i], inDeg[g]);
      EXPECT_EQ(part.outDegree[i], outDeg[g]);
      int64_t j = local.indptr[i];
      for (int64_t e = full.indptr[g]; e < full.indptr[g + 1]; ++e) {
        if (dist[full.indices[e]] < 0)
          continue;
        ASSERT_LT(j, local.indptr[i + 1]);
        EXPECT_EQ(expected[local.indices[j]], full.indices[e]);
        EXPECT_EQ(local.edgeData.at("weight").f32[2 * j],
                  full.edgeData.at("weight").f32[2 * e]);
        EXPECT_EQ(local.edgeData.at("weight").f32[2 * j + 1],
                  full.edgeData.at("weight").f32[2 * e + 1]);
        EXPECT_EQ(local.edgeData.at("type").i32[j],
                  full.edgeData.at("type").i32[e]);
        ++j;
        ++kept;
      }
      EXPECT_EQ(j, local.indptr[i + 1]);
    }
    EXPECT_EQ(local.numEdges, kept);
    EXPECT_EQ(static_cast<int64_t>(local.indices.size()), kept);
  }
}

// The hops record: a depth, or -1 with the op that reduces over all
// vertices; absent, -2.
TEST(Preload, HopsRecordParses) {
  std::string error;
  ModelInfo none;
  ASSERT_TRUE(parseModelInfo("model m\n", none, error)) << error;
  EXPECT_EQ(none.hops, -2);
  ModelInfo two;
  ASSERT_TRUE(parseModelInfo("model m\nhops 2\n", two, error)) << error;
  EXPECT_EQ(two.hops, 2);
  ModelInfo global;
  ASSERT_TRUE(parseModelInfo("hops -1 gnn.sum_rows\n", global, error)) << error;
  EXPECT_EQ(global.hops, -1);
  EXPECT_EQ(global.globalOp, "gnn.sum_rows");
  for (const char *bad : {"hops\n", "hops -2\n", "hops -1\n", "hops x\n"}) {
    ModelInfo info;
    EXPECT_FALSE(parseModelInfo(bad, info, error)) << bad;
    EXPECT_NE(error.find("hops"), std::string::npos) << error;
  }
}

// Reading a part by ranges gives what building it from the whole dataset
// gives, array for array, with the full graph's sizes and split counts.
TEST(Preload, ReadPartEqualsBuiltPart) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 12; ++trial) {
    const int64_t V = 1 + rng() % 80, E = rng() % 200;
    Dataset ds = randomDataset(rng, V, E);
    for (int64_t v = 0; v < V; ++v) // labels in [-1, C)
      ds.labels[v] = std::min<int64_t>(ds.labels[v], ds.numClasses - 1);
    test::TempDir dir("gnnrt-preload-test");
    ASSERT_FALSE(dir.path.empty());
    saveDataset(ds, dir.path);
    std::string error;
    Dataset whole;
    ASSERT_TRUE(loadDataset(dir.path, whole, error)) << error;
    const int size = 1 + static_cast<int>(rng() % std::min<int64_t>(V, 4));
    const int rank = static_cast<int>(rng() % size);
    const int64_t hops = rng() % 4;

    // Every other trial samples the external vertices.
    PreloadSampling sampling;
    if (trial % 2) {
      sampling.maxHop = rng() % 4;
      sampling.fanout = rng() % 4;
      sampling.seed = rng();
    }
    Dataset built, read;
    PreloadPart builtPart, readPart;
    buildPreloadPart(whole, equalVertexRange(V, rank, size), hops, built,
                     builtPart, sampling);
    FullGraph full;
    ASSERT_TRUE(loadPreloadPart(dir.path, rank, size, hops, sampling, read,
                                readPart, full, error))
        << error;
    EXPECT_EQ(full.numVertices, V);
    EXPECT_EQ(full.numEdges, whole.numEdges);
    for (int s = 0; s < 3; ++s) {
      int64_t labelled = 0;
      for (int64_t v = 0; v < V; ++v)
        labelled += whole.masks[s][v] && whole.labels[v] >= 0;
      EXPECT_EQ(full.labelled[s], labelled);
    }
    EXPECT_EQ(readPart.globalIds, builtPart.globalIds);
    EXPECT_EQ(read.vertexIds, builtPart.globalIds);
    EXPECT_EQ(readPart.inDegree, builtPart.inDegree);
    EXPECT_EQ(readPart.outDegree, builtPart.outDegree);
    EXPECT_EQ(read.numVertices, built.numVertices);
    EXPECT_EQ(read.numEdges, built.numEdges);
    EXPECT_EQ(read.numFeatures, built.numFeatures);
    EXPECT_EQ(read.numClasses, built.numClasses);
    EXPECT_EQ(read.indptr, built.indptr);
    EXPECT_EQ(read.indices, built.indices);
    EXPECT_EQ(read.features, built.features);
    EXPECT_EQ(read.labels, built.labels);
    for (int s = 0; s < 3; ++s)
      EXPECT_EQ(read.masks[s], built.masks[s]);
    for (const char *name : {"weight", "type"}) {
      EXPECT_EQ(read.edgeData.at(name).f32, built.edgeData.at(name).f32);
      EXPECT_EQ(read.edgeData.at(name).i32, built.edgeData.at(name).i32);
      EXPECT_EQ(read.edgeData.at(name).width, built.edgeData.at(name).width);
    }
  }
}

// What a rank reads is checked: a NaN in one of its feature rows, a source
// out of range, sources out of order.
TEST(Preload, ReadPartChecksWhatItReads) {
  std::mt19937_64 rng(5);
  Dataset ds = randomDataset(rng, 20, 60);
  for (int64_t v = 0; v < 20; ++v)
    ds.labels[v] = std::min<int64_t>(ds.labels[v], ds.numClasses - 1);
  std::string error;
  Dataset local;
  PreloadPart part;
  FullGraph full;
  {
    Dataset bad = ds;
    bad.features[3 * 2 + 1] = std::nanf("");
    test::TempDir dir;
    saveDataset(bad, dir.path);
    EXPECT_FALSE(
        loadPreloadPart(dir.path, 0, 2, 1, {}, local, part, full, error));
    EXPECT_EQ(error, "features.npy: NaN or Inf (row 2)");
  }
  ASSERT_GT(ds.numEdges, 1);
  {
    Dataset bad = ds;
    bad.indices[ds.numEdges - 1] = 20;
    test::TempDir dir;
    saveDataset(bad, dir.path);
    EXPECT_FALSE(
        loadPreloadPart(dir.path, 1, 2, 1, {}, local, part, full, error));
    EXPECT_EQ(error, "indices.npy: vertex id 20 out of range [0, 20)");
  }
  {
    Dataset bad = ds;
    int64_t v = 0;
    while (bad.indptr[v + 1] - bad.indptr[v] < 2)
      ++v;
    std::swap(bad.indices[bad.indptr[v]], bad.indices[bad.indptr[v] + 1]);
    test::TempDir dir;
    saveDataset(bad, dir.path);
    EXPECT_FALSE(
        loadPreloadPart(dir.path, 0, 1, 0, {}, local, part, full, error));
    EXPECT_EQ(error, "indices.npy: sources not ascending within a destination "
                     "(edge " +
                         std::to_string(bad.indptr[v] + 1) + ")");
  }
}

// Expansion-aware sampling (GD-1): the external vertices held lie within
// maxHop hops of the inner range, the expansion is bounded by the fanout,
// the held subgraph is the induced one, the draw depends only on the seed;
// fanout 0 holds the inner range alone, and an unbounded sample is the
// exact closure.
TEST(Preload, SampledPartIsWithinItsBounds) {
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t V = 2 + rng() % 80, E = rng() % 400;
    const Dataset full = randomDataset(rng, V, E);
    const int size = 1 + static_cast<int>(rng() % std::min<int64_t>(V, 4));
    const int rank = static_cast<int>(rng() % size);
    const int64_t hops = 1 + rng() % 3;
    const VertexRange inner = equalVertexRange(V, rank, size);
    PreloadSampling sampling;
    sampling.maxHop = rng() % 4;
    sampling.fanout = rng() % 4;
    sampling.seed = rng();
    const int64_t m = std::min(hops, sampling.maxHop), k = sampling.fanout;

    const std::vector<int64_t> dist = hopDistances(full, inner, V);

    Dataset local, again, exact, exactToo;
    PreloadPart part, partAgain, exactPart, exactPartToo;
    buildPreloadPart(full, inner, hops, local, part, sampling);
    buildPreloadPart(full, inner, hops, again, partAgain, sampling);
    EXPECT_EQ(part.globalIds, partAgain.globalIds) << "not deterministic";
    int64_t external = 0, bound = 0, level = inner.end - inner.begin;
    for (int64_t d = 1; d <= m; ++d)
      bound += level *= k;
    for (int64_t g : part.globalIds) {
      EXPECT_GE(dist[g], 0);
      EXPECT_LE(dist[g], m) << "vertex " << g << " beyond maxHop";
      external += g < inner.begin || g >= inner.end;
    }
    EXPECT_LE(external, bound);
    if (k == 0) {
      EXPECT_EQ(external, 0);
    }
    for (int64_t v = inner.begin; v < inner.end; ++v)
      EXPECT_TRUE(
          std::binary_search(part.globalIds.begin(), part.globalIds.end(), v));
    // Induced: as many edges as the full graph has between held vertices.
    int64_t induced = 0;
    for (int64_t i = 0; i < local.numVertices; ++i) {
      const int64_t g = part.globalIds[i];
      for (int64_t e = full.indptr[g]; e < full.indptr[g + 1]; ++e)
        induced +=
            std::binary_search(part.globalIds.begin(), part.globalIds.end(),
                               int64_t(full.indices[e]));
    }
    EXPECT_EQ(local.numEdges, induced);
    // No bound at all: the exact closure.
    PreloadSampling unbounded;
    unbounded.maxHop = hops;
    unbounded.fanout = INT32_MAX;
    unbounded.seed = sampling.seed;
    buildPreloadPart(full, inner, hops, exact, exactPart, unbounded);
    buildPreloadPart(full, inner, hops, exactToo, exactPartToo);
    EXPECT_EQ(exactPart.globalIds, exactPartToo.globalIds);
  }
}

TEST(StoredRows, RowsReadFromStorageAreTheLoadedFeatures) {
  // readStoredRows (mini-batches with the features on storage) against the
  // rows loadDataset keeps in memory: random lists of rows in any order,
  // with repeats, dense runs (one read) and rows far apart (one read each),
  // on a graph wide enough that reads of several rows happen.
  std::mt19937_64 rng(17);
  const int64_t V = 3000;
  Dataset ds = randomDataset(rng, V, 9000);
  test::TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  saveDataset(ds, dir.path);
  std::string error;
  Dataset whole, stored;
  FeaturesOnStorage file;
  ASSERT_TRUE(loadDataset(dir.path, whole, error)) << error;
  ASSERT_TRUE(loadDataset(dir.path, stored, error, &file)) << error;
  ASSERT_TRUE(stored.features.empty());
  const int64_t F = whole.numFeatures;
  ASSERT_EQ(stored.numFeatures, F);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<int64_t> rows;
    const int64_t n = 1 + static_cast<int64_t>(rng() % 400);
    const int64_t first = static_cast<int64_t>(rng() % V);
    for (int64_t i = 0; i < n; ++i)
      rows.push_back(trial % 2 ? (first + i) % V // runs
                               : static_cast<int64_t>(rng() % V));
    std::shuffle(rows.begin(), rows.end(), rng);
    rows.push_back(rows.front()); // a repeat
    std::vector<float> out(rows.size() * F, -1.0f);
    StoredReads counts;
    ASSERT_TRUE(readStoredRows(file, F, rows, out.data(), counts, error))
        << error;
    for (size_t i = 0; i < rows.size(); ++i)
      for (int64_t j = 0; j < F; ++j)
        ASSERT_EQ(out[i * F + j], whole.features[rows[i] * F + j])
            << "trial " << trial << " row " << rows[i];
    EXPECT_GE(counts.reads, 1);
    EXPECT_LE(counts.reads, static_cast<int64_t>(rows.size()));
    EXPECT_GE(counts.bytes, n * F * static_cast<int64_t>(sizeof(float)) /
                                static_cast<int64_t>(rows.size()));
    if (trial % 2) { // a run of rows: one read per MiB at most
      EXPECT_LE(counts.reads, 2) << "trial " << trial;
    }
  }
  // Nothing to read; then the file cut short under the open descriptor: an
  // error naming the file and the row.
  StoredReads none;
  ASSERT_TRUE(readStoredRows(file, F, {}, nullptr, none, error));
  EXPECT_EQ(none.reads, 0);
  ASSERT_EQ(::truncate((dir.path + "/features.npy").c_str(), 256), 0);
  std::vector<float> out(F);
  StoredReads counts;
  EXPECT_FALSE(readStoredRows(file, F, {V - 1}, out.data(), counts, error));
  EXPECT_EQ(error, "features.npy: the file ends before row " +
                       std::to_string(V - 1) + " (it changed while training)");
}
