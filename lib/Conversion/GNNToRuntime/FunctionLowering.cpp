//===- FunctionLowering.cpp - one gnn function to runtime calls -----------===//

#include "FunctionLowering.h"

#include "RowChunks.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::gnn;

FunctionLowering::FunctionLowering(ModuleOp module, func::FuncOp source,
                                   ArrayRef<std::string> edgeInputs,
                                   int64_t edgeCacheFloats, bool gpu)
    : module(module), source(source), gpu(gpu), edgeInputs(edgeInputs),
      lb(module, source.getLoc()), buffers(lb, slots, placement),
      kernels(gpu ? createGPUKernelEmitter(module, lb)
                  : createCPUKernelEmitter(module, lb)),
      rowOps(lb, buffers), stages(lb, buffers, *kernels, rowOps),
      fusedGathers(lb, buffers, *kernels, edgeCacheFloats) {}

/// "gnn.sum_rows at m.mlir:9:3 (func.call @gnnrtFoo)": a step that runs
/// whole in row chunks, and the lowered op of it that cannot run over fewer
/// rows.
static std::string describeWholeStage(Operation *step, Operation *by) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << step->getName();
  if (auto at = dyn_cast<FileLineColLoc>(step->getLoc()))
    os << " at " << at.getFilename().getValue() << ":" << at.getLine() << ":"
       << at.getColumn();
  os << " (" << by->getName();
  if (auto call = dyn_cast<func::CallOp>(by))
    os << " @" << call.getCallee();
  os << ")";
  return text;
}

