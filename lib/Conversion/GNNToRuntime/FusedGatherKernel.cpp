//===- FusedGatherKernel.cpp - the kernel of a fused_gather ---------------===//
//
// For each vertex of the kernel's range, for each of its edges (CSC offsets
// to dst; CSR, with the destinations in CSR order, to src): the body's
// one-element values and row reductions once per edge, per-head values once
// per edge and head, then one loop over each result row's elements that
// evaluates the body there and accumulates (sum/mean add, max/min a strict
// compare that keeps the earlier edge and may record it); mean divides,
// empty max/min rows are 0.
//
//===----------------------------------------------------------------------===//

#include "FusedGatherLowering.h"

#include "ElementMath.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/MapVector.h"

#include <cmath>
#include <functional>
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::gnn;

namespace {

using Cache = DenseMap<Value, Value>;

class FusedKernelBuilder {
public:
  FusedKernelBuilder(LoweringBuilder &lb, KernelEmitter &kernels,
                     FusedGatherOp fg)
      : lb(lb), kernels(kernels), fg(fg), body(fg.getBody().front()),
        loc(lb.loc), toDst(fg.getSide() == Side::Dst), acc(fg.getAcc()),
        numSrc(fg.getSrcInputs().size()), numDst(fg.getDstInputs().size()),
        numRows(numSrc + numDst + fg.getEdgeInputs().size()) {
    for (Value o : fg.getOuts())
      results.push_back(cast<VertexTensorType>(o.getType()).getRowType());
    numOuts = results.size();
  }

  /// Whether a row of the body has a `?` shape that no operand or result
  /// gives a width.
  LogicalResult checkWidths();
  void emit(ArrayRef<Tensor> operands, const KernelCaches &caches,
            int64_t firstCacheArg,
            std::optional<std::pair<int64_t, int64_t>> tileInts,
            GatherPart part, Value launchRows);

private:
  /// Kernel side: the operands' buffers and row widths, the caches, the
  /// graph's arrays.
  void readOperands(ArrayRef<Tensor> operands, const KernelCaches &caches,
                    int64_t firstCacheArg);
  /// Stack buffers for per-head values (once per edge and head).
  void allocateHeadBuffers();
  /// A buffer of `floats` for the kernel: on the stack while the kernel's
  /// stack buffers stay under kMaxStackBytes, else on the heap.
  Value allocateHeadBuffer(int64_t floats);
  Value widthOf(ArrayRef<int64_t> shape);
  void forHeads(OpBuilder &ob, ArrayRef<int64_t> shape,
                function_ref<void(OpBuilder &, Value, Value, Value)> fn);
  /// The output columns [0, width) of this invocation (from firstColumn in
  /// steps of columnStep), a `heads x F` row as a nest over the heads.
  void forElements(OpBuilder &ob, ArrayRef<int64_t> shape, Value width,
                   function_ref<void(OpBuilder &, Value, Value)> fn);
  /// The edges [q0, q1) of row v, whose whole range is [p0, p1), into the
  /// output rows `outRow` (v; a piece's scratch row), finished (mean's
  /// division, empty max/min rows) where `finish`.
  struct RowSpan {
    Value outRow, p0, p1, q0, q1;
    bool finish = true;
  };
  /// Row v's offsets and the span of all its edges.
  RowSpan wholeRow(OpBuilder &vb, Value v);
  /// Row v, or with registerCondition, in registers where it holds.
  void emitRow(OpBuilder &vb, Value v, const RowSpan &span, Value inRegisters);
  void emitVertex(OpBuilder &vb, Value v, const RowSpan &span);
  /// The output rows' element offsets of `outRow`: outRow x width (the
  /// outputs), or outRow x scratchStride + the output's offset (a piece's
  /// row of the scratch).
  SmallVector<Value> rowBasesOf(OpBuilder &ob, Value outRow);
  /// Combine: long row j's pieces folded in order into its output row.
  void emitCombine(OpBuilder &vb, Value j);
  /// Lanes sharing a row (a GPU warp): the row's outputs in registers, a
  /// few columns per lane (lane, lane + lanes, ...), stored once after its
  /// edges instead of loaded and stored at each edge. Null where an output
  /// has more columns than kMaxRegisterColumns per lane can hold; else the
  /// condition (true, or on the widths known at run time only) under which
  /// emitVertexInRegisters may run instead of emitVertex.
  Value registerCondition(OpBuilder &ob);
  void emitVertexInRegisters(OpBuilder &vb, Value v, const RowSpan &span);
  /// The first position in [from, to) of `other` whose value is not below
  /// `target` (an index), by binary search: the values ascend within a
  /// vertex's edges.
  Value lowerBound(OpBuilder &ob, Value from, Value to, Value target);
  /// Runs `fn` where `cond` holds (always when `cond` is null).
  void emitIf(OpBuilder &ob, Value cond, function_ref<void(OpBuilder &)> fn);
  void emitEdge(OpBuilder &eb, Value v, Value p, ArrayRef<Value> rowBases);
  /// The edge's values up to the accumulation: its ends, one-element and
  /// per-head values, reductions and stored caches.
  void emitEdgeValues(OpBuilder &eb, Value v, Value p);
  /// The accumulator's step: `old` and the edge's value `x` (and, with an
  /// argument buffer, the edge that gave `old`) to the next value and edge.
  std::pair<Value, Value> combine(OpBuilder &ob, Value old, Value x,
                                  Value oldArg, Value xArg = Value());
  void emitPrefetch(OpBuilder &eb, Value p);
  /// The value of `x` at element k of a row of shape `shape`: the same
  /// element, or head k / F of `heads x F`.
  Value at(OpBuilder &ob, Value x, ArrayRef<int64_t> shape, Value k, Value head,
           Cache &cache);
  Value evaluate(OpBuilder &ob, Operation *op, ArrayRef<Value> args);
  void emitReduce(OpBuilder &eb, Operation &op);
  void storeToCache(OpBuilder &eb, Value r);
  void emitAccumulate(OpBuilder &eb, ArrayRef<Value> rowBases);
  void emitFinalize(OpBuilder &vb, Value p0, Value p1,
                    ArrayRef<Value> rowBases);

