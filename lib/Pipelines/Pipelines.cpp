//===- Pipelines.cpp - gnn pass pipelines ---------------------------------===//

#include "gnn/Pipelines/Pipelines.h"

#include "gnn/Conversion/Passes.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::gnn;

void mlir::gnn::buildGNNOptimizePipeline(OpPassManager &pm,
                                         const GNNOptimizeOptions &options) {
  if (options.hoist)
    pm.addPass(createGNNHoistApplyEdge());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (options.reorder != "never") {
    GNNReorderAggregateOptions reorder;
    reorder.mode = options.reorder;
    reorder.meta = options.meta;
    pm.addPass(createGNNReorderAggregate(reorder));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  if (options.factor) {
    pm.addPass(createGNNFactorEdgeScale());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
}

void mlir::gnn::buildGNNTrainPipeline(OpPassManager &pm,
                                      const GNNOptimizeOptions &options,
                                      bool optimize) {
  if (optimize)
    buildGNNOptimizePipeline(pm, options);
  pm.addPass(createGNNAutodiff());
  if (options.fuse)
    pm.addPass(createGNNFuseSAG());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (optimize && options.share) {
    pm.addPass(createGNNShareContractions());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  if (optimize)
    pm.addPass(createGNNDeferTransposes());
}

void mlir::gnn::buildGNNToLLVMPipeline(OpPassManager &pm,
                                       const GNNToLLVMOptions &options) {
  ConvertGNNToRuntimeOptions lowering;
  lowering.edgeCacheFloats = options.edgeCacheFloats;
  lowering.memBudget = options.memBudget;
  lowering.bufferBudget = options.bufferBudget;
  lowering.placement = options.placement;
  lowering.rowChunks = options.rowChunks;
  lowering.meta = options.meta;
  pm.addPass(createConvertGNNToRuntime(lowering));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::gnn::registerGNNPipelines() {
  PassPipelineRegistration<GNNToLLVMOptions>(
      "gnn-to-llvm-pipeline",
      "Lower a differentiated gnn program to the LLVM dialect and gnnrt calls",
      buildGNNToLLVMPipeline);
  PassPipelineRegistration<GNNOptimizeOptions>(
      "gnn-optimize-pipeline",
      "Optimise a gnn model at the gnn level: hoist edge work, reorder "
      "aggregations, canonicalise, CSE",
      buildGNNOptimizePipeline);
  PassPipelineRegistration<GNNOptimizeOptions>(
      "gnn-train-pipeline",
      "Model to training program: gnn-optimize-pipeline, --gnn-autodiff, "
      "--gnn-fuse-sag, --gnn-share-contractions (what gnn-compile runs before "
      "lowering)",
      [](OpPassManager &pm, const GNNOptimizeOptions &options) {
        buildGNNTrainPipeline(pm, options);
      });
}
