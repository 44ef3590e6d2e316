//===- MiniBatch.h - mini-batch training with neighbour sampling -*- C++
//-*-===//
//
// The executable's --batch-size and --fanouts (docs/MiniBatch.md): each
// epoch the labelled train vertices are shuffled into batches; a batch's
// seeds and their sampled in-neighbourhood (Sampler.h, one fanout per hop
// of the model) become a subgraph that the compiled training step runs on,
// the loss on the seeds only, one optimizer step per batch (PyG's
// NeighborLoader: every layer runs on the union of the sampled edges). The
// evaluation runs on the whole graph (full neighbourhoods).
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_DRIVER_MINIBATCH_H
#define GNNRT_DRIVER_MINIBATCH_H

#include "Context.h"
#include "Distributed.h"
#include "FeaturePull.h"
#include "Sampler.h"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

namespace gnnrt {

struct Program;

/// Mini-batch training samples the next batch on a thread of its own while
/// the training's OpenMP team works on the cores, so the team's threads
/// must not spin while they wait: libgomp's default (active) spins at each
/// barrier and takes a core's time from the sampler (GraphSAGE-mean on the
/// arxiv-shaped graph, 2 threads: 3.2-3.7 s per epoch against 2.6-2.8 s
/// passive; full-graph training keeps the default, where passive made GAT
/// 4 % slower). Sets OMP_WAIT_POLICY=passive when `argv` has --batch-size
/// and the user did not set it; true when it did (libgomp reads it when it
/// loads: the process must start again, selectBlasKernels).
bool passiveWaitsForMiniBatches(char **argv);

/// The sampled subgraph of `batch` in `full`: the input block's vertices
/// (the seeds first: every block's vertices are a prefix of them), its
/// edges (every block's), each destination's in-edges by ascending local
/// source; the features, labels and edge data of those vertices and edges;
/// the train mask set on the seeds alone, the other masks clear; the rows
/// of each level (SampledBatch::levelRows). The features go into
/// `storage`'s memory when given (a vector of an earlier batch: its pages
/// are mapped already, where a fresh one of a wide graph's batch, 110 MB
/// at the Reddit shape, is mapped and faulted in anew). Without `features`
/// the features are left empty (feature pulling fills them: the rows are
/// the input block's `vertices`).
/// Replaces `rows` with `full`'s feature rows of `vertices`, in order
/// (batchSubgraph's, and a batch's built without its rows).
void copyFeatureRows(const Dataset &full, const std::vector<int64_t> &vertices,
                     std::vector<float> &rows);

Dataset batchSubgraph(const Dataset &full, const SampledBatch &batch,
                      std::vector<float> *storage = nullptr,
                      bool features = true);

/// Feature pulling: the features' rows cut into G = N / copies ranges
/// [starts[p], starts[p + 1]), each held by `copies` processes; process r
/// holds range r mod G, `own` (its first row first). FeaturePuller.
struct FeatureRows {
  std::vector<int64_t> starts;
  std::vector<float> own;
  int copies = 1;
};

class MiniBatchTraining {
public:
  /// Keeps `full` (the dataset before it is bound: the device takes the
  /// bound copy's features) and the train split's labelled vertices;
  /// `fanouts` has one entry per hop of the model.
  MiniBatchTraining(Dataset full, int64_t batchSize,
                    std::vector<int64_t> fanouts, uint64_t seed);
  // The sampler points into `full`.
  MiniBatchTraining(const MiniBatchTraining &) = delete;
  MiniBatchTraining &operator=(const MiniBatchTraining &) = delete;

  /// One epoch: each batch bound and trained (ctx->step counts the
  /// batches); the last batch stays bound. The seeds' mean loss.
  float epoch(gnnrtContext *ctx, const Program &program, int64_t epochIndex);
  /// Binds the whole graph again where a batch is bound: before an
  /// evaluation, and once training ends (an epoch whose evaluation
  /// --eval-every skips pays no rebinding).
  void bindFull(gnnrtContext *ctx);

  /// The batch size, the fanouts, and what the epochs sampled (the batches,
  /// the sampled edges, each level's rows: n_0 the input rows, ..., the
  /// seeds, summed over the batches), as the --json summary's "mini_batch"
  /// object.
  std::string json() const;

  int64_t numSeeds() const { return static_cast<int64_t>(seeds.size()); }

