//===- Spill.cpp - the slow tier on the CPU: spill files ------------------===//

#include "Spill.h"

#include "Context.h"
#include "Device.h"
#include "File.h"
#include "Memory.h"
#include "gnnrt/GNNRuntime.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iterator>
#include <limits>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gnnrt {

namespace {

constexpr int64_t kMaxOffset = std::numeric_limits<int64_t>::max();
/// The most one pread/pwrite moves (Linux moves at most 0x7ffff000 anyway).
constexpr int64_t kMaxTransfer = int64_t(1) << 30;

/// `bytes` rounded up to a block; false when that overflows.
bool roundUpToBlock(int64_t bytes, int64_t &rounded) {
  if (bytes < 0 || bytes > kMaxOffset - (SpillFile::kBlock - 1))
    return false;
  rounded =
      (bytes + SpillFile::kBlock - 1) / SpillFile::kBlock * SpillFile::kBlock;
  return true;
}

/// Writes all `n` bytes at `offset`: retries EINTR, continues short writes.
/// False with errno's value in `err`.
bool pwriteAll(int fd, const char *p, int64_t n, int64_t offset, int &err) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd, p, static_cast<size_t>(std::min(n, kMaxTransfer)),
                         static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR)
        continue;
      err = errno;
      return false;
    }
    if (w == 0) { // no progress and no error: do not spin
      err = EIO;
      return false;
    }
    p += w;
    n -= w;
    offset += w;
  }
  return true;
}

/// strerror with what helps for the two ways storage runs out.
std::string describeError(int err) {
  std::string s = std::strerror(err);
  if (err == ENOSPC)
    s += " (the spill directory's file system is full)";
  else if (err == EFBIG)
    s += " (the file size limit, ulimit -f)";
  else if (err == EDQUOT)
    s += " (the disk quota)";
  return s;
}

/// A write past RLIMIT_FSIZE raises SIGXFSZ, which kills the process unless
/// ignored; ignored, the write fails with EFBIG and is reported. A handler
/// somebody installed is left alone.
void ignoreFileSizeSignal() {
  struct sigaction old;
  if (sigaction(SIGXFSZ, nullptr, &old) == 0 && old.sa_handler == SIG_DFL)
    std::signal(SIGXFSZ, SIG_IGN);
}

} // namespace

//===----------------------------------------------------------------------===//
// SpillFile
//===----------------------------------------------------------------------===//

std::unique_ptr<SpillFile> SpillFile::create(const std::string &dirArg,
                                             std::string &error) {
  std::string dir = dirArg;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  if (dir.empty()) {
    error = "the spill directory is an empty path";
    return nullptr;
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    error = dir + ": " + std::strerror(errno);
    return nullptr;
  }
  if (!S_ISDIR(st.st_mode)) {
    error = dir + ": " + std::strerror(ENOTDIR);
    return nullptr;
  }
  ignoreFileSizeSignal();
  // O_EXCL: a fresh file, never one that exists (or a symlink planted under
  // the name). A name taken (a file left by a process of the same pid that
  // was killed between its create and unlink) moves on to the next.
  const std::string base = (dir == "/" ? "" : dir) + "/gnnrt-spill-" +
                           std::to_string(static_cast<long long>(getpid())) +
                           "-";
  static int serial = 0;
  int fd = -1;
  std::string path;
  for (int attempt = 0; attempt < 1000 && fd < 0; ++attempt) {
    path = base + std::to_string(serial++);
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST && errno != EINTR) {
      error =
          dir + ": cannot create a spill file there: " + std::strerror(errno);
      return nullptr;
    }
  }
  if (fd < 0) {
    error = dir + ": cannot create a spill file there: every name tried (" +
            base + "*) exists";
    return nullptr;
  }
  // Unlinked at once: whatever ends the run, nothing is left behind.
  if (::unlink(path.c_str()) != 0) {
    int err = errno;
    ::close(fd);
    error = path + ": cannot unlink the spill file just created: " +
            std::strerror(err);
    return nullptr;
  }
  std::unique_ptr<SpillFile> file(new SpillFile(fd, path));
  // The directory takes data too (not only a name): one block, then gone.
  std::vector<char> block(kBlock, 0);
  int err = 0;
  if (!pwriteAll(fd, block.data(), kBlock, 0, err)) {
    error = dir + ": cannot write a spill file there: " + describeError(err);
    return nullptr;
  }
  if (!writeThrough(fd, 0, kBlock, err)) {
    error = dir +
            ": --uncached-reads cannot write a spill file through to "
            "the device there: " +
            describeError(err);
    return nullptr;
  }
  if (::ftruncate(fd, 0) != 0) {
    error =
        dir + ": cannot truncate a spill file there: " + std::strerror(errno);
    return nullptr;
  }
  return file;
}

