//===- Partition.cpp - gnn-compile's --partition auto ---------------------===//
//
// The partitioned programs an executable holds, and the per-level plan
// (Partition.h).
//
//===----------------------------------------------------------------------===//

#include "Partition.h"

#include "gnn/Analysis/LayerPlan.h"
#include "gnn/IR/GNNDialect.h"
#include "gnn/Support/DatasetMeta.h"
#include "gnn/Target/Object.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>
#include <limits>

using namespace mlir;
using namespace mlir::gnn;

namespace {
/// What a program moves per epoch and process, up to the factor (N-1)/N:
/// its row collectives' bytes and its gradient sum's.
struct Bytes {
  double collectives = 0, gradients = 0;
  double total() const { return collectives + gradients; }
};
} // namespace

/// The bytes a program's collectives and gradient sum move per epoch
/// (one training step and one evaluation), per process up to the factor
/// (N-1)/N, from its model description (`gnnrt_model_info`: the collective
/// and param records) at the dataset's sizes: a row collective moves the
/// rows of every vertex once, the ring all-reduce every summed gradient
/// twice (docs/Distributed.md). Feature shards are not summed.
static Bytes predictedBytes(StringRef info, const DatasetMeta &meta,
                            bool features) {
  auto size = [&](int64_t d) {
    return d == -1 ? meta.numFeatures : d == -2 ? meta.numClasses : d;
  };
  double rows = 0, floats = 0;
  SmallVector<StringRef> lines;
  info.split(lines, '\n');
  for (StringRef line : lines) {
    SmallVector<StringRef> f;
    line.split(f, ' ');
    if (f[0] == "collective" && f.size() == 5) {
      int64_t factor = 1;
      f[3].getAsInteger(10, factor);
      double width = static_cast<double>(factor);
      if (f[4] != "1") {
        SmallVector<StringRef> terms;
        f[4].split(terms, '*');
        for (StringRef t : terms)
          width *= t == "F" ? meta.numFeatures : meta.numClasses;
      }
      rows += width;
    } else if (f[0] == "param" && f.size() >= 6) {
      int64_t rank = 0;
      f[5].getAsInteger(10, rank);
      double n = 1;
      bool shard = false;
      for (int64_t d = 0; d < rank && 6 + d < static_cast<int64_t>(f.size());
           ++d) {
        int64_t dim = 0;
        f[6 + d].getAsInteger(10, dim);
        shard |= d == 0 && dim == -1 && features;
        n *= static_cast<double>(size(dim));
      }
      if (!shard)
        floats += n;
    }
  }
  return {4.0 * static_cast<double>(meta.numVertices) * rows, 8.0 * floats};
}

/// Runs the training and lowering pipelines on a copy of `module` with the
/// diagnostics kept back: the lowered copy, or null with the first error in
/// `why`.
static OwningOpRef<ModuleOp> lowerCopy(MLIRContext &context, ModuleOp module,
                                       const GNNOptimizeOptions &options,
                                       const GNNToLLVMOptions &lowering,
                                       bool optimize, std::string &why) {
  PassManager probe(&context);
  probe.enableVerifier();
  // The other programs evaluate whole or in batches of whole
  // neighbourhoods: the preloading program's levels serve them all.
  GNNOptimizeOptions withoutLevels;
  withoutLevels.copyOptionValuesFrom(options);
  withoutLevels.evalLevels = false;
  buildGNNTrainPipeline(probe, withoutLevels, optimize);
  buildGNNToLLVMPipeline(probe, lowering);
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
  LogicalResult result = failure();
  {
    ScopedDiagnosticHandler quiet(&context, [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error && why.empty())
        why = d.str();
      return success();
    });
    result = probe.run(*copy);
  }
  if (failed(result))
    return nullptr;
  auto global = copy->lookupSymbol<LLVM::GlobalOp>("gnnrt_model_info");
  if (!global || !dyn_cast_or_null<StringAttr>(global.getValueAttr())) {
    why = "no model description";
    return nullptr;
  }
  return copy;
}

