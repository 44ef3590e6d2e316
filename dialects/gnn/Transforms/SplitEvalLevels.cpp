//===- SplitEvalLevels.cpp - --gnn-split-eval-levels ----------------------===//
//
// Layer-wise inference: @gnn_eval split into one function per level (hop),
// each computing its level's vertex values from the lower levels' (cuts)
// on a 1-hop block. See Passes.td for the contract and docs/MiniBatch.md,
// "Layer-wise evaluation", for how the runtime runs them.
//
//===----------------------------------------------------------------------===//

#include "gnn/IR/GNNOps.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

namespace mlir::gnn {
#define GEN_PASS_DEF_GNNSPLITEVALLEVELS
#include "gnn/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {

bool producesEdges(Operation *op) {
  return op->getNumResults() > 0 &&
         llvm::all_of(op->getResultTypes(), llvm::IsaPred<EdgeTensorType>);
}

/// The evaluation's levels: each top-level op is local (recomputed where it
/// is read: it does not depend on the features), per-edge (computed in each
/// level that reads it) or of one level.
class LevelAnalysis {
public:
  /// Null when the evaluation can be split; else the op that prevents it,
  /// with `why`.
  Operation *run(func::FuncOp eval, std::string &why) {
    Block &body = eval.getBody().front();
    for (Operation &op : body.without_terminator()) {
      order[&op] = order.size();
      if (isa<SumRowsOp, OuterSumOp, TypedOuterSumOp, GatherGradOp>(op)) {
        why = "it reduces over all vertices, which a level's batch does not "
              "hold";
        return &op;
      }
      if (isa<AllGatherOp, ReduceScatterOp, OwnRowsOp, PadRowsOp>(op)) {
        why = "it moves rows between processes (a partitioned program)";
        return &op;
      }
      auto gather = dyn_cast<GatherOp>(op);
      auto fused = dyn_cast<FusedGatherOp>(op);
      if ((gather && gather.getSide() == Side::Src) ||
          (fused && fused.getSide() == Side::Src)) {
        why = "it aggregates to the sources, whose out-edges a level's block "
              "does not hold";
        return &op;
      }
      auto in = dyn_cast<InputOp>(op);
      const bool readsFeatures = in && in.getName() == "features";
      if (!readsFeatures && !gather && !fused &&
          llvm::all_of(op.getOperands(), [&](Value v) {
            return isa<BlockArgument>(v) || local.contains(v.getDefiningOp());
          })) {
        local.insert(&op);
        continue;
      }
      // The level counted at the destinations.
      int64_t l = 0;
      for (Value v : op.getOperands())
        l = std::max(l, levelOf(v));
      if (auto s = dyn_cast<ScatterOp>(op)) {
        l = levelOf(s.getInput()) + (s.getSide() == Side::Src ? 1 : 0);
      } else if (fused) {
        l = 0;
        for (Value v : fused.getSrcInputs())
          l = std::max(l, levelOf(v) + 1);
        for (Value v : fused.getDstInputs())
          l = std::max(l, levelOf(v));
        for (Value v : fused.getEdgeInputs())
          l = std::max(l, levelOf(v));
      }
      // An aggregation is right at its block's destinations only (the
      // other rows have no in-edges there), even of what does not depend on
      // the features: read at the sources, it is a lower level's.
      if (gather || fused)
        l = std::max<int64_t>(l, 1);
      for (Value r : op.getResults())
        valueLevel[r] = l;
      hops = std::max(hops, l);
      if (producesEdges(&op))
        continue;
      opLevel[&op] = std::max<int64_t>(l, 1);
      numLevels = std::max(numLevels, opLevel[&op]);
    }
    return nullptr;
  }

  int64_t levelOf(Value v) const { return valueLevel.lookup(v); }
  bool isLocal(Operation *op) const { return local.contains(op); }
  /// The level of a vertex op that is neither local nor per-edge (0 for
  /// those).
  int64_t levelOfOp(Operation *op) const { return opLevel.lookup(op); }
  size_t position(Operation *op) const { return order.lookup(op); }