LogicalResult FunctionLowering::run(bool training) {
  ArrayRef<Type> results = source.getFunctionType().getResults();
  // A level of a layer-wise evaluation below the last leaves its cuts
  // (gnn.level_outputs) instead of a loss and logits.
  auto cutsOut = source->getAttrOfType<DenseI64ArrayAttr>(
      GNNDialect::kLevelOutputsAttrName);
  const bool level = source->hasAttr(GNNDialect::kEvalLevelAttrName);
  if (!cutsOut && (results.size() < 2 || !results[0].isF32() ||
                   !isa<VertexTensorType>(results[1])))
    return source.emitOpError()
           << "must return the loss (f32) and the logits (a vertex tensor) "
              "first, but its type is "
           << source.getFunctionType();
  MLIRContext *mctx = module.getContext();
  Location loc = lb.loc;
  Type ptr = LLVM::LLVMPointerType::get(mctx);
  OpBuilder mb(mctx);
  mb.setInsertionPointAfter(source);
  StringRef name = training ? StringRef(GNNDialect::kTrainStepName)
                   : level  ? source.getSymName()
                            : StringRef(GNNDialect::kEvalName);
  auto fn = mb.create<func::FuncOp>(
      loc, (name + "_lowered").str(),
      FunctionType::get(mctx, {ptr}, {lb.b.getF32Type()}));
  lowered = fn;
  Block *entry = fn.addEntryBlock();
  lb.b.setInsertionPointToStart(entry);
  lb.ctx = entry->getArgument(0);
  fusedGathers.collect(source);
  auto dim = [&](int64_t which) {
    return lb.toIndex(lb.b,
                      lb.call(rt::Call::gnnrtDim, {lb.ctx, lb.cI64(which)}));
  };
  lb.sizes.numV = dim(0);
  lb.sizes.numS = getPartition(source).empty() ? lb.sizes.numV : dim(4);
  lb.sizes.numE = dim(1);
  lb.sizes.numF = dim(2);
  lb.sizes.numC = dim(3);
  lb.featureShards = isFeaturePartitioned(source);
  if (!getPartition(source).empty() && usesWholeGraph(source)) {
    lb.sizes.numEW = dim(5);
    wholeSizes = lb.sizes;
    wholeSizes.numV = lb.sizes.numS;
    wholeSizes.numE = lb.sizes.numEW;
  }
  lb.ownSizes = lb.sizes;
  lb.partitioned = !getPartition(source).empty();
  if (lb.featureShards) {
    DenseMap<Value, int64_t> hops;
    valueHops(source.getBody().front(), hops);
    for (auto rs : source.getBody().getOps<ReduceScatterOp>())
      if (std::optional<int64_t> sync = rs.getSync())
        syncLevels[*sync] = hops.lookup(rs.getInput());
  }
  if (failed(bindParameters()))
    return failure();
  if (numLevels > 0 && (training || level)) {
    // A partitioned program's aggregations to the own rows' sources (the
    // whole graph's rows; staged by reduces on a split graph) compute
    // every row.
    llvm::DenseSet<Operation *> everyRow;
    if (lb.partitioned)
      for (Operation &op : source.getBody().front()) {
        auto fg = dyn_cast<FusedGatherOp>(op);
        auto g = dyn_cast<GatherOp>(op);
        if ((fg && fg.getSide() == Side::Src && !isWholeGraph(fg.getGraph())) ||
            (g && g.getSide() == Side::Src && !isWholeGraph(g.getGraph())))
          everyRow.insert(&op);
      }
    levelPlan = planRowLevels(
        source, numLevels, edgeCachePairs(source.getBody().front()), everyRow);
    for (int64_t l = 0; l <= numLevels; ++l) {
      levelRows.push_back(lb.toIndex(
          lb.b, lb.call(rt::Call::gnnrtLevelRows, {lb.ctx, lb.cI64(l)})));
      if (wholeSizes.numEW)
        wholeLevelRows.push_back(
            lb.toIndex(lb.b, lb.call(rt::Call::gnnrtWholeLevelRows,
                                     {lb.ctx, lb.cI64(l)})));
    }
  }

  Block &body = source.getBody().front();
  planAggregations(body);
  planStagedGathers(body);
  // A staged reduce computes its result's level (the rows the plan moves
  // for its reduce-scatter; zero beyond).
  if (levelPlan)
    for (auto &[input, reduced] : stagedReduces)
      stagedReduceLevels[reduced] =
          levelPlan->collectives.lookup(reduced.getDefiningOp());
  fusedGathers.setStages(&stagedGathers, &stagedReduces, &rowCollectives,
                         &stagedReduceLevels);
  buffers.computeLastUses(body);
  // A gather folded into an SpMM reads the scatter's input and the edge
  // weights itself (the scatter and the edge stage are not lowered).
  for (auto &[gather, agg] : aggregations)
    for (Value v : {agg.vertexInput, agg.weights})
      if (v)
        buffers.addRead(gather, v);
  // A staged SpMM or kernel reads the own rows of its all-gather.
  for (auto &[gathered, own] : stagedGathers)
    for (Operation *reader : gathered.getUsers()) {
      if (auto sc = dyn_cast<ScatterOp>(reader))
        reader = *sc->getUsers().begin();
      buffers.addRead(reader, own);
    }
  for (auto up : body.getOps<OptimizerUpdateOp>())
    if (auto arg = dyn_cast<BlockArgument>(up.getParam()))
      if (arg.getOwner() == &body && !isa<BlockArgument>(up.getGrad()))
        gradientOf.try_emplace(up.getGrad(), arg.getArgNumber());
  auto lastOp = [&]() { return entry->empty() ? nullptr : &entry->back(); };
  for (Operation &op : body.without_terminator()) {
    Operation *before = lastOp();
    placement.beginStep(&op, before);
    if (failed(lowerTop(&op)))
      return failure();
    if (op.hasAttr(GNNDialect::kCutsAttrName))
      recordCutDims(op);
    if (isa<ApplyVertexOp, OuterSumOp, SumRowsOp, SoftmaxCrossEntropyOp,
            FusedGatherOp>(op) ||
        aggregations.count(&op)) {
      ++vertexStages;
      DenseMap<Value, Value> replaced;
      bool refused = false;
      Operation *refusedBy = nullptr;
      SmallVector<RowChunkStart> starts =
          chunkStageRows(*entry, before, lastOp(), rowChunks, lb, replaced,
                         nullptr, &refused, &refusedBy);
      if (Value total = replaced.lookup(loss))
        loss = total;
      if (!starts.empty()) {
        ++chunkedStages;
        placement.recordChunks(starts);
      } else if (refused && refusedBy) {
        wholeStages.push_back(describeWholeStage(&op, refusedBy));
      }
    }
    if (levelPlan)
      restrictToLevel(op, before, *entry);
    announceGradients(&op);
    placement.endStep(lastOp());
    buffers.expireStep(buffers.indexOfOp(&op));
  }
  useGraph(false);
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  if (cutsOut) {
    // The rows of the block's destinations, read by the driver before the
    // next call.
    placement.beginStep(ret, lastOp());
    for (auto [v, k] :
         llvm::zip_equal(ret.getOperands(), cutsOut.asArrayRef())) {
      Tensor t = buffers.lookup(v);
      lb.call(rt::Call::gnnrtSetLevelOutput,
              {lb.ctx, lb.cI64(k), t.buf, lb.toI64(t.rowSize)});
      levelOutputs.push_back({k, buffers.sizeKey(t.rowSize)});
    }
    placement.endStep(lastOp());
    lb.b.create<func::ReturnOp>(
        loc, lb.b.create<arith::ConstantOp>(loc, lb.b.getF32FloatAttr(0.0f))
                 .getResult());
    return success();
  }
  // The loss is the first result, an f32: only a loss op lowers to one.
  assert(loss && "an f32 result without a loss op was not lowered");
  placement.beginStep(ret, lastOp());
  Tensor logits = buffers.lookup(ret.getOperand(1));
  lb.call(rt::Call::gnnrtSetOutput, {lb.ctx, logits.buf, loss});
  placement.endStep(lastOp());
  lb.b.create<func::ReturnOp>(loc, loss);
  return success();
}

LogicalResult FunctionLowering::bindParameters() {
  for (unsigned i = 0; i < source.getNumArguments(); ++i) {
    auto type = dyn_cast<RankedTensorType>(source.getArgumentTypes()[i]);
    if (!type || !type.getElementType().isF32())
      return source.emitOpError()
             << "has argument #" << i << " of type "
             << source.getArgumentTypes()[i]
             << "; the lowering takes only parameters (ranked f32 tensors)";
    auto binding =
        source.getArgAttrOfType<ArrayAttr>(i, GNNDialect::kDimsAttrName);
    SmallVector<Value> dims;
    for (unsigned d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d)) {
        dims.push_back(lb.cIndex(type.getDimSize(d)));
        continue;
      }
      StringRef bind = binding ? cast<StringAttr>(binding[d]).getValue() : "";
      dims.push_back(bind == kDimClasses ? lb.sizes.numC : lb.sizes.numF);
    }
    Value buf = lb.call(rt::Call::gnnrtParam, {lb.ctx, lb.cI64(i)});
    buffers.bind(source.getArgument(i),
                 buffers.make(buf, lb.cIndex(1), false, dims));
  }
  return success();
}

