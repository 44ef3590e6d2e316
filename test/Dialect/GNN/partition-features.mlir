// RUN: gnn-opt %s -split-input-file --gnn-partition-features -verify-diagnostics | FileCheck %s
// RUN: gnn-opt %s -split-input-file --gnn-partition-features --gnn-autodiff 2>/dev/null | FileCheck %s --check-prefix=GRAD

// P³'s feature partitioning (full-graph): layer 1 on the whole graph and
// this process's feature columns up to the first contraction, one
// reduce-scatter of the partial (the sync), the bias and non-linearity
// after it on the own rows, the next layer row-partitioned.

// CHECK-LABEL: func.func @sage
// CHECK-SAME:    gnn.partition = "features"
// CHECK:         %[[G:.*]] = gnn.graph :
// CHECK-NEXT:    %[[W:.*]] = gnn.graph whole
// CHECK-NEXT:    %[[X:.*]] = gnn.input %[[W]] "features"
// CHECK-NEXT:    %[[S:.*]] = gnn.scatter %[[W]], %[[X]] from src
// CHECK-NEXT:    %[[A:.*]] = gnn.gather mean %[[W]], %[[S]] to dst
// CHECK-NEXT:    %[[P:.*]] = gnn.apply_vertex %[[W]](%[[X]], %[[A]]) params(%arg0, %arg1)
// CHECK:           gnn.linear
// CHECK-NEXT:      gnn.linear
// CHECK-NEXT:      gnn.add
// CHECK-NEXT:      gnn.yield
// CHECK:         %[[R:.*]] = gnn.reduce_scatter %[[G]], %[[P]] {sync = 0 : i64} : !gnn.vtensor<4xf32>
// CHECK-NEXT:    %[[H:.*]] = gnn.apply_vertex %[[G]](%[[R]]) params(%arg2)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      gnn.add
// CHECK-NEXT:      gnn.relu
// CHECK:         %[[HA:.*]] = gnn.all_gather %[[G]], %[[H]] : 
// CHECK-NEXT:    gnn.scatter %[[G]], %[[HA]] from src
// CHECK-NOT:     gnn.reduce_scatter
// CHECK-NOT:     %[[W]],
// CHECK:         return

