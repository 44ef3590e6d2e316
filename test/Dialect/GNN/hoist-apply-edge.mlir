// RUN: gnn-opt %s -split-input-file --gnn-hoist-apply-edge -verify-diagnostics | FileCheck %s

// G-GCN (NeuGraph eq. 1): W_H·dst and W_C·src leave the edge stage. The
// vertex tensor is a function input, so the products go to a new vertex
// stage; the edge stage reads sigmoid(dst.x + src.y) ⊙ src.h and has no
// matmul left; the scatter of h from dst is dropped.

// CHECK-LABEL: func.func @ggcn
// CHECK-SAME:    (%[[WH:.*]]: tensor<16x16xf32>, %[[WC:.*]]: tensor<16x16xf32>, %[[H:.*]]: !gnn.vtensor<16xf32>)
// CHECK:         %[[S:.*]] = gnn.scatter %{{.*}}, %[[H]] from src
// CHECK:         %[[V:.*]]:2 = gnn.apply_vertex %{{.*}}(%[[H]]) params(%[[WH]], %[[WC]])
// CHECK-NEXT:    ^bb0(%[[R:.*]]: tensor<16xf32>, %[[A:.*]]: tensor<16x16xf32>, %[[B:.*]]: tensor<16x16xf32>):
// CHECK-NEXT:      %[[X:.*]] = gnn.linear %[[R]], %[[A]]
// CHECK-NEXT:      %[[Y:.*]] = gnn.linear %[[R]], %[[B]]
// CHECK-NEXT:      gnn.yield %[[X]], %[[Y]]
// CHECK:         %[[SX:.*]] = gnn.scatter %{{.*}}, %[[V]]#0 from dst
// CHECK:         %[[SY:.*]] = gnn.scatter %{{.*}}, %[[V]]#1 from src
// CHECK:         gnn.apply_edge %{{.*}}(%[[S]], %[[SX]], %[[SY]]) : (!gnn.etensor<16xf32>, !gnn.etensor<16xf32>, !gnn.etensor<16xf32>) -> !gnn.etensor<16xf32> {
// CHECK-NEXT:    ^bb0(%[[ES:.*]]: tensor<16xf32>, %[[EX:.*]]: tensor<16xf32>, %[[EY:.*]]: tensor<16xf32>):
// CHECK-NEXT:      %[[T:.*]] = gnn.add %[[EX]], %[[EY]]
// CHECK-NEXT:      %[[G:.*]] = gnn.sigmoid %[[T]]
// CHECK-NEXT:      %[[M:.*]] = gnn.mul %[[G]], %[[ES]]
// CHECK-NEXT:      gnn.yield %[[M]]
// CHECK-NOT:     gnn.scatter {{.*}} from dst : !gnn.vtensor<16xf32>
// CHECK:         gnn.gather sum
func.func @ggcn(%wh: tensor<16x16xf32>, %wc: tensor<16x16xf32>, %h: !gnn.vtensor<16xf32>) -> !gnn.vtensor<16xf32> {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<16xf32> -> !gnn.etensor<16xf32>
  %r = gnn.scatter %g, %h from dst : !gnn.vtensor<16xf32> -> !gnn.etensor<16xf32>
  // expected-remark @+1 {{hoisted 2 ops to a new vertex stage: 1 source-side and 1 destination-side rows now scattered; 1024 contraction FLOPs per edge now per vertex}}
  %m = gnn.apply_edge %g (%s, %r) params(%wh, %wc) : (!gnn.etensor<16xf32>, !gnn.etensor<16xf32>) params(tensor<16x16xf32>, tensor<16x16xf32>) -> !gnn.etensor<16xf32> {
  ^bb0(%src: tensor<16xf32>, %dst: tensor<16xf32>, %a: tensor<16x16xf32>, %b: tensor<16x16xf32>):
    %t0 = gnn.linear %dst, %a : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
    %t1 = gnn.linear %src, %b : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
    %t2 = gnn.add %t0, %t1 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %t3 = gnn.sigmoid %t2 : tensor<16xf32>
    %t4 = gnn.mul %t3, %src : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    gnn.yield %t4 : tensor<16xf32>
  }
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<16xf32> -> !gnn.vtensor<16xf32>
  return %a : !gnn.vtensor<16xf32>
}

