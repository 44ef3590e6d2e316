//===- Passes.td - gnn conversion passes -------------------*- tablegen -*-===//

#ifndef GNN_CONVERSION_PASSES
#define GNN_CONVERSION_PASSES

include "gnn/Support/DatasetOptions.td"
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

    Transcendental functions are `math.exp`/`math.expm1` with their
    argument clamped to where glibc's vector expf stays on its fast path
    (sigmoid and tanh to [-87, 87], ELU's expm1 and `gnn.exp` from -87):
    one lane outside it makes the vector call redo every lane through the
    scalar expf (G-GCN's unnormalised gates on dense graphs: a sixth of the
    epoch).

    A fused_gather whose body is not a (scaled) copy of the neighbour's row
    becomes a kernel over the vertices and their edges. A gather to the
    source walks the CSR and reads the destinations in CSR order (no
    per-edge indirection through the edge ids unless the body reads
    per-edge data). Per-edge values
    that several such kernels compute (row reductions and exponentials of at
    most 16 floats: GAT's grad_dst . Wh_src per head, its softmax numerator)
    are computed by the first and kept in an |E| x width buffer the later
    ones read, within `edge-cache-floats` floats per edge for the function's
    caches together (0: recompute everything, no memory per edge). Each is reported with a
    remark on both fused_gathers.

    Slots: every buffer's live range (from its allocation to its last
    reader) is known once a function is lowered; buffers then get runtime
    slots greedily by size (largest first, each into the slot whose buffers
    are all dead or not yet born over its range and that fits it most
    tightly, else grows least, else a new slot). The runtime keeps each
    slot's largest allocation, so memory is the sum of the slots' largest
    buffers. Sizes with run-time factors are compared at the `meta`
    dataset's sizes (or typical ones); the plan is correct at any size.

    Placement (`buffer-budget` > 0, or `mem-budget` > 0 which leaves
    `buffer-budget` = itself minus what stays resident through the run:
    the dataset's arrays, features, graph, parameters, gradients and Adam's
    moments; needs `meta`): when the slots do not
    all fit in `buffer-budget` bytes at once, the buffers are placed in a
    fast tier of that size (docs/MemoryBudget.md, "Placement of the
    buffers"): each lowered op is a step using the buffers its code names,
    and a placement over the lowering's order (`placement`: ROC's DP
    `optimal`, falling back to `lru` beyond the DP's limits with a remark;
    `lru`; `belady`, Belady's MIN; `streaming`) decides what stays resident between steps. Its
    copies become `gnnrtFetch` (and `gnnrtBuffer` again: later code uses
    the new memref), `gnnrtEvict` for a buffer written since its last copy,
    and `gnnrtDrop` (no I/O) for a dead buffer or one whose copy is
    current; the function starts with `gnnrtDropAll`. A budget below what
    one op needs at once is an error naming the op and the minimum. Each
    function gets a remark with the strategy, the peak and the bytes
    moved.

    Row chunks (`row-chunks` = K > 1; docs/MemoryBudget.md, "Row chunks of
    the steps"): the code of each vertex stage runs K times, over rows
    [b_k, b_{k+1}) only (boundaries multiples of GNNRT_PARALLEL_CHUNK):
    `gnnrtParallelFor` over the vertices becomes `gnnrtParallelForRange`, a
    GEMM over the vertices takes `gnnrtView` ranges of A and C. An
    aggregation runs in each chunk as K tiles, tile i over the edges from
    input chunk i (`gnnrtSpmmRows` with an input range; a fused gather's
    kernel with its tile's range in two kernel integers), so that the
    placement streams its input a chunk at a time. A stage whose code does
    anything else over its rows (a loop in the function, another runtime
    call) stays whole; a remark per function says how many ran in chunks.

    Level rows (`level-rows`; gnn-compile's default; docs/MiniBatch.md, "The
    program on blocks"): in the training step, each step over the vertices
    computes the first n_l rows of its level only (`gnnrtLevelRows`, read
    once at the start): the loss and what it reads back to the last
    aggregation the seeds' rows, the layer before the rows its sources
    reach, and so on; backward steps stop where their gradients are zero
    (a sum to the sources at the destinations its gradient rows reach),
    and rows a later step reads beyond a step's are zeroed
    (`gnnrtZeroRows`). On a whole graph every n_l is |V|; a sampled batch
    gives its hops' counts (DGL's blocks, PyG's trim_to_layer). A step
    whose code cannot be restricted lowers the function again over every
    row, with a remark naming it. A fused gather keeping per-edge values
    for later kernels computes at least the rows their edges reach. In a
    feature-partitioned program the whole graph's steps take
    `gnnrtWholeLevelRows` (P³'s shares of a batch, ordered by level band)
    and the own rows' `gnnrtLevelRows`; its collectives move the rows of
    their readers' level, and aggregations to the own rows' sources
    compute every row.

    The graph out of core (`graph-out-of-core`, with row chunks;
    docs/MemoryBudget.md, "The graph out of core"): the per-edge arrays
    (sources, destinations, the CSR's edge ids and destinations) are no
    part of the resident state. Before its tiles, each row chunk of an
    aggregation or a fused gather's kernel calls `gnnrtGraphWindow` with
    its side and rows, which reads those rows' edges from storage; a step
    that reads every edge at once (one that does not run in row chunks)
    is an error naming it.

    Selective loading in the costs (`selective-costs`, with row chunks and
    a dataset's meta; docs/MemoryBudget.md, "Selective loading"): a chunk
    fetched for one tile and dropped after it is read by the runtime at
    only the rows the tile's edges reach when their fraction θ is below
    NeuGraph's threshold. The pass counts those rows per tile from the
    dataset's indptr.npy and indices.npy, and the placement charges such a
    fetch those rows when θ is below its model of the threshold, w / (2w
    + 3 KiB) for rows of w bytes: the DP then weighs streaming a sparse
    tile input against keeping it.
  }];
  let options = [
    Option<"edgeCacheFloats", "edge-cache-floats", "int64_t", /*default=*/"16",
           "Floats per edge that kernels may keep for later kernels, 0 or "
           "more (0: none)">,
    Option<"bufferBudget", "buffer-budget", "int64_t", /*default=*/"0",
           "Bytes the slot buffers may use at once; 0: no limit (needs "
           "meta)">,
    Option<"memBudget", "mem-budget", "int64_t", /*default=*/"0",
           "Bytes the whole run may keep resident (as the executable's "
           "--mem-budget): buffer-budget is what remains after the dataset, "
           "graph, features and parameters (needs meta)">,
    Option<"placement", "placement", "std::string", /*default=*/"\"optimal\"",
           "How buffers are placed under buffer-budget: optimal (ROC's "
           "DP), lru, belady (Belady's MIN) or streaming">,
    Option<"selectiveCosts", "selective-costs", "bool", /*default=*/"true",
           "With row chunks and a dataset's meta: a tile input fetched for "
           "its tile alone costs the placement the rows the tile reads "
           "(counted from indptr.npy and indices.npy) where the runtime's "
           "selective-loading rule would read only those; false: its whole "
           "chunk">,
    Option<"rowChunks", "row-chunks", "int64_t", /*default=*/"1",
           "Runs each step over the vertices in this many row chunks, 1 to "
           "256 (1: whole)">,
    Option<"tileOrder", "tile-order", "std::string",
           /*default=*/"\"column-row\"",
           "With row chunks: the order of an aggregation's tiles, "
           "column-row (NeuGraph's: the output chunk stays while the input "
           "chunks stream) or row-column (the input chunk stays while the "
           "output chunks stream; a step whose only row work is its "
           "aggregation; the baseline NeuGraph measures against)">,
    Option<"levelRows", "level-rows", "bool", /*default=*/"false",
           "The training step's steps compute the rows of their level "
           "only (gnnrtLevelRows: a sampled batch's per-layer blocks; every "
           "row on a whole graph); not with row chunks, a budget, a row "
           "partition or the CUDA target">,
    Option<"stageSharedRows", "stage-shared-rows", "bool",
           /*default=*/"false",
           "Row partitioning: an all-gather read by several compiled "
           "kernels (GAT's training step) arrives in broadcast stages for "
           "each of them, as one with a single reader does, instead of as "
           "the rows of every vertex: each reader moves the rows again, and "
           "no process holds every vertex's rows">,
    Option<"featuresOutOfCore", "features-out-of-core", "bool",
           /*default=*/"false",
           "Under a budget: the features stay on storage, read by row "
           "chunks from features.npy (gnnrtFeaturesChunks) as the placement "
           "plans, and are no part of the resident state">,
    Option<"graphOutOfCore", "graph-out-of-core", "bool",
           /*default=*/"false",
           "With row chunks (K > 1): the graph's per-edge arrays stay on "
           "storage; each row chunk of a step that reads edges reads its "
           "rows' edges into a window first (gnnrtGraphWindow), and a step "
           "over every edge is an error">,
    Option<"graphWindowEdges", "graph-window-edges", "int64_t",
           /*default=*/"0",
           "With graph-out-of-core under mem-budget: the most edges of a "
           "row chunk at the dataset's sizes (gnn-compile reads them from "
           "indptr.npy); 0: twice the edges over K">,
    Option<"longRowPieces", "long-row-pieces", "bool", /*default=*/"false",
           "CPU target, for tests: a fused gather's kernel leaves rows the "
           "runtime splits (gnnrtGraphPieceEdges; the CPU device only under "
           "GNNRT_PIECE_EDGES) to a kernel over their pieces and one that "
           "combines them, as the CUDA target always does; not with row "
           "chunks or level rows">,
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Where the kernels run: cpu (functions run by gnnrtParallelFor) "
           "or cuda (gpu.func in a gpu.module, launched with "
           "gpu.launch_func)">,
    DatasetMetaOption
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::gpu::GPUDialect"
  ];
}

#endif // GNN_CONVERSION_PASSES
