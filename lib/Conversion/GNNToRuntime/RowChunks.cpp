//===- RowChunks.cpp - a step over the vertices in row chunks -------------===//

#include "RowChunks.h"

#include "gnnrt/GNNRuntime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

#include <functional>

using namespace mlir;
using namespace mlir::gnn;

namespace {

/// How an op of a step takes part in its chunks.
enum class Role {
  Shared,    // computed once and read by every chunk (a take, a pure call)
  Repeated,  // cloned into every chunk as it is (kernel arguments, index math)
  RowKernel, // gnnrtParallelFor over the vertices
  RowGemm,   // gnnrtGemm over the vertices (its A and C are row operands)
  SumGemm,   // gnnrtGemm summing over the vertices (A^T B: A and B rows)
  RowSpmm,   // gnnrtSpmm: its output rows, from the whole input
  RowSum,    // gnnrtSumRows over the vertices: added up over the chunks
  RowSumOfParts, // gnnrtSumRows over a stage's partial sums, one per
                 // ceil(V / C) row groups of C rows
  RowLoss,       // gnnrtSoftmaxCrossEntropy: the chunks' shares added up
  RowLoop,       // a loop in the function over the rows, each its own row only
  RowBroadcast,  // gnnrtSpmmBroadcast: its first output rows (a level's)
  RowStages,     // a kernel's broadcast stages (markStageLoop): the same
};

/// The call's entry point, if `op` calls one.
std::optional<rt::Call> calleeOf(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call)
    return std::nullopt;
#define GNNRT_CALL(Name, ...)                                                  \
  if (call.getCallee() == rt::getName(rt::Call::Name))                         \
    return rt::Call::Name;
#include "gnn/Conversion/GNNToRuntime/RuntimeCalls.def"
  return std::nullopt;
}

/// Whether i64 `v` is the vertex count (index_cast of `numV`).
bool isVertexCount(Value v, Value numV) {
  auto cast = v.getDefiningOp<arith::IndexCastOp>();
  return cast && cast.getIn() == numV;
}

/// C, when i64 `v` is ceil(V / C) (index_cast of (numV + C - 1) / C): the
/// row groups of a stage's partial sums (StageLowering's reductions).
std::optional<int64_t> rowGroupOf(Value v, Value numV) {
  auto cast = v.getDefiningOp<arith::IndexCastOp>();
  auto div = cast ? cast.getIn().getDefiningOp<arith::DivUIOp>() : nullptr;
  auto add = div ? div.getLhs().getDefiningOp<arith::AddIOp>() : nullptr;
  if (!add || add.getLhs() != numV)
    return std::nullopt;
  std::optional<int64_t> c = getConstantIntValue(div.getRhs());
  std::optional<int64_t> up = getConstantIntValue(add.getRhs());
  if (!c || !up || *c < 1 || *up != *c - 1 || GNNRT_PARALLEL_CHUNK % *c != 0)
    return std::nullopt;
  return c;
}

bool isZero(Value v) {
  auto c = v.getDefiningOp<arith::ConstantIntOp>();
  return c && c.value() == 0;
}

