// RUN: gnn-opt %s --gnn-partition-rows=replicate=1 2>/dev/null | FileCheck %s --check-prefix=ONE
// RUN: gnn-opt %s --gnn-partition-rows=replicate=1 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK-ONE
// RUN: gnn-opt %s --gnn-partition-rows=replicate=1 --gnn-autodiff 2>/dev/null | FileCheck %s --check-prefix=GRAD-ONE
// RUN: gnn-opt %s --gnn-partition-rows=replicate=2 2>/dev/null | FileCheck %s --check-prefix=TWO
// RUN: gnn-opt %s --gnn-partition-rows=replicate=2 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK-TWO
// RUN: gnn-opt %s --gnn-partition-rows=replicate=2 --gnn-autodiff 2>/dev/null | FileCheck %s --check-prefix=GRAD-TWO
// RUN: gnn-opt %s --gnn-partition-rows=replicate=3 2>/dev/null | FileCheck %s --check-prefix=THREE
// RUN: gnn-opt %s --gnn-partition-rows=replicate=3 --gnn-autodiff 2>/dev/null | FileCheck %s --check-prefix=GRAD-THREE

// Replicated layers (--gnn-partition-rows replicate=k): the forward ops
// that depend on the features and lie before the k-th hop (read at an
// edge's source) run on the whole graph, every vertex's rows on every
// process, with no collective; degrees they read are recomputed there; a
// read at the sources takes the replicated rows directly, another own-rows
// read goes through gnn.own_rows.

// replicate=1: layer 1's input (the dropout and the linear of the features,
// scaled by the source degree) is replicated; its aggregation reads it at
// the sources with no all-gather; layer 2 all-gathers as before.
// ONE-LABEL: func.func @two_layers
// ONE-SAME:    gnn.partition = "rows"
// ONE:         %[[G:.*]] = gnn.graph :
// ONE-NEXT:    %[[W:.*]] = gnn.graph whole
// ONE:         %[[X:.*]] = gnn.input %[[W]] "features"
// ONE:         %[[DW:.*]] = gnn.degree %[[W]] out
// ONE:         %[[XW:.*]] = gnn.apply_vertex %[[W]](%[[X]], %[[DW]])
// ONE-NOT:     gnn.all_gather
// ONE:         gnn.scatter %[[G]], %[[XW]] from src
// ONE-NOT:     gnn.own_rows
// ONE:         %[[H:.*]] = gnn.apply_vertex %[[G]]
// ONE:         %[[HA:.*]] = gnn.all_gather %[[G]], %[[H]]
// ONE:         gnn.scatter %[[G]], %[[HA]] from src
// REMARK-ONE: remark: row partitioning: 2 op(s) of the levels below 1 replicated on the whole graph (0 own-rows read(s)); 1 all-gather(s) in the forward (rows of tensor<4xf32>), 0 reduce-scatter(s)

// The backward: the first weight's gradient is every vertex's replicated
// rows against this process's partial gradients (an outer sum whose sum
// over the processes is the gradient); layer 1 needs no reduce-scatter.
// GRAD-ONE-LABEL: func.func @gnn_train_step
// GRAD-ONE:         gnn.reduce_scatter
// GRAD-ONE-NOT:     gnn.reduce_scatter
// GRAD-ONE:         gnn.gather sum %{{.*}} to src
// GRAD-ONE:         gnn.apply_vertex %{{.*}}
// GRAD-ONE:         gnn.outer_sum %{{.*}} : !gnn.vtensor<8xf32>, !gnn.vtensor<4xf32> -> tensor<8x4xf32>
// GRAD-ONE-NOT:     gnn.reduce_scatter

// replicate=2: layer 1 whole (its aggregation on the whole graph) and
// layer 2's input; the residual term reads the replicated rows at the own
// vertices.
// TWO-LABEL: func.func @two_layers
// TWO:         %[[G:.*]] = gnn.graph :
// TWO-NEXT:    %[[W:.*]] = gnn.graph whole
// TWO:         gnn.gather sum %[[W]]
// TWO:         %[[H:.*]] = gnn.apply_vertex %[[W]]
// TWO:         %[[HO:.*]] = gnn.own_rows %[[G]], %[[H]] : !gnn.vtensor<4xf32>
// TWO:         gnn.scatter %[[G]], %[[H]] from src
// TWO-NOT:     gnn.all_gather
// TWO:         gnn.apply_vertex %[[G]](%{{.*}}, %[[HO]])
// REMARK-TWO: remark: row partitioning: 5 op(s) of the levels below 2 replicated on the whole graph (1 own-rows read(s)); 0 all-gather(s) in the forward, 0 reduce-scatter(s)

// Its adjoint pads the own rows' gradient with zeros: a partial that joins
// the aggregation's partial gradient on the whole graph.
// GRAD-TWO-LABEL: func.func @gnn_train_step
// GRAD-TWO-NOT:     gnn.reduce_scatter
// GRAD-TWO:         %[[P:.*]] = gnn.pad_rows %{{.*}}, %{{.*}} : !gnn.vtensor<4xf32>
// GRAD-TWO-NOT:     gnn.reduce_scatter
// GRAD-TWO:         gnn.outer_sum
// GRAD-TWO-NOT:     gnn.reduce_scatter
// GRAD-TWO:         gnn.optimizer_update

// replicate=3: everything, the logits too; the loss reads their own rows.
// THREE-LABEL: func.func @two_layers
// THREE:         %[[W:.*]] = gnn.graph whole
// THREE:         %[[O:.*]] = gnn.apply_vertex %[[W]](%{{.*}}, %{{.*}}) : (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>)
// THREE:         %[[OO:.*]] = gnn.own_rows %{{.*}}, %[[O]]
// THREE:         gnn.softmax_cross_entropy %[[OO]]
// THREE:         return %{{.*}}, %[[OO]]
// GRAD-THREE-LABEL: func.func @gnn_train_step
// GRAD-THREE-NOT:     gnn.all_gather
// GRAD-THREE-NOT:     gnn.reduce_scatter
// GRAD-THREE:         gnn.optimizer_update
func.func @two_layers(%w: tensor<8x4xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>})
    -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<8xf32>
  %deg = gnn.degree %g out : !gnn.vtensor<1xf32>
  %xw = gnn.apply_vertex %g (%x, %deg) params(%w) : (!gnn.vtensor<8xf32>, !gnn.vtensor<1xf32>) params(tensor<8x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%v: tensor<8xf32>, %d: tensor<1xf32>, %wv: tensor<8x4xf32>):
    %drop = gnn.dropout %v {rate = 0.5 : f64} : tensor<8xf32>
    %t = gnn.linear %drop, %wv : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
    %s = gnn.mul %t, %d : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    gnn.yield %s : tensor<4xf32>
  }
  %s1 = gnn.scatter %g, %xw from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %a1 = gnn.gather sum %g, %s1 to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %h = gnn.apply_vertex %g (%a1) : (!gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%v: tensor<4xf32>):
    %r = gnn.relu %v : tensor<4xf32>
    gnn.yield %r : tensor<4xf32>
  }
  %s2 = gnn.scatter %g, %h from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %a2 = gnn.gather mean %g, %s2 to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %o = gnn.apply_vertex %g (%a2, %h) : (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%p: tensor<4xf32>, %q: tensor<4xf32>):
    %t = gnn.add %p, %q : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<4xf32>
}

