// RUN: gnn-opt %examples/models/gat.mlir --gnn-train-pipeline 2>/dev/null | gnn-opt --convert-gnn-to-runtime -o /dev/null 2>&1 | FileCheck %s
// RUN: gnn-opt %examples/models/gcn.mlir --gnn-train-pipeline 2>/dev/null | gnn-opt --convert-gnn-to-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefix=GCN --allow-empty

// GAT's kernels over the edges recompute the same per-edge values: the
// softmax numerator exp(score - max) (forward sum, forward aggregation and
// the backward kernels) and the backward's grad_dst . Wh_src per head. The
// first kernel that computes one keeps it (|E| x heads floats), the later
// ones read it instead of recomputing it (the row_dot re-read Wh_src's
// 256-float row per edge). Numerics: zoo.test and passes-equivalence.test.

// The forward (in @gnn_train_step, lowered first): the first layer's
// exponent kept by the sum of the softmax, read by the aggregation.
// CHECK: remark: keeps its per-edge gnn.exp 'tensor<4xf32>' (4 floats per edge) for later kernels
// CHECK: remark: reads the per-edge gnn.exp 'tensor<4xf32>' an earlier kernel kept, instead of recomputing it
// The backward: the first kernel keeps the per-head dot, the next reads it.
// CHECK: remark: keeps its per-edge gnn.row_dot 'tensor<4xf32>' (4 floats per edge) for later kernels
// CHECK: remark: reads the per-edge gnn.row_dot 'tensor<4xf32>' an earlier kernel kept, instead of recomputing it

// GCN has one kernel per aggregation and nothing to share between them.
// GCN-NOT: keeps

// The budget: --convert-gnn-to-runtime="edge-cache-floats=N" bounds the
// floats per edge a function keeps; 0 keeps nothing, 4 only the first
// 4-float value (the forward's exponent), not the backward's dot.
// RUN: gnn-opt %examples/models/gat.mlir --gnn-train-pipeline 2>/dev/null | gnn-opt --convert-gnn-to-runtime="edge-cache-floats=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE --allow-empty
// NONE-NOT: remark: keeps
// NONE-NOT: remark: reads
// RUN: gnn-opt %examples/models/gat.mlir --gnn-train-pipeline 2>/dev/null | gnn-opt --convert-gnn-to-runtime="edge-cache-floats=4" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FOUR
// FOUR: remark: keeps its per-edge gnn.exp 'tensor<4xf32>'
// FOUR-NOT: remark: keeps its per-edge gnn.row_dot
