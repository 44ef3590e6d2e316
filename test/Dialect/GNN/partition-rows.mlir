// RUN: gnn-opt %s -split-input-file --gnn-partition-rows -verify-diagnostics | FileCheck %s
// RUN: gnn-opt %s -split-input-file --gnn-partition-rows --gnn-autodiff 2>/dev/null | FileCheck %s --check-prefix=GRAD

// MG-GCN's row partitioning made explicit: one all-gather per tensor read
// at edge sources (shared by its readers, right after its definition), a
// reduce-scatter after each aggregation to the source, the function
// marked; row-wise stages, destination reads and the loss unchanged.

// CHECK-LABEL: func.func @two_layers
// CHECK-SAME:    gnn.partition = "rows"
// CHECK:         %[[X:.*]] = gnn.input %{{.*}} "features"
// CHECK-NEXT:    %[[XA:.*]] = gnn.all_gather %{{.*}}, %[[X]] : !gnn.vtensor<8xf32>
// CHECK-NOT:     gnn.all_gather
// CHECK:         gnn.scatter %{{.*}}, %[[XA]] from src
// CHECK:         gnn.scatter %{{.*}}, %[[X]] from dst
// CHECK:         gnn.scatter %{{.*}}, %[[XA]] from src
// CHECK:         %[[H:.*]] = gnn.apply_vertex
// CHECK:         }
// CHECK-NEXT:    %[[HA:.*]] = gnn.all_gather %{{.*}}, %[[H]] : !gnn.vtensor<4xf32>
// CHECK-NEXT:    %[[HS:.*]] = gnn.scatter %{{.*}}, %[[HA]] from src
// CHECK-NEXT:    %[[F:.*]] = gnn.gather sum %{{.*}}, %[[HS]] to dst
// CHECK:         %[[B:.*]] = gnn.gather sum %{{.*}}, %{{.*}} to src : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
// CHECK-NEXT:    %[[BS:.*]] = gnn.reduce_scatter %{{.*}}, %[[B]] : !gnn.vtensor<4xf32>
// CHECK:         gnn.apply_vertex %{{.*}}(%[[F]], %[[BS]])
// CHECK-NOT:     gnn.all_gather
// CHECK-NOT:     gnn.reduce_scatter
// CHECK:         return

// The backward: the adjoint of each all-gather is a reduce-scatter of the
// sum of its readers' gradients to the source (a stage that only adds),
// and of the reduce-scatter an all-gather.
// GRAD-LABEL: func.func @gnn_train_step
// GRAD-SAME:    gnn.partition = "rows"
// GRAD:         gnn.softmax_cross_entropy_grad
// GRAD:         %[[G:.*]]:2 = gnn.apply_vertex
// GRAD:         gnn.all_gather %{{.*}}, %[[G]]#1
// GRAD:         %[[P:.*]] = gnn.gather sum %{{.*}} to src
// GRAD-NEXT:    %[[R:.*]] = gnn.reduce_scatter %{{.*}}, %[[P]]
// GRAD:         gnn.apply_vertex %{{.*}}(%{{.*}}, %[[R]])
// GRAD-NOT:     gnn.all_gather
// GRAD-NOT:     gnn.reduce_scatter
// GRAD:         gnn.outer_sum
// GRAD:         gnn.optimizer_update
// expected-remark @+1 {{row partitioning: 2 all-gather(s) in the forward (rows of tensor<8xf32>, tensor<4xf32>), 1 reduce-scatter(s) (rows of tensor<4xf32>)}}
func.func @two_layers(%w: tensor<8x4xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>})
    -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<8xf32>
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  %d = gnn.scatter %g, %x from dst : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  %s2 = gnn.scatter %g, %x from src : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  %m = gnn.apply_edge %g (%s, %d, %s2) : (!gnn.etensor<8xf32>, !gnn.etensor<8xf32>, !gnn.etensor<8xf32>) -> !gnn.etensor<8xf32> {
  ^bb0(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>):
    %t = gnn.mul %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %u = gnn.add %t, %c : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    gnn.yield %u : tensor<8xf32>
  }
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  %h = gnn.apply_vertex %g (%a) params(%w) : (!gnn.vtensor<8xf32>) params(tensor<8x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%v: tensor<8xf32>, %wv: tensor<8x4xf32>):
    %t = gnn.linear %v, %wv : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
    %r = gnn.relu %t : tensor<4xf32>
    gnn.yield %r : tensor<4xf32>
  }
  %hs = gnn.scatter %g, %h from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %f = gnn.gather sum %g, %hs to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %hd = gnn.scatter %g, %h from dst : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %back = gnn.gather sum %g, %hd to src : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %o = gnn.apply_vertex %g (%f, %back) : (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%p: tensor<4xf32>, %q: tensor<4xf32>):
    %t = gnn.sub %p, %q : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<4xf32>
}