static StringRef modelInfo(ModuleOp lowered) {
  auto global = lowered.lookupSymbol<LLVM::GlobalOp>("gnnrt_model_info");
  return cast<StringAttr>(global.getValueAttr()).getValue();
}

/// `x` as %g prints it.
static std::string general(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

static std::string megabytes(double b) {
  return llvm::formatv("{0:F1} MB", b / 1e6).str();
}

/// The most levels the per-level plan replicates: each is a lowering of
/// the model at compile time, and beyond a few hops the closure is most of
/// the graph.
static constexpr int64_t kMostReplicated = 4;

namespace {
/// A partitioned program lowered, or why not.
struct Lowered {
  OwningOpRef<ModuleOp> module;
  Bytes bytes;
  std::string why;
  explicit operator bool() const { return static_cast<bool>(module); }
};

/// The per-level plan's inputs and outcome.
struct LevelPlan {
  LayerPlan plan;
  PartitionChoice choice;
  std::string report;
  /// The programs the plan lowered, which an executable takes again.
  SmallVector<std::pair<PartitionChoice, Lowered>> lowered;

  /// The lowered program of `c`, taken out of `lowered`; null if absent.
  Lowered take(const PartitionChoice &c) {
    for (auto &[choice, l] : lowered)
      if (choice.mode == c.mode && choice.replicate == c.replicate &&
          choice.replicateFrom == c.replicateFrom && l)
        return std::move(l);
    return Lowered();
  }
};
} // namespace

/// `choice` lowered on a copy of `module`, its bytes at `meta`'s sizes.
static Lowered lowerChoice(MLIRContext &context, ModuleOp module,
                           GNNOptimizeOptions &options,
                           const GNNToLLVMOptions &lowering, bool optimize,
                           const PartitionChoice &choice,
                           const std::optional<DatasetMeta> &meta) {
  Lowered l;
  options.partition = choice.mode;
  options.replicate = choice.replicate;
  options.replicateFrom = choice.replicateFrom;
  l.module = lowerCopy(context, module, options, lowering, optimize, l.why);
  if (l.module && meta)
    l.bytes =
        predictedBytes(modelInfo(*l.module), *meta, choice.mode == "features");
  options.partition = "none";
  options.replicate = 0;
  options.replicateFrom = 0;
  return l;
}

/// Appends `lowered`'s objects to `objects`, its definitions suffixed
/// `_<suffix>`; false with `error` when it fails to translate or emit.
static bool emitSuffixed(ModuleOp lowered, StringRef suffix,
                         llvm::LLVMContext &llvmContext,
                         SmallVectorImpl<SmallVector<char, 0>> &objects,
                         std::string &error) {
  std::unique_ptr<llvm::Module> program =
      translateAndOptimize(lowered, llvmContext, error);
  if (!program)
    return false;
  suffixDefinitions(*program, suffix);
  SmallVector<SmallVector<char, 0>, 2> emitted;
  if (!emitObjects(*program, emitted, error))
    return false;
  for (SmallVector<char, 0> &o : emitted)
    objects.push_back(std::move(o));
  return true;
}

/// `lowerCopy` with the partition `partition`, replicating no level (the
/// blocks programs: co-batches bind no whole graph), and the reordering
/// `reorder` ("never", or "keep-first": the aggregations no contraction
/// precedes stay first; else as `options` say).
static OwningOpRef<ModuleOp>
lowerReordered(MLIRContext &context, ModuleOp module,
               const GNNOptimizeOptions &options,
               const GNNToLLVMOptions &lowering, bool optimize,
               StringRef partition, StringRef reorder, std::string &why) {
  GNNOptimizeOptions blocks;
  blocks.copyOptionValuesFrom(options);
  blocks.partition = partition.str();
  blocks.replicate = 0;
  blocks.replicateFrom = 0;
  blocks.reorderKeepFirst = reorder == "keep-first";
  if (reorder == "never")
    blocks.reorder = "never";
  return lowerCopy(context, module, blocks, lowering, optimize, why);
}

/// The forward's work by level (levelWork) of `module` after the optimizing
/// passes, which the partitioning sees; empty where they fail.
static SmallVector<LevelWork> modelLevels(MLIRContext &context, ModuleOp module,
                                          const GNNOptimizeOptions &options,
                                          bool optimize,
                                          const DatasetMeta &meta) {
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
  PassManager pm(&context);
  if (optimize)
    buildGNNOptimizePipeline(pm, options);
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  if (failed(pm.run(*copy)))
    return {};
  for (auto fn : copy->getOps<func::FuncOp>())
    if (fn->hasAttr(GNNDialect::kModelAttrName))
      return levelWork(fn, meta.numFeatures, meta.numClasses);
  return {};
}

/// The per-level plan (LayerPlan.h) at `meta`'s sizes: rows with 0 to
/// kMostReplicated levels replicated and features lowered, each level's
/// bytes split by rows the difference between replicating it and not.
static std::optional<LevelPlan>
planLevels(MLIRContext &context, ModuleOp module, GNNOptimizeOptions &options,
           const GNNToLLVMOptions &lowering, bool optimize,
           const PartitionRates &rates, const DatasetMeta &meta,
           std::string &error) {
  SmallVector<LevelWork> work =
      modelLevels(context, module, options, optimize, meta);
  const int64_t levels = std::max<int64_t>(work.size(), 1);
  // byLevels[k]: rows with the first k levels replicated.
  SmallVector<Lowered> byLevels;
  for (int64_t k = 0; k <= std::min(levels, kMostReplicated); ++k) {
    Lowered l = lowerChoice(context, module, options, lowering, optimize,
                            {"rows", k}, meta);
    if (!l) {
      if (k == 0)
        error = "rows: " + l.why;
      break;
    }
    byLevels.push_back(std::move(l));
  }
  Lowered features = lowerChoice(context, module, options, lowering, optimize,
                                 {"features", 0}, meta);
  if (byLevels.empty() && !features) {
    error = "neither partitioning compiles: " + error +
            "; features: " + features.why;
    return std::nullopt;
  }
  LevelPlan out;
  if (byLevels.empty()) {
    out.choice = {"features", 0};
    out.report = "features (rows refused: " + error + ")";
    out.lowered.emplace_back(PartitionChoice{"features", 0, 0},
                             std::move(features));
    return out;
  }
  // Levels 0 .. T-1 replicable; level T lumps the rest (split by rows).
  const int64_t T = static_cast<int64_t>(byLevels.size()) - 1;
  LayerPlanInput in;
  in.bytesPerSecond = rates.bytesPerSecond;
  in.flopsPerSecond = rates.flopsPerSecond;
  in.fixedBytes = byLevels[0].bytes.gradients;
  const double V = static_cast<double>(meta.numVertices),
               E = static_cast<double>(meta.numEdges);
  for (int64_t j = 0; j <= T && j < levels; ++j) {
    LevelCosts c;
    const bool last = j == T;
    c.rowsBytes = byLevels[j].bytes.collectives -
                  (last ? 0 : byLevels[j + 1].bytes.collectives);
    // Forward and backward: about three times the forward's operations.
    c.work = last && T < levels ? std::numeric_limits<double>::infinity()
             : j < static_cast<int64_t>(work.size())
                 ? 3 * (work[j].perVertex * V + work[j].perEdge * E)
                 : 0;
    in.levels.push_back(c);
  }
  if (features)
    in.columnsBytes = features.bytes.total() - in.fixedBytes -
                      (T >= 1 ? byLevels[1].bytes.collectives : 0);
  // A replicated suffix from level m, entered from the split levels before
  // it: what its program moves beyond theirs (all-gathers of what the
  // suffix reads, and their gradients).
  for (int64_t m = 1; m < static_cast<int64_t>(in.levels.size()); ++m) {
    Lowered suffix = lowerChoice(context, module, options, lowering, optimize,
                                 {"rows", 0, m}, meta);
    if (!suffix)
      continue;
    in.levels[m].gatherBytes =
        suffix.bytes.collectives -
        (byLevels[0].bytes.collectives - byLevels[m].bytes.collectives);
    out.lowered.emplace_back(PartitionChoice{"rows", 0, m}, std::move(suffix));
  }
  out.plan = planLayers(in);
  out.choice = out.plan.columns ? PartitionChoice{"features", 0}
                                : PartitionChoice{"rows", out.plan.replicated,
                                                  out.plan.replicatedFrom};
  // Each level's layout and what it costs split by rows and replicated.
  std::string layouts;
  for (auto [j, l] : llvm::enumerate(out.plan.layouts)) {
    const LevelCosts &c = in.levels[j];
    layouts += (j ? ", " : "") + std::to_string(j) + " " +
               stringifyLevelLayout(l).str() + " [" + megabytes(c.rowsBytes) +
               " | " +
               (std::isinf(c.work)
                    ? std::string("not replicable")
                    : llvm::formatv("{0:F2} GFLOP", c.work / 1e9).str()) +
               " | " +
               (std::isinf(c.gatherBytes) ? std::string("-")
                                          : megabytes(c.gatherBytes)) +
               "]";
  }
  out.report =
      (out.choice.mode == "features"
           ? std::string("features")
           : "rows with " + std::to_string(out.plan.replicated) +
                 " level(s) replicated" +
                 (out.plan.replicatedFrom
                      ? " and those from " +
                            std::to_string(out.plan.replicatedFrom) + " on"
                      : std::string())) +
      " (level layout [split by rows | replicated | a replicated suffix "
      "entered]: " +
      layouts + "; per epoch each of N processes moves " +
      megabytes(out.plan.bytes) + " and repeats " +
      llvm::formatv("{0:F2}", out.plan.redundantWork / 1e9).str() +
      " GFLOP, x (N-1)/N: " + llvm::formatv("{0:F4}", out.plan.seconds).str() +
      " s at " + general(rates.bytesPerSecond * 8 / 1e9) + " Gb/s and " +
      general(rates.flopsPerSecond / 1e9) + " GFLOP/s" + "; rows everywhere " +
      megabytes(byLevels[0].bytes.total()) + ", features " +
      (features ? megabytes(features.bytes.total())
                : "refused: " + features.why) +
      ")";
  // The programs lowered, for an executable to take (after the report,
  // which reads them).
  for (auto [k, l] : llvm::enumerate(byLevels))
    out.lowered.emplace_back(
        PartitionChoice{"rows", static_cast<int64_t>(k), 0}, std::move(l));
  if (features)
    out.lowered.emplace_back(PartitionChoice{"features", 0, 0},
                             std::move(features));
  return out;
}

std::optional<PartitionChoice>
mlir::gnn::choosePartition(MLIRContext &context, ModuleOp module,
                           GNNOptimizeOptions &options,
                           const GNNToLLVMOptions &lowering, bool optimize,
                           const PartitionRates &rates, std::string &report) {
  std::string error;
  FailureOr<DatasetMeta> meta = readDatasetMeta(options.meta.getValue(), error);
  if (failed(meta)) {
    report = error;
    return std::nullopt;
  }
  // Levels replicated as the flags say: rows with them.
  if (options.replicate || options.replicateFrom) {
    PartitionChoice given{"rows", options.replicate, options.replicateFrom};
    report = "rows (the levels --replicate and --replicate-from give)";
    return given;
  }
  std::optional<LevelPlan> plan = planLevels(context, module, options, lowering,
                                             optimize, rates, *meta, report);
  if (!plan)
    return std::nullopt;
  report = plan->report;
  return plan->choice;
}

bool mlir::gnn::addPartitionedPrograms(
    MLIRContext &context, ModuleOp module, GNNOptimizeOptions &options,
    const GNNToLLVMOptions &lowering, bool optimize,
    const PartitionRates &rates, llvm::LLVMContext &llvmContext,
    SmallVectorImpl<SmallVector<char, 0>> &objects, std::string &report,
    std::string &error, RowsBlocks *rowsBlocks) {
  if (rowsBlocks)
    *rowsBlocks = RowsBlocks::None;
  std::optional<DatasetMeta> meta;
  if (!options.meta.empty()) {
    FailureOr<DatasetMeta> read =
        readDatasetMeta(options.meta.getValue(), error);
    if (failed(read))
      return false;
    meta = *read;
  }
  // Both partitionings; with the sizes (and no --replicate), the rows one
  // with the levels the per-level plan replicates. The plan weighs time,
  // the start-up's vote the memory each process has left: of the two the
  // plan's moves fewer bytes, which the start-up prefers where it fits; a
  // replicated rows program that does not fit (it holds the whole graph)
  // leaves features, and where that does not fit either, preloading (the
  // executable holds one rows program).
  SmallVector<PartitionChoice, 2> choices = {
      {"rows", options.replicate, options.replicateFrom}, {"features", 0}};
  std::string planned;
  std::optional<LevelPlan> plan;
  if (meta && options.replicate == 0 && options.replicateFrom == 0) {
    std::string why;
    plan = planLevels(context, module, options, lowering, optimize, rates,
                      *meta, why);
    if (plan) {
      if (plan->choice.mode == "rows")
        choices[0] = plan->choice;
      planned = plan->report;
    }
  }
  std::string held = "preload", said;
  for (PartitionChoice c : choices) {
    // What the plan lowered already, else a lowering now.
    Lowered l = plan ? plan->take(c) : Lowered();
    if (!l)
      l = lowerChoice(context, module, options, lowering, optimize, c, meta);
    // A planned prefix and suffix together were not lowered by the plan:
    // where they do not compile, the rows program splits every level.
    if (!l && !planned.empty() && c.mode == "rows" &&
        (c.replicate || c.replicateFrom)) {
      c = {"rows", 0, 0};
      l = lowerChoice(context, module, options, lowering, optimize, c, meta);
    }
    std::string name = c.mode;
    if (c.replicate || c.replicateFrom)
      name += " (" +
              (c.replicate ? std::to_string(c.replicate) + " level(s)" : "") +
              (c.replicate && c.replicateFrom ? " and " : "") +
              (c.replicateFrom
                   ? "those from " + std::to_string(c.replicateFrom) + " on"
                   : "") +
              " replicated)";
    if (!l) {
      said += (said.empty() ? "" : ", ") + c.mode + " refused: " + l.why;
      continue;
    }
    if (meta)
      said +=
          (said.empty() ? "" : ", ") + name + " " + megabytes(l.bytes.total());
    if (!emitSuffixed(*l.module, c.mode, llvmContext, objects, error))
      return false;
    held += ", " + name;
    // The rows program again with the rows several kernels read staged for
    // each (--stage-shared-rows), where that changes it (GAT, G-GCN): the
    // executable takes it where a process's part does not fit with those
    // rows all-gathered (docs/Distributed.md, "Rows that several kernels
    // read").
    if (c.mode == "rows" && !lowering.stageSharedRows) {
      GNNToLLVMOptions staging;
      staging.copyOptionValuesFrom(lowering);
      staging.stageSharedRows = true;
      Lowered shared =
          lowerChoice(context, module, options, staging, optimize, c, meta);
      if (shared && modelInfo(*shared.module) != modelInfo(*l.module)) {
        if (!emitSuffixed(*shared.module, "rows_shared", llvmContext, objects,
                          error))
          return false;
        held += ", " + name + " with shared rows staged";
        if (meta)
          said += ", " + name + " with shared rows staged " +
                  megabytes(shared.bytes.total());
      }
    }
    if (rowsBlocks && c.mode == "rows")
      *rowsBlocks = c.replicate || c.replicateFrom ? RowsBlocks::Always
                                                   : RowsBlocks::WhereReordered;
  }
  report = "the executable holds the " + held +
           " programs and picks one at start-up under mpirun";
  if (meta)
    report += " (per epoch each of N processes moves (N-1)/N x at the "
              "dataset's sizes: " +
              said + ")";
  if (!planned.empty())
    report += "; the per-level plan chose " + planned;
  else if (!said.empty())
    report += " (" + said + ")";
  return true;
}

/// The aggregations `module`'s optimization reorders after a linear (the
/// remarks of --gnn-reorder-aggregate), on a copy.
static unsigned reorderedAggregations(MLIRContext &context, ModuleOp module,
                                      const GNNOptimizeOptions &options) {
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
  PassManager pm(&context);
  buildGNNOptimizePipeline(pm, options);
  unsigned reordered = 0;
  ScopedDiagnosticHandler count(&context, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Remark &&
        StringRef(d.str()).starts_with("aggregation reordered"))
      ++reordered;
    return success();
  });
  if (failed(pm.run(*copy)))
    return 0;
  return reordered;
}

