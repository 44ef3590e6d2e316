//===- StageLowering.cpp - apply_vertex / apply_edge bodies ---------------===//

#include "StageLowering.h"

#include "ElementMath.h"
#include "gnnrt/GNNRuntime.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/SaveAndRestore.h"

#include <functional>

using namespace mlir;
using namespace mlir::gnn;

namespace {
/// An operand of a run from outside it, loaded per element (scalar rows
/// broadcast). An operand of a broadcast_heads is read at the element's head
/// (its other readers in the run, if any, are scalar rows: broadcast).
struct External {
  Value value;
  bool broadcast;
  int64_t spread; // > 0: the head width of a broadcast_heads operand
};
} // namespace

/// A run of element-wise ops being lowered.
struct StageLowering::Run {
  ArrayRef<Operation *> group;
  llvm::SmallPtrSet<Operation *, 8> inGroup;
  Value rows;
  SmallVector<Value> dims; // the run's row dimensions
  bool batched = false;
  Value outRows, rowSize;
  bool scalarShape = false;
  SmallVector<External> externals;
  SmallVector<Tensor> externalTensors;
  /// Results read after the run, stored; results only summed over the rows,
  /// as partial sums per chunk; stored results that overwrite an external.
  /// (In the run's order: kernel operands and slot releases follow it.)
  llvm::MapVector<Value, Tensor> stored, summed;
  DenseMap<Value, int64_t> inPlace; // result -> the external it overwrites
  /// Each dropout's key, threshold and scale bits for this step (the same
  /// mask as the runtime's gnnrtDropout, which the backward may call).
  SmallVector<DropoutOp> dropouts;
  SmallVector<Value> dropoutParams; // paramsPerDropout per dropout, i64
  /// 5 in a partitioned function's rows: the element index's stride and
  /// offset (the single-process tensor's numbering) after the three.
  int64_t paramsPerDropout = 3;
  /// The program that is not partitioned, over the vertices: a dropout's
  /// element (r, j) is (ids[r] * width + j) by the bound graph's global ids
  /// (gnnrtVertexIds; none on a whole graph: r itself), so that a part of
  /// the graph (a closure, a sampled batch) draws the whole graph's masks.
  bool globalRows = false;
  /// The head width of the run's broadcast_heads (all of its row shape).
  int64_t headWidth = 0;
};

void StageLowering::analyzeRun(Run &run) {
  ArrayRef<Operation *> group = run.group;
  auto resultType =
      cast<RankedTensorType>(group.front()->getResult(0).getType());
  // The group's row dimensions, from a first-op operand of the result shape.
  for (Value v : group.front()->getOperands()) {
    Tensor t = buffers.lookup(v);
    run.batched |= t.batched;
    if (run.dims.empty() &&
        cast<RankedTensorType>(v.getType()).getShape() == resultType.getShape())
      run.dims = t.dims;
  }
  if (run.dims.empty() && spreadsHeads(group.front())) {
    auto bh = cast<BroadcastHeadsOp>(group.front());
    run.dims = {buffers.lookup(bh.getInput()).dims[0],
                lb.cIndex(bh.getType().getDimSize(1))};
  }
  for (Operation *op : group.drop_front())
    for (Value v : op->getOperands())
      if (!run.inGroup.contains(v.getDefiningOp()))
        run.batched |= buffers.lookup(v).batched;
  run.outRows = run.batched ? run.rows : lb.cIndex(1);
  run.rowSize = lb.product(run.dims);
  run.scalarShape =
      resultType.getNumElements() == 1 && resultType.hasStaticShape();
  for (Operation *op : group)
    for (Value v : op->getOperands())
      if (!run.inGroup.contains(v.getDefiningOp()) &&
          llvm::none_of(run.externals,
                        [&](const External &e) { return e.value == v; })) {
        auto t = cast<RankedTensorType>(v.getType());
        bool scalar = t.hasStaticShape() && t.getNumElements() == 1;
        int64_t spread = 0;
        if (spreadsHeads(op) && !scalar)
          spread = cast<BroadcastHeadsOp>(op).getType().getDimSize(1);
        run.externals.push_back({v, scalar && !run.scalarShape, spread});
      }
  for (const External &e : run.externals) {
    run.externalTensors.push_back(buffers.lookup(e.value));
    run.headWidth = std::max(run.headWidth, e.spread);
  }
}

