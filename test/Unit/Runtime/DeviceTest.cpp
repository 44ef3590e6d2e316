//===- DeviceTest.cpp - the CPU device: memory, graph, launch, optimizer --===//
//
// Every allocate, free and copy moves the counters by exactly the bytes asked
// for, under the tier named; the host's view of device memory is the memory
// itself and counts nothing, nor does fill; a context allocates its buffers
// on its device; the graph and edge-data accessors of the ABI return the
// device's copies; launch (gnnrtParallelFor) runs each row once, in whole
// chunks; the optimizer step is bit for bit the host loop it replaced.
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "Context.h"
#include "gnnrt/GNNRuntime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

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

// The device pool's cap (--mem-budget on a GPU): device-tier allocations up
// to it pass, host-tier ones are not counted, and the one past it stops the
// run naming the sizes and the cap.
TEST(RuntimeDevice, CapacityStopsTheAllocationPastIt) {
  std::unique_ptr<Device> device = createCPUDevice();
  EXPECT_EQ(device->capacity(), 0);
  device->setCapacity(4096);
  EXPECT_EQ(device->capacity(), 4096);
  void *a = device->allocate(3000, MemoryTier::Device);
  void *h = device->allocate(1 << 20, MemoryTier::Host);
  void *b = device->allocate(1096, MemoryTier::Device); // exactly the cap
  device->free(b);
  EXPECT_EXIT(device->allocate(1097, MemoryTier::Device),
              testing::ExitedWithCode(1),
              "cpu device: an allocation of 1.1 KiB with 2.9 KiB in use "
              "exceeds the device memory budget of 4.0 KiB \\(--mem-budget");
  device->setCapacity(0); // no cap
  void *c = device->allocate(1 << 20, MemoryTier::Device);
  for (void *p : {a, h, c})
    device->free(p);
}

TEST(RuntimeDevice, AllocationsAreZeroedAndAligned) {
  std::unique_ptr<Device> device = createCPUDevice();
  for (int64_t bytes : {int64_t(1), int64_t(4000), int64_t(12) << 20}) {
    for (MemoryTier tier : {MemoryTier::Host, MemoryTier::Device}) {
      auto *p = static_cast<unsigned char *>(device->allocate(bytes, tier));
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
      if (bytes >= (int64_t(4) << 20)) { // large blocks: on 2 MiB pages
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (2 << 20), 0u);
      }
      for (int64_t i = 0; i < bytes; i += 331)
        ASSERT_EQ(p[i], 0);
      EXPECT_EQ(p[bytes - 1], 0);
      device->free(p);
    }
  }
}

/// The process's resident bytes (/proc/self/statm).
static int64_t residentBytes() {
  long pages = 0, resident = 0;
  FILE *f = std::fopen("/proc/self/statm", "r");
  if (!f)
    return -1;
  const int read = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return read == 2 ? resident * sysconf(_SC_PAGESIZE) : -1;
}

