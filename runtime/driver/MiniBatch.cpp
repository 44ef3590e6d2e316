//===- MiniBatch.cpp - mini-batch training with neighbour sampling --------===//
//
// MiniBatch.h.
//
//===----------------------------------------------------------------------===//

#include "MiniBatch.h"

#include "Programs.h"

#include <malloc.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <utility>

using namespace gnnrt;

bool gnnrt::passiveWaitsForMiniBatches(char **argv) {
  if (std::getenv("OMP_WAIT_POLICY"))
    return false;
  for (char **arg = argv + 1; *arg; ++arg)
    if (std::strncmp(*arg, "--batch-size", 12) == 0)
      return setenv("OMP_WAIT_POLICY", "passive", 0) == 0;
  return false;
}

MiniBatchTraining::MiniBatchTraining(Dataset dataset, int64_t batchSize,
                                     std::vector<int64_t> fanouts,
                                     uint64_t seed)
    : full(std::move(dataset)), batchSize(batchSize), seed(seed),
      fanouts(fanouts) {
  for (int64_t v = 0; v < full.numVertices; ++v)
    if (full.masks[0][v] && full.labels[v] >= 0)
      seeds.push_back(v);
  sampler = std::make_unique<NeighborSampler>(
      full.indptr.data(), full.indices.data(), full.numVertices,
      std::move(fanouts), seed);
}

