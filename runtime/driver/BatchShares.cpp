//===- BatchShares.cpp - a batch's shares across processes ----------------===//
//
// MiniBatch.h: how a sampled batch is shared across processes. P³'s shares
// (prepareShares: each process's seeds' subgraph with the whole batch's
// graph beside it; the feature columns; the structure partitioned by hash)
// and co-batches' rows (coBatchRows: one co-batch split by level bands),
// and the datasets feature pulling and P³ sample from.
//
//===----------------------------------------------------------------------===//

#include "MiniBatch.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <utility>

using namespace gnnrt;

void MiniBatchTraining::useFeatureColumns(const gnnrtContext *ctx,
                                          Dataset own) {
  columns.on = true;
  std::vector<float>().swap(own.features); // full's, bound by bindFull
  columns.own = std::move(own);
  columns.rowStarts = ctx->rowStarts;
  for (int i = 0; i < 2; ++i)
    columns.degrees[i] = ctx->fullDegree[i];
  std::copy(ctx->lossCount, ctx->lossCount + 3, columns.lossCount);
}

MiniBatchTraining::Prepared
MiniBatchTraining::prepareShares(const SampledBatch &batch, int rank,
                                 int size) const {
  Prepared p;
  const int64_t b = static_cast<int64_t>(batch.seeds.size());
  std::vector<Dataset> shares(size);
  std::vector<std::array<std::vector<float>, 2>> degrees(size);
  p.starts.assign(1, 0);
  for (int s = 0; s < size; ++s) {
    shares[s] =
        batchSubgraph(full, seedShare(batch, b * s / size, b * (s + 1) / size,
                                      degrees[s].data()));
    p.starts.push_back(p.starts.back() + shares[s].numVertices);
    p.levels.push_back(shares[s].levelRows);
  }
  // Each share row's place in the whole graph, by level band
  // (forEachShareRun), and the share row at each place.
  const int64_t total = p.starts.back();
  std::vector<std::vector<int32_t>> at(size);
  std::vector<std::pair<int, int64_t>> rowAt(total, {-1, 0});
  for (int s = 0; s < size; ++s) {
    at[s].assign(shares[s].numVertices, -1);
    forEachShareRun(p.levels, s, shares[s].numVertices,
                    [&](int64_t row, int64_t whole, int64_t count) {
                      for (int64_t i = 0; i < count; ++i) {
                        at[s][row + i] = static_cast<int32_t>(whole + i);
                        rowAt[whole + i] = {s, row + i};
                      }
                    });
  }
  for (const auto &[s, row] : rowAt)
    if (s < 0)
      fatal("P³: a batch's shares do not cover their whole graph");
  Dataset &world = p.world;
  world.name = full.name;
  world.numFeatures = full.numFeatures;
  world.numClasses = full.numClasses;
  world.numVertices = total;
  const int64_t F = full.numFeatures;
  world.indptr.assign(1, 0);
  world.features.resize(total * F);
  for (int i = 0; i < 2; ++i)
    p.worldDegrees[i].resize(total);
  for (int64_t w = 0; w < total; ++w) {
    const auto [s, row] = rowAt[w];
    const Dataset &share = shares[s];
    // `at` keeps a share's order, so each row's sources stay ascending.
    for (int64_t e = share.indptr[row]; e < share.indptr[row + 1]; ++e)
      world.indices.push_back(at[s][share.indices[e]]);
    world.indptr.push_back(static_cast<int64_t>(world.indices.size()));
    std::copy(share.features.begin() + row * F,
              share.features.begin() + (row + 1) * F,
              world.features.begin() + w * F);
    for (int i = 0; i < 2; ++i)
      p.worldDegrees[i][w] = degrees[s][i][row];
  }
  world.numEdges = static_cast<int64_t>(world.indices.size());
  // The own rows read the whole graph's rows (their sources are its ids)
  // and every share's features (layer 1 runs on all of them).
  p.ds = std::move(shares[rank]);
  for (int32_t &u : p.ds.indices)
    u = at[rank][u];
  p.degrees[0] = std::move(degrees[rank][0]);
  p.degrees[1] = std::move(degrees[rank][1]);
  p.ds.numSources = total;
  p.ds.features = std::move(world.features); // the whole graph binds none
  return p;
}

