//===- StoredFeatures.cpp - mini-batches with the features on storage -----===//
//
// Mini-batch training with the features left in features.npy
// (--features-on-storage, docs/MiniBatch.md): each batch's input rows are
// read by ranged reads as the batch is sampled, and an evaluation runs in
// batches of every vertex's full in-neighbourhood (the whole graph's
// values, exactly) instead of on the whole graph, whose features would not
// fit. The structure, labels and masks stay in memory (the sampler reads
// them). The evaluations of mini-batch training that do not run on the
// whole graph bound as a batch: a planned one (evaluateWhole under the
// plan), and one under --mem-budget without a plan (the whole graph where
// it fits, else the batches above with the rows from memory).
//
//===----------------------------------------------------------------------===//

#include "MiniBatch.h"

#include "Memory.h"
#include "Programs.h"
#include "Summary.h"

#include <algorithm>
#include <functional>
#include <malloc.h>
#include <numeric>

using namespace gnnrt;

void MiniBatchTraining::useFeaturesOnStorage(const FeaturesOnStorage *file,
                                             int64_t evalBatch) {
  storedFeatures = file;
  evalBatchSize = evalBatch > 0 ? evalBatch : batchSize;
  evalBatchGiven = evalBatch > 0;
}

void MiniBatchTraining::readBatchRows(Dataset &ds) {
  const int64_t n = ds.numVertices, F = full.numFeatures;
  ds.features.resize(static_cast<size_t>(n * F));
  StoredReads counts;
  std::string error;
  if (!readStoredRows(*storedFeatures, F, ds.vertexIds, ds.features.data(),
                      counts, error))
    fatal("--features-on-storage: " + error);
  storedBytes += counts.bytes;
  storedReads += counts.reads;
}

void MiniBatchTraining::usePlannedEvaluation(const ModelInfo &evaluation) {
  plannedEval = true;
  evalModel = evaluation;
}

void MiniBatchTraining::bindWholeLent(gnnrtContext *ctx, bool features) {
  // The sampler's CSC moved in where the device's memory is the host's (the
  // device takes it over and takeBackLent has it back: one copy of the
  // graph, which the plan counts, not two); the features copied by the
  // device from the sampler's (no host copy beside them); the rest copied.
  lent = ctx->device->deviceMemoryIsHostMemory();
  std::vector<float> kept = std::move(full.features);
  if (lent) {
    std::vector<int64_t> indptr = std::move(full.indptr);
    std::vector<int32_t> indices = std::move(full.indices);
    ctx->ds = full;
    ctx->ds.indptr = std::move(indptr);
    ctx->ds.indices = std::move(indices);
    lentOffsets = ctx->ds.indptr.data();
    lentSources = ctx->ds.indices.data();
  } else {
    ctx->ds = full;
  }
  full.features = std::move(kept);
  std::string error;
  const std::vector<float> none;
  if (!bindDataset(ctx, error, /*keepFeatureVector=*/false,
                   features ? &full.features : &none))
    fatal("the whole graph: " + error);
  batchBound = true; // not a batch's, but not the step's binding either
}

void MiniBatchTraining::takeBackLent(gnnrtContext *ctx) {
  // At the addresses the sampler reads (the next batch binds a graph of
  // its own).
  if (lent &&
      (!ctx->device->returnGraph(full.indptr, full.indices) ||
       full.indptr.data() != lentOffsets || full.indices.data() != lentSources))
    fatal("the whole graph: the device did not give the sampler's graph "
          "back");
  lent = false;
}

void MiniBatchTraining::freeSlots(gnnrtContext *ctx) {
  gnnrtDropAll(ctx);
  for (size_t slot = 0; slot < ctx->buffers.size(); ++slot)
    if (ctx->spill && ctx->buffers[slot] &&
        ctx->spill->isSource(static_cast<int64_t>(slot)))
      ctx->spill->forgetChunks(static_cast<int64_t>(slot), *ctx->device,
                               *ctx->buffers[slot]);
  ctx->buffers.clear();
}

void MiniBatchTraining::freeBatchState(gnnrtContext *ctx) {
  freeSlots(ctx);
  ctx->features.reset();
  ctx->featuresCapacity = 0;
  malloc_trim(0);
}