/// The op's role, or nothing when the step cannot run in chunks.
std::optional<Role> roleOf(Operation *op, Value numV) {
  if (std::optional<rt::Call> callee = calleeOf(op)) {
    switch (*callee) {
    case rt::Call::gnnrtBuffer:
    case rt::Call::gnnrtBufferI32:
    case rt::Call::gnnrtDropoutParam:
    case rt::Call::gnnrtVertexIds:
    case rt::Call::gnnrtDim:
    case rt::Call::gnnrtParam:
    case rt::Call::gnnrtGrad:
    case rt::Call::gnnrtUseGraph:   // the graph of the step, before its chunks
    case rt::Call::gnnrtStageCount: // a staged kernel's stages (queries)
    case rt::Call::gnnrtStageStart:
    case rt::Call::gnnrtStageLevelEnd:
    case rt::Call::gnnrtCheckTypes: // the edge types a fused gather reads
      return Role::Shared;
    case rt::Call::gnnrtKernelArg:
    case rt::Call::gnnrtKernelArgI32:
    case rt::Call::gnnrtKernelInt:
      return Role::Repeated;
    case rt::Call::gnnrtParallelFor: {
      // Over the vertices; a kernel over one row (parameters only) computes
      // the same in every chunk.
      Value n = op->getOperand(2);
      if (isVertexCount(n, numV))
        return Role::RowKernel;
      if (auto cast = n.getDefiningOp<arith::IndexCastOp>())
        n = cast.getIn();
      if (getConstantIntValue(n) == 1)
        return Role::Repeated;
      return std::nullopt;
    }
    case rt::Call::gnnrtGemm:
      // C[m, n] = A[m, k] op(B): rows of A and C, B whole.
      if (isZero(op->getOperand(1)) && isVertexCount(op->getOperand(3), numV))
        return Role::RowGemm;
      // C[m, n] = A[k, m]^T B[k, n] summed over k = the vertices (an outer
      // sum): rows of A and B, C accumulated.
      if (!isZero(op->getOperand(1)) && isZero(op->getOperand(2)) &&
          isVertexCount(op->getOperand(5), numV))
        return Role::SumGemm;
      return std::nullopt;
    case rt::Call::gnnrtSpmm:
      return Role::RowSpmm;
    case rt::Call::gnnrtSpmmBroadcast:
      return Role::RowBroadcast;
    case rt::Call::gnnrtSumRows:
      if (isVertexCount(op->getOperand(1), numV))
        return Role::RowSum;
      if (rowGroupOf(op->getOperand(1), numV))
        return Role::RowSumOfParts;
      return std::nullopt;
    case rt::Call::gnnrtSoftmaxCrossEntropy:
      return Role::RowLoss;
    default:
      return std::nullopt;
    }
  }
  if (isa<func::CallOp>(op))
    return std::nullopt;
  // A loop in the function: over the vertices when it is marked as reading
  // and writing only each iteration's row, else only over constant bounds
  // (one unbatched row).
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    if (loop->hasAttr(kStageLoopAttr))
      return Role::RowStages;
    if (loop->hasAttr(kOwnRowLoopAttr) && loop.getUpperBound() == numV &&
        getConstantIntValue(loop.getLowerBound()) == 0 &&
        getConstantIntValue(loop.getStep()) == 1)
      return Role::RowLoop;
    if (!getConstantIntValue(loop.getLowerBound()) ||
        !getConstantIntValue(loop.getUpperBound()))
      return std::nullopt;
    return Role::Repeated;
  }
  if (op->getNumRegions() > 0)
    return std::nullopt;
  // Loads and stores in the function: of its own scratch, or at constant
  // positions (a constant's one row, a parameter's element). One at a row
  // computed in the function could be outside the chunk, unknown to the
  // placement: the step stays whole.
  auto fixed = [](Value memref, ValueRange indices) {
    return memref.getDefiningOp<memref::AllocaOp>() ||
           llvm::all_of(indices,
                        [](Value i) { return getConstantIntValue(i); });
  };
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return fixed(load.getMemRef(), load.getIndices())
               ? std::optional(Role::Repeated)
               : std::nullopt;
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return fixed(store.getMemRef(), store.getIndices())
               ? std::optional(Role::Repeated)
               : std::nullopt;
  if (isa<arith::ArithDialect>(op->getDialect()) || isa<func::ConstantOp>(op) ||
      isa<memref::AllocaOp, memref::CastOp>(op))
    return Role::Repeated;
  return std::nullopt;
}

} // namespace

static constexpr StringLiteral kAllRowsAttr = "gnn.all_rows";
static constexpr StringLiteral kNeighbourRowsAttr = "gnn.neighbour_rows";
static constexpr StringLiteral kInputChunkAttr = "gnn.input_chunk";
static constexpr StringLiteral kTileIntsAttr = "gnn.tile_ints";
static constexpr StringLiteral kTileResetAttr = "gnn.tile_reset";
static constexpr StringLiteral kTileSideAttr = "gnn.tile_side";
static constexpr StringLiteral kTileLaunchAttr = "gnn.tile_launch";
static constexpr StringLiteral kEdgeChunksAttr = "gnn.edge_chunks";

void mlir::gnn::markStageLoop(Operation *loop) {
  loop->setAttr(kStageLoopAttr, UnitAttr::get(loop->getContext()));
}

void mlir::gnn::markEdgeChunks(Operation *take) {
  take->setAttr(kEdgeChunksAttr, UnitAttr::get(take->getContext()));
}

bool mlir::gnn::isEdgeChunked(Operation *take) {
  return take->hasAttr(kEdgeChunksAttr);
}