void FunctionLowering::planAggregations(Block &body) {
  auto isScalarEdgeRow = [](Value v) {
    auto t = dyn_cast<EdgeTensorType>(v.getType());
    if (!t || !t.getElementType().isF32())
      return false;
    ArrayRef<int64_t> shape = t.getRowShape();
    return shape.empty() || (shape.size() == 1 && shape[0] == 1);
  };
  body.walk([&](GatherOp g) {
    if (g.getAcc() != Accumulator::Sum && g.getAcc() != Accumulator::Mean)
      return;
    Side want = g.getSide() == Side::Dst ? Side::Src : Side::Dst;
    auto scatterOf = [&](Value v) -> ScatterOp {
      auto sc = v.getDefiningOp<ScatterOp>();
      return sc && sc.getSide() == want ? sc : ScatterOp();
    };
    Value in = g.getInput();
    if (ScatterOp sc = scatterOf(in)) {
      aggregations[g] = {sc.getInput(), Value()};
      return;
    }
    auto ae = in.getDefiningOp<ApplyEdgeOp>();
    if (!ae || ae.getNumResults() != 1 || !in.hasOneUse() ||
        !ae.getParams().empty())
      return;
    Block &b = ae.getBody().front();
    auto yield = cast<YieldOp>(b.getTerminator());
    Value y = yield.getValues()[0];
    auto inputOf = [&](Value v) -> Value {
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg || arg.getOwner() != &b)
        return Value();
      return ae.getInputs()[arg.getArgNumber()];
    };
    if (&b.front() == yield.getOperation()) { // pass-through
      if (ScatterOp sc = scatterOf(inputOf(y))) {
        aggregations[g] = {sc.getInput(), Value()};
        skipped.insert(ae);
      }
      return;
    }
    auto mul = y.getDefiningOp<MulOp>();
    if (!mul || &b.front() != mul.getOperation() ||
        mul->getNextNode() != yield.getOperation())
      return;
    for (auto [row, scale] : {std::pair{mul.getLhs(), mul.getRhs()},
                              std::pair{mul.getRhs(), mul.getLhs()}}) {
      ScatterOp sc = scatterOf(inputOf(row));
      Value weights = inputOf(scale);
      if (sc && weights && isScalarEdgeRow(weights) &&
          cast<RankedTensorType>(row.getType()) == mul.getType()) {
        aggregations[g] = {sc.getInput(), weights};
        skipped.insert(ae);
        return;
      }
    }
  });
  // A scatter whose every use is folded into an aggregation is not needed.
  body.walk([&](ScatterOp sc) {
    bool allFolded = llvm::all_of(sc->getUsers(), [&](Operation *user) {
      if (skipped.contains(user))
        return true;
      auto it = aggregations.find(user);
      return it != aggregations.end() && !it->second.weights &&
             user->getOperand(1) == sc.getResult();
    });
    if (allFolded && !sc->use_empty())
      skipped.insert(sc);
  });
}

/// Whether `op` runs on the whole graph (feature partitioning's first
/// layer): its first operand is `gnn.graph whole`.
static bool runsOnWholeGraph(Operation *op) {
  return op && op->getNumOperands() && isWholeGraph(op->getOperand(0));
}

void FunctionLowering::planStagedGathers(Block &body) {
  // Whether `fg` reads `v` in its stages: a staged input that its kernel
  // reads (one that it loads through an edge cache it never reads).
  auto readsStaged = [&](FusedGatherOp fg, Value v) {
    return stagedGathers.contains(v) && fusedGathers.kernelReads(fg, v);
  };
  // Whether compiled kernel `fg` can read `rows` in stages: to the
  // destinations, once per stage over the edges from the stage's rows; to
  // the sources (a sum whose outputs are reduce-scattered), in its reduce
  // stages, each over the stage's rows as sources (broadcast and reduced
  // in one loop). One staged input per kernel.
  auto kernelStages = [&](FusedGatherOp fg, Value rows) {
    const bool once = llvm::count(fg.getSrcInputs(), rows) == 1 &&
                      !llvm::is_contained(fg.getDstInputs(), rows) &&
                      !llvm::is_contained(fg.getEdgeInputs(), rows);
    if (fg.getSide() == Side::Dst && once &&
        FusedGatherLowering::stageableSpmmInput(fg) == rows)
      return true; // an SpMM of the stages (gnnrtSpmmBroadcast)
    const bool can = fg.getSide() == Side::Dst
                         ? FusedGatherLowering::kernelCanStage(fg, rows)
                         : once && FusedGatherLowering::kernelCanReduce(fg);
    return can && llvm::none_of(fg.getSrcInputs(),
                                [&](Value v) { return readsStaged(fg, v); });
  };
  SmallVector<AllGatherOp> gathers(body.getOps<AllGatherOp>());
  // Several readers each: the widest rows first, since a kernel stages one
  // of its inputs (GAT's 32-wide rows, not its one-float logits).
  auto width = [](AllGatherOp ag) {
    RankedTensorType row =
        cast<VertexTensorType>(ag.getResult().getType()).getRowType();
    return row.hasStaticShape() ? row.getNumElements()
                                : std::numeric_limits<int64_t>::max();
  };
  if (stageSharedRows)
    llvm::stable_sort(gathers, [&](AllGatherOp a, AllGatherOp b) {
      return width(a) > width(b);
    });
  for (AllGatherOp ag : gathers) {
    Value rows = ag.getResult();
    if (rows.use_empty())
      continue;
    // The readers: a kernel that loads through edge caches everything that
    // reads the rows (GAT's backward kernels) takes the own rows, unread,
    // where they are a source input (lowerAsKernel's stand-in).
    SmallVector<Operation *> readers;
    for (Operation *user : rows.getUsers()) {
      auto fg = dyn_cast<FusedGatherOp>(user);
      if (!fg || fusedGathers.kernelReads(fg, rows) ||
          llvm::is_contained(fg.getDstInputs(), rows) ||
          llvm::is_contained(fg.getEdgeInputs(), rows))
        readers.push_back(user);
    }
    // Several readers: each a compiled kernel that stages them (the stages
    // run over the own rows' graph); none: no collective.
    bool staged = readers.empty();
    if (readers.size() > 1)
      staged = stageSharedRows && llvm::all_of(readers, [&](Operation *user) {
                 auto fg = dyn_cast<FusedGatherOp>(user);
                 return fg && !runsOnWholeGraph(fg) && kernelStages(fg, rows);
               });
    Operation *user = readers.size() == 1 ? readers.front() : nullptr;
    if (user && !runsOnWholeGraph(user)) {
      if (auto fg = dyn_cast<FusedGatherOp>(user)) {
        // One reader to the destinations (an SpMM or a kernel); to the
        // sources only with several.
        staged = fg.getSide() == Side::Dst && kernelStages(fg, rows);
      } else if (auto sc = dyn_cast<ScatterOp>(user)) {
        // A gather of the scatter folded into an SpMM (planAggregations).
        if (rows.hasOneUse() && skipped.contains(sc) && sc->hasOneUse()) {
          auto it = aggregations.find(*sc->getUsers().begin());
          staged = it != aggregations.end() && it->second.vertexInput == rows &&
                   cast<GatherOp>(it->first).getSide() == Side::Dst &&
                   getChunks(it->first) == 1;
        }
      }
    }
    if (!staged)
      continue;
    stagedGathers[rows] = ag.getInput();
    skipped.insert(ag);
  }
  for (auto rs : body.getOps<ReduceScatterOp>()) {
    auto fg = rs.getInput().getDefiningOp<FusedGatherOp>();
    if (!fg || isWholeGraph(fg.getGraph()) || fg.getSide() != Side::Src ||
        fg.getAcc() != Accumulator::Sum || !rs.getInput().hasOneUse() ||
        (!FusedGatherLowering::stageableSpmmInput(fg) &&
         !FusedGatherLowering::kernelCanReduce(fg)))
      continue;
    stagedReduces[rs.getInput()] = rs.getResult();
    skipped.insert(rs);
  }
}

