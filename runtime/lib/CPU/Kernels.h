//===- Kernels.h - the CPU device's kernels ---------------------*- C++ -*-===//
//
// OpenMP + OpenBLAS implementations of the Device compute methods
// (Kernels.cpp); CPUDevice.cpp forwards to them.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_CPU_KERNELS_H
#define GNNRT_CPU_KERNELS_H

#include "Device.h"
#include "gnnrt/GNNRuntime.h"

namespace gnnrt::cpu {

void cpuScatter(const DeviceGraph &graph, int64_t side, gnnrtMemRefF32 *in,
                gnnrtMemRefF32 *out, int64_t width);
void cpuGather(const DeviceGraph &graph, int64_t acc, int64_t side,
               gnnrtMemRefF32 *in, gnnrtMemRefF32 *out, gnnrtMemRefI32 *arg,
               int64_t width);
void cpuGatherArgBackward(const DeviceGraph &graph, int64_t side,
                          gnnrtMemRefF32 *gradOut, gnnrtMemRefI32 *arg,
                          gnnrtMemRefF32 *gradEdges, int64_t width);
/// One stage of gnnrtSpmmBroadcast: the own rows' sums over their in-edges
/// from the sources [lo, hi), whose rows `rows` holds (row u at
/// rows + (u - lo) * width); stored at lo = 0, added after; a mean divides
/// at hi = S. Only the own rows [0, end) (a sampled batch's level).
void cpuSpmmStage(const DeviceGraph &graph, int64_t mean,
                  gnnrtMemRefF32 *weights, const float *rows, int64_t lo,
                  int64_t hi, gnnrtMemRefF32 *out, int64_t width, int64_t end);
/// One stage of gnnrtSpmmReduce: the sources [lo, hi)'s sums over their
/// out-edges of the own rows `in` (this process's partials), into `rows`
/// (row u at rows + (u - lo) * width).
void cpuSpmmSourceStage(const DeviceGraph &graph, gnnrtMemRefF32 *weights,
                        gnnrtMemRefF32 *in, int64_t lo, int64_t hi, float *rows,
                        int64_t width);
void cpuSpmmRows(const DeviceGraph &graph, int64_t side, int64_t mean,
                 gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in,
                 gnnrtMemRefF32 *out, int64_t width, int64_t begin, int64_t end,
                 int64_t inBegin, int64_t inEnd);
void cpuSpmm(const DeviceGraph &graph, int64_t side, int64_t mean,
             int64_t chunks, gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in,
             gnnrtMemRefF32 *out, int64_t width);
void cpuGemm(int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k,
             float alpha, gnnrtMemRefF32 *a, gnnrtMemRefF32 *b, float beta,
             gnnrtMemRefF32 *c);
void cpuSumRows(int64_t rows, int64_t width, gnnrtMemRefF32 *in,
                gnnrtMemRefF32 *out, bool accumulate);
void cpuTypedGemm(gnnrtContext *ctx, int64_t rows, int64_t k, int64_t n,
                  int64_t numTypes, gnnrtMemRefF32 *x, gnnrtMemRefI32 *types,
                  gnnrtMemRefF32 *w, gnnrtMemRefF32 *out);
void cpuTypedGemmTranspose(gnnrtContext *ctx, int64_t rows, int64_t k,
                           int64_t n, int64_t numTypes, gnnrtMemRefF32 *g,
                           gnnrtMemRefI32 *types, gnnrtMemRefF32 *w,
                           gnnrtMemRefF32 *gx);
void cpuTypedOuterSum(gnnrtContext *ctx, int64_t rows, int64_t k, int64_t n,
                      int64_t numTypes, gnnrtMemRefF32 *x,
                      gnnrtMemRefI32 *types, gnnrtMemRefF32 *g,
                      gnnrtMemRefF32 *gw);
/// Over the rows [begin, end): their share of the masked mean (the mean's
/// count is the whole split's) and their gradient rows.
float cpuSoftmaxCrossEntropy(gnnrtContext *ctx, gnnrtMemRefF32 *logits,
                             gnnrtMemRefF32 *grad, int64_t classes,
                             int64_t split, int64_t begin, int64_t end);
void cpuDropout(gnnrtContext *ctx, int64_t op, double rate, gnnrtMemRefF32 *in,
                gnnrtMemRefF32 *out);

} // namespace gnnrt::cpu

#endif // GNNRT_CPU_KERNELS_H
