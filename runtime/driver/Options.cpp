//===- Options.cpp - the executable's command line ------------------------===//

#include "Options.h"
#include "File.h"
#include "Memory.h"
#include "Threads.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <vector>

namespace gnnrt {

static const char *kUsage =
    "usage: %s [options]\n"
    "Trains the compiled model full-graph on a dataset (DESIGN.md's "
    "format).\n\n"
    "  --data DIR           dataset directory (default: the shipped polblogs)\n"
    "  --epochs N           training epochs, 0 to 10^9 (default 200)\n"
    "  --lr X               learning rate, in (0, 1e6] (default 0.01)\n"
    "  --optimizer adam|sgd optimizer (default adam, torch.optim semantics)\n"
    "  --momentum X         SGD momentum, in [0, 1] (default 0.9)\n"
    "  --weight-decay X     L2 weight decay added to the gradient, in [0, "
    "1e6]\n"
    "                       (default 0)\n"
    "  --dropout X          dropout rate for every dropout op (default: the "
    "model's)\n"
    "  --seed N             seed of the initialisation and dropout, 0 to "
    "2^63-1\n                       (default 0)\n"
    "  --threads N          OpenMP threads, 1 to 4096, capped at the "
    "processors\n                       (default: OMP_NUM_THREADS, same "
    "range, or all)\n"
    "  --eval-every N       evaluate every N epochs, 1 to 10^9 (default 1)\n"
    "  --mem-budget BYTES   resident memory the run may use (suffix K, M, G "
    "or T);\n"
    "                       a run that needs more stops before allocating it\n"
    "                       (a model compiled for CUDA: the GPU memory);\n"
    "                       with --batch-size a batch too large trains in\n"
    "                       parts and an evaluation too large for the whole\n"
    "                       graph runs in batches\n"
    "  --spill-dir DIR      existing directory for the spill file of slot\n"
    "                       buffers moved out of memory (the slow tier); the\n"
    "                       file is deleted at creation, so nothing is left\n"
    "                       there (default: none; a model compiled with\n"
    "                       gnn-compile --mem-budget then uses $TMPDIR, else\n"
    "                       /tmp)\n"
    "  --selective-loads M  a tile's input chunk out of memory is read\n"
    "                       whole or only at the rows its edges reach:\n"
    "                       'auto' by NeuGraph's rule on throughputs\n"
    "                       measured once (default), 'always' or 'never'\n"
    "  --sub-chunks K       a tile's input chunk out of memory is read in K\n"
    "                       parts, each while the tile computes on the ones\n"
    "                       before, 1 to 1024 (default 4; 1: no pipeline)\n"
    "  --uncached-reads     what is read of the dataset and the spill file\n"
    "                       leaves the page cache by the next epoch (spill\n"
    "                       writes go through): storage larger than memory\n"
    "  --preload-hops M     under mpirun: each process holds the vertices\n"
    "                       within M hops of its own (default: the model's\n"
    "                       hops, the exact closure; fewer approximate)\n"
    "  --preload-fanout K   under mpirun: each vertex the closure expands\n"
    "                       takes at most K neighbours of other processes,\n"
    "                       drawn once from --seed (default: all). Either\n"
    "                       makes --partition auto preload. With\n"
    "                       --batch-size both sample a batch instead of\n"
    "                       --fanouts: M hops, K in-neighbours outside the\n"
    "                       batch's seeds (expansion-aware sampling)\n"
    "  --partition MODE     under mpirun: 'preload' (each process holds its\n"
    "                       vertices' closure), 'rows' (MG-GCN), 'features'\n"
    "                       (P3: layer 1 on each process's feature columns,\n"
    "                       the rest by rows) or 'auto': preload when no\n"
    "                       process's closure holds more than 5/4 of its\n"
    "                       share of the edges, else rows or features,\n"
    "                       whichever moves fewer bytes per epoch (where\n"
    "                       the preload program was planned under\n"
    "                       gnn-compile --mem-budget: rows or features\n"
    "                       where each process's part fits resident, else\n"
    "                       each runs the plan on its closure).\n"
    "                       Default: auto for gnn-compile's default\n"
    "                       (--partition auto: the executable holds every\n"
    "                       program the model accepts), else the mode\n"
    "                       compiled (compiled with --partition rows, it can\n"
    "                       preload too)\n"
    "  --bucket-bytes B     under mpirun: the gradients' sum goes out in\n"
    "                       buckets of B bytes (K, M, G suffixes), each\n"
    "                       issued as soon as its gradients are final, while\n"
    "                       the backward goes on (default 25M, PyTorch DDP's)\n"
    "  --row-split HOW      under mpirun, a model compiled with gnn-compile\n"
    "                       --partition rows: each process's contiguous\n"
    "                       range of vertices has equal 'vertices' (the\n"
    "                       default), equal in-'edges', or equal times by\n"
    "                       'roc', ROC's cost model learnt from the measured\n"
    "                       step times (starting from edges; repartitions\n"
    "                       between epochs)\n"
    "  --repartition-gain G with --row-split roc: repartition when the model\n"
    "                       predicts the slowest part faster by more than\n"
    "                       the fraction G (0 to 1, default 0.1)\n"
    "  --shared-rows HOW    split by rows, rows that several kernels read\n"
    "                       (GAT's): 'gather' (one all-gather of every\n"
    "                       vertex's rows), 'stage' (broadcast in stages\n"
    "                       for each kernel: less memory, more bytes; where\n"
    "                       gnn-compile --partition auto held that form) or\n"
    "                       'auto' (the default: gather unless a process's\n"
    "                       part does not fit its memory that way and does\n"
    "                       staged)\n"
    "  --batch-size N       mini-batch training: N labelled train vertices\n"
    "                       per step, shuffled each epoch, on their sampled\n"
    "                       neighbourhood (docs/MiniBatch.md; under mpirun\n"
    "                       each process trains its share of every batch's\n"
    "                       seeds: data parallel; with --partition features\n"
    "                       P3, layer 1 of every share on each process's\n"
    "                       feature columns; with --partition rows\n"
    "                       co-batches, each batch split by rows; with\n"
    "                       --partition pull data parallel on the features'\n"
    "                       rows, the others pulled from their owners)\n"
    "  --feature-copies C   with --partition pull: each row on C processes\n"
    "                       (C divides them; default 1)\n"
    "  --server-processes S with co-batches (--batch-size under mpirun,\n"
    "                       --partition rows): one co-batch per S\n"
    "                       consecutive ranks, GraNNDis's server; the\n"
    "                       servers split each batch's seeds (default: the\n"
    "                       processes of each machine; S divides them)\n"
    "  --fanouts K1,K2,...  with --batch-size: in-edges sampled per vertex\n"
    "                       at each hop, input layer first (-1: all)\n"
    "  --structure S        with --batch-size and --partition features\n"
    "                       (P3): replicated (every process holds the\n"
    "                       graph; the default) or hash (each holds the\n"
    "                       in-edges of the vertices it owns, owner =\n"
    "                       hash(id) mod N; each hop's rows are sampled by\n"
    "                       their owners and pushed to every process)\n"
    "  --pipeline           with --batch-size: up to 3 batches in flight,\n"
    "                       each trained at the parameters of 3 batches\n"
    "                       before (P3's 2F2B pipeline, staleness 3); P3's\n"
    "                       syncs overlap other batches' compute\n"
    "  --features-on-storage\n"
    "                       with --batch-size: leave the features in\n"
    "                       features.npy, read each batch's rows by ranged\n"
    "                       reads, and evaluate in batches of full\n"
    "                       neighbourhoods (features larger than memory;\n"
    "                       an executable of gnn-compile --mem-budget reads\n"
    "                       them so where its plan does, and evaluates\n"
    "                       under the plan)\n"
    "  --eval-batch-size N  with --features-on-storage, --batch-size and\n"
    "                       --mem-budget where the whole graph's\n"
    "                       evaluation does not fit, or --layerwise-eval\n"
    "                       always: vertices per evaluation batch (default:\n"
    "                       --batch-size; larger batches share more of\n"
    "                       their neighbourhoods)\n"
    "  --layerwise-eval M   with --batch-size: auto (default: under\n"
    "                       --mem-budget where the whole graph's\n"
    "                       evaluation does not fit, one level at a time\n"
    "                       over every vertex, in batches of --eval-batch-\n"
    "                       size destinations), always, or never (batches\n"
    "                       of full neighbourhoods instead)\n"
    "  --save-batches DIR   with --batch-size: write each batch's subgraph\n"
    "                       as a dataset DIR/batch-<step> and its loss to\n"
    "                       the --json summary (for a replay by\n"
    "                       python -m gnnc.check batches)\n"
    "  --json FILE          write a JSON summary\n"
    "                       (output files are written whole or not at all)\n"
    "  --save-params DIR    write <param>.npy after training\n"
    "  --load-params DIR    start from <param>.npy instead of initialising\n"
    "  --predict FILE       write the predicted class per vertex (.npy, "
    "int64)\n"
    "  --dump DIR           run one training step with dropout off and write\n"
    "                       params/, grads/, loss.npy, logits.npy; no "
    "training\n"
    "  --quiet              no per-epoch lines\n"
    "  --help               this text\n";

[[noreturn]] void usageError(const std::string &message) {
  std::fprintf(stderr, "error: %s (see --help)\n", message.c_str());
  std::exit(2);
}

static bool parseInt(const char *s, int64_t &out) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s, &end, 10);
  if (errno || !end || *end || end == s)
    return false;
  out = v;
  return true;
}

