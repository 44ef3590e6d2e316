//===- CUDADeviceTest.cpp - the CUDA device's memory, graph, edge data ----===//
//
// Built with gnnrt_cuda; skipped where no GPU is visible (scripts/
// gpu-check.sh runs them on a GPU machine). Counters as on the CPU device
// (DeviceTest.cpp), data round trips through GPU memory, the host's view of
// GPU memory is a counted staging copy, fill, the graph and the edge data in
// GPU memory; every compute method and the optimizer steps against the CPU
// device on the same random inputs (DESIGN's measure; gathers, scatters,
// unit-weight SpMMs and dropout masks bit for bit); the errors name their
// cause.
//
//===----------------------------------------------------------------------===//

#include "CUDA/CUDADevice.h"
#include "Context.h"
#include "Device.h"
#include "RandomGraph.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace gnnrt;

namespace {

bool haveGPU() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

bool onGPU(const void *p) {
  cudaPointerAttributes a;
  return cudaPointerGetAttributes(&a, p) == cudaSuccess &&
         a.type == cudaMemoryTypeDevice;
}

} // namespace

TEST(RuntimeCUDADevice, MemoryIsCountedAndRoundTrips) {
  if (!haveGPU())
    GTEST_SKIP() << "no CUDA device";
  std::unique_ptr<Device> device = createCUDADevice();
  EXPECT_STREQ(device->name(), "cuda");
  const int64_t n = 1000;
  std::vector<float> host(n), back(n, -1.0f);
  for (int64_t i = 0; i < n; ++i)
    host[i] = static_cast<float>(i) - 0.25f;
  auto *d0 = static_cast<float *>(device->allocate(n * 4, MemoryTier::Device));
  auto *d1 = static_cast<float *>(device->allocate(n * 4, MemoryTier::Device));
  auto *h0 = static_cast<float *>(device->allocate(n * 4, MemoryTier::Host));
  EXPECT_TRUE(onGPU(d0));
  EXPECT_FALSE(onGPU(h0));
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(h0[i], 0.0f);
  MemoryCounters c = device->memoryCounters();
  EXPECT_EQ(c.live, 2 * n * 4);
  EXPECT_EQ(c.peak, 2 * n * 4);
  EXPECT_EQ(c.hostLive, n * 4);

  // Zeroed device memory, then host -> device -> device -> host -> host.
  device->copy(back.data(), MemoryTier::Host, d1, MemoryTier::Device, n * 4);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(back[i], 0.0f);
  device->copy(d0, MemoryTier::Device, host.data(), MemoryTier::Host, n * 4);
  device->copy(d1, MemoryTier::Device, d0, MemoryTier::Device, n * 4);
  device->copy(h0, MemoryTier::Host, d1, MemoryTier::Device, n * 4);
  device->copy(back.data(), MemoryTier::Host, h0, MemoryTier::Host, n * 4);
  device->synchronize();
  EXPECT_EQ(back, host);
  c = device->memoryCounters();
  EXPECT_EQ(c.copiedToDevice, n * 4);
  EXPECT_EQ(c.copiedOnDevice, n * 4);
  EXPECT_EQ(c.copiedToHost, 2 * n * 4);
  EXPECT_EQ(c.copiedOnHost, n * 4);

  for (void *p : {static_cast<void *>(d0), static_cast<void *>(d1),
                  static_cast<void *>(h0)})
    device->free(p);
  c = device->memoryCounters();
  EXPECT_EQ(c.live, 0);
  EXPECT_EQ(c.hostLive, 0);
  EXPECT_EQ(c.freed, 2 * n * 4);
}