// A large block freed goes back to the kernel even where a block allocated
// after it lives on (a block of the C heap below a live one stayed
// resident: glibc takes blocks under its mmap threshold from the heap, and
// the free of a mapped block below 32 MiB raises the threshold to its size,
// as the first line does here).
TEST(RuntimeDevice, LargeBlocksGoBackToTheSystemWhenFreed) {
  std::free(std::malloc(size_t(30) << 20));
  std::unique_ptr<Device> device = createCPUDevice();
  const int64_t before = residentBytes();
  ASSERT_GT(before, 0);
  const int64_t bytes = int64_t(24) << 20;
  void *large = device->allocate(bytes, MemoryTier::Device);
  std::memset(large, 1, static_cast<size_t>(bytes));
  void *after = device->allocate(4096, MemoryTier::Device);
  EXPECT_GE(residentBytes(), before + bytes);
  device->free(large);
  EXPECT_LT(residentBytes(), before + (int64_t(4) << 20));
  device->free(after);
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

TEST(RuntimeDevice, TheHostViewOfCPUMemoryIsTheMemoryItself) {
  std::unique_ptr<Device> device = createCPUDevice();
  EXPECT_TRUE(device->deviceMemoryIsHostMemory());
  const int64_t n = 100;
  auto *d = static_cast<float *>(device->allocate(n * 4, MemoryTier::Device));
  for (int64_t i = 0; i < n; ++i)
    d[i] = static_cast<float>(i) + 0.5f;
  const MemoryCounters before = device->memoryCounters();

  std::vector<char> staging;
  EXPECT_EQ(device->hostView(d, n * 4, staging), d);
  EXPECT_EQ(device->hostView(d + 10, 0, staging), d + 10);
  // No copy: the staging buffer is untouched and nothing is counted.
  EXPECT_TRUE(staging.empty());
  EXPECT_TRUE(device->memoryCounters() == before);
  device->free(d);
}

TEST(RuntimeDevice, FillSetsBytesAndCountsNothing) {
  std::unique_ptr<Device> device = createCPUDevice();
  const int64_t n = 1000;
  auto *d = static_cast<float *>(device->allocate(n * 4, MemoryTier::Device));
  for (int64_t i = 0; i < n; ++i)
    d[i] = 1.0f + static_cast<float>(i);
  const MemoryCounters before = device->memoryCounters();

  device->fill(d + 1, 0, (n - 2) * 4);
  EXPECT_EQ(d[0], 1.0f);
  for (int64_t i = 1; i < n - 1; ++i)
    ASSERT_EQ(d[i], 0.0f) << i;
  EXPECT_EQ(d[n - 1], static_cast<float>(n));
  // Any byte range, any value.
  auto *bytes = reinterpret_cast<unsigned char *>(d);
  device->fill(bytes + 43, 0xab, 5);
  EXPECT_EQ(bytes[42], 0);
  for (int i = 43; i < 48; ++i)
    EXPECT_EQ(bytes[i], 0xab) << i;
  EXPECT_EQ(bytes[48], 0);
  device->fill(d, 0x7f, 0); // nothing
  EXPECT_EQ(d[0], 1.0f);
  EXPECT_TRUE(device->memoryCounters() == before);
  device->free(d);
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

TEST(RuntimeDevice, TheGraphAccessorsReturnTheDevicesCopies) {
  // A random multigraph with self-loops and isolated vertices.
  std::mt19937 rng(7);
  const int64_t V = 57, E = 400;
  std::uniform_int_distribution<int32_t> vertex(0, V - 3);
  std::vector<std::vector<int32_t>> in(V);
  for (int64_t k = 0; k < E; ++k)
    in[vertex(rng)].push_back(vertex(rng));
  gnnrtContext ctx;
  Dataset &ds = ctx.ds;
  ds.numVertices = V;
  ds.numEdges = E;
  ds.numFeatures = 2;
  ds.numClasses = 2;
  ds.indptr.assign(V + 1, 0);
  for (int64_t v = 0; v < V; ++v) {
    std::sort(in[v].begin(), in[v].end()); // the format: sources ascend
    ds.indptr[v + 1] = ds.indptr[v] + static_cast<int64_t>(in[v].size());
    ds.indices.insert(ds.indices.end(), in[v].begin(), in[v].end());
  }
  ds.features.assign(V * 2, 1.5f);
  ds.labels.assign(V, 0);
  for (auto &m : ds.masks)
    m.assign(V, 1);
  const std::vector<int64_t> indptr = ds.indptr;
  const std::vector<int32_t> indices = ds.indices;
  const int32_t *indicesData = ds.indices.data();
  std::string error;
  ASSERT_TRUE(bindDataset(&ctx, error)) << error;

  const DeviceGraph &g = ctx.device->graph();
  EXPECT_EQ(g.numVertices, V);
  EXPECT_EQ(g.numEdges, E);
  // The CPU device keeps the dataset's arrays: no copy.
  EXPECT_EQ(g.index[0], indicesData);

  gnnrtMemRefI64 offsets[2];
  gnnrtMemRefI32 index[4];
  gnnrtMemRefF32 degree[2];
  for (int side : {0, 1}) {
    _mlir_ciface_gnnrtGraphOffsets(&offsets[side], &ctx, side);
    EXPECT_EQ(offsets[side].aligned, g.offsets[side]);
    EXPECT_EQ(offsets[side].sizes[0], V + 1);
    _mlir_ciface_gnnrtDegree(&degree[side], &ctx, side);
    EXPECT_EQ(degree[side].aligned, g.degree[side]);
    EXPECT_EQ(degree[side].sizes[0], V);
  }
  for (int which = 0; which < 4; ++which) {
    _mlir_ciface_gnnrtGraphIndex(&index[which], &ctx, which);
    EXPECT_EQ(index[which].aligned, g.index[which]);
    EXPECT_EQ(index[which].sizes[0], E);
  }

  // Contents: the CSC as given; every edge once in the CSR, ascending within
  // its source, with its destination alongside; the degrees.
  std::vector<int64_t> outDegree(V, 0);
  for (int64_t v = 0; v < V; ++v) {
    ASSERT_EQ(offsets[1].aligned[v], indptr[v]);
    for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) {
      ASSERT_EQ(index[0].aligned[e], indices[e]);
      ASSERT_EQ(index[1].aligned[e], v);
      ++outDegree[indices[e]];
    }
  }
  std::vector<int> seen(E, 0);
  for (int64_t u = 0; u < V; ++u) {
    EXPECT_EQ(degree[0].aligned[u],
              static_cast<float>(indptr[u + 1] - indptr[u]));
    EXPECT_EQ(degree[1].aligned[u], static_cast<float>(outDegree[u]));
    ASSERT_EQ(offsets[0].aligned[u + 1] - offsets[0].aligned[u], outDegree[u]);
    for (int64_t p = offsets[0].aligned[u]; p < offsets[0].aligned[u + 1];
         ++p) {
      const int32_t e = index[2].aligned[p];
      ASSERT_EQ(indices[e], u);
      ASSERT_EQ(index[3].aligned[p], index[1].aligned[e]);
      if (p > offsets[0].aligned[u]) {
        ASSERT_LT(index[2].aligned[p - 1], e);
      }
      ++seen[e];
    }
  }
  for (int64_t e = 0; e < E; ++e)
    ASSERT_EQ(seen[e], 1) << e;

  // The features moved to a device buffer: counted as one copy to the device.
  gnnrtMemRefF32 x;
  _mlir_ciface_gnnrtFeatures(&x, &ctx);
  EXPECT_EQ(x.sizes[0], V * 2);
  EXPECT_EQ(x.aligned[V * 2 - 1], 1.5f);
  EXPECT_EQ(ctx.device->memoryCounters().copiedToDevice, V * 2 * 4);
  EXPECT_EQ(ctx.device->memoryCounters().live, V * 2 * 4);
}

TEST(RuntimeDevice, TheEdgeDataAccessorsReturnTheDevicesCopies) {
  // 0 -> 1, 0 -> 2, 1 -> 2, 2 -> 2 (CSC by destination), with an f32 input
  // of rows of 2, an i32 input and an f32 input of width 1.
  gnnrtContext ctx;
  Dataset &ds = ctx.ds;
  ds.numVertices = 3;
  ds.numEdges = 4;
  ds.numFeatures = 1;
  ds.numClasses = 2;
  ds.indptr = {0, 0, 1, 4};
  ds.indices = {0, 0, 1, 2};
  ds.features.assign(3, 1.0f);
  ds.labels.assign(3, 0);
  for (auto &m : ds.masks)
    m.assign(3, 1);
  EdgeData weight, type, scale;
  weight.width = 2;
  weight.f32 = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f};
  type.isInt = true;
  type.i32 = {2, 0, 1, 1};
  scale.f32 = {-1.0f, -2.0f, -3.0f, -4.0f};
  ds.edgeData = {{"weight", weight}, {"type", type}, {"scale", scale}};
  ctx.model.edgeInputs = {
      {"type", true, 1}, {"weight", false, 2}, {"scale", false, 1}};
  std::string error;
  ASSERT_TRUE(bindDataset(&ctx, error)) << error;
  const MemoryCounters afterBind = ctx.device->memoryCounters();

  // In the model's order; each input's other type is empty.
  const std::vector<DeviceEdgeInput> &inputs = ctx.device->edgeData();
  ASSERT_EQ(inputs.size(), 3u);
  const std::vector<int64_t> f32Sizes = {0, 8, 4}, i32Sizes = {4, 0, 0};
  for (int64_t k = 0; k < 3; ++k) {
    gnnrtMemRefF32 f;
    gnnrtMemRefI32 i;
    _mlir_ciface_gnnrtEdgeDataF32(&f, &ctx, k);
    _mlir_ciface_gnnrtEdgeDataI32(&i, &ctx, k);
    EXPECT_EQ(f.aligned, inputs[k].f32) << k;
    EXPECT_EQ(f.sizes[0], f32Sizes[k]) << k;
    EXPECT_EQ(f.sizes[0], inputs[k].f32Size) << k;
    EXPECT_EQ(i.aligned, inputs[k].i32) << k;
    EXPECT_EQ(i.sizes[0], i32Sizes[k]) << k;
    EXPECT_EQ(i.sizes[0], inputs[k].i32Size) << k;
  }
  EXPECT_EQ(std::vector<int32_t>(inputs[0].i32, inputs[0].i32 + 4), type.i32);
  EXPECT_EQ(std::vector<float>(inputs[1].f32, inputs[1].f32 + 8), weight.f32);
  EXPECT_EQ(std::vector<float>(inputs[2].f32, inputs[2].f32 + 4), scale.f32);
  // The CPU device keeps the arrays: nothing allocated or copied for them
  // (the features are the only copy bindDataset counts).
  EXPECT_EQ(afterBind.copiedToDevice, 3 * 4);
  EXPECT_EQ(afterBind.live, 3 * 4);

  // Binding again replaces them.
  ctx.device->bindEdgeData({});
  EXPECT_TRUE(ctx.device->edgeData().empty());
}