  /// Writes each batch's subgraph to `dir`/batch-<step> (six digits) before
  /// it trains, and keeps each batch's loss for json() (--save-batches).
  void saveBatchesTo(std::string dir) { saveDir = std::move(dir); }
  /// The processes that share each batch (for json()).
  void setProcesses(int n) { processes = n; }

  /// P³ on several processes (docs/MiniBatch.md, "P³ on several
  /// processes"): `full` holds this process's feature columns of every
  /// vertex; each batch is bound as feature partitioning's whole graph of
  /// every process's share, one after another (each process computes layer
  /// 1 of every share on its columns, and the syncs move the partial rows
  /// to the share's owner), the own rows' graph its share. bindFull binds
  /// full-graph feature partitioning again: the own rows `own` (their
  /// features: `full`'s), the whole graph (`full`'s structure), and the
  /// row split, degrees and loss counts `ctx` holds now (before bindDataset
  /// takes the degrees).
  void useFeatureColumns(const gnnrtContext *ctx, Dataset own);
  /// P³'s hash-partitioned structure (--structure hash; docs/MiniBatch.md,
  /// "The structure partitioned by hash"): after useFeatureColumns, this
  /// process keeps the in-edges of the vertices it owns (StructureShard)
  /// and drops the rest of the graph's CSC; every batch is sampled from the
  /// shards (each hop's rows by their owners, pushed to every process over
  /// `ctx->comm`), on the training's thread (the pushes are collectives),
  /// the same batches as the replicated structure's; where MPI lets two
  /// threads call at once (GNNRT_MPI_THREAD_MULTIPLE, which the executable
  /// sets for --structure hash), on the sampler's thread over a split of the
  /// communicator, so that sampling overlaps training as with the
  /// replicated structure. bindFull reads the
  /// whole graph from the dataset `data` for each full-graph evaluation and
  /// drops it at the next batch.
  void useHashStructure(gnnrtContext *ctx, std::string data);
  /// Feature-pulling data parallel (docs/MiniBatch.md, "Feature pulling"):
  /// the features split by rows over the processes, this one holding
  /// `rows` (loadFeatureRowsForBatches). Each batch's share gets its other
  /// input rows from their owners (FeaturePuller) before it binds; bindFull
  /// gathers every row for the whole-graph evaluation (an all-gather,
  /// dropped once a batch binds). Sets ctx->ds's features to every row for
  /// the first binding.
  void usePulledFeatures(gnnrtContext *ctx, FeatureRows rows);
  /// GraNNDis's cooperative batching (docs/MiniBatch.md, "Co-batches"):
  /// each batch's whole subgraph split by rows over the processes
  /// (coBatchRows), trained by the row-partitioned program. A co-batch per
  /// server: this process's server is the ranks [first, first + count)
  /// (groupServers, ctx->rowComm), whose co-batch is the batch's seeds
  /// [b first / N, b (first + count) / N) of b on N processes.
  void useCoBatches(int first, int count) {
    coBatches = true;
    serverFirst = first;
    serverCount = count;
  }
  /// GraNNDis's expansion-aware sampling (Sampler.h) instead of the
  /// fanouts: the vertices outside each batch's seeds within `maxHop` hops
  /// of them (-1: the model's hops), `fanout` picked per expanded vertex
  /// (-1: all), and the subgraph they induce.
  void useExpansionAware(int64_t maxHop, int64_t fanout) {
    sampler->useExpansionAware(maxHop, fanout);
  }
  /// The features on storage (--features-on-storage; docs/MiniBatch.md,
  /// "The features on storage"): `file` holds features.npy open (the loader
  /// checked every value), and each batch's input rows are read from it as
  /// the batch is sampled (readStoredRows). The whole graph's features are
  /// never in memory, so evaluations run in batches (evaluate), not on the
  /// whole graph (bindFull binds nothing).
  /// Evaluations take `evalBatch` vertices per batch (0: the batch size).
  void useFeaturesOnStorage(const FeaturesOnStorage *file,
                            int64_t evalBatch = 0);
  bool featuresOnStorage() const { return storedFeatures != nullptr; }
  /// The executable was compiled for a memory budget (gnn-compile
  /// --mem-budget): the batches train with its blocks program, whose
  /// buffers are resident (a batch is small), and evaluations run the
  /// planned whole-graph program `evaluation` (its buffers placed, the
  /// features read by chunks when they are out of core). The two take turns
  /// with the slot buffers: an evaluation starts with none of the step's
  /// and ends dropping its own (gnnrtDropAll, the features' read-only slot
  /// forgotten too).
  void usePlannedEvaluation(const ModelInfo &evaluation);
  /// The model of the program whose evaluation runs (the whole graph's,
  /// which miniBatchStep keeps beside the blocks' training step): an
  /// evaluation is sized by its slots (unitBytes) and binds the whole
  /// graph with it.
  void useEvaluationModel(const ModelInfo &evaluation) {
    evalModel = evaluation;
  }
  /// Under `--mem-budget` with an executable not compiled for one and the
  /// features in memory (docs/MiniBatch.md, "Evaluations under the
  /// budget"): each evaluation runs on the whole graph where its state fits
  /// in what the budget leaves a batch (trainInPartsWithin), else in
  /// batches of `evalBatch` vertices (0: the batch size) with their full
  /// neighbourhoods, as with the features on storage, halved where one
  /// does not fit.
  void evaluateWithinBudget(int64_t evalBatch) {
    budgetedEval = true;
    evalBatchSize = evalBatch > 0 ? evalBatch : batchSize;
    evalBatchGiven = evalBatch > 0;
  }
  /// Under a memory budget: a bound batch's feature vector is freed, not
  /// kept for a later batch's rows (which saves their pages' faults).
  /// The sampler's thread allocates from the main heap too (M_ARENA_MAX 1):
  /// a heap of its own kept what each batch had freed (7 MB over a 26 MB
  /// budget with GraphSAGE on a 16,384-vertex graph).
  void freeBoundFeatures();
  /// Under `--mem-budget` `budget` (docs/MiniBatch.md, "Batches larger
  /// than the budget"): each epoch takes what the budget leaves after the
  /// process's resident memory (the least over the epochs), and a batch (on
  /// several processes data parallel: this process's share) whose state would
  /// not fit in it trains in parts, halves of its seeds halved again until each
  /// fits, their gradients summed into one step (gnnrtContext::GradientParts).
  /// Not for co-batches, P³, feature pulling, the pipeline,
  /// --save-batches or a GPU, whose batches train whole.
  /// With `announce` the first batch in parts prints a line saying so.
  void trainInPartsWithin(int64_t budget, bool announce) {
    partsBudget = budget;
    announceParts = announce;
  }
  /// Binds the whole graph (for ctx->model's program) with the sampler's
  /// CSC lent to the device where its memory is the host's: one copy of
  /// the graph, where a bound copy beside the sampler's is two (460 MB
  /// more at the Reddit shape, which the plan does not count).
  /// takeBackLent has it back for the sampler (the graph then unbound).
  /// Without `features` the device takes none (a binding for the
  /// parameters' shapes alone).
  void bindWholeLent(gnnrtContext *ctx, bool features = true);
  void takeBackLent(gnnrtContext *ctx);
  /// Layer-wise evaluation (--layerwise-eval; docs/MiniBatch.md,
  /// "Layer-wise evaluation"): `always`, or where the whole graph's does
  /// not fit under the budget (`auto`), or never.
  enum class Layerwise { Auto, Always, Never };
  void useLayerwiseEvaluation(Layerwise mode, int64_t evalBatch) {
    layerwise = mode;
    if (mode == Layerwise::Always)
      evalBatchSize = evalBatch > 0 ? evalBatch : batchSize;
    evalBatchGiven = evalBatchGiven || evalBatch > 0;
  }
  /// Whether evaluations run by evaluate() (the features on storage, a
  /// planned evaluation, one within the budget, or layer-wise) rather than
  /// on the whole graph bindFull binds.
  bool evaluatesItself() const {
    return storedFeatures || plannedEval || budgetedEval ||
           layerwise == Layerwise::Always;
  }
  /// An evaluation: the loss and the splits' accuracies, and with
  /// `predict` every vertex's predicted class.
  struct Evaluation {
    float loss = 0.0f;
    double acc[3] = {0.0, 0.0, 0.0};
    std::vector<int64_t> predictions;
  };
  /// A planned evaluation (usePlannedEvaluation): `program`'s evaluation on
  /// the whole graph under its plan. Within the budget
  /// (evaluateWithinBudget): on the whole graph where it fits, else in
  /// batches as follows. Else the features on storage:
  /// `program`'s evaluation over every vertex, in
  /// batches of --batch-size consecutive vertices, each with its full
  /// in-neighbourhood over the model's hops (fanouts of -1), the whole
  /// graph's degrees and its rows read from storage: each vertex's logits
  /// are the whole graph's. The loss is the sum of the batches' shares of
  /// the whole graph's mean, the accuracies the summed counts. On several
  /// processes each evaluates its range of the vertices and the counts are
  /// summed (one all-reduce of six counts, as the whole graph's
  /// evaluation), the loss with `wantLoss` and the predictions with
  /// `predict` too. The last batch stays bound.
  Evaluation evaluate(gnnrtContext *ctx, const Program &program, bool predict,
                      bool wantLoss = false);

