//===- FactorEdgeScale.cpp - --gnn-factor-edge-scale ----------------------===//
//
// Rewrites an aggregation of rows scaled per edge, when the scale is a
// product of a neighbour-side and a self-side per-vertex factor, into an
// aggregation of pre-scaled rows followed by a per-vertex post-scale (GCN's
// symmetric normalisation: no per-edge scalar left; Passes.td has the
// contract).
//
//===----------------------------------------------------------------------===//

#include "gnn/IR/GNNOps.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <deque>

namespace mlir::gnn {
#define GEN_PASS_DEF_GNNFACTOREDGESCALE
#include "gnn/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {

/// A per-vertex factor: an expression over one-element vertex tensors read
/// at one end of the edge (the leaves), splat constants and products,
/// quotients and (reciprocal) square roots.
struct Expr {
  enum Kind { One, Leaf, Const, Mul, Div, Sqrt, Rsqrt } kind = One;
  Value leaf;        // Leaf: the vertex tensor
  bool clamp = false; // Leaf: a degree of its own end, read as max(d, 1)
  float value = 1.0f; // Const
  const Expr *lhs = nullptr, *rhs = nullptr;
};

/// Builds the factors of a scale and remembers why it could not.
class Factoring {
public:
  Factoring(Side neighbour) : neighbour(neighbour) {}

  /// The (neighbour, self) factors of `v`, a one-element value of an edge
  /// stage's body; null when it does not factor (`reason` says why).
  std::pair<const Expr *, const Expr *> factor(Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto stage = dyn_cast<ApplyEdgeOp>(arg.getOwner()->getParentOp());
      if (!stage)
        return fail("reads a value of a non-edge stage");
      unsigned i = arg.getArgNumber();
      if (i >= stage.getInputs().size())
        return fail("depends on a parameter");
      Value in = stage.getInputs()[i];
      if (auto sc = in.getDefiningOp<ScatterOp>())
        return leaf(sc);
      if (auto producer = in.getDefiningOp<ApplyEdgeOp>()) {
        if (!producer.getParams().empty())
          return fail("depends on a parameter");
        unsigned r = cast<OpResult>(in).getResultNumber();
        return factor(producer.getYield().getValues()[r]);
      }
      return fail("depends on edge data");
    }
    Operation *op = v.getDefiningOp();
    if (!isOneElement(v))
      return fail("is not one element per edge");
    if (auto c = dyn_cast<ConstantOp>(op)) {
      auto attr = c.getValue();
      if (!attr.isSplat())
        return fail("reads a non-splat constant");
      return {make({Expr::Const, {}, false, attr.getSplatValue<float>()}),
              one()};
    }
    if (isa<MulOp, DivOp>(op)) {
      auto [ln, ls] = factor(op->getOperand(0));
      if (!ln)
        return {nullptr, nullptr};
      auto [rn, rs] = factor(op->getOperand(1));
      if (!rn)
        return {nullptr, nullptr};
      if (isa<MulOp>(op))
        return {combine(Expr::Mul, ln, rn), combine(Expr::Mul, ls, rs)};
      // (a b) / (c d) = (a / c)(b / d) for nonzero c and d.
      if (!positive(rn) || !positive(rs))
        return fail("divides by a value not known to be positive on edges");
      return {combine(Expr::Div, ln, rn), combine(Expr::Div, ls, rs)};
    }
    if (isa<SqrtOp, RsqrtOp>(op)) {
      auto [n, s] = factor(op->getOperand(0));
      if (!n)
        return {nullptr, nullptr};
      // sqrt(a b) = sqrt(a) sqrt(b) for non-negative a and b.
      if (!positive(n) || !positive(s))
        return fail("takes the square root of a value not known to be "
                    "positive on edges");
      Expr::Kind k = isa<SqrtOp>(op) ? Expr::Sqrt : Expr::Rsqrt;
      return {unary(k, n), unary(k, s)};
    }
    return fail(("computes '" + op->getName().getStringRef() + "'").str());
  }

  /// Whether `e` is one (no factor to apply).
  static bool isOne(const Expr *e) { return e->kind == Expr::One; }

  /// The distinct leaves of `e`, in first-use order.
  static void leaves(const Expr *e, llvm::SetVector<Value> &out) {
    if (e->kind == Expr::Leaf)
      out.insert(e->leaf);
    if (e->lhs)
      leaves(e->lhs, out);
    if (e->rhs)
      leaves(e->rhs, out);
  }

  std::string reason;

private:
  static bool isOneElement(Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return t.hasStaticShape() && t.getNumElements() == 1;
  }

