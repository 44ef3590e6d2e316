//===- GPUKernelEmitter.cpp - kernels as gpu.func over a grid -------------===//
//
// The CUDA target's kernels (`target=cuda`): each kernel is a `gpu.func` in
// the module's `gpu.module @gnn_kernels`, launched with `gpu.launch_func`
// over a grid of 256-thread blocks. Thread t takes row t, or, in a kernel
// that writes per-chunk partial sums (needChunkedRows), the rows [32 t,
// min(32 t + 32, n)): the GNNRT_PARALLEL_CHUNK rows that one gnnrtParallelFor
// call takes on the CPU, so those partials are the CPU's. (The dropout masks
// depend on the element only.) The operands the host sets become the
// kernel's parameters, added as the body asks for them (the graph's arrays
// too: the host gets them with gnnrtGraphOffsets / gnnrtGraphIndex and passes
// them); `n` is the last parameter.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"
#include "RowChunks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include "gnnrt/GNNRuntime.h"

using namespace mlir;
using namespace mlir::gnn;

namespace {
constexpr llvm::StringLiteral kKernelPrefix = "__gnn_kernel_";
constexpr llvm::StringLiteral kKernelModule = "gnn_kernels";
constexpr int64_t kThreadsPerBlock = 256;

/// The module's gpu.module of kernels, made (and the module marked a GPU
/// container) on first use.
gpu::GPUModuleOp kernelModuleOf(ModuleOp module, Location loc) {
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModule))
    return existing;
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(module.getContext()));
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  return mb.create<gpu::GPUModuleOp>(loc, kKernelModule);
}

/// The number after the highest of the kernels `gm` already has.
int64_t nextKernelNumber(gpu::GPUModuleOp gm) {
  int64_t next = 0;
  for (auto fn : gm.getOps<gpu::GPUFuncOp>()) {
    int64_t k;
    StringRef name = fn.getName();
    if (name.consume_front(kKernelPrefix) && !name.getAsInteger(10, k))
      next = std::max(next, k + 1);
  }
  return next;
}

/// Kernel `number` of `gm`, of type `type`, with an empty entry block.
gpu::GPUFuncOp createKernel(gpu::GPUModuleOp gm, int64_t number,
                            FunctionType type, Location loc) {
  OpBuilder mb = OpBuilder::atBlockTerminator(gm.getBody());
  auto kernel = mb.create<gpu::GPUFuncOp>(
      loc, (kKernelPrefix + Twine(number)).str(), type);
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                  UnitAttr::get(gm.getContext()));
  return kernel;
}

/// The thread's index in the grid (block id x block size + thread id).
Value globalThread(OpBuilder &b, Location loc) {
  // One op per statement: the IR's order does not depend on the order the
  // compiler evaluates arguments in.
  Value block = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value size = b.create<gpu::BlockDimOp>(loc, gpu::Dimension::x);
  Value thread = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  return b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, block, size),
                                 thread);
}

/// Ends the kernel body at `b` with `scf.if (cond) {...}; gpu.return` and
/// moves `b` into the `if`.
void enterGuard(OpBuilder &b, Location loc, Value cond) {
  auto guard = b.create<scf::IfOp>(loc, cond, /*withElseRegion=*/false);
  b.create<gpu::ReturnOp>(loc);
  b.setInsertionPoint(guard.thenBlock()->getTerminator());
}

/// Launches `kernel` with `args` on `threads` threads (an index value) in
/// blocks of kThreadsPerBlock, at least one block.
gpu::LaunchFuncOp launchKernel(OpBuilder &b, Location loc,
                               gpu::GPUFuncOp kernel, Value threads,
                               ValueRange args) {
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value perBlock = b.create<arith::ConstantIndexOp>(loc, kThreadsPerBlock);
  Value blocks = b.create<arith::MaxSIOp>(
      loc, b.create<arith::CeilDivSIOp>(loc, threads, perBlock), one);
  return b.create<gpu::LaunchFuncOp>(loc, kernel,
                                     gpu::KernelDim3{blocks, one, one},
                                     gpu::KernelDim3{perBlock, one, one},
                                     /*dynamicSharedMemorySize=*/Value(), args);
}

