//===- FuseSAG.cpp - --gnn-fuse-sag ---------------------------------------===//
//
// Scatter -> element-wise ApplyEdge -> Gather becomes one gnn.fused_gather
// (NeuGraph's Fused-Gather, §3.4; Passes.td has the contract).
//
//===----------------------------------------------------------------------===//

#include "gnn/IR/GNNOps.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <map>
#include <set>

namespace mlir::gnn {
#define GEN_PASS_DEF_GNNFUSESAG
#include "gnn/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {

/// The first op of `ae`'s body a fused_gather cannot hold, or null.
Operation *firstUnfusable(ApplyEdgeOp ae) {
  for (Operation &op : ae.getBody().front().without_terminator())
    if (!isFusableRowOp(&op))
      return &op;
  return nullptr;
}

/// Whether a body value of type `t` can be computed per element of a row of
/// shape `ctx` (the gathered row, or the operand row of a reduction): the
/// same shape, one element (computed once per edge), or per-head scalars of
/// a `heads x F` row.
bool fitsContext(RankedTensorType t, ArrayRef<int64_t> ctx) {
  if (t.hasStaticShape() && t.getNumElements() == 1)
    return true;
  if (t.getShape() == ctx)
    return true;
  return ctx.size() == 2 && t.getRank() == 1 && t.getDimSize(0) == ctx[0] &&
         !ShapedType::isDynamic(ctx[0]);
}

/// One fusion: the edge stages whose bodies are inlined into one
/// fused_gather and the operands it reads.
class Fusion {
public:
  explicit Fusion(GatherOp gather) : gather(gather) {}

  /// Collects the stages and operands; on failure `reason` says why.
  LogicalResult plan() {
    Value in = gather.getInput();
    if (auto sc = in.getDefiningOp<ScatterOp>()) {
      // A plain scatter: the body only forwards the row.
      (sc.getSide() == Side::Src ? src : dst).insert(sc.getInput());
      return success();
    }
    auto ae = in.getDefiningOp<ApplyEdgeOp>();
    if (!ae) {
      reason = "its input is not a scatter or an edge stage";
      return failure();
    }
    if (Operation *bad = firstUnfusable(ae)) {
      reason = ("the edge stage computes '" + bad->getName().getStringRef() +
                "', which is not element-wise")
                   .str();
      return failure();
    }
    if (failed(collect(ae)))
      return failure();
    // Every value must be computable per element of where it is used.
    auto result = cast<VertexTensorType>(gather.getType()).getRowType();
    shapes.insert(SmallVector<int64_t>(result.getShape()));
    for (const llvm::SetVector<Value> *group : {&src, &dst, &edge})
      for (Value v : *group)
        shapes.insert(SmallVector<int64_t>(rowTypeOf(v.getType()).getShape()));
    return checkShapes(
        ae.getYield().getValues()[cast<OpResult>(in).getResultNumber()],
        result.getShape());
  }

  /// Builds the fused_gather (with the chosen edges of a max/min when
  /// `withArg`) and replaces the gather with it.
  FusedGatherOp rewrite(bool withArg = false) {
    OpBuilder b(gather);
    auto fused = b.create<FusedGatherOp>(
        gather.getLoc(), TypeRange{gather.getType()}, gather.getGraph(),
        src.getArrayRef(), dst.getArrayRef(), edge.getArrayRef(),
        params.getArrayRef(), gather.getAcc(), gather.getSide(), withArg);
    Block &body = fused.getBody().front();
    OpBuilder bb = OpBuilder::atBlockEnd(&body);
    Value in = gather.getInput();
    Value row;
    if (auto sc = in.getDefiningOp<ScatterOp>())
      row = rowArg(body, sc);
    else
      row = emit(bb, body, cast<OpResult>(in));
    bb.create<YieldOp>(gather.getLoc(), ValueRange{row});
    // The inlined bodies' rows for other results are not needed here.
    eraseDeadRowOps(body);
    gather.getResult().replaceAllUsesWith(fused.getOuts()[0]);
    gather.erase();
    return fused;
  }