float MiniBatchTraining::epoch(gnnrtContext *ctx, const Program &program,
                               int64_t epochIndex) {
  const std::vector<std::vector<int64_t>> batches =
      epochBatches(seeds, batchSize, seed, epochIndex);
  // Batch i's subgraph (numbered across epochs: every batch draws its own
  // sample), and the edges sampled for it.
  const int64_t first = steps;
  // On several processes (data parallel) each samples the whole batch (the
  // same on every one) and trains the share its seeds need (seedShare):
  // rank r the seeds [b r / N, b (r + 1) / N) of a batch of b. The loss is
  // the mean over the whole batch's seeds, and the gradients are summed
  // over the processes, so the step is the one process's.
  const int rank = ctx->comm->rank(), size = ctx->comm->size();
  startParts(ctx);
  if (steps == 0)
    checkEvaluationFits(program);
  lastInParts = false;
  // The hash-partitioned structure without MPI_THREAD_MULTIPLE samples on
  // this thread (its pushes are collectives, in the same order on every
  // process): `sampled` holds the batch for the sampler's thread to build
  // on.
  auto prepare = [this, &batches, first, rank,
                  size](size_t i, std::shared_ptr<SampledBatch> sampled) {
    // One thread: the training's threads keep the cores (a team here would
    // spin beside them, and a new thread each batch makes a new team).
    omp_set_num_threads(1);
    SampledBatch batch =
        sampled ? std::move(*sampled) : sampler->sample(batches[i], first + i);
    Prepared p;
    p.edges = batch.numEdges();
    p.levelRows = batch.levelRows();
    std::vector<float> storage = takeSpareFeatures();
    const int64_t b = static_cast<int64_t>(batch.seeds.size());
    if (partsLeft > 0 && (size == 1 || !puller))
      return prepareWithin(std::move(batch), b * rank / size,
                           b * (rank + 1) / size, std::move(p));
    if (size == 1) {
      p.ds = batchSubgraph(full, batch, &storage, !storedFeatures);
      if (storedFeatures)
        readBatchRows(p.ds);
      return p;
    }
    if (columns.on) {
      Prepared shares = prepareShares(batch, rank, size);
      shares.edges = p.edges;
      shares.levelRows = std::move(p.levelRows);
      return shares;
    }
    if (coBatches && serverCount == size) {
      p.ds = coBatchRows(batchSubgraph(full, batch), rank, size, p.starts,
                         p.levels, p.degrees);
      return p;
    }
    if (coBatches) {
      // The server's share of the seeds, its co-batch split over the
      // server's processes, with the whole batch's degrees.
      std::vector<float> degrees[2];
      const SampledBatch share =
          seedShare(batch, b * serverFirst / size,
                    b * (serverFirst + serverCount) / size, degrees);
      p.ds = coBatchRows(batchSubgraph(full, share), rank - serverFirst,
                         serverCount, p.starts, p.levels, p.degrees, degrees);
      return p;
    }
    const SampledBatch share =
        seedShare(batch, b * rank / size, b * (rank + 1) / size, p.degrees);
    p.ds = batchSubgraph(full, share, &storage, !puller && !storedFeatures);
    if (storedFeatures)
      readBatchRows(p.ds);
    if (puller) {
      // The rows the training thread pulls into (a spare vector's pages).
      p.vertices = share.blocks.front().vertices;
      p.ds.features.resize(p.vertices.size() * full.numFeatures);
    }
    return p;
  };
  // Batch i + 1 is sampled on a thread while batch i trains. Pulling
  // features, batch i + 1 is taken when batch i starts and its rows travel
  // while batch i trains (DistDGL's prefetch), so batch i + 2 is sampled.
  std::future<Prepared> next;
  size_t launched = 0;
  auto launch = [&]() {
    std::shared_ptr<SampledBatch> sampled;
    if (sampleOnTrainingThread())
      sampled = std::make_shared<SampledBatch>(
          sampler->sample(batches[launched], first + launched));
    next = std::async(std::launch::async, prepare, launched++, sampled);
  };
  auto take = [&]() {
    auto p = std::make_shared<Prepared>(next.get());
    if (launched < batches.size())
      launch();
    return p;
  };
  if (!batches.empty())
    launch();
  std::shared_ptr<Prepared> following; // batch i + 1, its pull started
  double lossSum = 0;
  int64_t count = 0;
  for (size_t i = 0; i < batches.size(); ++i) {
    std::shared_ptr<Prepared> p =
        following ? std::exchange(following, nullptr) : take();
    if (puller) {
      // Every process starts and finishes the same pulls in the same order.
      if (!p->pull.started)
        startPull(*p);
      finishPull(*p);
      if (i + 1 < batches.size()) {
        following = take();
        startPull(*following);
      }
    }
    const int64_t step = ++steps, n = static_cast<int64_t>(batches[i].size());
    if (!scheduler) {
      const float loss = trainBatch(ctx, program, *p, step, n);
      lossSum += static_cast<double>(loss) * n;
      count += n;
      continue;
    }
    // On a lane, at the stashed version its batch reads; the lanes take
    // their turns, so the sums need no lock.
    scheduler->submit([this, p, step, n, &program, &lossSum,
                       &count](int64_t batch, int lane) {
      gnnrtContext *c = lanes[lane].get();
      const int64_t version = stash->versionFor(batch);
      for (size_t k = 0; k < c->params.size(); ++k) {
        const std::vector<float> &w = stash->param(version, k);
        c->device->copy(c->params[k]->data, MemoryTier::Device, w.data(),
                        MemoryTier::Host,
                        static_cast<int64_t>(w.size() * sizeof(float)));
      }
      stash->started(batch);
      c->lane.batch = batch;
      const float loss = trainBatch(c, program, *p, step, n);
      stash->finish(batch);
      // The process's counters (the summary's) hold the lanes' too.
      gnnrtContext *master = c->lane.master;
      master->gradientSum.issued += std::exchange(c->gradientSum.issued, 0);
      master->bytesAllocated += std::exchange(c->bytesAllocated, 0);
      lossSum += static_cast<double>(loss) * n;
      count += n;
    });
  }
  if (scheduler)
    scheduler->drain();
  return count ? static_cast<float>(lossSum / count) : 0.0f;
}