class GPUKernelEmitter final : public KernelEmitter {
public:
  GPUKernelEmitter(ModuleOp module, LoweringBuilder &lb)
      : module(module), lb(lb) {}

  void setBuffer(int64_t index, Value memref, RowAccess access) override {
    bool i32 =
        cast<MemRefType>(memref.getType()).getElementType().isInteger(32);
    (i32 ? hostI32 : hostF32)[index] = memref;
    // GPU kernels run whole (no tiles): neighbours are any row.
    if (access != RowAccess::Own)
      allRows.insert(memref);
  }
  void setInt(int64_t index, Value value) override {
    if (value.getType().isIndex())
      value = lb.toI64(value);
    hostInts[index] = value;
  }

  void needChunkedRows() override { chunkedRows = true; }
  void allowLanesPerRow() override { warpRows = true; }
  Value lane() override { return laneValue; }
  int64_t lanes() override { return laneValue ? kWarpLanes : 1; }
  Value sumOverLanes(OpBuilder &ob, Value x) override {
    if (!laneValue)
      return x;
    // A butterfly: after the step with offset s every lane holds the sum
    // over its group of 2 s lanes; after s = 16 over the warp.
    for (int32_t s = kWarpLanes / 2; s > 0; s /= 2) {
      Value other = ob.create<gpu::ShuffleOp>(lb.loc, x, s, kWarpLanes,
                                              gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      x = ob.create<arith::AddFOp>(lb.loc, x, other);
    }
    return x;
  }
  void begin() override;
  Value getBuffer(int64_t index, bool isI32) override {
    auto &host = isI32 ? hostI32 : hostF32;
    auto it = host.find(index);
    assert(it != host.end() && "a kernel buffer the host did not set");
    return parameter(it->second);
  }
  Value getInt(int64_t index) override {
    auto it = hostInts.find(index);
    assert(it != hostInts.end() && "a kernel integer the host did not set");
    return parameter(it->second);
  }
  Value rangeBegin() override { return rowsBegin; }
  Value rangeEnd() override { return rowsEnd; }
  Value graphOffsets(int64_t side) override {
    return parameter(onHost([&] {
      return lb.call(rt::Call::gnnrtGraphOffsets, {lb.ctx, lb.cI64(side)});
    }));
  }
  Value graphIndex(int64_t which) override {
    return parameter(onHost([&] {
      return lb.call(rt::Call::gnnrtGraphIndex, {lb.ctx, lb.cI64(which)});
    }));
  }
  Value graphLongRows(int64_t side, int64_t which) override {
    return parameter(onHost([&] {
      return lb.call(rt::Call::gnnrtGraphLongRows,
                     {lb.ctx, lb.cI64(side), lb.cI64(which)});
    }));
  }
  Value graphPieceOffsets(int64_t side) override {
    return parameter(onHost([&] {
      return lb.call(rt::Call::gnnrtGraphPieceOffsets, {lb.ctx, lb.cI64(side)});
    }));
  }
  Value graphPieceEdges(int64_t side) override {
    return parameter(onHost([&] {
      return lb.call(rt::Call::gnnrtGraphPieceEdges, {lb.ctx, lb.cI64(side)});
    }));
  }
  void launch(Value n) override;

private:
  /// The kernel's parameter carrying the host value `host` (added on first
  /// use, before `n`).
  Value parameter(Value host) {
    auto it = parameters.find(host);
    if (it != parameters.end())
      return it->second;
    const unsigned index = kernel.getNumArguments() - 1;
    kernel.insertArgument(index, host.getType(), DictionaryAttr(), lb.loc);
    operands.push_back(host);
    Value arg = kernel.getArgument(index);
    parameters[host] = arg;
    return arg;
  }
  /// Runs `build` with the builder on the host, before the launch.
  template <typename Build>
  Value onHost(Build build) {
    OpBuilder::InsertPoint inKernel = lb.b.saveInsertionPoint();
    lb.b.restoreInsertionPoint(host);
    Value v = build();
    host = lb.b.saveInsertionPoint();
    lb.b.restoreInsertionPoint(inKernel);
    return v;
  }

  ModuleOp module;
  LoweringBuilder &lb;
  gpu::GPUFuncOp kernel;
  OpBuilder::InsertPoint host;
  llvm::DenseMap<int64_t, Value> hostF32, hostI32, hostInts;
  llvm::DenseMap<Value, Value> parameters;
  /// The host buffers the kernel reads at any row.
  llvm::DenseSet<Value> allRows;
  SmallVector<Value> operands;
  Value rowsBegin, rowsEnd;
  /// The threads launched per row (or chunk of rows).
  int64_t threadsPerRow = 1;
  /// The rows one thread of the current kernel takes: GNNRT_PARALLEL_CHUNK
  /// where it writes per-chunk partials (needChunkedRows), else 1.
  bool chunkedRows = false;
  int64_t rowsPerThread = 1;
  /// allowLanesPerRow: a warp per row, this thread's lane in it.
  bool warpRows = false;
  Value laneValue;
  /// The threads of a row under allowLanesPerRow: a warp.
  static constexpr int64_t kWarpLanes = 32;
  /// The number of the next kernel (-1: not known yet).
  int64_t nextKernel = -1;
};
} // namespace