void mlir::gnn::finishRowChunks(ModuleOp module) {
  module.walk([](func::FuncOp fn) {
    if (fn.isExternal())
      return;
    // The kernel buffers a tile sets again where they are set already (the
    // same index to the same memref: no fetch took the buffer again since).
    DenseMap<std::pair<int64_t, int64_t>, Value> set; // (i32?, index)
    for (Operation &op : llvm::make_early_inc_range(fn.getBody().front())) {
      std::optional<rt::Call> callee = calleeOf(&op);
      if (callee != rt::Call::gnnrtKernelArg &&
          callee != rt::Call::gnnrtKernelArgI32)
        continue;
      std::optional<int64_t> index = getConstantIntValue(op.getOperand(1));
      if (!index) {
        set.clear();
        continue;
      }
      std::pair<int64_t, int64_t> key{
          callee == rt::Call::gnnrtKernelArgI32 ? 1 : 0, *index};
      if (op.hasAttr(kTileResetAttr) && set.lookup(key) == op.getOperand(2)) {
        op.erase();
        continue;
      }
      set[key] = op.getOperand(2);
    }
  });
  module.walk([](Operation *op) {
    for (StringRef name :
         {kAllRowsAttr, kNeighbourRowsAttr, kInputChunkAttr, kTileIntsAttr,
          kTileResetAttr, kTileSideAttr, kTileLaunchAttr, kOwnRowLoopAttr,
          kStageLoopAttr, kEdgeChunksAttr})
      op->removeAttr(name);
  });
}

void mlir::gnn::markReadsAllRows(Operation *kernelArg) {
  kernelArg->setAttr(kAllRowsAttr, UnitAttr::get(kernelArg->getContext()));
}

void mlir::gnn::markReadsAllRows(Operation *launch,
                                 ArrayRef<int32_t> operands) {
  launch->setAttr(kAllRowsAttr,
                  DenseI32ArrayAttr::get(launch->getContext(), operands));
}

void mlir::gnn::markNeighbourRows(Operation *kernelArg) {
  kernelArg->setAttr(kNeighbourRowsAttr,
                     UnitAttr::get(kernelArg->getContext()));
}

void mlir::gnn::markTiledLaunch(Operation *launch, int64_t loInt, int64_t hiInt,
                                int64_t side, bool inOrder) {
  launch->setAttr(kTileIntsAttr,
                  DenseI64ArrayAttr::get(launch->getContext(),
                                         {loInt, hiInt, side, inOrder}));
}

std::optional<TileLaunch> mlir::gnn::tileLaunchOf(Operation *op) {
  auto ints = op->getAttrOfType<DenseI64ArrayAttr>(kTileLaunchAttr);
  if (!ints || ints.size() != 4 ||
      calleeOf(op) != rt::Call::gnnrtParallelForRange)
    return std::nullopt;
  return TileLaunch{ints[0], ints[1], ints[2], ints[3] != 0};
}

/// The input chunk of a tile's call (set by chunkStageRows).
static std::optional<int64_t> tileOf(Operation *op) {
  if (auto chunk = op->getAttrOfType<IntegerAttr>(kInputChunkAttr))
    return chunk.getInt();
  return std::nullopt;
}

static void setTile(Operation *op, int64_t tile) {
  op->setAttr(kInputChunkAttr,
              IntegerAttr::get(IntegerType::get(op->getContext(), 64), tile));
}

/// Whether `use` reads its operand at the other ends of the edges: an
/// aggregation's input (gnnrtSpmmRows(ctx, side, mean, weights, in, out,
/// width, begin, end, inBegin, inEnd)), a fused gather's neighbour-side
/// operand.
static bool readsNeighbours(OpOperand &use) {
  Operation *user = use.getOwner();
  if (calleeOf(user) == rt::Call::gnnrtSpmmRows)
    return use.getOperandNumber() == 4;
  return user->hasAttr(kNeighbourRowsAttr);
}

std::optional<int64_t> mlir::gnn::inputChunkOf(OpOperand &use) {
  return readsNeighbours(use) ? tileOf(use.getOwner()) : std::nullopt;
}

std::optional<int64_t> mlir::gnn::tileSideOf(OpOperand &use) {
  if (!inputChunkOf(use))
    return std::nullopt;
  Operation *user = use.getOwner();
  if (calleeOf(user) == rt::Call::gnnrtSpmmRows)
    return getConstantIntValue(user->getOperand(1));
  if (auto side = user->getAttrOfType<IntegerAttr>(kTileSideAttr))
    return side.getInt();
  return std::nullopt;
}

