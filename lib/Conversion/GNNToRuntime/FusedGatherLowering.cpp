//===- FusedGatherLowering.cpp - gnn.fused_gather
//--------------------------===//

#include "FusedGatherLowering.h"

#include "RowChunks.h"

#include "ElementMath.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <functional>

using namespace mlir;
using namespace mlir::gnn;

namespace {
/// A body the runtime's SpMM computes: the neighbour's rows `x`, scaled by
/// edge data `w` or by a one-element value `computedScale` of the body, or
/// not at all.
struct SpmmMatch {
  Value x, w, computedScale;
};
} // namespace

/// The SpMM form of `fg`, if its body has one.
static std::optional<SpmmMatch> matchSpmm(FusedGatherOp fg) {
  Block &body = fg.getBody().front();
  Value y = fg.getYield().getValues()[0];
  auto rowOf = [](Value v) {
    return cast<VertexTensorType>(v.getType()).getRowType();
  };
  RankedTensorType result = rowOf(fg.getOuts()[0]);
  unsigned numSrc = fg.getSrcInputs().size(), numDst = fg.getDstInputs().size();
  bool toDst = fg.getSide() == Side::Dst;
  // Which row input a block argument reads; the neighbour's rows are the
  // source's for a gather to dst and the destination's for one to src.
  auto neighbourInput = [&](Value v) -> Value {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &body || v.getType() != result)
      return Value();
    unsigned i = arg.getArgNumber();
    if (toDst && i < numSrc)
      return fg.getSrcInputs()[i];
    if (!toDst && i >= numSrc && i < numSrc + numDst)
      return fg.getDstInputs()[i - numSrc];
    return Value();
  };
  auto scalarEdgeInput = [&](Value v) -> Value {
    auto arg = dyn_cast<BlockArgument>(v);
    unsigned first = numSrc + numDst;
    if (!arg || arg.getOwner() != &body || arg.getArgNumber() < first ||
        arg.getArgNumber() >= first + fg.getEdgeInputs().size())
      return Value();
    auto t = cast<RankedTensorType>(v.getType());
    if (!t.hasStaticShape() || t.getNumElements() != 1)
      return Value();
    return fg.getEdgeInputs()[arg.getArgNumber() - first];
  };

  // The runtime's SpMM: sum/mean of the neighbour's rows, optionally scaled
  // by a per-edge scalar.
  if ((fg.getAcc() != Accumulator::Sum && fg.getAcc() != Accumulator::Mean) ||
      fg.getOuts().size() != 1)
    return std::nullopt;
  Value x, w;
  if (&body.front() == fg.getYield().getOperation()) {
    x = neighbourInput(y);
  } else if (auto m = y.getDefiningOp<MulOp>();
             m && &body.front() == m.getOperation() &&
             m->getNextNode() == fg.getYield().getOperation()) {
    for (auto [row, scale] :
         {std::pair{m.getLhs(), m.getRhs()}, std::pair{m.getRhs(), m.getLhs()}})
      if (Value xi = neighbourInput(row), wi = scalarEdgeInput(scale);
          xi && wi) {
        x = xi;
        w = wi;
        break;
      }
  }
  // The neighbour's row times a per-edge scalar computed from per-vertex
  // or per-edge scalars (GCN's inlined normalisation): the scalars go to
  // a temporary |E|-float buffer (one edge-parallel kernel), then the
  // runtime's SpMM, which is faster than a generated loop at wide rows.
  Value computedScale;
  if (!x) {
    std::function<bool(Value)> scalarSlice = [&](Value v) {
      auto t = cast<RankedTensorType>(v.getType());
      if (!t.hasStaticShape() || t.getNumElements() != 1)
        return false;
      if (isa<BlockArgument>(v))
        return true;
      Operation *op = v.getDefiningOp();
      if (!isElementwise(op) && !isa<ConstantOp>(op))
        return false;
      return llvm::all_of(op->getOperands(), scalarSlice);
    };
    if (auto m = y.getDefiningOp<MulOp>())
      for (auto [row, scale] : {std::pair{m.getLhs(), m.getRhs()},
                                std::pair{m.getRhs(), m.getLhs()}})
        if (Value xi = neighbourInput(row);
            xi && scalarSlice(scale) &&
            llvm::all_of(body.without_terminator(), [&](Operation &op) {
              return &op == m.getOperation() || scalarSlice(op.getResult(0));
            })) {
          x = xi;
          computedScale = scale;
          break;
        }
  }
  if (!x)
    return std::nullopt;
  return SpmmMatch{x, w, computedScale};
}

