//===- gnnrt_main.cpp - the driver linked into every compiled model -------===//
//
// A compiled model provides three symbols:
//   extern "C" const char gnnrt_model_info[];          (see Context.h)
//   extern "C" float gnn_train_step(gnnrtContext *);   forward, backward,
//   update extern "C" float gnn_eval(gnnrtContext *);         forward without
//   dropout
// Both functions record the logits with gnnrtSetOutput and return the loss.
// This driver parses the flags, loads the dataset, initialises or loads the
// parameters, runs the epochs and writes the results.
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "Device.h"
#include "Distributed.h"
#include "File.h"
#include "Json.h"
#include "Memory.h"
#include "MiniBatch.h"
#include "Npy.h"
#include "Options.h"
#include "Params.h"
#include "Preload.h"
#include "Programs.h"
#include "RowSplit.h"
#include "Summary.h"
#include "Threads.h"
#include "gnnrt/GNNRuntime.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

/// The CUDA device (runtime/lib/CUDA/GPULaunch.cpp), present in programs
/// compiled with --target=cuda.
extern "C" __attribute__((weak)) gnnrt::Device *gnnrtCreateCUDADevice();

using namespace gnnrt;

namespace {

struct EpochRecord {
  int64_t epoch;
  double loss, train, val, test, ms;
  bool evaluated;
};

/// OpenBLAS 0.3.21 (Debian 12) does not know recent Intel cores and falls
/// back to its Prescott (SSE3) kernels, several times slower. When that
/// happens on a CPU with AVX-512 (or AVX2), run again with
/// OPENBLAS_CORETYPE naming the matching kernels (read when OpenBLAS loads);
/// and with OMP_WAIT_POLICY passive for mini-batch training
/// (passiveWaitsForMiniBatches; libgomp reads it when it loads).
void selectBlasKernels(char **argv) {
  bool changed = passiveWaitsForMiniBatches(argv);
  const char *core = __builtin_cpu_supports("avx512f") ? "SkylakeX"
                     : __builtin_cpu_supports("avx2")  ? "Haswell"
                                                       : nullptr;
  if (!std::getenv("OPENBLAS_CORETYPE") && core &&
      std::strcmp(openblas_get_corename(), "Prescott") == 0) {
    setenv("OPENBLAS_CORETYPE", core, 1);
    changed = true;
  }
  if (changed)
    execv("/proc/self/exe", argv); // returns only on failure: keep going
}

/// The training options every rank must share, as text for
/// checkSameTraining's fingerprint (with the dataset's sizes).
std::string trainingText(const gnnrtContext *ctx, const Options &o,
                         const FullGraph &full) {
  const Dataset &ds = ctx->ds;
  char numbers[512];
  std::snprintf(
      numbers, sizeof numbers,
      "%lld %lld %lld %lld %lld %lld %llu %.17g %d %.17g %.17g "
      "%.17g %.17g %.17g %.17g %lld %lld %s %s %.17g %lld %lld",
      static_cast<long long>(full.numVertices),
      static_cast<long long>(full.numEdges),
      static_cast<long long>(ctx->featureTotal >= 0 ? ctx->featureTotal
                                                    : ds.numFeatures),
      static_cast<long long>(ds.numClasses), static_cast<long long>(o.epochs),
      static_cast<long long>(o.evalEvery),
      static_cast<unsigned long long>(o.seed), o.dropout,
      static_cast<int>(o.opt.kind), o.opt.lr, o.opt.weightDecay, o.opt.momentum,
      o.opt.beta1, o.opt.beta2, o.opt.eps,
      static_cast<long long>(o.preloadHops),
      static_cast<long long>(o.preloadFanout), o.partition.c_str(),
      o.rowSplit.c_str(), o.repartitionGain,
      static_cast<long long>(o.bucketBytes),
      static_cast<long long>(o.batchSize));
  return numbers + (" " + o.fanouts) + (o.pipeline ? " pipeline" : "") +
         " structure " + o.structure + " copies " +
         std::to_string(o.featureCopies) + " servers " +
         std::to_string(o.serverProcesses) + " shared-rows " + o.sharedRows +
         (o.featuresOnStorage ? " stored " + std::to_string(o.evalBatchSize) +
                                    (o.predict.empty() ? "" : " predict")
                              : std::string());
}

} // namespace

