//===- LoweringBuilder.cpp - IR building helpers of the lowering ----------===//

#include "LoweringBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::gnn;

Value LoweringBuilder::product(ArrayRef<Value> dims) {
  Value p = cIndex(1);
  for (Value d : dims)
    p = mul(p, d);
  return p;
}

Value LoweringBuilder::emptyI32() {
  Value m =
      b.create<memref::AllocaOp>(loc, MemRefType::get({0}, b.getI32Type()));
  return b.create<memref::CastOp>(loc, memI32(), m);
}

Value LoweringBuilder::emptyF32() {
  Value m =
      b.create<memref::AllocaOp>(loc, MemRefType::get({0}, b.getF32Type()));
  return b.create<memref::CastOp>(loc, memF32(), m);
}

SmallVector<Value> LoweringBuilder::staticDims(RankedTensorType row) {
  SmallVector<Value> dims;
  for (int64_t d : row.getShape())
    dims.push_back(ShapedType::isDynamic(d) ? Value() : cIndex(d));
  return dims;
}

Value LoweringBuilder::load(OpBuilder &nb, const Tensor &t, Value r, Value j,
                            bool broadcast) {
  Location l = loc;
  Value base = t.batched ? nb.create<arith::MulIOp>(l, r, t.rowSize).getResult()
                         : nb.create<arith::ConstantIndexOp>(l, 0).getResult();
  Value index =
      broadcast ? base : nb.create<arith::AddIOp>(l, base, j).getResult();
  return nb.create<memref::LoadOp>(l, t.buf, index);
}

/// Whether every dimension is the constant 1.
static bool isOneElement(ArrayRef<Value> dims) {
  return llvm::all_of(dims, [](Value d) {
    auto c = d.getDefiningOp<arith::ConstantIndexOp>();
    return c && c.value() == 1;
  });
}

void LoweringBuilder::elementwise(
    const Tensor &out, ArrayRef<const Tensor *> ins,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  // An operand whose row has one element while the result's has more is a
  // broadcast scalar.
  SmallVector<bool> scalar;
  for (const Tensor *t : ins)
    scalar.push_back(isOneElement(t->dims));
  bool outOne = isOneElement(out.dims);
  Value zero = cIndex(0), one = cIndex(1);
  auto rowLoop = b.create<scf::ForOp>(
      loc, zero, out.rows, one, ValueRange{},
      [&](OpBuilder &ob, Location l, Value r, ValueRange) {
        ob.create<scf::ForOp>(
            l, zero, out.rowSize, one, ValueRange{},
            [&](OpBuilder &ib, Location il, Value j, ValueRange) {
              SmallVector<Value> elems;
              for (auto [t, s] : llvm::zip(ins, scalar))
                elems.push_back(load(ib, *t, r, j, s && !outOne));
              Value v = fn(ib, il, elems);
              Value base = ib.create<arith::MulIOp>(il, r, out.rowSize);
              Value idx = ib.create<arith::AddIOp>(il, base, j);
              ib.create<memref::StoreOp>(il, v, out.buf, idx);
              ib.create<scf::YieldOp>(il);
            });
        ob.create<scf::YieldOp>(l);
      });
  markOwnRowLoop(rowLoop);
}

void LoweringBuilder::sumLoop(
    Value outer, Value inner,
    function_ref<Value(OpBuilder &, Value, Value)> term,
    function_ref<void(OpBuilder &, Value, Value)> store) {
  Value zero = cIndex(0), one = cIndex(1);
  auto rowLoop = b.create<scf::ForOp>(
      loc, zero, outer, one, ValueRange{},
      [&](OpBuilder &ob, Location l, Value o, ValueRange) {
        Value init = ob.create<arith::ConstantFloatOp>(l, APFloat(0.0f),
                                                       ob.getF32Type());
        auto sum = ob.create<scf::ForOp>(
            l, zero, inner, one, ValueRange{init},
            [&](OpBuilder &ib, Location il, Value i, ValueRange acc) {
              // Reassociable, so that the sum vectorises.
              Value v = ib.create<arith::AddFOp>(il, acc[0], term(ib, o, i),
                                                 arith::FastMathFlags::reassoc);
              ib.create<scf::YieldOp>(il, v);
            });
        store(ob, o, sum.getResult(0));
        ob.create<scf::YieldOp>(l);
      });
  markOwnRowLoop(rowLoop);
}
