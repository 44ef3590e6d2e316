//===- gnn-compile.cpp - gnn ahead-of-time compiler driver ----------------===//
//
// model.mlir --(gnn-optimize-pipeline, --gnn-autodiff)--> gnn IR (-emit=mlir)
//   --(gnn-to-llvm-pipeline)--> LLVM dialect (-emit=mlir-llvm)
//   --(translation, O3 for the host)--> LLVM IR (-emit=llvm)
//   --> object file (-emit=obj) --(c++ with gnnrt_main, gnnrt)--> executable
//
//===----------------------------------------------------------------------===//

#include "Budget.h"
#include "Link.h"
#include "Partition.h"

#include "gnn/InitAll.h"
#include "gnn/Pipelines/Pipelines.h"
#include "gnn/Support/DatasetMeta.h"
#include "gnn/Support/OutOfMemory.h"
#include "gnn/Support/OutputFile.h"
#include "gnn/Target/Object.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <limits>
#include <optional>

using namespace mlir;

namespace {
enum class EmitKind { MLIR, MLIRLLVM, LLVM, Obj, Exe, PTX };
} // namespace

/// gnn-compile's own options: --help lists only these (LLVM's and MLIR's
/// options still work, unlisted).
static llvm::cl::OptionCategory gnnCompileCategory("gnn-compile options");