/// Whether `v` of `fg`'s body is computed from the block argument of the
/// source input `x`.
static bool readsSourceInput(FusedGatherOp fg, Value v, Value x) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getArgNumber() < fg.getSrcInputs().size() &&
           fg.getSrcInputs()[arg.getArgNumber()] == x;
  Operation *op = v.getDefiningOp();
  return op && llvm::any_of(op->getOperands(), [&](Value o) {
           return readsSourceInput(fg, o, x);
         });
}

Value FusedGatherLowering::stageableSpmmInput(FusedGatherOp fg) {
  if (getChunks(fg) > 1)
    return Value();
  std::optional<SpmmMatch> match = matchSpmm(fg);
  // Weights computed per edge first (GAT's attention, one head) from other
  // inputs than the staged rows.
  if (!match || (match->computedScale &&
                 readsSourceInput(fg, match->computedScale, match->x)))
    return Value();
  return match->x;
}

bool FusedGatherLowering::kernelCanReduce(FusedGatherOp fg) {
  return !matchSpmm(fg) && fg.getSide() == Side::Src &&
         fg.getAcc() == Accumulator::Sum && !fg.getArg() &&
         getChunks(fg) == 1 && llvm::all_of(fg.getOuts(), [](Value o) {
           return o.hasOneUse() && isa<ReduceScatterOp>(*o.getUsers().begin());
         });
}

bool FusedGatherLowering::kernelCanStage(FusedGatherOp fg, Value rows) {
  return !matchSpmm(fg) && fg.getSide() == Side::Dst &&
         llvm::count(fg.getSrcInputs(), rows) == 1 &&
         !llvm::is_contained(fg.getDstInputs(), rows) &&
         !llvm::is_contained(fg.getEdgeInputs(), rows) && getChunks(fg) == 1;
}

void FusedGatherLowering::collect(Operation *function) {
  function->walk([&](FusedGatherOp g) { fusedGathers.push_back(g); });
  // Only row partitioning's all-gathers ask which kernels read their rows
  // (kernelReads: without a plan, every kernel that may).
  bool gathers = false;
  function->walk([&](AllGatherOp) { gathers = true; });
  if (gathers)
    planCacheLoads();
}

LogicalResult FusedGatherLowering::lower(FusedGatherOp fg) {
  bool lowered = false;
  LogicalResult r = lowerAsSpmm(fg, lowered);
  if (succeeded(r) && !lowered)
    r = lowerAsKernel(fg);
  releaseEdgeCaches(fg);
  return r;
}

LogicalResult FusedGatherLowering::lowerAsSpmm(FusedGatherOp fg,
                                               bool &lowered) {
  std::optional<SpmmMatch> match = matchSpmm(fg);
  if (!match)
    return success();
  // In row chunks, per-edge weights computed over every edge at once would
  // be an |E| buffer that every chunk reads whole, computed by a step over
  // every edge that reads its inputs whole (and with the graph out of core
  // not possible at all: a window holds a row chunk's edges): the kernel
  // computes them per edge in its row chunks' tiles instead, and no buffer
  // of |E| weights exists.
  if (match->computedScale && tiles)
    return success();
  lowered = true;
  // Row partitioning: an all-gather's rows that arrive in stages; the own
  // rows are what the call reads.
  Value own = stagedGathers ? stagedGathers->lookup(match->x) : Value();
  Tensor xt = buffers.lookup(own ? own : match->x);
  Value weights = match->w ? buffers.lookup(match->w).buf : lb.emptyF32();
  Tensor wt;
  if (match->computedScale) {
    wt = buffers.alloc(lb.sizes.numE, true, {lb.cIndex(1)});
    if (failed(computeEdgeScalars(fg, match->computedScale, wt.buf)))
      return failure();
    weights = wt.buf;
  }
  if (Value reduced =
          stagedReduces ? stagedReduces->lookup(fg.getOuts()[0]) : Value()) {
    // Row partitioning: the partials of every vertex never exist at once;
    // the result is the reduce-scatter's (the own rows).
    Tensor out = buffers.alloc(lb.sizes.numV, true, xt.dims);
    lb.spmmReduce(weights, xt, out.buf,
                  reduceLevels ? reduceLevels->lookup(reduced) : 0);
    rowCollectives->push_back({"reduce", buffers.sizeKey(xt.rowSize)});
    buffers.bind(reduced, out);
    if (wt.buf)
      buffers.release(wt.buf);
    return success();
  }
  Tensor out = buffers.alloc(lb.sizes.gatheredRows(fg.getSide() == Side::Dst),
                             true, xt.dims);
  if (own) {
    lb.spmmBroadcast(fg.getAcc() == Accumulator::Mean, weights, xt, out.buf);
    rowCollectives->push_back({"broadcast", buffers.sizeKey(xt.rowSize)});
  } else {
    lb.spmm(fg, fg.getSide() == Side::Dst, fg.getAcc() == Accumulator::Mean,
            weights, xt, out.buf);
  }
  buffers.bind(fg.getOuts()[0], out);
  if (wt.buf)
    buffers.release(wt.buf); // nothing reads the weights after
  return success();
}

