//===- Sampler.cpp - neighbour sampling into per-layer blocks -------------===//
//
// Sampler.h. The picks of a row are its fanout in-edges with the smallest
// counter-based hashes (a uniform sample without replacement), kept in the
// graph's order.
//
//===----------------------------------------------------------------------===//

#include "Sampler.h"

#include "Communicator.h"
#include "Context.h"
#include "Random.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <numeric>
#include <utility>

using namespace gnnrt;

int64_t SampledBatch::numEdges() const {
  return blocks.empty() ? 0
                        : static_cast<int64_t>(blocks.front().sources.size());
}

std::vector<int64_t> SampledBatch::levelRows() const {
  std::vector<int64_t> rows;
  if (blocks.empty())
    return rows;
  rows.push_back(blocks.front().numSrc);
  for (const Block &b : blocks)
    rows.push_back(b.numDst);
  return rows;
}

/// Spreads the ids over the processes (RMAT's low ids are its hubs).
static constexpr uint64_t kOwnerSalt = 0x94d049bb133111ebULL;

int StructureShard::owner(int64_t v, int size) {
  return static_cast<int>(mix64(static_cast<uint64_t>(v) ^ kOwnerSalt) %
                          static_cast<uint64_t>(size));
}

StructureShard::StructureShard(const int64_t *graphOffsets,
                               const int32_t *graphSources, int64_t numVertices,
                               int rank, int size)
    : myRank(rank), processes(size) {
  offsets.assign(1, 0);
  for (int64_t v = 0; v < numVertices; ++v) {
    if (owner(v, size) != rank)
      continue;
    owned.push_back(v);
    begins.push_back(graphOffsets[v]);
    sources.insert(sources.end(), graphSources + graphOffsets[v],
                   graphSources + graphOffsets[v + 1]);
    offsets.push_back(static_cast<int64_t>(sources.size()));
  }
  owned.shrink_to_fit();
  begins.shrink_to_fit();
  offsets.shrink_to_fit();
  sources.shrink_to_fit();
}

int64_t StructureShard::find(int64_t v) const {
  const auto it = std::lower_bound(owned.begin(), owned.end(), v);
  return it != owned.end() && *it == v ? it - owned.begin() : -1;
}

int64_t StructureShard::bytes() const {
  return static_cast<int64_t>((owned.size() + offsets.size() + begins.size()) *
                                  sizeof(int64_t) +
                              sources.size() * sizeof(int32_t));
}

NeighborSampler::NeighborSampler(const int64_t *offsets, const int32_t *sources,
                                 int64_t numVertices,
                                 std::vector<int64_t> fanouts, uint64_t seed)
    : offsets(offsets), sources(sources), numVertices(numVertices),
      fanouts(std::move(fanouts)), seed(seed) {}

/// The draw of edge position `p` in a row keyed `key`.
static uint64_t edgeDraw(uint64_t key, int64_t p) {
  return mix64(key ^ (static_cast<uint64_t>(p) * 0xd1b54a32d192ed03ULL));
}

/// Fills `out` with `k` distinct positions of [begin, end), uniformly
/// without replacement, ascending: the positions whose draws are the `k`
/// smallest, or on a row much longer than `k` Floyd's algorithm (a k-subset
/// from k draws, not one per in-edge: a power-law graph's hubs, which the
/// sampler reaches often, have tens of thousands).
static void pickRow(uint64_t key, int64_t begin, int64_t end, int64_t k,
                    int64_t *out) {
  const int64_t d = end - begin;
  if (d <= k) {
    std::iota(out, out + d, begin);
    return;
  }
  if (d > 8 * k && k <= 64) {
    // Floyd: for j = d - k .. d - 1, draw t in [0, j]; take t, or j when t
    // is taken already. Every k-subset comes out with probability 1 / C(d, k).
    for (int64_t j = d - k, n = 0; j < d; ++j, ++n) {
      const uint64_t t = static_cast<uint64_t>(
          (static_cast<unsigned __int128>(edgeDraw(key, j)) *
           static_cast<uint64_t>(j + 1)) >>
          64);
      const int64_t pick = begin + static_cast<int64_t>(t);
      out[n] = std::find(out, out + n, pick) == out + n ? pick : begin + j;
    }
    std::sort(out, out + k);
    return;
  }
  // The k smallest (draw, position) pairs: a selection over the row's
  // draws (distinct positions break ties, so the set is the same as a
  // heap's), then the positions in order.
  thread_local std::vector<std::pair<uint64_t, int64_t>> draws;
  draws.clear();
  for (int64_t p = begin; p < end; ++p)
    draws.push_back({edgeDraw(key, p), p});
  std::nth_element(draws.begin(), draws.begin() + (k - 1), draws.end());
  for (int64_t i = 0; i < k; ++i)
    out[i] = draws[i].second;
  std::sort(out, out + k);
}