TEST(RuntimeDevice, TheVertexIdsAreAPartsGlobalIdsForTheUnpartitionedProgram) {
  // 0 -> 1, 0 -> 2, 1 -> 2 of a larger graph's vertices 4, 9 and 17.
  auto bind = [](gnnrtContext &ctx, std::vector<int64_t> ids,
                 std::string &error) {
    Dataset &ds = ctx.ds;
    ds = Dataset();
    ds.numVertices = 3;
    ds.numEdges = 3;
    ds.numFeatures = 1;
    ds.numClasses = 2;
    ds.indptr = {0, 0, 1, 3};
    ds.indices = {0, 0, 1};
    ds.features.assign(3, 1.0f);
    ds.labels.assign(3, 0);
    for (auto &m : ds.masks)
      m.assign(3, 1);
    ds.vertexIds = std::move(ids);
    return bindDataset(&ctx, error);
  };
  std::string error;
  gnnrtMemRefI32 ids;
  {
    gnnrtContext ctx;
    ASSERT_TRUE(bind(ctx, {4, 9, 17}, error)) << error;
    _mlir_ciface_gnnrtVertexIds(&ids, &ctx);
    ASSERT_EQ(ids.sizes[0], 3);
    EXPECT_EQ(std::vector<int32_t>(ids.aligned, ids.aligned + 3),
              (std::vector<int32_t>{4, 9, 17}));
    // A whole graph (no ids): none, the rows are their own ids.
    ASSERT_TRUE(bind(ctx, {}, error)) << error;
    _mlir_ciface_gnnrtVertexIds(&ids, &ctx);
    EXPECT_EQ(ids.sizes[0], 0);
    EXPECT_NE(ids.aligned, nullptr);
    // Ids that are not one per vertex.
    EXPECT_FALSE(bind(ctx, {4, 9}, error));
    EXPECT_EQ(error, "the graph's vertex ids disagree with its vertices");
  }
  {
    // A partitioned program numbers its rows itself: no ids.
    gnnrtContext ctx;
    ctx.model.partition = "rows";
    ASSERT_TRUE(bind(ctx, {4, 9, 17}, error)) << error;
    _mlir_ciface_gnnrtVertexIds(&ids, &ctx);
    EXPECT_EQ(ids.sizes[0], 0);
  }
}