MiniBatchTraining::Evaluation
MiniBatchTraining::evaluateWhole(gnnrtContext *ctx, const Program &program,
                                 bool predict) {
  // The step's buffers are a batch's: freed, and so is the batches'
  // features buffer (the plan reads the features by chunks or binds the
  // whole graph's).
  freeBatchState(ctx);
  // (The step's model as bound: its parameters' shapes resolved.) The
  // evaluation's program binds with its own (the plan's, or the whole
  // graph's program beside the blocks' step).
  stepModel = ctx->model;
  ctx->model = evalModel;
  const bool headroom = std::exchange(ctx->slotHeadroom, false);
  ctx->rowStarts.clear();
  ctx->rowLevels.clear();
  ctx->lossCount[0] = ctx->lossCount[1] = ctx->lossCount[2] = -1;
  bindWholeLent(ctx);
  ctx->training = false;
  Evaluation e;
  e.loss = program.eval(ctx);
  // Data parallel: every process evaluates the whole graph (the counts
  // summed over them, as without a plan).
  splitAccuracies(ctx, e.acc);
  if (predict)
    e.predictions = predictions(ctx);
  takeBackLent(ctx);
  // Its buffers and copies dropped, and the features' read-only slot
  // forgotten: the step numbers its slots on its own.
  freeSlots(ctx);
  ctx->model = stepModel;
  ctx->slotHeadroom = headroom;
  ++wholeEvaluations;
  return e;
}

int64_t MiniBatchTraining::wholeBytes() const {
  // Bound whole (bindWholeLent): the graph and the features lent, the
  // rest of the dataset copied (unitBytes' host copies).
  Dataset ds;
  ds.numVertices = full.numVertices;
  ds.numEdges = full.numEdges;
  ds.numFeatures = full.numFeatures;
  ds.numClasses = full.numClasses;
  return unitBytes(ds, 0, /*nextRows=*/false, &evalModel);
}

bool MiniBatchTraining::wholeFits() const {
  const int64_t need = wholeBytes();
  return need >= 0 && need <= partsLeft;
}

bool MiniBatchTraining::layerwiseStored(gnnrtContext *ctx,
                                        const Program &program) {
  // The features on storage: layer-wise (level 1 reads its batches' rows
  // from features.npy) where its cuts fit in what the budget leaves, or
  // without a budget in half of what the machine has; every process the
  // same way.
  if (!layerwiseAuto(program))
    return false; // the same on every process
  int64_t layered = 0;
  if (partsLeft > 0) {
    layered = cutsFit();
  } else {
    // Every process holds the cuts (those on one machine share it).
    const AvailableMemory avail = availableMemory();
    layered =
        !avail.known() || cutBytes() <= avail.bytes / 2 / ctx->comm->size();
  }
  if (ctx->comm->size() > 1)
    ctx->comm->allReduce(&layered, &layered, 1, ReduceOp::Min);
  return layered != 0;
}

int64_t MiniBatchTraining::hubVertex() {
  if (hubFound >= 0)
    return hubFound; // the graph does not change
  hubFound = 0;
  for (int64_t v = 1; v < full.numVertices; ++v)
    if (full.indptr[v + 1] - full.indptr[v] >
        full.indptr[hubFound + 1] - full.indptr[hubFound])
      hubFound = v;
  return hubFound;
}