static llvm::cl::opt<std::string>
    inputFilename(llvm::cl::Positional, llvm::cl::desc("<model.mlir>"),
                  llvm::cl::init("-"), llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<std::string>
    outputFilename("o",
                   llvm::cl::desc("Output file (default: stdout; for -emit=exe "
                                  "and obj: a.out / model.o)"),
                   llvm::cl::value_desc("file"), llvm::cl::init(""),
                   llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<EmitKind> emitKind(
    "emit", llvm::cl::desc("What to produce"), llvm::cl::init(EmitKind::Exe),
    llvm::cl::values(
        clEnumValN(EmitKind::MLIR, "mlir",
                   "the gnn IR after optimisation and autodiff"),
        clEnumValN(EmitKind::MLIRLLVM, "mlir-llvm", "the LLVM dialect"),
        clEnumValN(EmitKind::LLVM, "llvm", "optimised LLVM IR"),
        clEnumValN(EmitKind::Obj, "obj", "an object file"),
        clEnumValN(EmitKind::Exe, "exe", "a training executable (default)"),
        clEnumValN(EmitKind::PTX, "ptx",
                   "the kernels as PTX (--target=cuda; one module per "
                   "--gpu-arch)")),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<std::string>
    target("target",
           llvm::cl::desc("Where the training runs: cpu (default) or cuda "
                          "(the kernels compiled to PTX, the executable on "
                          "GPU 0; docs/CUDA.md)"),
           llvm::cl::value_desc("cpu|cuda"), llvm::cl::init("cpu"),
           llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<std::string> targetCPU(
    "target-cpu",
    llvm::cl::desc("The CPU the host code is compiled for (an LLVM CPU name, "
                   "e.g. x86-64-v3 for executables that run on other "
                   "machines; default: this machine's)"),
    llvm::cl::value_desc("name"), llvm::cl::init(""),
    llvm::cl::cat(gnnCompileCategory));

#ifndef GNN_CUDA_TOOLKIT_ROOT
#define GNN_CUDA_TOOLKIT_ROOT ""
#endif
static llvm::cl::opt<std::string> cudaPath(
    "cuda-path",
    llvm::cl::desc("--target=cuda: the CUDA toolkit whose libdevice the "
                   "kernels' math functions link (default: the one gnnc was "
                   "built with, " GNN_CUDA_TOOLKIT_ROOT ", else $CUDA_HOME)"),
    llvm::cl::value_desc("dir"), llvm::cl::init(GNN_CUDA_TOOLKIT_ROOT),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<std::string>
    gpuArch("gpu-arch",
            llvm::cl::desc("--target=cuda: the GPU architecture of the PTX "
                           "(sm_80, sm_90, ...; default sm_80, which later "
                           "GPUs run too)"),
            llvm::cl::value_desc("sm_XY"), llvm::cl::init("sm_80"),
            llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<bool>
    noOptimize("no-optimize", llvm::cl::desc("Skip gnn-optimize-pipeline"),
               llvm::cl::init(false), llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<bool>
    noHoist("no-hoist", llvm::cl::desc("Skip --gnn-hoist-apply-edge"),
            llvm::cl::init(false), llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<bool>
    noFactor("no-factor", llvm::cl::desc("Skip --gnn-factor-edge-scale"),
             llvm::cl::init(false), llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<std::string> reorderMode(
    "reorder",
    llvm::cl::desc("--gnn-reorder-aggregate: auto (cost model; needs the "
                   "widths: see --dataset), always, or never"),
    llvm::cl::value_desc("mode"), llvm::cl::init("auto"),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<std::string> datasetPath(
    "dataset",
    llvm::cl::desc("A dataset directory (or its meta.json) whose widths and "
                   "average degree drive the cost models; the executable "
                   "still trains on any dataset"),
    llvm::cl::value_desc("dir"), llvm::cl::init(""),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<bool> noFuse("no-fuse",
                                  llvm::cl::desc("Skip --gnn-fuse-sag"),
                                  llvm::cl::init(false),
                                  llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<bool> noShare(
    "no-share",
    llvm::cl::desc("Skip --gnn-share-contractions (backward stages then "
                   "recompute the forward linears they read)"),
    llvm::cl::init(false), llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<std::string> partitionMode(
    "partition",
    llvm::cl::desc(
        "How the executable splits the graph over processes under mpirun: "
        "auto (the default: it holds the preloading program and the row- "
        "and feature-partitioned ones the model accepts, and picks one at "
        "start-up, or as its --partition says; a printed program is the "
        "preloading one, or with --partition auto given and --dataset the "
        "partitioned one that moves fewer bytes per epoch at the dataset's "
        "sizes; --remarks says which), preload (each process holds its "
        "vertices' closure and "
        "only sums gradients), rows (MG-GCN: each holds its vertices' rows "
        "and in-edges, --gnn-partition-rows; can still preload) or features "
        "(P³: layer 1 on each process's feature columns of the whole graph, "
        "the rest by rows, --gnn-partition-features). docs/Distributed.md"),
    llvm::cl::value_desc("mode"), llvm::cl::init("auto"),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<int64_t> replicateLevels(
    "replicate",
    llvm::cl::desc(
        "The row-partitioned program's first K levels (hops) run "
        "replicated: every process computes their ops for every vertex from "
        "every vertex's features, with no collective (--gnn-partition-rows "
        "replicate=K; default 0: none). --partition auto with --dataset "
        "chooses K per layer when it is not given"),
    llvm::cl::value_desc("K"), llvm::cl::init(0),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<int64_t> replicateFrom(
    "replicate-from",
    llvm::cl::desc(
        "The row-partitioned program's levels (hops) from M on run "
        "replicated, after one all-gather of what they read of the levels "
        "before (--gnn-partition-rows replicate-from=M; default 0: none)"),
    llvm::cl::value_desc("M"), llvm::cl::init(0),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<double> linkGbps(
    "link-gbps",
    llvm::cl::desc("--partition auto with --dataset: the link bandwidth "
                   "between processes, in Gb/s, that the per-level plan "
                   "weighs the bytes a split level moves by (default 25)"),
    llvm::cl::value_desc("Gb/s"), llvm::cl::init(25.0),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<double> computeGflops(
    "compute-gflops",
    llvm::cl::desc("--partition auto with --dataset: the rate of a process, "
                   "in GFLOP/s, that the per-level plan weighs the work a "
                   "replicated level repeats by (default 20)"),
    llvm::cl::value_desc("GFLOP/s"), llvm::cl::init(20.0),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<int64_t> edgeCacheFloats(
    "edge-cache-floats",
    llvm::cl::desc("Floats per edge that a fused kernel may keep for later "
                   "kernels instead of their recomputing it, 0 or more "
                   "(default 16; 0: none, no memory per edge)"),
    llvm::cl::value_desc("n"), llvm::cl::init(16),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<std::string> memBudget(
    "mem-budget",
    llvm::cl::desc("Train within this many bytes of memory (suffix K, M, G or "
                   "T; needs --dataset): aggregations tiled into P x P edge "
                   "chunks (--gnn-chunk-tile) and the buffers placed in what "
                   "the resident state leaves (--placement). The plan is one "
                   "process's: under mpirun the executable trains by the "
                   "partitioned programs --partition auto holds, resident"),
    llvm::cl::value_desc("bytes"), llvm::cl::init(""),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<std::string> chunkBudget(
    "chunk-budget",
    llvm::cl::desc("Tile the aggregations into P x P edge chunks whose "
                   "working set fits this many bytes, and nothing else "
                   "(--gnn-chunk-tile alone; suffix K, M, G or T; needs "
                   "--dataset)"),
    llvm::cl::value_desc("bytes"), llvm::cl::init(""),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<std::string> bufferBudget(
    "buffer-budget",
    llvm::cl::desc("Place the training step's buffers in this many bytes "
                   "directly (instead of what --mem-budget leaves; suffix K, "
                   "M, G or T; needs --dataset)"),
    llvm::cl::value_desc("bytes"), llvm::cl::init(""),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<std::string> placementStrategy(
    "placement",
    llvm::cl::desc("How buffers are placed under a budget: optimal (ROC's DP "
                   "over the lowering's order; a bounded search beyond its "
                   "limits), lru, belady (Belady's MIN: the tensor read "
                   "again last is evicted first) or streaming (default "
                   "optimal)"),
    llvm::cl::value_desc("strategy"), llvm::cl::init("optimal"),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<bool> selectiveCosts(
    "selective-costs",
    llvm::cl::desc("With row chunks: the placement charges a tile input "
                   "fetched for its tile alone the rows the tile reads "
                   "(counted from the dataset's indices.npy) where the "
                   "runtime's selective loading would read only those "
                   "(default true; =false charges whole chunks)"),
    llvm::cl::init(true), llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<bool> featuresOutOfCore(
    "features-out-of-core",
    llvm::cl::desc("Under --mem-budget or --buffer-budget: keep the features "
                   "on storage, read by row chunks from features.npy as the "
                   "placement plans (default: only when no plan fits with "
                   "them in memory; =false never)"),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<bool> graphOutOfCore(
    "graph-out-of-core",
    llvm::cl::desc("With row chunks: keep the graph's per-edge arrays on "
                   "storage, each row chunk of a step reading its rows' "
                   "edges (default: under --mem-budget, only when no plan "
                   "fits with them in memory; =false never)"),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<bool> longRowPieces(
    "long-row-pieces",
    llvm::cl::desc("For tests of the CUDA target's kernels on the CPU: fused "
                   "gathers leave the rows the runtime splits into pieces "
                   "(the CPU device only under GNNRT_PIECE_EDGES=N) to a "
                   "kernel over their pieces and one that combines them, as "
                   "--target cuda always does; rows stay whole in row chunks "
                   "and with --level-rows. docs/CUDA.md"),
    llvm::cl::init(false), llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<bool> levelRows(
    "level-rows",
    llvm::cl::desc("Each step of the training step computes only the rows "
                   "of its level: a sampled batch's per-layer blocks under "
                   "--batch-size (default true; off with row chunks, a "
                   "budget, a row partition or --target cuda; =false computes "
                   "every row of the batch). docs/MiniBatch.md"),
    llvm::cl::init(true), llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<bool> stageSharedRows(
    "stage-shared-rows",
    llvm::cl::desc("Row partitioning: the rows several compiled kernels read "
                   "at edge sources (GAT's training step) arrive in broadcast "
                   "stages for each kernel instead of as one all-gather of "
                   "every vertex's rows: less memory per process, the rows "
                   "moved once per reader (default false: --partition auto "
                   "holds the rows program both ways where they differ, and "
                   "the executable stages them where a process's part does not "
                   "fit otherwise, or as its --shared-rows says). "
                   "docs/Distributed.md"),
    llvm::cl::init(false), llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<bool> evalLevels(
    "eval-levels",
    llvm::cl::desc("Compile the evaluation split at its levels too, for "
                   "layer-wise evaluation of mini-batch training (the "
                   "executable's --layerwise-eval: under --mem-budget or "
                   "--features-on-storage by default; default true; off "
                   "with row chunks, a budget, a partition or --target "
                   "cuda). docs/MiniBatch.md"),
    llvm::cl::init(true), llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<int64_t> rowChunks(
    "row-chunks",
    llvm::cl::desc("Run each step over the vertices in this many row chunks, "
                   "1 to 256 (each chunk touches 1/K of the step's row "
                   "buffers; default: 1, or under --mem-budget or "
                   "--buffer-budget the fewest of 1, 2, 4, ..., 64 whose "
                   "placement fits)"),
    llvm::cl::value_desc("K"), llvm::cl::init(1),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<std::string> tileOrder(
    "tile-order",
    llvm::cl::desc("With --row-chunks K > 1: the order of an aggregation's "
                   "K x K tiles, column-row (default; NeuGraph's: a chunk's "
                   "output stays while the input chunks stream) or "
                   "row-column (an input chunk stays while the output "
                   "chunks stream; the baseline NeuGraph measures against; "
                   "steps whose only row work is their aggregation; not "
                   "with the graph out of core). docs/MemoryBudget.md"),
    llvm::cl::value_desc("order"), llvm::cl::init("column-row"),
    llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<bool>
    showRemarks("remarks",
                llvm::cl::desc("Print the passes' remarks (what each "
                               "rewrite did or why it was refused)"),
                llvm::cl::init(false), llvm::cl::cat(gnnCompileCategory));

static llvm::cl::opt<bool>
    keepTemps("keep-temps",
              llvm::cl::desc("Keep the intermediate object files of "
                             "-emit=exe and obj (OUT.o; OUT.1.o with the "
                             "kernels when large step functions are "
                             "compiled apart)"),
              llvm::cl::init(false), llvm::cl::cat(gnnCompileCategory));

static int fail(const std::string &message) {
  llvm::errs() << "gnn-compile: error: " << message << "\n";
  return 1;
}

/// A byte count as the executable's --mem-budget takes it: digits and an
/// optional binary suffix K, M, G, T (or KiB, ...), in [1, 2^62].
static std::optional<int64_t> parseByteCount(llvm::StringRef text) {
  size_t digits = text.find_first_not_of("0123456789");
  llvm::StringRef number = text.take_front(digits),
                  suffix = text.drop_front(number.size());
  uint64_t value;
  if (number.empty() || number.getAsInteger(10, value) || value == 0)
    return std::nullopt;
  int shift = llvm::StringSwitch<int>(suffix)
                  .Cases("", "B", 0)
                  .Cases("K", "KiB", 10)
                  .Cases("M", "MiB", 20)
                  .Cases("G", "GiB", 30)
                  .Cases("T", "TiB", 40)
                  .Default(-1);
  if (shift < 0 || value > ((uint64_t(1) << 62) >> shift))
    return std::nullopt;
  return static_cast<int64_t>(value << shift);
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  gnn::installOutOfMemoryHandler("gnn-compile");
  // Past a file size limit a write fails with EFBIG, reported with the file.
  std::signal(SIGXFSZ, SIG_IGN);
  registerPassManagerCLOptions();
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  llvm::cl::HideUnrelatedOptions(gnnCompileCategory);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "gnnc compiler: gnn model -> training executable\n\n"
      "  gnn-compile model.mlir -o model    compile; ./model --help for the "
      "flags\n"
      "  gnn-compile model.mlir -emit=mlir  the program after autodiff\n");

  DialectRegistry registry;
  gnn::registerAllGNNDialects(registry);
  MLIRContext context(registry);
  // Diagnostics name their location; by default MLIR also prints the whole
  // op into a note of each one, at the cost of numbering the values of its
  // function: with a remark per stage that made compile time quadratic in
  // the depth of a model (deep_gcn at 128 layers: 2.4 of 2.6 s).
  context.printOpOnDiagnostic(false);

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &error);
  if (!input)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  // Remarks only on request; errors and warnings always.
  context.getDiagEngine().registerHandler([](Diagnostic &diag) {
    return success(diag.getSeverity() == DiagnosticSeverity::Remark &&
                   !showRemarks);
  });

  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1; // The parser reported the located error.
  if (failed(verify(*module)))
    return 1;

  // The output, checked before the compilation: a missing directory or a
  // directory named as the file fails now, not after codegen.
  const std::string out = !outputFilename.empty() ? outputFilename.getValue()
                          : emitKind == EmitKind::Obj ? "model.o"
                          : emitKind == EmitKind::Exe ? "a.out"
                                                      : "-";
  if (!gnn::checkOutputFile(out, error))
    return fail("-o: " + error);
  if (target != "cpu" && target != "cuda")
    return fail("--target must be cpu or cuda, not '" + target + "'");
  {
    StringRef arch = gpuArch.getValue();
    unsigned version = 0;
    if (!arch.consume_front("sm_") || arch.getAsInteger(10, version) ||
        version < 50 || version > 999)
      return fail("--gpu-arch must be sm_XY with XY at least 50 (sm_80, "
                  "sm_90, ...), not '" +
                  gpuArch + "'");
  }
  if (target == "cuda" && std::string(GNNRT_CUDA_LINK_FLAGS).empty() &&
      (emitKind == EmitKind::Exe))
    return fail("--target=cuda: this gnn-compile was built without the CUDA "
                "device (no CUDA toolkit when it was built): -emit=ptx, "
                "-emit=obj and -emit=llvm work, executables do not");
  gnn::setTargetCPU(targetCPU.getValue());
  if (emitKind == EmitKind::PTX && target != "cuda")
    return fail("-emit=ptx needs --target=cuda");
  // On the GPU a budget is the device pool's size, and its plan must keep
  // every buffer resident: the row chunks and the slow tier (host memory
  // there) are not run on the GPU yet.
  if (target == "cuda" &&
      (!bufferBudget.empty() || !chunkBudget.empty() ||
       rowChunks.getNumOccurrences() || featuresOutOfCore || graphOutOfCore))
    return fail("--target=cuda: --buffer-budget, --chunk-budget, "
                "--row-chunks, --features-out-of-core and "
                "--graph-out-of-core are not supported on the GPU yet; "
                "--mem-budget is, where everything fits in it (docs/CUDA.md)");
  std::string toolkit = cudaPath.getValue();
  if (target == "cuda" && emitKind != EmitKind::MLIR) {
    if (toolkit.empty())
      for (const char *env : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
        if (const char *dir = std::getenv(env); dir && *dir) {
          toolkit = dir;
          break;
        }
    llvm::SmallString<256> libdevice(toolkit);
    llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
    if (toolkit.empty() || !llvm::sys::fs::exists(libdevice))
      return fail("--target=cuda needs the CUDA toolkit's libdevice (the "
                  "kernels' math functions): " +
                  (toolkit.empty() ? std::string("no toolkit known")
                                   : std::string(libdevice) + " is missing") +
                  "; give --cuda-path DIR");
  }
  if (edgeCacheFloats < 0)
    return fail("--edge-cache-floats must be an integer in [0, " +
                std::to_string(std::numeric_limits<int64_t>::max()) +
                "] but is " + std::to_string(edgeCacheFloats));

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  pm.enableVerifier();
  gnn::GNNOptimizeOptions options;
  options.hoist = !noHoist;
  options.factor = !noFactor;
  if (reorderMode != "auto" && reorderMode != "always" &&
      reorderMode != "never")
    return fail("--reorder must be auto, always or never, not '" + reorderMode +
                "'");
  options.reorder = reorderMode.getValue();
  if (!datasetPath.empty()) {
    llvm::SmallString<256> meta(datasetPath);
    if (llvm::sys::fs::is_directory(meta))
      llvm::sys::path::append(meta, "meta.json");
    if (!llvm::sys::fs::exists(meta))
      return fail("--dataset: " + std::string(meta) + " does not exist");
    options.meta = std::string(meta);
  }
  options.fuse = !noFuse;
  options.share = !noShare;
  if (partitionMode != "preload" && partitionMode != "rows" &&
      partitionMode != "features" && partitionMode != "auto")
    return fail("--partition must be preload, rows, features or auto, not '" +
                partitionMode + "'");
  if (replicateLevels < 0 || replicateFrom < 0)
    return fail("--replicate and --replicate-from must be 0 or more");
  if ((replicateLevels > 0 || replicateFrom > 0) &&
      (partitionMode == "preload" || partitionMode == "features"))
    return fail("--replicate replicates the first layers of the "
                "row-partitioned program; --partition " +
                partitionMode + " has none");
  options.replicate = replicateLevels.getValue();
  options.replicateFrom = replicateFrom.getValue();
  if (!(linkGbps > 0) || !std::isfinite(linkGbps) || !(computeGflops > 0) ||
      !std::isfinite(computeGflops))
    return fail("--link-gbps and --compute-gflops must be positive numbers");
  gnn::PartitionRates rates;
  rates.bytesPerSecond = linkGbps * 1e9 / 8;
  rates.flopsPerSecond = computeGflops * 1e9;
  // --partition auto: an executable or object holds the preloading
  // program and next to it the partitioned ones the model accepts
  // (addPartitionedPrograms, once the preloading one is compiled); a
  // printed program (-emit=mlir, mlir-llvm, llvm) is the preloading one,
  // or with --partition auto given and --dataset the partitioned one the
  // sizes favour.
  const bool severalPrograms =
      partitionMode == "auto" &&
      (emitKind == EmitKind::Exe || emitKind == EmitKind::Obj);
  options.partition = partitionMode == "preload" || partitionMode == "auto"
                          ? std::string("none")
                          : partitionMode.getValue();
  const bool printedAuto = partitionMode == "auto" &&
                           partitionMode.getNumOccurrences() &&
                           !options.meta.empty() && emitKind != EmitKind::PTX;
  if (!severalPrograms && partitionMode == "auto" && !printedAuto &&
      (options.replicate || options.replicateFrom))
    return fail("--replicate and --replicate-from shape the row-partitioned "
                "program: a printed program is the preloading one unless "
                "--partition rows, or --partition auto with --dataset, is "
                "given");
  // (One partitioned program's executable: its forms on blocks are
  // lowered from it too.)
  const bool partitionedBlocks =
      (options.partition == "rows" || options.partition == "features") &&
      (emitKind == EmitKind::Exe || emitKind == EmitKind::Obj) &&
      target != "cuda";
  OwningOpRef<ModuleOp> original;
  if (severalPrograms || partitionedBlocks)
    original = cast<ModuleOp>((*module)->clone());
  else if (printedAuto) {
    gnn::GNNToLLVMOptions probe;
    probe.meta = options.meta.getValue();
    std::string report;
    std::optional<gnn::PartitionChoice> chosen = gnn::choosePartition(
        context, *module, options, probe, !noOptimize, rates, report);
    if (!chosen)
      return fail("--partition auto: " + report);
    options.partition = chosen->mode;
    options.replicate = chosen->replicate;
    options.replicateFrom = chosen->replicateFrom;
    if (showRemarks)
      llvm::errs() << "gnn-compile: remark: --partition auto: " << report
                   << "\n";
  }
  // Layer-wise evaluation's levels, where the lowering runs them: the CPU,
  // every buffer resident, the program not split over processes.
  options.evalLevels = evalLevels && target != "cuda" &&
                       options.partition == "none" && memBudget.empty() &&
                       chunkBudget.empty() && bufferBudget.empty() &&
                       rowChunks == 1 && !featuresOutOfCore && !graphOutOfCore;
  gnn::buildGNNTrainPipeline(pm, options, /*optimize=*/!noOptimize);
  // Byte-count flags: digits, optionally followed by K, M, G or T.
  auto byteFlag = [&](const llvm::cl::opt<std::string> &flag,
                      StringRef what) -> std::optional<int64_t> {
    std::optional<int64_t> bytes = parseByteCount(flag);
    if (!bytes)
      fail("--" + flag.ArgStr.str() +
           ": expected a byte count in [1, 2^62] (digits, optionally "
           "followed by K, M, G or T) but got '" +
           flag.getValue() + "'");
    else if (options.meta.empty()) {
      fail("--" + flag.ArgStr.str() + ": " + what.str() +
           " needs the dataset's sizes (--dataset)");
      bytes.reset();
    }
    return bytes;
  };
  std::optional<int64_t> budget, chunkBytes, bufferBytes;
  if (!memBudget.empty() && !(budget = byteFlag(memBudget, "the plan")))
    return 1;
  if (!chunkBudget.empty() &&
      !(chunkBytes = byteFlag(chunkBudget, "chunk tiling")))
    return 1;
  if (!bufferBudget.empty() &&
      !(bufferBytes = byteFlag(bufferBudget, "placing the buffers")))
    return 1;
  if (budget && (chunkBytes || bufferBytes))
    return fail("--mem-budget sets the chunk and buffer budgets; it excludes "
                "--chunk-budget and --buffer-budget");
  if (budget || chunkBytes) {
    gnn::GNNChunkTileOptions tile;
    tile.budget = budget ? *budget : *chunkBytes;
    tile.meta = options.meta.getValue();
    pm.addPass(gnn::createGNNChunkTile(tile));
  }
  gnn::GNNToLLVMOptions lowering;
  if (placementStrategy != "optimal" && placementStrategy != "lru" &&
      placementStrategy != "belady" && placementStrategy != "streaming")
    return fail("--placement must be optimal, lru, belady or streaming, not '" +
                placementStrategy + "'");
  if (rowChunks < 1 || rowChunks > 256)
    return fail("--row-chunks must be in [1, 256], not " +
                std::to_string(rowChunks.getValue()));
  lowering.rowChunks = rowChunks.getValue();
  if (tileOrder != "column-row" && tileOrder != "row-column")
    return fail("--tile-order must be column-row or row-column, not '" +
                tileOrder + "'");
  if (tileOrder == "row-column" && rowChunks < 2)
    return fail("--tile-order=row-column needs --row-chunks above 1 (a "
                "budget's search for the row chunks does not choose them "
                "for it)");
  if (tileOrder == "row-column" && graphOutOfCore)
    return fail("--tile-order=row-column is not supported with the graph out "
                "of core (a window holds a row chunk's edges: each tile "
                "would read them again)");
  lowering.tileOrder = tileOrder.getValue();
  lowering.levelRows = levelRows.getValue();
  lowering.stageSharedRows = stageSharedRows.getValue();
  lowering.longRowPieces = longRowPieces.getValue();
  lowering.chip = gpuArch.getValue();
  lowering.cudaPath = toolkit;
  lowering.edgeCacheFloats = edgeCacheFloats.getValue();
  lowering.meta = options.meta.getValue();
  lowering.placement = placementStrategy.getValue();
  lowering.selectiveCosts = selectiveCosts.getValue();
  if (budget)
    lowering.memBudget = *budget;
  if (bufferBytes)
    lowering.bufferBudget = *bufferBytes;
  // Under a budget with no --row-chunks: the fewest row chunks (1, 2, 4, ...
  // 64) whose placement fits, as the chunk tiling takes the least P. Each
  // count is tried on a copy of the module with its diagnostics kept back;
  // the compilation then runs with the count found, or, when none fits, with
  // the count whose least plan is smallest (its error says why).
  lowering.featuresOutOfCore = featuresOutOfCore.getValue();
  if (featuresOutOfCore && !budget && !bufferBytes)
    return fail("--features-out-of-core needs --mem-budget or "
                "--buffer-budget (the placement reads the features' chunks)");
  lowering.graphOutOfCore = graphOutOfCore.getValue();
  if (graphOutOfCore && !budget && !bufferBytes && rowChunks < 2)
    return fail("--graph-out-of-core needs row chunks: --row-chunks above 1, "
                "or a budget (--mem-budget, --buffer-budget) to choose them");
  // The windows' size at the dataset's sizes: its in-edges per row chunk.
  std::optional<std::vector<int64_t>> indptr;
  if (budget && !options.meta.empty()) {
    std::string ignored; // without it the pass estimates them
    FailureOr<std::vector<int64_t>> read =
        gnn::readIndptr(options.meta.getValue(), ignored);
    if (succeeded(read))
      indptr = std::move(*read);
  }
  auto sizeWindows = [&] {
    if (lowering.graphOutOfCore && indptr)
      lowering.graphWindowEdges =
          gnn::mostRowChunkEdges(*indptr, lowering.rowChunks);
  };
  sizeWindows();
  if (emitKind != EmitKind::MLIR && (budget || bufferBytes) &&
      rowChunks.getNumOccurrences() == 0) {
    // The settings tried in turn: as given; then, unless the flags fix
    // them, with no edge caches (the fused kernels recompute what they
    // would keep) when the least plan is a fused gather's; then the
    // features out of core (under --mem-budget), with the caches, then
    // without; then the graph out of core. Of those that fit, the one whose
    // training step moves the fewest bytes (fetches, evictions, graph
    // windows: the plans' counts at the dataset's sizes) is compiled, the
    // earlier on a tie; none moves less than nothing, so a setting that
    // fits without moving anything ends the search. With none fitting, the
    // one whose least plan is smallest is compiled (its error says why).
    const bool outOfCoreGiven = featuresOutOfCore.getNumOccurrences() != 0;
    const bool graphGiven = graphOutOfCore.getNumOccurrences() != 0;
    const bool cachesGiven = edgeCacheFloats.getNumOccurrences() != 0;
    const bool givenOutOfCore = lowering.featuresOutOfCore;
    const bool givenGraph = lowering.graphOutOfCore;
    const int64_t givenCaches = lowering.edgeCacheFloats;
    // The GPU: one row chunk (the whole step), planned for the GPU.
    const bool onGPU = target == "cuda";
    const int64_t maxChunks = onGPU ? 1 : 64;
    if (onGPU)
      lowering.target = target.getValue();
    gnn::RowChunkSearch best =
        findRowChunks(context, *module, options, lowering, budget, !noOptimize,
                      indptr ? &*indptr : nullptr, maxChunks);
    bool outOfCore = givenOutOfCore, graph = givenGraph;
    int64_t caches = givenCaches;
    // Whether any search's least plan was a fused gather's, at any count
    // (with more chunks a fused gather's share shrinks below what another
    // step reads whole, such as the logits at the output).
    bool cachesMatter = best.fusedGatherLimited;
    int64_t settingsFit = best.fits ? 1 : 0;
    // The GPU takes only a plan whose buffers all fit at once.
    auto done = [&](const gnn::RowChunkSearch &r) {
      return r.fits && (onGPU ? r.everySlotFits : r.moved == 0);
    };
    auto retry = [&](bool withOutOfCore, int64_t withCaches,
                     bool withGraph = false) {
      if (done(best))
        return;
      lowering.featuresOutOfCore = withOutOfCore;
      lowering.edgeCacheFloats = withCaches;
      lowering.graphOutOfCore = withGraph || givenGraph;
      gnn::RowChunkSearch r =
          findRowChunks(context, *module, options, lowering, budget,
                        !noOptimize, indptr ? &*indptr : nullptr, maxChunks);
      cachesMatter |= r.fusedGatherLimited;
      settingsFit += r.fits ? 1 : 0;
      if ((onGPU && done(r)) || (best.fits ? r.fits && r.moved < best.moved
                                           : r.fits || r.least < best.least)) {
        best = r;
        outOfCore = withOutOfCore;
        caches = withCaches;
        graph = withGraph || givenGraph;
      }
    };
    const bool canDropCaches = !cachesGiven && givenCaches > 0;
    // On the GPU a plan that moves or drops buffers may fit whole without
    // the caches (their kernels recompute the values instead).
    if (canDropCaches && (cachesMatter || onGPU))
      retry(givenOutOfCore, 0);
    if (budget && !onGPU && !outOfCoreGiven && !givenOutOfCore) {
      retry(true, givenCaches);
      if (canDropCaches && cachesMatter)
        retry(true, 0);
    }
    // Then the graph out of core, with the features as they came out.
    if (budget && !onGPU && !graphGiven && !givenGraph) {
      retry(givenOutOfCore, givenCaches, true);
      if (canDropCaches && cachesMatter)
        retry(givenOutOfCore, 0, true);
      if (!outOfCoreGiven && !givenOutOfCore) {
        retry(true, givenCaches, true);
        if (canDropCaches && cachesMatter)
          retry(true, 0, true);
      }
    }
    lowering.featuresOutOfCore = outOfCore;
    lowering.graphOutOfCore = graph;
    lowering.edgeCacheFloats = caches;
    lowering.rowChunks = best.chunks;
    sizeWindows();
    if (showRemarks && best.fits && outOfCore && !outOfCoreGiven)
      llvm::errs() << "gnn-compile: remark: the features out of core: read by "
                      "row chunks from features.npy (--features-out-of-core "
                      "sets it)\n";
    if (showRemarks && best.fits && graph && !graphGiven)
      llvm::errs() << "gnn-compile: remark: the graph out of core: each row "
                      "chunk reads its rows' edges from storage "
                      "(--graph-out-of-core sets it)\n";
    if (showRemarks && best.fits && caches == 0 && !cachesGiven)
      llvm::errs() << "gnn-compile: remark: no edge caches: the fused "
                      "kernels recompute per-edge values in the backward "
                      "(--edge-cache-floats sets it)\n";
    if (showRemarks && settingsFit > 1)
      llvm::errs() << "gnn-compile: remark: " << settingsFit
                   << " settings fit the budget; this one moves the fewest "
                      "bytes per training step: "
                   << best.moved << "\n";
    // A plan that does not fit fails below with the placement's error (what
    // stays resident, or the least plan); one that fits by moving buffers
    // is not run on the GPU yet.
    if (onGPU && best.fits && !best.everySlotFits)
      return fail(
          "--target=cuda --mem-budget " + memBudget.getValue() +
          ": the training state at the dataset's sizes fits only by " +
          (best.moved > 0 ? "moving " + std::to_string(best.moved) +
                                " bytes per step between device and host "
                                "memory"
                          : std::string("freeing buffers within a step")) +
          " (a placement plan); the GPU runs plans that keep every buffer "
          "resident only, not yet row chunks or the slow tier (docs/CUDA.md)");
    if (onGPU && best.fits && showRemarks)
      llvm::errs() << "gnn-compile: remark: --target=cuda: the training state "
                      "fits the budget in device memory, every buffer "
                      "resident\n";
    if (showRemarks && lowering.rowChunks > 1)
      llvm::errs() << "gnn-compile: remark: " << lowering.rowChunks
                   << " row chunks: "
                   << (best.fits ? "the fewest whose placement fits the budget"
                                 : "the least plan of 1 to 64 row chunks")
                   << " (--row-chunks sets it)\n";
  }
  lowering.target = target.getValue();
  if (emitKind == EmitKind::PTX)
    gnn::buildGNNKernelsToPTXPipeline(pm, lowering);
  else if (emitKind != EmitKind::MLIR)
    gnn::buildGNNToLLVMPipeline(pm, lowering);
  if (failed(pm.run(*module)))
    return 1;

  // Outputs are written whole or not at all (gnn/Support/OutputFile.h).
  auto writeText = [&](llvm::function_ref<void(llvm::raw_ostream &)> fn) {
    std::string text;
    llvm::raw_string_ostream os(text);
    fn(os);
    os.flush();
    return gnn::writeOutputFile(out, text, error) ? 0 : fail(error);
  };
  if (emitKind == EmitKind::MLIR || emitKind == EmitKind::MLIRLLVM)
    return writeText([&](llvm::raw_ostream &os) {
      module->print(os);
      os << "\n";
    });
  if (emitKind == EmitKind::PTX) {
    std::string ptx;
    for (auto binary : module->getOps<gpu::BinaryOp>())
      for (Attribute object : binary.getObjects())
        ptx += cast<gpu::ObjectAttr>(object).getObject().getValue().str();
    // The PTX is a C string in the binary; a file of it ends at its text.
    while (!ptx.empty() && ptx.back() == '\0')
      ptx.pop_back();
    if (ptx.empty())
      return fail("the model has no kernels to emit as PTX");
    return writeText([&](llvm::raw_ostream &os) { os << ptx; });
  }

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      gnn::translateAndOptimize(*module, llvmContext, error);
  if (!llvmModule)
    return fail(error);
  if (emitKind == EmitKind::LLVM)
    return writeText(
        [&](llvm::raw_ostream &os) { llvmModule->print(os, nullptr); });

  // The step functions and the kernels come as two objects (Object.h).
  llvm::SmallVector<llvm::SmallVector<char, 0>, 2> objectCode;
  if (!gnn::emitObjects(*llvmModule, objectCode, error))
    return fail(error);
  if (severalPrograms) {
    // The partitioned programs are not lowered for CUDA yet: such an
    // executable trains in one process. Under a budget or in row chunks they
    // are lowered without either, every buffer resident. Where the preloading
    // program's plan places buffers (or reads the features or the graph from
    // storage) it is one process's, and under mpirun the start-up takes a
    // partitioned program where each process's part fits what it has left
    // (--mem-budget included; docs/Distributed.md, "Under a memory budget").
    std::string report;
    gnn::RowsBlocks rowsBlocks = gnn::RowsBlocks::None;
    const bool planned =
        budget || chunkBytes || bufferBytes || lowering.rowChunks > 1;
    // The other programs' lowering under a plan: every buffer resident.
    gnn::GNNToLLVMOptions resident;
    resident.copyOptionValuesFrom(lowering);
    resident.memBudget = 0;
    resident.bufferBudget = 0;
    resident.rowChunks = 1;
    resident.tileOrder = "column-row"; // no tiles without row chunks
    resident.featuresOutOfCore = false;
    resident.graphOutOfCore = false;
    resident.graphWindowEdges = 0;
    // The search may have dropped the edge caches to fit the budget.
    resident.edgeCacheFloats = edgeCacheFloats.getValue();
    if (target == "cuda") {
      report = "the executable holds the preload program only (the "
               "partitioned ones are not compiled for CUDA yet)";
    } else {
      if (!gnn::addPartitionedPrograms(context, *original, options, resident,
                                       !noOptimize, rates, llvmContext,
                                       objectCode, report, error, &rowsBlocks))
        return fail(error);
      if (planned)
        report += "; the partitioned programs keep every buffer resident "
                  "(the budget's plan and row chunks are the preload "
                  "program's)";
    }
    if (showRemarks)
      llvm::errs() << "gnn-compile: remark: --partition auto: " << report
                   << "\n";
    // Mini-batch training's program on sampled blocks, where the model's
    // aggregation order differs there, and under a plan (its buffers
    // resident: a batch is small; the plan is the evaluation's). Not for
    // CUDA.
    if (target != "cuda") {
      if (!gnn::addBlocksProgram(context, *original, options,
                                 planned ? resident : lowering, !noOptimize,
                                 llvmContext, objectCode, report, error,
                                 planned, rowsBlocks))
        return fail(error);
      if (showRemarks)
        llvm::errs() << "gnn-compile: remark: --batch-size: " << report << "\n";
    }
  } else if (partitionedBlocks) {
    // One partitioned program: its form on blocks for P³ or co-batches,
    // where layer 1's order differs there (addPartitionedBlocksPrograms).
    std::string report;
    if (!gnn::addPartitionedBlocksPrograms(
            context, *original, options, lowering, !noOptimize, llvmContext,
            objectCode, options.partition == "features",
            options.partition == "rows" && !options.replicate &&
                    !options.replicateFrom
                ? gnn::RowsBlocks::WhereReordered
                : gnn::RowsBlocks::None,
            std::nullopt, report, error))
      return fail(error);
    if (showRemarks && !report.empty())
      llvm::errs() << "gnn-compile: remark: --batch-size: " << report
                   << " (the aggregations no contraction precedes before "
                      "their linear: on a sampled block the linear would run "
                      "on the block's sources)\n";
  }
  return gnn::writeLinkedOutput(argv[0], objectCode, out,
                                emitKind == EmitKind::Obj, keepTemps,
                                target == "cuda");
}
