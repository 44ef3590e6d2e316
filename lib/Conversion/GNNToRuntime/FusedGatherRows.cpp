//===- FusedGatherRows.cpp - a fused_gather kernel's rows
//------------------===//
//
// How the edges of a row accumulate into its result rows (sum/mean add,
// max/min a strict compare that keeps the earlier edge and may record it;
// mean divides, empty max/min rows are 0): in memory, a load and store per
// edge (the CPU, and in tiles of input rows: RowChunks.h), or, where a GPU
// warp shares the row, in registers stored once; the long rows the runtime
// splits (GatherPart) as pieces into scratch rows and their in-order
// combine.
//
//===----------------------------------------------------------------------===//

#include "FusedKernelBuilder.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::detail;

FusedKernelBuilder::RowSpan FusedKernelBuilder::wholeRow(OpBuilder &vb,
                                                         Value v) {
  RowSpan span;
  span.outRow = v;
  span.p0 = lb.toIndex(vb, loadAt(vb, offsets, v));
  span.p1 = lb.toIndex(
      vb, loadAt(vb, offsets, vb.create<arith::AddIOp>(loc, v, one)));
  span.q0 = span.p0;
  span.q1 = span.p1;
  return span;
}

void FusedKernelBuilder::emitRow(OpBuilder &vb, Value v, const RowSpan &span,
                                 Value inRegisters) {
  if (!inRegisters) {
    emitVertex(vb, v, span);
  } else if (auto c = getConstantIntValue(inRegisters); c && *c) {
    emitVertexInRegisters(vb, v, span);
  } else {
    vb.create<scf::IfOp>(
        loc, inRegisters,
        [&](OpBuilder &tb, Location) {
          emitVertexInRegisters(tb, v, span);
          tb.create<scf::YieldOp>(loc);
        },
        [&](OpBuilder &fb, Location) {
          emitVertex(fb, v, span);
          fb.create<scf::YieldOp>(loc);
        });
  }
}

SmallVector<Value> FusedKernelBuilder::rowBasesOf(OpBuilder &ob, Value outRow) {
  SmallVector<Value> rowBases;
  for (auto [o, w] : llvm::enumerate(outWidths))
    rowBases.push_back(
        part == GatherPart::Pieces
            ? ob.create<arith::AddIOp>(
                    loc, ob.create<arith::MulIOp>(loc, outRow, scratchStride),
                    scratchOffsets[o])
                  .getResult()
            : ob.create<arith::MulIOp>(loc, outRow, w).getResult());
  return rowBases;
}

void FusedKernelBuilder::emitCombine(OpBuilder &vb, Value j) {
  Value v = lb.toIndex(vb, loadAt(vb, longRows, j));
  RowSpan span = wholeRow(vb, v);
  SmallVector<Value> rowBases = rowBasesOf(vb, v);
  Value k0 = lb.toIndex(vb, loadAt(vb, pieceOffsets, j));
  Value k1 = lb.toIndex(
      vb, loadAt(vb, pieceOffsets, vb.create<arith::AddIOp>(loc, j, one)));
  Value k0Next = vb.create<arith::AddIOp>(loc, k0, one);
  // Column by column: the first piece's partial, then each later one's in
  // order (max/min: strictly better only, so ties keep the earlier piece's
  // edge, as one pass over the row does).
  for (int64_t o = 0; o < numOuts; ++o)
    vb.create<scf::ForOp>(
        loc, firstColumn, outWidths[o], columnStep, ValueRange{},
        [&](OpBuilder &cb, Location, Value c, ValueRange) {
          auto at = [&](OpBuilder &ob, Value k) {
            return ob
                .create<arith::AddIOp>(
                    loc,
                    ob.create<arith::AddIOp>(
                        loc, ob.create<arith::MulIOp>(loc, k, scratchStride),
                        scratchOffsets[o]),
                    c)
                .getResult();
          };
          SmallVector<Value> init{loadAt(cb, scratch, at(cb, k0))};
          if (argScratch)
            init.push_back(loadAt(cb, argScratch, at(cb, k0)));
          auto fold = cb.create<scf::ForOp>(
              loc, k0Next, k1, one, init,
              [&](OpBuilder &kb, Location, Value k, ValueRange carried) {
                Value idx = at(kb, k);
                Value x = loadAt(kb, scratch, idx);
                Value xArg = argScratch ? loadAt(kb, argScratch, idx) : Value();
                auto [next, nextArg] = combine(
                    kb, carried[0], x, argScratch ? carried[1] : Value(), xArg);
                SmallVector<Value> yielded{next};
                if (nextArg)
                  yielded.push_back(nextArg);
                kb.create<scf::YieldOp>(loc, yielded);
              });
          Value idx = cb.create<arith::AddIOp>(loc, rowBases[o], c);
          cb.create<memref::StoreOp>(loc, fold.getResult(0), outBufs[o], idx);
          if (argBuf)
            cb.create<memref::StoreOp>(loc, fold.getResult(1), argBuf, idx);
          cb.create<scf::YieldOp>(loc);
        });
  if (acc != Accumulator::Sum)
    emitFinalize(vb, span.p0, span.p1, rowBases);
}

