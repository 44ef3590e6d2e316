//===- FusedKernelBuilder.h - the kernels of a fused_gather -----*- C++ -*-===//
//
// What FusedGatherKernel.cpp (the kernel, its operands and the body's
// values at an edge) and FusedGatherRows.cpp (how a row's edges accumulate
// into its result: in memory or in registers, whole, in tiles or in
// pieces) share: the builder of one kernel of a fused_gather. Private to
// the lowering.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_CONVERSION_GNNTORUNTIME_FUSEDKERNELBUILDER_H
#define GNN_LIB_CONVERSION_GNNTORUNTIME_FUSEDKERNELBUILDER_H

#include "FusedGatherLowering.h"

#include "llvm/ADT/MapVector.h"

#include <map>

namespace mlir::gnn::detail {

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
            GatherPart part, Value launchRows, int64_t inputRowsInt = -1);

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
  /// How many positions ahead emitPrefetch reads (by the rows' widths).
  Value prefetchDistanceFor(OpBuilder &b);
  /// The lines of each neighbour row emitPrefetch asks for.
  static constexpr int64_t kPrefetchLines = 8;
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

} // namespace mlir::gnn::detail

#endif // GNN_LIB_CONVERSION_GNNTORUNTIME_FUSEDKERNELBUILDER_H