float MiniBatchTraining::trainBatch(gnnrtContext *ctx, const Program &program,
                                    Prepared &p, int64_t step, int64_t n) {
  std::string error;
  const int rank = ctx->comm->rank(), size = ctx->comm->size();
  sampledEdges += p.edges;
  levelRows.resize(p.levelRows.size());
  for (size_t l = 0; l < p.levelRows.size(); ++l)
    levelRows[l] += p.levelRows[l];
  Dataset &ds = p.ds;
  if (!saveDir.empty()) {
    char name[32];
    std::snprintf(name, sizeof name, "/batch-%06lld",
                  static_cast<long long>(step));
    if (!writeDataset(ds, saveDir + name, error))
      fatal("option --save-batches: " + error);
  }
  if (p.sample)
    return trainInParts(ctx, program, p, step, n);
  if (size > 1) {
    ctx->fullDegree[0] = std::move(p.degrees[0]);
    ctx->fullDegree[1] = std::move(p.degrees[1]);
    ctx->lossCount[0] = n; // every seed is a labelled train vertex
  }
  if (columns.on) {
    countShareRows(p, rank);
    ctx->rowStarts = std::move(p.starts);
    ctx->shareLevels = std::move(p.levels);
  } else if (coBatches) {
    const int local = rank - serverFirst;
    coBatchRows_[0] += p.starts.back();
    coBatchRows_[1] += p.starts[local + 1] - p.starts[local];
    const size_t levels = p.levels.front().size();
    coBatchLevelRows.resize(std::max(coBatchLevelRows.size(), levels));
    for (const std::vector<int64_t> &own : p.levels)
      for (size_t l = 0; l < levels && l < own.size(); ++l)
        coBatchLevelRows[l] += own[l];
    ctx->rowStarts = std::move(p.starts);
    ctx->rowLevels = std::move(p.levels);
  }
  return bindAndTrain(ctx, program, std::move(ds), step, &p);
}

float MiniBatchTraining::bindAndTrain(gnnrtContext *ctx, const Program &program,
                                      Dataset ds, int64_t step, Prepared *p) {
  std::string error;
  ctx->ds = std::move(ds);
  countBatchMemory(ctx);
  // A lane holds its batch; the process's own context keeps the whole
  // graph.
  batchBound |= ctx->lane.master == nullptr;
  const bool bound = bindDataset(ctx, error, /*keepFeatureVector=*/true);
  if (!bound ||
      (columns.on && !bindWholeGraph(ctx, p->world, error, p->worldDegrees)))
    fatal("a sampled batch: " + error);
  // The device holds the features now: their vector serves a later batch
  // (under --mem-budget it is freed: one copy of a batch's rows less).
  if (!keepSpareFeatures)
    std::vector<float>().swap(ctx->ds.features);
  if (ctx->ds.features.capacity() > 0) {
    std::lock_guard<std::mutex> lock(spareMutex);
    spareFeatures.push_back(std::move(ctx->ds.features));
    ctx->ds.features = {};
  }
  ctx->training = true;
  ctx->step = step;
  zeroGrads(ctx);
  const float loss = program.train(ctx);
  if (!saveDir.empty())
    batchLosses.push_back(loss);
  return loss;
}

void MiniBatchTraining::startPull(Prepared &p) {
  // The share's input rows: the own ones copied, the others pulled.
  p.pull =
      puller->start(p.vertices.data(), static_cast<int64_t>(p.vertices.size()),
                    p.ds.features.data());
}

void MiniBatchTraining::finishPull(Prepared &p) {
  const int64_t pulled = puller->finish(p.pull);
  pulledRows += pulled;
  ownRows += static_cast<int64_t>(p.vertices.size()) - pulled;
}

MemoryCounters MiniBatchTraining::lanesMemory() const {
  MemoryCounters sum;
  for (const auto &lane : lanes) {
    const MemoryCounters c = lane->device->memoryCounters();
    sum.peak += c.peak;
    sum.copiedToDevice += c.copiedToDevice;
    sum.copiedToHost += c.copiedToHost;
  }
  return sum;
}