void FusedKernelBuilder::emitVertex(OpBuilder &vb, Value v,
                                    const RowSpan &span) {
  SmallVector<Value> rowBases = rowBasesOf(vb, span.outRow);
  Value p0 = span.p0, p1 = span.p1;
  // A tile: the edges from input rows [tileLo, tileHi), a contiguous range
  // of the row's positions; the row is set at the first tile (lo = 0) and
  // finished at the last (hi = V), over all of its edges.
  Value q0 = span.q0, q1 = span.q1, firstTile, lastTile;
  if (tileLo) {
    q0 = lowerBound(vb, p0, p1, tileLo);
    q1 = lowerBound(vb, q0, p1, tileHi);
    firstTile =
        vb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tileLo, zero);
    lastTile = vb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tileHi,
                                        numVertices);
  }
  float initValue = acc == Accumulator::Max   ? -INFINITY
                    : acc == Accumulator::Min ? INFINITY
                                              : 0.0f;
  Value init = vb.create<arith::ConstantFloatOp>(loc, APFloat(initValue),
                                                 vb.getF32Type());
  emitIf(vb, firstTile, [&](OpBuilder &ib) {
    for (int64_t o = 0; o < numOuts; ++o)
      ib.create<scf::ForOp>(
          loc, firstColumn, outWidths[o], columnStep, ValueRange{},
          [&](OpBuilder &jb, Location, Value j, ValueRange) {
            Value idx = jb.create<arith::AddIOp>(loc, rowBases[o], j);
            jb.create<memref::StoreOp>(loc, init, outBufs[o], idx);
            if (argBuf)
              jb.create<memref::StoreOp>(
                  loc,
                  jb.create<arith::ConstantIntOp>(loc, -1, jb.getI32Type()),
                  argBuf, idx);
            jb.create<scf::YieldOp>(loc);
          });
  });
  vb.create<scf::ForOp>(loc, q0, q1, one, ValueRange{},
                        [&](OpBuilder &eb, Location, Value p, ValueRange) {
                          emitEdge(eb, v, p, rowBases);
                          eb.create<scf::YieldOp>(loc);
                        });
  if (acc != Accumulator::Sum && span.finish)
    emitIf(vb, lastTile,
           [&](OpBuilder &ib) { emitFinalize(ib, p0, p1, rowBases); });
}

void FusedKernelBuilder::emitIf(OpBuilder &ob, Value cond,
                                function_ref<void(OpBuilder &)> fn) {
  if (!cond) {
    fn(ob);
    return;
  }
  auto ifOp = ob.create<scf::IfOp>(loc, cond, /*withElseRegion=*/false);
  OpBuilder tb = ifOp.getThenBodyBuilder();
  fn(tb);
}

Value FusedKernelBuilder::lowerBound(OpBuilder &ob, Value from, Value to,
                                     Value target) {
  Type indexType = ob.getIndexType();
  Value want =
      ob.create<arith::IndexCastOp>(loc, ob.getI32Type(), target).getResult();
  auto search = ob.create<scf::WhileOp>(
      loc, TypeRange{indexType, indexType}, ValueRange{from, to},
      [&](OpBuilder &cb, Location, ValueRange range) {
        Value more = cb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                              range[0], range[1]);
        cb.create<scf::ConditionOp>(loc, more, range);
      },
      [&](OpBuilder &bb, Location, ValueRange range) {
        Value sum = bb.create<arith::AddIOp>(loc, range[0], range[1]);
        Value mid = bb.create<arith::ShRUIOp>(loc, sum, one);
        Value x = loadAt(bb, other, mid);
        Value below =
            bb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, x, want);
        Value next = bb.create<arith::AddIOp>(loc, mid, one);
        Value lo = bb.create<arith::SelectOp>(loc, below, next, range[0]);
        Value hi = bb.create<arith::SelectOp>(loc, below, range[1], mid);
        bb.create<scf::YieldOp>(loc, ValueRange{lo, hi});
      });
  return search.getResult(0);
}