  /// The training step is the one compiled for sampled blocks
  /// (miniBatchStep), for json().
  void onBlocksStep() { blocksStep = true; }
  /// P³'s pipeline (--pipeline; docs/MiniBatch.md, "Pipelining"): up to
  /// kPipelineLanes batches in flight, each on a lane (Pipeline.h: a thread
  /// and a context of its own, one lane at a time, P³'s static 2F2B order),
  /// batch t trained at the parameters after batch t - kStaleness - 1
  /// (weight stashing) and its update applied to `ctx`'s, the newest. The
  /// epoch ends with every batch finished.
  void usePipeline(gnnrtContext *ctx);
  static constexpr int kPipelineLanes = 3;
  static constexpr int64_t kStaleness = 3;
  // Batch t starts once batch t - lanes has finished: its version t - s is
  // complete only if lanes <= s.
  static_assert(kPipelineLanes <= kStaleness,
                "more batches in flight than the staleness allows");

private:
  Dataset full;
  std::vector<int64_t> seeds;
  int64_t batchSize;
  uint64_t seed;
  std::vector<int64_t> fanouts;
  bool blocksStep = false;
  int64_t steps = 0, sampledEdges = 0;
  // Each level's rows summed over the batches (whole batches: |V_0| the
  // input rows, ..., the seeds), for the summary.
  std::vector<int64_t> levelRows;
  // Whether ctx->ds holds a batch (bindFull binds the whole graph).
  bool batchBound = false;
  std::string saveDir;
  std::vector<float> batchLosses;
  int processes = 1;
  std::unique_ptr<NeighborSampler> sampler;
  // P³'s hash-partitioned structure (useHashStructure): this process's
  // shard and the dataset the evaluations read the whole graph from.
  std::unique_ptr<StructureShard> shard;
  std::string shardData;
  // The hop pushes' communicator: a split of the world's on the sampler's
  // thread where MPI lets two threads call at once (concurrentThreads),
  // else the world's, on the training's thread.
  std::unique_ptr<Communicator> samplerComm;
  /// With a shard: whether the training's thread samples (pushing over the
  /// world's communicator), the sampler's thread having none of its own.
  bool sampleOnTrainingThread() const { return shard && !samplerComm; }
  int64_t wholeGraphReads = 0;
  double shardSeconds = 0; // building the shard (P³'s partition time)
  /// json()'s "structure" under P³: replicated, or the shard held, the
  /// bytes this process pushed, the pushes and the whole graph's reads.
  std::string structureJson() const;
  // P³: the full-graph binding (useFeatureColumns), and this process's
  // share's rows per level and the other shares', summed over the batches
  // (json()).
  struct FullColumns {
    bool on = false;
    Dataset own;
    std::vector<int64_t> rowStarts;
    std::vector<float> degrees[2];
    int64_t lossCount[3] = {-1, -1, -1};
  } columns;
  std::vector<int64_t> ownShareRows, otherShareRows;
  // The most bytes a batch's training state takes on this process (json():
  // its graph, features and activations by the model's buffer records, the
  // staged aggregations' receive buffers), over the batches.
  int64_t peakBatchBytes = 0;
  // Feature vectors of bound batches, for the next batches' (batchSubgraph's
  // `storage`); the sampler's thread takes one, the training returns it.
  std::mutex spareMutex;
  std::vector<std::vector<float>> spareFeatures;
  bool keepSpareFeatures = true;
  std::vector<float> takeSpareFeatures();
  void countBatchMemory(const gnnrtContext *ctx);
  // Batches in parts (trainInPartsWithin): the budget, what it leaves for a
  // batch (set by the first epoch; 0: batches train whole), the batches
  // trained in parts and their parts (json()).
  int64_t partsBudget = 0, partsLeft = 0, batchesInParts = 0, batchParts = 0;
  bool announceParts = false;
  // Whether the sampler's thread prepared the last batch in parts (its
  // batches are prepared one after another; an epoch starts with false).
  bool lastInParts = false;
  // The step's model and optimizer as the epoch starts: the sampler's
  // thread sizes the batches by them while bindDataset rewrites ctx's.
  ModelInfo partsModel;
  OptimizerConfig partsOptimizer;
  int64_t gradientBytes = 0; // the parts' sum of the gradients
  /// At each epoch's start: what the budget leaves (partsLeft), the model
  /// snapshot; the slots without headroom. Turns the parts off where they
  /// do not apply (trainInPartsWithin, a GPU).
  void startParts(gnnrtContext *ctx);
  /// What a unit of training `ds` (a batch, or a share or part of one)
  /// needs of partsLeft: its state, with `nextRows` its rows and graph
  /// again for the next unit's, read meanwhile on another thread, and
  /// `sampled` bytes of sampled blocks held meanwhile (sampledBytes). With
  /// `evaluation` the state is an evaluation's by that model (its
  /// evaluation's buffers alone).
  int64_t unitBytes(const Dataset &ds, int64_t sampled, bool nextRows = true,
                    const ModelInfo *evaluation = nullptr) const;
  /// The sizes of `batch`'s subgraph (batchSubgraph's vertices, edges,
  /// features and classes; nothing built), which unitBytes reads.
  Dataset sizes(const SampledBatch &batch) const;
  /// The blocks of `batch` and what batchSubgraph builds from them.
  static int64_t sampledBytes(const SampledBatch &batch);
  /// The blocks of `batch` alone.
  static int64_t blockBytes(const SampledBatch &batch);
  /// `ds`'s input rows: read from storage, or copied from the features.
  void fillRows(Dataset &ds);
  // Feature pulling: the rows' holders (FeaturePuller), and the rows of the
  // shares this process read from its own features and pulled, summed
  // (json()).
  std::unique_ptr<FeaturePuller> puller;
  int64_t pulledRows = 0, ownRows = 0;
  // The features on storage: features.npy, what was read from it (summed
  // over the sampler's thread and the evaluations: json()), the evaluation
  // batches, and the whole graph's sampler, out-degrees and labelled
  // vertices per split (evaluate).
  const FeaturesOnStorage *storedFeatures = nullptr;
  std::atomic<int64_t> storedBytes{0}, storedReads{0};
  int64_t evaluationBatches = 0, evalBatchSize = 0;
  /// Whether --eval-batch-size was given (the evaluation batches' size
  /// fixed, not grown under the budget), and the largest batch of full
  /// neighbourhoods and of a level evaluated.
  bool evalBatchGiven = false;
  int64_t largestEvalBatch = 0, largestLevelBatch = 0;
  /// Evaluation batches whose sampling stopped at the budget's worth of
  /// edges (forEachEvaluationBatch), then halved.
  int64_t truncatedEvalBatches = 0;
  std::unique_ptr<NeighborSampler> wholeSampler;
  std::vector<float> outDegrees;
  int64_t labelledIn[3] = {0, 0, 0};
  // A planned evaluation: its model and the step's.
  bool plannedEval = false;
  ModelInfo evalModel, stepModel;
  // evalModel with the step's graph arrays too (an evaluation batch binds
  // with the step's model), set by startParts.
  ModelInfo batchEvalModel;
  // batchEvalModel with level l + 1's buffers as the evaluation's (layer-
  // wise evaluation), set by startParts.
  std::vector<ModelInfo> levelEvalModels;
  // Evaluations within the budget (evaluateWithinBudget), and those that
  // ran on the whole graph (json()).
  bool budgetedEval = false;
  int64_t wholeEvaluations = 0;
  /// `program`'s evaluation on the whole graph, bound with the sampler's
  /// graph lent (bindWholeLent), under the plan's model where planned.
  Evaluation evaluateWhole(gnnrtContext *ctx, const Program &program,
                           bool predict);
  /// Whether the whole graph's evaluation fits in what the budget leaves
  /// (partsLeft; startParts first).
  bool wholeFits() const;
  int64_t wholeBytes() const;
  /// With the features on storage (no plan): whether evaluations run
  /// layer-wise (`auto`, the levels compiled, the cuts fitting).
  bool layerwiseStored(gnnrtContext *ctx, const Program &program);
  /// The vertex with the most in-edges.
  int64_t hubVertex();
  int64_t hubFound = -1; // hubVertex's, once found
  /// At the first epoch under the budget: stops the run where no way of
  /// evaluating fits in what the budget leaves (the whole graph, layer-wise,
  /// or the hub's full neighbourhood alone).
  void checkEvaluationFits(const Program &program);
  /// Layer-wise evaluation: `program`'s levels (Program::evalLevel) one at
  /// a time, each over every vertex in batches of --eval-batch-size
  /// destinations with their 1-hop in-neighbourhoods (halved where one
  /// does not fit in what the budget leaves), the cuts between levels held
  /// for every vertex (all-reduced over the processes, each of which
  /// computed its batches' rows). The last level's loss, accuracies and
  /// predictions as evaluate()'s batches give them.
  Evaluation evaluateLayerwise(gnnrtContext *ctx, const Program &program,
                               bool predict, bool wantLoss);
  /// Under the budget: whether the cuts held between the levels fit in
  /// what it leaves (partsLeft) beside each level's batch of the vertex
  /// with the most in-edges alone.
  bool cutsFit();
  void startLevelSampler();
  /// The bytes of every cut, held for every vertex.
  int64_t cutBytes() const;
  /// What a batch of level `l` needs of partsLeft besides the cuts.
  int64_t levelBatchBytes(int64_t l, const SampledBatch &batch) const;
  Layerwise layerwise = Layerwise::Auto;
  /// Whether `auto` may choose layer-wise: `program`'s levels compiled.
  bool layerwiseAuto(const Program &program) const;
  std::unique_ptr<NeighborSampler> levelSampler; // one hop, every in-edge
  int64_t layerwiseEvaluations = 0, levelBatches = 0;
  /// Every vertex in batches of consecutive seeds sampled by `sampler`
  /// (process r of N: the r-th of N ranges of about equal vertices plus
  /// in-edges), each given to `evaluate`. Batches have --eval-batch-size
  /// seeds; under the budget a batch whose `need` passes partsLeft is
  /// halved until it fits, and without an --eval-batch-size given the
  /// next batch doubles while the last one's need beyond an empty batch's
  /// took at most half of the room, so that the batches grow towards what
  /// the budget allows. A vertex that does not fit alone goes to
  /// `tooLarge` (which stops the run).
  /// Returns the largest batch's seeds.
  int64_t forEachEvaluationBatch(
      gnnrtContext *ctx, const NeighborSampler &sampler,
      const std::function<int64_t(const SampledBatch &)> &need,
      const std::function<void(int64_t, const SampledBatch &, int64_t)>
          &tooLarge,
      const std::function<void(SampledBatch, const std::vector<int64_t> &)>
          &evaluate);
  /// The whole graph's out-degrees and labelled vertices per split (once).
  void countWholeGraph();
  /// Binds an evaluation batch `ds` whose first rows are `seeds`: the
  /// splits' masks on the seeds alone, the whole graph's degrees, and
  /// `lentFeatures` (bindDataset) where given.
  void bindEvaluationBatch(gnnrtContext *ctx, Dataset ds,
                           const std::vector<int64_t> &seeds,
                           const std::vector<float> *lentFeatures = nullptr);
  /// An evaluation in batches: each batch's loss share, accuracy counts
  /// and predictions added (its seeds first), summed over the processes at
  /// finish().
  class BatchedEvaluation {
  public:
    BatchedEvaluation(MiniBatchTraining &mb, gnnrtContext *ctx, bool predict);
    void add(float batchLoss, const std::vector<int64_t> &seeds);
    Evaluation finish(bool wantLoss);

