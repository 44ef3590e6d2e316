//===- Sampler.h - neighbour sampling into per-layer blocks -----*- C++ -*-===//
//
// Mini-batch training's sampler (issue 21, docs/MiniBatch.md), the runtime
// side of PyG's NeighborLoader and DGL's NeighborSampler: batches of seed
// vertices from the train mask, shuffled per epoch, and for each batch one
// bipartite block per layer, sampled from the seeds outwards (uniform
// without replacement; -1 takes every in-edge). Each vertex is expanded
// once, at the hop that first reaches it, with the fanout of the layer
// that hop feeds (PyG's NeighborLoader): the seeds with the last layer's,
// the vertices they reach first with the layer before's, and so on.
//
// A block's destinations are its first sources (relabelled ids: the
// destinations keep their order as sources 0 .. numDst - 1, the other
// sources follow in order of first appearance), its in-edges are a CSC
// over the destinations whose sources ascend within a row (the graph's
// order: the picked positions of a row are sorted), and each edge keeps
// its position in the graph's CSC (for edge data). blocks[0] is the input
// layer's: its sources are the rows of the features to gather
// (`inputVertices`, global ids); blocks[L-1]'s destinations are the seeds.
// Since each vertex is expanded once, block l's first rows are block
// l + 1's (the same edges, the same local ids): every block is a prefix
// of blocks[0], whose rows are then the batch's sampled edges, and layer
// l's destinations read sources among the first levelRows()[l] vertices
// (the prefix property the compiled program's per-level rows rely on).
//
// Draws are counter-based: edge position p of destination v in layer l of
// batch b is kept when its hash of (seed, b, l, v, p) is among the fanout
// smallest of v's in-edges (on a row more than 8 times the fanout, by
// Floyd's algorithm over the hashes of (seed, b, l, v, j) for the last
// fanout positions j), so a batch is the same for any thread count and in
// any order of sampling; the rows are sampled in parallel (OpenMP) and
// relabelled in order.
//
// Expansion-aware sampling (GraNNDis §4.3, for its co-batches) replaces the
// per-hop fanouts: the batch's seeds are the inner set, whose in-edges among
// themselves are never sampled; the vertices outside it are reached at most
// `maxHop` hops from the seeds, each vertex the traversal expands taking at
// most `fanout` of its in-neighbours outside the inner set (the smallest
// hashes of the seed and the edge's two ends: drawn once, the same in every
// batch). The batch is then the subgraph the held vertices induce: the blocks
// hold every in-edge between held vertices that the seeds' outputs reach.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_SAMPLER_H
#define GNNRT_SAMPLER_H

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace gnnrt {

class Communicator;

/// P³'s hash-partitioned structure (DIGEST-mggcn-granndis-p3.md §3.3;
/// docs/MiniBatch.md, "The structure partitioned by hash"): the in-edges of
/// the vertices a process owns, vertex v being owned by process
/// owner(v, N) = hash(v) mod N of N. Any process computes any vertex's owner
/// from its id: no routing table. Each owned vertex keeps its in-edges'
/// sources and its first in-edge's position in the graph's CSC (its edges'
/// positions follow on), so that a row's draws and its edges' positions are
/// those of the whole graph's sampler.
class StructureShard {
public:
  /// This process's shard of a graph's CSC (`offsets`: V + 1, `sources`:
  /// the in-edges' sources, ascending within a row): process `rank` of
  /// `size`.
  StructureShard(const int64_t *offsets, const int32_t *sources,
                 int64_t numVertices, int rank, int size);

  /// The process that owns vertex `v` among `size`.
  static int owner(int64_t v, int size);
  /// `v`'s index among the owned vertices, -1 where `v` is not owned.
  int64_t find(int64_t v) const;
  /// Owned vertex `j`'s in-degree, its in-edges' sources and the position
  /// of its first in-edge in the graph's CSC.
  int64_t degree(int64_t j) const { return offsets[j + 1] - offsets[j]; }
  const int32_t *sourcesOf(int64_t j) const {
    return sources.data() + offsets[j];
  }
  int64_t firstPosition(int64_t j) const { return begins[j]; }

  int rank() const { return myRank; }
  int size() const { return processes; }
  int64_t numVertices() const { return static_cast<int64_t>(owned.size()); }
  int64_t numEdges() const { return static_cast<int64_t>(sources.size()); }
  /// The memory the shard holds.
  int64_t bytes() const;

private:
  int myRank, processes;
  std::vector<int64_t> owned;   // ascending global ids
  std::vector<int64_t> offsets; // numVertices() + 1 into `sources`
  std::vector<int64_t> begins;  // each owned vertex's first CSC position
  std::vector<int32_t> sources;
};

/// One layer's bipartite graph of a sampled batch.
struct Block {
  int64_t numDst = 0, numSrc = 0;
  /// CSC over the destinations: numDst + 1 offsets into `sources`.
  std::vector<int64_t> offsets;
  /// Local source ids in [0, numSrc), ascending within a destination.
  std::vector<int32_t> sources;
  /// Each edge's position in the graph's CSC (its edge data's row).
  std::vector<int64_t> edgePositions;
  /// Global ids of the sources (the destinations first).
  std::vector<int64_t> vertices;
};

/// A batch: its seeds and one block per layer, input layer first.
struct SampledBatch {
  std::vector<int64_t> seeds;
  std::vector<Block> blocks;
  /// Sampling stopped at a block of more edges than its limit: `blocks` is
  /// empty, not the batch's.
  bool truncated = false;
  /// Global ids of blocks[0]'s sources: the feature rows the batch reads.
  const std::vector<int64_t> &inputVertices() const {
    return blocks.front().vertices;
  }
  /// The sampled edges: blocks[0]'s (every block is a prefix of it).
  int64_t numEdges() const;
  /// The rows each level of the model computes, outermost first:
  /// blocks[0]'s sources, then each block's destinations (the seeds last).
  std::vector<int64_t> levelRows() const;
};

/// Samples blocks from a graph's CSC (`offsets`: V + 1, `sources`: the
/// in-edges' sources, ascending within a row). The arrays must outlive it.
class NeighborSampler {
public:
  /// `fanouts[l]` is layer l's (input layer first), -1 for every in-edge.
  NeighborSampler(const int64_t *offsets, const int32_t *sources,
                  int64_t numVertices, std::vector<int64_t> fanouts,
                  uint64_t seed);

  /// The blocks of the batch numbered `batch` (a key: the same number
  /// gives the same blocks) whose seeds are `seeds` (distinct global ids).
  /// With `edgeLimit` >= 0, a batch whose edges pass it is not built: the
  /// sampling stops at the first block that does (blocks[0] holds every
  /// block's edges), before its edges are drawn, and returns it truncated.
  /// So a caller that needs the batch to fit in some memory bounds what
  /// sampling it takes. Not with the shard (whose hops are collectives).
  SampledBatch sample(const std::vector<int64_t> &seeds, uint64_t batch,
                      int64_t edgeLimit = -1) const;

  int64_t numLayers() const { return static_cast<int64_t>(fanouts.size()); }

  /// Samples by expansion-aware sampling instead of the fanouts (which then
  /// give only the layers' count): the external vertices within `maxHop`
  /// hops of the seeds (-1: the layers' count), at most `fanout` picked by
  /// each expanded vertex (-1: all).
  void useExpansionAware(int64_t maxHop, int64_t fanout) {
    expansionAware = true;
    externalHops = maxHop < 0 ? numLayers() : std::min(maxHop, numLayers());
    externalFanout = fanout;
  }
  bool isExpansionAware() const { return expansionAware; }
  /// Samples from the hash-partitioned structure `shard` instead of the
  /// graph's CSC (which the sampler then never reads): at each hop the
  /// owners of the rows to expand pick their in-edges and push them to
  /// every process (two all-gathers on `comm`: the counts, then the edges),
  /// so that every process holds the batch that the whole graph's sampler
  /// gives, bit for bit. Every process must call sample() with the same
  /// seeds and batch, in the same order, from one thread at a time. Not
  /// with expansion-aware sampling.
  void useShard(const StructureShard *structure, Communicator *world) {
    shard = structure;
    comm = world;
  }
  /// With a shard: the int64 values this process pushed so far (its
  /// contribution to the all-gathers: a row's pick count, and each picked
  /// edge's position and source) and the all-gathers.
  int64_t pushedValues() const { return pushed; }
  int64_t pushCalls() const { return pushes; }
  /// Expansion-aware sampling's hops (clamped to the layers) and fanout.
  int64_t expansionHops() const { return externalHops; }
  int64_t expansionFanout() const { return externalFanout; }

private:
  /// Marks in `held` the seeds and the external vertices expansion-aware
  /// sampling reaches from them.
  void holdExpansion(const std::vector<int64_t> &seeds,
                     std::vector<uint8_t> &held) const;
  /// With a shard: block `b`'s rows [kept, numDst) of destinations `dst`
  /// sampled by their owners and pushed to every process; fills their
  /// offsets and edge positions, and `picked` with their edges' sources
  /// (global ids).
  void exchangeHop(const std::vector<int64_t> &dst, int64_t kept,
                   int64_t fanout, uint64_t layerKey, Block &b,
                   std::vector<int32_t> &picked) const;

  const int64_t *offsets;
  const int32_t *sources;
  int64_t numVertices;
  std::vector<int64_t> fanouts;
  uint64_t seed;
  bool expansionAware = false;
  int64_t externalHops = 0, externalFanout = -1;
  const StructureShard *shard = nullptr;
  Communicator *comm = nullptr;
  mutable int64_t pushed = 0, pushes = 0;
};

/// The part of `batch` that its seeds [begin, end) need (data-parallel
/// mini-batch training: each process trains the share of a batch its seeds
/// need): the seeds, then the vertices each level reads that the level
/// after did not, with every in-edge they have in `batch`. Level l's
/// vertices (the closure of the seeds over L - l hops of the blocks' edges)
/// are the first levelRows()[l], as in a sampled batch, so the compiled
/// program computes each seed from the same edges as on the whole batch.
/// `degrees` receives each vertex's in- and out-degree in the whole batch
/// (its blocks[0]), which a normalisation by degrees reads. With no seeds
/// (begin == end) the share is batch.seeds[0] alone without its edges and
/// with no seed: a step on it contributes no loss and no gradient.
SampledBatch seedShare(const SampledBatch &batch, int64_t begin, int64_t end,
                       std::vector<float> degrees[2]);

/// P³'s whole graph of a batch's shares (docs/MiniBatch.md, "P³ on several
/// processes"): `levels[s]` is share s's rows per level (n_0 all of them,
/// ..., n_L its seeds). The whole graph orders the shares' rows by level
/// band, the highest level first (every share's seeds, then every share's
/// rows of level L - 1 but not L, ...), each band's rows by share in rank
/// order and then as in the share. So level l's rows of the whole graph are
/// its first shareLevelRows(levels, l) = sum over s of n_l(s), as in a
/// sampled batch, and the program on blocks restricts its steps on the
/// whole graph as on one batch.
int64_t shareLevelRows(const std::vector<std::vector<int64_t>> &levels,
                       int64_t level);

/// Calls `f(shareRow, wholeRow, count)` for each band's run of share `s`'s
/// first `rows` rows in the whole graph of `levels` (shareLevelRows), in
/// the share's order.
template <typename F>
void forEachShareRun(const std::vector<std::vector<int64_t>> &levels, int s,
                     int64_t rows, F f) {
  size_t bands = 0;
  for (const std::vector<int64_t> &l : levels)
    bands = std::max(bands, l.size());
  auto n = [&](size_t r, size_t b) -> int64_t {
    return b < levels[r].size() ? levels[r][b] : 0;
  };
  int64_t bandStart = 0;
  for (size_t b = bands; b-- > 0;) {
    int64_t at = bandStart;
    for (int r = 0; r < s; ++r)
      at += n(r, b) - n(r, b + 1);
    const int64_t lo = n(s, b + 1), hi = std::min(n(s, b), rows);
    if (hi > lo)
      f(lo, at, hi - lo);
    for (size_t r = 0; r < levels.size(); ++r)
      bandStart += n(r, b) - n(r, b + 1);
  }
}

/// The epoch's batches of `batchSize` seeds: the vertices `selected`
/// (ascending global ids, e.g. the train mask's labelled ones) in an order
/// shuffled by (seed, epoch), cut in consecutive runs (the last one may be
/// shorter).
std::vector<std::vector<int64_t>>
epochBatches(const std::vector<int64_t> &selected, int64_t batchSize,
             uint64_t seed, uint64_t epoch);

/// Parses `--fanouts` ("25,10", -1 for all): one positive count or -1 per
/// layer; false with `error` set on anything else.
bool parseFanouts(const std::string &text, std::vector<int64_t> &fanouts,
                  std::string &error);

} // namespace gnnrt

#endif // GNNRT_SAMPLER_H
