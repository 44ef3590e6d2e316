//===- FunctionLowering.h - one gnn function to runtime calls ---*- C++ -*-===//
//
// Lowers @gnn_train_step or @gnn_eval into a new function
// `(ctx: !llvm.ptr) -> f32` op by op: the whole-graph ops here (inputs,
// degrees, scatters and gathers, the SpMM of a gather of a scatter,
// parameter-gradient reductions, the loss, the optimizer), stages through
// StageLowering, fused gathers through FusedGatherLowering. It owns the
// function's parts (docs/Compiler.md, "The lowering's parts").
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_CONVERSION_GNNTORUNTIME_FUNCTIONLOWERING_H
#define GNN_LIB_CONVERSION_GNNTORUNTIME_FUNCTIONLOWERING_H

#include "Buffers.h"
#include "FusedGatherLowering.h"
#include "KernelEmitter.h"
#include "RowLevels.h"
#include "RowLowering.h"
#include "SlotPlanner.h"
#include "StageLowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

#include <map>

namespace mlir::gnn {

class FunctionLowering {
public:
  /// `edgeInputs`: the model's edge inputs, in the runtime's order;
  /// `edgeCacheFloats`: floats per edge the fused kernels may keep; `gpu`:
  /// kernels as gpu.func (the CUDA target) instead of CPU functions.
  FunctionLowering(ModuleOp module, func::FuncOp source,
                   ArrayRef<std::string> edgeInputs, int64_t edgeCacheFloats,
                   bool gpu = false);

  /// Runs each vertex stage's code as `chunks` row chunks (RowChunks.h);
  /// before run().
  /// Restricts a training step's steps to the rows of their level of a
  /// model of `hops` hops (RowLevels.h: a sampled batch's per-layer
  /// blocks); before run(), not with row chunks.
  void setLevels(int64_t hops) {
    numLevels = hops;
    fusedGathers.setTiles(hops > 0 && !gpu);
  }
  /// After run(): a step that the levels ask to restrict could not be (the
  /// function must be lowered again without levels), or null.
  Operation *getLevelsRefusedBy() const { return levelsRefusedBy; }
  /// After run(): the steps restricted to their level's rows.
  int64_t getRestrictedSteps() const { return restrictedSteps; }
  /// Fused gathers' long rows in pieces (emitFusedGatherKernel); before
  /// run(). Tiles (row chunks, level rows) keep every row whole.
  void setLongRowPieces(bool enable) { fusedGathers.setLongRowPieces(enable); }
  /// Row partitioning: an all-gather that several compiled kernels read
  /// arrives in broadcast stages for each (planStagedGathers).
  void setStageSharedRows(bool enable) { stageSharedRows = enable; }
  void setRowChunks(int64_t chunks) {
    rowChunks = chunks;
    fusedGathers.setTiles(chunks > 1 && !gpu);
    buffers.setReleaseBetweenStepsOnly(chunks > 1);
    slots.setSeparateRowBuffers(chunks > 1 && !gpu);
  }
  /// Reads the features as row chunks from storage (gnnrtFeaturesChunks),
  /// which the placement fetches; before run().
  void setFeaturesOutOfCore(bool outOfCore) { featuresOutOfCore = outOfCore; }
  /// The graph out of core: row chunks open windows of their edges
  /// (RowChunks.h).
  void setGraphOutOfCore(bool outOfCore) { lb.graphOutOfCore = outOfCore; }
  /// Row chunks' aggregation tiles in row-column order (RowChunks.cpp).
  void setRowColumnTiles(bool enable) { lb.rowColumnTiles = enable; }
  /// After run(): the steps whose tiles ran in row-column order.
  int64_t getRowColumnSteps() const { return lb.rowColumnSteps; }
  /// After planSlots(): the features' slot (one no buffer of any function
  /// uses), when they are read out of core.
  void setFeaturesSlot(int64_t slot) { placement.setFeaturesSlot(slot); }
  /// After run(): the steps run in row chunks, of how many over the vertices
  /// (vertex stages, aggregations, outer sums).
  std::pair<int64_t, int64_t> getChunkedStages() const {
    return {chunkedStages, vertexStages};
  }
  /// The steps over the vertices with row work that run whole in row
  /// chunks: each the step's op, where it is, and the lowered op that cannot
  /// run over fewer rows ("gnn.sum_rows at m.mlir:9:3 (func.call
  /// @gnnrtFoo)").
  ArrayRef<std::string> getWholeStages() const { return wholeStages; }

