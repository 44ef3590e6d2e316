//===- GraphOnStorage.cpp - the graph's per-edge arrays out of core -------===//

#include "GraphOnStorage.h"

#include "Device.h"
#include "File.h"
#include "gnnrt/GNNRuntime.h"

#include <algorithm>
#include <chrono>

#include <unistd.h>

namespace gnnrt {

std::unique_ptr<GraphOnStorage> GraphOnStorage::create(
    IndicesOnStorage &indices, const std::vector<int64_t> &dstOffsets,
    unsigned arrays, SpillFile &spill, std::string &error, int64_t blockEdges) {
  std::unique_ptr<GraphOnStorage> g(new GraphOnStorage());
  g->fd = indices.fd;
  indices.fd = -1;
  g->dataOffset = indices.offset;
  g->name = indices.name;
  g->dstOffsets = dstOffsets;
  g->srcOffsets = std::move(indices.srcOffsets);
  g->offsets[0] = g->srcOffsets.data();
  g->offsets[1] = g->dstOffsets.data();
  g->arrays = arrays;
  g->spill = &spill;
  const int64_t V = static_cast<int64_t>(dstOffsets.size()) - 1;
  const int64_t E = dstOffsets.back();
  if (!(arrays & 12))
    return g;
  // The CSR in blocks of whole sources (at least one), each written once:
  // a pass over indices.npy fills the positions of the block's sources,
  // with the edge ids ascending within a source (as bindDataset's CSR).
  blockEdges = std::max<int64_t>(blockEdges, 1);
  std::vector<int32_t> sources, edgeIds, destinations;
  std::vector<int64_t> fill;
  for (int64_t uLo = 0; uLo < V;) {
    int64_t uHi = uLo + 1;
    // (At most blockEdges sources too: their cursors are the block's.)
    while (uHi < V && uHi - uLo < blockEdges &&
           g->srcOffsets[uHi + 1] - g->srcOffsets[uLo] <= blockEdges)
      ++uHi;
    const int64_t pLo = g->srcOffsets[uLo], pHi = g->srcOffsets[uHi];
    if (pHi == pLo) {
      uLo = uHi;
      continue;
    }
    fill.assign(g->srcOffsets.begin() + uLo, g->srcOffsets.begin() + uHi);
    if (arrays & 4)
      edgeIds.assign(pHi - pLo, 0);
    if (arrays & 8)
      destinations.assign(pHi - pLo, 0);
    int64_t v = 0;
    for (int64_t first = 0; first < E; first += blockEdges) {
      const int64_t last = std::min(E, first + blockEdges);
      sources.resize(last - first);
      if (!readAt(g->fd, g->name, g->dataOffset + first * 4, sources.data(),
                  (last - first) * 4, error))
        return nullptr;
      for (int64_t e = first; e < last; ++e) {
        while (dstOffsets[v + 1] <= e)
          ++v;
        const int64_t u = sources[e - first];
        if (u < uLo || u >= uHi)
          continue;
        const int64_t p = fill[u - uLo]++ - pLo;
        if (arrays & 4)
          edgeIds[p] = static_cast<int32_t>(e);
        if (arrays & 8)
          destinations[p] = static_cast<int32_t>(v);
      }
    }
    g->blockStarts.push_back(pLo);
    for (int which = 0; which < 2; ++which) {
      SpillExtent where;
      if (arrays & (4u << which) &&
          !spill.write(which == 0 ? edgeIds.data() : destinations.data(),
                       (pHi - pLo) * 4, where, error))
        return nullptr;
      g->blocks[which].push_back(where);
    }
    uLo = uHi;
  }
  g->blockStarts.push_back(E);
  return g;
}

GraphOnStorage::~GraphOnStorage() {
  if (spill)
    for (auto &extents : blocks)
      for (const SpillExtent &where : extents)
        if (where.bytes > 0)
          spill->release(where);
  forgetCachedFile(fd);
  if (fd >= 0)
    ::close(fd);
}

void GraphOnStorage::useOffsets(const int64_t *sources,
                                const int64_t *destinations) {
  offsets[0] = sources;
  offsets[1] = destinations;
  std::vector<int64_t>().swap(srcOffsets);
  std::vector<int64_t>().swap(dstOffsets);
}

bool GraphOnStorage::readCsr(int which, int64_t first, int64_t last,
                             int32_t *out, std::string &error) {
  // The block holding `first`, then the next ones.
  size_t b = std::upper_bound(blockStarts.begin(), blockStarts.end(), first) -
             blockStarts.begin() - 1;
  for (int64_t p = first; p < last; ++b) {
    const int64_t end = std::min(last, blockStarts[b + 1]);
    if (!spill->readPart(blocks[which][b], (p - blockStarts[b]) * 4,
                         out + (p - first), (end - p) * 4, error))
      return false;
    p = end;
  }
  return true;
}

bool GraphOnStorage::open(Device &device, int side, int64_t lo, int64_t hi,
                          std::string &error) {
  side = side != 0;
  Window &w = windows[side];
  const int firstArray = side == 1 ? 0 : 2;
  if (w.lo == lo && w.hi == hi && lo < hi)
    return true;
  const int64_t first = offsets[side][lo], last = offsets[side][hi];
  for (int a = 0; a < 2; ++a) {
    w.data[a].reset();
    device.setGraphWindow(firstArray + a, nullptr, 0);
  }
  w.lo = w.hi = 0;
  if (lo >= hi)
    return true;
  const auto start = std::chrono::steady_clock::now();
  for (int a = 0; a < 2; ++a) {
    // The CSC's sources are always there (the graph-arrays record's bit 0).
    if (!(side == 1 && a == 0) && !(arrays & (1u << (firstArray + a))))
      continue;
    w.data[a] = std::make_unique<Buffer>(device, last - first + kPadding);
    auto *out = reinterpret_cast<int32_t *>(w.data[a]->data);
    if (side == 1 && a == 0) {
      if (!readAt(fd, name, dataOffset + first * 4, out, (last - first) * 4,
                  error))
        return false;
      counted.readBytes += (last - first) * 4;
    } else if (side == 1) {
      for (int64_t v = lo; v < hi; ++v)
        std::fill(out + (offsets[1][v] - first),
                  out + (offsets[1][v + 1] - first), static_cast<int32_t>(v));
    } else {
      if (!readCsr(a, first, last, out, error))
        return false;
      counted.readBytes += (last - first) * 4;
    }
    device.setGraphWindow(firstArray + a, out, first);
  }
  w.lo = lo;
  w.hi = hi;
  ++counted.windows;
  counted.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return true;
}

std::array<int64_t, 2>
GraphOnStorage::mostChunkEdges(const std::vector<int64_t> &dstOffsets,
                               const std::vector<int64_t> &srcOffsets,
                               int64_t chunks) {
  const int64_t V = static_cast<int64_t>(dstOffsets.size()) - 1;
  chunks = std::max<int64_t>(chunks, 1);
  // RowChunks.h's boundaries: b_k = floor(floor(k V / K) / chunk) * chunk.
  auto bound = [&](int64_t k) {
    if (k >= chunks)
      return V;
    const int64_t at =
        static_cast<int64_t>(static_cast<unsigned __int128>(V) * k / chunks);
    return at / GNNRT_PARALLEL_CHUNK * GNNRT_PARALLEL_CHUNK;
  };
  std::array<int64_t, 2> most = {0, 0};
  for (int64_t k = 0; k < chunks; ++k) {
    const int64_t lo = bound(k), hi = bound(k + 1);
    most[1] = std::max(most[1], dstOffsets[hi] - dstOffsets[lo]);
    if (!srcOffsets.empty())
      most[0] = std::max(most[0], srcOffsets[hi] - srcOffsets[lo]);
  }
  return most;
}

int64_t GraphOnStorage::windowBytes(const std::array<int64_t, 2> &mostEdges,
                                    unsigned arrays) {
  const int64_t cscArrays = 1 + ((arrays >> 1) & 1);
  const int64_t csrArrays = ((arrays >> 2) & 1) + ((arrays >> 3) & 1);
  return 4 * ((mostEdges[1] + kPadding) * cscArrays +
              (mostEdges[0] + kPadding) * csrArrays);
}

int64_t GraphOnStorage::buildBytes(int64_t numEdges, int64_t blockEdges,
                                   unsigned arrays) {
  const int64_t csrArrays = ((arrays >> 2) & 1) + ((arrays >> 3) & 1);
  if (csrArrays == 0)
    return 0;
  // Each CSR array and the sources read, int32; the cursors, int64 per
  // source (at most one per edge of the block, or a vertex of none).
  return std::min(numEdges, blockEdges) * (4 * csrArrays + 4 + 8);
}

} // namespace gnnrt
