//===- CPUKernelEmitter.cpp - kernels run by gnnrtParallelFor -------------===//

#include "KernelEmitter.h"
#include "RowChunks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::gnn;

KernelEmitter::~KernelEmitter() = default;

namespace {
constexpr llvm::StringLiteral kKernelPrefix = "__gnn_kernel_";

class CPUKernelEmitter final : public KernelEmitter {
public:
  CPUKernelEmitter(ModuleOp module, LoweringBuilder &lb)
      : module(module), lb(lb) {}

  void setBuffer(int64_t index, Value memref, RowAccess access) override {
    bool i32 =
        cast<MemRefType>(memref.getType()).getElementType().isInteger(32);
    lb.call(i32 ? rt::Call::gnnrtKernelArgI32 : rt::Call::gnnrtKernelArg,
            {lb.ctx, lb.cI64(index), memref});
    Operation *call = &*std::prev(lb.b.getInsertionPoint());
    if (access == RowAccess::All)
      markReadsAllRows(call);
    else if (access == RowAccess::Neighbours)
      markNeighbourRows(call);
  }
  void setInt(int64_t index, Value value) override {
    Value position = lb.cI64(index);
    if (value.getType().isIndex())
      value = lb.toI64(value);
    lb.call(rt::Call::gnnrtKernelInt, {lb.ctx, position, value});
  }

  void begin() override;
  Value getBuffer(int64_t index, bool isI32) override {
    return lb.call(isI32 ? rt::Call::gnnrtKernelArgI32Get
                         : rt::Call::gnnrtKernelArgGet,
                   {kernelCtx(), lb.cI64(index)});
  }
  Value getInt(int64_t index) override {
    return lb.call(rt::Call::gnnrtKernelIntGet, {kernelCtx(), lb.cI64(index)});
  }
  Value rangeBegin() override {
    return lb.toIndex(lb.b, kernel.getArgument(1));
  }
  Value rangeEnd() override { return lb.toIndex(lb.b, kernel.getArgument(2)); }
  Value graphOffsets(int64_t side) override {
    return lb.call(rt::Call::gnnrtGraphOffsets, {kernelCtx(), lb.cI64(side)});
  }
  Value graphIndex(int64_t which) override {
    return lb.call(rt::Call::gnnrtGraphIndex, {kernelCtx(), lb.cI64(which)});
  }
  Value graphLongRows(int64_t side, int64_t which) override {
    return lb.call(rt::Call::gnnrtGraphLongRows,
                   {kernelCtx(), lb.cI64(side), lb.cI64(which)});
  }
  Value graphPieceOffsets(int64_t side) override {
    return lb.call(rt::Call::gnnrtGraphPieceOffsets,
                   {kernelCtx(), lb.cI64(side)});
  }
  Value graphPieceEdges(int64_t side) override {
    return lb.call(rt::Call::gnnrtGraphPieceEdges,
                   {kernelCtx(), lb.cI64(side)});
  }
  void launch(Value n) override;

private:
  Value kernelCtx() { return kernel.getArgument(0); }

  ModuleOp module;
  LoweringBuilder &lb;
  func::FuncOp kernel;
  OpBuilder::InsertPoint host;
  /// The number of the next kernel (-1: not known yet).
  int64_t nextKernel = -1;
};
} // namespace

void CPUKernelEmitter::begin() {
  MLIRContext *mctx = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(mctx);
  Type i64 = lb.b.getI64Type();
  if (nextKernel < 0) {
    // Numbered after the module's kernels (the other function's), found in
    // one scan: looking each name up would scan the module per kernel.
    nextKernel = 0;
    for (auto fn : module.getOps<func::FuncOp>()) {
      int64_t n;
      StringRef name = fn.getSymName();
      if (name.consume_front(kKernelPrefix) && !name.getAsInteger(10, n))
        nextKernel = std::max(nextKernel, n + 1);
    }
  }
  std::string name = (kKernelPrefix + Twine(nextKernel++)).str();
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  kernel = mb.create<func::FuncOp>(
      lb.loc, name, FunctionType::get(mctx, {ptr, i64, i64}, {}));
  kernel.setPrivate();
  kernel.addEntryBlock();
  host = lb.b.saveInsertionPoint();
  lb.b.setInsertionPointToStart(&kernel.getBody().front());
}

void CPUKernelEmitter::launch(Value n) {
  lb.b.create<func::ReturnOp>(lb.loc);
  lb.b.restoreInsertionPoint(host);
  Value fn = lb.b.create<func::ConstantOp>(lb.loc, kernel.getFunctionType(),
                                           SymbolRefAttr::get(kernel));
  lb.call(rt::Call::gnnrtParallelFor, {lb.ctx, fn, lb.toI64(n)});
  kernel = nullptr;
}

std::unique_ptr<KernelEmitter>
gnn::createCPUKernelEmitter(ModuleOp module, LoweringBuilder &lb) {
  return std::make_unique<CPUKernelEmitter>(module, lb);
}
