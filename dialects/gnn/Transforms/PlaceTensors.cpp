//===- PlaceTensors.cpp - --gnn-place-tensors -----------------------------===//
//
// Builds the training step's data-flow graph of batched tensors and runs
// ROC's DP placement and its LRU and streaming baselines on it (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "gnn/Analysis/TensorPlacement.h"
#include "BudgetOptions.h"

#include "gnn/IR/GNNOps.h"
#include "gnn/Support/DatasetMeta.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GNNPLACETENSORS
#include "gnn/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {

/// Bytes of a batched value (|V| or |E| rows), or nullopt for one that is not
/// (parameters, scalars).
std::optional<uint64_t> batchedBytes(Type type, const DatasetMeta &m) {
  std::optional<int64_t> width = rowElements(type, m);
  if (!width)
    return std::nullopt;
  const bool vertex = isa<VertexTensorType>(type);
  const uint64_t rows = vertex ? m.numVertices : m.numEdges;
  Type element = vertex ? cast<VertexTensorType>(type).getElementType()
                        : cast<EdgeTensorType>(type).getElementType();
  const uint64_t bytes =
      std::max<uint64_t>(element.getIntOrFloatBitWidth() / 8, 1);
  return rows * static_cast<uint64_t>(*width) * bytes;
}

/// Bytes of the unbatched values an op reads (parameters): resident.
uint64_t unbatchedBytes(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape())
    return 0;
  return t.getNumElements() *
         std::max<uint64_t>(t.getElementTypeBitWidth() / 8, 1);
}

bool walksEdges(Operation *op) {
  return isa<ScatterOp, GatherOp, FusedGatherOp, GatherGradOp, DegreeOp>(op);
}

struct GNNPlaceTensors
    : public mlir::gnn::impl::GNNPlaceTensorsBase<GNNPlaceTensors> {
  using GNNPlaceTensorsBase::GNNPlaceTensorsBase;

  void runOnOperation() final {
    ModuleOp module = getOperation();
    FailureOr<DatasetMeta> m =
        readBudgetOptions(module, "gnn-place-tensors", budget, meta);
    if (failed(m))
      return signalPassFailure();
    auto train = module.lookupSymbol<func::FuncOp>(GNNDialect::kTrainStepName);
    if (!train) {
      module.emitError() << "gnn-place-tensors: expects @"
                         << GNNDialect::kTrainStepName
                         << "; run --gnn-autodiff first";
      return signalPassFailure();
    }
    if (failed(place(train, *m)))
      signalPassFailure();
  }

  LogicalResult place(func::FuncOp fn, const DatasetMeta &m) {
    PlacementGraph graph;
    llvm::MapVector<Value, unsigned> tensorOf;
    std::optional<unsigned> graphTensor;
    uint64_t resident = 0;
    llvm::DenseSet<Value> residentSeen;
    auto tensor = [&](Value v) -> std::optional<unsigned> {
      if (auto it = tensorOf.find(v); it != tensorOf.end())
        return it->second;
      std::optional<uint64_t> bytes = batchedBytes(v.getType(), m);
      // Small tensors (a vertex's degree, a row of scalars per vertex below
      // 1/1024 of the budget) stay resident like the parameters: the DP's
      // state space grows with every tensor it places.
      if (!bytes || *bytes * 1024 < static_cast<uint64_t>(budget)) {
        if (residentSeen.insert(v).second)
          resident += bytes ? *bytes : unbatchedBytes(v.getType());
        return std::nullopt;
      }
      std::string name;
      llvm::raw_string_ostream os(name);
      v.printAsOperand(os, OpPrintingFlags());
      unsigned id = graph.addTensor(os.str(), *bytes);
      tensorOf[v] = id;
      return id;
    };
    for (Operation &op : fn.getBody().front()) {
      SmallVector<unsigned> in, out;
      for (Value v : op.getOperands())
        if (std::optional<unsigned> t = tensor(v))
          in.push_back(*t);
      for (Value v : op.getResults())
        if (std::optional<unsigned> t = tensor(v))
          out.push_back(*t);
      if (in.empty() && out.empty())
        continue;
      if (walksEdges(&op)) {
        if (!graphTensor)
          graphTensor = graph.addTensor(
              "graph", m.numEdges * 12 + (m.numVertices + 1) * 24);
        in.push_back(*graphTensor);
      }
      graph.addOp(op.getName().getStringRef(), in, out);
    }
    if (static_cast<uint64_t>(budget) <= resident) {
      fn.emitError() << "gnn-place-tensors: a budget of " << budget.getValue()
                     << " bytes does not hold the " << resident
                     << " bytes of parameters and small tensors that stay "
                        "resident";
      return failure();
    }
    const uint64_t capacity = budget - resident;
    const uint64_t least = getMinimumCapacity(graph);
    if (capacity < least) {
      fn.emitError() << "gnn-place-tensors: a budget of " << budget.getValue()
                     << " bytes is below the " << least + resident
                     << " bytes the largest op needs with what stays resident ("
                     << least << " + " << resident << ")";
      return failure();
    }
    auto describe = [](const PlacementPlan &p) {
      return std::to_string(p.loadBytes) + " loaded, " +
             std::to_string(p.writeBytes) + " written back, peak " +
             std::to_string(p.peakBytes);
    };
    llvm::Expected<PlacementPlan> lru = planLRUPlacement(graph, capacity);
    llvm::Expected<PlacementPlan> stream =
        planStreamingPlacement(graph, capacity);
    if (!lru || !stream) {
      std::string why = llvm::toString(lru ? stream.takeError()
                                           : lru.takeError());
      if (!lru && stream)
        llvm::consumeError(stream.takeError());
      fn.emitError() << "gnn-place-tensors: " << why;
      return failure();
    }
    InFlightDiagnostic remark = fn.emitRemark();
    remark << "tensor placement at " << budget.getValue() << " bytes ("
           << resident << " resident in parameters and small tensors, " << graph.getNumOps()
           << " ops, " << graph.getNumTensors() << " tensors of "
           << graph.getTotalBytes() << " bytes): ";
    // Training steps keep a few more tensors live than ROC's forward graphs
    // (S <= 16, T <= 4096): up to 2^14 cache sets per state, still solved
    // in about a second.
    PlacementLimits limits;
    limits.maxActiveTensors = 14;
    llvm::Expected<PlacementPlan> dp =
        planOptimalPlacement(graph, capacity, limits);
    if (dp) {
      remark << "DP " << describe(*dp);
    } else {
      remark << "DP not run (" << llvm::toString(dp.takeError()) << ")";
      // The bounded search over the default order in its place.
      llvm::Expected<PlacementPlan> bounded =
          planBoundedPlacement(graph, capacity);
      if (bounded)
        remark << "; bounded search " << describe(*bounded);
      else
        remark << "; bounded search not run ("
               << llvm::toString(bounded.takeError()) << ")";
    }
    remark << "; LRU " << describe(*lru) << "; streaming "
           << describe(*stream);
    return success();
  }
};

} // namespace
