//===- Pipelines.h - gnn pass pipelines -------------------------*- C++ -*-===//
//
// One definition of each pipeline, used by gnn-opt (as a registered pipeline)
// and by gnn-compile (directly).
//
//===----------------------------------------------------------------------===//

#ifndef GNN_PIPELINES_PIPELINES_H
#define GNN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::gnn {

/// Options of `gnn-optimize-pipeline`.
struct GNNOptimizeOptions : public PassPipelineOptions<GNNOptimizeOptions> {};

/// The gnn-to-gnn optimisation pipeline. Today: canonicalisation and CSE
/// inside and across stage regions; the SAGA passes (hoisting, reordering,
/// fusion) join it as they land.
void buildGNNOptimizePipeline(OpPassManager &pm,
                              const GNNOptimizeOptions &options);

/// Options of `gnn-to-llvm-pipeline`.
struct GNNToLLVMOptions : public PassPipelineOptions<GNNToLLVMOptions> {};

/// Lowers a module that went through --gnn-autodiff to the LLVM dialect:
/// --convert-gnn-to-runtime, then the upstream conversions of scf, math,
/// arith, memref, cf and func.
void buildGNNToLLVMPipeline(OpPassManager &pm, const GNNToLLVMOptions &options);

/// Registers the named pipelines with the global registry.
void registerGNNPipelines();

} // namespace mlir::gnn

#endif // GNN_PIPELINES_PIPELINES_H
