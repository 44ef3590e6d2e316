//===- GNNInterfaces.td - gnn op interfaces ----------------*- tablegen -*-===//

#ifndef GNN_INTERFACES
#define GNN_INTERFACES

include "mlir/IR/OpBase.td"

def GNN_RowGradientOpInterface : OpInterface<"RowGradientOpInterface"> {
  let cppNamespace = "::mlir::gnn";
  let description = [{
    The gradient rule of a row-level op, used by `--gnn-autodiff` inside
    backward stage regions. Given the gradient of the op's result (a row of
    the result's type), builds at the builder's insertion point the gradient
    of every operand: a row of that operand's type (broadcast operands get
    their gradient summed back to their shape), or a null Value when the
    operand gets none (integer operands, constants). The operands of `op`
    are valid at the insertion point (the pass recomputes the forward body
    in the backward region).

    A linear op whose weight is a stage parameter does not return a weight
    gradient: the pass reduces it over all rows as one GEMM
    (`gnn.outer_sum`) instead of materialising a per-row outer product.
  }];
  let methods = [
    InterfaceMethod<
      "builds the gradients of the operands from the result's gradient",
      "::mlir::LogicalResult", "buildRowGradients",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Value":$resultGrad,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>
  ];
}

#endif // GNN_INTERFACES
