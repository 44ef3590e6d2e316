//===- LayerwiseEval.cpp - mini-batch training's layer-wise evaluation ----===//
//
// PyG's and DGL's `inference` (docs/MiniBatch.md, "Layer-wise evaluation"):
// the evaluation split at its levels by gnn-compile (--gnn-split-eval-levels)
// runs one level at a time over every vertex, each level in batches of
// destinations with their 1-hop in-neighbourhoods (fanout -1: the whole
// graph's values), reading the lower levels' values (cuts) that the driver
// holds for every vertex between the levels. A batch then costs about one
// layer's work on its destinations, where a batch of full L-hop
// neighbourhoods costs about the whole graph's on a power-law graph.
//
//===----------------------------------------------------------------------===//

#include "MiniBatch.h"

#include "Programs.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>

using namespace gnnrt;

namespace {

/// `a` times `b`, INT64_MAX where it overflows.
int64_t times(int64_t a, int64_t b) {
  int64_t n;
  return __builtin_mul_overflow(a, b, &n) ? INT64_MAX : n;
}

/// Floats per row of a cut of width `w` (F and C terms: ModelInfo.cpp) on
/// `ds`'s widths.
int64_t floatsPerRow(const BufferInfo &w, const Dataset &ds) {
  int64_t n = w.factor;
  for (const auto &[term, k] : w.terms)
    n = times(n, term == BufferInfo::F ? ds.numFeatures : ds.numClasses);
  return n;
}

} // namespace

bool MiniBatchTraining::layerwiseAuto(const Program &program) const {
  return layerwise == Layerwise::Auto && program.evalLevel &&
         !evalModel.levels.empty();
}

int64_t MiniBatchTraining::cutBytes() const {
  int64_t bytes = 0;
  for (const auto &[k, width] : evalModel.cutWidths) {
    const int64_t cut =
        times(times(full.numVertices, floatsPerRow(width, full)), 4);
    bytes = cut > INT64_MAX - bytes ? INT64_MAX : bytes + cut;
  }
  return bytes;
}

void MiniBatchTraining::startLevelSampler() {
  if (!levelSampler)
    levelSampler = std::make_unique<NeighborSampler>(
        full.indptr.data(), full.indices.data(), full.numVertices,
        std::vector<int64_t>{-1}, seed);
}

bool MiniBatchTraining::cutsFit() {
  // The cuts beside each level's batch of the vertex with the most
  // in-edges alone (the least a level's batches need at once).
  if (full.numVertices == 0)
    return true;
  startLevelSampler();
  const SampledBatch alone = levelSampler->sample({hubVertex()}, 0);
  int64_t most = 0;
  for (int64_t l = 1; l <= static_cast<int64_t>(evalModel.levels.size()); ++l) {
    const int64_t need = levelBatchBytes(l, alone);
    if (need < 0)
      return false;
    most = std::max(most, need);
  }
  return cutBytes() + most <= partsLeft;
}

int64_t MiniBatchTraining::levelBatchBytes(int64_t l,
                                           const SampledBatch &batch) const {
  // The level's own buffers, by the evaluation model's other records.
  const Dataset ds = sizes(batch);
  int64_t need = unitBytes(ds, sampledBytes(batch), /*nextRows=*/true,
                           &levelEvalModels.at(l - 1));
  if (need < 0)
    return need;
  // Only the first level reads the features' rows (unitBytes counts them
  // bound, and read for the next batch).
  if (l > 1)
    need -= 2 * ds.numVertices * ds.numFeatures * 4;
  // The cuts it reads, at its rows.
  for (int64_t k : evalModel.levels[l - 1].inputs)
    need += ds.numVertices * floatsPerRow(evalModel.cutWidths.at(k), full) * 4;
  return need;
}