bool FunctionLowering::hasWholeRows(Value v) const {
  Operation *def = v.getDefiningOp();
  if (!def || !wholeSizes.numEW)
    return false;
  if (isa<AllGatherOp, PadRowsOp>(def))
    return true;
  if (isa<ReduceScatterOp, OwnRowsOp>(def))
    return false;
  if (def->getNumOperands() && isa<GraphType>(def->getOperand(0).getType())) {
    // An aggregation to the sources has a row per source: every vertex's.
    auto fg = dyn_cast<FusedGatherOp>(def);
    auto g = dyn_cast<GatherOp>(def);
    if ((fg && fg.getSide() == Side::Src) || (g && g.getSide() == Side::Src))
      return true;
    return isWholeGraph(def->getOperand(0));
  }
  for (Value o : def->getOperands())
    if (isa<VertexTensorType>(o.getType()))
      return hasWholeRows(o);
  return false;
}

bool FunctionLowering::stepHasWholeRows(Operation &op) const {
  for (ValueRange values :
       {ValueRange(op.getResults()), ValueRange(op.getOperands())})
    for (Value v : values)
      if (isa<VertexTensorType>(v.getType()))
        return hasWholeRows(v);
  return false;
}

void FunctionLowering::restrictToLevel(Operation &op, Operation *before,
                                       Block &entry) {
  Operation *last = entry.empty() ? nullptr : &entry.back();
  // The whole graph's levels for its rows (feature partitioning), the own
  // rows' otherwise.
  auto rowsAt = [&](bool whole) -> ArrayRef<Value> {
    return whole ? wholeLevelRows : levelRows;
  };
  if (auto it = levelPlan->steps.find(&op); it != levelPlan->steps.end()) {
    const LevelPlan::Step &step = it->second;
    const bool whole = stepHasWholeRows(op);
    RowRange range{rowsAt(whole)[step.rows],
                   step.inputs ? rowsAt(runsOnWholeGraph(&op))[*step.inputs]
                               : Value(),
                   step.rows};
    DenseMap<Value, Value> replaced;
    bool refused = false;
    // The chunking finds the step's loops over the rows by its row count.
    const GraphSizes sizes = lb.sizes;
    if (whole)
      lb.sizes = wholeSizes;
    SmallVector<RowChunkStart> starts =
        chunkStageRows(entry, before, last, 1, lb, replaced, &range, &refused);
    lb.sizes = sizes;
    if (Value total = replaced.lookup(loss))
      loss = total;
    if (refused && !levelsRefusedBy)
      levelsRefusedBy = &op;
    if (!starts.empty())
      ++restrictedSteps;
  }
  // Rows read beyond what the step computed, zero there.
  auto fills = levelPlan->fills.find(&op);
  if (fills == levelPlan->fills.end())
    return;
  lb.b.setInsertionPointToEnd(&entry);
  for (const LevelPlan::Fill &fill : fills->second) {
    // A staged all-gather has no rows of its own: its aggregation reads the
    // own rows, which are zero there as well (its input's support).
    Value value = fill.value;
    if (auto ag = value.getDefiningOp<AllGatherOp>(); ag && skipped.count(ag))
      value = ag.getInput();
    Operation *def = value.getDefiningOp();
    auto grad = lossGrads.find(def);
    Tensor t = grad != lossGrads.end() ? grad->second : buffers.lookup(value);
    if (!t.batched ||
        !cast<MemRefType>(t.buf.getType()).getElementType().isF32())
      continue;
    const bool whole = hasWholeRows(value);
    if (whole && !lb.featureShards && !levelsRefusedBy) {
      // A co-batch's rows of every process are not ordered by level
      // (gnnrtWholeLevelRows is all of them): rows to zero there cannot be
      // named.
      levelsRefusedBy = &op;
      continue;
    }
    ArrayRef<Value> rows = rowsAt(whole);
    Value begin = lb.mul(rows[fill.from], t.rowSize);
    Value count = lb.mul(
        lb.b.create<arith::SubIOp>(lb.loc, rows[fill.to], rows[fill.from]),
        t.rowSize);
    lb.call(rt::Call::gnnrtZeroRows,
            {lb.ctx, t.buf, lb.toI64(begin), lb.toI64(count)});
  }
}