// -----

// NeuGraph's placement: the scattered tensor is produced by a vertex stage
// (the previous layer's ApplyVertex), so the hoisted work joins it and it
// yields the extra row; its parameters are appended.

// CHECK-LABEL: func.func @previous_layer
// CHECK:         %[[P:.*]]:2 = gnn.apply_vertex %{{.*}}(%{{.*}}) params(%{{.*}}, %{{.*}}) : (!gnn.vtensor<8xf32>) params(tensor<8x8xf32>, tensor<8xf32>) -> !gnn.vtensor<8xf32>, !gnn.vtensor<1xf32> {
// CHECK:           %[[RELU:.*]] = gnn.relu
// CHECK-NEXT:      %[[DOT:.*]] = gnn.row_dot %[[RELU]], %{{.*}}
// CHECK-NEXT:      gnn.yield %[[RELU]], %[[DOT]]
// CHECK:         gnn.scatter %{{.*}}, %[[P]]#1 from src
// CHECK:         gnn.apply_edge
// CHECK-NOT:       gnn.row_dot
// CHECK:           gnn.yield
func.func @previous_layer(%w: tensor<8x8xf32>, %att: tensor<8xf32>, %x: !gnn.vtensor<8xf32>, %e: !gnn.etensor<1xf32>) -> !gnn.vtensor<1xf32> {
  %g = gnn.graph : !gnn.graph
  %h = gnn.apply_vertex %g (%x) params(%w) : (!gnn.vtensor<8xf32>) params(tensor<8x8xf32>) -> !gnn.vtensor<8xf32> {
  ^bb0(%v: tensor<8xf32>, %wv: tensor<8x8xf32>):
    %t = gnn.linear %v, %wv : (tensor<8xf32>, tensor<8x8xf32>) -> tensor<8xf32>
    %r = gnn.relu %t : tensor<8xf32>
    gnn.yield %r : tensor<8xf32>
  }
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  // expected-remark @+1 {{hoisted 1 ops to the producing vertex stage: 1 source-side and 0 destination-side rows now scattered; 16 contraction FLOPs per edge now per vertex}}
  %m = gnn.apply_edge %g (%s, %e) params(%att) : (!gnn.etensor<8xf32>, !gnn.etensor<1xf32>) params(tensor<8xf32>) -> !gnn.etensor<1xf32> {
  ^bb0(%src: tensor<8xf32>, %d: tensor<1xf32>, %a: tensor<8xf32>):
    %t0 = gnn.row_dot %src, %a : tensor<8xf32> -> tensor<1xf32>
    %t1 = gnn.mul %t0, %d : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    gnn.yield %t1 : tensor<1xf32>
  }
  %a = gnn.gather max %g, %m to dst : !gnn.etensor<1xf32> -> !gnn.vtensor<1xf32>
  return %a : !gnn.vtensor<1xf32>
}

// -----

// W·(src + dst) splits into W·src + W·dst; both products hoist. The same
// for row_dot over a difference. (Both sides scatter the same tensor here, so
// the stage computes W·h twice until CSE, which the pipelines run next.)