LogicalResult FusedGatherLowering::computeEdgeScalars(FusedGatherOp fg,
                                                      Value scale,
                                                      Value weights) {
  SmallVector<Value> operands = fg.getRowInputs();
  llvm::append_range(operands, fg.getParams());
  unsigned numSrc = fg.getSrcInputs().size(), numDst = fg.getDstInputs().size(),
           numRows = numSrc + numDst + fg.getEdgeInputs().size();
  kernels.setBuffer(0, weights);
  for (auto [i, v] : llvm::enumerate(operands)) {
    // Rows arriving in stages: the scale does not read them
    // (stageableSpmmInput); the own rows stand in.
    Value own = stagedGathers && i < fg.getSrcInputs().size()
                    ? stagedGathers->lookup(v)
                    : Value();
    Tensor t = buffers.lookup(own ? own : v);
    if (!cast<MemRefType>(t.buf.getType()).getElementType().isF32())
      return fg.emitOpError() << "reads a non-f32 row in a per-edge scalar";
    kernels.setBuffer(i + 1, t.buf);
    kernels.setInt(i + 1, t.rowSize);
  }
  kernels.begin();
  Location loc = lb.loc;
  OpBuilder &b = lb.b;
  Value out = kernels.getBuffer(0, /*isI32=*/false);
  SmallVector<Value> bufs, rowSizes;
  for (unsigned i = 0; i < operands.size(); ++i) {
    bufs.push_back(kernels.getBuffer(i + 1, /*isI32=*/false));
    rowSizes.push_back(lb.toIndex(b, kernels.getInt(i + 1)));
  }
  // Edge e (CSC order): its source indices[e], its destination dst[e].
  Value srcOf = kernels.graphIndex(0);
  Value dstOf = kernels.graphIndex(1);
  // The value of `x` (of the body) at edge e from u to v.
  auto evalAt = [&](OpBuilder &eb, Value x, Value e, Value u, Value v) {
    DenseMap<Value, Value> vals;
    std::function<Value(Value)> eval = [&](Value x) -> Value {
      if (Value c = vals.lookup(x))
        return c;
      Value r;
      if (auto arg = dyn_cast<BlockArgument>(x)) {
        unsigned i = arg.getArgNumber();
        Value row = i < numSrc            ? u
                    : i < numSrc + numDst ? v
                    : i < numRows         ? e
                                          : Value();
        Value index =
            row ? eb.create<arith::MulIOp>(loc, row, rowSizes[i]).getResult()
                : lb.cIndex(0);
        r = eb.create<memref::LoadOp>(loc, bufs[i], index);
      } else if (auto c = dyn_cast<ConstantOp>(x.getDefiningOp())) {
        r = eb.create<arith::ConstantFloatOp>(
            loc, APFloat(c.getValue().getSplatValue<float>()), eb.getF32Type());
      } else {
        Operation *op = x.getDefiningOp();
        SmallVector<Value> args;
        for (Value o : op->getOperands())
          args.push_back(eval(o));
        r = emitElement(eb, loc, op, args);
      }
      vals[x] = r;
      return r;
    };
    return eval(x);
  };
  b.create<scf::ForOp>(
      loc, kernels.rangeBegin(), kernels.rangeEnd(), lb.cIndex(1), ValueRange{},
      [&](OpBuilder &eb, Location, Value e, ValueRange) {
        Value u = lb.toIndex(eb, eb.create<memref::LoadOp>(loc, srcOf, e));
        Value v = lb.toIndex(eb, eb.create<memref::LoadOp>(loc, dstOf, e));
        eb.create<memref::StoreOp>(loc, evalAt(eb, scale, e, u, v), out, e);
        eb.create<scf::YieldOp>(loc);
      });
  kernels.launch(lb.sizes.numE);
  return success();
}