void FunctionLowering::useGraph(bool whole) {
  if (whole != onWholeGraph)
    lb.call(rt::Call::gnnrtUseGraph, {lb.ctx, lb.cI64(whole ? 1 : 0)});
  onWholeGraph = whole;
  lb.onWholeGraph = whole;
  lb.sizes = whole ? wholeSizes : lb.ownSizes;
}

LogicalResult FunctionLowering::lowerTop(Operation *op) {
  if (isa<GraphOp>(op) || skipped.contains(op))
    return success();
  // Feature partitioning: the op's graph, selected in the runtime when it
  // changes; an op without one (the loss, the parameters' reductions) sizes
  // its results by the own rows or by its operands.
  if (lb.sizes.numEW) {
    Value graph =
        op->getNumOperands() && isa<GraphType>(op->getOperand(0).getType())
            ? op->getOperand(0)
            : Value();
    if (graph)
      useGraph(isWholeGraph(graph));
    else
      lb.sizes = lb.ownSizes;
  }
  if (aggregations.count(op))
    return lowerAggregation(cast<GatherOp>(op));
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](InputOp o) { return lowerInput(o); })
      .Case([&](DegreeOp o) { return lowerDegree(o); })
      .Case([&](ScatterOp o) { return lowerScatter(o); })
      .Case([&](GatherOp o) { return lowerGather(o); })
      .Case([&](FusedGatherOp o) { return fusedGathers.lower(o); })
      .Case([&](ApplyVertexOp s) {
        return stages.lowerStage(s, s.getBody(), s.getInputs(),
                                 SmallVector<Value>(s.getParams()), false);
      })
      .Case([&](ApplyEdgeOp s) {
        return stages.lowerStage(s, s.getBody(), s.getInputs(),
                                 SmallVector<Value>(s.getParams()), true);
      })
      .Case([&](SumRowsOp o) { return lowerSumRows(o); })
      .Case([&](OuterSumOp o) { return lowerOuterSum(o); })
      .Case([&](TypedOuterSumOp o) { return lowerTypedOuterSum(o); })
      .Case([&](GatherGradOp o) { return lowerGatherGrad(o); })
      .Case([&](TensorAddOp o) { return lowerTensorAdd(o); })
      .Case([&](AllGatherOp o) {
        // To the whole graph's ops (a sync's adjoint, layer 1's reads of
        // the own rows' values).
        if (llvm::any_of(o->getUsers(), runsOnWholeGraph))
          return lowerRowCollective(o.getInput(), o.getResult(), lb.sizes.numS,
                                    rt::Call::gnnrtAllGatherWhole, "allgather",
                                    wholeLevel(o, o.getSync()));
        return lowerRowCollective(o.getInput(), o.getResult(), lb.sizes.numS,
                                  rt::Call::gnnrtAllGatherRows, "allgather");
      })
      .Case([&](ReduceScatterOp o) {
        // From the whole graph's ops (a sync, the adjoint of a read).
        if (runsOnWholeGraph(o.getInput().getDefiningOp()))
          return lowerRowCollective(o.getInput(), o.getResult(), lb.sizes.numV,
                                    rt::Call::gnnrtReduceScatterWhole,
                                    "reduce_scatter",
                                    wholeLevel(o, o.getSync()));
        return lowerRowCollective(o.getInput(), o.getResult(), lb.sizes.numV,
                                  rt::Call::gnnrtReduceScatterRows,
                                  "reduce_scatter");
      })
      .Case([&](OwnRowsOp o) {
        return lowerRowCollective(o.getInput(), o.getResult(), lb.sizes.numV,
                                  rt::Call::gnnrtOwnRows, "");
      })
      .Case([&](PadRowsOp o) {
        return lowerRowCollective(o.getInput(), o.getResult(), lb.sizes.numS,
                                  rt::Call::gnnrtPadRows, "");
      })
      .Case([&](SoftmaxCrossEntropyOp o) { return lowerLoss(o); })
      .Case([&](SoftmaxCrossEntropyGradOp o) { return lowerLossGrad(o); })
      .Case([&](OptimizerUpdateOp o) { return lowerOptimizerUpdate(o); })
      .Default([](Operation *o) {
        return o->emitOpError() << "is not lowered to the runtime yet";
      });
}