void StageLowering::assignRunResults(Run &run) {
  // Results needed after the group get buffers, except those only summed
  // over rows after the stage: each chunk of GNNRT_PARALLEL_CHUNK rows (one
  // kernel call) sums its rows into a partial row, and the stage result
  // becomes the partials (rows: chunks), which sum_rows adds up. A stored
  // result may take over the buffer of an operand nothing reads after the
  // run: each element is loaded before it is stored at the same index.
  llvm::SmallPtrSet<Value, 4> reused;
  const int64_t first = buffers.indexOfOp(run.group.front());
  const SizeKey outSize = buffers.sizeKey(run.rowSize);
  auto canOverwrite = [&](const External &e, const Tensor &t) {
    return !e.broadcast && e.spread == 0 && t.batched &&
           t.rows == run.outRows && buffers.isSlotBuffer(t.buf) &&
           !reused.contains(t.buf) && buffers.sizeKey(t.rowSize) == outSize &&
           llvm::count_if(run.externalTensors,
                          [&](const Tensor &o) { return o.buf == t.buf; }) ==
               1 &&
           diesIn(t.buf, run.inGroup, first);
  };
  for (Operation *op : run.group) {
    Value r = op->getResult(0);
    if (llvm::all_of(r.getUsers(),
                     [&](Operation *u) { return run.inGroup.contains(u); }))
      continue;
    if (run.batched && onlySummed(r, run.inGroup, run.rows)) {
      Value chunks = lb.b.create<arith::DivUIOp>(
          lb.loc, lb.add(run.rows, lb.cIndex(GNNRT_PARALLEL_CHUNK - 1)),
          lb.cIndex(GNNRT_PARALLEL_CHUNK));
      run.summed[r] = buffers.alloc(chunks, true, run.dims);
      continue;
    }
    Tensor out;
    for (auto [k, e, t] : llvm::enumerate(run.externals, run.externalTensors)) {
      if (!canOverwrite(e, t))
        continue;
      out = buffers.make(t.buf, run.outRows, true, run.dims);
      reused.insert(t.buf);
      run.inPlace[r] = k;
      break;
    }
    run.stored[r] =
        out.buf ? out : buffers.alloc(run.outRows, run.batched, run.dims);
  }
  for (Operation *op : run.group)
    if (auto d = dyn_cast<DropoutOp>(op)) {
      run.dropouts.push_back(d);
      Value rate = lb.b.create<arith::ConstantFloatOp>(lb.loc, d.getRate(),
                                                       lb.b.getF64Type());
      // An edge stage of the program that is not partitioned numbers its
      // elements locally: its key is each process's own (3), not the
      // whole graph's (0), which rows numbered globally share.
      const int64_t key = !lb.partitioned && run.batched && edgeStage ? 3 : 0;
      for (int64_t which = 0; which < 3; ++which)
        run.dropoutParams.push_back(
            lb.call(rt::Call::gnnrtDropoutParam,
                    {lb.ctx, lb.cI64(rowOps.dropoutId(d)), rate,
                     lb.cI64(which == 0 ? key : which)}));
      if (!lb.partitioned) {
        run.globalRows |= run.batched && !edgeStage;
        continue;
      }
      if (!run.batched)
        continue;
      // Element (r, j) of a partitioned function's rows is element
      // r * stride + j + offset of the single-process tensor: on the whole
      // graph of feature partitioning, row r of the process's feature
      // columns; on the own rows, row p(rank) + r; on every vertex's rows
      // (gathered, or a replicated layer's), row r.
      run.paramsPerDropout = 5;
      auto dim = [&](int64_t which) {
        return lb.call(rt::Call::gnnrtDim, {lb.ctx, lb.cI64(which)});
      };
      Value size = lb.toI64(run.rowSize);
      Value stride = size, offset = lb.cI64(0);
      if (lb.onWholeGraph && lb.featureShards) {
        stride = dim(8);
        offset = dim(7);
      } else if (lb.onWholeGraph) {
        // A replicated layer's rows are every vertex's, all columns.
      } else if (run.outRows == lb.ownSizes.numV) {
        offset = lb.b.create<arith::MulIOp>(lb.loc, dim(6), size);
      }
      run.dropoutParams.push_back(stride);
      run.dropoutParams.push_back(offset);
    }
}

