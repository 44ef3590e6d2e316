//===- Pipelines.cpp - gnn pass pipelines ---------------------------------===//

#include "gnn/Pipelines/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::gnn;

void mlir::gnn::buildGNNOptimizePipeline(OpPassManager &pm,
                                         const GNNOptimizeOptions &options) {
  (void)options;
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::gnn::registerGNNPipelines() {
  PassPipelineRegistration<GNNOptimizeOptions>(
      "gnn-optimize-pipeline",
      "Optimise a gnn program at the gnn level (canonicalise, CSE; the SAGA "
      "passes join as they land)",
      buildGNNOptimizePipeline);
}
