//===- HandGCN.cpp - zoo.gcn written by hand against the gnnrt ABI --------===//
//
// The code gnn-compile is meant to generate for examples/models/gcn.mlir,
// written out in C++: it exercises the runtime's kernels and the driver end to
// end (flags, --dump, --load-params, training) and is checked against the
// NumPy executor by test/Runtime/hand-gcn.test. Buffers come from gnnrtBuffer
// slots, so nothing is allocated per epoch.
//
//===----------------------------------------------------------------------===//

#include "gnnrt/GNNRuntime.h"

#include <cstdint>

extern "C" const char gnnrt_model_info[] =
    "model gcn\n"
    "param conv1.weight glorot 0 2 -1 16\n"
    "param conv1.bias zeros 0 1 16\n"
    "param conv2.weight glorot 0 2 16 -2\n"
    "param conv2.bias zeros 0 1 -2\n"
    "features -1\n"
    "classes -1\n";

namespace {
constexpr int64_t kHidden = 16;
constexpr gnnrtMemRefF32 kNone = {nullptr, nullptr, 0, {0}, {1}};

struct Sizes {
  int64_t V, E, F, C;
};

gnnrtMemRefF32 buffer(gnnrtContext *ctx, int64_t slot, int64_t n) {
  gnnrtMemRefF32 m;
  _mlir_ciface_gnnrtBuffer(&m, ctx, slot, n);
  return m;
}

gnnrtMemRefF32 param(gnnrtContext *ctx, int64_t i) {
  gnnrtMemRefF32 m;
  _mlir_ciface_gnnrtParam(&m, ctx, i);
  return m;
}

gnnrtMemRefF32 grad(gnnrtContext *ctx, int64_t i) {
  gnnrtMemRefF32 m;
  _mlir_ciface_gnnrtGrad(&m, ctx, i);
  return m;
}

float *p(gnnrtMemRefF32 &m) { return m.aligned + m.offset; }

struct Forward {
  gnnrtMemRefF32 a1, t1, h1, a2, logits;
  float loss;
};

/// norm[e] = 1 / sqrt(dout(src) din(dst)), computed through scatters.
gnnrtMemRefF32 edgeNorm(gnnrtContext *ctx, const Sizes &s) {
  gnnrtMemRefF32 din, dout;
  _mlir_ciface_gnnrtDegree(&din, ctx, 0);
  _mlir_ciface_gnnrtDegree(&dout, ctx, 1);
  gnnrtMemRefF32 si = buffer(ctx, 0, s.E), so = buffer(ctx, 1, s.E),
                 norm = buffer(ctx, 2, s.E);
  _mlir_ciface_gnnrtScatter(ctx, 1, &din, &si, 1);
  _mlir_ciface_gnnrtScatter(ctx, 0, &dout, &so, 1);
  for (int64_t e = 0; e < s.E; ++e) {
    float prod = p(so)[e] * p(si)[e];
    p(norm)[e] = 1.0f / __builtin_sqrtf(prod);
  }
  return norm;
}

Forward forward(gnnrtContext *ctx, const Sizes &s, gnnrtMemRefF32 &norm,
                gnnrtMemRefF32 *gradLogits) {
  Forward f;
  gnnrtMemRefF32 x;
  _mlir_ciface_gnnrtFeatures(&x, ctx);
  gnnrtMemRefF32 x0 = buffer(ctx, 3, s.V * s.F);
  _mlir_ciface_gnnrtDropout(ctx, 0, 0.5, &x, &x0);
  f.a1 = buffer(ctx, 4, s.V * s.F);
  _mlir_ciface_gnnrtSpmm(ctx, 1, 0, 1, &norm, &x0, &f.a1, s.F);
  gnnrtMemRefF32 w1 = param(ctx, 0), b1 = param(ctx, 1);
  f.t1 = buffer(ctx, 5, s.V * kHidden);
  _mlir_ciface_gnnrtGemm(ctx, 0, 0, s.V, kHidden, s.F, 1.0f, &f.a1, &w1, 0.0f,
                         &f.t1);
  gnnrtMemRefF32 r1 = buffer(ctx, 6, s.V * kHidden);
  for (int64_t v = 0; v < s.V; ++v)
    for (int64_t j = 0; j < kHidden; ++j) {
      float t = p(f.t1)[v * kHidden + j] + p(b1)[j];
      p(f.t1)[v * kHidden + j] = t;
      p(r1)[v * kHidden + j] = t > 0.0f ? t : 0.0f;
    }
  f.h1 = buffer(ctx, 7, s.V * kHidden);
  _mlir_ciface_gnnrtDropout(ctx, 1, 0.5, &r1, &f.h1);
  f.a2 = buffer(ctx, 8, s.V * kHidden);
  _mlir_ciface_gnnrtSpmm(ctx, 1, 0, 1, &norm, &f.h1, &f.a2, kHidden);
  gnnrtMemRefF32 w2 = param(ctx, 2), b2 = param(ctx, 3);
  f.logits = buffer(ctx, 9, s.V * s.C);
  _mlir_ciface_gnnrtGemm(ctx, 0, 0, s.V, s.C, kHidden, 1.0f, &f.a2, &w2, 0.0f,
                         &f.logits);
  for (int64_t v = 0; v < s.V; ++v)
    for (int64_t c = 0; c < s.C; ++c)
      p(f.logits)[v * s.C + c] += p(b2)[c];
  gnnrtMemRefF32 none = kNone;
  f.loss = _mlir_ciface_gnnrtSoftmaxCrossEntropy(
      ctx, &f.logits, gradLogits ? gradLogits : &none, s.C, 0);
  _mlir_ciface_gnnrtSetOutput(ctx, &f.logits, f.loss);
  return f;
}

Sizes sizes(gnnrtContext *ctx) {
  return {gnnrtDim(ctx, 0), gnnrtDim(ctx, 1), gnnrtDim(ctx, 2),
          gnnrtDim(ctx, 3)};
}
} // namespace

