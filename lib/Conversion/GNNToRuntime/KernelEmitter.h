//===- KernelEmitter.h - data-parallel kernels and their launch -*- C++ -*-===//
//
// The row loops over all vertices or edges and the fused-gather kernels are
// emitted as kernels over a range [0, n) of rows, launched by the host
// function. A KernelEmitter hides how: CPUKernelEmitter makes a private
// `@__gnn_kernel_N(ctx, begin, end)` run by gnnrtParallelFor over chunks of
// GNNRT_PARALLEL_CHUNK rows on the OpenMP threads, its operands handed over
// through the context (gnnrtKernelArg*); GPUKernelEmitter makes a gpu.func
// over a grid, its operands as kernel parameters.
//
// Protocol, for one kernel: setBuffer/setInt on the host, then begin(); the
// builder is then in the kernel's body, where getBuffer/getInt read the
// operands back by position and rangeBegin/rangeEnd bound this call's rows;
// launch(n) ends the body and returns the builder to the host to run it.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_CONVERSION_GNNTORUNTIME_KERNELEMITTER_H
#define GNN_LIB_CONVERSION_GNNTORUNTIME_KERNELEMITTER_H

#include "LoweringBuilder.h"

#include <memory>

namespace mlir::gnn {

/// Which rows of a buffer a kernel over the vertices reads for its rows
/// (for row chunks: RowChunks.h).
enum class RowAccess {
  Own,        // its own rows only
  All,        // any row
  Neighbours, // the other ends of its rows' edges (a tile's input chunk)
};

class KernelEmitter {
public:
  virtual ~KernelEmitter();

  /// Host side: operand `index` of the next kernel is `memref` (f32 or i32
  /// buffers are numbered separately) or the integer `value` (i64, or an
  /// index converted to i64). `access`: the rows of the buffer the kernel
  /// reads for its rows.
  virtual void setBuffer(int64_t index, Value memref,
                         RowAccess access = RowAccess::Own) = 0;
  virtual void setInt(int64_t index, Value value) = 0;

  /// Before begin(): the next kernel's invocations must each take whole
  /// chunks of GNNRT_PARALLEL_CHUNK rows (it writes a partial result per
  /// chunk). Otherwise an invocation may take any rows (on the GPU, one).
  virtual void needChunkedRows() {}
  /// Before begin(): the next kernel may give each row to a group of lanes
  /// that run its code together (a GPU warp), splitting only the loops
  /// between lane() and the row's end in steps of lanes() among them; each
  /// lane repeats the rest. A CPU invocation is one lane.
  virtual void allowLanesPerRow() {}
  /// Kernel side: this lane's first column and the number of lanes sharing
  /// a row (0 and 1 where rows are not shared).
  virtual Value lane() { return Value(); }
  virtual int64_t lanes() { return 1; }
  /// Kernel side: the sum of f32 `x` over the lanes sharing a row, in every
  /// lane (x itself where a row is one lane's). All lanes of the row must
  /// reach it together: outside code that only some of them run.
  virtual Value sumOverLanes(OpBuilder &ob, Value x) { return x; }
  /// Starts the kernel's body (the builder's insertion point moves there).
  virtual void begin() = 0;
  /// Kernel side: the operands set on the host, by position.
  virtual Value getBuffer(int64_t index, bool isI32) = 0;
  virtual Value getInt(int64_t index) = 0;
  /// Kernel side: the rows [rangeBegin, rangeEnd) this invocation covers
  /// (index values, made where called).
  virtual Value rangeBegin() = 0;
  virtual Value rangeEnd() = 0;
  /// Kernel side: the graph's arrays (gnnrtGraphOffsets / gnnrtGraphIndex).
  virtual Value graphOffsets(int64_t side) = 0;
  virtual Value graphIndex(int64_t which) = 0;
  /// Kernel side: the long rows of `side` split into pieces
  /// (gnnrtGraphLongRows, gnnrtGraphPieceOffsets, gnnrtGraphPieceEdges).
  virtual Value graphLongRows(int64_t side, int64_t which) = 0;
  virtual Value graphPieceOffsets(int64_t side) = 0;
  virtual Value graphPieceEdges(int64_t side) = 0;

  /// Ends the body and runs the kernel over rows [0, n) (an index value).
  virtual void launch(Value n) = 0;
};

/// Kernels on the runtime's CPU threads (gnnrtParallelFor).
std::unique_ptr<KernelEmitter> createCPUKernelEmitter(ModuleOp module,
                                                      LoweringBuilder &lb);
/// Kernels on a GPU: gpu.func in the module's gpu.module, launched with
/// gpu.launch_func (GPUKernelEmitter.cpp).
std::unique_ptr<KernelEmitter> createGPUKernelEmitter(ModuleOp module,
                                                      LoweringBuilder &lb);

/// The CUDA target's host function may not touch buffers (they are GPU
/// memory): each of its top-level loop nests over buffers (the lowering's
/// elementwise maps, row dots, copies of unbatched values) and each store
/// becomes a kernel, one thread per iteration of the nest's perfectly nested
/// loops. Fails on host code it cannot move (a load whose value the host
/// uses, a loop with loop-carried values).
LogicalResult moveHostMemoryAccessToGPU(func::FuncOp fn);

} // namespace mlir::gnn

#endif // GNN_LIB_CONVERSION_GNNTORUNTIME_KERNELEMITTER_H
