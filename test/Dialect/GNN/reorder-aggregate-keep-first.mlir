// keep-first (P³'s blocks program, docs/MiniBatch.md): the aggregation of the
// features, which no contraction precedes, stays before its linear whatever
// the cost model says; layer 2's, after layer 1's contractions, is reordered
// as without the option (and both are without it).
// RUN: gnn-opt %examples/models/sage_mean.mlir --gnn-reorder-aggregate="features=602 classes=5 keep-first=true" 2>&1 | FileCheck %s --check-prefix=KEEP
// RUN: gnn-opt %examples/models/sage_mean.mlir --gnn-reorder-aggregate="features=602 classes=5" 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: gnn-opt %examples/models/sage_mean.mlir --gnn-reorder-aggregate="mode=always keep-first=true" 2>&1 | FileCheck %s --check-prefix=ALWAYS
// GCN's features pass through the degree scaling (no contraction) first.
// RUN: gnn-opt %examples/models/gcn.mlir --gnn-hoist-apply-edge --gnn-reorder-aggregate="features=602 classes=5 keep-first=true" 2>&1 | FileCheck %s --check-prefix=GCN

// KEEP: sage_mean.mlir:21:10: remark: aggregation not reordered: no contraction precedes it (keep-first)
// KEEP: sage_mean.mlir:33:11: remark: aggregation reordered: width 16 -> 5
// The features still reach a gather of 602-wide rows, then the linear.
// KEEP: gnn.gather mean %{{.*}} : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
// KEEP: gnn.gather mean %{{.*}} : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>

// PLAIN: sage_mean.mlir:21:10: remark: aggregation reordered: width 602 -> 16
// PLAIN: sage_mean.mlir:33:11: remark: aggregation reordered: width 16 -> 5

// ALWAYS: sage_mean.mlir:21:10: remark: aggregation not reordered: no contraction precedes it (keep-first)
// ALWAYS: sage_mean.mlir:33:11: remark: aggregation reordered: mode=always

// GCN: gcn.mlir:34:10: remark: aggregation not reordered: no contraction precedes it (keep-first)
// GCN: gcn.mlir:49:11: remark: aggregation reordered: width 16 -> 5
