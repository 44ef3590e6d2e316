//===- Distributed.h - the driver's part for several processes -*- C++ -*-===//
//
// What the driver (gnnrt_main.cpp) does when a model trains on several
// processes (docs/Distributed.md): the checks that they train the same
// model, the row split and ROC's online repartitioning, and gathering the
// ranks' rows, loss and accuracies.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_DRIVER_DISTRIBUTED_H
#define GNNRT_DRIVER_DISTRIBUTED_H

#include "Context.h"
#include "Preload.h"
#include "RowSplit.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace gnnrt {

/// Under an MPI launcher (mpirun, mpiexec: OMPI_COMM_WORLD_SIZE or PMI_SIZE
/// in the environment), this process's place in the world (the MPI
/// communicator); alone, the single-process one, and MPI is never touched.
/// Stops the run when launched as one of several processes without MPI
/// linked in.
void joinWorld(gnnrtContext *ctx);

/// Stops every rank when they do not run the same training: other programs,
/// a dataset of other sizes or other options (`training`: the model
/// descriptions of every program the executable holds, then the options
/// and sizes, as text) would make their collectives disagree (wrong sums,
/// or a rank waiting for ever).
/// One all-reduce of a fingerprint and its negation (the largest of both:
/// equal when every rank has the same).
void checkSameTraining(gnnrtContext *ctx, const std::string &training,
                       const FullGraph &full);

/// Stops the run unless the model can train on several processes: by shared
/// preloading (GraNNDis), or split by rows (MG-GCN) when compiled so. A
/// plan under a memory budget preloads (each process runs it on its part:
/// no part is larger than the graph it was planned for) unless it reads the
/// graph out of core.
void checkDistributable(const ModelInfo &m);

/// Whether every process's partitioned part (ctx->ds, the row split
/// `starts`) leaves the memory its training needs (checkTrainingMemory
/// against availableMemory(); one all-reduce of an int64). False with the
/// most any process falls short by in `shortage`.
bool partsFit(gnnrtContext *ctx, const OptimizerConfig &opt,
              const std::vector<int64_t> &starts, std::string &shortage);

/// Whether the model was compiled under a memory budget whose plan places
/// buffers (gnn-compile --mem-budget, --buffer-budget: evictions and drops)
/// or reads the features or the graph out of core.
bool plannedUnderBudget(const ModelInfo &m);

/// Row partitioning's split of the vertices over the processes and, with
/// --row-split roc, ROC's online cost model (RowSplit.h).
struct RowParts {
  std::vector<int64_t> starts;
  std::unique_ptr<RocPartitioner> roc;
  int64_t repartitions = 0;
};

/// Stops the run when there are more processes than the `numVertices`
/// vertices of the dataset `data`: each needs one.
void checkEnoughVertices(const std::string &data, int processes,
                         int64_t numVertices);

/// --partition auto's vote: one all-reduce of two int64 over the
/// processes, the most edges any holds (its closure's, when loaded) and the
/// least memory any may still allocate (availableMemory; unknown counts as
/// no limit), so that every process decides alike.
struct AutoVote {
  int64_t mostEdges = 0;
  int64_t leastAvailable = 0; // bytes; INT64_MAX when no process knows
};
AutoVote autoVote(gnnrtContext *ctx, int64_t edges);

/// --partition auto, with every rank's closure loaded: whether to preload.
/// Preloading recomputes a rank's closure and moves no activations; rows
/// compute a rank's share of the edges and move rows. Preload while no
/// closure holds more than 5/4 of a share (`mostEdges`, the vote's):
/// measured here (docs/benchmarks/distributed.md), preloading wins on the
/// grid (closures of 1.01 shares) and loses on the arxiv-shaped graph
/// (1.64). `report` says why (the largest closure's edges and a share).
bool closuresAreSmall(int64_t mostEdges, int size, const FullGraph &full,
                      std::string &report);

/// The rank's rows and all their in-edges of the dataset `data`, split as
/// `rowSplit` says (vertices, else edges: ROC starts from them), into
/// ctx->ds, `part` and `full`; rowParts.starts is the split.
void loadRowParts(gnnrtContext *ctx, const std::string &data,
                  const std::string &rowSplit, RowParts &rowParts,
                  PreloadPart &part, FullGraph &full, bool features = true);

/// Feature partitioning (P³): each of `size` processes' first feature
/// column of `total`, and `total` last (floor(r total / size)).
std::vector<int64_t> featureColumnStarts(int64_t total, int size);
/// The rank's rows and in-edges as loadRowParts loads them, and for feature
/// partitioning the whole graph (`whole`: every vertex, every edge) and the
/// rank's columns of every vertex's features (ctx->ds's features then; the
/// own rows' are dropped), ctx->featureBegin, featureTotal, wholeEdges set.
/// With `allColumns` (row partitioning's replicated levels) the whole
/// graph and every column of every vertex (or, when only later levels are
/// replicated, the own rows' features), and featureBegin and featureTotal
/// stay unset.
void loadFeatureParts(gnnrtContext *ctx, const std::string &data,
                      const std::string &rowSplit, RowParts &rowParts,
                      PreloadPart &part, FullGraph &full, Dataset &whole,
                      bool allColumns = false);
/// The start-up line of a rank of several: what it owns and holds under
/// feature partitioning, row partitioning (`rows`) or shared preloading
/// (sampled when `preloadHops` or `preloadFanout` is set).
void printPartitionLine(const gnnrtContext *ctx, const PreloadPart &part,
                        bool rows, int64_t preloadHops, int64_t preloadFanout);