  int64_t numLevels = 0;
  /// The most neighbour reads of any value (0: none).
  int64_t hops = 0;

private:
  DenseSet<Operation *> local;
  DenseMap<Value, int64_t> valueLevel;
  DenseMap<Operation *, int64_t> opLevel;
  DenseMap<Operation *, size_t> order;
};

struct GNNSplitEvalLevels
    : public mlir::gnn::impl::GNNSplitEvalLevelsBase<GNNSplitEvalLevels> {
  void runOnOperation() final {
    ModuleOp module = getOperation();
    analysis = LevelAnalysis();
    cutIndex.clear();
    auto eval = module.lookupSymbol<func::FuncOp>(GNNDialect::kEvalName);
    if (!eval || eval.isExternal()) {
      module.emitError() << "--gnn-split-eval-levels expects @"
                         << GNNDialect::kEvalName
                         << "; run --gnn-autodiff first";
      return signalPassFailure();
    }
    if (module.lookupSymbol((GNNDialect::kEvalLevelPrefix + "1").str())) {
      module.emitError() << "--gnn-split-eval-levels: the module has @"
                         << GNNDialect::kEvalLevelPrefix
                         << "1 already (the pass ran twice)";
      return signalPassFailure();
    }
    if (!getPartition(eval).empty()) {
      eval.emitRemark() << "layer-wise evaluation: not split (a partitioned "
                           "program)";
      return;
    }
    std::string why;
    if (Operation *by = analysis.run(eval, why)) {
      by->emitRemark() << "layer-wise evaluation: not split: " << why;
      return;
    }
    if (analysis.hops == 0) {
      eval.emitRemark() << "layer-wise evaluation: not split (no vertex "
                           "value depends on a neighbour)";
      return;
    }
    // Which lower levels' values each level reads (the cuts), in the
    // evaluation's order.
    SmallVector<SetVector<Value>> reads(analysis.numLevels + 1);
    auto ret = cast<func::ReturnOp>(eval.getBody().front().getTerminator());
    for (Operation &op : eval.getBody().front().without_terminator())
      if (int64_t l = analysis.levelOfOp(&op))
        if (Operation *bad = collectReads(&op, l, reads[l], why)) {
          bad->emitRemark() << "layer-wise evaluation: not split: " << why;
          return;
        }
    for (Value v : ret.getOperands())
      if (Operation *bad = collectRead(v, analysis.numLevels,
                                       reads[analysis.numLevels], why)) {
        bad->emitRemark() << "layer-wise evaluation: not split: " << why;
        return;
      }
    SetVector<Value> allCuts;
    for (const SetVector<Value> &r : reads)
      allCuts.insert(r.begin(), r.end());
    SmallVector<Value> cuts(allCuts.begin(), allCuts.end());
    llvm::sort(cuts, [&](Value a, Value b) {
      auto pos = [&](Value v) {
        return std::pair(analysis.position(v.getDefiningOp()),
                         cast<OpResult>(v).getResultNumber());
      };
      return pos(a) < pos(b);
    });
    for (auto [k, v] : llvm::enumerate(cuts))
      cutIndex[v] = k;
    // Marked where the evaluation computes them (their widths).
    for (Value v : cuts) {
      Operation *def = v.getDefiningOp();
      SmallVector<int64_t> numbers(def->getNumResults(), -1);
      if (auto marked =
              def->getAttrOfType<DenseI64ArrayAttr>(GNNDialect::kCutsAttrName))
        numbers.assign(marked.asArrayRef().begin(), marked.asArrayRef().end());
      numbers[cast<OpResult>(v).getResultNumber()] = cutIndex.lookup(v);
      def->setAttr(GNNDialect::kCutsAttrName,
                   DenseI64ArrayAttr::get(def->getContext(), numbers));
    }

    OpBuilder mb(module.getContext());
    mb.setInsertionPointAfter(eval);
    int64_t numCuts = static_cast<int64_t>(cuts.size());
    for (int64_t l = 1; l <= analysis.numLevels; ++l) {
      func::FuncOp fn = build(mb, eval, l, cuts);
      mb.setInsertionPointAfter(fn);
    }
    eval.emitRemark() << "layer-wise evaluation: " << analysis.numLevels
                      << " levels, " << numCuts
                      << " vertex values held between them";
  }

private:
  LevelAnalysis analysis;
  DenseMap<Value, int64_t> cutIndex;

  /// The values of lower levels that computing `v` at level `l` reads (a
  /// local or per-edge op is recomputed there: its operands are read);
  /// else the op that reads a value it may not, with `why`.
  Operation *collectRead(Value v, int64_t l, SetVector<Value> &cuts,
                         std::string &why) {
    Operation *def = v.getDefiningOp();
    if (!def || analysis.isLocal(def))
      return nullptr;
    if (producesEdges(def))
      return collectReads(def, l, cuts, why);
    const int64_t at = analysis.levelOfOp(def);
    if (at == l)
      return nullptr;
    if (at > l) {
      why = "a value of level " + std::to_string(at) + " is read at level " +
            std::to_string(l);
      return def;
    }
    auto vertex = dyn_cast<VertexTensorType>(v.getType());
    if (!vertex || !vertex.getElementType().isF32()) {
      why = "a value other than a vertex tensor of f32 is read above its "
            "level " +
            std::to_string(at);
      return def;
    }
    cuts.insert(v);
    return nullptr;
  }
  Operation *collectReads(Operation *op, int64_t l, SetVector<Value> &cuts,
                          std::string &why) {
    for (Value v : op->getOperands())
      if (Operation *bad = collectRead(v, l, cuts, why))
        return bad;
    return nullptr;
  }

  /// Level `l`'s function.
  func::FuncOp build(OpBuilder &mb, func::FuncOp eval, int64_t l,
                     ArrayRef<Value> cuts) {
    Block &body = eval.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    const bool last = l == analysis.numLevels;
    SmallVector<Value> outputs;
    SmallVector<int64_t> outputIndices;
    if (last) {
      llvm::append_range(outputs, ret.getOperands());
    } else {
      for (auto [k, v] : llvm::enumerate(cuts))
        if (analysis.levelOfOp(v.getDefiningOp()) == l) {
          outputs.push_back(v);
          outputIndices.push_back(static_cast<int64_t>(k));
        }
    }
    SmallVector<Type> resultTypes;
    for (Value v : outputs)
      resultTypes.push_back(v.getType());
    auto fn = mb.create<func::FuncOp>(
        eval.getLoc(), (GNNDialect::kEvalLevelPrefix + Twine(l)).str(),
        FunctionType::get(mb.getContext(), eval.getArgumentTypes(),
                          resultTypes));
    if (ArrayAttr args = eval.getAllArgAttrs())
      fn.setAllArgAttrs(args);
    fn->setAttr(GNNDialect::kEvalLevelAttrName, mb.getI64IntegerAttr(l));
    if (!last)
      fn->setAttr(GNNDialect::kLevelOutputsAttrName,
                  mb.getDenseI64ArrayAttr(outputIndices));
    Block *entry = fn.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockBegin(entry);
    IRMapping map;
    for (auto [from, to] :
         llvm::zip(body.getArguments(), entry->getArguments()))
      map.map(from, to);
    Value graph; // the level function's gnn.graph, for its cut inputs
    std::function<Value(Value)> resolve = [&](Value v) -> Value {
      if (Value mapped = map.lookupOrNull(v))
        return mapped;
      Operation *def = v.getDefiningOp();
      if (analysis.isLocal(def) || producesEdges(def) ||
          analysis.levelOfOp(def) == l) {
        for (Value o : def->getOperands())
          resolve(o);
        Operation *copy = b.clone(*def, map);
        copy->removeAttr(GNNDialect::kCutsAttrName);
        if (isa<GraphOp>(copy))
          graph = copy->getResult(0);
        return map.lookup(v);
      }
      // A cut of a lower level, read at every row of the block.
      if (!graph) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(entry);
        graph = b.create<GraphOp>(eval.getLoc(), GraphType::get(b.getContext()),
                                  UnitAttr())
                    .getResult();
      }
      auto in = b.create<InputOp>(
          def->getLoc(), v.getType(), graph,
          b.getStringAttr("level." + std::to_string(cutIndex.lookup(v))));
      map.map(v, in.getResult());
      return in.getResult();
    };
    for (auto g : body.getOps<GraphOp>()) {
      resolve(g.getResult());
      break;
    }
    for (Operation &op : body.without_terminator())
      if (analysis.levelOfOp(&op) == l)
        for (Value r : op.getResults())
          resolve(r);
    SmallVector<Value> results;
    for (Value v : outputs)
      results.push_back(resolve(v));
    b.create<func::ReturnOp>(ret.getLoc(), results);
    return fn;
  }
};

} // namespace
