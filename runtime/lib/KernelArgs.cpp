//===- KernelArgs.cpp - a compiled kernel's operands ----------------------===//
//
// The operands of the next compiled kernel: the host code sets them by
// index (buffers as memref descriptors, f32 and i32, and integers) before
// its launch (gnnrtParallelFor and its range forms, Runtime.cpp), and the
// kernel reads them back by the same index through its context.
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "gnnrt/GNNRuntime.h"

#include <string>

using namespace gnnrt;

extern "C" {

void _mlir_ciface_gnnrtKernelArg(gnnrtContext *ctx, int64_t index,
                                 gnnrtMemRefF32 *buffer) {
  if (index < 0)
    fatal("gnnrtKernelArg: negative index");
  if (static_cast<size_t>(index) >= ctx->kernelArgs.size())
    ctx->kernelArgs.resize(index + 1);
  ctx->kernelArgs[index] = *buffer;
}

void _mlir_ciface_gnnrtKernelArgGet(gnnrtMemRefF32 *result, gnnrtContext *ctx,
                                    int64_t index) {
  if (index < 0 || static_cast<size_t>(index) >= ctx->kernelArgs.size())
    fatal("gnnrtKernelArgGet: no kernel argument #" + std::to_string(index));
  *result = ctx->kernelArgs[index];
}

void _mlir_ciface_gnnrtKernelArgI32(gnnrtContext *ctx, int64_t index,
                                    gnnrtMemRefI32 *buffer) {
  if (index < 0)
    fatal("gnnrtKernelArgI32: negative index");
  if (static_cast<size_t>(index) >= ctx->kernelArgsI32.size())
    ctx->kernelArgsI32.resize(index + 1);
  ctx->kernelArgsI32[index] = *buffer;
}

void _mlir_ciface_gnnrtKernelArgI32Get(gnnrtMemRefI32 *result,
                                       gnnrtContext *ctx, int64_t index) {
  if (index < 0 || static_cast<size_t>(index) >= ctx->kernelArgsI32.size())
    fatal("gnnrtKernelArgI32Get: no kernel argument #" + std::to_string(index));
  *result = ctx->kernelArgsI32[index];
}

void gnnrtKernelInt(gnnrtContext *ctx, int64_t index, int64_t value) {
  if (index < 0)
    fatal("gnnrtKernelInt: negative index");
  if (static_cast<size_t>(index) >= ctx->kernelInts.size())
    ctx->kernelInts.resize(index + 1);
  ctx->kernelInts[index] = value;
}

int64_t gnnrtKernelIntGet(gnnrtContext *ctx, int64_t index) {
  if (index < 0 || static_cast<size_t>(index) >= ctx->kernelInts.size())
    fatal("gnnrtKernelIntGet: no kernel integer #" + std::to_string(index));
  return ctx->kernelInts[index];
}

} // extern "C"
