//===- Preload.cpp - a rank's part of the graph for shared preloading -----===//

#include "Preload.h"
#include "Npy.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cmath>
#include <sys/stat.h>

using namespace gnnrt;

VertexRange gnnrt::equalVertexRange(int64_t numVertices, int rank, int size) {
  return {numVertices * rank / size, numVertices * (rank + 1) / size};
}

namespace {

/// The vertices a part holds, grown level by level from the inner range
/// along both directions of the edges a pass over the graph offers
/// (visit(u, v) for each edge u -> v), exactly or by expansion-aware
/// sampling (PreloadSampling).
class Closure {
public:
  Closure(int64_t numVertices, VertexRange inner, int64_t hops,
          const PreloadSampling &sampling)
      : held(numVertices, 0), inner(inner),
        levels(sampling.maxHop < 0 ? hops : std::min(hops, sampling.maxHop)),
        fanout(sampling.fanout), seed(sampling.seed), frontier(numVertices, 0),
        slot(fanout < 0 ? 0 : numVertices, -1) {
    for (int64_t v = inner.begin; v < inner.end; ++v)
      held[v] = frontier[v] = 1;
  }

  /// The passes over the edges the closure needs (at most).
  int64_t numLevels() const { return levels; }

  /// Prepares a pass: each frontier vertex's selection (sampled).
  void beginLevel() {
    if (fanout < 0)
      return;
    chosen.clear();
    for (int64_t v = 0, n = static_cast<int64_t>(frontier.size()); v < n; ++v)
      if (frontier[v]) {
        slot[v] = static_cast<int64_t>(chosen.size());
        chosen.emplace_back();
      }
  }

  /// Edge u -> v of the pass.
  void visit(int64_t u, int64_t v) {
    if (fanout < 0) {
      if (frontier[v] && !held[u])
        held[u] = 1, added.push_back(u);
      if (frontier[u] && !held[v])
        held[v] = 1, added.push_back(v);
      return;
    }
    if (frontier[v])
      offer(v, u);
    if (frontier[u])
      offer(u, v);
  }

  /// Ends a pass: the next frontier is what it added; false when nothing.
  bool endLevel() {
    if (fanout >= 0) {
      for (const auto &picks : chosen)
        for (const auto &[key, w] : picks)
          if (!held[w])
            held[w] = 1, added.push_back(w);
      for (int64_t v = 0, n = static_cast<int64_t>(frontier.size()); v < n; ++v)
        if (frontier[v])
          slot[v] = -1;
    }
    std::fill(frontier.begin(), frontier.end(), 0);
    for (int64_t w : added)
      frontier[w] = 1;
    const bool grew = !added.empty();
    added.clear();
    return grew;
  }

  std::vector<uint8_t> held;

private:
  /// Neighbour w of frontier vertex x: kept when among the `fanout` of x's
  /// external neighbours with the smallest hashes (a uniform sample that
  /// does not depend on the order the edges come in).
  void offer(int64_t x, int64_t w) {
    if (w == x || (w >= inner.begin && w < inner.end))
      return;
    auto &picks = chosen[slot[x]];
    const uint64_t key = hash(x, w);
    for (const auto &p : picks)
      if (p.second == w)
        return; // the reverse edge offered it already
    if (static_cast<int64_t>(picks.size()) < fanout) {
      picks.push_back({key, w});
      std::push_heap(picks.begin(), picks.end());
    } else if (fanout > 0 && key < picks.front().first) {
      std::pop_heap(picks.begin(), picks.end());
      picks.back() = {key, w};
      std::push_heap(picks.begin(), picks.end());
    }
  }
  uint64_t hash(int64_t x, int64_t w) const {
    uint64_t z = seed ^ (static_cast<uint64_t>(x) * 0x9E3779B97F4A7C15ULL) ^
                 (static_cast<uint64_t>(w) * 0xC2B2AE3D27D4EB4FULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  VertexRange inner;
  int64_t levels, fanout;
  uint64_t seed;
  std::vector<uint8_t> frontier;
  std::vector<int64_t> added;
  std::vector<int64_t> slot; // a frontier vertex's entry in `chosen`
  std::vector<std::vector<std::pair<uint64_t, int64_t>>> chosen;
};

/// Numbers the held vertices in ascending global order: `part`'s global ids
/// and `localId` (-1 where not held).
void numberHeld(const std::vector<uint8_t> &held, PreloadPart &part,
                std::vector<int32_t> &localId) {
  const int64_t V = static_cast<int64_t>(held.size());
  part.globalIds.clear();
  localId.assign(V, -1);
  for (int64_t v = 0; v < V; ++v)
    if (held[v]) {
      localId[v] = static_cast<int32_t>(part.globalIds.size());
      part.globalIds.push_back(v);
    }
}

} // namespace

void gnnrt::buildPreloadPart(const Dataset &full, VertexRange inner,
                             int64_t hops, Dataset &local, PreloadPart &part,
                             const PreloadSampling &sampling) {
  const int64_t V = full.numVertices, E = full.numEdges;
  const std::vector<int64_t> &indptr = full.indptr;
  const std::vector<int32_t> &indices = full.indices;
  std::vector<int32_t> outCount(V, 0);
  for (int64_t e = 0; e < E; ++e)
    ++outCount[indices[e]];

  // The closure: a pass over the edges per level.
  Closure closure(V, inner, hops, sampling);
  for (int64_t level = 0; level < closure.numLevels(); ++level) {
    closure.beginLevel();
    for (int64_t v = 0; v < V; ++v)
      for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e)
        closure.visit(indices[e], v);
    if (!closure.endLevel())
      break;
  }

