//===- FusedGatherKernel.cpp - the kernel of a fused_gather ---------------===//
//
// For each vertex of the kernel's range, for each of its edges (CSC offsets
// to dst; CSR, with the destinations in CSR order, to src): the body's
// one-element values and row reductions once per edge, per-head values once
// per edge and head, then the body at each result element, accumulated as
// FusedGatherRows.cpp says. This file: the kernel, its operands and parts
// (GatherPart), and the body's values at an edge.
//
//===----------------------------------------------------------------------===//

#include "FusedKernelBuilder.h"

#include "ElementMath.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <cmath>
#include <functional>
#include <set>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::detail;

LogicalResult FusedKernelBuilder::checkWidths() {
  std::set<SmallVector<int64_t>> known;
  for (RankedTensorType r : results)
    known.insert(SmallVector<int64_t>(r.getShape()));
  for (Value v : body.getArguments())
    known.insert(SmallVector<int64_t>(shapeOf(v)));
  for (Operation &op : body.without_terminator())
    for (Value v : op.getOperands())
      if (!oneElement(v) &&
          llvm::is_contained(shapeOf(v), ShapedType::kDynamic) &&
          !known.count(SmallVector<int64_t>(shapeOf(v))))
        return fg.emitOpError() << "has a row of shape " << v.getType()
                                << " whose width is unknown";
  return success();
}

void FusedKernelBuilder::readOperands(ArrayRef<Tensor> operands,
                                      const KernelCaches &caches,
                                      int64_t firstCacheArg) {
  // Row widths: constants where the row type is static (the loops then have
  // known trip counts to unroll and vectorise), else the runtime's.
  auto staticWidth = [&](Type t) -> Value {
    auto row = dyn_cast<RankedTensorType>(t);
    if (auto r = rowTypeOf(t))
      row = r;
    if (!row || !row.hasStaticShape())
      return Value();
    return lb.cIndex(row.getNumElements());
  };
  for (int64_t i = 0; i < numOuts; ++i) {
    outBufs.push_back(kernels.getBuffer(i, /*isI32=*/false));
    Value w = staticWidth(results[i]);
    outWidths.push_back(w ? w : lb.toIndex(lb.b, kernels.getInt(i)));
  }
  argBuf = fg.getArg() ? kernels.getBuffer(0, /*isI32=*/true) : Value();
  for (unsigned i = 0; i < operands.size(); ++i) {
    bool i32 = cast<MemRefType>(operands[i].buf.getType())
                   .getElementType()
                   .isInteger(32);
    bufs.push_back(kernels.getBuffer(numOuts + i, i32));
    Value w = staticWidth(body.getArgument(i).getType());
    rowSizes.push_back(w ? w : lb.toIndex(lb.b, kernels.getInt(numOuts + i)));
  }
  for (auto [i, c] : llvm::enumerate(caches)) {
    auto [v, cache, store] = c;
    Value buf = kernels.getBuffer(firstCacheArg + static_cast<int64_t>(i),
                                  /*isI32=*/false);
    (store ? cacheStore : cacheLoad)[v] = {buf, cache->width};
  }
  offsets = kernels.graphOffsets(toDst ? 1 : 0);
  // To dst: edge p of v is edge id p, its source indices[p]. To src: edge
  // ids come from the CSR order (loaded only where the body reads per-edge
  // data), the other end from the destinations in CSR order: read in order,
  // not one dependent cache miss per edge before its rows can be fetched.
  other = kernels.graphIndex(toDst ? 0 : 3);
  csrEdge = toDst ? Value() : kernels.graphIndex(2);
  // The width of every row shape in the body: static, or a `?` shape's from
  // an operand (or the result) with that shape.
  for (auto [r, w] : llvm::zip(results, outWidths))
    widths[SmallVector<int64_t>(r.getShape())] = w;
  for (auto [i, v] : llvm::enumerate(body.getArguments()))
    widths.try_emplace(SmallVector<int64_t>(shapeOf(v)), rowSizes[i]);
}