LogicalResult FunctionLowering::lowerAggregation(GatherOp g) {
  const Aggregation &agg = aggregations.find(g)->second;
  Value own = stagedGathers.lookup(agg.vertexInput);
  Tensor x = buffers.lookup(own ? own : agg.vertexInput);
  Value weights = agg.weights ? buffers.lookup(agg.weights).buf : lb.emptyF32();
  Tensor out = buffers.alloc(lb.sizes.gatheredRows(g.getSide() == Side::Dst),
                             true, x.dims);
  if (own) {
    lb.spmmBroadcast(g.getAcc() == Accumulator::Mean, weights, x, out.buf);
    rowCollectives.push_back({"broadcast", buffers.sizeKey(x.rowSize)});
  } else
    lb.spmm(g, g.getSide() == Side::Dst, g.getAcc() == Accumulator::Mean,
            weights, x, out.buf);
  buffers.bind(g.getResult(), out);
  return success();
}

void FunctionLowering::recordCutDims(Operation &op) {
  if (!cutDims)
    return;
  auto numbers = op.getAttrOfType<DenseI64ArrayAttr>(GNNDialect::kCutsAttrName);
  for (auto [r, k] : llvm::zip_equal(op.getResults(), numbers.asArrayRef())) {
    Tensor t = buffers.lookup(r);
    if (k < 0 || !t.buf)
      continue;
    SmallVector<SizeKey> &dims = (*cutDims)[k];
    dims.clear();
    for (Value d : t.dims)
      dims.push_back(buffers.sizeKey(d));
  }
}

LogicalResult FunctionLowering::lowerInput(InputOp in) {
  StringRef name = in.getName();
  if (std::optional<int64_t> k = InputOp::getLevelInputIndex(name)) {
    // A cut of a lower level at the block's rows, as wide as the
    // evaluation computed it.
    auto it = cutDims ? cutDims->find(*k) : CutDims::iterator();
    if (!cutDims || it == cutDims->end())
      return in.emitOpError() << "reads cut " << *k
                              << ", whose row width the evaluation's lowering "
                                 "did not record (no op of @"
                              << GNNDialect::kEvalName << " has it in its "
                              << GNNDialect::kCutsAttrName << ")";
    SmallVector<Value> dims;
    for (const SizeKey &key : it->second) {
      Value d = lb.cIndex(key.factor);
      for (StringRef part : llvm::split(StringRef(key.dynamic), '*')) {
        if (part.empty())
          continue;
        Value size = part == "V"   ? lb.sizes.numV
                     : part == "E" ? lb.sizes.numE
                     : part == "F" ? lb.sizes.numF
                     : part == "C" ? lb.sizes.numC
                                   : Value();
        if (!size)
          return in.emitOpError()
                 << "reads cut " << *k << ", whose row width is not a "
                 << "product of the dataset's sizes ('" << key.dynamic << "')";
        d = lb.mul(d, size);
      }
      dims.push_back(d);
    }
    Tensor t = buffers.make(Value(), lb.sizes.numV, true, dims);
    t.buf = lb.call(rt::Call::gnnrtLevelInput,
                    {lb.ctx, lb.cI64(*k), lb.toI64(t.rowSize)});
    buffers.bind(in.getResult(), t);
    levelInputs.push_back(*k);
    return success();
  }
  if (name == "features" && featuresOutOfCore) {
    if (featuresChunks) { // taken once per function
      buffers.bind(in.getResult(), buffers.make(featuresChunks, lb.sizes.numV,
                                                true, {lb.sizes.numF}));
      return success();
    }
    // The slot is set once every function's slots are numbered.
    Value slot = lb.cI64(-1);
    Value buf = lb.call(rt::Call::gnnrtFeaturesChunks,
                        {lb.ctx, slot, lb.cI64(rowChunks)});
    placement.recordFeatures(buf.getDefiningOp(), slot.getDefiningOp());
    featuresChunks = buf;
    buffers.bind(in.getResult(),
                 buffers.make(buf, lb.sizes.numV, true, {lb.sizes.numF}));
    return success();
  }
  if (name == "features") {
    Value buf = lb.call(rt::Call::gnnrtFeatures, {lb.ctx});
    buffers.bind(in.getResult(),
                 buffers.make(buf, lb.sizes.numV, true, {lb.sizes.numF}));
    return success();
  }
  if (InputOp::isVertexInputName(name))
    return success(); // labels and masks are read by the runtime's loss
  if (isWholeGraph(in.getGraph()))
    return in.emitOpError()
           << "reads edge data on the whole graph, which the runtime binds "
              "for the own rows' edges only (feature partitioning of a model "
              "with edge inputs is not supported yet)";
  auto type = cast<EdgeTensorType>(in.getType());
  auto it = llvm::find(edgeInputs, name.str());
  int64_t index = it - edgeInputs.begin();
  if (type.getElementType().isInteger(32)) {
    Value buf = lb.call(rt::Call::gnnrtEdgeDataI32, {lb.ctx, lb.cI64(index)});
    buffers.bind(in.getResult(), buffers.make(buf, lb.sizes.numE, true, {}));
  } else {
    Value buf = lb.call(rt::Call::gnnrtEdgeDataF32, {lb.ctx, lb.cI64(index)});
    buffers.bind(in.getResult(),
                 buffers.make(buf, lb.sizes.numE, true,
                              lb.staticDims(type.getRowType())));
  }
  return success();
}

LogicalResult FunctionLowering::lowerDegree(DegreeOp d) {
  Value buf =
      lb.call(rt::Call::gnnrtDegree,
              {lb.ctx, lb.cI64(d.getDirection() == Direction::In ? 0 : 1)});
  buffers.bind(d.getResult(),
               buffers.make(buf, lb.sizes.numV, true, {lb.cIndex(1)}));
  return success();
}