  unsigned numStages() const { return stages.size(); }
  unsigned numOps() const {
    unsigned n = 0;
    for (ApplyEdgeOp ae : stages)
      n += ae.getBody().front().getOperations().size() - 1;
    return n;
  }

  std::string reason;

private:
  /// An edge stage whose rows feed the fusion is inlined when it is
  /// element-wise and nothing but gathers and edge stages read it (so it
  /// dies once they are fused); otherwise its edge tensor is read.
  static bool inlinable(ApplyEdgeOp p) {
    if (firstUnfusable(p))
      return false;
    return llvm::all_of(p->getUsers(), [](Operation *u) {
      return isa<GatherOp, ApplyEdgeOp>(u);
    });
  }

  LogicalResult collect(ApplyEdgeOp ae) {
    if (!stages.insert(ae))
      return success();
    for (auto [arg, in] : llvm::zip(ae.getInputArgs(), ae.getInputs())) {
      if (arg.use_empty())
        continue;
      if (auto sc = in.getDefiningOp<ScatterOp>()) {
        (sc.getSide() == Side::Src ? src : dst).insert(sc.getInput());
        continue;
      }
      auto p = in.getDefiningOp<ApplyEdgeOp>();
      if (p && inlinable(p)) {
        if (failed(collect(p)))
          return failure();
        continue;
      }
      edge.insert(in);
    }
    for (auto [arg, p] : llvm::zip(ae.getParamArgs(), ae.getParams()))
      if (!arg.use_empty())
        params.insert(p);
    return success();
  }

  /// Checks that `v` (a value of an inlined stage) can be computed at every
  /// element of a row of shape `ctx`, and so on for what it reads; a
  /// reduction's operand is computed over its own row, whose width must be
  /// static or that of an operand or of the result.
  LogicalResult checkShapes(Value v, ArrayRef<int64_t> ctx) {
    if (!checked.insert({v.getAsOpaquePointer(), SmallVector<int64_t>(ctx)})
             .second)
      return success();
    auto t = cast<RankedTensorType>(v.getType());
    if (!fitsContext(t, ctx)) {
      reason = "a row of type " + typeString(t) +
               " does not broadcast to the row it is used in, " +
               typeString(RankedTensorType::get(ctx, t.getElementType()));
      return failure();
    }
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto ae = cast<ApplyEdgeOp>(arg.getOwner()->getParentOp());
      if (arg.getArgNumber() >= ae.getInputs().size())
        return success();
      Value in = ae.getInputs()[arg.getArgNumber()];
      auto p = in.getDefiningOp<ApplyEdgeOp>();
      if (p && stages.contains(p))
        return checkShapes(
            p.getYield().getValues()[cast<OpResult>(in).getResultNumber()],
            ctx);
      return success();
    }
    Operation *op = v.getDefiningOp();
    // Operands computed in their own row's shape: a reduction's, and the
    // row a type places in its slot or takes from it.
    bool reduction =
        isa<ReduceSumOp, RowDotOp, PlaceByTypeOp, TakeByTypeOp>(op);
    for (Value o : op->getOperands()) {
      ArrayRef<int64_t> inner = ctx;
      if (reduction) {
        inner = cast<RankedTensorType>(o.getType()).getShape();
        if (llvm::is_contained(inner, ShapedType::kDynamic) &&
            !shapes.count(SmallVector<int64_t>(inner))) {
          reason = "a reduction's row " + typeString(o.getType()) +
                   " has no known width";
          return failure();
        }
      }
      if (failed(checkShapes(o, inner)))
        return failure();
    }
    return success();
  }

  static std::string typeString(Type t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << t;
    return s;
  }

  /// The fused body's argument for the rows of `sc`.
  Value rowArg(Block &body, ScatterOp sc) {
    unsigned i =
        sc.getSide() == Side::Src
            ? llvm::find(src, sc.getInput()) - src.begin()
            : src.size() + (llvm::find(dst, sc.getInput()) - dst.begin());
    return body.getArgument(i);
  }

