//===- LoweringBuilder.h - IR building helpers of the lowering --*- C++ -*-===//
//
// The bottom layer of --convert-gnn-to-runtime (docs/Compiler.md, "The
// lowering's parts"): where gnn values live once lowered (`Tensor`), and a
// builder for the function being emitted: constants, index arithmetic, flat
// buffer loads, row loops, and runtime calls through the RuntimeCalls table.
// It holds no per-op state.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_CONVERSION_GNNTORUNTIME_LOWERINGBUILDER_H
#define GNN_LIB_CONVERSION_GNNTORUNTIME_LOWERINGBUILDER_H

#include "RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::gnn {

/// Marks a loop in a lowered function over rows [0, rows) whose iteration r
/// reads and writes row r of its row operands only (and rows of no other
/// buffer but whole small ones: parameters, scratch), so that a row chunk
/// of its step can run it over the chunk's rows (RowChunks.h).
constexpr StringLiteral kOwnRowLoopAttr = "gnn.own_row_loop";
/// Marks a loop of a kernel's broadcast or reduce stages (markStageLoop,
/// RowChunks.h).
constexpr StringLiteral kStageLoopAttr = "gnn.stage_loop";
inline void markOwnRowLoop(Operation *loop) {
  loop->setAttr(kOwnRowLoopAttr, UnitAttr::get(loop->getContext()));
}

/// Where a gnn value lives after lowering: `rows` rows of `rowSize` elements
/// in a flat buffer. Unbatched values (parameters, constants, what only
/// depends on them) have one row.
struct Tensor {
  Value buf;
  Value rows;
  bool batched = true;
  SmallVector<Value> dims; // row dimensions (index)
  Value rowSize;           // product of dims (index)
};

/// The P of an aggregation's chunk tiling (`gnn.chunks`, --gnn-chunk-tile);
/// 1 when untiled.
inline int64_t getChunks(Operation *aggregation) {
  auto p = aggregation->getAttrOfType<IntegerAttr>("gnn.chunks");
  return p ? p.getInt() : 1;
}

/// The graph's sizes in the function being lowered (index values).
struct GraphSizes {
  /// numV: the rows of a vertex tensor, the process's own vertices (the
  /// graph's destinations); numS: the rows of every vertex (the graph's
  /// sources), which only a row-partitioned function's all-gathers and
  /// aggregations to the source have (gnnrtDim 4; numV elsewhere).
  Value numV, numS, numE, numF, numC;
  /// The whole graph's edges (feature partitioning's first layer, gnnrtDim
  /// 5); null elsewhere.
  Value numEW;
  /// The rows of an aggregation's result to the destination (`toDst`) or
  /// to the source.
  Value gatheredRows(bool toDst) const { return toDst ? numV : numS; }
};

class LoweringBuilder {
public:
  LoweringBuilder(ModuleOp module, Location loc)
      : b(module.getContext()), loc(loc), calls(module) {}

  OpBuilder b;
  Location loc;
  /// The function's `gnnrtContext *` argument.
  Value ctx;
  /// The sizes of the graph the op being lowered runs on (a feature-
  /// partitioned function's first layer runs on the whole graph: its rows
  /// are every vertex, its edges every edge), and the function's own ones,
  /// which buffer sizes are keyed by (SlotPlanner.h).
  GraphSizes sizes, ownSizes;
  /// The graph out of core (option graph-out-of-core): a row chunk of a
  /// step that reads edges opens a window of its rows' edges first
  /// (RowChunks.cpp).
  bool graphOutOfCore = false;
  /// Row chunks' aggregation tiles in row-column order (option tile-order):
  /// a step whose only work over the rows is its aggregation runs every
  /// chunk's first tile, then the second tile of every chunk, and so on
  /// (NeuGraph's row-major order, the baseline of its column-major one);
  /// the steps so run are counted in `rowColumnSteps` (RowChunks.cpp).
  bool rowColumnTiles = false;
  int64_t rowColumnSteps = 0;
  /// A row- or feature-partitioned function: its dropouts draw the
  /// single-process masks (element indices of every vertex's tensor).
  bool partitioned = false;
  /// The op being lowered runs on the whole graph (a feature-partitioned
  /// function's first layer: rows of every vertex, the process's columns;
  /// a row-partitioned function's replicated layers: every vertex's rows).
  bool onWholeGraph = false;
  /// A feature-partitioned function: the whole graph's rows have the
  /// process's feature columns.
  bool featureShards = false;