Value FusedKernelBuilder::widthOf(ArrayRef<int64_t> shape) {
  auto it = widths.find(SmallVector<int64_t>(shape));
  if (it != widths.end())
    return it->second;
  if (llvm::is_contained(shape, ShapedType::kDynamic))
    return Value();
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  Value c = lb.cIndex(n);
  widths[SmallVector<int64_t>(shape)] = c;
  return c;
}

Value FusedKernelBuilder::allocateHeadBuffer(int64_t floats) {
  OpBuilder &b = lb.b;
  auto type = MemRefType::get({floats}, b.getF32Type());
  // The kernel runs on OpenMP threads, whose stacks are small (a few MiB):
  // past kMaxStackBytes in all, the buffers come from the heap, once per
  // call of the kernel (a range of vertices), freed at its end.
  int64_t bytes = floats * static_cast<int64_t>(sizeof(float));
  if (floats <= kMaxStackBytes / static_cast<int64_t>(sizeof(float)) &&
      stackBytes + bytes <= kMaxStackBytes) {
    stackBytes += bytes;
    return b.create<memref::AllocaOp>(loc, type);
  }
  Value buf = b.create<memref::AllocOp>(loc, type);
  heapBuffers.push_back(buf);
  return buf;
}

void FusedKernelBuilder::allocateHeadBuffers() {
  for (Operation &op : body.without_terminator()) {
    Value r = op.getResult(0);
    auto t = cast<RankedTensorType>(r.getType());
    if (oneElement(r))
      continue;
    if (isa<RowDotOp>(op)) {
      headSums[r] = allocateHeadBuffer(t.getDimSize(0));
    } else if (t.getRank() == 1 && t.hasStaticShape() && !isa<ConstantOp>(op) &&
               llvm::any_of(results, [&](RankedTensorType r) {
                 return r.getRank() == 2 && r.getDimSize(0) == t.getDimSize(0);
               })) {
      headValues[r] = allocateHeadBuffer(t.getDimSize(0));
    }
  }
  // A stored value is computed once per edge (into its buffer); a loaded one
  // is not computed at all.
  for (auto &[v, cw] : cacheStore)
    if (cw.second > 1 && !headSums.count(v) && !headValues.count(v))
      headValues[v] = allocateHeadBuffer(cw.second);
  for (auto &[v, cw] : cacheLoad) {
    headSums.erase(v);
    headValues.erase(v);
  }
}

void FusedKernelBuilder::forHeads(
    OpBuilder &ob, ArrayRef<int64_t> shape,
    function_ref<void(OpBuilder &, Value, Value, Value)> fn) {
  Value f =
      ShapedType::isDynamic(shape[1])
          ? ob.create<arith::DivUIOp>(loc, widthOf(shape), lb.cIndex(shape[0]))
                .getResult()
          : lb.cIndex(shape[1]);
  ob.create<scf::ForOp>(loc, zero, lb.cIndex(shape[0]), one, ValueRange{},
                        [&](OpBuilder &hb, Location, Value h, ValueRange) {
                          fn(hb, h, hb.create<arith::MulIOp>(loc, h, f), f);
                          hb.create<scf::YieldOp>(loc);
                        });
}

void FusedKernelBuilder::forElements(
    OpBuilder &ob, ArrayRef<int64_t> shape, Value width,
    function_ref<void(OpBuilder &, Value, Value)> fn) {
  // A `heads x F` row is a nest over the heads, so per-head values are
  // loop-invariant in the inner loop (no division per element).
  if (shape.size() == 2 && !ShapedType::isDynamic(shape[0])) {
    forHeads(ob, shape, [&](OpBuilder &hb, Value h, Value base, Value f) {
      hb.create<scf::ForOp>(loc, firstColumn, f, columnStep, ValueRange{},
                            [&](OpBuilder &jb, Location, Value i, ValueRange) {
                              fn(jb, jb.create<arith::AddIOp>(loc, base, i), h);
                              jb.create<scf::YieldOp>(loc);
                            });
    });
    return;
  }
  ob.create<scf::ForOp>(loc, firstColumn, width, columnStep, ValueRange{},
                        [&](OpBuilder &jb, Location, Value j, ValueRange) {
                          fn(jb, j, Value());
                          jb.create<scf::YieldOp>(loc);
                        });
}