  private:
    gnnrtContext *ctx;
    bool predict;
    Evaluation e;
    int64_t counts[6] = {};
    int64_t savedCounts[3];
    double loss = 0.0;
  };
  /// Frees the slot buffers, their copies and chunks in the spill file
  /// dropped and the features' read-only slot forgotten (the next program
  /// numbers its slots on its own).
  static void freeSlots(gnnrtContext *ctx);
  /// Frees what the batches hold between them (before an evaluation, at an
  /// epoch's start): the slots (freeSlots) and the features buffer, and
  /// gives the heap's free pages back to the system.
  static void freeBatchState(gnnrtContext *ctx);
  // The sampler's CSC while the device holds it (bindWholeLent).
  bool lent = false;
  const int64_t *lentOffsets = nullptr;
  const int32_t *lentSources = nullptr;
  /// Reads batch `ds`'s input rows (its vertexIds) from storage into its
  /// features.
  void readBatchRows(Dataset &ds);
  /// Feature pulling: every row of the features, gathered from the owners.
  std::vector<float> gatherFeatures(gnnrtContext *ctx) const;
  // Co-batches: the batches' rows and this process's, summed (json()).
  bool coBatches = false;
  int64_t coBatchRows_[2] = {0, 0};
  int serverFirst = 0, serverCount = 1;
  // Each level's rows of this process's server's co-batches, summed.
  std::vector<int64_t> coBatchLevelRows;