LogicalResult FusedGatherLowering::lowerAsKernel(FusedGatherOp fg) {
  // In row chunks the kernel runs in their tiles (RowChunks.h) whatever the
  // chunk tiling chose.
  if (getChunks(fg) > 1 && !tiles)
    fg.emitRemark() << "chunk tiling: not implemented for a compiled fused "
                       "kernel yet; runs untiled";
  SmallVector<Value> operands = fg.getRowInputs();
  llvm::append_range(operands, fg.getParams());
  // Row partitioning: sums to the sources whose outputs' one reader each
  // is a reduce-scatter (FunctionLowering::planStagedGathers) run in reduce
  // stages, each over the sources of one process's rows, reduced to it
  // while the next computes; the reduce-scatters' results (the own rows)
  // are what they fill.
  SmallVector<Value> reducedTo;
  if (stagedReduces && fg.getSide() == Side::Src)
    for (Value o : fg.getOuts())
      if (Value r = stagedReduces->lookup(o))
        reducedTo.push_back(r);
  if (reducedTo.size() != fg.getOuts().size())
    reducedTo.clear();
  const bool reduced = !reducedTo.empty();
  // Row partitioning: a neighbour input whose all-gather arrives in
  // broadcast stages (FunctionLowering::planStagedGathers): the kernel runs
  // once per stage over the edges from the stage's rows, which the runtime
  // gives (gnnrtStageRows); the process's own rows are what it reads.
  int64_t staged = -1;
  Value stagedOwn;
  SmallVector<Tensor> tensors;
  for (auto [i, v] : llvm::enumerate(operands)) {
    Value own = stagedGathers && i < fg.getSrcInputs().size()
                    ? stagedGathers->lookup(v)
                    : Value();
    // (A kernel that does not read them takes the own rows, unread.)
    if (own && kernelReads(fg, v)) {
      staged = static_cast<int64_t>(i);
      stagedOwn = own;
    }
    tensors.push_back(buffers.lookup(own ? own : v));
  }
  // The types a slot op reads (an edge input), checked against its slots
  // before the kernel, which would otherwise place a row nowhere.
  fg.getBody().walk([&](Operation *op) {
    if (!isa<PlaceByTypeOp, TakeByTypeOp>(op))
      return;
    auto arg = dyn_cast<BlockArgument>(op->getOperand(1));
    auto slotted = cast<RankedTensorType>(isa<PlaceByTypeOp>(op)
                                              ? op->getResult(0).getType()
                                              : op->getOperand(0).getType());
    if (arg && arg.getArgNumber() < tensors.size())
      lb.call(rt::Call::gnnrtCheckTypes,
              {lb.ctx, tensors[arg.getArgNumber()].buf,
               lb.cI64(slotted.getDimSize(0))});
  });
  // Each gathered row's dimensions: static ones, `?` from an operand whose
  // rows have the same shape. Kernel operands: the results, then the
  // operands (buffers and row sizes), then the edge caches.
  SmallVector<Tensor> outs;
  for (Value o : fg.getOuts()) {
    RankedTensorType row = cast<VertexTensorType>(o.getType()).getRowType();
    SmallVector<Value> dims = lb.staticDims(row);
    if (llvm::any_of(dims, [](Value d) { return !d; })) {
      auto it = llvm::find_if(operands, [&](Value v) {
        RankedTensorType t = rowTypeOf(v.getType());
        if (!t)
          t = cast<RankedTensorType>(v.getType());
        return t.getShape() == row.getShape();
      });
      if (it == operands.end())
        return fg.emitOpError()
               << "cannot size its result: no operand has rows of type " << row;
      dims = tensors[it - operands.begin()].dims;
    }
    // Sums to the sources in reduce stages: each stage's rows come from
    // the runtime (gnnrtReduceStageRows), no buffer of every vertex's.
    if (reduced)
      outs.push_back(Tensor{Value(), lb.sizes.gatheredRows(false), true, dims,
                            lb.product(dims)});
    else
      outs.push_back(buffers.alloc(
          lb.sizes.gatheredRows(fg.getSide() == Side::Dst), true, dims));
  }
  int64_t numOuts = outs.size();
  Tensor argOut;
  if (Value arg = fg.getArg()) {
    argOut = outs[0];
    argOut.buf = buffers.bufferI32(lb.mul(outs[0].rows, outs[0].rowSize));
    buffers.bind(arg, argOut);
  }
  // For a row chunk of the gather (RowChunks.h): the rows of the gathered
  // side are read at the row (own), the other side's at the neighbours, the
  // edge inputs, parameters and edge caches anywhere.
  const bool toDst = fg.getSide() == Side::Dst;
  const size_t numSrc = fg.getSrcInputs().size(),
               numDst = fg.getDstInputs().size();
  KernelCaches caches = edgeCachesFor(fg);
  int64_t firstCacheArg = numOuts + static_cast<int64_t>(tensors.size());
  // In tiles, a kernel reads and writes its caches at the edges of its
  // rows' edges to one destination chunk: its own chunk's (to the
  // destinations) or its tile's input chunk's (to the sources), which is
  // how the caches are chunked (edge-chunked takes, edgeCachesFor).
  const RowAccess cacheAccess = !tiles  ? RowAccess::All
                                : toDst ? RowAccess::Own
                                        : RowAccess::Neighbours;
  // Every kernel of the gather takes the same operands (the host's set is
  // cleared at each launch).
  auto setOperands = [&] {
    for (auto [i, out] : llvm::enumerate(outs)) {
      kernels.setBuffer(i, out.buf);
      kernels.setInt(i, out.rowSize);
    }
    if (argOut.buf)
      kernels.setBuffer(0, argOut.buf);
    for (auto [i, t] : llvm::enumerate(tensors)) {
      const bool src = i < numSrc, dst = !src && i < numSrc + numDst;
      RowAccess access = RowAccess::All;
      if (src || dst)
        access = src == toDst ? RowAccess::Neighbours : RowAccess::Own;
      kernels.setBuffer(numOuts + i, t.buf, access);
      kernels.setInt(numOuts + i, t.rowSize);
    }
    for (auto [i, c] : llvm::enumerate(caches))
      kernels.setBuffer(firstCacheArg + static_cast<int64_t>(i),
                        std::get<1>(c)->buf, cacheAccess);
  };
  // The stages: a loop on the host around the kernel's launch, each
  // iteration with its stage's rows and input range.
  scf::ForOp stageLoop;
  Value stageLo, stageHi, stageEnd, stageCount;
  // Opens the loop over `count` stages, the insertion point in its body;
  // the stage's number (i64).
  auto openStages = [&](Value count) {
    stageLoop = lb.b.create<scf::ForOp>(lb.loc, lb.cIndex(0),
                                        lb.toIndex(lb.b, count), lb.cIndex(1));
    markStageLoop(stageLoop);
    lb.b.setInsertionPoint(stageLoop.getBody()->getTerminator());
    return lb.toI64(stageLoop.getInductionVar());
  };
  // Stage j's rows among every vertex's: [stageLo, stageHi).
  auto stageRange = [&](Value j) {
    stageLo = lb.call(rt::Call::gnnrtStageStart, {lb.ctx, j});
    stageHi =
        lb.call(rt::Call::gnnrtStageStart, {lb.ctx, lb.add(j, lb.cI64(1))});
  };
  // Each output's own rows, its place among the outputs' floats (the stage
  // buffers hold a block per output, from rowOffset times the largest
  // process's rows on) and the outputs' floats per row.
  SmallVector<Tensor> reducedOwn;
  SmallVector<Value> rowOffsets;
  Value totalWidth, reduceEnd;
  if (reduced) {
    // Each output's sums are zero beyond the sources of its level (the
    // level plan's, > 0 on a sampled batch's blocks; -1: every row); the
    // kernel computes the sources of the lowest.
    SmallVector<int64_t> levels;
    for (Value r : reducedTo) {
      const int64_t level = reduceLevels ? reduceLevels->lookup(r) : 0;
      levels.push_back(level > 0 ? level : -1);
    }
    const int64_t kernelLevel =
        llvm::is_contained(levels, -1) ? -1 : *llvm::min_element(levels);
    totalWidth = lb.cI64(0);
    for (const Tensor &out : outs) {
      reducedOwn.push_back(buffers.alloc(lb.sizes.numV, true, out.dims));
      rowOffsets.push_back(totalWidth);
      totalWidth = lb.add(totalWidth, lb.toI64(out.rowSize));
      rowCollectives->push_back({"reduce", buffers.sizeKey(out.rowSize)});
    }
    Value j = openStages(lb.call(rt::Call::gnnrtStageCount, {lb.ctx}));
    for (auto [k, out] : llvm::enumerate(outs))
      out.buf = lb.call(rt::Call::gnnrtReduceStageRows,
                        {lb.ctx, reducedOwn[k].buf, lb.toI64(out.rowSize), j,
                         lb.cI64(static_cast<int64_t>(k)), rowOffsets[k],
                         totalWidth, lb.cI64(levels[k])});
    stageRange(j);
    reduceEnd = kernelLevel < 0 ? stageHi
                                : lb.call(rt::Call::gnnrtStageLevelEnd,
                                          {lb.ctx, j, lb.cI64(kernelLevel)});
  }
  if (staged >= 0 && reduced) {
    // A source input of a kernel in reduce stages: stage j's rows are the
    // sources it sums to, broadcast in the same loop (their own buffers).
    Tensor &rows = tensors[staged];
    rows.buf =
        lb.call(rt::Call::gnnrtReduceStageSources,
                {lb.ctx, buffers.lookup(stagedOwn).buf, lb.toI64(rows.rowSize),
                 lb.toI64(stageLoop.getInductionVar())});
    rowCollectives->push_back({"broadcast", buffers.sizeKey(rows.rowSize)});
  } else if (staged >= 0) {
    if (fg.getSide() != Side::Dst)
      return fg.emitOpError() << "internal error: a staged input of a sum "
                                 "to the sources outside reduce stages";
    stageCount = lb.call(rt::Call::gnnrtStageCount, {lb.ctx});
    stageEnd = lb.call(rt::Call::gnnrtStageStart, {lb.ctx, stageCount});
    Value j = openStages(stageCount);
    Tensor &rows = tensors[staged];
    // Every row of each stage (-1), unless a level's rows restrict it.
    rows.buf = lb.call(rt::Call::gnnrtStageRows,
                       {lb.ctx, buffers.lookup(stagedOwn).buf,
                        lb.toI64(rows.rowSize), j, lb.cI64(-1)});
    stageRange(j);
    rowCollectives->push_back({"broadcast", buffers.sizeKey(rows.rowSize)});
  }
  setOperands();
  // Tiles: the input range [lo, hi) of the edges' other ends, as kernel
  // integers after the operands' (the whole range unless RowChunks runs the
  // kernel in tiles, or a stage's range).
  std::optional<std::pair<int64_t, int64_t>> tileInts;
  int64_t inputRowsInt = -1;
  // (A kernel in reduce stages reads every destination of its sources.)
  const bool stagedInputs = staged >= 0 && !reduced;
  if (tiles || stagedInputs) {
    tileInts = {firstCacheArg + static_cast<int64_t>(caches.size()),
                firstCacheArg + static_cast<int64_t>(caches.size()) + 1};
    kernels.setInt(tileInts->first, stagedInputs ? stageLo : lb.cI64(0));
    kernels.setInt(tileInts->second, stagedInputs
                                         ? stageHi
                                         : lb.toI64(lb.sizes.gatheredRows(
                                               fg.getSide() != Side::Dst)));
  }
  if (stagedInputs) {
    // The sources' count at the last stage, else -1: a stage's range ends
    // at it only there (empty stages at the end end there too, and a mean
    // must be finished once).
    inputRowsInt = tileInts->second + 1;
    Value last = lb.b.create<arith::CmpIOp>(
        lb.loc, arith::CmpIPredicate::eq,
        lb.add(lb.toI64(stageLoop.getInductionVar()), lb.cI64(1)), stageCount);
    kernels.setInt(inputRowsInt, lb.b.create<arith::SelectOp>(
                                     lb.loc, last, stageEnd, lb.cI64(-1)));
  } else if (tileInts) {
    // The last tile ends at the input side's rows, which a partitioned
    // program's own rows' graph has more of than the rows it gathers (the
    // sources are every vertex): a mean or an empty max is finished there.
    inputRowsInt = tileInts->second + 1;
    kernels.setInt(inputRowsInt,
                   lb.toI64(lb.sizes.gatheredRows(fg.getSide() != Side::Dst)));
  }
  // Long rows in pieces: the rows' kernel leaves them to a kernel over
  // their pieces, which writes partial rows into the scratch, and one over
  // the long rows, which folds them (an argument output: with one output
  // only, whose argument partials the scratch's integers hold).
  const bool pieces =
      longRowPieces && !tileInts && !reduced && (!argOut.buf || numOuts == 1);
  if (failed(emitFusedGatherKernel(
          lb, kernels, fg, tensors, caches, firstCacheArg, tileInts,
          pieces ? GatherPart::Rows : GatherPart::Whole, Value(),
          inputRowsInt)))
    return failure();
  if (reduced) {
    // The stage's rows only, then their sums to the owner.
    auto launch = dyn_cast<func::CallOp>(&*std::prev(lb.b.getInsertionPoint()));
    if (!launch ||
        launch.getCallee() != rt::getName(rt::Call::gnnrtParallelFor))
      return fg.emitOpError()
             << "internal error: no kernel launch to run in reduce stages";
    lb.call(rt::Call::gnnrtParallelForRows,
            {launch->getOperand(0), launch->getOperand(1), stageLo, reduceEnd});
    launch->erase();
    for (auto [k, out] : llvm::enumerate(outs))
      lb.call(rt::Call::gnnrtReduceStageSend,
              {lb.ctx, reducedOwn[k].buf, lb.toI64(out.rowSize),
               lb.toI64(stageLoop.getInductionVar()),
               lb.cI64(static_cast<int64_t>(k)), lb.cI64(numOuts),
               rowOffsets[k], totalWidth});
  }
  if (stageLoop)
    lb.b.setInsertionPointAfter(stageLoop);
  if (pieces) {
    const int64_t side = toDst ? 1 : 0;
    Value pieceRow = lb.call(rt::Call::gnnrtGraphLongRows,
                             {lb.ctx, lb.cI64(side), lb.cI64(1)});
    Value numPieces = lb.b.create<memref::DimOp>(lb.loc, pieceRow, 0);
    Value longRows = lb.call(rt::Call::gnnrtGraphLongRows,
                             {lb.ctx, lb.cI64(side), lb.cI64(0)});
    Value numLongRows = lb.b.create<memref::DimOp>(lb.loc, longRows, 0);
    Value perPiece = lb.cI64(0);
    for (const Tensor &out : outs)
      perPiece = lb.add(perPiece, lb.toI64(out.rowSize));
    Value count = lb.mul(lb.toI64(numPieces), perPiece);
    Value scratch = lb.call(rt::Call::gnnrtPieceScratch, {lb.ctx, count});
    Value argScratch =
        argOut.buf ? lb.call(rt::Call::gnnrtPieceScratchI32, {lb.ctx, count})
                   : Value();
    const int64_t scratchArg =
        firstCacheArg + static_cast<int64_t>(caches.size());
    for (GatherPart part : {GatherPart::Pieces, GatherPart::Combine}) {
      setOperands();
      kernels.setBuffer(scratchArg, scratch);
      if (argScratch)
        kernels.setBuffer(scratchArg, argScratch);
      if (failed(emitFusedGatherKernel(
              lb, kernels, fg, tensors, caches, firstCacheArg, std::nullopt,
              part, part == GatherPart::Pieces ? numPieces : numLongRows)))
        return failure();
    }
  }
  // (A staged kernel's launch is in its loop, which RowChunks knows.)
  if (tiles && !stageLoop)
    markTiledLaunch(&*std::prev(lb.b.getInsertionPoint()), tileInts->first,
                    tileInts->second, toDst ? 1 : 0,
                    static_cast<bool>(argOut.buf));
  if (reduced) {
    for (auto [r, own] : llvm::zip(reducedTo, reducedOwn))
      buffers.bind(r, own);
    return success();
  }
  for (auto [o, t] : llvm::zip(fg.getOuts(), outs))
    buffers.bind(o, t);
  return success();
}