// -----

// A model without reads at sources is partitioned with no collective: its
// work is all row-wise.
// CHECK-LABEL: func.func @row_wise
// CHECK-SAME:    gnn.partition = "rows"
// CHECK-NOT:     gnn.all_gather
// CHECK-NOT:     gnn.reduce_scatter
// expected-remark @+1 {{row partitioning: 0 all-gather(s) in the forward, 0 reduce-scatter(s)}}
func.func @row_wise() -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %d = gnn.scatter %g, %x from dst : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %a = gnn.gather max %g, %d to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %a, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %a : f32, !gnn.vtensor<4xf32>
}

// -----

// Fused gathers: their src inputs are all-gathered, their dst inputs not;
// one to the source is followed by a reduce-scatter of each result.
// CHECK-LABEL: func.func @fused
// CHECK:         %[[X:.*]] = gnn.input %{{.*}} "features"
// CHECK-NEXT:    %[[XA:.*]] = gnn.all_gather %{{.*}}, %[[X]]
// CHECK:         gnn.fused_gather sum %{{.*}} src(%[[XA]] : !gnn.vtensor<4xf32>) dst(%[[X]] : !gnn.vtensor<4xf32>) to dst
// CHECK:         %[[B:.*]]:2 = gnn.fused_gather sum %{{.*}} src(%[[XA]] : !gnn.vtensor<4xf32>) dst(%[[X]] : !gnn.vtensor<4xf32>) to src
// CHECK:         }
// CHECK-NEXT:    gnn.reduce_scatter %{{.*}}, %[[B]]#0
// CHECK-NEXT:    gnn.reduce_scatter %{{.*}}, %[[B]]#1
// expected-remark @+1 {{row partitioning: 1 all-gather(s) in the forward (rows of tensor<4xf32>), 2 reduce-scatter(s) (rows of tensor<4xf32>, tensor<4xf32>)}}
func.func @fused() -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %a = gnn.fused_gather sum %g src(%x : !gnn.vtensor<4xf32>) dst(%x : !gnn.vtensor<4xf32>) to dst : !gnn.vtensor<4xf32> {
  ^bb0(%s: tensor<4xf32>, %d: tensor<4xf32>):
    %t = gnn.mul %s, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  %b:2 = gnn.fused_gather sum %g src(%x : !gnn.vtensor<4xf32>) dst(%x : !gnn.vtensor<4xf32>) to src : !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32> {
  ^bb0(%s: tensor<4xf32>, %d: tensor<4xf32>):
    %t = gnn.sub %s, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %t, %d : tensor<4xf32>, tensor<4xf32>
  }
  %o = gnn.apply_vertex %g (%a, %b#0, %b#1) : (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%p: tensor<4xf32>, %q: tensor<4xf32>, %r: tensor<4xf32>):
    %t = gnn.add %p, %q : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %u = gnn.add %t, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %u : tensor<4xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<4xf32>
}