// CHECK-LABEL: func.func @split_add
// CHECK:         gnn.apply_vertex %{{.*}}(%{{.*}}) params(%{{.*}}, %{{.*}}) : (!gnn.vtensor<4xf32>) params(tensor<4x2xf32>, tensor<4xf32>) -> !gnn.vtensor<2xf32>, !gnn.vtensor<2xf32>, !gnn.vtensor<1xf32>, !gnn.vtensor<1xf32>
// CHECK-COUNT-2: gnn.linear
// CHECK-COUNT-2: gnn.row_dot
// CHECK:         gnn.apply_edge
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      gnn.add
// CHECK-NEXT:      gnn.sub
// CHECK-NEXT:      gnn.mul
// CHECK-NEXT:      gnn.yield
func.func @split_add(%w: tensor<4x2xf32>, %att: tensor<4xf32>, %h: !gnn.vtensor<4xf32>) -> !gnn.vtensor<2xf32> {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %r = gnn.scatter %g, %h from dst : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  // expected-remark @+1 {{hoisted 4 ops to a new vertex stage: 2 source-side and 2 destination-side rows now scattered; 48 contraction FLOPs per edge now per vertex}}
  %m = gnn.apply_edge %g (%s, %r) params(%w, %att) : (!gnn.etensor<4xf32>, !gnn.etensor<4xf32>) params(tensor<4x2xf32>, tensor<4xf32>) -> !gnn.etensor<2xf32> {
  ^bb0(%src: tensor<4xf32>, %dst: tensor<4xf32>, %a: tensor<4x2xf32>, %b: tensor<4xf32>):
    %t0 = gnn.add %src, %dst : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t1 = gnn.linear %t0, %a : (tensor<4xf32>, tensor<4x2xf32>) -> tensor<2xf32>
    %t2 = gnn.sub %src, %dst : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t3 = gnn.row_dot %t2, %b : tensor<4xf32> -> tensor<1xf32>
    %t4 = gnn.mul %t1, %t3 : (tensor<2xf32>, tensor<1xf32>) -> tensor<2xf32>
    gnn.yield %t4 : tensor<2xf32>
  }
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<2xf32> -> !gnn.vtensor<2xf32>
  return %a : !gnn.vtensor<2xf32>
}

// -----

// W·(src ‖ dst) = W·(src ‖ 0) + W·(0 ‖ dst): two vertex-side products.

// CHECK-LABEL: func.func @split_concat
// CHECK:         gnn.apply_vertex %{{.*}}(%{{.*}}, %{{.*}}) params(%{{.*}}) : (!gnn.vtensor<4xf32>, !gnn.vtensor<3xf32>) params(tensor<7x3xf32>) -> !gnn.vtensor<3xf32>, !gnn.vtensor<3xf32>
// CHECK-DAG:       %[[Z4:.*]] = gnn.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-DAG:       %[[Z3:.*]] = gnn.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK-DAG:       gnn.concat %{{.*}}, %[[Z3]] : (tensor<4xf32>, tensor<3xf32>) -> tensor<7xf32>
// CHECK-DAG:       gnn.concat %[[Z4]], %{{.*}} : (tensor<4xf32>, tensor<3xf32>) -> tensor<7xf32>
// CHECK:         gnn.apply_edge
// CHECK-NOT:       gnn.linear
// CHECK:           gnn.add
func.func @split_concat(%w: tensor<7x3xf32>, %h: !gnn.vtensor<4xf32>, %y: !gnn.vtensor<3xf32>) -> !gnn.vtensor<3xf32> {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %r = gnn.scatter %g, %y from dst : !gnn.vtensor<3xf32> -> !gnn.etensor<3xf32>
  // expected-remark @+1 {{hoisted 6 ops to a new vertex stage: 1 source-side and 1 destination-side rows now scattered; 84 contraction FLOPs per edge now per vertex}}
  %m = gnn.apply_edge %g (%s, %r) params(%w) : (!gnn.etensor<4xf32>, !gnn.etensor<3xf32>) params(tensor<7x3xf32>) -> !gnn.etensor<3xf32> {
  ^bb0(%src: tensor<4xf32>, %dst: tensor<3xf32>, %a: tensor<7x3xf32>):
    %t0 = gnn.concat %src, %dst : (tensor<4xf32>, tensor<3xf32>) -> tensor<7xf32>
    %t1 = gnn.linear %t0, %a : (tensor<7xf32>, tensor<7x3xf32>) -> tensor<3xf32>
    %t2 = gnn.relu %t1 : tensor<3xf32>
    gnn.yield %t2 : tensor<3xf32>
  }
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<3xf32> -> !gnn.vtensor<3xf32>
  return %a : !gnn.vtensor<3xf32>
}