  /// Layer-wise evaluation (--gnn-split-eval-levels): the row width of
  /// each cut, as size keys of its row dimensions, which the evaluation's
  /// lowering records (at its ops' `gnn.cuts`) and a level function's reads
  /// (its `level.<k>` inputs); before run().
  using CutDims = std::map<int64_t, SmallVector<SizeKey>>;
  void setCutDims(CutDims *dims) { cutDims = dims; }
  /// After run() of a level function below the last: each cut it leaves
  /// (gnnrtSetLevelOutput) and its row size.
  ArrayRef<std::pair<int64_t, SizeKey>> getLevelOutputs() const {
    return levelOutputs;
  }
  /// After run() of a level function: the cuts it reads.
  ArrayRef<int64_t> getLevelInputs() const { return levelInputs; }

  /// Builds `<name>_lowered`, the lowered function.
  LogicalResult run(bool training);
  /// After run(): numbers the function's slots (SlotPlanner::plan).
  void planSlots(const DenseMap<StringRef, int64_t> &estimates) {
    slots.plan(estimates);
  }
  /// After planSlots(): keeps the buffers within `capacity` bytes at once
  /// (BufferPlacement), when they do not all fit.
  /// `chunkEdges`: the in-edges of each row chunk (BufferPlacement::place).
  LogicalResult placeBuffers(const DenseMap<StringRef, int64_t> &estimates,
                             ArrayRef<int64_t> chunkEdges,
                             const TileInputRows *tileRows, uint64_t capacity,
                             PlacementStrategy strategy,
                             BufferPlacementReport &report) {
    LogicalResult result =
        placement.place(lowered, source, slots, estimates, chunkEdges, tileRows,
                        capacity, strategy, rowChunks, lb, report);
    planned = succeeded(result) && report.planned;
    return result;
  }
  /// Whether placeBuffers moved anything (not everything fit).
  bool isPlanned() const { return planned; }
  /// gnnrtDropAll first (BufferPlacement::emitDropAll).
  void dropAllAtStart() { BufferPlacement::emitDropAll(lowered, lb); }
  /// After run(): the row collectives of a row-partitioned function, in
  /// order: the runtime entry point's kind ("allgather", "broadcast",
  /// "reduce_scatter") and the row width's size key.
  ArrayRef<std::pair<std::string, SizeKey>> getRowCollectives() const {
    return rowCollectives;
  }
  /// After planSlots(): each buffer's slot and size.
  SmallVector<std::pair<int64_t, SizeKey>> getPlannedSizes() const {
    return slots.getPlannedSizes();
  }

private:
  LogicalResult lowerTop(Operation *op);
  /// Binds the function's arguments to the runtime's parameters.
  LogicalResult bindParameters();
  /// Finds the gathers of a scatter (optionally scaled per edge by an
  /// apply_edge that multiplies the scattered row by a scalar edge row) that
  /// become one gnnrtSpmm call with no edge tensor, and the ops they fold.
  void planAggregations(Block &body);

  LogicalResult lowerAggregation(GatherOp g);
  LogicalResult lowerInput(InputOp in);
  LogicalResult lowerDegree(DegreeOp d);
  LogicalResult lowerScatter(ScatterOp s);
  LogicalResult lowerGather(GatherOp g);
  LogicalResult lowerSumRows(SumRowsOp sr);
  LogicalResult lowerOuterSum(OuterSumOp os);
  LogicalResult lowerTypedOuterSum(TypedOuterSumOp ts);
  LogicalResult lowerGatherGrad(GatherGradOp gg);
  LogicalResult lowerTensorAdd(TensorAddOp ta);
  /// An all-gather or reduce-scatter: `call` from `input`'s rows to
  /// `rows` rows of `result`, recorded with its width as `kind`; a row copy
  /// (gnn.own_rows, gnn.pad_rows) with `kind` empty, not recorded.
  LogicalResult lowerRowCollective(Value input, Value result, Value rows,
                                   rt::Call call, StringRef kind,
                                   std::optional<int64_t> level = {});
  /// Feature partitioning's collectives between the own rows and the
  /// whole graph's (gnnrtAllGatherWhole, gnnrtReduceScatterWhole): the
  /// level of the rows a sampled batch needs them at (the level plan's, or
  /// syncLevels for a sync and its adjoint; 0: every row).
  int64_t wholeLevel(Operation *op, std::optional<int64_t> sync) const;
  LogicalResult lowerLoss(SoftmaxCrossEntropyOp ce);
  LogicalResult lowerLossGrad(SoftmaxCrossEntropyGradOp ceg);
  LogicalResult lowerOptimizerUpdate(OptimizerUpdateOp up);