  /// Clones the body of `r`'s stage into `body` (once) and returns the row
  /// it yields for `r`.
  Value emit(OpBuilder &bb, Block &body, OpResult r) {
    auto ae = cast<ApplyEdgeOp>(r.getOwner());
    auto it = emitted.find(ae);
    if (it == emitted.end()) {
      IRMapping map;
      for (auto [arg, in] : llvm::zip(ae.getInputArgs(), ae.getInputs())) {
        if (arg.use_empty())
          continue;
        if (auto sc = in.getDefiningOp<ScatterOp>()) {
          map.map(arg, rowArg(body, sc));
        } else if (auto p = in.getDefiningOp<ApplyEdgeOp>();
                   p && stages.contains(p)) {
          map.map(arg, emit(bb, body, cast<OpResult>(in)));
        } else {
          map.map(arg, body.getArgument(src.size() + dst.size() +
                                        (llvm::find(edge, in) - edge.begin())));
        }
      }
      unsigned base = src.size() + dst.size() + edge.size();
      for (auto [arg, p] : llvm::zip(ae.getParamArgs(), ae.getParams()))
        if (!arg.use_empty())
          map.map(arg, body.getArgument(
                           base + (llvm::find(params, p) - params.begin())));
      for (Operation &op : ae.getBody().front().without_terminator())
        bb.clone(op, map);
      SmallVector<Value> yielded;
      for (Value v : ae.getYield().getValues())
        yielded.push_back(map.lookup(v));
      it = emitted.try_emplace(ae, std::move(yielded)).first;
    }
    return it->second[r.getResultNumber()];
  }

  GatherOp gather;
  llvm::SetVector<ApplyEdgeOp> stages;
  llvm::SetVector<Value> src, dst, edge, params;
  DenseMap<Operation *, SmallVector<Value>> emitted;
  std::set<std::pair<void *, SmallVector<int64_t>>> checked;
  std::set<SmallVector<int64_t>> shapes; // row shapes whose width is known
};

/// Erases edge stages and scatters nothing reads any more.
void eraseDeadEdgeOps(Operation *root) {
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<Operation *> dead;
    root->walk([&](Operation *op) {
      if (isa<ApplyEdgeOp, ScatterOp>(op) && op->use_empty())
        dead.push_back(op);
    });
    for (Operation *op : dead)
      op->erase();
    changed = !dead.empty();
  }
}

/// Whether every reader of `edges` will be fused: gathers that plan, and
/// element-wise edge stages read only by such gathers.
bool readersFuse(Value edges, std::string &why) {
  llvm::SmallPtrSet<Operation *, 8> seen;
  std::function<bool(Operation *)> fuses = [&](Operation *u) {
    if (!seen.insert(u).second)
      return true;
    if (auto g = dyn_cast<GatherOp>(u)) {
      Fusion f(g);
      if (failed(f.plan())) {
        why = f.reason;
        return false;
      }
      return true;
    }
    auto ae = dyn_cast<ApplyEdgeOp>(u);
    if (!ae) {
      why = ("it is read by '" + u->getName().getStringRef() + "'").str();
      return false;
    }
    if (Operation *bad = firstUnfusable(ae)) {
      why = ("a reading edge stage computes '" + bad->getName().getStringRef() +
             "'")
                .str();
      return false;
    }
    return llvm::all_of(ae->getUsers(), fuses);
  };
  return llvm::all_of(edges.getUsers(), fuses);
}

