//===- RowLowering.cpp - row ops of a stage body --------------------------===//

#include "RowLowering.h"

#include "ElementMath.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gnn;

static RankedTensorType rowType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

int64_t RowLowering::dropoutId(DropoutOp d) {
  if (d.getMaskId())
    return static_cast<int64_t>(*d.getMaskId());
  auto [it, fresh] = unnumberedDropouts.try_emplace(
      d, 1000000 + static_cast<int64_t>(unnumberedDropouts.size()));
  return it->second;
}

Tensor RowLowering::allocResult(Operation *op, Value rows,
                                SmallVector<Value> dims) {
  bool batched = llvm::any_of(
      op->getOperands(), [&](Value v) { return buffers.lookup(v).batched; });
  return buffers.alloc(batched ? rows : lb.cIndex(1), batched, std::move(dims));
}

LogicalResult RowLowering::lower(Operation *op, Value rows) {
  assert(!isElementwise(op) && "element-wise ops are lowered in runs");
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ConstantOp c) { return lowerConstant(c); })
      .Case([&](LinearOp o) { return lowerLinear(o); })
      .Case([&](LinearTransposeOp o) { return lowerLinearTranspose(o); })
      .Case([&](ReduceSumOp o) { return lowerReduceSum(o); })
      .Case([&](TypedLinearOp o) { return lowerTypedLinear(o); })
      .Case([&](TypedLinearTransposeOp o) {
        return lowerTypedLinearTranspose(o);
      })
      .Case([&](RowDotOp o) { return lowerRowDot(o, rows); })
      .Case([&](BroadcastHeadsOp o) { return lowerBroadcastHeads(o, rows); })
      .Case<PlaceByTypeOp, TakeByTypeOp>(
          [&](Operation *o) { return lowerSlots(o, rows); })
      .Case<ConcatOp, SliceOp>(
          [&](Operation *o) { return lowerConcatOrSlice(o, rows); })
      .Case([&](DropoutOp o) { return lowerDropout(o); })
      .Default([](Operation *o) {
        return o->emitOpError() << "is not lowered to the runtime in a stage "
                                   "body";
      });
}

LogicalResult RowLowering::lowerConstant(ConstantOp c) {
  RankedTensorType t = c.getType();
  Tensor out = buffers.alloc(lb.cIndex(1), false, lb.staticDims(t));
  int64_t i = 0;
  for (APFloat v : c.getValue().getValues<APFloat>())
    lb.b.create<memref::StoreOp>(lb.loc, lb.cF32(v.convertToDouble()), out.buf,
                                 ValueRange{lb.cIndex(i++)});
  buffers.bind(c.getResult(), out);
  return success();
}

LogicalResult RowLowering::lowerLinear(LinearOp linear) {
  Tensor x = buffers.lookup(linear.getInput());
  Tensor w = buffers.lookup(linear.getWeight());
  unsigned k = rowType(linear.getInput()).getRank();
  SmallVector<Value> outDims(w.dims.begin() + k, w.dims.end());
  Tensor out = buffers.alloc(x.rows, x.batched, outDims);
  lb.gemm(false, false, x.rows, out.rowSize, x.rowSize, x.buf, w.buf, out.buf);
  buffers.bind(linear.getResult(), out);
  return success();
}

LogicalResult RowLowering::lowerLinearTranspose(LinearTransposeOp lt) {
  Tensor g = buffers.lookup(lt.getInput());
  Tensor w = buffers.lookup(lt.getWeight());
  unsigned k = rowType(lt.getInput()).getRank();
  SmallVector<Value> outDims(w.dims.begin(), w.dims.end() - k);
  Tensor out = buffers.alloc(g.rows, g.batched, outDims);
  lb.gemm(false, true, g.rows, out.rowSize, g.rowSize, g.buf, w.buf, out.buf);
  buffers.bind(lt.getResult(), out);
  return success();
}