SampledBatch NeighborSampler::sample(const std::vector<int64_t> &seeds,
                                     uint64_t batch, int64_t edgeLimit) const {
  SampledBatch out;
  out.seeds = seeds;
  const int64_t L = numLayers();
  out.blocks.resize(L);
  if (shard && (expansionAware || edgeLimit >= 0))
    fatal("the hash-partitioned structure samples with fanouts, not by "
          "expansion-aware sampling, and whole batches");
  // Each vertex's local id in the block being built (-1: none), reset after.
  std::vector<int32_t> local(numVertices, -1);
  const uint64_t batchKey = mix64(seed ^ mix64(batch + 0x2545f4914f6cdd1dULL));
  // Expansion-aware sampling: every in-edge between the held vertices.
  std::vector<uint8_t> held;
  if (expansionAware) {
    held.assign(numVertices, 0);
    holdExpansion(seeds, held);
  }
  std::vector<int32_t> picked; // with a shard: the new edges' sources
  std::vector<int64_t> dst = seeds;
  for (int64_t l = L - 1; l >= 0; --l) {
    Block &b = out.blocks[l];
    const int64_t fanout = expansionAware ? -1 : fanouts[l];
    b.numDst = static_cast<int64_t>(dst.size());
    // The destinations an outer block expanded keep its rows (their local
    // sources are the same ids here: that block's sources are this one's
    // first destinations); the others are sampled with this layer's fanout.
    const Block *outer = l + 1 < L ? &out.blocks[l + 1] : nullptr;
    const int64_t kept = outer ? outer->numDst : 0;
    const int64_t keptEdges = outer ? outer->offsets[kept] : 0;
    b.offsets.assign(b.numDst + 1, 0);
    if (outer)
      std::copy_n(outer->offsets.begin(), kept + 1, b.offsets.begin());
    const uint64_t layerKey = mix64(batchKey ^ mix64(static_cast<uint64_t>(l)));
    if (shard) {
      b.edgePositions.assign(keptEdges, 0);
      if (outer)
        std::copy_n(outer->edgePositions.begin(), keptEdges,
                    b.edgePositions.begin());
      exchangeHop(dst, kept, fanout, layerKey, b, picked);
    }
    for (int64_t i = shard ? b.numDst : kept; i < b.numDst; ++i) {
      const int64_t v = dst[i];
      int64_t degree = offsets[v + 1] - offsets[v];
      if (expansionAware)
        degree = std::count_if(sources + offsets[v], sources + offsets[v + 1],
                               [&](int32_t u) { return held[u] != 0; });
      b.offsets[i + 1] =
          b.offsets[i] + (fanout < 0 ? degree : std::min(fanout, degree));
    }
    if (edgeLimit >= 0 && b.offsets[b.numDst] > edgeLimit) {
      out.blocks.clear();
      out.truncated = true;
      return out;
    }
    if (!shard) {
      b.edgePositions.resize(b.offsets[b.numDst]);
      if (outer)
        std::copy_n(outer->edgePositions.begin(), keptEdges,
                    b.edgePositions.begin());
    }
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t i = shard ? b.numDst : kept; i < b.numDst; ++i) {
      const int64_t v = dst[i];
      if (expansionAware) {
        int64_t *out = b.edgePositions.data() + b.offsets[i];
        for (int64_t p = offsets[v]; p < offsets[v + 1]; ++p)
          if (held[sources[p]])
            *out++ = p;
        continue;
      }
      pickRow(
          mix64(layerKey ^ (static_cast<uint64_t>(v) * 0x9e3779b97f4a7c15ULL)),
          offsets[v], offsets[v + 1], b.offsets[i + 1] - b.offsets[i],
          b.edgePositions.data() + b.offsets[i]);
    }
    // Relabel: the destinations first, then new sources as they appear.
    b.vertices = dst;
    for (int64_t i = 0; i < b.numDst; ++i)
      local[dst[i]] = static_cast<int32_t>(i);
    b.sources.resize(b.edgePositions.size());
    if (outer)
      std::copy_n(outer->sources.begin(), keptEdges, b.sources.begin());
    for (size_t e = static_cast<size_t>(keptEdges); e < b.edgePositions.size();
         ++e) {
      const int32_t u = shard ? picked[e - static_cast<size_t>(keptEdges)]
                              : sources[b.edgePositions[e]];
      if (local[u] < 0) {
        local[u] = static_cast<int32_t>(b.vertices.size());
        b.vertices.push_back(u);
      }
      b.sources[e] = local[u];
    }
    b.numSrc = static_cast<int64_t>(b.vertices.size());
    for (int64_t u : b.vertices)
      local[u] = -1;
    dst = b.vertices;
  }
  return out;
}