bool mlir::gnn::readsAllRows(OpOperand &use) {
  Operation *user = use.getOwner();
  if (readsNeighbours(use))
    return !tileOf(user);
  if (calleeOf(user) == rt::Call::gnnrtSpmmRows)
    return use.getOperandNumber() == 3; // the edge weights
  Attribute mark = user->getAttr(kAllRowsAttr);
  if (auto operands = dyn_cast_or_null<DenseI32ArrayAttr>(mark))
    return llvm::is_contained(operands.asArrayRef(),
                              static_cast<int32_t>(use.getOperandNumber()));
  return static_cast<bool>(mark);
}

SmallVector<RowChunkStart> mlir::gnn::chunkStageRows(
    Block &block, Operation *before, Operation *last, int64_t chunks,
    LoweringBuilder &lb, DenseMap<Value, Value> &replaced,
    const RowRange *range, bool *refused, Operation **refusedBy) {
  if (refused)
    *refused = false;
  if (refusedBy)
    *refusedBy = nullptr;
  if ((range ? chunks != 1 : chunks < 2) || !last || last == before)
    return {};
  Operation *first = before ? before->getNextNode() : &block.front();
  SmallVector<Operation *> code;
  SmallVector<Role> roles;
  bool rowWork = false;
  for (Operation *op = first;; op = op->getNextNode()) {
    std::optional<Role> role = roleOf(op, lb.sizes.numV);
    // The staged sums of a split graph restrict only to a level's first
    // rows (gnnrtSpmmBroadcastRows), not to row chunks.
    if (!role ||
        ((*role == Role::RowBroadcast || *role == Role::RowStages) && !range)) {
      if (refused)
        *refused = true;
      if (refusedBy)
        *refusedBy = op;
      return {};
    }
    rowWork |= *role != Role::Shared && *role != Role::Repeated;
    code.push_back(op);
    roles.push_back(*role);
    if (op == last)
      break;
  }
  if (!rowWork)
    return {};
  // Row-column order (lb.rowColumnTiles): where the step's only work over
  // the rows is one aggregation, each chunk runs its first tile in place
  // and the others follow the last chunk, input chunk by input chunk (tile
  // 1 of every chunk, then tile 2, ...), so that the input chunk stays
  // while the output chunks stream. A row still adds its tiles in input
  // order, so the floats are the same. Not with a range (one tile), nor
  // with the graph out of core (its windows hold a chunk's edges: each
  // tile would read them again).
  bool rowColumn = false;
  if (lb.rowColumnTiles && !range && !lb.graphOutOfCore) {
    int64_t rowOps = 0, aggregations = 0;
    // A runtime call after the aggregation (a kernel's settings, which are
    // the context's, not the kernel's) would run before the deferred tiles.
    bool callsAfter = false;
    for (auto [op, role] : llvm::zip(code, roles)) {
      if (role == Role::Shared || role == Role::Repeated) {
        callsAfter |= aggregations > 0 && calleeOf(op).has_value();
        continue;
      }
      ++rowOps;
      if (role == Role::RowSpmm ||
          (role == Role::RowKernel && op->hasAttr(kTileIntsAttr)))
        ++aggregations;
    }
    rowColumn = rowOps == 1 && aggregations == 1 && !callsAfter;
  }

  // The boundaries (gnnrtChunkRowBound in IR), before the code: b_k =
  // floor(floor(k V / K) / chunk) * chunk, b_0 = 0, b_K = V.
  OpBuilder &b = lb.b;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(first);
  Location loc = lb.loc;
  Value numV = lb.sizes.numV;
  SmallVector<Value> bounds{lb.cI64(0)};
  Value v64 = lb.toI64(numV);
  for (int64_t k = 1; k < chunks; ++k) {
    Value at =
        b.create<arith::DivUIOp>(loc, lb.mul(v64, lb.cI64(k)), lb.cI64(chunks));
    Value align = lb.cI64(GNNRT_PARALLEL_CHUNK);
    bounds.push_back(
        lb.mul(b.create<arith::DivUIOp>(loc, at, align).getResult(), align));
  }
  bounds.push_back(range ? lb.toI64(range->rows) : v64);
  // The tiles' input ranges: the chunks', or a range's one tile.
  SmallVector<Value> inBounds = bounds;
  if (range)
    // Without an input range every input row: the sources, which on a
    // partitioned program's own rows' graph are every vertex (S > V).
    inBounds = {bounds.front(), range->inputs ? lb.toI64(range->inputs)
                                              : lb.toI64(lb.sizes.numS)};
  SmallVector<Operation *> starts{bounds.front().getDefiningOp()};

  // Chunks 1..K-1: clones after the stage's code (shared ops not cloned).
  SmallVector<SmallVector<std::pair<Operation *, Role>>> copies(chunks);
  for (auto [op, role] : llvm::zip(code, roles))
    copies[0].push_back({op, role});
  Operation *end = last;
  for (int64_t k = 1; k < chunks; ++k) {
    IRMapping map;
    b.setInsertionPointAfter(end);
    for (auto [op, role] : llvm::zip(code, roles)) {
      if (role == Role::Shared)
        continue;
      Operation *clone = b.clone(*op, map);
      copies[k].push_back({clone, role});
      end = clone;
    }
    starts.push_back(copies[k].front().first);
  }

  // The sub-steps the chunks' tiles start (after each chunk's first).
  SmallVector<SmallVector<RowChunkStart>> tiles(chunks);
  auto lastCreated = [&] { return &*std::prev(b.getInsertionPoint()); };
  // What the next op created starts: the op after the insertion point's.
  auto nextCreated = [&](Operation *before) {
    return before ? before->getNextNode() : &block.front();
  };
  auto beforeInsertion = [&]() -> Operation * {
    return b.getInsertionPoint() == b.getInsertionBlock()->begin()
               ? nullptr
               : &*std::prev(b.getInsertionPoint());
  };
  // In row-column order, the tiles after each chunk's first, by input
  // chunk, in chunk order: each emits its tile at the insertion point and
  // returns its first op. They go after the step's last op.
  Operation *afterStep = end->getNextNode();
  SmallVector<SmallVector<std::pair<int64_t, std::function<Operation *()>>>>
      later(chunks);
  // Each copy restricted to its rows; the loss's shares, to add up.
  // The j-th loss of each copy: the original call and every share.
  SmallVector<std::pair<Operation *, SmallVector<Value>>> shares;
  for (int64_t k = 0; k < chunks; ++k) {
    Value begin = bounds[k], stop = bounds[k + 1];
    unsigned losses = 0;
    // The buffers of the next kernel (set since the last launch).
    SmallVector<Operation *> kernelArgs;
    // Rewrites `op` before its place (ops before it are final).
    auto rewrite = [&](Operation *op, Role role) {
      b.setInsertionPoint(op);
      if (role == Role::RowLoop) {
        auto loop = cast<scf::ForOp>(op);
        loop.getLowerBoundMutable().assign(
            b.create<arith::IndexCastOp>(loc, b.getIndexType(), begin));
        loop.getUpperBoundMutable().assign(
            b.create<arith::IndexCastOp>(loc, b.getIndexType(), stop));
        return;
      }
      if (role == Role::RowKernel && !op->hasAttr(kTileIntsAttr)) {
        lb.call(rt::Call::gnnrtParallelForRange,
                {op->getOperand(0), op->getOperand(1), begin, stop});
        op->erase();
        return;
      }
      if (role == Role::RowLoss) {
        // gnnrtSoftmaxCrossEntropy(ctx, logits, grad, classes, split).
        Value share =
            lb.call(rt::Call::gnnrtSoftmaxCrossEntropyRows,
                    {op->getOperand(0), op->getOperand(1), op->getOperand(2),
                     op->getOperand(3), op->getOperand(4), begin, stop});
        if (k == 0)
          shares.push_back({op, {}});
        shares[losses++].second.push_back(share);
        if (k > 0)
          op->erase(); // the original goes once the sum stands for it
        return;
      }
      if (role == Role::RowBroadcast) {
        // gnnrtSpmmBroadcast(ctx, mean, weights, in, out, width): a range
        // starts at row 0; its edges read the level before's sources.
        SmallVector<Value> args(op->getOperands());
        args.push_back(stop);
        args.push_back(lb.cI64(std::max<int64_t>(range->level - 1, 0)));
        lb.call(rt::Call::gnnrtSpmmBroadcastRows, args);
        op->erase();
        return;
      }
      if (role == Role::RowStages) {
        // The kernel over the level's rows; the stages' rows of the sources'
        // level (gnnrtStageRows(ctx, own, width, stage, level)).
        Value level = lb.cI64(std::max<int64_t>(range->level - 1, 0));
        for (Operation &inner : llvm::make_early_inc_range(
                 cast<scf::ForOp>(op).getBody()->without_terminator())) {
          std::optional<rt::Call> callee = calleeOf(&inner);
          if (callee == rt::Call::gnnrtStageRows) {
            inner.setOperand(4, level);
          } else if (callee == rt::Call::gnnrtParallelFor) {
            b.setInsertionPoint(&inner);
            lb.call(rt::Call::gnnrtParallelForRange,
                    {inner.getOperand(0), inner.getOperand(1), begin, stop});
            inner.erase();
          }
        }
        return;
      }
      if (role == Role::RowSpmm) {
        // gnnrtSpmm(ctx, side, mean, chunks, weights, in, out, width): a
        // tile per input chunk.
        if (lb.graphOutOfCore)
          lb.call(rt::Call::gnnrtGraphWindow,
                  {op->getOperand(0), op->getOperand(1), begin, stop});
        SmallVector<Value> args{op->getOperand(0),
                                op->getOperand(1),
                                op->getOperand(2),
                                op->getOperand(4),
                                op->getOperand(5),
                                op->getOperand(6),
                                op->getOperand(7),
                                begin,
                                stop};
        auto emitTile = [&, args](int64_t i) {
          SmallVector<Value> tileArgs = args;
          tileArgs.push_back(inBounds[i]);
          tileArgs.push_back(inBounds[i + 1]);
          lb.call(rt::Call::gnnrtSpmmRows, tileArgs);
          Operation *tile = lastCreated();
          setTile(tile, i);
          return tile;
        };
        for (int64_t i = 0; i < chunks; ++i) {
          if (i > 0 && rowColumn) {
            later[i].push_back({k, [emitTile, i] { return emitTile(i); }});
            continue;
          }
          Operation *tile = emitTile(i);
          if (i > 0)
            tiles[k].push_back({tile, k, i});
        }
        op->erase();
        return;
      }
      if (role == Role::RowKernel && op->hasAttr(kTileIntsAttr)) {
        // A fused gather's kernel: per input chunk, its buffers set again
        // (the tile's uses, for the placement: the neighbour-side ones at
        // the tile's input chunk), the tile's input range, the launch over
        // the chunk's rows.
        ArrayRef<int64_t> ints =
            op->getAttrOfType<DenseI64ArrayAttr>(kTileIntsAttr).asArrayRef();
        if (lb.graphOutOfCore)
          lb.call(rt::Call::gnnrtGraphWindow,
                  {op->getOperand(0), lb.cI64(ints[2]), begin, stop});
        Value kernel = op->getOperand(0), count = op->getOperand(1);
        auto emitTile = [&, args = kernelArgs, kernel, count, begin, stop,
                         ints = SmallVector<int64_t, 4>(ints)](int64_t i) {
          Operation *prev = beforeInsertion();
          for (Operation *arg : args) {
            Operation *use = i == 0 ? arg : b.clone(*arg);
            if (i > 0)
              use->setAttr(kTileResetAttr, b.getUnitAttr());
            if (use->hasAttr(kNeighbourRowsAttr)) {
              setTile(use, i);
              use->setAttr(kTileSideAttr, b.getI64IntegerAttr(ints[2]));
            }
          }
          lb.call(rt::Call::gnnrtKernelInt,
                  {kernel, lb.cI64(ints[0]), inBounds[i]});
          lb.call(rt::Call::gnnrtKernelInt,
                  {kernel, lb.cI64(ints[1]), inBounds[i + 1]});
          lb.call(rt::Call::gnnrtParallelForRange,
                  {kernel, count, begin, stop});
          lastCreated()->setAttr(kTileLaunchAttr, b.getDenseI64ArrayAttr(ints));
          return nextCreated(prev);
        };
        for (int64_t i = 0; i < chunks; ++i) {
          if (i > 0 && rowColumn) {
            later[i].push_back({k, [emitTile, i] { return emitTile(i); }});
            continue;
          }
          Operation *start = emitTile(i);
          if (i > 0)
            tiles[k].push_back({start, k, i});
        }
        op->erase();
        return;
      }
      // gnnrtGemm(ctx, tA, tB, m, n, k, alpha, A, B, beta, C).
      Value rows = b.create<arith::SubIOp>(loc, stop, begin);
      auto rangeOf = [&](Value buf, Value width) {
        return lb.call(rt::Call::gnnrtView,
                       {op->getOperand(0), buf, lb.mul(begin, width),
                        lb.mul(rows, width)});
      };
      if (role == Role::RowGemm) {
        Value a = rangeOf(op->getOperand(7), op->getOperand(5));
        Value c = rangeOf(op->getOperand(10), op->getOperand(4));
        op->setOperand(3, rows);
        op->setOperand(7, a);
        op->setOperand(10, c);
        return;
      }
      if (role == Role::RowSum || role == Role::RowSumOfParts) {
        // gnnrtSumRows(ctx, rows, width, in, out): chunk k adds its rows,
        // or of a stage's partial sums per group of C rows the groups of
        // its rows (chunks start at multiples of GNNRT_PARALLEL_CHUNK, a
        // multiple of C): [begin / C, ceil(stop / C)).
        Value first = begin, count = rows;
        if (role == Role::RowSumOfParts) {
          const int64_t c = *rowGroupOf(op->getOperand(1), numV);
          first = b.create<arith::DivUIOp>(loc, begin, lb.cI64(c));
          Value last = b.create<arith::DivUIOp>(
              loc, b.create<arith::AddIOp>(loc, stop, lb.cI64(c - 1)),
              lb.cI64(c));
          count = b.create<arith::SubIOp>(loc, last, first);
        }
        Value in =
            lb.call(rt::Call::gnnrtView, {op->getOperand(0), op->getOperand(3),
                                          lb.mul(first, op->getOperand(2)),
                                          lb.mul(count, op->getOperand(2))});
        lb.call(k == 0 ? rt::Call::gnnrtSumRows : rt::Call::gnnrtSumRowsAdd,
                {op->getOperand(0), count, op->getOperand(2), in,
                 op->getOperand(4)});
        op->erase();
        return;
      }
      // SumGemm: chunk k adds its rows' A^T B to C (the first sets it).
      Value a = rangeOf(op->getOperand(7), op->getOperand(3));
      Value bv = rangeOf(op->getOperand(8), op->getOperand(4));
      op->setOperand(5, rows);
      op->setOperand(7, a);
      op->setOperand(8, bv);
      if (k > 0)
        op->setOperand(9, lb.cF32(1.0));
    };
    for (auto [op, role] : copies[k]) {
      if (role == Role::Shared || role == Role::Repeated) {
        std::optional<rt::Call> callee = calleeOf(op);
        if (callee == rt::Call::gnnrtKernelArg ||
            callee == rt::Call::gnnrtKernelArgI32)
          kernelArgs.push_back(op);
        else if (callee == rt::Call::gnnrtParallelFor)
          kernelArgs.clear(); // a kernel over one row took them
        continue;
      }
      // A chunk's code starts at what its first op became.
      Operation *prev = op->getPrevNode();
      const bool opensChunk = starts[k] == op;
      rewrite(op, role);
      if (role == Role::RowKernel)
        kernelArgs.clear();
      if (opensChunk)
        starts[k] = prev ? prev->getNextNode() : &block.front();
    }
  }

  // The loss: the sum of the shares, after the last chunk's.
  for (auto &[original, parts] : shares) {
    b.setInsertionPointAfter(parts.back().getDefiningOp());
    Value total = parts.front();
    for (Value part : ArrayRef(parts).drop_front())
      total = b.create<arith::AddFOp>(loc, total, part);
    original->getResult(0).replaceAllUsesWith(total);
    replaced[original->getResult(0)] = total;
    original->erase();
  }
  SmallVector<RowChunkStart> result;
  for (int64_t k = 0; k < chunks; ++k) {
    result.push_back({starts[k], k, 0});
    llvm::append_range(result, tiles[k]);
  }
  if (rowColumn) {
    if (afterStep)
      b.setInsertionPoint(afterStep);
    else
      b.setInsertionPointToEnd(&block);
    for (int64_t i = 1; i < chunks; ++i)
      for (auto &[k, emit] : later[i])
        result.push_back({emit(), k, i});
    ++lb.rowColumnSteps;
  }
  return result;
}
