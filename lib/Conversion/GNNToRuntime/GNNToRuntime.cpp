//===- GNNToRuntime.cpp - --convert-gnn-to-runtime ------------------------===//
//
// Lowers the functions --gnn-autodiff produced to loops over flat memrefs and
// calls into gnnrt (runtime/include/gnnrt/GNNRuntime.h), one function at a
// time (FunctionLowering), then erases the gnn functions and adds the model
// description the driver reads. The parts of the lowering and how they
// depend on each other: docs/Compiler.md, "The lowering's parts".
//
//===----------------------------------------------------------------------===//

#include "FunctionLowering.h"
#include "RowChunks.h"

#include "gnn/Conversion/Passes.h"
#include "gnn/IR/GNNOps.h"
#include "gnn/Support/DatasetMeta.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <set>

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

/// The elements of one row of an edge input (its edge data's width).
int64_t rowWidth(EdgeTensorType type) {
  int64_t width = 1;
  for (int64_t d : type.getRowShape())
    width *= d;
  return width;
}

/// The `gnnrt_model_info` text (runtime/lib/Context.h); `edgeTypes` are the
/// types of `edgeInputs`.
std::string modelInfo(func::FuncOp fn, ArrayRef<std::string> edgeInputs,
                      ArrayRef<EdgeTensorType> edgeTypes) {
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
  for (auto [name, type] : llvm::zip_equal(edgeInputs, edgeTypes))
    os << "edge " << name << " "
       << (type.getElementType().isInteger(32) ? "i32" : "f32") << " "
       << rowWidth(type) << "\n";
  auto logits = cast<VertexTensorType>(fn.getResultTypes()[1]);
  os << "classes " << (logits.hasDynamicRow() ? -1 : logits.getRowShape()[0])
     << "\n";
  return os.str();
}

/// The `hops` record of the model description: how many hops of neighbour
/// reads the longest path from the data to the results of `eval` holds, the
/// depth of the in- and out-closure a rank needs around its vertices to
/// compute their logits exactly (shared preloading, docs/Distributed.md).
/// An edge value's depth is counted from each endpoint: a scatter from the
/// source is one hop further from the destination, so that GAT's softmax
/// (scores scattered back to the edges of the vertex they were gathered to)
/// adds none; a fused gather alike. "-1 <op>" when the forward reduces over
/// all vertices (every vertex's logits then depend on every vertex).
std::string hopsRecord(int64_t hops, StringRef globalOp) {
  return globalOp.empty() ? llvm::formatv("hops {0}\n", hops).str()
                          : ("hops -1 " + globalOp + "\n").str();
}

/// The hops of `eval` (hopsRecord), -1 with `globalOp` set to the op that
/// reduces over all vertices.
int64_t modelHops(func::FuncOp eval, std::string &globalOp) {
  DenseMap<Value, int64_t> hops;
  if (Operation *global = valueHops(eval.getBody().front(), hops)) {
    globalOp = global->getName().getStringRef().str();
    return -1;
  }
  int64_t most = 0;
  for (auto &[value, h] : hops)
    most = std::max(most, h);
  return most;
}

/// The `buffer` records of the model description (`record`; `eval-buffer`:
/// the evaluation's alone): each slot's buffer sizes (the runtime keeps a
/// slot's largest), once per distinct size, as a factor times |V|, |E|, F,
/// C and chunk counts V/k, or "?" for sizes of other run-time values, which
/// the driver cannot evaluate up front.
std::string bufferRecords(ArrayRef<std::pair<int64_t, SizeKey>> sizes,
                          StringRef record = "buffer") {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::set<std::pair<int64_t, std::string>> seen;
  for (const auto &[slot, key] : sizes) {
    bool known = llvm::all_of(
        llvm::split(StringRef(key.dynamic), '*'), [](StringRef part) {
          auto [name, by] = part.split('/');
          return part.empty() || ((name == "V" || name == "E" || name == "F" ||
                                   name == "C" || name == "S") &&
                                  (by.empty() || name == "V"));
        });
    std::string expr = !known ? "?" : key.dynamic.empty() ? "1" : key.dynamic;
    if (seen.insert({slot, std::to_string(key.factor) + " " + expr}).second)
      os << record << " " << slot << " " << key.factor << " " << expr << "\n";
  }
  return os.str();
}

