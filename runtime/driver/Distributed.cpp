//===- Distributed.cpp - the driver's part for several processes ----------===//

#include "Distributed.h"
#include "Memory.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

using namespace gnnrt;

/// The MPI communicator (runtime/lib/Comm/MPI.cpp), linked in where gnnc was
/// built with MPI.
extern "C" __attribute__((weak)) gnnrt::Communicator *
gnnrtCreateMPICommunicator();

/// The number of processes an MPI launcher started (mpirun, mpiexec: their
/// environment), 0 when the program was started alone.
static int64_t launcherWorldSize() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char *value = std::getenv(name);
    if (!value || !*value)
      continue;
    char *end = nullptr;
    errno = 0;
    const long long n = std::strtoll(value, &end, 10);
    if (!errno && !*end && n > 0)
      return n;
  }
  return 0;
}

void gnnrt::joinWorld(gnnrtContext *ctx) {
  const int64_t launched = launcherWorldSize();
  if (launched == 0)
    return;
  if (!gnnrtCreateMPICommunicator) {
    if (launched > 1)
      fatal("started by an MPI launcher as one of " + std::to_string(launched) +
            " processes, but this executable was linked without MPI (gnnc "
            "was built where CMake found none): each process would train "
            "alone");
    return;
  }
  ctx->comm.reset(gnnrtCreateMPICommunicator());
}

void gnnrt::checkSameTraining(gnnrtContext *ctx, const std::string &training,
                              const FullGraph &full) {
  const uint64_t h = hashText(training);
  const auto mine = static_cast<int64_t>(h >> 1);
  int64_t seen[2] = {mine, -mine};
  ctx->comm->allReduce(seen, seen, 2, ReduceOp::Max);
  if (seen[0] != -seen[1])
    fatal("the processes do not all run the same training: the model, the "
          "dataset's sizes or the training options differ between ranks "
          "(this one: model " +
          ctx->model.name + ", " + std::to_string(full.numVertices) +
          " vertices, " + std::to_string(full.numEdges) + " edges)");
}

void gnnrt::checkDistributable(const ModelInfo &m) {
  if (m.target == "cuda")
    fatal("the model was compiled for CUDA, which trains in one process for "
          "now (NCCL: docs/CUDA.md)");
  if (m.partition == "rows" || m.partition == "features")
    return; // the compiler refused what they cannot split, budgets included
  if (m.hops == -2)
    fatal("the model description has no hops record (compiled by an older "
          "gnnc): compile it again to train on several processes");
  if (m.hops == -1)
    fatal("the model cannot be trained on several processes by shared "
          "preloading: its forward has '" +
          m.globalOp + "', which reduces over all vertices");
  if (m.graphChunks > 0)
    fatal("the model was compiled under a memory budget (gnn-compile "
          "--mem-budget) with its graph out of core, read by windows of the "
          "whole graph's indices.npy, which a process's part of the graph "
          "is not; several processes need a model compiled with "
          "--graph-out-of-core=false, or with --partition auto (the "
          "default) and a partitioned program whose part fits each process");
}

bool gnnrt::plannedUnderBudget(const ModelInfo &m) {
  return m.featureChunks > 0 || m.graphChunks > 0 ||
         std::any_of(m.placements.begin(), m.placements.end(),
                     [](const PlacementInfo &p) { return p.planned; });
}

std::unique_ptr<RocPartitioner>
gnnrt::buildRoc(gnnrtContext *ctx, const std::vector<int64_t> &starts) {
  const Dataset &ds = ctx->ds;
  int64_t width = 1;
  for (const ModelInfo::RowCollective &c : ctx->model.rowCollectives)
    width = std::max(width, collectiveWidth(c, ds));
  const int size = ctx->comm->size();
  std::vector<float> own(kRocFeatures * ds.numVertices);
  for (int64_t v = 0; v < ds.numVertices; ++v) {
    const RocFeatures x =
        rocFeatures(ds.indices.data() + ds.indptr[v],
                    ds.indptr[v + 1] - ds.indptr[v], width, /*lineFloats=*/16);
    for (int i = 0; i < kRocFeatures; ++i)
      own[kRocFeatures * v + i] = static_cast<float>(x[i]);
  }
  std::vector<int64_t> counts(size), displs(size);
  for (int r = 0; r < size; ++r) {
    displs[r] = starts[r];
    counts[r] = starts[r + 1] - starts[r];
  }
  const int64_t V = starts[size];
  std::vector<float> all(kRocFeatures * V);
  ctx->comm->allGatherV(own.data(), ds.numVertices, all.data(), counts.data(),
                        displs.data(), kRocFeatures);
  std::vector<RocFeatures> perVertex(V);
  for (int64_t v = 0; v < V; ++v)
    for (int i = 0; i < kRocFeatures; ++i)
      perVertex[v][i] = all[kRocFeatures * v + i];
  return std::make_unique<RocPartitioner>(perVertex);
}