void FusedKernelBuilder::emitEdge(OpBuilder &eb, Value v, Value p,
                                  ArrayRef<Value> rowBases) {
  emitEdgeValues(eb, v, p);
  emitAccumulate(eb, rowBases);
}

void FusedKernelBuilder::emitAccumulate(OpBuilder &eb,
                                        ArrayRef<Value> rowBases) {
  for (int64_t o = 0; o < numOuts; ++o)
    forElements(eb, results[o].getShape(), outWidths[o],
                [&](OpBuilder &jb, Value j, Value head) {
                  Cache cache;
                  Value x = at(jb, fg.getYield().getValues()[o],
                               results[o].getShape(), j, head, cache);
                  Value idx = jb.create<arith::AddIOp>(loc, rowBases[o], j);
                  Value old = loadAt(jb, outBufs[o], idx);
                  Value oldArg = argBuf ? loadAt(jb, argBuf, idx) : Value();
                  auto [next, nextArg] = combine(jb, old, x, oldArg);
                  if (nextArg)
                    jb.create<memref::StoreOp>(loc, nextArg, argBuf, idx);
                  jb.create<memref::StoreOp>(loc, next, outBufs[o], idx);
                });
}

std::pair<Value, Value> FusedKernelBuilder::combine(OpBuilder &ob, Value old,
                                                    Value x, Value oldArg,
                                                    Value xArg) {
  if (acc == Accumulator::Sum || acc == Accumulator::Mean)
    return {ob.create<arith::AddFOp>(loc, old, x), Value()};
  // Strict: ties keep the earlier edge's value.
  auto pred = acc == Accumulator::Max ? arith::CmpFPredicate::OGT
                                      : arith::CmpFPredicate::OLT;
  Value better = ob.create<arith::CmpFOp>(loc, pred, x, old);
  Value next = ob.create<arith::SelectOp>(loc, better, x, old);
  if (!oldArg)
    return {next, Value()};
  return {next,
          ob.create<arith::SelectOp>(loc, better, xArg ? xArg : e32, oldArg)};
}

Value FusedKernelBuilder::registerCondition(OpBuilder &ob) {
  // Where one lane has the whole row (the CPU) the loads and stores of the
  // row stay in its cache and vectorise over the columns; a tile's row is
  // set, added to and finished in different calls.
  const int64_t lanes = kernels.lanes();
  if (lanes <= 1 || tileLo)
    return Value();
  registerColumns.clear();
  Value cond;
  int64_t total = 0;
  for (int64_t o = 0; o < numOuts; ++o) {
    std::optional<int64_t> w = getConstantIntValue(outWidths[o]);
    int64_t columns = w ? llvm::divideCeil(*w, lanes) : kDynamicRegisterColumns;
    registerColumns.push_back(columns);
    total += columns;
    if (w)
      continue;
    Value fits =
        ob.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ule, outWidths[o],
                                 lb.cIndex(columns * lanes));
    cond = cond ? ob.create<arith::AndIOp>(loc, cond, fits).getResult() : fits;
  }
  if (total > kMaxRegisterColumns)
    return Value();
  return cond ? cond : lb.cIndex(1);
}

