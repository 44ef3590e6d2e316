//===- Params.cpp - the parameters on disk --------------------------------===//
//
// --save-params, --load-params and --dump's parameters and gradients: one
// <name>.npy per parameter, in its whole shape (a feature shard gathered
// from every process, or read as this process's rows).
//
//===----------------------------------------------------------------------===//

#include "Params.h"
#include "Distributed.h"
#include "File.h"
#include "Npy.h"

#include <cmath>
#include <cstring>

using namespace gnnrt;

namespace gnnrt {

/// Writes every parameter (gradient with `grads`) as <name>.npy in `dir`
/// when `write`; every rank calls it (a feature shard is gathered).
bool saveParams(gnnrtContext *ctx, const std::string &dir, bool grads,
                bool write, std::string &error) {
  if (write && !makeDirectories(dir, error))
    return false;
  for (size_t i = 0; i < ctx->model.params.size(); ++i) {
    std::vector<int64_t> shape;
    std::vector<float> values = wholeParam(ctx, i, grads, shape);
    if (write && !writeNpy(dir + "/" + ctx->model.params[i].name + ".npy",
                           DType::F32, shape, values.data(), error))
      return false;
  }
  return true;
}

bool loadParams(gnnrtContext *ctx, const std::string &dir, std::string &error) {
  for (size_t i = 0; i < ctx->model.params.size(); ++i) {
    const ParamInfo &p = ctx->model.params[i];
    std::string file = p.name + ".npy";
    NpyHeader h;
    std::vector<char> raw;
    if (!readNpy(dir + "/" + file, file, DType::F32, -1, h, raw, error))
      return false;
    std::vector<int64_t> wholeShape = p.shape;
    if (isFeatureShard(ctx, p))
      wholeShape[0] = ctx->featureTotal;
    if (h.shape != wholeShape) {
      std::string got, want;
      for (int64_t d : h.shape)
        got += (got.empty() ? "" : ", ") + std::to_string(d);
      for (int64_t d : wholeShape)
        want += (want.empty() ? "" : ", ") + std::to_string(d);
      error = file + ": shape (" + got + ") but the model needs (" + want + ")";
      return false;
    }
    // A NaN or Inf parameter would only show as NaN predictions later.
    const auto *values = reinterpret_cast<const float *>(raw.data());
    for (size_t j = 0, n = raw.size() / sizeof(float); j < n; ++j) {
      float x;
      std::memcpy(&x, values + j, sizeof x);
      if (!std::isfinite(x)) {
        error = file + ": NaN or Inf (element " + std::to_string(j) + ")";
        return false;
      }
    }
    // A feature shard takes the rows of this process's feature columns.
    const int64_t offset =
        isFeatureShard(ctx, p)
            ? ctx->featureBegin * (ctx->params[i]->size / p.shape[0])
            : 0;
    ctx->device->copy(ctx->params[i]->data, MemoryTier::Device,
                      raw.data() + offset * static_cast<int64_t>(sizeof(float)),
                      MemoryTier::Host,
                      ctx->params[i]->size *
                          static_cast<int64_t>(sizeof(float)));
  }
  return true;
}

float dumpOneStep(gnnrtContext *ctx, float (*train)(gnnrtContext *),
                  const std::string &dir, bool write, const PreloadPart &part,
                  int64_t numVertices) {
  std::string error;
  if (!saveParams(ctx, dir + "/params", false, write, error))
    fatal("--dump: " + error);
  auto bytes = [](int64_t n) {
    return n * static_cast<int64_t>(sizeof(float));
  };
  // One step with dropout off, without the update: the optimizer runs on
  // the parameters, which are then restored from a copy on the device.
  std::vector<std::unique_ptr<Buffer>> saved;
  for (auto &p : ctx->params) {
    saved.push_back(std::make_unique<Buffer>(*ctx->device, p->size));
    ctx->device->copy(saved.back()->data, MemoryTier::Device, p->data,
                      MemoryTier::Device, bytes(p->size));
  }
  ctx->training = true;
  ctx->dropoutOverride = 0.0;
  ctx->step = 0;
  zeroGrads(ctx);
  const float loss = worldLoss(ctx, train(ctx));
  for (size_t i = 0; i < saved.size(); ++i)
    ctx->device->copy(ctx->params[i]->data, MemoryTier::Device, saved[i]->data,
                      MemoryTier::Device, bytes(saved[i]->size));
  // The gradients are the ranks' sum already (the optimizer step); the
  // logits are gathered from the ranks' own rows.
  std::vector<char> staging;
  const int64_t C = ctx->ds.numClasses;
  const void *logits = ctx->device->hostView(
      ctx->logits, bytes(ctx->ds.numVertices * C), staging);
  std::vector<float> gathered;
  if (ctx->comm->size() > 1) {
    gathered = gatherOwnRows(ctx, part, numVertices,
                             static_cast<const float *>(logits), C);
    logits = gathered.data();
  }
  if (!saveParams(ctx, dir + "/grads", true, write, error))
    fatal("--dump: " + error);
  if (write && (!writeNpy(dir + "/loss.npy", DType::F32, {}, &loss, error) ||
                !writeNpy(dir + "/logits.npy", DType::F32, {numVertices, C},
                          logits, error)))
    fatal("--dump: " + error);
  return loss;
}

} // namespace gnnrt
