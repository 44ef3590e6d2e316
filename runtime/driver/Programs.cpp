//===- Programs.cpp - the programs an executable holds, and the choice ----===//

#include "Programs.h"
#include "Context.h"
#include "Memory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

using namespace gnnrt;

extern "C" const char gnnrt_model_info[];
extern "C" float gnn_train_step(gnnrtContext *ctx);
extern "C" float gnn_eval(gnnrtContext *ctx);
// Layer-wise evaluation's levels (gnn-compile --eval-levels), when present.
extern "C" __attribute__((weak)) float gnn_eval_level(gnnrtContext *,
                                                      int64_t);
// The partitioned programs of gnn-compile --partition auto, when present.
extern "C" __attribute__((weak)) const char gnnrt_model_info_rows[];
extern "C" __attribute__((weak)) float gnn_train_step_rows(gnnrtContext *);
extern "C" __attribute__((weak)) float gnn_eval_rows(gnnrtContext *);
// The rows program with the rows several kernels read staged for each
// (gnn-compile --stage-shared-rows), where --partition auto held it.
extern "C" __attribute__((weak)) const char gnnrt_model_info_rows_shared[];
extern "C" __attribute__((weak)) float
gnn_train_step_rows_shared(gnnrtContext *);
extern "C" __attribute__((weak)) float gnn_eval_rows_shared(gnnrtContext *);
extern "C" __attribute__((weak)) const char gnnrt_model_info_features[];
extern "C" __attribute__((weak)) float gnn_train_step_features(gnnrtContext *);
extern "C" __attribute__((weak)) float gnn_eval_features(gnnrtContext *);
// Mini-batch training's program on sampled blocks, when present.
extern "C" __attribute__((weak)) const char gnnrt_model_info_blocks[];
extern "C" __attribute__((weak)) float gnn_train_step_blocks(gnnrtContext *);
// P³'s: the feature-partitioned program in the blocks program's order.
extern "C" __attribute__((weak)) const char gnnrt_model_info_blocks_features[];
extern "C" __attribute__((weak)) float
gnn_train_step_blocks_features(gnnrtContext *);
// Co-batches': the row-partitioned program in that order.
extern "C" __attribute__((weak)) const char gnnrt_model_info_blocks_rows[];
extern "C" __attribute__((weak)) float
gnn_train_step_blocks_rows(gnnrtContext *);

std::vector<Program> gnnrt::heldPrograms() {
  std::vector<Program> programs(1);
  programs.reserve(4); // at most the partitioned three beside it
  programs[0].info = gnnrt_model_info;
  programs[0].train = gnn_train_step;
  programs[0].eval = gnn_eval;
  programs[0].evalLevel = gnn_eval_level;
  auto add = [&programs](const char *info, float (*train)(gnnrtContext *),
                         float (*eval)(gnnrtContext *)) {
    Program &p = programs.emplace_back();
    p.info = info;
    p.train = train;
    p.eval = eval;
  };
  if (gnnrt_model_info_rows && gnn_train_step_rows && gnn_eval_rows)
    add(gnnrt_model_info_rows, gnn_train_step_rows, gnn_eval_rows);
  if (gnnrt_model_info_features && gnn_train_step_features && gnn_eval_features)
    add(gnnrt_model_info_features, gnn_train_step_features, gnn_eval_features);
  // After the others: findProgram's "rows" is the one that all-gathers.
  if (gnnrt_model_info_rows_shared && gnn_train_step_rows_shared &&
      gnn_eval_rows_shared) {
    add(gnnrt_model_info_rows_shared, gnn_train_step_rows_shared,
        gnn_eval_rows_shared);
    programs.back().stagesSharedRows = true;
  }
  std::string error;
  for (Program &p : programs)
    if (!parseModelInfo(p.info, p.model, error))
      fatal("corrupt model description: " + error);
  if (!programs[0].model.levels.empty() && !gnn_eval_level)
    fatal("corrupt executable: the model description has eval-levels but "
          "no gnn_eval_level");
  return programs;
}

bool gnnrt::heldRowsBlocksStep() {
  return gnnrt_model_info_blocks_rows && gnn_train_step_blocks_rows;
}

const Program *gnnrt::miniBatchStep(const Program *program, Program &storage,
                                    const Program *evaluation) {
  const std::string &partition = program->model.partition;
  const char *info = nullptr;
  float (*train)(gnnrtContext *) = nullptr;
  if (partition == "none") {
    info = gnnrt_model_info_blocks;
    train = gnn_train_step_blocks;
  } else if (partition == "features") {
    info = gnnrt_model_info_blocks_features;
    train = gnn_train_step_blocks_features;
  } else if (partition == "rows") { // (replicating no level)
    info = gnnrt_model_info_blocks_rows;
    train = gnn_train_step_blocks_rows;
  }
  if (!info || !train)
    return program;
  std::string error;
  storage = *program;
  storage.info = info;
  storage.train = train;
  storage.model = ModelInfo(); // parseModelInfo appends its records
  if (!parseModelInfo(storage.info, storage.model, error))
    fatal("corrupt model description: " + error);
  // The evaluation stays the whole graph's: the graph arrays of both.
  if (evaluation) {
    storage.eval = evaluation->eval;
    storage.evalLevel = evaluation->evalLevel;
  }
  storage.model.graphArrays |=
      (evaluation ? evaluation : program)->model.graphArrays;
  return &storage;
}

