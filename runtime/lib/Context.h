//===- Context.h - the run-time context behind gnnrtContext -----*- C++ -*-===//

#ifndef GNNRT_CONTEXT_H
#define GNNRT_CONTEXT_H

#include "Communicator.h"
#include "Dataset.h"
#include "Device.h"
#include "GraphOnStorage.h"
#include "Memory.h"
#include "Pipeline.h"
#include "Random.h"
#include "SelectiveLoad.h"
#include "Spill.h"
#include "TilePipeline.h"
#include "gnnrt/GNNRuntime.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gnnrt {

/// A parameter as the compiled model declares it (docs/ProgramContract.md).
struct ParamInfo {
  std::string name;
  std::string init = "glorot";
  double value = 0.0;
  std::vector<int64_t> dims;  // > 0 static; -1 = features, -2 = classes
  std::vector<int64_t> shape; // resolved against the dataset
  int64_t size() const;
};

/// Edge data the model reads (`gnn.input` of an edge tensor).
struct EdgeInputInfo {
  std::string name;
  bool isInt = false;
  int64_t width = 1; // row width the model expects (f32)
};

/// A buffer a compiled function takes from a slot (gnnrtBuffer): `factor`
/// floats times the product of `terms`, each |V|, |E|, F, C, ceil(|V|/k) or
/// S (the graph's sources: every vertex of a row-partitioned program) or W
/// (the whole graph's edges: feature partitioning's first layer).
/// Unknown: a size of other run-time values.
struct BufferInfo {
  enum Term { V, E, F, C, VChunks, S, W };
  int64_t slot = 0, factor = 1;
  std::vector<std::pair<Term, int64_t>> terms; // (term, k for VChunks)
  bool unknown = false;
};

/// A function's buffer placement (gnn-compile --mem-budget): the most bytes
/// of slot buffers resident at once, at the sizes it was planned at.
struct PlacementInfo {
  std::string function; // train or eval
  bool planned = false; // false: every slot fits the budget at once
  int64_t peak = 0, V = 0, E = 0, F = 0, C = 0;
};

