//===- CUDADeviceTest.cpp - the CUDA device's memory, graph, edge data ----===//
//
// Built with gnnrt_cuda; skipped where no GPU is visible. Counters as on the
// CPU device (DeviceTest.cpp), data round trips through GPU memory, the
// host's view of GPU memory is a counted staging copy, fill, the graph and
// the edge data in GPU memory, and the methods not implemented yet stop the
// run.
//
//===----------------------------------------------------------------------===//

#include "CUDA/CUDADevice.h"
#include "Context.h"
#include "Device.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
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

namespace {

void scatterOnTheGPU() {
  std::unique_ptr<Device> device = createCUDADevice();
  gnnrtMemRefF32 none = {nullptr, nullptr, 0, {0}, {1}};
  device->scatter(nullptr, 0, &none, &none, 1);
}

void optimizerStepOnTheGPU() {
  std::unique_ptr<Device> device = createCUDADevice();
  device->optimizerStep(OptimizerConfig(), 1, 0, nullptr, nullptr, nullptr,
                        nullptr);
}

} // namespace

TEST(RuntimeCUDADeviceDeathTest, UnimplementedMethodsStopTheRun) {
  if (!haveGPU())
    GTEST_SKIP() << "no CUDA device";
  EXPECT_EXIT(scatterOnTheGPU(), testing::ExitedWithCode(1),
              "error: the CUDA device does not implement scatter yet");
  EXPECT_EXIT(optimizerStepOnTheGPU(), testing::ExitedWithCode(1),
              "error: the CUDA device does not implement optimizerStep yet");
}