  /// A batch ready to bind: this process's subgraph, the whole batch's
  /// sampled edges and, on several processes, the degrees of its vertices
  /// in the whole batch (seedShare).
  struct Prepared {
    Dataset ds;
    int64_t edges = 0;
    std::vector<int64_t> levelRows; // the whole batch's
    std::vector<float> degrees[2];
    // P³: the whole graph of every share (its degrees), each share's first
    // row in it and its rows per level (co-batches: each process's).
    Dataset world;
    std::vector<float> worldDegrees[2];
    std::vector<int64_t> starts;
    std::vector<std::vector<int64_t>> levels;
    // Feature pulling: the global ids of ds's rows (its features empty
    // until the pull finishes).
    std::vector<int64_t> vertices;
    FeaturePuller::Pending pull;
    // A batch in parts: the whole sampled batch and the seed ranges
    // [first, last) of this process's seeds that train as its parts (ds
    // empty), or why a seed cannot.
    std::shared_ptr<const SampledBatch> sample;
    std::vector<std::pair<int64_t, int64_t>> parts;
    std::string partsError;
  };
  /// This process's seeds [begin, end) of `batch` as one unit when it fits
  /// in partsLeft (its rows filled), else as a batch in parts: the seeds
  /// halved, left to right, until each part fits.
  Prepared prepareWithin(SampledBatch batch, int64_t begin, int64_t end,
                         Prepared p);
  /// Trains the batch in parts `p`, each part built and its rows read while
  /// the one before trains, the gradients summed, the step at the last
  /// part; the sum of the parts' losses (each a share of the batch's `n`
  /// seeds' mean). Stops the run on a seed that does not fit alone.
  float trainInParts(gnnrtContext *ctx, const Program &program, Prepared &p,
                     int64_t step, int64_t n);
  /// Binds `ds` (a batch, a share or part of one; P³: with batch `p`'s
  /// whole graph) and trains it at `step`; its loss.
  float bindAndTrain(gnnrtContext *ctx, const Program &program, Dataset ds,
                     int64_t step, Prepared *p = nullptr);
  /// P³: `batch`'s shares, process `rank`'s as its own rows.
  Prepared prepareShares(const SampledBatch &batch, int rank, int size) const;
  /// Binds batch `p` (the run's step `step`, of `n` seeds) to `ctx` and
  /// trains it; its loss.
  float trainBatch(gnnrtContext *ctx, const Program &program, Prepared &p,
                   int64_t step, int64_t n);
  /// Feature pulling: starts pulling batch `p`'s input rows into its
  /// features (collective), and finishes it (counting the rows pulled).
  void startPull(Prepared &p);
  void finishPull(Prepared &p);
  // The pipeline (usePipeline): its lanes' contexts, the stashed versions,
  // the scheduler; null without one.
  std::vector<std::unique_ptr<gnnrtContext>> lanes;
  std::unique_ptr<WeightStash> stash;
  std::unique_ptr<PipelineScheduler> scheduler;
  /// The lanes' device counters, summed (json(); the summary's "memory"
  /// counts the process's own context).
  MemoryCounters lanesMemory() const;
  /// P³: adds the shares' rows per level to ownShareRows and
  /// otherShareRows.
  void countShareRows(const Prepared &p, int rank);
};

/// --batch-size N and --fanouts K1,K2,... of one process (`batchSize` 0
/// and `fanouts` empty: full-graph training, null): checks them against the
/// model's hops and the run, and keeps ctx->ds, before it is bound. Stops
/// the run with the reason on a bad combination. `externalHops` and
/// `externalFanout` (--preload-hops and --preload-fanout, -1 when not
/// given) select expansion-aware sampling instead of the fanouts. P³
/// (`columns`, from loadFeatureColumnsForBatches): samples from `columns`
/// instead (moved in: left empty), and keeps ctx->ds for the full-graph
/// evaluation (its whole graph is `columns`' structure). With `takeDataset`
/// ctx->ds moves in instead of a
/// copy (one copy of the features, not two, until the start-up binds
/// the whole graph with bindWholeLent, which sets ctx->ds again).
std::unique_ptr<MiniBatchTraining>
startMiniBatch(gnnrtContext *ctx, int64_t batchSize, const std::string &fanouts,
               uint64_t seed, int worldSize, const std::string &saveBatches,
               int64_t externalHops, int64_t externalFanout,
               Dataset *columns = nullptr, bool takeDataset = false);

/// GraNNDis's fetch-then-split (cooperative batching): process `rank`'s
/// rows of the sampled `batch` (the whole batch's subgraph) with their
/// in-edges, features, labels, masks and edge data. Each level band of the
/// batch (its rows of level l but not l + 1) is split evenly over the
/// processes, and the co-batch numbers its rows process by process, each
/// process's by band, highest level first: so each process's rows of a
/// level are a prefix of its rows (its levelRows), as the batch's are of
/// the batch, and the program on blocks restricts the own rows' steps.
/// The edges' sources are co-batch ids, ascending within a row; `starts`
/// the processes' first rows (size + 1), `rowLevels` each process's rows
/// per level, `degrees` the batch's in- and out-degrees of the own rows:
/// `batchDegrees`' (of `batch`'s rows) where given (a server's share of a
/// larger batch, seedShare's), else `batch`'s own.
Dataset coBatchRows(const Dataset &batch, int rank, int size,
                    std::vector<int64_t> &starts,
                    std::vector<std::vector<int64_t>> &rowLevels,
                    std::vector<float> degrees[2],
                    const std::vector<float> *batchDegrees = nullptr);

/// Feature-pulling data parallel (--partition pull): what the process
/// trains on before startMiniBatch keeps it, every vertex with its labels,
/// masks and edges but no feature (the memory check counts every row: the
/// evaluation binds them all), and in `rows` the equal vertex split into
/// size / `copies` ranges (--feature-copies; it must divide `size`) and the
/// features of this process's range, read by ranged reads of the dataset;
/// `full` its sizes and split counts.
Dataset loadFeatureRowsForBatches(const std::string &data, int rank, int size,
                                  int copies, FullGraph &full,
                                  FeatureRows &rows);

/// The program mini-batch training runs on several processes, after
/// refusing the options of the full-graph modes (`partition`: --partition;
/// `rowSplit`:
/// --row-split or --repartition-gain; `dump`: --dump), and `mode`: the
/// unpartitioned one, "data-parallel" (its gradients summed over them);
/// the feature-partitioned one, "p3" (--partition features); the
/// row-partitioned one, "co-batch" (--partition rows); the unpartitioned
/// one with the features split by rows, "pull" (--partition pull). Without
/// --partition the first of the three the executable holds.
const Program *miniBatchProgram(const std::vector<Program> &programs,
                                const std::string &partition, bool rowSplit,
                                bool dump, std::string &mode);

/// P³: what full-graph feature partitioning loads and sets (ctx->ds the
/// own rows with every vertex's features of the process's columns, `whole`,
/// the split in `rowParts` and ctx->rowStarts, `part`, `full`, the degrees
/// and loss counts; loadFeatureParts), and returns the
/// dataset batches are sampled from: every vertex with its labels, masks
/// and edges, and the process's feature columns (not every feature: no
/// feature value crosses processes).
Dataset loadFeatureColumnsForBatches(gnnrtContext *ctx, const std::string &data,
                                     const std::string &rowSplit,
                                     RowParts &rowParts, PreloadPart &part,
                                     FullGraph &full, Dataset &whole);

} // namespace gnnrt

#endif // GNNRT_DRIVER_MINIBATCH_H