void FusedKernelBuilder::emit(
    ArrayRef<Tensor> operands, const KernelCaches &caches,
    int64_t firstCacheArg, std::optional<std::pair<int64_t, int64_t>> tileInts,
    GatherPart kernelPart, Value launchRows, int64_t inputRowsInt) {
  part = kernelPart;
  // Every lane computes the edge's one-element and per-head values; the
  // loops over the output's columns and the row reductions are split among
  // the lanes.
  kernels.allowLanesPerRow();
  kernels.begin();
  begin = kernels.rangeBegin();
  end = kernels.rangeEnd();
  readOperands(operands, caches, firstCacheArg);
  allocateHeadBuffers();
  // Every width known before the loops (constants at the kernel's top).
  for (Operation &op : body.without_terminator())
    for (Value v : op.getOperands())
      if (!oneElement(v))
        (void)widthOf(shapeOf(v));
  zero = lb.cIndex(0);
  one = lb.cIndex(1);
  firstColumn = kernels.lane() ? kernels.lane() : zero;
  columnStep = lb.cIndex(kernels.lanes());
  cacheLine = lb.cIndex(16);
  prefetchSpan = lb.cIndex(kPrefetchLines * 16);
  // Only a kernel of one lane per row prefetches (emitEdgeValues).
  if (kernels.lanes() == 1)
    prefetchDistance = prefetchDistanceFor(lb.b);
  numPositions = lb.b.create<memref::DimOp>(loc, other, 0);
  if (tileInts) {
    tileLo = lb.toIndex(lb.b, kernels.getInt(tileInts->first));
    tileHi = lb.toIndex(lb.b, kernels.getInt(tileInts->second));
    numVertices =
        inputRowsInt >= 0
            ? lb.toIndex(lb.b, kernels.getInt(inputRowsInt))
            : lb.b.create<arith::SubIOp>(
                  loc, lb.b.create<memref::DimOp>(loc, offsets, 0), one);
  }
  const int64_t side = toDst ? 1 : 0;
  if (part != GatherPart::Whole)
    pieceEdges = lb.toIndex(lb.b, kernels.graphPieceEdges(side));
  if (part == GatherPart::Pieces || part == GatherPart::Combine) {
    longRows = kernels.graphLongRows(side, 0);
    pieceRow = kernels.graphLongRows(side, 1);
    pieceOffsets = kernels.graphPieceOffsets(side);
    const int64_t scratchArg =
        firstCacheArg + static_cast<int64_t>(caches.size());
    scratch = kernels.getBuffer(scratchArg, /*isI32=*/false);
    argScratch =
        argBuf ? kernels.getBuffer(scratchArg, /*isI32=*/true) : Value();
    scratchOffsets.clear();
    scratchStride = zero;
    for (Value w : outWidths) {
      scratchOffsets.push_back(scratchStride);
      scratchStride = lb.b.create<arith::AddIOp>(loc, scratchStride, w);
    }
    // A piece accumulates into its scratch row (rowBasesOf) as a row into
    // its outputs.
    if (part == GatherPart::Pieces) {
      outBufs.assign(numOuts, scratch);
      argBuf = argScratch;
    }
  }
  // The combine folds stored partial rows: no registers to carry.
  Value inRegisters =
      part == GatherPart::Combine ? Value() : registerCondition(lb.b);
  lb.b.create<scf::ForOp>(
      loc, begin, end, one, ValueRange{},
      [&](OpBuilder &vb, Location, Value i, ValueRange) {
        switch (part) {
        case GatherPart::Whole:
          emitRow(vb, i, wholeRow(vb, i), inRegisters);
          break;
        case GatherPart::Rows: {
          // A row the runtime split is left to the pieces (uniform in a
          // warp: its lanes share the row).
          RowSpan span = wholeRow(vb, i);
          Value degree = vb.create<arith::SubIOp>(loc, span.p1, span.p0);
          Value unsplit = vb.create<arith::OrIOp>(
              loc,
              vb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                       pieceEdges, zero),
              vb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ule, degree,
                                       pieceEdges));
          vb.create<scf::IfOp>(loc, unsplit, [&](OpBuilder &tb, Location) {
            emitRow(tb, i, span, inRegisters);
            tb.create<scf::YieldOp>(loc);
          });
          break;
        }
        case GatherPart::Pieces: {
          // Piece i: positions p0 + k P .. of long row j = pieceRow[i],
          // k its number in the row; its partial row is scratch row i.
          Value j = lb.toIndex(vb, loadAt(vb, pieceRow, i));
          Value v = lb.toIndex(vb, loadAt(vb, longRows, j));
          Value k = vb.create<arith::SubIOp>(
              loc, i, lb.toIndex(vb, loadAt(vb, pieceOffsets, j)));
          RowSpan span = wholeRow(vb, v);
          span.outRow = i;
          span.q0 = vb.create<arith::AddIOp>(
              loc, span.p0, vb.create<arith::MulIOp>(loc, k, pieceEdges));
          span.q1 = vb.create<arith::MinUIOp>(
              loc, vb.create<arith::AddIOp>(loc, span.q0, pieceEdges), span.p1);
          span.finish = false;
          emitRow(vb, v, span, inRegisters);
          break;
        }
        case GatherPart::Combine:
          emitCombine(vb, i);
          break;
        }
        vb.create<scf::YieldOp>(loc);
      });
  for (Value buf : heapBuffers)
    lb.b.create<memref::DeallocOp>(loc, buf);
  kernels.launch(launchRows ? launchRows : lb.sizes.gatheredRows(toDst));
}

