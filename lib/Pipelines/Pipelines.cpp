//===- Pipelines.cpp - gnn pass pipelines ---------------------------------===//

#include "gnn/Pipelines/Pipelines.h"

#include "gnn/Conversion/Passes.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
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
    reorder.keepFirst = options.reorderKeepFirst;
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
  if (options.partition == "rows") {
    GNNPartitionRowsOptions rows;
    rows.replicate = options.replicate;
    rows.replicateFrom = options.replicateFrom;
    pm.addPass(createGNNPartitionRows(rows));
  } else if (options.partition == "features")
    pm.addPass(createGNNPartitionFeatures());
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
  if (options.evalLevels)
    pm.addPass(createGNNSplitEvalLevels());
}

/// The lowering's options from the pipeline's.
static ConvertGNNToRuntimeOptions
loweringOptions(const GNNToLLVMOptions &options, StringRef target) {
  ConvertGNNToRuntimeOptions lowering;
  lowering.edgeCacheFloats = options.edgeCacheFloats;
  lowering.memBudget = options.memBudget;
  lowering.bufferBudget = options.bufferBudget;
  lowering.placement = options.placement;
  lowering.rowChunks = options.rowChunks;
  lowering.tileOrder = options.tileOrder;
  lowering.levelRows = options.levelRows;
  lowering.stageSharedRows = options.stageSharedRows;
  lowering.longRowPieces = options.longRowPieces;
  lowering.featuresOutOfCore = options.featuresOutOfCore;
  lowering.graphOutOfCore = options.graphOutOfCore;
  lowering.selectiveCosts = options.selectiveCosts;
  lowering.graphWindowEdges = options.graphWindowEdges;
  lowering.meta = options.meta;
  lowering.target = target.str();
  return lowering;
}

/// After the lowering and its clean-up: the kernels' gpu.module to a
/// gpu.binary of PTX.
static void addKernelsToPTX(OpPassManager &pm,
                            const GNNToLLVMOptions &options) {
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createConvertSCFToCFPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  binary.toolkitPath = options.cudaPath;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mlir::gnn::buildGNNKernelsToPTXPipeline(OpPassManager &pm,
                                             const GNNToLLVMOptions &options) {
  pm.addPass(createConvertGNNToRuntime(loweringOptions(options, "cuda")));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  addKernelsToPTX(pm, options);
}

void mlir::gnn::buildGNNToLLVMPipeline(OpPassManager &pm,
                                       const GNNToLLVMOptions &options) {
  const bool cuda = options.target == "cuda";
  pm.addPass(createConvertGNNToRuntime(
      loweringOptions(options, cuda ? "cuda" : "cpu")));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (cuda)
    addKernelsToPTX(pm, options);
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(createConvertMathToLLVMPass());
  // ceildivsi and the like (the launches' grid sizes) as plain arithmetic.
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  // The launches: gpu.launch_func on LLVM values, translated with the
  // gpu.binary into mgpu* calls (runtime/lib/CUDA/GPULaunch.cpp).
  if (cuda)
    pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::gnn::registerGNNPipelines() {
  PassPipelineRegistration<GNNToLLVMOptions>(
      "gnn-to-llvm-pipeline",
      "Lower a differentiated gnn program to the LLVM dialect and gnnrt calls",
      buildGNNToLLVMPipeline);
  PassPipelineRegistration<GNNToLLVMOptions>(
      "gnn-kernels-to-ptx-pipeline",
      "Lower a differentiated gnn program for the CUDA target and its "
      "kernels to PTX (a gpu.binary)",
      buildGNNKernelsToPTXPipeline);
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