LogicalResult RowLowering::lowerReduceSum(ReduceSumOp rs) {
  Tensor x = buffers.lookup(rs.getInput());
  Tensor out = buffers.alloc(x.rows, x.batched, lb.staticDims(rs.getType()));
  lb.sumLoop(
      x.rows, x.rowSize,
      [&](OpBuilder &ib, Value r, Value j) {
        return lb.load(ib, x, r, j, false);
      },
      [&](OpBuilder &ob, Value r, Value sum) {
        ob.create<memref::StoreOp>(lb.loc, sum, out.buf, r);
      });
  buffers.bind(rs.getResult(), out);
  return success();
}

LogicalResult RowLowering::lowerTypedLinear(TypedLinearOp tl) {
  Tensor x = buffers.lookup(tl.getInput()), t = buffers.lookup(tl.getType()),
         w = buffers.lookup(tl.getWeight());
  unsigned k = rowType(tl.getInput()).getRank();
  SmallVector<Value> outDims(w.dims.begin() + 1 + k, w.dims.end());
  Tensor out = buffers.alloc(x.rows, true, outDims);
  lb.call(rt::Call::gnnrtTypedGemm,
          {lb.ctx, lb.toI64(x.rows), lb.toI64(x.rowSize), lb.toI64(out.rowSize),
           lb.toI64(w.dims[0]), x.buf, t.buf, w.buf, out.buf});
  buffers.bind(tl.getResult(), out);
  return success();
}

LogicalResult
RowLowering::lowerTypedLinearTranspose(TypedLinearTransposeOp tt) {
  Tensor g = buffers.lookup(tt.getInput()), t = buffers.lookup(tt.getType()),
         w = buffers.lookup(tt.getWeight());
  unsigned r = rowType(tt.getResult()).getRank();
  SmallVector<Value> outDims(w.dims.begin() + 1, w.dims.begin() + 1 + r);
  Tensor out = buffers.alloc(g.rows, true, outDims);
  lb.call(rt::Call::gnnrtTypedGemmTranspose,
          {lb.ctx, lb.toI64(g.rows), lb.toI64(out.rowSize), lb.toI64(g.rowSize),
           lb.toI64(w.dims[0]), g.buf, t.buf, w.buf, out.buf});
  buffers.bind(tt.getResult(), out);
  return success();
}

LogicalResult RowLowering::lowerRowDot(RowDotOp rd, Value rows) {
  Tensor a = buffers.lookup(rd.getLhs()), c = buffers.lookup(rd.getRhs());
  bool vector = rowType(rd.getLhs()).getRank() == 1;
  Value groups = vector ? lb.cIndex(1) : a.dims[0];
  Value width = a.dims.back();
  Tensor out = allocResult(rd, rows, {groups});
  Value zero = lb.cIndex(0), one = lb.cIndex(1);
  // out[r, h] = sum over k < width of a[r, h * width + k] * c[r, same].
  auto dot = [&](OpBuilder &gb, Location gl, Value r, Value h) {
    Value init =
        gb.create<arith::ConstantFloatOp>(gl, APFloat(0.0f), gb.getF32Type());
    Value hk = gb.create<arith::MulIOp>(gl, h, width);
    auto inner = gb.create<scf::ForOp>(
        gl, zero, width, one, ValueRange{init},
        [&](OpBuilder &ib, Location il, Value k, ValueRange acc) {
          Value j = ib.create<arith::AddIOp>(il, hk, k);
          Value p = ib.create<arith::MulFOp>(il, lb.load(ib, a, r, j, false),
                                             lb.load(ib, c, r, j, false));
          ib.create<scf::YieldOp>(
              il, ib.create<arith::AddFOp>(il, acc[0], p).getResult());
        });
    Value base = gb.create<arith::MulIOp>(gl, r, groups);
    gb.create<memref::StoreOp>(
        gl, inner.getResult(0), out.buf,
        ValueRange{gb.create<arith::AddIOp>(gl, base, h)});
  };
  markOwnRowLoop(lb.b.create<scf::ForOp>(
      lb.loc, zero, out.rows, one, ValueRange{},
      [&](OpBuilder &ob, Location l, Value r, ValueRange) {
        ob.create<scf::ForOp>(
            l, zero, groups, one, ValueRange{},
            [&](OpBuilder &gb, Location gl, Value h, ValueRange) {
              dot(gb, gl, r, h);
              gb.create<scf::YieldOp>(gl);
            });
        ob.create<scf::YieldOp>(l);
      }));
  buffers.bind(rd.getResult(), out);
  return success();
}