static bool parseDouble(const char *s, double &out) {
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(s, &end);
  if (errno || !end || *end || end == s || !std::isfinite(v))
    return false;
  out = v;
  return true;
}

/// The shipped dataset: next to the executable's install tree, or in the
/// source tree the runtime was built from.
static std::string defaultData(const char *argv0) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  std::vector<std::string> candidates;
  if (n > 0) {
    exe[n] = '\0';
    std::string dir(exe);
    dir = dir.substr(0, dir.find_last_of('/'));
    candidates.push_back(dir + "/../share/gnnc/datasets/polblogs");
  }
#ifdef GNNRT_SOURCE_DATASET
  candidates.push_back(GNNRT_SOURCE_DATASET);
#endif
  for (const std::string &c : candidates)
    if (isDirectory(c))
      return c;
  (void)argv0;
  return candidates.empty() ? "" : candidates.back();
}

Options parseArgs(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string value;
    bool hasInline = false;
    size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      hasInline = true;
    }
    auto next = [&]() -> const char * {
      if (hasInline)
        return value.c_str();
      if (i + 1 >= argc)
        usageError("option " + a + " needs a value");
      return argv[++i];
    };
    // The whole string, in [lo, hi]: nothing is truncated later (a thread
    // count goes to OpenMP as an int).
    auto integer = [&](int64_t lo, int64_t hi) {
      const char *s = next();
      int64_t v;
      if (!parseInt(s, v) || v < lo || v > hi)
        usageError("option " + a + ": expected an integer in [" +
                   std::to_string(lo) + ", " + std::to_string(hi) +
                   "] but got '" + s + "'");
      return v;
    };
    constexpr int64_t kMaxCount = 1000000000; // epochs, evaluation period
    auto real = [&](double lo, double hi, bool loOpen) {
      const char *s = next();
      double v;
      if (!parseDouble(s, v) || v < lo || v > hi || (loOpen && v == lo)) {
        char range[64];
        std::snprintf(range, sizeof(range), "%c%g, %g]", loOpen ? '(' : '[', lo,
                      hi);
        usageError("option " + a + ": expected a number in " + range +
                   " but got '" + s + "'");
      }
      return v;
    };
    if (a == "--help" || a == "-h") {
      std::printf(kUsage, argv[0]);
      std::exit(0);
    } else if (a == "--data") {
      o.data = next();
    } else if (a == "--epochs") {
      o.epochs = integer(0, kMaxCount);
    } else if (a == "--lr") {
      o.opt.lr = real(0.0, 1e6, true);
    } else if (a == "--optimizer") {
      std::string k = next();
      if (k == "adam")
        o.opt.kind = OptimizerConfig::Adam;
      else if (k == "sgd")
        o.opt.kind = OptimizerConfig::SGD;
      else
        usageError("option --optimizer: unknown optimizer '" + k +
                   "' (expected adam or sgd)");
    } else if (a == "--momentum") {
      o.opt.momentum = real(0.0, 1.0, false);
    } else if (a == "--weight-decay") {
      o.opt.weightDecay = real(0.0, 1e6, false);
    } else if (a == "--dropout") {
      o.dropout = real(0.0, 0.999999, false);
    } else if (a == "--seed") {
      o.seed = static_cast<uint64_t>(
          integer(0, std::numeric_limits<int64_t>::max()));
    } else if (a == "--threads") {
      o.threads = integer(1, kMaxThreads);
    } else if (a == "--mem-budget") {
      const char *s = next();
      if (!parseByteCount(s, o.memBudget))
        usageError("option --mem-budget: expected a byte count in [1, 2^62] "
                   "(digits, optionally followed by K, M, G or T) but got '" +
                   std::string(s) + "'");
    } else if (a == "--bucket-bytes") {
      const char *s = next();
      if (!parseByteCount(s, o.bucketBytes))
        usageError("option --bucket-bytes: expected a byte count in [1, "
                   "2^62] (digits, optionally followed by K, M, G or T) but "
                   "got '" +
                   std::string(s) + "'");
    } else if (a == "--spill-dir") {
      o.spillDir = next();
      if (o.spillDir.empty())
        usageError("option --spill-dir: expected a directory but got ''");
    } else if (a == "--selective-loads") {
      const std::string mode = next();
      if (!SelectiveLoader::parseMode(mode, o.selective))
        usageError("option --selective-loads: expected auto, always or never "
                   "but got '" +
                   mode + "'");
    } else if (a == "--sub-chunks") {
      o.subChunks = integer(1, 1024);
    } else if (a == "--feature-copies") {
      o.featureCopies = integer(1, 1 << 20);
    } else if (a == "--server-processes") {
      o.serverProcesses = integer(1, 1 << 20);
    } else if (a == "--uncached-reads") {
      o.uncachedReads = true;
    } else if (a == "--batch-size") {
      o.batchSize = integer(1, kMaxCount);
    } else if (a == "--fanouts") {
      o.fanouts = next();
    } else if (a == "--save-batches") {
      o.saveBatches = next();
    } else if (a == "--eval-every") {
      o.evalEvery = integer(1, kMaxCount);
    } else if (a == "--preload-hops") {
      o.preloadHops = integer(0, kMaxCount);
    } else if (a == "--preload-fanout") {
      o.preloadFanout = integer(0, INT32_MAX);
    } else if (a == "--partition") {
      o.partition = next();
      if (o.partition != "rows" && o.partition != "preload" &&
          o.partition != "auto" && o.partition != "features" &&
          o.partition != "pull")
        usageError("--partition must be rows, preload, auto, features or "
                   "pull, "
                   "not '" +
                   o.partition + "'");
    } else if (a == "--shared-rows") {
      o.sharedRows = next();
      if (o.sharedRows != "auto" && o.sharedRows != "gather" &&
          o.sharedRows != "stage")
        usageError("--shared-rows must be auto, gather or stage, not '" +
                   o.sharedRows + "'");
    } else if (a == "--row-split") {
      o.rowSplit = next();
      o.rowSplitGiven = true;
      if (o.rowSplit != "vertices" && o.rowSplit != "edges" &&
          o.rowSplit != "roc")
        usageError("--row-split must be vertices, edges or roc, not '" +
                   o.rowSplit + "'");
    } else if (a == "--repartition-gain") {
      o.repartitionGain = real(0.0, 1.0, false);
      o.rowSplitGiven = true;
    } else if (a == "--json") {
      o.json = next();
    } else if (a == "--save-params") {
      o.saveParams = next();
    } else if (a == "--load-params") {
      o.loadParams = next();
    } else if (a == "--predict") {
      o.predict = next();
    } else if (a == "--dump") {
      o.dump = next();
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "--structure") {
      o.structure = next();
      if (o.structure != "replicated" && o.structure != "hash")
        usageError("option --structure: expected replicated or hash but got "
                   "'" +
                   o.structure + "'");
    } else if (a == "--pipeline") {
      o.pipeline = true;
    } else if (a == "--features-on-storage") {
      o.featuresOnStorage = true;
    } else if (a == "--eval-batch-size") {
      o.evalBatchSize = integer(1, kMaxCount);
    } else if (a == "--layerwise-eval") {
      o.layerwiseEval = next();
      if (o.layerwiseEval != "auto" && o.layerwiseEval != "always" &&
          o.layerwiseEval != "never")
        usageError("--layerwise-eval must be auto, always or never, not '" +
                   o.layerwiseEval + "'");
    } else {
      usageError("unknown option '" + a + "'");
    }
  }
  if (o.featuresOnStorage && o.batchSize == 0)
    usageError("--features-on-storage reads each batch's rows from "
               "features.npy: give --batch-size and --fanouts (full-graph "
               "training reads them out of core when compiled for a budget: "
               "gnn-compile --mem-budget)");
  if (o.layerwiseEval != "auto" && o.batchSize == 0)
    usageError("--layerwise-eval chooses how mini-batch training evaluates: "
               "give --batch-size and --fanouts (full-graph training "
               "evaluates the whole graph at once)");
  if (o.evalBatchSize > 0 && !o.featuresOnStorage &&
      !(o.batchSize > 0 && o.memBudget > 0) && o.layerwiseEval != "always")
    usageError("--eval-batch-size sizes the evaluation batches of "
               "--features-on-storage, of --batch-size under --mem-budget "
               "where the whole graph does not fit, or of --layerwise-eval "
               "always: give them too (otherwise the whole graph is "
               "evaluated at once)");
  if (o.featuresOnStorage && !o.dump.empty())
    usageError("--dump runs one full-graph step, which --features-on-storage "
               "never holds in memory");
  if (o.featuresOnStorage && !o.partition.empty())
    usageError("--features-on-storage trains in one process or data "
               "parallel (each process its share of every batch), not with "
               "--partition " +
               o.partition);
  if (o.featureCopies != 1 && o.partition != "pull")
    usageError("--feature-copies holds each feature row on several "
               "processes with --partition pull: give it too");
  if (o.serverProcesses > 0 && o.batchSize == 0)
    usageError("--server-processes groups the processes of co-batches, "
               "mini-batch training's: give --batch-size too");
  if (o.partition == "pull" && o.batchSize == 0)
    usageError("--partition pull splits mini-batch training's features by "
               "rows: give --batch-size too");
  if (o.pipeline && o.batchSize == 0)
    usageError("--pipeline pipelines mini-batches: give --batch-size too");
  if (o.structure == "hash" && o.batchSize == 0)
    usageError("--structure hash partitions the structure that P3's "
               "mini-batches are sampled from: give --batch-size too");
  if (o.structure == "hash" && o.pipeline)
    usageError("--structure hash pushes each hop's samples by collectives "
               "beside the training's, and --pipeline's lanes take the "
               "communicator too: give one or the other");
  if (o.data.empty())
    o.data = defaultData(argv[0]);
  return o;
}

std::unique_ptr<SpillStore> checkOutputs(const Options &o) {
  std::string error;
  for (auto [flag, path] :
       {std::pair{"--json", &o.json}, std::pair{"--predict", &o.predict}})
    if (!path->empty() && !checkOutputFile(*path, error))
      usageError(std::string("option ") + flag + ": " + error);
  for (auto [flag, path] :
       {std::pair{"--save-params", &o.saveParams}, std::pair{"--dump", &o.dump},
        std::pair{"--save-batches", &o.saveBatches}})
    if (!path->empty() && !checkOutputDirectory(*path, error))
      usageError(std::string("option ") + flag + ": " + error);
  std::unique_ptr<SpillStore> spill;
  if (!o.spillDir.empty() && !(spill = SpillStore::open(o.spillDir, error)))
    usageError("option --spill-dir: " + error);
  return spill;
}

} // namespace gnnrt