// The slot ops' check of the edge types scans an edge input once and keeps
// its least and greatest type: a later check against fewer slots still
// fails, naming the first edge out of range; types that are no edge input
// (a slot the step rewrites) are scanned at every call.
TEST(RuntimeDeviceDeathTest, EdgeTypesAreCheckedForEachSlotCount) {
  gnnrtContext ctx;
  std::vector<EdgeInputArrays> inputs(1);
  inputs[0].i32 = {0, 2, 1, 2};
  ctx.device->bindEdgeData(std::move(inputs));
  auto *bound = const_cast<int32_t *>(ctx.device->edgeData()[0].i32);
  gnnrtMemRefI32 tm = {bound, bound, 0, {4}, {1}};
  _mlir_ciface_gnnrtCheckTypes(&ctx, &tm, 3);
  _mlir_ciface_gnnrtCheckTypes(&ctx, &tm, 3);
  ASSERT_EQ(ctx.checkedTypes.size(), 1u);
  EXPECT_EQ(ctx.checkedTypes[0].least, 0);
  EXPECT_EQ(ctx.checkedTypes[0].most, 2);
  EXPECT_EXIT(_mlir_ciface_gnnrtCheckTypes(&ctx, &tm, 2),
              testing::ExitedWithCode(1),
              "error: edge type 2 of edge 1 outside \\[0, 2\\) of the typed "
              "linear's weight");
  // The first type of the input (another length) is another array.
  tm.sizes[0] = 1;
  _mlir_ciface_gnnrtCheckTypes(&ctx, &tm, 1);
  EXPECT_EQ(ctx.checkedTypes.size(), 2u);
  // Not an edge input: checked, never kept, so that new contents at the
  // same address are checked again.
  std::vector<int32_t> slot = {1, 0, 2};
  gnnrtMemRefI32 sm = {slot.data(), slot.data(), 0, {3}, {1}};
  _mlir_ciface_gnnrtCheckTypes(&ctx, &sm, 3);
  EXPECT_EQ(ctx.checkedTypes.size(), 2u);
  slot[2] = -1;
  EXPECT_EXIT(_mlir_ciface_gnnrtCheckTypes(&ctx, &sm, 3),
              testing::ExitedWithCode(1), "error: edge type -1 of edge 2");
}

TEST(RuntimeDeviceDeathTest, AMissingEdgeInputStopsTheRun) {
  gnnrtContext ctx;
  gnnrtMemRefF32 f;
  EXPECT_EXIT(_mlir_ciface_gnnrtEdgeDataF32(&f, &ctx, 0),
              testing::ExitedWithCode(1),
              "error: gnnrtEdgeDataF32: no edge input #0");
}

//===----------------------------------------------------------------------===//
// The optimizer step
//===----------------------------------------------------------------------===//