/// Whether `x` of `a`'s body and `y` of `b`'s body are the same value of
/// every edge: block arguments reading the same outer value from the same
/// end (or as edge data or parameter), ops equivalent over such operands.
static bool sameEdgeValue(FusedGatherOp a, Value x, FusedGatherOp b, Value y) {
  auto ax = dyn_cast<BlockArgument>(x), by = dyn_cast<BlockArgument>(y);
  if (ax || by) {
    if (!ax || !by)
      return false;
    auto outer = [](FusedGatherOp g, BlockArgument arg) {
      unsigned i = arg.getArgNumber();
      unsigned ns = g.getSrcInputs().size(), nd = g.getDstInputs().size(),
               ne = g.getEdgeInputs().size();
      if (i < ns)
        return std::pair{0, g.getSrcInputs()[i]};
      if (i < ns + nd)
        return std::pair{1, g.getDstInputs()[i - ns]};
      if (i < ns + nd + ne)
        return std::pair{2, g.getEdgeInputs()[i - ns - nd]};
      return std::pair{3, g.getParams()[i - ns - nd - ne]};
    };
    return outer(a, ax) == outer(b, by);
  }
  return OperationEquivalence::isEquivalentTo(
      x.getDefiningOp(), y.getDefiningOp(),
      [&](Value l, Value r) { return success(sameEdgeValue(a, l, b, r)); },
      nullptr, OperationEquivalence::IgnoreLocations);
}