  static ArrayRef<int64_t> shapeOf(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }
  static bool oneElement(Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return t.hasStaticShape() && t.getNumElements() == 1;
  }
  Value loadAt(OpBuilder &ob, Value buf, Value index) {
    return ob.create<memref::LoadOp>(loc, buf, index).getResult();
  }
  /// The row (or none, for parameters) operand i reads at the current edge.
  Value rowOf(unsigned i) {
    if (i < numSrc)
      return srcRow;
    if (i < numSrc + numDst)
      return dstRow;
    if (i < numRows)
      return e;
    return Value();
  }

  LoweringBuilder &lb;
  KernelEmitter &kernels;
  FusedGatherOp fg;
  Block &body;
  Location loc;
  bool toDst;
  Accumulator acc;
  unsigned numSrc, numDst, numRows;
  SmallVector<RankedTensorType> results;
  int64_t numOuts;

  Value begin, end, zero, one, prefetchDistance, cacheLine, prefetchSpan;
  /// A tile's range of input rows [tileLo, tileHi) (null: all) and |V|.
  Value tileLo, tileHi, numVertices;
  /// Long rows in pieces (GatherPart): the kernel's part; the positions per
  /// piece (0: no row is split); the long rows, each piece's long row and
  /// each long row's first piece; the Pieces part's scratch rows (f32, and
  /// i32 for the argument), each the outputs' widths side by side.
  GatherPart part = GatherPart::Whole;
  Value pieceEdges, longRows, pieceRow, pieceOffsets;
  Value scratch, argScratch, scratchStride;
  SmallVector<Value> scratchOffsets;
  /// The output columns this invocation writes: firstColumn, then every
  /// columnStep (a GPU warp's lanes share a row: KernelEmitter::lanes).
  Value firstColumn, columnStep;
  SmallVector<Value> outBufs, outWidths;
  Value argBuf;
  SmallVector<Value> bufs, rowSizes;
  /// Per-edge values kept across kernels: loaded instead of recomputed, or
  /// stored for later kernels (buffer, floats per edge).
  llvm::MapVector<Value, std::pair<Value, int64_t>> cacheLoad, cacheStore;
  Value offsets, other, csrEdge, numPositions;
  /// The width of every row shape in the body.
  std::map<SmallVector<int64_t>, Value> widths;
  /// Per-head sums of a row_dot over `heads x F` rows and per-head values,
  /// in a buffer per kernel call (on the stack while small).
  DenseMap<Value, Value> headSums, headValues;
  /// The bytes of the stack buffers so far, and the buffers on the heap
  /// (freed at the kernel's end).
  static constexpr int64_t kMaxStackBytes = 64 * 1024;
  /// Register accumulation: at most this many columns of all outputs per
  /// lane; an output of unknown width gets kDynamicRegisterColumns (its
  /// width checked when the kernel runs).
  static constexpr int64_t kMaxRegisterColumns = 16;
  static constexpr int64_t kDynamicRegisterColumns = 2;
  /// Edges per iteration of the edge loop in emitVertexInRegisters.
  static constexpr uint64_t kEdgeUnroll = 4;
  SmallVector<int64_t> registerColumns;
  int64_t stackBytes = 0;
  SmallVector<Value> heapBuffers;