void StageLowering::emitRunRows(const Run &run, Value begin, Value end,
                                ArrayRef<Tensor> ins,
                                const DenseMap<Value, Value> &outBufs,
                                const DenseMap<Value, Value> &sumBufs,
                                Value size, ArrayRef<Value> masks, Value ids) {
  Location loc = lb.loc;
  Value one = lb.cIndex(1), zero = lb.cIndex(0);
  // The row's number in the whole graph (its dropouts' masks), per row.
  Value rowId;
  // Element j of row r (at head `head` of a heads x width row).
  auto element = [&](OpBuilder &ib, Location il, Value r, Value j, Value head,
                     Value partial, Value restart) {
    DenseMap<Value, Value> element;
    for (auto [e, t] : llvm::zip(run.externals, ins)) {
      Value at = e.spread > 0 ? head : j;
      element[e.value] = lb.load(ib, t, r, at, e.broadcast);
    }
    Value out =
        ib.create<arith::AddIOp>(il, ib.create<arith::MulIOp>(il, r, size), j);
    for (Operation *op : run.group) {
      SmallVector<Value> args;
      for (Value v : op->getOperands())
        args.push_back(element.lookup(v));
      Value result;
      if (isa<BroadcastHeadsOp>(op)) {
        result = args[0]; // loaded at the head
      } else if (auto d = dyn_cast<DropoutOp>(op)) {
        const int64_t n = run.paramsPerDropout;
        const int64_t k = llvm::find(run.dropouts, d) - run.dropouts.begin();
        Value index = out;
        if (rowId)
          index = ib.create<arith::AddIOp>(
              il, ib.create<arith::MulIOp>(il, rowId, size), j);
        if (n == 5) {
          auto asIndex = [&](Value v) {
            return ib.create<arith::IndexCastOp>(il, ib.getIndexType(), v);
          };
          index = ib.create<arith::AddIOp>(
              il,
              ib.create<arith::AddIOp>(
                  il,
                  ib.create<arith::MulIOp>(il, r, asIndex(masks[n * k + 3])),
                  j),
              asIndex(masks[n * k + 4]));
        }
        result =
            emitDropoutElement(ib, loc, args[0], index, masks.slice(n * k, 3));
      } else {
        result = emitElement(ib, il, op, args);
      }
      element[op->getResult(0)] = result;
      if (Value buf = outBufs.lookup(op->getResult(0)))
        ib.create<memref::StoreOp>(il, result, buf, out);
      if (Value buf = sumBufs.lookup(op->getResult(0))) {
        Value at = ib.create<arith::AddIOp>(il, partial, j);
        Value old = ib.create<memref::LoadOp>(il, buf, at);
        Value acc = ib.create<arith::AddFOp>(il, old, result);
        ib.create<memref::StoreOp>(
            il, ib.create<arith::SelectOp>(il, restart, result, acc), buf, at);
      }
    }
  };
  lb.b.create<scf::ForOp>(
      loc, begin, end, one, ValueRange{},
      [&](OpBuilder &ob, Location l, Value r, ValueRange) {
        // The row's partial sums: row r / chunk, restarted at its first row.
        Value chunk, partial, restart;
        if (!sumBufs.empty()) {
          Value rows =
              ob.create<arith::ConstantIndexOp>(l, GNNRT_PARALLEL_CHUNK);
          chunk = ob.create<arith::DivUIOp>(l, r, rows);
          partial = ob.create<arith::MulIOp>(l, chunk, size);
          restart = ob.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::eq,
              ob.create<arith::RemUIOp>(l, r, rows), zero);
        }
        // ids[r], or r where the bound graph is the whole graph (no ids):
        // once per row, outside the loop over its elements.
        if (ids) {
          Value count = ob.create<memref::DimOp>(l, ids, 0);
          Value some = ob.create<arith::CmpIOp>(l, arith::CmpIPredicate::ugt,
                                                count, zero);
          auto pick = ob.create<scf::IfOp>(
              l, some,
              [&](OpBuilder &tb, Location tl) {
                Value id = tb.create<memref::LoadOp>(tl, ids, r);
                tb.create<scf::YieldOp>(
                    tl, ValueRange{tb.create<arith::IndexCastOp>(
                            tl, tb.getIndexType(), id)});
              },
              [&](OpBuilder &eb, Location el) {
                eb.create<scf::YieldOp>(el, r);
              });
          rowId = pick.getResult(0);
        }
        // The row's elements j; with per-head operands, as heads h and
        // elements k of a head (j = h * width + k), so that the head's
        // values are loop-invariant and the inner loop's addresses affine
        // (vectorisable; j / width would not be).
        if (run.headWidth == 0) {
          ob.create<scf::ForOp>(
              l, zero, size, one, ValueRange{},
              [&](OpBuilder &ib, Location il, Value j, ValueRange) {
                element(ib, il, r, j, Value(), partial, restart);
                ib.create<scf::YieldOp>(il);
              });
        } else {
          Value width = ob.create<arith::ConstantIndexOp>(l, run.headWidth);
          Value heads = ob.create<arith::DivUIOp>(l, size, width);
          ob.create<scf::ForOp>(
              l, zero, heads, one, ValueRange{},
              [&](OpBuilder &hb, Location hl, Value h, ValueRange) {
                Value base = hb.create<arith::MulIOp>(hl, h, width);
                hb.create<scf::ForOp>(
                    hl, zero, width, one, ValueRange{},
                    [&](OpBuilder &ib, Location il, Value k, ValueRange) {
                      element(ib, il, r, ib.create<arith::AddIOp>(il, base, k),
                              h, partial, restart);
                      ib.create<scf::YieldOp>(il);
                    });
                hb.create<scf::YieldOp>(hl);
              });
        }
        ob.create<scf::YieldOp>(l);
      });
}

