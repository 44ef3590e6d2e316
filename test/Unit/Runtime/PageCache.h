//===- PageCache.h - what a test sees of the page cache ---------*- C++ -*-===//
//
// The runtime's --uncached-reads acts on the kernel's page cache: tests
// count a file's cached pages with mincore, switch the flag for a scope, and
// skip where the file system keeps no page cache that can be dropped.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_TEST_PAGECACHE_H
#define GNNRT_TEST_PAGECACHE_H

#include "File.h"

#include <cstdint>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace gnnrt::test {

/// The pages of [offset, offset + bytes) of `fd` in the page cache (mincore
/// over a mapping of them, which faults nothing in), or -1.
inline int64_t cachedPages(int fd, int64_t offset, int64_t bytes) {
  const int64_t page = sysconf(_SC_PAGESIZE);
  const int64_t first = offset / page * page;
  const size_t length = static_cast<size_t>(offset + bytes - first);
  void *map = mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, first);
  if (map == MAP_FAILED)
    return -1;
  std::vector<unsigned char> in((length + page - 1) / page);
  int64_t count = -1;
  if (mincore(map, length, in.data()) == 0) {
    count = 0;
    for (unsigned char c : in)
      count += c & 1;
  }
  munmap(map, length);
  return count;
}

/// --uncached-reads for one scope (the flag is the process's).
struct Uncached {
  Uncached() { setUncachedReads(true); }
  ~Uncached() { setUncachedReads(false); }
};

/// Whether files in `dir` keep what is read in the page cache and can
/// write a page through and drop it (not a tmpfs, whose pages are its
/// storage, nor an overlay on one, nor a file system without a page cache).
inline bool pageCacheWorks(const std::string &dir) {
  const std::string path = dir + "/probe";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT, 0600);
  if (fd < 0)
    return false;
  std::vector<char> page(65536, 1);
  int err = 0;
  bool works = pwrite(fd, page.data(), page.size(), 0) ==
                   static_cast<ssize_t>(page.size()) &&
               fdatasync(fd) == 0 &&
               pread(fd, page.data(), page.size(), 0) ==
                   static_cast<ssize_t>(page.size());
  works = works && cachedPages(fd, 0, page.size()) > 0;
  {
    Uncached uncached;
    works = works && writeThrough(fd, 0, page.size(), err) &&
            cachedPages(fd, 0, page.size()) == 0;
  }
  close(fd);
  unlink(path.c_str());
  return works;
}

} // namespace gnnrt::test

#endif // GNNRT_TEST_PAGECACHE_H