void MiniBatchTraining::useHashStructure(gnnrtContext *ctx, std::string data) {
  if (!columns.on)
    fatal("--structure hash partitions P³'s graph structure: it needs "
          "--partition features");
  if (sampler->isExpansionAware())
    fatal("--structure hash samples each hop with --fanouts; expansion-aware "
          "sampling (--preload-hops, --preload-fanout) reads the whole "
          "structure");
  const auto start = std::chrono::steady_clock::now();
  shard = std::make_unique<StructureShard>(
      full.indptr.data(), full.indices.data(), full.numVertices,
      ctx->comm->rank(), ctx->comm->size());
  shardSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  // Every process splits (a collective), or none does: they agree.
  int64_t concurrent = ctx->comm->concurrentThreads() ? 1 : 0;
  ctx->comm->allReduce(&concurrent, &concurrent, 1, ReduceOp::Min);
  if (concurrent)
    samplerComm = ctx->comm->split(0, ctx->comm->rank());
  sampler->useShard(shard.get(),
                    samplerComm ? samplerComm.get() : ctx->comm.get());
  // The sampler reads the shard alone from now on.
  std::vector<int64_t>().swap(full.indptr);
  std::vector<int32_t>().swap(full.indices);
  shardData = std::move(data);
}

std::string MiniBatchTraining::structureJson() const {
  if (!shard)
    return "{\"partition\": \"replicated\"}";
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.6g", shardSeconds);
  return "{\"partition\": \"hash\", \"held_vertices\": " +
         std::to_string(shard->numVertices()) +
         ", \"held_edges\": " + std::to_string(shard->numEdges()) +
         ", \"held_bytes\": " + std::to_string(shard->bytes()) +
         ", \"pushed_bytes\": " + std::to_string(sampler->pushedValues() * 8) +
         ", \"pushes\": " + std::to_string(sampler->pushCalls()) +
         ", \"sampling_thread\": \"" +
         (sampleOnTrainingThread() ? "training" : "sampler") + "\"" +
         ", \"whole_graph_reads\": " + std::to_string(wholeGraphReads) +
         ", \"partition_seconds\": " + seconds + "}";
}

Dataset gnnrt::coBatchRows(const Dataset &batch, int rank, int size,
                           std::vector<int64_t> &starts,
                           std::vector<std::vector<int64_t>> &rowLevels,
                           std::vector<float> degrees[2],
                           const std::vector<float> *batchDegrees) {
  const int64_t n = batch.numVertices;
  const std::vector<int64_t> levels =
      batch.levelRows.empty() ? std::vector<int64_t>{n} : batch.levelRows;
  const size_t bands = levels.size();
  auto levelEnd = [&](size_t b) { return b < bands ? levels[b] : 0; };
  // The co-batch's rows (batch rows) process by process, each process's
  // slice of each band from the highest level down.
  std::vector<int64_t> order;
  order.reserve(n);
  starts.assign(1, 0);
  rowLevels.assign(size, std::vector<int64_t>(bands, 0));
  for (int r = 0; r < size; ++r) {
    for (size_t b = bands; b-- > 0;) {
      const int64_t lo = levelEnd(b + 1), length = levelEnd(b) - lo;
      const int64_t first = lo + length * r / size,
                    last = lo + length * (r + 1) / size;
      for (int64_t v = first; v < last; ++v)
        order.push_back(v);
      // Level b's rows of process r: its slices of bands b and above.
      rowLevels[r][b] =
          last - first + (b + 1 < bands ? rowLevels[r][b + 1] : 0);
    }
    starts.push_back(static_cast<int64_t>(order.size()));
  }
  if (static_cast<int64_t>(order.size()) != n)
    fatal("a co-batch's level bands do not cover its " + std::to_string(n) +
          " rows");
  std::vector<int32_t> at(n);
  for (int64_t i = 0; i < n; ++i)
    at[order[i]] = static_cast<int32_t>(i);
  const int64_t begin = starts[rank], end = starts[rank + 1];
  Dataset own;
  own.name = batch.name;
  own.source = batch.source;
  own.directed = batch.directed;
  own.selfLoops = batch.selfLoops;
  own.numVertices = end - begin;
  own.numSources = n;
  own.numFeatures = batch.numFeatures;
  own.numClasses = batch.numClasses;
  own.levelRows = rowLevels[rank];
  const int64_t F = batch.numFeatures;
  std::vector<int64_t> positions;
  std::vector<std::pair<int32_t, int64_t>> edges; // a row's (source, edge)
  own.indptr.assign(1, 0);
  for (int64_t i = begin; i < end; ++i) {
    const int64_t v = order[i];
    edges.clear();
    for (int64_t e = batch.indptr[v]; e < batch.indptr[v + 1]; ++e)
      edges.push_back({at[batch.indices[e]], e});
    std::sort(edges.begin(), edges.end());
    for (const auto &[u, e] : edges) {
      own.indices.push_back(u);
      positions.push_back(e);
    }
    own.indptr.push_back(static_cast<int64_t>(own.indices.size()));
    own.features.insert(own.features.end(), batch.features.begin() + v * F,
                        batch.features.begin() + (v + 1) * F);
    own.labels.push_back(batch.labels[v]);
    for (int m = 0; m < 3; ++m)
      own.masks[m].push_back(batch.masks[m][v]);
  }
  own.numEdges = static_cast<int64_t>(own.indices.size());
  own.edgeData = selectEdgeData(batch.edgeData, positions);
  // The co-batch's degrees of the own rows (a source's out-edges reach
  // every process's rows), or the larger batch's.
  std::vector<float> in(n), out(n, 0.0f);
  if (batchDegrees) {
    in = batchDegrees[0];
    out = batchDegrees[1];
  } else {
    for (int64_t v = 0; v < n; ++v)
      in[v] = static_cast<float>(batch.indptr[v + 1] - batch.indptr[v]);
    for (int32_t u : batch.indices)
      out[u] += 1.0f;
  }
  if (static_cast<int64_t>(in.size()) != n ||
      static_cast<int64_t>(out.size()) != n)
    fatal("a co-batch's degrees are not its " + std::to_string(n) + " rows'");
  degrees[0].resize(own.numVertices);
  degrees[1].resize(own.numVertices);
  for (int64_t i = begin; i < end; ++i) {
    degrees[0][i - begin] = in[order[i]];
    degrees[1][i - begin] = out[order[i]];
  }
  return own;
}