void MiniBatchTraining::usePipeline(gnnrtContext *ctx) {
  if (ctx->model.target != "cpu")
    fatal("--pipeline runs the batches in flight on the CPU device; the "
          "model was compiled for " +
          ctx->model.target);
  // The lanes hold their batches in memory, without the slow tier.
  if (ctx->spill ||
      std::any_of(ctx->model.placements.begin(), ctx->model.placements.end(),
                  [](const PlacementInfo &p) { return p.planned; }))
    fatal("--pipeline keeps three batches in flight in memory: it does not "
          "take --spill-dir or a model compiled under gnn-compile "
          "--mem-budget");
  if (puller)
    fatal("--pipeline does not take --partition pull yet: its lanes bind the "
          "batches and the process keeps every feature row bound for the "
          "evaluation, so the split would hold nothing less");
  if (!ctx->comm->anyThread())
    fatal("--pipeline: MPI does not let the pipeline's threads call it one "
          "at a time (MPI_THREAD_SERIALIZED)");
  std::vector<std::vector<float>> initial;
  for (const auto &b : ctx->params) {
    std::vector<char> staging;
    const auto *w = static_cast<const float *>(ctx->device->hostView(
        b->data, b->size * static_cast<int64_t>(sizeof(float)), staging));
    initial.emplace_back(w, w + b->size);
  }
  stash = std::make_unique<WeightStash>(kStaleness, std::move(initial));
  for (int k = 0; k < kPipelineLanes; ++k) {
    auto lane = std::make_unique<gnnrtContext>();
    lane->comm = ctx->comm;
    lane->rowComm = ctx->rowComm; // a co-batch per server: its processes
    lane->rowGroup = ctx->rowGroup;
    lane->model = ctx->model;
    lane->optConfig = ctx->optConfig;
    lane->gradientSum.bucketBytes = ctx->gradientSum.bucketBytes;
    lane->seed = ctx->seed;
    lane->dropoutOverride = ctx->dropoutOverride;
    lane->featureBegin = ctx->featureBegin;
    lane->featureTotal = ctx->featureTotal;
    std::copy(ctx->lossCount, ctx->lossCount + 3, lane->lossCount);
    lane->slotHeadroom = ctx->slotHeadroom;
    for (const auto &b : ctx->params) {
      lane->params.push_back(std::make_unique<Buffer>(*lane->device, b->size));
      lane->grads.push_back(std::make_unique<Buffer>(*lane->device, b->size));
      lane->opt.emplace_back();
    }
    lane->lane.master = ctx;
    lane->lane.stash = stash.get();
    lanes.push_back(std::move(lane));
  }
  scheduler = std::make_unique<PipelineScheduler>(kPipelineLanes,
                                                  omp_get_max_threads());
  std::shared_ptr<Communicator> comm = ctx->comm, rows = ctx->rowComm;
  scheduler->beforeEachSegment([comm, rows] {
    comm->progress();
    if (rows)
      rows->progress();
  });
}

void MiniBatchTraining::freeBoundFeatures() {
  keepSpareFeatures = false;
  mallopt(M_ARENA_MAX, 1);
  // Freed blocks go back to the system (startMiniBatch's thresholds keep
  // them for the next batch's pages, beside the evaluation's).
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 20);
}

std::vector<float> MiniBatchTraining::takeSpareFeatures() {
  std::lock_guard<std::mutex> lock(spareMutex);
  if (spareFeatures.empty())
    return {};
  std::vector<float> v = std::move(spareFeatures.back());
  spareFeatures.pop_back();
  return v;
}