  part.inner = inner;
  part.hops = hops;
  std::vector<int32_t> localId;
  numberHeld(closure.held, part, localId);
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
        local.indices.push_back(localId[indices[e]]);
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
    part.outDegree[i] = static_cast<float>(outCount[g]);
  }
  local.numEdges = static_cast<int64_t>(keptEdges.size());
  local.edgeData = selectEdgeData(full.edgeData, keptEdges);
  local.vertexIds = part.globalIds;
}

//===----------------------------------------------------------------------===//
// Reading a part
//===----------------------------------------------------------------------===//

namespace {

/// Edges per block of indices.npy read at once (16 MiB).
constexpr int64_t kEdgeBlock = int64_t(1) << 22;

/// Reads indices.npy in blocks, checking every source (in [0, V), ascending
/// within a destination) and calling visit(source, destination).
template <typename Visit>
bool streamEdges(const std::string &path, const std::vector<int64_t> &indptr,
                 Visit visit, std::string &error) {
  const int64_t V = static_cast<int64_t>(indptr.size()) - 1, E = indptr[V];
  std::vector<int32_t> block;
  NpyHeader h;
  int64_t dst = 0;
  int32_t previous = 0;
  for (int64_t at = 0; at < E; at += kEdgeBlock) {
    const int64_t end = std::min(E, at + kEdgeBlock);
    if (!readNpyRows(path, "indices.npy", DType::I32, 1, NpyRange{at, end}, h,
                     block, error))
      return false;
    for (int64_t e = at; e < end; ++e) {
      while (indptr[dst + 1] <= e)
        ++dst;
      const int32_t u = block[e - at];
      if (u < 0 || u >= V) {
        error = "indices.npy: vertex id " + std::to_string(u) +
                " out of range [0, " + std::to_string(V) + ")";
        return false;
      }
      if (e > indptr[dst] && u < previous) {
        error = "indices.npy: sources not ascending within a destination "
                "(edge " +
                std::to_string(e) + ")";
        return false;
      }
      previous = u;
      visit(u, dst);
    }
  }
  return true;
}

/// The runs [first, last] of consecutive held vertices.
std::vector<std::pair<int64_t, int64_t>>
heldRuns(const std::vector<int64_t> &ids) {
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t g : ids) {
    if (!runs.empty() && runs.back().second + 1 == g)
      runs.back().second = g;
    else
      runs.push_back({g, g});
  }
  return runs;
}

} // namespace

