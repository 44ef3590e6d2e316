//===- TrainingMemory.cpp - what training a model on a dataset needs ------===//
//
// The driver sizes the training state before allocating it, from the model
// description (parameters, the slots' buffer sizes as formulas of |V|, |E|,
// F and C) and the loaded dataset, so that a model too large for the machine
// stops with one line naming the parts instead of std::bad_alloc or the
// kernel's out-of-memory kill.
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "Memory.h"

#include <algorithm>
#include <map>

namespace gnnrt {

namespace {

/// Sizes saturate here: far above any machine, and sums of a few of them
/// cannot overflow.
constexpr int64_t kHuge = int64_t(1) << 60;

int64_t mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r) || r > kHuge)
    return kHuge;
  return r;
}

int64_t add(int64_t a, int64_t b) { return std::min(a + b, kHuge); }

/// Whether every plan bounds the peak at these sizes: made at them, or at
/// a graph's of no fewer vertices and edges (a part of the graph it was
/// planned for, shared preloading's closure) whose row chunks (`K` of
/// them, gnnrtChunkRowBound's: bounds rounded down to whole blocks of
/// rows) are each no smaller than every one here, with the same F and C.
/// Every buffer then holds no more rows than the plan counted (the
/// edge-chunked ones: edgeChunksWithin).
bool plannedWithinSizes(const std::vector<PlacementInfo> &plans, int64_t K,
                        int64_t V, int64_t E, int64_t F, int64_t C) {
  auto chunkRows = [K](int64_t rows, int64_t c) {
    return gnnrtChunkRowBound(rows, K, c + 1) - gnnrtChunkRowBound(rows, K, c);
  };
  return std::all_of(plans.begin(), plans.end(), [&](const PlacementInfo &p) {
    if (p.F != F || p.C != C || V > p.V || E > p.E || K < 1)
      return false;
    if (p.V == V)
      return true;
    int64_t most = 0, least = p.V;
    for (int64_t c = 0; c < K; ++c) {
      most = std::max(most, chunkRows(V, c));
      least = std::min(least, chunkRows(p.V, c));
    }
    return most <= least;
  });
}

/// Whether each row chunk of the graph `indptr` has at most the in-edges
/// `planned` says (the sizes of the plans' edge-chunked buffers; none: true).
bool edgeChunksWithin(const std::vector<int64_t> &planned,
                      const std::vector<int64_t> &indptr) {
  if (planned.empty())
    return true;
  if (indptr.empty())
    return false;
  const int64_t V = static_cast<int64_t>(indptr.size()) - 1;
  const int64_t K = static_cast<int64_t>(planned.size());
  for (int64_t c = 0; c < K; ++c)
    if (indptr[gnnrtChunkRowBound(V, K, c + 1)] -
            indptr[gnnrtChunkRowBound(V, K, c)] >
        planned[c])
      return false;
  return true;
}

} // namespace

int64_t TrainingMemory::trainingState() const {
  int64_t sum = graph;
  for (int64_t part : {edgeInputs, parameters, optimizer, activations})
    sum = add(sum, part);
  return sum;
}

int64_t TrainingMemory::peak() const {
  return std::max(features, add(trainingState(), staging));
}

int64_t TrainingMemory::devicePeak() const {
  return add(features, trainingState());
}

AvailableMemory deviceAvailableMemory(int64_t free, int64_t capacity,
                                      int64_t live) {
  AvailableMemory avail;
  if (free >= 0) {
    avail.bytes = free;
    avail.source = "the GPU's free memory";
  }
  if (capacity > 0) {
    const int64_t left = std::max<int64_t>(capacity - live, 0);
    if (!avail.known() || left <= avail.bytes) {
      avail.bytes = left;
      avail.source = "--mem-budget";
    }
  }
  return avail;
}

