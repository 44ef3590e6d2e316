//===- Device.cpp - what every gnnrt device shares ------------------------===//
//
// The memory counters (every device counts allocations and copies the same
// way), the host's view of device memory, the graph's checks and Buffer.
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "Context.h"
#include "Memory.h"

#include <algorithm>
#include <limits>
#include <string>

using namespace gnnrt;

MemoryCounters Device::memoryCounters() const {
  std::lock_guard<std::mutex> lock(memoryMutex);
  return counters;
}

void Device::setCapacity(int64_t bytes) {
  std::lock_guard<std::mutex> lock(memoryMutex);
  capacityBytes = std::max<int64_t>(bytes, 0);
}

int64_t Device::capacity() const {
  std::lock_guard<std::mutex> lock(memoryMutex);
  return capacityBytes;
}

/// Stops the run: `bytes` more device memory with `live` in use pass the
/// cap `capacity` (--mem-budget).
[[noreturn]] static void overCapacity(const char *device, int64_t bytes,
                                      int64_t live, int64_t capacity) {
  fatal(std::string(device) + " device: an allocation of " +
        formatBytes(bytes) + " with " + formatBytes(live) +
        " in use exceeds the device memory budget of " + formatBytes(capacity) +
        " (--mem-budget; gnn-compile --mem-budget plans the training "
        "within it)");
}

bool Device::passesCapacity(int64_t bytes) const {
  return capacityBytes > 0 && counters.live + bytes > capacityBytes;
}

void Device::checkCapacity(int64_t bytes) const {
  int64_t live = -1, cap = 0;
  {
    std::lock_guard<std::mutex> lock(memoryMutex);
    if (passesCapacity(bytes)) {
      live = counters.live;
      cap = capacityBytes;
    }
  }
  if (live >= 0)
    overCapacity(name(), bytes, live, cap);
}

void Device::recordAllocation(void *ptr, int64_t bytes, MemoryTier tier) {
  int64_t over = -1, cap = 0; // the bytes in use when past the cap
  {
    // The cap's check and the count in one critical section, so that
    // allocations on several threads cannot pass it together; fatal()
    // after the lock.
    std::lock_guard<std::mutex> lock(memoryMutex);
    if (tier == MemoryTier::Device && passesCapacity(bytes)) {
      over = counters.live;
      cap = capacityBytes;
    } else {
      if (!allocations.emplace(ptr, Allocation{bytes, tier, bytes}).second)
        fatal(std::string(name()) +
              " device: allocate returned a live pointer");
      if (tier == MemoryTier::Device) {
        counters.live += bytes;
        counters.allocated += bytes;
        counters.peak = std::max(counters.peak, counters.live);
      } else {
        counters.hostLive += bytes;
        counters.hostAllocated += bytes;
        counters.hostPeak = std::max(counters.hostPeak, counters.hostLive);
      }
    }
  }
  if (over >= 0)
    overCapacity(name(), bytes, over, cap);
}

void Device::recordReleasedAllocation(void *ptr, int64_t bytes) {
  std::lock_guard<std::mutex> lock(memoryMutex);
  if (!allocations.emplace(ptr, Allocation{bytes, MemoryTier::Device, 0})
           .second)
    fatal(std::string(name()) + " device: allocate returned a live pointer");
}

int64_t Device::releasePages(void *ptr, int64_t bytes) {
  const int64_t released = bytes > 0 ? releasePagesImpl(ptr, bytes) : 0;
  std::lock_guard<std::mutex> lock(memoryMutex);
  counters.live -= released;
  return released;
}

void Device::restorePages(void *ptr, int64_t bytes, int64_t released) {
  checkCapacity(released);
  if (bytes > 0)
    restorePagesImpl(ptr, bytes);
  std::lock_guard<std::mutex> lock(memoryMutex);
  counters.live += released;
  counters.peak = std::max(counters.peak, counters.live);
}

MemoryTier Device::recordFree(void *ptr) {
  std::lock_guard<std::mutex> lock(memoryMutex);
  auto it = allocations.find(ptr);
  if (it == allocations.end())
    fatal(std::string(name()) +
          " device: free of memory it did not allocate (or freed already)");
  const Allocation a = it->second;
  allocations.erase(it);
  if (a.tier == MemoryTier::Device) {
    counters.live -= a.counted;
    counters.freed += a.counted;
  } else {
    counters.hostLive -= a.bytes;
    counters.hostFreed += a.bytes;
  }
  return a.tier;
}

void Device::recordCopy(MemoryTier dstTier, MemoryTier srcTier, int64_t bytes) {
  std::lock_guard<std::mutex> lock(memoryMutex);
  const bool toDevice = dstTier == MemoryTier::Device;
  const bool fromDevice = srcTier == MemoryTier::Device;
  int64_t &counter =
      toDevice
          ? (fromDevice ? counters.copiedOnDevice : counters.copiedToDevice)
          : (fromDevice ? counters.copiedToHost : counters.copiedOnHost);
  counter += bytes;
}

