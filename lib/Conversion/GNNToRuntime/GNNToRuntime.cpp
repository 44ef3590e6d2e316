//===- GNNToRuntime.cpp - --convert-gnn-to-runtime ------------------------===//
//
// Lowers the functions --gnn-autodiff produced to loops over flat memrefs and
// calls into gnnrt (runtime/include/gnnrt/GNNRuntime.h). The pass builds the
// new functions op by op, keeping for every gnn value where its rows live
// (`Tensor`), then erases the gnn functions.
//
//===----------------------------------------------------------------------===//

#include "gnn/Conversion/Passes.h"
#include "gnn/IR/GNNOps.h"
#include "gnnrt/GNNRuntime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SaveAndRestore.h"

#include <cmath>
#include <deque>
#include <limits>
#include <map>

namespace mlir::gnn {
#define GEN_PASS_DEF_CONVERTGNNTORUNTIME
#include "gnn/Conversion/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {

constexpr llvm::StringLiteral kTrainStep = GNNDialect::kTrainStepName;
constexpr llvm::StringLiteral kEval = GNNDialect::kEvalName;
constexpr llvm::StringLiteral kModelInfo = "gnnrt_model_info";
constexpr llvm::StringLiteral kKernelPrefix = "__gnn_kernel_";

/// Where a gnn value lives after lowering: `rows` rows of `rowSize` elements
/// in a flat buffer. Unbatched values (parameters, constants, what only
/// depends on them) have one row.
struct Tensor {
  Value buf;
  Value rows;
  bool batched = true;
  SmallVector<Value> dims; // row dimensions (index)
  Value rowSize;           // product of dims (index)
};

/// Element-wise row ops: one result element from the operands' elements at
/// the same position (scalar rows broadcast).
bool isElementwise(Operation *op) {
  return isa<ReluOp, StepOp, StopGradientOp, NegOp, ExpOp, LogOp, SqrtOp,
             RsqrtOp, SigmoidOp,
             TanhOp, EluOp, LeakyReluOp, AddOp, SubOp, MulOp, DivOp>(op);
}

/// A broadcast_heads with a static head width: it joins element-wise runs of
/// its result shape, element j reading element j / width of its operand.
bool spreadsHeads(Operation *op) {
  auto bh = dyn_cast<BroadcastHeadsOp>(op);
  return bh && !bh.getType().isDynamicDim(1);
}

/// Where exp's argument is clamped (see emitElement).
constexpr float kExpRange = 87.0f;

/// One element of an element-wise op's result.
Value emitElement(OpBuilder &b, Location l, Operation *op, ValueRange v) {
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

class FunctionLowering {
public:
  FunctionLowering(ModuleOp module, func::FuncOp source,
                   ArrayRef<std::string> edgeInputs)
      : module(module), source(source), edgeInputs(edgeInputs),
        b(module.getContext()) {}

  LogicalResult run(bool training);
  /// After run(): gives every buffer a runtime slot, greedy by size (largest
  /// first, into the slot that holds no buffer live at the same time and
  /// fits it most tightly, else the one that grows least, else a new slot);
  /// slots are numbered from 0 by decreasing size.
  void planSlots(const DenseMap<StringRef, int64_t> &estimates);
  /// Floats per edge that the function's kernels may keep for later ones.
  void setEdgeCacheBudget(int64_t floats) { edgeCacheBudget = floats; }

private:
  // --- helpers -------------------------------------------------------------
  Value cIndex(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }
  Value cI64(int64_t v) {
    return b.create<arith::ConstantIntOp>(loc, v, b.getI64Type());
  }
  Value cF32(double v) {
    return b.create<arith::ConstantFloatOp>(loc, APFloat(static_cast<float>(v)),
                                            b.getF32Type());
  }
  Value toI64(Value index) {
    return b.create<arith::IndexCastOp>(loc, b.getI64Type(), index);
  }
  Value mul(Value x, Value y) { return b.create<arith::MulIOp>(loc, x, y); }
  Value add(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }

  MemRefType memF32() {
    return MemRefType::get({ShapedType::kDynamic}, b.getF32Type());
  }
  MemRefType memI32() {
    return MemRefType::get({ShapedType::kDynamic}, b.getI32Type());
  }
  MemRefType memI64() {
    return MemRefType::get({ShapedType::kDynamic}, b.getI64Type());
  }

  func::FuncOp runtimeFunc(StringRef name, TypeRange args, TypeRange results,
                           bool cInterface);
  Value call(StringRef name, TypeRange results, ValueRange args,
             bool cInterface = true);
  /// The runtime's op number of a dropout: its mask id (shared by the
  /// forward and backward), else a number of its own.
  int64_t dropoutId(DropoutOp d) {
    if (d.getMaskId())
      return static_cast<int64_t>(*d.getMaskId());
    auto [it, fresh] = unnumberedDropouts.try_emplace(
        d, 1000000 + static_cast<int64_t>(unnumberedDropouts.size()));
    return it->second;
  }
  DenseMap<Operation *, int64_t> unnumberedDropouts;
  /// One element of a dropout applied inline: x * scale where the mask
  /// keeps flat element `index`, else 0 (gnnrtDropoutParam's formula).
  Value emitDropoutElement(OpBuilder &ob, Value x, Value index,
                           ArrayRef<Value> params);
  /// A buffer size as a constant factor times dynamic factors (numV, numE,
  /// numF, numC or other values, by name), so that sizes can be compared.
  struct SizeKey {
    int64_t factor = 1;
    std::string dynamic;
  };
  SizeKey sizeKey(Value numElements);
  /// A new buffer of `size` from now until release(): its slot constant is
  /// patched by planSlots() once the function's buffers are all known.
  int64_t takeSlot(const SizeKey &size);
  /// The i64 slot operand of a gnnrtBuffer call for buffer `id`.
  Value slotOperand(int64_t id);
  /// Buffer `id` is not read after now; later buffers may share its slot.
  void release(int64_t id);
  Value buffer(Value numElements);
  /// An i32 buffer from the same slots (liveness-managed like buffer()).
  Value bufferI32(Value numElements);
  Value product(ArrayRef<Value> dims);
  Value emptyI32();
  Value emptyF32();

  /// Row dimensions of a tensor type whose dynamic dims are bound by `dims`
  /// (a gnn.dims array) or come from `like`.
  SmallVector<Value> staticDims(RankedTensorType row);
  Tensor make(Value buf, Value rows, bool batched, SmallVector<Value> dims) {
    Tensor t{buf, rows, batched, dims, product(dims)};
    return t;
  }
  Tensor alloc(Value rows, bool batched, SmallVector<Value> dims) {
    Value size = product(dims);
    return Tensor{buffer(mul(rows, size)), rows, batched, dims, size};
  }

  /// out[r, j] = fn(in_k[r or 0, j or 0]...) over `rows` x `out.rowSize`.
  void elementwise(const Tensor &out, ArrayRef<const Tensor *> ins,
                   function_ref<Value(OpBuilder &, Location, ValueRange)> fn);
  Value load(OpBuilder &nb, const Tensor &t, Value r, Value j, bool broadcast);

  /// For o < outer: store(o, sum over i < inner of term(o, i)).
  void sumLoop(Value outer, Value inner,
               function_ref<Value(OpBuilder &, Value, Value)> term,
               function_ref<void(OpBuilder &, Value, Value)> store);

  // --- ops -------------------------------------------------------------------
  LogicalResult lowerTop(Operation *op);
  /// A fused_gather: one gnnrtSpmm when the body only scales the neighbour's
  /// row by a per-edge scalar, else a compiled kernel run by
  /// gnnrtParallelFor (emitFusedGatherKernel).
  LogicalResult lowerFusedGather(FusedGatherOp fg);
  /// A new private `@__gnn_kernel_N(ctx: !llvm.ptr, begin: i64, end: i64)`
  /// with an entry block, for gnnrtParallelFor.
  func::FuncOp newKernel();
  /// A per-edge value one fused_gather kernel stores for later ones, which
  /// load it instead of recomputing it (edgeCacheFor).
  struct EdgeCache {
    FusedGatherOp producer;
    Value value;      // in the producer's body
    Value buf;        // |E| x width floats
    int64_t width;
    int64_t slot;
    Operation *last;  // the last fused_gather that may read it
  };
  /// The kernel's cached values: value of its body -> (cache, stores it).
  using KernelCaches = SmallVector<std::tuple<Value, EdgeCache *, bool>>;
  /// Edge caches of the kernel of `fg`: its per-edge row reductions and
  /// exponentials (<= 16 floats per edge) that a live cache holds (loaded)
  /// or that a later fused_gather computes too (stored, in a new cache).
  KernelCaches edgeCachesFor(FusedGatherOp fg);
  /// Frees the caches nothing after `op` reads.
  void releaseEdgeCaches(Operation *op);
  std::deque<EdgeCache> edgeCaches;
  SmallVector<FusedGatherOp> fusedGathers; // of the function, in order
  int64_t edgeCacheBudget = 16;
  int64_t edgeCacheFloatsUsed = 0;
  func::FuncOp emitFusedGatherKernel(FusedGatherOp fg,
                                     ArrayRef<Tensor> operands,
                                     const KernelCaches &caches,
                                     int64_t firstCacheArg);
  /// weights[e] = `scale` (a one-element value of `fg`'s body computed from
  /// one-element rows) for every edge, by an edge-parallel kernel.
  LogicalResult computeEdgeScalars(FusedGatherOp fg, Value scale,
                                   Value weights);
  LogicalResult lowerStage(Operation *op, Region &body, ValueRange inputs,
                           ArrayRef<Value> params, bool edges);
  LogicalResult lowerRow(Operation *op, Value rows);
  /// Element-wise ops of one row shape in one loop nest: intermediate
  /// elements stay in registers; results used elsewhere are stored.
  LogicalResult lowerFused(ArrayRef<Operation *> group, Value rows);
  /// Whether result `r` of run `group` is only summed over the rows after the
  /// stage: every use outside the run a yield whose stage result only feeds
  /// sum_rows (bias and attention gradients).
  bool onlySummed(Value r, const llvm::SmallPtrSetImpl<Operation *> &group,
                  Value rows);
  /// Whether nothing reads slot buffer `buf` after the run `group` of the
  /// current stage, whose first op has index `first`.
  bool diesIn(Value buf, const llvm::SmallPtrSetImpl<Operation *> &group,
              int64_t first);
  /// The stage being lowered (null at the top level).
  Operation *stage = nullptr;
  Tensor broadcastRows(const Tensor &t, Value rows);
  int64_t splitOf(Value mask);
  void planAggregations(Block &body);

  /// A gather of a scatter (optionally scaled per edge by an apply_edge that
  /// multiplies the scattered row by a scalar edge row): one gnnrtSpmm call,
  /// no edge tensor.
  struct Aggregation {
    Value vertexInput;
    Value weights; // a scalar-row edge tensor, or null
  };
  DenseMap<Operation *, Aggregation> aggregations;
  llvm::DenseSet<Operation *> skipped;

  /// Maps a gnn value to where it lives and, for buffers from slots, records
  /// it as a holder until its last use (liveness-based slot reuse).
  void bind(Value v, const Tensor &t);
  /// Releases the slots whose holders are all dead after op index `upTo`.
  void expire(int64_t upTo);
  void computeLastUses(Block &body);

  DenseMap<Operation *, int64_t> opIndex;
  int64_t numIndexed = 0; // ops in opIndex
  /// The index of `op`, else of its nearest indexed ancestor (a yield is read
  /// when its stage binds the results); numIndexed for none (the return).
  int64_t indexOf(Operation *op) const {
    while (op && !opIndex.count(op))
      op = op->getParentOp();
    return op ? opIndex.lookup(op) : numIndexed;
  }
  DenseMap<Value, int64_t> lastUse;
  /// Loss gradients computed by their loss's runtime call.
  DenseMap<Operation *, Tensor> lossGrads;
  DenseMap<Value, int64_t> slotOf;  // buffer -> its id in `buffers`
  DenseMap<Value, int64_t> holders; // buffer -> live gnn values mapped to it
  DenseMap<Value, SmallVector<Value>> boundTo; // buffer -> gnn values, ever
  std::map<int64_t, SmallVector<Value>> expiring; // index -> buffers to release
  int64_t expiredUpTo = -1;
  /// Every buffer the function takes, with the times (a counter of takes and
  /// releases) it is live: [taken, released]. Two buffers may share a slot
  /// when one is released before the other is taken.
  struct BufferUse {
    SizeKey size;
    int64_t taken, released = std::numeric_limits<int64_t>::max();
    SmallVector<Operation *> slotConstants; // patched by planSlots
  };
  std::vector<BufferUse> buffers;
  int64_t clock = 0;

  ModuleOp module;
  func::FuncOp source;
  ArrayRef<std::string> edgeInputs;
  OpBuilder b;
  Location loc = UnknownLoc::get(module.getContext());
  Value ctx, numV, numE, numF, numC;
  DenseMap<Value, Tensor> values;
  Value loss;
};

func::FuncOp FunctionLowering::runtimeFunc(StringRef name, TypeRange args,
                                           TypeRange results, bool cInterface) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
  auto fn = mb.create<func::FuncOp>(
      loc, name, FunctionType::get(b.getContext(), args, results));
  fn.setPrivate();
  if (cInterface)
    fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), mb.getUnitAttr());
  return fn;
}

Value FunctionLowering::call(StringRef name, TypeRange results, ValueRange args,
                             bool cInterface) {
  func::FuncOp fn = runtimeFunc(name, args.getTypes(), results, cInterface);
  auto op = b.create<func::CallOp>(loc, fn, args);
  return op.getNumResults() ? op.getResult(0) : Value();
}

