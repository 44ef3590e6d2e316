//===- Partition.h - gnn-compile's --partition auto -------------*- C++ -*-===//
//
// What gnn-compile builds for processes under mpirun (docs/Distributed.md):
// the partitioned programs an executable holds next to the preloading one,
// and, with the dataset's sizes, the layout of each level of the model
// chosen by dynamic programming (gnn/Analysis/LayerPlan.h) from the bytes
// its lowered programs' collectives move and the work a replicated level
// repeats.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_TOOLS_GNNCOMPILE_PARTITION_H
#define GNN_TOOLS_GNNCOMPILE_PARTITION_H

#include "gnn/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/LLVMContext.h"

#include <optional>
#include <string>

namespace mlir::gnn {

/// The link and the compute rate the per-level plan trades against each
/// other (gnn-compile --link-gbps, --compute-gflops).
struct PartitionRates {
  double bytesPerSecond = 25e9 / 8, flopsPerSecond = 20e9;
};

/// A partitioned program: rows (with its first `replicate` levels and
/// those from `replicateFrom` on replicated) or features.
struct PartitionChoice {
  std::string mode;
  int64_t replicate = 0, replicateFrom = 0;
};

/// --partition auto with a printed program (-emit=mlir, mlir-llvm, llvm)
/// and --dataset (options.meta): the partitioned program whose levels'
/// layouts the per-level plan chooses at the dataset's sizes, as the
/// executable's partitioned program is chosen. `report` says what was
/// chosen and why (or, when nothing compiles, why not).
std::optional<PartitionChoice>
choosePartition(MLIRContext &context, ModuleOp module,
                GNNOptimizeOptions &options, const GNNToLLVMOptions &lowering,
                bool optimize, const PartitionRates &rates,
                std::string &report);

/// Which row-partitioned program co-batches (mini-batches split by rows
/// under mpirun) train on blocks, beside the rows program an executable
/// holds: none (no rows program is held), its keep-first form where that
/// differs (the one held replicates no level), or always one replicating
/// no level (the one held replicates levels, which co-batches cannot
/// bind).
enum class RowsBlocks { None, WhereReordered, Always };

/// --partition auto, for an executable or object: the partitioned programs
/// lowered on copies of `module` (the model before any pass) as the
/// preloading program is, each emitted with its definitions suffixed by its
/// mode (gnn_train_step_rows, gnnrt_model_info_features, ...) into
/// `objects`, next to the preloading program's: the row- and
/// feature-partitioned programs the model accepts, the rows one with
/// options.replicate levels replicated, or with the dataset's sizes those
/// the per-level plan replicates. The executable picks one at start-up.
/// `report` lists what it holds.
bool addPartitionedPrograms(MLIRContext &context, ModuleOp module,
                            GNNOptimizeOptions &options,
                            const GNNToLLVMOptions &lowering, bool optimize,
                            const PartitionRates &rates,
                            llvm::LLVMContext &llvmContext,
                            SmallVectorImpl<SmallVector<char, 0>> &objects,
                            std::string &report, std::string &error,
                            RowsBlocks *rowsBlocks = nullptr);

/// Appends to `objects` the program mini-batch training runs on sampled
/// blocks (its symbols suffixed _blocks), when `module`'s optimization
/// reorders an aggregation after a linear (--gnn-reorder-aggregate's cost
/// model at the whole graph's sizes: the GEMM is on every vertex either
/// way). On a block the linear moved before the aggregation runs on the
/// block's sources, up to 1 + fanout times its destinations, which costs
/// more than the narrower aggregation saves: the blocks program keeps every
/// aggregation before its linear (docs/MiniBatch.md). With `planned` (the
/// program compiled is planned for a memory budget: `lowering` then keeps
/// every buffer resident) it is added whatever the order: batches are
/// small, and the plan stays the whole graph's evaluation's
/// (docs/MiniBatch.md, "The features on storage"). `report` says what was
/// added, or why not; false with `error` when it fails to compile. Where
/// an aggregation that no contraction precedes was reordered, the
/// feature-partitioned program with those aggregations first (the others as
/// compiled: --gnn-reorder-aggregate's keep-first) is added too (symbols
/// suffixed _blocks_features), P³'s step on blocks: its layer-1 sync then
/// moves the destinations' rows; and as `rowsBlocks` says the
/// row-partitioned one (suffixed _blocks_rows), co-batches' step: layer 1's
/// GEMM then runs on the destinations.
bool addBlocksProgram(MLIRContext &context, ModuleOp module,
                      GNNOptimizeOptions &options,
                      const GNNToLLVMOptions &lowering, bool optimize,
                      llvm::LLVMContext &llvmContext,
                      SmallVectorImpl<SmallVector<char, 0>> &objects,
                      std::string &report, std::string &error,
                      bool planned = false,
                      RowsBlocks rowsBlocks = RowsBlocks::None);

/// The partitioned programs' forms on blocks (addBlocksProgram), replicating
/// no level, suffixed _blocks_features and _blocks_rows: with `features`
/// the feature-partitioned program, and as `rows` says the row-partitioned
/// one, where --gnn-reorder-aggregate's keep-first reorders fewer than the
/// compiled order's `reordered` aggregations (counted here where not
/// given), in keep-first's order; with RowsBlocks::Always the rows one in
/// the compiled order where keep-first does not differ. For `gnn-compile
/// --partition features|rows` (one partitioned program) and --partition
/// auto. `report` gains what was added, or why not; false with `error`
/// when one fails to emit.
bool addPartitionedBlocksPrograms(
    MLIRContext &context, ModuleOp module, GNNOptimizeOptions &options,
    const GNNToLLVMOptions &lowering, bool optimize,
    llvm::LLVMContext &llvmContext,
    SmallVectorImpl<SmallVector<char, 0>> &objects, bool features,
    RowsBlocks rows, std::optional<unsigned> reordered, std::string &report,
    std::string &error);

} // namespace mlir::gnn

#endif // GNN_TOOLS_GNNCOMPILE_PARTITION_H