Value FusedKernelBuilder::prefetchDistanceFor(OpBuilder &b) {
  // The runtime SpMM's rule (prefetchFor in runtime/lib/CPU/Kernels.cpp):
  // about 256 cache lines in flight per thread, 16 to 64 rows ahead,
  // counting the lines emitPrefetch asks for per edge (at most
  // kPrefetchLines of each neighbour row read).
  Value lines = zero;
  for (unsigned i = toDst ? 0 : numSrc, n = toDst ? numSrc : numSrc + numDst;
       i < n; ++i) {
    Value rowLines = b.create<arith::CeilDivUIOp>(loc, rowSizes[i], cacheLine);
    lines = b.create<arith::AddIOp>(
        loc, lines,
        b.create<arith::MinUIOp>(loc, rowLines, lb.cIndex(kPrefetchLines)));
  }
  Value ahead = b.create<arith::DivUIOp>(
      loc, lb.cIndex(256), b.create<arith::MaxUIOp>(loc, lines, one));
  return b.create<arith::MaxUIOp>(
      loc, b.create<arith::MinUIOp>(loc, ahead, lb.cIndex(64)), lb.cIndex(16));
}

void FusedKernelBuilder::emitPrefetch(OpBuilder &eb, Value p) {
  // Prefetch the neighbour rows of the edge kPrefetchDistance positions
  // ahead (they are scattered over the inputs): several row loads in flight
  // per thread instead of one.
  Value ahead = eb.create<arith::AddIOp>(loc, p, prefetchDistance);
  Value inRange = eb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                           ahead, numPositions);
  eb.create<scf::IfOp>(loc, inRange, [&](OpBuilder &ob, Location) {
    Value ua = lb.toIndex(ob, loadAt(ob, other, ahead));
    // A tile or stage reads the rows [tileLo, tileHi) only (a stage's
    // memref is shifted: other rows lie outside its buffer).
    OpBuilder ib = ob;
    if (tileLo) {
      Value inTile = ob.create<arith::AndIOp>(
          loc,
          ob.create<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, ua, tileLo),
          ob.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, ua,
                                   tileHi));
      auto inside = ob.create<scf::IfOp>(loc, inTile, /*withElse=*/false);
      ib = inside.getThenBodyBuilder();
    }
    for (unsigned i = toDst ? 0 : numSrc, n = toDst ? numSrc : numSrc + numDst;
         i < n; ++i) {
      // The first kPrefetchLines lines only (a 602-wide row has 38); the
      // hardware streams the rest of the row.
      Value base = ib.create<arith::MulIOp>(loc, ua, rowSizes[i]);
      Value lines = ib.create<arith::MinUIOp>(loc, rowSizes[i], prefetchSpan);
      ib.create<scf::ForOp>(
          loc, zero, lines, cacheLine, ValueRange{},
          [&](OpBuilder &pb, Location, Value l, ValueRange) {
            pb.create<memref::PrefetchOp>(
                loc, bufs[i],
                ValueRange{pb.create<arith::AddIOp>(loc, base, l)},
                /*isWrite=*/false, /*localityHint=*/3, /*isDataCache=*/true);
            pb.create<scf::YieldOp>(loc);
          });
    }
    ob.create<scf::YieldOp>(loc);
  });
}

