//===- GNNDialect.td - gnn dialect definition --------------*- tablegen -*-===//
//
// The `gnn` dialect captures graph neural network programs in NeuGraph's
// SAGA-NN model: Scatter, ApplyEdge, Gather and ApplyVertex stages over a
// graph, plus the row-level ops used inside stage bodies and the training ops
// of the program contract (docs/ProgramContract.md).
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DIALECT
#define GNN_DIALECT

include "mlir/IR/OpBase.td"

def GNN_Dialect : Dialect {
  let name = "gnn";
  let cppNamespace = "::mlir::gnn";
  let summary = "Scatter-ApplyEdge-Gather-ApplyVertex graph neural network programs";
  let description = [{
    A `gnn` program computes over one graph value (`!gnn.graph`): |V| vertices
    and |E| directed edges src -> dst. Vertex tensors (`!gnn.vtensor`) hold one
    row per vertex and edge tensors (`!gnn.etensor`) one row per edge; a row is
    a scalar, a vector (`F`) or a per-head matrix (`heads x F`), with static or
    dynamic (`?`) widths.

    Four stage ops express a layer. `gnn.scatter` copies vertex rows onto the
    edges (from the source or the destination side); `gnn.apply_edge` runs
    its region once per edge; `gnn.gather` reduces edge rows into vertex rows
    (sum, mean, max or min); `gnn.apply_vertex` runs its region once per
    vertex. Stage regions are isolated from above: what a stage may read is
    exactly its block arguments (its row inputs, then its parameters). Inside
    the regions, rows are builtin `tensor` values and row-level ops (linear,
    element-wise, concat, row-dot, ...) compute on them.

    A model is a `func.func` marked `gnn.model` whose arguments are the
    learnable parameters (named with `gnn.param`, initialised per `gnn.init`)
    and which returns the loss and the logits. Data enters through
    `gnn.graph` and `gnn.input`.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Discardable attribute names of the program contract.
    static constexpr ::llvm::StringLiteral kModelAttrName = "gnn.model";
    static constexpr ::llvm::StringLiteral kParamAttrName = "gnn.param";
    static constexpr ::llvm::StringLiteral kInitAttrName = "gnn.init";
    static constexpr ::llvm::StringLiteral kDimsAttrName = "gnn.dims";
    /// The P of an aggregation's P x P chunk tiling (--gnn-chunk-tile), on a
    /// gnn.gather or gnn.fused_gather: a positive i64.
    static constexpr ::llvm::StringLiteral kChunksAttrName = "gnn.chunks";
    /// How a function's vertex tensors are split over processes
    /// (--gnn-partition-rows): "rows", on a func.func.
    static constexpr ::llvm::StringLiteral kPartitionAttrName =
        "gnn.partition";
    /// The functions --gnn-autodiff derives and the runtime's driver calls.
    static constexpr ::llvm::StringLiteral kTrainStepName = "gnn_train_step";
    static constexpr ::llvm::StringLiteral kEvalName = "gnn_eval";
    /// Layer-wise evaluation (--gnn-split-eval-levels): the functions
    /// `gnn_eval_level_<l>`, their level (an i64 on the func.func) and, below
    /// the last level, the cuts they return (a DenseI64ArrayAttr).
    static constexpr ::llvm::StringLiteral kEvalLevelPrefix =
        "gnn_eval_level_";
    static constexpr ::llvm::StringLiteral kEvalLevelAttrName =
        "gnn.eval_level";
    static constexpr ::llvm::StringLiteral kLevelOutputsAttrName =
        "gnn.level_outputs";
    /// On an op of @gnn_eval: the cut number of each of its results (-1:
    /// none), whose row widths the lowering gives the levels' cut inputs.
    static constexpr ::llvm::StringLiteral kCutsAttrName = "gnn.cuts";

  private:
    void registerTypes();
    void registerAttributes();

  public:
  }];
}

/// Base class of every gnn op.
class GNN_Op<string mnemonic, list<Trait> traits = []>
    : Op<GNN_Dialect, mnemonic, traits>;

#endif // GNN_DIALECT
