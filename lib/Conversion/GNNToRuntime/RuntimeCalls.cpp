//===- RuntimeCalls.cpp - typed calls into gnnrt --------------------------===//

#include "RuntimeCalls.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::rt;

namespace {
/// The table's rows.
struct Entry {
  StringLiteral name;
  bool cInterface;
  ABIType result;
  ArrayRef<ABIType> args;
};

#define GNNRT_UNPAREN(...) __VA_ARGS__
// The argument lists, each behind a Void so that an empty list is an array.
namespace args {
constexpr ABIType Void = ABIType::Void, Ctx = ABIType::Ctx, I64 = ABIType::I64,
                  U64 = ABIType::U64, F32 = ABIType::F32, F64 = ABIType::F64,
                  MemF32 = ABIType::MemF32, MemI32 = ABIType::MemI32,
                  MemI64 = ABIType::MemI64, Kernel = ABIType::Kernel;
#define GNNRT_CALL(Name, Interface, Result, Args)                              \
  constexpr ABIType Name[] = {Void, GNNRT_UNPAREN Args};
#include "gnn/Conversion/GNNToRuntime/RuntimeCalls.def"
} // namespace args

constexpr bool isCInterface(char interface) { return interface == 'M'; }

const Entry &entry(Call call) {
  static const Entry table[] = {
#define GNNRT_CALL(Name, Interface, Result, Args)                              \
  {#Name, isCInterface(#Interface[0]), ABIType::Result,                        \
   ArrayRef<ABIType>(args::Name).drop_front()},
#include "gnn/Conversion/GNNToRuntime/RuntimeCalls.def"
  };
  return table[static_cast<unsigned>(call)];
}
} // namespace

StringRef rt::getName(Call call) { return entry(call).name; }
bool rt::hasCInterface(Call call) { return entry(call).cInterface; }
ABIType rt::getResultType(Call call) { return entry(call).result; }
ArrayRef<ABIType> rt::getArgumentTypes(Call call) { return entry(call).args; }

Type rt::getMLIRType(MLIRContext *context, ABIType type) {
  auto memref = [&](Type element) {
    return MemRefType::get({ShapedType::kDynamic}, element);
  };
  Builder b(context);
  switch (type) {
  case ABIType::Void:
    return Type();
  case ABIType::Ctx:
    return LLVM::LLVMPointerType::get(context);
  case ABIType::I64:
  case ABIType::U64:
    return b.getI64Type();
  case ABIType::F32:
    return b.getF32Type();
  case ABIType::F64:
    return b.getF64Type();
  case ABIType::MemF32:
    return memref(b.getF32Type());
  case ABIType::MemI32:
    return memref(b.getI32Type());
  case ABIType::MemI64:
    return memref(b.getI64Type());
  case ABIType::Kernel:
    return FunctionType::get(
        context,
        {LLVM::LLVMPointerType::get(context), b.getI64Type(), b.getI64Type()},
        {});
  }
  llvm_unreachable("unknown ABI type");
}

func::FuncOp RuntimeCalls::getOrInsertDeclaration(Call call) {
  func::FuncOp &cached = declarations[static_cast<unsigned>(call)];
  if (cached)
    return cached;
  StringRef name = getName(call);
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return cached = fn;
  MLIRContext *context = module.getContext();
  SmallVector<Type> args, results;
  for (ABIType t : getArgumentTypes(call))
    args.push_back(getMLIRType(context, t));
  if (Type r = getMLIRType(context, getResultType(call)))
    results.push_back(r);
  OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
  auto fn = mb.create<func::FuncOp>(module.getLoc(), name,
                                    FunctionType::get(context, args, results));
  fn.setPrivate();
  if (hasCInterface(call))
    fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), mb.getUnitAttr());
  return fn;
}

Value RuntimeCalls::create(OpBuilder &builder, Location loc, Call call,
                           ValueRange args) {
  func::FuncOp fn = getOrInsertDeclaration(call);
  if (TypeRange(fn.getFunctionType().getInputs()) != TypeRange(args))
    llvm::report_fatal_error(Twine("convert-gnn-to-runtime: a call of ") +
                             getName(call) +
                             " does not match RuntimeCalls.def's signature");
  auto op = builder.create<func::CallOp>(loc, fn, args);
  return op.getNumResults() ? op.getResult(0) : Value();
}