namespace {

/// gnnrtOptimizerUpdate as it was before the step moved to the device: the
/// reference the device's step must match bit for bit. This file is compiled
/// with gnnrt's flags (-O3 -march=native: the same FMA contraction).
void oldOptimizerUpdate(Device &device, const OptimizerConfig &c, Buffer &p,
                        Buffer &g, OptState &st) {
  const int64_t n = p.size;
  ++st.t;
  if (c.kind == OptimizerConfig::SGD) {
    if (c.momentum != 0.0 && !st.m)
      st.m = std::make_unique<Buffer>(device, n);
    const bool first = st.t == 1;
    for (int64_t i = 0; i < n; ++i) {
      double gi = g.data[i] + c.weightDecay * p.data[i];
      if (c.momentum != 0.0) {
        double b = first ? gi : c.momentum * st.m->data[i] + gi;
        st.m->data[i] = static_cast<float>(b);
        gi = b;
      }
      p.data[i] = static_cast<float>(p.data[i] - c.lr * gi);
    }
    return;
  }
  if (!st.m) {
    st.m = std::make_unique<Buffer>(device, n);
    st.v = std::make_unique<Buffer>(device, n);
  }
  const double bc1 = 1.0 - std::pow(c.beta1, static_cast<double>(st.t));
  const double bc2 = 1.0 - std::pow(c.beta2, static_cast<double>(st.t));
  for (int64_t i = 0; i < n; ++i) {
    double gi = g.data[i] + c.weightDecay * p.data[i];
    double m = c.beta1 * st.m->data[i] + (1.0 - c.beta1) * gi;
    double v = c.beta2 * st.v->data[i] + (1.0 - c.beta2) * gi * gi;
    st.m->data[i] = static_cast<float>(m);
    st.v->data[i] = static_cast<float>(v);
    double denom = std::sqrt(v) / std::sqrt(bc2) + c.eps;
    p.data[i] = static_cast<float>(p.data[i] - (c.lr / bc1) * m / denom);
  }
}

/// The configurations the step is checked on.
std::vector<OptimizerConfig> optimizerConfigs() {
  OptimizerConfig adam, adamDecay, sgd, sgdDecay, sgdPlain;
  adamDecay.weightDecay = 5e-4;
  adamDecay.lr = 0.003;
  sgd.kind = sgdDecay.kind = sgdPlain.kind = OptimizerConfig::SGD;
  sgd.lr = sgdDecay.lr = sgdPlain.lr = 0.1;
  sgdDecay.momentum = 0.8;
  sgdDecay.weightDecay = 1e-3;
  sgdPlain.momentum = 0.0;
  sgdPlain.weightDecay = 2e-2;
  return {adam, adamDecay, sgd, sgdDecay, sgdPlain};
}

bool sameBits(const Buffer &a, const Buffer &b) {
  return a.size == b.size &&
         std::memcmp(a.data, b.data, sizeof(float) * a.size) == 0;
}

void fillRandom(Buffer &b, std::mt19937 &rng, float scale) {
  std::normal_distribution<float> normal(0.0f, scale);
  for (int64_t i = 0; i < b.size; ++i)
    b.data[i] = normal(rng);
}

} // namespace

TEST(RuntimeDevice, TheOptimizerStepIsTheOldLoopBitForBit) {
  std::unique_ptr<Device> device = createCPUDevice();
  const int64_t n = 10007; // vector loops and a remainder
  for (const OptimizerConfig &c : optimizerConfigs()) {
    std::mt19937 rng(12345);
    Buffer p(*device, n), ref(*device, n), g(*device, n);
    fillRandom(p, rng, 0.3f);
    std::memcpy(ref.data, p.data, sizeof(float) * n);
    // The device's state, allocated as gnnrtOptimizerUpdate does.
    Buffer m(*device, n), v(*device, n);
    OptState refState;
    for (int64_t step = 1; step <= 6; ++step) {
      fillRandom(g, rng, step == 3 ? 1e-6f : 1.0f); // also tiny gradients
      device->optimizerStep(c, step, n, p.data, g.data,
                            c.kind == OptimizerConfig::SGD && c.momentum == 0.0
                                ? nullptr
                                : m.data,
                            c.kind == OptimizerConfig::Adam ? v.data : nullptr);
      oldOptimizerUpdate(*device, c, ref, g, refState);
      ASSERT_TRUE(sameBits(p, ref))
          << (c.kind == OptimizerConfig::Adam ? "adam" : "sgd") << " lr "
          << c.lr << " weight decay " << c.weightDecay << " step " << step;
      if (refState.m) {
        ASSERT_TRUE(sameBits(m, *refState.m)) << "step " << step;
      }
      if (refState.v) {
        ASSERT_TRUE(sameBits(v, *refState.v)) << "step " << step;
      }
    }
  }
}