/// loadPreloadPart, and with `rows` loadRowPart: the inner vertices only,
/// with all their in-edges (sources kept global).
static bool loadPart(const std::string &dir, int rank, int size, int64_t hops,
                     const PreloadSampling &sampling, bool rows,
                     const VertexRange *range, Dataset &local,
                     PreloadPart &part, FullGraph &full, std::string &error,
                     bool readFeatures = true,
                     FeaturesOnStorage *onStorage = nullptr) {
  local = Dataset();
  int64_t counts[4];
  std::vector<std::string> edgeNames;
  if (!readDatasetMeta(dir, local, counts, edgeNames, error))
    return false;

  // The graph's offsets, whole (8 bytes per vertex), checked.
  NpyHeader h;
  std::vector<int64_t> indptr;
  if (!readNpy(datasetFile(dir, "indptr.npy"), "indptr.npy", DType::I64, 1, h,
               indptr, error))
    return false;
  // An empty range checks the header, dtype and rank as loadDataset does.
  const std::string indicesPath = datasetFile(dir, "indices.npy");
  std::vector<int32_t> none;
  if (!readNpyRows(indicesPath, "indices.npy", DType::I32, 1, NpyRange{0, 0}, h,
                   none, error))
    return false;
  const int64_t E = h.shape[0];
  if (!checkIndptr(indptr, E, error))
    return false;
  const int64_t V = static_cast<int64_t>(indptr.size()) - 1;
  full.numVertices = V;
  full.numEdges = E;

  // The closure, one pass over the edges per hop (both directions); the
  // out-degrees in the first.
  const VertexRange inner = range ? *range : equalVertexRange(V, rank, size);
  if (inner.begin < 0 || inner.begin > inner.end || inner.end > V) {
    error = "indptr.npy: the range [" + std::to_string(inner.begin) + ", " +
            std::to_string(inner.end) + ") is not within the " +
            std::to_string(V) + " vertices";
    return false;
  }
  Closure closure(V, inner, hops, sampling);
  std::vector<int32_t> outCount(V, 0);
  for (int64_t level = 0; level < std::max<int64_t>(closure.numLevels(), 1);
       ++level) {
    const bool reach = level < closure.numLevels(), count = level == 0;
    if (reach)
      closure.beginLevel();
    if (!streamEdges(
            indicesPath, indptr,
            [&](int64_t u, int64_t v) {
              if (count)
                ++outCount[u];
              if (reach)
                closure.visit(u, v);
            },
            error))
      return false;
    if (reach && !closure.endLevel())
      break;
  }

  part.inner = inner;
  part.hops = hops;
  std::vector<int32_t> localId;
  numberHeld(closure.held, part, localId);
  std::vector<uint8_t>().swap(closure.held);
  const int64_t n = static_cast<int64_t>(part.globalIds.size());
  local.numVertices = n;
  local.vertexIds = part.globalIds;
  part.inDegree.resize(n);
  part.outDegree.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t g = part.globalIds[i];
    part.inDegree[i] = static_cast<float>(indptr[g + 1] - indptr[g]);
    part.outDegree[i] = static_cast<float>(outCount[g]);
  }
  std::vector<int32_t>().swap(outCount);

  // Labels and masks whole (checked as loadDataset does), the held rows kept.
  std::vector<int64_t> labels;
  if (!readNpy(datasetFile(dir, "labels.npy"), "labels.npy", DType::I64, 1, h,
               labels, error))
    return false;
  if (!checkLength("labels.npy", h.shape[0], V,
                   "the number of vertices (indptr.npy)", error))
    return false;
  if (!checkLabels(labels, local.numClasses, error))
    return false;
  const char *splits[] = {"train", "val", "test"};
  for (int s = 0; s < 3; ++s) {
    const std::string file = std::string(splits[s]) + "_mask.npy";
    std::vector<uint8_t> mask;
    if (!readNpy(datasetFile(dir, file), file, DType::Bool, 1, h, mask, error))
      return false;
    if (!checkLength(file, h.shape[0], V, "the number of vertices (indptr.npy)",
                     error))
      return false;
    full.labelled[s] = full.selected[s] = 0;
    for (int64_t v = 0; v < V; ++v) {
      full.selected[s] += mask[v] != 0;
      full.labelled[s] += mask[v] && labels[v] >= 0;
    }
    local.masks[s].resize(n);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t g = part.globalIds[i];
      local.masks[s][i] = g >= inner.begin && g < inner.end && mask[g];
    }
  }
  local.labels.resize(n);
  for (int64_t i = 0; i < n; ++i)
    local.labels[i] = labels[part.globalIds[i]];
  std::vector<int64_t>().swap(labels);

  // The held rows of the features, a ranged read per run of held vertices.
  const auto runs = heldRuns(part.globalIds);
  const std::string featuresPath = datasetFile(dir, "features.npy");
  std::vector<float> featureRows;
  if (!readNpyRows(featuresPath, "features.npy", DType::F32, 2, NpyRange{0, 0},
                   h, featureRows, error))
    return false;
  if (!checkLength("features.npy", h.shape[0], V,
                   "the number of vertices (indptr.npy)", error))
    return false;
  const int64_t F = h.shape[1];
  local.numFeatures = F;
  // Left on storage, the held rows are read and checked here and read
  // again by chunks as the plan fetches them.
  if (readFeatures && !onStorage)
    local.features.reserve(static_cast<size_t>(n * F));
  // Each run in blocks of at most 4 MiB (a closure can be one run of most
  // of the graph): the block is the only copy beside the rows kept.
  const int64_t blockRows =
      std::max<int64_t>(1, (int64_t(4) << 20) / std::max<int64_t>(4 * F, 1));
  for (auto [first, last] : runs) {
    if (!readFeatures)
      break;
    for (int64_t at = first; at <= last; at += blockRows) {
      const int64_t end = std::min(last + 1, at + blockRows);
      if (!readNpyRows(featuresPath, "features.npy", DType::F32, 2,
                       NpyRange{at, end}, h, featureRows, error))
        return false;
      if (!checkFeaturesFinite(featureRows, at, F, error))
        return false;
      if (!onStorage)
        local.features.insert(local.features.end(), featureRows.begin(),
                              featureRows.end());
    }
  }
  if (onStorage &&
      !openFeaturesOnStorage(dir, V, local.numFeatures, *onStorage, error))
    return false;

  // The held vertices' in-edges from held sources, with their edge data.
  struct EdgeFile {
    std::string name, path;
    NpyHeader header;
  };
  std::vector<EdgeFile> edgeFiles;
  for (const std::string &name : edgeNames) {
    EdgeFile f{name, datasetFile(dir, "edge_" + name + ".npy"), {}};
    const std::string file = "edge_" + name + ".npy";
    struct stat st;
    if (stat(f.path.c_str(), &st) != 0 && errno == ENOENT) {
      error = file + ": missing file (listed in meta.json edge_data)";
      return false;
    }
    if (!readNpyHeader(f.path, file, f.header, error))
      return false;
    // loadDataset's checks and messages.
    const NpyHeader &eh = f.header;
    const bool isInt = eh.dtype == DType::I32;
    if (!isInt && eh.dtype != DType::F32) {
      error = file + ": dtype " + dtypeName(eh.dtype) +
              " but float32 or int32 expected";
      return false;
    }
    if (eh.shape.empty() || eh.shape.size() > (isInt ? 1u : 2u)) {
      error = file + ": rank " + std::to_string(eh.shape.size()) + " (shape " +
              shapeText(eh.shape) + ") but " +
              (isInt ? "1 expected" : "[E] or [E, k] expected");
      return false;
    }
    if (!checkLength(file, eh.shape[0], E, "the number of edges (indices.npy)",
                     error))
      return false;
    EdgeData &d = local.edgeData[name];
    d.isInt = isInt;
    d.width = eh.shape.size() == 2 ? eh.shape[1] : 1;
    edgeFiles.push_back(std::move(f));
  }
  local.indptr.assign(n + 1, 0);
  // At most every in-edge of the held vertices (all of them where every
  // source is held): reserved, so the array is not grown by doubling.
  int64_t mostEdges = 0;
  for (auto [first, last] : runs)
    mostEdges += indptr[last + 1] - indptr[first];
  local.indices.reserve(static_cast<size_t>(mostEdges));
  // Each run in blocks of vertices with at most kBlockEdges in-edges
  // (one vertex with more alone): a block's sources are the only copy
  // beside the edges kept.
  constexpr int64_t kBlockEdges = int64_t(1) << 22;
  std::vector<std::pair<int64_t, int64_t>> blocks;
  for (auto [first, last] : runs)
    for (int64_t g = first; g <= last;) {
      int64_t stop = g + 1;
      while (stop <= last && indptr[stop + 1] - indptr[g] <= kBlockEdges)
        ++stop;
      blocks.push_back({g, stop - 1});
      g = stop;
    }
  std::vector<int32_t> sources;
  std::vector<int64_t> kept; // positions in the block's range (edge data)
  int64_t at = 0;            // local vertices done
  for (auto [first, last] : blocks) {
    const int64_t begin = indptr[first], end = indptr[last + 1];
    if (!readNpyRows(indicesPath, "indices.npy", DType::I32, 1,
                     NpyRange{begin, end}, h, sources, error))
      return false;
    kept.clear();
    for (int64_t g = first; g <= last; ++g, ++at) {
      for (int64_t e = indptr[g]; e < indptr[g + 1]; ++e) {
        const int32_t u = sources[e - begin];
        if (u < 0 || u >= V) {
          error = "indices.npy: vertex id " + std::to_string(u) +
                  " out of range [0, " + std::to_string(V) + ")";
          return false;
        }
        if (rows || localId[u] >= 0) {
          local.indices.push_back(rows ? u : localId[u]);
          if (!edgeFiles.empty())
            kept.push_back(e - begin);
        }
      }
      local.indptr[at + 1] = static_cast<int64_t>(local.indices.size());
    }
    for (EdgeFile &f : edgeFiles) {
      EdgeData &d = local.edgeData[f.name];
      const std::string file = "edge_" + f.name + ".npy";
      const int dims = static_cast<int>(f.header.shape.size());
      if (d.isInt) {
        std::vector<int32_t> values;
        if (!readNpyRows(f.path, file, DType::I32, dims, NpyRange{begin, end},
                         f.header, values, error))
          return false;
        for (int64_t k : kept)
          d.i32.push_back(values[k]);
        continue;
      }
      std::vector<float> values;
      if (!readNpyRows(f.path, file, DType::F32, dims, NpyRange{begin, end},
                       f.header, values, error))
        return false;
      for (int64_t k : kept)
        for (int64_t c = 0; c < d.width; ++c) {
          const float x = values[k * d.width + c];
          if (!std::isfinite(x)) {
            error = file + ": NaN or Inf";
            return false;
          }
          d.f32.push_back(x);
        }
    }
  }
  local.numEdges = static_cast<int64_t>(local.indices.size());
  if (rows)
    local.numSources = V;
  const int64_t actual[3] = {V, E, F};
  return checkMetaCounts(counts, actual, error);
}

