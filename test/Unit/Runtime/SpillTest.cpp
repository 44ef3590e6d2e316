//===- SpillTest.cpp - the CPU's slow tier: spill files, evict and fetch --===//
//
// Slot buffers go through gnnrtEvict / gnnrtFetch and come back bit for bit,
// many slots interleaved with writes in between; the byte counters and the
// counts are exact; an eviction frees the device memory (its counters' live
// bytes drop) and a fetch allocates it again; evicting an evicted slot and
// fetching a resident one do nothing; the errors of the ABI (a slot never
// allocated, no spill directory, gnnrtBuffer on an evicted slot) and of the
// storage (a missing directory, a file, a directory where nothing can be
// created, ENOSPC, EFBIG under RLIMIT_FSIZE) are one line naming the place,
// and a failed write leaves the slot resident and what was spilled before
// intact. The spill file never appears in the directory. Under
// --uncached-reads a spill write and the pages wholly inside a read leave
// the page cache, pages read in part stay until the driver drops every file
// (mincore).
//
//===----------------------------------------------------------------------===//

#include "Spill.h"
#include "Context.h"
#include "Device.h"
#include "File.h"
#include "PageCache.h"
#include "TempDir.h"
#include "gnnrt/GNNRuntime.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gnnrt;

namespace {

struct TempDir : test::TempDir {
  TempDir() : test::TempDir("gnnrt-spill-test") {}
};

/// The names in `dir` other than . and ..
std::vector<std::string> listDir(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
        names.push_back(e->d_name);
    closedir(d);
  }
  return names;
}

/// A context with a spill store in `dir`.
std::unique_ptr<gnnrtContext> spillingContext(const std::string &dir) {
  auto ctx = std::make_unique<gnnrtContext>();
  std::string error;
  ctx->spill = SpillStore::open(dir, error);
  EXPECT_TRUE(ctx->spill) << error;
  return ctx;
}

/// Slot `slot`'s buffer of `n` floats (gnnrtBuffer), as raw words.
uint32_t *slotWords(gnnrtContext *ctx, int64_t slot, int64_t n) {
  gnnrtMemRefF32 m;
  _mlir_ciface_gnnrtBuffer(&m, ctx, slot, n);
  return reinterpret_cast<uint32_t *>(m.aligned + m.offset);
}

/// Random words: every f32 bit pattern, NaNs and denormals included.
std::vector<uint32_t> randomWords(std::mt19937_64 &rng, int64_t n) {
  std::vector<uint32_t> w(static_cast<size_t>(n));
  for (uint32_t &x : w)
    x = static_cast<uint32_t>(rng());
  return w;
}

bool sameWords(const uint32_t *a, const std::vector<uint32_t> &b) {
  return b.empty() || std::memcmp(a, b.data(), b.size() * 4) == 0;
}

/// Sets RLIMIT_FSIZE's soft limit for the scope.
struct FileSizeLimit {
  rlimit saved{};
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved);
    rlimit r = saved;
    r.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &r);
  }
  ~FileSizeLimit() { setrlimit(RLIMIT_FSIZE, &saved); }
};

} // namespace

TEST(RuntimeSpill, RandomBuffersRoundTripBitExactAndMemoryIsFreed) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  auto ctx = spillingContext(dir.path);
  std::mt19937_64 rng(1);
  // Sizes around the 4 KiB block (1024 floats), empty, and a large one.
  const std::vector<int64_t> sizes = {0, 1, 7, 1023, 1024, 1025, 4096, 3 << 18};
  std::vector<std::vector<uint32_t>> want;
  int64_t total = 0;
  for (size_t s = 0; s < sizes.size(); ++s) {
    want.push_back(randomWords(rng, sizes[s]));
    if (sizes[s])
      std::memcpy(slotWords(ctx.get(), s, sizes[s]), want[s].data(),
                  sizes[s] * 4);
    else
      slotWords(ctx.get(), s, 0);
    total += sizes[s] * 4;
  }
  const MemoryCounters before = ctx->device->memoryCounters();
  for (size_t s = 0; s < sizes.size(); ++s)
    gnnrtEvict(ctx.get(), s);
  const MemoryCounters evicted = ctx->device->memoryCounters();
  EXPECT_EQ(evicted.live, before.live - total);
  EXPECT_EQ(evicted.freed, before.freed + total);
  EXPECT_EQ(ctx->spill->counters().writtenBytes, total);
  EXPECT_EQ(ctx->spill->counters().evictions, int64_t(sizes.size()));
  for (size_t s = 0; s < sizes.size(); ++s) {
    EXPECT_TRUE(ctx->spill->isEvicted(s));
    EXPECT_EQ(ctx->spill->evictedSize(s), sizes[s]);
    EXPECT_FALSE(ctx->buffers[s]);
  }
  EXPECT_TRUE(listDir(dir.path).empty()) << "the spill file has a name";
  // Fetched in another order than evicted.
  for (size_t k = sizes.size(); k-- > 0;) {
    gnnrtFetch(ctx.get(), k);
    EXPECT_FALSE(ctx->spill->isEvicted(k));
    EXPECT_TRUE(sameWords(slotWords(ctx.get(), k, sizes[k]), want[k]))
        << "slot " << k << " of " << sizes[k] << " floats";
  }
  const MemoryCounters fetched = ctx->device->memoryCounters();
  EXPECT_EQ(fetched.live, before.live);
  EXPECT_EQ(fetched.allocated, evicted.allocated + total);
  EXPECT_EQ(ctx->spill->counters().readBytes, total);
  EXPECT_EQ(ctx->spill->counters().fetches, int64_t(sizes.size()));
  // gnnrtBuffer did not allocate anything more for the fetched slots.
  EXPECT_EQ(ctx->device->memoryCounters().allocated, fetched.allocated);
  // The copies stay (a fetch keeps them) until the contents are dead.
  int64_t blocks = 0;
  for (int64_t n : sizes)
    blocks += (n * 4 + 4095) / 4096 * 4096;
  EXPECT_EQ(ctx->spill->file().bytesInUse(), blocks);
  for (size_t s = 0; s < sizes.size(); ++s)
    EXPECT_TRUE(ctx->spill->hasCopy(s));
  gnnrtDropAll(ctx.get());
  EXPECT_EQ(ctx->spill->file().bytesInUse(), 0);
  EXPECT_EQ(ctx->spill->file().end(), 0);
  EXPECT_EQ(ctx->device->memoryCounters().live, before.live - total);
  for (size_t s = 0; s < sizes.size(); ++s) {
    EXPECT_FALSE(ctx->spill->hasCopy(s));
    EXPECT_FALSE(ctx->spill->isEvicted(s));
    EXPECT_FALSE(ctx->buffers[s]);
  }
}