Value FunctionLowering::emitDropoutElement(OpBuilder &ob, Value x,
                                           Value index,
                                           ArrayRef<Value> params) {
  Type i64 = ob.getI64Type();
  auto c = [&](uint64_t v) {
    return ob.create<arith::ConstantIntOp>(loc, static_cast<int64_t>(v), i64)
        .getResult();
  };
  auto xorShift = [&](Value h, uint64_t k) {
    return ob.create<arith::XOrIOp>(loc, h,
                                    ob.create<arith::ShRUIOp>(loc, h, c(k)));
  };
  Value i = ob.create<arith::IndexCastOp>(loc, i64, index);
  // mix64(key ^ (i * 0xd1b54a32d192ed03)) >> 40, as in the runtime.
  Value h = ob.create<arith::XOrIOp>(
      loc, params[0], ob.create<arith::MulIOp>(loc, i, c(0xd1b54a32d192ed03ULL)));
  h = ob.create<arith::AddIOp>(loc, h, c(0x9e3779b97f4a7c15ULL));
  h = ob.create<arith::MulIOp>(loc, xorShift(h, 30), c(0xbf58476d1ce4e5b9ULL));
  h = ob.create<arith::MulIOp>(loc, xorShift(h, 27), c(0x94d049bb133111ebULL));
  h = xorShift(h, 31);
  Value draw = ob.create<arith::ShRUIOp>(loc, h, c(40));
  Value keep = ob.create<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, draw,
                                        params[1]);
  Value scale = ob.create<arith::BitcastOp>(
      loc, ob.getF32Type(),
      ob.create<arith::TruncIOp>(loc, ob.getI32Type(), params[2]));
  Value zero =
      ob.create<arith::ConstantFloatOp>(loc, APFloat(0.0f), ob.getF32Type());
  return ob.create<arith::SelectOp>(
      loc, keep, ob.create<arith::MulFOp>(loc, x, scale), zero);
}

/// k when `v` is ceil(|V| / k) computed as (|V| + k - 1) / k (the chunk
/// count of a parallel loop over the vertices).
static std::optional<int64_t> chunksOf(Value v, Value numV) {
  auto d = v.getDefiningOp<arith::DivUIOp>();
  if (!d)
    return std::nullopt;
  auto add = d.getLhs().getDefiningOp<arith::AddIOp>();
  std::optional<int64_t> k = getConstantIntValue(d.getRhs());
  if (!add || add.getLhs() != numV || !k || *k <= 0)
    return std::nullopt;
  std::optional<int64_t> c = getConstantIntValue(add.getRhs());
  if (!c || *c != *k - 1)
    return std::nullopt;
  return k;
}

FunctionLowering::SizeKey FunctionLowering::sizeKey(Value numElements) {
  SizeKey key;
  SmallVector<std::string> dynamic;
  std::function<void(Value)> walk = [&](Value v) {
    if (auto m = v.getDefiningOp<arith::MulIOp>()) {
      walk(m.getLhs());
      walk(m.getRhs());
    } else if (std::optional<int64_t> c = getConstantIntValue(v)) {
      key.factor *= *c;
    } else if (std::optional<int64_t> k = chunksOf(v, numV)) {
      // Chunks of a parallel loop over the vertices (onlySummed's partials).
      dynamic.push_back("V/" + std::to_string(*k));
    } else if (v == numV || v == numE || v == numF || v == numC) {
      dynamic.push_back(v == numV ? "V" : v == numE ? "E" : v == numF ? "F" : "C");
    } else {
      dynamic.push_back(llvm::utohexstr(
          reinterpret_cast<uintptr_t>(v.getAsOpaquePointer())));
    }
  };
  walk(numElements);
  llvm::sort(dynamic);
  key.dynamic = llvm::join(dynamic, "*");
  return key;
}

int64_t FunctionLowering::takeSlot(const SizeKey &size) {
  buffers.push_back({size, clock++, std::numeric_limits<int64_t>::max(), {}});
  return static_cast<int64_t>(buffers.size()) - 1;
}

Value FunctionLowering::slotOperand(int64_t id) {
  Value c = cI64(-1);
  buffers[id].slotConstants.push_back(c.getDefiningOp());
  return c;
}

void FunctionLowering::release(int64_t id) {
  if (buffers[id].released == std::numeric_limits<int64_t>::max())
    buffers[id].released = clock++;
}

/// The runtime keeps each slot's largest allocation, so a slot costs the size
/// of its largest buffer. Sizes are products of constants and of |V|, |E|, F,
/// C or other run-time values, compared through `estimates` (the dataset's
/// when gnn-compile has one; the plan is correct for any sizes, only its
/// economy depends on them).
void FunctionLowering::planSlots(
    const DenseMap<StringRef, int64_t> &estimates) {
  auto estimate = [&](const SizeKey &k) {
    double n = static_cast<double>(k.factor);
    for (StringRef part : llvm::split(StringRef(k.dynamic), '*')) {
      if (part.empty())
        continue;
      auto [name, divisor] = part.split('/');
      auto it = estimates.find(name);
      double x = it != estimates.end() ? static_cast<double>(it->second) : 1000.0;
      int64_t by = 1;
      if (!divisor.empty() && !divisor.getAsInteger(10, by) && by > 0)
        x = std::ceil(x / static_cast<double>(by));
      n *= x;
    }
    return n;
  };
  SmallVector<double> sizes;
  SmallVector<int64_t> order;
  for (int64_t i = 0, e = buffers.size(); i < e; ++i) {
    sizes.push_back(estimate(buffers[i].size));
    order.push_back(i);
  }
  llvm::stable_sort(order,
                    [&](int64_t x, int64_t y) { return sizes[x] > sizes[y]; });
  struct Slot {
    double capacity = 0;
    SmallVector<int64_t> members;
  };
  SmallVector<Slot> slots;
  SmallVector<int64_t> slotOfBuffer(buffers.size(), -1);
  auto overlaps = [&](const BufferUse &a, const BufferUse &b) {
    return !(a.released < b.taken || b.released < a.taken);
  };
  for (int64_t id : order) {
    const BufferUse &use = buffers[id];
    const double size = sizes[id];
    int best = -1;
    for (int s = 0, e = slots.size(); s < e; ++s) {
      if (llvm::any_of(slots[s].members, [&](int64_t other) {
            return overlaps(use, buffers[other]);
          }))
        continue;
      if (best < 0) {
        best = s;
        continue;
      }
      const double have = slots[s].capacity, cur = slots[best].capacity;
      const bool fits = have >= size, curFits = cur >= size;
      if (fits != curFits ? fits : (fits ? have < cur : have > cur))
        best = s;
    }
    if (best < 0) {
      best = static_cast<int>(slots.size());
      slots.emplace_back();
    }
    slots[best].capacity = std::max(slots[best].capacity, size);
    slots[best].members.push_back(id);
    slotOfBuffer[id] = best;
  }
  // Largest first, so that the training step's and the evaluation's big
  // slots coincide (the runtime keeps the larger of the two per slot).
  SmallVector<int> byCapacity;
  for (int s = 0, e = slots.size(); s < e; ++s)
    byCapacity.push_back(s);
  llvm::stable_sort(byCapacity, [&](int x, int y) {
    return slots[x].capacity > slots[y].capacity;
  });
  SmallVector<int64_t> number(slots.size());
  for (int rank = 0, e = byCapacity.size(); rank < e; ++rank)
    number[byCapacity[rank]] = rank;
  for (int64_t id = 0, e = buffers.size(); id < e; ++id)
    for (Operation *c : buffers[id].slotConstants)
      c->setAttr("value", b.getI64IntegerAttr(number[slotOfBuffer[id]]));
}

Value FunctionLowering::buffer(Value numElements) {
  int64_t slot = takeSlot(sizeKey(numElements));
  Value buf = call("gnnrtBuffer", memF32(),
                   {ctx, slotOperand(slot), toI64(numElements)});
  slotOf[buf] = slot;
  return buf;
}

Value FunctionLowering::bufferI32(Value numElements) {
  int64_t slot = takeSlot(sizeKey(numElements));
  Value buf = call("gnnrtBufferI32", memI32(),
                   {ctx, slotOperand(slot), toI64(numElements)});
  slotOf[buf] = slot;
  return buf;
}

void FunctionLowering::bind(Value v, const Tensor &t) {
  values[v] = t;
  if (!slotOf.count(t.buf))
    return;
  boundTo[t.buf].push_back(v);
  ++holders[t.buf];
  auto it = lastUse.find(v);
  int64_t last = it != lastUse.end() ? it->second : -1;
  expiring[std::max(last, expiredUpTo + 1)].push_back(t.buf);
}

void FunctionLowering::expire(int64_t upTo) {
  while (!expiring.empty() && expiring.begin()->first <= upTo) {
    for (Value buf : expiring.begin()->second)
      if (--holders[buf] == 0)
        release(slotOf[buf]);
    expiring.erase(expiring.begin());
  }
  expiredUpTo = std::max(expiredUpTo, upTo);
}

void FunctionLowering::computeLastUses(Block &body) {
  // The order ops are lowered in: a stage's body ops, then the stage (which
  // binds its results and is the last reader of its inputs and yields).
  int64_t next = 0;
  std::function<void(Block &)> number = [&](Block &block) {
    for (Operation &op : block.without_terminator()) {
      for (Region &r : op.getRegions())
        for (Block &inner : r)
          number(inner);
      opIndex[&op] = next++;
    }
  };
  number(body);
  numIndexed = next;
  body.walk([&](Operation *op) {
    for (Value r : op->getResults()) {
      int64_t last = opIndex.count(op) ? opIndex.lookup(op) : -1;
      for (Operation *u : r.getUsers())
        last = std::max(last, indexOf(u));
      lastUse[r] = last;
    }
    for (Region &region : op->getRegions())
      for (BlockArgument arg : region.getArguments()) {
        int64_t last = opIndex.lookup(op);
        for (Operation *u : arg.getUsers())
          last = std::max(last, indexOf(u));
        lastUse[arg] = last;
      }
  });
  // A gather folded into an SpMM reads the scatter's input and the edge
  // weights itself (the scatter and the edge stage are not lowered).
  for (auto &[gather, agg] : aggregations) {
    int64_t at = opIndex.lookup(gather);
    for (Value v : {agg.vertexInput, agg.weights})
      if (v)
        lastUse[v] = std::max(lastUse.lookup(v), at);
  }
  for (BlockArgument arg : body.getArguments())
    lastUse[arg] = next; // parameters live to the end
  // Values the function returns (the logits) live to the end.
  for (Value v : body.getTerminator()->getOperands())
    lastUse[v] = next;
}

Value FunctionLowering::product(ArrayRef<Value> dims) {
  Value p = cIndex(1);
  for (Value d : dims)
    p = mul(p, d);
  return p;
}

Value FunctionLowering::emptyI32() {
  Value m =
      b.create<memref::AllocaOp>(loc, MemRefType::get({0}, b.getI32Type()));
  return b.create<memref::CastOp>(loc, memI32(), m);
}

Value FunctionLowering::emptyF32() {
  Value m =
      b.create<memref::AllocaOp>(loc, MemRefType::get({0}, b.getF32Type()));
  return b.create<memref::CastOp>(loc, memF32(), m);
}

SmallVector<Value> FunctionLowering::staticDims(RankedTensorType row) {
  SmallVector<Value> dims;
  for (int64_t d : row.getShape())
    dims.push_back(ShapedType::isDynamic(d) ? Value() : cIndex(d));
  return dims;
}

Value FunctionLowering::load(OpBuilder &nb, const Tensor &t, Value r, Value j,
                             bool broadcast) {
  Location l = loc;
  Value base = t.batched ? nb.create<arith::MulIOp>(l, r, t.rowSize).getResult()
                         : nb.create<arith::ConstantIndexOp>(l, 0).getResult();
  Value index =
      broadcast ? base : nb.create<arith::AddIOp>(l, base, j).getResult();
  return nb.create<memref::LoadOp>(l, t.buf, index);
}

