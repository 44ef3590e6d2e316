//===- DeviceTest.cpp - the CPU device's memory counters ------------------===//
//
// Every allocate, free and copy moves the counters by exactly the bytes asked
// for, under the tier named; a context allocates its buffers on its device.
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "Context.h"
#include "gnnrt/GNNRuntime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

using namespace gnnrt;

namespace {

bool operator==(const MemoryCounters &a, const MemoryCounters &b) {
  return std::memcmp(&a, &b, sizeof(MemoryCounters)) == 0;
}

} // namespace

TEST(RuntimeDevice, AllocateAndFreeMoveLiveAndPeakExactly) {
  std::unique_ptr<Device> device = createCPUDevice();
  EXPECT_TRUE(device->memoryCounters() == MemoryCounters());

  void *a = device->allocate(1000, MemoryTier::Device);
  void *b = device->allocate(24, MemoryTier::Device);
  void *h = device->allocate(333, MemoryTier::Host);
  MemoryCounters c = device->memoryCounters();
  EXPECT_EQ(c.live, 1024);
  EXPECT_EQ(c.peak, 1024);
  EXPECT_EQ(c.allocated, 1024);
  EXPECT_EQ(c.freed, 0);
  EXPECT_EQ(c.hostLive, 333);
  EXPECT_EQ(c.hostPeak, 333);
  EXPECT_EQ(c.hostAllocated, 333);
  EXPECT_EQ(c.hostFreed, 0);

  device->free(a);
  c = device->memoryCounters();
  EXPECT_EQ(c.live, 24);
  EXPECT_EQ(c.peak, 1024);
  EXPECT_EQ(c.allocated, 1024);
  EXPECT_EQ(c.freed, 1000);
  EXPECT_EQ(c.hostLive, 333);

  // Below the peak: the peak stays; above it: it follows.
  void *d = device->allocate(500, MemoryTier::Device);
  EXPECT_EQ(device->memoryCounters().peak, 1024);
  void *e = device->allocate(600, MemoryTier::Device);
  c = device->memoryCounters();
  EXPECT_EQ(c.live, 1124);
  EXPECT_EQ(c.peak, 1124);
  EXPECT_EQ(c.allocated, 2124);

  // Zero bytes: a distinct, aligned pointer that counts nothing.
  void *z = device->allocate(0, MemoryTier::Device);
  EXPECT_NE(z, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(z) % 64, 0u);
  EXPECT_EQ(device->memoryCounters().live, 1124);

  for (void *p : {b, d, e, z, h})
    device->free(p);
  c = device->memoryCounters();
  EXPECT_EQ(c.live, 0);
  EXPECT_EQ(c.hostLive, 0);
  EXPECT_EQ(c.freed, c.allocated);
  EXPECT_EQ(c.hostFreed, 333);
  EXPECT_EQ(c.peak, 1124);
  EXPECT_EQ(c.hostPeak, 333);
}

TEST(RuntimeDevice, AllocationsAreZeroedAndAligned) {
  std::unique_ptr<Device> device = createCPUDevice();
  for (int64_t bytes : {int64_t(1), int64_t(4000), int64_t(12) << 20}) {
    for (MemoryTier tier : {MemoryTier::Host, MemoryTier::Device}) {
      auto *p = static_cast<unsigned char *>(device->allocate(bytes, tier));
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
      for (int64_t i = 0; i < bytes; i += 331)
        ASSERT_EQ(p[i], 0);
      EXPECT_EQ(p[bytes - 1], 0);
      device->free(p);
    }
  }
}

TEST(RuntimeDevice, CopiesAreCountedByDirection) {
  std::unique_ptr<Device> device = createCPUDevice();
  const int64_t n = 1000;
  std::vector<float> host(n), back(n, -1.0f);
  for (int64_t i = 0; i < n; ++i)
    host[i] = static_cast<float>(i) * 0.5f - 7.0f;
  auto *d0 = static_cast<float *>(device->allocate(n * 4, MemoryTier::Device));
  auto *d1 = static_cast<float *>(device->allocate(n * 4, MemoryTier::Device));
  auto *h0 = static_cast<float *>(device->allocate(n * 4, MemoryTier::Host));
  const MemoryCounters before = device->memoryCounters();

  device->copy(d0, MemoryTier::Device, host.data(), MemoryTier::Host, n * 4);
  device->copy(d1 + 1, MemoryTier::Device, d0, MemoryTier::Device, (n - 1) * 4);
  device->copy(h0, MemoryTier::Host, d1, MemoryTier::Device, n * 4);
  device->copy(back.data(), MemoryTier::Host, h0, MemoryTier::Host, n * 4);
  device->copy(back.data(), MemoryTier::Host, d0, MemoryTier::Device, 0);

  MemoryCounters c = device->memoryCounters();
  EXPECT_EQ(c.copiedToDevice, n * 4);
  EXPECT_EQ(c.copiedOnDevice, (n - 1) * 4);
  EXPECT_EQ(c.copiedToHost, n * 4);
  EXPECT_EQ(c.copiedOnHost, n * 4);
  // Copies allocate nothing.
  EXPECT_EQ(c.live, before.live);
  EXPECT_EQ(c.allocated, before.allocated);
  EXPECT_EQ(c.hostLive, before.hostLive);

  EXPECT_EQ(back[0], 0.0f); // d1[0] was never written: still zero
  for (int64_t i = 1; i < n; ++i)
    ASSERT_EQ(back[i], host[i - 1]) << i;
  for (void *p : {static_cast<void *>(d0), static_cast<void *>(d1),
                  static_cast<void *>(h0)})
    device->free(p);
}

TEST(RuntimeDevice, BuffersLiveOnTheirDevice) {
  std::unique_ptr<Device> device = createCPUDevice();
  {
    Buffer a(*device, 1000), b(*device, 0);
    EXPECT_EQ(a.size, 1000);
    EXPECT_EQ(device->memoryCounters().live, 4000);
    EXPECT_NE(a.data, b.data);
  }
  const MemoryCounters c = device->memoryCounters();
  EXPECT_EQ(c.live, 0);
  EXPECT_EQ(c.allocated, 4000);
  EXPECT_EQ(c.freed, 4000);
}

TEST(RuntimeDevice, SlotBuffersComeFromTheContextsDevice) {
  gnnrtContext ctx;
  gnnrtMemRefF32 m;
  _mlir_ciface_gnnrtBuffer(&m, &ctx, 0, 100);
  EXPECT_EQ(ctx.device->memoryCounters().live, 400);
  _mlir_ciface_gnnrtBuffer(&m, &ctx, 0, 50); // fits: the same memory
  EXPECT_EQ(ctx.device->memoryCounters().allocated, 400);
  // Grows: the old block is freed before the new one is allocated, so the
  // peak is the new size, not both.
  _mlir_ciface_gnnrtBuffer(&m, &ctx, 0, 300);
  MemoryCounters c = ctx.device->memoryCounters();
  EXPECT_EQ(c.live, 1200);
  EXPECT_EQ(c.peak, 1200);
  EXPECT_EQ(c.freed, 400);
  EXPECT_EQ(ctx.bytesAllocated, 1600);
}

TEST(RuntimeDeviceDeathTest, FreeingForeignMemoryStopsTheRun) {
  std::unique_ptr<Device> device = createCPUDevice();
  int x = 0;
  EXPECT_EXIT(device->free(&x), testing::ExitedWithCode(1),
              "error: cpu device: free of memory it did not allocate");
}