/// The width of a per-edge value worth keeping: a row reduction or an
/// exponential with a small static row; 0 for others.
static int64_t cacheableWidth(Value v) {
  Operation *op = v.getDefiningOp();
  if (!op || !isa<RowDotOp, ReduceSumOp, ExpOp>(op))
    return 0;
  auto t = cast<RankedTensorType>(v.getType());
  if (!t.hasStaticShape() || t.getRank() > 1 || t.getNumElements() > 16)
    return 0;
  return t.getNumElements();
}

SmallVector<std::pair<Operation *, Operation *>>
mlir::gnn::edgeCachePairs(Block &body) {
  SmallVector<FusedGatherOp> gathers(body.getOps<FusedGatherOp>());
  SmallVector<std::pair<Operation *, Operation *>> pairs;
  for (auto [i, writer] : llvm::enumerate(gathers))
    for (FusedGatherOp reader : ArrayRef(gathers).drop_front(i + 1)) {
      bool shared = false;
      for (Operation &w : writer.getBody().front().without_terminator())
        for (Operation &r : reader.getBody().front().without_terminator())
          shared |=
              !shared && cacheableWidth(w.getResult(0)) > 0 &&
              cacheableWidth(w.getResult(0)) ==
                  cacheableWidth(r.getResult(0)) &&
              sameEdgeValue(writer, w.getResult(0), reader, r.getResult(0));
      if (shared)
        pairs.push_back({writer, reader});
    }
  return pairs;
}

