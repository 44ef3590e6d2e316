//===- gnn-compile.cpp - gnn ahead-of-time compiler driver ----------------===//
//
// Parses and verifies a gnn program, runs the gnn pipeline and emits the
// requested stage. Today only `-emit=mlir` exists; `llvm`, `obj` and `exe`
// arrive with the lowering to the runtime.
//
//===----------------------------------------------------------------------===//

#include "gnn/InitAll.h"
#include "gnn/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

namespace {
enum class EmitKind { MLIR, LLVM, Obj, Exe };
} // namespace

static llvm::cl::opt<std::string> inputFilename(llvm::cl::Positional,
                                                llvm::cl::desc("<model.mlir>"),
                                                llvm::cl::init("-"));

static llvm::cl::opt<std::string>
    outputFilename("o", llvm::cl::desc("Output file (default: stdout)"),
                   llvm::cl::value_desc("file"), llvm::cl::init("-"));

static llvm::cl::opt<EmitKind> emitKind(
    "emit", llvm::cl::desc("What to produce"), llvm::cl::init(EmitKind::MLIR),
    llvm::cl::values(
        clEnumValN(EmitKind::MLIR, "mlir", "the optimised gnn IR"),
        clEnumValN(EmitKind::LLVM, "llvm", "LLVM IR (not available yet)"),
        clEnumValN(EmitKind::Obj, "obj", "an object file (not available yet)"),
        clEnumValN(EmitKind::Exe, "exe",
                   "a training executable (not available yet)")));

static llvm::cl::opt<bool>
    noOptimize("no-optimize",
               llvm::cl::desc("Skip gnn-optimize-pipeline (parse and verify "
                              "only)"),
               llvm::cl::init(false));

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerPassManagerCLOptions();
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "gnnc compiler: gnn program -> training executable\n\n"
      "  gnn-compile model.mlir -emit=mlir   print the optimised program\n");

  DialectRegistry registry;
  gnn::registerAllGNNDialects(registry);
  MLIRContext context(registry);

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "gnn-compile: error: " << error << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);

  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1; // The parser reported the located error.
  if (failed(verify(*module)))
    return 1;

  if (emitKind != EmitKind::MLIR) {
    llvm::errs() << "gnn-compile: error: -emit="
                 << (emitKind == EmitKind::LLVM  ? "llvm"
                     : emitKind == EmitKind::Obj ? "obj"
                                                 : "exe")
                 << " is not available yet: the lowering to the runtime has "
                    "not landed (use -emit=mlir)\n";
    return 1;
  }

  if (!noOptimize) {
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)))
      return 1;
    pm.enableVerifier();
    gnn::buildGNNOptimizePipeline(pm, gnn::GNNOptimizeOptions());
    if (failed(pm.run(*module)))
      return 1;
  }

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "gnn-compile: error: " << error << "\n";
    return 1;
  }
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}