/// What gnn-compile records about a model (the `gnnrt_model_info` text).
struct ModelInfo {
  std::string name;
  std::vector<ParamInfo> params;
  std::vector<EdgeInputInfo> edgeInputs;
  std::vector<BufferInfo> buffers;
  /// The buffers the evaluation takes (the `eval-buffer` records), where
  /// recorded: an evaluation alone is sized by them.
  std::vector<BufferInfo> evalBuffers;
  bool evalBuffersKnown = false;
  std::vector<PlacementInfo> placements;
  /// The in-edges of each row chunk that the placements sized their
  /// edge-chunked buffers with (gnnrtBufferEdgeChunks: a fused gather's edge
  /// caches); empty when none is. A dataset whose chunks hold more edges
  /// does not get the plans' peaks in the memory check.
  std::vector<int64_t> edgeChunks;
  /// The per-edge arrays of the graph the program reads (bit i: gnnrtGraphIndex
  /// i: 0 src, 1 dst, 2 csrEdge, 3 csrDst); all of them when not recorded.
  unsigned graphArrays = 0xF;
  /// Those the evaluation reads where fewer (mini-batch training binds the
  /// whole graph for an evaluation with them); 0: graphArrays.
  unsigned evalGraphArrays = 0;
  int64_t featureWidth = -1; // static width the model reads, or -1
  int64_t classWidth = -1;   // static number of logits, or -1
  /// Where the compiled kernels run: "cpu" (gnnrtParallelFor) or "cuda"
  /// (launched on a GPU; the program needs the CUDA device).
  std::string target = "cpu";
  /// Neighbour reads on the longest path to the logits (the depth of the
  /// closure a rank preloads, docs/Distributed.md); -1 when the forward
  /// reduces over all vertices (`globalOp` names the op), -2 when the
  /// program predates the record.
  int64_t hops = -2;
  std::string globalOp;
  /// How the program splits its vertex rows over processes: "none",
  /// "rows" (--gnn-partition-rows: all-gathers and reduce-scatters in the
  /// program; each process holds its own vertices' rows and in-edges) or
  /// "features" (--gnn-partition-features: the first layer on the whole
  /// graph and this process's feature columns, the rest as "rows").
  std::string partition = "none";
  /// A row-partitioned program whose first layers run replicated on the
  /// whole graph (--gnn-partition-rows replicate=k): every process reads
  /// every vertex's features and the whole graph besides its own rows.
  bool replicated = false;
  /// ... and reads every vertex's features (its first levels replicated),
  /// not only its own rows' (only later levels replicated).
  bool replicatedFeatures = false;
  /// The features out of core (gnnrtFeaturesChunks) in this many chunks; 0:
  /// in memory.
  int64_t featureChunks = 0;
  /// The row chunks of the steps (gnnrtChunkRowBound's; the row-chunks
  /// record, written where there is more than one).
  int64_t rowChunks = 1;
  /// The graph's per-edge arrays out of core (GraphOnStorage.h), read by
  /// windows of row chunks; the row chunk count of the program (its
  /// windows' largest bounds the memory); 0: in memory.
  int64_t graphChunks = 0;
  /// A row-partitioned program's collectives per call of each function, in
  /// order: the function (train or eval), the kind (allgather, broadcast:
  /// a staged SpMM's N broadcasts, reduce_scatter, reduce: a staged
  /// reduce-scatter's N reduces) and the rows' width (a factor times F and
  /// C terms).
  struct RowCollective {
    std::string function, kind;
    int64_t factor = 1;
    std::vector<BufferInfo::Term> terms;
  };
  std::vector<RowCollective> rowCollectives;
  /// Layer-wise evaluation (gnn-compile --eval-levels; the `eval-levels`,
  /// `level`, `cut` and `level-buffer` records): level l's function (the
  /// program's gnn_eval_level(ctx, l), 1 <= l <= levels.size()) reads the
  /// cuts `inputs` at a block's rows and leaves `outputs` at its
  /// destinations' rows, taking `buffers`.
  struct Level {
    std::vector<int64_t> inputs, outputs;
    std::vector<BufferInfo> buffers;
  };
  std::vector<Level> levels;
  /// Each cut's row width (`factor` times `terms`; the slot unused).
  std::map<int64_t, BufferInfo> cutWidths;
};

/// Parses the text written by gnn-compile: one record per line
///   model <name>
///   param <name> <init> <value> <rank> <dim>...   (dims: n, -1 F, -2 C)
///   edge <name> f32|i32 <width>
///   features <width|-1>
///   classes <width|-1>
///   buffer <slot> <factor> <terms>   (terms: 1, or V, E, F, C, S, W, V/k
///   joined
///                                     by '*', or ? when unknown)
///   eval-buffer <slot> <factor> <terms>   (the evaluation's alone)
///   eval-levels <L>       (layer-wise evaluation's level functions)
///   level <l> <n> <cut>... <m> <cut>...   (level l's n cuts read, m left)
///   cut <k> <factor> <terms>              (cut k's row width)
///   level-buffer <l> <slot> <factor> <terms>   (level l's buffers)
///   placement train|eval <planned 0|1> <peak bytes> <V> <E> <F> <C>
///   graph-arrays <mask>   (the per-edge arrays read, bit i: index i)
///   eval-graph-arrays <mask>   (the evaluation's, where fewer)
///   target cuda           (compiled with --target=cuda; cpu without it)
///   features-out-of-core <chunks>   (the features stay on storage, read by
///                                    chunks: gnnrtFeaturesChunks)
///   graph-out-of-core <chunks>   (the per-edge arrays stay on storage, read
///                                 by windows: gnnrtGraphWindow)
///   row-chunks <K>           (the steps' row chunks, where K > 1)
///   hops <n> | hops -1 <op>   (neighbour reads on the longest path to the
///                              logits; -1: <op> reduces over all vertices)
///   partition rows|features (--gnn-partition-rows or -features)
///   replicated 0|1           (rows with replicated levels; 1: the features
///                             of every vertex are read)
///   collective train|eval allgather|broadcast|reduce_scatter|reduce <factor>
///   <terms>
///                         (a row collective per call of the function; the
///                          rows' width: terms 1 or F, C joined by '*')
bool parseModelInfo(const std::string &text, ModelInfo &info,
                    std::string &error);