void StageLowering::launchRun(const Run &run) {
  SmallVector<Value> storedValues(llvm::make_first_range(run.stored));
  SmallVector<Value> summedValues(llvm::make_first_range(run.summed));
  int64_t k = 0;
  for (const Tensor &t : run.externalTensors) {
    kernels.setBuffer(k, t.buf);
    kernels.setInt(k, t.rowSize);
    ++k;
  }
  for (Value v : storedValues)
    if (!run.inPlace.count(v))
      kernels.setBuffer(k++, run.stored.lookup(v).buf);
  for (Value v : summedValues)
    kernels.setBuffer(k++, run.summed.lookup(v).buf);
  kernels.setInt(k, run.rowSize);
  for (auto [i, p] : llvm::enumerate(run.dropoutParams))
    kernels.setInt(k + 1 + i, p);
  if (run.globalRows)
    kernels.setBuffer(0, lb.call(rt::Call::gnnrtVertexIds, {lb.ctx}));

  // Partial sums per chunk: a kernel invocation must take whole chunks.
  if (!summedValues.empty())
    kernels.needChunkedRows();
  kernels.begin();
  SmallVector<Tensor> ins;
  int64_t a = 0;
  for (const Tensor &t : run.externalTensors) {
    Tensor proxy = t;
    proxy.buf = kernels.getBuffer(a, /*isI32=*/false);
    proxy.rowSize = lb.toIndex(lb.b, kernels.getInt(a));
    ins.push_back(proxy);
    ++a;
  }
  DenseMap<Value, Value> kernelOut, kernelSum;
  // An in-place result is stored through its operand's memref (the operand
  // then read with the run's row size): one base pointer and one index, so
  // that the loop still vectorises, without an alias check (which
  // overlapping buffers would fail).
  for (Value v : storedValues)
    kernelOut[v] = run.inPlace.count(v)
                       ? ins[run.inPlace.lookup(v)].buf
                       : kernels.getBuffer(a++, /*isI32=*/false);
  for (Value v : summedValues)
    kernelSum[v] = kernels.getBuffer(a++, /*isI32=*/false);
  Value size = lb.toIndex(lb.b, kernels.getInt(a));
  for (auto [v, k] : run.inPlace)
    ins[k].rowSize = size;
  SmallVector<Value> maskParams;
  for (size_t i = 0; i < run.dropoutParams.size(); ++i)
    maskParams.push_back(kernels.getInt(a + 1 + i));
  Value ids = run.globalRows ? kernels.getBuffer(0, /*isI32=*/true) : Value();
  emitRunRows(run, kernels.rangeBegin(), kernels.rangeEnd(), ins, kernelOut,
              kernelSum, size, maskParams, ids);
  kernels.launch(run.outRows);
}

