//===- RuntimeCalls.h - typed calls into gnnrt ------------------*- C++ -*-===//
//
// The lowering's one way to call the runtime: the entry points of
// gnn/Conversion/GNNToRuntime/RuntimeCalls.def, each with the argument and
// result types the table gives, declared in the module on first use.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_CONVERSION_GNNTORUNTIME_RUNTIMECALLS_H
#define GNN_LIB_CONVERSION_GNNTORUNTIME_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::gnn::rt {

/// An entry point of the runtime, by its C name.
enum class Call : unsigned {
#define GNNRT_CALL(Name, ...) Name,
#include "gnn/Conversion/GNNToRuntime/RuntimeCalls.def"
};

/// The table's argument and result types.
enum class ABIType {
  Void,
  Ctx,
  I64,
  U64,
  F32,
  F64,
  MemF32,
  MemI32,
  MemI64,
  Kernel
};

/// The C name of `call` (without `_mlir_ciface_`).
StringRef getName(Call call);
/// Whether `call` is declared with `llvm.emit_c_interface`.
bool hasCInterface(Call call);
ABIType getResultType(Call call);
ArrayRef<ABIType> getArgumentTypes(Call call);

/// The MLIR type of a table type (null for Void).
Type getMLIRType(MLIRContext *context, ABIType type);

/// Declares runtime entry points in one module and builds calls to them.
class RuntimeCalls {
public:
  explicit RuntimeCalls(ModuleOp module) : module(module) {}

  /// The declaration of `call` (private, at the top of the module), made on
  /// first use.
  func::FuncOp getOrInsertDeclaration(Call call);
  /// A call of `call` with `args` at `builder`'s insertion point; the
  /// arguments must have the table's types. Returns the result, or null.
  Value create(OpBuilder &builder, Location loc, Call call, ValueRange args);

private:
  ModuleOp module;
  /// Declarations made or found so far (a module lookup is a linear scan).
  DenseMap<unsigned, func::FuncOp> declarations;
};

} // namespace mlir::gnn::rt

#endif // GNN_LIB_CONVERSION_GNNTORUNTIME_RUNTIMECALLS_H