/// A parameter's optimizer state: the step count and the buffers
/// Device::optimizerStep keeps (allocated on the first step that needs them).
struct OptState {
  std::unique_ptr<Buffer> m, v;
  int64_t t = 0;
};

} // namespace gnnrt

struct gnnrtContext {
  /// Where the buffers live and the kernels run; declared first, so that it
  /// outlives everything allocated on it.
  std::unique_ptr<gnnrt::Device> device = gnnrt::createCPUDevice();
  /// This process's place among the processes training the model (shared
  /// with the lanes of P³'s pipeline, Pipeline.h).
  std::shared_ptr<gnnrt::Communicator> comm =
      gnnrt::createSingleProcessCommunicator();
  /// The dataset; bindDataset moves its features to `features` and its CSC
  /// (indptr, indices), with the CSR and degrees it builds, to the device
  /// (device->graph()), and copies the model's edge inputs to the device
  /// (device->edgeData()).
  gnnrt::Dataset ds;
  std::unique_ptr<gnnrt::Buffer> features; // [V, F], set by bindDataset
  /// The floats `features` was allocated with (a later, smaller dataset's
  /// features reuse it: a mini-batch's each batch).
  int64_t featuresCapacity = 0;
  /// The features out of core (the model's `features-out-of-core` record):
  /// features.npy open for the run, read by the chunks gnnrtFeaturesChunks
  /// takes; `features` is then null.
  gnnrt::FeaturesOnStorage featuresFile;
  gnnrt::ModelInfo model;
  std::vector<std::unique_ptr<gnnrt::Buffer>> params, grads;
  std::vector<gnnrt::OptState> opt;
  gnnrt::OptimizerConfig optConfig;
  std::vector<std::unique_ptr<gnnrt::Buffer>> buffers; // by slot
  /// The slow tier (--spill-dir): the slots gnnrtEvict wrote to storage,
  /// whose `buffers` entries are then null. Null without a spill directory.
  std::unique_ptr<gnnrt::SpillStore> spill;
  /// The graph out of core (the model's `graph-out-of-core` record): the
  /// sources stay in indices.npy, the CSR goes to the spill file, and the
  /// kernels read windows of rows (gnnrtGraphWindow). Null in memory.
  /// Declared after `spill`, whose file holds its CSR: destroyed first.
  std::unique_ptr<gnnrt::GraphOnStorage> graphOnStorage;
  /// indices.npy as the loader left it open for graphOnStorage.
  gnnrt::IndicesOnStorage indicesFile;
  /// Selective loading of tiles' input chunks (gnnrtFetchChunkFor).
  gnnrt::SelectiveLoader selective;
  /// The sub-chunk pipeline of tiles' input chunks (gnnrtSpmmRowsFetch).
  gnnrt::TilePipeline pipeline;
  uint64_t seed = 0;
  int64_t step = 0;
  bool training = false;
  double dropoutOverride = -1.0;
  /// The logits gnnrtSetOutput recorded ([V, C], device-tier memory: read
  /// them through device->hostView).
  const float *logits = nullptr;
  float loss = 0.0f;
  /// Layer-wise evaluation (ABI 27): the cuts a level function reads, at
  /// the bound block's rows (device-tier memory; null: not bound), and
  /// where it left those it computes, with their row sizes.
  std::vector<std::unique_ptr<gnnrt::Buffer>> levelInputs;
  std::vector<std::pair<const float *, int64_t>> levelOutputs;
  /// Shared preloading (docs/Distributed.md): the full graph's in- and
  /// out-degrees of the local vertices, which bindDataset binds instead of
  /// the local graph's (empty: the local graph's), and the labelled
  /// vertices of each split over all ranks, the loss's divisor (-1: this
  /// rank's).
  std::vector<float> fullDegree[2];
  int64_t lossCount[3] = {-1, -1, -1};
  /// The bound graph's vertices' ids in the whole graph (a closure, a
  /// sampled batch: Dataset::vertexIds) when the program is not
  /// partitioned; empty for a whole graph. gnnrtVertexIds returns them (on
  /// the device: vertexIdsOnDevice, copied at the first call after a bind)
  /// and the dropouts draw by them.
  std::vector<int32_t> vertexIds;
  std::unique_ptr<gnnrt::Buffer> vertexIdsOnDevice;
  /// Row partitioning: p(r), the first vertex of each process's rows
  /// (size() + 1 entries, docs/Distributed.md); empty in one process.
  std::vector<int64_t> rowStarts;
  /// The processes the rows are split over, where they are not `comm`'s:
  /// a co-batch per server of several processes (docs/MiniBatch.md) splits
  /// each server's batch over that server's processes (rowsComm), rowGroup
  /// the server's first rank. Null: comm's.
  std::shared_ptr<gnnrt::Communicator> rowComm;
  int rowGroup = 0;
  /// A co-batch's split (docs/MiniBatch.md, "Co-batches"): rowLevels[r] is
  /// process r's rows per level (a prefix of its rows each), which a staged
  /// aggregation broadcasts no more of than its sources' level; empty: every
  /// row of each process.
  std::vector<std::vector<int64_t>> rowLevels;
  /// Feature partitioning (P³): this process's feature columns are
  /// [featureBegin, featureBegin + ds.numFeatures) of featureTotal (-1:
  /// all of them), and the whole graph bound next to the own rows' has
  /// wholeEdges edges (-1: none is).
  int64_t featureBegin = 0, featureTotal = -1, wholeEdges = -1;
  /// P³ mini-batch training (docs/MiniBatch.md): the whole graph holds each
  /// process's share of the batch, one after another from rowStarts[r],
  /// and shareLevels[r] is share r's rows per level (n_0 all of them, ...,
  /// n_L its seeds). A share's edges stay within it: the own rows' graph
  /// reads no other process's rows. Empty otherwise.
  std::vector<std::vector<int64_t>> shareLevels;
  /// The gradients' sum over the processes (docs/Distributed.md): the
  /// gradients gnnrtGradientReady announced since the last bucket went out
  /// (`pending`, `pendingFloats`), and each bucket issued (its packed
  /// gradients, its parameters, its all-reduce), which gnnrtSumGradients
  /// waits for. A bucket goes out once it holds `bucketBytes` (--bucket-bytes).
  struct GradientBuckets {
    int64_t bucketBytes = int64_t(25) << 20;
    std::vector<int64_t> pending;
    int64_t pendingFloats = 0;
    std::vector<std::vector<float>> packed;
    std::vector<std::vector<int64_t>> members;
    std::vector<gnnrt::Request> requests;
    std::vector<char> announced; // by parameter
    int64_t issued = 0;          // buckets over the run (--json)
  } gradientSum;
  /// A batch trained in parts (docs/MiniBatch.md, "Batches larger than the
  /// budget"): while `defer` is set the parts' gradients are summed into
  /// `sum` (by parameter) at gnnrtOptimizerUpdate instead of stepping, and
  /// nothing is all-reduced; with `fold` set (the last part) each
  /// parameter's sum is added to its gradient once (`folded`) before it is
  /// all-reduced or stepped, so the step is the whole batch's. `part`
  /// numbers the parts: the masks drawn over local element indices
  /// (maskSeed) take another stream in each.
  struct GradientParts {
    bool defer = false, fold = false;
    int64_t part = 0;
    std::vector<std::vector<float>> sum;
    std::vector<char> folded;
  } gradientParts;
  /// gnnrtSpmmBroadcast's two receive buffers (the largest part's rows),
  /// kept across calls.
  std::unique_ptr<gnnrt::Buffer> stageBuffers[2];
  /// gnnrtStageRows's broadcasts in flight (by the stage's parity), the
  /// stage it expects next, and the own rows, their width and the sources'
  /// level it was given at stage 0 (the later stages' must be the same);
  /// gnnrtReduceStageSend's reduces in flight (by parity), each part's (a
  /// kernel's output's) own rows and place in the stage buffers' rows of
  /// `totalWidth` floats, and the largest process's rows.
  struct ReducePart {
    const float *own;
    int64_t rowOffset, width, level;
  };
  struct {
    gnnrt::Request pending[2];
    int64_t next = 0;
    const float *own = nullptr;
    int64_t width = 0, sourceLevel = -1;
    std::vector<gnnrt::Request> reducing[2];
    std::vector<ReducePart> parts;
    int64_t totalWidth = 0;
    int64_t most = 0;
    /// gnnrtReduceStageSources's broadcasts in flight (by parity) into
    /// `sourceBuffers`, the stage it expects next, and stage 0's own rows
    /// and width.
    std::unique_ptr<gnnrt::Buffer> sourceBuffers[2];
    gnnrt::Request sourcesPending[2];
    int64_t sourcesNext = 0;
    const float *sourcesOwn = nullptr;
    int64_t sourcesWidth = 0;
  } kernelStages;
  /// gnnrtCheckTypes's verdicts on the edge types bound: the least and the
  /// greatest type of each array it scanned, by the array's address and
  /// length, so that the slot ops of every step do not scan it again.
  /// Cleared by bindDataset (a batch's arrays may take the same address).
  struct CheckedTypes {
    const int32_t *data;
    int64_t size;
    int32_t least, most;
  };
  std::vector<CheckedTypes> checkedTypes;
  /// gnnrtPieceScratch's floats and gnnrtPieceScratchI32's integers (in a
  /// buffer of as many floats), kept across calls.
  std::unique_ptr<gnnrt::Buffer> pieceScratch[2];
  /// A slot that grows takes a quarter more than asked (mini-batch
  /// training: each batch's sizes differ a little).
  bool slotHeadroom = false;
  /// A lane of P³'s pipeline (Pipeline.h, docs/MiniBatch.md): the context
  /// trains batch `batch` on its own slots and a copy of the parameters'
  /// stashed version, and its optimizer updates apply its gradients to
  /// `master`'s parameters with `master`'s optimizer state, each recorded in
  /// `stash` as version batch + 1; its syncs on closed shares are issued
  /// without waiting, and the batch yields its turn until the next segment.
  /// Null master: the context updates its own parameters.
  struct Lane {
    gnnrtContext *master = nullptr;
    gnnrt::WeightStash *stash = nullptr;
    int64_t batch = 0;
  } lane;
  /// Bytes of slot buffers gnnrtBuffer allocated, over the run (the JSON's
  /// buffer_bytes); device->memoryCounters() counts every allocation.
  int64_t bytesAllocated = 0;
  // Operands of the compiled kernel gnnrtParallelFor runs next.
  std::vector<gnnrtMemRefF32> kernelArgs;
  std::vector<gnnrtMemRefI32> kernelArgsI32;
  std::vector<int64_t> kernelInts;
  // More input slots of the tile gnnrtParallelForRangeFetch runs next
  // (gnnrtTileInput).
  std::vector<int64_t> tileInputs;
};