double gnnrt::collectiveSeconds(const gnnrtContext *ctx) {
  double s = ctx->comm->waitSeconds();
  for (int c = 0; c < kNumCollectives; ++c)
    s += ctx->comm->counted(static_cast<Collective>(c)).seconds;
  return s;
}

void gnnrt::splitAccuracies(gnnrtContext *ctx, double acc[3]) {
  int64_t counts[6];
  for (int s = 0; s < 3; ++s)
    accuracyCounts(ctx, s, counts[2 * s], counts[2 * s + 1]);
  if (ctx->comm->size() > 1)
    ctx->comm->allReduce(counts, counts, 6, ReduceOp::Sum);
  for (int s = 0; s < 3; ++s)
    acc[s] = counts[2 * s + 1] ? static_cast<double>(counts[2 * s]) /
                                     static_cast<double>(counts[2 * s + 1])
                               : 0.0;
}

float gnnrt::worldLoss(gnnrtContext *ctx, float loss) {
  if (ctx->comm->size() > 1)
    ctx->comm->allReduce(&loss, &loss, 1, ReduceOp::Sum);
  return loss;
}

bool gnnrt::partsFit(gnnrtContext *ctx, const OptimizerConfig &opt,
                     const std::vector<int64_t> &starts,
                     std::string &shortage) {
  std::vector<int64_t> saved = std::exchange(ctx->rowStarts, starts);
  TrainingMemory need;
  std::string error;
  const bool estimated = estimateTrainingMemory(ctx, opt, need, error);
  ctx->rowStarts = std::move(saved);
  if (!estimated) // the same on every process: the part is not trainable
    fatal(error);
  // The most any process falls short by.
  const AvailableMemory avail = availableMemory();
  int64_t most =
      avail.known() ? std::max<int64_t>(0, need.peak() - avail.bytes) : 0;
  ctx->comm->allReduce(&most, &most, 1, ReduceOp::Max);
  if (most > 0)
    shortage = "a process's part needs up to " + formatBytes(most) +
               " more than it has left";
  return most == 0;
}

Server gnnrt::groupServers(gnnrtContext *ctx, int64_t requested) {
  const int size = ctx->comm->size(), rank = ctx->comm->rank();
  Server server;
  if (requested == 0) {
    if (!ctx->comm->machineRanks(server.first, server.count))
      fatal("co-batches: the processes on this machine are not consecutive "
            "ranks; give --server-processes (or start them so: mpirun's "
            "--map-by slot)");
  } else {
    if (requested > size || size % requested != 0)
      fatal("--server-processes " + std::to_string(requested) +
            ": the processes of a co-batch must divide the " +
            std::to_string(size) + " processes");
    server.count = static_cast<int>(requested);
    server.first = rank / server.count * server.count;
  }
  if (server.count < size) {
    ctx->rowGroup = server.first;
    ctx->rowComm = ctx->comm->split(server.first, rank);
  }
  return server;
}

bool gnnrt::rocStep(gnnrtContext *ctx, RowParts &rowParts, PreloadPart &part,
                    const std::string &data, double gain, double compute,
                    int64_t epoch) {
  const int worldSize = ctx->comm->size(), rank = ctx->comm->rank();
  int64_t ns = static_cast<int64_t>(std::max(compute, 0.0) * 1e9);
  std::vector<int64_t> times(worldSize);
  ctx->comm->allGather(&ns, times.data(), 1);
  RocPartitioner &roc = *rowParts.roc;
  const std::vector<int64_t> &starts = rowParts.starts;
  for (int q = 0; q < worldSize; ++q)
    roc.observe(starts[q], starts[q + 1], static_cast<double>(times[q]) * 1e-9);
  if (!roc.fit())
    return false;
  std::vector<int64_t> next = roc.split(worldSize);
  const double now = roc.predictedMax(starts), then = roc.predictedMax(next);
  if (next == starts || now <= 0 || (now - then) / now <= gain)
    return false;
  Dataset fresh;
  PreloadPart freshPart;
  FullGraph same;
  std::string error;
  if (!loadRowPart(data, {next[rank], next[rank + 1]}, fresh, freshPart, same,
                   error))
    fatal(data + "/" + error);
  ctx->ds = std::move(fresh);
  part = std::move(freshPart);
  ctx->fullDegree[0] = std::move(part.inDegree);
  ctx->fullDegree[1] = std::move(part.outDegree);
  if (!bindDataset(ctx, error))
    fatal(data + ": " + error);
  ctx->rowStarts = next;
  rowParts.starts = std::move(next);
  ++rowParts.repartitions;
  if (epoch >= 0 && rank == 0)
    std::printf("gnnc: epoch %lld: repartitioned by ROC's cost model "
                "(slowest part predicted %.2f -> %.2f ms): rank 0 owns "
                "[0, %lld)\n",
                static_cast<long long>(epoch), 1e3 * now, 1e3 * then,
                static_cast<long long>(rowParts.starts[1]));
  return true;
}