SpillFile::SpillFile(int fd, std::string path)
    : fd(fd), filePath(std::move(path)) {}

SpillFile::~SpillFile() {
  forgetCachedFile(fd);
  if (fd >= 0)
    ::close(fd);
}

void SpillFile::dropCache(const SpillExtent &where) const {
  dropCachedRange(fd, where.offset, where.bytes);
}

bool SpillFile::write(const void *data, int64_t bytes, SpillExtent &where,
                      std::string &error) {
  int64_t reserve;
  if (!roundUpToBlock(bytes, reserve)) {
    error = filePath + ": cannot spill " + std::to_string(bytes) + " bytes";
    return false;
  }
  if (reserve == 0) { // nothing to store
    where = SpillExtent{0, 0};
    return true;
  }
  // Fresh space: the first free range that holds it, else the end.
  int64_t offset = -1;
  for (auto it = freeSpace.begin(); it != freeSpace.end(); ++it) {
    if (it->second >= reserve) {
      offset = it->first;
      break;
    }
  }
  bool atEnd = offset < 0;
  if (atEnd) {
    if (fileEnd > kMaxOffset - reserve) {
      error = filePath + ": spilling " + std::to_string(bytes) +
              " bytes more would make the file larger than 2^63 bytes";
      return false;
    }
    offset = fileEnd;
  }
  int err = 0;
  // Under --uncached-reads the write goes through to the device (File.h).
  if (!pwriteAll(fd, static_cast<const char *>(data), bytes, offset, err) ||
      !writeThrough(fd, offset, bytes, err)) {
    // The range is free again (it was taken from nowhere yet); what a partial
    // write appended past the end is cut off so that it takes no space.
    if (atEnd)
      (void)!::ftruncate(fd, fileEnd);
    error = filePath + ": writing " + std::to_string(bytes) +
            " bytes at offset " + std::to_string(offset) + ": " +
            describeError(err);
    return false;
  }
  // Committed: only now is the range taken.
  if (atEnd) {
    fileEnd = offset + reserve;
  } else {
    auto it = freeSpace.find(offset);
    int64_t rest = it->second - reserve;
    freeSpace.erase(it);
    if (rest > 0)
      freeSpace.emplace(offset + reserve, rest);
  }
  inUse += reserve;
  where = SpillExtent{offset, bytes};
  return true;
}

bool SpillFile::read(const SpillExtent &where, void *data,
                     std::string &error) const {
  return readAt(fd, filePath, where.offset, data, where.bytes, error);
}

bool SpillFile::readPart(const SpillExtent &where, int64_t offset, void *data,
                         int64_t bytes, std::string &error) const {
  if (offset < 0 || bytes < 0 || offset + bytes > where.bytes) {
    error = filePath + ": a read outside its extent";
    return false;
  }
  return readAt(fd, filePath, where.offset + offset, data, bytes, error);
}

void SpillFile::release(const SpillExtent &where) {
  int64_t reserve;
  if (!roundUpToBlock(where.bytes, reserve) || reserve == 0)
    return;
  inUse -= reserve;
  int64_t offset = where.offset, length = reserve;
  // Coalesce with the free ranges on either side.
  auto next = freeSpace.lower_bound(offset);
  if (next != freeSpace.end() && offset + length == next->first) {
    length += next->second;
    next = freeSpace.erase(next);
  }
  if (next != freeSpace.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      offset = prev->first;
      length += prev->second;
      freeSpace.erase(prev);
    }
  }
  if (offset + length == fileEnd) {
    // Free space at the end: the file gets shorter.
    fileEnd = offset;
    (void)!::ftruncate(fd, fileEnd);
    return;
  }
  freeSpace.emplace(offset, length);
  // Inside the file: give the blocks back where the file system can (the
  // range is rewritten before it is read again, so a failure is harmless).
#ifdef FALLOC_FL_PUNCH_HOLE
  (void)!::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                     static_cast<off_t>(where.offset),
                     static_cast<off_t>(reserve));
#endif
}

//===----------------------------------------------------------------------===//
// SpillStore
//===----------------------------------------------------------------------===//

SpillStore::SpillStore(std::unique_ptr<SpillFile> file)
    : storage(std::move(file)) {}