// gnnrtDrop: with the copy kept, a fetched slot leaves at no I/O and comes
// back bit for bit; without, its contents and copy are gone and the next
// gnnrtBuffer allocates it afresh; a slot that was never evicted has no copy
// to drop to.
TEST(RuntimeSpill, DropKeepsOrForgetsTheCopy) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  auto ctx = spillingContext(dir.path);
  std::mt19937_64 rng(3);
  auto a = randomWords(rng, 5000);
  std::memcpy(slotWords(ctx.get(), 0, 5000), a.data(), 20000);
  gnnrtEvict(ctx.get(), 0);
  gnnrtFetch(ctx.get(), 0);
  const SpillCounters once = ctx->spill->counters();
  const int64_t live = ctx->device->memoryCounters().live;
  gnnrtDrop(ctx.get(), 0, 1);
  EXPECT_TRUE(ctx->spill->isEvicted(0));
  EXPECT_EQ(ctx->device->memoryCounters().live, live - 20000);
  EXPECT_EQ(ctx->spill->counters().writtenBytes, once.writtenBytes);
  gnnrtDrop(ctx.get(), 0, 1); // already out: nothing
  gnnrtFetch(ctx.get(), 0);
  EXPECT_TRUE(sameWords(slotWords(ctx.get(), 0, 5000), a));
  EXPECT_EQ(ctx->spill->counters().readBytes, 2 * once.readBytes);
  gnnrtDrop(ctx.get(), 0, 0);
  EXPECT_FALSE(ctx->spill->hasCopy(0));
  EXPECT_FALSE(ctx->buffers[0]);
  EXPECT_EQ(ctx->spill->file().bytesInUse(), 0);
  gnnrtDrop(ctx.get(), 0, 0);   // holds nothing: nothing
  gnnrtDrop(ctx.get(), 7, 0);   // never allocated: nothing
  slotWords(ctx.get(), 0, 100); // allocated afresh, no fetch needed
  EXPECT_DEATH(gnnrtDrop(ctx.get(), 0, 1),
               "gnnrtDrop: slot 0: no copy of it in the spill file");
}

// Ranges (ABI 6) move at the same address: the memref taken before is still
// the buffer; the whole pages inside an evicted range go back (the device's
// live bytes drop by what was given back) and come back zeroed, then filled
// from the copy; a drop with the copy kept writes nothing; forgetting a
// range restores its memory; gnnrtDropAll with a range out frees cleanly.
TEST(RuntimeSpill, RangesMoveAtTheSameAddress) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  auto ctx = spillingContext(dir.path);
  std::mt19937_64 rng(21);
  // Four chunks of 300,001 floats (not page multiples: the edge pages stay).
  constexpr int64_t kChunk = 300001, kFloats = 4 * kChunk;
  auto want = randomWords(rng, kFloats);
  uint32_t *p = slotWords(ctx.get(), 0, kFloats);
  std::memcpy(p, want.data(), kFloats * 4);
  const int64_t live0 = ctx->device->memoryCounters().live;
  gnnrtEvictRange(ctx.get(), 0, kChunk, kChunk);
  gnnrtEvictRange(ctx.get(), 0, 3 * kChunk, kChunk);
  gnnrtEvictRange(ctx.get(), 0, kChunk, kChunk); // out already: nothing
  const int64_t live1 = ctx->device->memoryCounters().live;
  // Whole pages inside each range: at least the range less two pages.
  EXPECT_LE(live1, live0 - 2 * (kChunk * 4 - 2 * 4096));
  EXPECT_GE(live1, live0 - 2 * kChunk * 4);
  EXPECT_EQ(ctx->spill->counters().writtenBytes, 2 * kChunk * 4);
  EXPECT_TRUE(ctx->spill->hasEvictedRanges(0));
  // The chunks that stayed are untouched.
  EXPECT_EQ(std::memcmp(p, want.data(), kChunk * 4), 0);
  EXPECT_EQ(std::memcmp(p + 2 * kChunk, want.data() + 2 * kChunk, kChunk * 4),
            0);
  gnnrtFetchRange(ctx.get(), 0, kChunk, kChunk);
  EXPECT_EQ(slotWords(ctx.get(), 0, kFloats), p) << "the address moved";
  EXPECT_EQ(std::memcmp(p + kChunk, want.data() + kChunk, kChunk * 4), 0);
  // Back to the copy with no write, and back again.
  const SpillCounters before = ctx->spill->counters();
  gnnrtDropRange(ctx.get(), 0, kChunk, kChunk, 1);
  EXPECT_EQ(ctx->spill->counters().writtenBytes, before.writtenBytes);
  EXPECT_EQ(ctx->device->memoryCounters().live, live1);
  gnnrtFetchRange(ctx.get(), 0, kChunk, kChunk);
  gnnrtFetchRange(ctx.get(), 0, 3 * kChunk, kChunk);
  gnnrtFetchRange(ctx.get(), 0, 3 * kChunk, kChunk); // resident: nothing
  EXPECT_TRUE(sameWords(p, want));
  EXPECT_EQ(ctx->device->memoryCounters().live, live0);
  EXPECT_FALSE(ctx->spill->hasEvictedRanges(0));
  EXPECT_EQ(ctx->spill->counters().readBytes, 3 * kChunk * 4);
  // Forgetting a range that is out restores its memory (contents dead).
  gnnrtEvictRange(ctx.get(), 0, 0, kChunk);
  gnnrtDropRange(ctx.get(), 0, 0, kChunk, 0);
  EXPECT_EQ(ctx->device->memoryCounters().live, live0);
  p[100] = 7; // writable again
  // A range out when everything is dropped: restored before the free.
  gnnrtEvictRange(ctx.get(), 0, 2 * kChunk, kChunk);
  gnnrtDropAll(ctx.get());
  EXPECT_FALSE(ctx->buffers[0]);
  EXPECT_EQ(ctx->spill->file().bytesInUse(), 0);
  EXPECT_EQ(ctx->device->memoryCounters().live, live0 - kFloats * 4);
}