  const Expr *make(Expr e) {
    arena.push_back(e);
    return &arena.back();
  }
  const Expr *one() { return make(Expr{}); }

  std::pair<const Expr *, const Expr *> fail(const std::string &why) {
    if (reason.empty())
      reason = why;
    return {nullptr, nullptr};
  }

  std::pair<const Expr *, const Expr *> leaf(ScatterOp sc) {
    Value in = sc.getInput();
    RankedTensorType row = rowTypeOf(in.getType());
    if (!row || !row.hasStaticShape() || row.getNumElements() != 1)
      return fail("scatters a row wider than one element");
    // The degree of an edge's own end (out-degree at the source, in-degree
    // at the destination) is at least 1 on every edge: read as max(d, 1),
    // which is the same there and keeps the factor finite on vertices
    // without such edges.
    bool clamp = false;
    if (auto deg = in.getDefiningOp<DegreeOp>())
      clamp = (sc.getSide() == Side::Src) ==
              (deg.getDirection() == Direction::Out);
    const Expr *e = make({Expr::Leaf, in, clamp});
    return sc.getSide() == neighbour ? std::pair{e, one()}
                                     : std::pair{one(), e};
  }

  const Expr *combine(Expr::Kind k, const Expr *a, const Expr *b) {
    if (k == Expr::Mul && isOne(a))
      return b;
    if (isOne(b))
      return a;
    return make({k, {}, false, 1.0f, a, b});
  }

  const Expr *unary(Expr::Kind k, const Expr *a) {
    if (isOne(a))
      return a;
    return make({k, {}, false, 1.0f, a, nullptr});
  }

  /// Whether `e` is known to be positive and finite wherever it is read:
  /// the degree of the edge's own end (>= 1), positive constants, and
  /// products, quotients and roots of those.
  static bool positive(const Expr *e) {
    switch (e->kind) {
    case Expr::One:
      return true;
    case Expr::Leaf:
      return e->clamp;
    case Expr::Const:
      return e->value > 0.0f && std::isfinite(e->value);
    case Expr::Mul:
    case Expr::Div:
      return positive(e->lhs) && positive(e->rhs);
    case Expr::Sqrt:
    case Expr::Rsqrt:
      return positive(e->lhs);
    }
    return false;
  }

  Side neighbour;
  std::deque<Expr> arena;
};

/// Emits `e` in the body being built by `b`, its leaves read from `args`.
Value emit(OpBuilder &b, Location loc, const Expr *e,
           const DenseMap<Value, Value> &args) {
  auto scalar = RankedTensorType::get({1}, b.getF32Type());
  auto constant = [&](float c) {
    return b.create<ConstantOp>(
        loc, DenseElementsAttr::get(scalar, b.getF32FloatAttr(c)));
  };
  switch (e->kind) {
  case Expr::One:
    return constant(1.0f);
  case Expr::Const:
    return constant(e->value);
  case Expr::Leaf: {
    Value x = args.lookup(e->leaf);
    if (!e->clamp)
      return x;
    // max(d, 1) = relu(d - 1) + 1.
    Value c1 = constant(1.0f);
    Value d = b.create<SubOp>(loc, scalar, x, c1);
    Value r = b.create<ReluOp>(loc, scalar, d);
    return b.create<AddOp>(loc, scalar, r, c1);
  }
  case Expr::Mul:
    return b.create<MulOp>(loc, scalar, emit(b, loc, e->lhs, args),
                           emit(b, loc, e->rhs, args));
  case Expr::Div:
    return b.create<DivOp>(loc, scalar, emit(b, loc, e->lhs, args),
                           emit(b, loc, e->rhs, args));
  case Expr::Sqrt:
    return b.create<SqrtOp>(loc, scalar, emit(b, loc, e->lhs, args));
  case Expr::Rsqrt:
    return b.create<RsqrtOp>(loc, scalar, emit(b, loc, e->lhs, args));
  }
  llvm_unreachable("unknown factor kind");
}

/// A vertex stage computing `row * factor` on every vertex.
Value scaleRows(OpBuilder &b, Location loc, Value graph, Value rows,
                const Expr *factor) {
  llvm::SetVector<Value> leafSet;
  Factoring::leaves(factor, leafSet);
  SmallVector<Value> inputs{rows};
  llvm::append_range(inputs, leafSet);
  auto stage = b.create<ApplyVertexOp>(loc, TypeRange{rows.getType()}, graph,
                                       inputs, ValueRange{});
  Block &body = stage.getBody().front();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&body);
  DenseMap<Value, Value> args;
  for (auto [i, v] : llvm::enumerate(leafSet))
    args[v] = body.getArgument(i + 1);
  Value f = emit(b, loc, factor, args);
  Value row = body.getArgument(0);
  Value y = b.create<MulOp>(loc, row.getType(), row, f);
  b.create<YieldOp>(loc, ValueRange{y});
  return stage.getResult(0);
}