/// estimateTrainingMemory of model `m` on `ds`; `wholeEdges` and
/// `srcOffsets` are a context's (feature partitioning's whole graph, the
/// graph out of core's CSR offsets).
static bool estimateMemory(const ModelInfo &m, const Dataset &ds,
                           int64_t wholeEdges,
                           const std::vector<int64_t> &srcOffsets,
                           const OptimizerConfig &opt, TrainingMemory &need,
                           std::string &error, bool evaluation = false) {
  const int64_t V = ds.numVertices, E = ds.numEdges;
  need = TrainingMemory();
  // bindDataset: destinations, CSR edge ids and destinations (int32 per
  // edge), CSR offsets and a fill cursor (int64 per vertex), two float
  // degrees per vertex.
  // Of dst, csrEdge and csrDst only those the program reads.
  const int64_t perEdge = __builtin_popcount(m.graphArrays & 0xE);
  need.graph = add(mul(E, perEdge * 4), mul(V + 1, 2 * 8 + 2 * 4));
  // Out of core (GraphOnStorage.h) none of them: both sides' largest window
  // of the program's row chunks, or, when more, what building the CSR takes
  // at start-up (a block of each array, a read buffer and the block's fill
  // cursors).
  if (m.graphChunks > 0 && !ds.indptr.empty()) {
    const unsigned arrays = m.graphArrays;
    const std::array<int64_t, 2> most =
        GraphOnStorage::mostChunkEdges(ds.indptr, srcOffsets, m.graphChunks);
    const int64_t windows = GraphOnStorage::windowBytes(most, arrays);
    const int64_t build = GraphOnStorage::buildBytes(
        E, GraphOnStorage::buildBlockEdges(most), arrays);
    need.graph = add(mul(V + 1, 2 * 8 + 2 * 4), std::max(windows, build));
  }
  // Feature partitioning: the same arrays of the whole graph (every vertex,
  // every edge), which bindWholeGraph builds.
  if (wholeEdges >= 0)
    need.graph = add(need.graph, add(mul(wholeEdges, perEdge * 4),
                                     mul(sourcesOf(ds) + 1, 2 * 8 + 2 * 4)));
  // The features as loaded (feature partitioning: every vertex's columns of
  // this process), else the rows of the graph.
  // Out of core they are read by chunks, which the plan's peak counts.
  need.features = m.featureChunks > 0 ? 0
                  : ds.features.empty()
                      ? mul(mul(V, ds.numFeatures), 4)
                      : mul(static_cast<int64_t>(ds.features.size()), 4);
  for (const EdgeInputInfo &in : m.edgeInputs)
    need.edgeInputs = add(need.edgeInputs, mul(mul(E, in.width), 4));
  ModelInfo model = m;
  if (!resolveParamShapes(model, ds, error))
    return false;
  int64_t paramFloats = 0;
  for (const ParamInfo &p : model.params) {
    paramFloats = add(paramFloats, p.size());
    need.staging = std::max(need.staging, mul(p.size(), 4));
  }
  need.parameters = mul(paramFloats, 2 * 4);
  const int64_t states = opt.kind == OptimizerConfig::Adam ? 2
                         : opt.momentum != 0.0             ? 1
                                                           : 0;
  need.optimizer = mul(paramFloats, states * 4);
  // The runtime keeps each slot's largest buffer.
  std::map<int64_t, int64_t> slots;
  for (const BufferInfo &b :
       (evaluation && m.evalBuffersKnown) ? m.evalBuffers : m.buffers) {
    if (b.unknown) {
      need.unknownBuffers = true;
      continue;
    }
    int64_t floats = b.factor;
    for (const auto &[term, k] : b.terms)
      floats = mul(floats, term == BufferInfo::V   ? V
                           : term == BufferInfo::E ? E
                           : term == BufferInfo::F ? ds.numFeatures
                           : term == BufferInfo::C ? ds.numClasses
                           : term == BufferInfo::S ? sourcesOf(ds)
                           : term == BufferInfo::W
                               ? (wholeEdges >= 0 ? wholeEdges : E)
                               : (V + k - 1) / k);
    int64_t &slot = slots[b.slot];
    slot = std::max(slot, mul(floats, 4));
  }
  for (const auto &[slot, bytes] : slots)
    need.activations = add(need.activations, bytes);
  // Out of core, the features' chunks are the program's too (the plan's
  // peak counts them; a function that fits fetches them all).
  if (m.featureChunks > 0)
    need.activations = add(need.activations, mul(mul(V, ds.numFeatures), 4));
  // A part of the graph reads them by its rows' ids (SpillStore's
  // sourceRows, int64 per row), besides the int32 ids bindDataset keeps.
  if (m.featureChunks > 0 && !ds.vertexIds.empty())
    need.graph = add(need.graph, mul(V, 8 + 4));
  // Compiled under a budget: each function starts with nothing resident and
  // keeps at most its plan's peak, planned at the dataset's sizes (or a
  // larger graph's). On another dataset the plan still runs, but its peak
  // is not known here.
  const std::vector<PlacementInfo> &plans = m.placements;
  if (!plans.empty() &&
      plannedWithinSizes(plans, m.rowChunks, V, E, ds.numFeatures,
                         ds.numClasses) &&
      edgeChunksWithin(m.edgeChunks, ds.indptr)) {
    int64_t peak = 0;
    for (const PlacementInfo &p : plans)
      peak = std::max(peak, p.peak);
    need.activations = std::min(need.activations, peak);
    need.placed = true;
  }
  return true;
}