namespace gnnrt {

/// The seed of this process's dropout masks: the run's seed on rank 0 (and
/// alone), another stream on each other rank, so that the ranks' masks,
/// drawn over their local element indices, are independent (not the same
/// mask on every rank's first rows or feature columns).
/// A batch's parts (gradientParts) each draw another stream too.
inline uint64_t maskSeed(const gnnrtContext *ctx) {
  const uint64_t stream = static_cast<uint64_t>(ctx->comm->rank()) +
                          static_cast<uint64_t>(ctx->comm->size()) *
                              static_cast<uint64_t>(ctx->gradientParts.part);
  return stream == 0 ? ctx->seed
                     : ctx->seed ^ mix64(stream + 0x6a09e667f3bcc908ULL);
}

/// The seed of masks whose elements are numbered as the single-process
/// tensor's: the run's seed on every process where a partitioned program
/// (rowStarts) or a part of the graph (vertexIds) numbers them so, or
/// where the tensor is one parameter row (gnnrtDropout), else maskSeed.
/// Each group of co-batches per server draws its own stream (its rows are
/// another batch's).
inline uint64_t globalMaskSeed(const gnnrtContext *ctx) {
  if (ctx->rowStarts.empty() && ctx->vertexIds.empty())
    return maskSeed(ctx);
  return ctx->rowGroup == 0
             ? ctx->seed
             : ctx->seed ^ mix64(static_cast<uint64_t>(ctx->rowGroup) +
                                 0xbb67ae8584caa73bULL);
}

/// The processes that split the rows (rowStarts): a server's (rowComm) or
/// every process.
inline gnnrt::Communicator &rowsComm(const gnnrtContext *ctx) {
  return ctx->rowComm ? *ctx->rowComm : *ctx->comm;
}

/// The most elements a parameter may have (the gnn verifier's bound on
/// static shapes, dialects/gnn/IR/GNNDialect.cpp): 2^34, 64 GiB of floats.
constexpr int64_t kMaxParamElements = int64_t(1) << 34;

/// Each parameter's shape with F and C of `ds`; false when one has more than
/// kMaxParamElements elements.
bool resolveParamShapes(ModelInfo &m, const Dataset &ds, std::string &error);

/// Builds the CSR, degrees and edge inputs for `ctx->ds` and checks the
/// dataset against the model (widths, edge data). False with a message.
/// The device takes the features; with `keepFeatureVector` ds.features is
/// left empty but allocated (a mini-batch's: MiniBatchTraining fills the
/// vector again for a later batch), else it is freed. With `lentFeatures`
/// (ds.features empty) the device copies those instead: the whole graph's
/// that mini-batch training keeps, bound without a copy beside them. The
/// per-edge arrays built are `graphArrays` (a graph-arrays mask), or the
/// model's graph-arrays record where it is 0.
bool bindDataset(gnnrtContext *ctx, std::string &error,
                 bool keepFeatureVector = false,
                 const std::vector<float> *lentFeatures = nullptr,
                 unsigned graphArrays = 0);

/// Feature partitioning: binds `whole` (every vertex, every edge; its CSC
/// moved out) as the device's whole graph next to the own rows' graph
/// bindDataset binds, with its degrees, or `degrees` (in, out; moved out)
/// where given (P³'s shares of a batch: the whole batch's), with the
/// per-edge arrays `graphArrays` as bindDataset. False with a message.
bool bindWholeGraph(gnnrtContext *ctx, Dataset &whole, std::string &error,
                    std::vector<float> *degrees = nullptr,
                    unsigned graphArrays = 0);

/// Whether parameter `p` holds only this process's feature columns' rows
/// (feature partitioning: its first dimension is bound to F).
bool isFeatureShard(const gnnrtContext *ctx, const ParamInfo &p);

/// Allocates the parameters (initialised from `seed`) and gradients.
void initParams(gnnrtContext *ctx, uint64_t seed);

/// Zeroes every parameter's gradient.
void zeroGrads(gnnrtContext *ctx);

/// What training `ctx->model` on the loaded `ctx->ds` will allocate beyond
/// the dataset, by part (TrainingMemory.cpp).
struct TrainingMemory {
  int64_t graph = 0;       // the CSR, destinations, degrees
  int64_t edgeInputs = 0;  // the device's copies of the edge data read
  int64_t features = 0;    // the device's copy of the features (transient)
  int64_t parameters = 0;  // parameters and gradients
  int64_t optimizer = 0;   // Adam's moments or SGD's momentum
  int64_t activations = 0; // the slots' buffers (their largest sizes)
  int64_t staging = 0;     // host copy of the largest parameter (initParams)
  bool unknownBuffers = false; // some buffer sizes could not be evaluated
  bool placed = false; // activations: the placement's peak, not every slot
  /// The most allocated at once: the features' copy replaces the dataset's,
  /// so it only counts while the rest is not allocated yet.
  int64_t peak() const;
  /// On a device whose memory is not the host's (a GPU): everything but the
  /// host's staging, the features' copy included (it stays there).
  int64_t devicePeak() const;
  /// What stays allocated through training: the graph, the edge data, the
  /// parameters, the optimizer's state and the activations.
  int64_t trainingState() const;
  /// A sampled batch's own: the graph, the edge data, the features and the
  /// activations (the parameters and the optimizer's state stay).
  int64_t batchState() const {
    return graph + edgeInputs + features + activations;
  }
};

/// Sizes the training state of `ctx` (after loadDataset, before
/// bindDataset). False with a message when a size overflows.
bool estimateTrainingMemory(const gnnrtContext *ctx, const OptimizerConfig &opt,
                            TrainingMemory &need, std::string &error);
/// The same for `model` on `ds` (a sampled batch before it is bound, with
/// a copy of the model: no context is read), without feature
/// partitioning's whole graph or the graph out of core.
bool estimateTrainingMemory(const ModelInfo &model, const Dataset &ds,
                            const OptimizerConfig &opt, TrainingMemory &need,
                            std::string &error);
/// The same for `model`'s evaluation alone: its activations are the
/// buffers the evaluation takes (ModelInfo::evalBuffers; every buffer where
/// not recorded).
bool estimateEvaluationMemory(const ModelInfo &model, const Dataset &ds,
                              const OptimizerConfig &opt, TrainingMemory &need,
                              std::string &error);

/// estimateTrainingMemory (into `need`), compared with `avail`
/// (availableMemory(); `onDevice`, a GPU: deviceAvailableMemory(), and the
/// need is devicePeak()): false with a one-line message naming the parts,
/// what is available and what helps.
bool checkTrainingMemory(const gnnrtContext *ctx, const OptimizerConfig &opt,
                         const AvailableMemory &avail, TrainingMemory &need,
                         std::string &error, bool onDevice = false);

/// What a device whose memory is not the host's can still allocate: its
/// free memory `free` (-1: unknown), or what its capacity (--mem-budget; 0:
/// none) leaves beside the `live` bytes when that is less ("--mem-budget").
AvailableMemory deviceAvailableMemory(int64_t free, int64_t capacity,
                                      int64_t live);

/// Stops the run with "error: <message>" (the runtime has no exceptions).
/// In a world of several processes the message names the rank and the
/// communicator's abort ends the others (setFatalHandler).
[[noreturn]] void fatal(const std::string &message);

/// What fatal() prefixes to its messages ("rank 1 of 4: ") and calls instead
/// of exit(1) (MPI_Abort: the other ranks stop instead of waiting in a
/// collective); null restores exit.
void setFatalHandler(const std::string &prefix, void (*abort)(int code));

/// Stops the run with "<what>: buffer of <have> elements, <want> needed"
/// when a buffer of `have` elements is shorter than `want` (the devices'
/// compute methods check their operands with it).
void needElements(int64_t have, int64_t want, const std::string &what);

/// Stops the run, naming `what`, unless `graph` holds its per-edge array
/// `which` (2: the CSR's edge ids, 3: its destinations) or the call reads
/// none of its edges (`edges` 0: an empty range, such as an empty row chunk
/// whose window holds no array). An aggregation to the sources reads its
/// edges' values through the edge ids, and without them would silently
/// read the CSC's order.
void needGraphIndex(const DeviceGraph &graph, int which, int64_t edges,
                    const char *what);

/// Stops the run with "<what> [<begin>, <end>) of <n>" unless
/// 0 <= begin <= end <= n (a range of rows an entry point was given).
void needRange(int64_t begin, int64_t end, int64_t n, const std::string &what);

/// With the graph out of core, stops the run naming `what` unless the
/// side's window (gnnrtGraphWindow) holds the rows [lo, hi); the entry
/// points that read the per-edge arrays check their rows with it.
void needGraphRows(gnnrtContext *ctx, int64_t side, int64_t lo, int64_t hi,
                   const char *what);

/// The environment variable `name` as a switch: "1" on, "0" off, `unset`
/// when it is not set; anything else stops the run naming it (never read as
/// on).
bool envFlag(const char *name, bool unset);

/// FNV-1a of `s` (parameter names' keys of the initialisation; the ranks'
/// fingerprint of a training).
uint64_t hashText(const std::string &s);

/// A counter-based uniform draw in [0, 1).
double uniform01(uint64_t seed, uint64_t a, uint64_t b, uint64_t c);

/// Accuracy of the recorded logits on split 0/1/2.
double accuracy(const gnnrtContext *ctx, int split);

/// The labelled vertices of split 0/1/2 (`total`) and those whose largest
/// logit is their label (`hit`): accuracy() is hit / total.
void accuracyCounts(const gnnrtContext *ctx, int split, int64_t &hit,
                    int64_t &total);

} // namespace gnnrt

#endif // GNNRT_CONTEXT_H