bool gnnrt::loadPreloadPart(const std::string &dir, int rank, int size,
                            int64_t hops, const PreloadSampling &sampling,
                            Dataset &local, PreloadPart &part, FullGraph &full,
                            std::string &error, FeaturesOnStorage *onStorage) {
  return loadPart(dir, rank, size, hops, sampling, /*rows=*/false, nullptr,
                  local, part, full, error, /*readFeatures=*/true, onStorage);
}

bool gnnrt::loadRowPart(const std::string &dir, VertexRange inner,
                        Dataset &local, PreloadPart &part, FullGraph &full,
                        std::string &error, bool features) {
  // Rank 0 of 1's range: every vertex.
  assert((inner.end >= 0 || inner.begin == 0) && "every vertex is [0, -1)");
  return loadPart(dir, 0, 1, /*hops=*/0, PreloadSampling(), /*rows=*/true,
                  inner.end < 0 ? nullptr : &inner, local, part, full, error,
                  features);
}

bool gnnrt::readGraphOffsets(const std::string &dir,
                             std::vector<int64_t> &indptr, std::string &error) {
  NpyHeader h;
  if (!readNpy(datasetFile(dir, "indptr.npy"), "indptr.npy", DType::I64, 1, h,
               indptr, error))
    return false;
  std::vector<int32_t> none;
  if (!readNpyRows(datasetFile(dir, "indices.npy"), "indices.npy", DType::I32,
                   1, NpyRange{0, 0}, h, none, error))
    return false;
  return checkIndptr(indptr, h.shape[0], error);
}

