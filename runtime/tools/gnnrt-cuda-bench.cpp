//===- gnnrt-cuda-bench.cpp - the CUDA device's kernels on a dataset ------===//
//
// gnnrt-cuda-bench DATASET_DIR [--widths W,W,...] [--reps N]
// Binds the dataset to the CUDA device as a compiled program's run would and
// times, with CUDA events (the median of N after a warm-up), at each width:
// GCN's weighted aggregation to the destinations (gnnrtSpmm side 1, the
// forward SAG), the same to the sources (side 0, the backward one), and the
// dense layer [V, F] x [F, W] (cuBLAS). Prints one JSON object per line, with
// the kernels' GFLOP/s and their "no-reuse" bandwidth (every gathered row
// read from memory: |E| W 4 + |E| 8 + 2 |V| W 4 bytes), against the device's
// copy bandwidth (a device-to-device copy of 1 GiB, read + write).
//
//===----------------------------------------------------------------------===//

#include "CUDA/CUDADevice.h"
#include "Context.h"
#include "Threads.h"
#include "gnnrt/GNNRuntime.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

using namespace gnnrt;

namespace {

constexpr int64_t kMaxWidth = 1 << 14, kMaxReps = 10000;

/// The median time in ms of `reps` runs of `body` after one warm-up.
double medianMs(int64_t reps, const std::function<void()> &body) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  body();
  std::vector<float> times;
  for (int64_t r = 0; r < reps; ++r) {
    cudaEventRecord(start);
    body();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (cudaGetLastError() != cudaSuccess)
    fatal("a timed CUDA call failed");
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

bool parseWidths(const std::string &list, std::vector<int64_t> &widths) {
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    int64_t w = 0;
    if (!parseIntInRange(item.c_str(), 1, kMaxWidth, w))
      return false;
    widths.push_back(w);
  }
  return !widths.empty();
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help")) {
    std::printf("usage: %s DATASET_DIR [--widths W,W,...] [--reps N]\n"
                "  --widths  aggregation and layer widths, each in [1, %lld]\n"
                "            (default: the dataset's F, 256 and its classes)\n"
                "  --reps N  timed repetitions, in [1, %lld] (default 20)\n",
                argv[0], static_cast<long long>(kMaxWidth),
                static_cast<long long>(kMaxReps));
    return argc < 2 ? 2 : 0;
  }
  std::vector<int64_t> widths;
  int64_t reps = 20;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "error: option %s needs a value\n", a.c_str());
      return 2;
    }
    const std::string value = argv[++i];
    if (a == "--widths") {
      if (!parseWidths(value, widths)) {
        std::fprintf(stderr,
                     "error: option --widths: expected integers in [1, %lld] "
                     "separated by commas but got '%s'\n",
                     static_cast<long long>(kMaxWidth), value.c_str());
        return 2;
      }
    } else if (a == "--reps") {
      if (!parseIntInRange(value.c_str(), 1, kMaxReps, reps)) {
        std::fprintf(stderr,
                     "error: option --reps: expected an integer in [1, %lld] "
                     "but got '%s'\n",
                     static_cast<long long>(kMaxReps), value.c_str());
        return 2;
      }
    } else {
      std::fprintf(stderr, "error: unknown option '%s'\n", a.c_str());
      return 2;
    }
  }
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::fprintf(stderr, "error: no CUDA device\n");
    return 1;
  }

  auto *ctx = new gnnrtContext();
  ctx->device = createCUDADevice();
  std::string error;
  if (!loadDataset(argv[1], ctx->ds, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  const int64_t F = ctx->ds.numFeatures, C = ctx->ds.numClasses;
  // GCN's weights 1/sqrt(d_out(u) d_in(v)), from the CSC before binding
  // moves it.
  const int64_t V = ctx->ds.numVertices, E = ctx->ds.numEdges;
  std::vector<float> w(E);
  {
    std::vector<float> outDegree(V, 0.0f);
    for (int64_t e = 0; e < E; ++e)
      outDegree[ctx->ds.indices[e]] += 1.0f;
    for (int64_t v = 0; v < V; ++v)
      for (int64_t e = ctx->ds.indptr[v]; e < ctx->ds.indptr[v + 1]; ++e)
        w[e] = 1.0f / std::sqrt(outDegree[ctx->ds.indices[e]] *
                                static_cast<float>(ctx->ds.indptr[v + 1] -
                                                   ctx->ds.indptr[v]));
  }
  if (!bindDataset(ctx, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  if (widths.empty())
    widths = {F, 256, C};
  Device &device = *ctx->device;
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);

  // Copy probe: 1 GiB device to device.
  const int64_t n = int64_t(1) << 28;
  {
    Buffer a(device, n), b(device, n);
    const double ms = medianMs(5, [&] {
      device.copy(b.data, MemoryTier::Device, a.data, MemoryTier::Device,
                  n * 4);
    });
    std::printf("{\"device\": \"%s\", \"vertices\": %lld, \"edges\": %lld, "
                "\"copy_GBps\": %.1f}\n",
                prop.name, static_cast<long long>(V), static_cast<long long>(E),
                2.0 * n * 4 / ms / 1e6);
  }

  Buffer wb(device, E);
  device.copy(wb.data, MemoryTier::Device, w.data(), MemoryTier::Host, E * 4);
  gnnrtMemRefF32 wm{wb.data, wb.data, 0, {E}, {1}};
  for (int64_t width : widths) {
    std::vector<float> host(V * width);
    for (int64_t i = 0; i < V * width; ++i)
      host[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000.0f;
    Buffer x(device, V * width), y(device, V * width);
    device.copy(x.data, MemoryTier::Device, host.data(), MemoryTier::Host,
                V * width * 4);
    gnnrtMemRefF32 xm{x.data, x.data, 0, {V * width}, {1}};
    gnnrtMemRefF32 ym{y.data, y.data, 0, {V * width}, {1}};
    const double forward = medianMs(
        reps, [&] { device.spmm(ctx, 1, 0, 1, &wm, &xm, &ym, width); });
    const double backward = medianMs(
        reps, [&] { device.spmm(ctx, 0, 0, 1, &wm, &xm, &ym, width); });
    // The dense layer [V, F] x [F, width].
    Buffer in(device, V * F), weight(device, F * width);
    gnnrtMemRefF32 inm{in.data, in.data, 0, {V * F}, {1}};
    gnnrtMemRefF32 weightm{weight.data, weight.data, 0, {F * width}, {1}};
    const double gemm = medianMs(reps, [&] {
      device.gemm(ctx, 0, 0, V, width, F, 1.0f, &inm, &weightm, 0.0f, &ym);
    });
    const double flops = 2.0 * E * width;
    const double bytes =
        double(E) * width * 4 + double(E) * 8 + 2.0 * V * width * 4;
    std::printf("{\"width\": %lld, \"spmm_forward_ms\": %.4f, "
                "\"spmm_backward_ms\": %.4f, \"spmm_forward_GFLOPs\": %.1f, "
                "\"spmm_forward_no_reuse_GBps\": %.1f, \"gemm_ms\": %.4f, "
                "\"gemm_TFLOPs\": %.2f}\n",
                static_cast<long long>(width), forward, backward,
                flops / forward / 1e6, bytes / forward / 1e6, gemm,
                2.0 * V * F * width / gemm / 1e9);
  }
  return 0;
}