void FunctionLowering::elementwise(
    const Tensor &out, ArrayRef<const Tensor *> ins,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  // An operand whose row has one element while the result's has more is a
  // broadcast scalar.
  SmallVector<bool> scalar;
  for (const Tensor *t : ins) {
    bool one = true;
    for (Value d : t->dims) {
      auto c = d.getDefiningOp<arith::ConstantIndexOp>();
      one &= c && c.value() == 1;
    }
    scalar.push_back(one);
  }
  bool outOne = true;
  for (Value d : out.dims) {
    auto c = d.getDefiningOp<arith::ConstantIndexOp>();
    outOne &= c && c.value() == 1;
  }
  Value zero = cIndex(0), one = cIndex(1);
  b.create<scf::ForOp>(
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
}

void FunctionLowering::sumLoop(
    Value outer, Value inner,
    function_ref<Value(OpBuilder &, Value, Value)> term,
    function_ref<void(OpBuilder &, Value, Value)> store) {
  Value zero = cIndex(0), one = cIndex(1);
  b.create<scf::ForOp>(
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
}

Tensor FunctionLowering::broadcastRows(const Tensor &t, Value rows) {
  Tensor out = alloc(rows, true, t.dims);
  elementwise(out, {&t},
              [](OpBuilder &, Location, ValueRange v) { return v[0]; });
  return out;
}

int64_t FunctionLowering::splitOf(Value mask) {
  auto input = mask.getDefiningOp<InputOp>();
  if (!input)
    return -1;
  StringRef name = input.getName();
  if (name == "train_mask")
    return 0;
  if (name == "val_mask")
    return 1;
  if (name == "test_mask")
    return 2;
  return -1;
}

//===----------------------------------------------------------------------===//
// Row ops
//===----------------------------------------------------------------------===//

LogicalResult FunctionLowering::lowerRow(Operation *op, Value rows) {
  auto rowType = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  // Copies: inserting into `values` may move its entries.
  auto get = [&](Value v) { return values.lookup(v); };
  bool batched = llvm::any_of(
      op->getOperands(), [&](Value v) { return values.lookup(v).batched; });
  Value outRows = batched ? rows : cIndex(1);
  auto outFrom = [&](SmallVector<Value> dims) {
    return alloc(outRows, batched, std::move(dims));
  };

  if (auto c = dyn_cast<ConstantOp>(op)) {
    RankedTensorType t = c.getType();
    Tensor out = alloc(cIndex(1), false, staticDims(t));
    int64_t i = 0;
    for (APFloat v : c.getValue().getValues<APFloat>())
      b.create<memref::StoreOp>(loc, cF32(v.convertToDouble()), out.buf,
                                ValueRange{cIndex(i++)});
    bind(c.getResult(), out);
    return success();
  }

  if (isElementwise(op))
    return lowerFused({op}, rows);

  if (auto linear = dyn_cast<LinearOp>(op)) {
    Tensor x = get(linear.getInput());
    Tensor w = get(linear.getWeight());
    unsigned k = rowType(linear.getInput()).getRank();
    SmallVector<Value> outDims(w.dims.begin() + k, w.dims.end());
    Tensor out = alloc(x.rows, x.batched, outDims);
    call("gnnrtGemm", {},
         {ctx, cI64(0), cI64(0), toI64(x.rows), toI64(out.rowSize),
          toI64(x.rowSize), cF32(1.0), x.buf, w.buf, cF32(0.0), out.buf});
    bind(linear.getResult(), out);
    return success();
  }
  if (auto lt = dyn_cast<LinearTransposeOp>(op)) {
    Tensor g = get(lt.getInput());
    Tensor w = get(lt.getWeight());
    unsigned k = rowType(lt.getInput()).getRank();
    SmallVector<Value> outDims(w.dims.begin(), w.dims.end() - k);
    Tensor out = alloc(g.rows, g.batched, outDims);
    call("gnnrtGemm", {},
         {ctx, cI64(0), cI64(1), toI64(g.rows), toI64(out.rowSize),
          toI64(g.rowSize), cF32(1.0), g.buf, w.buf, cF32(0.0), out.buf});
    bind(lt.getResult(), out);
    return success();
  }
  if (auto rs = dyn_cast<ReduceSumOp>(op)) {
    Tensor x = get(rs.getInput());
    Tensor out = alloc(x.rows, x.batched, staticDims(rs.getType()));
    sumLoop(
        x.rows, x.rowSize,
        [&](OpBuilder &ib, Value r, Value j) {
          return load(ib, x, r, j, false);
        },
        [&](OpBuilder &ob, Value r, Value sum) {
          ob.create<memref::StoreOp>(loc, sum, out.buf, r);
        });
    bind(rs.getResult(), out);
    return success();
  }
  if (auto tl = dyn_cast<TypedLinearOp>(op)) {
    Tensor x = get(tl.getInput()), t = get(tl.getType()),
           w = get(tl.getWeight());
    unsigned k = rowType(tl.getInput()).getRank();
    SmallVector<Value> outDims(w.dims.begin() + 1 + k, w.dims.end());
    Tensor out = alloc(x.rows, true, outDims);
    call("gnnrtTypedGemm", {},
         {ctx, toI64(x.rows), toI64(x.rowSize), toI64(out.rowSize),
          toI64(w.dims[0]), x.buf, t.buf, w.buf, out.buf});
    bind(tl.getResult(), out);
    return success();
  }
  if (auto tt = dyn_cast<TypedLinearTransposeOp>(op)) {
    Tensor g = get(tt.getInput()), t = get(tt.getType()),
           w = get(tt.getWeight());
    unsigned r = rowType(tt.getResult()).getRank();
    SmallVector<Value> outDims(w.dims.begin() + 1, w.dims.begin() + 1 + r);
    Tensor out = alloc(g.rows, true, outDims);
    call("gnnrtTypedGemmTranspose", {},
         {ctx, toI64(g.rows), toI64(out.rowSize), toI64(g.rowSize),
          toI64(w.dims[0]), g.buf, t.buf, w.buf, out.buf});
    bind(tt.getResult(), out);
    return success();
  }
  if (auto rd = dyn_cast<RowDotOp>(op)) {
    Tensor a = get(rd.getLhs()), c = get(rd.getRhs());
    bool vector = rowType(rd.getLhs()).getRank() == 1;
    Value groups = vector ? cIndex(1) : a.dims[0];
    Value width = a.dims.back();
    Tensor out = outFrom({groups});
    Value zero = cIndex(0), one = cIndex(1);
    b.create<scf::ForOp>(
        loc, zero, out.rows, one, ValueRange{},
        [&](OpBuilder &ob, Location l, Value r, ValueRange) {
          ob.create<scf::ForOp>(
              l, zero, groups, one, ValueRange{},
              [&](OpBuilder &gb, Location gl, Value h, ValueRange) {
                Value init = gb.create<arith::ConstantFloatOp>(
                    gl, APFloat(0.0f), gb.getF32Type());
                Value hk = gb.create<arith::MulIOp>(gl, h, width);
                auto inner = gb.create<scf::ForOp>(
                    gl, zero, width, one, ValueRange{init},
                    [&](OpBuilder &ib, Location il, Value k, ValueRange acc) {
                      Value j = ib.create<arith::AddIOp>(il, hk, k);
                      Value p =
                          ib.create<arith::MulFOp>(il, load(ib, a, r, j, false),
                                                   load(ib, c, r, j, false));
                      ib.create<scf::YieldOp>(
                          il,
                          ib.create<arith::AddFOp>(il, acc[0], p).getResult());
                    });
                Value base = gb.create<arith::MulIOp>(gl, r, groups);
                gb.create<memref::StoreOp>(
                    gl, inner.getResult(0), out.buf,
                    ValueRange{gb.create<arith::AddIOp>(gl, base, h)});
                gb.create<scf::YieldOp>(gl);
              });
          ob.create<scf::YieldOp>(l);
        });
    bind(rd.getResult(), out);
    return success();
  }
  if (auto bh = dyn_cast<BroadcastHeadsOp>(op)) {
    Tensor x = get(bh.getInput());
    RankedTensorType rt = bh.getType();
    if (rt.isDynamicDim(1))
      return op->emitOpError() << "needs a static head width to be lowered";
    Value width = cIndex(rt.getDimSize(1));
    Tensor out = outFrom({x.dims[0], width});
    Tensor spread = x; // element j of the result reads input element j / width
    Value zero = cIndex(0), one = cIndex(1);
    b.create<scf::ForOp>(
        loc, zero, out.rows, one, ValueRange{},
        [&](OpBuilder &ob, Location l, Value r, ValueRange) {
          ob.create<scf::ForOp>(
              l, zero, out.rowSize, one, ValueRange{},
              [&](OpBuilder &ib, Location il, Value j, ValueRange) {
                Value h = ib.create<arith::DivUIOp>(il, j, width);
                Value v = load(ib, spread, r, h, false);
                Value base = ib.create<arith::MulIOp>(il, r, out.rowSize);
                ib.create<memref::StoreOp>(
                    il, v, out.buf,
                    ValueRange{ib.create<arith::AddIOp>(il, base, j)});
                ib.create<scf::YieldOp>(il);
              });
          ob.create<scf::YieldOp>(l);
        });
    bind(bh.getResult(), out);
    return success();
  }
  if (isa<ConcatOp, SliceOp>(op)) {
    // Copy row pieces along the last dimension: concat writes operand k at
    // its offset, slice reads from its offset.
    bool isConcat = isa<ConcatOp>(op);
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<Value> outDims;
    Tensor first = get(op->getOperand(0));
    outDims.assign(first.dims.begin(), first.dims.end() - 1);
    if (isConcat) {
      Value last = cIndex(0);
      for (Value in : op->getOperands())
        last = add(last, get(in).dims.back());
      outDims.push_back(last);
    } else {
      if (resultType.isDynamicDim(resultType.getRank() - 1))
        return op->emitOpError() << "needs a static slice width to be lowered";
      outDims.push_back(cIndex(resultType.getShape().back()));
    }
    Tensor out = outFrom(outDims);
    Value outer = product(ArrayRef<Value>(outDims).drop_back());
    Value outLast = outDims.back();
    int64_t sliceOffset = isConcat ? 0 : cast<SliceOp>(op).getOffset();
    Value offset = cIndex(sliceOffset);
    for (Value in : op->getOperands()) {
      Tensor t = get(in);
      Value inLast = t.dims.back();
      Value copyLast = isConcat ? inLast : outLast;
      Value zero = cIndex(0), one = cIndex(1);
      Value off = offset;
      b.create<scf::ForOp>(
          loc, zero, out.rows, one, ValueRange{},
          [&](OpBuilder &ob, Location l, Value r, ValueRange) {
            ob.create<scf::ForOp>(
                l, zero, outer, one, ValueRange{},
                [&](OpBuilder &mb, Location ml, Value o, ValueRange) {
                  mb.create<scf::ForOp>(
                      ml, zero, copyLast, one, ValueRange{},
                      [&](OpBuilder &ib, Location il, Value j, ValueRange) {
                        Value inJ = ib.create<arith::MulIOp>(il, o, inLast);
                        Value outJ = ib.create<arith::MulIOp>(il, o, outLast);
                        if (isConcat) {
                          inJ = ib.create<arith::AddIOp>(il, inJ, j);
                          outJ = ib.create<arith::AddIOp>(
                              il, outJ, ib.create<arith::AddIOp>(il, off, j));
                        } else {
                          inJ = ib.create<arith::AddIOp>(
                              il, inJ, ib.create<arith::AddIOp>(il, off, j));
                          outJ = ib.create<arith::AddIOp>(il, outJ, j);
                        }
                        Value v = load(ib, t, r, inJ, false);
                        Value base =
                            ib.create<arith::MulIOp>(il, r, out.rowSize);
                        ib.create<memref::StoreOp>(
                            il, v, out.buf,
                            ValueRange{
                                ib.create<arith::AddIOp>(il, base, outJ)});
                        ib.create<scf::YieldOp>(il);
                      });
                  mb.create<scf::YieldOp>(ml);
                });
            ob.create<scf::YieldOp>(l);
          });
      if (isConcat)
        offset = add(offset, inLast);
      else
        break;
    }
    bind(op->getResult(0), out);
    return success();
  }
  if (auto d = dyn_cast<DropoutOp>(op)) {
    Tensor x = get(d.getInput());
    Tensor out = alloc(x.rows, x.batched, x.dims);
    Value rate =
        b.create<arith::ConstantFloatOp>(loc, d.getRate(), b.getF64Type());
    call("gnnrtDropout", {}, {ctx, cI64(dropoutId(d)), rate, x.buf, out.buf});
    bind(d.getResult(), out);
    return success();
  }
  return op->emitOpError()
         << "is not lowered to the runtime yet (convert-gnn-to-runtime handles "
            "the ops of GCN and GraphSAGE-mean)";
}

//===----------------------------------------------------------------------===//
// Stages and whole-graph ops
//===----------------------------------------------------------------------===//

LogicalResult FunctionLowering::lowerFused(ArrayRef<Operation *> group,
                                           Value rows) {
  llvm::SmallPtrSet<Operation *, 8> inGroup(group.begin(), group.end());
  auto resultType =
      cast<RankedTensorType>(group.front()->getResult(0).getType());
  // The group's row dimensions, from a first-op operand of the result shape.
  SmallVector<Value> dims;
  bool batched = false;
  for (Value v : group.front()->getOperands()) {
    Tensor t = values.lookup(v);
    batched |= t.batched;
    if (dims.empty() &&
        cast<RankedTensorType>(v.getType()).getShape() == resultType.getShape())
      dims = t.dims;
  }
  if (dims.empty() && spreadsHeads(group.front())) {
    auto bh = cast<BroadcastHeadsOp>(group.front());
    dims = {values.lookup(bh.getInput()).dims[0],
            cIndex(bh.getType().getDimSize(1))};
  }
  for (Operation *op : group.drop_front())
    for (Value v : op->getOperands())
      if (!inGroup.contains(v.getDefiningOp()))
        batched |= values.lookup(v).batched;
  Value outRows = batched ? rows : cIndex(1);
  Value rowSize = product(dims);
  bool scalarShape =
      resultType.getNumElements() == 1 && resultType.hasStaticShape();

  // External operands, loaded per element (scalar rows broadcast).
  // An operand of a broadcast_heads is read at the element's head (its
  // other readers in the run, if any, are scalar rows: broadcast).
  struct External {
    Value value;
    bool broadcast;
    int64_t spread; // > 0: the head width of a broadcast_heads operand
  };
  SmallVector<External> externals;
  for (Operation *op : group)
    for (Value v : op->getOperands())
      if (!inGroup.contains(v.getDefiningOp()) &&
          llvm::none_of(externals,
                        [&](const External &e) { return e.value == v; })) {
        auto t = cast<RankedTensorType>(v.getType());
        bool scalar = t.hasStaticShape() && t.getNumElements() == 1;
        int64_t spread = 0;
        if (spreadsHeads(op) && !scalar)
          spread = cast<BroadcastHeadsOp>(op).getType().getDimSize(1);
        externals.push_back({v, scalar && !scalarShape, spread});
      }
  SmallVector<Tensor> externalTensors;
  for (const External &e : externals)
    externalTensors.push_back(values.lookup(e.value));

  // Results needed after the group get buffers, except those only summed
  // over rows after the stage: each chunk of GNNRT_PARALLEL_CHUNK rows (one
  // gnnrtParallelFor call) sums its rows into a partial row, and the stage
  // result becomes the partials (rows: chunks), which sum_rows adds up.
  // A stored result may take over the buffer of an operand nothing reads
  // after the run: each element is loaded before it is stored at the same
  // index.
  DenseMap<Value, Tensor> stored, summed;
  DenseMap<Value, int64_t> inPlace; // result -> the external it overwrites
  llvm::SmallPtrSet<Value, 4> reused;
  const int64_t first = opIndex.lookup(group.front());
  const SizeKey outSize = sizeKey(rowSize);
  auto canOverwrite = [&](const External &e, const Tensor &t) {
    SizeKey size = sizeKey(t.rowSize);
    return !e.broadcast && e.spread == 0 && t.batched && t.rows == outRows &&
           slotOf.count(t.buf) && !reused.contains(t.buf) &&
           size.factor == outSize.factor && size.dynamic == outSize.dynamic &&
           llvm::count_if(externalTensors,
                          [&](const Tensor &o) { return o.buf == t.buf; }) ==
               1 &&
           diesIn(t.buf, inGroup, first);
  };
  for (Operation *op : group) {
    Value r = op->getResult(0);
    if (llvm::all_of(r.getUsers(),
                     [&](Operation *u) { return inGroup.contains(u); }))
      continue;
    if (batched && onlySummed(r, inGroup, rows)) {
      Value chunks = b.create<arith::DivUIOp>(
          loc, add(rows, cIndex(GNNRT_PARALLEL_CHUNK - 1)),
          cIndex(GNNRT_PARALLEL_CHUNK));
      summed[r] = alloc(chunks, true, dims);
      continue;
    }
    Tensor out;
    for (auto [k, e, t] : llvm::enumerate(externals, externalTensors)) {
      if (!canOverwrite(e, t))
        continue;
      out = make(t.buf, outRows, true, dims);
      reused.insert(t.buf);
      inPlace[r] = k;
      break;
    }
    stored[r] = out.buf ? out : alloc(outRows, batched, dims);
  }
  // Each dropout's key, threshold and scale bits for this step (the same mask
  // as the runtime's gnnrtDropout, which the backward may call instead).
  SmallVector<DropoutOp> dropouts;
  SmallVector<Value> dropoutParams; // 3 per dropout, i64
  for (Operation *op : group)
    if (auto d = dyn_cast<DropoutOp>(op)) {
      dropouts.push_back(d);
      Value rate =
          b.create<arith::ConstantFloatOp>(loc, d.getRate(), b.getF64Type());
      for (int64_t which = 0; which < 3; ++which)
        dropoutParams.push_back(call("gnnrtDropoutParam", b.getI64Type(),
                                     {ctx, cI64(dropoutId(d)), rate,
                                      cI64(which)},
                                     false));
    }

  // The loop nest over rows [begin, end): in this function for one row
  // (parameters), else in a kernel that gnnrtParallelFor runs on the
  // threads, its buffers and row sizes passed through the context.
  SmallVector<Value> storedValues(llvm::make_first_range(stored));
  SmallVector<Value> summedValues(llvm::make_first_range(summed));
  // The head width of the run's broadcast_heads (all of its row shape).
  int64_t headWidth = 0;
  for (const External &e : externals)
    headWidth = std::max(headWidth, e.spread);
  auto emitRows = [&](Value begin, Value end, ArrayRef<Tensor> ins,
                      const DenseMap<Value, Value> &outBufs,
                      const DenseMap<Value, Value> &sumBufs, Value size,
                      ArrayRef<Value> maskParams) {
    Value one = cIndex(1), zero = cIndex(0);
    b.create<scf::ForOp>(
        loc, begin, end, one, ValueRange{},
        [&](OpBuilder &ob, Location l, Value r, ValueRange) {
          // The row's partial sums: row r / chunk, restarted at its first row.
          Value chunk, partial, restart;
          if (!sumBufs.empty()) {
            Value rows = ob.create<arith::ConstantIndexOp>(l, GNNRT_PARALLEL_CHUNK);
            chunk = ob.create<arith::DivUIOp>(l, r, rows);
            partial = ob.create<arith::MulIOp>(l, chunk, size);
            restart = ob.create<arith::CmpIOp>(
                l, arith::CmpIPredicate::eq,
                ob.create<arith::RemUIOp>(l, r, rows), zero);
          }
          // The row's elements j; with per-head operands, as heads h and
          // elements k of a head (j = h * width + k), so that the head's
          // values are loop-invariant and the inner loop's addresses affine
          // (vectorisable; j / width would not be).
          auto element = [&](OpBuilder &ib, Location il, Value j, Value head) {
            DenseMap<Value, Value> element;
            for (auto [e, t] : llvm::zip(externals, ins)) {
              Value at = e.spread > 0 ? head : j;
              element[e.value] = load(ib, t, r, at, e.broadcast);
            }
            Value out = ib.create<arith::AddIOp>(
                il, ib.create<arith::MulIOp>(il, r, size), j);
            for (Operation *op : group) {
              SmallVector<Value> args;
              for (Value v : op->getOperands())
                args.push_back(element.lookup(v));
              Value result;
              if (isa<BroadcastHeadsOp>(op)) {
                result = args[0]; // loaded at the head
              } else if (auto d = dyn_cast<DropoutOp>(op)) {
                unsigned k = llvm::find(dropouts, d) - dropouts.begin();
                result = emitDropoutElement(ib, args[0], out,
                                            maskParams.slice(3 * k, 3));
              } else {
                result = emitElement(ib, il, op, args);
              }
              element[op->getResult(0)] = result;
              if (Value buf = outBufs.lookup(op->getResult(0)))
                ib.create<memref::StoreOp>(il, result, buf, out);
              if (Value buf = sumBufs.lookup(op->getResult(0))) {
                Value at = ib.create<arith::AddIOp>(il, partial, j);
                Value old = ib.create<memref::LoadOp>(il, buf, at);
                Value acc = ib.create<arith::AddFOp>(il, old, result);
                ib.create<memref::StoreOp>(
                    il, ib.create<arith::SelectOp>(il, restart, result, acc),
                    buf, at);
              }
            }
          };
          if (headWidth == 0) {
            ob.create<scf::ForOp>(
                l, zero, size, one, ValueRange{},
                [&](OpBuilder &ib, Location il, Value j, ValueRange) {
                  element(ib, il, j, Value());
                  ib.create<scf::YieldOp>(il);
                });
          } else {
            Value width = ob.create<arith::ConstantIndexOp>(l, headWidth);
            Value heads = ob.create<arith::DivUIOp>(l, size, width);
            ob.create<scf::ForOp>(
                l, zero, heads, one, ValueRange{},
                [&](OpBuilder &hb, Location hl, Value h, ValueRange) {
                  Value base = hb.create<arith::MulIOp>(hl, h, width);
                  hb.create<scf::ForOp>(
                      hl, zero, width, one, ValueRange{},
                      [&](OpBuilder &ib, Location il, Value k, ValueRange) {
                        element(ib, il, ib.create<arith::AddIOp>(il, base, k),
                                h);
                        ib.create<scf::YieldOp>(il);
                      });
                  hb.create<scf::YieldOp>(hl);
                });
          }
          ob.create<scf::YieldOp>(l);
        });
  };
  DenseMap<Value, Value> outBufs, sumBufs;
  for (auto &[v, t] : stored)
    outBufs[v] = t.buf;
  if (!batched) {
    emitRows(cIndex(0), outRows, externalTensors, outBufs, sumBufs, rowSize,
             dropoutParams);
  } else {
    int64_t k = 0;
    for (const Tensor &t : externalTensors) {
      call("gnnrtKernelArg", {}, {ctx, cI64(k), t.buf});
      call("gnnrtKernelInt", {}, {ctx, cI64(k), toI64(t.rowSize)}, false);
      ++k;
    }
    for (Value v : storedValues)
      if (!inPlace.count(v))
        call("gnnrtKernelArg", {}, {ctx, cI64(k++), stored[v].buf});
    for (Value v : summedValues)
      call("gnnrtKernelArg", {}, {ctx, cI64(k++), summed[v].buf});
    call("gnnrtKernelInt", {}, {ctx, cI64(k), toI64(rowSize)}, false);
    for (auto [i, p] : llvm::enumerate(dropoutParams))
      call("gnnrtKernelInt", {}, {ctx, cI64(k + 1 + i), p}, false);
    func::FuncOp kernel;
    {
      OpBuilder::InsertionGuard guard(b);
      kernel = newKernel();
      Block *entry = &kernel.getBody().front();
      b.setInsertionPointToStart(entry);
      Value kctx = entry->getArgument(0);
      auto toIndex = [&](Value v) {
        return b.create<arith::IndexCastOp>(loc, b.getIndexType(), v)
            .getResult();
      };
      SmallVector<Tensor> ins;
      int64_t a = 0;
      for (const Tensor &t : externalTensors) {
        Tensor proxy = t;
        proxy.buf = call("gnnrtKernelArgGet", memF32(), {kctx, cI64(a)});
        proxy.rowSize = toIndex(
            call("gnnrtKernelIntGet", b.getI64Type(), {kctx, cI64(a)}, false));
        ins.push_back(proxy);
        ++a;
      }
      DenseMap<Value, Value> kernelOut, kernelSum;
      // An in-place result is stored through its operand's memref (the
      // operand then read with the run's row size): one base pointer and one
      // index, so that the loop still vectorises, without an alias check
      // (which overlapping buffers would fail).
      for (Value v : storedValues)
        kernelOut[v] =
            inPlace.count(v)
                ? ins[inPlace.lookup(v)].buf
                : call("gnnrtKernelArgGet", memF32(), {kctx, cI64(a++)});
      for (Value v : summedValues)
        kernelSum[v] = call("gnnrtKernelArgGet", memF32(), {kctx, cI64(a++)});
      Value size = toIndex(
          call("gnnrtKernelIntGet", b.getI64Type(), {kctx, cI64(a)}, false));
      for (auto [v, k] : inPlace)
        ins[k].rowSize = size;
      SmallVector<Value> maskParams;
      for (size_t i = 0; i < dropoutParams.size(); ++i)
        maskParams.push_back(call("gnnrtKernelIntGet", b.getI64Type(),
                                  {kctx, cI64(a + 1 + i)}, false));
      emitRows(toIndex(entry->getArgument(1)), toIndex(entry->getArgument(2)),
               ins, kernelOut, kernelSum, size, maskParams);
      b.create<func::ReturnOp>(loc);
    }
    Value fn = b.create<func::ConstantOp>(loc, kernel.getFunctionType(),
                                          SymbolRefAttr::get(kernel));
    call("gnnrtParallelFor", {}, {ctx, fn, toI64(outRows)}, false);
  }
  for (auto &[v, t] : stored)
    bind(v, t);
  for (auto &[v, t] : summed)
    bind(v, t);
  return success();
}

bool FunctionLowering::onlySummed(
    Value r, const llvm::SmallPtrSetImpl<Operation *> &group, Value rows) {
  if (!stage || rows != numV)
    return false;
  bool any = false;
  for (OpOperand &use : r.getUses()) {
    if (group.contains(use.getOwner()))
      continue;
    auto yield = dyn_cast<YieldOp>(use.getOwner());
    if (!yield || yield->getParentOp() != stage)
      return false;
    Value result = stage->getResult(use.getOperandNumber());
    if (result.use_empty() ||
        !llvm::all_of(result.getUsers(),
                      [](Operation *u) { return isa<SumRowsOp>(u); }))
      return false;
    any = true;
  }
  return any;
}

bool FunctionLowering::diesIn(Value buf,
                              const llvm::SmallPtrSetImpl<Operation *> &group,
                              int64_t first) {
  // A buffer no gnn value was bound to (an edge cache) is not a run's.
  if (!stage || boundTo.lookup(buf).empty())
    return false;
  const int64_t stageIndex = opIndex.lookup(stage);
  for (Value v : boundTo.lookup(buf)) {
    // Later readers, including the ones lastUse adds (an SpMM's input).
    if (lastUse.lookup(v) > stageIndex)
      return false;
    for (Operation *u : v.getUsers()) {
      if (group.contains(u) || u == stage) // the stage reads it by its block
        continue;                          // arguments, checked themselves
      if (isa<YieldOp>(u) && u->getParentOp() == stage)
        return false; // the stage's result
      if (indexOf(u) >= first)
        return false; // read after the run starts, outside it
    }
  }
  return true;
}

LogicalResult FunctionLowering::lowerStage(Operation *op, Region &body,
                                           ValueRange inputs,
                                           ArrayRef<Value> params, bool edges) {
  Value rows = edges ? numE : numV;
  Block &block = body.front();
  llvm::SaveAndRestore<Operation *> inStage(stage, op);
  for (auto [arg, in] :
       llvm::zip(block.getArguments().take_front(inputs.size()), inputs)) {
    Tensor t = values.lookup(in);
    bind(arg, t);
  }
  for (auto [arg, p] :
       llvm::zip(block.getArguments().drop_front(inputs.size()), params)) {
    Tensor t = values.lookup(p);
    bind(arg, t);
  }
  // Whether a body value depends on the stage's rows (not only parameters).
  std::function<bool(Value)> readsRows = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() == &block && arg.getArgNumber() < inputs.size();
    Operation *def = v.getDefiningOp();
    return def && llvm::any_of(def->getOperands(), readsRows);
  };
  // Runs of element-wise ops with one row shape become one loop nest.
  SmallVector<Operation *> group;
  auto flush = [&]() -> LogicalResult {
    if (group.empty())
      return success();
    LogicalResult r = lowerFused(group, rows);
    group.clear();
    return r;
  };
  for (Operation &inner : block.without_terminator()) {
    // Constants depend on nothing: materialise them without ending a run.
    if (isa<ConstantOp>(inner)) {
      if (failed(lowerRow(&inner, rows)))
        return failure();
      continue;
    }
    // Ops in a pending run are lowered together: expire nothing before them.
    // Dropouts of per-row values join runs too: their mask is computed
    // inline per element (one of a parameter row keeps the runtime call: its
    // mask is one row's, shared by every vertex).
    if (isElementwise(&inner) ||
        (isa<DropoutOp>(inner) && readsRows(inner.getOperand(0))) ||
        spreadsHeads(&inner)) {
      auto shape =
          cast<RankedTensorType>(inner.getResult(0).getType()).getShape();
      if (!group.empty() &&
          cast<RankedTensorType>(group.front()->getResult(0).getType())
                  .getShape() != shape &&
          failed(flush()))
        return failure();
      group.push_back(&inner);
      continue;
    }
    // An op that reads nothing of the pending run (GCN's backward: the
    // dropout of the incoming gradient between `lin + b` and `step`) is
    // lowered first and the run goes on past it, so that the run stays one
    // loop nest and its intermediate rows are never stored. Nothing the run
    // still reads may be released meanwhile.
    bool readsRun = llvm::any_of(inner.getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && llvm::is_contained(group, def);
    });
    if (readsRun && failed(flush()))
      return failure();
    int64_t cap = group.empty() ? std::numeric_limits<int64_t>::max()
                                : opIndex.lookup(group.front()) - 1;
    expire(std::min(opIndex.lookup(&inner) - 1, cap));
    if (failed(lowerRow(&inner, rows)))
      return failure();
    expire(std::min(opIndex.lookup(&inner), cap));
  }
  if (failed(flush()))
    return failure();
  auto yield = cast<YieldOp>(block.getTerminator());
  for (auto [y, r] : llvm::zip(yield.getValues(), op->getResults())) {
    Tensor t = values.lookup(y);
    Tensor result = t.batched ? t : broadcastRows(t, rows);
    bind(r, result);
  }
  return success();
}

