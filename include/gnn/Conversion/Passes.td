//===- Passes.td - gnn conversion passes -------------------*- tablegen -*-===//

#ifndef GNN_CONVERSION_PASSES
#define GNN_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertGNNToRuntime : Pass<"convert-gnn-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lower @gnn_train_step and @gnn_eval to loops and gnnrt calls";
  let description = [{
    Replaces the gnn functions of a module that went through
    `--gnn-autodiff` with `func.func @gnn_train_step(%ctx: !llvm.ptr) -> f32`
    and `@gnn_eval`, the entry points the executable's driver calls
    (runtime/include/gnnrt/GNNRuntime.h), plus the model description
    `gnnrt_model_info` (parameters, their initialisers and dimension
    bindings, edge inputs).

    Every vertex/edge tensor and every row value of a stage body becomes a
    flat `memref<?xf32>` of |rows| x row size from a `gnnrtBuffer` slot (the
    same memory every epoch). A stage's body runs op by op over all its rows:
    element-wise ops become `scf.for` nests over rows and row elements
    (vectorised by LLVM), each `gnn.linear` over all rows is one
    `gnnrtGemm` call (as are `linear_transpose` and `outer_sum`), gathers,
    scatters, the loss, dropout and the optimizer are runtime calls.
    Parameters and gradients live in the runtime (`gnnrtParam`,
    `gnnrtGrad`).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

#endif // GNN_CONVERSION_PASSES
