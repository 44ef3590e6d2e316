//===- Object.cpp - LLVM IR and object files from the LLVM dialect --------===//
//
// TOOLCHAIN.md "End-to-end": translateModuleToLLVMIR, the host TargetMachine
// (CPU and features, PIC), the new pass manager at O3, legacy codegen.
//
//===----------------------------------------------------------------------===//

#include "gnn/Target/Object.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;

static std::string &targetCPU() {
  static std::string cpu;
  return cpu;
}

void mlir::gnn::setTargetCPU(llvm::StringRef cpu) { targetCPU() = cpu.str(); }

static std::unique_ptr<llvm::TargetMachine> hostMachine(std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string triple = llvm::sys::getDefaultTargetTriple();
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  // This machine's CPU and features, or the CPU asked for (its features are
  // the CPU's).
  llvm::SubtargetFeatures features;
  std::string cpu = targetCPU();
  if (cpu.empty()) {
    cpu = llvm::sys::getHostCPUName().str();
    for (auto &f : llvm::sys::getHostCPUFeatures())
      features.AddFeature(f.first(), f.second);
  }
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, cpu, features.getString(), options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Default));
}

std::unique_ptr<llvm::Module>
mlir::gnn::translateAndOptimize(ModuleOp module, llvm::LLVMContext &context,
                                std::string &error) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);
  std::unique_ptr<llvm::Module> m =
      translateModuleToLLVMIR(module, context, "gnn_model");
  if (!m) {
    error = "translation to LLVM IR failed";
    return nullptr;
  }
  std::unique_ptr<llvm::TargetMachine> tm = hostMachine(error);
  if (!tm)
    return nullptr;
  m->setTargetTriple(tm->getTargetTriple().str());
  m->setDataLayout(tm->createDataLayout());
  std::string verifyMessages;
  llvm::raw_string_ostream vs(verifyMessages);
  if (llvm::verifyModule(*m, &vs)) {
    error = "invalid LLVM IR: " + vs.str();
    return nullptr;
  }
  // Full-width vectors where the host has AVX-512: LLVM's x86 tuning
  // otherwise caps the vectoriser at 256 bits, and the element-wise loops
  // and their libmvec calls (_ZGVeN16v_expf) are compute-bound (GAT 4x64 on
  // the arxiv-shaped graph: 2-10% per epoch). No effect on other hosts.
  // The step functions themselves are long straight-line sequences of
  // runtime calls (row chunks under a budget repeat a step's calls per chunk
  // and tile: tens of thousands): the SLP vectoriser's cost model is
  // quadratic in such a block (GAT at 16 row chunks: minutes), for nothing
  // to vectorise. Their loops over parameters are short; the work is in the
  // kernels (__gnn_kernel_*) and the runtime. noimplicitfloat keeps the
  // vectorisers out of them and nothing else.
  for (llvm::Function &f : *m) {
    if (f.isDeclaration())
      continue;
    f.addFnAttr("prefer-vector-width", "512");
    if (!f.getName().starts_with("__gnn_kernel_"))
      f.addFnAttr(llvm::Attribute::NoImplicitFloat);
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = true;
  pto.SLPVectorization = true;
  // The generated functions hold hundreds of short element-wise loops (one
  // per op of every stage, forward and backward): unrolling and
  // interleaving them multiplies code size and compile time (a depth-64
  // residual GCN: 24 s at O3 with them) for little speed; the heavy work is
  // in the runtime's kernels.
  pto.LoopUnrolling = false;
  pto.LoopInterleaving = false;
  llvm::PassBuilder pb(tm.get(), pto);
  // Element-wise bodies call exp/log/tanh per element: with glibc's vector
  // math library (libmvec, linked into executables) the loop vectoriser
  // turns them into vector calls instead of leaving a scalar call per
  // element (G-GCN's fused sigmoid gates: a third of the epoch).
  llvm::Triple triple(m->getTargetTriple());
  auto tlii = std::make_unique<llvm::TargetLibraryInfoImpl>(triple);
  if (triple.getArch() == llvm::Triple::x86_64 && triple.isOSLinux())
    tlii->addVectorizableFunctionsFromVecLib(
        llvm::TargetLibraryInfoImpl::LIBMVEC_X86, triple);
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(*tlii); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(*m, mam);
  return m;
}

bool mlir::gnn::emitObject(llvm::Module &module,
                           llvm::SmallVectorImpl<char> &object,
                           std::string &error) {
  std::unique_ptr<llvm::TargetMachine> tm = hostMachine(error);
  if (!tm)
    return false;
  // Into memory: the caller writes the file whole or not at all
  // (gnn/Support/OutputFile.h).
  llvm::raw_svector_ostream out(object);
  llvm::legacy::PassManager codegen;
  if (tm->addPassesToEmitFile(codegen, out, nullptr,
                              llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return false;
  }
  codegen.run(module);
  return true;
}