const Program *gnnrt::findProgram(const std::vector<Program> &programs,
                                  const std::string &partition) {
  for (const Program &p : programs)
    if (p.model.partition == partition)
      return &p;
  return nullptr;
}

const Program *gnnrt::stagedRowsForm(const std::vector<Program> &programs) {
  for (const Program &p : programs)
    if (p.stagesSharedRows)
      return &p;
  return nullptr;
}

SharedRowsChoice gnnrt::chooseSharedRows(gnnrtContext *ctx,
                                         const std::vector<Program> &programs,
                                         const Program *rows,
                                         const std::string &request,
                                         const OptimizerConfig &opt,
                                         const std::vector<int64_t> &starts) {
  SharedRowsChoice choice;
  choice.program = rows;
  const Program *staged = stagedRowsForm(programs);
  if (!rows || rows->model.partition != "rows" || rows->stagesSharedRows)
    return choice;
  if (!staged) {
    if (request == "stage" && ctx->comm->rank() == 0)
      std::fprintf(stderr,
                   "warning: --shared-rows stage: the executable holds one "
                   "rows program, which stages the rows several kernels "
                   "read where gnn-compile --stage-shared-rows compiled it "
                   "so (gnn-compile --partition auto holds both forms where "
                   "the model has such rows)\n");
    return choice;
  }
  if (request == "gather")
    return choice;
  if (request == "stage") {
    choice.program = staged;
    choice.why = "shared rows staged (--shared-rows stage)";
    return choice;
  }
  // auto: every process agrees (a collective each, on every process).
  const ModelInfo saved = ctx->model;
  std::string gathered, stagedShort;
  ctx->model = rows->model;
  choice.voted = true;
  choice.fits = partsFit(ctx, opt, starts, gathered);
  ++choice.votes;
  if (!choice.fits) {
    ctx->model = staged->model;
    choice.fits = partsFit(ctx, opt, starts, stagedShort);
    ++choice.votes;
    choice.program = staged;
    choice.shortage = stagedShort;
    choice.why = "shared rows staged (all-gathered, " + gathered +
                 (choice.fits ? "" : "; staged, " + stagedShort) + ")";
  }
  ctx->model = saved;
  return choice;
}

double gnnrt::predictedEpochBytes(const ModelInfo &model, int64_t numVertices,
                                  int64_t numFeatures, int64_t numClasses) {
  double rows = 0, floats = 0;
  for (const ModelInfo::RowCollective &c : model.rowCollectives) {
    double width = static_cast<double>(c.factor);
    for (BufferInfo::Term t : c.terms)
      width *= t == BufferInfo::F ? numFeatures : numClasses;
    rows += width;
  }
  for (const ParamInfo &p : model.params) {
    if (model.partition == "features" && !p.dims.empty() && p.dims[0] == -1)
      continue; // a feature shard
    double n = 1;
    for (int64_t d : p.dims)
      n *= d == -1 ? numFeatures : d == -2 ? numClasses : d;
    floats += n;
  }
  return 4.0 * (static_cast<double>(numVertices) * rows + 2.0 * floats);
}

int64_t gnnrt::wholeGraphExtraBytes(const ModelInfo &model,
                                    const int64_t counts[3], int size) {
  const bool features = model.partition == "features";
  if (!features && !model.replicated)
    return 0;
  const double V = static_cast<double>(counts[0]);
  const double E = static_cast<double>(counts[1]);
  const double F = static_cast<double>(counts[2]);
  // The CSC (int64 offsets, int32 sources), the per-edge arrays the program
  // reads (int32 each), CSR offsets and a cursor, two degrees per vertex.
  const int perEdge = __builtin_popcount(model.graphArrays & 0xE);
  const double graph = E * (4 + 4 * perEdge) + (V + 1) * (8 + 2 * 8 + 2 * 4);
  const double columns =
      features ? V * std::ceil(F / size) * 4 - (V / size) * F * 4
      : model.replicatedFeatures ? V * F * 4 - (V / size) * F * 4
                                 : 0;
  const double extra = graph + std::max(columns, 0.0);
  return extra >= 9e18 ? std::numeric_limits<int64_t>::max()
                       : static_cast<int64_t>(extra);
}