void NeighborSampler::exchangeHop(const std::vector<int64_t> &dst, int64_t kept,
                                  int64_t fanout, uint64_t layerKey, Block &b,
                                  std::vector<int32_t> &picked) const {
  const int N = shard->size(), me = shard->rank();
  const int64_t rows = b.numDst - kept;
  // Each row's owner, and the owned rows' place in the shard.
  std::vector<int32_t> ownerOf(rows);
  std::vector<int64_t> at(rows, -1);
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < rows; ++t) {
    ownerOf[t] = StructureShard::owner(dst[kept + t], N);
    if (ownerOf[t] == me)
      at[t] = shard->find(dst[kept + t]);
  }
  std::vector<int64_t> mine, rowsOf(N, 0);
  for (int64_t t = 0; t < rows; ++t) {
    ++rowsOf[ownerOf[t]];
    if (ownerOf[t] == me) {
      if (at[t] < 0)
        fatal("the structure's shard lacks vertex " +
              std::to_string(dst[kept + t]) + ", which it owns");
      mine.push_back(t);
    }
  }
  // This process's part: each owned row's pick count, then each row's
  // picked positions followed by their sources.
  const int64_t m = static_cast<int64_t>(mine.size());
  std::vector<int64_t> start(m + 1, m);
  for (int64_t q = 0; q < m; ++q) {
    const int64_t d = shard->degree(at[mine[q]]);
    start[q + 1] = start[q] + 2 * (fanout < 0 ? d : std::min(fanout, d));
  }
  std::vector<int64_t> part(start[m]);
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t q = 0; q < m; ++q) {
    const int64_t j = at[mine[q]], v = dst[kept + mine[q]];
    const int64_t k = (start[q + 1] - start[q]) / 2;
    const int64_t begin = shard->firstPosition(j);
    int64_t *positions = part.data() + start[q];
    part[q] = k;
    pickRow(
        mix64(layerKey ^ (static_cast<uint64_t>(v) * 0x9e3779b97f4a7c15ULL)),
        begin, begin + shard->degree(j), k, positions);
    const int32_t *sources = shard->sourcesOf(j);
    for (int64_t e = 0; e < k; ++e)
      positions[k + e] = sources[positions[e] - begin];
  }
  // The push: every process's part to every process.
  std::vector<int64_t> sizes(N), displs(N + 1, 0);
  const int64_t own = static_cast<int64_t>(part.size());
  comm->allGather(&own, sizes.data(), 1);
  for (int r = 0; r < N; ++r)
    displs[r + 1] = displs[r] + sizes[r];
  // MPI counts are int: a hop's push past 2^31 values would not go.
  if (displs[N] > INT32_MAX)
    fatal("--structure hash: a hop of " + std::to_string(rows) +
          " rows pushes " + std::to_string(displs[N]) +
          " values, more than an all-gather takes (2^31 - 1); sample fewer "
          "in-edges (--fanouts, --batch-size) or replicate the structure");
  std::vector<int64_t> all(displs[N]);
  comm->allGatherV(part.data(), own, all.data(), sizes.data(), displs.data());
  pushed += 1 + own;
  pushes += 2;
  // The rows in order: each from its owner's part (its counts first).
  std::vector<int64_t> countAt(N), edgeAt(N), rowAt(rows);
  for (int r = 0; r < N; ++r) {
    countAt[r] = displs[r];
    edgeAt[r] = displs[r] + rowsOf[r];
  }
  for (int64_t t = 0; t < rows; ++t) {
    const int r = ownerOf[t];
    const int64_t k = all[countAt[r]++];
    if (k < 0 || edgeAt[r] + 2 * k > displs[r + 1])
      fatal("the structure's push from process " + std::to_string(r) +
            " is malformed");
    b.offsets[kept + t + 1] = b.offsets[kept + t] + k;
    rowAt[t] = edgeAt[r];
    edgeAt[r] += 2 * k;
  }
  const int64_t keptEdges = b.offsets[kept];
  b.edgePositions.resize(b.offsets[b.numDst]);
  picked.resize(b.offsets[b.numDst] - keptEdges);
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t t = 0; t < rows; ++t) {
    const int64_t e0 = b.offsets[kept + t], k = b.offsets[kept + t + 1] - e0;
    const int64_t *from = all.data() + rowAt[t];
    for (int64_t e = 0; e < k; ++e) {
      b.edgePositions[e0 + e] = from[e];
      picked[e0 - keptEdges + e] = static_cast<int32_t>(from[k + e]);
    }
  }
}