  ModuleOp module;
  func::FuncOp source;
  func::FuncOp lowered; // after run()
  bool planned = false; // after placeBuffers()
  int64_t rowChunks = 1;
  bool stageSharedRows = false;
  int64_t numLevels = 0;
  std::optional<LevelPlan> levelPlan;
  /// n_0 .. n_L (index), read at the function's start, of the own rows and
  /// (feature partitioning) of the whole graph.
  SmallVector<Value> levelRows, wholeLevelRows;
  /// Feature partitioning: whether `v`'s rows are the whole graph's (its
  /// ops', an all-gather's, an aggregation's to the sources) rather than
  /// the own rows', and the same for the rows a step computes (its results',
  /// or its operands' when it has no row result).
  bool hasWholeRows(Value v) const;
  bool stepHasWholeRows(Operation &op) const;
  Operation *levelsRefusedBy = nullptr;
  int64_t restrictedSteps = 0;
  /// The step just lowered (`op`, its code after `before`) over its
  /// level's rows, then its fills.
  void restrictToLevel(Operation &op, Operation *before, Block &entry);
  bool featuresOutOfCore = false;
  Value featuresChunks; // their memref, once taken
  CutDims *cutDims = nullptr;
  SmallVector<std::pair<int64_t, SizeKey>> levelOutputs;
  SmallVector<int64_t> levelInputs;
  /// Records the row dimensions of `op`'s results that are cuts.
  void recordCutDims(Operation &op);
  bool gpu;
  int64_t chunkedStages = 0, vertexStages = 0; // after run()
  SmallVector<std::string> wholeStages;
  ArrayRef<std::string> edgeInputs;

  // The parts, bottom up.
  LoweringBuilder lb;
  SlotPlanner slots;
  BufferPlacement placement;
  Buffers buffers;
  std::unique_ptr<KernelEmitter> kernels;
  RowLowering rowOps;
  StageLowering stages;
  FusedGatherLowering fusedGathers;

  /// A gather folded into an SpMM: the scatter's input and the per-edge
  /// weights (a scalar-row edge tensor, or null).
  struct Aggregation {
    Value vertexInput;
    Value weights;
  };
  DenseMap<Operation *, Aggregation> aggregations;
  /// Row partitioning: all-gathers whose one reader aggregates their rows
  /// to the destinations as an SpMM, which gets the own rows (the value)
  /// and runs over broadcast stages (gnnrtSpmmBroadcast) instead; or whose
  /// readers (one, or with stageSharedRows several) are compiled kernels
  /// that run once per stage.
  DenseMap<Value, Value> stagedGathers;
  /// And aggregations to the source (a sum SpMM) whose one reader is a
  /// reduce-scatter, which they run with in reduce stages
  /// (gnnrtSpmmReduce): aggregation result -> reduce-scatter result.
  DenseMap<Value, Value> stagedReduces;
  /// Under level rows: the level of each staged reduce's result.
  DenseMap<Value, int64_t> stagedReduceLevels;
  /// Feature partitioning: selects the whole graph or the own rows' for
  /// the ops lowered next (gnnrtUseGraph when it changes) and their sizes.
  void useGraph(bool whole);
  GraphSizes wholeSizes;
  bool onWholeGraph = false;
  SmallVector<std::pair<std::string, SizeKey>> rowCollectives;
  /// Each sync's level: the hops of its input (valueHops).
  DenseMap<int64_t, int64_t> syncLevels;
  void planStagedGathers(Block &body);
  llvm::DenseSet<Operation *> skipped;
  /// Loss gradients computed by their loss's runtime call.
  DenseMap<Operation *, Tensor> lossGrads;
  Value loss;
  /// The parameters whose gradients are written and whose updates wait for
  /// the last one (gnnrtSumGradients in between).
  SmallVector<int64_t> pendingUpdates;
  /// Each parameter's final gradient (an optimizer update's operand) and the
  /// parameter; those written to the parameter's gradient and announced
  /// (gnnrtGradientReady) as soon as the op defining them is lowered, so
  /// that their sum over the processes starts during the backward.
  DenseMap<Value, int64_t> gradientOf;
  llvm::DenseSet<int64_t> announced;
  void writeGradient(Value grad, int64_t index);
  void announceGradients(Operation *op);
};

} // namespace mlir::gnn

#endif // GNN_LIB_CONVERSION_GNNTORUNTIME_FUNCTIONLOWERING_H
