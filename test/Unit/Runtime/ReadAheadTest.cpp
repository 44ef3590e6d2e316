//===- ReadAheadTest.cpp - hints for the reads a run repeats --------------===//
//
// ReadAhead learns each read's successor and, when a read repeats, hints the
// reads that followed it (depth reads, at most kMostBytes): the counters say
// which; reads below kMinBytes, a depth of 0 and a reset leave nothing
// learnt or hinted. On a real file under --uncached-reads (every range read
// leaves the page cache), the hinted range comes back into the page cache
// before it is read (mincore), and an unhinted one does not.
//
//===----------------------------------------------------------------------===//

#include "ReadAhead.h"
#include "File.h"
#include "PageCache.h"
#include "TempDir.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

using namespace gnnrt;

namespace {

constexpr int64_t kMiB = 1 << 20;

/// A fresh table of the given depth, reset again when the test ends.
struct Fresh {
  explicit Fresh(int depth) {
    ReadAhead::process().reset();
    ReadAhead::process().setDepth(depth);
  }
  ~Fresh() {
    ReadAhead::process().reset();
    ReadAhead::process().setDepth(2);
  }
};

} // namespace

TEST(RuntimeReadAhead, LearnsSuccessorsAndHintsThemWhenAReadRepeats) {
  Fresh fresh(2);
  ReadAhead &ra = ReadAhead::process();
  // An epoch of four reads, then the next epoch's first two.
  for (int64_t at : {0, 1, 2, 3})
    ra.completed(-7, at * kMiB, kMiB);
  EXPECT_EQ(ra.counters().learnt, 3); // 0->1, 1->2, 2->3
  EXPECT_EQ(ra.counters().hints, 0);
  ra.completed(-7, 0, kMiB); // 3->0 learnt; hints 1 and 2
  EXPECT_EQ(ra.counters().learnt, 4);
  EXPECT_EQ(ra.counters().hints, 2);
  EXPECT_EQ(ra.counters().hintedBytes, 2 * kMiB);
  ra.completed(-7, kMiB, kMiB); // hints 2 and 3
  EXPECT_EQ(ra.counters().hints, 4);
  // The same read again is no successor of itself; a small read is no read.
  ra.completed(-7, kMiB, kMiB);
  ra.completed(-7, 5 * kMiB, ReadAhead::kMinBytes - 1);
  EXPECT_EQ(ra.counters().learnt, 4);
  // Another file's range at the same offset is another read; it becomes
  // the successor of the read before it (the newest order wins), and the
  // loop of the two hints one read.
  const int64_t hints = ra.counters().hints;
  ra.completed(-8, 0, kMiB);
  EXPECT_EQ(ra.counters().learnt, 4); // 1's successor replaced
  ra.completed(-7, kMiB, kMiB);
  EXPECT_EQ(ra.counters().learnt, 5);
  EXPECT_EQ(ra.counters().hints, hints + 1);
  EXPECT_EQ(ra.counters().hintedBytes, 2 * kMiB + 2 * kMiB + 2 * kMiB + kMiB);
}

TEST(RuntimeReadAhead, HintsStopAtTheByteCapTheLoopAndDepthZero) {
  {
    Fresh fresh(8);
    ReadAhead &ra = ReadAhead::process();
    // A loop of three reads: after a repeat the hints stop where the loop
    // comes back to the read itself.
    for (int round = 0; round < 2; ++round)
      for (int64_t at : {0, 1, 2})
        ra.completed(-3, at * kMiB, kMiB);
    // Round two: each read hints the other two.
    EXPECT_EQ(ra.counters().hints, 2 + 2 + 2);
    // Big reads: the cap holds the hints to kMostBytes.
    ra.reset();
    const int64_t big = ReadAhead::kMostBytes / 2 + 1;
    for (int round = 0; round < 2; ++round)
      for (int64_t at : {0, 1, 2, 3})
        ra.completed(-3, at * big, big);
    EXPECT_EQ(ra.counters().hints, 4); // one per read of round two
  }
  Fresh off(0);
  ReadAhead &ra = ReadAhead::process();
  for (int round = 0; round < 2; ++round)
    for (int64_t at : {0, 1, 2})
      ra.completed(-3, at * kMiB, kMiB);
  EXPECT_EQ(ra.counters().learnt, 0);
  EXPECT_EQ(ra.counters().hints, 0);
}

TEST(RuntimeReadAhead, AHintedRangeIsInThePageCacheBeforeItIsRead) {
  test::TempDir dir("gnnrt-read-ahead-test");
  ASSERT_FALSE(dir.path.empty());
  if (!test::pageCacheWorks(dir.path))
    GTEST_SKIP() << dir.path << " keeps no page cache that can be dropped";
  const std::string path = dir.path + "/file";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  // Ranges A, B, C, D of 1 MiB at 0, 40, 20 and 56 MiB: further apart than
  // the kernel's own read-ahead reaches (8 MiB on the machine it was
  // written on), which would cache the next MiB of a sequential file
  // without any hint.
  const int64_t bytes = 64 * kMiB, A = 0, B = 40 * kMiB, C = 20 * kMiB,
                D = 56 * kMiB;
  std::vector<char> data(bytes, 'x');
  ASSERT_EQ(pwrite(fd, data.data(), bytes, 0), bytes);
  ASSERT_EQ(fdatasync(fd), 0);
  Fresh fresh(1);
  test::Uncached uncached;
  std::string error;
  // Epoch one: A, B, C, each dropped after it is read.
  for (int64_t at : {A, B, C})
    ASSERT_TRUE(readAt(fd, "file", at, data.data(), kMiB, error)) << error;
  (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ASSERT_EQ(test::cachedPages(fd, B, kMiB), 0);
  // Epoch two: A again hints B, which comes into the cache by itself; D,
  // never read, stays out.
  ASSERT_TRUE(readAt(fd, "file", A, data.data(), kMiB, error)) << error;
  const int64_t pages = kMiB / sysconf(_SC_PAGESIZE);
  int64_t cached = 0;
  for (int tries = 0; tries < 200 && cached < pages; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    cached = test::cachedPages(fd, B, kMiB);
  }
  EXPECT_EQ(cached, pages);
  EXPECT_EQ(test::cachedPages(fd, D, kMiB), 0);
  EXPECT_EQ(test::cachedPages(fd, C, kMiB), 0);
  EXPECT_EQ(ReadAhead::process().counters().hints, 1);
  close(fd);
}