namespace {

/// Gives `ctx` optimizer `c` and one parameter of `n` random values, its
/// gradient and its optimizer state.
void addRandomParam(gnnrtContext &ctx, const OptimizerConfig &c, int64_t n,
                    std::mt19937 &rng) {
  ctx.optConfig = c;
  ctx.params.push_back(std::make_unique<Buffer>(*ctx.device, n));
  ctx.grads.push_back(std::make_unique<Buffer>(*ctx.device, n));
  ctx.opt.emplace_back();
  fillRandom(*ctx.params.back(), rng, 0.3f);
}

} // namespace

TEST(RuntimeDevice, OptimizerUpdateForwardsToTheDevice) {
  // Through the ABI: the context's parameters move as the old loop moves
  // them, and the state is allocated on the device on the first step (Adam:
  // two moments, SGD: a momentum buffer unless the momentum is 0).
  for (const OptimizerConfig &c : optimizerConfigs()) {
    gnnrtContext ctx;
    const int64_t n = 77;
    std::mt19937 rng(99);
    addRandomParam(ctx, c, n, rng);
    Buffer ref(*ctx.device, n);
    std::memcpy(ref.data, ctx.params[0]->data, sizeof(float) * n);
    OptState refState;
    const int64_t live = ctx.device->memoryCounters().live;
    const int64_t stateBuffers = c.kind == OptimizerConfig::Adam ? 2
                                 : c.momentum != 0.0             ? 1
                                                                 : 0;
    for (int64_t step = 1; step <= 3; ++step) {
      fillRandom(*ctx.grads[0], rng, 1.0f);
      gnnrtOptimizerUpdate(&ctx, 0);
      oldOptimizerUpdate(*ctx.device, c, ref, *ctx.grads[0], refState);
      ASSERT_TRUE(sameBits(*ctx.params[0], ref)) << "step " << step;
      EXPECT_EQ(ctx.opt[0].t, step);
      EXPECT_EQ(ctx.device->memoryCounters().live,
                live + 2 * stateBuffers * n * 4); // the reference's too
    }
  }
}

TEST(RuntimeDevice, ABatchInPartsStepsOnceWithItsPartsGradientsSummed) {
  // gnnrtContext::GradientParts: an earlier part's update sums its gradient
  // and steps nothing; the last part's gradient takes the sum once, whether
  // announced (gnnrtGradientReady) or folded by gnnrtSumGradients, and the
  // step is the one of the summed gradient.
  for (const OptimizerConfig &c : optimizerConfigs()) {
    for (bool announce : {false, true}) {
      gnnrtContext ctx;
      const int64_t n = 53;
      std::mt19937 rng(7);
      addRandomParam(ctx, c, n, rng);
      Buffer ref(*ctx.device, n), sum(*ctx.device, n), before(*ctx.device, n);
      std::memcpy(ref.data, ctx.params[0]->data, sizeof(float) * n);
      std::memcpy(before.data, ctx.params[0]->data, sizeof(float) * n);
      std::fill(sum.data, sum.data + n, 0.0f);
      gnnrtContext::GradientParts &parts = ctx.gradientParts;
      for (int part = 0; part < 3; ++part) {
        const bool last = part == 2;
        parts.defer = !last;
        parts.fold = last;
        fillRandom(*ctx.grads[0], rng, 1.0f);
        for (int64_t i = 0; i < n; ++i)
          sum.data[i] = last ? ctx.grads[0]->data[i] + sum.data[i]
                             : sum.data[i] + ctx.grads[0]->data[i];
        if (announce)
          gnnrtGradientReady(&ctx, 0);
        gnnrtSumGradients(&ctx);
        gnnrtOptimizerUpdate(&ctx, 0);
        if (!last) {
          ASSERT_TRUE(sameBits(*ctx.params[0], before)) << "part " << part;
          EXPECT_EQ(ctx.opt[0].t, 0);
        }
      }
      OptState refState;
      oldOptimizerUpdate(*ctx.device, c, ref, sum, refState);
      EXPECT_TRUE(sameBits(*ctx.params[0], ref)) << "announced " << announce;
      EXPECT_EQ(ctx.opt[0].t, 1);
    }
  }
}

namespace {

/// Counts each row it is given in kernel buffer 0 (n + 1 elements: the last
/// counts calls that are not one whole chunk), n in kernel integer 0.
void countRows(gnnrtContext *ctx, int64_t begin, int64_t end) {
  gnnrtMemRefI32 counts;
  _mlir_ciface_gnnrtKernelArgI32Get(&counts, ctx, 0);
  const int64_t n = gnnrtKernelIntGet(ctx, 0);
  int32_t *c = counts.aligned + counts.offset;
  if (begin % GNNRT_PARALLEL_CHUNK != 0 ||
      end != std::min<int64_t>(n, begin + GNNRT_PARALLEL_CHUNK))
    __atomic_fetch_add(&c[n], 1, __ATOMIC_RELAXED);
  for (int64_t i = begin; i < end; ++i)
    __atomic_fetch_add(&c[i], 1, __ATOMIC_RELAXED);
}

} // namespace