// The backward: the sync's adjoint pushes the gradient to every process
// (an all-gather), and W1's shards get the outer sums of the process's
// feature columns with it on the whole graph.
// GRAD-LABEL: func.func @gnn_train_step
// GRAD-SAME:    gnn.partition = "features"
// GRAD:         %[[W:.*]] = gnn.graph whole
// GRAD:         %[[X:.*]] = gnn.input %[[W]] "features"
// GRAD:         %[[A:.*]] = gnn.gather mean %[[W]]
// GRAD:         gnn.softmax_cross_entropy_grad
// GRAD:         %[[B:.*]]:2 = gnn.apply_vertex %{{.*}}(%{{.*}}, %{{.*}}) params(%arg2)
// GRAD:         %[[GA:.*]] = gnn.all_gather %{{.*}}, %[[B]]#0 {sync = 0 : i64}
// GRAD-NEXT:    %[[D:.*]]:2 = gnn.apply_vertex %[[W]](%[[X]], %[[A]], %[[GA]]) params(%arg0, %arg1)
// GRAD:         %[[DN:.*]] = gnn.outer_sum %[[A]], %[[D]]#0 : !gnn.vtensor<?xf32>, !gnn.vtensor<4xf32> -> tensor<?x4xf32>
// GRAD-NEXT:    %[[DS:.*]] = gnn.outer_sum %[[X]], %[[D]]#1
// GRAD-NEXT:    gnn.optimizer_update "w_self" %arg0, %[[DS]]
// GRAD-NEXT:    gnn.optimizer_update "w_neigh" %arg1, %[[DN]]
// expected-remark @+1 {{feature partitioning: layer 1 on the feature columns up to 1 sync(s) (rows of tensor<4xf32>); 1 all-gather(s) (rows of tensor<4xf32>), 1 reduce-scatter(s) in all}}
func.func @sage(%ws: tensor<?x4xf32> {gnn.param = "w_self", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
                %wn: tensor<?x4xf32> {gnn.param = "w_neigh", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
                %b: tensor<4xf32> {gnn.param = "b", gnn.init = #gnn.init<glorot>},
                %w2: tensor<4x3xf32> {gnn.param = "w2", gnn.init = #gnn.init<glorot>})
    -> (f32, !gnn.vtensor<3xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  %a = gnn.gather mean %g, %s to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
  %h = gnn.apply_vertex %g (%x, %a) params(%ws, %wn, %b) : (!gnn.vtensor<?xf32>, !gnn.vtensor<?xf32>) params(tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%xr: tensor<?xf32>, %ar: tensor<?xf32>, %wsr: tensor<?x4xf32>, %wnr: tensor<?x4xf32>, %br: tensor<4xf32>):
    %t0 = gnn.linear %xr, %wsr : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
    %t1 = gnn.linear %ar, %wnr : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
    %t2 = gnn.add %t0, %t1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t3 = gnn.add %t2, %br : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t4 = gnn.relu %t3 : tensor<4xf32>
    gnn.yield %t4 : tensor<4xf32>
  }
  %s2 = gnn.scatter %g, %h from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %a2 = gnn.gather sum %g, %s2 to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %o = gnn.apply_vertex %g (%a2) params(%w2) : (!gnn.vtensor<4xf32>) params(tensor<4x3xf32>) -> !gnn.vtensor<3xf32> {
  ^bb0(%r: tensor<4xf32>, %w: tensor<4x3xf32>):
    %t = gnn.linear %r, %w : (tensor<4xf32>, tensor<4x3xf32>) -> tensor<3xf32>
    gnn.yield %t : tensor<3xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<3xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<3xf32>
}

// -----

// GCN's edge weights: the degrees are read again on the whole graph and
// the weights recomputed there; layer 2 keeps the own rows' copy.

// CHECK-LABEL: func.func @gcn_norm
// CHECK:         %[[G:.*]] = gnn.graph :
// CHECK-NEXT:    %[[W:.*]] = gnn.graph whole
// CHECK:         %[[DO:.*]] = gnn.degree %[[G]] out
// CHECK-NEXT:    %[[DOA:.*]] = gnn.all_gather %[[G]], %[[DO]]
// CHECK-NEXT:    %[[WDO:.*]] = gnn.degree %[[W]] out
// CHECK:         %[[WDI:.*]] = gnn.degree %[[W]] in
// CHECK:         %[[WS:.*]] = gnn.scatter %[[W]], %[[WDO]] from src
// CHECK:         %[[WR:.*]] = gnn.scatter %[[W]], %[[WDI]] from dst
// CHECK:         %[[N:.*]] = gnn.apply_edge %[[G]]
// CHECK:         %[[WN:.*]] = gnn.apply_edge %[[W]](%[[WS]], %[[WR]])
// CHECK:         %[[XS:.*]] = gnn.scatter %[[W]], %{{.*}} from src
// CHECK-NEXT:    gnn.apply_edge %[[W]](%[[XS]], %[[WN]])
// CHECK:         gnn.gather sum %[[W]]
// CHECK:         %[[P:.*]] = gnn.apply_vertex %[[W]]
// CHECK:         gnn.reduce_scatter %[[G]], %[[P]]
// CHECK:         gnn.apply_edge %[[G]](%{{.*}}, %[[N]])
// expected-remark @+1 {{feature partitioning: layer 1 on the feature columns up to 1 sync(s) (rows of tensor<4xf32>); 2 all-gather(s) (rows of tensor<1xf32>, tensor<4xf32>), 1 reduce-scatter(s) in all}}
func.func @gcn_norm(%w1: tensor<?x4xf32> {gnn.param = "w1", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
                    %b1: tensor<4xf32> {gnn.param = "b1", gnn.init = #gnn.init<zeros>})
    -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %dout = gnn.degree %g out : !gnn.vtensor<1xf32>
  %din = gnn.degree %g in : !gnn.vtensor<1xf32>
  %s = gnn.scatter %g, %dout from src : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %r = gnn.scatter %g, %din from dst : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %norm = gnn.apply_edge %g (%s, %r) : (!gnn.etensor<1xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<1xf32> {
  ^bb0(%a: tensor<1xf32>, %b: tensor<1xf32>):
    %t0 = gnn.mul %a, %b : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %t1 = gnn.rsqrt %t0 : tensor<1xf32>
    gnn.yield %t1 : tensor<1xf32>
  }
  %xs = gnn.scatter %g, %x from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  %m = gnn.apply_edge %g (%xs, %norm) : (!gnn.etensor<?xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<?xf32> {
  ^bb0(%a: tensor<?xf32>, %n: tensor<1xf32>):
    %t0 = gnn.mul %a, %n : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
    gnn.yield %t0 : tensor<?xf32>
  }
  %agg = gnn.gather sum %g, %m to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
  %h = gnn.apply_vertex %g (%agg) params(%w1, %b1) : (!gnn.vtensor<?xf32>) params(tensor<?x4xf32>, tensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%a: tensor<?xf32>, %w: tensor<?x4xf32>, %b: tensor<4xf32>):
    %t0 = gnn.linear %a, %w : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
    %t1 = gnn.add %t0, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %t1 : tensor<4xf32>
  }
  %hs = gnn.scatter %g, %h from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %m2 = gnn.apply_edge %g (%hs, %norm) : (!gnn.etensor<4xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %n: tensor<1xf32>):
    %t0 = gnn.mul %a, %n : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    gnn.yield %t0 : tensor<4xf32>
  }
  %o = gnn.gather sum %g, %m2 to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<4xf32>
}

// -----

// A contraction first (ApplyEdge hoisting's order): its partial is summed
// right away; nothing runs on the own rows before the aggregation.

// CHECK-LABEL: func.func @contract_first
// CHECK:         %[[W:.*]] = gnn.graph whole
// CHECK:         %[[P:.*]] = gnn.apply_vertex %[[W]]
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      gnn.linear
// CHECK-NEXT:      gnn.yield
// CHECK:         %[[R:.*]] = gnn.reduce_scatter %{{.*}}, %[[P]]
// CHECK-NEXT:    %[[RA:.*]] = gnn.all_gather %{{.*}}, %[[R]]
// CHECK-NEXT:    gnn.scatter %{{.*}}, %[[RA]] from src
// expected-remark @+1 {{feature partitioning}}
func.func @contract_first(%w1: tensor<?x4xf32> {gnn.param = "w1", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]})
    -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %p = gnn.apply_vertex %g (%x) params(%w1) : (!gnn.vtensor<?xf32>) params(tensor<?x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%a: tensor<?xf32>, %w: tensor<?x4xf32>):
    %t0 = gnn.linear %a, %w : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
    gnn.yield %t0 : tensor<4xf32>
  }
  %s = gnn.scatter %g, %p from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %o = gnn.gather sum %g, %s to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<4xf32>
}

// -----

// A partial next to a summed value is summed too: two syncs.

// CHECK-LABEL: func.func @two_partials
// CHECK:         %[[W:.*]] = gnn.graph whole
// CHECK:         %[[P:.*]]:2 = gnn.apply_vertex %[[W]]
// CHECK:         %[[R0:.*]] = gnn.reduce_scatter %{{.*}}, %[[P]]#0 {sync = 0 : i64}
// CHECK-NEXT:    %[[R1:.*]] = gnn.reduce_scatter %{{.*}}, %[[P]]#1 {sync = 1 : i64}
// CHECK-NEXT:    gnn.apply_vertex %{{.*}}(%[[R0]], %[[R1]])
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      gnn.relu
// CHECK-NEXT:      gnn.add
// expected-remark @+1 {{up to 2 sync(s)}}
func.func @two_partials(%w1: tensor<?x4xf32> {gnn.param = "w1", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
                        %w2: tensor<?x4xf32> {gnn.param = "w2", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]})
    -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %o = gnn.apply_vertex %g (%x) params(%w1, %w2) : (!gnn.vtensor<?xf32>) params(tensor<?x4xf32>, tensor<?x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%a: tensor<?xf32>, %wa: tensor<?x4xf32>, %wb: tensor<?x4xf32>):
    %p1 = gnn.linear %a, %wa : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
    %p2 = gnn.linear %a, %wb : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
    %s = gnn.relu %p1 : tensor<4xf32>
    %t = gnn.add %s, %p2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<4xf32>
}
