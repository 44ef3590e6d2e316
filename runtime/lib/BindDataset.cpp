//===- BindDataset.cpp - a loaded dataset onto the device -----------------===//
//
// What bindDataset and bindWholeGraph do between loading and training
// (Context.h): the parameters' shapes at the dataset's sizes, the checks of
// the dataset against the model, the graph's arrays (CSC, CSR, degrees) and
// the edge inputs handed to the device.
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include <string>
#include <vector>

namespace gnnrt {

bool resolveParamShapes(ModelInfo &m, const Dataset &ds, std::string &error) {
  for (ParamInfo &p : m.params) {
    p.shape.clear();
    int64_t n = 1;
    for (int64_t d : p.dims) {
      p.shape.push_back(d == -1 ? ds.numFeatures : d == -2 ? ds.numClasses : d);
      if (__builtin_mul_overflow(n, p.shape.back(), &n) ||
          n > kMaxParamElements) {
        std::string dims;
        for (size_t i = 0; i < p.dims.size(); ++i)
          dims += (i ? ", " : "") +
                  std::string(p.dims[i] == -1   ? "F="
                              : p.dims[i] == -2 ? "C="
                                                : "") +
                  std::to_string(p.dims[i] == -1   ? ds.numFeatures
                                 : p.dims[i] == -2 ? ds.numClasses
                                                   : p.dims[i]);
        error = "parameter '" + p.name + "' of shape (" + dims +
                ") has more than " + std::to_string(kMaxParamElements) +
                " elements (the most a parameter may have)";
        return false;
      }
    }
  }
  return true;
}

/// The graph's arrays of `ds` (its CSC, moved out) that a program reading
/// the arrays `need` (the graph-arrays record) runs on, but the degrees.
static GraphArrays buildGraphArrays(Dataset &ds, unsigned need) {
  const int64_t V = ds.numVertices, E = ds.numEdges;
  GraphArrays g;
  g.dstOffsets = std::move(ds.indptr);
  g.src = std::move(ds.indices);
  // Only the per-edge arrays the program reads (the model description's
  // graph-arrays record): on Reddit each is 0.46 GB.
  if (need & 2) {
    g.dst.resize(E);
    for (int64_t v = 0; v < V; ++v)
      for (int64_t e = g.dstOffsets[v]; e < g.dstOffsets[v + 1]; ++e)
        g.dst[e] = static_cast<int32_t>(v);
  }
  // The CSR over the sources: every vertex, whose rows a row-partitioned
  // program's aggregations to the source compute (partial sums).
  const int64_t S = sourcesOf(ds);
  g.srcOffsets.assign(S + 1, 0);
  for (int64_t e = 0; e < E; ++e)
    ++g.srcOffsets[g.src[e] + 1];
  for (int64_t u = 0; u < S; ++u)
    g.srcOffsets[u + 1] += g.srcOffsets[u];
  if (need & 12) {
    if (need & 4)
      g.csrEdge.resize(E);
    if (need & 8)
      g.csrDst.resize(E);
    std::vector<int64_t> fill(g.srcOffsets.begin(), g.srcOffsets.end() - 1);
    // Ascending e (destinations ascending, then CSC order within one): the
    // edges of a source in CSC order.
    for (int64_t v = 0; v < V; ++v)
      for (int64_t e = g.dstOffsets[v]; e < g.dstOffsets[v + 1]; ++e) {
        const int64_t p = fill[g.src[e]]++;
        if (need & 4)
          g.csrEdge[p] = static_cast<int32_t>(e);
        if (need & 8)
          g.csrDst[p] = static_cast<int32_t>(v);
      }
  }
  return g;
}

/// The in- and out-degrees of a graph whose sources are its destinations.
static void countDegrees(GraphArrays &g) {
  const int64_t V = static_cast<int64_t>(g.dstOffsets.size()) - 1;
  g.inDegree.resize(V);
  g.outDegree.resize(V);
  for (int64_t v = 0; v < V; ++v) {
    g.inDegree[v] = static_cast<float>(g.dstOffsets[v + 1] - g.dstOffsets[v]);
    g.outDegree[v] = static_cast<float>(g.srcOffsets[v + 1] - g.srcOffsets[v]);
  }
}

bool bindWholeGraph(gnnrtContext *ctx, Dataset &whole, std::string &error,
                    std::vector<float> *degrees, unsigned graphArrays) {
  if (sourcesOf(whole) != whole.numVertices) {
    error = "the whole graph must have every vertex as a destination";
    return false;
  }
  ctx->wholeEdges = whole.numEdges;
  GraphArrays g = buildGraphArrays(
      whole, graphArrays ? graphArrays : ctx->model.graphArrays);
  if (degrees) {
    if (static_cast<int64_t>(degrees[0].size()) != whole.numVertices ||
        static_cast<int64_t>(degrees[1].size()) != whole.numVertices) {
      error = "the whole graph's degrees do not match its vertices";
      return false;
    }
    g.inDegree = std::move(degrees[0]);
    g.outDegree = std::move(degrees[1]);
  } else {
    countDegrees(g);
  }
  ctx->device->bindGraph(std::move(g), 1);
  return true;
}

bool bindDataset(gnnrtContext *ctx, std::string &error, bool keepFeatureVector,
                 const std::vector<float> *lentFeatures, unsigned graphArrays) {
  Dataset &ds = ctx->ds;
  ModelInfo &m = ctx->model;
  ctx->checkedTypes.clear(); // the edge types bound now are new
  if (!graphArrays)
    graphArrays = m.graphArrays;
  const int64_t allFeatures =
      ctx->featureTotal >= 0 ? ctx->featureTotal : ds.numFeatures;
  if (m.featureWidth >= 0 && m.featureWidth != allFeatures) {
    error = "the model reads " + std::to_string(m.featureWidth) +
            " features per vertex but features.npy has " +
            std::to_string(allFeatures);
    return false;
  }
  if (ctx->featureTotal >= 0 && m.featureWidth >= 0 &&
      ds.numFeatures != m.featureWidth) {
    error = "feature partitioning splits the features' columns, but the "
            "model reads a fixed " +
            std::to_string(m.featureWidth) +
            " per vertex (compile it with a '?' feature width)";
    return false;
  }
  if (m.classWidth >= 0 && m.classWidth != ds.numClasses) {
    error = "the model has " + std::to_string(m.classWidth) +
            " logits but the dataset has " + std::to_string(ds.numClasses) +
            " classes (meta.json num_classes)";
    return false;
  }
  if (!resolveParamShapes(m, ds, error))
    return false;
  const int64_t V = ds.numVertices;
  // The kernels rely on the format's order (chunk tiling finds a chunk's
  // edges by binary search); the loader checks it, datasets built in memory
  // must keep it too.
  // (Out of core, the loader checked indices.npy by blocks.)
  for (int64_t v = 0; v < V && m.graphChunks == 0; ++v)
    for (int64_t e = ds.indptr[v] + 1; e < ds.indptr[v + 1]; ++e)
      if (ds.indices[e] < ds.indices[e - 1]) {
        error = "sources not ascending within destination " +
                std::to_string(v) + " (edge " + std::to_string(e) + ")";
        return false;
      }
  // The features move to a buffer of the device (on the CPU, huge pages: the
  // first layer's aggregation gathers their rows).
  // Out of core (the model's features-out-of-core record) they stay on
  // storage, read by chunks (gnnrtFeaturesChunks).
  if (m.featureChunks == 0) {
    const std::vector<float> &features =
        lentFeatures ? *lentFeatures : ds.features;
    const int64_t numFeatureValues = static_cast<int64_t>(features.size());
    // A smaller graph bound after a larger one (mini-batches) takes the
    // same buffer: no fresh pages to clear per batch.
    if (ctx->features && ctx->featuresCapacity >= numFeatureValues) {
      ctx->features->size = numFeatureValues;
    } else {
      ctx->features.reset();
      ctx->features = std::make_unique<Buffer>(*ctx->device, numFeatureValues);
      ctx->featuresCapacity = numFeatureValues;
    }
    ctx->device->copy(ctx->features->data, MemoryTier::Device, features.data(),
                      MemoryTier::Host,
                      numFeatureValues * static_cast<int64_t>(sizeof(float)));
    if (keepFeatureVector)
      ds.features.clear();
    else
      std::vector<float>().swap(ds.features);
  } else if (ctx->featuresFile.fd < 0) {
    error = "the model reads its features out of core but features.npy was "
            "loaded into memory";
    return false;
  }
  // The CSC comes from the dataset; the CSR, the destinations and the
  // degrees are built here. The device takes all of them over.
  const int64_t S = sourcesOf(ds);
  GraphArrays g;
  if (m.graphChunks > 0) {
    // Out of core: the offsets in memory, the per-edge arrays read by
    // windows (GraphOnStorage.h), the CSR written to the spill file here.
    if (ctx->indicesFile.fd < 0 || !ctx->spill) {
      error = "the model reads its graph out of core but indices.npy was "
              "loaded into memory (or no spill file is open)";
      return false;
    }
    // Blocks of the CSR as large as the largest window: the start-up
    // takes no more memory than the windows will.
    const int64_t blockEdges =
        GraphOnStorage::buildBlockEdges(GraphOnStorage::mostChunkEdges(
            ds.indptr, ctx->indicesFile.srcOffsets, m.graphChunks));
    ctx->graphOnStorage =
        GraphOnStorage::create(ctx->indicesFile, ds.indptr, graphArrays,
                               ctx->spill->file(), error, blockEdges);
    if (!ctx->graphOnStorage)
      return false;
    g.dstOffsets = std::move(ds.indptr);
    g.srcOffsets = ctx->graphOnStorage->takeSourceOffsets();
    g.edgesOnStorage = ds.numEdges;
  } else {
    g = buildGraphArrays(ds, graphArrays);
  }
  if (static_cast<int64_t>(ctx->fullDegree[0].size()) == V &&
      static_cast<int64_t>(ctx->fullDegree[1].size()) == V) {
    // A rank's closure of a larger graph (Preload.h).
    g.inDegree = std::move(ctx->fullDegree[0]);
    g.outDegree = std::move(ctx->fullDegree[1]);
  } else {
    if (S != V) {
      error = "a row-partitioned graph needs the full graph's degrees";
      return false;
    }
    countDegrees(g);
  }
  ctx->device->bindGraph(std::move(g));
  // A part of the graph: its rows' global ids, for the dropouts of a program
  // that is not partitioned (a partitioned one numbers its rows itself).
  ctx->vertexIds.clear();
  ctx->vertexIdsOnDevice.reset();
  if (m.partition == "none" && !ds.vertexIds.empty()) {
    if (static_cast<int64_t>(ds.vertexIds.size()) != V) {
      error = "the graph's vertex ids disagree with its vertices";
      return false;
    }
    ctx->vertexIds.assign(ds.vertexIds.begin(), ds.vertexIds.end());
  }
  // The windows read the device's offsets (kept for the run), not copies.
  if (ctx->graphOnStorage)
    ctx->graphOnStorage->useOffsets(ctx->device->graph().offsets[0],
                                    ctx->device->graph().offsets[1]);
  std::vector<EdgeInputArrays> edgeInputs;
  for (const EdgeInputInfo &in : m.edgeInputs) {
    auto it = ds.edgeData.find(in.name);
    if (it == ds.edgeData.end()) {
      error = "the model reads edge data '" + in.name +
              "' but the dataset has no edge_" + in.name + ".npy";
      return false;
    }
    const EdgeData &ed = it->second;
    if (in.isInt != ed.isInt) {
      error = "edge_" + in.name + ".npy: the model reads " +
              (in.isInt ? "int32" : "float32") + " edge data";
      return false;
    }
    if (!in.isInt && ed.width != in.width) {
      error = "edge_" + in.name + ".npy: rows of width " +
              std::to_string(ed.width) + " but the model reads " +
              std::to_string(in.width);
      return false;
    }
    edgeInputs.push_back({ed.f32, ed.i32});
  }
  ctx->device->bindEdgeData(std::move(edgeInputs));
  return true;
}

} // namespace gnnrt