void MiniBatchTraining::bindFull(gnnrtContext *ctx) {
  // The features on storage or a planned evaluation: evaluate binds what
  // it evaluates.
  if (!batchBound || evaluatesItself())
    return;
  // The whole graph with only the per-edge arrays the evaluation reads
  // (the batches' steps read the others; the next batch's binding builds
  // them for its subgraph). 0: the model's.
  const unsigned arrays = evalModel.evalGraphArrays;
  std::string error;
  if (columns.on) {
    ctx->ds = columns.own;
    ctx->ds.features = full.features;
    ctx->rowStarts = columns.rowStarts;
    ctx->shareLevels.clear();
    for (int i = 0; i < 2; ++i)
      ctx->fullDegree[i] = columns.degrees[i];
    std::copy(columns.lossCount, columns.lossCount + 3, ctx->lossCount);
    // The whole graph: the sampler's (bindWholeGraph takes its CSC), or
    // with the structure partitioned by hash read from storage.
    Dataset whole;
    if (shard) {
      if (!loadGraph(shardData, whole, error))
        fatal(shardData + "/" + error);
      ++wholeGraphReads;
    } else {
      whole.numVertices = full.numVertices;
      whole.numEdges = full.numEdges;
      whole.indptr = full.indptr;
      whole.indices = full.indices;
    }
    if (!bindDataset(ctx, error, false, nullptr, arrays) ||
        !bindWholeGraph(ctx, whole, error, nullptr, arrays))
      fatal(error);
    batchBound = false;
    return;
  }
  if (puller) {
    // The structure, labels and masks, then every row of the features.
    std::vector<float> own;
    own.swap(full.features);
    ctx->ds = full;
    own.swap(full.features);
    ctx->ds.features = gatherFeatures(ctx);
  } else {
    ctx->ds = full;
  }
  ctx->rowStarts.clear(); // co-batches: the row collectives copy again
  ctx->rowLevels.clear();
  ctx->lossCount[0] = -1; // the whole graph's, on every process
  if (!bindDataset(ctx, error, false, nullptr, arrays))
    fatal(error);
  batchBound = false;
}

std::vector<float> MiniBatchTraining::gatherFeatures(gnnrtContext *ctx) const {
  // The first copy's processes give their ranges, the others nothing.
  const int size = ctx->comm->size(), rank = ctx->comm->rank();
  const std::vector<int64_t> &starts = puller->rangeStarts();
  const int groups = static_cast<int>(starts.size()) - 1;
  std::vector<int64_t> counts(size, 0), displs(size, full.numVertices);
  for (int r = 0; r < groups; ++r) {
    counts[r] = starts[r + 1] - starts[r];
    displs[r] = starts[r];
  }
  std::vector<float> all(full.numVertices * full.numFeatures);
  ctx->comm->allGatherV(full.features.data(), counts[rank], all.data(),
                        counts.data(), displs.data(), full.numFeatures);
  return all;
}

void MiniBatchTraining::usePulledFeatures(gnnrtContext *ctx, FeatureRows rows) {
  full.features = std::move(rows.own);
  puller = std::make_unique<FeaturePuller>(*ctx->comm, std::move(rows.starts),
                                           full.features.data(),
                                           full.numFeatures, rows.copies);
  ctx->ds.features = gatherFeatures(ctx);
}

void MiniBatchTraining::countBatchMemory(const gnnrtContext *ctx) {
  TrainingMemory need;
  std::string error;
  if (!estimateTrainingMemory(ctx, ctx->optConfig, need, error))
    return;
  int64_t bytes = need.batchState();
  // A row-partitioned program's staged aggregations receive each part's
  // rows into two buffers of the largest part's rows (RowCollectives.cpp).
  const std::vector<int64_t> &p = ctx->rowStarts;
  if (!p.empty() && ctx->shareLevels.empty()) {
    int64_t width = 0, most = 0;
    for (const ModelInfo::RowCollective &c : ctx->model.rowCollectives)
      if (c.kind == "broadcast" || c.kind == "reduce")
        width = std::max(width, collectiveWidth(c, ctx->ds));
    for (size_t r = 0; r + 1 < p.size(); ++r)
      most = std::max(most, p[r + 1] - p[r]);
    bytes += 2 * most * width * static_cast<int64_t>(sizeof(float));
  }
  peakBatchBytes = std::max(peakBatchBytes, bytes);
}

void MiniBatchTraining::countShareRows(const Prepared &p, int rank) {
  const size_t levels = p.levels[rank].size();
  ownShareRows.resize(levels);
  otherShareRows.resize(levels);
  for (size_t s = 0; s < p.levels.size(); ++s)
    for (size_t l = 0; l < levels && l < p.levels[s].size(); ++l)
      (static_cast<int>(s) == rank ? ownShareRows : otherShareRows)[l] +=
          p.levels[s][l];
}

/// `values` joined by ", ".
static std::string joined(const std::vector<int64_t> &values) {
  std::string text;
  for (int64_t v : values)
    text += (text.empty() ? "" : ", ") + std::to_string(v);
  return text;
}

