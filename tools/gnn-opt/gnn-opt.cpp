//===- gnn-opt.cpp - gnn optimizer driver ---------------------------------===//
//
// Parses gnn programs, runs passes and pipelines on them and prints the
// result. Registers only the dialects a gnn program can contain.
//
//===----------------------------------------------------------------------===//

#include "gnn/InitAll.h"
#include "gnn/Support/OutOfMemory.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  // MlirOptMain's InitLLVM forwards a failed `new` to this handler.
  mlir::gnn::installOutOfMemoryHandler("gnn-opt");
  mlir::gnn::registerAllGNNPasses();
  mlir::DialectRegistry registry;
  mlir::gnn::registerAllGNNDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "gnnc optimizer driver: runs gnn passes and pipelines\n",
      registry));
}