// A range that is out is inaccessible: a kernel reading it faults instead of
// reading zeros. The ABI's errors.
TEST(RuntimeSpill, RangesThatAreOutFaultAndMisuseIsAnError) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  auto ctx = spillingContext(dir.path);
  constexpr int64_t kFloats = 1 << 20;
  volatile uint32_t *p = slotWords(ctx.get(), 0, kFloats);
  gnnrtEvictRange(ctx.get(), 0, 1 << 18, 1 << 18);
  EXPECT_EXIT((void)p[(1 << 18) + 5000], testing::KilledBySignal(SIGSEGV), "");
  EXPECT_EXIT(gnnrtEvictRange(ctx.get(), 0, (1 << 18) + 1, 10),
              testing::ExitedWithCode(1),
              "gnnrtEvictRange: slot 0 range \\[262145, \\+10\\): overlaps its "
              "range \\[262144, \\+262144\\)");
  EXPECT_EXIT(gnnrtEvictRange(ctx.get(), 0, kFloats - 5, 10),
              testing::ExitedWithCode(1),
              "outside its buffer of 1048576 floats");
  EXPECT_EXIT(gnnrtFetchRange(ctx.get(), 0, 0, 10), testing::ExitedWithCode(1),
              "gnnrtFetchRange: slot 0 range \\[0, \\+10\\): never evicted");
  EXPECT_EXIT(gnnrtDropRange(ctx.get(), 0, 0, 10, 1),
              testing::ExitedWithCode(1),
              "no copy of it in the spill file to drop to");
  EXPECT_EXIT(gnnrtEvict(ctx.get(), 0), testing::ExitedWithCode(1),
              "gnnrtEvict: slot 0 has ranges out");
  EXPECT_EXIT(slotWords(ctx.get(), 0, kFloats + 1), testing::ExitedWithCode(1),
              "gnnrtBuffer: slot 0 grows to 1048577 floats while ranges of it "
              "are out");
  EXPECT_EXIT(gnnrtEvictRange(ctx.get(), 3, 0, 10), testing::ExitedWithCode(1),
              "gnnrtEvictRange: slot 3 has no resident buffer");
  gnnrtFetchRange(ctx.get(), 0, 1 << 18, 1 << 18);
  EXPECT_EQ(p[(1 << 18) + 5000], 0u);
}

// Chunked slots (ABI 7): a slot taken as row chunks holds no memory until a
// chunk is fetched; chunks move at the same address, pages shared by two
// chunks stay while either is resident, and the device's `live` counter is
// the pages of the resident chunks.
TEST(RuntimeSpill, ChunksHoldOnlyTheirPagesAndRoundTrip) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  auto ctx = spillingContext(dir.path);
  const int64_t page = sysconf(_SC_PAGESIZE);
  // 1000 rows of 300 floats in 3 chunks: rows [0, 320), [320, 640),
  // [640, 1000); 1200-byte rows, so chunks share their edge pages.
  constexpr int64_t kRows = 1000, kWidth = 300, kFloats = kRows * kWidth;
  const int64_t live0 = ctx->device->memoryCounters().live;
  const int64_t peak0 = ctx->device->memoryCounters().peak;
  gnnrtMemRefF32 m;
  _mlir_ciface_gnnrtBufferChunks(&m, ctx.get(), 0, kFloats, kRows, 3);
  EXPECT_EQ(ctx->device->memoryCounters().live, live0) << "a take is free";
  EXPECT_EQ(ctx->device->memoryCounters().peak, peak0);
  float *p = m.aligned + m.offset;
  const int64_t bounds[] = {0, 320, 640, 1000};
  auto pagesOf = [&](int64_t c) {
    const int64_t b = bounds[c] * kWidth * 4, e = bounds[c + 1] * kWidth * 4;
    return (e - 1) / page - b / page + 1;
  };
  std::mt19937_64 rng(5);
  auto want = randomWords(rng, kFloats);
  for (int64_t c = 0; c < 3; ++c) {
    gnnrtFetchChunk(ctx.get(), 0, c); // absent: memory only
    std::memcpy(p + bounds[c] * kWidth, want.data() + bounds[c] * kWidth,
                (bounds[c + 1] - bounds[c]) * kWidth * 4);
  }
  const int64_t all = ctx->device->memoryCounters().live - live0;
  EXPECT_EQ(all, ((kFloats * 4 - 1) / page + 1) * page);
  EXPECT_EQ(ctx->spill->counters().readBytes, 0);
  // Chunk 1 out: its pages but the two it shares with resident neighbours.
  gnnrtEvictChunk(ctx.get(), 0, 1);
  EXPECT_EQ(ctx->device->memoryCounters().live - live0,
            all - (pagesOf(1) - 2) * page);
  EXPECT_EQ(ctx->spill->counters().writtenBytes, 320 * kWidth * 4);
  EXPECT_EXIT((void)*(volatile float *)(p + 500 * kWidth),
              testing::KilledBySignal(SIGSEGV), "");
  // Chunk 0 out too: now their shared page goes.
  gnnrtEvictChunk(ctx.get(), 0, 0);
  EXPECT_EQ(ctx->device->memoryCounters().live - live0,
            all - (pagesOf(0) + pagesOf(1) - 2) * page);
  EXPECT_EQ(std::memcmp(p + 640 * kWidth, want.data() + 640 * kWidth,
                        360 * kWidth * 4),
            0)
      << "chunk 2 untouched";
  gnnrtFetchChunk(ctx.get(), 0, 1);
  gnnrtFetchChunk(ctx.get(), 0, 0);
  gnnrtFetchChunk(ctx.get(), 0, 0); // resident: nothing
  EXPECT_TRUE(sameWords(reinterpret_cast<uint32_t *>(p), want));
  EXPECT_EQ(ctx->device->memoryCounters().live - live0, all);
  EXPECT_EQ(ctx->spill->counters().readBytes, 640 * kWidth * 4);
  // Back to the copy without a write; the same shape taken again changes
  // nothing.
  const SpillCounters before = ctx->spill->counters();
  gnnrtDropChunk(ctx.get(), 0, 1, 1);
  EXPECT_EQ(ctx->spill->counters().writtenBytes, before.writtenBytes);
  _mlir_ciface_gnnrtBufferChunks(&m, ctx.get(), 0, kFloats, kRows, 3);
  EXPECT_EQ(m.aligned + m.offset, p);
  gnnrtFetchChunk(ctx.get(), 0, 1);
  EXPECT_TRUE(sameWords(reinterpret_cast<uint32_t *>(p), want));
  // Absent: memory and copy gone; fetching it again gives memory only.
  gnnrtEvictChunk(ctx.get(), 0, 2);
  gnnrtDropChunk(ctx.get(), 0, 2, 0);
  gnnrtFetchChunk(ctx.get(), 0, 2);
  EXPECT_EQ(ctx->spill->counters().readBytes, before.readBytes + 320 * 1200);
  // Taken as a plain buffer: the chunks are forgotten.
  gnnrtEvictChunk(ctx.get(), 0, 0);
  EXPECT_EXIT(slotWords(ctx.get(), 0, kFloats), testing::ExitedWithCode(1),
              "gnnrtBuffer: slot 0 has chunks out");
  EXPECT_EXIT(gnnrtEvict(ctx.get(), 0), testing::ExitedWithCode(1),
              "gnnrtEvict: slot 0 is chunked");
  gnnrtDropAll(ctx.get());
  EXPECT_FALSE(ctx->spill->isChunked(0));
  EXPECT_EQ(ctx->device->memoryCounters().live, live0);
  EXPECT_EQ(ctx->spill->file().bytesInUse(), 0);
  uint32_t *q = slotWords(ctx.get(), 0, kFloats);
  q[kFloats - 1] = 1; // a plain buffer again, writable everywhere
  _mlir_ciface_gnnrtBufferChunks(&m, ctx.get(), 0, kFloats, kRows, 4);
  EXPECT_EQ(ctx->device->memoryCounters().live, live0);
}