void GPUKernelEmitter::begin() {
  gpu::GPUModuleOp gm = kernelModuleOf(module, lb.loc);
  if (nextKernel < 0)
    nextKernel = nextKernelNumber(gm);
  kernel = createKernel(
      gm, nextKernel++,
      FunctionType::get(module.getContext(), {lb.b.getI64Type()}, {}), lb.loc);
  parameters.clear();
  operands.clear();
  host = lb.b.saveInsertionPoint();

  // Thread t: rows [c t, min(c t + c, n)), nothing where c t >= n; c = 32
  // for a kernel writing per-chunk partials, else 1.
  rowsPerThread = chunkedRows ? GNNRT_PARALLEL_CHUNK : 1;
  const bool shared = warpRows && !chunkedRows;
  chunkedRows = warpRows = false;
  OpBuilder &b = lb.b;
  Location loc = lb.loc;
  b.setInsertionPointToStart(&kernel.getBody().front());
  Value n = lb.toIndex(b, kernel.getArgument(0));
  Value t = globalThread(b, loc);
  laneValue = Value();
  threadsPerRow = 1;
  if (shared) {
    // Warp w takes row w, its lanes the columns lane, lane + 32, ...
    Value width = lb.cIndex(kWarpLanes);
    laneValue = b.create<arith::RemUIOp>(loc, t, width);
    t = b.create<arith::DivUIOp>(loc, t, width);
    threadsPerRow = kWarpLanes;
  }
  Value chunk = lb.cIndex(rowsPerThread);
  rowsBegin = b.create<arith::MulIOp>(loc, t, chunk);
  rowsEnd = b.create<arith::MinSIOp>(
      loc, b.create<arith::AddIOp>(loc, rowsBegin, chunk), n);
  enterGuard(
      b, loc,
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, rowsBegin, n));
}

void GPUKernelEmitter::launch(Value n) {
  lb.b.restoreInsertionPoint(host);
  // ceil(n / c) rows (or chunks), t threads each (t lanes per row).
  Value rows =
      lb.b.create<arith::CeilDivSIOp>(lb.loc, n, lb.cIndex(rowsPerThread));
  Value threadsNeeded =
      lb.b.create<arith::MulIOp>(lb.loc, rows, lb.cIndex(threadsPerRow));
  SmallVector<Value> args(operands);
  args.push_back(lb.toI64(n));
  gpu::LaunchFuncOp op =
      launchKernel(lb.b, lb.loc, kernel, threadsNeeded, args);
  SmallVector<int32_t> readAtAnyRow;
  for (OpOperand &use : op.getKernelOperandsMutable())
    if (allRows.contains(use.get()))
      readAtAnyRow.push_back(static_cast<int32_t>(use.getOperandNumber()));
  if (!readAtAnyRow.empty())
    markReadsAllRows(op, readAtAnyRow);
  allRows.clear();
  hostF32.clear();
  hostI32.clear();
  hostInts.clear();
  kernel = nullptr;
  laneValue = Value();
}

