//===- Device.cpp - what every gnnrt device shares ------------------------===//
//
// The memory counters (every device counts allocations and copies the same
// way), the host's view of device memory, the graph's checks and Buffer.
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "Context.h"

#include <algorithm>
#include <string>

using namespace gnnrt;

MemoryCounters Device::memoryCounters() const {
  std::lock_guard<std::mutex> lock(memoryMutex);
  return counters;
}

void Device::recordAllocation(void *ptr, int64_t bytes, MemoryTier tier) {
  std::lock_guard<std::mutex> lock(memoryMutex);
  if (!allocations.emplace(ptr, Allocation{bytes, tier}).second)
    fatal(std::string(name()) + " device: allocate returned a live pointer");
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

MemoryTier Device::recordFree(void *ptr) {
  std::lock_guard<std::mutex> lock(memoryMutex);
  auto it = allocations.find(ptr);
  if (it == allocations.end())
    fatal(std::string(name()) +
          " device: free of memory it did not allocate (or freed already)");
  const Allocation a = it->second;
  allocations.erase(it);
  if (a.tier == MemoryTier::Device) {
    counters.live -= a.bytes;
    counters.freed += a.bytes;
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

void Device::checkGraph(const GraphArrays &graph) {
  const size_t V = graph.dstOffsets.empty() ? 0 : graph.dstOffsets.size() - 1;
  const size_t E = graph.src.size();
  const bool ok = graph.dstOffsets.size() == V + 1 &&
                  graph.srcOffsets.size() == V + 1 && graph.dst.size() == E &&
                  graph.csrEdge.size() == E && graph.csrDst.size() == E &&
                  graph.inDegree.size() == V && graph.outDegree.size() == V;
  if (!ok)
    fatal("bindGraph: the graph's arrays disagree in size");
}

Buffer::Buffer(Device &device, int64_t n) : device(&device), size(n) {
  data = static_cast<float *>(device.allocate(
      static_cast<int64_t>(sizeof(float)) * std::max<int64_t>(n, 0),
      MemoryTier::Device));
}

Buffer::~Buffer() { device->free(data); }