std::string MiniBatchTraining::json() const {
  const std::string list = joined(fanouts), rows = joined(levelRows);
  const MemoryCounters laneCounters =
      scheduler ? lanesMemory() : MemoryCounters();
  std::string losses;
  for (float loss : batchLosses) {
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", loss);
    losses += (losses.empty() ? "" : ", ") + std::string(text);
  }
  return "  \"mini_batch\": {\"batch_size\": " + std::to_string(batchSize) +
         ", \"fanouts\": [" + list +
         "], \"seeds\": " + std::to_string(seeds.size()) +
         ", \"batches\": " + std::to_string(steps) +
         ", \"processes\": " + std::to_string(processes) + ", \"step\": \"" +
         (blocksStep ? "blocks" : "compiled") + "\"" +
         (sampler->isExpansionAware()
              ? ", \"expansion_aware\": {\"hops\": " +
                    std::to_string(sampler->expansionHops()) +
                    ", \"fanout\": " +
                    std::to_string(sampler->expansionFanout()) + "}"
              : std::string()) +
         ", \"sampled_edges\": " + std::to_string(sampledEdges) +
         ", \"level_rows\": [" + rows + "]" +
         ", \"features\": " + std::to_string(full.numFeatures) +
         ", \"peak_batch_bytes\": " + std::to_string(peakBatchBytes) +
         (partsBudget > 0
              ? ", \"parts\": {\"left_bytes\": " + std::to_string(partsLeft) +
                    ", \"batches\": " + std::to_string(batchesInParts) +
                    ", \"parts\": " + std::to_string(batchParts) +
                    (budgetedEval ? ", \"whole_evaluations\": " +
                                        std::to_string(wholeEvaluations) +
                                        ", \"evaluation_batch_size\": " +
                                        std::to_string(evalBatchSize) +
                                        ", \"evaluation_batches\": " +
                                        std::to_string(evaluationBatches) +
                                        ", \"largest_evaluation_batch\": " +
                                        std::to_string(largestEvalBatch) +
                                        ", \"truncated_evaluation_batches\": " +
                                        std::to_string(truncatedEvalBatches)
                                  : std::string()) +
                    "}"
              : std::string()) +
         (layerwiseEvaluations > 0
              ? ", \"layerwise\": {\"evaluations\": " +
                    std::to_string(layerwiseEvaluations) +
                    ", \"levels\": " + std::to_string(evalModel.levels.size()) +
                    ", \"batch_size\": " + std::to_string(evalBatchSize) +
                    ", \"batches\": " + std::to_string(levelBatches) +
                    ", \"largest_batch\": " +
                    std::to_string(largestLevelBatch) +
                    ", \"cut_bytes\": " + std::to_string(cutBytes()) + "}"
              : std::string()) +
         (scheduler
              ? ", \"pipeline\": {\"lanes\": " +
                    std::to_string(kPipelineLanes) + ", \"staleness\": " +
                    std::to_string(kStaleness) + ", \"most_in_flight\": " +
                    std::to_string(scheduler->mostInFlight()) +
                    ", \"segments\": " + std::to_string(scheduler->segments()) +
                    ", \"most_versions\": " +
                    std::to_string(stash->mostHeld()) +
                    ", \"lanes_device_peak_bytes\": " +
                    std::to_string(laneCounters.peak) +
                    ", \"lanes_copied_to_device_bytes\": " +
                    std::to_string(laneCounters.copiedToDevice) + "}"
              : std::string()) +
         (coBatches
              ? ", \"co_batch\": {\"rows\": " +
                    std::to_string(coBatchRows_[0]) +
                    ", \"own_rows\": " + std::to_string(coBatchRows_[1]) +
                    ", \"server_processes\": " + std::to_string(serverCount) +
                    ", \"level_rows\": [" + joined(coBatchLevelRows) + "]}"
              : std::string()) +
         (columns.on
              ? ", \"p3\": {\"own_share_rows\": [" + joined(ownShareRows) +
                    "], \"other_share_rows\": [" + joined(otherShareRows) +
                    "], \"structure\": " + structureJson() + "}"
              : std::string()) +
         (puller
              ? ", \"pull\": {\"copies\": " + std::to_string(puller->copies()) +
                    ", \"own_rows\": " + std::to_string(ownRows) +
                    ", \"pulled_rows\": " + std::to_string(pulledRows) +
                    ", \"feature_bytes_sent\": " +
                    std::to_string(puller->featureBytesSent()) +
                    ", \"request_bytes_sent\": " +
                    std::to_string(puller->requestBytesSent()) + "}"
              : std::string()) +
         (storedFeatures
              ? ", \"features_on_storage\": {\"read_bytes\": " +
                    std::to_string(storedBytes.load()) +
                    ", \"reads\": " + std::to_string(storedReads.load()) +
                    (plannedEval ? std::string(", \"evaluation\": \"planned\"")
                                 // (Mixed where a later evaluation fell
                                 // back to batches: "batches".)
                                 : std::string(", \"evaluation\": \"") +
                                       (evaluationBatches == 0 &&
                                                layerwiseEvaluations > 0
                                            ? "layer-wise"
                                            : "batches") +
                                       "\", \"evaluation_batch_size\": " +
                                       std::to_string(evalBatchSize) +
                                       ", \"evaluation_batches\": " +
                                       std::to_string(evaluationBatches) +
                                       ", \"largest_evaluation_batch\": " +
                                       std::to_string(largestEvalBatch) +
                                       ", \"truncated_evaluation_batches\": " +
                                       std::to_string(truncatedEvalBatches)) +
                    "}"
              : std::string()) +
         (saveDir.empty() ? std::string()
                          : ", \"batch_losses\": [" + losses + "]") +
         "},\n";
}