std::unique_ptr<KernelEmitter>
gnn::createGPUKernelEmitter(ModuleOp module, LoweringBuilder &lb) {
  return std::make_unique<GPUKernelEmitter>(module, lb);
}

//===----------------------------------------------------------------------===//
// The host function's own loops, as kernels
//===----------------------------------------------------------------------===//

namespace {

/// The perfect nest of loops without loop-carried values that starts at
/// `outer`: each loop's body is the next loop (and its yield), up to the
/// first loop whose body is anything else.
SmallVector<scf::ForOp> perfectNest(scf::ForOp outer) {
  SmallVector<scf::ForOp> nest{outer};
  while (true) {
    Block *body = nest.back().getBody();
    if (!llvm::hasSingleElement(body->without_terminator()))
      break;
    auto inner = dyn_cast<scf::ForOp>(body->front());
    if (!inner || inner.getNumRegionIterArgs() != 0)
      break;
    nest.push_back(inner);
  }
  return nest;
}

/// Whether `op` (of the host function's top level) reads or writes memory
/// through a memref: such code must run on the GPU, where the buffers are.
bool touchesMemRefs(Operation *op) {
  bool touches = false;
  op->walk([&](Operation *inner) {
    if (isa<memref::LoadOp, memref::StoreOp>(inner))
      touches = true;
  });
  return touches;
}

/// Whether `op` calls a function (the runtime: host only).
bool calls(Operation *op) {
  bool any = false;
  op->walk([&](func::CallOp) { any = true; });
  return any;
}

/// Moves `op` (a loop nest or a store at the function's top level) into a
/// kernel: thread i of a grid of 256-thread blocks runs iteration i of the
/// nest's loops, taken together (a store is one iteration). The nest's
/// iterations are independent: the lowering's loops write each element
/// once (elementwise maps, row dots, broadcasts, copies).
/// The trip count of `loop` from its bounds and step as `map` maps them
/// (not negative).
Value tripCount(OpBuilder &b, Location loc, scf::ForOp loop,
                const IRMapping &map) {
  Value span =
      b.create<arith::SubIOp>(loc, map.lookupOrDefault(loop.getUpperBound()),
                              map.lookupOrDefault(loop.getLowerBound()));
  Value trip = b.create<arith::CeilDivSIOp>(
      loc, span, map.lookupOrDefault(loop.getStep()));
  return b.create<arith::MaxSIOp>(loc, trip,
                                  b.create<arith::ConstantIndexOp>(loc, 0));
}

void moveToKernel(Operation *op, gpu::GPUModuleOp gm, int64_t &nextKernel) {
  Location loc = op->getLoc();
  OpBuilder host(op);

  // The loops and their total trip count (on the host).
  SmallVector<scf::ForOp> nest;
  if (auto loop = dyn_cast<scf::ForOp>(op))
    nest = perfectNest(loop);
  Value total = host.create<arith::ConstantIndexOp>(loc, 1);
  for (scf::ForOp loop : nest)
    total = host.create<arith::MulIOp>(loc, total,
                                       tripCount(host, loc, loop, IRMapping()));

  // What the body uses from the host, constants aside (cloned inside).
  Block *body = nest.empty() ? nullptr : nest.back().getBody();
  SetVector<Value> captured;
  auto capture = [&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (!op->isAncestor(v.getParentBlock()->getParentOp()))
        captured.insert(v);
  };
  if (body)
    for (Operation &inner : body->without_terminator())
      inner.walk(capture);
  else
    capture(op);
  // The loops' bounds are read on the host only; their steps and lower
  // bounds give the induction values inside.
  for (scf::ForOp loop : nest) {
    captured.insert(loop.getLowerBound());
    captured.insert(loop.getStep());
  }
  SmallVector<Value> params;
  for (Value v : captured)
    if (!v.getDefiningOp<arith::ConstantOp>())
      params.push_back(v);

  SmallVector<Type> types;
  for (Value v : params)
    types.push_back(v.getType());
  types.push_back(host.getIndexType()); // total
  gpu::GPUFuncOp kernel = createKernel(
      gm, nextKernel++, FunctionType::get(op->getContext(), types, {}), loc);
  OpBuilder kb = OpBuilder::atBlockEnd(&kernel.getBody().front());
  IRMapping map;
  for (auto [v, arg] : llvm::zip(params, kernel.getArguments()))
    map.map(v, arg);
  for (Value v : captured)
    if (Operation *c = v.getDefiningOp<arith::ConstantOp>())
      map.map(v, kb.clone(*c)->getResult(0));
  Value n = kernel.getArgument(params.size());
  Value i = globalThread(kb, loc);
  enterGuard(kb, loc,
             kb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, i, n));
  // Iteration i: the loops' indices in mixed radix, the innermost fastest.
  // Their trip counts are recomputed in the kernel from the bounds.
  if (!nest.empty()) {
    SmallVector<Value> kernelTrips;
    for (scf::ForOp loop : nest) {
      if (!map.contains(loop.getUpperBound())) {
        // The upper bound is a parameter too.
        kernel.insertArgument(kernel.getNumArguments() - 1,
                              loop.getUpperBound().getType(), DictionaryAttr(),
                              loc);
        params.push_back(loop.getUpperBound());
        map.map(loop.getUpperBound(),
                kernel.getArgument(kernel.getNumArguments() - 2));
      }
      kernelTrips.push_back(tripCount(kb, loc, loop, map));
    }
    Value rest = i;
    for (int k = static_cast<int>(nest.size()) - 1; k >= 0; --k) {
      Value index =
          k == 0 ? rest : kb.create<arith::RemSIOp>(loc, rest, kernelTrips[k]);
      if (k > 0)
        rest = kb.create<arith::DivSIOp>(loc, rest, kernelTrips[k]);
      Value iv = kb.create<arith::AddIOp>(
          loc, map.lookup(nest[k].getLowerBound()),
          kb.create<arith::MulIOp>(loc, index, map.lookup(nest[k].getStep())));
      map.map(nest[k].getInductionVar(), iv);
    }
    for (Operation &inner : body->without_terminator())
      kb.clone(inner, map);
  } else {
    kb.clone(*op, map);
  }

