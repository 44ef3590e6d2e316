//===- DatasetMeta.h - a dataset's meta.json, for cost models ---*- C++ -*-===//
//
// Passes whose decisions depend on sizes (the reorder cost model, the slot
// plan) read them from a dataset's meta.json (DESIGN.md's format) when told
// one: the pass option `meta` (DatasetOptions.td), gnn-compile's --dataset.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_DATASETMETA_H
#define GNN_SUPPORT_DATASETMETA_H

#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::gnn {

/// The counts in a dataset's meta.json, which passes use as the sizes of a
/// typical run; 0 where the file has none.
struct DatasetMeta {
  int64_t numVertices = 0, numEdges = 0, numFeatures = 0, numClasses = 0;
};

/// Reads the meta.json at `path`; on failure, a one-line reason in `error`.
FailureOr<DatasetMeta> readDatasetMeta(llvm::StringRef path,
                                       std::string &error);

/// The in-edge offsets of the dataset whose meta.json is at `metaPath`: its
/// indptr.npy (int64 [V+1], C order; DESIGN.md), or a reason in `error`.
FailureOr<std::vector<int64_t>> readIndptr(llvm::StringRef metaPath,
                                           std::string &error);

/// The in-edges of each row chunk when `indptr`'s vertices are cut into
/// `chunks` row chunks at the lowering's boundaries (RowChunks.h: b_k =
/// floor(floor(k V / K) / GNNRT_PARALLEL_CHUNK) * GNNRT_PARALLEL_CHUNK).
std::vector<int64_t> rowChunkEdges(const std::vector<int64_t> &indptr,
                                   int64_t chunks);
/// The most of those.
int64_t mostRowChunkEdges(const std::vector<int64_t> &indptr, int64_t chunks);

/// The input rows each tile of an aggregation in row chunks reads (what
/// NeuGraph's selective loading reads of a source chunk), at the lowering's
/// chunk bounds. Tile (k, i) is output chunk k's edges from input chunk i.
struct TileInputRows {
  int64_t chunks = 0;
  /// [k * chunks + i]: to the destinations, the distinct sources in chunk i
  /// of the in-edges of destination chunk k.
  std::vector<int64_t> toDestinations;
  /// [k * chunks + i]: to the sources, the distinct destinations in chunk i
  /// of the out-edges of source chunk k.
  std::vector<int64_t> toSources;
  /// Tile (out, in) of an aggregation to `side` (the runtime's: 0 the
  /// sources, 1 the destinations).
  int64_t get(int64_t side, int64_t out, int64_t in) const {
    return (side ? toDestinations : toSources)[out * chunks + in];
  }
};

/// Counts TileInputRows for `chunks` row chunks from `indptr` (readIndptr)
/// and the indices.npy next to the meta.json at `metaPath` (one pass over
/// its edges; V int32 marks); on failure, a reason in `error`.
FailureOr<TileInputRows> countTileInputRows(llvm::StringRef metaPath,
                                            const std::vector<int64_t> &indptr,
                                            int64_t chunks, std::string &error);

} // namespace mlir::gnn

#endif // GNN_SUPPORT_DATASETMETA_H