TEST(RuntimeCUDADevice, TheGraphIsCopiedToTheGPU) {
  if (!haveGPU())
    GTEST_SKIP() << "no CUDA device";
  std::unique_ptr<Device> device = createCUDADevice();
  // 0 -> 1, 0 -> 2, 1 -> 2 (CSC by destination).
  GraphArrays g;
  g.dstOffsets = {0, 0, 1, 3};
  g.src = {0, 0, 1};
  g.dst = {1, 2, 2};
  g.srcOffsets = {0, 2, 3, 3};
  g.csrEdge = {0, 1, 2};
  g.csrDst = {1, 2, 2};
  g.inDegree = {0, 1, 2};
  g.outDegree = {2, 1, 0};
  const GraphArrays expected = g;
  device->bindGraph(std::move(g));
  const DeviceGraph &dg = device->graph();
  EXPECT_EQ(dg.numVertices, 3);
  EXPECT_EQ(dg.numEdges, 3);
  EXPECT_TRUE(onGPU(dg.offsets[0]) && onGPU(dg.index[3]) &&
              onGPU(dg.degree[1]));
  std::vector<int64_t> offsets(4);
  std::vector<int32_t> csrDst(3);
  std::vector<float> outDegree(3);
  device->copy(offsets.data(), MemoryTier::Host, dg.offsets[0],
               MemoryTier::Device, 4 * 8);
  device->copy(csrDst.data(), MemoryTier::Host, dg.index[3], MemoryTier::Device,
               3 * 4);
  device->copy(outDegree.data(), MemoryTier::Host, dg.degree[1],
               MemoryTier::Device, 3 * 4);
  EXPECT_EQ(offsets, expected.srcOffsets);
  EXPECT_EQ(csrDst, expected.csrDst);
  EXPECT_EQ(outDegree, expected.outDegree);
  // Two offset arrays of 4 int64, four index arrays of 3 int32, two degree
  // arrays of 3 floats.
  EXPECT_EQ(device->memoryCounters().live, 2 * 32 + 4 * 12 + 2 * 12);
}

TEST(RuntimeCUDADevice, TheHostViewIsACountedStagingCopy) {
  if (!haveGPU())
    GTEST_SKIP() << "no CUDA device";
  std::unique_ptr<Device> device = createCUDADevice();
  EXPECT_FALSE(device->deviceMemoryIsHostMemory());
  const int64_t n = 1000;
  std::vector<float> host(n);
  for (int64_t i = 0; i < n; ++i)
    host[i] = static_cast<float>(i) * 0.25f;
  auto *d = static_cast<float *>(device->allocate(n * 4, MemoryTier::Device));
  device->copy(d, MemoryTier::Device, host.data(), MemoryTier::Host, n * 4);
  const MemoryCounters before = device->memoryCounters();

  std::vector<char> staging;
  const auto *view =
      static_cast<const float *>(device->hostView(d + 1, (n - 1) * 4, staging));
  EXPECT_EQ(static_cast<const void *>(view), staging.data());
  EXPECT_EQ(staging.size(), static_cast<size_t>((n - 1) * 4));
  for (int64_t i = 1; i < n; ++i)
    ASSERT_EQ(view[i - 1], host[i]) << i;
  const MemoryCounters c = device->memoryCounters();
  EXPECT_EQ(c.copiedToHost, before.copiedToHost + (n - 1) * 4);
  EXPECT_EQ(c.copiedToDevice, before.copiedToDevice);
  EXPECT_EQ(c.live, before.live);
  EXPECT_EQ(c.hostLive, before.hostLive); // staging is not device memory
  device->free(d);
}

TEST(RuntimeCUDADevice, FillSetsGPUMemory) {
  if (!haveGPU())
    GTEST_SKIP() << "no CUDA device";
  std::unique_ptr<Device> device = createCUDADevice();
  const int64_t n = 256;
  std::vector<float> host(n, 3.0f), back(n);
  auto *d = static_cast<float *>(device->allocate(n * 4, MemoryTier::Device));
  device->copy(d, MemoryTier::Device, host.data(), MemoryTier::Host, n * 4);
  const MemoryCounters before = device->memoryCounters();
  device->fill(d + 1, 0, (n - 2) * 4);
  device->fill(d, 0, 0);
  // Fill counts nothing.
  const MemoryCounters c = device->memoryCounters();
  EXPECT_EQ(std::memcmp(&c, &before, sizeof c), 0);
  device->copy(back.data(), MemoryTier::Host, d, MemoryTier::Device, n * 4);
  EXPECT_EQ(back[0], 3.0f);
  for (int64_t i = 1; i < n - 1; ++i)
    ASSERT_EQ(back[i], 0.0f) << i;
  EXPECT_EQ(back[n - 1], 3.0f);
  device->free(d);
}

