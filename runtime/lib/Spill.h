//===- Spill.h - the slow tier on the CPU: spill files ----------*- C++ -*-===//
//
// Issue 18's memory model has a fast tier of capped size and a slow tier
// behind explicit copies. On the CPU the fast tier is resident memory (under
// --mem-budget) and the slow tier is storage: a spill file in --spill-dir.
// gnnrtEvict writes a slot buffer to the file and frees its memory;
// gnnrtFetch allocates it again on the device and reads it back. The
// placement pass (--gnn-place-tensors) decides where the program calls them.
//
// Storage is one file per store (per run), not one per slot: one descriptor
// however many slots are spilled (a deep model has hundreds), one create at
// start-up, which is then also the check that the directory takes files, and
// no create or unlink per eviction. The file is created with O_EXCL (never
// somebody else's file, nor a symlink planted under its name) and unlinked
// at once, so that nothing is left in the directory when the run ends, how
// ever it ends (a crash, a kill, the OOM killer): the space is the kernel's
// to reclaim when the descriptor closes. Data moves with pread/pwrite in
// loops that retry EINTR and continue short transfers.
//
// Space in the file is handed out in extents of whole 4 KiB blocks (first
// fit in the free list, else at the end). An eviction writes to space that
// holds no other slot's data and records the slot's extent only once every
// byte is written: a write that fails (ENOSPC, EFBIG under ulimit -f) leaves
// the slot resident and every extent written before intact and readable. A
// slot's copy is released when the program says its contents are dead
// (gnnrtDrop) or a newer eviction replaces it; free space at the end of the
// file is truncated away, free space inside it is punched out (where the file
// system can), so the file holds about what is spilled now, not the most ever
// spilled.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_SPILL_H
#define GNNRT_SPILL_H

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gnnrt {

class Device;
struct Buffer;

/// What the slow tier moved: bytes written to and read from storage by
/// evictions and fetches that succeeded, and how many there were.
struct SpillCounters {
  int64_t writtenBytes = 0, readBytes = 0;
  int64_t evictions = 0, fetches = 0;
  /// The reads of read-only slots' files (the dataset's features out of
  /// core), not in readBytes and fetches (the spill file's).
  int64_t sourceReadBytes = 0, sourceFetches = 0;
  /// fetchChunkRows's partial reads (their bytes also in readBytes or
  /// sourceReadBytes) and the bytes of their chunks left unread.
  int64_t selectiveFetches = 0, selectiveSkippedBytes = 0;
};

/// A range of a spill file: `bytes` of data at `offset` (a multiple of
/// SpillFile::kBlock); the space reserved is `bytes` rounded up to a block.
struct SpillExtent {
  int64_t offset = 0, bytes = 0;
};

/// The storage: one unlinked file, its space handed out in extents.
class SpillFile {
public:
  static constexpr int64_t kBlock = 4096;

  /// Creates the file in the directory `dir` and unlinks it. Refuses a
  /// missing directory, a path that is not a directory and one where no
  /// file can be created or written (it writes one block and truncates it
  /// away). Ignores SIGXFSZ (as the driver does), so that a write past
  /// ulimit -f fails with EFBIG instead of killing the process. Returns null
  /// with a one-line "<dir>: <problem>" in `error`.
  static std::unique_ptr<SpillFile> create(const std::string &dir,
                                           std::string &error);
  /// Takes over `fd`, a file open for reading and writing, named `path` in
  /// messages (for tests: /dev/full fails every write with ENOSPC).
  SpillFile(int fd, std::string path);
  ~SpillFile();
  SpillFile(const SpillFile &) = delete;
  SpillFile &operator=(const SpillFile &) = delete;

  /// Writes `bytes` (>= 0) from host memory at `data` into free space and
  /// returns that space in `where`, now in use. On failure returns false with
  /// "<path>: <strerror>" (and where it wrote) in `error`; the space is free
  /// again and every extent in use is unchanged.
  bool write(const void *data, int64_t bytes, SpillExtent &where,
             std::string &error);
  /// Reads the extent `where` (from write) into host memory at `data`.
  bool read(const SpillExtent &where, void *data, std::string &error) const;
  /// Under --uncached-reads (File.h): drops the extent's pages from the page
  /// cache, those that reads of its parts left too.
  void dropCache(const SpillExtent &where) const;
  /// Reads `bytes` at `offset` into the extent `where` (inside it).
  bool readPart(const SpillExtent &where, int64_t offset, void *data,
                int64_t bytes, std::string &error) const;
  /// Frees an extent from write.
  void release(const SpillExtent &where);

  /// The file's name (it no longer exists in its directory).
  const std::string &path() const { return filePath; }
  /// The end of the space handed out: the file's logical size.
  int64_t end() const { return fileEnd; }
  /// Bytes of the extents in use, each rounded up to a block.
  int64_t bytesInUse() const { return inUse; }

private:
  int fd = -1;
  std::string filePath;
  int64_t fileEnd = 0, inUse = 0;
  /// Free space below fileEnd: offset -> bytes, coalesced.
  std::map<int64_t, int64_t> freeSpace;
};

/// The slot buffers of one context that have a copy in the slow tier. A slot
/// is resident (its buffer in the fast tier), evicted (only its copy), or
/// both: a fetch keeps the copy, so that a slot not written since can leave
/// the fast tier again without a write (drop with the copy kept).
class SpillStore {
public:
  explicit SpillStore(std::unique_ptr<SpillFile> file);
  /// SpillFile::create in `dir`, as a store; null with a message.
  static std::unique_ptr<SpillStore> open(const std::string &dir,
                                          std::string &error);

  /// Writes slot `slot`'s resident buffer `buf` (non-null, of `device`) to
  /// storage and frees it (`buf` becomes null); the slot is then evicted
  /// with the buffer's size, and an older copy of it is released. False with
  /// a one-line message on a failed write: then `buf`, its contents and
  /// every copy written before are unchanged, and nothing is counted.
  bool evict(int64_t slot, Device &device, std::unique_ptr<Buffer> &buf,
             std::string &error);
  /// Allocates an evicted slot's buffer on `device` (counted by it) into
  /// `buf` and reads the slot's bytes back; the slot is then resident and
  /// keeps its copy. False with a message on a failed read (the slot stays
  /// evicted, `buf` stays null).
  bool fetch(int64_t slot, Device &device, std::unique_ptr<Buffer> &buf,
             std::string &error);
  /// Frees the resident buffer `buf` of a slot whose copy is current (the
  /// program has not written it since its fetch): the slot is evicted again,
  /// with no write. False with a message when the slot has no copy.
  bool dropToCopy(int64_t slot, std::unique_ptr<Buffer> &buf,
                  std::string &error);
  /// Forgets slot `slot`'s copy (its contents are dead), if any.
  void discard(int64_t slot);
  /// Forgets every copy (of whole slots and of ranges; call discardRanges
  /// for a slot whose buffer has ranges out before freeing the buffer).
  void discardAll();

  /// Ranges of a slot (elements [offset, offset + count) of its buffer `buf`),
  /// moved at the same address: evictRange writes the range to storage and
  /// gives its memory back (Device::releasePages), fetchRange restores the
  /// memory and reads the range back (the copy stays), dropRange gives the
  /// memory back with the copy kept (it must be current) or, with `keep`
  /// false, forgets the range (restoring its memory, contents dead). A
  /// slot's ranges are disjoint: one that overlaps another of other bounds
  /// is refused. False with a one-line message; on a failed write or read
  /// nothing changes.
  bool evictRange(int64_t slot, Device &device, Buffer &buf, int64_t offset,
                  int64_t count, std::string &error);
  bool fetchRange(int64_t slot, Device &device, Buffer &buf, int64_t offset,
                  int64_t count, std::string &error);
  bool dropRange(int64_t slot, Device &device, Buffer &buf, int64_t offset,
                 int64_t count, bool keep, std::string &error);
  /// Whether some range of `slot` is out of the fast tier.
  bool hasEvictedRanges(int64_t slot) const;
  /// Forgets every range of `slot` (of buffer `buf`, null when freed
  /// already), restoring the memory of those that are out.
  void discardRanges(int64_t slot, Device &device, Buffer *buf);

  /// Chunked slots (ABI 7; the row chunks of a placement): a slot taken by
  /// gnnrtBufferChunks is `chunks` chunks of its rows, chunk c the rows
  /// [b_c, b_{c+1}) (gnnrtChunkRowBound) of `rowElements` floats each, in a
  /// buffer from allocateReleased. A chunk is absent (no memory, contents
  /// dead), resident, or out (memory given back, contents in storage). Memory
  /// goes by pages: a page is usable while a resident chunk overlaps it (the
  /// pages at a chunk's edges may be shared with its neighbours).
  ///
  /// takeChunks (re)defines the chunks of `buf` (a released buffer of at
  /// least rows * rowElements floats); with the same shape it changes
  /// nothing, with another every chunk must be absent or resident (those
  /// become absent). fetchChunk makes a chunk resident (reading its copy
  /// when out; an absent one only gets its memory); evictChunk writes a
  /// resident chunk and gives its memory back; dropChunk gives it back with
  /// the copy kept (`keep`: there must be one; out stays out) or makes the
  /// chunk absent, forgetting its copy. False with a one-line message; on a
  /// failed write or read nothing changes.
  ///
  /// With `bounds` (chunks + 1 ascending rows from 0 to `rows`), chunk c is
  /// the rows [bounds[c], bounds[c+1]) instead (gnnrtBufferEdgeChunks: the
  /// edges of each destination chunk).
  bool takeChunks(int64_t slot, Device &device, Buffer &buf, int64_t rows,
                  int64_t rowElements, int64_t chunks, std::string &error,
                  const std::vector<int64_t> *bounds = nullptr);
  bool fetchChunk(int64_t slot, Device &device, Buffer &buf, int64_t chunk,
                  std::string &error);
  bool evictChunk(int64_t slot, Device &device, Buffer &buf, int64_t chunk,
                  std::string &error);
  bool dropChunk(int64_t slot, Device &device, Buffer &buf, int64_t chunk,
                 bool keep, std::string &error);
  /// Selective loading (NeuGraph's filter): fetchChunk reading only the
  /// rows `runs` of a chunk that is out (pairs [first, end) of rows counted
  /// from the chunk's first, ascending, disjoint), for a step that reads no
  /// other row of it (a tile of an aggregation: SelectiveLoad.h). The chunk
  /// is then *partial*: resident memory whose other rows are dead, until
  /// dropChunk gives it back (the copy stays: out again; or, without
  /// `keep`, absent) or fetchChunk reads it whole. evictChunk refuses it.
  /// A resident or absent chunk is as fetchChunk leaves it.
  bool fetchChunkRows(int64_t slot, Device &device, Buffer &buf, int64_t chunk,
                      const std::vector<std::pair<int64_t, int64_t>> &runs,
                      std::string &error);
  /// fetchChunkRows in parts (a tile's sub-chunks, read by another thread
  /// while the program computes on those read before: TilePipeline.h):
  /// beginChunkRead gives a chunk that is out its memory; readChunkRows
  /// reads runs of its rows as fetchChunkRows does, adding their bytes to
  /// `bytes`, and changes no state (two threads may read disjoint runs; a
  /// device whose memory the host addresses only); endChunkRead leaves the
  /// chunk resident (`whole`: every row read) or partial, counting `bytes`
  /// as one fetch, or, when `failed`, out again with its memory given back.
  bool beginChunkRead(int64_t slot, Device &device, Buffer &buf, int64_t chunk,
                      std::string &error);
  bool readChunkRows(int64_t slot, Device &device, Buffer &buf, int64_t chunk,
                     const std::vector<std::pair<int64_t, int64_t>> &runs,
                     int64_t &bytes, std::string &error);
  void endChunkRead(int64_t slot, Device &device, Buffer &buf, int64_t chunk,
                    int64_t bytes, bool whole, bool failed);
  /// Whether chunk `chunk` of `slot` is out (its contents in storage only).
  bool isChunkOut(int64_t slot, int64_t chunk) const;
  /// The rows, floats per row and chunks of chunked slot `slot`; false when
  /// it is not chunked, or not by gnnrtChunkRowBound's rows (explicit
  /// bounds: gnnrtBufferEdgeChunks).
  bool chunkShape(int64_t slot, int64_t &rows, int64_t &rowElements,
                  int64_t &chunks) const;
  bool isChunked(int64_t slot) const { return chunked.count(slot) != 0; }
  /// Read-only chunked slots whose copies are rows of a file (the dataset's
  /// features read by ranges, out of core): takeSourceChunks defines the
  /// chunks as takeChunks does, every one out, chunk c's copy the bytes at
  /// `offset + b_c * rowElements * 4` of `fd` (open for the run, not
  /// owned; `name` for messages). fetchChunk reads them; dropChunk only
  /// gives the memory back, whatever `keep` says (the file stays the copy);
  /// evictChunk refuses (the program never writes them); discardChunks
  /// leaves every chunk out and the slot defined. A second take with the
  /// same shape changes nothing, with another is refused. With `fileRows`
  /// (`rows` entries: a part of the graph, shared preloading's closure) row
  /// r of the slot is row fileRows[r] of the file, read by ranges
  /// (readStoredRows) rather than as one block.
  bool takeSourceChunks(int64_t slot, Device &device, Buffer &buf, int64_t rows,
                        int64_t rowElements, int64_t chunks, int fd,
                        int64_t offset, const std::string &name,
                        std::string &error,
                        const std::vector<int32_t> *fileRows = nullptr);
  bool isSource(int64_t slot) const {
    auto it = chunked.find(slot);
    return it != chunked.end() && it->second.sourceFd >= 0;
  }
  /// Whether some chunk of `slot` is out.
  bool hasChunksOut(int64_t slot) const;
  /// Makes every chunk of `slot` absent and forgets the slot's chunks (before
  /// its buffer is freed).
  void discardChunks(int64_t slot, Device &device, Buffer &buf);
  /// The same for a read-only slot (takeSourceChunks) too, which is then
  /// forgotten: its slot free for another program's buffer.
  void forgetChunks(int64_t slot, Device &device, Buffer &buf);

  bool isEvicted(int64_t slot) const { return evicted.count(slot) != 0; }
  bool hasCopy(int64_t slot) const { return copies.count(slot) != 0; }
  /// The size in floats of an evicted slot's buffer; -1 when resident.
  int64_t evictedSize(int64_t slot) const;
  const SpillCounters &counters() const { return stats; }
  const SpillFile &file() const { return *storage; }
  /// The file, for data of the run that is not a slot's (the graph's CSR
  /// out of core: GraphOnStorage.h), not counted here.
  SpillFile &file() { return *storage; }

private:
  struct Spilled {
    SpillExtent extent;
    int64_t elements;
  };
  std::unique_ptr<SpillFile> storage;
  /// Every slot with a copy in storage; `evicted` those not resident.
  std::unordered_map<int64_t, Spilled> copies;
  std::unordered_set<int64_t> evicted;
  /// A slot's ranges with a copy: offset -> the range.
  struct RangeCopy {
    int64_t count;
    SpillExtent extent;
    bool out;         // its memory given back
    int64_t released; // what Device::releasePages returned for it
  };
  std::unordered_map<int64_t, std::map<int64_t, RangeCopy>> ranges;
  /// The range of `slot` at [offset, offset + count), or an error when the
  /// bounds are outside `buf` or overlap another range; null (and no error)
  /// when it has no record.
  RangeCopy *findRange(int64_t slot, const Buffer &buf, int64_t offset,
                       int64_t count, std::string &error);
  struct ChunkedSlot {
    int64_t rows = 0, rowElements = 0, chunks = 0;
    /// Chunk c's rows [bounds[c], bounds[c+1]); empty: gnnrtChunkRowBound.
    std::vector<int64_t> bounds;
    enum State : uint8_t { Absent, Resident, Out, Partial };
    std::vector<State> state;
    std::vector<SpillExtent> copy;
    std::vector<bool> hasCopy;
    /// Resident chunks overlapping each page of the buffer.
    std::vector<uint16_t> pageRefs;
    /// A read-only slot's file (takeSourceChunks); -1 for the others.
    int sourceFd = -1;
    int64_t sourceOffset = 0;
    std::string sourceName;
    /// The file's row of each row of the slot; empty: the same row.
    std::vector<int64_t> sourceRows;
  };
  std::unordered_map<int64_t, ChunkedSlot> chunked;
  /// The chunk's elements [offset, offset + count).
  static std::pair<int64_t, int64_t> chunkElements(const ChunkedSlot &cs,
                                                   int64_t chunk);
  /// Makes the chunk's pages usable (those no other resident chunk holds)
  /// and counts it resident, or the reverse.
  static void commitChunk(ChunkedSlot &cs, Device &device, Buffer &buf,
                          int64_t chunk);
  static void releaseChunk(ChunkedSlot &cs, Device &device, Buffer &buf,
                           int64_t chunk);
  ChunkedSlot *findChunk(int64_t slot, int64_t chunk, std::string &error);
  /// Reads `bytes` at element `offset` of the slot's buffer from its copy
  /// (the chunk's extent in the spill file, or the source file's rows),
  /// `chunkOffset` the element of the chunk's first row.
  bool readChunkPart(ChunkedSlot &cs, Device &device, Buffer &buf,
                     int64_t chunk, int64_t chunkOffset, int64_t offset,
                     int64_t bytes, std::string &error);
  /// Reads `bytes` into device memory at `data` with `read`, which fills
  /// host memory (directly, or the staging buffer where the host cannot
  /// address the device's memory).
  bool readInto(Device &device, float *data, int64_t bytes,
                const std::function<bool(void *)> &read);
  /// readInto from `extent` of the spill file.
  bool readInto(Device &device, const SpillExtent &extent, float *data,
                int64_t bytes, std::string &error) {
    return readInto(device, data, bytes, [&](void *host) {
      return storage->read(extent, host, error);
    });
  }
  SpillCounters stats;
  /// Host copies for a device whose memory the host cannot address.
  std::vector<char> staging;
};

} // namespace gnnrt

#endif // GNNRT_SPILL_H