/// The backward of a max/min gather without an |E|-sized tensor: the
/// forward gather, fused, also yields the edge it chose per element, and
/// the `gather_grad` becomes an edge stage selecting the gradient on that
/// edge (`gnn.edge_select`), which the readers' fusions inline.
void fuseGatherGrad(GatherGradOp gg) {
  GatherOp fwd;
  for (Operation *u : gg.getInput().getUsers())
    if (auto g = dyn_cast<GatherOp>(u);
        g && g.getAcc() == gg.getAcc() && g.getSide() == gg.getSide())
      fwd = g;
  if (!fwd) {
    gg.emitRemark() << "not fused: no forward gather of the same edges";
    return;
  }
  Fusion f(fwd);
  if (failed(f.plan())) {
    gg.emitRemark() << "not fused: the forward gather is not fused ("
                    << f.reason << ")";
    return;
  }
  fwd.emitRemark() << "fused: with the chosen edges, for the backward pass";
  FusedGatherOp fused = f.rewrite(/*withArg=*/true);

  OpBuilder b(gg);
  Location loc = gg.getLoc();
  Value graph = gg.getGraph();
  auto rows = [&](Value v) {
    auto t = cast<VertexTensorType>(v.getType());
    return b.create<ScatterOp>(
        loc, EdgeTensorType::get(t.getRowShape(), t.getElementType()), graph, v,
        gg.getSide());
  };
  Value arg = rows(fused.getArg()), grad = rows(gg.getGrad());
  auto select = b.create<ApplyEdgeOp>(loc, TypeRange{gg.getType()}, graph,
                                      ValueRange{arg, grad}, ValueRange{});
  {
    Block &body = select.getBody().front();
    OpBuilder bb = OpBuilder::atBlockEnd(&body);
    Value picked =
        bb.create<EdgeSelectOp>(loc, body.getArgument(0), body.getArgument(1));
    bb.create<YieldOp>(loc, ValueRange{picked});
  }
  gg.getResult().replaceAllUsesWith(select.getResult(0));
  std::string why;
  if (!readersFuse(select.getResult(0), why)) {
    select.getResult(0).replaceAllUsesWith(gg.getResult());
    select.erase();
    gg.emitRemark() << "not fused: a reader of the routed gradient is not "
                       "fused ("
                    << why << ")";
    return;
  }
  gg.emitRemark() << "fused: the gradient is routed per edge through the "
                     "forward's chosen edges";
  gg.erase();
}

/// A parameter used inside an edge stage gets its gradient as `sum_rows`
/// over the edges. Summing the edges of each destination first is the same
/// sum, and that gather fuses: `sum_rows(m)` becomes
/// `sum_rows(gather sum m to dst)`.
void sumRowsThroughGather(SumRowsOp sr) {
  auto et = dyn_cast<EdgeTensorType>(sr.getInput().getType());
  if (!et || !sr.getInput().getDefiningOp<ApplyEdgeOp>())
    return;
  OpBuilder b(sr);
  Value graph;
  sr->getParentOfType<FunctionOpInterface>().walk(
      [&](GraphOp g) { graph = g.getResult(); });
  if (!graph)
    return;
  auto vt = VertexTensorType::get(et.getRowShape(), et.getElementType());
  Value perVertex = b.create<GatherOp>(sr.getLoc(), vt, graph, sr.getInput(),
                                       Accumulator::Sum, Side::Dst);
  sr.getInputMutable().assign(perVertex);
}

