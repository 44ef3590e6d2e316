//===- Dataset.h - the dataset directory format (DESIGN.md) -----*- C++ -*-===//

#ifndef GNNRT_DATASET_H
#define GNNRT_DATASET_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gnnrt {

/// Per-edge data: float32 [E] / [E, k] or int32 [E].
struct EdgeData {
  bool isInt = false;
  int64_t width = 1; // k for [E, k]; 1 for [E]
  std::vector<float> f32;
  std::vector<int32_t> i32;
};

/// A loaded and validated dataset.
struct Dataset {
  std::string name, source;
  int64_t numVertices = 0, numEdges = 0, numFeatures = 0, numClasses = 0;
  bool directed = true, selfLoops = false;
  /// The sources' count when it differs from V: a process's rows of a
  /// row-partitioned graph (its own vertices, their in-edges from any of
  /// the numSources vertices); -1: V (a whole graph).
  int64_t numSources = -1;
  std::vector<int64_t> indptr;   // [V+1] in-edges by destination (CSC)
  std::vector<int32_t> indices;  // [E] source of each edge
  std::vector<float> features;   // [V, F]
  std::vector<int64_t> labels;   // [V]
  std::vector<uint8_t> masks[3]; // train, val, test: [V]
  std::map<std::string, EdgeData> edgeData;
  /// A sampled batch's rows per level of the model (gnnrtLevelRows),
  /// non-increasing: its vertices ordered by the hop that reached them.
  /// Empty for a whole graph (every level's rows are V).
  std::vector<int64_t> levelRows;
  /// Each vertex's id in the graph this one was cut from (a rank's closure,
  /// a sampled batch): the row of the whole graph's tensors it computes,
  /// by which its dropout masks are drawn. Empty for a whole graph.
  std::vector<int64_t> vertexIds;
};

/// The sources of `ds`'s edges range over [0, sourcesOf(ds)).
inline int64_t sourcesOf(const Dataset &ds) {
  return ds.numSources >= 0 ? ds.numSources : ds.numVertices;
}
/// features.npy left on storage (the features out of core, issue 18): open
/// for the run, its float32 rows at `offset`; closed on destruction.
struct FeaturesOnStorage {
  int fd = -1;
  int64_t offset = 0;
  std::string name = "features.npy";
  FeaturesOnStorage() = default;
  FeaturesOnStorage(const FeaturesOnStorage &) = delete;
  FeaturesOnStorage &operator=(const FeaturesOnStorage &) = delete;
  ~FeaturesOnStorage();
};

/// The reads readStoredRows made, and their bytes (the rows between the
/// rows read included).
struct StoredReads {
  int64_t reads = 0, bytes = 0;
};

/// Reads rows `vertices` (global ids, any order) of the float32 [V, width]
/// array that `file` holds open (features.npy, FeaturesOnStorage) into
/// `out`, row i of `out` being row vertices[i]: by ranged reads in
/// ascending order, rows at most a page apart in one read of up to 1 MiB.
/// Adds what it read to `counts`. False with "<file>: <reason>" (a failed
/// or short read, naming the row).
bool readStoredRows(const FeaturesOnStorage &file, int64_t width,
                    const std::vector<int64_t> &vertices, float *out,
                    StoredReads &counts, std::string &error);
/// The same from the rows at `offset` of `fd` (open, not owned; `name` for
/// messages).
bool readStoredRows(int fd, int64_t offset, const std::string &name,
                    int64_t width, const std::vector<int64_t> &vertices,
                    float *out, StoredReads &counts, std::string &error);

/// Opens features.npy of `dir` for ranged reads into `out` (its header
/// checked: float32 [V, F] in C order; F in `numFeatures`), without reading
/// its values. False with "features.npy: <problem>".
bool openFeaturesOnStorage(const std::string &dir, int64_t V,
                           int64_t &numFeatures, FeaturesOnStorage &out,
                           std::string &error);