void MiniBatchTraining::checkEvaluationFits(const Program &program) {
  // What the budget leaves at the first epoch's start: one of evaluate()'s
  // ways should fit in it, or the run would stop at its first evaluation,
  // after an epoch of training. (Later epochs may leave less: the check is
  // not a guarantee.)
  if (!budgetedEval || partsLeft <= 0 || full.numVertices == 0)
    return;
  // --layerwise-eval always evaluates layer-wise whatever else fits.
  if (layerwise == Layerwise::Always) {
    if (cutsFit())
      return;
    fatal("--mem-budget " + formatBytes(partsBudget) +
          ": --layerwise-eval always: the values held between the levels (" +
          formatBytes(cutBytes()) +
          ") beside a level's batch of the vertex with the most in-edges "
          "alone do not fit in the " +
          formatBytes(partsLeft) +
          " it leaves; raise --mem-budget, or give --layerwise-eval auto");
  }
  if (wholeFits())
    return;
  const bool levels = layerwiseAuto(program);
  if (levels && cutsFit())
    return;
  const int64_t layers = static_cast<int64_t>(fanouts.size());
  if (!wholeSampler)
    wholeSampler = std::make_unique<NeighborSampler>(
        full.indptr.data(), full.indices.data(), full.numVertices,
        std::vector<int64_t>(layers, -1), seed);
  const int64_t hub = hubVertex();
  const SampledBatch alone = wholeSampler->sample({hub}, 0);
  const int64_t need = unitBytes(sizes(alone), sampledBytes(alone),
                                 /*nextRows=*/true, &batchEvalModel);
  if (need >= 0 && need <= partsLeft)
    return;
  fatal("--mem-budget " + formatBytes(partsBudget) +
        ": no evaluation fits in the " + formatBytes(partsLeft) +
        " it leaves: the whole graph needs " + formatBytes(wholeBytes()) +
        (levels ? ", layer-wise the values held between its levels " +
                      formatBytes(cutBytes()) + " and more"
                : std::string()) +
        ", and vertex " + std::to_string(hub) +
        " (the most in-edges) with "
        "its " +
        std::to_string(layers) + "-hop in-neighbourhood alone " +
        formatBytes(need) +
        "; raise --mem-budget, or compile the model for it (gnn-compile "
        "--mem-budget evaluates the whole graph under its plan)");
}

MiniBatchTraining::Evaluation
MiniBatchTraining::evaluate(gnnrtContext *ctx, const Program &program,
                            bool predict, bool wantLoss) {
  if (plannedEval)
    return evaluateWhole(ctx, program, predict);
  // Under --mem-budget (trainInPartsWithin) an evaluation batch whose full
  // neighbourhoods do not fit in what the budget leaves is evaluated in
  // halves; within the budget the whole graph is one batch where it fits,
  // else layer-wise where its cuts fit.
  startParts(ctx);
  if (layerwise == Layerwise::Always)
    return evaluateLayerwise(ctx, program, predict, wantLoss);
  if (budgetedEval) {
    // Every process takes the same way (their collectives differ): the
    // whole graph where it fits on each, else layer-wise where it does.
    int64_t way = partsLeft <= 0 || wholeFits()         ? 2
                  : layerwiseAuto(program) && cutsFit() ? 1
                                                        : 0;
    if (ctx->comm->size() > 1)
      ctx->comm->allReduce(&way, &way, 1, ReduceOp::Min);
    if (way == 2)
      return evaluateWhole(ctx, program, predict);
    if (way == 1)
      return evaluateLayerwise(ctx, program, predict, wantLoss);
  } else if (storedFeatures && layerwiseStored(ctx, program)) {
    return evaluateLayerwise(ctx, program, predict, wantLoss);
  }
  const int64_t V = full.numVertices;
  const int64_t layers = static_cast<int64_t>(fanouts.size());
  // Every in-edge of every hop: a batch's seeds get the whole graph's
  // values.
  if (!wholeSampler)
    wholeSampler = std::make_unique<NeighborSampler>(
        full.indptr.data(), full.indices.data(), V,
        std::vector<int64_t>(layers, -1), seed);
  BatchedEvaluation run(*this, ctx, predict);
  // One batch at a time, but its rows are read (and copied to the device)
  // while the last one's state is still held.
  const int64_t largest = forEachEvaluationBatch(
      ctx, *wholeSampler,
      [&](const SampledBatch &batch) {
        return unitBytes(sizes(batch), sampledBytes(batch),
                         /*nextRows=*/true, &batchEvalModel);
      },
      [&](int64_t b, const SampledBatch &batch, int64_t need) {
        fatal("--mem-budget " + formatBytes(partsBudget) + ": evaluating " +
              "vertex " + std::to_string(b) + " alone needs " +
              formatBytes(need) + " (its " + std::to_string(layers) +
              "-hop in-neighbourhood: " +
              std::to_string(batch.inputVertices().size()) + " rows, " +
              std::to_string(batch.numEdges()) +
              " edges) but the budget leaves " + formatBytes(partsLeft) +
              (layerwiseAuto(program)
                   ? " (layer-wise, the values held between its levels "
                     "alone take " +
                         formatBytes(cutBytes()) + ")"
                   : std::string()) +
              "; raise --mem-budget, or compile the model for it "
              "(gnn-compile --mem-budget evaluates the whole graph under "
              "its plan)");
      },
      [&](SampledBatch batch, const std::vector<int64_t> &batchSeeds) {
        Dataset ds = batchSubgraph(full, batch, nullptr, /*features=*/false);
        batch = SampledBatch();
        fillRows(ds);
        bindEvaluationBatch(ctx, std::move(ds), batchSeeds);
        run.add(program.eval(ctx), batchSeeds);
        ++evaluationBatches;
      });
  largestEvalBatch = std::max(largestEvalBatch, largest);
  return run.finish(wantLoss);
}