/// Several fused gathers over the same edges (same side and accumulator,
/// no `arg`) become one op whose body yields each row: one pass over the
/// edges, and what their bodies share is computed once (CSE after the pass
/// merges the copies). Gathers join a group in program order while nothing
/// reads a member's result in between; the merged op takes the last
/// member's place, where every member's operands are available.
void mergeFusedGathers(Block &block) {
  SmallVector<SmallVector<FusedGatherOp>> groups;
  std::map<std::pair<unsigned, unsigned>, SmallVector<FusedGatherOp>> open;
  auto close = [&](SmallVector<FusedGatherOp> &g) {
    if (g.size() > 1)
      groups.push_back(g);
    g.clear();
  };
  auto key = [](FusedGatherOp f) {
    return std::make_pair(static_cast<unsigned>(f.getSide()),
                          static_cast<unsigned>(f.getAcc()));
  };
  for (Operation &op : block) {
    // A reader of a member's result ends that member's group.
    for (auto &[k, g] : open)
      if (llvm::any_of(g, [&](FusedGatherOp m) {
            return llvm::any_of(op.getOperands(), [&](Value v) {
              return v.getDefiningOp() == m.getOperation();
            });
          }))
        close(g);
    auto f = dyn_cast<FusedGatherOp>(op);
    if (!f || f.getArg() || f.getOuts().size() != 1)
      continue;
    open[key(f)].push_back(f);
  }
  for (auto &[k, g] : open)
    close(g);

  for (SmallVector<FusedGatherOp> &g : groups) {
    FusedGatherOp last = g.back();
    llvm::SetVector<Value> src, dst, edge, params;
    SmallVector<Type> types;
    for (FusedGatherOp m : g) {
      src.insert(m.getSrcInputs().begin(), m.getSrcInputs().end());
      dst.insert(m.getDstInputs().begin(), m.getDstInputs().end());
      edge.insert(m.getEdgeInputs().begin(), m.getEdgeInputs().end());
      params.insert(m.getParams().begin(), m.getParams().end());
      types.push_back(m.getOuts()[0].getType());
    }
    OpBuilder b(last);
    auto merged = b.create<FusedGatherOp>(
        last.getLoc(), types, last.getGraph(), src.getArrayRef(),
        dst.getArrayRef(), edge.getArrayRef(), params.getArrayRef(),
        last.getAcc(), last.getSide());
    Block &body = merged.getBody().front();
    OpBuilder bb = OpBuilder::atBlockEnd(&body);
    auto argFor = [&](const llvm::SetVector<Value> &set, Value v,
                      unsigned base) {
      return body.getArgument(base + (llvm::find(set, v) - set.begin()));
    };
    SmallVector<Value> yielded;
    for (FusedGatherOp m : g) {
      IRMapping map;
      Block &mb = m.getBody().front();
      unsigned i = 0;
      for (Value v : m.getSrcInputs())
        map.map(mb.getArgument(i++), argFor(src, v, 0));
      for (Value v : m.getDstInputs())
        map.map(mb.getArgument(i++), argFor(dst, v, src.size()));
      for (Value v : m.getEdgeInputs())
        map.map(mb.getArgument(i++), argFor(edge, v, src.size() + dst.size()));
      for (Value v : m.getParams())
        map.map(mb.getArgument(i++),
                argFor(params, v, src.size() + dst.size() + edge.size()));
      for (Operation &op : mb.without_terminator())
        bb.clone(op, map);
      yielded.push_back(map.lookupOrDefault(m.getYield().getValues()[0]));
    }
    bb.create<YieldOp>(last.getLoc(), yielded);
    for (auto [m, r] : llvm::zip(g, merged.getOuts()))
      m.getOuts()[0].replaceAllUsesWith(r);
    for (FusedGatherOp m : g)
      m.erase();
  }
}

struct GNNFuseSAG : public mlir::gnn::impl::GNNFuseSAGBase<GNNFuseSAG> {
  using GNNFuseSAGBase::GNNFuseSAGBase;

  void runOnOperation() final {
    SmallVector<SumRowsOp> sums;
    getOperation().walk([&](SumRowsOp sr) { sums.push_back(sr); });
    for (SumRowsOp sr : sums)
      sumRowsThroughGather(sr);
    SmallVector<GatherGradOp> grads;
    getOperation().walk([&](GatherGradOp gg) { grads.push_back(gg); });
    for (GatherGradOp gg : grads)
      fuseGatherGrad(gg);
    eraseDeadEdgeOps(getOperation());

    SmallVector<GatherOp> gathers;
    getOperation().walk([&](GatherOp g) { gathers.push_back(g); });
    for (GatherOp g : gathers) {
      Fusion f(g);
      if (failed(f.plan())) {
        g.emitRemark() << "not fused: " << f.reason;
        continue;
      }
      InFlightDiagnostic remark = g.emitRemark();
      remark << "fused: scatter";
      if (f.numStages())
        remark << ", " << f.numStages() << " edge stage(s) of " << f.numOps()
               << " ops";
      remark << " and gather " << stringifyAccumulator(g.getAcc())
             << " into one fused_gather";
      remark.report();
      f.rewrite();
    }
    eraseDeadEdgeOps(getOperation());
    getOperation().walk([](func::FuncOp fn) {
      for (Block &block : fn.getBody())
        mergeFusedGathers(block);
    });
  }
};

} // namespace