void FunctionLowering::planAggregations(Block &body) {
  auto isScalarEdgeRow = [](Value v) {
    auto t = dyn_cast<EdgeTensorType>(v.getType());
    if (!t || !t.getElementType().isF32())
      return false;
    ArrayRef<int64_t> shape = t.getRowShape();
    return shape.empty() || (shape.size() == 1 && shape[0] == 1);
  };
  body.walk([&](GatherOp g) {
    if (g.getAcc() != Accumulator::Sum && g.getAcc() != Accumulator::Mean)
      return;
    Side want = g.getSide() == Side::Dst ? Side::Src : Side::Dst;
    auto scatterOf = [&](Value v) -> ScatterOp {
      auto sc = v.getDefiningOp<ScatterOp>();
      return sc && sc.getSide() == want ? sc : ScatterOp();
    };
    Value in = g.getInput();
    if (ScatterOp sc = scatterOf(in)) {
      aggregations[g] = {sc.getInput(), Value()};
      return;
    }
    auto ae = in.getDefiningOp<ApplyEdgeOp>();
    if (!ae || ae.getNumResults() != 1 || !in.hasOneUse() ||
        !ae.getParams().empty())
      return;
    Block &b = ae.getBody().front();
    auto yield = cast<YieldOp>(b.getTerminator());
    Value y = yield.getValues()[0];
    auto inputOf = [&](Value v) -> Value {
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg || arg.getOwner() != &b)
        return Value();
      return ae.getInputs()[arg.getArgNumber()];
    };
    if (&b.front() == yield.getOperation()) { // pass-through
      if (ScatterOp sc = scatterOf(inputOf(y))) {
        aggregations[g] = {sc.getInput(), Value()};
        skipped.insert(ae);
      }
      return;
    }
    auto mul = y.getDefiningOp<MulOp>();
    if (!mul || &b.front() != mul.getOperation() ||
        mul->getNextNode() != yield.getOperation())
      return;
    for (auto [row, scale] : {std::pair{mul.getLhs(), mul.getRhs()},
                              std::pair{mul.getRhs(), mul.getLhs()}}) {
      ScatterOp sc = scatterOf(inputOf(row));
      Value weights = inputOf(scale);
      if (sc && weights && isScalarEdgeRow(weights) &&
          cast<RankedTensorType>(row.getType()) == mul.getType()) {
        aggregations[g] = {sc.getInput(), weights};
        skipped.insert(ae);
        return;
      }
    }
  });
  // A scatter whose every use is folded into an aggregation is not needed.
  body.walk([&](ScatterOp sc) {
    bool allFolded = llvm::all_of(sc->getUsers(), [&](Operation *user) {
      if (skipped.contains(user))
        return true;
      auto it = aggregations.find(user);
      return it != aggregations.end() && !it->second.weights &&
             user->getOperand(1) == sc.getResult();
    });
    if (allFolded && !sc->use_empty())
      skipped.insert(sc);
  });
}

