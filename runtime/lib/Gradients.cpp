//===- Gradients.cpp - the gradients' sum and the optimizer step ----------===//
//
// The C ABI's gradient entry points (GNNRuntime.h): gnnrtGradientReady and
// gnnrtSumGradients sum the gradients over the processes in buckets issued
// as the backward makes them final (docs/Distributed.md), and
// gnnrtOptimizerUpdate steps a parameter on its device (a pipeline lane's
// on its master's). A batch trained in parts (gnnrtContext::GradientParts)
// sums its parts' gradients and steps once, at its last part.
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "gnnrt/GNNRuntime.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace gnnrt;

extern "C" {

/// Packs the pending gradients into a bucket and issues its all-reduce.
static void issueGradientBucket(gnnrtContext *ctx) {
  gnnrtContext::GradientBuckets &b = ctx->gradientSum;
  if (b.pending.empty())
    return;
  std::vector<float> &bucket = b.packed.emplace_back(b.pendingFloats);
  int64_t at = 0;
  for (int64_t i : b.pending) {
    const Buffer &g = *ctx->grads[i];
    std::copy(g.data, g.data + g.size, bucket.begin() + at);
    at += g.size;
  }
  b.requests.push_back(ctx->comm->iAllReduce(bucket.data(), bucket.data(),
                                             b.pendingFloats, ReduceOp::Sum));
  ++b.issued;
  b.members.push_back(std::move(b.pending));
  b.pending.clear();
  b.pendingFloats = 0;
}

/// Whether parameter `index`'s gradient is summed over the processes: not a
/// feature shard's (exact on its process already: P³, no sum of W1's).
static bool isSummed(const gnnrtContext *ctx, int64_t index) {
  return ctx->comm->size() > 1 &&
         !isFeatureShard(ctx, ctx->model.params[index]);
}

/// The last part of a batch trained in parts (gradientParts.fold): adds the
/// earlier parts' gradient of parameter `index` to its gradient, once.
static void foldGradientParts(gnnrtContext *ctx, int64_t index) {
  gnnrtContext::GradientParts &parts = ctx->gradientParts;
  if (!parts.fold || static_cast<size_t>(index) >= parts.sum.size())
    return;
  parts.folded.resize(parts.sum.size());
  if (parts.folded[index] || parts.sum[index].empty())
    return;
  parts.folded[index] = 1;
  Buffer &g = *ctx->grads[index];
  const float *sum = parts.sum[index].data();
  for (int64_t i = 0; i < g.size; ++i)
    g.data[i] += sum[i];
}

void gnnrtGradientReady(gnnrtContext *ctx, int64_t index) {
  if (index < 0 || static_cast<size_t>(index) >= ctx->grads.size())
    fatal("gnnrtGradientReady: no parameter #" + std::to_string(index));
  // An earlier part of a batch in parts is summed at its update; the last
  // part's gradient takes the earlier parts' before it goes out.
  if (ctx->gradientParts.defer)
    return;
  foldGradientParts(ctx, static_cast<int64_t>(index));
  if (!isSummed(ctx, index))
    return;
  gnnrtContext::GradientBuckets &b = ctx->gradientSum;
  b.announced.resize(ctx->grads.size());
  if (b.announced[index])
    fatal("gnnrtGradientReady: parameter #" + std::to_string(index) +
          "'s gradient announced twice in one step");
  b.announced[index] = 1;
  b.pending.push_back(index);
  b.pendingFloats += ctx->grads[index]->size;
  if (4 * b.pendingFloats >= b.bucketBytes)
    issueGradientBucket(ctx);
}

void gnnrtSumGradients(gnnrtContext *ctx) {
  if (ctx->gradientParts.defer)
    return;
  for (size_t i = 0; i < ctx->grads.size(); ++i)
    foldGradientParts(ctx, static_cast<int64_t>(i));
  if (ctx->comm->size() == 1)
    return;
  // The gradients not announced yet (a program that announces none: all of
  // them) go out in a last bucket; then every bucket is waited for and
  // unpacked (device memory is host memory on the CPU, the only device that
  // trains on several processes yet).
  gnnrtContext::GradientBuckets &b = ctx->gradientSum;
  b.announced.resize(ctx->grads.size());
  for (size_t i = 0; i < ctx->grads.size(); ++i)
    if (!b.announced[i] && isSummed(ctx, static_cast<int64_t>(i))) {
      b.pending.push_back(static_cast<int64_t>(i));
      b.pendingFloats += ctx->grads[i]->size;
    }
  issueGradientBucket(ctx);
  for (size_t k = 0; k < b.requests.size(); ++k) {
    ctx->comm->wait(b.requests[k]);
    int64_t at = 0;
    for (int64_t i : b.members[k]) {
      Buffer &g = *ctx->grads[i];
      std::copy(b.packed[k].begin() + at, b.packed[k].begin() + at + g.size,
                g.data);
      at += g.size;
    }
  }
  b.packed.clear();
  b.members.clear();
  b.requests.clear();
  std::fill(b.announced.begin(), b.announced.end(), 0);
}

void gnnrtOptimizerUpdate(gnnrtContext *ctx, int64_t index) {
  // A lane of the pipeline updates the master's parameters with its own
  // gradients (its parameters are a stashed version's copy).
  gnnrtContext *owner = ctx->lane.master ? ctx->lane.master : ctx;
  if (index < 0 || static_cast<size_t>(index) >= owner->params.size() ||
      static_cast<size_t>(index) >= ctx->grads.size())
    fatal("gnnrtOptimizerUpdate: no parameter #" + std::to_string(index));
  Buffer &g = *ctx->grads[index];
  // An earlier part of a batch in parts: its gradient summed, no step.
  gnnrtContext::GradientParts &parts = ctx->gradientParts;
  if (parts.defer) {
    parts.sum.resize(ctx->grads.size());
    std::vector<float> &sum = parts.sum[index];
    sum.resize(static_cast<size_t>(g.size), 0.0f);
    for (int64_t i = 0; i < g.size; ++i)
      sum[i] += g.data[i];
    return;
  }
  foldGradientParts(ctx, index);
  Buffer &p = *owner->params[index];
  OptState &st = owner->opt[index];
  const OptimizerConfig &c = owner->optConfig;
  const int64_t n = p.size;
  ++st.t;
  // The state is allocated (zeroed) on the device by the first step that
  // needs it: SGD keeps a momentum buffer unless the momentum is 0, Adam two
  // moments.
  const bool adam = c.kind == OptimizerConfig::Adam;
  if (!st.m && (adam || c.momentum != 0.0))
    st.m = std::make_unique<Buffer>(*owner->device, n);
  if (!st.v && adam)
    st.v = std::make_unique<Buffer>(*owner->device, n);
  owner->device->optimizerStep(c, st.t, n, p.data, g.data,
                               st.m ? st.m->data : nullptr,
                               st.v ? st.v->data : nullptr);
  if (ctx->lane.stash)
    ctx->lane.stash->record(ctx->lane.batch, static_cast<size_t>(index), p.data,
                            n);
}

} // extern "C"