std::unique_ptr<MiniBatchTraining>
gnnrt::startMiniBatch(gnnrtContext *ctx, int64_t batchSize,
                      const std::string &fanoutText, uint64_t seed,
                      int worldSize, const std::string &saveBatches,
                      int64_t externalHops, int64_t externalFanout,
                      Dataset *columns, bool takeDataset) {
  const bool expansion = externalHops >= 0 || externalFanout >= 0;
  if (batchSize == 0 && fanoutText.empty()) {
    if (!saveBatches.empty())
      fatal("--save-batches writes the batches of mini-batch training "
            "(--batch-size and --fanouts)");
    return nullptr;
  }
  if (batchSize == 0 || (fanoutText.empty() && !expansion))
    fatal("--batch-size and --fanouts go together: mini-batch training "
          "samples each batch's neighbourhood with the fanouts (or by "
          "expansion-aware sampling: --preload-hops, --preload-fanout)");
  if (expansion && !fanoutText.empty())
    fatal("--fanouts samples the in-edges of every hop, --preload-hops and "
          "--preload-fanout only the vertices outside a batch's seeds "
          "(expansion-aware sampling): give one or the other");
  if (worldSize > 1 && !saveBatches.empty())
    fatal("--save-batches writes the batches of one process; under mpirun "
          "each process trains a share of every batch");
  if (ctx->model.featureChunks > 0 || ctx->model.graphChunks > 0)
    fatal(std::string("--batch-size: the model was compiled with its ") +
          (ctx->model.featureChunks > 0 ? "features" : "graph") +
          " out of core (gnn-compile --mem-budget); mini-batches sample and "
          "gather from memory");
  std::vector<int64_t> fanouts;
  std::string error;
  if (!expansion && !parseFanouts(fanoutText, fanouts, error))
    fatal("option --fanouts: " + error);
  const ModelInfo &m = ctx->model;
  if (expansion)
    fanouts.assign(std::max<int64_t>(m.hops, 0), -1);
  if (m.hops < 0)
    fatal("--batch-size: the model reduces over all vertices" +
          (m.globalOp.empty() ? std::string() : " (" + m.globalOp + ")") +
          ", which a sampled batch does not hold, or its description has "
          "no hops");
  if (static_cast<int64_t>(fanouts.size()) != m.hops)
    fatal("--fanouts gives " + std::to_string(fanouts.size()) +
          " fanout(s) but the model reads " + std::to_string(m.hops) +
          " hop(s) of neighbours: one fanout per hop, input layer first");
  // Each batch allocates its subgraph anew (on the sampler's thread): keep
  // freed blocks of up to 64 MiB in the heap rather than mapping fresh
  // pages that the kernel clears for every batch (glibc returns a block
  // above its mmap threshold, and a heap's freed top, to the system).
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  ctx->slotHeadroom = true;
  // (Not one conditional expression: its type would be a const Dataset,
  // copied even from the moved dataset.)
  Dataset sampled;
  if (columns)
    sampled = std::move(*columns);
  else if (takeDataset)
    sampled = std::move(ctx->ds);
  else
    sampled = ctx->ds;
  auto mb = std::make_unique<MiniBatchTraining>(std::move(sampled), batchSize,
                                                std::move(fanouts), seed);
  if (expansion)
    mb->useExpansionAware(externalHops, externalFanout);
  if (columns) {
    // ctx->ds without its features (bound at start-up, then a batch's):
    // not copied only to be dropped.
    std::vector<float> features;
    features.swap(ctx->ds.features);
    mb->useFeatureColumns(ctx, ctx->ds);
    features.swap(ctx->ds.features);
  }
  if (mb->numSeeds() == 0)
    fatal("--batch-size: the train split has no labelled vertex to sample "
          "batches from");
  mb->saveBatchesTo(saveBatches);
  mb->setProcesses(worldSize);
  return mb;
}