void gnnrt::loadRowParts(gnnrtContext *ctx, const std::string &data,
                         const std::string &rowSplit, RowParts &rowParts,
                         PreloadPart &part, FullGraph &full, bool features) {
  const int worldSize = ctx->comm->size(), rank = ctx->comm->rank();
  std::string error;
  std::vector<int64_t> indptr;
  if (!readGraphOffsets(data, indptr, error))
    fatal(data + "/" + error);
  const int64_t V = static_cast<int64_t>(indptr.size()) - 1;
  checkEnoughVertices(data, worldSize, V);
  rowParts.starts = rowSplit == "vertices" ? equalVertexSplit(V, worldSize)
                                           : equalEdgeSplit(indptr, worldSize);
  std::vector<int64_t>().swap(indptr);
  if (!loadRowPart(data, {rowParts.starts[rank], rowParts.starts[rank + 1]},
                   ctx->ds, part, full, error, features))
    fatal(data + "/" + error);
}

int64_t gnnrt::collectiveWidth(const ModelInfo::RowCollective &c,
                               const Dataset &ds) {
  int64_t width = c.factor;
  for (BufferInfo::Term t : c.terms)
    width *= t == BufferInfo::F ? ds.numFeatures : ds.numClasses;
  return width;
}

void gnnrt::rowCollectiveFormula(const gnnrtContext *ctx, int64_t trainCalls,
                                 int64_t evalCalls, int64_t numVertices,
                                 int64_t calls[3], int64_t bytes[3],
                                 const ModelInfo *model) {
  std::fill(calls, calls + 3, 0);
  std::fill(bytes, bytes + 3, 0);
  for (const ModelInfo::RowCollective &c :
       (model ? *model : ctx->model).rowCollectives) {
    const int64_t times = c.function == "train" ? trainCalls : evalCalls;
    const int k = c.kind == "allgather" ? 0 : c.kind == "broadcast" ? 1 : 2;
    const int64_t rowsSent = k == 0 ? ctx->ds.numVertices : numVertices;
    const bool staged = c.kind == "broadcast" || c.kind == "reduce";
    calls[k] += times * (staged ? ctx->comm->size() : 1);
    bytes[k] += times * 4 * rowsSent * collectiveWidth(c, ctx->ds);
  }
}

std::string gnnrt::rowFormulaJson(const gnnrtContext *ctx, int64_t trainCalls,
                                  int64_t evalCalls, int64_t numVertices,
                                  const ModelInfo *model) {
  const char *kinds[] = {"allgather", "broadcast", "reduce_scatter"};
  int64_t calls[3], bytes[3];
  rowCollectiveFormula(ctx, trainCalls, evalCalls, numVertices, calls, bytes,
                       model);
  std::string text = ",\n                    \"formula\": {";
  for (int k = 0; k < 3; ++k)
    text += std::string(k ? ", " : "") + "\"" + kinds[k] +
            "\": {\"calls\": " + std::to_string(calls[k]) +
            ", \"bytes\": " + std::to_string(bytes[k]) + "}";
  return text + "}";
}

std::string gnnrt::preloadPartitionJson(const gnnrtContext *ctx,
                                        const PreloadPart &part, int64_t maxHop,
                                        int64_t fanout) {
  char text[320];
  std::snprintf(text, sizeof text,
                "  \"partition\": {\"mode\": \"preload\", \"hops\": %lld, "
                "\"max_hop\": %lld, \"fanout\": %lld, "
                "\"inner_begin\": %lld, \"inner_end\": %lld, "
                "\"held_vertices\": %lld, \"held_edges\": %lld},\n",
                static_cast<long long>(part.hops),
                static_cast<long long>(maxHop), static_cast<long long>(fanout),
                static_cast<long long>(part.inner.begin),
                static_cast<long long>(part.inner.end),
                static_cast<long long>(ctx->ds.numVertices),
                static_cast<long long>(ctx->ds.numEdges));
  return text;
}

