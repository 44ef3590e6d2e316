//===- TrainingMemoryTest.cpp - sizing the training state up front --------===//
//
// The driver refuses a model whose training state does not fit before it
// allocates any (TrainingMemory.cpp). Checked here: the `buffer` records of
// the model description parse (and malformed ones are refused); the estimate
// equals a direct evaluation of the records on random sizes (a slot costs
// its largest buffer); sizes saturate instead of wrapping; a parameter too
// large for int64 arithmetic is refused with its shape; and the message
// names the parts, the limit and the optimizer hint only when it helps; a
// plan's peak stands for the buffers only on a dataset whose row chunks hold
// no more edges than its edge-chunked buffers were sized with.
// (test/Runtime/memory.test checks the estimate against the device's
// high-water mark on the zoo models.)
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "Memory.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

using namespace gnnrt;

namespace {

const char *kModel = "model m\n"
                     "param w glorot 0 2 -1 32\n"
                     "param b zeros 0 1 32\n"
                     "param out glorot 0 2 32 -2\n"
                     "edge weight f32 3\n"
                     "features -1\n"
                     "classes -1\n"
                     "buffer 0 1 F*V\n"
                     "buffer 0 32 V\n"
                     "buffer 1 4 E\n"
                     "buffer 1 1 C*V/32\n"
                     "buffer 2 32 1\n"
                     "buffer 3 1 ?\n";

gnnrtContext *makeContext(const char *model, int64_t V, int64_t E, int64_t F,
                          int64_t C) {
  auto *ctx = new gnnrtContext();
  std::string error;
  EXPECT_TRUE(parseModelInfo(model, ctx->model, error)) << error;
  ctx->ds.name = "d";
  ctx->ds.numVertices = V;
  ctx->ds.numEdges = E;
  ctx->ds.numFeatures = F;
  ctx->ds.numClasses = C;
  return ctx;
}

TEST(TrainingMemory, ParsesBufferRecords) {
  std::unique_ptr<gnnrtContext> ctx(makeContext(kModel, 1, 1, 1, 1));
  const auto &b = ctx->model.buffers;
  ASSERT_EQ(b.size(), 6u);
  EXPECT_EQ(b[0].slot, 0);
  EXPECT_EQ(b[0].factor, 1);
  ASSERT_EQ(b[0].terms.size(), 2u);
  EXPECT_EQ(b[0].terms[0].first, BufferInfo::F);
  EXPECT_EQ(b[0].terms[1].first, BufferInfo::V);
  EXPECT_EQ(b[3].terms[1].first, BufferInfo::VChunks);
  EXPECT_EQ(b[3].terms[1].second, 32);
  EXPECT_TRUE(b[4].terms.empty());
  EXPECT_TRUE(b[5].unknown);
  for (const char *bad :
       {"buffer -1 1 V\n", "buffer 0 -3 V\n", "buffer 0 1 X\n",
        "buffer 0 1 V/0\n", "buffer 0 1 E/4\n", "buffer 0 1 V/4x\n",
        "buffer 0 1\n", "buffer 0 1 V**E\n"}) {
    ModelInfo info;
    std::string error;
    EXPECT_FALSE(parseModelInfo(bad, info, error)) << bad;
    EXPECT_NE(error.find("buffer"), std::string::npos) << error;
  }
}

// The eval-buffer records: the buffers the evaluation takes, which an
// evaluation's estimate counts alone (every buffer without them); the rest
// of the state is the training estimate's.
TEST(TrainingMemory, EvalBufferRecordsSizeAnEvaluation) {
  const int64_t V = 100, E = 1000, F = 4, C = 2;
  std::unique_ptr<gnnrtContext> none(makeContext(kModel, V, E, F, C));
  EXPECT_FALSE(none->model.evalBuffersKnown);
  // Slot 0 takes F*V floats in the evaluation (32 V in training), slot 2
  // 32; slots 1 and 3 are the training step's alone.
  std::string model =
      std::string(kModel) + "eval-buffer 0 1 F*V\neval-buffer 2 32 1\n";
  std::unique_ptr<gnnrtContext> two(makeContext(model.c_str(), V, E, F, C));
  ASSERT_TRUE(two->model.evalBuffersKnown);
  ASSERT_EQ(two->model.evalBuffers.size(), 2u);
  EXPECT_EQ(two->model.buffers.size(), 6u);
  OptimizerConfig opt;
  TrainingMemory train, all, eval;
  std::string error;
  ASSERT_TRUE(
      estimateTrainingMemory(two->model, two->ds, opt, train, error)) << error;
  ASSERT_TRUE(
      estimateEvaluationMemory(none->model, none->ds, opt, all, error)) << error;
  ASSERT_TRUE(
      estimateEvaluationMemory(two->model, two->ds, opt, eval, error)) << error;
  EXPECT_EQ(train.activations, (32 * V + 4 * E + 32) * 4);
  EXPECT_EQ(all.activations, train.activations);
  EXPECT_EQ(eval.activations, (F * V + 32) * 4);
  EXPECT_EQ(eval.graph, train.graph);
  EXPECT_EQ(eval.features, train.features);
  EXPECT_EQ(eval.parameters, train.parameters);
  EXPECT_TRUE(all.unknownBuffers);
  EXPECT_FALSE(eval.unknownBuffers);
  for (const char *bad : {"eval-buffer -1 1 V\n", "eval-buffer 0 1 X\n",
                          "eval-buffer 0 1\n", "eval-buffer 0 1 V/0\n"}) {
    ModelInfo info;
    EXPECT_FALSE(parseModelInfo(bad, info, error)) << bad;
    EXPECT_NE(error.find("eval-buffer"), std::string::npos) << error;
  }
}

// Layer-wise evaluation's records (gnn-compile --eval-levels): each level's
// cuts read and left, the cuts' row widths, each level's buffers.
TEST(TrainingMemory, ParsesLevelRecords) {
  const std::string model = std::string(kModel) +
                            "eval-levels 2\n"
                            "level 1 0 2 0 1\n"
                            "cut 0 16 1\n"
                            "cut 1 1 C\n"
                            "level-buffer 1 0 1 F*V\n"
                            "level-buffer 1 1 16 V\n"
                            "level 2 2 1 0 0\n"
                            "level-buffer 2 0 1 C*V\n";
  ModelInfo info;
  std::string error;
  ASSERT_TRUE(parseModelInfo(model, info, error)) << error;
  ASSERT_EQ(info.levels.size(), 2u);
  EXPECT_EQ(info.levels[0].inputs, std::vector<int64_t>{});
  EXPECT_EQ(info.levels[0].outputs, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(info.levels[1].inputs, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(info.levels[1].outputs, std::vector<int64_t>{});
  ASSERT_EQ(info.levels[0].buffers.size(), 2u);
  EXPECT_EQ(info.levels[0].buffers[1].factor, 16);
  ASSERT_EQ(info.levels[1].buffers.size(), 1u);
  ASSERT_EQ(info.cutWidths.size(), 2u);
  EXPECT_EQ(info.cutWidths.at(0).factor, 16);
  EXPECT_TRUE(info.cutWidths.at(0).terms.empty());
  ASSERT_EQ(info.cutWidths.at(1).terms.size(), 1u);
  EXPECT_EQ(info.cutWidths.at(1).terms[0].first, BufferInfo::C);
  // The level functions' buffers are not the step's or the evaluation's.
  EXPECT_FALSE(info.evalBuffersKnown);

  const std::string one = "eval-levels 2\nlevel 1 0 1 0\ncut 0 16 1\n";
  for (const std::string &text : {
           // Fewer level records than eval-levels, and out of order.
           std::string("eval-levels 2\nlevel 1 0 0\n"),
           std::string("eval-levels 2\nlevel 2 0 0\n"),
           std::string("level 1 0 0\n"),
           std::string("eval-levels 0\n"),
           // A cut read that no lower level leaves, or without a width.
           one + "level 2 1 1 0\n",
           std::string("eval-levels 2\nlevel 1 0 1 0\nlevel 2 1 0 0\n"),
           // Left twice, by the last level, or with a bad width.
           one + "level 2 1 0 1 0\n",
           std::string("eval-levels 1\nlevel 1 0 1 0\ncut 0 16 1\n"),
           std::string("eval-levels 2\nlevel 1 0 1 0\ncut 0 16 V\n"
                       "level 2 1 0 0\n"),
           std::string("eval-levels 2\nlevel 1 0 1 0\ncut 0 0 1\n"
                       "level 2 1 0 0\n"),
           std::string("eval-levels 2\nlevel 1 0 1 0\ncut 0 16 ?\n"
                       "level 2 1 0 0\n"),
           one + "cut 0 16 1\nlevel 2 1 0 0\n",
           // A level's buffer before its level record; counts out of range.
           std::string("eval-levels 1\nlevel-buffer 1 0 1 V\nlevel 1 0 0\n"),
           std::string("eval-levels 1\nlevel 1 -1\n"),
           std::string("eval-levels 1\nlevel 1 1\n")}) {
    ModelInfo bad;
    EXPECT_FALSE(parseModelInfo(std::string(kModel) + text, bad, error))
        << text;
  }
}

// The graph-arrays record: the per-edge arrays of the graph the program
// reads, which the estimate counts (4 bytes per edge each, besides the
// dataset's sources); without it, all of them; the sources are always there.
TEST(TrainingMemory, GraphArraysRecordSizesTheGraph) {
  std::string model = std::string(kModel);
  std::unique_ptr<gnnrtContext> all(makeContext(model.c_str(), 10, 1000, 4, 2));
  EXPECT_EQ(all->model.graphArrays, 0xFu);
  std::string gcnLike = model + "graph-arrays 9\n";
  std::unique_ptr<gnnrtContext> two(
      makeContext(gcnLike.c_str(), 10, 1000, 4, 2));
  EXPECT_EQ(two->model.graphArrays, 9u);
  OptimizerConfig opt;
  TrainingMemory a, b;
  std::string error;
  ASSERT_TRUE(estimateTrainingMemory(all.get(), opt, a, error)) << error;
  ASSERT_TRUE(estimateTrainingMemory(two.get(), opt, b, error)) << error;
  EXPECT_EQ(a.graph - b.graph, 2 * 4 * 1000); // dst and csrEdge
  for (const char *bad :
       {"graph-arrays 16\n", "graph-arrays 8\n", "graph-arrays -1\n",
        "graph-arrays\n", "graph-arrays x\n"}) {
    ModelInfo info;
    EXPECT_FALSE(parseModelInfo(bad, info, error)) << bad;
    EXPECT_NE(error.find("graph-arrays"), std::string::npos) << error;
  }
  // The evaluation's (mini-batch training binds the whole graph with
  // them): a subset of the program's, with the sources.
  ModelInfo eval;
  ASSERT_TRUE(parseModelInfo(gcnLike + "eval-graph-arrays 1\n", eval, error))
      << error;
  EXPECT_EQ(eval.graphArrays, 9u);
  EXPECT_EQ(eval.evalGraphArrays, 1u);
  for (const std::string &bad :
       {gcnLike + "eval-graph-arrays 3\n", gcnLike + "eval-graph-arrays 8\n",
        model + "graph-arrays 1\neval-graph-arrays 9\n",
        gcnLike + "eval-graph-arrays\n"}) {
    ModelInfo info;
    EXPECT_FALSE(parseModelInfo(bad, info, error)) << bad;
    EXPECT_NE(error.find("eval-graph-arrays"), std::string::npos) << error;
  }
}

// A plan's peak bounds a smaller graph's (a closure of shared preloading)
// where none of its row chunks is larger than the plan's smallest:
// gnnrtChunkRowBound rounds the bounds down to blocks of 32 rows, so 64
// vertices in 2 chunks are 32 and 32, 60 vertices 0 and 60 (larger), 32
// vertices 0 and 32. Without row chunks every buffer shrinks with the
// graph.
TEST(TrainingMemory, APlansPeakBoundsASmallerGraphWithNoLargerChunks) {
  const std::string planned = std::string(kModel) +
                              "placement train 1 4096 64 100 4 2\n"
                              "placement eval 0 0 64 100 4 2\n";
  auto placed = [&](const std::string &model, int64_t V, int64_t E, int64_t F) {
    std::unique_ptr<gnnrtContext> ctx(makeContext(model.c_str(), V, E, F, 2));
    TrainingMemory need;
    std::string error;
    EXPECT_TRUE(
        estimateTrainingMemory(ctx.get(), OptimizerConfig(), need, error))
        << error;
    return need.placed;
  };
  const std::string chunked = planned + "row-chunks 2\n";
  EXPECT_TRUE(placed(chunked, 64, 100, 4)) << "the plan's own sizes";
  EXPECT_TRUE(placed(chunked, 32, 90, 4)) << "chunks of 0 and 32 rows";
  EXPECT_FALSE(placed(chunked, 60, 90, 4)) << "a chunk of 60 rows";
  EXPECT_FALSE(placed(chunked, 32, 101, 4)) << "more edges";
  EXPECT_FALSE(placed(chunked, 96, 100, 4)) << "more vertices";
  EXPECT_FALSE(placed(chunked, 32, 90, 5)) << "other features";
  EXPECT_TRUE(placed(planned, 60, 90, 4)) << "no row chunks";
  std::string error;
  ModelInfo info;
  for (const char *bad : {"row-chunks\n", "row-chunks 1\n", "row-chunks x\n"})
    EXPECT_FALSE(parseModelInfo(bad, info, error)) << bad;
}

// A plan's peak counts for a dataset of its sizes, and, when its
// edge-chunked buffers (gnnrtBufferEdgeChunks) were sized by the row
// chunks' in-edges (the edge-chunks record), only for one whose chunks hold
// no more edges than that; otherwise the unplanned estimate stands.
TEST(TrainingMemory, EdgeChunksRecordBoundsThePlansPeak) {
  // 64 vertices in 2 row chunks ([0, 32), [32, 64)), 100 edges.
  const std::string planned = std::string(kModel) +
                              "placement train 1 4096 64 100 4 2\n"
                              "placement eval 0 0 64 100 4 2\n";
  auto activations = [&](const std::string &model,
                         const std::vector<int64_t> &indptr) {
    std::unique_ptr<gnnrtContext> ctx(
        makeContext(model.c_str(), 64, 100, 4, 2));
    ctx->ds.indptr = indptr;
    TrainingMemory need;
    std::string error;
    EXPECT_TRUE(
        estimateTrainingMemory(ctx.get(), OptimizerConfig(), need, error))
        << error;
    return need.placed ? need.activations : -1;
  };
  std::vector<int64_t> even(65), skewed(65);
  for (int64_t v = 0; v <= 64; ++v) {
    even[v] = v * 100 / 64;
    skewed[v] = v <= 32 ? v * 3 : 96 + (v - 32) / 8; // 96 edges in chunk 0
  }
  skewed[64] = 100;
  EXPECT_EQ(activations(planned, even), 4096) << "no edge-chunks record";
  EXPECT_EQ(activations(planned, skewed), 4096);
  const std::string chunked = planned + "edge-chunks 2 50 50\n";
  EXPECT_EQ(activations(chunked, even), 4096) << "50 and 50 edges";
  EXPECT_EQ(activations(chunked, skewed), -1) << "96 edges in chunk 0";
  EXPECT_EQ(activations(chunked, {}), -1) << "no offsets to compare";
  for (const char *bad :
       {"edge-chunks 0\n", "edge-chunks 2 5\n", "edge-chunks 2 5 -1\n",
        "edge-chunks x\n", "edge-chunks 5000 1\n"}) {
    ModelInfo info;
    std::string error;
    EXPECT_FALSE(parseModelInfo(bad, info, error)) << bad;
    EXPECT_NE(error.find("edge-chunks"), std::string::npos) << error;
  }
}

TEST(TrainingMemory, EqualsTheRecordsEvaluated) {
  std::mt19937_64 rng(20261125);
  for (int trial = 0; trial < 50; ++trial) {
    const int64_t V = 1 + rng() % 100000, E = rng() % 2000000,
                  F = 1 + rng() % 1000, C = 1 + rng() % 50;
    std::unique_ptr<gnnrtContext> ctx(makeContext(kModel, V, E, F, C));
    OptimizerConfig opt;
    opt.kind = trial % 3 == 0   ? OptimizerConfig::Adam
               : trial % 3 == 1 ? OptimizerConfig::SGD
                                : OptimizerConfig::SGD;
    opt.momentum = trial % 3 == 2 ? 0.0 : 0.9;
    TrainingMemory need;
    std::string error;
    ASSERT_TRUE(estimateTrainingMemory(ctx.get(), opt, need, error)) << error;
    // Slot 0: max(F*V, 32*V); slot 1: max(4*E, C*ceil(V/32)); slot 2: 32;
    // slot 3 unknown.
    const int64_t slot0 = std::max(F * V, 32 * V);
    const int64_t slot1 = std::max(4 * E, C * ((V + 31) / 32));
    EXPECT_EQ(need.activations, 4 * (slot0 + slot1 + 32));
    EXPECT_TRUE(need.unknownBuffers);
    const int64_t paramFloats = F * 32 + 32 + 32 * C;
    EXPECT_EQ(need.parameters, 2 * 4 * paramFloats);
    const int64_t states = opt.kind == OptimizerConfig::Adam ? 2
                           : opt.momentum != 0.0             ? 1
                                                             : 0;
    EXPECT_EQ(need.optimizer, states * 4 * paramFloats);
    EXPECT_EQ(need.staging, 4 * std::max(F * 32, 32 * C));
    EXPECT_EQ(need.features, 4 * V * F);
    EXPECT_EQ(need.edgeInputs, 4 * 3 * E);
    EXPECT_GT(need.graph, 12 * E);
    EXPECT_GE(need.peak(), need.features);
    EXPECT_GE(need.peak(),
              need.activations + need.parameters + need.optimizer + need.graph);
  }
}

TEST(TrainingMemory, SaturatesInsteadOfWrapping) {
  std::unique_ptr<gnnrtContext> ctx(
      makeContext("model m\nbuffer 0 1099511627776 E*V*F\n", INT32_MAX,
                  INT32_MAX, 1 << 24, 1));
  TrainingMemory need;
  std::string error;
  ASSERT_TRUE(
      estimateTrainingMemory(ctx.get(), OptimizerConfig(), need, error));
  EXPECT_GT(need.activations, int64_t(1) << 59);
  EXPECT_GT(need.peak(), 0);
  AvailableMemory avail;
  avail.bytes = int64_t(1) << 40;
  avail.source = "MemAvailable";
  EXPECT_FALSE(
      checkTrainingMemory(ctx.get(), OptimizerConfig(), avail, need, error));
}

TEST(TrainingMemory, RefusesParametersTooLargeForTheDataset) {
  std::unique_ptr<gnnrtContext> ctx(makeContext(
      "model m\nparam cube glorot 0 3 -1 -1 -1\n", 10, 10, 1 << 24, 2));
  TrainingMemory need;
  std::string error;
  EXPECT_FALSE(
      estimateTrainingMemory(ctx.get(), OptimizerConfig(), need, error));
  EXPECT_EQ(error, "parameter 'cube' of shape (F=16777216, F=16777216, "
                   "F=16777216) has more than 17179869184 elements (the most "
                   "a parameter may have)");
}

TEST(TrainingMemory, MessageNamesPartsLimitAndHint) {
  // Parameter-heavy: 2^26 floats of weights (256 MiB), so that dropping
  // Adam's moments (512 MiB) is what makes it fit.
  const char *model = "model big\nparam w glorot 0 2 -1 65536\n"
                      "buffer 0 16 V\n";
  std::unique_ptr<gnnrtContext> ctx(makeContext(model, 1000, 5000, 1024, 2));
  OptimizerConfig adam;
  TrainingMemory need;
  std::string error;
  ASSERT_TRUE(estimateTrainingMemory(ctx.get(), adam, need, error));
  AvailableMemory avail;
  avail.source = "ulimit -v";

  avail.bytes = need.peak();
  EXPECT_TRUE(checkTrainingMemory(ctx.get(), adam, avail, need, error));
  avail.bytes = -1; // unknown: no check
  EXPECT_TRUE(checkTrainingMemory(ctx.get(), adam, avail, need, error));

  avail.bytes = need.peak() - need.optimizer;
  EXPECT_FALSE(checkTrainingMemory(ctx.get(), adam, avail, need, error));
  EXPECT_NE(error.find("training big on d needs 1.3 GiB of memory beyond the "
                       "dataset (activations 62.5 KiB, parameters and "
                       "gradients 512.0 MiB, Adam's moments 512.0 MiB"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("but 768."), std::string::npos) << error;
  EXPECT_NE(error.find("(ulimit -v); --optimizer sgd --momentum 0 keeps no "
                       "optimizer state and would fit"),
            std::string::npos)
      << error;

  avail.bytes = need.peak() - need.optimizer - 1;
  EXPECT_FALSE(checkTrainingMemory(ctx.get(), adam, avail, need, error));
  EXPECT_EQ(error.find("--optimizer"), std::string::npos) << error;
  EXPECT_NE(error.find("a machine with more memory"), std::string::npos);
}

// On a GPU (--target=cuda) the features' copy stays in device memory beside
// everything else, the host's staging is not there, and the limit is the
// GPU's free memory or what --mem-budget leaves its pool.
TEST(TrainingMemory, OnTheGPUCountsTheFeaturesAndTheBudget) {
  std::unique_ptr<gnnrtContext> ctx(makeContext(kModel, 1000, 5000, 64, 8));
  OptimizerConfig adam;
  TrainingMemory need;
  std::string error;
  ASSERT_TRUE(estimateTrainingMemory(ctx.get(), adam, need, error));
  ASSERT_GT(need.features, 0);
  ASSERT_GT(need.staging, 0);
  EXPECT_EQ(need.devicePeak(), need.features + need.graph + need.edgeInputs +
                                   need.parameters + need.optimizer +
                                   need.activations);

  // The budget when it leaves less than the GPU has free, else the GPU.
  AvailableMemory a = deviceAvailableMemory(1 << 30, 1000, 400);
  EXPECT_EQ(a.bytes, 600);
  EXPECT_EQ(a.source, "--mem-budget");
  a = deviceAvailableMemory(500, 1000, 400);
  EXPECT_EQ(a.bytes, 500);
  EXPECT_EQ(a.source, "the GPU's free memory");
  a = deviceAvailableMemory(500, 0, 400);
  EXPECT_EQ(a.bytes, 500);
  a = deviceAvailableMemory(-1, 1000, 1200);
  EXPECT_EQ(a.bytes, 0);
  EXPECT_EQ(a.source, "--mem-budget");
  EXPECT_FALSE(deviceAvailableMemory(-1, 0, 0).known());

  a = deviceAvailableMemory(-1, need.devicePeak(), 0);
  EXPECT_TRUE(checkTrainingMemory(ctx.get(), adam, a, need, error,
                                  /*onDevice=*/true));
  a = deviceAvailableMemory(-1, need.devicePeak() - 1, 0);
  EXPECT_FALSE(checkTrainingMemory(ctx.get(), adam, a, need, error,
                                   /*onDevice=*/true));
  EXPECT_EQ(error.rfind("training m on d needs ", 0), 0u) << error;
  EXPECT_NE(error.find(" of GPU memory (activations "), std::string::npos)
      << error;
  EXPECT_NE(error.find(", features 250.0 KiB)"), std::string::npos) << error;
  EXPECT_EQ(error.find("staging"), std::string::npos) << error;
  EXPECT_NE(error.find("is available (--mem-budget); raise --mem-budget"),
            std::string::npos)
      << error;
  // The host's check of the same need passes where the GPU's does not: the
  // features are not counted twice there.
  a.source = "MemAvailable";
  EXPECT_TRUE(checkTrainingMemory(ctx.get(), adam, a, need, error));
}

TEST(TrainingMemory, APartitionedProgramOverTheBudgetAsksForMoreProcesses) {
  // gnn-compile --mem-budget plans the preloading program; the partitioned
  // ones it holds keep every buffer resident, so the advice is not to
  // compile for the budget.
  std::unique_ptr<gnnrtContext> ctx(makeContext(kModel, 1000, 5000, 64, 8));
  OptimizerConfig adam;
  TrainingMemory need;
  std::string error;
  ASSERT_TRUE(estimateTrainingMemory(ctx.get(), adam, need, error));
  AvailableMemory a;
  a.bytes = need.peak() - 1;
  a.source = "--mem-budget";
  EXPECT_FALSE(checkTrainingMemory(ctx.get(), adam, a, need, error));
  EXPECT_NE(error.find("compile the model for it"), std::string::npos)
      << error;
  // A rows program alone (or preloading) is not split: the same advice.
  ctx->model.partition = "rows";
  EXPECT_FALSE(checkTrainingMemory(ctx.get(), adam, a, need, error));
  EXPECT_NE(error.find("compile the model for it"), std::string::npos) << error;
  ctx->rowStarts = {0, 600, 1000}; // rows [0, 600) of 1000 on 2 processes
  EXPECT_FALSE(checkTrainingMemory(ctx.get(), adam, a, need, error));
  EXPECT_NE(error.find("(--mem-budget); raise --mem-budget or train on more "
                       "processes (a partitioned program keeps each "
                       "process's buffers resident"),
            std::string::npos)
      << error;
  a.bytes = need.peak();
  EXPECT_TRUE(checkTrainingMemory(ctx.get(), adam, a, need, error));
}

TEST(Memory, FormatsBytes) {
  EXPECT_EQ(formatBytes(0), "0 B");
  EXPECT_EQ(formatBytes(1023), "1023 B");
  EXPECT_EQ(formatBytes(1024), "1.0 KiB");
  EXPECT_EQ(formatBytes(int64_t(3) << 29), "1.5 GiB");
  EXPECT_EQ(formatBytes(int64_t(1) << 62), "4.0 EiB");
}

TEST(Memory, AvailableIsKnownHere) {
  // Linux always has MemAvailable.
  AvailableMemory avail = availableMemory();
  EXPECT_TRUE(avail.known());
  EXPECT_FALSE(avail.source.empty());
  std::string error;
  EXPECT_TRUE(checkMemory("x", 0, error));
  EXPECT_FALSE(checkMemory("x.npy: its data", int64_t(1) << 62, error));
  EXPECT_EQ(error.rfind("x.npy: its data needs 4.0 EiB of memory but ", 0), 0u)
      << error;
}

} // namespace