TEST(RuntimeCUDADevice, TheEdgeDataIsCopiedToTheGPU) {
  if (!haveGPU())
    GTEST_SKIP() << "no CUDA device";
  std::unique_ptr<Device> device = createCUDADevice();
  std::vector<EdgeInputArrays> inputs(2);
  inputs[0].f32 = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
  inputs[1].i32 = {2, 0, 1};
  device->bindEdgeData(inputs);
  const std::vector<DeviceEdgeInput> &bound = device->edgeData();
  ASSERT_EQ(bound.size(), 2u);
  EXPECT_EQ(bound[0].f32Size, 6);
  EXPECT_EQ(bound[0].i32Size, 0);
  EXPECT_EQ(bound[1].f32Size, 0);
  EXPECT_EQ(bound[1].i32Size, 3);
  EXPECT_TRUE(onGPU(bound[0].f32) && onGPU(bound[1].i32));
  std::vector<float> f32(6);
  std::vector<int32_t> i32(3);
  device->copy(f32.data(), MemoryTier::Host, bound[0].f32, MemoryTier::Device,
               6 * 4);
  device->copy(i32.data(), MemoryTier::Host, bound[1].i32, MemoryTier::Device,
               3 * 4);
  EXPECT_EQ(f32, inputs[0].f32);
  EXPECT_EQ(i32, inputs[1].i32);
  // The arrays (and the empty ones: zero bytes each) live on the device;
  // binding again frees them.
  EXPECT_EQ(device->memoryCounters().live, 6 * 4 + 3 * 4);
  device->bindEdgeData({});
  EXPECT_TRUE(device->edgeData().empty());
  EXPECT_EQ(device->memoryCounters().live, 0);
}

//===----------------------------------------------------------------------===//
// The compute methods against the CPU device
//===----------------------------------------------------------------------===//

namespace {

/// The same random dataset bound to a context on the CPU device and one on
/// the CUDA device; labels in [0, classes) with a few unlabelled (-1), random
/// split masks.
struct TwoDevices {
  std::unique_ptr<gnnrtContext> cpu, gpu;
  Dataset ds; // as built (binding moves the graph)

  TwoDevices(int64_t V, int64_t E, int64_t classes, std::mt19937 &rng,
             bool skewDestinations = false) {
    ds = randomDataset(V, E, rng, skewDestinations);
    std::uniform_int_distribution<int64_t> label(-1, classes - 1);
    std::bernoulli_distribution in(0.6);
    for (int64_t &y : ds.labels)
      y = label(rng);
    for (auto &mask : ds.masks)
      for (uint8_t &m : mask)
        m = in(rng);
    ds.numClasses = classes;
    cpu = std::make_unique<gnnrtContext>();
    gpu = std::make_unique<gnnrtContext>();
    gpu->device = createCUDADevice();
    for (gnnrtContext *ctx : {cpu.get(), gpu.get()}) {
      ctx->ds = ds;
      std::string error;
      EXPECT_TRUE(bindDataset(ctx, error)) << error;
    }
  }
};

/// A host vector's copy in a device's device-tier memory, as a memref.
template <typename T, typename MemRef>
struct On {
  Device &device;
  T *data;
  int64_t size;
  On(Device &device, const std::vector<T> &host)
      : device(device), size(static_cast<int64_t>(host.size())) {
    data =
        static_cast<T *>(device.allocate(size * sizeof(T), MemoryTier::Device));
    device.copy(data, MemoryTier::Device, host.data(), MemoryTier::Host,
                size * sizeof(T));
  }
  ~On() { device.free(data); }
  MemRef ref() { return {data, data, 0, {size}, {1}}; }
  std::vector<T> read() {
    std::vector<T> host(size);
    device.synchronize();
    device.copy(host.data(), MemoryTier::Host, data, MemoryTier::Device,
                size * sizeof(T));
    return host;
  }
};
using F32 = On<float, gnnrtMemRefF32>;
using I32 = On<int32_t, gnnrtMemRefI32>;

std::vector<float> normal(int64_t n, std::mt19937 &rng) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float &f : v)
    f = d(rng);
  return v;
}