TEST(RuntimeSpillDeathTest, ChunkMisuseIsAnError) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  auto ctx = spillingContext(dir.path);
  gnnrtMemRefF32 m;
  EXPECT_EXIT(_mlir_ciface_gnnrtBufferChunks(&m, ctx.get(), 0, 1001, 10, 2),
              testing::ExitedWithCode(1),
              "gnnrtBufferChunks: slot 0: 1001 floats in 10 rows and 2 "
              "chunks");
  EXPECT_EXIT(
      _mlir_ciface_gnnrtBufferChunks(&m, ctx.get(), 0, 100000, 100000, 4097),
      testing::ExitedWithCode(1), "4097 chunks");
  _mlir_ciface_gnnrtBufferChunks(&m, ctx.get(), 0, 1000, 10, 2);
  EXPECT_EXIT(gnnrtEvictRange(ctx.get(), 0, 0, 500), testing::ExitedWithCode(1),
              "gnnrtEvictRange: slot 0 is chunked");
  EXPECT_EXIT(gnnrtFetchChunk(ctx.get(), 0, 2), testing::ExitedWithCode(1),
              "gnnrtFetchChunk: slot 0 has 2 chunks, not chunk 2");
  EXPECT_EXIT(gnnrtEvictChunk(ctx.get(), 0, 1), testing::ExitedWithCode(1),
              "gnnrtEvictChunk: chunk 1 of slot 0 is absent");
  EXPECT_EXIT(gnnrtDropChunk(ctx.get(), 0, 1, 1), testing::ExitedWithCode(1),
              "gnnrtDropChunk: chunk 1 of slot 0: no copy of it");
  EXPECT_EXIT(gnnrtFetchChunk(ctx.get(), 1, 0), testing::ExitedWithCode(1),
              "gnnrtFetchChunk: slot 1 is not chunked");
  gnnrtFetchChunk(ctx.get(), 0, 0);
  gnnrtEvictChunk(ctx.get(), 0, 0);
  EXPECT_EXIT(_mlir_ciface_gnnrtBufferChunks(&m, ctx.get(), 0, 1000, 10, 3),
              testing::ExitedWithCode(1),
              "gnnrtBufferChunks: slot 0 is taken with other chunks while "
              "chunks of it are out");
}

/// A context whose features [kRows, kWidth] are out of core: a file of
/// `header` bytes and then the rows (random words), open in featuresFile.
std::unique_ptr<gnnrtContext> featuresOnStorage(const std::string &dir,
                                                int64_t rows, int64_t width,
                                                int64_t header,
                                                std::vector<uint32_t> &words) {
  auto ctx = spillingContext(dir);
  const std::string path = dir + "/features.bin";
  std::mt19937_64 rng(11);
  words = randomWords(rng, rows * width);
  {
    std::ofstream out(path, std::ios::binary);
    std::string pad(static_cast<size_t>(header), 'h');
    out.write(pad.data(), header);
    out.write(reinterpret_cast<const char *>(words.data()),
              static_cast<std::streamsize>(words.size() * 4));
  }
  ctx->featuresFile.fd = ::open(path.c_str(), O_RDONLY);
  EXPECT_GE(ctx->featuresFile.fd, 0);
  ::unlink(path.c_str()); // the descriptor keeps it
  ctx->featuresFile.offset = header;
  ctx->ds.numVertices = rows;
  ctx->ds.numFeatures = width;
  return ctx;
}