LogicalResult FunctionLowering::lowerScatter(ScatterOp s) {
  Tensor x = buffers.lookup(s.getInput());
  Tensor out = buffers.alloc(lb.sizes.numE, true, x.dims);
  lb.call(rt::Call::gnnrtScatter,
          {lb.ctx, lb.cI64(s.getSide() == Side::Src ? 0 : 1), x.buf, out.buf,
           lb.toI64(x.rowSize)});
  buffers.bind(s.getResult(), out);
  return success();
}

LogicalResult FunctionLowering::lowerGather(GatherOp g) {
  if (getChunks(g) > 1)
    g.emitRemark() << "chunk tiling: not implemented for a gather of an edge "
                      "tensor yet; runs untiled";
  Tensor x = buffers.lookup(g.getInput());
  Tensor out = buffers.alloc(lb.sizes.gatheredRows(g.getSide() == Side::Dst),
                             true, x.dims);
  lb.call(rt::Call::gnnrtGather,
          {lb.ctx, lb.cI64(static_cast<int64_t>(g.getAcc())),
           lb.cI64(g.getSide() == Side::Src ? 0 : 1), x.buf, out.buf,
           lb.emptyI32(), lb.toI64(x.rowSize)});
  buffers.bind(g.getResult(), out);
  return success();
}

LogicalResult FunctionLowering::lowerSumRows(SumRowsOp sr) {
  Tensor x = buffers.lookup(sr.getInput());
  if (!x.batched) // one row standing for every vertex
    x = stages.broadcastRows(x, x.rows);
  Tensor out = buffers.alloc(lb.cIndex(1), false, x.dims);
  lb.call(rt::Call::gnnrtSumRows,
          {lb.ctx, lb.toI64(x.rows), lb.toI64(x.rowSize), x.buf, out.buf});
  buffers.bind(sr.getResult(), out);
  return success();
}

LogicalResult FunctionLowering::lowerOuterSum(OuterSumOp os) {
  Tensor x = buffers.lookup(os.getInput());
  Tensor g = buffers.lookup(os.getGrad());
  SmallVector<Value> dims(x.dims);
  llvm::append_range(dims, g.dims);
  Tensor out = buffers.alloc(lb.cIndex(1), false, dims);
  // dW = X^T G over every row.
  lb.gemm(true, false, x.rowSize, g.rowSize, x.rows, x.buf, g.buf, out.buf);
  buffers.bind(os.getResult(), out);
  return success();
}

LogicalResult FunctionLowering::lowerTypedOuterSum(TypedOuterSumOp ts) {
  Tensor x = buffers.lookup(ts.getInput()), t = buffers.lookup(ts.getType()),
         g = buffers.lookup(ts.getGrad());
  int64_t types = ts.getResult().getType().getDimSize(0);
  SmallVector<Value> dims{lb.cIndex(types)};
  llvm::append_range(dims, x.dims);
  llvm::append_range(dims, g.dims);
  Tensor out = buffers.alloc(lb.cIndex(1), false, dims);
  lb.call(rt::Call::gnnrtTypedOuterSum,
          {lb.ctx, lb.toI64(x.rows), lb.toI64(x.rowSize), lb.toI64(g.rowSize),
           lb.cI64(types), x.buf, t.buf, g.buf, out.buf});
  buffers.bind(ts.getResult(), out);
  return success();
}

LogicalResult FunctionLowering::lowerGatherGrad(GatherGradOp gg) {
  // Recompute the gather's choice, then route the gradient through it.
  Tensor x = buffers.lookup(gg.getInput()), g = buffers.lookup(gg.getGrad());
  Value side = lb.cI64(gg.getSide() == Side::Src ? 0 : 1);
  Value rows = lb.sizes.gatheredRows(gg.getSide() == Side::Dst);
  Tensor tmp = buffers.alloc(rows, true, x.dims);
  Value arg = buffers.bufferI32(lb.mul(rows, x.rowSize));
  lb.call(rt::Call::gnnrtGather,
          {lb.ctx, lb.cI64(static_cast<int64_t>(gg.getAcc())), side, x.buf,
           tmp.buf, arg, lb.toI64(x.rowSize)});
  buffers.release(tmp.buf);
  Tensor out = buffers.alloc(lb.sizes.numE, true, x.dims);
  lb.call(rt::Call::gnnrtGatherArgBackward,
          {lb.ctx, side, g.buf, arg, out.buf, lb.toI64(x.rowSize)});
  buffers.release(arg);
  buffers.bind(gg.getResult(), out);
  return success();
}

int64_t FunctionLowering::wholeLevel(Operation *op,
                                     std::optional<int64_t> sync) const {
  if (levelPlan)
    return levelPlan->collectives.lookup(op);
  return sync ? syncLevels.lookup(*sync) : 0;
}

LogicalResult
FunctionLowering::lowerRowCollective(Value input, Value result, Value rows,
                                     rt::Call call, StringRef kind,
                                     std::optional<int64_t> level) {
  Tensor x = buffers.lookup(input);
  Tensor out = buffers.alloc(rows, true, x.dims);
  SmallVector<Value> args{lb.ctx, x.buf, out.buf, lb.toI64(x.rowSize)};
  if (level)
    args.push_back(lb.cI64(*level));
  lb.call(call, args);
  if (!kind.empty()) // gnnrtOwnRows and gnnrtPadRows move nothing
    rowCollectives.push_back({kind.str(), buffers.sizeKey(x.rowSize)});
  buffers.bind(result, out);
  return success();
}