LogicalResult FunctionLowering::lowerTop(Operation *op) {
  if (isa<GraphOp>(op) || skipped.contains(op))
    return success();
  if (auto it = aggregations.find(op); it != aggregations.end()) {
    auto g = cast<GatherOp>(op);
    Tensor x = values.lookup(it->second.vertexInput);
    Value weights =
        it->second.weights ? values.lookup(it->second.weights).buf : emptyF32();
    Tensor out = alloc(numV, true, x.dims);
    call("gnnrtSpmm", {},
         {ctx, cI64(g.getSide() == Side::Src ? 0 : 1),
          cI64(g.getAcc() == Accumulator::Mean ? 1 : 0), weights, x.buf,
          out.buf, toI64(x.rowSize)});
    bind(g.getResult(), out);
    return success();
  }
  if (auto in = dyn_cast<InputOp>(op)) {
    StringRef name = in.getName();
    if (name == "features") {
      Value buf = call("gnnrtFeatures", memF32(), {ctx});
      bind(in.getResult(), make(buf, numV, true, {numF}));
      return success();
    }
    if (InputOp::isVertexInputName(name))
      return success(); // labels and masks are read by the runtime's loss
    auto type = cast<EdgeTensorType>(in.getType());
    auto it = llvm::find(edgeInputs, name.str());
    int64_t index = it - edgeInputs.begin();
    if (type.getElementType().isInteger(32)) {
      Value buf = call("gnnrtEdgeDataI32", memI32(), {ctx, cI64(index)});
      bind(in.getResult(), make(buf, numE, true, {}));
    } else {
      Value buf = call("gnnrtEdgeDataF32", memF32(), {ctx, cI64(index)});
      bind(in.getResult(),
           make(buf, numE, true, staticDims(type.getRowType())));
    }
    return success();
  }
  if (auto d = dyn_cast<DegreeOp>(op)) {
    Value buf = call("gnnrtDegree", memF32(),
                     {ctx, cI64(d.getDirection() == Direction::In ? 0 : 1)});
    bind(d.getResult(), make(buf, numV, true, {cIndex(1)}));
    return success();
  }
  if (auto s = dyn_cast<ScatterOp>(op)) {
    Tensor x = values.lookup(s.getInput());
    Tensor out = alloc(numE, true, x.dims);
    call("gnnrtScatter", {},
         {ctx, cI64(s.getSide() == Side::Src ? 0 : 1), x.buf, out.buf,
          toI64(x.rowSize)});
    bind(s.getResult(), out);
    return success();
  }
  if (auto g = dyn_cast<GatherOp>(op)) {
    Tensor x = values.lookup(g.getInput());
    Tensor out = alloc(numV, true, x.dims);
    call("gnnrtGather", {},
         {ctx, cI64(static_cast<int64_t>(g.getAcc())),
          cI64(g.getSide() == Side::Src ? 0 : 1), x.buf, out.buf, emptyI32(),
          toI64(x.rowSize)});
    bind(g.getResult(), out);
    return success();
  }
  if (auto fg = dyn_cast<FusedGatherOp>(op)) {
    LogicalResult r = lowerFusedGather(fg);
    releaseEdgeCaches(fg);
    return r;
  }
  if (auto s = dyn_cast<ApplyVertexOp>(op))
    return lowerStage(op, s.getBody(), s.getInputs(),
                      SmallVector<Value>(s.getParams()), false);
  if (auto s = dyn_cast<ApplyEdgeOp>(op))
    return lowerStage(op, s.getBody(), s.getInputs(),
                      SmallVector<Value>(s.getParams()), true);
  if (auto sr = dyn_cast<SumRowsOp>(op)) {
    Tensor x = values.lookup(sr.getInput());
    if (!x.batched) // one row standing for every vertex
      x = broadcastRows(x, x.rows);
    Tensor out = alloc(cIndex(1), false, x.dims);
    call("gnnrtSumRows", {},
         {ctx, toI64(x.rows), toI64(x.rowSize), x.buf, out.buf});
    bind(sr.getResult(), out);
    return success();
  }
  if (auto os = dyn_cast<OuterSumOp>(op)) {
    Tensor x = values.lookup(os.getInput());
    Tensor g = values.lookup(os.getGrad());
    SmallVector<Value> dims(x.dims);
    llvm::append_range(dims, g.dims);
    Tensor out = alloc(cIndex(1), false, dims);
    call("gnnrtGemm", {},
         {ctx, cI64(1), cI64(0), toI64(x.rowSize), toI64(g.rowSize),
          toI64(x.rows), cF32(1.0), x.buf, g.buf, cF32(0.0), out.buf});
    bind(os.getResult(), out);
    return success();
  }
  if (auto ts = dyn_cast<TypedOuterSumOp>(op)) {
    Tensor x = values.lookup(ts.getInput()), t = values.lookup(ts.getType()),
           g = values.lookup(ts.getGrad());
    int64_t types = ts.getResult().getType().getDimSize(0);
    SmallVector<Value> dims{cIndex(types)};
    llvm::append_range(dims, x.dims);
    llvm::append_range(dims, g.dims);
    Tensor out = alloc(cIndex(1), false, dims);
    call("gnnrtTypedOuterSum", {},
         {ctx, toI64(x.rows), toI64(x.rowSize), toI64(g.rowSize), cI64(types),
          x.buf, t.buf, g.buf, out.buf});
    bind(ts.getResult(), out);
    return success();
  }
  if (auto gg = dyn_cast<GatherGradOp>(op)) {
    // Recompute the gather's choice, then route the gradient through it.
    Tensor x = values.lookup(gg.getInput()), g = values.lookup(gg.getGrad());
    Value side = cI64(gg.getSide() == Side::Src ? 0 : 1);
    Tensor tmp = alloc(numV, true, x.dims);
    Value arg = bufferI32(mul(numV, x.rowSize));
    call("gnnrtGather", {},
         {ctx, cI64(static_cast<int64_t>(gg.getAcc())), side, x.buf, tmp.buf,
          arg, toI64(x.rowSize)});
    release(slotOf.lookup(tmp.buf));
    Tensor out = alloc(numE, true, x.dims);
    call("gnnrtGatherArgBackward", {},
         {ctx, side, g.buf, arg, out.buf, toI64(x.rowSize)});
    release(slotOf.lookup(arg));
    bind(gg.getResult(), out);
    return success();
  }
  if (auto ta = dyn_cast<TensorAddOp>(op)) {
    Tensor x = values.lookup(ta.getLhs()), y = values.lookup(ta.getRhs());
    Tensor out = alloc(cIndex(1), false, x.dims);
    elementwise(out, {&x, &y}, [](OpBuilder &ob, Location l, ValueRange v) {
      return ob.create<arith::AddFOp>(l, v[0], v[1]).getResult();
    });
    bind(ta.getResult(), out);
    return success();
  }
  if (auto ce = dyn_cast<SoftmaxCrossEntropyOp>(op)) {
    Tensor logits = values.lookup(ce.getLogits());
    int64_t split = splitOf(ce.getMask());
    if (split < 0 || !ce.getLabels().getDefiningOp<InputOp>())
      return op->emitOpError()
             << "needs the dataset's labels and a split mask "
                "(train_mask, val_mask, test_mask) as operands";
    // The training step's gradient of the same loss comes from the same
    // call (one pass over the logits instead of two).
    SoftmaxCrossEntropyGradOp gradOp;
    for (Operation *user : ce.getLogits().getUsers())
      if (auto g = dyn_cast<SoftmaxCrossEntropyGradOp>(user))
        if (g->getBlock() == op->getBlock() &&
            g.getLabels() == ce.getLabels() && g.getMask() == ce.getMask())
          gradOp = g;
    Value gradBuf = emptyF32();
    if (gradOp) {
      Tensor out = alloc(numV, true, logits.dims);
      gradBuf = out.buf;
      lossGrads[gradOp] = out;
    }
    loss = call("gnnrtSoftmaxCrossEntropy", b.getF32Type(),
                {ctx, logits.buf, gradBuf, toI64(logits.rowSize), cI64(split)});
    return success();
  }
  if (auto ceg = dyn_cast<SoftmaxCrossEntropyGradOp>(op)) {
    if (auto it = lossGrads.find(ceg); it != lossGrads.end()) {
      bind(ceg.getResult(), it->second);
      return success();
    }
    Tensor logits = values.lookup(ceg.getLogits());
    int64_t split = splitOf(ceg.getMask());
    if (split < 0)
      return op->emitOpError() << "needs a split mask (train_mask, val_mask, "
                                  "test_mask) as operand";
    Tensor out = alloc(numV, true, logits.dims);
    call("gnnrtSoftmaxCrossEntropy", b.getF32Type(),
         {ctx, logits.buf, out.buf, toI64(logits.rowSize), cI64(split)});
    bind(ceg.getResult(), out);
    return success();
  }
  if (auto up = dyn_cast<OptimizerUpdateOp>(op)) {
    auto arg = dyn_cast<BlockArgument>(up.getParam());
    if (!arg || arg.getOwner() != &source.getBody().front())
      return op->emitOpError()
             << "updates a value that is not a parameter argument";
    Tensor g = values.lookup(up.getGrad());
    Value gradBuf =
        call("gnnrtGrad", memF32(), {ctx, cI64(arg.getArgNumber())});
    Tensor target = make(gradBuf, cIndex(1), false, g.dims);
    elementwise(target, {&g},
                [](OpBuilder &, Location, ValueRange v) { return v[0]; });
    call("gnnrtOptimizerUpdate", {}, {ctx, cI64(arg.getArgNumber())}, false);
    Tensor param = values.lookup(up.getParam());
    bind(up.getResult(), param);
    return success();
  }
  return op->emitOpError() << "is not lowered to the runtime yet";
}

//===----------------------------------------------------------------------===//
// Fused gathers
//===----------------------------------------------------------------------===//

func::FuncOp FunctionLowering::newKernel() {
  MLIRContext *mctx = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(mctx);
  Type i64 = b.getI64Type();
  std::string name;
  for (int64_t n = 0;; ++n) {
    name = (kKernelPrefix + Twine(n)).str();
    if (!module.lookupSymbol(name))
      break;
  }
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  auto kernel = mb.create<func::FuncOp>(
      loc, name, FunctionType::get(mctx, {ptr, i64, i64}, {}));
  kernel.setPrivate();
  kernel.addEntryBlock();
  return kernel;
}

LogicalResult FunctionLowering::computeEdgeScalars(FusedGatherOp fg,
                                                   Value scale, Value weights) {
  SmallVector<Value> operands = fg.getRowInputs();
  llvm::append_range(operands, fg.getParams());
  unsigned numSrc = fg.getSrcInputs().size(), numDst = fg.getDstInputs().size(),
           numRows = numSrc + numDst + fg.getEdgeInputs().size();
  call("gnnrtKernelArg", {}, {ctx, cI64(0), weights});
  for (auto [i, v] : llvm::enumerate(operands)) {
    Tensor t = values.lookup(v);
    if (!cast<MemRefType>(t.buf.getType()).getElementType().isF32())
      return fg.emitOpError() << "reads a non-f32 row in a per-edge scalar";
    call("gnnrtKernelArg", {}, {ctx, cI64(i + 1), t.buf});
    call("gnnrtKernelInt", {}, {ctx, cI64(i + 1), toI64(t.rowSize)}, false);
  }
  func::FuncOp kernel;
  {
    OpBuilder::InsertionGuard guard(b);
    kernel = newKernel();
    Block *entry = &kernel.getBody().front();
    b.setInsertionPointToStart(entry);
    Value kctx = entry->getArgument(0);
    auto toIndex = [&](OpBuilder &ob, Value v) {
      return ob.create<arith::IndexCastOp>(loc, ob.getIndexType(), v)
          .getResult();
    };
    Value out = call("gnnrtKernelArgGet", memF32(), {kctx, cI64(0)});
    SmallVector<Value> bufs, rowSizes;
    for (unsigned i = 0; i < operands.size(); ++i) {
      bufs.push_back(call("gnnrtKernelArgGet", memF32(), {kctx, cI64(i + 1)}));
      rowSizes.push_back(toIndex(b, call("gnnrtKernelIntGet", b.getI64Type(),
                                         {kctx, cI64(i + 1)}, false)));
    }
    // Edge e (CSC order): its source indices[e], its destination dst[e].
    Value srcOf = call("gnnrtGraphIndex", memI32(), {kctx, cI64(0)});
    Value dstOf = call("gnnrtGraphIndex", memI32(), {kctx, cI64(1)});
    b.create<scf::ForOp>(
        loc, toIndex(b, entry->getArgument(1)),
        toIndex(b, entry->getArgument(2)), cIndex(1), ValueRange{},
        [&](OpBuilder &eb, Location, Value e, ValueRange) {
          Value u = toIndex(eb, eb.create<memref::LoadOp>(loc, srcOf, e));
          Value v = toIndex(eb, eb.create<memref::LoadOp>(loc, dstOf, e));
          DenseMap<Value, Value> vals;
          std::function<Value(Value)> eval = [&](Value x) -> Value {
            if (Value c = vals.lookup(x))
              return c;
            Value r;
            if (auto arg = dyn_cast<BlockArgument>(x)) {
              unsigned i = arg.getArgNumber();
              Value row = i < numSrc            ? u
                          : i < numSrc + numDst ? v
                          : i < numRows         ? e
                                                : Value();
              Value index =
                  row ? eb.create<arith::MulIOp>(loc, row, rowSizes[i])
                            .getResult()
                      : cIndex(0);
              r = eb.create<memref::LoadOp>(loc, bufs[i], index);
            } else if (auto c = dyn_cast<ConstantOp>(x.getDefiningOp())) {
              r = eb.create<arith::ConstantFloatOp>(
                  loc, APFloat(c.getValue().getSplatValue<float>()),
                  eb.getF32Type());
            } else {
              Operation *op = x.getDefiningOp();
              SmallVector<Value> args;
              for (Value o : op->getOperands())
                args.push_back(eval(o));
              r = emitElement(eb, loc, op, args);
            }
            vals[x] = r;
            return r;
          };
          eb.create<memref::StoreOp>(loc, eval(scale), out, e);
          eb.create<scf::YieldOp>(loc);
        });
    b.create<func::ReturnOp>(loc);
  }
  Value fn = b.create<func::ConstantOp>(loc, kernel.getFunctionType(),
                                        SymbolRefAttr::get(kernel));
  call("gnnrtParallelFor", {}, {ctx, fn, toI64(numE)}, false);
  return success();
}