/// `ae`'s scattered row and one-element scale when its body is
/// `yield row * scale` (either order) with `row` a block argument read from
/// a scatter from `neighbour`.
std::optional<std::pair<unsigned, Value>> scaledRow(ApplyEdgeOp ae,
                                                    Side neighbour) {
  Block &body = ae.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().size() != 1 || !ae.getParams().empty())
    return std::nullopt;
  auto mul = yield.getValues()[0].getDefiningOp<MulOp>();
  if (!mul)
    return std::nullopt;
  for (auto [row, scale] : {std::pair{mul.getLhs(), mul.getRhs()},
                            std::pair{mul.getRhs(), mul.getLhs()}}) {
    auto arg = dyn_cast<BlockArgument>(row);
    auto st = cast<RankedTensorType>(scale.getType());
    if (!arg || arg.getOwner() != &body || row.getType() != mul.getType() ||
        !st.hasStaticShape() || st.getNumElements() != 1)
      continue;
    auto sc = ae.getInputs()[arg.getArgNumber()].getDefiningOp<ScatterOp>();
    if (sc && sc.getSide() == neighbour)
      return std::pair{arg.getArgNumber(), scale};
  }
  return std::nullopt;
}

/// Erases the edge stages and scatters nothing reads (the rewritten scaling
/// stages, then the normalisation stages and scatters they read).
void eraseDeadEdgeWork(Operation *root) {
  SmallVector<Operation *> dead;
  do {
    dead.clear();
    root->walk([&](Operation *op) {
      if (isa<ApplyEdgeOp, ScatterOp>(op) && op->use_empty())
        dead.push_back(op);
    });
    for (Operation *op : dead)
      op->erase();
  } while (!dead.empty());
}

struct GNNFactorEdgeScale
    : public mlir::gnn::impl::GNNFactorEdgeScaleBase<GNNFactorEdgeScale> {
  using GNNFactorEdgeScaleBase::GNNFactorEdgeScaleBase;

  void runOnOperation() final {
    SmallVector<GatherOp> gathers;
    getOperation().walk([&](GatherOp g) { gathers.push_back(g); });
    for (GatherOp g : gathers)
      rewrite(g);
    eraseDeadEdgeWork(getOperation());
  }

  void rewrite(GatherOp g) {
    if (g.getAcc() != Accumulator::Sum && g.getAcc() != Accumulator::Mean)
      return;
    auto ae = g.getInput().getDefiningOp<ApplyEdgeOp>();
    Side neighbour = g.getSide() == Side::Dst ? Side::Src : Side::Dst;
    if (!ae || ae.getNumResults() != 1)
      return;
    std::optional<std::pair<unsigned, Value>> match = scaledRow(ae, neighbour);
    if (!match)
      return;
    auto [rowArg, scale] = *match;
    Factoring factoring(neighbour);
    auto [pre, post] = factoring.factor(scale);
    if (!pre) {
      g.emitRemark() << "edge scale not factored: it " << factoring.reason;
      return;
    }
    OpBuilder b(g);
    Location loc = g.getLoc();
    Value graph = g.getGraph();
    auto scatter = ae.getInputs()[rowArg].getDefiningOp<ScatterOp>();
    Value rows = scatter.getInput();
    if (!Factoring::isOne(pre))
      rows = scaleRows(b, loc, graph, rows, pre);
    Value edges = b.create<ScatterOp>(scatter.getLoc(), scatter.getType(),
                                      graph, rows, neighbour);
    Value result = b.create<GatherOp>(loc, g.getType(), graph, edges,
                                      g.getAcc(), g.getSide());
    if (!Factoring::isOne(post))
      result = scaleRows(b, loc, graph, result, post);
    g.emitRemark() << "edge scale factored: "
                   << (Factoring::isOne(pre) ? "no" : "a") << " "
                   << (neighbour == Side::Src ? "source" : "destination")
                   << "-side factor on the rows, "
                   << (Factoring::isOne(post) ? "no" : "a") << " "
                   << (neighbour == Side::Src ? "destination" : "source")
                   << "-side factor on the aggregate; no per-edge scale left";
    g.getResult().replaceAllUsesWith(result);
    g.erase();
  }
};

} // namespace