/// Every vertex of the dataset `data` with its labels, masks and edges but
/// no feature (the batches of feature pulling and P³ are sampled from it);
/// `full` its sizes and split counts.
static Dataset loadStructureForBatches(const std::string &data,
                                       FullGraph &full) {
  Dataset ds;
  PreloadPart everything;
  std::string error;
  if (!loadRowPart(data, {0, -1}, ds, everything, full, error,
                   /*features=*/false))
    fatal(data + "/" + error);
  ds.numSources = -1;
  return ds;
}

Dataset gnnrt::loadFeatureRowsForBatches(const std::string &data, int rank,
                                         int size, int copies, FullGraph &full,
                                         FeatureRows &rows) {
  if (copies < 1 || size % copies != 0)
    fatal("--feature-copies " + std::to_string(copies) +
          ": the copies must divide the " + std::to_string(size) +
          " processes (each copy of the features is split over size / "
          "copies of them)");
  Dataset ds = loadStructureForBatches(data, full);
  std::string error;
  const int groups = size / copies, range = rank % groups;
  rows.copies = copies;
  rows.starts = equalVertexSplit(full.numVertices, groups);
  int64_t total = 0;
  if (!loadFeatureRows(data, full.numVertices, rows.starts[range],
                       rows.starts[range + 1], rows.own, total, error))
    fatal(data + "/" + error);
  return ds;
}

Dataset gnnrt::loadFeatureColumnsForBatches(
    gnnrtContext *ctx, const std::string &data, const std::string &rowSplit,
    RowParts &rowParts, PreloadPart &part, FullGraph &full, Dataset &whole) {
  if (rowSplit == "roc")
    fatal("--row-split roc repartitions full-graph training's rows; P³'s "
          "batches are split by their seeds");
  loadFeatureParts(ctx, data, rowSplit, rowParts, part, full, whole);
  ctx->rowStarts = rowParts.starts;
  std::copy(full.labelled, full.labelled + 3, ctx->lossCount);
  ctx->fullDegree[0] = std::move(part.inDegree);
  ctx->fullDegree[1] = std::move(part.outDegree);
  // The features: the columns ctx->ds holds.
  FullGraph counts;
  Dataset all = loadStructureForBatches(data, counts);
  all.features = ctx->ds.features;
  all.numFeatures = ctx->ds.numFeatures;
  return all;
}
