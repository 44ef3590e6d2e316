//===- Pipelines.h - gnn pass pipelines -------------------------*- C++ -*-===//
//
// One definition of each pipeline, used by gnn-opt (as a registered pipeline)
// and by gnn-compile (directly).
//
//===----------------------------------------------------------------------===//

#ifndef GNN_PIPELINES_PIPELINES_H
#define GNN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir::gnn {

/// Options of `gnn-optimize-pipeline` (and of `gnn-train-pipeline`).
struct GNNOptimizeOptions : public PassPipelineOptions<GNNOptimizeOptions> {
  Option<bool> hoist{*this, "hoist",
                     llvm::cl::desc("Run --gnn-hoist-apply-edge"),
                     llvm::cl::init(true)};
  Option<std::string> reorder{
      *this, "reorder",
      llvm::cl::desc("--gnn-reorder-aggregate: auto (cost model), always, or "
                     "never (the pass does not run)"),
      llvm::cl::init("auto")};
  Option<bool> reorderKeepFirst{
      *this, "reorder-keep-first",
      llvm::cl::desc("--gnn-reorder-aggregate's keep-first: leave the "
                     "aggregations no contraction precedes (P3's blocks "
                     "program)"),
      llvm::cl::init(false)};
  Option<std::string> meta{
      *this, "meta",
      llvm::cl::desc("A dataset's meta.json: widths and average degree for "
                     "--gnn-reorder-aggregate's cost model"),
      llvm::cl::init("")};
  Option<bool> factor{
      *this, "factor",
      llvm::cl::desc("Run --gnn-factor-edge-scale after the reordering"),
      llvm::cl::init(true)};
  Option<std::string> partition{
      *this, "partition",
      llvm::cl::desc("how the training program is split over processes: "
                     "'none' (whole rows on every process; shared "
                     "preloading needs no IR change), 'rows' "
                     "(--gnn-partition-rows before --gnn-autodiff) or "
                     "'features' (--gnn-partition-features there)"),
      llvm::cl::init("none")};
  Option<int64_t> replicate{
      *this, "replicate",
      llvm::cl::desc("With partition=rows: the levels (hops) whose ops run "
                     "replicated on the whole graph (--gnn-partition-rows "
                     "replicate=k)"),
      llvm::cl::init(0)};
  Option<int64_t> replicateFrom{
      *this, "replicate-from",
      llvm::cl::desc("With partition=rows: the first level (hop) of the "
                     "replicated suffix (--gnn-partition-rows "
                     "replicate-from=m; 0: none)"),
      llvm::cl::init(0)};
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Run --gnn-fuse-sag after --gnn-autodiff "
                                   "(gnn-train-pipeline only)"),
                    llvm::cl::init(true)};
  Option<bool> share{
      *this, "share",
      llvm::cl::desc("Run --gnn-share-contractions after --gnn-autodiff "
                     "(gnn-train-pipeline only)"),
      llvm::cl::init(true)};
  Option<bool> evalLevels{
      *this, "eval-levels",
      llvm::cl::desc("Run --gnn-split-eval-levels last (layer-wise "
                     "evaluation; gnn-train-pipeline only)"),
      llvm::cl::init(false)};
};

/// The gnn-to-gnn optimisation of a forward model (DESIGN.md's order):
/// --gnn-hoist-apply-edge, canonicalisation and CSE (merging the hoisted
/// products of both sides), --gnn-reorder-aggregate, canonicalisation and
/// CSE, --gnn-factor-edge-scale, canonicalisation and CSE.
void buildGNNOptimizePipeline(OpPassManager &pm,
                              const GNNOptimizeOptions &options);

/// Model to training program: gnn-optimize-pipeline (unless `optimize` is
/// false), --gnn-autodiff, then --gnn-fuse-sag (`fuse`), canonicalisation
/// and CSE, then --gnn-share-contractions (`share`, with `optimize`),
/// canonicalisation and CSE, --gnn-defer-transposes (with `optimize`), and
/// --gnn-split-eval-levels (`eval-levels`). gnn-compile's front half.
void buildGNNTrainPipeline(OpPassManager &pm, const GNNOptimizeOptions &options,
                           bool optimize = true);