  /// A call of a runtime entry point (RuntimeCalls.def).
  Value call(rt::Call callee, ValueRange args) {
    return calls.create(b, loc, callee, args);
  }

  Value cIndex(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }
  Value cI64(int64_t v) {
    return b.create<arith::ConstantIntOp>(loc, v, b.getI64Type());
  }
  Value cF32(double v) {
    return b.create<arith::ConstantFloatOp>(loc, APFloat(static_cast<float>(v)),
                                            b.getF32Type());
  }
  Value toI64(Value index) {
    return b.create<arith::IndexCastOp>(loc, b.getI64Type(), index);
  }
  Value toIndex(OpBuilder &ob, Value i64) {
    return ob.create<arith::IndexCastOp>(loc, ob.getIndexType(), i64);
  }
  Value mul(Value x, Value y) { return b.create<arith::MulIOp>(loc, x, y); }
  Value add(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
  Value product(ArrayRef<Value> dims);

  MemRefType memF32() {
    return MemRefType::get({ShapedType::kDynamic}, b.getF32Type());
  }
  MemRefType memI32() {
    return MemRefType::get({ShapedType::kDynamic}, b.getI32Type());
  }
  /// Size-0 buffers for optional memref arguments.
  Value emptyI32();
  Value emptyF32();

  /// Row dimensions of a row type: constants for static ones, null for `?`.
  SmallVector<Value> staticDims(RankedTensorType row);
  /// Element `j` of row `r` of `t` (element 0 when `broadcast`; row 0 of
  /// unbatched tensors).
  Value load(OpBuilder &nb, const Tensor &t, Value r, Value j, bool broadcast);
  /// out[r, j] = fn(in_k[r or 0, j or 0]...) over `rows` x `out.rowSize`.
  void elementwise(const Tensor &out, ArrayRef<const Tensor *> ins,
                   function_ref<Value(OpBuilder &, Location, ValueRange)> fn);
  /// c[m, n] = op(a) op(b) (row-major; op transposes when the flag is set),
  /// one gnnrtGemm.
  void gemm(bool transA, bool transB, Value m, Value n, Value k, Value a,
            Value b, Value c) {
    call(rt::Call::gnnrtGemm,
         {ctx, cI64(transA), cI64(transB), toI64(m), toI64(n), toI64(k),
          cF32(1.0), a, b, cF32(0.0), c});
  }
  /// out = the weighted aggregation of x's rows to the destinations
  /// (`toDst`) or the sources, their mean when `mean`; `weights` per edge or
  /// empty; tiled as `aggregation`'s gnn.chunks says. One gnnrtSpmm.
  void spmm(Operation *aggregation, bool toDst, bool mean, Value weights,
            const Tensor &x, Value out) {
    call(rt::Call::gnnrtSpmm,
         {ctx, cI64(toDst), cI64(mean), cI64(getChunks(aggregation)), weights,
          x.buf, out, toI64(x.rowSize)});
  }
  /// out = the weighted aggregation to the destinations of rows whose own
  /// part is `x`, the others' broadcast in stages (row partitioning). One
  /// gnnrtSpmmBroadcast.
  void spmmBroadcast(bool mean, Value weights, const Tensor &x, Value out) {
    call(rt::Call::gnnrtSpmmBroadcast,
         {ctx, cI64(mean), weights, x.buf, out, toI64(x.rowSize)});
  }
  /// out = the own rows of the sum over the processes of the weighted
  /// aggregation to the sources of x's rows, in reduce stages (row
  /// partitioning). One gnnrtSpmmReduce; with a `level` > 0 (the program
  /// on blocks: the sums are zero beyond it) gnnrtSpmmReduceRows.
  void spmmReduce(Value weights, const Tensor &x, Value out,
                  int64_t level = 0) {
    if (level > 0)
      call(rt::Call::gnnrtSpmmReduceRows,
           {ctx, weights, x.buf, out, toI64(x.rowSize), cI64(level)});
    else
      call(rt::Call::gnnrtSpmmReduce,
           {ctx, weights, x.buf, out, toI64(x.rowSize)});
  }
  /// For o < outer: store(o, sum over i < inner of term(o, i)).
  void sumLoop(Value outer, Value inner,
               function_ref<Value(OpBuilder &, Value, Value)> term,
               function_ref<void(OpBuilder &, Value, Value)> store);

private:
  rt::RuntimeCalls calls;
};

} // namespace mlir::gnn

#endif // GNN_LIB_CONVERSION_GNNTORUNTIME_LOWERINGBUILDER_H