TEST(RuntimeDevice, LaunchRunsEachRowOnceInWholeChunks) {
  gnnrtContext ctx;
  for (bool throughTheABI : {false, true}) {
    for (int64_t n : {0, 1, 31, 32, 33, 1000}) {
      std::vector<int32_t> counts(n + 1, 0);
      gnnrtMemRefI32 m = {counts.data(), counts.data(), 0, {n + 1}, {1}};
      _mlir_ciface_gnnrtKernelArgI32(&ctx, 0, &m);
      gnnrtKernelInt(&ctx, 0, n);
      if (throughTheABI)
        gnnrtParallelFor(&ctx, countRows, n);
      else
        ctx.device->launch(&ctx, countRows, 0, n);
      ctx.device->synchronize();
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(counts[i], 1) << "n " << n << " row " << i;
      EXPECT_EQ(counts[n], 0) << "n " << n << ": calls not on a chunk";
    }
  }
}

// gnnrtParallelForRange (a row chunk of a step): the rows of [begin, end)
// once each, none outside, in the chunks gnnrtParallelFor would use (a
// kernel's partial sums per chunk stay the same).
TEST(RuntimeDevice, RangeLaunchRunsItsRowsOnlyInTheSameChunks) {
  gnnrtContext ctx;
  const int64_t n = 1000;
  for (auto [begin, end] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 0}, {0, 31}, {32, 33}, {64, 1000}, {96, 97}, {992, 1000}}) {
    std::vector<int32_t> counts(n + 1, 0);
    gnnrtMemRefI32 m = {counts.data(), counts.data(), 0, {n + 1}, {1}};
    _mlir_ciface_gnnrtKernelArgI32(&ctx, 0, &m);
    gnnrtKernelInt(&ctx, 0, end); // a chunk ends at `end` or a whole chunk on
    gnnrtParallelForRange(&ctx, countRows, begin, end);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(counts[i], i >= begin && i < end ? 1 : 0)
          << "[" << begin << ", " << end << ") row " << i;
    EXPECT_EQ(counts[end], 0) << "[" << begin << ", " << end << ")";
  }
  EXPECT_DEATH(
      gnnrtParallelForRange(&ctx, countRows, 16, 40),
      "gnnrtParallelForRange: rows \\[16, 40\\) \\(the start must be a "
      "multiple of 32");
  EXPECT_DEATH(gnnrtParallelForRange(&ctx, countRows, 64, 32),
               "gnnrtParallelForRange: rows \\[64, 32\\)");
}

// gnnrtParallelForRows (a reduce stage's sources, ABI 24): the rows of
// [begin, end) once each from any first row, none outside.
TEST(RuntimeDevice, RowsLaunchRunsItsRowsFromAnyStart) {
  gnnrtContext ctx;
  const int64_t n = 1000;
  for (auto [begin, end] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 0}, {5, 5}, {7, 40}, {33, 1000}, {999, 1000}}) {
    std::vector<int32_t> counts(n + 1, 0);
    gnnrtMemRefI32 m = {counts.data(), counts.data(), 0, {n + 1}, {1}};
    _mlir_ciface_gnnrtKernelArgI32(&ctx, 0, &m);
    gnnrtKernelInt(&ctx, 0, n); // chunks from an unaligned start: flagged
                                // at counts[n], which is not checked
    gnnrtParallelForRows(&ctx, countRows, begin, end);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(counts[i], i >= begin && i < end ? 1 : 0)
          << "[" << begin << ", " << end << ") row " << i;
  }
  EXPECT_DEATH(gnnrtParallelForRows(&ctx, countRows, 64, 32),
               "gnnrtParallelForRows: rows \\[64, 32\\) \\(the start must "
               "not be after the end\\)");
}

