//===- Passes.td - gnn-to-gnn passes -----------------------*- tablegen -*-===//

#ifndef GNN_TRANSFORMS_PASSES
#define GNN_TRANSFORMS_PASSES

include "gnn/Support/DatasetOptions.td"
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
    `softmax_cross_entropy_grad`; `all_gather` ↔ `reduce_scatter` of the
    gradient (row partitioning). A stage gets a backward stage of its kind
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

def GNNPartitionRows : Pass<"gnn-partition-rows", "::mlir::ModuleOp"> {
  let summary = "Split the model's vertex rows over processes (MG-GCN's 1D row partitioning)";
  let description = [{
    MG-GCN's 1D row partitioning (DIGEST-mggcn-granndis-p3.md §1.2): each
    process holds the rows of its own vertices (a contiguous range: the
    runtime's `p(r) = floor(r V / N)`) and the in-edges of those vertices,
    whose sources may be any vertex. Row-wise work (stages, linears, the
    loss) is then local, and only reading a vertex's row at the source of an
    edge needs other processes' rows. The pass makes that explicit on the
    module's `gnn.model` function, before `--gnn-autodiff`:

    - every vertex tensor read at the source of an edge (`gnn.scatter ...
      from src`, a `gnn.fused_gather`'s `src` inputs) is read through one
      `gnn.all_gather` of it (the rows of every vertex; MG-GCN's P
      broadcasts of H);
    - every aggregation to the source (`gnn.gather sum ... to src`, a
      `gnn.fused_gather sum ... to src`), whose result is this process's
      partial sum over its edges for every vertex, is followed by one
      `gnn.reduce_scatter` (the owners' rows of the sum);
    - the function gets `gnn.partition = "rows"`, whose verifier checks
      every op's vertex spaces (GNNOps.h, `verifyPartition`).

    `--gnn-autodiff` then derives the backward with the adjoints
    (`all_gather` ↔ `reduce_scatter`), so the training step's
    communication is the forward's all-gathers and their reduce-scatters;
    linears and element-wise stages stay communication-free, and the
    parameters' gradients are summed over the processes by the runtime in
    buckets issued as the gradients become final (`gnnrtGradientReady`,
    `gnnrtSumGradients`). A remark on the function counts
    the collectives and their row widths.

    **Replicated layers** (`replicate=k`, k > 0; the per-layer choice of
    `gnn-compile --partition auto`, docs/Distributed.md): the forward ops
    that depend on the features and lie in the levels below k (a level is
    a hop: the most reads at edge sources, a scatter from the source or a
    fused gather's `src` inputs, on a path from the inputs) run on the
    whole graph (`gnn.graph whole`) on every process, from every vertex's
    features, and compute every vertex's rows, the same on every process.
    The degrees and degree-only stages they read are recomputed there; an
    edge tensor moves only if all its readers do. What reads their
    results on the own rows' graph reads every vertex's rows at an edge's
    source with no all-gather, and the own rows elsewhere through
    `gnn.own_rows` (no communication; its adjoint `gnn.pad_rows` makes the
    gradient a partial sum, which the whole graph's backward carries to the
    parameters' gradients, summed by the runtime). So the collectives of the
    first k levels go: `replicate=1` drops layer 1's all-gather (and the
    reduce-scatter of its gradient) at the cost of the layer's first
    linear on every vertex; `replicate=2` runs layer 1 whole.
    `replicate-from=m` replicates the levels from m on (a suffix, with or
    without a prefix below it): their ops read the split levels' rows
    through one `gnn.all_gather` each (whose adjoint reduce-scatters the
    partial gradients), and the collectives of the later levels go. Edge
    data cannot be read on the whole graph (an error naming the op); k
    beyond the model's levels + 1, m beyond its last level or m not above
    k are errors.

    Refused, with an error naming the op: `mean`, `max` and `min`
    aggregations to the source (their partials do not add up), and a
    forward that reduces over all vertices (`gnn.sum_rows`,
    `gnn.outer_sum`, `gnn.typed_outer_sum`: a readout needs an all-reduce
    that is not built yet); a module already differentiated or partitioned.
  }];
  let options = [
    Option<"replicate", "replicate", "int64_t", /*default=*/"0",
           "Run the ops of the first k levels (hops) replicated on the whole "
           "graph (0: none)">,
    Option<"replicateFrom", "replicate-from", "int64_t", /*default=*/"0",
           "Run the ops of the levels from m on replicated on the whole "
           "graph, after one all-gather of what they read of the split "
           "levels (0: none)">
  ];
  let dependentDialects = ["::mlir::gnn::GNNDialect"];
}

def GNNPartitionFeatures : Pass<"gnn-partition-features", "::mlir::ModuleOp"> {
  let summary = "Split layer 1 along the feature columns over processes, the rest by rows (P³, full-graph)";
  let description = [{
    P³'s push-pull parallelism in its full-graph form
    (DIGEST-mggcn-granndis-p3.md §3.3, §3.6, P3-1…5): each process holds
    the whole graph, this process's columns of every vertex's features, and
    the rows of the first contraction's weights for those columns; layer 1
    runs up to its first contraction on the feature shard and produces a
    partial sum for every vertex, which one `gnn.reduce_scatter` sums into
    the owners' rows; from there on the model is row-partitioned as
    `--gnn-partition-rows` makes it. On the module's `gnn.model` function,
    before `--gnn-autodiff`:

    - a `gnn.graph whole` (every vertex, every edge) is added; the
      `features` input and every op that reads what is computed from it
      column by column (scatters, element-wise edge stages, aggregations of
      any accumulator of the shard, sums and means of partials,
      element-wise vertex stages) move onto it; what else
      they read is every vertex's rows: degrees and edge data are read
      again on the whole graph, other vertex tensors go through a
      `gnn.all_gather`;
    - a vertex stage whose body contracts the shard (`gnn.linear` with a
      weight whose rows are the features, `gnn.dims = ["features", ...]`)
      is split where the first op needs the sum (a bias, a non-linearity,
      a second contraction): the ops before it run on the whole graph and
      yield the partial, a `gnn.reduce_scatter` sums it into the own rows
      (P³'s sync, which is also the switch to row partitioning), and the
      ops after it run on the own rows, so that a bias is added once;
    - the layers after that get `--gnn-partition-rows`'s collectives;
    - the function gets `gnn.partition = "features"`: every parameter whose
      first dimension is bound to `features` then has only this process's
      feature columns' rows (W₁'s shard), and its gradient needs no sum
      over the processes.

    `--gnn-autodiff` derives the backward: the adjoint of the sync is a
    `gnn.all_gather` (P³'s push of the error gradient to every process), and
    W₁'s gradient is the outer sum of the process's feature shard with it.
    A remark names the syncs and the collectives with their row widths.

    Refused, with an error naming the op: an op on the feature shard that
    is not column-separable (GAT's attention score `row_dot` of the
    features, a reduction across a row, a contraction whose weight is not
    split along the features: P3-2), a maximum or minimum of partials, a
    read of the shard after the sync, a
    model without a `features` input or whose features no contraction
    reads, and what `--gnn-partition-rows` refuses in the later layers.
  }];
  let dependentDialects = ["::mlir::gnn::GNNDialect"];
}

def GNNFuseSAG : Pass<"gnn-fuse-sag", "::mlir::ModuleOp"> {
  let summary = "Fuse Scatter, element-wise ApplyEdge and Gather into one fused_gather";
  let description = [{
    NeuGraph's SAG fusion (§3.4). Every `gnn.gather` (any accumulator, to
    either side) whose input is a scatter, or an edge stage whose body is
    element-wise (unary and binary element-wise ops, splat constants,
    `broadcast_heads`) up to per-edge row reductions (`reduce_sum`,
    `row_dot`: the backward of GAT's coefficients), becomes one
    `gnn.fused_gather` holding the edge body:
    the stage's rows scattered from the source or the destination become
    `src`/`dst` operands read per edge, its other edge tensors `edge`
    operands. An element-wise edge stage feeding the stage (GCN's
    normalisation, GAT's score and exponent) is inlined too when nothing but
    gathers and edge stages read it, so its edge tensor disappears as well;
    one read by anything else (a parameter's `outer_sum`, a `gather_grad`)
    stays and is read as an edge tensor. Edge stages and scatters left
    without users are erased.

    Runs after `--gnn-autodiff`: the backward stages recompute the forward
    edge values from the vertex rows, so once fused, neither pass keeps an
    |E| x F edge tensor. The backward of a max/min gather (`gather_grad`,
    which reads the forward's edge tensor) is rewritten first: the forward
    gather, fused, also yields the edge chosen per element (`arg`), and the
    routed gradient becomes an edge stage of `gnn.edge_select` that the
    readers' fusions inline; this is done only when every reader fuses.

    Refused, with a remark on the gather: an edge stage with an op that is
    neither element-wise nor a row reduction (a linear, a typed linear: run
    `--gnn-hoist-apply-edge` first; GG-NN's typed product never fuses).
    Every fusion is reported with a remark as well.
  }];
  let dependentDialects = ["::mlir::gnn::GNNDialect"];
}

def GNNShareContractions : Pass<"gnn-share-contractions", "::mlir::ModuleOp"> {
  let summary = "Read a contraction an earlier stage computed instead of recomputing it";
  let description = [{
    Autodiff's backward stages recompute their forward stage's body, and
    canonicalization keeps what the gradient rules read. A rule that reads a
    contraction's output (ReLU's `step` of the pre-activation `linear + b`,
    a product rule) keeps the `gnn.linear`: a second GEMM over every row, as
    costly as the forward one. This pass finds, for each stage, the values of
    its body that an earlier stage of the same kind (same graph, same block)
    computes too: block arguments bound to the same outer value or to the
    earlier stage's result, then every op equivalent (name, attributes,
    types) to an earlier op over equivalent operands, dropouts included
    (their `mask_id` fixes the mask). Each such `gnn.linear` or
    `gnn.typed_linear` becomes an input of the later stage, read from the
    earlier stage's result: one it yields already, or a new one. Inputs and
    parameters the later stage no longer reads are dropped.

    The rows then live from the forward stage to the backward one (|V| x
    width floats, as PyTorch's autograd keeps them); the GEMM's output buffer
    exists anyway. Each sharing is reported with a remark on the contraction
    and a note on the stage that computes it.
  }];
  let dependentDialects = ["::mlir::gnn::GNNDialect"];
}

def GNNDeferTransposes : Pass<"gnn-defer-transposes", "::mlir::ModuleOp"> {
  let summary = "Compute a stage's transposed contraction just before its first reader";
  let description = [{
    A backward `gnn.apply_vertex` ends with the gradient of its forward
    linear, `gnn.linear_transpose` (or `gnn.typed_linear_transpose`) of a
    row the stage also yields: `g W^T`, a |V| x in-width product. When the
    stage's result is first read several ops later (the weight gradient
    `gnn.outer_sum` of the layer's input comes in between), that product is
    born early and shares the memory peak with rows those ops still read.
    This pass moves such a contraction into a stage of its own, placed right
    before the first op that reads its result, so that the rows which die in
    between (GAT and GCN: the layer input `h`, read last by its weight
    gradient) are released before the product is allocated. In GAT's
    training step that removes one |V| x 256 buffer from the peak.

    Moved: a transposed contraction whose result only the stage's yield
    reads, whose row operands are rows the stage yields or reads (the new
    stage reads them from the stage's results or inputs) and whose weight is
    one of the stage's parameters; a stage left with no result is erased.
    Kept: one whose result is read by the op right after the stage (nothing
    to gain), one with a `gnn.optimizer_update` between the stage and the
    reader (it writes the weight in place), or one whose row is wider than
    its result (both widths static): deferring it would keep the wider row
    alive longer. Each move is reported with a remark on the new stage. Run after
    autodiff, fusion and `--gnn-share-contractions`.
  }];
  let dependentDialects = ["::mlir::gnn::GNNDialect"];
}

def GNNHoistApplyEdge : Pass<"gnn-hoist-apply-edge", "::mlir::ModuleOp"> {
  let summary = "Move source-only and destination-only work out of edge stages";
  let description = [{
    NeuGraph's ApplyEdge hoisting (§3.4), exact for every accumulator. In a
    `gnn.apply_edge` body, a value that depends only on rows scattered from
    the source (or only on rows scattered from the destination) and on
    parameters is the same for every edge of a vertex, so it is computed once
    per vertex instead: the largest such subexpressions move into a new
    `gnn.apply_vertex` placed before the edge stage, whose results are
    scattered from the side they came from and read by the edge stage in
    place of the subexpressions. Inputs and parameters the edge stage no
    longer reads are dropped, and so are scatters nothing reads.

    Before hoisting, a contraction whose input mixes sides is split so that
    its one-side parts can move: `linear(a ± b, W) = linear(a, W) ±
    linear(b, W)` (also for `row_dot`), and `linear(a ‖ b, W) =
    linear(a ‖ 0, W) + linear(0 ‖ b, W)` with the concat's parts grouped by
    side (static part widths only; the zero-padded product costs the full
    weight per vertex instead of its slice, still once per vertex rather than
    once per edge).

    Never moved: anything that depends on edge data, on both sides
    (`W·(src ⊙ dst)`), or on a dropout drawn per edge. But an edge stage
    that only computes GG-NN's typed product `typed_linear(x, type, W)` of
    a scattered row (static width K, W of T x K x N with a static T), read
    only by sum or mean gathers, becomes per-type slots: each edge's row
    placed in its type's slot (`gnn.place_by_type`, a T x K row), the
    gathers' aggregation of the slots, and one `gnn.linear` of the slots
    with the unchanged W over the vertices, since
    `Σ_e W[type_e] x_e = linear(Σ_e place_by_type(x_e, type_e), W)`: the
    per-edge grouped GEMM (2 K N FLOPs an edge) becomes a GEMM over the
    vertices (2 T K N a vertex), and the aggregation fuses (no edge
    tensor).

    G-GCN: `sigmoid(W_H·dst + W_C·src) ⊙ src` becomes
    `sigmoid(x_dst + y_src) ⊙ src` with `x = W_H·h`, `y = W_C·h` computed
    per vertex: the matmul FLOPs drop by the average degree.

    Remarks: one per rewritten stage (how many ops moved, the contraction
    FLOPs per edge that are now per vertex; "typed product by slots" for
    the typed sums) and one per contraction left in an edge stage, with
    the reason.
  }];
  let dependentDialects = ["::mlir::gnn::GNNDialect"];
}

def GNNChunkTile : Pass<"gnn-chunk-tile", "::mlir::ModuleOp"> {
  let summary = "Tile each aggregation into P x P edge chunks under a memory budget (NeuGraph)";
  let description = [{
    NeuGraph's 2D chunk partitioning (DIGEST-neugraph-roc.md §2.1): the
    vertices are cut into P equal, disjoint chunks and the edges into the
    P x P chunks between them (every edge in exactly one); an aggregation
    then works on one output chunk and one input chunk at a time, forward a
    destination chunk over the source chunks (column-major over the CSC),
    backward a source chunk over the destination chunks (row-major over the
    CSR). P is the smallest integer whose working set fits `budget` bytes:

    ```
    mem(P) = ceil(V/P) x 4 x (sum of the vertex row widths read and written)
           + ceil(E/P^2) x (4 + 4 x sum of the edge row widths)
           + (ceil(V/P) + 1) x 8
    ```

    (the input and output vertex chunks, the edge chunk with its indices and
    edge rows, the chunk's offsets). mem is non-increasing in P, so a smaller
    budget never gives a smaller P, and P = 1 when everything fits. |V|, |E|
    and the `?` widths come from `meta` (a `?` width counts as the larger of
    F and C). A budget below mem(|V|) is an error naming that minimum.

    Each `gnn.gather` and `gnn.fused_gather` gets `gnn.chunks = P` (omitted
    for P = 1) and a remark with P and mem(P). The runtime's SpMM
    (`gnnrtSpmm`: GCN, SAGE-mean and every fused gather that is a weighted
    sum of source rows) runs tiled; other aggregations run untiled for now,
    and the lowering says so in a remark. Run after --gnn-autodiff so that
    the backward aggregations are tiled too.
  }];
  let options = [
    Option<"budget", "budget", "int64_t", /*default=*/"0",
           "bytes an aggregation's working set may take, in [1, 2^62]">,
    DatasetMetaOption
  ];
  let dependentDialects = ["::mlir::gnn::GNNDialect"];
}

def GNNPlaceTensors : Pass<"gnn-place-tensors", "::mlir::ModuleOp"> {
  let summary = "Plan which tensors stay in the fast tier under a budget (ROC's DP)";
  let description = [{
    ROC's memory manager (DIGEST-neugraph-roc.md §3.4, with the digest's
    corrected recurrence; include/gnn/Analysis/TensorPlacement.h): over the
    training step's data-flow graph, the op order and the tensors kept in
    the fast tier between ops that load the fewest bytes from the slow tier
    with at most `budget` bytes resident.

    The graph: one op per top-level op of `@gnn_train_step` that reads or
    writes a vertex or edge tensor (stages, aggregations, fused gathers,
    linears, losses), one tensor per such value, sized from `meta` (|V| or
    |E| rows; a `?` row dimension counts as the larger of F and C), and the
    graph's arrays (CSC, CSR, degrees) as one more tensor read by the ops
    that walk edges. Parameters, other unbatched values and tensors below
    1/1024 of the budget stay resident: their bytes are taken from the
    budget first (each placed tensor doubles the DP's cache sets).

    For the budget the pass reports, in a remark on the function, the bytes
    loaded, written back and at peak by the DP and by the two baselines of
    the same accounting, LRU over program order and streaming (no caching).
    A budget below what the largest op needs is an error naming that
    minimum; a graph beyond the DP's limits is reported and the baselines
    still are. The program is not changed: the copies are inserted by
    `--convert-gnn-to-runtime`'s buffer placement (`buffer-budget`,
    `mem-budget`), which runs the same planner over the buffers the lowered
    program allocates, known only after the lowering (gnnrtEvict,
    gnnrtFetch, gnnrtDrop; docs/MemoryBudget.md, "Placement of the
    buffers").
  }];
  let options = [
    Option<"budget", "budget", "int64_t", /*default=*/"0",
           "bytes the fast tier holds, in [1, 2^62]">,
    DatasetMetaOption
  ];
}

def GNNReorderAggregate : Pass<"gnn-reorder-aggregate", "::mlir::ModuleOp"> {
  let summary = "Apply a linear before a sum/mean aggregation when that is cheaper";
  let description = [{
    Matches an aggregation whose result feeds only a `gnn.linear` of a
    vertex stage: `gather sum|mean` of a `scatter` (directly, through an
    edge stage that only forwards the row (CommNet), or through one that
    only multiplies the scattered row by a per-edge scalar),
    the gathered row used by exactly one linear whose weight is a stage
    parameter. Sums and means commute with a linear map, so the linear can be
    applied to the vertices first and the aggregation run at the linear's
    output width (MG-GCN; DGL `GraphConv`):

    ```
    a = gather(scatter(h) * w);  y = a W      ==>      y = gather(scatter(h W) * w)
    ```

    Cost model (per training step, FLOPs and bytes): the GEMM is the same
    either way (|V| K N); the aggregation costs |E| x width FLOPs and
    |E| x width x 4 bytes without reuse, forward and backward, with
    |E| = avg-degree x |V|. The rewrite is made when the aggregation width
    drops (N < K). Widths that are `?` are taken from the options
    `features`/`classes`, or from a dataset's `meta` file; when unknown, the
    rewrite is refused. `mode=always|never` overrides the model. Every
    decision is reported with `emitRemark` (the costs when taken, the reason
    when refused).

    With `keep-first`, an aggregation whose rows no contraction (a
    `gnn.linear` or `gnn.typed_linear`) computed is left before its linear
    whatever the mode:
    P³'s layer 1 on sampled blocks (docs/MiniBatch.md), whose sum-sync
    follows the first contraction, moves the block's destinations' rows
    when the features are aggregated first, and every source's when the
    linear comes first.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"auto\"",
           "auto (cost model), always, or never">,
    Option<"keepFirst", "keep-first", "bool", /*default=*/"false",
           "leave the aggregations that no contraction precedes">,
    Option<"avgDegree", "avg-degree", "double", /*default=*/"16.0",
           "average in-degree |E| / |V| for the cost model, in (0, 1e12] "
           "(default 16; from `meta` when given)">,
    Option<"features", "features", "int64_t", /*default=*/"0",
           "the dataset's feature width, for `?` widths, in [0, 2^24] "
           "(0: unknown)">,
    Option<"classes", "classes", "int64_t", /*default=*/"0",
           "the dataset's number of classes, for `?` widths, in [0, 2^24] "
           "(0: unknown)">,
    DatasetMetaOption
  ];
  let dependentDialects = ["::mlir::gnn::GNNDialect"];
}

def GNNFactorEdgeScale : Pass<"gnn-factor-edge-scale", "::mlir::ModuleOp"> {
  let summary = "Split a per-edge scale into per-vertex factors before and after the aggregation";
  let description = [{
    Matches `gather sum|mean` of an edge stage whose body is
    `yield row * s`, `row` scattered from the neighbour side (the source for
    a gather to dst) and `s` a one-element value per edge. When `s` is a
    product of a neighbour-side factor `f` and a self-side factor `g`, the
    aggregation becomes

    ```
    gather(scatter(h) * s)   ==>   g * gather(scatter(h * f))
    ```

    (`g` is the same for every edge a vertex aggregates): two vertex stages
    and an aggregation of plain rows, with no per-edge scalar to compute,
    store or read in the forward or the backward pass. This is GCN's
    symmetric normalisation as DGL's `GraphConv(norm='both')` applies it
    (`D_out^-1/2` on the rows, `D_in^-1/2` on the sums), derived here from the
    model's per-edge `rsqrt(d_out[src] * d_in[dst])`.

    `s` is factored through the edge stages that compute it: one-element
    rows scattered from either end (a leaf of that end's factor), splat
    constants, `mul`, `div`, `sqrt` and `rsqrt`. A quotient or a root splits
    only when its operands' factors are known to be positive wherever they
    are read: the degree of an edge's own end (`gnn.degree out` read at the
    source, `in` at the destination: at least 1 on every edge), positive
    constants, and products, quotients and roots of those. Such a degree is
    computed as `max(d, 1)`: equal on every edge, and finite on vertices
    without edges, whose aggregate is 0 and stays 0 after the post-scale
    (as DGL's and PyG's `clamp(min=1)` / `inf -> 0`).

    Refused, with a remark on the gather naming the reason: a scale that
    reads edge data or a parameter, an op other than those above, a root or
    quotient of a factor not known to be positive. Every rewrite is reported
    with a remark too. Run after `--gnn-reorder-aggregate`, which matches the
    scaled form.
  }];
  let dependentDialects = ["::mlir::gnn::GNNDialect"];
}

def GNNSplitEvalLevels : Pass<"gnn-split-eval-levels", "::mlir::ModuleOp"> {
  let summary = "Split the evaluation at its levels for layer-wise inference";
  let description = [{
    Layer-wise inference (PyG's and DGL's `inference`, docs/MiniBatch.md
    "Layer-wise evaluation"): `@gnn_eval` computed one level (hop) at a time
    for every vertex, each level in batches of destinations over their 1-hop
    in-neighbourhoods, instead of each batch's whole L-hop neighbourhood.
    Adds `@gnn_eval_level_<l>(params)` for l = 1..L, `@gnn_eval` kept.

    The level of a vertex value is the number of neighbour reads on its
    longest path from the features, counted at the destinations (a
    `gnn.scatter` from the source adds one, as a `gnn.fused_gather`'s
    source inputs do; an aggregation is at least level 1, right at its
    block's destinations only; level 0 counts as 1). Level l's function
    computes the values of level l: on a block, the destinations' rows, from
    the rows of every source. It reads what it needs of lower levels as
    `gnn.input "level.<k>"` (cut k: a vertex value of a lower level, which
    the runtime holds for every vertex between the levels) and recomputes
    what does not depend on the features (the graph, degrees, labels, masks,
    edge data and what only those and the parameters give without an
    aggregation). Per-edge values
    are never cut: an edge op is computed in each level that reads it.
    A level below L returns its cuts in the order of
    `gnn.level_outputs`; level L returns what `@gnn_eval` returns (the loss
    over the batch's rows of the mask, the logits). Each function carries
    `gnn.eval_level = l`; the op of `@gnn_eval` that computes cut k has k
    in its `gnn.cuts` (one number per result, -1 for none), where the
    lowering learns the cut's row width.

    Not split, with a remark on the op (the runtime then evaluates in
    batches of whole neighbourhoods): an op over all vertices
    (`gnn.sum_rows`, `gnn.outer_sum`), an aggregation to the sources (a
    block holds the destinations' in-edges only), a value other than a
    vertex tensor of f32 read above its level, a partitioned program, and a
    model
    with no neighbour read (nothing to split).
  }];
  let dependentDialects = ["::mlir::gnn::GNNDialect", "::mlir::func::FuncDialect"];
}

#endif // GNN_TRANSFORMS_PASSES
