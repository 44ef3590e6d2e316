//===- TensorPlacement.h - ROC's DP placement over two tiers ----*- C++ -*-===//
//
// Which tensors stay in the fast tier (capped) between the ops of a DAG, and
// in which order the ops run, so that the bytes copied from the slow tier are
// minimal: ROC's memory manager (Jia et al., MLSys 2020, §5), a dynamic
// program over the DAG's valid execution states, with the recurrence of its
// Algorithm 1 corrected (docs/MemoryBudget.md). Streaming (no caching) and
// LRU are planned in the same harness and accounted the same way, as the
// baselines ROC compares against.
//
// The model has no IR in it: ops with input and output tensor sets, tensors
// with byte sizes. A tensor that no op produces (a graph input, a weight)
// starts in the slow tier; the pass `--gnn-place-tensors` builds the graph
// from IR and turns the plan's steps into copies.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_ANALYSIS_TENSORPLACEMENT_H
#define GNN_ANALYSIS_TENSORPLACEMENT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::gnn {

/// A DAG of ops over sized tensors. Edges are implied: op `p` precedes op `c`
/// when `c` reads a tensor that `p` writes. Each tensor is written by at most
/// one op; one written by none (a source: graph input or weight) lives in the
/// slow tier from the start.
class PlacementGraph {
public:
  /// Adds a tensor of `bytes` bytes and returns its id (0, 1, ...).
  unsigned addTensor(llvm::StringRef name, uint64_t bytes);
  /// Adds an op reading `inputs` and writing `outputs` (tensor ids; repeats
  /// are dropped) and returns its id (0, 1, ...).
  unsigned addOp(llvm::StringRef name, llvm::ArrayRef<unsigned> inputs,
                 llvm::ArrayRef<unsigned> outputs);
  /// Loading input `tensor` for `op` moves only `bytes` (at most its size)
  /// when the tensor leaves the fast tier right after the op: a read for
  /// this op alone may skip what the op does not touch (NeuGraph's selective
  /// loading of a source chunk, θ of its rows). A load that stays resident
  /// for later ops, or one without such a record, moves the whole tensor.
  /// The tensor still occupies its whole size in the fast tier. A second
  /// record for the same pair replaces the first.
  void setFilteredLoad(unsigned op, unsigned tensor, uint64_t bytes);
  /// The filtered loads of `op`: (tensor, bytes), sorted by tensor.
  llvm::ArrayRef<std::pair<unsigned, uint64_t>>
  getFilteredLoads(unsigned op) const {
    return opFiltered[op];
  }

  unsigned getNumTensors() const { return tensorBytes.size(); }
  unsigned getNumOps() const { return opInputs.size(); }
  uint64_t getBytes(unsigned tensor) const { return tensorBytes[tensor]; }
  llvm::StringRef getTensorName(unsigned tensor) const {
    return tensorNames[tensor];
  }
  llvm::StringRef getOpName(unsigned op) const { return opNames[op]; }
  /// IN(op) and OUT(op), sorted.
  llvm::ArrayRef<unsigned> getInputs(unsigned op) const { return opInputs[op]; }
  llvm::ArrayRef<unsigned> getOutputs(unsigned op) const {
    return opOutputs[op];
  }
  /// The op writing `tensor`, or -1 for a source tensor.
  int getProducer(unsigned tensor) const;
  /// Whether no op writes `tensor` (a graph input or a weight).
  bool isSource(unsigned tensor) const { return getProducer(tensor) < 0; }
  /// Whether `tensor` is written by an op and read by none: a result of the
  /// program (a loss, a weight gradient), which must end in the slow tier.
  bool isProgramOutput(unsigned tensor) const;
  /// The sum of the bytes of `tensors`.
  uint64_t getBytes(llvm::ArrayRef<unsigned> tensors) const;
  /// The sum of the bytes of every tensor.
  uint64_t getTotalBytes() const;