// Row partitioning's stages of a compiled kernel (ABI 24) in one process:
// one stage, whose rows are the own rows and whose range is every source;
// a stage or part out of order or out of the row stops the run.
TEST(RuntimeDevice, OneProcessRunsOneStageOfItsOwnRows) {
  gnnrtContext ctx;
  ctx.ds.numVertices = 4;
  std::vector<float> own(8, 1.0f);
  gnnrtMemRefF32 m = {own.data(), own.data(), 0, {8}, {1}};
  EXPECT_EQ(gnnrtStageCount(&ctx), 1);
  EXPECT_EQ(gnnrtStageStart(&ctx, 0), 0);
  EXPECT_EQ(gnnrtStageStart(&ctx, 1), 4);
  EXPECT_EQ(gnnrtStageLevelEnd(&ctx, 0, 1), 4); // no levels: the stage's end
  EXPECT_DEATH(gnnrtStageLevelEnd(&ctx, 1, -1),
               "gnnrtStageLevelEnd: stage 1 of 1");
  gnnrtMemRefF32 rows{};
  _mlir_ciface_gnnrtStageRows(&rows, &ctx, &m, 2, 0, -1);
  EXPECT_EQ(rows.aligned, own.data());
  rows = {};
  _mlir_ciface_gnnrtReduceStageRows(&rows, &ctx, &m, 2, 0, 0, 0, 2, -1);
  EXPECT_EQ(rows.aligned, own.data());
  _mlir_ciface_gnnrtReduceStageSend(&ctx, &m, 2, 0, 0, 1, 0, 2);
  EXPECT_DEATH(_mlir_ciface_gnnrtStageRows(&rows, &ctx, &m, 2, 1, -1),
               "gnnrtStageRows: stage 1 asked, stage 0 expected, of 1");
  // A reduce stage's source input: the own rows in one process.
  rows = {};
  _mlir_ciface_gnnrtReduceStageSources(&rows, &ctx, &m, 2, 0);
  EXPECT_EQ(rows.aligned, own.data());
  EXPECT_DEATH(_mlir_ciface_gnnrtReduceStageSources(&rows, &ctx, &m, 2, 1),
               "gnnrtReduceStageSources: stage 1 asked, stage 0 expected, of "
               "1");
  EXPECT_DEATH(_mlir_ciface_gnnrtReduceStageSources(&rows, &ctx, &m, 3, 0),
               "gnnrtReduceStageSources own rows");
  EXPECT_DEATH(_mlir_ciface_gnnrtReduceStageSources(&rows, &ctx, &m, -1, 0),
               "gnnrtReduceStageSources: negative width");
  EXPECT_DEATH(gnnrtStageStart(&ctx, 2), "gnnrtStageStart: stage 2 of 1");
  EXPECT_DEATH(
      _mlir_ciface_gnnrtReduceStageRows(&rows, &ctx, &m, 2, 0, 0, 1, 2, -1),
      "gnnrtReduceStageRows: part 0 of 2 floats at 1 of 2");
  EXPECT_DEATH(_mlir_ciface_gnnrtReduceStageSend(&ctx, &m, 2, 0, 1, 1, 0, 2),
               "gnnrtReduceStageSend: part 1 of 1");
  // A send must name a part stage 0 gave, with its width and place.
  EXPECT_DEATH(_mlir_ciface_gnnrtReduceStageSend(&ctx, &m, 1, 0, 0, 1, 0, 2),
               "gnnrtReduceStageSend: stage 0 part 0 of other own rows, width "
               "or place than stage 0's");
  gnnrtContext fresh;
  fresh.ds.numVertices = 4;
  EXPECT_DEATH(_mlir_ciface_gnnrtReduceStageSend(&fresh, &m, 2, 0, 0, 1, 0, 2),
               "gnnrtReduceStageSend: stage 0 part 0 that stage 0 did not give "
               "\\(gnnrtReduceStageRows first\\)");
  // Two parts side by side in rows of 3 floats: the second may not overlap
  // the first.
  std::vector<float> second(4, 1.0f);
  gnnrtMemRefF32 m2 = {second.data(), second.data(), 0, {4}, {1}};
  _mlir_ciface_gnnrtReduceStageRows(&rows, &fresh, &m, 2, 0, 0, 0, 3, -1);
  EXPECT_DEATH(
      _mlir_ciface_gnnrtReduceStageRows(&rows, &fresh, &m2, 1, 0, 1, 1, 3, -1),
      "gnnrtReduceStageRows: part 1 at 1 overlaps part 0's floats");
}

TEST(RuntimeDevice, ViewIsARangeOfItsBuffer) {
  gnnrtContext ctx;
  std::vector<float> data(100);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<float>(i);
  // A buffer that is itself a view at offset 10 (the descriptor's offset).
  gnnrtMemRefF32 buf = {data.data(), data.data(), 10, {90}, {1}};
  gnnrtMemRefF32 v;
  _mlir_ciface_gnnrtView(&v, &ctx, &buf, 5, 20);
  EXPECT_EQ(v.sizes[0], 20);
  EXPECT_EQ(v.aligned[v.offset], 15.0f);
  EXPECT_EQ(v.aligned[v.offset + 19], 34.0f);
  _mlir_ciface_gnnrtView(&v, &ctx, &buf, 90, 0); // empty, at the end
  EXPECT_EQ(v.sizes[0], 0);
  EXPECT_DEATH(_mlir_ciface_gnnrtView(&v, &ctx, &buf, 80, 11),
               "gnnrtView: elements \\[80, 91\\) of a buffer of 90");
  EXPECT_DEATH(_mlir_ciface_gnnrtView(&v, &ctx, &buf, -1, 2),
               "gnnrtView: elements");
}