/// The `partition`-partitioned program replicating no level, reordered as
/// `reorder` says (lowerReordered), emitted into `objects` with its
/// definitions suffixed _blocks_<partition>. `added` says whether it was;
/// `why` why not where it did not compile. False with `error` where it
/// fails to emit.
static bool addBlocksForm(MLIRContext &context, ModuleOp module,
                          const GNNOptimizeOptions &options,
                          const GNNToLLVMOptions &lowering, bool optimize,
                          StringRef partition, StringRef reorder,
                          llvm::LLVMContext &llvmContext,
                          SmallVectorImpl<SmallVector<char, 0>> &objects,
                          bool &added, std::string &why, std::string &error) {
  added = false;
  OwningOpRef<ModuleOp> lowered = lowerReordered(
      context, module, options, lowering, optimize, partition, reorder, why);
  if (!lowered)
    return true;
  if (!emitSuffixed(*lowered, ("blocks_" + partition).str(), llvmContext,
                    objects, error))
    return false;
  added = true;
  return true;
}

bool mlir::gnn::addBlocksProgram(MLIRContext &context, ModuleOp module,
                                 GNNOptimizeOptions &options,
                                 const GNNToLLVMOptions &lowering,
                                 bool optimize, llvm::LLVMContext &llvmContext,
                                 SmallVectorImpl<SmallVector<char, 0>> &objects,
                                 std::string &report, std::string &error,
                                 bool planned, RowsBlocks rowsBlocks) {
  const unsigned reordered =
      optimize && options.reorder == "auto"
          ? reorderedAggregations(context, module, options)
          : 0;
  if (reordered == 0 && !planned) {
    report = "mini-batch training runs the program compiled (no "
             "aggregation was reordered)";
    return addPartitionedBlocksPrograms(
        context, module, options, lowering, optimize, llvmContext, objects,
        /*features=*/false, rowsBlocks, reordered, report, error);
  }
  std::string why;
  OwningOpRef<ModuleOp> lowered = lowerReordered(
      context, module, options, lowering, optimize, "none", "never", why);
  if (!lowered) {
    report = "mini-batch training runs the program compiled (the blocks "
             "program did not compile: " +
             why + ")";
    return true;
  }
  if (!emitSuffixed(*lowered, "blocks", llvmContext, objects, error))
    return false;
  if (planned) {
    report = "mini-batch training runs a program that keeps every buffer "
             "resident (the budget's plan is the whole graph's evaluation's)";
    if (reordered > 0)
      report += " and the " + std::to_string(reordered) +
                " reordered aggregation(s) before their linear";
    // P³'s and co-batches' forms likewise (every buffer resident, as the
    // partitioned programs under a plan).
    return addPartitionedBlocksPrograms(
        context, module, options, lowering, optimize, llvmContext, objects,
        /*features=*/true, rowsBlocks, reordered, report, error);
  }
  report = "mini-batch training runs a program that keeps the " +
           std::to_string(reordered) +
           " reordered aggregation(s) before their linear (on a sampled "
           "block the linear would run on the block's sources)";
  // P³'s step on blocks (--partition features under mpirun): where an
  // aggregation before the first contraction was reordered, the
  // feature-partitioned program with those first, so that layer 1's sync
  // moves its destinations' rows (|V_1|), not every source's. (The later
  // layers run on the own share: the compiled order, which the cost model
  // chose, serves them; a P3 step with every aggregation first was slower
  // at the arxiv shape, 2.2 against 1.7 s per epoch.) Co-batches' (rows
  // under mpirun) likewise, where the executable holds a rows program
  // without replicated levels: layer 1's GEMM then runs on each process's
  // destinations of level 1, not on its every row, for broadcasts of the
  // features' width (at the Reddit shape the epoch went from 44 to 29 s
  // with every aggregation first; at the arxiv shape, where only layer 2
  // was reordered, every aggregation first was 6 % slower).
  return addPartitionedBlocksPrograms(
      context, module, options, lowering, optimize, llvmContext, objects,
      /*features=*/true, rowsBlocks, reordered, report, error);
}