std::unique_ptr<SpillStore> SpillStore::open(const std::string &dir,
                                             std::string &error) {
  std::unique_ptr<SpillFile> file = SpillFile::create(dir, error);
  if (!file)
    return nullptr;
  return std::make_unique<SpillStore>(std::move(file));
}

int64_t SpillStore::evictedSize(int64_t slot) const {
  auto it = copies.find(slot);
  return it == copies.end() || !isEvicted(slot) ? -1 : it->second.elements;
}

bool SpillStore::evict(int64_t slot, Device &device,
                       std::unique_ptr<Buffer> &buf, std::string &error) {
  const std::string what = "slot " + std::to_string(slot);
  if (isEvicted(slot) || !buf) {
    error = what + ": " + (buf ? "already evicted" : "no buffer to evict");
    return false;
  }
  const int64_t elements = buf->size;
  if (elements < 0 ||
      elements > kMaxOffset / static_cast<int64_t>(sizeof(float))) {
    error = what + ": a buffer of " + std::to_string(elements) + " floats";
    return false;
  }
  const int64_t bytes = elements * static_cast<int64_t>(sizeof(float));
  // The work issued on the buffer is done before it is read; on the CPU the
  // view is the memory itself.
  device.synchronize();
  const void *host = device.hostView(buf->data, bytes, staging);
  SpillExtent extent;
  if (!storage->write(host, bytes, extent, error)) {
    error = what + " (" + formatBytes(bytes) + "): " + error;
    return false;
  }
  // The older copy goes only once the new one is whole.
  discard(slot);
  copies.emplace(slot, Spilled{extent, elements});
  evicted.insert(slot);
  buf.reset(); // the fast tier's memory goes back
  stats.writtenBytes += bytes;
  stats.evictions += 1;
  return true;
}

bool SpillStore::fetch(int64_t slot, Device &device,
                       std::unique_ptr<Buffer> &buf, std::string &error) {
  const std::string what = "slot " + std::to_string(slot);
  auto it = copies.find(slot);
  if (it == copies.end() || !isEvicted(slot)) {
    error = what + ": not evicted";
    return false;
  }
  const Spilled s = it->second;
  const int64_t bytes = s.extent.bytes;
  auto fresh = std::make_unique<Buffer>(device, s.elements);
  if (!readInto(device, s.extent, fresh->data, bytes, error)) {
    error = what + " (" + formatBytes(bytes) + "): " + error;
    return false; // `fresh` is freed; the slot stays evicted
  }
  evicted.erase(slot); // resident, and its copy is still current
  buf = std::move(fresh);
  stats.readBytes += bytes;
  stats.fetches += 1;
  return true;
}

bool SpillStore::dropToCopy(int64_t slot, std::unique_ptr<Buffer> &buf,
                            std::string &error) {
  const std::string what = "slot " + std::to_string(slot);
  if (!buf || isEvicted(slot)) {
    error = what + ": not resident";
    return false;
  }
  auto it = copies.find(slot);
  if (it == copies.end() || it->second.elements != buf->size) {
    error = what + ": no copy of it in the spill file to drop to";
    return false;
  }
  evicted.insert(slot);
  buf.reset();
  return true;
}

void SpillStore::discard(int64_t slot) {
  auto it = copies.find(slot);
  if (it == copies.end())
    return;
  storage->release(it->second.extent);
  copies.erase(it);
  evicted.erase(slot);
}

void SpillStore::discardAll() {
  for (const auto &[slot, s] : copies)
    storage->release(s.extent);
  copies.clear();
  evicted.clear();
  // The buffers' memory is restored by discardRanges before they are freed
  // (gnnrtDrop); what is left here are copies only.
  for (const auto &[slot, byOffset] : ranges)
    for (const auto &[offset, r] : byOffset)
      storage->release(r.extent);
  ranges.clear();
}

/// "slot S range [offset, +count)", for messages.
static std::string rangeName(int64_t slot, int64_t offset, int64_t count) {
  return "slot " + std::to_string(slot) + " range [" + std::to_string(offset) +
         ", +" + std::to_string(count) + ")";
}

SpillStore::RangeCopy *SpillStore::findRange(int64_t slot, const Buffer &buf,
                                             int64_t offset, int64_t count,
                                             std::string &error) {
  const std::string what = rangeName(slot, offset, count);
  if (offset < 0 || count <= 0 || offset > buf.size - count) {
    error = what + ": outside its buffer of " + std::to_string(buf.size) +
            " floats";
    return nullptr;
  }
  auto &byOffset = ranges[slot];
  auto it = byOffset.upper_bound(offset);
  // The range starting at or before `offset`, and the next one.
  if (it != byOffset.begin()) {
    auto prev = std::prev(it);
    if (prev->first == offset && prev->second.count == count)
      return &prev->second;
    if (prev->first + prev->second.count > offset) {
      error = what + ": overlaps its range [" + std::to_string(prev->first) +
              ", +" + std::to_string(prev->second.count) + ")";
      return nullptr;
    }
  }
  if (it != byOffset.end() && it->first < offset + count) {
    error = what + ": overlaps its range [" + std::to_string(it->first) +
            ", +" + std::to_string(it->second.count) + ")";
    return nullptr;
  }
  return nullptr;
}

