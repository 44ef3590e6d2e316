// RUN: gnn-opt %S/Inputs/edge_dropout.mlir --gnn-train-pipeline 2>/dev/null | gnn-opt --convert-gnn-to-runtime | FileCheck %s

// The keys of a program that is not partitioned (ABI 26): a dropout over the
// vertices numbers its rows by their global ids (gnnrtVertexIds) and takes
// the whole graph's key (gnnrtDropoutParam's `which` 0: the run's seed on
// every process where a part of the graph is bound); a dropout in an edge
// stage numbers its edges locally and takes each process's own key (3),
// never the ids. Ops 0 and 2 are GCN's dropouts of the features and of
// layer 1; op 1 the messages' (Inputs/edge_dropout.mlir).

// CHECK-LABEL: func.func @gnn_train_step
// CHECK:         call @gnnrtDropoutParam(%arg0, %c0_i64{{[_0-9]*}}, %{{.*}}, %c0_i64{{[_0-9]*}})
// CHECK:         call @gnnrtVertexIds(%arg0)
// CHECK:         call @gnnrtDropoutParam(%arg0, %c1_i64{{[_0-9]*}}, %{{.*}}, %c3_i64{{[_0-9]*}})
// CHECK-NOT:     call @gnnrtVertexIds
// CHECK:         call @gnnrtDropoutParam(%arg0, %c2_i64{{[_0-9]*}}, %{{.*}}, %c0_i64{{[_0-9]*}})
// CHECK:         call @gnnrtVertexIds(%arg0)
// The backward's draws (the same masks) keep the same keys.
// CHECK-NOT:     call @gnnrtDropoutParam(%arg0, %c0_i64{{[_0-9]*}}, %{{.*}}, %c3_i64
// CHECK-NOT:     call @gnnrtDropoutParam(%arg0, %c1_i64{{[_0-9]*}}, %{{.*}}, %c0_i64
// CHECK-NOT:     call @gnnrtDropoutParam(%arg0, %c2_i64{{[_0-9]*}}, %{{.*}}, %c3_i64
// CHECK:         return