  /// Checks the ids, that each tensor has at most one producer, that the ops
  /// form a DAG, that byte sums cannot overflow and that each filtered load
  /// is of an input of its op and at most the input's size.
  llvm::Error verify() const;

private:
  std::vector<std::string> tensorNames;
  std::vector<uint64_t> tensorBytes;
  std::vector<std::string> opNames;
  std::vector<llvm::SmallVector<unsigned, 4>> opInputs, opOutputs;
  std::vector<llvm::SmallVector<std::pair<unsigned, uint64_t>, 1>> opFiltered;
};

/// Bounds on the DP's work; a graph beyond them is refused with an error,
/// never solved slowly. ROC reports at most 16 states and 4096 cache sets per
/// state for every architecture it trains.
struct PlacementLimits {
  /// Valid execution states, ∅ and the full set included.
  size_t maxStates = size_t(1) << 16;
  /// Active tensors of one state: 12 gives 2^12 = 4096 cache sets.
  unsigned maxActiveTensors = 12;
  /// Cache sets over all states (the DP's table).
  uint64_t maxTableEntries = uint64_t(1) << 22;
  /// (state, cache set, next op) triples the DP relaxes.
  uint64_t maxTransitions = uint64_t(1) << 27;
};

/// A valid execution state S (ROC §5): a downward-closed set of ops (every
/// predecessor of an op in S is in S), with its active tensors A(S).
struct ExecutionState {
  /// Bit `op` is set for every op in S.
  llvm::BitVector ops;
  /// A(S), sorted: the tensors that an op outside S reads and that an op in
  /// S wrote or (a source tensor) read. A source tensor becomes active at its
  /// first reader, as ROC's Table 3 shows (w_1 ∉ A({1})).
  llvm::SmallVector<unsigned, 8> active;
};

/// A(S) for any op set `ops` (see ExecutionState::active) of a graph that
/// verifies.
llvm::SmallVector<unsigned, 8> getActiveTensors(const PlacementGraph &graph,
                                                const llvm::BitVector &ops);

/// Every valid execution state, ∅ first and the full set last, by size and
/// then in discovery order; an error when the graph is invalid or has more
/// than `limits.maxStates` states.
llvm::Expected<std::vector<ExecutionState>>
enumerateExecutionStates(const PlacementGraph &graph,
                         const PlacementLimits &limits = {});

/// The op with the most bytes in IN(o) ∪ OUT(o) (the first on ties); 0 for
/// a graph without ops.
unsigned getLargestOp(const PlacementGraph &graph);
/// The least capacity any plan needs: max over ops of size(IN(o) ∪ OUT(o)),
/// what getLargestOp uses (0 without ops).
uint64_t getMinimumCapacity(const PlacementGraph &graph);

enum class PlacementStrategy { Optimal, LRU, Belady, Streaming };
llvm::StringRef stringifyPlacementStrategy(PlacementStrategy strategy);

/// One op of a plan and the copies around it. Before the op, `load` is copied
/// slow→fast; the fast tier then holds the previous step's `keep`, IN(op) and
/// OUT(op) (`workingSetBytes` in all). After it, `writeBack` is copied
/// fast→slow and `evict` is dropped, leaving `keep`. All lists are sorted.
struct PlacementStep {
  unsigned op = 0;
  llvm::SmallVector<unsigned, 4> load;
  /// Of `load`, those evicted after the op with a filtered-load record: they
  /// move only the record's bytes.
  llvm::SmallVector<unsigned, 1> filtered;
  llvm::SmallVector<unsigned, 4> writeBack;
  llvm::SmallVector<unsigned, 4> evict;
  llvm::SmallVector<unsigned, 4> keep;
  uint64_t workingSetBytes = 0;
};

