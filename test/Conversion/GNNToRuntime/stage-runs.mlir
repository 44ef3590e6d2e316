// RUN: gnn-opt %examples/models/gcn.mlir --gnn-train-pipeline 2>/dev/null | gnn-opt --convert-gnn-to-runtime | FileCheck %s

// GCN's first-layer backward stage is `step(lin + b) * dropout(g)`. The
// dropout reads nothing of the element-wise run before it, so it is lowered
// first and `lin + b`, `step` and `*` stay one parallel loop nest: no kernel
// stores `lin + b` between the backward SpMM and the dropout, and one kernel
// follows the dropout.

// CHECK-LABEL: func.func @gnn_train_step
// CHECK:         call @gnnrtSoftmaxCrossEntropy
// CHECK:         call @gnnrtSpmm
// CHECK-NOT:     call @gnnrtParallelFor
// CHECK:         call @gnnrtDropout
// CHECK:         call @gnnrtParallelFor
// CHECK-NOT:     call @gnnrtParallelFor
// CHECK:         call @gnnrtSetOutput