/// DESIGN's measure: |a - b| / max(|a|, |b|, 1e-12) over the whole tensor.
double relativeError(const std::vector<float> &a, const std::vector<float> &b) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0.0, na = 0.0, nb = 0.0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    na += double(a[i]) * a[i];
    nb += double(b[i]) * b[i];
  }
  return std::sqrt(diff) / std::max({std::sqrt(na), std::sqrt(nb), 1e-12});
}

/// Runs `op(ctx, memrefs...)` on both devices with copies of the same host
/// inputs and returns each device's copies of them afterwards.
template <typename Op>
std::pair<std::vector<std::vector<float>>, std::vector<std::vector<float>>>
onBoth(TwoDevices &two, const std::vector<std::vector<float>> &inputs, Op op) {
  std::vector<std::vector<float>> results[2];
  gnnrtContext *ctxs[2] = {two.cpu.get(), two.gpu.get()};
  for (int d = 0; d < 2; ++d) {
    std::vector<std::unique_ptr<F32>> bufs;
    std::vector<gnnrtMemRefF32> refs;
    for (const std::vector<float> &in : inputs)
      bufs.push_back(std::make_unique<F32>(*ctxs[d]->device, in));
    for (auto &b : bufs)
      refs.push_back(b->ref());
    op(ctxs[d], refs.data());
    for (auto &b : bufs)
      results[d].push_back(b->read());
  }
  return {results[0], results[1]};
}

} // namespace

TEST(RuntimeCUDADevice, ScattersAndGathersMatchTheCPUDeviceExactly) {
  if (!haveGPU())
    GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(20261125);
  const int64_t V = 400, E = 5000;
  TwoDevices two(V, E, 3, rng);
  for (int64_t width : {1, 5, 32, 33, 100, 257}) {
    for (int64_t side : {0, 1}) {
      auto [cpu, gpu] =
          onBoth(two, {normal(V * width, rng), normal(E * width, rng)},
                 [&](gnnrtContext *ctx, gnnrtMemRefF32 *m) {
                   ctx->device->scatter(ctx, side, &m[0], &m[1], width);
                 });
      ASSERT_EQ(cpu[1], gpu[1])
          << "scatter width " << width << " side " << side;
      for (int64_t acc : {0, 1, 2, 3}) {
        const std::vector<float> edges = normal(E * width, rng);
        const std::vector<int32_t> noArg(V * width, 7);
        std::vector<int32_t> args[2];
        gnnrtContext *ctxs[2] = {two.cpu.get(), two.gpu.get()};
        std::vector<float> outs[2], grads[2];
        const std::vector<float> gradOut = normal(V * width, rng);
        for (int d = 0; d < 2; ++d) {
          Device &dev = *ctxs[d]->device;
          F32 in(dev, edges), out(dev, std::vector<float>(V * width, -5.0f)),
              g(dev, gradOut), ge(dev, std::vector<float>(E * width, -5.0f));
          I32 arg(dev, noArg);
          gnnrtMemRefF32 inm = in.ref(), outm = out.ref(), gm = g.ref(),
                         gem = ge.ref();
          gnnrtMemRefI32 argm = arg.ref();
          dev.gather(ctxs[d], acc, side, &inm, &outm, &argm, width);
          if (acc >= 2)
            dev.gatherArgBackward(ctxs[d], side, &gm, &argm, &gem, width);
          outs[d] = out.read();
          args[d] = arg.read();
          grads[d] = ge.read();
        }
        ASSERT_EQ(outs[0], outs[1])
            << "gather " << acc << " width " << width << " side " << side;
        if (acc >= 2) {
          ASSERT_EQ(args[0], args[1]) << "gather " << acc << " arg";
          ASSERT_EQ(grads[0], grads[1]) << "gather " << acc << " backward";
        }
      }
    }
  }
}