/// A placement: op order and per-step copies, with its byte counts. The
/// objective is `loadBytes` (slow→fast), as in ROC, a filtered load counted
/// at its record's bytes. `writeBytes` (fast→slow)
/// is reported, not minimised: a tensor an op wrote is copied back once, when
/// it leaves the fast tier while a later op still reads it, or as soon as it
/// is written when no op reads it (a program output); a source tensor, or a
/// tensor already copied back, is dropped without a copy.
struct PlacementPlan {
  PlacementStrategy strategy = PlacementStrategy::Optimal;
  uint64_t capacity = 0;
  uint64_t minCapacity = 0;
  /// False when capacity < minCapacity; the plan is then empty.
  bool feasible = false;
  uint64_t loadBytes = 0;
  uint64_t writeBytes = 0;
  /// The largest working set of any step (≤ capacity).
  uint64_t peakBytes = 0;
  std::vector<PlacementStep> steps;
};

/// The plan with the fewest bytes loaded: ROC's DP over (state, cache set)
/// with the corrected recurrence. The fast tier holds at most `capacity`
/// bytes (non-strict: a working set of exactly `capacity` fits). An error
/// when the graph is invalid or beyond `limits`; an infeasible plan when
/// `capacity` is below getMinimumCapacity. A transition that loads an input
/// with a filtered-load record chooses between keeping it (its whole size
/// moved) and dropping it after the op (the record's bytes).
llvm::Expected<PlacementPlan>
planOptimalPlacement(const PlacementGraph &graph, uint64_t capacity,
                     const PlacementLimits &limits = {});

/// Where the DP's table is beyond its limits: the same objective over the
/// fixed op order `order` (or the default one), a beam search over a
/// bounded family of cache sets (which cached tensors leave when an op's
/// working set would not fit: Belady's choice, the largest first, and each
/// tensor first then Belady's), keeping the `beamWidth` cheapest per step.
/// Never loads more than LRU over the same order (it returns LRU's plan
/// then); equal to the DP's optimum where the order is the DP's and the
/// family holds its choices. A filtered load is tried both kept and
/// dropped after its op. Strategy Optimal.
llvm::Expected<PlacementPlan>
planBoundedPlacement(const PlacementGraph &graph, uint64_t capacity,
                     llvm::ArrayRef<unsigned> order = {},
                     unsigned beamWidth = 64);

/// LRU over a fixed op order (`order`, or when empty the topological order
/// that takes the lowest ready op id first): before each op, the least
/// recently used tensors the op does not touch are evicted until its working
/// set fits; a tensor no later op reads is dropped at once. The choice
/// ignores filtered loads (what they move is accounted).
llvm::Expected<PlacementPlan>
planLRUPlacement(const PlacementGraph &graph, uint64_t capacity,
                 llvm::ArrayRef<unsigned> order = {});

/// Belady's MIN over a fixed op order (`order` as for LRU): as LRU, but
/// the victim is the resident tensor whose next read comes last (ties: the
/// larger). The classical offline optimum for tensors of one size whose
/// copies cost the same both ways; here a baseline between LRU and the DP
/// (it ignores sizes, write-backs and filtered loads in its choice).
llvm::Expected<PlacementPlan>
planBeladyPlacement(const PlacementGraph &graph, uint64_t capacity,
                    llvm::ArrayRef<unsigned> order = {});

/// Streaming (NeuGraph, no caching): every op loads all its inputs and
/// nothing stays in the fast tier between ops. `order` as for LRU.
llvm::Expected<PlacementPlan>
planStreamingPlacement(const PlacementGraph &graph, uint64_t capacity,
                       llvm::ArrayRef<unsigned> order = {});

/// The shared accounting: the plan that runs `order` and keeps `keep[i]`
/// after its i-th op (a subset of what the fast tier holds then). Derives
/// loads, write-backs, evictions and byte counts; an error when `order` is
/// not a topological order of all ops, a keep set holds something the fast
/// tier does not, or a working set exceeds `capacity`.
llvm::Expected<PlacementPlan>
buildPlacementPlan(const PlacementGraph &graph, uint64_t capacity,
                   PlacementStrategy strategy, llvm::ArrayRef<unsigned> order,
                   llvm::ArrayRef<llvm::SmallVector<unsigned, 4>> keep);

} // namespace mlir::gnn

#endif // GNN_ANALYSIS_TENSORPLACEMENT_H
