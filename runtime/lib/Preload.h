//===- Preload.h - a rank's part of the graph for shared preloading -*- C++
//-*-===//
//
// GraNNDis's shared preloading in its full-graph form (docs/Distributed.md):
// rank r of N owns a contiguous range of the vertices (its inner vertices)
// and holds them with their closure of `hops` hops along in- and out-edges.
// The model then computes the inner vertices' logits exactly on that
// subgraph; the loss covers only them, and the gradients are summed over the
// ranks.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_PRELOAD_H
#define GNNRT_PRELOAD_H

#include "Dataset.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gnnrt {

/// Rank `rank`'s inner vertices among `size`: [rank V / size,
/// (rank + 1) V / size), equal counts within one.
struct VertexRange {
  int64_t begin = 0, end = 0;
};
VertexRange equalVertexRange(int64_t numVertices, int rank, int size);

/// Expansion-aware sampling of a part's external vertices (GraNNDis §4.3):
/// the closure reaches at most `maxHop` hops from the inner vertices (-1:
/// the model's hops), and each vertex it expands selects at most `fanout`
/// neighbours outside the inner range (-1: all), drawn once from `seed` (a
/// hash of the seed and the edge's two ends, so every rank and every run
/// draws the same). The subgraph held is the one the traversed vertices
/// induce: no edge between held vertices is dropped. The default is the
/// exact closure, whose inner logits equal the full graph's; a sampled one
/// approximates them.
struct PreloadSampling {
  int64_t maxHop = -1, fanout = -1;
  uint64_t seed = 0;
};

/// What a rank holds of the full graph besides its local dataset.
struct PreloadPart {
  VertexRange inner;
  int64_t hops = 0;
  /// The global id of each local vertex, ascending (so the local CSC keeps
  /// the format's order: sources ascend within a destination).
  std::vector<int64_t> globalIds;
  /// The full graph's in- and out-degrees of the local vertices: a vertex
  /// at the closure's rim has lost edges, and a model that reads degrees
  /// (GCN's normalisation) must see the full graph's.
  std::vector<float> inDegree, outDegree;
};

/// Builds the local dataset of `inner` and its `hops`-hop closure from
/// `full`: the closure's vertices in ascending global order, every edge of
/// `full` between two of them (CSC order), their features, labels and edge
/// data; the masks select only inner vertices. Records the rest in `part`.
void buildPreloadPart(const Dataset &full, VertexRange inner, int64_t hops,
                      Dataset &local, PreloadPart &part,
                      const PreloadSampling &sampling = {});

/// The full graph's sizes and what every rank shares of it.
struct FullGraph {
  int64_t numVertices = 0, numEdges = 0;
  int64_t labelled[3] =
      {}; // each split's labelled vertices (the loss's divisor)
  int64_t selected[3] = {}; // the vertices each mask selects
};

/// What buildPreloadPart builds for rank `rank` of `size`, read from the
/// dataset directory `dir` without holding the whole: meta.json, indptr.npy,
/// the labels and the masks whole (about 20 bytes per vertex); indices.npy
/// streamed in blocks, once per hop (the closure, both directions) and once
/// for the degrees; then only the held vertices' in-edges, their edge data
/// and their feature rows by ranged reads. What is read is checked as
/// loadDataset checks it (every vertex is some rank's own, so the ranks
/// together check every row). False with "<file>: <problem>". With
/// `onStorage` the feature rows are checked but left in features.npy, which
/// it holds open (a plan that reads them out of core: gnnrtFeaturesChunks
/// reads the part's rows by its vertexIds).
bool loadPreloadPart(const std::string &dir, int rank, int size, int64_t hops,
                     const PreloadSampling &sampling, Dataset &local,
                     PreloadPart &part, FullGraph &full, std::string &error,
                     FeaturesOnStorage *onStorage = nullptr);

/// Row partitioning (MG-GCN, docs/Distributed.md): the rows `inner` of the
/// graph (a process's part, RowSplit.h), read as loadPreloadPart reads:
/// those vertices (their features, labels, masks and full-graph degrees)
/// and *all* their in-edges with their edge data, the sources kept as
/// global ids (`local.numSources` = the full graph's vertices).
/// `part.globalIds` is the range. Without `features` their feature rows
/// are not read (local.features stays empty; numFeatures is set). An
/// `inner` ending at -1 is every vertex.
bool loadRowPart(const std::string &dir, VertexRange inner, Dataset &local,
                 PreloadPart &part, FullGraph &full, std::string &error,
                 bool features = true);

/// Feature partitioning (P³, docs/Distributed.md): the columns
/// [begin, end) of every one of the `numVertices` vertices' features, by
/// ranged reads of features.npy (a read per row), checked as loadDataset
/// checks the features; `total` is its column count. False with
/// "<file>: <problem>".
bool loadFeatureColumns(const std::string &dir, int64_t numVertices,
                        int64_t begin, int64_t end, std::vector<float> &columns,
                        int64_t &total, std::string &error);

/// Feature-pulling data parallel (FeaturePull.h): the rows [begin, end) of
/// the features, by one ranged read of features.npy, checked as
/// loadFeatureColumns checks its columns (an error names the row).
bool loadFeatureRows(const std::string &dir, int64_t numVertices, int64_t begin,
                     int64_t end, std::vector<float> &rows, int64_t &total,
                     std::string &error);

/// indptr.npy of `dir`, checked against indices.npy's length as
/// loadDataset checks it (what a split by in-edges needs).
bool readGraphOffsets(const std::string &dir, std::vector<int64_t> &indptr,
                      std::string &error);

} // namespace gnnrt

#endif // GNNRT_PRELOAD_H