int main(int argc, char **argv) {
  installOutOfMemoryHandler();
  selectBlasKernels(argv);
  // A file size limit (ulimit -f) makes a write fail with EFBIG, reported
  // with the file's name, instead of killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  Options o = parseArgs(argc, argv);
  setUncachedReads(o.uncachedReads);
  std::unique_ptr<SpillStore> spill = checkOutputs(o);
  // --threads, else OMP_NUM_THREADS, checked before OpenMP's first
  // parallel region (Threads.h).
  std::string threadError;
  if (!configureThreads(o.threads, "--threads", threadError))
    usageError(threadError);

  // --structure hash samples on a thread of its own, which pushes each hop
  // while the training's collectives run: MPI_THREAD_MULTIPLE (Comm/MPI.cpp).
  if (o.structure == "hash")
    setenv("GNNRT_MPI_THREAD_MULTIPLE", "1", /*overwrite=*/0);
  auto *ctx = new gnnrtContext(); // the CPU device
  ctx->spill = std::move(spill);
  ctx->selective.mode = o.selective;
  ctx->pipeline.subChunks = o.subChunks;
  joinWorld(ctx);
  const int rank = ctx->comm->rank(), worldSize = ctx->comm->size();
  // Rank 0 speaks for the world: the others print and write nothing.
  const bool lead = rank == 0;
  if (!lead)
    o.quiet = true;
  std::string error;
  // The program compiled, and the partitioned ones next to it
  // (gnn-compile --partition auto): one is chosen below.
  const std::vector<Program> programs = heldPrograms();
  const Program *program = &programs[0];
  ctx->model = program->model;
  // A program compiled with --target=cuda runs on the CUDA device, which
  // gnn-compile links in (libgnnrt_cuda.a) only then.
  if (ctx->model.target == "cuda") {
    if (!o.spillDir.empty())
      fatal("--spill-dir is not supported on the GPU yet: the model was "
            "compiled for CUDA, whose plans keep everything in device "
            "memory (docs/CUDA.md)");
    if (!gnnrtCreateCUDADevice)
      fatal("the model was compiled for CUDA but the program was linked "
            "without the CUDA device (libgnnrt_cuda.a)");
    ctx->device.reset(gnnrtCreateCUDADevice());
    // --mem-budget caps the GPU's pool (the fast tier there), not the
    // process's resident memory.
    ctx->device->setCapacity(o.memBudget);
  } else {
    setMemoryBudget(o.memBudget);
  }
  // A model compiled under a budget (gnn-compile --mem-budget) evicts to
  // storage: without --spill-dir, to $TMPDIR (else /tmp).
  if (!ctx->spill &&
      (ctx->model.featureChunks > 0 || ctx->model.graphChunks > 0 ||
       std::any_of(ctx->model.placements.begin(), ctx->model.placements.end(),
                   [](const PlacementInfo &p) { return p.planned; }))) {
    const char *tmp = std::getenv("TMPDIR");
    const std::string dir = tmp && *tmp ? tmp : "/tmp";
    if (!(ctx->spill = SpillStore::open(dir, error)))
      fatal("the model was compiled to evict buffers to storage, and no "
            "--spill-dir was given: " +
            error);
  }
  if (o.data.empty() || !isDirectory(o.data))
    fatal("--data: dataset directory '" + o.data + "' not found");
  // One process loads the dataset; several read each its part (its vertex
  // range and their closure) by ranged reads.
  FullGraph full;
  int64_t selected = 0, labelled = 0;
  PreloadPart part;
  RowParts rowParts;
  // Split by rows (a model compiled with gnn-compile --partition rows, under
  // mpirun, unless --partition says otherwise): each process holds its own
  // vertices' rows and in-edges.
  bool rows = false;
  // --partition auto's choice, for the start-up line and the summary, and
  // whether it voted on the closures' size (closuresAreSmall).
  std::string autoChoice, autoMode;
  bool autoVoted = false;
  // Whether the processes voted on their partitioned parts' fit (partsFit).
  bool fitVoted = false;
  // The rows program's form with the rows several kernels read staged
  // (chooseSharedRows): why it was taken (empty: it was not), whether the
  // choice was made and the all-reduces it voted with.
  std::string sharedRows;
  bool sharedChosen = false;
  int sharedVotes = 0;
  const std::string &compiled = programs[0].model.partition;
  // A row-partitioned program preloads too (its collectives then stay
  // local copies); a feature-partitioned one does not.
  const Program *preloading = findProgram(programs, "none");
  if (!preloading)
    preloading = findProgram(programs, "rows");
  // Held with gnn-compile --partition auto: the executable chooses.
  const bool choosing = programs.size() > 1;
  checkRequestedPartition(programs, o.partition);
  auto use = [&](const Program *p) {
    program = p;
    ctx->model = p->model;
  };
  // Once, before the processes vote on anything their options decide
  // (checkSameTraining): every program the executable holds, as an
  // executable compiled for one mode and another holding more would choose
  // differently.
  bool checkedSame = false;
  auto checkSame = [&]() {
    if (checkedSame)
      return;
    checkedSame = true;
    std::string training;
    for (const Program &p : programs)
      training += p.info;
    checkSameTraining(ctx, training + trainingText(ctx, o, full), full);
  };
  // Split by rows: the form of the rows program that trains
  // (chooseSharedRows), taken once.
  auto takeRowsForm = [&]() {
    const SharedRowsChoice c = chooseSharedRows(
        ctx, programs, program, o.sharedRows, o.opt, rowParts.starts);
    use(c.program);
    sharedRows = c.why;
    sharedVotes = c.votes;
    sharedChosen = true;
    return c;
  };
  // Feature partitioning: the whole graph, bound next to the own rows'.
  Dataset whole;
  // Mini-batch training on several processes: each trains its share of
  // every batch (MiniBatch.h), holding the whole graph (data parallel) or
  // its feature columns (P³: layer 1 of every share on them).
  const bool dataParallel =
      worldSize > 1 && (o.batchSize > 0 || !o.fanouts.empty());
  std::string batchMode;
  Dataset columns; // P³: what batches are sampled from
  if (dataParallel)
    use(miniBatchProgram(programs, o.partition, o.rowSplitGiven,
                         !o.dump.empty(), batchMode));
  const bool p3 = batchMode == "p3", pull = batchMode == "pull";
  if (o.featuresOnStorage && dataParallel && batchMode != "data-parallel")
    fatal("--features-on-storage trains in one process or data parallel "
          "(each process its share of every batch), not in the " +
          batchMode +
          " mode this executable's programs give (compile it with "
          "--partition auto, the default)");
  FeatureRows pullRows; // --partition pull: this process's feature rows
  if (worldSize == 1 || dataParallel) {
    if (!o.partition.empty() && !dataParallel)
      std::fprintf(stderr, "warning: --partition chooses how several "
                           "processes (under mpirun) split the graph; one "
                           "process holds it all\n");
    if ((o.preloadHops >= 0 || o.preloadFanout >= 0) && !o.batchSize)
      std::fprintf(stderr, "warning: --preload-hops and --preload-fanout "
                           "bound what each of several processes holds "
                           "(under mpirun); one process holds the whole "
                           "graph\n");
    if (o.rowSplitGiven && !p3)
      std::fprintf(stderr, "warning: --row-split and --repartition-gain split "
                           "the vertices over several processes (under "
                           "mpirun); one process holds them all\n");
    if (p3) {
      columns = loadFeatureColumnsForBatches(ctx, o.data, o.rowSplit, rowParts,
                                             part, full, whole);
      rows = true;
      labelled = labelledTrainVertices(columns, selected);
    } else if (pull) {
      ctx->ds = loadFeatureRowsForBatches(o.data, rank, worldSize,
                                          o.featureCopies, full, pullRows);
      labelled = labelledTrainVertices(ctx->ds, selected);
    } else if (!loadDataset(o.data, ctx->ds, error,
                            ctx->model.featureChunks > 0 || o.featuresOnStorage
                                ? &ctx->featuresFile
                                : nullptr,
                            ctx->model.graphChunks > 0 ? &ctx->indicesFile
                                                       : nullptr)) {
      fatal(o.data + "/" + error);
    } else {
      full.numVertices = ctx->ds.numVertices;
      full.numEdges = ctx->ds.numEdges;
      labelled = labelledTrainVertices(ctx->ds, selected);
    }
    if (dataParallel)
      checkSameTraining(ctx, program->info + trainingText(ctx, o, full), full);
  } else {
    std::string mode = !o.partition.empty() ? o.partition
                       : choosing           ? "auto"
                       : compiled == "none" ? "preload"
                                            : compiled;
    // --partition auto: preload where the closures are small (decided once
    // they are loaded: closuresAreSmall), else the partitioned program that
    // moves fewer bytes per epoch among those that fit (SplitCandidates).
    SplitCandidates split;
    // Why --partition auto did not consider preloading, if it did not.
    std::string cannot;
    // A partitioned program chosen over a preload program planned under a
    // budget: where its parts do not fit, the plan preloads (below).
    bool planFallback = false;
    if (mode == "auto") {
      split = splitCandidates(programs, o.data, o.rowSplit, worldSize, choosing,
                              &o.opt, o.sharedRows);
      // A preloading program planned under a budget moves buffers to
      // storage, the partitioned ones keep them resident: one of those
      // where it fits, else each process runs the plan on its part (no
      // part is larger than the graph it was planned for; not with the
      // graph out of core, whose windows are the whole graph's). Bounds on
      // the closures (--preload-hops, --preload-fanout) preload.
      const bool planned = plannedUnderBudget(preloading->model);
      const bool preloads = preloading->model.hops >= 0;
      const bool planPreloads = preloads && preloading->model.graphChunks == 0;
      const bool bounded = o.preloadHops >= 0 || o.preloadFanout >= 0;
      if ((!preloads || (planned && !(bounded && planPreloads))) &&
          !split.candidates.empty()) {
        const AutoVote vote = autoVote(ctx, 0);
        autoVoted = true;
        std::string why;
        cannot = !preloads ? "the model does not preload"
                 : planPreloads
                     ? "the preload program is planned under a memory "
                       "budget, moving buffers to storage"
                     : "the preload program reads the whole graph out of "
                       "core";
        // Under a plan that preloads, a part predicted not to fit is not
        // loaded (its loading would stop at the budget).
        const Program *chosen =
            split.choose(vote, why, planned && planPreloads);
        if (chosen) {
          mode = autoMode = chosen->model.partition;
          autoChoice = mode + " (" + cannot + split.bytes + why + ")";
          planFallback = planned && planPreloads;
        } else if (planPreloads) {
          mode = autoMode = "preload";
          autoChoice = "preload (no partitioned program fits" + why +
                       "; each process runs the budget's plan on its part)";
          cannot.clear();
        } else { // why: what each would hold more than the tightest has
          fatal("--partition auto: " + cannot +
                ", and no partitioned program fits" + why);
        }
      }
    }
    use(mode == "rows" || mode == "features" ? findProgram(programs, mode)
                                             : preloading);
    checkDistributable(ctx->model);
    // The rank's rows and all their in-edges (split as --row-split says).
    auto loadRows = [&]() {
      loadRowParts(ctx, o.data, o.rowSplit, rowParts, part, full);
      rows = true;
    };
    // The rank's closure (shared preloading), its features left in
    // features.npy where the plan reads them out of core.
    auto loadPreload = [&]() {
      PreloadSampling sampling;
      sampling.maxHop = o.preloadHops;
      sampling.fanout = o.preloadFanout;
      sampling.seed = o.seed;
      if (!loadPreloadPart(o.data, rank, worldSize, ctx->model.hops, sampling,
                           ctx->ds, part, full, error,
                           ctx->model.featureChunks > 0 ? &ctx->featuresFile
                                                        : nullptr))
        fatal(o.data + "/" + error);
    };
    if (mode == "rows" || mode == "features") {
      if ((o.preloadHops >= 0 || o.preloadFanout >= 0) && !cannot.empty())
        fatal("--preload-hops and --preload-fanout bound shared preloading, "
              "which these processes cannot do: " +
              cannot + " (without them they train split by " +
              (mode == "rows" ? "rows)" : "feature columns)"));
      if (o.preloadHops >= 0 || o.preloadFanout >= 0)
        fatal("--preload-hops and --preload-fanout bound shared preloading; "
              "the model was compiled for " +
              std::string(mode == "rows" ? "row" : "feature") +
              " partitioning (gnn-compile --partition " + mode + ")");
      if ((mode == "features" || ctx->model.replicated) && o.rowSplit == "roc")
        fatal("--row-split roc repartitions the rows between epochs, which " +
              std::string(mode == "features" ? "feature partitioning"
                                             : "replicated layers") +
              " do not do yet: use vertices or edges");
      if (mode == "rows" && !ctx->model.replicated) {
        loadRows();
      } else {
        loadFeatureParts(ctx, o.data, o.rowSplit, rowParts, part, full, whole,
                         ctx->model.replicated);
        rows = true;
      }
      // Where a process's part leaves too little of what it may use (the
      // vote's prediction counts no part), each runs the plan on its
      // closure instead: the budget, kept by moving buffers to storage.
      std::string shortage;
      bool fits = true;
      if (planFallback) {
        // The processes' options agree before they vote.
        checkSame();
        // Rows that several kernels read staged, before the fall-back to
        // the plan, where that fits (its vote is the fall-back's).
        const SharedRowsChoice c =
            mode == "rows" ? takeRowsForm() : SharedRowsChoice();
        fitVoted = !c.voted;
        fits =
            c.voted ? c.fits : partsFit(ctx, o.opt, rowParts.starts, shortage);
        if (c.voted && !c.fits)
          shortage = c.shortage;
      }
      if (!fits) {
        sharedRows.clear();
        ctx->ds = Dataset();
        whole = Dataset();
        part = PreloadPart();
        rowParts = RowParts();
        rows = false;
        ctx->featureBegin = 0;
        ctx->featureTotal = -1;
        ctx->wholeEdges = -1;
        use(preloading);
        autoChoice = "preload (" + mode + ": " + shortage +
                     "; each process runs the budget's plan on its part)";
        mode = autoMode = "preload";
        loadPreload();
      }
    } else {
      // (--partition auto's fallback to the plan preloads whatever they
      // say, as its choice of preloading below does.)
      if (o.rowSplitGiven && mode == "preload" && autoMode.empty())
        fatal("--row-split and --repartition-gain split the rows of a model "
              "compiled for row partitioning (gnn-compile --partition rows); "
              "this one preloads");
      loadPreload();
    }
    checkSame();
    if (mode == "auto") {
      const AutoVote vote = autoVote(ctx, ctx->ds.numEdges);
      autoVoted = true;
      std::string closures, why;
      const Program *chosen = nullptr;
      // --preload-hops and --preload-fanout bound shared preloading: given,
      // the processes preload (they would not apply to a split).
      const bool bounded = o.preloadHops >= 0 || o.preloadFanout >= 0;
      if (closuresAreSmall(vote.mostEdges, worldSize, full, closures) ||
          bounded || !(chosen = split.choose(vote, why))) {
        autoMode = "preload";
        autoChoice = "preload (" +
                     (bounded ? "--preload-hops and --preload-fanout bound "
                                "the closures; "
                              : std::string()) +
                     closures + ")";
      } else {
        part = PreloadPart();
        use(chosen);
        autoMode = ctx->model.partition;
        autoChoice =
            ctx->model.partition + " (" + closures + split.bytes + why + ")";
        if (ctx->model.partition == "rows" && !ctx->model.replicated) {
          loadRows();
        } else {
          loadFeatureParts(ctx, o.data, o.rowSplit, rowParts, part, full, whole,
                           ctx->model.replicated);
          rows = true;
        }
      }
    }
    checkEnoughVertices(o.data, worldSize, full.numVertices);
    if (rows && !sharedChosen)
      takeRowsForm();
    if (rows) {
      ctx->rowStarts = rowParts.starts;
      if (o.rowSplit == "roc")
        rowParts.roc = buildRoc(ctx, rowParts.starts);
    }
    std::copy(full.labelled, full.labelled + 3, ctx->lossCount);
    ctx->fullDegree[0] = std::move(part.inDegree);
    ctx->fullDegree[1] = std::move(part.outDegree);
    selected = full.selected[0];
    labelled = full.labelled[0];
  }
  Program blocksStep; // mini-batch training's step on blocks, if compiled
  const Program *wholeProgram = program; // the whole graph's evaluation
  // (Co-batches of a rows program replicating levels: the unpartitioned
  // one, miniBatchProgram.)
  if (batchMode == "co-batch" && program->model.replicated)
    wholeProgram = findProgram(programs, "none");
  if (o.batchSize > 0)
    use(miniBatchStep(program, blocksStep, wholeProgram));
  // An executable compiled for a memory budget trains the batches with its
  // blocks program (every buffer resident) and evaluates the whole graph
  // under the plan (MiniBatch.h, usePlannedEvaluation), reading the
  // batches' rows from storage where the plan reads the features there.
  // (--features-on-storage with a plan that holds them in memory: the
  // evaluations run in batches instead.)
  const ModelInfo &wholeModel = wholeProgram->model;
  const bool plannedEval =
      program == &blocksStep && plannedUnderBudget(wholeModel) &&
      (!o.featuresOnStorage || wholeModel.featureChunks > 0);
  if (plannedEval && wholeModel.graphChunks > 0)
    fatal("--batch-size: the model was compiled with its graph out of core "
          "(gnn-compile --mem-budget); mini-batches sample from the graph "
          "in memory (compile with --graph-out-of-core=false)");
  // Co-batches load the features as their rows program reads them (in
  // memory); the plan of the evaluation's program would read them from
  // storage.
  if (plannedEval && batchMode == "co-batch" && wholeModel.featureChunks > 0)
    fatal("--partition rows: co-batches evaluate with the unpartitioned "
          "program, whose memory-budget plan reads the features from "
          "storage, and hold the features in memory as their rows program "
          "reads them (compile with gnn-compile --features-out-of-core=false, "
          "or train data parallel)");
  const bool storedRows =
      o.featuresOnStorage || (plannedEval && wholeModel.featureChunks > 0);
  // Before anything of the training state is allocated.
  TrainingMemory need;
  // On a GPU: its free memory, or what --mem-budget gives its pool.
  const bool onGPU = !ctx->device->deviceMemoryIsHostMemory();
  // Under --mem-budget without a plan (the features in memory): the
  // batches train in parts where they do not fit, and each evaluation runs
  // on the whole graph where it fits, else in batches (MiniBatch.h,
  // evaluateWithinBudget), so the whole graph's training state need not
  // fit. Not for the modes whose batches train whole (trainInPartsWithin).
  const bool budgetedEval = o.batchSize > 0 && o.memBudget > 0 &&
                            !plannedEval && !o.featuresOnStorage && !onGPU &&
                            !p3 && !pull && batchMode != "co-batch" &&
                            !o.pipeline && o.saveBatches.empty() &&
                            o.dump.empty();
  // (The features on storage: the whole graph is never trained or
  // evaluated at once, so its estimate does not apply; each batch's
  // state is in the summary's mini_batch. A planned evaluation: the
  // plan's estimate. A partitioned program's blocks form, P³'s and
  // co-batches' (or one process's of a partitioned executable): the whole
  // graph's program is the evaluation's.)
  const bool wholeEstimate =
      plannedEval ||
      (program == &blocksStep &&
       (wholeModel.partition != "none" || batchMode == "co-batch"));
  if (wholeEstimate)
    ctx->model = wholeModel;
  if ((!o.featuresOnStorage || plannedEval) && !budgetedEval &&
      !checkTrainingMemory(
          ctx, o.opt,
          onGPU ? deviceAvailableMemory(ctx->device->freeDeviceMemory(),
                                        ctx->device->capacity(),
                                        ctx->device->memoryCounters().live)
                : availableMemory(),
          need, error, onGPU))
    fatal(autoMode == "preload" && plannedUnderBudget(ctx->model)
              ? "--partition auto: " + autoChoice + "; but " + error
              : error);
  if (wholeEstimate)
    ctx->model = blocksStep.model;
  // Mini-batch training keeps the dataset, which binding gives the device.
  // Bound again from the sampler's at once (below): moved in, not copied.
  const bool lendAtStart = (plannedEval || budgetedEval) && o.dump.empty();
  std::unique_ptr<MiniBatchTraining> miniBatch = startMiniBatch(
      ctx, o.batchSize, o.fanouts, o.seed, worldSize, o.saveBatches,
      o.preloadHops, o.preloadFanout, p3 ? &columns : nullptr, lendAtStart);
  Server server;
  if (batchMode == "co-batch") {
    server = groupServers(ctx, o.serverProcesses);
    miniBatch->useCoBatches(server.first, server.count);
  } else if (o.serverProcesses > (dataParallel ? 0 : 1)) {
    fatal("--server-processes groups the processes of co-batches "
          "(--partition rows under mpirun), not of " +
          (batchMode.empty() ? std::string("one process") : batchMode));
  }
  if (pull)
    miniBatch->usePulledFeatures(ctx, std::move(pullRows));
  if (program == &blocksStep)
    miniBatch->onBlocksStep();
  if (miniBatch)
    miniBatch->useEvaluationModel(wholeModel);
  if (plannedEval) {
    miniBatch->usePlannedEvaluation(wholeModel);
    if (lead && !o.quiet)
      std::printf("gnnc: --batch-size: the batches train with every buffer "
                  "resident, the evaluations on the whole graph under the "
                  "budget's plan%s\n",
                  storedRows ? " (each batch reads its rows from features.npy)"
                             : "");
  }
  if (storedRows)
    miniBatch->useFeaturesOnStorage(&ctx->featuresFile, o.evalBatchSize);
  if (budgetedEval)
    miniBatch->evaluateWithinBudget(o.evalBatchSize);
  // Layer-wise evaluation (docs/MiniBatch.md): always where asked, else
  // within the budget where the whole graph does not fit.
  const bool layerwiseAlways = o.layerwiseEval == "always";
  const bool levelsCompiled =
      wholeProgram->evalLevel && !wholeModel.levels.empty();
  if (layerwiseAlways) {
    const char *mode = plannedEval ? "the evaluation under the budget's plan"
                       : onGPU     ? "the GPU"
                       : p3        ? "P3"
                       : pull      ? "feature pulling"
                       : batchMode == "co-batch" ? "co-batches"
                       : o.pipeline              ? "the pipeline"
                       : !o.saveBatches.empty()  ? "--save-batches"
                       : !o.dump.empty()         ? "--dump"
                                                 : nullptr;
    if (mode)
      fatal(std::string("--layerwise-eval always: not with ") + mode +
            ", which evaluates the whole graph");
    if (!levelsCompiled)
      fatal("--layerwise-eval always: the executable holds no levels of its "
            "evaluation (gnn-compile --eval-levels, on by default, splits "
            "it where the model allows: its --remarks say why not)");
  }
  if (miniBatch)
    miniBatch->useLayerwiseEvaluation(
        layerwiseAlways              ? MiniBatchTraining::Layerwise::Always
        : o.layerwiseEval == "never" ? MiniBatchTraining::Layerwise::Never
                                     : MiniBatchTraining::Layerwise::Auto,
        o.evalBatchSize);
  if (o.structure == "hash") {
    if (!p3)
      fatal("--structure hash partitions the structure of P3's mini-batches "
            "(--batch-size with --partition features under mpirun), not of " +
            (batchMode.empty() ? std::string("one process") : batchMode));
    if (miniBatch->evaluatesItself())
      fatal("--structure hash: the evaluations read the whole graph from "
            "storage and bind it; not under a budget's plan");
    miniBatch->useHashStructure(ctx, o.data);
  }
  if (o.evalBatchSize > 0 && !(storedRows && !plannedEval) && !budgetedEval &&
      !layerwiseAlways)
    fatal("--eval-batch-size: this run evaluates the whole graph (" +
          std::string(plannedEval ? "under the plan gnn-compile --mem-budget "
                                    "compiled"
                      : onGPU     ? "on the GPU"
                                  : "in the mode its options give: P3, "
                                    "feature pulling, co-batches, the "
                                    "pipeline, --save-batches or --dump") +
          "), never in batches");
  if (miniBatch && o.memBudget > 0) {
    miniBatch->freeBoundFeatures();
    miniBatch->trainInPartsWithin(o.memBudget, lead && !o.quiet);
  }
  if (o.featuresOnStorage && !plannedEval) {
    const bool layered = o.layerwiseEval != "never" && levelsCompiled;
    if (lead && !o.quiet)
      std::printf(
          "gnnc: --features-on-storage: features.npy (%s) stays on "
          "storage; each batch reads its rows, evaluations run %s batches of "
          "%lld vertices%s\n",
          formatMB(static_cast<double>(ctx->ds.numVertices) *
                   static_cast<double>(ctx->ds.numFeatures) * 4.0)
              .c_str(),
          layered ? "layer-wise (where the values between the levels fit), in"
                  : "in",
          static_cast<long long>(o.evalBatchSize > 0 ? o.evalBatchSize
                                                     : o.batchSize),
          layered ? "" : " with their full neighbourhoods");
  }
  columns = Dataset(); // (P³'s: moved to the sampler)
  if (lendAtStart) {
    // Bound once for the parameters' shapes with the sampler's graph lent,
    // then unbound: the next binding is a batch's or an evaluation's
    // (--dump's step runs on this binding: kept).
    std::vector<int64_t>().swap(ctx->ds.indptr);
    std::vector<int32_t>().swap(ctx->ds.indices);
    miniBatch->bindWholeLent(ctx, /*features=*/false);
    miniBatch->takeBackLent(ctx);
  } else if (!bindDataset(ctx, error)) {
    fatal(o.data + ": " + error);
  }
  if (whole.numVertices && !bindWholeGraph(ctx, whole, error))
    fatal(o.data + ": " + error);
  whole = Dataset(); // the device holds its arrays
  // Training on no labelled vertex would report a loss of 0 and learn
  // nothing; predicting from loaded parameters needs no labels.
  if (o.epochs > 0 || !o.dump.empty()) {
    if (labelled == 0)
      fatal(o.data + ": nothing to train on: train_mask selects " +
            std::to_string(selected) +
            " vertices and none has a label (>= 0); label some, or run "
            "--epochs 0 with --load-params to only predict");
  }
  ctx->optConfig = o.opt;
  ctx->gradientSum.bucketBytes = o.bucketBytes;
  ctx->seed = o.seed;
  ctx->dropoutOverride = o.dropout;
  initParams(ctx, o.seed);
  if (!o.loadParams.empty() && !loadParams(ctx, o.loadParams, error))
    fatal("--load-params: " + o.loadParams + "/" + error);
  if (o.pipeline)
    miniBatch->usePipeline(ctx);

  const int threads = omp_get_max_threads();
  if (!o.quiet) {
    std::printf(
        "gnnc: model %s on %s (%lld vertices, %lld edges, %lld features, "
        "%lld classes), %s device, %d threads\n",
        ctx->model.name.c_str(), ctx->ds.name.c_str(),
        static_cast<long long>(full.numVertices),
        static_cast<long long>(full.numEdges),
        // Feature partitioning: the dataset's, not the process's columns.
        static_cast<long long>(ctx->featureTotal >= 0 ? ctx->featureTotal
                                                      : ctx->ds.numFeatures),
        static_cast<long long>(ctx->ds.numClasses), ctx->device->name(),
        threads);
    if (!autoChoice.empty())
      std::printf("gnnc: --partition auto: %s\n", autoChoice.c_str());
    if (!sharedRows.empty())
      std::printf("gnnc: rows: %s\n", sharedRows.c_str());
    if (o.pipeline && !(p3 && worldSize > 1))
      std::printf("gnnc: --pipeline: no sync to overlap (P3 on several "
                  "processes has them), so one batch is in flight; each "
                  "still trains at the parameters of 3 batches before\n");
    std::string how = "each trains its share of every batch's seeds";
    if (p3)
      how += ", layer 1 of every share on its feature columns";
    else if (batchMode == "co-batch" && server.count == worldSize)
      how = "each batch split by rows (GraNNDis's co-batches)";
    else if (batchMode == "co-batch")
      how = "a co-batch per server of " + std::to_string(server.count) +
            " processes, split by rows; the servers share every batch's "
            "seeds (GraNNDis's co-batches)";
    if (dataParallel)
      std::printf("gnnc: %s on %d processes: %s\n", batchMode.c_str(),
                  worldSize, how.c_str());
    else if (worldSize > 1)
      printPartitionLine(ctx, part, rows, o.preloadHops, o.preloadFanout);
  }

  if (!o.dump.empty()) {
    const float loss =
        dumpOneStep(ctx, program->train, o.dump, lead, part, full.numVertices);
    if (lead && !o.quiet)
      std::printf("dumped one step to %s (loss %.6f)\n", o.dump.c_str(), loss);
    return 0;
  }

  std::vector<EpochRecord> history;
  // Evaluations that mini-batch training runs itself: in batches (the
  // features on storage) or under a plan (MiniBatch.h).
  const bool stored = miniBatch && miniBatch->evaluatesItself();
  // The calls of the two functions, for the row collectives' formula.
  int64_t trainCalls = 0, evalCalls = 0;
  auto t0 = std::chrono::steady_clock::now();
  auto lastProgress = t0;
  for (int64_t epoch = 1; epoch <= o.epochs; ++epoch) {
    dropEveryCachedFile(); // --uncached-reads: nothing left from before
    ctx->training = true;
    ctx->step = epoch;
    zeroGrads(ctx);
    auto start = std::chrono::steady_clock::now();
    const double collectivesBefore = collectiveSeconds(ctx);
    const float ownLoss = miniBatch ? miniBatch->epoch(ctx, *program, epoch)
                                    : program->train(ctx);
    // The step's own work: its time less the time spent in collectives
    // (waiting for the others included), what ROC's model learns from.
    const double compute =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count() -
        (collectiveSeconds(ctx) - collectivesBefore);
    float loss = worldLoss(ctx, ownLoss);
    ++trainCalls;
    auto end = std::chrono::steady_clock::now();
    EpochRecord r{
        epoch, loss,
        0,     0,
        0,     std::chrono::duration<double, std::milli>(end - start).count(),
        false};
    if (!std::isfinite(loss))
      fatal("the loss became " + std::to_string(loss) + " at epoch " +
            std::to_string(epoch) + " (try a smaller --lr)");
    if (epoch % o.evalEvery == 0 || epoch == o.epochs) {
      if (miniBatch)
        miniBatch->bindFull(ctx);
      ctx->training = false;
      dropEveryCachedFile(); // --uncached-reads
      double acc[3];
      if (stored) {
        const MiniBatchTraining::Evaluation e =
            miniBatch->evaluate(ctx, *program, false);
        std::copy(e.acc, e.acc + 3, acc);
      } else {
        program->eval(ctx);
        splitAccuracies(ctx, acc);
      }
      ++evalCalls;
      r.train = acc[0];
      r.val = acc[1];
      r.test = acc[2];
      r.evaluated = true;
      if (!o.quiet)
        std::printf("epoch %4lld  loss %.4f  train %.4f  val %.4f  test %.4f  "
                    "%.2f ms\n",
                    static_cast<long long>(epoch), loss, r.train, r.val, r.test,
                    r.ms);
    }
    history.push_back(r);
    // ROC (--row-split roc): the parts' measured times refit the cost
    // model; a split it predicts enough faster is loaded before the next
    // epoch (every rank decides alike from the same numbers).
    if (rowParts.roc && epoch < o.epochs)
      rocStep(ctx, rowParts, part, o.data, o.repartitionGain, compute,
              o.quiet ? -1 : epoch);
    auto now = std::chrono::steady_clock::now();
    if (o.quiet && lead &&
        std::chrono::duration<double>(now - lastProgress).count() > 10.0) {
      std::fprintf(stderr, "gnnc: epoch %lld/%lld\n",
                   static_cast<long long>(epoch),
                   static_cast<long long>(o.epochs));
      lastProgress = now;
    }
  }
  // What follows (predictions, the summary) reads the whole graph.
  if (miniBatch)
    miniBatch->bindFull(ctx);
  EpochRecord last{0, 0, 0, 0, 0, 0, true};
  if (o.epochs == 0) {
    ctx->training = false;
    double acc[3];
    if (stored) {
      const MiniBatchTraining::Evaluation e =
          miniBatch->evaluate(ctx, *program, false, /*wantLoss=*/true);
      last.loss = e.loss;
      std::copy(e.acc, e.acc + 3, acc);
    } else {
      // Data parallel: every process evaluates the whole graph.
      last.loss = dataParallel && !p3 ? program->eval(ctx)
                                      : worldLoss(ctx, program->eval(ctx));
      splitAccuracies(ctx, acc);
    }
    ++evalCalls;
    last.train = acc[0];
    last.val = acc[1];
    last.test = acc[2];
  } else {
    last = history.back();
  }

  std::vector<double> times;
  for (const EpochRecord &r : history)
    times.push_back(r.ms);
  std::sort(times.begin(), times.end());
  double median = times.empty() ? 0.0 : times[times.size() / 2];
  // Every rank takes part in gathering the predictions; rank 0 writes them.
  std::vector<int64_t> pred;
  if (!o.predict.empty() && stored) {
    ctx->training = false;
    pred = miniBatch->evaluate(ctx, *program, true).predictions;
    ++evalCalls;
  } else if (!o.predict.empty()) {
    ctx->training = false;
    program->eval(ctx);
    ++evalCalls;
    pred = predictions(ctx);
    if (worldSize > 1 && (!dataParallel || p3)) // else each holds every row
      pred = gatherOwnRows(ctx, part, full.numVertices, pred.data(), 1);
  }
  if (!o.saveParams.empty() &&
      !saveParams(ctx, o.saveParams, false, lead, error))
    fatal("--save-params: " + error);
  if (!lead)
    return 0;
  std::printf("final: loss %.4f  train %.4f  val %.4f  test %.4f  median epoch "
              "%.2f ms\n",
              last.loss, last.train, last.val, last.test, median);

  if (!o.predict.empty() &&
      !writeNpy(o.predict, DType::I64, {full.numVertices}, pred.data(), error))
    fatal("--predict: " + error);
  if (!o.json.empty()) {
    std::string text;
    auto appendf = [&text](const char *format, auto... args) {
      appendFormat(text, format, args...);
    };
    appendf("{\n  \"model\": %s,\n  \"dataset\": %s,\n  \"threads\": %d,\n",
            jsonString(ctx->model.name).c_str(),
            jsonString(ctx->ds.name).c_str(), threads);
    // OpenBLAS's kernels for the GEMMs (OPENBLAS_CORETYPE, or its choice
    // for the CPU; selectBlasKernels).
    appendf("  \"blas_kernels\": %s,\n",
            jsonString(openblas_get_corename()).c_str());
    appendf("  \"epochs\": %lld,\n  \"seed\": %llu,\n  \"lr\": %.17g,\n",
            static_cast<long long>(o.epochs),
            static_cast<unsigned long long>(o.seed), o.opt.lr);
    appendf("  \"optimizer\": \"%s\",\n  \"weight_decay\": %.17g,\n",
            o.opt.kind == OptimizerConfig::Adam ? "adam" : "sgd",
            o.opt.weightDecay);
    appendf("  \"final\": {\"loss\": %.9g, \"train_acc\": %.9g, \"val_acc\": "
            "%.9g, \"test_acc\": %.9g},\n",
            last.loss, last.train, last.val, last.test);
    appendf("  \"median_epoch_ms\": %.6g,\n  \"buffer_bytes\": %lld,\n", median,
            static_cast<long long>(ctx->bytesAllocated));
    text += memoryJson(ctx, o.memBudget, need);
    // This rank's collectives (a world of one: none move anything).
    appendf("  \"communication\": {\"communicator\": \"%s\", \"rank\": %d, "
            "\"world_size\": %d",
            ctx->comm->name(), ctx->comm->rank(), ctx->comm->size());
    for (int c = 0; c < kNumCollectives; ++c) {
      const CollectiveCount &n = ctx->comm->counted(static_cast<Collective>(c));
      appendf(",\n                    \"%s\": {\"calls\": %lld, \"bytes\": "
              "%lld, \"seconds\": %.6g}",
              collectiveName(static_cast<Collective>(c)),
              static_cast<long long>(n.calls), static_cast<long long>(n.bytes),
              n.seconds);
    }
    // A row-partitioned program: its collectives by the formula (P³'s: its
    // evaluations', whose program is the whole graph's where the training
    // step is the blocks program).
    if (rows && worldSize > 1)
      text += rowFormulaJson(ctx, p3 ? 0 : trainCalls, evalCalls,
                             full.numVertices, p3 ? &wholeModel : nullptr);
    appendf(",\n                    \"gradient_buckets\": %lld, "
            "\"bucket_bytes\": %lld, \"wait_seconds\": %.6g},\n",
            static_cast<long long>(ctx->gradientSum.issued),
            static_cast<long long>(o.bucketBytes), ctx->comm->waitSeconds());
    // --partition auto's choice, and its votes (AutoVote: one all-reduce
    // of two int64; partsFit: one of an int64; counted above).
    // Where the rows program is held in two forms, which one trains, and
    // chooseSharedRows's votes (partsFit's) with the others.
    const bool twoForms = rows && ctx->model.partition == "rows" &&
                          stagedRowsForm(programs) != nullptr;
    const std::string shared =
        twoForms
            ? std::string(", \"shared_rows\": \"") +
                  (program->stagesSharedRows ? "staged" : "gathered") + "\""
            : std::string();
    if (!autoChoice.empty() || sharedVotes > 0 || twoForms)
      appendf("  \"auto\": {\"mode\": \"%s\"%s, \"allreduce_calls\": %d, "
              "\"allreduce_bytes\": %d},\n",
              autoMode.empty() ? ctx->model.partition.c_str()
                               : autoMode.c_str(),
              shared.c_str(),
              (autoVoted ? 1 : 0) + (fitVoted ? 1 : 0) + sharedVotes,
              (autoVoted ? 16 : 0) + (fitVoted ? 8 : 0) + 8 * sharedVotes);
    // How the vertices were shared (rank 0's part).
    if (worldSize > 1 && rows) {
      text += rowPartitionJson(ctx, rowParts, part, full, o.rowSplit);
    } else if (dataParallel) {
      appendf("  \"partition\": {\"mode\": \"%s\", \"held_vertices\": %lld},\n",
              batchMode.c_str(), static_cast<long long>(full.numVertices));
    } else if (worldSize > 1) {
      text += preloadPartitionJson(ctx, part, o.preloadHops, o.preloadFanout);
    }
    if (miniBatch)
      text += miniBatch->json();
    appendf("  \"history\": [");
    bool first = true;
    for (const EpochRecord &r : history) {
      appendf("%s\n    {\"epoch\": %lld, \"loss\": %.9g, \"ms\": %.6g",
              first ? "" : ",", static_cast<long long>(r.epoch), r.loss, r.ms);
      if (r.evaluated)
        appendf(", \"train_acc\": %.9g, \"val_acc\": %.9g, \"test_acc\": %.9g",
                r.train, r.val, r.test);
      text += "}";
      first = false;
    }
    text += "\n  ]\n}\n";
    if (!writeWholeFile(o.json, {{text.data(), text.size()}}, error))
      fatal("--json: " + error);
  }
  return 0;
}