LogicalResult FunctionLowering::lowerFusedGather(FusedGatherOp fg) {
  Block &body = fg.getBody().front();
  Value y = fg.getYield().getValues()[0];
  auto rowOf = [](Value v) {
    return cast<VertexTensorType>(v.getType()).getRowType();
  };
  RankedTensorType result = rowOf(fg.getOuts()[0]);
  unsigned numSrc = fg.getSrcInputs().size(), numDst = fg.getDstInputs().size();
  bool toDst = fg.getSide() == Side::Dst;
  // Which row input a block argument reads; the neighbour's rows are the
  // source's for a gather to dst and the destination's for one to src.
  auto neighbourInput = [&](Value v) -> Value {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &body || v.getType() != result)
      return Value();
    unsigned i = arg.getArgNumber();
    if (toDst && i < numSrc)
      return fg.getSrcInputs()[i];
    if (!toDst && i >= numSrc && i < numSrc + numDst)
      return fg.getDstInputs()[i - numSrc];
    return Value();
  };
  auto scalarEdgeInput = [&](Value v) -> Value {
    auto arg = dyn_cast<BlockArgument>(v);
    unsigned first = numSrc + numDst;
    if (!arg || arg.getOwner() != &body || arg.getArgNumber() < first ||
        arg.getArgNumber() >= first + fg.getEdgeInputs().size())
      return Value();
    auto t = cast<RankedTensorType>(v.getType());
    if (!t.hasStaticShape() || t.getNumElements() != 1)
      return Value();
    return fg.getEdgeInputs()[arg.getArgNumber() - first];
  };

  // The runtime's SpMM: sum/mean of the neighbour's rows, optionally scaled
  // by a per-edge scalar.
  if ((fg.getAcc() == Accumulator::Sum || fg.getAcc() == Accumulator::Mean) &&
      fg.getOuts().size() == 1) {
    Value x, w;
    if (&body.front() == fg.getYield().getOperation()) {
      x = neighbourInput(y);
    } else if (auto m = y.getDefiningOp<MulOp>();
               m && &body.front() == m.getOperation() &&
               m->getNextNode() == fg.getYield().getOperation()) {
      for (auto [row, scale] : {std::pair{m.getLhs(), m.getRhs()},
                                std::pair{m.getRhs(), m.getLhs()}})
        if (Value xi = neighbourInput(row), wi = scalarEdgeInput(scale);
            xi && wi) {
          x = xi;
          w = wi;
          break;
        }
    }
    // The neighbour's row times a per-edge scalar computed from per-vertex
    // or per-edge scalars (GCN's inlined normalisation): the scalars go to
    // a temporary |E|-float buffer (one edge-parallel kernel), then the
    // runtime's SpMM, which is faster than a generated loop at wide rows.
    Value computedScale;
    if (!x) {
      std::function<bool(Value)> scalarSlice = [&](Value v) {
        auto t = cast<RankedTensorType>(v.getType());
        if (!t.hasStaticShape() || t.getNumElements() != 1)
          return false;
        if (isa<BlockArgument>(v))
          return true;
        Operation *op = v.getDefiningOp();
        if (!isElementwise(op) && !isa<ConstantOp>(op))
          return false;
        return llvm::all_of(op->getOperands(), scalarSlice);
      };
      if (auto m = y.getDefiningOp<MulOp>())
        for (auto [row, scale] : {std::pair{m.getLhs(), m.getRhs()},
                                  std::pair{m.getRhs(), m.getLhs()}})
          if (Value xi = neighbourInput(row);
              xi && scalarSlice(scale) &&
              llvm::all_of(body.without_terminator(), [&](Operation &op) {
                return &op == m.getOperation() || scalarSlice(op.getResult(0));
              })) {
            x = xi;
            computedScale = scale;
            break;
          }
    }
    if (x) {
      Tensor xt = values.lookup(x);
      Value weights = w ? values.lookup(w).buf : emptyF32();
      int64_t tempSlot = -1;
      if (computedScale) {
        Tensor wt = alloc(numE, true, {cIndex(1)});
        tempSlot = slotOf.lookup(wt.buf);
        if (failed(computeEdgeScalars(fg, computedScale, wt.buf)))
          return failure();
        weights = wt.buf;
      }
      Tensor out = alloc(numV, true, xt.dims);
      call("gnnrtSpmm", {},
           {ctx, cI64(toDst ? 1 : 0),
            cI64(fg.getAcc() == Accumulator::Mean ? 1 : 0), weights, xt.buf,
            out.buf, toI64(xt.rowSize)});
      bind(fg.getOuts()[0], out);
      if (tempSlot >= 0)
        release(tempSlot); // nothing reads the weights after
      return success();
    }
  }

  SmallVector<Value> operands = fg.getRowInputs();
  llvm::append_range(operands, fg.getParams());
  SmallVector<Tensor> tensors;
  for (Value v : operands)
    tensors.push_back(values.lookup(v));
  // Each gathered row's dimensions: static ones, `?` from an operand whose
  // rows have the same shape. Kernel operands: the results, then the
  // operands (buffers and row sizes through the context).
  SmallVector<Tensor> outs;
  for (Value o : fg.getOuts()) {
    RankedTensorType row = rowOf(o);
    SmallVector<Value> dims = staticDims(row);
    if (llvm::any_of(dims, [](Value d) { return !d; })) {
      auto it = llvm::find_if(operands, [&](Value v) {
        RankedTensorType t = rowTypeOf(v.getType());
        if (!t)
          t = cast<RankedTensorType>(v.getType());
        return t.getShape() == row.getShape();
      });
      if (it == operands.end())
        return fg.emitOpError()
               << "cannot size its result: no operand has rows of type " << row;
      dims = tensors[it - operands.begin()].dims;
    }
    outs.push_back(alloc(numV, true, dims));
  }
  int64_t numOuts = outs.size();
  for (auto [i, out] : llvm::enumerate(outs)) {
    call("gnnrtKernelArg", {}, {ctx, cI64(i), out.buf});
    call("gnnrtKernelInt", {}, {ctx, cI64(i), toI64(out.rowSize)}, false);
  }
  if (Value arg = fg.getArg()) {
    Tensor a = outs[0];
    a.buf = bufferI32(mul(numV, outs[0].rowSize));
    call("gnnrtKernelArgI32", {}, {ctx, cI64(0), a.buf});
    bind(arg, a);
  }
  for (auto [i, t] : llvm::enumerate(tensors)) {
    bool i32 = cast<MemRefType>(t.buf.getType()).getElementType().isInteger(32);
    call(i32 ? "gnnrtKernelArgI32" : "gnnrtKernelArg", {},
         {ctx, cI64(numOuts + i), t.buf});
    call("gnnrtKernelInt", {}, {ctx, cI64(numOuts + i), toI64(t.rowSize)},
         false);
  }
  KernelCaches caches = edgeCachesFor(fg);
  int64_t firstCacheArg = numOuts + static_cast<int64_t>(tensors.size());
  for (auto [i, c] : llvm::enumerate(caches))
    call("gnnrtKernelArg", {},
         {ctx, cI64(firstCacheArg + static_cast<int64_t>(i)),
          std::get<1>(c)->buf});
  func::FuncOp kernel =
      emitFusedGatherKernel(fg, tensors, caches, firstCacheArg);
  if (!kernel)
    return failure();
  Value fn = b.create<func::ConstantOp>(loc, kernel.getFunctionType(),
                                        SymbolRefAttr::get(kernel));
  call("gnnrtParallelFor", {}, {ctx, fn, toI64(numV)}, false);
  for (auto [o, t] : llvm::zip(fg.getOuts(), outs))
    bind(o, t);
  return success();
}

/// Whether `x` of `a`'s body and `y` of `b`'s body are the same value of
/// every edge: block arguments reading the same outer value from the same
/// end (or as edge data or parameter), ops equivalent over such operands.
static bool sameEdgeValue(FusedGatherOp a, Value x, FusedGatherOp b, Value y) {
  auto ax = dyn_cast<BlockArgument>(x), by = dyn_cast<BlockArgument>(y);
  if (ax || by) {
    if (!ax || !by)
      return false;
    auto outer = [](FusedGatherOp g, BlockArgument arg) {
      unsigned i = arg.getArgNumber();
      unsigned ns = g.getSrcInputs().size(), nd = g.getDstInputs().size(),
               ne = g.getEdgeInputs().size();
      if (i < ns)
        return std::pair{0, g.getSrcInputs()[i]};
      if (i < ns + nd)
        return std::pair{1, g.getDstInputs()[i - ns]};
      if (i < ns + nd + ne)
        return std::pair{2, g.getEdgeInputs()[i - ns - nd]};
      return std::pair{3, g.getParams()[i - ns - nd - ne]};
    };
    return outer(a, ax) == outer(b, by);
  }
  return OperationEquivalence::isEquivalentTo(
      x.getDefiningOp(), y.getDefiningOp(),
      [&](Value l, Value r) { return success(sameEdgeValue(a, l, b, r)); },
      nullptr, OperationEquivalence::IgnoreLocations);
}

/// The width of a per-edge value worth keeping: a row reduction or an
/// exponential with a small static row; 0 for others.
static int64_t cacheableWidth(Value v) {
  Operation *op = v.getDefiningOp();
  if (!op || !isa<RowDotOp, ReduceSumOp, ExpOp>(op))
    return 0;
  auto t = cast<RankedTensorType>(v.getType());
  if (!t.hasStaticShape() || t.getRank() > 1 || t.getNumElements() > 16)
    return 0;
  return t.getNumElements();
}

FunctionLowering::KernelCaches
FunctionLowering::edgeCachesFor(FusedGatherOp fg) {
  KernelCaches result;
  auto self = llvm::find(fusedGathers, fg);
  for (Operation &op : fg.getBody().front().without_terminator()) {
    Value v = op.getResult(0);
    int64_t width = cacheableWidth(v);
    if (!width)
      continue;
    EdgeCache *live = nullptr;
    for (EdgeCache &c : edgeCaches)
      if (c.width == width && sameEdgeValue(c.producer, c.value, fg, v))
        live = &c;
    if (live) {
      result.push_back({v, live, false});
      fg.emitRemark() << "reads the per-edge " << op.getName() << " "
                      << v.getType()
                      << " an earlier kernel kept, instead of recomputing it";
      continue;
    }
    Operation *last = nullptr;
    for (auto it = self + 1; it != fusedGathers.end(); ++it)
      for (Operation &o : it->getBody().front().without_terminator())
        if (cacheableWidth(o.getResult(0)) == width &&
            sameEdgeValue(fg, v, *it, o.getResult(0)))
          last = *it;
    // The budget counts every cache of the function: its slot keeps the
    // memory for the whole run.
    if (!last || edgeCacheFloatsUsed + width > edgeCacheBudget)
      continue;
    edgeCacheFloatsUsed += width;
    int64_t slot = takeSlot(sizeKey(mul(numE, cIndex(width))));
    Value buf = call("gnnrtBuffer", memF32(),
                     {ctx, slotOperand(slot), toI64(mul(numE, cIndex(width)))});
    edgeCaches.push_back({fg, v, buf, width, slot, last});
    result.push_back({v, &edgeCaches.back(), true});
    fg.emitRemark() << "keeps its per-edge " << op.getName() << " "
                    << v.getType() << " (" << width
                    << " floats per edge) for later kernels";
  }
  return result;
}

void FunctionLowering::releaseEdgeCaches(Operation *op) {
  for (auto it = edgeCaches.begin(); it != edgeCaches.end();) {
    if (it->last == op) {
      release(it->slot);
      it = edgeCaches.erase(it);
    } else {
      ++it;
    }
  }
}