/// The per-edge arrays of the graph the lowered program reads (bit i:
/// gnnrtGraphIndex i: 0 src, 1 dst, 2 csrEdge, 3 csrDst; see
/// runtime/lib/CPU/Kernels.cpp): from its calls, every array when an
/// argument that selects one is not a constant.
/// With `root`, those that `root` and the functions it reaches (every
/// symbol reference: calls, kernels launched by reference) read; where a
/// reference names anything but a function, every array of the module's.
static unsigned graphArraysRead(ModuleOp module, Operation *root = nullptr) {
  unsigned mask = 1; // the sources are the dataset's CSC: always there
  auto constant = [](Value v) { return getConstantIntValue(v); };
  // The operations to walk: the module, or root's reach.
  SmallVector<Operation *> walked = {root ? root : module.getOperation()};
  if (root) {
    SymbolTable symbols(module);
    llvm::SmallPtrSet<Operation *, 16> seen = {root};
    bool unknown = false;
    for (size_t i = 0; i < walked.size() && !unknown; ++i)
      walked[i]->walk([&](Operation *op) {
        for (NamedAttribute attr : op->getAttrs()) {
          auto ref = dyn_cast<FlatSymbolRefAttr>(attr.getValue());
          if (!ref)
            continue;
          Operation *target = symbols.lookup(ref.getValue());
          auto fn = dyn_cast_or_null<func::FuncOp>(target);
          if (!fn)
            unknown = true;
          else if (!fn.isExternal() && seen.insert(fn).second)
            walked.push_back(fn);
        }
      });
    if (unknown)
      return graphArraysRead(module);
  }
  for (Operation *walkedOp : walked)
    walkedOp->walk([&](func::CallOp call) {
    StringRef callee = call.getCallee();
    auto side = [&](unsigned operand) -> std::optional<int64_t> {
      return constant(call.getOperand(operand));
    };
    if (callee == rt::getName(rt::Call::gnnrtGraphIndex)) {
      std::optional<int64_t> which = side(1);
      mask |= which && *which >= 0 && *which < 4 ? 1u << *which : 0xFu;
    } else if (callee == rt::getName(rt::Call::gnnrtScatter)) {
      // To the edges from the sources reads src; from the destinations, the
      // CSC offsets only.
      std::optional<int64_t> s = side(1);
      mask |= !s ? 0xFu : *s == 0 ? 1u : 0u;
    } else if (callee == rt::getName(rt::Call::gnnrtGather) ||
               callee == rt::getName(rt::Call::gnnrtGatherArgBackward)) {
      // To the sources: the CSR's edge ids.
      std::optional<int64_t> s =
          side(callee == rt::getName(rt::Call::gnnrtGather) ? 2 : 1);
      mask |= !s ? 0xFu : *s == 0 ? 4u : 0u;
    } else if (callee == rt::getName(rt::Call::gnnrtSpmm) ||
               callee == rt::getName(rt::Call::gnnrtSpmmRows)) {
      // (ctx, side, mean, chunks, weights, in, out, width), and the rows'
      // (ctx, side, mean, weights, in, out, width, begin, end): to the
      // sources reads csrDst, and csrEdge for per-edge weights; to the
      // destinations, src.
      std::optional<int64_t> s = side(1);
      bool weighted = true;
      const unsigned weights =
          callee == rt::getName(rt::Call::gnnrtSpmm) ? 4 : 3;
      if (auto cast = call.getOperand(weights).getDefiningOp<memref::CastOp>())
        if (auto from = dyn_cast<MemRefType>(cast.getSource().getType()))
          weighted = !(from.hasStaticShape() && from.getNumElements() == 0);
      mask |= !s ? 0xFu : *s == 0 ? (8u | (weighted ? 4u : 0u)) : 1u;
    } else if (callee == rt::getName(rt::Call::gnnrtSpmmReduce) ||
               callee == rt::getName(rt::Call::gnnrtSpmmReduceRows)) {
      // (ctx, weights, in, out, width[, level]): to the sources, in stages.
      bool weighted = true;
      if (auto cast = call.getOperand(1).getDefiningOp<memref::CastOp>())
        if (auto from = dyn_cast<MemRefType>(cast.getSource().getType()))
          weighted = !(from.hasStaticShape() && from.getNumElements() == 0);
      mask |= 8u | (weighted ? 4u : 0u);
    }
    });
  return mask;
}

/// With the graph out of core: fails, naming the op, when a lowered step of
/// `fn` reads every edge at once (its rows not in row chunks, whose windows
/// are all of the graph a run holds): a whole aggregation, gather or
/// scatter, or a kernel launched over every row or edge that reads the
/// per-edge arrays.
static LogicalResult checkEdgesInWindows(ModuleOp module, func::FuncOp fn) {
  Operation *lowered =
      module.lookupSymbol((fn.getSymName() + "_lowered").str());
  if (!lowered)
    return success();
  auto readsEdges = [&](func::CallOp call) {
    StringRef callee = call.getCallee();
    for (rt::Call whole :
         {rt::Call::gnnrtSpmm, rt::Call::gnnrtScatter, rt::Call::gnnrtGather,
          rt::Call::gnnrtGatherArgBackward})
      if (callee == rt::getName(whole))
        return true;
    if (callee != rt::getName(rt::Call::gnnrtParallelFor))
      return false;
    auto fnConst = call.getOperand(1).getDefiningOp<func::ConstantOp>();
    auto kernel = fnConst
                      ? module.lookupSymbol<func::FuncOp>(fnConst.getValue())
                      : func::FuncOp();
    bool reads = !kernel;
    if (kernel)
      kernel.walk([&](func::CallOp inner) {
        reads |= inner.getCallee() == rt::getName(rt::Call::gnnrtGraphIndex);
      });
    return reads;
  };
  WalkResult r = lowered->walk([&](func::CallOp call) {
    if (!readsEdges(call))
      return WalkResult::advance();
    call.emitError() << "the graph out of core (graph-out-of-core): this step "
                        "reads every edge at once ('"
                     << call.getCallee()
                     << "' outside the row chunks), but only a row chunk's "
                        "edges are read in at a time";
    return WalkResult::interrupt();
  });
  return failure(r.wasInterrupted());
}

