//===- ReadAhead.cpp - hints for the reads a run repeats ------------------===//

#include "ReadAhead.h"

#include <fcntl.h>

#include <vector>

using namespace gnnrt;

size_t ReadAhead::Hash::operator()(const Key &k) const {
  uint64_t h = static_cast<uint64_t>(k.fd) * 0x9e3779b97f4a7c15ULL;
  h ^= static_cast<uint64_t>(k.offset) + 0x6a09e667f3bcc909ULL + (h << 6) +
       (h >> 2);
  h ^= static_cast<uint64_t>(k.bytes) + 0xbb67ae8584caa73bULL + (h << 6) +
       (h >> 2);
  return static_cast<size_t>(h);
}

ReadAhead &ReadAhead::process() {
  static ReadAhead readAhead;
  return readAhead;
}

void ReadAhead::setDepth(int reads) {
  std::lock_guard<std::mutex> lock(mutex);
  depth_ = reads < 0 ? 0 : reads;
}

void ReadAhead::completed(int fd, int64_t offset, int64_t bytes) {
  if (bytes < kMinBytes)
    return;
  // This thread's read before (a thread's reads are one program's order: the
  // step's fetches, or the prefetch thread's sub-chunks).
  thread_local Key last;
  thread_local uint64_t lastGeneration = ~uint64_t(0);
  const Key key{fd, offset, bytes};
  std::vector<Key> hints;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (depth_ == 0)
      return;
    if (lastGeneration == generation && !(last == key)) {
      auto [it, added] = next.insert({last, key});
      if (!added)
        it->second = key;
      count.learnt += added;
    }
    last = key;
    lastGeneration = generation;
    int64_t hinted = 0;
    Key at = key;
    for (int d = 0; d < depth_; ++d) {
      auto it = next.find(at);
      if (it == next.end() || it->second == key)
        break;
      at = it->second;
      if (hinted + at.bytes > kMostBytes)
        break;
      hints.push_back(at);
      hinted += at.bytes;
    }
    count.hints += static_cast<int64_t>(hints.size());
    count.hintedBytes += hinted;
  }
  for (const Key &h : hints)
    (void)::posix_fadvise(h.fd, static_cast<off_t>(h.offset),
                          static_cast<off_t>(h.bytes), POSIX_FADV_WILLNEED);
}

ReadAhead::Counters ReadAhead::counters() const {
  std::lock_guard<std::mutex> lock(mutex);
  return count;
}

void ReadAhead::reset() {
  std::lock_guard<std::mutex> lock(mutex);
  next.clear();
  ++generation;
  count = Counters();
}
