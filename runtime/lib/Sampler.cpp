//===- Sampler.cpp - neighbour sampling into per-layer blocks -------------===//
//
// Sampler.h. The picks of a row are its fanout in-edges with the smallest
// counter-based hashes (a uniform sample without replacement), kept in the
// graph's order.
//
//===----------------------------------------------------------------------===//

#include "Sampler.h"

#include "Random.h"

#include <algorithm>
#include <cerrno>
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
                                     uint64_t batch) const {
  SampledBatch out;
  out.seeds = seeds;
  const int64_t L = numLayers();
  out.blocks.resize(L);
  // Each vertex's local id in the block being built (-1: none), reset after.
  std::vector<int32_t> local(numVertices, -1);
  const uint64_t batchKey = mix64(seed ^ mix64(batch + 0x2545f4914f6cdd1dULL));
  // Expansion-aware sampling: every in-edge between the held vertices.
  std::vector<uint8_t> held;
  if (expansionAware) {
    held.assign(numVertices, 0);
    holdExpansion(seeds, held);
  }
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
    for (int64_t i = kept; i < b.numDst; ++i) {
      const int64_t v = dst[i];
      int64_t degree = offsets[v + 1] - offsets[v];
      if (expansionAware)
        degree = std::count_if(sources + offsets[v], sources + offsets[v + 1],
                               [&](int32_t u) { return held[u] != 0; });
      b.offsets[i + 1] =
          b.offsets[i] + (fanout < 0 ? degree : std::min(fanout, degree));
    }
    b.edgePositions.resize(b.offsets[b.numDst]);
    if (outer)
      std::copy_n(outer->edgePositions.begin(), keptEdges,
                  b.edgePositions.begin());
    const uint64_t layerKey = mix64(batchKey ^ mix64(static_cast<uint64_t>(l)));
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t i = kept; i < b.numDst; ++i) {
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
      const int32_t u = sources[b.edgePositions[e]];
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
