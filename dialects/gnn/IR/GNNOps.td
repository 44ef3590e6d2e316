//===- GNNOps.td - gnn dialect operations ------------------*- tablegen -*-===//
//
// Semantics: ../shared/DESIGN.md ("The gnn dialect") and docs/Dialect.md.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_OPS
#define GNN_OPS

include "gnn/IR/GNNDialect.td"
include "gnn/IR/GNNTypes.td"
include "gnn/IR/GNNAttrs.td"
include "gnn/IR/GNNInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Data access
//===----------------------------------------------------------------------===//

def GNN_GraphOp : GNN_Op<"graph", [Pure]> {
  let summary = "the graph the program runs on";
  let description = [{
    Produces the program's graph, bound at run time from the dataset
    (`--data DIR`). A model reads it once.

    In a partitioned function (`gnn.partition`, docs/Distributed.md) the
    graph is the process's part: its own vertices as destinations and their
    in-edges. `whole` is the graph of every vertex and every edge, which
    feature partitioning (`--gnn-partition-features`) runs its first layer
    on; only a feature-partitioned function may read it.

    Example:
    ```mlir
    %g = gnn.graph : !gnn.graph
    %gw = gnn.graph whole : !gnn.graph
    ```
  }];
  let arguments = (ins UnitAttr:$whole);
  let results = (outs GNN_GraphType:$result);
  let assemblyFormat = "(`whole` $whole^)? attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def GNN_InputOp : GNN_Op<"input", [Pure]> {
  let summary = "a named per-vertex or per-edge input of the dataset";
  let description = [{
    Reads named data of the dataset bound to `graph`. Vertex inputs and the
    row type each requires:
    - `features`: `!gnn.vtensor<Fxf32>` (F static or `?`, bound from the data);
    - `labels`: `!gnn.vtensor<i64>` (−1 where unlabelled);
    - `train_mask`, `val_mask`, `test_mask`: `!gnn.vtensor<i1>`.

    `level.<k>` (k a number) is cut k of a layer-wise evaluation, a
    `!gnn.vtensor<...xf32>` that only the functions of
    `--gnn-split-eval-levels` (`gnn.eval_level`) read.

    Any other name is per-edge data `edge_<name>.npy` of the dataset and must
    have an edge tensor type: `!gnn.etensor<kxf32>` (or `!gnn.etensor<f32>`)
    for weights and features, `!gnn.etensor<i32>` for edge types.

    Example:
    ```mlir
    %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
    %t = gnn.input %g "type" : !gnn.etensor<i32>
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, StrAttr:$name);
  let results = (outs GNN_AnyRowTensor:$result);
  let assemblyFormat = "$graph $name attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True for the vertex inputs of the program contract.
    static bool isVertexInputName(::llvm::StringRef name);
    /// k for a cut `level.<k>` of a layer-wise evaluation.
    static std::optional<int64_t> getLevelInputIndex(::llvm::StringRef name);
  }];
}

def GNN_DegreeOp : GNN_Op<"degree", [Pure]> {
  let summary = "per-vertex in- or out-degree";
  let description = [{
    The number of in-edges (`in`, edges whose destination is the vertex) or
    out-edges (`out`) of every vertex, as an f32 row of width 1. Programs
    compute normalisations from it (GCN's 1/sqrt(d_u d_v)), so any dataset
    works.

    Example:
    ```mlir
    %d = gnn.degree %g in : !gnn.vtensor<1xf32>
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, GNN_DirectionAttr:$direction);
  let results = (outs GNN_VertexTensorType:$result);
  let assemblyFormat = "$graph $direction attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// SAGA stages
//===----------------------------------------------------------------------===//

def GNN_ScatterOp : GNN_Op<"scatter", [Pure]> {
  let summary = "copy vertex rows onto edges (Scatter)";
  let description = [{
    For every edge u -> v, row e of the result is row u (`from src`) or row v
    (`from dst`) of `input`. The row type is unchanged. Scatter has no user
    region (NeuGraph: it is a system operator).

    Example:
    ```mlir
    %e = gnn.scatter %g, %h from src : !gnn.vtensor<128xf32> -> !gnn.etensor<128xf32>
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, GNN_VertexTensorType:$input,
                       GNN_SideAttr:$side);
  let results = (outs GNN_EdgeTensorType:$result);
  let assemblyFormat = [{
    $graph `,` $input `from` $side attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def GNN_GatherOp : GNN_Op<"gather", [Pure]> {
  let summary = "reduce edge rows into vertex rows (Gather)";
  let description = [{
    For every vertex v, row v of the result reduces, element by element, the
    rows of the edges whose destination (`to dst`) or source (`to src`) is v,
    with `sum`, `mean`, `max` or `min`. A vertex with no such edge gets 0.
    For `max`/`min`, ties go to the edge with the lowest CSC position (the
    edge that comes first in the dataset's `indices` order); gradients are
    routed to that edge. `mean` divides by the vertex's in-degree (`to dst`)
    or out-degree (`to src`). Gather has no user region.

    Example:
    ```mlir
    %a = gnn.gather sum %g, %m to dst : !gnn.etensor<128xf32> -> !gnn.vtensor<128xf32>
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, GNN_EdgeTensorType:$input,
                       GNN_AccumulatorAttr:$acc, GNN_SideAttr:$side);
  let results = (outs GNN_VertexTensorType:$result);
  let assemblyFormat = [{
    $acc $graph `,` $input `to` $side attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

/// ApplyEdge and ApplyVertex: a region run once per row, isolated from
/// above; block arguments are the rows of `inputs`, then the `params`.
class GNN_StageOp<string mnemonic, Type rowTensor>
    : GNN_Op<mnemonic, [IsolatedFromAbove, AttrSizedOperandSegments,
                        SingleBlock, RecursiveMemoryEffects]> {
  let arguments = (ins GNN_GraphType:$graph, Variadic<rowTensor>:$inputs,
                       Variadic<AnyRankedTensor>:$params);
  let results = (outs Variadic<rowTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $graph `(` $inputs `)` (`params` `(` $params^ `)`)? attr-dict `:`
    `(` type($inputs) `)` (`params` `(` type($params)^ `)`)? `->` type($results)
    $body
  }];
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes, "::mlir::Value":$graph,
                   "::mlir::ValueRange":$inputs, "::mlir::ValueRange":$params)>
  ];
  let extraClassDeclaration = [{
    /// Block arguments bound to the rows of `inputs`.
    ::mlir::Block::BlockArgListType getInputArgs() {
      return getBody().front().getArguments().take_front(getInputs().size());
    }
    /// Block arguments bound to `params`.
    ::mlir::Block::BlockArgListType getParamArgs() {
      return getBody().front().getArguments().drop_front(getInputs().size());
    }
    /// The terminator of the body.
    YieldOp getYield();
  }];
  let extraClassDefinition = [{
    YieldOp $cppClass::getYield() {
      return ::llvm::cast<YieldOp>(getBody().front().getTerminator());
    }
  }];
}

def GNN_ApplyEdgeOp : GNN_StageOp<"apply_edge", GNN_EdgeTensorType> {
  let summary = "run a region once per edge (ApplyEdge)";
  let description = [{
    Runs `body` on every edge. Its block arguments are, in order, the edge's
    row of each input edge tensor (typically scatters of the source and
    destination vertex rows, and edge data) and then the parameters; the
    `gnn.yield`ed rows form the result edge tensors. The region is isolated
    from above: it can read nothing else.

    Example (GCN: weight the source row by a per-edge scalar):
    ```mlir
    %m = gnn.apply_edge %g (%s, %n) : (!gnn.etensor<16xf32>, !gnn.etensor<1xf32>)
           -> !gnn.etensor<16xf32> {
    ^bb0(%src: tensor<16xf32>, %w: tensor<1xf32>):
      %r = gnn.mul %src, %w : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
      gnn.yield %r : tensor<16xf32>
    }
    ```
  }];
}

def GNN_ApplyVertexOp
    : GNN_StageOp<"apply_vertex", GNN_VertexTensorType> {
  let summary = "run a region once per vertex (ApplyVertex)";
  let description = [{
    Runs `body` on every vertex. Its block arguments are, in order, the
    vertex's row of each input vertex tensor (its previous data, its
    accumulation, ...) and then the parameters; the `gnn.yield`ed rows form
    the result vertex tensors. A `gnn.linear` in this region applied to all
    vertices is one GEMM over the whole vertex tensor.

    Example:
    ```mlir
    %o = gnn.apply_vertex %g (%a) params(%w) : (!gnn.vtensor<16xf32>)
           params(tensor<16x8xf32>) -> !gnn.vtensor<8xf32> {
    ^bb0(%acc: tensor<16xf32>, %wv: tensor<16x8xf32>):
      %t = gnn.linear %acc, %wv : (tensor<16xf32>, tensor<16x8xf32>) -> tensor<8xf32>
      %r = gnn.relu %t : tensor<8xf32>
      gnn.yield %r : tensor<8xf32>
    }
    ```
  }];
}

def GNN_FusedGatherOp : GNN_Op<"fused_gather", [IsolatedFromAbove,
    AttrSizedOperandSegments, AttrSizedResultSegments, SingleBlock,
    RecursiveMemoryEffects]> {
  let summary = "Scatter, an element-wise ApplyEdge and a Gather in one (Fused-Gather)";
  let description = [{
    NeuGraph's Fused-Gather (§3.4): for every vertex v, row v of the result
    reduces with `acc` (as `gnn.gather` does, ties and empty neighbourhoods
    included) the rows that `body` computes for the edges whose destination
    (`to dst`) or source (`to src`) is v. No edge tensor exists between the
    stages: each edge's row is computed where it is accumulated.

    The body's block arguments are, in order, the edge's row of each
    `src` vertex tensor (read at the edge's source), of each `dst` vertex
    tensor (read at its destination), of each `edge` tensor, then the
    parameters. The body holds unary and binary element-wise ops, splat
    constants, `broadcast_heads`, `edge_select` and the row reductions
    `reduce_sum` and `row_dot` (computed once per edge); scalar rows
    broadcast.
    `--gnn-fuse-sag` builds it; `--convert-gnn-to-runtime` lowers it to one
    compiled loop nest (vertices, their edges, row elements) run in parallel
    over vertices.

    Several aggregations over the same edges (same side and accumulator)
    share one op: the body yields one row per result, and the edge's values
    they have in common (GAT's attention coefficients in the backward pass)
    are computed once.

    For `max` and `min` with one result, the optional `arg` result (i32 rows
    of the same shape) holds for every element the id of the edge that was
    chosen (-1 without edges): what the backward pass's `gnn.edge_select`
    routes gradients through instead of a |E|-sized `gnn.gather_grad`.

    Example (GCN's weighted sum, and G-GCN's gated sum after hoisting):
    ```mlir
    %a = gnn.fused_gather sum %g src(%h : !gnn.vtensor<16xf32>)
           edge(%w : !gnn.etensor<1xf32>) to dst : !gnn.vtensor<16xf32> {
    ^bb0(%x: tensor<16xf32>, %c: tensor<1xf32>):
      %m = gnn.mul %x, %c : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
      gnn.yield %m : tensor<16xf32>
    }
    %b = gnn.fused_gather sum %g src(%h, %y : !gnn.vtensor<16xf32>, !gnn.vtensor<16xf32>)
           dst(%x : !gnn.vtensor<16xf32>) to dst : !gnn.vtensor<16xf32> {
    ^bb0(%hs: tensor<16xf32>, %ys: tensor<16xf32>, %xd: tensor<16xf32>):
      %t = gnn.add %xd, %ys : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %s = gnn.sigmoid %t : tensor<16xf32>
      %m = gnn.mul %s, %hs : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      gnn.yield %m : tensor<16xf32>
    }
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph,
                       Variadic<GNN_VertexTensorType>:$srcInputs,
                       Variadic<GNN_VertexTensorType>:$dstInputs,
                       Variadic<GNN_EdgeTensorType>:$edgeInputs,
                       Variadic<AnyRankedTensor>:$params,
                       GNN_AccumulatorAttr:$acc, GNN_SideAttr:$side);
  let results = (outs Variadic<GNN_VertexTensorType>:$outs,
                      Optional<GNN_VertexTensorType>:$arg);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $acc $graph
    (`src` `(` $srcInputs^ `:` qualified(type($srcInputs)) `)`)?
    (`dst` `(` $dstInputs^ `:` qualified(type($dstInputs)) `)`)?
    (`edge` `(` $edgeInputs^ `:` qualified(type($edgeInputs)) `)`)?
    (`params` `(` $params^ `:` type($params) `)`)?
    `to` $side attr-dict `:` qualified(type($outs))
    (`arg` qualified(type($arg))^)? $body
  }];
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes, "::mlir::Value":$graph,
                   "::mlir::ValueRange":$srcInputs,
                   "::mlir::ValueRange":$dstInputs,
                   "::mlir::ValueRange":$edgeInputs,
                   "::mlir::ValueRange":$params, "Accumulator":$acc,
                   "Side":$side, CArg<"bool", "false">:$withArg)>
  ];
  let extraClassDeclaration = [{
    /// The src, dst and edge inputs, in the order of the block arguments.
    ::llvm::SmallVector<::mlir::Value> getRowInputs();
    /// The terminator of the body.
    YieldOp getYield();
  }];
}

def GNN_YieldOp : GNN_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["ApplyEdgeOp", "ApplyVertexOp", "FusedGatherOp"]>]> {
  let summary = "the rows a stage region produces";
  let description = [{
    Terminates a stage region; operand i is the row of result i.

    Example: `gnn.yield %r : tensor<16xf32>`
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ /* nothing */ }]>];
}

//===----------------------------------------------------------------------===//
// Row-level ops (inside stage regions)
//===----------------------------------------------------------------------===//

def GNN_F32Row : RankedTensorOf<[F32]>;

class GNN_RowOp<string mnemonic, list<Trait> traits = []>
    : GNN_Op<mnemonic, !listconcat(traits,
          [ParentOneOf<["ApplyEdgeOp", "ApplyVertexOp", "FusedGatherOp"]>])>;

def GNN_LinearOp : GNN_RowOp<"linear", [Pure,
    DeclareOpInterfaceMethods<GNN_RowGradientOpInterface>]> {
  let summary = "contract a row with a weight tensor";
  let description = [{
    `result[n...] = Σ_k... input[k...] · weight[k..., n...]`: every dimension
    of the row is contracted with the leading dimensions of `weight`, so the
    weight's shape is the row shape followed by the result shape. Over all
    rows of a stage this is one GEMM of the tensor viewed as
    |rows| × prod(row shape) with the weight viewed as a matrix.
    `(tensor<Kxf32>, tensor<KxNxf32>) -> tensor<Nxf32>` is the usual case;
    `(tensor<Kxf32>, tensor<KxHxNxf32>) -> tensor<HxNxf32>` projects to H
    heads, `(tensor<HxNxf32>, tensor<HxNxCxf32>) -> tensor<Cxf32>` merges them.

    Example:
    ```mlir
    %y = gnn.linear %x, %w : (tensor<128xf32>, tensor<128x64xf32>) -> tensor<64xf32>
    ```
  }];
  let arguments = (ins GNN_F32Row:$input, GNN_F32Row:$weight);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = "$input `,` $weight attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def GNN_TypedLinearOp : GNN_RowOp<"typed_linear", [Pure,
    DeclareOpInterfaceMethods<GNN_RowGradientOpInterface>]> {
  let summary = "a linear whose weight is chosen per edge by its type";
  let description = [{
    `weight` stacks T weights, `weight[t]` being the weight of a
    `gnn.linear` for rows of type t; `type` (an i32 row, e.g. the edge's type
    from `gnn.input`) selects one. A type outside [0, T) is a run-time error.
    Over all edges this is a grouped GEMM (GG-NN).

    Example:
    ```mlir
    %y = gnn.typed_linear %x, %t, %w : (tensor<64xf32>, tensor<i32>, tensor<3x64x64xf32>) -> tensor<64xf32>
    ```
  }];
  let arguments = (ins GNN_F32Row:$input, 0DTensorOf<[I32]>:$type,
                       GNN_F32Row:$weight);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = [{
    $input `,` $type `,` $weight attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

class GNN_UnaryOp<string mnemonic, string formula, list<Trait> traits = []>
    : GNN_RowOp<mnemonic, !listconcat(traits, [SameOperandsAndResultType,
          DeclareOpInterfaceMethods<GNN_RowGradientOpInterface>])> {
  let summary = "element-wise " # formula;
  let description = "Applies `" # formula # "` to every element of the row."
      # "\n\nExample: `%y = gnn." # mnemonic # " %x : tensor<16xf32>`";
  let arguments = (ins GNN_F32Row:$input);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
}

def GNN_ReluOp : GNN_UnaryOp<"relu", "max(x, 0)", [Pure]>;
def GNN_SigmoidOp : GNN_UnaryOp<"sigmoid", "1 / (1 + exp(-x))", [Pure]>;
def GNN_TanhOp : GNN_UnaryOp<"tanh", "tanh(x)", [Pure]>;
def GNN_ExpOp : GNN_UnaryOp<"exp", "exp(x)", [Pure]>;
def GNN_LogOp : GNN_UnaryOp<"log", "log(x)", [Pure]>;
def GNN_NegOp : GNN_UnaryOp<"neg", "-x", [Pure]>;
def GNN_SqrtOp : GNN_UnaryOp<"sqrt", "sqrt(x)", [Pure]>;
def GNN_RsqrtOp : GNN_UnaryOp<"rsqrt", "1 / sqrt(x)", [Pure]>;
def GNN_StepOp : GNN_UnaryOp<"step", "x > 0 ? 1 : 0", [Pure]>;
def GNN_EluOp : GNN_UnaryOp<"elu", "x > 0 ? x : exp(x) - 1", [Pure]>;

def GNN_StopGradientOp : GNN_RowOp<"stop_gradient",
    [Pure, SameOperandsAndResultType,
     DeclareOpInterfaceMethods<GNN_RowGradientOpInterface>]> {
  let summary = "the row itself, through which no gradient flows back";
  let description = [{
    The identity in the forward pass; `--gnn-autodiff` gives its operand no
    gradient (PyTorch's `detach`). A softmax's shift is the use: GAT's
    scores minus their per-destination maximum are exponentiated and
    normalised, which does not depend on the shift, so the maximum's
    gradient is zero in exact arithmetic and PyG (`src_max.detach()`) and
    DGL (`edge_softmax`) do not compute it. Stopping it there saves the
    backward pass through the max gather. It is not folded away before
    autodiff; the lowering treats it as the identity.

    Example: `%y = gnn.stop_gradient %x : tensor<4xf32>`
  }];
  let arguments = (ins GNN_F32Row:$input);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
}

def GNN_LeakyReluOp : GNN_RowOp<"leaky_relu",
    [Pure, SameOperandsAndResultType,
     DeclareOpInterfaceMethods<GNN_RowGradientOpInterface>]> {
  let summary = "element-wise x > 0 ? x : alpha * x";
  let description = [{
    `alpha` is the slope for negative inputs (GAT uses 0.2).

    Example: `%y = gnn.leaky_relu %x {alpha = 2.000000e-01 : f64} : tensor<4xf32>`
  }];
  let arguments = (ins GNN_F32Row:$input,
                       DefaultValuedAttr<F64Attr, "0.01">:$alpha);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
}

// Verifies an element-wise binary op: operands of one shape, or a scalar row
// broadcast over the other; the result of that shape (mlir::gnn::
// BroadcastRows in GNNOps.h).
def GNN_BroadcastRows : NativeOpTrait<"BroadcastRows"> {
  let cppNamespace = "::mlir::gnn";
}

class GNN_BinaryOp<string mnemonic, string formula>
    : GNN_RowOp<mnemonic, [Pure, GNN_BroadcastRows,
          DeclareOpInterfaceMethods<GNN_RowGradientOpInterface>]> {
  let summary = "element-wise " # formula # " with scalar broadcast";
  let description = "Computes `" # formula # "` element by element. Both "
      # "operands have the result's shape, or one of them is a scalar "
      # "(`tensor<f32>` or `tensor<1xf32>`, e.g. a per-edge weight or a "
      # "learnable scalar) broadcast over the other.\n\n"
      # "Example: `%y = gnn." # mnemonic # " %a, %w : (tensor<16xf32>, "
      # "tensor<1xf32>) -> tensor<16xf32>`";
  let arguments = (ins GNN_F32Row:$lhs, GNN_F32Row:$rhs);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def GNN_AddOp : GNN_BinaryOp<"add", "lhs + rhs">;
def GNN_SubOp : GNN_BinaryOp<"sub", "lhs - rhs">;
def GNN_MulOp : GNN_BinaryOp<"mul", "lhs * rhs">;
def GNN_DivOp : GNN_BinaryOp<"div", "lhs / rhs">;

def GNN_ConstantOp : GNN_RowOp<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>,
     DeclareOpInterfaceMethods<GNN_RowGradientOpInterface>]> {
  let summary = "a constant row";
  let description = [{
    A constant f32 row (e.g. the 1 of GIN's `1 + ε` or of a GRU's `1 - z`).
    Learnable scalars are not constants: they are rank-0 parameters
    (`tensor<f32>`) broadcast by the element-wise ops.

    Example:
    ```mlir
    %one = gnn.constant dense<1.0> : tensor<1xf32>
    ```
  }];
  let arguments = (ins FloatElementsAttr<32>:$value);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

def GNN_ConcatOp : GNN_RowOp<"concat", [Pure,
    DeclareOpInterfaceMethods<GNN_RowGradientOpInterface>]> {
  let summary = "concatenate rows along their last dimension";
  let description = [{
    All operands have the same rank and agree on every dimension but the
    last; the result's last dimension is the sum of theirs.

    Example:
    ```mlir
    %c = gnn.concat %a, %b : (tensor<64xf32>, tensor<32xf32>) -> tensor<96xf32>
    ```
  }];
  let arguments = (ins Variadic<GNN_F32Row>:$inputs);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def GNN_RowDotOp : GNN_RowOp<"row_dot", [Pure, AllTypesMatch<["lhs", "rhs"]>,
    DeclareOpInterfaceMethods<GNN_RowGradientOpInterface>]> {
  let summary = "dot product over the last dimension";
  let description = [{
    `result[h] = Σ_f lhs[h, f] · rhs[h, f]` for `heads x F` rows (result
    `tensor<Hxf32>`), or `result[0] = Σ_f lhs[f] · rhs[f]` for vector rows
    (result `tensor<1xf32>`). Both operands have the same type. GAT's
    per-head attention logits use it.

    Example:
    ```mlir
    %s = gnn.row_dot %h, %a : tensor<4x64xf32> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins GNN_F32Row:$lhs, GNN_F32Row:$rhs);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def GNN_BroadcastHeadsOp : GNN_RowOp<"broadcast_heads", [Pure,
    DeclareOpInterfaceMethods<GNN_RowGradientOpInterface>]> {
  let summary = "broadcast one scalar per head over that head's features";
  let description = [{
    `result[h, f] = input[h]`: turns per-head scalars (attention
    coefficients, `tensor<Hxf32>`) into a `heads x F` row that multiplies a
    per-head feature row.

    Example:
    ```mlir
    %b = gnn.broadcast_heads %alpha : tensor<4xf32> -> tensor<4x64xf32>
    ```
  }];
  let arguments = (ins GNN_F32Row:$input);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def GNN_EdgeSelectOp : GNN_RowOp<"edge_select", [Pure,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "an element of a vertex row if this edge was the one chosen";
  let description = [{
    `result[j] = arg[j] == e ? value[j] : 0` for the edge e the enclosing
    edge stage or fused gather is at: with `arg` the edge ids a max/min
    `gnn.fused_gather` chose and `value` the gradient of its result, both
    scattered from the gather's side, this is `gnn.gather_grad` one edge at a
    time (`--gnn-fuse-sag` builds it so that the backward of max/min gathers
    fuses too). Only a `gnn.fused_gather` body can be lowered with it.

    Example: `%d = gnn.edge_select %a, %g : tensor<16xi32>, tensor<16xf32>`
  }];
  let arguments = (ins RankedTensorOf<[I32]>:$arg, GNN_F32Row:$value);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = "$arg `,` $value attr-dict `:` type($arg) `,` type($value)";
  let hasVerifier = 1;
}

def GNN_PlaceByTypeOp : GNN_RowOp<"place_by_type", [Pure,
    DeclareOpInterfaceMethods<GNN_RowGradientOpInterface>]> {
  let summary = "a row placed in its type's slot, zero in the others";
  let description = [{
    `result[t, ...] = t == type ? input[...] : 0` for the T slots of the
    result's first dimension. Summed over the edges into a vertex, slot t
    holds the sum over its in-edges of type t, which a `gnn.linear` with the
    T x K x N weight of a `gnn.typed_linear` contracts into the typed sum:
    `Σ_e W[type_e] x_e = linear(Σ_e place_by_type(x_e, type_e), W)` (GG-NN's
    typed product out of its edge stage; docs/Compiler.md). A type outside
    [0, T) is a run-time error, as for `gnn.typed_linear`. The adjoint is
    `gnn.take_by_type`.

    Example:
    ```mlir
    %p = gnn.place_by_type %x, %t : (tensor<16xf32>, tensor<i32>) -> tensor<3x16xf32>
    ```
  }];
  let arguments = (ins GNN_F32Row:$input, 0DTensorOf<[I32]>:$type);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = [{
    $input `,` $type attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def GNN_TakeByTypeOp : GNN_RowOp<"take_by_type", [Pure,
    DeclareOpInterfaceMethods<GNN_RowGradientOpInterface>]> {
  let summary = "the slot of a row that its type selects";
  let description = [{
    `result[...] = input[type, ...]`: the adjoint of `gnn.place_by_type`
    (and it of this). A type outside [0, T), T the input's first
    dimension, is a run-time error.

    Example:
    ```mlir
    %x = gnn.take_by_type %p, %t : (tensor<3x16xf32>, tensor<i32>) -> tensor<16xf32>
    ```
  }];
  let arguments = (ins GNN_F32Row:$input, 0DTensorOf<[I32]>:$type);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = [{
    $input `,` $type attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def GNN_DropoutOp : GNN_RowOp<"dropout",
    [SameOperandsAndResultType,
     DeclareOpInterfaceMethods<GNN_RowGradientOpInterface>,
     MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "inverted dropout during training";
  let description = [{
    In `@train_step`, zeroes each element with probability `rate` and scales
    the others by 1 / (1 − rate), drawing from a counter-based RNG seeded by
    the run's `--seed`, the epoch and `mask_id`; dropouts with the same
    `mask_id` draw the same mask, which is how the backward pass (and a
    recomputation of the forward) reuses it. `--gnn-autodiff` numbers the
    model's dropouts. In `@eval` it is the identity. `rate` is the model's default;
    the executable's `--dropout` overrides it. The op reads and writes the
    RNG state, so two dropouts are never merged.

    Example:
    ```mlir
    %y = gnn.dropout %x {rate = 5.000000e-01 : f64} : tensor<128xf32>
    ```
  }];
  let arguments = (ins GNN_F32Row:$input, F64Attr:$rate,
                       OptionalAttr<I64Attr>:$mask_id);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
  let hasVerifier = 1;
}

def GNN_LinearTransposeOp : GNN_RowOp<"linear_transpose", [Pure]> {
  let summary = "contract a row with a weight's trailing dimensions";
  let description = [{
    `result[k...] = Σ_n... input[n...] · weight[k..., n...]`: the transpose
    of `gnn.linear` (its input gradient). Over all rows, one GEMM with the
    weight transposed.

    Example:
    ```mlir
    %dx = gnn.linear_transpose %g, %w : (tensor<64xf32>, tensor<128x64xf32>) -> tensor<128xf32>
    ```
  }];
  let arguments = (ins GNN_F32Row:$input, GNN_F32Row:$weight);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = "$input `,` $weight attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def GNN_TypedLinearTransposeOp : GNN_RowOp<"typed_linear_transpose", [Pure]> {
  let summary = "the transpose of a typed linear (its input gradient)";
  let description = [{
    `result[k...] = Σ_n... input[n...] · weight[type, k..., n...]`.

    Example:
    ```mlir
    %dx = gnn.typed_linear_transpose %g, %t, %w : (tensor<8xf32>, tensor<i32>, tensor<3x4x8xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins GNN_F32Row:$input, 0DTensorOf<[I32]>:$type,
                       GNN_F32Row:$weight);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = [{
    $input `,` $type `,` $weight attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def GNN_SliceOp : GNN_RowOp<"slice", [Pure]> {
  let summary = "a range of the last dimension of a row";
  let description = [{
    `result[..., j] = input[..., offset + j]`: the gradient of one operand of
    a `gnn.concat`.

    Example: `%a = gnn.slice %x {offset = 4 : i64} : tensor<12xf32> -> tensor<8xf32>`
  }];
  let arguments = (ins GNN_F32Row:$input, I64Attr:$offset);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def GNN_ReduceSumOp : GNN_RowOp<"reduce_sum", [Pure]> {
  let summary = "sum of all elements of a row";
  let description = [{
    The sum of every element of the row, as a scalar row (`tensor<f32>` or
    `tensor<1xf32>`): the gradient of an operand that an element-wise op
    broadcast.

    Example: `%s = gnn.reduce_sum %x : tensor<16xf32> -> tensor<1xf32>`
  }];
  let arguments = (ins GNN_F32Row:$input);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Whole-graph ops of backward programs
//===----------------------------------------------------------------------===//

def GNN_SumRowsOp : GNN_Op<"sum_rows", [Pure]> {
  let summary = "sum a vertex or edge tensor over its rows";
  let description = [{
    `result = Σ_r input[r]`: reduces per-row gradient contributions of a
    parameter (a bias, a learnable scalar) to the parameter's gradient.

    Example:
    ```mlir
    %db = gnn.sum_rows %g : !gnn.vtensor<16xf32> -> tensor<16xf32>
    ```
  }];
  let arguments = (ins GNN_AnyRowTensor:$input);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` type($result)";
  let hasVerifier = 1;
}

def GNN_OuterSumOp : GNN_Op<"outer_sum", [Pure]> {
  let summary = "sum over rows of the outer product of two row tensors";
  let description = [{
    `result[k..., n...] = Σ_r input[r, k...] · grad[r, n...]`: the gradient
    of the weight of a `gnn.linear` applied over all rows, computed as one
    GEMM (Xᵀ G). Both operands are vertex tensors or both edge tensors.

    Example:
    ```mlir
    %dw = gnn.outer_sum %x, %g : !gnn.vtensor<128xf32>, !gnn.vtensor<64xf32> -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins GNN_AnyRowTensor:$input, GNN_AnyRowTensor:$grad);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = [{
    $input `,` $grad attr-dict `:` qualified(type($input)) `,` qualified(type($grad))
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def GNN_TypedOuterSumOp : GNN_Op<"typed_outer_sum", [Pure]> {
  let summary = "per edge type, the sum over rows of outer products";
  let description = [{
    `result[t, k..., n...] = Σ_{r: type[r] = t} input[r, k...] · grad[r, n...]`:
    the weight gradient of a `gnn.typed_linear` (a grouped GEMM). The number
    of types is the result's first dimension.

    Example:
    ```mlir
    %dw = gnn.typed_outer_sum %x, %t, %g : !gnn.etensor<4xf32>, !gnn.etensor<i32>, !gnn.etensor<8xf32> -> tensor<3x4x8xf32>
    ```
  }];
  let arguments = (ins GNN_AnyRowTensor:$input, GNN_AnyRowTensor:$type,
                       GNN_AnyRowTensor:$grad);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = [{
    $input `,` $type `,` $grad attr-dict `:` qualified(type($input)) `,`
    qualified(type($type)) `,` qualified(type($grad)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def GNN_GatherGradOp : GNN_Op<"gather_grad", [Pure]> {
  let summary = "route a max/min gather's gradient to the chosen edges";
  let description = [{
    The gradient of `gnn.gather max|min %g, %input to <side>`: for every
    vertex v and element i, the edge e that the gather chose (the first, in
    CSC order, attaining the extremum) gets `grad[v, i]`; every other edge 0.
    The choice is recomputed from `input`.

    Example:
    ```mlir
    %de = gnn.gather_grad max %g, %dv, %e to dst : !gnn.vtensor<4xf32>, !gnn.etensor<4xf32> -> !gnn.etensor<4xf32>
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, GNN_VertexTensorType:$grad,
                       GNN_EdgeTensorType:$input, GNN_AccumulatorAttr:$acc,
                       GNN_SideAttr:$side);
  let results = (outs GNN_EdgeTensorType:$result);
  let assemblyFormat = [{
    $acc $graph `,` $grad `,` $input `to` $side attr-dict `:` qualified(type($grad)) `,`
    qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def GNN_TensorAddOp : GNN_Op<"tensor_add", [Pure, SameOperandsAndResultType]> {
  let summary = "add two parameter-shaped tensors";
  let description = [{
    Element-wise sum of two tensors outside stage regions (accumulating a
    parameter's gradient contributions).

    Example: `%s = gnn.tensor_add %a, %b : tensor<16x16xf32>`
  }];
  let arguments = (ins GNN_F32Row:$lhs, GNN_F32Row:$rhs);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Row partitioning (docs/Distributed.md)
//===----------------------------------------------------------------------===//

def GNN_AllGatherOp : GNN_Op<"all_gather", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "every process's own rows to every process (rows -> all)";
  let description = [{
    In a function that `--gnn-partition-rows` partitioned (the attribute
    `gnn.partition = "rows"`), each process holds the rows of its own
    vertices (a contiguous range) and the in-edges of those vertices, whose
    sources are any vertex. `gnn.all_gather` gives every process the rows of
    every vertex: the tensor a scatter from the source, or a fused gather's
    `src` input, reads (MG-GCN's broadcast of H, §1.2 of the digest). Its
    input has the processes' own rows, its result the rows of all vertices
    (in one process, the same rows).

    Its adjoint is `gnn.reduce_scatter`: the gradient of the gathered rows
    is each process's partial sum over its own edges.

    `sync = k` marks the adjoint of feature partitioning's k-th sync (the
    push of the owners' gradient rows to every process, P³); autodiff sets
    it from the `gnn.reduce_scatter` it differentiates.

    Example:
    ```mlir
    %hall = gnn.all_gather %g, %h : !gnn.vtensor<16xf32>
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, GNN_VertexTensorType:$input,
                       OptionalAttr<I64Attr>:$sync);
  let results = (outs GNN_VertexTensorType:$result);
  let builders = [
    OpBuilder<(ins "Type":$type, "Value":$graph, "Value":$input), [{
      build($_builder, $_state, type, graph, input, IntegerAttr());
    }]>
  ];
  let assemblyFormat = [{
    $graph `,` $input attr-dict `:` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def GNN_ReduceScatterOp : GNN_Op<"reduce_scatter", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "sum every process's rows of all vertices into the owners' rows (all -> rows)";
  let description = [{
    In a row-partitioned function: the input has a row for every vertex
    holding this process's partial sum (what an aggregation to the source
    computes over the process's own edges); the result has the rows of the
    process's own vertices, each the sum of the processes' partials. It is
    the adjoint of `gnn.all_gather` and follows each aggregation to the
    source.

    `sync = k` marks feature partitioning's k-th sync (P³: the sum of the
    processes' partial contractions of their feature columns, then the
    switch to rows; `--gnn-partition-features` sets it). The runtime moves
    a sync's rows, and its adjoint's, only where a sampled batch needs
    them (docs/MiniBatch.md, "P³ on several processes").

    Example:
    ```mlir
    %d = gnn.reduce_scatter %g, %dall : !gnn.vtensor<16xf32>
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, GNN_VertexTensorType:$input,
                       OptionalAttr<I64Attr>:$sync);
  let results = (outs GNN_VertexTensorType:$result);
  let builders = [
    OpBuilder<(ins "Type":$type, "Value":$graph, "Value":$input), [{
      build($_builder, $_state, type, graph, input, IntegerAttr());
    }]>
  ];
  let assemblyFormat = [{
    $graph `,` $input attr-dict `:` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def GNN_OwnRowsOp : GNN_Op<"own_rows", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "this process's own vertices' rows of every vertex's rows (all -> rows, no communication)";
  let description = [{
    In a row-partitioned function whose first layers run replicated on the
    whole graph (`--gnn-partition-rows{replicate=k}`): the input holds the
    rows of every vertex, the same on every process (computed on the whole
    graph from every vertex's features); the result holds the rows of the
    process's own vertices, taken from it without any communication. The
    own rows' ops that read a replicated tensor at their own vertices
    (a stage, a scatter from the destination) read it through this op; a
    scatter from the source reads every vertex's rows directly.

    Its adjoint is `gnn.pad_rows`: the gradient of every vertex's rows is
    the own rows' gradient, zero elsewhere, a partial sum that the
    processes' partials add up to.

    Example:
    ```mlir
    %own = gnn.own_rows %g, %hall : !gnn.vtensor<16xf32>
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, GNN_VertexTensorType:$input);
  let results = (outs GNN_VertexTensorType:$result);
  let assemblyFormat = [{
    $graph `,` $input attr-dict `:` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def GNN_PadRowsOp : GNN_Op<"pad_rows", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "the own rows as every vertex's partial rows, zero elsewhere (rows -> partial sums)";
  let description = [{
    The adjoint of `gnn.own_rows`, which `--gnn-autodiff` inserts: the
    input has the rows of the process's own vertices, the result a row for
    every vertex, the input's at the own vertices and zero at the others.
    Summed over the processes these partials are every vertex's rows, so
    the result may flow into gradients of the whole graph's replicated ops
    (whose parameters' gradients the runtime sums over the processes).

    Example:
    ```mlir
    %dall = gnn.pad_rows %g, %down : !gnn.vtensor<16xf32>
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, GNN_VertexTensorType:$input);
  let results = (outs GNN_VertexTensorType:$result);
  let assemblyFormat = [{
    $graph `,` $input attr-dict `:` qualified(type($result))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Training ops (whole-graph)
//===----------------------------------------------------------------------===//

def GNN_SoftmaxCrossEntropyOp : GNN_Op<"softmax_cross_entropy", [Pure]> {
  let summary = "masked mean softmax cross-entropy of logits against labels";
  let description = [{
    `loss = (1 / |M|) Σ_{v ∈ M} −log softmax(logits[v])[labels[v]]` over the
    vertices M where `mask` is true and the label is not −1; 0 when M is
    empty. Computed fused (log-sum-exp with the row maximum subtracted).

    Example:
    ```mlir
    %l = gnn.softmax_cross_entropy %logits, %labels, %mask
           : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    ```
  }];
  let arguments = (ins GNN_VertexTensorType:$logits,
                       GNN_VertexTensorType:$labels,
                       GNN_VertexTensorType:$mask);
  let results = (outs F32:$loss);
  let assemblyFormat = [{
    $logits `,` $labels `,` $mask attr-dict `:` qualified(type($logits)) `,` qualified(type($labels))
    `,` qualified(type($mask)) `->` type($loss)
  }];
  let hasVerifier = 1;
}

def GNN_SoftmaxCrossEntropyGradOp : GNN_Op<"softmax_cross_entropy_grad", [Pure]> {
  let summary = "gradient of the masked softmax cross-entropy";
  let description = [{
    `d loss / d logits` of `gnn.softmax_cross_entropy` with the same
    operands: (softmax(logits[v]) − onehot(labels[v])) / |M| on the masked,
    labelled vertices and 0 elsewhere. Lowered together with the loss (one
    fused kernel).

    Example:
    ```mlir
    %d = gnn.softmax_cross_entropy_grad %logits, %labels, %mask
           : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> !gnn.vtensor<?xf32>
    ```
  }];
  let arguments = (ins GNN_VertexTensorType:$logits,
                       GNN_VertexTensorType:$labels,
                       GNN_VertexTensorType:$mask);
  let results = (outs GNN_VertexTensorType:$result);
  let assemblyFormat = [{
    $logits `,` $labels `,` $mask attr-dict `:` qualified(type($logits)) `,` qualified(type($labels))
    `,` qualified(type($mask)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def GNN_AccuracyOp : GNN_Op<"accuracy", [Pure]> {
  let summary = "fraction of masked vertices whose arg-max logit is the label";
  let description = [{
    Over the vertices where `mask` is true and the label is not −1: the
    fraction whose largest logit (first index on ties) is the label; 0 when
    there are none.

    Example:
    ```mlir
    %a = gnn.accuracy %logits, %labels, %mask
           : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    ```
  }];
  let arguments = (ins GNN_VertexTensorType:$logits,
                       GNN_VertexTensorType:$labels,
                       GNN_VertexTensorType:$mask);
  let results = (outs F32:$accuracy);
  let assemblyFormat = [{
    $logits `,` $labels `,` $mask attr-dict `:` qualified(type($logits)) `,` qualified(type($labels))
    `,` qualified(type($mask)) `->` type($accuracy)
  }];
  let hasVerifier = 1;
}

def GNN_OptimizerUpdateOp : GNN_Op<"optimizer_update",
    [AllTypesMatch<["param", "grad", "result"]>,
     MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "one optimizer step on a parameter";
  let description = [{
    Returns the parameter after one step of the run's optimizer, configured at
    run time (`--optimizer sgd|adam`, `--lr`, `--weight-decay`, momentum and
    betas): SGD with momentum, or Adam with `torch.optim.Adam` semantics
    (L2 weight decay added to the gradient, bias-corrected moments). The
    optimizer state (moments, step count) is kept by the runtime per
    parameter `name`, which is why the op reads and writes memory.

    Example:
    ```mlir
    %w1 = gnn.optimizer_update "conv1.weight" %w, %dw : tensor<16x8xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, GNN_F32Row:$param, GNN_F32Row:$grad);
  let results = (outs GNN_F32Row:$result);
  let assemblyFormat = "$name $param `,` $grad attr-dict `:` type($param)";
  let hasVerifier = 1;
}

#endif // GNN_OPS