/// What stays resident through a run besides the slot buffers, at the
/// dataset's sizes: the dataset's host arrays (CSC, labels, masks, edge
/// data), the device's features, graph and edge data, the parameters with
/// their gradients and Adam's two moments (the default optimizer; SGD keeps
/// less), and the process's own. Mirrors runtime/lib/TrainingMemory.cpp and
/// Dataset.h.
/// With the graph out of core (`windowEdges` >= 0: the most edges of a row
/// chunk) the per-edge arrays are no part of it, but both sides' largest
/// windows are, or what the start-up's CSR build takes when more
/// (runtime/lib/GraphOnStorage.h).
static uint64_t residentStateBytes(func::FuncOp train,
                                   ArrayRef<EdgeTensorType> edgeTypes,
                                   const DatasetMeta &m, unsigned graphArrays,
                                   bool featuresOutOfCore, int64_t windowEdges,
                                   std::string &parts, uint64_t &loadPeak) {
  const uint64_t V = m.numVertices, E = m.numEdges, F = m.numFeatures,
                 C = m.numClasses;
  uint64_t params = 0;
  for (unsigned i = 0; i < train.getNumArguments(); ++i) {
    auto type = cast<RankedTensorType>(train.getArgumentTypes()[i]);
    auto dims = train.getArgAttrOfType<ArrayAttr>(i, GNNDialect::kDimsAttrName);
    uint64_t n = 1;
    for (unsigned d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d)) {
        n *= type.getDimSize(d);
        continue;
      }
      StringRef bind = dims ? cast<StringAttr>(dims[d]).getValue() : "";
      n *= bind == kDimClasses ? C : F;
    }
    params += n;
  }
  uint64_t edgeFloats = 0;
  for (EdgeTensorType type : edgeTypes)
    edgeFloats += rowWidth(type);
  const bool graphOutOfCore = windowEdges >= 0;
  const uint64_t host =
      8 * (V + 1) + (graphOutOfCore ? 0 : 4 * E) + 11 * V + 4 * E * edgeFloats;
  // Out of core they are the placement's (read by chunks).
  const uint64_t features = featuresOutOfCore ? 0 : 4 * V * F;
  // Of the per-edge arrays dst, csrEdge and csrDst, those the program reads.
  const uint64_t perEdge = 4 * llvm::popcount(graphArrays & 0xEu);
  uint64_t edgeArrays = perEdge * E;
  if (graphOutOfCore) {
    const uint64_t csc = 1 + ((graphArrays >> 1) & 1),
                   csr = ((graphArrays >> 2) & 1) + ((graphArrays >> 3) & 1);
    // Each array padded by 64 entries (GraphOnStorage::kPadding).
    const uint64_t windows =
        4 * (static_cast<uint64_t>(windowEdges) + 64) * (csc + csr);
    // The start-up's CSR blocks, as large as a window (at least 2^16
    // edges): each CSR array, the sources read and the cursors
    // (GraphOnStorage::buildBytes).
    const uint64_t blockEdges =
        std::min<uint64_t>(E, std::max<int64_t>(windowEdges, 1 << 16));
    const uint64_t build = csr == 0 ? 0 : blockEdges * (4 * csr + 12);
    edgeArrays = std::max(windows, build);
  }
  const uint64_t graph = edgeArrays + 24 * (V + 1) + 4 * E * edgeFloats;
  const uint64_t state = 16 * params;
  // The process's own memory before the dataset: code, libraries, heap and
  // threads' stacks (7 to 8 MiB measured on this runtime, on polblogs and on
  // the Reddit-shaped graph alike), with a margin: the executable's check
  // counts it against --mem-budget too.
  constexpr uint64_t kProcess = 16 << 20;
  parts = llvm::formatv("{0}graph and dataset arrays {1}, "
                        "parameters with gradients and Adam's moments {2}, "
                        "the process {3}",
                        featuresOutOfCore
                            ? std::string()
                            : "features " + std::to_string(features) + ", ",
                        host + graph, state, kProcess)
              .str();
  // Loading: the features as read and their copy in the device's memory,
  // at once (bindDataset; the read ones are freed after).
  loadPeak = host + 2 * features + kProcess;
  return host + features + graph + state + kProcess;
}

/// What a function's buffer placement did, as a remark.
static void emitPlacementRemark(func::FuncOp fn,
                                const BufferPlacementReport &r) {
  InFlightDiagnostic d = fn.emitRemark();
  d << "buffer placement: " << r.strategy;
  if (!r.planned) {
    // What still moves: the features out of core, read once.
    if (r.fetches)
      d << "; " << r.fetches << " fetches (" << r.fetchBytes << " bytes)";
  } else {
    d << "; " << r.capacity << " bytes for the buffers (minimum "
      << r.minCapacity << "), peak " << r.peakBytes << "; " << r.fetches
      << " fetches (" << r.fetchBytes << " bytes), " << r.evictions
      << " evictions (" << r.evictBytes << " bytes), " << r.drops << " drops; "
      << r.tileFetches << " fetches for one tile (selective), "
      << r.filteredFetches << " of them expected filtered, " << r.pipelinedTiles
      << " in sub-chunks";
  }
  if (r.windows)
    d << "; " << r.windows << " graph windows (" << r.windowBytes << " bytes)";
}