extern "C" float gnn_eval(gnnrtContext *ctx) {
  Sizes s = sizes(ctx);
  gnnrtMemRefF32 norm = edgeNorm(ctx, s);
  return forward(ctx, s, norm, nullptr).loss;
}

extern "C" float gnn_train_step(gnnrtContext *ctx) {
  Sizes s = sizes(ctx);
  gnnrtMemRefF32 norm = edgeNorm(ctx, s);
  gnnrtMemRefF32 gl = buffer(ctx, 10, s.V * s.C);
  Forward f = forward(ctx, s, norm, &gl);
  // Layer 2: logits = a2 W2 + b2.
  gnnrtMemRefF32 w2 = param(ctx, 2), gw2 = grad(ctx, 2), gb2 = grad(ctx, 3);
  _mlir_ciface_gnnrtGemm(ctx, 1, 0, kHidden, s.C, s.V, 1.0f, &f.a2, &gl, 1.0f,
                         &gw2);
  for (int64_t v = 0; v < s.V; ++v)
    for (int64_t c = 0; c < s.C; ++c)
      p(gb2)[c] += p(gl)[v * s.C + c];
  gnnrtMemRefF32 ga2 = buffer(ctx, 11, s.V * kHidden);
  _mlir_ciface_gnnrtGemm(ctx, 0, 1, s.V, kHidden, s.C, 1.0f, &gl, &w2, 0.0f,
                         &ga2);
  // Aggregation backward: to the sources, through the same weights.
  gnnrtMemRefF32 gh1 = buffer(ctx, 12, s.V * kHidden);
  _mlir_ciface_gnnrtSpmm(ctx, 0, 0, 1, &norm, &ga2, &gh1, kHidden);
  gnnrtMemRefF32 gr1 = buffer(ctx, 13, s.V * kHidden);
  _mlir_ciface_gnnrtDropoutBackward(ctx, 1, 0.5, &gh1, &gr1);
  for (int64_t i = 0; i < s.V * kHidden; ++i)
    if (!(p(f.t1)[i] > 0.0f))
      p(gr1)[i] = 0.0f;
  gnnrtMemRefF32 gw1 = grad(ctx, 0), gb1 = grad(ctx, 1);
  _mlir_ciface_gnnrtGemm(ctx, 1, 0, s.F, kHidden, s.V, 1.0f, &f.a1, &gr1, 1.0f,
                         &gw1);
  for (int64_t v = 0; v < s.V; ++v)
    for (int64_t j = 0; j < kHidden; ++j)
      p(gb1)[j] += p(gr1)[v * kHidden + j];
  gnnrtSumGradients(ctx);
  for (int64_t i = 0; i < 4; ++i)
    gnnrtOptimizerUpdate(ctx, i);
  return f.loss;
}
