//===- BatchParts.cpp - batches larger than the memory budget, in parts ---===//
//
// Mini-batch training under --mem-budget (docs/MiniBatch.md, "Batches
// larger than the budget"): a sampled batch whose training state would not
// fit in what the budget leaves trains in parts, each part the share of a
// range of its seeds (seedShare: the seeds' closure over the blocks, with
// the whole batch's degrees, as a process of a data-parallel run trains
// it). The parts' gradients are summed and the optimizer steps once, at the
// last part (gnnrtContext::GradientParts), so the step is the whole batch's
// up to the order of the sums: gradient accumulation, sized by the budget.
//
//===----------------------------------------------------------------------===//

#include "MiniBatch.h"

#include "Memory.h"
#include "Programs.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <future>
#include <malloc.h>
#include <utility>

using namespace gnnrt;

void MiniBatchTraining::startParts(gnnrtContext *ctx) {
  if (partsBudget <= 0)
    return;
  // Batches whose rows are split over processes, pulled, in flight on
  // lanes or saved whole train whole (trainInPartsWithin).
  if (columns.on || coBatches || puller || scheduler || !saveDir.empty() ||
      !ctx->device->deviceMemoryIsHostMemory()) {
    partsBudget = 0;
    return;
  }
  // The sampler's thread sizes the batches by copies (bindDataset rewrites
  // the context's model).
  partsModel = ctx->model;
  partsOptimizer = ctx->optConfig;
  // An evaluation batch binds with the step's model: the graph's arrays
  // of both.
  batchEvalModel = evalModel;
  batchEvalModel.graphArrays |= partsModel.graphArrays;
  // Each level's batches are sized by its own buffers (levelBatchBytes).
  levelEvalModels.assign(evalModel.levels.size(), batchEvalModel);
  for (size_t l = 0; l < evalModel.levels.size(); ++l) {
    levelEvalModels[l].evalBuffers = evalModel.levels[l].buffers;
    levelEvalModels[l].evalBuffersKnown = true;
  }
  gradientBytes = 0;
  for (const auto &g : ctx->grads)
    gradientBytes += g->size * static_cast<int64_t>(sizeof(float));
  // A slot keeps its largest part's size, without a quarter more. What the
  // last epoch's batches (or an evaluation) left is freed first (the
  // slots, the features buffer, the heap's free pages), so that it is not
  // taken for what stays (the parts would shrink each epoch).
  ctx->slotHeadroom = false;
  freeBatchState(ctx);
  // What the process holds before an epoch's first batch (the parameters,
  // the optimizer's state, the sampler's graph, the features unless they
  // are on storage, the last batch's graph) stays through its batches: the
  // least left over the epochs.
  const int64_t resident = residentMemory();
  // A tenth of it is the estimate's margin: the model's records size the
  // slots, not the kernels' temporaries (GAT's peak was 11 % over the
  // budget without it).
  const int64_t left = (partsBudget - std::max<int64_t>(resident, 0)) / 10 * 9;
  partsLeft = steps == 0 ? left : std::min(partsLeft, left);
  if (partsLeft <= 0)
    fatal("--mem-budget " + formatBytes(partsBudget) +
          " leaves nothing for a batch: the process holds " +
          formatBytes(resident) +
          " before an epoch's batches; raise --mem-budget");
}

int64_t MiniBatchTraining::blockBytes(const SampledBatch &batch) {
  int64_t bytes = 0;
  for (const Block &b : batch.blocks)
    bytes += static_cast<int64_t>(b.offsets.size() * 8 + b.sources.size() * 4 +
                                  b.edgePositions.size() * 8 +
                                  b.vertices.size() * 8);
  return bytes;
}

int64_t MiniBatchTraining::sampledBytes(const SampledBatch &batch) {
  // batchSubgraph's (source, position) pairs and positions.
  return blockBytes(batch) + batch.numEdges() * 24;
}

Dataset MiniBatchTraining::sizes(const SampledBatch &batch) const {
  Dataset ds;
  ds.numVertices = static_cast<int64_t>(batch.inputVertices().size());
  ds.numEdges = batch.numEdges();
  ds.numFeatures = full.numFeatures;
  ds.numClasses = full.numClasses;
  return ds;
}

int64_t MiniBatchTraining::unitBytes(const Dataset &ds, int64_t sampled,
                                     bool nextRows,
                                     const ModelInfo *evaluation) const {
  TrainingMemory need;
  std::string error;
  if (!(evaluation ? estimateEvaluationMemory(*evaluation, ds, partsOptimizer,
                                              need, error)
                   : estimateTrainingMemory(partsModel, ds, partsOptimizer,
                                            need, error)))
    return -1;
  // The host's copies beside the bound state: labels, global ids (the
  // dataset's and the context's), masks, and every edge array.
  int64_t edgeFloats = 0;
  for (const auto &[name, data] : full.edgeData)
    edgeFloats += data.width;
  const int64_t host =
      ds.numVertices * (8 + 8 + 4 + 3) + ds.numEdges * edgeFloats * 4;
  const int64_t state = need.batchState() + host;
  const int64_t rows = ds.numVertices * ds.numFeatures * 4 + ds.numEdges * 4 +
                       (ds.numVertices + 1) * 8 + host;
  return state + (nextRows ? rows : 0) + sampled;
}

void MiniBatchTraining::fillRows(Dataset &ds) {
  if (storedFeatures) {
    readBatchRows(ds);
    return;
  }
  copyFeatureRows(full, ds.vertexIds, ds.features);
}

