//===- gnnrt-bench.cpp - aggregation and bandwidth probes of gnnrt --------===//
//
// gnnrt-bench DATASET_DIR [--width F] [--reps N] [--threads T] [--chunks P]
// Prints one JSON object: a 2-stream copy probe (the bandwidth reference) and
// the runtime's weighted aggregation (gnnrtSpmm, GCN's SAG) at width F, with
// GFLOP/s (2 |E| F / t) and bandwidth counted two ways: "no-reuse" (every
// gathered row read from memory: |E| F 4 + |E| 8 + 2 |V| F 4 bytes) and
// "compulsory" (each input and output once: 2 |V| F 4 + |E| 8 + |V| 8 bytes).
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "Threads.h"
#include "gnnrt/GNNRuntime.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace gnnrt;

static double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The largest --width and --reps: a width times the vertices must stay a
/// sane buffer (checked again against the dataset), repetitions finish.
constexpr int64_t kMaxWidth = 1 << 16, kMaxReps = 1000000;

int main(int argc, char **argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help")) {
    std::printf("usage: %s DATASET_DIR [--width F] [--reps N] [--threads T] "
                "[--chunks P]\n"
                "  --width F    aggregation width, in [1, %lld] (default 128)\n"
                "  --reps N     timed repetitions, in [1, %lld] (default 10)\n"
                "  --threads T  OpenMP threads, in [1, %lld], capped at the "
                "processors\n               (default: OMP_NUM_THREADS or "
                "all)\n"
                "  --chunks P   the aggregation's P x P chunk tiling, in [1, "
                "2147483647]\n               (default 1: untiled)\n",
                argv[0], static_cast<long long>(kMaxWidth),
                static_cast<long long>(kMaxReps),
                static_cast<long long>(kMaxThreads));
    return argc < 2 ? 2 : 0;
  }
  int64_t width = 128, reps = 10, threads = 0, chunks = 1;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i], value;
    size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      std::fprintf(stderr, "error: option %s needs a value\n", a.c_str());
      return 2;
    }
    int64_t *target = a == "--width"     ? &width
                      : a == "--reps"    ? &reps
                      : a == "--threads" ? &threads
                      : a == "--chunks"  ? &chunks
                                         : nullptr;
    if (!target) {
      std::fprintf(stderr, "error: unknown option '%s'\n", a.c_str());
      return 2;
    }
    const int64_t hi = target == &width    ? kMaxWidth
                       : target == &reps   ? kMaxReps
                       : target == &chunks ? INT32_MAX
                                           : kMaxThreads;
    if (!parseIntInRange(value.c_str(), 1, hi, *target)) {
      std::fprintf(stderr,
                   "error: option %s: expected an integer in [1, %lld] but got "
                   "'%s'\n",
                   a.c_str(), static_cast<long long>(hi), value.c_str());
      return 2;
    }
  }
  std::string threadError;
  if (!configureThreads(threads, "--threads", threadError)) {
    std::fprintf(stderr, "error: %s\n", threadError.c_str());
    return 2;
  }
  auto *ctx = new gnnrtContext();
  std::string error;
  if (!loadDataset(argv[1], ctx->ds, error) || !bindDataset(ctx, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  const int64_t V = ctx->ds.numVertices, E = ctx->ds.numEdges;
  if (V > 0 && width > (int64_t(1) << 40) / V) {
    std::fprintf(stderr,
                 "error: option --width: %lld x %lld vertices is more than "
                 "2^40 floats\n",
                 static_cast<long long>(width), static_cast<long long>(V));
    return 2;
  }

  // Copy probe: 2 streams (read + write) of 64 Mi floats.
  const int64_t n = int64_t(1) << 26;
  Buffer a(*ctx->device, n), b(*ctx->device, n);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    a.data[i] = static_cast<float>(i & 1023);
  double copyBest = 1e30;
  for (int r = 0; r < 5; ++r) {
    double t0 = seconds();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i)
      b.data[i] = a.data[i];
    copyBest = std::min(copyBest, seconds() - t0);
  }
  const double copyGBs = 2.0 * n * 4 / copyBest / 1e9;

  // GCN aggregation: weights 1/sqrt(d_out(u) d_in(v)). The operands are
  // runtime buffers, allocated as a compiled program's are.
  Buffer w(*ctx->device, E), x(*ctx->device, V * width),
      y(*ctx->device, V * width);
  const DeviceGraph &g = ctx->device->graph();
  for (int64_t v = 0; v < V; ++v)
    for (int64_t e = g.offsets[1][v]; e < g.offsets[1][v + 1]; ++e)
      w.data[e] = 1.0f / std::sqrt(g.degree[1][g.index[0][e]] * g.degree[0][v]);
  for (int64_t i = 0; i < x.size; ++i)
    x.data[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000.0f;
  gnnrtMemRefF32 wm{w.data, w.data, 0, {E}, {1}};
  gnnrtMemRefF32 xm{x.data, x.data, 0, {V * width}, {1}};
  gnnrtMemRefF32 ym{y.data, y.data, 0, {V * width}, {1}};
  std::vector<double> times;
  _mlir_ciface_gnnrtSpmm(ctx, 1, 0, chunks, &wm, &xm, &ym, width); // warm-up
  for (int64_t r = 0; r < reps; ++r) {
    double t0 = seconds();
    _mlir_ciface_gnnrtSpmm(ctx, 1, 0, chunks, &wm, &xm, &ym, width);
    times.push_back(seconds() - t0);
  }
  std::sort(times.begin(), times.end());
  const double t = times[times.size() / 2];
  const double flops = 2.0 * E * width;
  const double noReuse =
      double(E) * width * 4 + double(E) * 8 + 2.0 * V * width * 4;
  const double compulsory = 2.0 * V * width * 4 + double(E) * 8 + double(V) * 8;
  std::printf(
      "{\"threads\": %d, \"chunks\": %lld, \"vertices\": %lld, \"edges\": %lld, \"width\": %lld, "
      "\"copy_GBps\": %.3f, \"spmm_ms\": %.4f, \"spmm_ms_min\": %.4f, "
      "\"spmm_ms_max\": %.4f, \"GFLOPs\": %.3f, \"no_reuse_GBps\": %.3f, "
      "\"compulsory_GBps\": %.3f}\n",
      omp_get_max_threads(), static_cast<long long>(chunks),
      static_cast<long long>(V),
      static_cast<long long>(E), static_cast<long long>(width), copyGBs,
      t * 1e3, times.front() * 1e3, times.back() * 1e3, flops / t / 1e9,
      noReuse / t / 1e9, compulsory / t / 1e9);
  return 0;
}