int64_t gnnrt::partBytes(const ModelInfo &model, const int64_t counts[4],
                         int size, const OptimizerConfig &opt) {
  const int64_t n = std::max(size, 1);
  const double V = static_cast<double>(counts[0]);
  const double E = static_cast<double>(counts[1]);
  const double F = static_cast<double>(counts[2]);
  // int32 sources; int64 offsets, int64 labels, three byte masks and the
  // features per vertex.
  const double own = (E * 4 + V * (8 + 8 + 3 + 4 * F)) / static_cast<double>(n);
  double bytes =
      own + static_cast<double>(wholeGraphExtraBytes(model, counts, size));
  // The training's peak at a part's sizes: V/N rows with their E/N
  // in-edges from every vertex (the whole graph too where the program
  // reads it; feature partitioning's F/N columns).
  gnnrtContext part;
  part.model = model;
  Dataset &ds = part.ds;
  ds.numVertices = (counts[0] + n - 1) / n;
  ds.numEdges = (counts[1] + n - 1) / n;
  ds.numSources = counts[0];
  ds.numFeatures =
      model.partition == "features" ? (counts[2] + n - 1) / n : counts[2];
  ds.numClasses = counts[3];
  if (model.partition == "features" || model.replicated)
    part.wholeEdges = counts[1];
  TrainingMemory need;
  std::string error;
  if (estimateTrainingMemory(&part, opt, need, error))
    bytes += static_cast<double>(need.peak());
  return bytes >= 9e18 ? std::numeric_limits<int64_t>::max()
                       : static_cast<int64_t>(bytes);
}

void gnnrt::checkRequestedPartition(const std::vector<Program> &programs,
                                    const std::string &partition) {
  if (partition.empty())
    return;
  const std::string &compiled = programs[0].model.partition;
  const bool choosing = programs.size() > 1;
  if (!findProgram(programs, "none") && !findProgram(programs, "rows") &&
      partition != "features")
    fatal("--partition " + partition +
          ": the model was compiled with gnn-compile --partition features, "
          "which trains split by feature columns only");
  if ((partition == "features" || partition == "rows") &&
      !findProgram(programs, partition))
    fatal("--partition " + partition +
          (choosing ? std::string(": the model's ") +
                          (partition == "rows" ? "row" : "feature") +
                          " partitioning was refused when it was compiled "
                          "(gnn-compile --partition " +
                          partition + " says why)"
                    : " needs a model compiled with gnn-compile --partition " +
                          partition + " or auto; this one " +
                          (compiled == "none" ? "preloads"
                                              : "is split by " + compiled)));
  if (partition == "auto" && !choosing && compiled == "none")
    fatal("--partition auto needs a model compiled with gnn-compile "
          "--partition auto or rows; this one preloads");
}

std::string gnnrt::formatMB(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", bytes / 1e6);
  return text;
}

SplitCandidates gnnrt::splitCandidates(const std::vector<Program> &programs,
                                       const std::string &data,
                                       const std::string &rowSplit, int size,
                                       bool describe,
                                       const OptimizerConfig *opt,
                                       const std::string &sharedRows) {
  Dataset meta;
  int64_t counts[4];
  std::vector<std::string> edgeNames;
  std::string error;
  if (!readDatasetMeta(data, meta, counts, edgeNames, error))
    fatal(data + "/" + error);
  SplitCandidates split;
  const Program *staged = stagedRowsForm(programs);
  for (const std::string m : {"rows", "features"}) {
    const Program *p = findProgram(programs, m);
    if (!p || ((m == "features" || p->model.replicated) && rowSplit == "roc"))
      continue;
    const double b =
        predictedEpochBytes(p->model, counts[0], counts[2], counts[3]);
    int64_t need = opt ? partBytes(p->model, counts, size, *opt) : -1;
    // Rows: the part with shared rows staged where the executable may take
    // that form (chooseSharedRows, once the part is loaded).
    if (opt && m == "rows" && staged && sharedRows != "gather")
      need = std::min(need, partBytes(staged->model, counts, size, *opt));
    split.candidates.push_back(
        {p, b, wholeGraphExtraBytes(p->model, counts, size), need});
    if (describe)
      split.bytes += (split.bytes.empty() ? "; per epoch each process moves "
                                            "(N-1)/N x: "
                                          : ", ") +
                     m + (p->model.replicated ? " (replicated layers) " : " ") +
                     formatMB(b);
  }
  return split;
}

const Program *SplitCandidates::choose(const AutoVote &vote, std::string &why,
                                       bool partsMustFit) const {
  const Program *best = nullptr;
  double least = 0;
  for (const Candidate &c : candidates) {
    if (partsMustFit && c.part > vote.leastAvailable) {
      why += "; " + c.program->model.partition + ": a process's part would " +
             "need about " + formatBytes(c.part) +
             " with its training, the tightest has " +
             formatBytes(vote.leastAvailable) + " left";
      continue;
    }
    if (c.extra > vote.leastAvailable && candidates.size() > 1) {
      why += "; " + c.program->model.partition + " would hold " +
             formatBytes(c.extra) + " more per process, the tightest has " +
             formatBytes(vote.leastAvailable) + " left";
      continue;
    }
    if (!best || c.bytes < least) {
      best = c.program;
      least = c.bytes;
    }
  }
  return best;
}
