//===- Passes.td - gnn-to-gnn passes -----------------------*- tablegen -*-===//

#ifndef GNN_TRANSFORMS_PASSES
#define GNN_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def GNNAutodiff : Pass<"gnn-autodiff", "::mlir::ModuleOp"> {
  let summary = "Derive the training step and the evaluation function of a model";
  let description = [{
    For the module's `gnn.model` function `@m(params) -> (loss, logits)` adds:

    - `@gnn_eval(params) -> (loss, logits)`: the forward pass with every
      `gnn.dropout` removed;
    - `@gnn_train_step(params) -> (loss, logits, new params)`: the forward
      pass, the backward pass as SAGA stages, and one `gnn.optimizer_update`
      per parameter that receives a gradient.

    Adjoint pairs: `gather sum` ↔ `scatter` of the gradient from the same
    side; `gather mean` ↔ the same after dividing by the degree;
    `scatter from src|dst` ↔ `gather sum to src|dst`; the loss ↔
    `softmax_cross_entropy_grad`. A stage gets a backward stage of its kind
    that recomputes the forward body and applies each row op's gradient rule
    (RowGradientOpInterface); parameters used element-wise get per-row
    contributions summed by `gnn.sum_rows`, a linear's weight gets one
    `gnn.outer_sum` (a GEMM) over the rows. Inputs that need no gradient
    (features, degrees, edge data) get none, so no input-gradient GEMM is
    built for the features. Dropouts are numbered (`mask_id`) so that the
    recomputation and the backward reuse the forward's mask.

    Refused, with an error naming the op: `max`/`min` gathers (their rule
    lands with the whole-zoo milestone) and a linear whose weight is computed
    inside the stage.

    Example: for `%a = gnn.gather sum %g, %m to dst` the backward pass holds
    `%dm = gnn.scatter %g, %da from dst`.
  }];
  let dependentDialects = ["::mlir::gnn::GNNDialect", "::mlir::func::FuncDialect"];
}

#endif // GNN_TRANSFORMS_PASSES