const Program *gnnrt::miniBatchProgram(const std::vector<Program> &programs,
                                       const std::string &partition,
                                       bool rowSplit, bool dump,
                                       std::string &mode) {
  auto refuse = [](const std::string &what) {
    fatal(what + ": mini-batch training on several processes is data "
                 "parallel (each process trains its share of every batch on "
                 "the whole graph; with --partition pull it holds its rows of "
                 "the features), P³ (--partition features) or co-batches "
                 "(--partition rows; docs/MiniBatch.md)");
  };
  const Program *plain = findProgram(programs, "none");
  const Program *features = findProgram(programs, "features");
  const Program *rows = findProgram(programs, "rows");
  mode = partition == "features" ? "p3"
         : partition == "rows"   ? "co-batch"
         : partition == "pull"   ? "pull"
         : !partition.empty()    ? partition
         : plain                 ? "data-parallel"
         : features              ? "p3"
                                 : "co-batch";
  if (mode != "data-parallel" && mode != "p3" && mode != "co-batch" &&
      mode != "pull")
    refuse("--partition " + partition + " splits full-graph training");
  if (rowSplit && mode != "p3")
    refuse("--row-split and --repartition-gain split the vertices");
  if (dump)
    refuse("--dump writes one full-graph step of one process");
  if (programs.front().model.target == "cuda")
    fatal("the model was compiled for CUDA, which trains in one process for "
          "now (docs/CUDA.md)");
  const Program *program = mode == "p3"         ? features
                           : mode == "co-batch" ? rows
                                                : plain;
  if (mode == "pull" && !plain)
    fatal("--partition pull trains the model's unpartitioned program, and "
          "this executable holds only the " +
          programs.front().model.partition + "-partitioned one");
  if (!program)
    fatal("--batch-size under mpirun trains the model's unpartitioned "
          "program (data parallel), its feature-partitioned one (P³) or its "
          "row-partitioned one (co-batches), and this executable holds only "
          "the " +
          programs.front().model.partition + "-partitioned one");
  // A rows program replicating levels reads the whole graph, which a
  // co-batch does not bind: co-batches then train the one on blocks
  // replicating none (gnn-compile --partition auto holds it) and evaluate
  // with the unpartitioned program.
  if (mode == "co-batch" && program->model.replicated &&
      !(plain && heldRowsBlocksStep()))
    fatal("--partition rows: the model's row-partitioned program replicates "
          "levels on the whole graph, which co-batches do not bind, and the "
          "executable holds no rows program replicating none (gnn-compile "
          "--partition auto adds one): compile it with gnn-compile "
          "--partition rows without --replicate");
  return program;
}
