//===- Dispatch.cpp - the C ABI's compute entry points --------------------===//
//
// Each forwards to the context's backend (Backend.h).
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "Context.h"

using namespace gnnrt;

namespace gnnrt {
namespace cpu {
void cpuScatter(gnnrtContext *, int64_t, gnnrtMemRefF32 *, gnnrtMemRefF32 *,
                int64_t);
void cpuGather(gnnrtContext *, int64_t, int64_t, gnnrtMemRefF32 *,
               gnnrtMemRefF32 *, gnnrtMemRefI32 *, int64_t);
void cpuGatherArgBackward(gnnrtContext *, int64_t, gnnrtMemRefF32 *,
                          gnnrtMemRefI32 *, gnnrtMemRefF32 *, int64_t);
void cpuSpmm(gnnrtContext *, int64_t, int64_t, gnnrtMemRefF32 *,
             gnnrtMemRefF32 *, gnnrtMemRefF32 *, int64_t);
void cpuGemm(int64_t, int64_t, int64_t, int64_t, int64_t, float,
             gnnrtMemRefF32 *, gnnrtMemRefF32 *, float, gnnrtMemRefF32 *);
void cpuSumRows(int64_t, int64_t, gnnrtMemRefF32 *, gnnrtMemRefF32 *);
void cpuTypedGemm(gnnrtContext *, int64_t, int64_t, int64_t, int64_t,
                  gnnrtMemRefF32 *, gnnrtMemRefI32 *, gnnrtMemRefF32 *,
                  gnnrtMemRefF32 *);
void cpuTypedGemmTranspose(gnnrtContext *, int64_t, int64_t, int64_t, int64_t,
                           gnnrtMemRefF32 *, gnnrtMemRefI32 *, gnnrtMemRefF32 *,
                           gnnrtMemRefF32 *);
void cpuTypedOuterSum(gnnrtContext *, int64_t, int64_t, int64_t, int64_t,
                      gnnrtMemRefF32 *, gnnrtMemRefI32 *, gnnrtMemRefF32 *,
                      gnnrtMemRefF32 *);
float cpuSoftmaxCrossEntropy(gnnrtContext *, gnnrtMemRefF32 *, gnnrtMemRefF32 *,
                             int64_t, int64_t);
void cpuDropout(gnnrtContext *, int64_t, double, gnnrtMemRefF32 *,
                gnnrtMemRefF32 *);
} // namespace cpu

namespace {
class CPUBackend final : public Backend {
public:
  const char *name() const override { return "cpu"; }
  void scatter(gnnrtContext *c, int64_t side, gnnrtMemRefF32 *in,
               gnnrtMemRefF32 *out, int64_t w) override {
    cpu::cpuScatter(c, side, in, out, w);
  }
  void gather(gnnrtContext *c, int64_t acc, int64_t side, gnnrtMemRefF32 *in,
              gnnrtMemRefF32 *out, gnnrtMemRefI32 *arg, int64_t w) override {
    cpu::cpuGather(c, acc, side, in, out, arg, w);
  }
  void gatherArgBackward(gnnrtContext *c, int64_t side, gnnrtMemRefF32 *g,
                         gnnrtMemRefI32 *arg, gnnrtMemRefF32 *ge,
                         int64_t w) override {
    cpu::cpuGatherArgBackward(c, side, g, arg, ge, w);
  }
  void spmm(gnnrtContext *c, int64_t side, int64_t mean, gnnrtMemRefF32 *wts,
            gnnrtMemRefF32 *in, gnnrtMemRefF32 *out, int64_t w) override {
    cpu::cpuSpmm(c, side, mean, wts, in, out, w);
  }
  void gemm(int64_t ta, int64_t tb, int64_t m, int64_t n, int64_t k,
            float alpha, gnnrtMemRefF32 *a, gnnrtMemRefF32 *b, float beta,
            gnnrtMemRefF32 *c) override {
    cpu::cpuGemm(ta, tb, m, n, k, alpha, a, b, beta, c);
  }
  void sumRows(int64_t rows, int64_t width, gnnrtMemRefF32 *in,
               gnnrtMemRefF32 *out) override {
    cpu::cpuSumRows(rows, width, in, out);
  }
  void typedGemm(gnnrtContext *c, int64_t rows, int64_t k, int64_t n, int64_t t,
                 gnnrtMemRefF32 *x, gnnrtMemRefI32 *types, gnnrtMemRefF32 *w,
                 gnnrtMemRefF32 *out) override {
    cpu::cpuTypedGemm(c, rows, k, n, t, x, types, w, out);
  }
  void typedGemmTranspose(gnnrtContext *c, int64_t rows, int64_t k, int64_t n,
                          int64_t t, gnnrtMemRefF32 *g, gnnrtMemRefI32 *types,
                          gnnrtMemRefF32 *w, gnnrtMemRefF32 *gx) override {
    cpu::cpuTypedGemmTranspose(c, rows, k, n, t, g, types, w, gx);
  }
  void typedOuterSum(gnnrtContext *c, int64_t rows, int64_t k, int64_t n,
                     int64_t t, gnnrtMemRefF32 *x, gnnrtMemRefI32 *types,
                     gnnrtMemRefF32 *g, gnnrtMemRefF32 *gw) override {
    cpu::cpuTypedOuterSum(c, rows, k, n, t, x, types, g, gw);
  }
  float softmaxCrossEntropy(gnnrtContext *c, gnnrtMemRefF32 *logits,
                            gnnrtMemRefF32 *grad, int64_t classes,
                            int64_t split) override {
    return cpu::cpuSoftmaxCrossEntropy(c, logits, grad, classes, split);
  }
  void dropout(gnnrtContext *c, int64_t op, double rate, gnnrtMemRefF32 *in,
               gnnrtMemRefF32 *out) override {
    cpu::cpuDropout(c, op, rate, in, out);
  }
};

Backend *active = nullptr;
} // namespace

Backend &cpuBackend() {
  static CPUBackend backend;
  return backend;
}

Backend &activeBackend() { return active ? *active : cpuBackend(); }
void setActiveBackend(Backend &backend) { active = &backend; }

} // namespace gnnrt