Value FusedKernelBuilder::at(OpBuilder &ob, Value x, ArrayRef<int64_t> shape,
                             Value k, Value head, Cache &cache) {
  if (Value pe = perEdge.lookup(x))
    return pe;
  if (Value c = cache.lookup(x))
    return c;
  Value index = k;
  if (shapeOf(x) != shape) // per-head scalars of heads x F
    index = head ? head
                 : ob.create<arith::DivUIOp>(
                         loc, k,
                         ob.create<arith::DivUIOp>(loc, widthOf(shape),
                                                   lb.cIndex(shape[0])))
                       .getResult();
  Value r;
  if (auto it = cacheLoad.find(x); it != cacheLoad.end()) {
    auto [buf, width] = it->second;
    r = loadAt(
        ob, buf,
        ob.create<arith::AddIOp>(
            loc, ob.create<arith::MulIOp>(loc, e, lb.cIndex(width)), index));
  } else if (auto arg = dyn_cast<BlockArgument>(x)) {
    unsigned i = arg.getArgNumber();
    Value at = index;
    if (Value row = rowOf(i))
      at = ob.create<arith::AddIOp>(
          loc, ob.create<arith::MulIOp>(loc, row, rowSizes[i]), index);
    r = loadAt(ob, bufs[i], at);
  } else if (Value sums = headSums.lookup(x)) {
    r = loadAt(ob, sums, index);
  } else if (auto place = x.getDefiningOp<PlaceByTypeOp>()) {
    // Element `index` of the T x K row: slot index / K, column index % K;
    // the row where the slot is the edge's type, else zero.
    Value width = widthOf(shapeOf(place.getInput()));
    Value slot = ob.create<arith::DivUIOp>(loc, index, width);
    Value column = ob.create<arith::RemUIOp>(loc, index, width);
    Cache inner;
    Value type =
        lb.toIndex(ob, at(ob, place.getType(), shapeOf(place.getType()), zero,
                          Value(), inner));
    Value row = at(ob, place.getInput(), shapeOf(place.getInput()), column,
                   Value(), inner);
    r = ob.create<arith::SelectOp>(
        loc,
        ob.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, slot, type),
        row, fzero);
  } else if (auto take = x.getDefiningOp<TakeByTypeOp>()) {
    // Element `index` of the type's slot: type * K + index of the T x K row.
    Cache inner;
    Value type = lb.toIndex(ob, at(ob, take.getType(), shapeOf(take.getType()),
                                   zero, Value(), inner));
    Value from = ob.create<arith::AddIOp>(
        loc, ob.create<arith::MulIOp>(loc, type, widthOf(shapeOf(x))), index);
    r = at(ob, take.getInput(), shapeOf(take.getInput()), from, Value(), inner);
  } else {
    Operation *op = x.getDefiningOp();
    SmallVector<Value> args;
    for (Value o : op->getOperands())
      args.push_back(at(ob, o, shape, k, head, cache));
    r = evaluate(ob, op, args);
  }
  cache[x] = r;
  return r;
}