KernelCaches FusedGatherLowering::decideCaches(FusedGatherOp fg,
                                               std::deque<EdgeCache> &live,
                                               int64_t &used) {
  KernelCaches result;
  auto self = llvm::find(fusedGathers, fg);
  for (Operation &op : fg.getBody().front().without_terminator()) {
    Value v = op.getResult(0);
    int64_t width = cacheableWidth(v);
    if (!width)
      continue;
    EdgeCache *found = nullptr;
    for (EdgeCache &c : live)
      if (c.width == width && sameEdgeValue(c.producer, c.value, fg, v))
        found = &c;
    if (found) {
      result.push_back({v, found, false});
      continue;
    }
    Operation *last = nullptr;
    for (auto it = self + 1; it != fusedGathers.end(); ++it)
      for (Operation &o : it->getBody().front().without_terminator())
        if (cacheableWidth(o.getResult(0)) == width &&
            sameEdgeValue(fg, v, *it, o.getResult(0)))
          last = *it;
    // The budget counts every cache of the function: its slot keeps the
    // memory for the whole run.
    if (!last || used + width > edgeCacheBudget)
      continue;
    used += width;
    live.push_back({fg, v, Value(), width, -1, last});
    result.push_back({v, &live.back(), true});
  }
  return result;
}

bool FusedGatherLowering::runsAsKernel(FusedGatherOp fg) const {
  std::optional<SpmmMatch> match = matchSpmm(fg);
  return !match || (match->computedScale && tiles);
}