// -----

// GG-NN's typed product summed (or averaged) into the vertices: each edge's
// row placed in its type's slot, the aggregation of the 3 x 8 slots, then one
// linear with the 3 x 8 x 8 weight over the vertices (no contraction per
// edge).

// CHECK-LABEL: func.func @typed_slots
// CHECK:         %[[P:.*]] = gnn.apply_edge %{{.*}}(%{{.*}}, %{{.*}}) : (!gnn.etensor<8xf32>, !gnn.etensor<i32>) -> !gnn.etensor<3x8xf32>
// CHECK:           gnn.place_by_type %{{.*}}, %{{.*}} : (tensor<8xf32>, tensor<i32>) -> tensor<3x8xf32>
// CHECK:         %[[S:.*]] = gnn.gather mean %{{.*}}, %[[P]] to dst : !gnn.etensor<3x8xf32> -> !gnn.vtensor<3x8xf32>
// CHECK:         gnn.apply_vertex %{{.*}}(%[[S]]) params(%{{.*}})
// CHECK:           gnn.linear %{{.*}}, %{{.*}} : (tensor<3x8xf32>, tensor<3x8x8xf32>) -> tensor<8xf32>
// CHECK-NOT:     gnn.typed_linear
func.func @typed_slots(%wt: tensor<3x8x8xf32>, %h: !gnn.vtensor<8xf32>, %ty: !gnn.etensor<i32>) -> !gnn.vtensor<8xf32> {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  // expected-remark @+1 {{typed product by slots: each edge's row placed in its type's slot of 3}}
  %m0 = gnn.apply_edge %g (%s, %ty) params(%wt) : (!gnn.etensor<8xf32>, !gnn.etensor<i32>) params(tensor<3x8x8xf32>) -> !gnn.etensor<8xf32> {
  ^bb0(%src: tensor<8xf32>, %t: tensor<i32>, %a: tensor<3x8x8xf32>):
    %t0 = gnn.typed_linear %src, %t, %a : (tensor<8xf32>, tensor<i32>, tensor<3x8x8xf32>) -> tensor<8xf32>
    gnn.yield %t0 : tensor<8xf32>
  }
  %a0 = gnn.gather mean %g, %m0 to dst : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  return %a0 : !gnn.vtensor<8xf32>
}

// -----

// Negative cases stay unchanged: GG-NN's typed product under a max (which
// does not commute with the linear) depends on edge data;
// W·(src ⊙ dst) mixes the sides before the product; GCN's src × data has
// nothing to hoist; a dropout drawn per edge pins what follows it.

