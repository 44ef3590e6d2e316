//===- SpillChunks.cpp - the slow tier's chunked slots --------------------===//
//
// SpillStore's chunked slots (Spill.h): buffers in row chunks that move
// between the fast tier and the spill file (or, read-only, the dataset's
// features.npy) one chunk at a time.
//
//===----------------------------------------------------------------------===//

#include "Spill.h"

#include "Context.h"
#include "Dataset.h"
#include "Device.h"
#include "File.h"
#include "Memory.h"

#include <algorithm>
#include <string>

#include <unistd.h>

namespace gnnrt {

namespace {

int64_t pageSize() {
  static const int64_t page = sysconf(_SC_PAGESIZE);
  return page;
}

std::string chunkName(int64_t slot, int64_t chunk) {
  return "chunk " + std::to_string(chunk) + " of slot " + std::to_string(slot);
}

} // namespace

std::pair<int64_t, int64_t> SpillStore::chunkElements(const ChunkedSlot &cs,
                                                      int64_t chunk) {
  const bool given = !cs.bounds.empty();
  const int64_t b =
      given ? cs.bounds[chunk] : gnnrtChunkRowBound(cs.rows, cs.chunks, chunk);
  const int64_t e = given ? cs.bounds[chunk + 1]
                          : gnnrtChunkRowBound(cs.rows, cs.chunks, chunk + 1);
  return {b * cs.rowElements, (e - b) * cs.rowElements};
}

/// Applies `act` to each maximal run of the chunk's pages whose reference
/// count `pick` selects, after `update` changed each page's count.
template <typename Update, typename Act>
static void forChunkPages(std::vector<uint16_t> &refs, char *base,
                          int64_t offset, int64_t count, Update update,
                          Act act) {
  if (count <= 0)
    return;
  const int64_t page = pageSize();
  const int64_t first = offset * 4 / page;
  const int64_t last = ((offset + count) * 4 - 1) / page;
  int64_t runStart = -1;
  for (int64_t p = first; p <= last + 1; ++p) {
    const bool selected = p <= last && update(refs[p]);
    if (selected && runStart < 0)
      runStart = p;
    if (!selected && runStart >= 0) {
      act(base + runStart * page, (p - runStart) * page);
      runStart = -1;
    }
  }
}

void SpillStore::commitChunk(ChunkedSlot &cs, Device &device, Buffer &buf,
                             int64_t chunk) {
  auto [offset, count] = chunkElements(cs, chunk);
  forChunkPages(
      cs.pageRefs, reinterpret_cast<char *>(buf.data), offset, count,
      [](uint16_t &r) { return r++ == 0; },
      [&](char *p, int64_t bytes) {
        // What the device gives back it counts again; a device that keeps
        // the memory (releasePages returns 0) counted it all along.
        device.restorePages(p, bytes, device.releasesPages() ? bytes : 0);
      });
  cs.state[chunk] = ChunkedSlot::Resident;
}

void SpillStore::releaseChunk(ChunkedSlot &cs, Device &device, Buffer &buf,
                              int64_t chunk) {
  auto [offset, count] = chunkElements(cs, chunk);
  forChunkPages(
      cs.pageRefs, reinterpret_cast<char *>(buf.data), offset, count,
      [](uint16_t &r) { return --r == 0; },
      [&](char *p, int64_t bytes) { device.releasePages(p, bytes); });
}

bool SpillStore::takeChunks(int64_t slot, Device &device, Buffer &buf,
                            int64_t rows, int64_t rowElements, int64_t chunks,
                            std::string &error,
                            const std::vector<int64_t> *bounds) {
  error.clear();
  if (!buf.released || rows < 0 || rowElements < 0 || chunks < 1 ||
      rows * rowElements > buf.size) {
    error = "slot " + std::to_string(slot) + ": " + std::to_string(chunks) +
            " chunks of " + std::to_string(rows) + " rows of " +
            std::to_string(rowElements) + " floats do not fit its buffer";
    return false;
  }
  if (bounds) {
    bool ok = static_cast<int64_t>(bounds->size()) == chunks + 1 &&
              bounds->front() == 0 && bounds->back() == rows;
    for (size_t c = 1; ok && c < bounds->size(); ++c)
      ok = (*bounds)[c - 1] <= (*bounds)[c];
    if (!ok) {
      error = "slot " + std::to_string(slot) + ": the bounds of " +
              std::to_string(chunks) + " chunks are not " +
              std::to_string(chunks + 1) + " ascending rows from 0 to " +
              std::to_string(rows);
      return false;
    }
  }
  auto it = chunked.find(slot);
  if (it != chunked.end()) {
    ChunkedSlot &cs = it->second;
    if (cs.rows == rows && cs.rowElements == rowElements &&
        cs.chunks == chunks &&
        cs.bounds == (bounds ? *bounds : std::vector<int64_t>()))
      return true;
    if (hasChunksOut(slot)) {
      error = "slot " + std::to_string(slot) +
              " is taken with other chunks while chunks of it are out";
      return false;
    }
    discardChunks(slot, device, buf);
  }
  ChunkedSlot cs;
  cs.rows = rows;
  cs.rowElements = rowElements;
  cs.chunks = chunks;
  if (bounds)
    cs.bounds = *bounds;
  cs.state.assign(chunks, ChunkedSlot::Absent);
  cs.copy.assign(chunks, SpillExtent());
  cs.hasCopy.assign(chunks, false);
  const int64_t page = pageSize();
  cs.pageRefs.assign((buf.size * 4 + page - 1) / page, 0);
  chunked[slot] = std::move(cs);
  return true;
}

SpillStore::ChunkedSlot *SpillStore::findChunk(int64_t slot, int64_t chunk,
                                               std::string &error) {
  auto it = chunked.find(slot);
  if (it == chunked.end()) {
    error = "slot " + std::to_string(slot) +
            " is not chunked (no gnnrtBufferChunks for it)";
    return nullptr;
  }
  if (chunk < 0 || chunk >= it->second.chunks) {
    error = "slot " + std::to_string(slot) + " has " +
            std::to_string(it->second.chunks) + " chunks, not chunk " +
            std::to_string(chunk);
    return nullptr;
  }
  return &it->second;
}

bool SpillStore::readChunkPart(ChunkedSlot &cs, Device &device, Buffer &buf,
                               int64_t chunk, int64_t chunkOffset,
                               int64_t offset, int64_t bytes,
                               std::string &error) {
  float *data = buf.data + offset;
  if (cs.sourceFd >= 0 && !cs.sourceRows.empty()) {
    // A part's rows: whole rows, each at its file row's place.
    const int64_t width = cs.rowElements;
    const int64_t count = bytes / int64_t(sizeof(float));
    if (width < 1 || offset % width != 0 || count % width != 0) {
      error = "slot rows of " + cs.sourceName + ": elements [" +
              std::to_string(offset) + ", " + std::to_string(offset + count) +
              ") are not whole rows of " + std::to_string(width);
      return false;
    }
    const std::vector<int64_t> rows(cs.sourceRows.begin() + offset / width,
                                    cs.sourceRows.begin() +
                                        (offset + count) / width);
    return readInto(device, data, bytes, [&](void *host) {
      StoredReads reads;
      return readStoredRows(cs.sourceFd, cs.sourceOffset, cs.sourceName, width,
                            rows, static_cast<float *>(host), reads, error);
    });
  }
  if (cs.sourceFd >= 0) {
    // The file's rows: at `sourceOffset` plus the element's place.
    const int64_t at = cs.sourceOffset + offset * int64_t(sizeof(float));
    return readInto(device, data, bytes, [&](void *host) {
      return readAt(cs.sourceFd, cs.sourceName, at, host, bytes, error);
    });
  }
  const int64_t within = (offset - chunkOffset) * int64_t(sizeof(float));
  return readInto(device, data, bytes, [&](void *host) {
    return storage->readPart(cs.copy[chunk], within, host, bytes, error);
  });
}

bool SpillStore::fetchChunk(int64_t slot, Device &device, Buffer &buf,
                            int64_t chunk, std::string &error) {
  error.clear();
  ChunkedSlot *cs = findChunk(slot, chunk, error);
  if (!cs)
    return false;
  const ChunkedSlot::State state = cs->state[chunk];
  if (state == ChunkedSlot::Resident)
    return true;
  if (state != ChunkedSlot::Partial) // a partial one has its memory
    commitChunk(*cs, device, buf, chunk);
  if (state == ChunkedSlot::Absent)
    return true; // memory only: its contents are dead
  auto [offset, count] = chunkElements(*cs, chunk);
  const int64_t bytes = count * static_cast<int64_t>(sizeof(float));
  const bool read =
      readChunkPart(*cs, device, buf, chunk, offset, offset, bytes, error);
  endChunkRead(slot, device, buf, chunk, bytes, /*whole=*/true, !read);
  if (!read)
    error = chunkName(slot, chunk) + " (" + formatBytes(bytes) + "): " + error;
  return read;
}

bool SpillStore::beginChunkRead(int64_t slot, Device &device, Buffer &buf,
                                int64_t chunk, std::string &error) {
  error.clear();
  ChunkedSlot *cs = findChunk(slot, chunk, error);
  if (!cs)
    return false;
  if (cs->state[chunk] != ChunkedSlot::Out) {
    error = chunkName(slot, chunk) + " is not out (nothing to read)";
    return false;
  }
  commitChunk(*cs, device, buf, chunk);
  // Debugging a plan: the rows a partial read leaves are NaN, so that a
  // step that reads them (which the compiler must not emit) shows.
  static const bool poison = envFlag("GNNRT_POISON_FREED", false);
  if (poison && device.deviceMemoryIsHostMemory()) {
    auto [offset, count] = chunkElements(*cs, chunk);
    std::fill_n(buf.data + offset, count,
                std::numeric_limits<float>::quiet_NaN());
  }
  return true;
}

bool SpillStore::readChunkRows(
    int64_t slot, Device &device, Buffer &buf, int64_t chunk,
    const std::vector<std::pair<int64_t, int64_t>> &runs, int64_t &bytes,
    std::string &error) {
  error.clear();
  auto it = chunked.find(slot);
  if (it == chunked.end() || chunk < 0 || chunk >= it->second.chunks) {
    error = chunkName(slot, chunk) + " is not a chunk of a chunked slot";
    return false;
  }
  ChunkedSlot &cs = it->second;
  auto [offset, count] = chunkElements(cs, chunk);
  const int64_t rows = cs.rowElements ? count / cs.rowElements : 0;
  const int64_t rowBytes = cs.rowElements * int64_t(sizeof(float));
  int64_t previousEnd = 0;
  for (auto [first, end] : runs) {
    if (first < previousEnd || end <= first || end > rows) {
      error = chunkName(slot, chunk) + ": rows [" + std::to_string(first) +
              ", " + std::to_string(end) + ") to read are not ascending " +
              "runs within its " + std::to_string(rows) + " rows";
      return false;
    }
    previousEnd = end;
  }
  for (auto [first, end] : runs) {
    const int64_t part = (end - first) * rowBytes;
    if (!readChunkPart(cs, device, buf, chunk, offset,
                       offset + first * cs.rowElements, part, error)) {
      error = chunkName(slot, chunk) + " (rows " + std::to_string(first) +
              " to " + std::to_string(end) + " of it): " + error;
      return false;
    }
    bytes += part;
  }
  return true;
}

void SpillStore::endChunkRead(int64_t slot, Device &device, Buffer &buf,
                              int64_t chunk, int64_t bytes, bool whole,
                              bool failed) {
  ChunkedSlot &cs = chunked.at(slot);
  if (failed) {
    releaseChunk(cs, device, buf, chunk);
    cs.state[chunk] = ChunkedSlot::Out;
    return;
  }
  cs.state[chunk] = whole ? ChunkedSlot::Resident : ChunkedSlot::Partial;
  if (cs.sourceFd >= 0) {
    stats.sourceReadBytes += bytes;
    stats.sourceFetches += 1;
  } else {
    stats.readBytes += bytes;
    stats.fetches += 1;
  }
  if (!whole) {
    stats.selectiveFetches += 1;
    stats.selectiveSkippedBytes +=
        chunkElements(cs, chunk).second * int64_t(sizeof(float)) - bytes;
  }
}

bool SpillStore::fetchChunkRows(
    int64_t slot, Device &device, Buffer &buf, int64_t chunk,
    const std::vector<std::pair<int64_t, int64_t>> &runs, std::string &error) {
  error.clear();
  ChunkedSlot *cs = findChunk(slot, chunk, error);
  if (!cs)
    return false;
  if (cs->state[chunk] != ChunkedSlot::Out)
    return fetchChunk(slot, device, buf, chunk, error);
  if (!beginChunkRead(slot, device, buf, chunk, error))
    return false;
  int64_t bytes = 0;
  const bool read = readChunkRows(slot, device, buf, chunk, runs, bytes, error);
  endChunkRead(slot, device, buf, chunk, bytes, /*whole=*/false, !read);
  return read;
}

bool SpillStore::chunkShape(int64_t slot, int64_t &rows, int64_t &rowElements,
                            int64_t &chunks) const {
  auto it = chunked.find(slot);
  if (it == chunked.end() || !it->second.bounds.empty())
    return false;
  rows = it->second.rows;
  rowElements = it->second.rowElements;
  chunks = it->second.chunks;
  return true;
}

bool SpillStore::isChunkOut(int64_t slot, int64_t chunk) const {
  auto it = chunked.find(slot);
  return it != chunked.end() && chunk >= 0 && chunk < it->second.chunks &&
         it->second.state[chunk] == ChunkedSlot::Out;
}

bool SpillStore::evictChunk(int64_t slot, Device &device, Buffer &buf,
                            int64_t chunk, std::string &error) {
  error.clear();
  ChunkedSlot *cs = findChunk(slot, chunk, error);
  if (!cs)
    return false;
  if (cs->sourceFd >= 0) {
    error = chunkName(slot, chunk) + " is read-only (rows of " +
            cs->sourceName + "): drop it, never evict it";
    return false;
  }
  if (cs->state[chunk] == ChunkedSlot::Out)
    return true;
  if (cs->state[chunk] == ChunkedSlot::Absent) {
    error = chunkName(slot, chunk) + " is absent (nothing written to evict)";
    return false;
  }
  if (cs->state[chunk] == ChunkedSlot::Partial) {
    error = chunkName(slot, chunk) +
            " holds only the rows a tile reads (a selective fetch): drop it, "
            "never evict it";
    return false;
  }
  auto [offset, count] = chunkElements(*cs, chunk);
  const int64_t bytes = count * static_cast<int64_t>(sizeof(float));
  device.synchronize();
  const void *host = device.hostView(buf.data + offset, bytes, staging);
  SpillExtent extent;
  if (!storage->write(host, bytes, extent, error)) {
    error = chunkName(slot, chunk) + " (" + formatBytes(bytes) + "): " + error;
    return false;
  }
  if (cs->hasCopy[chunk])
    storage->release(cs->copy[chunk]); // the older copy, once the new is whole
  cs->copy[chunk] = extent;
  cs->hasCopy[chunk] = true;
  releaseChunk(*cs, device, buf, chunk);
  cs->state[chunk] = ChunkedSlot::Out;
  stats.writtenBytes += bytes;
  stats.evictions += 1;
  return true;
}

bool SpillStore::dropChunk(int64_t slot, Device &device, Buffer &buf,
                           int64_t chunk, bool keep, std::string &error) {
  error.clear();
  ChunkedSlot *cs = findChunk(slot, chunk, error);
  if (!cs)
    return false;
  ChunkedSlot::State &state = cs->state[chunk];
  const bool holds =
      state == ChunkedSlot::Resident || state == ChunkedSlot::Partial;
  if (cs->sourceFd >= 0) { // the file stays the copy
    if (holds)
      releaseChunk(*cs, device, buf, chunk);
    state = ChunkedSlot::Out;
    return true;
  }
  if (keep) {
    if (state == ChunkedSlot::Out)
      return true;
    if (state == ChunkedSlot::Absent || !cs->hasCopy[chunk]) {
      error = chunkName(slot, chunk) +
              ": no copy of it in the spill file to drop to";
      return false;
    }
    releaseChunk(*cs, device, buf, chunk);
    state = ChunkedSlot::Out;
    return true;
  }
  if (holds)
    releaseChunk(*cs, device, buf, chunk);
  if (cs->hasCopy[chunk])
    storage->release(cs->copy[chunk]);
  cs->hasCopy[chunk] = false;
  state = ChunkedSlot::Absent;
  return true;
}

bool SpillStore::hasChunksOut(int64_t slot) const {
  auto it = chunked.find(slot);
  if (it == chunked.end())
    return false;
  for (ChunkedSlot::State state : it->second.state)
    if (state == ChunkedSlot::Out || state == ChunkedSlot::Partial)
      return true;
  return false;
}

void SpillStore::discardChunks(int64_t slot, Device &device, Buffer &buf) {
  auto it = chunked.find(slot);
  if (it == chunked.end())
    return;
  std::string ignored;
  for (int64_t c = 0; c < it->second.chunks; ++c)
    dropChunk(slot, device, buf, c, false, ignored);
  if (it->second.sourceFd < 0)
    chunked.erase(it);
}

void SpillStore::forgetChunks(int64_t slot, Device &device, Buffer &buf) {
  discardChunks(slot, device, buf);
  chunked.erase(slot);
}

bool SpillStore::takeSourceChunks(int64_t slot, Device &device, Buffer &buf,
                                  int64_t rows, int64_t rowElements,
                                  int64_t chunks, int fd, int64_t offset,
                                  const std::string &name, std::string &error,
                                  const std::vector<int32_t> *fileRows) {
  error.clear();
  if (fileRows && fileRows->empty())
    fileRows = nullptr;
  if (fileRows && static_cast<int64_t>(fileRows->size()) != rows) {
    error = "slot " + std::to_string(slot) + ": " +
            std::to_string(fileRows->size()) + " file rows for " +
            std::to_string(rows) + " rows";
    return false;
  }
  auto it = chunked.find(slot);
  if (it != chunked.end()) {
    const ChunkedSlot &cs = it->second;
    const bool sameRows =
        fileRows ? std::equal(cs.sourceRows.begin(), cs.sourceRows.end(),
                              fileRows->begin(), fileRows->end())
                 : cs.sourceRows.empty();
    if (cs.sourceFd == fd && cs.rows == rows && cs.rowElements == rowElements &&
        cs.chunks == chunks && sameRows)
      return true;
    error = "slot " + std::to_string(slot) + " is taken already" +
            (cs.sourceFd >= 0 ? " as other read-only chunks of " + cs.sourceName
                              : std::string(" by the program's buffers"));
    return false;
  }
  if (fd < 0 || offset < 0) {
    error =
        "slot " + std::to_string(slot) + ": no file to read " + name + " from";
    return false;
  }
  if (!takeChunks(slot, device, buf, rows, rowElements, chunks, error))
    return false;
  ChunkedSlot &cs = chunked[slot];
  cs.state.assign(chunks, ChunkedSlot::Out);
  cs.hasCopy.assign(chunks, true);
  cs.sourceFd = fd;
  cs.sourceOffset = offset;
  cs.sourceName = name;
  if (fileRows)
    cs.sourceRows.assign(fileRows->begin(), fileRows->end());
  return true;
}

} // namespace gnnrt
