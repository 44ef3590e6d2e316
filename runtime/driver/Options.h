//===- Options.h - the executable's command line ---------------*- C++ -*-===//
//
// The flags of every compiled model's executable (`--help` lists them), parsed
// strictly: a bad value stops the run with one line and exit code 2.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_DRIVER_OPTIONS_H
#define GNNRT_DRIVER_OPTIONS_H

#include "Device.h"
#include "SelectiveLoad.h"
#include "Spill.h"

#include <cstdint>
#include <memory>
#include <string>

namespace gnnrt {

struct Options {
  std::string data, json, saveParams, loadParams, predict, dump, spillDir;
  int64_t epochs = 200, evalEvery = 1, threads = 0, memBudget = 0;
  /// The gradients' sum over the processes goes out in buckets of this
  /// many bytes (PyTorch DDP's default cap, 25 MiB).
  int64_t bucketBytes = int64_t(25) << 20;
  /// Expansion-aware sampling of a rank's external vertices (-1: exact).
  int64_t preloadHops = -1, preloadFanout = -1;
  /// Row partitioning's split of the vertices: vertices, edges or roc.
  std::string rowSplit = "vertices";
  double repartitionGain = 0.1;
  bool rowSplitGiven = false; // --row-split or --repartition-gain
  std::string sharedRows = "auto"; // --shared-rows
  /// How a model compiled with --partition rows trains on several
  /// processes: rows (the default), preload or auto.
  std::string partition;
  /// Mini-batch training (MiniBatch.h): seeds per batch (0: full-graph)
  /// and the fanout of each hop.
  int64_t batchSize = 0;
  std::string fanouts, saveBatches;
  uint64_t seed = 0;
  double dropout = -1.0;
  bool quiet = false;
  bool pipeline = false; // --pipeline (MiniBatch.h)
  /// --structure: P³'s graph structure on every process (replicated) or
  /// partitioned by a hash of the vertex ids (hash; MiniBatch.h,
  /// useHashStructure).
  std::string structure = "replicated";
  /// --features-on-storage (MiniBatch.h, useFeaturesOnStorage).
  bool featuresOnStorage = false;
  /// --eval-batch-size: the vertices per evaluation batch with the
  /// features on storage (0: --batch-size's).
  int64_t evalBatchSize = 0;
  /// --layerwise-eval: auto (under --mem-budget where the whole graph's
  /// evaluation does not fit), always or never (MiniBatch.h,
  /// evaluateLayerwise).
  std::string layerwiseEval = "auto";
  OptimizerConfig opt;
  SelectiveLoader::Mode selective = SelectiveLoader::Mode::Auto;
  int64_t subChunks = 4;
  bool uncachedReads = false; // --uncached-reads (File.h)
  int64_t featureCopies = 1;  // --feature-copies (FeaturePull.h)
  /// --server-processes: the processes of one co-batch (MiniBatch.h,
  /// useCoBatches; 0: those of each machine).
  int64_t serverProcesses = 0;
};

/// Prints "error: <message> (see --help)" and exits with code 2.
[[noreturn]] void usageError(const std::string &message);

/// The flags of `argv` (`--help` prints the usage and exits).
Options parseArgs(int argc, char **argv);

/// The output paths, checked before any training: a run must not fail at
/// its end for a missing directory or a directory named as a file. The
/// spill directory's file is created here (the check is the real thing: a
/// file is created and written there) and returned.
std::unique_ptr<SpillStore> checkOutputs(const Options &o);

} // namespace gnnrt

#endif // GNNRT_DRIVER_OPTIONS_H