TEST(RuntimeCUDADevice, SpmmMatchesTheCPUDevice) {
  if (!haveGPU())
    GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(7);
  const int64_t V = 500, E = 8000;
  // Hubs among the sources, then among the destinations: rows of about a
  // thousand positions on one side, split into pieces (RowSplit.h).
  for (bool skewDestinations : {false, true}) {
    TwoDevices two(V, E, 3, rng, skewDestinations);
    for (int64_t width : {1, 16, 31, 128, 129, 300, 602}) {
      for (int64_t side : {0, 1}) {
        // Rows of at most 256 positions are never split: one warp adds
        // their edges in the CPU's order.
        std::vector<int64_t> degree(V, 0);
        for (int64_t d = 0; d < V; ++d)
          for (int64_t e = two.ds.indptr[d]; e < two.ds.indptr[d + 1]; ++e)
            ++degree[side == 1 ? d : two.ds.indices[e]];
        for (int64_t mean : {0, 1}) {
          for (bool weighted : {false, true}) {
            const std::vector<float> w =
                weighted ? normal(E, rng) : std::vector<float>();
            const std::vector<float> x = normal(V * width, rng),
                                     y(V * width, -7.0f);
            for (int64_t chunks : {1, 3}) {
              auto [cpu, gpu] = onBoth(
                  two, {w, x, y}, [&](gnnrtContext *ctx, gnnrtMemRefF32 *m) {
                    ctx->device->spmm(ctx, side, mean, chunks, &m[0], &m[1],
                                      &m[2], width);
                  });
              ASSERT_LT(relativeError(cpu[2], gpu[2]), 1e-6)
                  << "width " << width << " side " << side << " mean " << mean
                  << " weighted " << weighted << " chunks " << chunks
                  << " skewed destinations " << skewDestinations;
              if (weighted || chunks != 1)
                continue;
              for (int64_t v = 0; v < V; ++v) {
                if (degree[v] > 256)
                  continue;
                for (int64_t i = 0; i < width; ++i)
                  ASSERT_EQ(cpu[2][v * width + i], gpu[2][v * width + i])
                      << "row " << v << " of degree " << degree[v];
              }
            }
            // A row range: the others untouched.
            auto [cpu, gpu] = onBoth(
                two, {w, x, y}, [&](gnnrtContext *ctx, gnnrtMemRefF32 *m) {
                  ctx->device->spmmRows(ctx, side, mean, &m[0], &m[1], &m[2],
                                        width, 37, 321, 0, V);
                });
            ASSERT_LT(relativeError(cpu[2], gpu[2]), 1e-6);
            for (int64_t v = 0; v < V; ++v) {
              if (v < 37 || v >= 321) {
                ASSERT_EQ(gpu[2][v * width], -7.0f) << "row " << v;
              }
            }
          }
        }
      }
    }
  }
}

TEST(RuntimeCUDADevice, GemmsAndSumsOfRowsMatchTheCPUDevice) {
  if (!haveGPU())
    GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(11);
  TwoDevices two(50, 200, 3, rng);
  for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{
           {37, 19, 23}, {1000, 64, 602}, {5, 3, 0}, {0, 4, 2}, {300, 1, 7}})
    for (int64_t ta : {0, 1})
      for (int64_t tb : {0, 1})
        for (auto [alpha, beta] : std::vector<std::pair<float, float>>{
                 {1.0f, 0.0f}, {0.5f, 2.0f}, {1.0f, 1.0f}}) {
          auto [cpu, gpu] = onBoth(
              two, {normal(m * k, rng), normal(k * n, rng), normal(m * n, rng)},
              [&](gnnrtContext *ctx, gnnrtMemRefF32 *r) {
                ctx->device->gemm(ctx, ta, tb, m, n, k, alpha, &r[0], &r[1],
                                  beta, &r[2]);
              });
          ASSERT_LT(relativeError(cpu[2], gpu[2]), 1e-5)
              << m << " x " << n << " x " << k << " transA " << ta << " transB "
              << tb << " beta " << beta;
        }
  for (int64_t rows : {0, 1, 1000, 70000})
    for (int64_t width : {1, 16, 300})
      for (bool accumulate : {false, true}) {
        auto [cpu, gpu] = onBoth(
            two, {normal(rows * width, rng), normal(width, rng)},
            [&](gnnrtContext *ctx, gnnrtMemRefF32 *r) {
              ctx->device->sumRows(ctx, rows, width, &r[0], &r[1], accumulate);
            });
        ASSERT_LT(relativeError(cpu[1], gpu[1]), 1e-5)
            << rows << " rows of " << width << " accumulate " << accumulate;
      }
}

