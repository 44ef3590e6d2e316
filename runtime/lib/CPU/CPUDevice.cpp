//===- CPUDevice.cpp - the CPU device of gnnrt ----------------------------===//
//
// The compute methods forward to the OpenMP + OpenBLAS kernels (Kernels.cpp).
//
//===----------------------------------------------------------------------===//

#include "CPU/Kernels.h"
#include "Context.h"
#include "Device.h"

using namespace gnnrt;
using namespace gnnrt::cpu;

namespace {

class CPUDevice final : public Device {
public:
  const char *name() const override { return "cpu"; }

  void scatter(gnnrtContext *c, int64_t side, gnnrtMemRefF32 *in,
               gnnrtMemRefF32 *out, int64_t w) override {
    cpuScatter(c, side, in, out, w);
  }
  void gather(gnnrtContext *c, int64_t acc, int64_t side, gnnrtMemRefF32 *in,
              gnnrtMemRefF32 *out, gnnrtMemRefI32 *arg, int64_t w) override {
    cpuGather(c, acc, side, in, out, arg, w);
  }
  void gatherArgBackward(gnnrtContext *c, int64_t side, gnnrtMemRefF32 *g,
                         gnnrtMemRefI32 *arg, gnnrtMemRefF32 *ge,
                         int64_t w) override {
    cpuGatherArgBackward(c, side, g, arg, ge, w);
  }
  void spmm(gnnrtContext *c, int64_t side, int64_t mean, gnnrtMemRefF32 *wts,
            gnnrtMemRefF32 *in, gnnrtMemRefF32 *out, int64_t w) override {
    cpuSpmm(c, side, mean, wts, in, out, w);
  }
  void gemm(int64_t ta, int64_t tb, int64_t m, int64_t n, int64_t k,
            float alpha, gnnrtMemRefF32 *a, gnnrtMemRefF32 *b, float beta,
            gnnrtMemRefF32 *c) override {
    cpuGemm(ta, tb, m, n, k, alpha, a, b, beta, c);
  }
  void sumRows(int64_t rows, int64_t width, gnnrtMemRefF32 *in,
               gnnrtMemRefF32 *out) override {
    cpuSumRows(rows, width, in, out);
  }
  void typedGemm(gnnrtContext *c, int64_t rows, int64_t k, int64_t n, int64_t t,
                 gnnrtMemRefF32 *x, gnnrtMemRefI32 *types, gnnrtMemRefF32 *w,
                 gnnrtMemRefF32 *out) override {
    cpuTypedGemm(c, rows, k, n, t, x, types, w, out);
  }
  void typedGemmTranspose(gnnrtContext *c, int64_t rows, int64_t k, int64_t n,
                          int64_t t, gnnrtMemRefF32 *g, gnnrtMemRefI32 *types,
                          gnnrtMemRefF32 *w, gnnrtMemRefF32 *gx) override {
    cpuTypedGemmTranspose(c, rows, k, n, t, g, types, w, gx);
  }
  void typedOuterSum(gnnrtContext *c, int64_t rows, int64_t k, int64_t n,
                     int64_t t, gnnrtMemRefF32 *x, gnnrtMemRefI32 *types,
                     gnnrtMemRefF32 *g, gnnrtMemRefF32 *gw) override {
    cpuTypedOuterSum(c, rows, k, n, t, x, types, g, gw);
  }
  float softmaxCrossEntropy(gnnrtContext *c, gnnrtMemRefF32 *logits,
                            gnnrtMemRefF32 *grad, int64_t classes,
                            int64_t split) override {
    return cpuSoftmaxCrossEntropy(c, logits, grad, classes, split);
  }
  void dropout(gnnrtContext *c, int64_t op, double rate, gnnrtMemRefF32 *in,
               gnnrtMemRefF32 *out) override {
    cpuDropout(c, op, rate, in, out);
  }
};

} // namespace

std::unique_ptr<Device> gnnrt::createCPUDevice() {
  return std::make_unique<CPUDevice>();
}