/// Options of `gnn-to-llvm-pipeline`.
struct GNNToLLVMOptions : public PassPipelineOptions<GNNToLLVMOptions> {
  Option<int64_t> edgeCacheFloats{
      *this, "edge-cache-floats",
      llvm::cl::desc("--convert-gnn-to-runtime: floats per edge that kernels "
                     "may keep for later kernels (0: none)"),
      llvm::cl::init(16)};
  Option<std::string> meta{
      *this, "meta",
      llvm::cl::desc("--convert-gnn-to-runtime: a dataset's meta.json, whose "
                     "sizes the slot plan compares buffers at")};
  Option<int64_t> memBudget{
      *this, "mem-budget",
      llvm::cl::desc("--convert-gnn-to-runtime: bytes the run may keep "
                     "resident (0: no limit)"),
      llvm::cl::init(0)};
  Option<int64_t> bufferBudget{
      *this, "buffer-budget",
      llvm::cl::desc("--convert-gnn-to-runtime: bytes the slot buffers may "
                     "use at once (0: no limit)"),
      llvm::cl::init(0)};
  Option<std::string> placement{
      *this, "placement",
      llvm::cl::desc("--convert-gnn-to-runtime: optimal, lru, belady or "
                     "streaming"),
      llvm::cl::init("optimal")};
  Option<int64_t> rowChunks{
      *this, "row-chunks",
      llvm::cl::desc("--convert-gnn-to-runtime: row chunks of each vertex "
                     "stage (1: whole)"),
      llvm::cl::init(1)};
  Option<std::string> tileOrder{
      *this, "tile-order",
      llvm::cl::desc("--convert-gnn-to-runtime: with row chunks, column-row "
                     "or row-column order of an aggregation's tiles"),
      llvm::cl::init("column-row")};
  Option<bool> longRowPieces{
      *this, "long-row-pieces",
      llvm::cl::desc("--convert-gnn-to-runtime: on the CPU target too, fused "
                     "gathers leave the rows the runtime splits to kernels "
                     "over their pieces (tests; the CUDA target always does)"),
      llvm::cl::init(false)};
  Option<bool> levelRows{
      *this, "level-rows",
      llvm::cl::desc("--convert-gnn-to-runtime: the training step's steps "
                     "compute their level's rows only (a sampled batch's "
                     "per-layer blocks)"),
      llvm::cl::init(false)};
  Option<bool> stageSharedRows{
      *this, "stage-shared-rows",
      llvm::cl::desc("--convert-gnn-to-runtime: an all-gather read by "
                     "several compiled kernels arrives in broadcast stages "
                     "for each of them (row partitioning)"),
      llvm::cl::init(false)};
  Option<bool> featuresOutOfCore{
      *this, "features-out-of-core",
      llvm::cl::desc("--convert-gnn-to-runtime: the features stay on "
                     "storage, read by row chunks as the placement plans"),
      llvm::cl::init(false)};
  Option<bool> selectiveCosts{
      *this, "selective-costs",
      llvm::cl::desc("--convert-gnn-to-runtime: a tile input fetched for its "
                     "tile alone costs the placement the rows it reads where "
                     "selective loading would read only those"),
      llvm::cl::init(true)};
  Option<bool> graphOutOfCore{
      *this, "graph-out-of-core",
      llvm::cl::desc("--convert-gnn-to-runtime: the graph's per-edge arrays "
                     "stay on storage, read by row chunks' windows"),
      llvm::cl::init(false)};
  Option<int64_t> graphWindowEdges{
      *this, "graph-window-edges",
      llvm::cl::desc("--convert-gnn-to-runtime: the most edges of a row "
                     "chunk (0: twice the edges over the chunks)"),
      llvm::cl::init(0)};
  Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("gnn-kernels-to-ptx-pipeline: the GPU architecture the "
                     "PTX is for"),
      llvm::cl::init("sm_80")};
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("--convert-gnn-to-runtime: cpu or cuda (the kernels "
                     "compiled to PTX, launched with the gpu dialect's "
                     "launches)"),
      llvm::cl::init("cpu")};
  Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("gnn-kernels-to-ptx-pipeline: the CUDA toolkit whose "
                     "libdevice the kernels' math functions link (default: "
                     "$CUDA_ROOT, $CUDA_HOME or $CUDA_PATH)"),
      llvm::cl::init("")};
};

/// Lowers a module that went through --gnn-autodiff to the LLVM dialect:
/// --convert-gnn-to-runtime, then the upstream conversions of scf, math,
/// arith, memref, cf and func.
void buildGNNToLLVMPipeline(OpPassManager &pm, const GNNToLLVMOptions &options);

/// The CUDA target's kernels as PTX: --convert-gnn-to-runtime with
/// target=cuda, then the kernels' gpu.module through MLIR's NVVM path
/// (convert-gpu-to-nvvm, nvvm-attach-target, gpu-module-to-binary with
/// format=isa) into a gpu.binary holding PTX for `chip`. The host function
/// is left as the lowering made it.
void buildGNNKernelsToPTXPipeline(OpPassManager &pm,
                                  const GNNToLLVMOptions &options);

/// Registers the named pipelines with the global registry.
void registerGNNPipelines();

} // namespace mlir::gnn

#endif // GNN_PIPELINES_PIPELINES_H
