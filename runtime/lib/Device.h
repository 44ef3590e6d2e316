//===- Device.h - the device interface of gnnrt -----------------*- C++ -*-===//
//
// The C ABI (gnnrt/GNNRuntime.h) forwards every compute entry point to the
// context's Device. The CPU device (CPU/: OpenMP + OpenBLAS) is the one built
// today; a CUDA device (cuBLAS, cuSPARSE, own kernels) implements the same
// methods over device memory and is selected at start-up. Arguments are the
// ABI's memref descriptors, so a device sees exactly what compiled code
// passes.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_DEVICE_H
#define GNNRT_DEVICE_H

#include "gnnrt/GNNRuntime.h"

#include <memory>

namespace gnnrt {

class Device {
public:
  virtual ~Device() = default;
  /// A short name for logs ("cpu", "cuda").
  virtual const char *name() const = 0;

  virtual void scatter(gnnrtContext *ctx, int64_t side, gnnrtMemRefF32 *in,
                       gnnrtMemRefF32 *out, int64_t width) = 0;
  virtual void gather(gnnrtContext *ctx, int64_t acc, int64_t side,
                      gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
                      gnnrtMemRefI32 *arg, int64_t width) = 0;
  virtual void gatherArgBackward(gnnrtContext *ctx, int64_t side,
                                 gnnrtMemRefF32 *gradOut, gnnrtMemRefI32 *arg,
                                 gnnrtMemRefF32 *gradEdges, int64_t width) = 0;
  virtual void spmm(gnnrtContext *ctx, int64_t side, int64_t mean,
                    gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in,
                    gnnrtMemRefF32 *out, int64_t width) = 0;
  virtual void gemm(int64_t transA, int64_t transB, int64_t m, int64_t n,
                    int64_t k, float alpha, gnnrtMemRefF32 *a,
                    gnnrtMemRefF32 *b, float beta, gnnrtMemRefF32 *c) = 0;
  /// out[j] = sum over the rows of in[rows, width].
  virtual void sumRows(int64_t rows, int64_t width, gnnrtMemRefF32 *in,
                       gnnrtMemRefF32 *out) = 0;
  virtual void typedGemm(gnnrtContext *ctx, int64_t rows, int64_t k, int64_t n,
                         int64_t numTypes, gnnrtMemRefF32 *x,
                         gnnrtMemRefI32 *types, gnnrtMemRefF32 *w,
                         gnnrtMemRefF32 *out) = 0;
  virtual void typedGemmTranspose(gnnrtContext *ctx, int64_t rows, int64_t k,
                                  int64_t n, int64_t numTypes,
                                  gnnrtMemRefF32 *g, gnnrtMemRefI32 *types,
                                  gnnrtMemRefF32 *w, gnnrtMemRefF32 *gx) = 0;
  virtual void typedOuterSum(gnnrtContext *ctx, int64_t rows, int64_t k,
                             int64_t n, int64_t numTypes, gnnrtMemRefF32 *x,
                             gnnrtMemRefI32 *types, gnnrtMemRefF32 *g,
                             gnnrtMemRefF32 *gw) = 0;
  virtual float softmaxCrossEntropy(gnnrtContext *ctx, gnnrtMemRefF32 *logits,
                                    gnnrtMemRefF32 *grad, int64_t classes,
                                    int64_t split) = 0;
  virtual void dropout(gnnrtContext *ctx, int64_t op, double rate,
                       gnnrtMemRefF32 *in, gnnrtMemRefF32 *out) = 0;
};

/// The CPU device (always built; CPU/CPUDevice.cpp).
std::unique_ptr<Device> createCPUDevice();

/// The device of entry points without a context (gnnrtGemm); the driver
/// sets it with the context's.
Device &activeBackend();
void setActiveBackend(Device &device);

} // namespace gnnrt

#endif // GNNRT_DEVICE_H