TEST(RuntimeSpill, FeaturesOutOfCoreAreReadByChunksAndNeverWritten) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  constexpr int64_t kRows = 1000, kWidth = 300;
  std::vector<uint32_t> words;
  auto ctx = featuresOnStorage(dir.path, kRows, kWidth, 128, words);
  const int64_t live0 = ctx->device->memoryCounters().live;
  gnnrtMemRefF32 m;
  _mlir_ciface_gnnrtFeaturesChunks(&m, ctx.get(), 2, 3);
  ASSERT_EQ(m.sizes[0], kRows * kWidth);
  EXPECT_EQ(ctx->device->memoryCounters().live, live0) << "every chunk out";
  const uint32_t *p = reinterpret_cast<uint32_t *>(m.aligned + m.offset);
  EXPECT_EXIT((void)*(volatile const uint32_t *)(p + 500 * kWidth),
              testing::KilledBySignal(SIGSEGV), "");
  // Chunks [0, 320), [320, 640), [640, 1000): each read bit for bit.
  const int64_t bounds[] = {0, 320, 640, 1000};
  int64_t read = 0;
  for (int64_t c : {1, 0, 2}) {
    gnnrtFetchChunk(ctx.get(), 2, c);
    read += (bounds[c + 1] - bounds[c]) * kWidth * 4;
    EXPECT_EQ(std::memcmp(p + bounds[c] * kWidth,
                          words.data() + bounds[c] * kWidth,
                          (bounds[c + 1] - bounds[c]) * kWidth * 4),
              0)
        << "chunk " << c;
    EXPECT_EQ(ctx->spill->counters().sourceReadBytes, read);
  }
  EXPECT_EQ(ctx->spill->counters().sourceFetches, 3);
  EXPECT_EQ(ctx->spill->counters().readBytes, 0) << "not the spill file's";
  gnnrtFetchChunk(ctx.get(), 2, 1); // resident: no read
  EXPECT_EQ(ctx->spill->counters().sourceReadBytes, read);
  // A drop keeps the file as the copy whatever it says; nothing is written.
  gnnrtDropChunk(ctx.get(), 2, 1, 0);
  gnnrtDropChunk(ctx.get(), 2, 0, 1);
  gnnrtFetchChunk(ctx.get(), 2, 1);
  EXPECT_EQ(std::memcmp(p + 320 * kWidth, words.data() + 320 * kWidth,
                        320 * kWidth * 4),
            0);
  // gnnrtDropAll leaves the slot the features' with every chunk out.
  gnnrtDropAll(ctx.get());
  EXPECT_EQ(ctx->device->memoryCounters().live, live0);
  gnnrtMemRefF32 again;
  _mlir_ciface_gnnrtFeaturesChunks(&again, ctx.get(), 2, 3);
  EXPECT_EQ(again.aligned, m.aligned);
  gnnrtFetchChunk(ctx.get(), 2, 2);
  EXPECT_EQ(std::memcmp(p + 640 * kWidth, words.data() + 640 * kWidth,
                        360 * kWidth * 4),
            0);
  EXPECT_EQ(ctx->spill->counters().writtenBytes, 0);
  EXPECT_EQ(ctx->spill->counters().evictions, 0);
}

TEST(RuntimeSpillDeathTest, FeaturesOutOfCoreMisuseIsAnError) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  std::vector<uint32_t> words;
  auto ctx = featuresOnStorage(dir.path, 100, 8, 0, words);
  gnnrtMemRefF32 m;
  _mlir_ciface_gnnrtFeaturesChunks(&m, ctx.get(), 1, 2);
  gnnrtFetchChunk(ctx.get(), 1, 0);
  EXPECT_EXIT(gnnrtEvictChunk(ctx.get(), 1, 0), testing::ExitedWithCode(1),
              "gnnrtEvictChunk: chunk 0 of slot 1 is read-only \\(rows of "
              "features.npy\\): drop it, never evict it");
  gnnrtDropChunk(ctx.get(), 1, 0, 1);
  EXPECT_EXIT(gnnrtEvictChunk(ctx.get(), 1, 0), testing::ExitedWithCode(1),
              "chunk 0 of slot 1 is read-only");
  EXPECT_EXIT(_mlir_ciface_gnnrtFeaturesChunks(&m, ctx.get(), 1, 3),
              testing::ExitedWithCode(1),
              "slot 1 is taken already as other read-only chunks");
  EXPECT_EXIT(_mlir_ciface_gnnrtBuffer(&m, ctx.get(), 1, 10),
              testing::ExitedWithCode(1),
              "gnnrtBuffer: slot 1 holds the features");
  EXPECT_EXIT(_mlir_ciface_gnnrtBufferChunks(&m, ctx.get(), 1, 800, 100, 2),
              testing::ExitedWithCode(1),
              "gnnrtBufferChunks: slot 1 holds the features");
  _mlir_ciface_gnnrtBuffer(&m, ctx.get(), 0, 10);
  EXPECT_EXIT(_mlir_ciface_gnnrtFeaturesChunks(&m, ctx.get(), 0, 2),
              testing::ExitedWithCode(1),
              "gnnrtFeaturesChunks: slot 0 holds a buffer of the program");
  auto inMemory = spillingContext(dir.path);
  EXPECT_EXIT(_mlir_ciface_gnnrtFeaturesChunks(&m, inMemory.get(), 0, 2),
              testing::ExitedWithCode(1),
              "the run keeps its features in memory");
  EXPECT_EXIT(_mlir_ciface_gnnrtFeatures(&m, ctx.get()),
              testing::ExitedWithCode(1), "the features are out of core");
}