Value FusedKernelBuilder::evaluate(OpBuilder &ob, Operation *op,
                                   ArrayRef<Value> args) {
  if (auto c = dyn_cast<ConstantOp>(op))
    return ob.create<arith::ConstantFloatOp>(
        loc, APFloat(c.getValue().getSplatValue<float>()), ob.getF32Type());
  if (isa<BroadcastHeadsOp>(op))
    return args[0];
  if (isa<EdgeSelectOp>(op))
    // The gradient goes to the edge the forward chose.
    return ob.create<arith::SelectOp>(
        loc,
        ob.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, args[0], e32),
        args[1], fzero);
  return emitElement(ob, loc, op, args);
}

void FusedKernelBuilder::emitReduce(OpBuilder &eb, Operation &op) {
  // A loop over its operand's row, its additions reassociable so that LLVM
  // vectorises it (several partial sums instead of one chain of dependent
  // adds).
  auto addR = [&](OpBuilder &kb, Value x, Value y) {
    return kb.create<arith::AddFOp>(loc, x, y, arith::FastMathFlags::reassoc)
        .getResult();
  };
  Value in = op.getOperand(0);
  ArrayRef<int64_t> shape = shapeOf(in);
  auto term = [&](OpBuilder &kb, Value k, Value head) {
    Cache cache;
    Value t = at(kb, in, shape, k, head, cache);
    if (isa<RowDotOp>(op))
      t = kb.create<arith::MulFOp>(
          loc, t, at(kb, op.getOperand(1), shape, k, head, cache));
    return t;
  };
  // A sum over `n` elements. Lanes sharing a row split the loop (lane l:
  // elements l, l + lanes, ...) and add their partial sums, so that every
  // lane has the whole sum, where n is unknown or fills the lanes; a short
  // sum of known length (GAT's heads of 8) is cheaper repeated in each lane
  // (its loads independent, unrolled) than added across them.
  auto sum = [&](OpBuilder &ob, Value n,
                 function_ref<Value(OpBuilder &, Value)> termAt) {
    std::optional<int64_t> known = getConstantIntValue(n);
    bool split = kernels.lanes() > 1 && (!known || *known >= kernels.lanes());
    auto loop = ob.create<scf::ForOp>(
        loc, split ? firstColumn : zero, n, split ? columnStep : one,
        ValueRange{fzero},
        [&](OpBuilder &kb, Location, Value i, ValueRange partial) {
          kb.create<scf::YieldOp>(loc, addR(kb, partial[0], termAt(kb, i)));
        });
    return split ? kernels.sumOverLanes(ob, loop.getResult(0))
                 : loop.getResult(0);
  };
  if (Value sums = headSums.lookup(op.getResult(0))) {
    // heads x F: one sum per head over its F elements.
    forHeads(eb, shape, [&](OpBuilder &hb, Value h, Value base, Value f) {
      Value s = sum(hb, f, [&](OpBuilder &kb, Value i) {
        return term(kb, kb.create<arith::AddIOp>(loc, base, i), h);
      });
      hb.create<memref::StoreOp>(loc, s, sums, h);
    });
    return;
  }
  perEdge[op.getResult(0)] =
      sum(eb, widthOf(shape),
          [&](OpBuilder &kb, Value k) { return term(kb, k, Value()); });
}