void RowLowering::storeEachElement(
    const Tensor &out,
    function_ref<Value(OpBuilder &, Location, Value r)> perRow,
    function_ref<Value(OpBuilder &, Location, Value r, Value rowValue, Value j)>
        element) {
  Value zero = lb.cIndex(0), one = lb.cIndex(1);
  markOwnRowLoop(lb.b.create<scf::ForOp>(
      lb.loc, zero, out.rows, one, ValueRange{},
      [&](OpBuilder &ob, Location l, Value r, ValueRange) {
        Value rowValue = perRow ? perRow(ob, l, r) : Value();
        ob.create<scf::ForOp>(
            l, zero, out.rowSize, one, ValueRange{},
            [&](OpBuilder &ib, Location il, Value j, ValueRange) {
              Value v = element(ib, il, r, rowValue, j);
              Value base = ib.create<arith::MulIOp>(il, r, out.rowSize);
              ib.create<memref::StoreOp>(
                  il, v, out.buf,
                  ValueRange{ib.create<arith::AddIOp>(il, base, j)});
              ib.create<scf::YieldOp>(il);
            });
        ob.create<scf::YieldOp>(l);
      }));
}

LogicalResult RowLowering::lowerBroadcastHeads(BroadcastHeadsOp bh,
                                               Value rows) {
  Tensor x = buffers.lookup(bh.getInput());
  RankedTensorType rt = bh.getType();
  if (rt.isDynamicDim(1))
    return bh->emitOpError() << "needs a static head width to be lowered";
  Value width = lb.cIndex(rt.getDimSize(1));
  Tensor out = allocResult(bh, rows, {x.dims[0], width});
  // Element j of the result reads input element j / width.
  storeEachElement(out, nullptr,
                   [&](OpBuilder &ib, Location il, Value r, Value, Value j) {
                     Value h = ib.create<arith::DivUIOp>(il, j, width);
                     return lb.load(ib, x, r, h, false);
                   });
  buffers.bind(bh.getResult(), out);
  return success();
}

LogicalResult RowLowering::lowerSlots(Operation *op, Value rows) {
  const bool place = isa<PlaceByTypeOp>(op);
  Tensor x = buffers.lookup(op->getOperand(0));
  Tensor t = buffers.lookup(op->getOperand(1));
  auto slotted = cast<RankedTensorType>(place ? op->getResult(0).getType()
                                              : op->getOperand(0).getType());
  auto row = cast<RankedTensorType>(place ? op->getOperand(0).getType()
                                          : op->getResult(0).getType());
  if (!row.hasStaticShape())
    return op->emitOpError() << "needs a static row to be lowered";
  Value width = lb.cIndex(row.getNumElements());
  lb.call(rt::Call::gnnrtCheckTypes,
          {lb.ctx, t.buf, lb.cI64(slotted.getDimSize(0))});
  Tensor out = allocResult(op, rows, lb.staticDims(place ? slotted : row));
  Value zero = lb.cIndex(0);
  auto typeOf = [&](OpBuilder &ob, Location l, Value r) {
    return lb.toIndex(ob, ob.create<memref::LoadOp>(
                              l, t.buf, ValueRange{t.batched ? r : zero}));
  };
  storeEachElement(
      out, typeOf,
      [&](OpBuilder &ib, Location il, Value r, Value type, Value j) -> Value {
        if (!place)
          return lb.load(ib, x, r,
                         ib.create<arith::AddIOp>(
                             il, ib.create<arith::MulIOp>(il, type, width), j),
                         false);
        // Element j of the T x K row: slot j / K, column j % K.
        Value slot = ib.create<arith::DivUIOp>(il, j, width);
        Value column = ib.create<arith::RemUIOp>(il, j, width);
        Value zeroF = ib.create<arith::ConstantFloatOp>(il, APFloat(0.0f),
                                                        ib.getF32Type());
        return ib.create<arith::SelectOp>(
            il,
            ib.create<arith::CmpIOp>(il, arith::CmpIPredicate::eq, slot, type),
            lb.load(ib, x, r, column, false), zeroF);
      });
  buffers.bind(op->getResult(0), out);
  return success();
}