static Backend &of(gnnrtContext *ctx) {
  return ctx->backend ? *ctx->backend : cpuBackend();
}

extern "C" {

void _mlir_ciface_gnnrtScatter(gnnrtContext *ctx, int64_t side,
                               gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
                               int64_t width) {
  of(ctx).scatter(ctx, side, in, out, width);
}

void _mlir_ciface_gnnrtGather(gnnrtContext *ctx, int64_t acc, int64_t side,
                              gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
                              gnnrtMemRefI32 *arg, int64_t width) {
  of(ctx).gather(ctx, acc, side, in, out, arg, width);
}

void _mlir_ciface_gnnrtGatherArgBackward(gnnrtContext *ctx, int64_t side,
                                         gnnrtMemRefF32 *gradOut,
                                         gnnrtMemRefI32 *arg,
                                         gnnrtMemRefF32 *gradEdges,
                                         int64_t width) {
  of(ctx).gatherArgBackward(ctx, side, gradOut, arg, gradEdges, width);
}

void _mlir_ciface_gnnrtSpmm(gnnrtContext *ctx, int64_t side, int64_t mean,
                            gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in,
                            gnnrtMemRefF32 *out, int64_t width) {
  of(ctx).spmm(ctx, side, mean, weights, in, out, width);
}

void _mlir_ciface_gnnrtGemm(int64_t transA, int64_t transB, int64_t m,
                            int64_t n, int64_t k, float alpha,
                            gnnrtMemRefF32 *a, gnnrtMemRefF32 *b, float beta,
                            gnnrtMemRefF32 *c) {
  activeBackend().gemm(transA, transB, m, n, k, alpha, a, b, beta, c);
}

void _mlir_ciface_gnnrtSumRows(int64_t rows, int64_t width,
                               gnnrtMemRefF32 *in, gnnrtMemRefF32 *out) {
  activeBackend().sumRows(rows, width, in, out);
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

float _mlir_ciface_gnnrtSoftmaxCrossEntropy(gnnrtContext *ctx,
                                            gnnrtMemRefF32 *logits,
                                            gnnrtMemRefF32 *grad,
                                            int64_t classes, int64_t split) {
  return of(ctx).softmaxCrossEntropy(ctx, logits, grad, classes, split);
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
