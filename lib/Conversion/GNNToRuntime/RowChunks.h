//===- RowChunks.h - a step over the vertices in row chunks -----*- C++ -*-===//
//
// Issue 18's row chunks of a step (docs/MemoryBudget.md, "Row chunks of the
// steps"): once a step over the vertices is lowered (a vertex stage, an
// aggregation, a fused gather, an outer sum, a sum of rows, the loss), its
// code runs K times, chunk k over the rows [b_k, b_{k+1}) only, so that each
// run touches 1/K of the step's row buffers (and reads what it gathers from
// whole). What these steps do to a row depends on that row of their row
// operands only, so the chunks compute what the whole step did; the
// boundaries are multiples of GNNRT_PARALLEL_CHUNK, so a kernel's partial
// sums per chunk are the same. Sums over the rows (outer sums, sums of rows,
// the loss) add the chunks' shares.
//
// The calls are restricted to the chunk: gnnrtParallelFor over the vertices
// becomes gnnrtParallelForRange, a GEMM over the vertices takes gnnrtView
// ranges of its row operands, gnnrtSpmm becomes gnnrtSpmmRows, and so on. A
// step whose code does anything else over the rows (a loop in the function,
// another runtime call) stays whole.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_CONVERSION_GNNTORUNTIME_ROWCHUNKS_H
#define GNN_LIB_CONVERSION_GNNTORUNTIME_ROWCHUNKS_H

#include "LoweringBuilder.h"

namespace mlir::gnn {

/// Whether `use`, in a step run as row chunks, reads every row of its
/// operand (an aggregation's input and edge weights, a fused gather's
/// operands), not only its chunk's.
bool readsAllRows(OpOperand &use);
/// Marks a kernel argument call (gnnrtKernelArg) whose buffer the kernel
/// reads at any row (a fused gather's operands: the neighbours' rows).
void markReadsAllRows(Operation *kernelArg);
/// The same for operands `operands` of a kernel launch (gpu.launch_func).
void markReadsAllRows(Operation *launch, ArrayRef<int32_t> operands);
/// Removes those marks (once the placement has read them).
void clearReadsAllRows(ModuleOp module);

/// Runs the code of one lowered step (a vertex stage, an aggregation, an
/// outer sum), the ops after `before` (from the block's start when null)
/// through `last`, as `chunks` row chunks.
/// Returns the ops where the chunks' code starts (chunk 0's first, ...), or
/// nothing when the code cannot be chunked (or is empty, or `chunks` < 2).
/// A value the code defined that the chunks replaced (the loss: the sum of
/// the chunks' shares) is in `replaced`.
SmallVector<Operation *> chunkStageRows(Block &block, Operation *before,
                                        Operation *last, int64_t chunks,
                                        LoweringBuilder &lb,
                                        DenseMap<Value, Value> &replaced);

} // namespace mlir::gnn

#endif // GNN_LIB_CONVERSION_GNNTORUNTIME_ROWCHUNKS_H