// CHECK-LABEL: func.func @unchanged
// CHECK-NOT:     gnn.apply_vertex
// CHECK:         gnn.typed_linear
// CHECK:         gnn.linear
// CHECK:         gnn.mul %{{.*}}, %{{.*}} : (tensor<8xf32>, tensor<1xf32>)
// CHECK:         gnn.dropout
// CHECK-NEXT:    gnn.row_dot
func.func @unchanged(%wt: tensor<3x8x8xf32>, %w: tensor<8x8xf32>, %att: tensor<8xf32>, %h: !gnn.vtensor<8xf32>, %ty: !gnn.etensor<i32>, %n: !gnn.etensor<1xf32>) -> (!gnn.vtensor<8xf32>, !gnn.vtensor<8xf32>, !gnn.vtensor<8xf32>, !gnn.vtensor<1xf32>) {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  %r = gnn.scatter %g, %h from dst : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  %m0 = gnn.apply_edge %g (%s, %ty) params(%wt) : (!gnn.etensor<8xf32>, !gnn.etensor<i32>) params(tensor<3x8x8xf32>) -> !gnn.etensor<8xf32> {
  ^bb0(%src: tensor<8xf32>, %t: tensor<i32>, %a: tensor<3x8x8xf32>):
    // expected-remark @+1 {{not hoisted: depends on edge data}}
    %t0 = gnn.typed_linear %src, %t, %a : (tensor<8xf32>, tensor<i32>, tensor<3x8x8xf32>) -> tensor<8xf32>
    gnn.yield %t0 : tensor<8xf32>
  }
  %m1 = gnn.apply_edge %g (%s, %r) params(%w) : (!gnn.etensor<8xf32>, !gnn.etensor<8xf32>) params(tensor<8x8xf32>) -> !gnn.etensor<8xf32> {
  ^bb0(%src: tensor<8xf32>, %dst: tensor<8xf32>, %a: tensor<8x8xf32>):
    %t0 = gnn.mul %src, %dst : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    // expected-remark @+1 {{not hoisted: mixes the source and destination rows}}
    %t1 = gnn.linear %t0, %a : (tensor<8xf32>, tensor<8x8xf32>) -> tensor<8xf32>
    gnn.yield %t1 : tensor<8xf32>
  }
  %m2 = gnn.apply_edge %g (%s, %n) : (!gnn.etensor<8xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<8xf32> {
  ^bb0(%src: tensor<8xf32>, %c: tensor<1xf32>):
    %t0 = gnn.mul %src, %c : (tensor<8xf32>, tensor<1xf32>) -> tensor<8xf32>
    gnn.yield %t0 : tensor<8xf32>
  }
  %m3 = gnn.apply_edge %g (%s) params(%att) : (!gnn.etensor<8xf32>) params(tensor<8xf32>) -> !gnn.etensor<1xf32> {
  ^bb0(%src: tensor<8xf32>, %a: tensor<8xf32>):
    %t0 = gnn.dropout %src {rate = 0.5 : f64, mask_id = 0 : i64} : tensor<8xf32>
    // expected-remark @+1 {{not hoisted: depends on edge data}}
    %t1 = gnn.row_dot %t0, %a : tensor<8xf32> -> tensor<1xf32>
    gnn.yield %t1 : tensor<1xf32>
  }
  %a0 = gnn.gather max %g, %m0 to dst : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  %a1 = gnn.gather sum %g, %m1 to dst : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  %a2 = gnn.gather sum %g, %m2 to dst : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  %a3 = gnn.gather sum %g, %m3 to dst : !gnn.etensor<1xf32> -> !gnn.vtensor<1xf32>
  return %a0, %a1, %a2, %a3 : !gnn.vtensor<8xf32>, !gnn.vtensor<8xf32>, !gnn.vtensor<8xf32>, !gnn.vtensor<1xf32>
}

// -----

// A concat with a part of dynamic width is not split (the zero padding needs
// the width); the product stays per edge.

// CHECK-LABEL: func.func @concat_dynamic
// CHECK-NOT:     gnn.apply_vertex
// CHECK:         gnn.linear
func.func @concat_dynamic(%w: tensor<?x3xf32>, %h: !gnn.vtensor<?xf32>) -> !gnn.vtensor<3xf32> {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  %r = gnn.scatter %g, %h from dst : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  %m = gnn.apply_edge %g (%s, %r) params(%w) : (!gnn.etensor<?xf32>, !gnn.etensor<?xf32>) params(tensor<?x3xf32>) -> !gnn.etensor<3xf32> {
  ^bb0(%src: tensor<?xf32>, %dst: tensor<?xf32>, %a: tensor<?x3xf32>):
    %t0 = gnn.concat %src, %dst : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    // expected-remark @+2 {{not split over concat: a part's width is dynamic}}
    // expected-remark @+1 {{not hoisted: mixes the source and destination rows}}
    %t1 = gnn.linear %t0, %a : (tensor<?xf32>, tensor<?x3xf32>) -> tensor<3xf32>
    gnn.yield %t1 : tensor<3xf32>
  }
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<3xf32> -> !gnn.vtensor<3xf32>
  return %a : !gnn.vtensor<3xf32>
}

// -----

// GAT's attention as the paper writes it, a·(W h_src ‖ W h_dst): the row_dot
// over the concat splits into a source-side and a destination-side term.

// CHECK-LABEL: func.func @gat_concat
// CHECK:         gnn.apply_vertex %{{.*}}(%{{.*}}) params(%{{.*}}) : (!gnn.vtensor<8xf32>) params(tensor<16xf32>) -> !gnn.vtensor<1xf32>, !gnn.vtensor<1xf32>
// CHECK-COUNT-2:   gnn.row_dot
// CHECK:         gnn.apply_edge
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      gnn.add
// CHECK-NEXT:      gnn.leaky_relu
// CHECK-NEXT:      gnn.yield
func.func @gat_concat(%att: tensor<16xf32>, %h: !gnn.vtensor<8xf32>) -> !gnn.vtensor<1xf32> {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  %r = gnn.scatter %g, %h from dst : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  // expected-remark @+1 {{hoisted 6 ops to a new vertex stage: 1 source-side and 1 destination-side rows now scattered; 64 contraction FLOPs per edge now per vertex}}
  %m = gnn.apply_edge %g (%s, %r) params(%att) : (!gnn.etensor<8xf32>, !gnn.etensor<8xf32>) params(tensor<16xf32>) -> !gnn.etensor<1xf32> {
  ^bb0(%src: tensor<8xf32>, %dst: tensor<8xf32>, %a: tensor<16xf32>):
    %t0 = gnn.concat %src, %dst : (tensor<8xf32>, tensor<8xf32>) -> tensor<16xf32>
    %t1 = gnn.row_dot %t0, %a : tensor<16xf32> -> tensor<1xf32>
    %t2 = gnn.leaky_relu %t1 {alpha = 0.2 : f64} : tensor<1xf32>
    gnn.yield %t2 : tensor<1xf32>
  }
  %a = gnn.gather max %g, %m to dst : !gnn.etensor<1xf32> -> !gnn.vtensor<1xf32>
  return %a : !gnn.vtensor<1xf32>
}

// -----

// A softmax shift (GAT's exp(score - stop_gradient(max))): stop_gradient of a
// destination row only relabels it, so nothing is hoisted (no vertex stage,
// no extra scatter, no remark).

// CHECK-LABEL: func.func @shift
// CHECK-NOT:     gnn.apply_vertex
// CHECK:         gnn.apply_edge
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      gnn.stop_gradient
// CHECK-NEXT:      gnn.sub
// CHECK-NEXT:      gnn.exp
func.func @shift(%e: !gnn.etensor<1xf32>, %m: !gnn.vtensor<1xf32>) -> !gnn.vtensor<1xf32> {
  %g = gnn.graph : !gnn.graph
  %r = gnn.scatter %g, %m from dst : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %x = gnn.apply_edge %g (%e, %r) : (!gnn.etensor<1xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<1xf32> {
  ^bb0(%d: tensor<1xf32>, %dst: tensor<1xf32>):
    %t0 = gnn.stop_gradient %dst : tensor<1xf32>
    %t1 = gnn.sub %d, %t0 : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %t2 = gnn.exp %t1 : tensor<1xf32>
    gnn.yield %t2 : tensor<1xf32>
  }
  %a = gnn.gather sum %g, %x to dst : !gnn.etensor<1xf32> -> !gnn.vtensor<1xf32>
  return %a : !gnn.vtensor<1xf32>
}
