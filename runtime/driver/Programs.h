//===- Programs.h - the programs an executable holds, and the choice -*- C++
//-*-===//
//
// An executable of gnn-compile --partition auto holds up to four programs
// of one model (preloading, split by rows, split by rows with the rows
// several kernels read staged, split by features); under mpirun
// the driver (gnnrt_main.cpp) trains with one of them: the one --partition
// names, or --partition auto's choice by the bytes each moves and the
// memory each needs (docs/Distributed.md, "One executable for any number
// of processes").
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_DRIVER_PROGRAMS_H
#define GNNRT_DRIVER_PROGRAMS_H

#include "Distributed.h"

#include <string>
#include <vector>

namespace gnnrt {

/// A program the executable holds: its model description and functions.
struct Program {
  const char *info = nullptr;
  float (*train)(gnnrtContext *) = nullptr;
  float (*eval)(gnnrtContext *) = nullptr;
  ModelInfo model; // parsed from `info`
  /// Layer-wise evaluation's level l (gnn_eval_level; model.levels), where
  /// compiled.
  float (*evalLevel)(gnnrtContext *, int64_t) = nullptr;
  /// The rows program's form that stages the rows several kernels read
  /// (_rows_shared; chooseSharedRows).
  bool stagesSharedRows = false;
};

/// The programs the executable holds: the one compiled (gnnrt_model_info,
/// gnn_train_step, gnn_eval) first, then the row- and feature-partitioned
/// ones gnn-compile --partition auto puts next to it (their symbols
/// suffixed _rows and _features), then the rows one with shared rows
/// staged (_rows_shared: stagesSharedRows). Stops the run on a corrupt
/// description.
std::vector<Program> heldPrograms();

/// Mini-batch training's program: where the executable holds the step
/// gnn-compile compiled for sampled blocks in `program`'s partitioning
/// (docs/MiniBatch.md, "The aggregation order on blocks": unpartitioned,
/// _blocks, its aggregations before their linears; P³'s _blocks_features
/// and co-batches' _blocks_rows, layer 1's aggregations first), that
/// training step with `program`'s evaluation (the whole graph's; or
/// `evaluation`'s where given: co-batches of a rows program replicating
/// levels evaluate with the unpartitioned program), in `storage`; else
/// `program`.
const Program *miniBatchStep(const Program *program, Program &storage,
                             const Program *evaluation = nullptr);

/// Whether the executable holds co-batches' step on blocks (_blocks_rows:
/// the row-partitioned program replicating no level).
bool heldRowsBlocksStep();

/// The program of `programs` whose partition is `partition` ("none",
/// "rows" or "features"), or null.
const Program *findProgram(const std::vector<Program> &programs,
                           const std::string &partition);

/// The rows program's form with the rows several kernels read staged
/// (_rows_shared), where the executable holds it; else null.
const Program *stagedRowsForm(const std::vector<Program> &programs);

/// chooseSharedRows's choice.
struct SharedRowsChoice {
  const Program *program = nullptr;
  /// Why the staged form was taken (empty where it was not).
  std::string why;
  /// The all-reduces it voted with (partsFit's), and where it voted
  /// (`voted`), whether the part fits with the program taken and if not
  /// by how much it falls short.
  int votes = 0;
  bool voted = false, fits = false;
  std::string shortage;
};

/// Split by rows (`rows`, the program whose part ctx->ds holds, split at
/// `starts`): the form of it that trains, as --shared-rows says
/// (`request`: auto, gather or stage). Where the executable holds the
/// form that stages the rows several kernels read (gnn-compile --partition
/// auto's _rows_shared, docs/Distributed.md), "stage" takes it, and "auto"
/// only where a process's part does not fit its memory with those rows
/// all-gathered (partsFit: an all-reduce on every process, so that the
/// processes agree; a second for the staged form). Else `rows`.
SharedRowsChoice chooseSharedRows(gnnrtContext *ctx,
                                  const std::vector<Program> &programs,
                                  const Program *rows,
                                  const std::string &request,
                                  const OptimizerConfig &opt,
                                  const std::vector<int64_t> &starts);

/// The bytes a row- or feature-partitioned program's collectives and
/// gradient sum move per epoch (one training step and one evaluation) on a
/// graph of `numVertices` vertices, `numFeatures` features and `numClasses`
/// classes, per process up to the factor (N-1)/N: each row collective moves
/// the rows of every vertex once, the ring all-reduce every summed gradient
/// twice (feature shards are not summed). gnn-compile's --remarks print the
/// same prediction (predictedBytes).
double predictedEpochBytes(const ModelInfo &model, int64_t numVertices,
                           int64_t numFeatures, int64_t numClasses);

/// What a process holds beyond a row-partitioned one's when `model` reads
/// the whole graph (feature partitioning, or row partitioning's replicated
/// layers; 0 otherwise), at the dataset's sizes `counts` (V, E, F) over
/// `size` processes: the whole graph with the per-edge arrays the program
/// reads, as bindWholeGraph builds it, and every vertex's row of the
/// process's feature columns (all of them for replicated layers), less its
/// own rows' features, which it does not load.
/// What a process of a partitioned program holds, roughly (meta.json's
/// sizes `counts`, V, E, F, C, over `size` processes): of the dataset its
/// rows' in-edges, offsets, features, labels and masks (1/N of the graph)
/// and wholeGraphExtraBytes, and the training's peak beyond it
/// (estimateTrainingMemory at a part's sizes, `opt`'s state). Before any
/// part is loaded, so --partition auto can see that a part cannot fit
/// without loading it.
int64_t partBytes(const ModelInfo &model, const int64_t counts[4], int size,
                  const OptimizerConfig &opt);

int64_t wholeGraphExtraBytes(const ModelInfo &model, const int64_t counts[3],
                             int size);

/// Stops the run unless the executable holds a program for the mode
/// `partition` asks (the executable's --partition; empty: none asked).
void checkRequestedPartition(const std::vector<Program> &programs,
                             const std::string &partition);

/// `bytes` in megabytes, one decimal: "12.3 MB" (gnn-compile's --remarks
/// print the same unit).
std::string formatMB(double bytes);

/// --partition auto's partitioned programs for the dataset `data` on `size`
/// processes: each with the bytes it moves per epoch (predictedEpochBytes at
/// meta.json's sizes), rows first; features left out with --row-split roc
/// (`rowSplit`), which feature partitioning does not do.
struct SplitCandidates {
  struct Candidate {
    const Program *program;
    double bytes;
    /// wholeGraphExtraBytes of the program.
    int64_t extra = 0;
    /// partBytes of the program (-1: not asked for).
    int64_t part = -1;
  };
  std::vector<Candidate> candidates;
  /// "; per epoch each process moves (N-1)/N x: rows 1.2 MB, features ..."
  /// (empty unless asked for).
  std::string bytes;

  /// The program that moves the fewest bytes (rows on a tie) among those
  /// that fit: one that reads the whole graph only where its extra bytes
  /// fit what the tightest process has left (`vote`), and with
  /// `partsMustFit` only one whose predicted part (partBytes) fits it;
  /// `why` says what was left out. Null without a candidate.
  const Program *choose(const AutoVote &vote, std::string &why,
                        bool partsMustFit = false) const;
};
/// With `opt`, each candidate's partBytes too (the rows program's: the
/// smaller of its two forms where the executable holds the staged one and
/// `sharedRows`, --shared-rows, allows it).
SplitCandidates splitCandidates(const std::vector<Program> &programs,
                                const std::string &data,
                                const std::string &rowSplit, int size,
                                bool describe,
                                const OptimizerConfig *opt = nullptr,
                                const std::string &sharedRows = "auto");

} // namespace gnnrt

#endif // GNNRT_DRIVER_PROGRAMS_H