bool SpillStore::evictRange(int64_t slot, Device &device, Buffer &buf,
                            int64_t offset, int64_t count, std::string &error) {
  error.clear();
  RangeCopy *r = findRange(slot, buf, offset, count, error);
  if (!error.empty())
    return false;
  if (r && r->out)
    return true; // already out
  const int64_t bytes = count * static_cast<int64_t>(sizeof(float));
  device.synchronize();
  float *data = buf.data + offset;
  const void *host = device.hostView(data, bytes, staging);
  SpillExtent extent;
  if (!storage->write(host, bytes, extent, error)) {
    error = rangeName(slot, offset, count) + " (" + formatBytes(bytes) +
            "): " + error;
    return false;
  }
  if (r)
    storage->release(r->extent); // the older copy, once the new is whole
  RangeCopy fresh{count, extent, true, device.releasePages(data, bytes)};
  ranges[slot][offset] = fresh;
  stats.writtenBytes += bytes;
  stats.evictions += 1;
  return true;
}

bool SpillStore::readInto(Device &device, float *data, int64_t bytes,
                          const std::function<bool(void *)> &read) {
  if (device.deviceMemoryIsHostMemory())
    return read(data);
  staging.resize(static_cast<size_t>(bytes));
  if (!read(staging.data()))
    return false;
  device.copy(data, MemoryTier::Device, staging.data(), MemoryTier::Host,
              bytes);
  return true;
}

bool SpillStore::fetchRange(int64_t slot, Device &device, Buffer &buf,
                            int64_t offset, int64_t count, std::string &error) {
  error.clear();
  RangeCopy *r = findRange(slot, buf, offset, count, error);
  if (!error.empty())
    return false;
  if (!r) {
    error = rangeName(slot, offset, count) + ": never evicted";
    return false;
  }
  if (!r->out)
    return true; // resident
  const int64_t bytes = count * static_cast<int64_t>(sizeof(float));
  float *data = buf.data + offset;
  device.restorePages(data, bytes, r->released);
  if (!readInto(device, r->extent, data, bytes, error)) {
    r->released = device.releasePages(data, bytes); // out, as before
    error = rangeName(slot, offset, count) + " (" + formatBytes(bytes) +
            "): " + error;
    return false;
  }
  r->out = false;
  r->released = 0;
  stats.readBytes += bytes;
  stats.fetches += 1;
  return true;
}

bool SpillStore::dropRange(int64_t slot, Device &device, Buffer &buf,
                           int64_t offset, int64_t count, bool keep,
                           std::string &error) {
  error.clear();
  RangeCopy *r = findRange(slot, buf, offset, count, error);
  if (!error.empty())
    return false;
  const int64_t bytes = count * static_cast<int64_t>(sizeof(float));
  float *data = buf.data + offset;
  if (keep) {
    if (!r) {
      error = rangeName(slot, offset, count) +
              ": no copy of it in the spill file to drop to";
      return false;
    }
    if (!r->out) {
      r->released = device.releasePages(data, bytes);
      r->out = true;
    }
    return true;
  }
  if (!r)
    return true; // no record: nothing to forget
  if (r->out)
    device.restorePages(data, bytes, r->released);
  storage->release(r->extent);
  ranges[slot].erase(offset);
  return true;
}

bool SpillStore::hasEvictedRanges(int64_t slot) const {
  auto it = ranges.find(slot);
  if (it == ranges.end())
    return false;
  for (const auto &[offset, r] : it->second)
    if (r.out)
      return true;
  return false;
}

void SpillStore::discardRanges(int64_t slot, Device &device, Buffer *buf) {
  auto it = ranges.find(slot);
  if (it == ranges.end())
    return;
  for (const auto &[offset, r] : it->second) {
    if (r.out && buf)
      device.restorePages(buf->data + offset,
                          r.count * static_cast<int64_t>(sizeof(float)),
                          r.released);
    storage->release(r.extent);
  }
  ranges.erase(it);
}

} // namespace gnnrt