  // The edge being emitted.
  Value e, e32, srcRow, dstRow, fzero;
  /// One-element values and reductions: once per edge.
  DenseMap<Value, Value> perEdge;
};

} // namespace

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
    GatherPart kernelPart, Value launchRows) {
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
  prefetchDistance = lb.cIndex(8);
  cacheLine = lb.cIndex(16);
  prefetchSpan = lb.cIndex(64);
  numPositions = lb.b.create<memref::DimOp>(loc, other, 0);
  if (tileInts) {
    tileLo = lb.toIndex(lb.b, kernels.getInt(tileInts->first));
    tileHi = lb.toIndex(lb.b, kernels.getInt(tileInts->second));
    numVertices = lb.b.create<arith::SubIOp>(
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

void FusedKernelBuilder::emitPrefetch(OpBuilder &eb, Value p) {
  // Prefetch the neighbour rows of the edge kPrefetchDistance positions
  // ahead (they are scattered over the inputs): several row loads in flight
  // per thread instead of one.
  Value ahead = eb.create<arith::AddIOp>(loc, p, prefetchDistance);
  Value inRange = eb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                           ahead, numPositions);
  eb.create<scf::IfOp>(loc, inRange, [&](OpBuilder &ib, Location) {
    Value ua = lb.toIndex(ib, loadAt(ib, other, ahead));
    for (unsigned i = toDst ? 0 : numSrc, n = toDst ? numSrc : numSrc + numDst;
         i < n; ++i) {
      // The first lines only: more prefetches per edge fill the line-fill
      // buffers and stall (a 602-wide row has 38 lines); the hardware
      // streams the rest of the row.
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
    ib.create<scf::YieldOp>(loc);
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

void FusedKernelBuilder::emitEdge(OpBuilder &eb, Value v, Value p,
                                  ArrayRef<Value> rowBases) {
  emitEdgeValues(eb, v, p);
  emitAccumulate(eb, rowBases);
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

LogicalResult
gnn::emitFusedGatherKernel(LoweringBuilder &lb, KernelEmitter &kernels,
                           FusedGatherOp fg, ArrayRef<Tensor> operands,
                           const KernelCaches &caches, int64_t firstCacheArg,
                           std::optional<std::pair<int64_t, int64_t>> tileInts,
                           GatherPart part, Value launchRows) {
  assert((part == GatherPart::Whole || !tileInts) &&
         "long rows in pieces are not tiled");
  FusedKernelBuilder builder(lb, kernels, fg);
  if (failed(builder.checkWidths()))
    return failure();
  builder.emit(operands, caches, firstCacheArg, tileInts, part, launchRows);
  return success();
}