std::string gnnrt::rowPartitionJson(const gnnrtContext *ctx,
                                    const RowParts &rowParts,
                                    const PreloadPart &part,
                                    const FullGraph &full,
                                    const std::string &rowSplit) {
  std::string starts;
  for (int64_t p : rowParts.starts)
    starts += (starts.empty() ? "" : ", ") + std::to_string(p);
  std::string features;
  int64_t shardFloats = 0; // this rank's, which the gradient sum leaves out
  for (size_t i = 0; i < ctx->params.size(); ++i)
    if (isFeatureShard(ctx, ctx->model.params[i]))
      shardFloats += ctx->params[i]->size;
  if (ctx->featureTotal >= 0)
    features = ", \"shard_floats\": " + std::to_string(shardFloats) +
               ", \"feature_begin\": " + std::to_string(ctx->featureBegin) +
               ", \"feature_end\": " +
               std::to_string(ctx->featureBegin + ctx->ds.numFeatures) +
               ", \"features\": " + std::to_string(ctx->featureTotal) +
               ", \"whole_edges\": " + std::to_string(ctx->wholeEdges);
  else if (ctx->model.replicated)
    features = ", \"replicated\": true, \"whole_edges\": " +
               std::to_string(ctx->wholeEdges);
  return "  \"partition\": {\"mode\": \"" +
         std::string(ctx->featureTotal >= 0 ? "features" : "rows") +
         "\", \"inner_begin\": " + std::to_string(part.inner.begin) +
         ", \"inner_end\": " + std::to_string(part.inner.end) +
         ", \"held_vertices\": " + std::to_string(ctx->ds.numVertices) +
         ", \"held_edges\": " + std::to_string(ctx->ds.numEdges) +
         ", \"sources\": " + std::to_string(full.numVertices) +
         ", \"split\": \"" + rowSplit + "\", \"starts\": [" + starts +
         "], \"repartitions\": " + std::to_string(rowParts.repartitions) +
         features + "},\n";
}

void gnnrt::checkEnoughVertices(const std::string &data, int processes,
                                int64_t numVertices) {
  if (processes > numVertices)
    fatal(data + ": " + std::to_string(processes) + " processes but only " +
          std::to_string(numVertices) +
          (numVertices == 1 ? " vertex" : " vertices") +
          ": each process needs at least one");
}

AutoVote gnnrt::autoVote(gnnrtContext *ctx, int64_t edges) {
  const AvailableMemory available = availableMemory();
  int64_t vote[2] = {edges, available.known()
                                ? -available.bytes
                                : -std::numeric_limits<int64_t>::max()};
  ctx->comm->allReduce(vote, vote, 2, ReduceOp::Max);
  return {vote[0], -vote[1]};
}

bool gnnrt::closuresAreSmall(int64_t mostEdges, int size, const FullGraph &full,
                             std::string &report) {
  const int64_t share = (full.numEdges + size - 1) / size;
  report = "the largest closure holds " + std::to_string(mostEdges) +
           " edges, a share is " + std::to_string(share);
  return 4 * mostEdges <= 5 * share;
}

std::vector<int64_t> gnnrt::featureColumnStarts(int64_t total, int size) {
  std::vector<int64_t> starts(size + 1);
  for (int r = 0; r <= size; ++r)
    starts[r] = total * r / size;
  return starts;
}

void gnnrt::loadFeatureParts(gnnrtContext *ctx, const std::string &data,
                             const std::string &rowSplit, RowParts &rowParts,
                             PreloadPart &part, FullGraph &full, Dataset &whole,
                             bool allColumns) {
  const int worldSize = ctx->comm->size(), rank = ctx->comm->rank();
  // The own rows' features: nothing reads them, unless the program splits
  // the levels that read them and replicates later ones.
  const bool ownFeatures = allColumns && !ctx->model.replicatedFeatures;
  loadRowParts(ctx, data, rowSplit, rowParts, part, full, ownFeatures);
  std::string error;
  if (!loadGraph(data, whole, error))
    fatal(data + "/" + error);
  const int64_t total = ctx->ds.numFeatures;
  if (ownFeatures) {
    ctx->wholeEdges = whole.numEdges;
    return;
  }
  if (allColumns) {
    std::vector<float> all;
    int64_t read = 0;
    if (!loadFeatureColumns(data, whole.numVertices, 0, total, all, read,
                            error))
      fatal(data + "/" + error);
    ctx->ds.features = std::move(all);
    ctx->wholeEdges = whole.numEdges;
    return;
  }
  if (total < worldSize)
    fatal(data + "/features.npy: " + std::to_string(total) +
          " feature columns for " + std::to_string(worldSize) +
          " processes: feature partitioning needs one column each at least");
  const std::vector<int64_t> starts = featureColumnStarts(total, worldSize);
  std::vector<float> columns;
  int64_t read = 0;
  if (!loadFeatureColumns(data, whole.numVertices, starts[rank],
                          starts[rank + 1], columns, read, error))
    fatal(data + "/" + error);
  ctx->ds.features = std::move(columns);
  ctx->ds.numFeatures = starts[rank + 1] - starts[rank];
  ctx->featureBegin = starts[rank];
  ctx->featureTotal = total;
  ctx->wholeEdges = whole.numEdges;
}

