//===- KernelEmitter.h - data-parallel kernels and their launch -*- C++ -*-===//
//
// The row loops over all vertices or edges and the fused-gather kernels are
// emitted as kernels over a range [0, n) of rows, launched by the host
// function. A KernelEmitter hides how: CPUKernelEmitter makes a private
// `@__gnn_kernel_N(ctx, begin, end)` run by gnnrtParallelFor over chunks of
// GNNRT_PARALLEL_CHUNK rows on the OpenMP threads, its operands handed over
// through the context (gnnrtKernelArg*). A GPU emitter is a sibling class
// (a gpu.func over a grid, operands as kernel arguments).
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

class KernelEmitter {
public:
  virtual ~KernelEmitter();

  /// Host side: operand `index` of the next kernel is `memref` (f32 or i32
  /// buffers are numbered separately) or the integer `value` (i64, or an
  /// index converted to i64).
  virtual void setBuffer(int64_t index, Value memref) = 0;
  virtual void setInt(int64_t index, Value value) = 0;

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

  /// Ends the body and runs the kernel over rows [0, n) (an index value).
  virtual void launch(Value n) = 0;
};

/// Kernels on the runtime's CPU threads (gnnrtParallelFor).
std::unique_ptr<KernelEmitter> createCPUKernelEmitter(ModuleOp module,
                                                      LoweringBuilder &lb);

} // namespace mlir::gnn

#endif // GNN_LIB_CONVERSION_GNNTORUNTIME_KERNELEMITTER_H