bool estimateTrainingMemory(const gnnrtContext *ctx, const OptimizerConfig &opt,
                            TrainingMemory &need, std::string &error) {
  return estimateMemory(ctx->model, ctx->ds, ctx->wholeEdges,
                        ctx->indicesFile.srcOffsets, opt, need, error);
}

bool estimateTrainingMemory(const ModelInfo &model, const Dataset &ds,
                            const OptimizerConfig &opt, TrainingMemory &need,
                            std::string &error) {
  return estimateMemory(model, ds, /*wholeEdges=*/-1, /*srcOffsets=*/{}, opt,
                        need, error);
}

bool estimateEvaluationMemory(const ModelInfo &model, const Dataset &ds,
                              const OptimizerConfig &opt, TrainingMemory &need,
                              std::string &error) {
  return estimateMemory(model, ds, /*wholeEdges=*/-1, /*srcOffsets=*/{}, opt,
                        need, error, /*evaluation=*/true);
}

bool checkTrainingMemory(const gnnrtContext *ctx, const OptimizerConfig &opt,
                         const AvailableMemory &avail, TrainingMemory &need,
                         std::string &error, bool onDevice) {
  if (!estimateTrainingMemory(ctx, opt, need, error))
    return false;
  const int64_t peak = onDevice ? need.devicePeak() : need.peak();
  if (!avail.known() || peak <= avail.bytes)
    return true;
  std::string parts;
  auto part = [&](const char *what, int64_t bytes) {
    if (bytes > 0)
      parts += (parts.empty() ? "" : ", ") + std::string(what) + " " +
               formatBytes(bytes);
  };
  part("activations", need.activations);
  part("parameters and gradients", need.parameters);
  part(opt.kind == OptimizerConfig::Adam ? "Adam's moments" : "SGD's momentum",
       need.optimizer);
  part("graph", need.graph);
  part("edge data", need.edgeInputs);
  // The staging is the host's; on a GPU the features' copy stays.
  part(onDevice ? "features" : "initialisation staging",
       onDevice ? need.features : need.staging);
  if (onDevice) {
    error = "training " + ctx->model.name + " on " + ctx->ds.name + " needs " +
            formatBytes(peak) + " of GPU memory (" + parts + ") but " +
            formatBytes(avail.bytes) + " is available (" + avail.source + ")";
    if (avail.source == "--mem-budget")
      error += "; raise --mem-budget";
    return false;
  }
  if (peak == need.features) // before the rest is allocated
    parts = "a copy of the features " + formatBytes(need.features);
  error = "training " + ctx->model.name + " on " + ctx->ds.name + " needs " +
          formatBytes(peak) + " of memory beyond the dataset (" + parts +
          ") but " + formatBytes(avail.bytes) + " is available (" +
          avail.source + ")";
  // Split over several processes (rowStarts: not a partitioned program
  // preloading or alone).
  const bool partitioned =
      ctx->model.partition != "none" && !ctx->rowStarts.empty();
  if (avail.source == "--mem-budget" && partitioned)
    error += "; raise --mem-budget or train on more processes (a "
             "partitioned program keeps each process's buffers resident; "
             "compiled with gnn-compile --mem-budget, each process can run "
             "the plan on its closure: --partition preload)";
  else if (avail.source == "--mem-budget" && need.placed)
    error += "; raise --mem-budget, or compile for a smaller one "
             "(gnn-compile --mem-budget)";
  else if (avail.source == "--mem-budget")
    error += "; raise --mem-budget, or compile the model for it "
             "(gnn-compile --mem-budget BYTES --dataset D places the "
             "buffers in it, evicting to --spill-dir)";
  else if (need.optimizer > 0 && peak - need.optimizer <= avail.bytes)
    error += "; --optimizer sgd --momentum 0 keeps no optimizer state and "
             "would fit";
  else
    error += "; a model with narrower layers, a smaller graph or a machine "
             "with more memory is needed";
  return false;
}

} // namespace gnnrt
