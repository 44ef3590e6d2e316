//===- InitAll.cpp - register gnn dialects, passes and pipelines ----------===//

#include "gnn/InitAll.h"
#include "gnn/Conversion/Passes.h"
#include "gnn/IR/GNNDialect.h"
#include "gnn/Pipelines/Pipelines.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

void mlir::gnn::registerAllGNNDialects(DialectRegistry &registry) {
  registry.insert<GNNDialect, func::FuncDialect, arith::ArithDialect,
                  math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                  LLVM::LLVMDialect, gpu::GPUDialect, NVVM::NVVMDialect>();
  // The CUDA target: gpu.module -> PTX through the NVVM target.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
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