func::FuncOp
FunctionLowering::emitFusedGatherKernel(FusedGatherOp fg,
                                        ArrayRef<Tensor> operands,
                                        const KernelCaches &caches,
                                        int64_t firstCacheArg) {
  OpBuilder::InsertionGuard guard(b);
  Type i64 = b.getI64Type();
  func::FuncOp kernel = newKernel();
  Block *entry = &kernel.getBody().front();
  b.setInsertionPointToStart(entry);
  Value kctx = entry->getArgument(0);
  auto toIndex = [&](OpBuilder &ob, Value v) {
    return ob.create<arith::IndexCastOp>(loc, ob.getIndexType(), v).getResult();
  };
  Value begin = toIndex(b, entry->getArgument(1));
  Value end = toIndex(b, entry->getArgument(2));

  Block &body = fg.getBody().front();
  SmallVector<RankedTensorType> results;
  for (Value o : fg.getOuts())
    results.push_back(cast<VertexTensorType>(o.getType()).getRowType());
  int64_t numOuts = results.size();
  bool toDst = fg.getSide() == Side::Dst;
  Accumulator acc = fg.getAcc();
  unsigned numSrc = fg.getSrcInputs().size(), numDst = fg.getDstInputs().size(),
           numRows = numSrc + numDst + fg.getEdgeInputs().size();

  // Row widths: constants where the row type is static (the loops then have
  // known trip counts to unroll and vectorise), else the runtime's.
  auto staticWidth = [&](Type t) -> Value {
    auto row = dyn_cast<RankedTensorType>(t);
    if (auto r = rowTypeOf(t))
      row = r;
    if (!row || !row.hasStaticShape())
      return Value();
    return cIndex(row.getNumElements());
  };
  SmallVector<Value> outBufs, outWidths;
  for (int64_t i = 0; i < numOuts; ++i) {
    outBufs.push_back(call("gnnrtKernelArgGet", memF32(), {kctx, cI64(i)}));
    Value w = staticWidth(results[i]);
    outWidths.push_back(w ? w
                          : toIndex(b, call("gnnrtKernelIntGet", i64,
                                            {kctx, cI64(i)}, false)));
  }
  Value argBuf = fg.getArg()
                     ? call("gnnrtKernelArgI32Get", memI32(), {kctx, cI64(0)})
                     : Value();
  SmallVector<Value> bufs, rowSizes;
  for (unsigned i = 0; i < operands.size(); ++i) {
    bool i32 = cast<MemRefType>(operands[i].buf.getType())
                   .getElementType()
                   .isInteger(32);
    bufs.push_back(
        i32 ? call("gnnrtKernelArgI32Get", memI32(), {kctx, cI64(numOuts + i)})
            : call("gnnrtKernelArgGet", memF32(), {kctx, cI64(numOuts + i)}));
    Value w = staticWidth(body.getArgument(i).getType());
    rowSizes.push_back(
        w ? w
          : toIndex(b, call("gnnrtKernelIntGet", i64, {kctx, cI64(numOuts + i)},
                            false)));
  }
  // Per-edge values kept across kernels: loaded instead of recomputed, or
  // stored for later kernels.
  DenseMap<Value, std::pair<Value, int64_t>> cacheLoad, cacheStore;
  for (auto [i, c] : llvm::enumerate(caches)) {
    auto [v, cache, store] = c;
    Value buf = call("gnnrtKernelArgGet", memF32(),
                     {kctx, cI64(firstCacheArg + static_cast<int64_t>(i))});
    (store ? cacheStore : cacheLoad)[v] = {buf, cache->width};
  }
  Value offsets =
      call("gnnrtGraphOffsets", memI64(), {kctx, cI64(toDst ? 1 : 0)});
  // To dst: edge p of v is edge id p, its source indices[p]. To src: edge
  // ids come from the CSR order (loaded only where the body reads per-edge
  // data), the other end from the destinations in CSR order: read in order,
  // not one dependent cache miss per edge before its rows can be fetched.
  Value other = call("gnnrtGraphIndex", memI32(), {kctx, cI64(toDst ? 0 : 3)});
  Value csrEdge =
      toDst ? Value() : call("gnnrtGraphIndex", memI32(), {kctx, cI64(2)});
  // The width of every row shape in the body: static, or a `?` shape's from
  // an operand (or the result) with that shape.
  std::map<SmallVector<int64_t>, Value> widths;
  for (auto [r, w] : llvm::zip(results, outWidths))
    widths[SmallVector<int64_t>(r.getShape())] = w;
  for (auto [i, v] : llvm::enumerate(body.getArguments())) {
    SmallVector<int64_t> shape(cast<RankedTensorType>(v.getType()).getShape());
    widths.try_emplace(shape, rowSizes[i]);
  }
  auto widthOf = [&](ArrayRef<int64_t> shape) -> Value {
    auto it = widths.find(SmallVector<int64_t>(shape));
    if (it != widths.end())
      return it->second;
    if (llvm::is_contained(shape, ShapedType::kDynamic))
      return Value();
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    Value c = cIndex(n);
    widths[SmallVector<int64_t>(shape)] = c;
    return c;
  };
  auto shapeOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  auto oneElement = [](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return t.hasStaticShape() && t.getNumElements() == 1;
  };
  // Per-head sums of a row_dot over `heads x F` rows live in a small stack
  // buffer per edge.
  DenseMap<Value, Value> headSums, headValues;
  for (Operation &op : body.without_terminator()) {
    Value r = op.getResult(0);
    auto t = cast<RankedTensorType>(r.getType());
    if (oneElement(r))
      continue;
    if (isa<RowDotOp>(op)) {
      headSums[r] = b.create<memref::AllocaOp>(
          loc, MemRefType::get({t.getDimSize(0)}, b.getF32Type()));
    } else if (t.getRank() == 1 && t.hasStaticShape() && !isa<ConstantOp>(op) &&
               llvm::any_of(results, [&](RankedTensorType r) {
                 return r.getRank() == 2 && r.getDimSize(0) == t.getDimSize(0);
               })) {
      headValues[r] = b.create<memref::AllocaOp>(
          loc, MemRefType::get({t.getDimSize(0)}, b.getF32Type()));
    }
  }
  // A stored value is computed once per edge (into its stack buffer); a
  // loaded one is not computed at all.
  for (auto &[v, cw] : cacheStore)
    if (cw.second > 1 && !headSums.count(v) && !headValues.count(v))
      headValues[v] = b.create<memref::AllocaOp>(
          loc, MemRefType::get({cw.second}, b.getF32Type()));
  for (auto &[v, cw] : cacheLoad) {
    headSums.erase(v);
    headValues.erase(v);
  }
  // Check every shape is known before emitting loops.
  for (Operation &op : body.without_terminator())
    for (Value v : op.getOperands())
      if (!oneElement(v) && !widthOf(shapeOf(v)))
        return fg.emitOpError() << "has a row of shape " << v.getType()
                                << " whose width is unknown",
               func::FuncOp();
  float initValue = acc == Accumulator::Max   ? -INFINITY
                    : acc == Accumulator::Min ? INFINITY
                                              : 0.0f;
  Value zero = cIndex(0), one = cIndex(1);
  Value prefetchDistance = cIndex(8), cacheLine = cIndex(16),
        prefetchSpan = cIndex(64);
  Value numPositions = b.create<memref::DimOp>(loc, other, 0);

  auto loadAt = [&](OpBuilder &ob, Value buf, Value index) {
    return ob.create<memref::LoadOp>(loc, buf, index).getResult();
  };
  // Loops over the heads of a `heads x F` row: fn(builder, head, head * F,
  // F) per head, F a constant when static.
  auto forHeads = [&](OpBuilder &ob, ArrayRef<int64_t> ctx,
                      function_ref<void(OpBuilder &, Value, Value, Value)> fn) {
    Value f = ShapedType::isDynamic(ctx[1])
                  ? ob.create<arith::DivUIOp>(loc, widthOf(ctx), cIndex(ctx[0]))
                        .getResult()
                  : cIndex(ctx[1]);
    ob.create<scf::ForOp>(
        loc, zero, cIndex(ctx[0]), one, ValueRange{},
        [&](OpBuilder &hb, Location, Value h, ValueRange) {
          fn(hb, h, hb.create<arith::MulIOp>(loc, h, f), f);
          hb.create<scf::YieldOp>(loc);
        });
  };
  // Loops over the elements of a row of shape `ctx` and width `width`:
  // fn(builder, element, head). A `heads x F` row is a nest over the heads,
  // so per-head values are loop-invariant in the inner loop (no division
  // per element); `head` is null for other rows.
  auto forElements = [&](OpBuilder &ob, ArrayRef<int64_t> ctx, Value width,
                         function_ref<void(OpBuilder &, Value, Value)> fn) {
    if (ctx.size() == 2 && !ShapedType::isDynamic(ctx[0])) {
      forHeads(ob, ctx, [&](OpBuilder &hb, Value h, Value base, Value f) {
        hb.create<scf::ForOp>(
            loc, zero, f, one, ValueRange{},
            [&](OpBuilder &jb, Location, Value i, ValueRange) {
              fn(jb, jb.create<arith::AddIOp>(loc, base, i), h);
              jb.create<scf::YieldOp>(loc);
            });
      });
      return;
    }
    ob.create<scf::ForOp>(loc, zero, width, one, ValueRange{},
                          [&](OpBuilder &jb, Location, Value j, ValueRange) {
                            fn(jb, j, Value());
                            jb.create<scf::YieldOp>(loc);
                          });
  };
  b.create<scf::ForOp>(
      loc, begin, end, one, ValueRange{},
      [&](OpBuilder &vb, Location, Value v, ValueRange) {
        SmallVector<Value> rowBases;
        for (Value w : outWidths)
          rowBases.push_back(vb.create<arith::MulIOp>(loc, v, w));
        Value p0 = toIndex(vb, loadAt(vb, offsets, v));
        Value p1 = toIndex(
            vb, loadAt(vb, offsets, vb.create<arith::AddIOp>(loc, v, one)));
        Value init = vb.create<arith::ConstantFloatOp>(loc, APFloat(initValue),
                                                       vb.getF32Type());
        for (int64_t o = 0; o < numOuts; ++o)
          vb.create<scf::ForOp>(
              loc, zero, outWidths[o], one, ValueRange{},
              [&](OpBuilder &jb, Location, Value j, ValueRange) {
                Value idx = jb.create<arith::AddIOp>(loc, rowBases[o], j);
                jb.create<memref::StoreOp>(loc, init, outBufs[o], idx);
                if (argBuf)
                  jb.create<memref::StoreOp>(
                      loc,
                      jb.create<arith::ConstantIntOp>(loc, -1, jb.getI32Type()),
                      argBuf, idx);
                jb.create<scf::YieldOp>(loc);
              });
        vb.create<scf::ForOp>(
            loc, p0, p1, one, ValueRange{},
            [&](OpBuilder &eb, Location, Value p, ValueRange) {
              Value e = toDst ? p : toIndex(eb, loadAt(eb, csrEdge, p));
              Value e32 =
                  eb.create<arith::IndexCastOp>(loc, eb.getI32Type(), e);
              Value u = toIndex(eb, loadAt(eb, other, p));
              Value srcRow = toDst ? u : v, dstRow = toDst ? v : u;
              // Prefetch the neighbour rows of the edge kPrefetchDistance
              // positions ahead (they are scattered over the inputs): several
              // row loads in flight per thread instead of one.
              Value ahead = eb.create<arith::AddIOp>(loc, p, prefetchDistance);
              Value inRange = eb.create<arith::CmpIOp>(
                  loc, arith::CmpIPredicate::ult, ahead, numPositions);
              eb.create<scf::IfOp>(loc, inRange, [&](OpBuilder &ib, Location) {
                Value ua = toIndex(ib, loadAt(ib, other, ahead));
                for (unsigned i = toDst ? 0 : numSrc,
                              n = toDst ? numSrc : numSrc + numDst;
                     i < n; ++i) {
                  // The first lines only: more prefetches per edge fill
                  // the line-fill buffers and stall (a 602-wide row has 38
                  // lines); the hardware streams the rest of the row.
                  Value base = ib.create<arith::MulIOp>(loc, ua, rowSizes[i]);
                  Value lines =
                      ib.create<arith::MinUIOp>(loc, rowSizes[i], prefetchSpan);
                  ib.create<scf::ForOp>(
                      loc, zero, lines, cacheLine, ValueRange{},
                      [&](OpBuilder &lb, Location, Value l, ValueRange) {
                        lb.create<memref::PrefetchOp>(
                            loc, bufs[i],
                            ValueRange{lb.create<arith::AddIOp>(loc, base, l)},
                            /*isWrite=*/false, /*localityHint=*/3,
                            /*isDataCache=*/true);
                        lb.create<scf::YieldOp>(loc);
                      });
                }
                ib.create<scf::YieldOp>(loc);
              });
              // The row (or none, for parameters) operand i reads.
              auto rowOf = [&](unsigned i) -> Value {
                if (i < numSrc)
                  return srcRow;
                if (i < numSrc + numDst)
                  return dstRow;
                if (i < numRows)
                  return e;
                return Value();
              };
              Value fzero = eb.create<arith::ConstantFloatOp>(
                  loc, APFloat(0.0f), eb.getF32Type());
              // One-element values and reductions: once per edge.
              DenseMap<Value, Value> perEdge;
              // The value of `x` at element k of a row of shape `ctx`: the
              // same element, or head k / F of `heads x F`.
              using Cache = DenseMap<Value, Value>;
              std::function<Value(OpBuilder &, Value, ArrayRef<int64_t>, Value,
                                  Value, Cache &)>
                  at = [&](OpBuilder &ob, Value x, ArrayRef<int64_t> ctx,
                           Value k, Value head, Cache &cache) -> Value {
                if (Value pe = perEdge.lookup(x))
                  return pe;
                if (Value c = cache.lookup(x))
                  return c;
                Value index = k;
                if (shapeOf(x) != ctx) // per-head scalars of heads x F
                  index = head ? head
                               : ob.create<arith::DivUIOp>(
                                     loc, k,
                                     ob.create<arith::DivUIOp>(
                                         loc, widthOf(ctx), cIndex(ctx[0])))
                                     .getResult();
                Value r;
                if (auto it = cacheLoad.find(x); it != cacheLoad.end()) {
                  auto [buf, width] = it->second;
                  r = loadAt(ob, buf,
                             ob.create<arith::AddIOp>(
                                 loc,
                                 ob.create<arith::MulIOp>(loc, e, cIndex(width)),
                                 index));
                } else if (auto arg = dyn_cast<BlockArgument>(x)) {
                  unsigned i = arg.getArgNumber();
                  Value at = index;
                  if (Value row = rowOf(i))
                    at = ob.create<arith::AddIOp>(
                        loc, ob.create<arith::MulIOp>(loc, row, rowSizes[i]),
                        index);
                  r = loadAt(ob, bufs[i], at);
                } else if (Value sums = headSums.lookup(x)) {
                  r = loadAt(ob, sums, index);
                } else {
                  Operation *op = x.getDefiningOp();
                  SmallVector<Value> args;
                  for (Value o : op->getOperands())
                    args.push_back(at(ob, o, ctx, k, head, cache));
                  if (auto c = dyn_cast<ConstantOp>(op))
                    r = ob.create<arith::ConstantFloatOp>(
                        loc, APFloat(c.getValue().getSplatValue<float>()),
                        ob.getF32Type());
                  else if (isa<BroadcastHeadsOp>(op))
                    r = args[0];
                  else if (isa<EdgeSelectOp>(op))
                    // The gradient goes to the edge the forward chose.
                    r = ob.create<arith::SelectOp>(
                        loc,
                        ob.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                                 args[0], e32),
                        args[1], fzero);
                  else
                    r = emitElement(ob, loc, op, args);
                }
                cache[x] = r;
                return r;
              };
              // A reduction: a loop over its operand's row, its additions
              // reassociable so that LLVM vectorises it (several partial
              // sums instead of one chain of dependent adds).
              auto addR = [&](OpBuilder &kb, Value x, Value y) {
                return kb
                    .create<arith::AddFOp>(loc, x, y,
                                           arith::FastMathFlags::reassoc)
                    .getResult();
              };
              auto reduce = [&](Operation &op) {
                Value in = op.getOperand(0);
                ArrayRef<int64_t> ctx = shapeOf(in);
                auto term = [&](OpBuilder &kb, Value k, Value head) {
                  Cache cache;
                  Value t = at(kb, in, ctx, k, head, cache);
                  if (isa<RowDotOp>(op))
                    t = kb.create<arith::MulFOp>(
                        loc, t, at(kb, op.getOperand(1), ctx, k, head, cache));
                  return t;
                };
                if (Value sums = headSums.lookup(op.getResult(0))) {
                  // heads x F: one sum per head over its F elements.
                  forHeads(eb, ctx, [&](OpBuilder &hb, Value h, Value base,
                                        Value f) {
                    auto loop = hb.create<scf::ForOp>(
                        loc, zero, f, one, ValueRange{fzero},
                        [&](OpBuilder &kb, Location, Value i, ValueRange sum) {
                          Value k = kb.create<arith::AddIOp>(loc, base, i);
                          kb.create<scf::YieldOp>(
                              loc, addR(kb, sum[0], term(kb, k, h)));
                        });
                    hb.create<memref::StoreOp>(loc, loop.getResult(0), sums,
                                               h);
                  });
                  return;
                }
                auto loop = eb.create<scf::ForOp>(
                    loc, zero, widthOf(ctx), one, ValueRange{fzero},
                    [&](OpBuilder &kb, Location, Value k, ValueRange sum) {
                      kb.create<scf::YieldOp>(
                          loc, addR(kb, sum[0], term(kb, k, Value())));
                    });
                perEdge[op.getResult(0)] = loop.getResult(0);
              };
              for (BlockArgument arg : body.getArguments())
                if (oneElement(arg)) {
                  Cache cache;
                  perEdge[arg] = at(eb, arg, shapeOf(arg), zero, Value(), cache);
                }
              // Per-head values (GAT's scores and coefficients): once per
              // edge and head into their stack buffer, not once per element
              // of the heads x F row.
              DenseMap<Value, Value> pendingHeads = headValues;
              auto storeToCache = [&](Value r) {
                auto it = cacheStore.find(r);
                if (it == cacheStore.end())
                  return;
                auto [buf, width] = it->second;
                Value base = eb.create<arith::MulIOp>(loc, e, cIndex(width));
                if (Value pe = perEdge.lookup(r)) {
                  eb.create<memref::StoreOp>(loc, pe, buf, base);
                  return;
                }
                Value heads = headSums.lookup(r);
                for (int64_t h = 0; h < width; ++h)
                  eb.create<memref::StoreOp>(
                      loc, loadAt(eb, heads, cIndex(h)), buf,
                      ValueRange{eb.create<arith::AddIOp>(loc, base,
                                                          cIndex(h))});
              };
              for (Operation &op : body.without_terminator()) {
                Value r = op.getResult(0);
                if (cacheLoad.count(r)) {
                  if (oneElement(r)) {
                    Cache cache;
                    perEdge[r] =
                        at(eb, r, shapeOf(r), zero, Value(), cache);
                  }
                  continue;
                }
                if (isa<ReduceSumOp, RowDotOp>(op)) {
                  reduce(op);
                } else if (oneElement(r)) {
                  Cache cache;
                  perEdge[r] = at(eb, r, shapeOf(r), zero, Value(), cache);
                } else if (Value buf = pendingHeads.lookup(r)) {
                  headSums.erase(r); // computed here, read from `buf` after
                  eb.create<scf::ForOp>(
                      loc, zero, cIndex(shapeOf(r)[0]), one, ValueRange{},
                      [&](OpBuilder &hb, Location, Value h, ValueRange) {
                        Cache cache;
                        hb.create<memref::StoreOp>(
                            loc, at(hb, r, shapeOf(r), h, Value(), cache), buf,
                            h);
                        hb.create<scf::YieldOp>(loc);
                      });
                  headSums[r] = buf;
                }
                storeToCache(r);
              }
              for (int64_t o = 0; o < numOuts; ++o)
                forElements(
                    eb, results[o].getShape(), outWidths[o],
                    [&](OpBuilder &jb, Value j, Value head) {
                      Cache cache;
                      Value x = at(jb, fg.getYield().getValues()[o],
                                   results[o].getShape(), j, head, cache);
                      Value idx = jb.create<arith::AddIOp>(loc, rowBases[o], j);
                      Value old = loadAt(jb, outBufs[o], idx);
                      Value next;
                      if (acc == Accumulator::Sum || acc == Accumulator::Mean) {
                        next = jb.create<arith::AddFOp>(loc, old, x);
                      } else {
                        // Strict: ties keep the earlier edge's value.
                        auto pred = acc == Accumulator::Max
                                        ? arith::CmpFPredicate::OGT
                                        : arith::CmpFPredicate::OLT;
                        Value better =
                            jb.create<arith::CmpFOp>(loc, pred, x, old);
                        next = jb.create<arith::SelectOp>(loc, better, x, old);
                        if (argBuf) {
                          Value oldArg = loadAt(jb, argBuf, idx);
                          Value nextArg = jb.create<arith::SelectOp>(
                              loc, better, e32, oldArg);
                          jb.create<memref::StoreOp>(loc, nextArg, argBuf, idx);
                        }
                      }
                      jb.create<memref::StoreOp>(loc, next, outBufs[o], idx);
                    });
              eb.create<scf::YieldOp>(loc);
            });
        if (acc != Accumulator::Sum) {
          // mean: divide by the degree; max/min: 0 without edges.
          Value count = vb.create<arith::SubIOp>(loc, p1, p0);
          Value empty = vb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                                 count, zero);
          Value fzero = vb.create<arith::ConstantFloatOp>(loc, APFloat(0.0f),
                                                          vb.getF32Type());
          Value inv;
          if (acc == Accumulator::Mean) {
            Value n = vb.create<arith::UIToFPOp>(
                loc, vb.getF32Type(),
                vb.create<arith::IndexCastOp>(
                    loc, vb.getI64Type(),
                    vb.create<arith::MaxUIOp>(loc, count, one)));
            Value fone = vb.create<arith::ConstantFloatOp>(loc, APFloat(1.0f),
                                                           vb.getF32Type());
            inv = vb.create<arith::DivFOp>(loc, fone, n);
          }
          for (int64_t o = 0; o < numOuts; ++o)
            vb.create<scf::ForOp>(
                loc, zero, outWidths[o], one, ValueRange{},
                [&](OpBuilder &jb, Location, Value j, ValueRange) {
                  Value idx = jb.create<arith::AddIOp>(loc, rowBases[o], j);
                  Value x = loadAt(jb, outBufs[o], idx);
                  Value r =
                      inv ? jb.create<arith::MulFOp>(loc, x, inv).getResult()
                          : jb.create<arith::SelectOp>(loc, empty, fzero, x)
                                .getResult();
                  jb.create<memref::StoreOp>(loc, r, outBufs[o], idx);
                  jb.create<scf::YieldOp>(loc);
                });
        }
        vb.create<scf::YieldOp>(loc);
      });
  b.create<func::ReturnOp>(loc);
  return kernel;
}

