//===- Budget.cpp - gnn-compile's row chunks under a budget ---------------===//

#include "Budget.h"

#include "gnn/Support/DatasetMeta.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::gnn {

RowChunkSearch findRowChunks(MLIRContext &context, ModuleOp module,
                             const GNNOptimizeOptions &options,
                             GNNToLLVMOptions &lowering,
                             std::optional<int64_t> memBudget, bool optimize,
                             const std::vector<int64_t> *indptr,
                             int64_t maxChunks) {
  RowChunkSearch best;
  for (int64_t k = lowering.graphOutOfCore ? 2 : 1; k <= maxChunks; k *= 2) {
    lowering.rowChunks = k;
    if (lowering.graphOutOfCore)
      lowering.graphWindowEdges = indptr ? mostRowChunkEdges(*indptr, k) : 0;
    PassManager probe(&context);
    probe.enableVerifier();
    buildGNNTrainPipeline(probe, options, optimize);
    if (memBudget) {
      GNNChunkTileOptions tile;
      tile.budget = *memBudget;
      tile.meta = options.meta.getValue();
      probe.addPass(createGNNChunkTile(tile));
    }
    buildGNNToLLVMPipeline(probe, lowering);
    OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
    std::optional<uint64_t> least; // set when the error is the least plan
    std::string op;                // the op it names
    bool residentTooLarge = false; // the state besides the buffers
    std::optional<uint64_t> moved; // the first (training) plan's bytes
    bool planned = false;          // some function's buffers do not all fit
    LogicalResult result = failure();
    {
      ScopedDiagnosticHandler quiet(&context, [&](Diagnostic &d) {
        constexpr StringLiteral kLeast = "below the minimum any plan needs, ";
        std::string text = d.str();
        size_t at = text.find(kLeast.data());
        uint64_t n = 0;
        if (d.getSeverity() == DiagnosticSeverity::Error &&
            text.find("is below what stays resident") != std::string::npos)
          residentTooLarge = true;
        // A function's "buffer placement: ...[; F fetches (B bytes), E
        // evictions (B bytes), ...][; W graph windows (B bytes)]": the bytes
        // in brackets (none when nothing moves).
        const bool placement =
            d.getSeverity() == DiagnosticSeverity::Remark &&
            StringRef(text).starts_with("buffer placement: ") &&
            !StringRef(text).starts_with("buffer placement: a tile input");
        if (placement && !StringRef(text).starts_with("buffer placement: none"))
          planned = true;
        if (placement && !moved) {
          uint64_t sum = 0;
          for (StringRef rest = text; !rest.empty();) {
            size_t open = rest.find(" (");
            if (open == StringRef::npos)
              break;
            rest = rest.substr(open + 2);
            uint64_t n = 0;
            StringRef number = rest;
            if (!number.consumeInteger(10, n) && number.starts_with(" bytes)"))
              sum += n;
          }
          moved = sum;
        }
        if (d.getSeverity() == DiagnosticSeverity::Error &&
            at != std::string::npos &&
            !StringRef(text).substr(at + kLeast.size()).consumeInteger(10, n)) {
          least = n;
          // "... bytes (...): 'gnn.op' alone uses ..."
          StringRef rest = StringRef(text).substr(at + kLeast.size());
          size_t quote = rest.find('\'');
          if (quote != StringRef::npos)
            op = rest.substr(quote + 1).split('\'').first.str();
        }
        return success();
      });
      result = probe.run(*copy);
    }
    if (succeeded(result)) {
      best.fits = true;
      best.chunks = k;
      best.moved = moved.value_or(0);
      best.everySlotFits = !planned;
      break;
    }
    if (!least && residentTooLarge && lowering.graphOutOfCore)
      continue; // the windows of more chunks are smaller
    if (!least)
      break; // another error: the compilation reports it
    best.fusedGatherLimited |= op == "gnn.fused_gather";
    if (*least < best.least) {
      best.least = *least;
      best.chunks = k;
      best.largestOp = op;
    }
  }
  return best;
}

} // namespace mlir::gnn