void FusedGatherLowering::planCacheLoads() {
  cacheLoads.clear();
  std::deque<EdgeCache> live;
  int64_t used = 0;
  for (FusedGatherOp fg : fusedGathers) {
    if (runsAsKernel(fg))
      for (auto [v, cache, store] : decideCaches(fg, live, used))
        if (!store)
          cacheLoads[fg].insert(v);
    llvm::erase_if(live, [&](const EdgeCache &c) { return c.last == fg; });
  }
}

bool FusedGatherLowering::kernelReads(FusedGatherOp fg, Value input) const {
  if (!runsAsKernel(fg))
    return llvm::is_contained(fg.getRowInputs(), input);
  Block &body = fg.getBody().front();
  auto loadsIt = cacheLoads.find(fg);
  auto loaded = [&](Value v) {
    return loadsIt != cacheLoads.end() && loadsIt->second.contains(v);
  };
  // What the kernel computes: the yielded rows' elements, and per edge
  // (FusedKernelBuilder::emitEdgeValues) every one-element argument, and
  // every one-element value, row reduction and per-head row of the body
  // that it does not load, with what they read; a loaded value reads
  // nothing.
  SmallVector<Value> work(fg.getYield().getValues());
  for (BlockArgument arg : body.getArguments())
    if (auto t = dyn_cast<RankedTensorType>(arg.getType());
        t && t.hasStaticShape() && t.getNumElements() == 1)
      work.push_back(arg);
  for (Operation &op : body.without_terminator()) {
    Value r = op.getResult(0);
    auto t = cast<RankedTensorType>(r.getType());
    if (!loaded(r) && (isa<ReduceSumOp, RowDotOp>(op) ||
                       (t.hasStaticShape() && t.getRank() <= 1)))
      work.push_back(r);
  }
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second || loaded(v))
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getArgNumber() < fg.getRowInputs().size() &&
          fg.getRowInputs()[arg.getArgNumber()] == input)
        return true;
      continue;
    }
    llvm::append_range(work, v.getDefiningOp()->getOperands());
  }
  return false;
}

KernelCaches FusedGatherLowering::edgeCachesFor(FusedGatherOp fg) {
  KernelCaches result = decideCaches(fg, edgeCaches, edgeCacheFloatsUsed);
  for (auto &[v, cache, store] : result) {
    Operation *op = v.getDefiningOp();
    if (!store) {
      fg.emitRemark() << "reads the per-edge " << op->getName() << " "
                      << v.getType()
                      << " an earlier kernel kept, instead of recomputing it";
      continue;
    }
    cache->buf = buffers.unboundBuffer(
        lb.mul(lb.sizes.numE, lb.cIndex(cache->width)), cache->slot,
        /*edgeChunks=*/tiles);
    fg.emitRemark() << "keeps its per-edge " << op->getName() << " "
                    << v.getType() << " (" << cache->width
                    << " floats per edge) for later kernels";
  }
  return result;
}

void FusedGatherLowering::releaseEdgeCaches(Operation *op) {
  for (auto it = edgeCaches.begin(); it != edgeCaches.end();) {
    if (it->last == op) {
      buffers.releaseSlot(it->slot);
      it = edgeCaches.erase(it);
    } else {
      ++it;
    }
  }
}
