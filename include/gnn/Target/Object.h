//===- Object.h - LLVM IR and object files from the LLVM dialect -*- C++ -*-===//

#ifndef GNN_TARGET_OBJECT_H
#define GNN_TARGET_OBJECT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CodeGen.h"

#include <memory>
#include <string>

namespace mlir::gnn {

/// Translates an LLVM-dialect module to LLVM IR for the host CPU and runs the
/// O3 pipeline with the host's TargetMachine (vectorisers on). Null on
/// failure, with the reason in `error`.
std::unique_ptr<llvm::Module> translateAndOptimize(ModuleOp module,
                                                   llvm::LLVMContext &context,
                                                   std::string &error);

/// The CPU the host code is compiled for: `cpu` (an LLVM CPU name such as
/// x86-64-v3, with its features), or this machine's CPU and features when
/// empty (the default).
void setTargetCPU(llvm::StringRef cpu);

/// Emits `module` as a position-independent object file into `object`,
/// with the code generator at `level`.
bool emitObject(llvm::Module &module, llvm::SmallVectorImpl<char> &object,
                std::string &error,
                llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Default);

/// Appends `_<suffix>` to the name of everything `module` defines (its
/// functions and globals, local or not; unnamed ones become
/// `__gnn_local_<suffix>`), so that the objects of several programs of one
/// model link into one executable: `gnn_train_step_rows`, `gnn_eval_rows`
/// and `gnnrt_model_info_rows` are the row-partitioned program's entry
/// points (gnn-compile --partition auto, docs/Distributed.md).
void suffixDefinitions(llvm::Module &module, llvm::StringRef suffix);

/// Emits `module` as one or two object files: the step functions at -O0
/// (long sequences of runtime calls, whose register allocation at -O2 was
/// most of a large model's compile time) and the kernels and data at -O2.
/// Local symbols become hidden global ones so that the two refer to each
/// other. One object when the module has only one kind.
bool emitObjects(llvm::Module &module,
                 llvm::SmallVectorImpl<llvm::SmallVector<char, 0>> &objects,
                 std::string &error);

} // namespace mlir::gnn

#endif // GNN_TARGET_OBJECT_H