/// indices.npy left on storage (the graph out of core, issue 18): open for
/// the run, its int32 sources at `offset`; closed on destruction. The check
/// that reads it by blocks also counts the out-edges of every vertex.
struct IndicesOnStorage {
  int fd = -1;
  int64_t offset = 0;
  std::string name = "indices.npy";
  /// [V+1] out-edges by source (CSR offsets), counted as the check reads.
  std::vector<int64_t> srcOffsets;
  IndicesOnStorage() = default;
  IndicesOnStorage(const IndicesOnStorage &) = delete;
  IndicesOnStorage &operator=(const IndicesOnStorage &) = delete;
  ~IndicesOnStorage();
};

/// Loads `dir`, checking everything DESIGN.md lists. On failure returns false
/// with a one-line "<file>: <problem>" in `error`. With `onStorage` the
/// features are checked as they are read by blocks (their shape, every value
/// finite) but not kept: ds.features stays empty, ds.numFeatures is set, and
/// `onStorage` holds features.npy open for ranged reads. With `indices` the
/// same for the graph's sources: ds.indices stays empty, ds.numEdges is
/// set, and `indices` holds indices.npy open (loadGraphOnStorage).
bool loadDataset(const std::string &dir, Dataset &ds, std::string &error,
                 FeaturesOnStorage *onStorage = nullptr,
                 IndicesOnStorage *indices = nullptr);

/// The graph of `dir` with its sources on storage: ds.indptr and the counts
/// loaded, indices.npy checked by blocks as loadGraph checks it (ids in
/// range, ascending within a destination) and kept open in `out`.
bool loadGraphOnStorage(const std::string &dir, Dataset &ds,
                        IndicesOnStorage &out, std::string &error);

/// The graph of `dir` alone (indptr.npy, indices.npy: ds.indptr,
/// ds.indices, the counts), checked as loadDataset checks it.
bool loadGraph(const std::string &dir, Dataset &ds, std::string &error);

/// meta.json of `dir`, checked as loadDataset checks it: sets the name,
/// source, flags and numClasses of `ds`, `counts` (num_vertices, num_edges,
/// num_features, num_classes as meta.json gives them) and `edgeNames` (its
/// edge_data).
bool readDatasetMeta(const std::string &dir, Dataset &ds, int64_t counts[4],
                     std::vector<std::string> &edgeNames, std::string &error);

/// `file` in the dataset directory `dir`.
std::string datasetFile(const std::string &dir, const std::string &file);

/// False with loadDataset's message unless `indptr` is a CSC's offsets over
/// `numEdges` edges: V+1 entries from 0, monotone, ending at numEdges.
bool checkIndptr(const std::vector<int64_t> &indptr, int64_t numEdges,
                 std::string &error);

/// False with "features.npy: NaN or Inf (row R)" unless every one of
/// `values` (rows of `width` features from row `firstRow`) is finite.
bool checkFeaturesFinite(const std::vector<float> &values, int64_t firstRow,
                         int64_t width, std::string &error);

/// False with loadDataset's message unless every label is in
/// [-1, numClasses).
bool checkLabels(const std::vector<int64_t> &labels, int64_t numClasses,
                 std::string &error);

/// False with "<file>: length <actual> but <what> is <want>" unless they
/// are equal (an array's first dimension against the graph's).
bool checkLength(const std::string &file, int64_t actual, int64_t want,
                 const char *what, std::string &error);

/// False with "meta.json: <key> is <m> but the arrays have <a>" unless
/// meta.json's first three counts equal `actual` (V, E, F of the arrays).
bool checkMetaCounts(const int64_t counts[4], const int64_t actual[3],
                     std::string &error);

/// Writes `ds` (features, labels and masks in memory) as a dataset directory
/// `dir` in DESIGN.md's format, which loadDataset reads back: meta.json,
/// indptr.npy, indices.npy, features.npy, labels.npy, the three masks and
/// edge_<name>.npy for each edge data; `dir` is created. On failure, the
/// file and the reason in `error`.
bool writeDataset(const Dataset &ds, const std::string &dir,
                  std::string &error);

/// The rows of `all`'s edge data at the edge positions `edges`, in that
/// order (a subgraph's edge data).
std::map<std::string, EdgeData>
selectEdgeData(const std::map<std::string, EdgeData> &all,
               const std::vector<int64_t> &edges);

/// The training split's vertices that have a label; `selected` receives
/// the split's size.
int64_t labelledTrainVertices(const Dataset &ds, int64_t &selected);

} // namespace gnnrt

#endif // GNNRT_DATASET_H