// Random evictions, fetches and writes on many slots, against a model of
// what each slot holds and of every counter.
TEST(RuntimeSpill, ManySlotsInterleavedMatchAModel) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  auto ctx = spillingContext(dir.path);
  std::mt19937_64 rng(7);
  constexpr int kSlots = 40;
  std::vector<int64_t> size(kSlots);
  std::vector<std::vector<uint32_t>> want(kSlots);
  std::vector<bool> out(kSlots, false), copy(kSlots, false);
  for (int s = 0; s < kSlots; ++s) {
    size[s] = static_cast<int64_t>(rng() % 5000);
    want[s] = randomWords(rng, size[s]);
    uint32_t *p = slotWords(ctx.get(), s, size[s]);
    if (size[s])
      std::memcpy(p, want[s].data(), size[s] * 4);
  }
  SpillCounters model;
  const int64_t live0 = ctx->device->memoryCounters().live;
  int64_t liveModel = live0;
  for (int step = 0; step < 3000; ++step) {
    int s = static_cast<int>(rng() % kSlots);
    switch (rng() % 3) {
    case 0: // evict (a no-op when out)
      if (!out[s]) {
        model.writtenBytes += size[s] * 4;
        model.evictions += 1;
        liveModel -= size[s] * 4;
        out[s] = true;
        copy[s] = true;
      }
      gnnrtEvict(ctx.get(), s);
      break;
    case 1: // fetch (a no-op when resident)
      if (out[s]) {
        model.readBytes += size[s] * 4;
        model.fetches += 1;
        liveModel += size[s] * 4;
        out[s] = false;
      }
      gnnrtFetch(ctx.get(), s);
      ASSERT_TRUE(sameWords(slotWords(ctx.get(), s, size[s]), want[s]))
          << "slot " << s << " at step " << step;
      break;
    default: // the program writes a resident slot
      if (!out[s] && size[s]) {
        int64_t i = static_cast<int64_t>(rng() % size[s]);
        want[s][i] = static_cast<uint32_t>(rng());
        slotWords(ctx.get(), s, size[s])[i] = want[s][i];
      }
    }
    const SpillCounters &c = ctx->spill->counters();
    ASSERT_EQ(c.writtenBytes, model.writtenBytes);
    ASSERT_EQ(c.readBytes, model.readBytes);
    ASSERT_EQ(c.evictions, model.evictions);
    ASSERT_EQ(c.fetches, model.fetches);
    ASSERT_EQ(ctx->device->memoryCounters().live, liveModel);
    int64_t spilled = 0; // a fetch keeps the copy
    for (int k = 0; k < kSlots; ++k)
      if (copy[k])
        spilled += (size[k] * 4 + 4095) / 4096 * 4096;
    ASSERT_EQ(ctx->spill->file().bytesInUse(), spilled);
    ASSERT_LE(spilled, ctx->spill->file().end());
  }
  EXPECT_GT(model.evictions, 300);
  EXPECT_GT(model.fetches, 300);
  for (int s = 0; s < kSlots; ++s) {
    gnnrtFetch(ctx.get(), s);
    EXPECT_TRUE(sameWords(slotWords(ctx.get(), s, size[s]), want[s]));
  }
  // Dead contents: the copies go, and each slot is allocated afresh.
  for (int s = 0; s < kSlots; ++s) {
    gnnrtDrop(ctx.get(), s, 0);
    slotWords(ctx.get(), s, size[s]);
  }
  EXPECT_EQ(ctx->spill->file().end(), 0);
  EXPECT_EQ(ctx->device->memoryCounters().live, live0);
  EXPECT_TRUE(listDir(dir.path).empty());
}

TEST(RuntimeSpill, EvictingTwiceAndFetchingTwiceDoNothingMore) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  auto ctx = spillingContext(dir.path);
  std::mt19937_64 rng(3);
  std::vector<uint32_t> want = randomWords(rng, 3000);
  std::memcpy(slotWords(ctx.get(), 2, 3000), want.data(), 12000);
  gnnrtFetch(ctx.get(), 2); // resident: nothing
  EXPECT_EQ(ctx->spill->counters().fetches, 0);
  EXPECT_EQ(ctx->spill->counters().readBytes, 0);
  gnnrtEvict(ctx.get(), 2);
  const MemoryCounters once = ctx->device->memoryCounters();
  gnnrtEvict(ctx.get(), 2);
  EXPECT_EQ(ctx->spill->counters().evictions, 1);
  EXPECT_EQ(ctx->spill->counters().writtenBytes, 12000);
  EXPECT_EQ(ctx->device->memoryCounters().freed, once.freed);
  gnnrtFetch(ctx.get(), 2);
  const MemoryCounters fetched = ctx->device->memoryCounters();
  gnnrtFetch(ctx.get(), 2);
  EXPECT_EQ(ctx->spill->counters().fetches, 1);
  EXPECT_EQ(ctx->spill->counters().readBytes, 12000);
  EXPECT_EQ(ctx->device->memoryCounters().allocated, fetched.allocated);
  EXPECT_TRUE(sameWords(slotWords(ctx.get(), 2, 3000), want));
  // gnnrtBufferI32 shares the slot: an i32 slot round-trips as well.
  gnnrtMemRefI32 m;
  _mlir_ciface_gnnrtBufferI32(&m, ctx.get(), 5, 3);
  m.aligned[0] = -1, m.aligned[1] = 7, m.aligned[2] = INT32_MIN;
  gnnrtEvict(ctx.get(), 5);
  gnnrtFetch(ctx.get(), 5);
  _mlir_ciface_gnnrtBufferI32(&m, ctx.get(), 5, 3);
  EXPECT_EQ(m.aligned[0], -1);
  EXPECT_EQ(m.aligned[1], 7);
  EXPECT_EQ(m.aligned[2], INT32_MIN);
}

TEST(RuntimeSpillDeathTest, TheABIRefusesWhatItCannotDo) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  auto ctx = spillingContext(dir.path);
  slotWords(ctx.get(), 3, 100);
  EXPECT_EXIT(gnnrtEvict(ctx.get(), 7), testing::ExitedWithCode(1),
              "^error: gnnrtEvict: slot 7 was never allocated \\(no "
              "gnnrtBuffer call for it\\)\n$");
  // Below the highest slot allocated, but never allocated itself.
  EXPECT_EXIT(gnnrtEvict(ctx.get(), 1), testing::ExitedWithCode(1),
              "gnnrtEvict: slot 1 was never allocated");
  EXPECT_EXIT(gnnrtEvict(ctx.get(), -2), testing::ExitedWithCode(1),
              "gnnrtEvict: slot -2 was never allocated");
  EXPECT_EXIT(gnnrtFetch(ctx.get(), 9), testing::ExitedWithCode(1),
              "gnnrtFetch: slot 9 was never allocated");
  gnnrtEvict(ctx.get(), 3);
  EXPECT_EXIT(slotWords(ctx.get(), 3, 100), testing::ExitedWithCode(1),
              "^error: gnnrtBuffer: slot 3 is evicted to the spill file "
              "\\(gnnrtFetch it first\\)\n$");
  gnnrtMemRefI32 m;
  EXPECT_EXIT(_mlir_ciface_gnnrtBufferI32(&m, ctx.get(), 3, 100),
              testing::ExitedWithCode(1), "gnnrtBuffer: slot 3 is evicted");
  // Without a spill directory.
  gnnrtContext plain;
  slotWords(&plain, 0, 10);
  EXPECT_EXIT(gnnrtEvict(&plain, 0), testing::ExitedWithCode(1),
              "^error: gnnrtEvict: slot 0: no --spill-dir to evict it to");
  gnnrtFetch(&plain, 0); // resident: nothing to do, no spill needed
}