/// `float gnn_eval_level(ctx, l)`: the driver's entry to level l's function
/// (`gnn_eval_level_<l>`, 1 <= l <= `numLevels`; 0 for any other l).
void buildLevelDispatcher(ModuleOp module, int64_t numLevels) {
  MLIRContext *context = module.getContext();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(context);
  auto fn = b.create<func::FuncOp>(
      loc, "gnn_eval_level",
      FunctionType::get(context, {ptr, b.getI64Type()}, {b.getF32Type()}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value index = b.create<arith::IndexCastOp>(loc, b.getIndexType(),
                                             entry->getArgument(1));
  SmallVector<int64_t> cases;
  for (int64_t l = 1; l <= numLevels; ++l)
    cases.push_back(l);
  auto sw = b.create<scf::IndexSwitchOp>(loc, TypeRange{b.getF32Type()}, index,
                                         cases, cases.size());
  for (auto [l, region] : llvm::zip_equal(cases, sw.getCaseRegions())) {
    b.setInsertionPointToStart(&region.emplaceBlock());
    auto call = b.create<func::CallOp>(
        loc, (GNNDialect::kEvalLevelPrefix + Twine(l)).str(),
        TypeRange{b.getF32Type()}, ValueRange{entry->getArgument(0)});
    b.create<scf::YieldOp>(loc, call.getResult(0));
  }
  b.setInsertionPointToStart(&sw.getDefaultRegion().emplaceBlock());
  b.create<scf::YieldOp>(
      loc,
      b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(0.0f)).getResult());
  b.setInsertionPointAfter(sw);
  b.create<func::ReturnOp>(loc, sw.getResult(0));
}

struct ConvertGNNToRuntime
    : public mlir::gnn::impl::ConvertGNNToRuntimeBase<ConvertGNNToRuntime> {
  using ConvertGNNToRuntimeBase::ConvertGNNToRuntimeBase;

  void runOnOperation() final {
    ModuleOp module = getOperation();
    // A budget, not a size: any count of floats is safe, a negative one is
    // a mistake (it used to mean "none" silently).
    if (edgeCacheFloats < 0) {
      module.emitError() << "convert-gnn-to-runtime: option edge-cache-floats "
                            "must be 0 or more but is "
                         << edgeCacheFloats.getValue();
      return signalPassFailure();
    }
    auto train = module.lookupSymbol<func::FuncOp>(kTrainStep);
    auto eval = module.lookupSymbol<func::FuncOp>(kEval);
    if (!train || !eval) {
      module.emitError() << "expects @" << kTrainStep << " and @" << kEval
                         << "; run --gnn-autodiff first";
      return signalPassFailure();
    }
    // Edge inputs in order of first appearance in the training step, with
    // their types.
    SmallVector<std::string> edgeInputs;
    SmallVector<EdgeTensorType> edgeTypes;
    train.walk([&](InputOp in) {
      auto type = dyn_cast<EdgeTensorType>(in.getType());
      if (type && !llvm::is_contained(edgeInputs, in.getName().str())) {
        edgeInputs.push_back(in.getName().str());
        edgeTypes.push_back(type);
      }
    });

    // The sizes at which the slot plan compares buffers with different
    // run-time factors: the dataset's, else typical ones (degree 15).
    DenseMap<StringRef, int64_t> estimates = {
        {"V", 100000}, {"E", 1500000}, {"F", 128}, {"C", 16}, {"S", 100000}};
    std::optional<DatasetMeta> datasetMeta;
    if (!meta.empty()) {
      std::string error;
      FailureOr<DatasetMeta> m = readDatasetMeta(meta, error);
      if (failed(m)) {
        module.emitError() << "convert-gnn-to-runtime: " << error;
        return signalPassFailure();
      }
      datasetMeta = *m;
      for (auto [key, n] : {std::pair{"V", m->numVertices},
                            {"E", m->numEdges},
                            {"F", m->numFeatures},
                            {"C", m->numClasses}})
        if (n > 0)
          estimates[key] = n;
      estimates["S"] = estimates["V"]; // one process: every vertex is its own
    }
    PlacementStrategy strategy = PlacementStrategy::Optimal;
    if (placement == "lru")
      strategy = PlacementStrategy::LRU;
    else if (placement == "belady")
      strategy = PlacementStrategy::Belady;
    else if (placement == "streaming")
      strategy = PlacementStrategy::Streaming;
    else if (placement != "optimal") {
      module.emitError() << "convert-gnn-to-runtime: option placement must "
                            "be optimal, lru, belady or streaming, not '"
                         << placement.getValue() << "'";
      return signalPassFailure();
    }
    for (auto [name, value] : {std::pair{"buffer-budget", &bufferBudget},
                               std::pair{"mem-budget", &memBudget}})
      if (*value < 0 || (*value > 0 && meta.empty())) {
        module.emitError()
            << "convert-gnn-to-runtime: option " << name
            << (*value < 0 ? " must be 0 or more"
                           : " needs the dataset's sizes (option meta)");
        return signalPassFailure();
      }
    if (rowChunks < 1 || rowChunks > 256) {
      module.emitError() << "convert-gnn-to-runtime: option row-chunks must "
                            "be in [1, 256] but is "
                         << rowChunks.getValue();
      return signalPassFailure();
    }
    if (tileOrder != "column-row" && tileOrder != "row-column") {
      module.emitError() << "convert-gnn-to-runtime: option tile-order must "
                            "be column-row or row-column, not '"
                         << tileOrder.getValue() << "'";
      return signalPassFailure();
    }
    if (tileOrder == "row-column" && (rowChunks < 2 || graphOutOfCore)) {
      module.emitError()
          << "convert-gnn-to-runtime: option tile-order=row-column "
          << (rowChunks < 2 ? "needs row chunks (option row-chunks above 1)"
                            : "is not supported with graph-out-of-core (a "
                              "window holds a row chunk's edges: each tile "
                              "would read them again)");
      return signalPassFailure();
    }
    if (target != "cpu" && target != "cuda") {
      module.emitError() << "convert-gnn-to-runtime: option target must be "
                            "cpu or cuda, not '"
                         << target.getValue() << "'";
      return signalPassFailure();
    }
    if (featuresOutOfCore && target == "cuda") {
      module.emitError() << "convert-gnn-to-runtime: option "
                            "features-out-of-core is not supported on the "
                            "CUDA target yet (its device pool comes with "
                            "issue 20)";
      return signalPassFailure();
    }
    if (graphOutOfCore && (target == "cuda" || rowChunks < 2)) {
      module.emitError() << "convert-gnn-to-runtime: option graph-out-of-core "
                         << (target == "cuda"
                                 ? "is not supported on the CUDA target yet "
                                   "(its device pool comes with issue 20)"
                                 : "needs row chunks (option row-chunks "
                                   "above 1): a window holds a row chunk's "
                                   "edges");
      return signalPassFailure();
    }
    if (graphWindowEdges < 0) {
      module.emitError() << "convert-gnn-to-runtime: option "
                            "graph-window-edges must be 0 or more but is "
                         << graphWindowEdges.getValue();
      return signalPassFailure();
    }
    if (featuresOutOfCore && bufferBudget == 0 && memBudget == 0) {
      module.emitError() << "convert-gnn-to-runtime: option "
                            "features-out-of-core needs a budget (option "
                            "mem-budget or buffer-budget)";
      return signalPassFailure();
    }
    if (bufferBudget > 0 && memBudget > 0) {
      module.emitError() << "convert-gnn-to-runtime: options buffer-budget "
                            "and mem-budget exclude each other";
      return signalPassFailure();
    }
    if (StringRef mode = getPartition(train);
        !mode.empty() && (target == "cuda" || memBudget > 0 ||
                          bufferBudget > 0 || rowChunks > 1)) {
      train.emitError()
          << "the program is "
          << (mode == "rows" ? "row-partitioned (--gnn-partition-rows)"
                             : "feature-partitioned (--gnn-partition-features)")
          << ", which the lowering does not combine with "
          << (target == "cuda" ? "the CUDA target (NCCL comes with issue 20)"
                               : "a memory budget or row chunks yet");
      return signalPassFailure();
    }
    // Before the lowering rewrites the functions.
    std::string globalOp;
    const int64_t hops = modelHops(eval, globalOp);
    SmallVector<std::pair<int64_t, SizeKey>> bufferSizes;
    SmallVector<std::pair<int64_t, SizeKey>> evalSizes;
    SmallVector<std::unique_ptr<FunctionLowering>> lowerings;
    // The training step over its levels' rows (RowLevels.h), where nothing
    // else splits its rows.
    // Partitioned programs too: P³'s shares and co-batches order each
    // process's rows by level band.
    const bool levels = levelRows && hops > 0 && rowChunks == 1 &&
                        target == "cpu" && bufferBudget == 0 && memBudget == 0;
    // Layer-wise evaluation's level functions (--gnn-split-eval-levels),
    // lowered where the evaluation runs every buffer resident on the CPU:
    // the driver runs them on 1-hop blocks (docs/MiniBatch.md).
    SmallVector<func::FuncOp> levelFns;
    for (auto f : module.getOps<func::FuncOp>())
      if (f->hasAttr(GNNDialect::kEvalLevelAttrName))
        levelFns.push_back(f);
    llvm::sort(levelFns, [](func::FuncOp a, func::FuncOp b) {
      return a->getAttrOfType<IntegerAttr>(GNNDialect::kEvalLevelAttrName)
                 .getInt() <
             b->getAttrOfType<IntegerAttr>(GNNDialect::kEvalLevelAttrName)
                 .getInt();
    });
    if (!levelFns.empty()) {
      const char *why = target != "cpu"                     ? "the CUDA target"
                        : memBudget > 0 || bufferBudget > 0 ? "a budget's plan"
                        : rowChunks > 1                     ? "row chunks"
                        : featuresOutOfCore || graphOutOfCore
                            ? "data out of core"
                        : !getPartition(train).empty() ? "a partitioned program"
                                                       : nullptr;
      for (auto [i, f] : llvm::enumerate(levelFns))
        if (f->getAttrOfType<IntegerAttr>(GNNDialect::kEvalLevelAttrName)
                .getInt() != static_cast<int64_t>(i) + 1) {
          f.emitError() << "layer-wise evaluation: the level functions must "
                           "be levels 1 to "
                        << levelFns.size() << " once each";
          return signalPassFailure();
        }
      if (why) {
        eval.emitRemark() << "layer-wise evaluation: not lowered with " << why
                          << " (the evaluation runs in batches of whole "
                             "neighbourhoods)";
        for (func::FuncOp f : levelFns)
          f.erase();
        levelFns.clear();
      }
    }
    FunctionLowering::CutDims cutDims;
    // Each level's buffers, inputs and outputs, for the model description.
    std::string levelRecords;
    SmallVector<std::pair<func::FuncOp, int>> functions = {{train, 1},
                                                           {eval, 0}};
    for (func::FuncOp f : levelFns)
      functions.push_back({f, 2});
    for (auto [fn, kind] : functions) {
      const bool training = kind == 1, isLevel = kind == 2;
      // The two never run at once and nothing of one is read during the
      // other (gnnrtSetOutput's logits are read before the next call), so
      // they share the slots: the runtime keeps max(train, eval) per slot.
      auto lower = [&, fn = fn, training = training,
                    isLevel = isLevel](bool withLevels) {
        lowerings.push_back(std::make_unique<FunctionLowering>(
            module, fn, edgeInputs, edgeCacheFloats, target == "cuda"));
        lowerings.back()->setRowChunks(rowChunks);
        lowerings.back()->setStageSharedRows(stageSharedRows);
        lowerings.back()->setLongRowPieces(target == "cuda" || longRowPieces);
        lowerings.back()->setCutDims(&cutDims);
        if (withLevels)
          lowerings.back()->setLevels(isLevel ? 1 : hops);
        lowerings.back()->setFeaturesOutOfCore(featuresOutOfCore);
        lowerings.back()->setGraphOutOfCore(graphOutOfCore);
        lowerings.back()->setRowColumnTiles(tileOrder == "row-column");
        return lowerings.back()->run(training);
      };
      // A level function on its 1-hop block: the destinations' rows.
      const bool withLevels = levels && (training || isLevel);
      llvm::DenseSet<Operation *> before;
      for (Operation &op : module.getBody()->getOperations())
        before.insert(&op);
      if (failed(lower(withLevels)))
        return signalPassFailure();
      if (Operation *by =
              withLevels ? lowerings.back()->getLevelsRefusedBy() : nullptr) {
        // Again over every row: what the first lowering added goes.
        by->emitRemark() << "level rows: this step's code cannot run over "
                            "fewer rows; the training step computes every "
                            "row";
        lowerings.pop_back();
        for (Operation &op :
             llvm::make_early_inc_range(module.getBody()->getOperations()))
          if (!before.contains(&op))
            op.erase();
        if (failed(lower(false)))
          return signalPassFailure();
      } else if (withLevels && !isLevel) {
        fn.emitRemark() << "level rows: "
                        << lowerings.back()->getRestrictedSteps()
                        << " steps compute the rows of their level of " << hops
                        << " hops";
      }
      if (graphOutOfCore && failed(checkEdgesInWindows(module, fn)))
        return signalPassFailure();
      if (rowChunks > 1) {
        auto [chunked, stages] = lowerings.back()->getChunkedStages();
        InFlightDiagnostic remark = fn.emitRemark();
        remark << "row chunks: " << chunked << " of " << stages
               << " steps over the vertices run in " << rowChunks.getValue()
               << " chunks";
        // The others need none (no work per row) or run whole: those say
        // which op keeps them whole.
        ArrayRef<std::string> whole = lowerings.back()->getWholeStages();
        const int64_t idle =
            stages - chunked - static_cast<int64_t>(whole.size());
        if (idle > 0)
          remark << " (" << idle << " with no work per row)";
        if (tileOrder == "row-column") {
          const int64_t n = lowerings.back()->getRowColumnSteps();
          remark << "; tiles in row-column order: " << n << " aggregation"
                 << (n == 1 ? "" : "s");
        }
        if (!whole.empty()) {
          remark << "; whole (an op over every row): ";
          llvm::interleave(whole.take_front(3), remark, "; ");
          if (whole.size() > 3)
            remark << "; and " << whole.size() - 3 << " more";
        }
      }
      lowerings.back()->planSlots(estimates);
      if (isLevel) {
        // Apart from the step's and the evaluation's: the driver sizes a
        // level's batches by them.
        const int64_t l =
            fn->getAttrOfType<IntegerAttr>(GNNDialect::kEvalLevelAttrName)
                .getInt();
        FunctionLowering &lowering = *lowerings.back();
        levelRecords +=
            llvm::formatv("level {0} {1}", l, lowering.getLevelInputs().size());
        for (int64_t k : lowering.getLevelInputs())
          levelRecords += llvm::formatv(" {0}", k).str();
        levelRecords +=
            llvm::formatv(" {0}", lowering.getLevelOutputs().size()).str();
        for (const auto &[k, width] : lowering.getLevelOutputs())
          levelRecords += llvm::formatv(" {0}", k).str();
        levelRecords += "\n";
        for (const auto &[k, width] : lowering.getLevelOutputs())
          levelRecords +=
              llvm::formatv("cut {0} {1} {2}\n", k, width.factor,
                            width.dynamic.empty() ? "1" : width.dynamic)
                  .str();
        levelRecords +=
            bufferRecords(lowering.getPlannedSizes(),
                          llvm::formatv("level-buffer {0}", l).str());
        continue;
      }
      llvm::append_range(bufferSizes, lowerings.back()->getPlannedSizes());
      // The evaluation's own: the driver sizes an evaluation alone by them
      // (an evaluation under --mem-budget, MiniBatch.h).
      if (!training)
        evalSizes = lowerings.back()->getPlannedSizes();
    }
    const unsigned graphArrays = graphArraysRead(module);
    // The evaluation's alone: mini-batch training binds the whole graph for
    // an evaluation with only those (its batches' steps read the others).
    Operation *evalLowered =
        module.lookupSymbol((eval.getSymName() + "_lowered").str());
    const unsigned evalGraphArrays =
        evalLowered ? graphArraysRead(module, evalLowered) : graphArrays;
    // The features out of core take a slot no function's buffer uses.
    if (featuresOutOfCore) {
      int64_t slot = 0;
      for (const auto &[used, size] : bufferSizes)
        slot = std::max(slot, used + 1);
      for (const std::unique_ptr<FunctionLowering> &lowering : lowerings)
        lowering->setFeaturesSlot(slot);
    }

    int64_t capacity = bufferBudget;
    if (memBudget > 0) { // with meta (checked above)
      std::string parts;
      int64_t windowEdges = -1;
      if (graphOutOfCore)
        windowEdges =
            graphWindowEdges > 0
                ? graphWindowEdges.getValue()
                : 2 * ((datasetMeta->numEdges + rowChunks - 1) / rowChunks);
      uint64_t loadPeak = 0;
      const uint64_t resident =
          residentStateBytes(train, edgeTypes, *datasetMeta, graphArrays,
                             featuresOutOfCore, windowEdges, parts, loadPeak);
      if (resident >= static_cast<uint64_t>(memBudget)) {
        module.emitError()
            << "the memory budget of " << memBudget.getValue()
            << " bytes is below what stays resident through the run, "
            << resident << " bytes (" << parts
            << "), before any buffer of the training step";
        return signalPassFailure();
      }
      if (loadPeak > static_cast<uint64_t>(memBudget)) {
        module.emitError()
            << "the memory budget of " << memBudget.getValue()
            << " bytes is below what loading the dataset takes, " << loadPeak
            << " bytes (its arrays, the features as read and their copy in "
               "the device's memory, and the process), before the training "
               "state (the features out of core need none of it)";
        return signalPassFailure();
      }
      capacity = memBudget - static_cast<int64_t>(resident);
    }
    // The in-edges of each row chunk at the dataset's sizes (edge-chunked
    // buffers: a fused gather's edge caches), from its indptr.npy when the
    // meta file is a dataset's; unknown otherwise (each chunk then counts
    // every edge).
    // With its indices.npy too, the rows each tile reads of its input chunk
    // (the placement's costs of selective reads).
    SmallVector<int64_t> chunkEdges;
    std::optional<TileInputRows> tileRows;
    if (rowChunks > 1 && capacity > 0 && datasetMeta) {
      std::string ignored;
      FailureOr<std::vector<int64_t>> indptr = readIndptr(meta, ignored);
      const int64_t V = datasetMeta->numVertices;
      if (succeeded(indptr) && static_cast<int64_t>(indptr->size()) == V + 1 &&
          indptr->front() == 0 && indptr->back() == datasetMeta->numEdges) {
        llvm::append_range(chunkEdges, rowChunkEdges(*indptr, rowChunks));
        if (selectiveCosts) {
          std::string why;
          FailureOr<TileInputRows> rows =
              countTileInputRows(meta, *indptr, rowChunks, why);
          if (succeeded(rows))
            tileRows = std::move(*rows);
          else
            module.emitRemark() << "buffer placement: a tile input fetched "
                                   "for its tile alone costs its whole chunk "
                                   "(the rows tiles read are unknown: "
                                << why << ")";
        }
      }
    }
    std::string placementRecords;
    bool anyPlanned = false, anyEdgeChunks = false;
    for (auto [lowering, fn, training] :
         llvm::zip_equal(ArrayRef(lowerings).take_front(2),
                         SmallVector<func::FuncOp>{train, eval},
                         SmallVector<bool>{true, false})) {
      if (capacity <= 0)
        break;
      BufferPlacementReport report;
      if (failed(lowering->placeBuffers(estimates, chunkEdges,
                                        tileRows ? &*tileRows : nullptr,
                                        capacity, strategy, report)))
        return signalPassFailure();
      if (graphOutOfCore && datasetMeta) {
        // Each window reads its rows' edges, E / K of them on average (a
        // step's windows cover every chunk: exact over the step): of the
        // destinations' side the sources (the destinations are filled in,
        // not read), of the sources' side the CSR arrays the program reads
        // (GraphOnStorage::open).
        const uint64_t perEdge[2] = {
            4 * static_cast<uint64_t>(llvm::popcount(graphArrays & 0xCu)), 4};
        uint64_t edgeBytes = 0; // per edge of a chunk, over the windows
        // In the lowered function (`<name>_lowered`).
        if (auto code = module.lookupSymbol<func::FuncOp>(
                (fn.getSymName() + "_lowered").str()))
          code.walk([&](func::CallOp call) {
            if (call.getCallee() != rt::getName(rt::Call::gnnrtGraphWindow))
              return;
            ++report.windows;
            std::optional<int64_t> side =
                getConstantIntValue(call.getOperand(1));
            edgeBytes +=
                !side ? std::max(perEdge[0], perEdge[1]) : perEdge[*side != 0];
          });
        report.windowBytes = edgeBytes *
                             static_cast<uint64_t>(datasetMeta->numEdges) /
                             static_cast<uint64_t>(rowChunks);
      }
      emitPlacementRemark(fn, report);
      anyPlanned |= report.planned;
      anyEdgeChunks |= report.planned && report.edgeChunks;
      // The peak at the sizes it was planned at, for the driver's memory
      // check (TrainingMemory.cpp).
      placementRecords += llvm::formatv(
          "placement {0} {1} {2} {3} {4} {5} {6}\n",
          training ? "train" : "eval", report.planned ? 1 : 0, report.peakBytes,
          estimates["V"], estimates["E"], estimates["F"], estimates["C"]);
    }
    finishRowChunks(module);
    // The edges per row chunk the plans' edge-chunked buffers were sized
    // with: the driver's memory check takes the plans' peaks only for a
    // dataset whose chunks hold no more (TrainingMemory.cpp).
    if (anyEdgeChunks && !chunkEdges.empty()) {
      placementRecords +=
          llvm::formatv("edge-chunks {0}", rowChunks.getValue()).str();
      for (int64_t edges : chunkEdges)
        placementRecords += llvm::formatv(" {0}", edges).str();
      placementRecords += "\n";
    }
    // One function planned: the other starts with nothing resident too, so
    // that the run's peak is the larger of the two (when both fit, nothing
    // is dropped and the slots stay allocated across calls).
    if (anyPlanned)
      for (const std::unique_ptr<FunctionLowering> &lowering : lowerings)
        if (!lowering->isPlanned())
          lowering->dropAllAtStart();
    // The parameter table, from the training step (now known to be
    // lowerable); the model's name, not the derived function's.
    std::string info =
        modelInfo(train, edgeInputs, edgeTypes) + bufferRecords(bufferSizes) +
        bufferRecords(evalSizes, "eval-buffer") + placementRecords +
        (evalGraphArrays != graphArrays
             ? llvm::formatv("eval-graph-arrays {0}\n", evalGraphArrays).str()
             : std::string()) +
        llvm::formatv("graph-arrays {0}\n", graphArrays).str() +
        hopsRecord(hops, globalOp);
    if (!levelFns.empty())
      info += llvm::formatv("eval-levels {0}\n", levelFns.size()).str() +
              levelRecords;
    if (target == "cuda")
      info += "target cuda\n";
    if (featuresOutOfCore)
      info += llvm::formatv("features-out-of-core {0}\n", rowChunks.getValue())
                  .str();
    if (graphOutOfCore)
      info +=
          llvm::formatv("graph-out-of-core {0}\n", rowChunks.getValue()).str();
    // The row chunks the placements counted (the runtime bounds a smaller
    // graph's peak by the plan's only where its chunks are no larger).
    if (rowChunks > 1)
      info += llvm::formatv("row-chunks {0}\n", rowChunks.getValue()).str();
    if (!getPartition(train).empty()) {
      info += "partition " + getPartition(train).str() + "\n";
      // Row partitioning with replicated layers reads every vertex's
      // features and the whole graph (--gnn-partition-rows replicate=k).
      if (isRowPartitioned(train) && usesWholeGraph(train)) {
        // 1: the features are read on the whole graph (every vertex's); 0:
        // on the own rows' (only later levels are replicated).
        bool wholeFeatures = false;
        train.walk([&](InputOp in) {
          wholeFeatures |=
              in.getName() == "features" && isWholeGraph(in.getGraph());
        });
        info += llvm::formatv("replicated {0}\n", wholeFeatures ? 1 : 0).str();
      }
      // Each function's row collectives and their row widths, for the
      // driver's volume formula (docs/Distributed.md).
      for (auto [lowering, name] :
           llvm::zip_equal(ArrayRef(lowerings).take_front(2),
                           SmallVector<StringRef>{"train", "eval"}))
        for (const auto &[kind, width] : lowering->getRowCollectives())
          info += llvm::formatv("collective {0} {1} {2} {3}\n", name, kind,
                                width.factor,
                                width.dynamic.empty() ? "1" : width.dynamic)
                      .str();
    }
    for (auto f : module.getOps<func::FuncOp>())
      if (f->hasAttr(GNNDialect::kModelAttrName)) {
        info = "model " + f.getSymName().str() + info.substr(info.find('\n'));
        break;
      }
    // Drop every gnn function; the lowered ones take their names.
    for (auto f : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (!f.isExternal() && !f.getSymName().ends_with("_lowered") &&
          !f.getSymName().starts_with(kKernelPrefix))
        f.erase();
    for (auto f : module.getOps<func::FuncOp>())
      if (f.getSymName().ends_with("_lowered"))
        f.setSymName(f.getSymName().drop_back(strlen("_lowered")));
    if (!levelFns.empty())
      buildLevelDispatcher(module, static_cast<int64_t>(levelFns.size()));
    // On the CUDA target the buffers are GPU memory: what the host code
    // itself reads or writes moves into kernels.
    if (target == "cuda")
      for (auto f : llvm::to_vector(module.getOps<func::FuncOp>()))
        if (!f.isExternal() && !f.getSymName().starts_with(kKernelPrefix) &&
            failed(moveHostMemoryAccessToGPU(f)))
          return signalPassFailure();

    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    info.push_back('\0');
    auto arrayType = LLVM::LLVMArrayType::get(mb.getI8Type(), info.size());
    mb.create<LLVM::GlobalOp>(module.getLoc(), arrayType, /*isConstant=*/true,
                              LLVM::Linkage::External, kModelInfo,
                              mb.getStringAttr(info));
  }
};

} // namespace