MiniBatchTraining::Prepared MiniBatchTraining::prepareWithin(SampledBatch batch,
                                                             int64_t begin,
                                                             int64_t end,
                                                             Prepared p) {
  // Alone the whole batch is the unit, with its own degrees (as a batch
  // trains unbudgeted); on several processes this process's share.
  // Meanwhile the next batch is sampled (as large as this one).
  const bool alone = processes == 1;
  const SampledBatch share =
      alone ? SampledBatch() : seedShare(batch, begin, end, p.degrees);
  const int64_t bytes =
      unitBytes(sizes(alone ? batch : share), sampledBytes(batch));
  // After a batch in parts the unit is sized as parts too (it may be one):
  // its rows are read as it starts, not while the parts before it train
  // beside them (what a part leaves counts the next batch's blocks, not
  // its rows).
  const bool afterParts = std::exchange(lastInParts, false);
  if (bytes < 0 || (bytes <= partsLeft && !afterParts)) {
    Dataset ds = batchSubgraph(full, alone ? batch : share, nullptr,
                               /*features=*/false);
    fillRows(ds);
    p.ds = std::move(ds);
    return p;
  }
  // In parts: the batch's blocks are held while they train and the next
  // batch is sampled (and built, as large), and the parts' gradients are
  // summed beside the gradients. Each part is built from its share of the
  // blocks (its own blocks and subgraph pairs) while the last one trains.
  const int64_t held = blockBytes(batch) + sampledBytes(batch) + gradientBytes;
  // Left to right, a range that does not fit halved.
  std::function<void(int64_t, int64_t)> split = [&](int64_t first,
                                                    int64_t last) {
    if (!p.partsError.empty())
      return;
    // (The share's blocks freed before the halves are sized.)
    Dataset part;
    int64_t need;
    {
      std::vector<float> degrees[2];
      const SampledBatch partShare = seedShare(batch, first, last, degrees);
      part = sizes(partShare);
      need = unitBytes(part, held + sampledBytes(partShare));
    }
    if (need <= partsLeft) {
      p.parts.emplace_back(first, last);
    } else if (last - first > 1) {
      const int64_t middle = first + (last - first) / 2;
      split(first, middle);
      split(middle, last);
    } else {
      p.partsError =
          "seed " + std::to_string(batch.seeds[first]) + " alone needs " +
          formatBytes(need) +
          " (its sampled neighbourhood: " + std::to_string(part.numVertices) +
          " rows, " + std::to_string(part.numEdges) +
          " edges, with the batch's sampled blocks and the next batch's)";
    }
  };
  split(begin, end);
  p.sample = std::make_shared<const SampledBatch>(std::move(batch));
  // (One part counted the next batch's rows as the whole batch does.)
  lastInParts = p.parts.size() > 1;
  return p;
}

float MiniBatchTraining::trainInParts(gnnrtContext *ctx, const Program &program,
                                      Prepared &p, int64_t step, int64_t n) {
  if (!p.partsError.empty())
    fatal("--mem-budget " + formatBytes(partsBudget) + ": batch " +
          std::to_string(step) + "'s " + p.partsError +
          " but the budget leaves " + formatBytes(partsLeft) +
          " for a batch; raise --mem-budget or lower --fanouts");
  // One part: a batch that fits, prepared after one in parts (its rows
  // read now); not counted as in parts.
  const bool inParts = p.parts.size() > 1;
  if (announceParts && inParts && batchesInParts == 0) {
    std::printf("gnnc: --mem-budget: batch %lld trains in %zu parts (the "
                "budget leaves %s for a batch; mini_batch.parts in --json "
                "counts them)\n",
                static_cast<long long>(step), p.parts.size(),
                formatBytes(partsLeft).c_str());
    std::fflush(stdout);
  }
  if (inParts)
    ++batchesInParts;
  const int64_t lossCount = ctx->lossCount[0];
  ctx->lossCount[0] = n; // each part's loss is a share of the batch's mean
  gnnrtContext::GradientParts &parts = ctx->gradientParts;
  // Part j + 1 is built and its rows read on a thread while part j trains
  // (unitBytes counts its rows).
  struct Part {
    Dataset ds;
    std::vector<float> degrees[2];
  };
  auto build = [this, &p](size_t j) {
    Part part;
    part.ds = batchSubgraph(
        full,
        seedShare(*p.sample, p.parts[j].first, p.parts[j].second, part.degrees),
        nullptr, /*features=*/false);
    fillRows(part.ds);
    return part;
  };
  std::future<Part> next = std::async(std::launch::async, build, 0);
  float loss = 0.0f;
  for (size_t j = 0; j < p.parts.size(); ++j) {
    Part part = next.get();
    if (j + 1 < p.parts.size())
      next = std::async(std::launch::async, build, j + 1);
    const bool last = j + 1 == p.parts.size();
    parts.part = static_cast<int64_t>(j);
    parts.defer = !last;
    parts.fold = last;
    ctx->fullDegree[0] = std::move(part.degrees[0]);
    ctx->fullDegree[1] = std::move(part.degrees[1]);
    loss += bindAndTrain(ctx, program, std::move(part.ds), step);
    malloc_trim(0);
  }
  if (inParts)
    batchParts += static_cast<int64_t>(p.parts.size());
  parts.defer = parts.fold = false;
  parts.part = 0;
  for (std::vector<float> &sum : parts.sum)
    std::fill(sum.begin(), sum.end(), 0.0f);
  parts.folded.clear();
  ctx->lossCount[0] = lossCount;
  return loss;
}