bool mlir::gnn::addPartitionedBlocksPrograms(
    MLIRContext &context, ModuleOp module, GNNOptimizeOptions &options,
    const GNNToLLVMOptions &lowering, bool optimize,
    llvm::LLVMContext &llvmContext,
    SmallVectorImpl<SmallVector<char, 0>> &objects, bool features,
    RowsBlocks rows, std::optional<unsigned> reordered, std::string &report,
    std::string &error) {
  if (!features && rows == RowsBlocks::None)
    return true; // no form to add: nothing to count
  // Whether keep-first reorders fewer aggregations than the compiled order
  // (else each partitioned program is the same on blocks).
  bool differs = false;
  if (optimize && options.reorder == "auto") {
    if (!reordered)
      reordered = reorderedAggregations(context, module, options);
    GNNOptimizeOptions keepFirst;
    keepFirst.copyOptionValuesFrom(options);
    keepFirst.reorderKeepFirst = true;
    differs = *reordered > 0 &&
              reorderedAggregations(context, module, keepFirst) != *reordered;
  }
  struct Mode {
    StringRef partition, runner, form;
  };
  SmallVector<Mode, 2> modes;
  if (features && differs)
    modes.push_back({"features", "P3 runs its", "feature-partitioned"});
  // Co-batches bind no whole graph, which a rows program replicating levels
  // reads: where the one held does, theirs replicates none, whatever the
  // order.
  if ((rows == RowsBlocks::WhereReordered && differs) ||
      rows == RowsBlocks::Always)
    modes.push_back({"rows", "co-batches run their", "row-partitioned"});
  for (const Mode &m : modes) {
    bool added = false;
    std::string why;
    if (!addBlocksForm(context, module, options, lowering, optimize,
                       m.partition, differs ? "keep-first" : "", llvmContext,
                       objects, added, why, error))
      return false;
    // Where the rows program held replicates levels, co-batches have no
    // other.
    const bool only = m.partition == "rows" && rows == RowsBlocks::Always;
    if (added)
      report += (report.empty() ? "" : ", and ") + m.runner.str() + " " +
                m.form.str() + " form" + (only ? " replicating no level" : "") +
                (differs ? "" : " (in the order compiled)");
    else if (!why.empty())
      report += (report.empty() ? "" : "; ") +
                (only ? "co-batches are refused"
                      : m.runner.str() + " " + m.form.str() +
                            " program as compiled") +
                " (its blocks form did not compile: " + why + ")";
  }
  return true;
}