const void *Device::hostView(const void *src, int64_t bytes,
                             std::vector<char> &staging) {
  if (bytes < 0)
    fatal(std::string(name()) + " device: host view of " +
          std::to_string(bytes) + " bytes");
  if (deviceMemoryIsHostMemory()) {
    synchronize();
    return src;
  }
  staging.resize(static_cast<size_t>(bytes));
  copy(staging.data(), MemoryTier::Host, src, MemoryTier::Device, bytes);
  return staging.data();
}

void Device::spmmStage(gnnrtContext *, int64_t, gnnrtMemRefF32 *, const float *,
                       int64_t, int64_t, gnnrtMemRefF32 *, int64_t, int64_t) {
  fatal(std::string("gnnrtSpmmBroadcast: not implemented on the ") + name() +
        " device (row partitioning trains on the CPU for now)");
}

void Device::spmmSourceStage(gnnrtContext *, gnnrtMemRefF32 *, gnnrtMemRefF32 *,
                             int64_t, int64_t, float *, int64_t) {
  fatal(std::string("gnnrtSpmmReduce: not implemented on the ") + name() +
        " device (row partitioning trains on the CPU for now)");
}

void Device::checkGraph(const GraphArrays &graph) {
  const size_t V = graph.dstOffsets.empty() ? 0 : graph.dstOffsets.size() - 1;
  const size_t E = static_cast<size_t>(graph.numEdges());
  // The per-edge arrays other than the sources are built only when the
  // program reads them (empty otherwise).
  auto perEdge = [E](size_t n) { return n == E || n == 0; };
  const bool ok = graph.dstOffsets.size() == V + 1 &&
                  graph.srcOffsets.size() >= 1 &&
                  graph.srcOffsets.back() == static_cast<int64_t>(E) &&
                  perEdge(graph.dst.size()) && perEdge(graph.csrEdge.size()) &&
                  perEdge(graph.csrDst.size()) && graph.inDegree.size() == V &&
                  graph.outDegree.size() == V;
  if (!ok)
    fatal("bindGraph: the graph's arrays disagree in size");
}

Buffer::Buffer(Device &device, int64_t n) : Buffer(device, n, false) {}

Buffer::Buffer(Device &device, int64_t n, bool released)
    : device(&device), size(n), released(released) {
  const int64_t bytes =
      static_cast<int64_t>(sizeof(float)) * std::max<int64_t>(n, 0);
  data = static_cast<float *>(released
                                  ? device.allocateReleased(bytes)
                                  : device.allocate(bytes, MemoryTier::Device));
}

/// GNNRT_POISON_FREED=1: a buffer's floats become NaN before it is freed,
/// so that a program still reading it (a view taken before gnnrtEvict or
/// gnnrtDrop and not taken again) computes NaN instead of the old values
/// that freed heap memory often still holds. 0 or unset: off (the default;
/// it costs a pass over every freed buffer).
static bool poisonFreed() {
  static const bool on = envFlag("GNNRT_POISON_FREED", false);
  return on;
}

Buffer::~Buffer() {
  // (Pages of a released buffer are inaccessible: a stray read faults.)
  if (data && size > 0 && !released && poisonFreed() &&
      device->deviceMemoryIsHostMemory())
    std::fill(data, data + size, std::numeric_limits<float>::quiet_NaN());
  device->free(data);
}

float *gnnrt::grownBuffer(Device &device, std::unique_ptr<Buffer> &b,
                          int64_t floats) {
  if (!b || b->size < floats)
    b = std::make_unique<Buffer>(device, floats);
  return b->data;
}

void Device::setGraphWindow(int which, const int32_t *data, int64_t first) {
  if (which < 0 || which > 3)
    fatal("setGraphWindow: no per-edge array #" + std::to_string(which));
  if (!deviceMemoryIsHostMemory())
    fatal(std::string("the graph out of core is not supported on the ") +
          name() + " device");
  // Indexed by edge from the window's first: the address edge 0 would have
  // (never read; the arithmetic on integers, not on the pointer).
  const int32_t *base =
      data ? reinterpret_cast<const int32_t *>(
                 reinterpret_cast<uintptr_t>(data) -
                 static_cast<uintptr_t>(first) * sizeof(int32_t))
           : nullptr;
  graphs[0].index[which] = base;
  if (selected == 0)
    boundGraph.index[which] = base;
}

void Device::selectGraph(int which) {
  if (which != 0 && which != 1)
    fatal("gnnrtUseGraph: no graph #" + std::to_string(which));
  if (which == 1 && !hasWholeGraph())
    fatal("gnnrtUseGraph: the program reads the whole graph (feature "
          "partitioning) but none is bound");
  selected = which;
  boundGraph = graphs[which];
}