void NeighborSampler::holdExpansion(const std::vector<int64_t> &seeds,
                                    std::vector<uint8_t> &held) const {
  // 1: an inner vertex (a seed), 2: an external one.
  for (int64_t v : seeds)
    held[v] = 1;
  const uint64_t key = mix64(seed ^ 0x6a09e667f3bcc909ULL);
  std::vector<int64_t> frontier = seeds, next;
  std::vector<std::pair<uint64_t, int32_t>> picks;
  for (int64_t hop = 0; hop < externalHops && !frontier.empty(); ++hop) {
    next.clear();
    for (int64_t x : frontier) {
      // x's in-neighbours outside the inner set, by their edge's draw (the
      // same for x and w in every batch: the sample is drawn once).
      picks.clear();
      const uint64_t rowKey =
          mix64(key ^ (static_cast<uint64_t>(x) * 0x9e3779b97f4a7c15ULL));
      for (int64_t p = offsets[x]; p < offsets[x + 1]; ++p) {
        const int32_t w = sources[p];
        if (w != x && held[w] != 1)
          picks.push_back({edgeDraw(rowKey, w), w});
      }
      if (externalFanout >= 0 &&
          static_cast<int64_t>(picks.size()) > externalFanout) {
        // A neighbour of several in-edges counts once.
        std::sort(picks.begin(), picks.end());
        picks.erase(std::unique(picks.begin(), picks.end()), picks.end());
        picks.resize(std::min<size_t>(picks.size(), externalFanout));
      }
      for (const auto &pick : picks)
        if (!held[pick.second]) {
          held[pick.second] = 2;
          next.push_back(pick.second);
        }
    }
    std::swap(frontier, next);
  }
}

