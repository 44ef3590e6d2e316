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
#include "llvm/Transforms/Utils/Cloning.h"

using namespace mlir;

static std::string &targetCPU() {
  static std::string cpu;
  return cpu;
}

void mlir::gnn::setTargetCPU(llvm::StringRef cpu) { targetCPU() = cpu.str(); }

static std::unique_ptr<llvm::TargetMachine>
hostMachine(std::string &error,
            llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Default) {
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
  return std::unique_ptr<llvm::TargetMachine>(
      target->createTargetMachine(triple, cpu, features.getString(), options,
                                  llvm::Reloc::PIC_, std::nullopt, level));
}

void mlir::gnn::suffixDefinitions(llvm::Module &module,
                                  llvm::StringRef suffix) {
  for (llvm::GlobalValue &gv : module.global_values()) {
    if (gv.isDeclaration() || gv.getName().starts_with("llvm."))
      continue;
    std::string name = gv.hasName() ? gv.getName().str() : "__gnn_local";
    gv.setName(name + "_" + suffix.str());
  }
}

/// The compiled kernels (__gnn_kernel_*): the loops over rows and edges.
static bool isKernel(const llvm::Function &f) {
  return f.getName().starts_with("__gnn_kernel_");
}

/// The step functions (@gnn_train_step, @gnn_eval and what else is not a
/// kernel): long straight-line sequences of runtime calls (row chunks under
/// a budget repeat a step's calls per chunk and tile: tens of thousands),
/// with short loops over parameters; the work is in the kernels and the
/// runtime.
static bool isStep(const llvm::GlobalValue *gv) {
  const auto *f = llvm::dyn_cast<llvm::Function>(gv);
  return f && !f->isDeclaration() && !isKernel(*f);
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
  // The step functions (isStep) are long straight-line blocks: the SLP
  // vectoriser's cost model is quadratic in them (GAT at 16 row chunks:
  // minutes) for nothing to vectorise, so noimplicitfloat keeps the
  // vectorisers out of them and nothing else (the kernels vectorise). Past kLargeStep instructions
  // (row chunks and tiles under a budget repeat a step's calls: GAT at 16
  // chunks has 136,000) they are not optimised at all, and emitObjects
  // compiles them at -O0: the greedy register allocator was 80 % of that
  // compile (51 s; 8.5 s so). Ordinary models (a 64-layer GCN: 6,600) keep
  // the O2 path.
  constexpr unsigned kLargeStep = 20000;
  bool large = false;
  for (llvm::Function &f : *m)
    large |= isStep(&f) && f.getInstructionCount() > kLargeStep;
  for (llvm::Function &f : *m) {
    if (f.isDeclaration())
      continue;
    f.addFnAttr("prefer-vector-width", "512");
    if (!isStep(&f))
      continue;
    // Not the runtime calls' private wrappers (emit_c_interface): the
    // inliner ORs noimplicitfloat into a caller, so a wrapper inlined into a
    // kernel (gnnrtKernelArgGet's) kept every kernel from vectorising.
    if (!f.hasLocalLinkage())
      f.addFnAttr(llvm::Attribute::NoImplicitFloat);
    if (large) {
      f.addFnAttr(llvm::Attribute::OptimizeNone);
      f.addFnAttr(llvm::Attribute::NoInline);
    }
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

bool mlir::gnn::emitObjects(
    llvm::Module &module,
    llvm::SmallVectorImpl<llvm::SmallVector<char, 0>> &objects,
    std::string &error) {
  objects.clear();
  // Split when translateAndOptimize left the steps unoptimised (large).
  bool steps = false, rest = false;
  for (const llvm::GlobalValue &gv : module.global_values()) {
    if (gv.isDeclaration())
      continue;
    if (isStep(&gv))
      steps |= llvm::cast<llvm::Function>(gv).hasOptNone();
    else
      rest = true;
  }
  if (!steps || !rest) {
    objects.emplace_back();
    return emitObject(module, objects.back(), error);
  }
  // What the optimiser kept alive (libmvec's vector functions for the
  // vectoriser) need not be kept any more, and such an appending array
  // cannot be split; constructors (llvm.global_ctors) keep one object.
  for (const char *name : {"llvm.compiler.used", "llvm.used"})
    if (llvm::GlobalVariable *used = module.getNamedGlobal(name))
      used->eraseFromParent();
  if (llvm::any_of(module.globals(), [](const llvm::GlobalVariable &gv) {
        return gv.hasAppendingLinkage();
      })) {
    objects.emplace_back();
    return emitObject(module, objects.back(), error);
  }
  // The two objects refer to each other's symbols: the local ones become
  // hidden global ones (names made unique by the module).
  for (llvm::GlobalValue &gv : module.global_values()) {
    if (gv.isDeclaration() || !gv.hasLocalLinkage())
      continue;
    if (!gv.hasName())
      gv.setName("__gnn_local");
    gv.setLinkage(llvm::GlobalValue::ExternalLinkage);
    gv.setVisibility(llvm::GlobalValue::HiddenVisibility);
  }
  llvm::ValueToValueMapTy stepMap, restMap;
  std::unique_ptr<llvm::Module> stepModule = llvm::CloneModule(
      module, stepMap, [](const llvm::GlobalValue *gv) { return isStep(gv); });
  std::unique_ptr<llvm::Module> restModule = llvm::CloneModule(
      module, restMap, [](const llvm::GlobalValue *gv) { return !isStep(gv); });
  objects.emplace_back();
  if (!emitObject(*stepModule, objects.back(), error,
                  llvm::CodeGenOptLevel::None))
    return false;
  objects.emplace_back();
  return emitObject(*restModule, objects.back(), error);
}

bool mlir::gnn::emitObject(llvm::Module &module,
                           llvm::SmallVectorImpl<char> &object,
                           std::string &error, llvm::CodeGenOptLevel level) {
  std::unique_ptr<llvm::TargetMachine> tm = hostMachine(error, level);
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
