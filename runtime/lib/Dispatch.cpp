//===- Dispatch.cpp - the C ABI's compute entry points --------------------===//
//
// Each forwards to the context's device (Device.h).
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "Device.h"

#include <algorithm>

using namespace gnnrt;

static Device &of(gnnrtContext *ctx) { return *ctx->device; }

/// An entry point over every edge: not with the graph out of core, whose
/// windows hold a row chunk's edges (the lowering runs such steps whole
/// only when the graph is in memory).
static void needWholeGraph(gnnrtContext *ctx, const char *what) {
  if (ctx->graphOnStorage)
    fatal(std::string(what) + ": reads every edge, but the graph is out of "
                              "core (read by row chunks' windows)");
}

extern "C" {

void _mlir_ciface_gnnrtScatter(gnnrtContext *ctx, int64_t side,
                               gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
                               int64_t width) {
  needWholeGraph(ctx, "gnnrtScatter");
  of(ctx).scatter(ctx, side, in, out, width);
}

void _mlir_ciface_gnnrtGather(gnnrtContext *ctx, int64_t acc, int64_t side,
                              gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
                              gnnrtMemRefI32 *arg, int64_t width) {
  needWholeGraph(ctx, "gnnrtGather");
  of(ctx).gather(ctx, acc, side, in, out, arg, width);
}

void _mlir_ciface_gnnrtGatherArgBackward(gnnrtContext *ctx, int64_t side,
                                         gnnrtMemRefF32 *gradOut,
                                         gnnrtMemRefI32 *arg,
                                         gnnrtMemRefF32 *gradEdges,
                                         int64_t width) {
  needWholeGraph(ctx, "gnnrtGatherArgBackward");
  of(ctx).gatherArgBackward(ctx, side, gradOut, arg, gradEdges, width);
}

void _mlir_ciface_gnnrtSpmm(gnnrtContext *ctx, int64_t side, int64_t mean,
                            int64_t chunks, gnnrtMemRefF32 *weights,
                            gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
                            int64_t width) {
  needWholeGraph(ctx, "gnnrtSpmm");
  of(ctx).spmm(ctx, side, mean, chunks, weights, in, out, width);
}

void _mlir_ciface_gnnrtSpmmRows(gnnrtContext *ctx, int64_t side, int64_t mean,
                                gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in,
                                gnnrtMemRefF32 *out, int64_t width,
                                int64_t begin, int64_t end, int64_t inBegin,
                                int64_t inEnd) {
  const DeviceGraph &g = of(ctx).graph();
  needRange(begin, end, g.rowsOn(side), "gnnrtSpmmRows: rows");
  needRange(inBegin, inEnd, g.rowsOn(1 - side), "gnnrtSpmmRows: input rows");
  needGraphRows(ctx, side, begin, end, "gnnrtSpmmRows");
  of(ctx).spmmRows(ctx, side, mean, weights, in, out, width, begin, end,
                   inBegin, inEnd);
}

void _mlir_ciface_gnnrtGemm(gnnrtContext *ctx, int64_t transA, int64_t transB,
                            int64_t m, int64_t n, int64_t k, float alpha,
                            gnnrtMemRefF32 *a, gnnrtMemRefF32 *b, float beta,
                            gnnrtMemRefF32 *c) {
  of(ctx).gemm(ctx, transA, transB, m, n, k, alpha, a, b, beta, c);
}

void _mlir_ciface_gnnrtSumRows(gnnrtContext *ctx, int64_t rows, int64_t width,
                               gnnrtMemRefF32 *in, gnnrtMemRefF32 *out) {
  of(ctx).sumRows(ctx, rows, width, in, out, false);
}

void _mlir_ciface_gnnrtSumRowsAdd(gnnrtContext *ctx, int64_t rows,
                                  int64_t width, gnnrtMemRefF32 *in,
                                  gnnrtMemRefF32 *out) {
  of(ctx).sumRows(ctx, rows, width, in, out, true);
}

void _mlir_ciface_gnnrtZeroRows(gnnrtContext *ctx, gnnrtMemRefF32 *buf,
                                int64_t begin, int64_t count) {
  if (begin < 0 || count < 0 || begin + count > buf->sizes[0])
    fatal("gnnrtZeroRows: elements [" + std::to_string(begin) + ", " +
          std::to_string(begin + count) + ") outside a buffer of " +
          std::to_string(buf->sizes[0]));
  if (count > 0)
    ctx->device->fill(buf->aligned + buf->offset + begin, 0,
                      count * static_cast<int64_t>(sizeof(float)));
}

void _mlir_ciface_gnnrtTypedGemm(gnnrtContext *ctx, int64_t rows, int64_t k,
                                 int64_t n, int64_t numTypes, gnnrtMemRefF32 *x,
                                 gnnrtMemRefI32 *types, gnnrtMemRefF32 *w,
                                 gnnrtMemRefF32 *out) {
  of(ctx).typedGemm(ctx, rows, k, n, numTypes, x, types, w, out);
}

void _mlir_ciface_gnnrtTypedGemmTranspose(gnnrtContext *ctx, int64_t rows,
                                          int64_t k, int64_t n,
                                          int64_t numTypes, gnnrtMemRefF32 *g,
                                          gnnrtMemRefI32 *types,
                                          gnnrtMemRefF32 *w,
                                          gnnrtMemRefF32 *gx) {
  of(ctx).typedGemmTranspose(ctx, rows, k, n, numTypes, g, types, w, gx);
}

void _mlir_ciface_gnnrtTypedOuterSum(gnnrtContext *ctx, int64_t rows, int64_t k,
                                     int64_t n, int64_t numTypes,
                                     gnnrtMemRefF32 *x, gnnrtMemRefI32 *types,
                                     gnnrtMemRefF32 *g, gnnrtMemRefF32 *gw) {
  of(ctx).typedOuterSum(ctx, rows, k, n, numTypes, x, types, g, gw);
}

void _mlir_ciface_gnnrtCheckTypes(gnnrtContext *ctx, gnnrtMemRefI32 *types,
                                  int64_t numTypes) {
  const int64_t n = types->sizes[0];
  const int32_t *data = types->aligned + types->offset;
  if (n == 0)
    return;
  // The types on the host (a copy where the device's memory is not).
  std::vector<int32_t> host;
  auto onHost = [&]() -> const int32_t * {
    if (ctx->device->deviceMemoryIsHostMemory())
      return data;
    if (host.empty()) {
      host.resize(static_cast<size_t>(n));
      ctx->device->copy(host.data(), MemoryTier::Host, data, MemoryTier::Device,
                        n * static_cast<int64_t>(sizeof(int32_t)));
    }
    return host.data();
  };
  // Each edge input bound is scanned once (its least and greatest type),
  // not once per slot op and step; types from anywhere else (a slot the
  // step rewrites) are scanned at every call.
  auto &checked = ctx->checkedTypes;
  auto known = std::find_if(checked.begin(), checked.end(), [&](auto &c) {
    return c.data == data && c.size == n;
  });
  int32_t least, most;
  if (known != checked.end()) {
    least = known->least;
    most = known->most;
  } else {
    const int32_t *t = onHost();
    auto [lo, hi] = std::minmax_element(t, t + n);
    least = *lo;
    most = *hi;
    const auto &inputs = ctx->device->edgeData();
    if (std::any_of(inputs.begin(), inputs.end(), [&](const auto &in) {
          return in.i32 && data >= in.i32 && data + n <= in.i32 + in.i32Size;
        }))
      checked.push_back({data, n, least, most});
  }
  if (least >= 0 && most < numTypes)
    return;
  // The first edge out of range, for the message.
  const int32_t *t = onHost();
  for (int64_t e = 0; e < n; ++e)
    if (t[e] < 0 || t[e] >= numTypes)
      fatal("edge type " + std::to_string(t[e]) + " of edge " +
            std::to_string(e) + " outside [0, " + std::to_string(numTypes) +
            ") of the typed linear's weight");
}

float _mlir_ciface_gnnrtSoftmaxCrossEntropy(gnnrtContext *ctx,
                                            gnnrtMemRefF32 *logits,
                                            gnnrtMemRefF32 *grad,
                                            int64_t classes, int64_t split) {
  return of(ctx).softmaxCrossEntropy(ctx, logits, grad, classes, split, 0,
                                     ctx->ds.numVertices);
}

float _mlir_ciface_gnnrtSoftmaxCrossEntropyRows(gnnrtContext *ctx,
                                                gnnrtMemRefF32 *logits,
                                                gnnrtMemRefF32 *grad,
                                                int64_t classes, int64_t split,
                                                int64_t begin, int64_t end) {
  needRange(begin, end, ctx->ds.numVertices,
            "gnnrtSoftmaxCrossEntropyRows: rows");
  return of(ctx).softmaxCrossEntropy(ctx, logits, grad, classes, split, begin,
                                     end);
}

void _mlir_ciface_gnnrtDropout(gnnrtContext *ctx, int64_t op, double rate,
                               gnnrtMemRefF32 *in, gnnrtMemRefF32 *out) {
  of(ctx).dropout(ctx, op, rate, in, out);
}

void _mlir_ciface_gnnrtDropoutBackward(gnnrtContext *ctx, int64_t op,
                                       double rate, gnnrtMemRefF32 *gradOut,
                                       gnnrtMemRefF32 *gradIn) {
  // The same mask as the forward: the draw depends on (seed, step, op, i).
  of(ctx).dropout(ctx, op, rate, gradOut, gradIn);
}

} // extern "C"