LogicalResult FunctionLowering::run(bool training) {
  MLIRContext *mctx = module.getContext();
  loc = source.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(mctx);
  OpBuilder mb(mctx);
  mb.setInsertionPointAfter(source);
  StringRef name = training ? kTrainStep : kEval;
  auto fn =
      mb.create<func::FuncOp>(loc, (name + "_lowered").str(),
                              FunctionType::get(mctx, {ptr}, {b.getF32Type()}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  ctx = entry->getArgument(0);
  source.walk([&](FusedGatherOp g) { fusedGathers.push_back(g); });
  auto dim = [&](int64_t which) {
    Value v = call("gnnrtDim", b.getI64Type(), {ctx, cI64(which)}, false);
    return b.create<arith::IndexCastOp>(loc, b.getIndexType(), v).getResult();
  };
  numV = dim(0);
  numE = dim(1);
  numF = dim(2);
  numC = dim(3);

  // Parameters.
  for (unsigned i = 0; i < source.getNumArguments(); ++i) {
    auto type = cast<RankedTensorType>(source.getArgumentTypes()[i]);
    auto binding =
        source.getArgAttrOfType<ArrayAttr>(i, GNNDialect::kDimsAttrName);
    SmallVector<Value> dims;
    for (unsigned d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d)) {
        dims.push_back(cIndex(type.getDimSize(d)));
        continue;
      }
      StringRef bind = binding ? cast<StringAttr>(binding[d]).getValue() : "";
      dims.push_back(bind == kDimClasses ? numC : numF);
    }
    Value buf = call("gnnrtParam", memF32(), {ctx, cI64(i)});
    bind(source.getArgument(i), make(buf, cIndex(1), false, dims));
  }

  Block &body = source.getBody().front();
  planAggregations(body);
  computeLastUses(body);
  for (Operation &op : body.without_terminator()) {
    if (failed(lowerTop(&op)))
      return failure();
    expire(opIndex.lookup(&op));
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  if (!loss)
    return source.emitOpError() << "computes no loss";
  Tensor logits = values.lookup(ret.getOperand(1));
  call("gnnrtSetOutput", {}, {ctx, logits.buf, loss});
  b.create<func::ReturnOp>(loc, loss);
  return success();
}

/// The `gnnrt_model_info` text (runtime/lib/Context.h).
std::string modelInfo(func::FuncOp fn, ArrayRef<std::string> edgeInputs) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "model " << fn.getSymName() << "\n";
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    auto type = cast<RankedTensorType>(fn.getArgumentTypes()[i]);
    auto name = fn.getArgAttrOfType<StringAttr>(i, GNNDialect::kParamAttrName);
    auto init = fn.getArgAttrOfType<InitAttr>(i, GNNDialect::kInitAttrName);
    auto dims = fn.getArgAttrOfType<ArrayAttr>(i, GNNDialect::kDimsAttrName);
    os << "param "
       << (name ? name.getValue() : StringRef("p" + std::to_string(i))) << " "
       << (init ? stringifyInitKind(init.getKind()) : StringRef("glorot"))
       << " "
       << llvm::format("%.17g", init ? init.getValue().convertToDouble() : 0.0)
       << " " << type.getRank();
    for (unsigned d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d)) {
        os << " " << type.getDimSize(d);
        continue;
      }
      StringRef bind = dims ? cast<StringAttr>(dims[d]).getValue() : "";
      os << " " << (bind == kDimClasses ? -2 : -1);
    }
    os << "\n";
  }
  fn.walk([&](InputOp in) {
    if (in.getName() == "features") {
      auto t = cast<VertexTensorType>(in.getType());
      os << "features " << (t.hasDynamicRow() ? -1 : t.getRowShape()[0])
         << "\n";
    }
  });
  for (const std::string &e : edgeInputs) {
    fn.walk([&](InputOp in) {
      if (in.getName() != e)
        return WalkResult::advance();
      auto t = cast<EdgeTensorType>(in.getType());
      bool isInt = t.getElementType().isInteger(32);
      int64_t width = 1;
      for (int64_t d : t.getRowShape())
        width *= d;
      os << "edge " << e << " " << (isInt ? "i32" : "f32") << " " << width
         << "\n";
      return WalkResult::interrupt();
    });
  }
  auto logits = cast<VertexTensorType>(fn.getResultTypes()[1]);
  os << "classes " << (logits.hasDynamicRow() ? -1 : logits.getRowShape()[0])
     << "\n";
  return os.str();
}

struct ConvertGNNToRuntime
    : public mlir::gnn::impl::ConvertGNNToRuntimeBase<ConvertGNNToRuntime> {
  using ConvertGNNToRuntimeBase::ConvertGNNToRuntimeBase;

  void runOnOperation() final {
    ModuleOp module = getOperation();
    auto train = module.lookupSymbol<func::FuncOp>(kTrainStep);
    auto eval = module.lookupSymbol<func::FuncOp>(kEval);
    if (!train || !eval) {
      module.emitError() << "expects @" << kTrainStep << " and @" << kEval
                         << "; run --gnn-autodiff first";
      return signalPassFailure();
    }
    // Edge inputs in order of first appearance in the training step.
    SmallVector<std::string> edgeInputs;
    train.walk([&](InputOp in) {
      if (isa<EdgeTensorType>(in.getType()) &&
          !llvm::is_contained(edgeInputs, in.getName().str()))
        edgeInputs.push_back(in.getName().str());
    });
    std::string info = modelInfo(train, edgeInputs);
    // The model's name, not the derived function's.
    for (auto f : module.getOps<func::FuncOp>())
      if (f->hasAttr(GNNDialect::kModelAttrName)) {
        info = "model " + f.getSymName().str() + info.substr(info.find('\n'));
        break;
      }

    // The sizes at which the slot plan compares buffers with different
    // run-time factors: the dataset's, else typical ones (degree 15).
    DenseMap<StringRef, int64_t> estimates = {
        {"V", 100000}, {"E", 1500000}, {"F", 128}, {"C", 16}};
    if (!meta.empty()) {
      std::string error;
      FailureOr<DatasetMeta> m = readDatasetMeta(meta, error);
      if (failed(m)) {
        module.emitError() << "convert-gnn-to-runtime: " << error;
        return signalPassFailure();
      }
      for (auto [key, n] : {std::pair{"V", m->numVertices},
                            {"E", m->numEdges},
                            {"F", m->numFeatures},
                            {"C", m->numClasses}})
        if (n > 0)
          estimates[key] = n;
    }
    for (auto [fn, training] :
         {std::pair{train, true}, std::pair{eval, false}}) {
      // The two never run at once and nothing of one is read during the
      // other (gnnrtSetOutput's logits are read before the next call), so
      // they share the slots: the runtime keeps max(train, eval) per slot.
      FunctionLowering lowering(module, fn, edgeInputs);
      lowering.setEdgeCacheBudget(edgeCacheFloats);
      if (failed(lowering.run(training)))
        return signalPassFailure();
      lowering.planSlots(estimates);
    }
    // Drop every gnn function; the lowered ones take their names.
    for (auto f : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (!f.isExternal() && !f.getSymName().ends_with("_lowered") &&
          !f.getSymName().starts_with(kKernelPrefix))
        f.erase();
    for (auto f : module.getOps<func::FuncOp>())
      if (f.getSymName().ends_with("_lowered"))
        f.setSymName(f.getSymName().drop_back(strlen("_lowered")));

    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    info.push_back('\0');
    auto arrayType = LLVM::LLVMArrayType::get(mb.getI8Type(), info.size());
    mb.create<LLVM::GlobalOp>(module.getLoc(), arrayType, /*isConstant=*/true,
                              LLVM::Linkage::External, kModelInfo,
                              mb.getStringAttr(info));
  }
};

} // namespace