  SmallVector<Value> args(params);
  args.push_back(total);
  launchKernel(host, loc, kernel, total, args);
  op->erase();
}

} // namespace

LogicalResult gnn::moveHostMemoryAccessToGPU(func::FuncOp fn) {
  gpu::GPUModuleOp gm =
      kernelModuleOf(fn->getParentOfType<ModuleOp>(), fn.getLoc());
  int64_t nextKernel = nextKernelNumber(gm);
  for (Block &block : fn.getBody())
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (!touchesMemRefs(&op))
        continue;
      if (isa<memref::LoadOp>(op) || (!isa<scf::ForOp, memref::StoreOp>(op)))
        return op.emitOpError()
               << "reads or writes a buffer in host code, which the CUDA "
                  "target cannot move to the GPU yet";
      if (calls(&op))
        return op.emitOpError() << "calls the runtime inside host code over "
                                   "buffers, which the CUDA target cannot "
                                   "move to the GPU yet";
      if (auto loop = dyn_cast<scf::ForOp>(op);
          loop && loop.getNumRegionIterArgs())
        return op.emitOpError() << "is a host loop with loop-carried values, "
                                   "which the CUDA target cannot move to the "
                                   "GPU yet";
      moveToKernel(&op, gm, nextKernel);
    }
  return success();
}