std::vector<float> gnnrt::wholeParam(gnnrtContext *ctx, size_t i, bool grads,
                                     std::vector<int64_t> &shape) {
  const ParamInfo &p = ctx->model.params[i];
  const Buffer &b = grads ? *ctx->grads[i] : *ctx->params[i];
  std::vector<char> staging;
  const auto *data = static_cast<const float *>(ctx->device->hostView(
      b.data, b.size * static_cast<int64_t>(sizeof(float)), staging));
  shape = p.shape;
  if (!isFeatureShard(ctx, p))
    return std::vector<float>(data, data + b.size);
  const int size = ctx->comm->size();
  const int64_t rowSize = b.size / std::max<int64_t>(p.shape[0], 1);
  const std::vector<int64_t> starts =
      featureColumnStarts(ctx->featureTotal, size);
  std::vector<int64_t> counts(size), displs(size);
  for (int r = 0; r < size; ++r) {
    counts[r] = starts[r + 1] - starts[r];
    displs[r] = starts[r];
  }
  shape[0] = ctx->featureTotal;
  std::vector<float> all(ctx->featureTotal * rowSize);
  ctx->comm->allGatherVUncounted(data, p.shape[0], all.data(), counts.data(),
                                 displs.data(), rowSize);
  return all;
}

void gnnrt::printPartitionLine(const gnnrtContext *ctx, const PreloadPart &part,
                               bool rows, int64_t preloadHops,
                               int64_t preloadFanout) {
  if (ctx->featureTotal >= 0) {
    std::printf("gnnc: %d processes (%s), feature partitioning (P3): rank "
                "0 holds feature columns [0, %lld) of %lld for every "
                "vertex and the whole graph in layer 1, then owns vertices "
                "[%lld, %lld) and their %lld in-edges\n",
                ctx->comm->size(), ctx->comm->name(),
                static_cast<long long>(ctx->ds.numFeatures),
                static_cast<long long>(ctx->featureTotal),
                static_cast<long long>(part.inner.begin),
                static_cast<long long>(part.inner.end),
                static_cast<long long>(ctx->ds.numEdges));
  } else if (rows) {
    std::printf("gnnc: %d processes (%s), row partitioning (MG-GCN): rank "
                "0 owns vertices [%lld, %lld) and their %lld in-edges%s\n",
                ctx->comm->size(), ctx->comm->name(),
                static_cast<long long>(part.inner.begin),
                static_cast<long long>(part.inner.end),
                static_cast<long long>(ctx->ds.numEdges),
                !ctx->model.replicated ? ""
                : ctx->model.replicatedFeatures
                    ? "; every vertex's features and the whole graph for the "
                      "layers replicated"
                    : "; the whole graph for the layers replicated");
  } else {
    std::string how =
        "exact closure of the model's " + std::to_string(part.hops) + " hops";
    if (preloadHops >= 0 || preloadFanout >= 0)
      how = "sampled: " +
            std::to_string(preloadHops >= 0 ? std::min(preloadHops, part.hops)
                                            : part.hops) +
            " hops, fanout " +
            (preloadFanout >= 0 ? std::to_string(preloadFanout)
                                : std::string("all"));
    std::printf("gnnc: %d processes (%s), shared preloading (%s): rank 0 "
                "owns vertices [%lld, %lld) and holds %lld vertices, %lld "
                "edges\n",
                ctx->comm->size(), ctx->comm->name(), how.c_str(),
                static_cast<long long>(part.inner.begin),
                static_cast<long long>(part.inner.end),
                static_cast<long long>(ctx->ds.numVertices),
                static_cast<long long>(ctx->ds.numEdges));
  }
}
