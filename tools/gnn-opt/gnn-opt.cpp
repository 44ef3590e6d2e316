//===- gnn-opt.cpp - gnn optimizer driver ---------------------------------===//
//
// Parses gnn programs, runs passes and pipelines on them and prints the
// result. Registers only the dialects a gnn program can contain. The output
// is written as gnn-compile's (gnn/Support/OutputFile.h): whole or not at
// all, never blocking on a FIFO without a reader, a failed write one line.
//
//===----------------------------------------------------------------------===//

#include "gnn/InitAll.h"
#include "gnn/Support/OutOfMemory.h"
#include "gnn/Support/OutputFile.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::gnn::installOutOfMemoryHandler("gnn-opt");
  // Past a file size limit a write fails with EFBIG, reported with the file.
  std::signal(SIGXFSZ, SIG_IGN);
  mlir::gnn::registerAllGNNPasses();
  mlir::DialectRegistry registry;
  mlir::gnn::registerAllGNNDialects(registry);
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "gnnc optimizer driver: runs gnn passes and pipelines\n",
      registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // The dialect listing prints no IR: MLIR's own driver.
  if (config.shouldShowDialects())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  std::string error;
  if (outputFilename != "-" &&
      !mlir::gnn::checkOutputFile(outputFilename, error)) {
    llvm::errs() << "gnn-opt: error: " << error << "\n";
    return 1;
  }
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  const bool ok = succeeded(
      mlir::MlirOptMain(os, std::move(input), registry, config));
  os.flush();
  // On failure what was printed still goes to standard output (the chunks of
  // -split-input-file before the failing one), never to a file.
  if (!ok) {
    if (outputFilename == "-")
      llvm::outs() << text;
    return 1;
  }
  if (!mlir::gnn::writeOutputFile(outputFilename, text, error)) {
    llvm::errs() << "gnn-opt: error: " << error << "\n";
    return 1;
  }
  return 0;
}
