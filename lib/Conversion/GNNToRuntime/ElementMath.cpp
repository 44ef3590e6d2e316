//===- ElementMath.cpp - one element of a gnn row op ----------------------===//

#include "ElementMath.h"

#include "gnn/IR/GNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::gnn;

bool gnn::isElementwise(Operation *op) {
  return isa<ReluOp, StepOp, StopGradientOp, NegOp, ExpOp, LogOp, SqrtOp,
             RsqrtOp, SigmoidOp, TanhOp, EluOp, LeakyReluOp, AddOp, SubOp,
             MulOp, DivOp>(op);
}

bool gnn::spreadsHeads(Operation *op) {
  auto bh = dyn_cast<BroadcastHeadsOp>(op);
  return bh && !bh.getType().isDynamicDim(1);
}

/// Where exp's argument is clamped (see emitElement).
constexpr float kExpRange = 87.0f;

Value gnn::emitElement(OpBuilder &b, Location l, Operation *op, ValueRange v) {
  auto c = [&](double x) {
    return b
        .create<arith::ConstantFloatOp>(l, APFloat(static_cast<float>(x)),
                                        b.getF32Type())
        .getResult();
  };
  // exp's argument kept within [lo, hi]: glibc's vector expf (what the
  // loop vectoriser calls) redoes a whole vector lane by lane through the
  // scalar expf, errno handling included, when one lane is below -87.3
  // (underflow) or above 88.7 (overflow). Sigmoid and tanh saturate long
  // before that (sigmoid(+-87) is 1 or 1.6e-38, tanh(43.5) is 1), ELU's
  // expm1 is -1 there, and a plain exp only changes results below 1.6e-38.
  // From below always, from above where the function saturates.
  auto expArg = [&](Value t, bool clampAbove) -> Value {
    t = b.create<arith::MaxNumFOp>(l, t, c(-kExpRange));
    return clampAbove ? b.create<arith::MinNumFOp>(l, t, c(kExpRange)) : t;
  };
  Value x = v[0];
  if (isa<AddOp>(op))
    return b.create<arith::AddFOp>(l, v[0], v[1]);
  if (isa<SubOp>(op))
    return b.create<arith::SubFOp>(l, v[0], v[1]);
  if (isa<MulOp>(op))
    return b.create<arith::MulFOp>(l, v[0], v[1]);
  if (isa<DivOp>(op))
    return b.create<arith::DivFOp>(l, v[0], v[1]);
  if (isa<ReluOp>(op))
    return b.create<arith::MaximumFOp>(l, x, c(0.0));
  if (isa<StepOp>(op)) {
    Value gt = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, x, c(0.0));
    return b.create<arith::SelectOp>(l, gt, c(1.0), c(0.0));
  }
  if (isa<NegOp>(op))
    return b.create<arith::NegFOp>(l, x);
  if (isa<ExpOp>(op))
    return b.create<math::ExpOp>(l, expArg(x, /*clampAbove=*/false));
  if (isa<LogOp>(op))
    return b.create<math::LogOp>(l, x);
  if (isa<SqrtOp>(op))
    return b.create<math::SqrtOp>(l, x);
  if (isa<RsqrtOp>(op))
    return b.create<arith::DivFOp>(l, c(1.0), b.create<math::SqrtOp>(l, x));
  if (isa<SigmoidOp>(op)) {
    Value e = b.create<math::ExpOp>(
        l, expArg(b.create<arith::NegFOp>(l, x), /*clampAbove=*/true));
    return b.create<arith::DivFOp>(l, c(1.0),
                                   b.create<arith::AddFOp>(l, c(1.0), e));
  }
  if (isa<StopGradientOp>(op))
    return x;
  if (isa<TanhOp>(op)) {
    // tanh x = 1 - 2 / (exp(2x) + 1): saturates to +-1 without inf/inf.
    Value e = b.create<math::ExpOp>(
        l, expArg(b.create<arith::AddFOp>(l, x, x), /*clampAbove=*/true));
    Value q = b.create<arith::DivFOp>(l, c(2.0),
                                      b.create<arith::AddFOp>(l, e, c(1.0)));
    return b.create<arith::SubFOp>(l, c(1.0), q);
  }
  if (isa<EluOp>(op)) {
    Value gt = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, x, c(0.0));
    Value em1 = b.create<math::ExpM1Op>(
        l, expArg(b.create<arith::MinimumFOp>(l, x, c(0.0)),
                  /*clampAbove=*/false));
    return b.create<arith::SelectOp>(l, gt, x, em1);
  }
  auto lr = cast<LeakyReluOp>(op);
  Value gt = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, x, c(0.0));
  Value ax = b.create<arith::MulFOp>(l, x, c(lr.getAlpha().convertToDouble()));
  return b.create<arith::SelectOp>(l, gt, x, ax);
}

Value gnn::emitDropoutElement(OpBuilder &ob, Location loc, Value x, Value index,
                              ArrayRef<Value> params) {
  Type i32 = ob.getI32Type(), i64 = ob.getI64Type();
  auto c32 = [&](uint32_t v) {
    return ob.create<arith::ConstantIntOp>(loc, static_cast<int64_t>(v), i32)
        .getResult();
  };
  auto lo = [&](Value v) { return ob.create<arith::TruncIOp>(loc, i32, v); };
  auto hi = [&](Value v) {
    return lo(ob.create<arith::ShRUIOp>(
        loc, v, ob.create<arith::ConstantIntOp>(loc, 32, i64)));
  };
  auto mul = [&](Value a, uint32_t k) {
    return ob.create<arith::MulIOp>(loc, a, c32(k)).getResult();
  };
  auto xorShift = [&](Value h, uint32_t k) {
    return ob.create<arith::XOrIOp>(loc, h,
                                    ob.create<arith::ShRUIOp>(loc, h, c32(k)));
  };
  // Random.h's dropoutDraw, in 32-bit lanes as the runtime draws.
  Value i = ob.create<arith::IndexCastOp>(loc, i64, index);
  Value key = params[0];
  Value h = ob.create<arith::XOrIOp>(
      loc,
      ob.create<arith::XOrIOp>(loc, mul(lo(i), 0x9e3779b9u),
                               mul(hi(i), 0x7feb352du)),
      lo(key));
  h = ob.create<arith::AddIOp>(loc, h, hi(key));
  h = mul(xorShift(h, 16), 0x85ebca6bu);
  h = mul(xorShift(h, 13), 0xc2b2ae35u);
  h = xorShift(h, 16);
  Value draw = ob.create<arith::ShRUIOp>(loc, h, c32(8));
  Value keep = ob.create<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, draw,
                                        lo(params[1]));
  Value scale = ob.create<arith::BitcastOp>(
      loc, ob.getF32Type(),
      ob.create<arith::TruncIOp>(loc, ob.getI32Type(), params[2]));
  Value zero =
      ob.create<arith::ConstantFloatOp>(loc, APFloat(0.0f), ob.getF32Type());
  return ob.create<arith::SelectOp>(
      loc, keep, ob.create<arith::MulFOp>(loc, x, scale), zero);
}