TEST(RuntimeSpill, TheDirectoryIsCheckedWhenTheStoreIsCreated) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  std::string error;
  EXPECT_FALSE(SpillStore::open(dir.path + "/missing", error));
  EXPECT_EQ(error, dir.path + "/missing: No such file or directory");
  const std::string file = dir.path + "/file";
  std::ofstream(file) << "x";
  error.clear();
  EXPECT_FALSE(SpillStore::open(file, error));
  EXPECT_EQ(error, file + ": Not a directory");
  error.clear();
  EXPECT_FALSE(SpillStore::open(file + "/sub", error));
  EXPECT_EQ(error, file + "/sub: Not a directory");
  // A directory where no file can be created, even by root: sysfs.
  struct stat st;
  if (stat("/sys", &st) == 0 && S_ISDIR(st.st_mode)) {
    error.clear();
    EXPECT_FALSE(SpillStore::open("/sys", error));
    EXPECT_EQ(error.rfind("/sys: cannot create a spill file there: ", 0), 0u)
        << error;
  }
  // A good one, given with a trailing slash: nothing appears in it.
  error.clear();
  auto store = SpillStore::open(dir.path + "/", error);
  ASSERT_TRUE(store) << error;
  EXPECT_EQ(store->file().path().rfind(dir.path + "/gnnrt-spill-", 0), 0u)
      << store->file().path();
  EXPECT_EQ(listDir(dir.path), std::vector<std::string>{"file"});
}

// Space freed by a fetch is reused, only space holding nothing is written,
// and free space at the end is cut off.
TEST(RuntimeSpill, FileSpaceIsReusedAndNothingLiveIsOverwritten) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  std::string error;
  auto file = SpillFile::create(dir.path, error);
  ASSERT_TRUE(file) << error;
  std::mt19937_64 rng(5);
  auto a = randomWords(rng, 1024), b = randomWords(rng, 3000),
       c = randomWords(rng, 1000), d = randomWords(rng, 2048);
  SpillExtent ea, eb, ec, ed;
  ASSERT_TRUE(file->write(a.data(), 4096, ea, error)) << error;
  ASSERT_TRUE(file->write(b.data(), 12000, eb, error)) << error;
  EXPECT_EQ(ea.offset, 0);
  EXPECT_EQ(eb.offset, 4096);
  EXPECT_EQ(file->end(), 4096 + 12288);
  file->release(ea);
  // c fits in a's block; d does not and goes to the end.
  ASSERT_TRUE(file->write(c.data(), 4000, ec, error)) << error;
  EXPECT_EQ(ec.offset, 0);
  ASSERT_TRUE(file->write(d.data(), 8192, ed, error)) << error;
  EXPECT_EQ(ed.offset, 4096 + 12288);
  std::vector<uint32_t> got(3000);
  ASSERT_TRUE(file->read(eb, got.data(), error)) << error;
  EXPECT_TRUE(sameWords(got.data(), b));
  got.assign(1000, 0);
  ASSERT_TRUE(file->read(ec, got.data(), error)) << error;
  EXPECT_TRUE(sameWords(got.data(), c));
  got.assign(2048, 0);
  ASSERT_TRUE(file->read(ed, got.data(), error)) << error;
  EXPECT_TRUE(sameWords(got.data(), d));
  // Freeing b and then d coalesces them with the end: the file shrinks to c.
  file->release(eb);
  EXPECT_EQ(file->end(), 4096 + 12288 + 8192);
  file->release(ed);
  EXPECT_EQ(file->end(), 4096);
  EXPECT_EQ(file->bytesInUse(), 4096);
  file->release(ec);
  EXPECT_EQ(file->end(), 0);
  // Sizes whose rounding or end would overflow are refused, not wrapped.
  SpillExtent ex{-1, -1};
  EXPECT_FALSE(file->write(a.data(), INT64_MAX - 100, ex, error));
  EXPECT_EQ(ex.offset, -1);
  EXPECT_FALSE(file->write(a.data(), -4, ex, error));
  EXPECT_EQ(file->end(), 0);
}

// ENOSPC: /dev/full fails every write with it. Nothing is committed.
TEST(RuntimeSpill, AFullDiskIsAnErrorNamingTheFile) {
  int fd = ::open("/dev/full", O_RDWR | O_CLOEXEC);
  if (fd < 0)
    GTEST_SKIP() << "no /dev/full";
  SpillFile file(fd, "/dev/full");
  std::vector<char> data(10000, 1);
  SpillExtent e{-1, -1};
  std::string error;
  EXPECT_FALSE(file.write(data.data(), 10000, e, error));
  EXPECT_EQ(error, "/dev/full: writing 10000 bytes at offset 0: No space left "
                   "on device (the spill directory's file system is full)");
  EXPECT_EQ(e.offset, -1);
  EXPECT_EQ(file.end(), 0);
  EXPECT_EQ(file.bytesInUse(), 0);
}