/// The block `range` of features.npy, whose rows must number `numVertices`,
/// checked as loadDataset checks the features.
static bool loadFeatureBlock(const std::string &dir, int64_t numVertices,
                             NpyRange range, std::vector<float> &block,
                             int64_t &total, std::string &error) {
  const std::string path = datasetFile(dir, "features.npy");
  NpyHeader h;
  if (!readNpyRows(path, "features.npy", DType::F32, 2, NpyRange{0, 0}, h,
                   block, error))
    return false;
  if (!checkLength("features.npy", h.shape[0], numVertices,
                   "the number of vertices (indptr.npy)", error))
    return false;
  total = h.shape[1];
  if (!readNpyRows(path, "features.npy", DType::F32, 2, range, h, block, error))
    return false;
  const int64_t width = std::max<int64_t>(
      (range.colEnd < 0 ? total : range.colEnd) - range.colBegin, 1);
  for (size_t i = 0; i < block.size(); ++i)
    if (!std::isfinite(block[i])) {
      error = "features.npy: NaN or Inf (row " +
              std::to_string(range.begin + static_cast<int64_t>(i) / width) +
              ")";
      return false;
    }
  return true;
}

bool gnnrt::loadFeatureColumns(const std::string &dir, int64_t numVertices,
                               int64_t begin, int64_t end,
                               std::vector<float> &columns, int64_t &total,
                               std::string &error) {
  return loadFeatureBlock(dir, numVertices,
                          NpyRange{0, numVertices, begin, end}, columns, total,
                          error);
}

bool gnnrt::loadFeatureRows(const std::string &dir, int64_t numVertices,
                            int64_t begin, int64_t end,
                            std::vector<float> &rows, int64_t &total,
                            std::string &error) {
  return loadFeatureBlock(dir, numVertices, NpyRange{begin, end}, rows, total,
                          error);
}