LogicalResult StageLowering::lowerRun(ArrayRef<Operation *> group, Value rows) {
  Run run;
  run.group = group;
  run.inGroup.insert(group.begin(), group.end());
  run.rows = rows;
  analyzeRun(run);
  assignRunResults(run);
  // The loop nest over rows [begin, end): in this function for one row
  // (parameters), else in a kernel over the rows.
  DenseMap<Value, Value> outBufs;
  for (auto &[v, t] : run.stored)
    outBufs[v] = t.buf;
  if (!run.batched)
    emitRunRows(run, lb.cIndex(0), run.outRows, run.externalTensors, outBufs,
                DenseMap<Value, Value>(), run.rowSize, run.dropoutParams);
  else
    launchRun(run);
  for (auto &[v, t] : run.stored)
    buffers.bind(v, t);
  for (auto &[v, t] : run.summed)
    buffers.bind(v, t);
  return success();
}

bool StageLowering::onlySummed(Value r,
                               const llvm::SmallPtrSetImpl<Operation *> &group,
                               Value rows) {
  if (!stage || rows != lb.sizes.numV)
    return false;
  bool any = false;
  for (OpOperand &use : r.getUses()) {
    if (group.contains(use.getOwner()))
      continue;
    auto yield = dyn_cast<YieldOp>(use.getOwner());
    if (!yield || yield->getParentOp() != stage)
      return false;
    Value result = stage->getResult(use.getOperandNumber());
    if (result.use_empty() ||
        !llvm::all_of(result.getUsers(),
                      [](Operation *u) { return isa<SumRowsOp>(u); }))
      return false;
    any = true;
  }
  return any;
}

bool StageLowering::diesIn(Value buf,
                           const llvm::SmallPtrSetImpl<Operation *> &group,
                           int64_t first) {
  // A buffer no gnn value was bound to (an edge cache) is not a run's.
  if (!stage || buffers.valuesBoundTo(buf).empty())
    return false;
  const int64_t stageIndex = buffers.indexOfOp(stage);
  for (Value v : buffers.valuesBoundTo(buf)) {
    // Later readers, including the ones addRead adds (an SpMM's input).
    if (buffers.lastUseOf(v) > stageIndex)
      return false;
    for (Operation *u : v.getUsers()) {
      if (group.contains(u) || u == stage) // the stage reads it by its block
        continue;                          // arguments, checked themselves
      if (isa<YieldOp>(u) && u->getParentOp() == stage)
        return false; // the stage's result
      if (buffers.indexOf(u) >= first)
        return false; // read after the run starts, outside it
    }
  }
  return true;
}

Tensor StageLowering::broadcastRows(const Tensor &t, Value rows) {
  Tensor out = buffers.alloc(rows, true, t.dims);
  lb.elementwise(out, {&t},
                 [](OpBuilder &, Location, ValueRange v) { return v[0]; });
  return out;
}