// EFBIG under RLIMIT_FSIZE (SIGXFSZ ignored by the store): the eviction fails,
// the slot stays resident with its contents, the slot spilled before reads
// back intact, nothing is counted; with the limit lifted it succeeds.
TEST(RuntimeSpill, AFailedEvictionCorruptsNothing) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  auto ctx = spillingContext(dir.path);
  std::mt19937_64 rng(11);
  auto a = randomWords(rng, 2000), b = randomWords(rng, 1 << 18);
  std::memcpy(slotWords(ctx.get(), 0, 2000), a.data(), 8000);
  std::memcpy(slotWords(ctx.get(), 1, 1 << 18), b.data(), 1 << 20);
  gnnrtEvict(ctx.get(), 0);
  const SpillCounters before = ctx->spill->counters();
  const MemoryCounters memBefore = ctx->device->memoryCounters();
  std::string error;
  {
    FileSizeLimit limit(64 << 10);
    EXPECT_FALSE(ctx->spill->evict(1, *ctx->device, ctx->buffers[1], error));
  }
  EXPECT_EQ(error, "slot 1 (1.0 MiB): " + ctx->spill->file().path() +
                       ": writing 1048576 bytes at offset 8192: File too "
                       "large (the file size limit, ulimit -f)");
  ASSERT_TRUE(ctx->buffers[1]);
  EXPECT_FALSE(ctx->spill->isEvicted(1));
  EXPECT_TRUE(sameWords(slotWords(ctx.get(), 1, 1 << 18), b));
  EXPECT_EQ(ctx->spill->counters().writtenBytes, before.writtenBytes);
  EXPECT_EQ(ctx->spill->counters().evictions, before.evictions);
  EXPECT_EQ(ctx->device->memoryCounters().live, memBefore.live);
  EXPECT_EQ(ctx->spill->file().end(), 8192);
  gnnrtFetch(ctx.get(), 0);
  EXPECT_TRUE(sameWords(slotWords(ctx.get(), 0, 2000), a));
  gnnrtEvict(ctx.get(), 1);
  gnnrtFetch(ctx.get(), 1);
  EXPECT_TRUE(sameWords(slotWords(ctx.get(), 1, 1 << 18), b));
}

// Through the ABI the same failure ends the run with one line naming the slot,
// the file and the cause.
TEST(RuntimeSpillDeathTest, AFailedEvictionEndsTheRunWithOneLine) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  auto ctx = spillingContext(dir.path);
  slotWords(ctx.get(), 4, 1 << 18);
  EXPECT_EXIT(
      {
        FileSizeLimit limit(64 << 10);
        gnnrtEvict(ctx.get(), 4);
      },
      testing::ExitedWithCode(1),
      "^error: gnnrtEvict: slot 4 \\(1.0 MiB\\): " + dir.path +
          "/gnnrt-spill-[0-9]+-[0-9]+: writing 1048576 bytes at offset 0: "
          "File too large \\(the file size limit, ulimit -f\\)\n$");
  EXPECT_TRUE(listDir(dir.path).empty());
}

TEST(RuntimeSpill, UncachedReadsAndWritesLeaveNoPageInTheCache) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  if (!test::pageCacheWorks(dir.path))
    GTEST_SKIP() << dir.path << " keeps no page cache that can be dropped "
                 << "(a tmpfs, or an overlay on one)";
  const std::string path = dir.path + "/file";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  // No read-ahead (the dup shares it): what it would bring in behind a
  // drop, asynchronously, is no part of what is checked.
  ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0);
  const int spillFd = dup(fd);
  ASSERT_GE(spillFd, 0);
  SpillFile file(spillFd, path);
  std::mt19937_64 rng(7);
  const int64_t words = 1 << 20; // 4 MiB
  const std::vector<uint32_t> a = randomWords(rng, words),
                              b = randomWords(rng, words);
  std::vector<uint32_t> got(words);
  std::string error;
  // By default what is written and read stays in the page cache.
  SpillExtent first, second;
  ASSERT_TRUE(file.write(a.data(), words * 4, first, error)) << error;
  ASSERT_TRUE(file.read(first, got.data(), error)) << error;
  EXPECT_EQ(got, a);
  EXPECT_GT(test::cachedPages(fd, first.offset, first.bytes), 0);
  {
    // Uncached: a write goes through and leaves the cache, and so does
    // every read (of this extent, and of the one cached before once it is
    // written back: dirty pages stay until then).
    ASSERT_EQ(fdatasync(fd), 0);
    test::Uncached uncached;
    ASSERT_TRUE(file.write(b.data(), words * 4, second, error)) << error;
    EXPECT_EQ(test::cachedPages(fd, second.offset, second.bytes), 0);
    ASSERT_TRUE(file.read(second, got.data(), error)) << error;
    EXPECT_EQ(got, b);
    EXPECT_EQ(test::cachedPages(fd, second.offset, second.bytes), 0);
    ASSERT_TRUE(file.read(first, got.data(), error)) << error;
    EXPECT_EQ(got, a);
    EXPECT_EQ(test::cachedPages(fd, first.offset, first.bytes), 0);
  }
  // A read smaller than a page and not aligned to one (a row of
  // features.npy past its header) leaves its page for the page's other
  // rows, and so does one that covers a page in part (as the disk's page
  // would be reused at once); the pages wholly inside a read go.
  const int64_t page = sysconf(_SC_PAGESIZE);
  const int64_t at = first.offset + 3 * page + 128;
  {
    test::Uncached uncached;
    ASSERT_TRUE(readAt(fd, path, at, got.data(), 100, error)) << error;
    EXPECT_EQ(got[0], a[(3 * page + 128) / 4]);
    EXPECT_EQ(test::cachedPages(fd, at, 100), 1);
    ASSERT_TRUE(readAt(fd, path, first.offset + 8 * page + 128, got.data(),
                       4 * page, error))
        << error;
    EXPECT_EQ(test::cachedPages(fd, first.offset + 8 * page, 5 * page), 2);
  }
  // What is cached of a file read before (those pages, the kernel's
  // read-ahead beyond the ranges read) goes when the driver drops every
  // file seen, before each epoch.
  ASSERT_TRUE(file.read(first, got.data(), error)) << error;
  EXPECT_GT(test::cachedPages(fd, first.offset, first.bytes), 0);
  {
    test::Uncached uncached;
    dropEveryCachedFile();
    EXPECT_EQ(test::cachedPages(fd, 0, second.offset + second.bytes), 0);
  }
  close(fd);
}