LogicalResult RowLowering::lowerConcatOrSlice(Operation *op, Value rows) {
  // Copy row pieces along the last dimension: concat writes operand k at
  // its offset, slice reads from its offset.
  bool isConcat = isa<ConcatOp>(op);
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<Value> outDims;
  Tensor first = buffers.lookup(op->getOperand(0));
  outDims.assign(first.dims.begin(), first.dims.end() - 1);
  if (isConcat) {
    Value last = lb.cIndex(0);
    for (Value in : op->getOperands())
      last = lb.add(last, buffers.lookup(in).dims.back());
    outDims.push_back(last);
  } else {
    // The verifier requires a static slice width.
    assert(!resultType.isDynamicDim(resultType.getRank() - 1));
    outDims.push_back(lb.cIndex(resultType.getShape().back()));
  }
  Tensor out = allocResult(op, rows, outDims);
  Value outer = lb.product(ArrayRef<Value>(outDims).drop_back());
  Value outLast = outDims.back();
  int64_t sliceOffset = isConcat ? 0 : cast<SliceOp>(op).getOffset();
  Value offset = lb.cIndex(sliceOffset);
  for (Value in : op->getOperands()) {
    Tensor t = buffers.lookup(in);
    Value inLast = t.dims.back();
    Value copyLast = isConcat ? inLast : outLast;
    Value zero = lb.cIndex(0), one = lb.cIndex(1);
    Value off = offset;
    // Element j of piece o of row r: from the operand's o * inLast + j (+ the
    // slice's offset), to the result's o * outLast + j (+ concat's offset).
    auto copy = [&](OpBuilder &ib, Location il, Value r, Value o, Value j) {
      Value inJ = ib.create<arith::MulIOp>(il, o, inLast);
      Value outJ = ib.create<arith::MulIOp>(il, o, outLast);
      if (isConcat) {
        inJ = ib.create<arith::AddIOp>(il, inJ, j);
        outJ = ib.create<arith::AddIOp>(il, outJ,
                                        ib.create<arith::AddIOp>(il, off, j));
      } else {
        inJ = ib.create<arith::AddIOp>(il, inJ,
                                       ib.create<arith::AddIOp>(il, off, j));
        outJ = ib.create<arith::AddIOp>(il, outJ, j);
      }
      Value v = lb.load(ib, t, r, inJ, false);
      Value base = ib.create<arith::MulIOp>(il, r, out.rowSize);
      ib.create<memref::StoreOp>(
          il, v, out.buf, ValueRange{ib.create<arith::AddIOp>(il, base, outJ)});
    };
    markOwnRowLoop(lb.b.create<scf::ForOp>(
        lb.loc, zero, out.rows, one, ValueRange{},
        [&](OpBuilder &ob, Location l, Value r, ValueRange) {
          ob.create<scf::ForOp>(
              l, zero, outer, one, ValueRange{},
              [&](OpBuilder &mb, Location ml, Value o, ValueRange) {
                mb.create<scf::ForOp>(
                    ml, zero, copyLast, one, ValueRange{},
                    [&](OpBuilder &ib, Location il, Value j, ValueRange) {
                      copy(ib, il, r, o, j);
                      ib.create<scf::YieldOp>(il);
                    });
                mb.create<scf::YieldOp>(ml);
              });
          ob.create<scf::YieldOp>(l);
        }));
    if (isConcat)
      offset = lb.add(offset, inLast);
    else
      break;
  }
  buffers.bind(op->getResult(0), out);
  return success();
}

LogicalResult RowLowering::lowerDropout(DropoutOp d) {
  Tensor x = buffers.lookup(d.getInput());
  Tensor out = buffers.alloc(x.rows, x.batched, x.dims);
  Value rate = lb.b.create<arith::ConstantFloatOp>(lb.loc, d.getRate(),
                                                   lb.b.getF64Type());
  lb.call(rt::Call::gnnrtDropout,
          {lb.ctx, lb.cI64(dropoutId(d)), rate, x.buf, out.buf});
  buffers.bind(d.getResult(), out);
  return success();
}