LogicalResult StageLowering::lowerStage(Operation *op, Region &body,
                                        ValueRange inputs,
                                        ArrayRef<Value> params, bool edges) {
  // A vertex stage runs over its inputs' rows: the own vertices, or every
  // vertex for the gradient sums of a row-partitioned function's
  // all-gathers (GNNOps.h, VertexSpace).
  Value rows = edges ? lb.sizes.numE : lb.sizes.numV;
  if (!edges)
    for (Value in : inputs)
      if (isa<VertexTensorType>(in.getType()) &&
          getVertexSpace(in) != VertexSpace::Own)
        rows = lb.sizes.numS;
  Block &block = body.front();
  llvm::SaveAndRestore<Operation *> inStage(stage, op);
  llvm::SaveAndRestore<bool> overEdges(edgeStage, edges);
  for (auto [arg, in] :
       llvm::zip(block.getArguments().take_front(inputs.size()), inputs)) {
    Tensor t = buffers.lookup(in);
    buffers.bind(arg, t);
  }
  for (auto [arg, p] :
       llvm::zip(block.getArguments().drop_front(inputs.size()), params)) {
    Tensor t = buffers.lookup(p);
    buffers.bind(arg, t);
  }
  // Whether a body value depends on the stage's rows (not only parameters).
  std::function<bool(Value)> readsRows = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() == &block && arg.getArgNumber() < inputs.size();
    Operation *def = v.getDefiningOp();
    return def && llvm::any_of(def->getOperands(), readsRows);
  };
  // Runs of element-wise ops with one row shape become one loop nest.
  SmallVector<Operation *> group;
  auto flush = [&]() -> LogicalResult {
    if (group.empty())
      return success();
    LogicalResult r = lowerRun(group, rows);
    group.clear();
    return r;
  };
  for (Operation &inner : block.without_terminator()) {
    // Constants depend on nothing: materialise them without ending a run.
    if (isa<ConstantOp>(inner)) {
      if (failed(rowOps.lower(&inner, rows)))
        return failure();
      continue;
    }
    // Ops in a pending run are lowered together: expire nothing before them.
    // Dropouts of per-row values join runs too: their mask is computed
    // inline per element (one of a parameter row keeps the runtime call: its
    // mask is one row's, shared by every vertex).
    if (isElementwise(&inner) ||
        (isa<DropoutOp>(inner) && readsRows(inner.getOperand(0))) ||
        spreadsHeads(&inner)) {
      auto shape =
          cast<RankedTensorType>(inner.getResult(0).getType()).getShape();
      if (!group.empty() &&
          cast<RankedTensorType>(group.front()->getResult(0).getType())
                  .getShape() != shape &&
          failed(flush()))
        return failure();
      group.push_back(&inner);
      continue;
    }
    // An op that reads nothing of the pending run (GCN's backward: the
    // dropout of the incoming gradient between `lin + b` and `step`) is
    // lowered first and the run goes on past it, so that the run stays one
    // loop nest and its intermediate rows are never stored. Nothing the run
    // still reads may be released meanwhile.
    bool readsRun = llvm::any_of(inner.getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && llvm::is_contained(group, def);
    });
    if (readsRun && failed(flush()))
      return failure();
    int64_t cap = group.empty() ? std::numeric_limits<int64_t>::max()
                                : buffers.indexOfOp(group.front()) - 1;
    buffers.expire(std::min(buffers.indexOfOp(&inner) - 1, cap));
    if (failed(rowOps.lower(&inner, rows)))
      return failure();
    buffers.expire(std::min(buffers.indexOfOp(&inner), cap));
  }
  if (failed(flush()))
    return failure();
  auto yield = cast<YieldOp>(block.getTerminator());
  for (auto [y, r] : llvm::zip(yield.getValues(), op->getResults())) {
    Tensor t = buffers.lookup(y);
    Tensor result = t.batched ? t : broadcastRows(t, rows);
    buffers.bind(r, result);
  }
  return success();
}