int64_t MiniBatchTraining::forEachEvaluationBatch(
    gnnrtContext *ctx, const NeighborSampler &sampler,
    const std::function<int64_t(const SampledBatch &)> &need,
    const std::function<void(int64_t, const SampledBatch &, int64_t)> &tooLarge,
    const std::function<void(SampledBatch, const std::vector<int64_t> &)>
        &evaluate) {
  const int rank = ctx->comm->rank(), size = ctx->comm->size();
  const int64_t V = full.numVertices;
  const std::vector<int64_t> &indptr = full.indptr;
  // The size of the vertices before v: their count plus their in-edges
  // (what a batch of them samples and binds grows with both).
  auto before = [&](int64_t v) { return v + indptr[v]; };
  // On several processes (data parallel) each evaluates its range (the
  // caller sums them): about equal weights.
  auto boundary = [&](int r) {
    if (r == 0 || V == 0)
      return int64_t{0};
    if (r == size)
      return V;
    const int64_t share = before(V) / size * r;
    int64_t lo = 0, hi = V; // the first v with before(v) >= share
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (before(mid) < share)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  };
  const int64_t end = boundary(rank + 1);
  const bool grow = partsLeft > 0 && !evalBatchGiven;
  int64_t count = std::max<int64_t>(evalBatchSize, 1);
  // What a batch needs whatever its size (the parameters, the cuts held
  // between levels): an empty batch's. The next batch doubles where the
  // last one's need beyond it took at most half of the room beside it (a
  // batch's rows and edges grow at most as its seeds do, its rows slower
  // where their neighbourhoods overlap).
  int64_t fixedNeed = 0;
  if (grow)
    fixedNeed = std::max<int64_t>(need(sampler.sample({}, 0)), 0);
  // A batch size that did not fit is not tried again for the next 8
  // batches (each try samples); without growing, the batches after one
  // halved are --eval-batch-size again.
  const int64_t start = count;
  int64_t ceiling = INT64_MAX, sinceCeiling = 0, largest = 0;
  std::vector<int64_t> batchSeeds;
  for (int64_t b = boundary(rank); b < end;) {
    count = std::min(count, end - b);
    // The seeds' own in-edges are sampled whatever the hops (fanouts of
    // -1), each taking at least 36 bytes (sampledBytes): a batch whose
    // in-edges alone pass the room is halved before it is sampled.
    while (partsLeft > 0 && count > 1 &&
           (indptr[b + count] - indptr[b]) * 36 > partsLeft)
      count /= 2;
    batchSeeds.resize(count);
    std::iota(batchSeeds.begin(), batchSeeds.end(), b);
    // Sampled edges take 36 bytes each at least (sampledBytes): a batch of
    // more than the room's worth is not built but halved (a grown batch's
    // outer hops could pass the budget while it is sampled). A vertex alone
    // is sampled whole, for tooLarge's message.
    SampledBatch batch = sampler.sample(
        batchSeeds, 0, partsLeft > 0 && count > 1 ? partsLeft / 36 : -1);
    const int64_t bytes = partsLeft > 0 && !batch.truncated ? need(batch) : 0;
    if (batch.truncated || (bytes > partsLeft && count > 1)) {
      // Too large: halved (not held through the retry), and this size not
      // tried again soon.
      truncatedEvalBatches += batch.truncated;
      ceiling = count;
      sinceCeiling = 0;
      count /= 2;
      continue;
    }
    if (partsLeft > 0 && bytes > partsLeft)
      tooLarge(b, batch, bytes);
    evaluate(std::move(batch), batchSeeds);
    largest = std::max(largest, count);
    b += count;
    if (++sinceCeiling >= 8)
      ceiling = INT64_MAX;
    if (!grow)
      count = start;
    else if (bytes >= 0 && fixedNeed < partsLeft &&
             bytes - fixedNeed <= (partsLeft - fixedNeed) / 2 &&
             2 * count < ceiling)
      count = count > V / 2 ? V : 2 * count;
  }
  return largest;
}