TEST(RuntimeCUDADevice, TypedGemmsMatchTheCPUDevice) {
  if (!haveGPU())
    GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(13);
  TwoDevices two(50, 200, 3, rng);
  const int64_t rows = 3001, k = 7, n = 5, T = 4;
  // Type 2 has no rows (its gradient is zero).
  std::vector<int32_t> types(rows);
  std::uniform_int_distribution<int32_t> t(0, 2);
  for (int32_t &x : types)
    x = t(rng) == 2 ? 3 : t(rng) % 2;
  const std::vector<float> x = normal(rows * k, rng),
                           w = normal(T * k * n, rng),
                           g = normal(rows * n, rng);
  std::vector<float> results[2][3];
  gnnrtContext *ctxs[2] = {two.cpu.get(), two.gpu.get()};
  for (int d = 0; d < 2; ++d) {
    Device &dev = *ctxs[d]->device;
    F32 xb(dev, x), wb(dev, w), gb(dev, g),
        out(dev, std::vector<float>(rows * n, -1.0f)),
        gx(dev, std::vector<float>(rows * k, -1.0f)),
        gw(dev, std::vector<float>(T * k * n, -1.0f));
    I32 tb(dev, types);
    gnnrtMemRefF32 xm = xb.ref(), wm = wb.ref(), gm = gb.ref(), om = out.ref(),
                   gxm = gx.ref(), gwm = gw.ref();
    gnnrtMemRefI32 tm = tb.ref();
    dev.typedGemm(ctxs[d], rows, k, n, T, &xm, &tm, &wm, &om);
    dev.typedGemmTranspose(ctxs[d], rows, k, n, T, &gm, &tm, &wm, &gxm);
    dev.typedOuterSum(ctxs[d], rows, k, n, T, &xm, &tm, &gm, &gwm);
    results[d][0] = out.read();
    results[d][1] = gx.read();
    results[d][2] = gw.read();
  }
  for (int i = 0; i < 3; ++i)
    EXPECT_LT(relativeError(results[0][i], results[1][i]), 1e-5) << "op " << i;
  for (int64_t j = 2 * k * n; j < 3 * k * n; ++j)
    ASSERT_EQ(results[1][2][j], 0.0f);
}

