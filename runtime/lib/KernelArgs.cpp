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
#include <vector>

using namespace gnnrt;

namespace {

/// Sets operand `index` of `operands` (grown as needed); `entry` names the
/// entry point in the message.
template <typename T>
void setOperand(std::vector<T> &operands, int64_t index, const T &value,
                const char *entry) {
  if (index < 0)
    fatal(std::string(entry) + ": negative index");
  if (static_cast<size_t>(index) >= operands.size())
    operands.resize(index + 1);
  operands[index] = value;
}

/// Operand `index` of `operands`, which must have been set; `what` names
/// the operand in the message.
template <typename T>
const T &getOperand(const std::vector<T> &operands, int64_t index,
                    const char *entry, const char *what) {
  if (index < 0 || static_cast<size_t>(index) >= operands.size())
    fatal(std::string(entry) + ": no kernel " + what + " #" +
          std::to_string(index));
  return operands[index];
}

} // namespace

extern "C" {

void _mlir_ciface_gnnrtKernelArg(gnnrtContext *ctx, int64_t index,
                                 gnnrtMemRefF32 *buffer) {
  setOperand(ctx->kernelArgs, index, *buffer, "gnnrtKernelArg");
}

void _mlir_ciface_gnnrtKernelArgGet(gnnrtMemRefF32 *result, gnnrtContext *ctx,
                                    int64_t index) {
  *result = getOperand(ctx->kernelArgs, index, "gnnrtKernelArgGet", "argument");
}

void _mlir_ciface_gnnrtKernelArgI32(gnnrtContext *ctx, int64_t index,
                                    gnnrtMemRefI32 *buffer) {
  setOperand(ctx->kernelArgsI32, index, *buffer, "gnnrtKernelArgI32");
}

void _mlir_ciface_gnnrtKernelArgI32Get(gnnrtMemRefI32 *result,
                                       gnnrtContext *ctx, int64_t index) {
  *result =
      getOperand(ctx->kernelArgsI32, index, "gnnrtKernelArgI32Get", "argument");
}

void gnnrtKernelInt(gnnrtContext *ctx, int64_t index, int64_t value) {
  setOperand(ctx->kernelInts, index, value, "gnnrtKernelInt");
}

int64_t gnnrtKernelIntGet(gnnrtContext *ctx, int64_t index) {
  return getOperand(ctx->kernelInts, index, "gnnrtKernelIntGet", "integer");
}

} // extern "C"