void FusedKernelBuilder::emitVertexInRegisters(OpBuilder &vb, Value v,
                                               const RowSpan &span) {
  const int64_t lanes = kernels.lanes();
  SmallVector<Value> rowBases = rowBasesOf(vb, span.outRow);
  Value p0 = span.p0, p1 = span.p1;
  // Column c = lane + lanes * slot of each output, and the column it reads
  // (c clamped to the row: a lane past the row's end computes a value it
  // does not store, branch-free), with its head for `heads x F` rows.
  struct Slot {
    int64_t out;
    Value column, valid, read, head;
  };
  SmallVector<Slot> slots;
  for (int64_t o = 0; o < numOuts; ++o) {
    ArrayRef<int64_t> shape = results[o].getShape();
    Value last = vb.create<arith::SubIOp>(loc, outWidths[o], one);
    for (int64_t j = 0; j < registerColumns[o]; ++j) {
      Value c =
          vb.create<arith::AddIOp>(loc, firstColumn, lb.cIndex(j * lanes));
      Value valid = vb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, c,
                                             outWidths[o]);
      Value read = vb.create<arith::MinUIOp>(loc, c, last);
      Value head;
      if (shape.size() == 2 && !ShapedType::isDynamic(shape[0])) {
        Value f = ShapedType::isDynamic(shape[1])
                      ? vb.create<arith::DivUIOp>(loc, outWidths[o],
                                                  lb.cIndex(shape[0]))
                            .getResult()
                      : lb.cIndex(shape[1]);
        head = vb.create<arith::DivUIOp>(loc, read, f);
      }
      slots.push_back({o, c, valid, read, head});
    }
  }
  float initValue = acc == Accumulator::Max   ? -INFINITY
                    : acc == Accumulator::Min ? INFINITY
                                              : 0.0f;
  SmallVector<Value> init;
  Value initF = vb.create<arith::ConstantFloatOp>(loc, APFloat(initValue),
                                                  vb.getF32Type());
  Value noEdge = argBuf
                     ? vb.create<arith::ConstantIntOp>(loc, -1, vb.getI32Type())
                     : Value();
  for (size_t i = 0; i < slots.size(); ++i) {
    init.push_back(initF);
    if (argBuf)
      init.push_back(noEdge);
  }
  const int64_t step = argBuf ? 2 : 1;
  auto loop = vb.create<scf::ForOp>(
      loc, span.q0, span.q1, one, init,
      [&](OpBuilder &eb, Location, Value p, ValueRange carried) {
        emitEdgeValues(eb, v, p);
        SmallVector<Value> next;
        for (auto [i, slot] : llvm::enumerate(slots)) {
          Cache cache;
          Value x =
              at(eb, fg.getYield().getValues()[slot.out],
                 results[slot.out].getShape(), slot.read, slot.head, cache);
          auto [value, arg] = combine(eb, carried[i * step], x,
                                      argBuf ? carried[i * step + 1] : Value());
          next.push_back(value);
          if (argBuf)
            next.push_back(arg);
        }
        eb.create<scf::YieldOp>(loc, next);
      });
  for (auto [i, slot] : llvm::enumerate(slots)) {
    Value idx = vb.create<arith::AddIOp>(loc, rowBases[slot.out], slot.column);
    vb.create<scf::IfOp>(loc, slot.valid, [&](OpBuilder &tb, Location) {
      tb.create<memref::StoreOp>(loc, loop.getResult(i * step),
                                 outBufs[slot.out], idx);
      if (argBuf)
        tb.create<memref::StoreOp>(loc, loop.getResult(i * step + 1), argBuf,
                                   idx);
      tb.create<scf::YieldOp>(loc);
    });
  }
  // A warp works through its row's edges one after another, so a long row
  // (a hub of thousands of edges) is as slow as its chain of dependent
  // loads: kEdgeUnroll edges per iteration issue their loads together (the
  // stores above take the remainder loop's results). Left as it is where
  // the loop cannot be unrolled.
  (void)loopUnrollByFactor(loop, kEdgeUnroll);
  if (acc != Accumulator::Sum && span.finish)
    emitFinalize(vb, p0, p1, rowBases);
}

void FusedKernelBuilder::emitFinalize(OpBuilder &vb, Value p0, Value p1,
                                      ArrayRef<Value> rowBases) {
  // mean: divide by the degree; max/min: 0 without edges.
  Value count = vb.create<arith::SubIOp>(loc, p1, p0);
  Value empty =
      vb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, count, zero);
  Value zeroF =
      vb.create<arith::ConstantFloatOp>(loc, APFloat(0.0f), vb.getF32Type());
  Value inv;
  if (acc == Accumulator::Mean) {
    Value n = vb.create<arith::UIToFPOp>(
        loc, vb.getF32Type(),
        vb.create<arith::IndexCastOp>(
            loc, vb.getI64Type(), vb.create<arith::MaxUIOp>(loc, count, one)));
    Value oneF =
        vb.create<arith::ConstantFloatOp>(loc, APFloat(1.0f), vb.getF32Type());
    inv = vb.create<arith::DivFOp>(loc, oneF, n);
  }
  for (int64_t o = 0; o < numOuts; ++o)
    vb.create<scf::ForOp>(
        loc, firstColumn, outWidths[o], columnStep, ValueRange{},
        [&](OpBuilder &jb, Location, Value j, ValueRange) {
          Value idx = jb.create<arith::AddIOp>(loc, rowBases[o], j);
          Value x = loadAt(jb, outBufs[o], idx);
          Value r = inv ? jb.create<arith::MulFOp>(loc, x, inv).getResult()
                        : jb.create<arith::SelectOp>(loc, empty, zeroF, x)
                              .getResult();
          jb.create<memref::StoreOp>(loc, r, outBufs[o], idx);
          jb.create<scf::YieldOp>(loc);
        });
}
