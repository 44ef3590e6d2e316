//===- InitAll.cpp - register gnn dialects, passes and pipelines ----------===//

#include "gnn/InitAll.h"
#include "gnn/Conversion/Passes.h"
#include "gnn/IR/GNNDialect.h"
#include "gnn/Pipelines/Pipelines.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

void mlir::gnn::registerAllGNNDialects(DialectRegistry &registry) {
  registry.insert<GNNDialect, func::FuncDialect, arith::ArithDialect,
                  math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                  LLVM::LLVMDialect>();
}

void mlir::gnn::registerAllGNNPasses() {
  registerCanonicalizerPass();
  registerCSEPass();
  registerInlinerPass();
  registerSymbolDCEPass();
  registerGNNPasses();
  registerGNNConversionPasses();
  registerGNNPipelines();
}