MiniBatchTraining::Evaluation
MiniBatchTraining::evaluateLayerwise(gnnrtContext *ctx, const Program &program,
                                     bool predict, bool wantLoss) {
  const std::vector<ModelInfo::Level> &levels = evalModel.levels;
  const int64_t L = static_cast<int64_t>(levels.size());
  const int64_t V = full.numVertices;
  if (!program.evalLevel || L == 0)
    fatal("--layerwise-eval: the executable holds no levels of its "
          "evaluation (gnn-compile --eval-levels; its --remarks say why a "
          "model's evaluation is not split)");
  if (cutBytes() == INT64_MAX)
    fatal("layer-wise evaluation: the values held between the levels "
          "overflow 64 bits (a corrupt model description?)");
  // The step's buffers are a batch's: freed, and so is the batches'
  // features buffer.
  freeBatchState(ctx);
  startLevelSampler();
  BatchedEvaluation run(*this, ctx, predict);
  // The cuts, every vertex's rows, each freed after the last level that
  // reads it.
  std::map<int64_t, std::vector<float>> cuts;
  std::map<int64_t, int64_t> widths, lastReader;
  for (const auto &[k, width] : evalModel.cutWidths)
    widths[k] = floatsPerRow(width, full);
  for (int64_t l = 1; l <= L; ++l)
    for (int64_t k : levels[l - 1].inputs)
      lastReader[k] = l;
  int64_t heldCuts = 0;
  // On several processes (data parallel) process r evaluates its range of
  // each level's vertices; the cuts are summed over them after it.
  const int size = ctx->comm->size();
  const std::vector<float> none;
  for (int64_t l = 1; l <= L; ++l) {
    const ModelInfo::Level &level = levels[l - 1];
    // Each level numbers its slots on its own: the last level's buffers
    // and features buffer go (levelBatchBytes counts this level's alone).
    if (l > 1)
      freeBatchState(ctx);
    for (int64_t k : level.outputs) {
      cuts[k].assign(V * widths.at(k), 0.0f);
      heldCuts += V * widths.at(k) * 4;
    }
    // A level's batches, each its destinations' rows.
    auto evaluateBatch = [&](SampledBatch batch,
                             const std::vector<int64_t> &batchSeeds) {
      const int64_t count = static_cast<int64_t>(batchSeeds.size());
      const int64_t b = batchSeeds.front();
      Dataset ds = batchSubgraph(full, batch, nullptr, /*features=*/false);
      batch = SampledBatch();
      if (l == 1)
        fillRows(ds);
      // The cuts the level reads, at the block's rows.
      const int64_t n = ds.numVertices;
      ctx->levelInputs.clear();
      for (int64_t k : level.inputs) {
        const int64_t w = widths.at(k);
        if (static_cast<size_t>(k) >= ctx->levelInputs.size())
          ctx->levelInputs.resize(k + 1);
        auto rows = std::make_unique<Buffer>(*ctx->device, n * w);
        const float *from = cuts.at(k).data();
        for (int64_t i = 0; i < n; ++i)
          std::memcpy(rows->data + i * w, from + ds.vertexIds[i] * w,
                      w * sizeof(float));
        ctx->levelInputs[k] = std::move(rows);
      }
      bindEvaluationBatch(ctx, std::move(ds), batchSeeds,
                          l == 1 ? nullptr : &none);
      ctx->levelOutputs.clear();
      const float loss = program.evalLevel(ctx, l);
      if (l == L)
        run.add(loss, batchSeeds);
      // Its destinations' rows of the cuts it leaves.
      for (int64_t k : level.outputs) {
        const int64_t w = widths.at(k);
        if (static_cast<size_t>(k) >= ctx->levelOutputs.size() ||
            !ctx->levelOutputs[k].first || ctx->levelOutputs[k].second != w)
          fatal("layer-wise evaluation: level " + std::to_string(l) +
                " did not leave cut " + std::to_string(k) + " of " +
                std::to_string(w) + " floats a row");
        std::vector<char> staging;
        const auto *rows = static_cast<const float *>(ctx->device->hostView(
            ctx->levelOutputs[k].first, count * w * 4, staging));
        std::memcpy(cuts[k].data() + b * w, rows, count * w * sizeof(float));
      }
      ctx->levelInputs.clear();
      ++levelBatches;
    };
    const int64_t largest = forEachEvaluationBatch(
        ctx, *levelSampler,
        [&](const SampledBatch &batch) {
          return levelBatchBytes(l, batch) + heldCuts;
        },
        [&](int64_t b, const SampledBatch &batch, int64_t need) {
          fatal("--mem-budget " + formatBytes(partsBudget) + ": level " +
                std::to_string(l) + " of vertex " + std::to_string(b) +
                " alone needs " + formatBytes(need) +
                " (its in-neighbourhood: " +
                std::to_string(batch.inputVertices().size()) +
                " rows; the values held between the levels: " +
                formatBytes(heldCuts) + ") but the budget leaves " +
                formatBytes(partsLeft) + "; raise --mem-budget");
        },
        evaluateBatch);
    largestLevelBatch = std::max(largestLevelBatch, largest);
    // Each process wrote its batches' rows; the others' are zero. Summed
    // in pieces of 1 MiB: the reduction's own buffers (MPI's) stay small
    // beside the budget.
    constexpr int64_t kPiece = int64_t{1} << 18;
    if (size > 1)
      for (int64_t k : level.outputs)
        for (int64_t at = 0; at < static_cast<int64_t>(cuts[k].size());
             at += kPiece)
          ctx->comm->allReduce(
              cuts[k].data() + at, cuts[k].data() + at,
              std::min<int64_t>(kPiece,
                                static_cast<int64_t>(cuts[k].size()) - at),
              ReduceOp::Sum);
    for (int64_t k : level.inputs)
      if (lastReader[k] == l) {
        heldCuts -= static_cast<int64_t>(cuts[k].size()) * 4;
        std::vector<float>().swap(cuts[k]);
      }
  }
  ctx->levelOutputs.clear(); // pointers into the slots
  ++layerwiseEvaluations;
  return run.finish(wantLoss);
}