SampledBatch gnnrt::seedShare(const SampledBatch &batch, int64_t begin,
                              int64_t end, std::vector<float> degrees[2]) {
  const Block &input = batch.blocks.front();
  const int64_t L = static_cast<int64_t>(batch.blocks.size());
  // The whole batch's degrees (every edge is blocks[0]'s).
  std::vector<float> in(input.numSrc, 0.0f), out(input.numSrc, 0.0f);
  for (int64_t v = 0; v < input.numDst; ++v)
    in[v] = static_cast<float>(input.offsets[v + 1] - input.offsets[v]);
  for (int32_t u : input.sources)
    out[u] += 1.0f;
  if (begin >= end) {
    // No seed: vertex `begin` alone at every level, without its edges.
    SampledBatch share;
    share.blocks.resize(L);
    for (Block &b : share.blocks) {
      b.numDst = b.numSrc = 1;
      b.offsets = {0, 0};
      b.vertices = {input.vertices[begin]};
    }
    degrees[0] = {in[begin]};
    degrees[1] = {out[begin]};
    return share;
  }
  // The share's vertices in their new order (old local ids), level by
  // level: the seeds, then what each level adds. counts[l] = |level l|.
  std::vector<int64_t> order;
  std::vector<int64_t> counts(L + 1, 0);
  std::vector<int32_t> id(input.numSrc, -1); // old local id -> new
  for (int64_t v = begin; v < end; ++v) {
    id[v] = static_cast<int32_t>(order.size());
    order.push_back(v);
  }
  counts[L] = end - begin;
  for (int64_t l = L - 1; l >= 0; --l) {
    // Level l + 1's vertices are destinations of blocks[l] (a prefix of
    // blocks[0]): their in-edges' sources join level l.
    const size_t known = order.size();
    for (size_t i = 0; i < known; ++i)
      for (int64_t e = input.offsets[order[i]]; e < input.offsets[order[i] + 1];
           ++e) {
        const int32_t u = input.sources[e];
        if (id[u] < 0) {
          id[u] = static_cast<int32_t>(order.size());
          order.push_back(u);
        }
      }
    counts[l] = static_cast<int64_t>(order.size());
  }
  SampledBatch share;
  share.seeds.assign(batch.seeds.begin() + begin, batch.seeds.begin() + end);
  share.blocks.resize(L);
  for (int64_t l = L - 1; l >= 0; --l) {
    Block &b = share.blocks[l];
    b.numDst = counts[l + 1];
    b.numSrc = counts[l];
    b.offsets.assign(1, 0);
    for (int64_t i = 0; i < b.numDst; ++i) {
      const int64_t o = order[i];
      for (int64_t e = input.offsets[o]; e < input.offsets[o + 1]; ++e) {
        b.sources.push_back(id[input.sources[e]]);
        b.edgePositions.push_back(input.edgePositions[e]);
      }
      b.offsets.push_back(static_cast<int64_t>(b.sources.size()));
    }
    for (int64_t i = 0; i < b.numSrc; ++i)
      b.vertices.push_back(input.vertices[order[i]]);
  }
  degrees[0].clear();
  degrees[1].clear();
  for (int64_t o : order) {
    degrees[0].push_back(in[o]);
    degrees[1].push_back(out[o]);
  }
  return share;
}

std::vector<std::vector<int64_t>>
gnnrt::epochBatches(const std::vector<int64_t> &selected, int64_t batchSize,
                    uint64_t seed, uint64_t epoch) {
  std::vector<int64_t> order = selected;
  // Fisher-Yates with counter-based draws keyed by (seed, epoch).
  const uint64_t key =
      mix64(mix64(seed) ^ mix64(epoch + 0x3c6ef372fe94f82bULL));
  for (size_t i = order.size(); i > 1; --i) {
    const uint64_t j = mix64(key ^ (i * 0xbf58476d1ce4e5b9ULL)) % i;
    std::swap(order[i - 1], order[j]);
  }
  std::vector<std::vector<int64_t>> batches;
  for (size_t b = 0; b < order.size(); b += static_cast<size_t>(batchSize))
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(b),
                         order.begin() + static_cast<std::ptrdiff_t>(std::min(
                                             order.size(), b + batchSize)));
  return batches;
}

bool gnnrt::parseFanouts(const std::string &text, std::vector<int64_t> &fanouts,
                         std::string &error) {
  fanouts.clear();
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    char *end = nullptr;
    errno = 0;
    const long long n = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end || errno == ERANGE || (n < 1 && n != -1) ||
        n > (1LL << 31)) {
      error = "expected comma-separated fanouts, each a positive count or "
              "-1 (every in-edge), but got '" +
              text + "'";
      return false;
    }
    fanouts.push_back(n);
    if (comma == std::string::npos)
      return true;
    start = comma + 1;
  }
}

int64_t gnnrt::shareLevelRows(const std::vector<std::vector<int64_t>> &levels,
                              int64_t level) {
  int64_t rows = 0;
  for (const std::vector<int64_t> &l : levels)
    if (level >= 0 && level < static_cast<int64_t>(l.size()))
      rows += l[level];
  return rows;
}