void MiniBatchTraining::countWholeGraph() {
  if (!outDegrees.empty() || full.numVertices == 0)
    return;
  // A batch's vertices get the whole graph's in- and out-degrees (a
  // normalisation by degrees reads them), and its loss is its share of the
  // whole graph's mean.
  const int64_t V = full.numVertices;
  outDegrees.assign(V, 0.0f);
  for (int32_t u : full.indices)
    outDegrees[u] += 1.0f;
  for (int s = 0; s < 3; ++s) {
    labelledIn[s] = 0;
    for (int64_t v = 0; v < V; ++v)
      labelledIn[s] += full.masks[s][v] && full.labels[v] >= 0;
  }
}

void MiniBatchTraining::bindEvaluationBatch(
    gnnrtContext *ctx, Dataset ds, const std::vector<int64_t> &seeds,
    const std::vector<float> *lentFeatures) {
  const int64_t n = ds.numVertices;
  const int64_t s = static_cast<int64_t>(seeds.size());
  for (int split = 0; split < 3; ++split) {
    ds.masks[split].assign(n, 0);
    for (int64_t i = 0; i < s; ++i)
      ds.masks[split][i] = full.masks[split][seeds[i]];
  }
  for (std::vector<float> &d : ctx->fullDegree)
    d.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = ds.vertexIds[i];
    ctx->fullDegree[0][i] =
        static_cast<float>(full.indptr[v + 1] - full.indptr[v]);
    ctx->fullDegree[1][i] = outDegrees[v];
  }
  ctx->ds = std::move(ds);
  std::string error;
  if (!bindDataset(ctx, error, /*keepFeatureVector=*/false, lentFeatures))
    fatal("an evaluation batch: " + error);
  batchBound = true;
  ctx->training = false;
}

MiniBatchTraining::BatchedEvaluation::BatchedEvaluation(MiniBatchTraining &mb,
                                                        gnnrtContext *ctx,
                                                        bool predict)
    : ctx(ctx), predict(predict) {
  mb.countWholeGraph();
  std::copy(ctx->lossCount, ctx->lossCount + 3, savedCounts);
  // Each batch's loss is its share of the mean over the whole graph.
  std::copy(mb.labelledIn, mb.labelledIn + 3, ctx->lossCount);
  if (predict)
    e.predictions.assign(mb.full.numVertices, 0);
}

void MiniBatchTraining::BatchedEvaluation::add(
    float batchLoss, const std::vector<int64_t> &seeds) {
  loss += batchLoss;
  for (int split = 0; split < 3; ++split) {
    int64_t hit = 0, total = 0;
    accuracyCounts(ctx, split, hit, total);
    counts[2 * split] += hit;
    counts[2 * split + 1] += total;
  }
  if (predict) {
    const std::vector<int64_t> rows = predictions(ctx);
    for (size_t i = 0; i < seeds.size(); ++i)
      e.predictions[seeds[i]] = rows[i];
  }
}

MiniBatchTraining::Evaluation
MiniBatchTraining::BatchedEvaluation::finish(bool wantLoss) {
  // On several processes (data parallel) each evaluated its batches: the
  // counts are summed (as the whole graph's evaluation sums them), the
  // loss and the predictions only when asked for.
  std::copy(savedCounts, savedCounts + 3, ctx->lossCount);
  e.loss = static_cast<float>(loss);
  if (ctx->comm->size() > 1) {
    ctx->comm->allReduce(counts, counts, 6, ReduceOp::Sum);
    if (wantLoss)
      ctx->comm->allReduce(&e.loss, &e.loss, 1, ReduceOp::Sum);
    if (predict)
      ctx->comm->allReduce(e.predictions.data(), e.predictions.data(),
                           static_cast<int64_t>(e.predictions.size()),
                           ReduceOp::Sum);
  }
  for (int split = 0; split < 3; ++split)
    e.acc[split] = counts[2 * split + 1]
                       ? static_cast<double>(counts[2 * split]) /
                             static_cast<double>(counts[2 * split + 1])
                       : 0.0;
  return std::move(e);
}