void FusedKernelBuilder::storeToCache(OpBuilder &eb, Value r) {
  auto it = cacheStore.find(r);
  if (it == cacheStore.end())
    return;
  auto [buf, width] = it->second;
  Value base = eb.create<arith::MulIOp>(loc, e, lb.cIndex(width));
  if (Value pe = perEdge.lookup(r)) {
    eb.create<memref::StoreOp>(loc, pe, buf, base);
    return;
  }
  Value heads = headSums.lookup(r);
  for (int64_t h = 0; h < width; ++h)
    eb.create<memref::StoreOp>(
        loc, loadAt(eb, heads, lb.cIndex(h)), buf,
        ValueRange{eb.create<arith::AddIOp>(loc, base, lb.cIndex(h))});
}

void FusedKernelBuilder::emitEdgeValues(OpBuilder &eb, Value v, Value p) {
  e = toDst ? p : lb.toIndex(eb, loadAt(eb, csrEdge, p));
  e32 = eb.create<arith::IndexCastOp>(loc, eb.getI32Type(), e);
  Value u = lb.toIndex(eb, loadAt(eb, other, p));
  srcRow = toDst ? u : v;
  dstRow = toDst ? v : u;
  // Lanes sharing a row (a GPU warp) hide latency by other warps and by
  // the unrolled edge loop (emitVertexInRegisters), not by prefetches.
  if (kernels.lanes() == 1)
    emitPrefetch(eb, p);
  fzero =
      eb.create<arith::ConstantFloatOp>(loc, APFloat(0.0f), eb.getF32Type());
  perEdge.clear();
  for (BlockArgument arg : body.getArguments())
    if (oneElement(arg)) {
      Cache cache;
      perEdge[arg] = at(eb, arg, shapeOf(arg), zero, Value(), cache);
    }
  // Per-head values (GAT's scores and coefficients): once per edge and head
  // into their stack buffer, not once per element of the heads x F row.
  DenseMap<Value, Value> pendingHeads = headValues;
  for (Operation &op : body.without_terminator()) {
    Value r = op.getResult(0);
    if (cacheLoad.count(r)) {
      if (oneElement(r)) {
        Cache cache;
        perEdge[r] = at(eb, r, shapeOf(r), zero, Value(), cache);
      }
      continue;
    }
    if (isa<ReduceSumOp, RowDotOp>(op)) {
      emitReduce(eb, op);
    } else if (oneElement(r)) {
      Cache cache;
      perEdge[r] = at(eb, r, shapeOf(r), zero, Value(), cache);
    } else if (Value buf = pendingHeads.lookup(r)) {
      headSums.erase(r); // computed here, read from `buf` after
      eb.create<scf::ForOp>(
          loc, zero, lb.cIndex(shapeOf(r)[0]), one, ValueRange{},
          [&](OpBuilder &hb, Location, Value h, ValueRange) {
            Cache cache;
            hb.create<memref::StoreOp>(
                loc, at(hb, r, shapeOf(r), h, Value(), cache), buf, h);
            hb.create<scf::YieldOp>(loc);
          });
      headSums[r] = buf;
    }
    storeToCache(eb, r);
  }
}

LogicalResult gnn::emitFusedGatherKernel(
    LoweringBuilder &lb, KernelEmitter &kernels, FusedGatherOp fg,
    ArrayRef<Tensor> operands, const KernelCaches &caches,
    int64_t firstCacheArg, std::optional<std::pair<int64_t, int64_t>> tileInts,
    GatherPart part, Value launchRows, int64_t inputRowsInt) {
  assert((part == GatherPart::Whole || !tileInts) &&
         "long rows in pieces are not tiled");
  FusedKernelBuilder builder(lb, kernels, fg);
  if (failed(builder.checkWidths()))
    return failure();
  builder.emit(operands, caches, firstCacheArg, tileInts, part, launchRows,
               inputRowsInt);
  return success();
}