/// Parameter `i` of `ctx` (its gradient with `grads`) in its whole shape
/// (`shape`), on the host: a feature shard's rows gathered from every
/// process (every rank calls it), any other parameter as it is.
std::vector<float> wholeParam(gnnrtContext *ctx, size_t i, bool grads,
                              std::vector<int64_t> &shape);
/// The width of a row collective's rows, for the dataset `ds`.
int64_t collectiveWidth(const ModelInfo::RowCollective &c, const Dataset &ds);

/// What a row-partitioned program's collectives move by the formula
/// (docs/Distributed.md) after `trainCalls` training steps and `evalCalls`
/// evaluations, from its collective records: calls and bytes of the
/// all-gathers, broadcasts and reduce-scatters (in that order). An
/// all-gather sends the own rows, a staged SpMM broadcasts every part's
/// rows, a reduce-scatter (staged: one reduce per part) sends partials of
/// every one of the `numVertices` vertices. The records are `model`'s
/// (ctx->model's when null).
void rowCollectiveFormula(const gnnrtContext *ctx, int64_t trainCalls,
                          int64_t evalCalls, int64_t numVertices,
                          int64_t calls[3], int64_t bytes[3],
                          const ModelInfo *model = nullptr);
/// The --json summary's text of rowCollectiveFormula (the "formula" member
/// of "communication", after a comma) and of rank 0's part ("partition").
std::string rowFormulaJson(const gnnrtContext *ctx, int64_t trainCalls,
                           int64_t evalCalls, int64_t numVertices,
                           const ModelInfo *model = nullptr);
std::string rowPartitionJson(const gnnrtContext *ctx, const RowParts &rowParts,
                             const PreloadPart &part, const FullGraph &full,
                             const std::string &rowSplit);
/// Shared preloading's "partition" object of the --json summary: rank 0's
/// part, with --preload-hops `maxHop` and --preload-fanout `fanout`.
std::string preloadPartitionJson(const gnnrtContext *ctx,
                                 const PreloadPart &part, int64_t maxHop,
                                 int64_t fanout);

/// ROC's per-vertex features over the whole graph: each process computes
/// its own vertices' from their in-edges (before bindDataset takes them),
/// then one all-gather. d_in is the widest rows the program moves.
std::unique_ptr<RocPartitioner> buildRoc(gnnrtContext *ctx,
                                         const std::vector<int64_t> &starts);

/// ROC after an epoch (--row-split roc): the parts' measured times (the
/// step's own work, `compute` seconds here) refit the cost model, and a
/// split it predicts faster by more than `gain` is loaded from `data` and
/// bound before the next epoch (every rank decides alike from the same
/// numbers). Rank 0 prints the repartition unless `epoch` < 0. True when
/// it repartitioned.
bool rocStep(gnnrtContext *ctx, RowParts &rowParts, PreloadPart &part,
             const std::string &data, double gain, double compute,
             int64_t epoch);

/// The seconds this rank spent in collectives so far, waits for
/// non-blocking ones included.
double collectiveSeconds(const gnnrtContext *ctx);

/// The accuracy of each split over all ranks (one all-reduce of the counts
/// when there are several).
void splitAccuracies(gnnrtContext *ctx, double acc[3]);

/// The loss over all ranks: each returns its vertices' share of the mean.
float worldLoss(gnnrtContext *ctx, float loss);

/// Co-batches per server (GraNNDis §4.4, docs/MiniBatch.md): the ranks
/// [first, first + count) of this process's server, `requested`
/// consecutive ranks (0: those of its machine, which must be consecutive
/// ranks). Sets ctx->rowComm to the server's processes where they are not
/// all of them. Stops every rank with the reason where `requested` does not
/// divide the processes or a machine's are not consecutive.
struct Server {
  int first = 0, count = 1;
};
Server groupServers(gnnrtContext *ctx, int64_t requested);

/// Every rank's rows of its own vertices (rank r's are [p(r), p(r+1)) of
/// the full graph, `width` values each, p the ranges of the split: equal
/// ones when preloading, the row split's otherwise; `local` holds the
/// rank's part) in global order, on every rank: one all-gather of blocks
/// padded to the largest range.
template <typename T>
std::vector<T> gatherOwnRows(gnnrtContext *ctx, const PreloadPart &part,
                             int64_t V, const T *local, int64_t width) {
  const int size = ctx->comm->size();
  const std::vector<int64_t> p =
      ctx->rowStarts.empty() ? equalVertexSplit(V, size) : ctx->rowStarts;
  int64_t most = 0;
  for (int r = 0; r < size; ++r)
    most = std::max(most, p[r + 1] - p[r]);
  const int64_t block = most * width;
  const int64_t first =
      std::lower_bound(part.globalIds.begin(), part.globalIds.end(),
                       part.inner.begin) -
      part.globalIds.begin();
  const int64_t own = part.inner.end - part.inner.begin;
  if (own != p[ctx->comm->rank() + 1] - p[ctx->comm->rank()])
    fatal("gathering the rows: this rank holds " + std::to_string(own) +
          " of its own vertices but its range has " +
          std::to_string(p[ctx->comm->rank() + 1] - p[ctx->comm->rank()]));
  std::vector<T> send(block), all(block * size);
  std::copy(local + first * width, local + (first + own) * width, send.begin());
  ctx->comm->allGather(send.data(), all.data(), block);
  std::vector<T> rows(V * width);
  for (int r = 0; r < size; ++r)
    std::copy(all.begin() + r * block,
              all.begin() + r * block + (p[r + 1] - p[r]) * width,
              rows.begin() + p[r] * width);
  return rows;
}

} // namespace gnnrt

#endif // GNNRT_DRIVER_DISTRIBUTED_H