LogicalResult FunctionLowering::lowerTensorAdd(TensorAddOp ta) {
  Tensor x = buffers.lookup(ta.getLhs()), y = buffers.lookup(ta.getRhs());
  Tensor out = buffers.alloc(lb.cIndex(1), false, x.dims);
  lb.elementwise(out, {&x, &y}, [](OpBuilder &ob, Location l, ValueRange v) {
    return ob.create<arith::AddFOp>(l, v[0], v[1]).getResult();
  });
  buffers.bind(ta.getResult(), out);
  return success();
}

/// The split a mask input selects: 0 train, 1 val, 2 test; -1 for others.
static int64_t splitOf(Value mask) {
  auto input = mask.getDefiningOp<InputOp>();
  if (!input)
    return -1;
  StringRef name = input.getName();
  if (name == "train_mask")
    return 0;
  if (name == "val_mask")
    return 1;
  if (name == "test_mask")
    return 2;
  return -1;
}

LogicalResult FunctionLowering::lowerLoss(SoftmaxCrossEntropyOp ce) {
  Tensor logits = buffers.lookup(ce.getLogits());
  int64_t split = splitOf(ce.getMask());
  if (split < 0 || !ce.getLabels().getDefiningOp<InputOp>())
    return ce.emitOpError() << "needs the dataset's labels and a split mask "
                               "(train_mask, val_mask, test_mask) as operands";
  // The training step's gradient of the same loss comes from the same call
  // (one pass over the logits instead of two).
  SoftmaxCrossEntropyGradOp gradOp;
  for (Operation *user : ce.getLogits().getUsers())
    if (auto g = dyn_cast<SoftmaxCrossEntropyGradOp>(user))
      if (g->getBlock() == ce->getBlock() && g.getLabels() == ce.getLabels() &&
          g.getMask() == ce.getMask())
        gradOp = g;
  Value gradBuf = lb.emptyF32();
  if (gradOp) {
    Tensor out = buffers.alloc(lb.sizes.numV, true, logits.dims);
    gradBuf = out.buf;
    lossGrads[gradOp] = out;
  }
  loss = lb.call(
      rt::Call::gnnrtSoftmaxCrossEntropy,
      {lb.ctx, logits.buf, gradBuf, lb.toI64(logits.rowSize), lb.cI64(split)});
  return success();
}

LogicalResult FunctionLowering::lowerLossGrad(SoftmaxCrossEntropyGradOp ceg) {
  if (auto it = lossGrads.find(ceg); it != lossGrads.end()) {
    buffers.bind(ceg.getResult(), it->second);
    return success();
  }
  Tensor logits = buffers.lookup(ceg.getLogits());
  int64_t split = splitOf(ceg.getMask());
  if (split < 0)
    return ceg.emitOpError() << "needs a split mask (train_mask, val_mask, "
                                "test_mask) as operand";
  Tensor out = buffers.alloc(lb.sizes.numV, true, logits.dims);
  lb.call(
      rt::Call::gnnrtSoftmaxCrossEntropy,
      {lb.ctx, logits.buf, out.buf, lb.toI64(logits.rowSize), lb.cI64(split)});
  buffers.bind(ceg.getResult(), out);
  return success();
}

void FunctionLowering::writeGradient(Value grad, int64_t index) {
  Tensor g = buffers.lookup(grad);
  Value gradBuf = lb.call(rt::Call::gnnrtGrad, {lb.ctx, lb.cI64(index)});
  Tensor target = buffers.make(gradBuf, lb.cIndex(1), false, g.dims);
  lb.elementwise(target, {&g},
                 [](OpBuilder &, Location, ValueRange v) { return v[0]; });
}

void FunctionLowering::announceGradients(Operation *op) {
  for (Value r : op->getResults()) {
    auto it = gradientOf.find(r);
    if (it == gradientOf.end() || !announced.insert(it->second).second)
      continue;
    writeGradient(r, it->second);
    lb.call(rt::Call::gnnrtGradientReady, {lb.ctx, lb.cI64(it->second)});
  }
}

LogicalResult FunctionLowering::lowerOptimizerUpdate(OptimizerUpdateOp up) {
  auto arg = dyn_cast<BlockArgument>(up.getParam());
  if (!arg || arg.getOwner() != &source.getBody().front())
    return up.emitOpError()
           << "updates a value that is not a parameter argument";
  // Written and announced where it was computed, unless it was not (the
  // same gradient for two parameters: the second is written here).
  if (gradientOf.lookup(up.getGrad()) !=
          static_cast<int64_t>(arg.getArgNumber()) ||
      !announced.count(arg.getArgNumber()))
    writeGradient(up.getGrad(), arg.getArgNumber());
  buffers.bind(up.getResult(), buffers.lookup(up.getParam()));
  // The updates wait for every gradient, which the processes training
  // together then sum in one all-reduce (docs/Distributed.md). Nothing but
  // the return may read an updated parameter before the last update.
  pendingUpdates.push_back(arg.getArgNumber());
  for (Operation *o = up->getNextNode(); o; o = o->getNextNode())
    if (isa<OptimizerUpdateOp>(o))
      return success();
  for (Operation *o = up->getNextNode(); o; o = o->getNextNode())
    if (!isa<func::ReturnOp>(o))
      return up.emitOpError() << "is followed by '" << o->getName()
                              << "': the updates must end the training step";
  lb.call(rt::Call::gnnrtSumGradients, {lb.ctx});
  for (int64_t index : pendingUpdates)
    lb.call(rt::Call::gnnrtOptimizerUpdate, {lb.ctx, lb.cI64(index)});
  pendingUpdates.clear();
  return success();
}