TEST(RuntimeCUDADevice, LossDropoutAndOptimizerMatchTheCPUDevice) {
  if (!haveGPU())
    GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(17);
  const int64_t V = 3000, C = 41;
  TwoDevices two(V, 20000, C, rng);
  for (int64_t split : {0, 1, 2})
    for (auto [b, e] : std::vector<std::pair<int64_t, int64_t>>{
             {0, V}, {0, 0}, {128, 1000}}) {
      float losses[2];
      auto [cpu, gpu] =
          onBoth(two, {normal(V * C, rng), std::vector<float>(V * C, -2.0f)},
                 [&](gnnrtContext *ctx, gnnrtMemRefF32 *r) {
                   losses[ctx == two.gpu.get()] =
                       ctx->device->softmaxCrossEntropy(ctx, &r[0], &r[1], C,
                                                        split, b, e);
                 });
      EXPECT_NEAR(losses[1], losses[0], 1e-6 * (1.0 + std::abs(losses[0])))
          << "split " << split << " rows [" << b << ", " << e << ")";
      ASSERT_LT(relativeError(cpu[1], gpu[1]), 1e-6) << "split " << split;
    }

  for (gnnrtContext *ctx : {two.cpu.get(), two.gpu.get()}) {
    ctx->training = true;
    ctx->seed = 42;
    ctx->step = 3;
  }
  const int64_t n = 100003;
  for (double rate : {0.0, 0.5, 0.9}) {
    auto [cpu, gpu] = onBoth(two, {normal(n, rng), std::vector<float>(n, 9.0f)},
                             [&](gnnrtContext *ctx, gnnrtMemRefF32 *r) {
                               ctx->device->dropout(ctx, 5, rate, &r[0], &r[1]);
                             });
    ASSERT_EQ(cpu[1], gpu[1]) << "dropout " << rate;
  }

  for (OptimizerConfig::Kind kind :
       {OptimizerConfig::SGD, OptimizerConfig::Adam}) {
    OptimizerConfig config;
    config.kind = kind;
    config.weightDecay = 5e-4;
    auto [cpu, gpu] = onBoth(two,
                             {normal(n, rng), normal(n, rng), normal(n, rng),
                              std::vector<float>(n, 0.0f)},
                             [&](gnnrtContext *ctx, gnnrtMemRefF32 *r) {
                               for (int64_t step = 1; step <= 3; ++step)
                                 ctx->device->optimizerStep(
                                     config, step, n, r[0].aligned,
                                     r[1].aligned, r[2].aligned, r[3].aligned);
                             });
    for (int i : {0, 2, 3})
      EXPECT_LT(relativeError(cpu[i], gpu[i]), 1e-6)
          << (kind == OptimizerConfig::SGD ? "sgd" : "adam") << " buffer " << i;
  }
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

namespace {

void launchOnTheGPU() {
  std::unique_ptr<Device> device = createCUDADevice();
  device->launch(nullptr, nullptr, 0, 1);
}

void allocateTooMuch() {
  std::unique_ptr<Device> device = createCUDADevice();
  device->allocate(int64_t(1) << 50, MemoryTier::Device);
}

void badLabel() {
  std::mt19937 rng(1);
  TwoDevices two(100, 300, 3, rng);
  two.gpu->ds.labels[17] = 5;
  std::vector<float> z(100 * 3), none;
  F32 zb(*two.gpu->device, z), gb(*two.gpu->device, none);
  gnnrtMemRefF32 zm = zb.ref(), gm = gb.ref();
  two.gpu->ds.masks[0][17] = 1;
  // The loss data were uploaded by no call yet: this one reads the label.
  two.gpu->device->softmaxCrossEntropy(two.gpu.get(), &zm, &gm, 3, 0, 0, 100);
}

void badType() {
  std::unique_ptr<Device> device = createCUDADevice();
  std::vector<float> x(4 * 2), w(2 * 2 * 3), out(4 * 3);
  std::vector<int32_t> types = {0, 1, 2, 1};
  F32 xb(*device, x), wb(*device, w), ob(*device, out);
  I32 tb(*device, types);
  gnnrtMemRefF32 xm = xb.ref(), wm = wb.ref(), om = ob.ref();
  gnnrtMemRefI32 tm = tb.ref();
  device->typedGemm(nullptr, 4, 2, 3, 2, &xm, &tm, &wm, &om);
}

} // namespace

TEST(RuntimeCUDADeviceDeathTest, ErrorsStopTheRunNamingTheCause) {
  if (!haveGPU())
    GTEST_SKIP() << "no CUDA device";
  // The parent has initialised CUDA: the children start afresh.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(launchOnTheGPU(), testing::ExitedWithCode(1),
              "error: the CUDA device cannot run compiled kernels");
  EXPECT_EXIT(allocateTooMuch(), testing::ExitedWithCode(1),
              "error: 'cudaMalloc\\(&p, size\\)' failed with "
              "'cudaErrorMemoryAllocation'");
  EXPECT_EXIT(badLabel(), testing::ExitedWithCode(1),
              "error: label 5 >= number of logits 3");
  EXPECT_EXIT(badType(), testing::ExitedWithCode(1),
              "error: 1 edge types outside \\[0, 2\\)");
}
