// RUN: gnn-opt %s -split-input-file --gnn-fuse-sag -verify-diagnostics | FileCheck %s

// G-GCN after hoisting: sigmoid(dst.x + src.y) ⊙ src.h collapses with its
// scatters and gather into one fused_gather; no edge tensor is left.

// CHECK-LABEL: func.func @ggcn
// CHECK-SAME:    (%[[H:.*]]: !gnn.vtensor<16xf32>, %[[X:.*]]: !gnn.vtensor<16xf32>, %[[Y:.*]]: !gnn.vtensor<16xf32>)
// CHECK-NOT:     gnn.scatter
// CHECK-NOT:     gnn.apply_edge
// CHECK:         %[[A:.*]] = gnn.fused_gather sum %{{.*}} src(%[[H]], %[[Y]] : !gnn.vtensor<16xf32>, !gnn.vtensor<16xf32>) dst(%[[X]] : !gnn.vtensor<16xf32>) to dst : !gnn.vtensor<16xf32> {
// CHECK-NEXT:    ^bb0(%[[SH:.*]]: tensor<16xf32>, %[[SY:.*]]: tensor<16xf32>, %[[DX:.*]]: tensor<16xf32>):
// CHECK-NEXT:      %[[T:.*]] = gnn.add %[[DX]], %[[SY]]
// CHECK-NEXT:      %[[G:.*]] = gnn.sigmoid %[[T]]
// CHECK-NEXT:      %[[M:.*]] = gnn.mul %[[G]], %[[SH]]
// CHECK-NEXT:      gnn.yield %[[M]]
// CHECK:         return %[[A]]
func.func @ggcn(%h: !gnn.vtensor<16xf32>, %x: !gnn.vtensor<16xf32>, %y: !gnn.vtensor<16xf32>) -> !gnn.vtensor<16xf32> {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<16xf32> -> !gnn.etensor<16xf32>
  %sx = gnn.scatter %g, %x from dst : !gnn.vtensor<16xf32> -> !gnn.etensor<16xf32>
  %sy = gnn.scatter %g, %y from src : !gnn.vtensor<16xf32> -> !gnn.etensor<16xf32>
  %m = gnn.apply_edge %g (%s, %sx, %sy) : (!gnn.etensor<16xf32>, !gnn.etensor<16xf32>, !gnn.etensor<16xf32>) -> !gnn.etensor<16xf32> {
  ^bb0(%src: tensor<16xf32>, %dx: tensor<16xf32>, %sy1: tensor<16xf32>):
    %t0 = gnn.add %dx, %sy1 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %t1 = gnn.sigmoid %t0 : tensor<16xf32>
    %t2 = gnn.mul %t1, %src : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    gnn.yield %t2 : tensor<16xf32>
  }
  // expected-remark @+1 {{fused: scatter, 1 edge stage(s) of 3 ops and gather sum into one fused_gather}}
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<16xf32> -> !gnn.vtensor<16xf32>
  return %a : !gnn.vtensor<16xf32>
}

// -----

// GCN: the normalisation stage (read only by edge stages) is inlined into
// both fusions, forward-like (to dst) and backward-like (to src), so its
// |E| x 1 tensor disappears too.

// CHECK-LABEL: func.func @gcn
// CHECK-NOT:     gnn.apply_edge
// CHECK:         gnn.fused_gather sum %{{.*}} src(%{{.*}}, %{{.*}} : !gnn.vtensor<8xf32>, !gnn.vtensor<1xf32>) dst(%{{.*}} : !gnn.vtensor<1xf32>) to dst
// CHECK:           gnn.mul
// CHECK-NEXT:      gnn.rsqrt
// CHECK-NEXT:      gnn.mul
// CHECK:         gnn.fused_gather mean %{{.*}} src(%{{.*}} : !gnn.vtensor<1xf32>) dst(%{{.*}}, %{{.*}} : !gnn.vtensor<8xf32>, !gnn.vtensor<1xf32>) to src
func.func @gcn(%h: !gnn.vtensor<8xf32>, %dout: !gnn.vtensor<1xf32>, %din: !gnn.vtensor<1xf32>) -> (!gnn.vtensor<8xf32>, !gnn.vtensor<8xf32>) {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %dout from src : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %r = gnn.scatter %g, %din from dst : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  %norm = gnn.apply_edge %g (%s, %r) : (!gnn.etensor<1xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<1xf32> {
  ^bb0(%a: tensor<1xf32>, %b: tensor<1xf32>):
    %t0 = gnn.mul %a, %b : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %t1 = gnn.rsqrt %t0 : tensor<1xf32>
    gnn.yield %t1 : tensor<1xf32>
  }
  %hs = gnn.scatter %g, %h from src : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  %m = gnn.apply_edge %g (%hs, %norm) : (!gnn.etensor<8xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<8xf32> {
  ^bb0(%x: tensor<8xf32>, %w: tensor<1xf32>):
    %t0 = gnn.mul %x, %w : (tensor<8xf32>, tensor<1xf32>) -> tensor<8xf32>
    gnn.yield %t0 : tensor<8xf32>
  }
  // expected-remark @+1 {{fused: scatter, 2 edge stage(s) of 3 ops and gather sum into one fused_gather}}
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  %hd = gnn.scatter %g, %h from dst : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  %m2 = gnn.apply_edge %g (%hd, %norm) : (!gnn.etensor<8xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<8xf32> {
  ^bb0(%x: tensor<8xf32>, %w: tensor<1xf32>):
    %t0 = gnn.mul %x, %w : (tensor<8xf32>, tensor<1xf32>) -> tensor<8xf32>
    gnn.yield %t0 : tensor<8xf32>
  }
  // expected-remark @+1 {{fused: scatter, 2 edge stage(s) of 3 ops and gather mean into one fused_gather}}
  %b = gnn.gather mean %g, %m2 to src : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  return %a, %b : !gnn.vtensor<8xf32>, !gnn.vtensor<8xf32>
}

// -----

// Max keeps its accumulator; CommNet's pass-through stage and GIN's plain
// scatter fuse too (the lowering turns those into the runtime's SpMM).

// CHECK-LABEL: func.func @accumulators
// CHECK:         gnn.fused_gather max %{{.*}} src(%{{.*}} : !gnn.vtensor<4xf32>) edge(%{{.*}} : !gnn.etensor<4xf32>) to dst : !gnn.vtensor<4xf32>
// CHECK:           gnn.relu
// CHECK:         gnn.fused_gather sum %{{.*}} src(%{{.*}} : !gnn.vtensor<4xf32>) to dst : !gnn.vtensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[R:.*]]: tensor<4xf32>):
// CHECK-NEXT:      gnn.yield %[[R]]
// CHECK:         gnn.fused_gather min %{{.*}} dst(%{{.*}} : !gnn.vtensor<4xf32>) to src
func.func @accumulators(%h: !gnn.vtensor<4xf32>, %d: !gnn.etensor<4xf32>) -> (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>) {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %p = gnn.apply_edge %g (%s, %d) : (!gnn.etensor<4xf32>, !gnn.etensor<4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %t0 = gnn.sub %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t1 = gnn.relu %t0 : tensor<4xf32>
    gnn.yield %t1 : tensor<4xf32>
  }
  // expected-remark @+1 {{fused: scatter, 1 edge stage(s) of 2 ops and gather max into one fused_gather}}
  %a = gnn.gather max %g, %p to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %q = gnn.apply_edge %g (%s) : (!gnn.etensor<4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    gnn.yield %x : tensor<4xf32>
  }
  // expected-remark @+1 {{fused: scatter, 1 edge stage(s) of 0 ops and gather sum into one fused_gather}}
  %b = gnn.gather sum %g, %q to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %r = gnn.scatter %g, %h from dst : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  // expected-remark @+1 {{fused: scatter and gather min into one fused_gather}}
  %c = gnn.gather min %g, %r to src : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  return %a, %b, %c : !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>
}

// -----

// Refused: GG-NN's typed product and an unhoisted linear are neither
// element-wise nor reductions.

// CHECK-LABEL: func.func @refused
// CHECK-NOT:     gnn.fused_gather
// CHECK-COUNT-2: gnn.gather sum
func.func @refused(%h: !gnn.vtensor<8xf32>, %ty: !gnn.etensor<i32>, %wt: tensor<3x8x8xf32>, %w: tensor<8x8xf32>) -> (!gnn.vtensor<8xf32>, !gnn.vtensor<8xf32>) {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  %m0 = gnn.apply_edge %g (%s, %ty) params(%wt) : (!gnn.etensor<8xf32>, !gnn.etensor<i32>) params(tensor<3x8x8xf32>) -> !gnn.etensor<8xf32> {
  ^bb0(%x: tensor<8xf32>, %t: tensor<i32>, %a: tensor<3x8x8xf32>):
    %t0 = gnn.typed_linear %x, %t, %a : (tensor<8xf32>, tensor<i32>, tensor<3x8x8xf32>) -> tensor<8xf32>
    gnn.yield %t0 : tensor<8xf32>
  }
  // expected-remark @+1 {{not fused: the edge stage computes 'gnn.typed_linear', which is not element-wise}}
  %a0 = gnn.gather sum %g, %m0 to dst : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  %m1 = gnn.apply_edge %g (%s) params(%w) : (!gnn.etensor<8xf32>) params(tensor<8x8xf32>) -> !gnn.etensor<8xf32> {
  ^bb0(%x: tensor<8xf32>, %a: tensor<8x8xf32>):
    %t0 = gnn.linear %x, %a : (tensor<8xf32>, tensor<8x8xf32>) -> tensor<8xf32>
    gnn.yield %t0 : tensor<8xf32>
  }
  // expected-remark @+1 {{not fused: the edge stage computes 'gnn.linear', which is not element-wise}}
  %a1 = gnn.gather sum %g, %m1 to dst : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  return %a0, %a1 : !gnn.vtensor<8xf32>, !gnn.vtensor<8xf32>
}

// -----

// A stage whose tensor a parameter gradient also reads stays and is read as
// an edge tensor; the gather still fuses.

// CHECK-LABEL: func.func @shared
// CHECK:         %[[E:.*]] = gnn.apply_edge
// CHECK:         gnn.fused_gather sum %{{.*}} src(%{{.*}} : !gnn.vtensor<4xf32>) edge(%[[E]] : !gnn.etensor<4xf32>) to dst
// CHECK:         gnn.outer_sum
func.func @shared(%h: !gnn.vtensor<4xf32>) -> (!gnn.vtensor<4xf32>, tensor<4x4xf32>) {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %e = gnn.apply_edge %g (%s) : (!gnn.etensor<4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %t0 = gnn.tanh %x : tensor<4xf32>
    gnn.yield %t0 : tensor<4xf32>
  }
  %m = gnn.apply_edge %g (%s, %e) : (!gnn.etensor<4xf32>, !gnn.etensor<4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %t0 = gnn.mul %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %t0 : tensor<4xf32>
  }
  // expected-remark @+1 {{fused: scatter, 1 edge stage(s) of 1 ops and gather sum into one fused_gather}}
  %a = gnn.gather sum %g, %m to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %o = gnn.outer_sum %s, %e : !gnn.etensor<4xf32>, !gnn.etensor<4xf32> -> tensor<4x4xf32>
  return %a, %o : !gnn.vtensor<4xf32>, tensor<4x4xf32>
}

// -----

// The backward of a max gather: the forward fused_gather also yields the
// chosen edges, and the gather_grad becomes edge_select inside the
// backward's fused gather (to src): no |E|-sized tensor in either pass.

// CHECK-LABEL: func.func @max_backward
// CHECK:         %{{.*}}, %[[ARG:.*]] = gnn.fused_gather max %{{.*}} src(%{{.*}} : !gnn.vtensor<4xf32>) to dst : !gnn.vtensor<4xf32> arg !gnn.vtensor<4xi32>
// CHECK-NOT:     gnn.gather_grad
// CHECK:         gnn.fused_gather sum %{{.*}} dst(%[[ARG]], %{{.*}} : !gnn.vtensor<4xi32>, !gnn.vtensor<4xf32>) to src : !gnn.vtensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<4xi32>, %[[D:.*]]: tensor<4xf32>):
// CHECK-NEXT:      %[[P:.*]] = gnn.edge_select %[[A]], %[[D]] : tensor<4xi32>, tensor<4xf32>
// CHECK-NEXT:      gnn.yield %[[P]]
func.func @max_backward(%h: !gnn.vtensor<4xf32>, %da: !gnn.vtensor<4xf32>) -> (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>) {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  // expected-remark @+1 {{fused: with the chosen edges, for the backward pass}}
  %a = gnn.gather max %g, %s to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  // expected-remark @+1 {{fused: the gradient is routed per edge through the forward's chosen edges}}
  %ds = gnn.gather_grad max %g, %da, %s to dst : !gnn.vtensor<4xf32>, !gnn.etensor<4xf32> -> !gnn.etensor<4xf32>
  // expected-remark @+1 {{fused: scatter, 1 edge stage(s) of 1 ops and gather sum into one fused_gather}}
  %dh = gnn.gather sum %g, %ds to src : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  return %a, %dh : !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>
}

// -----

// Reductions in the body (GAT's backward: the gradient of the per-head
// coefficient is a row_dot over each head's features; of a scalar one a
// reduce_sum): computed once per edge inside the fused loop nest.

// CHECK-LABEL: func.func @reductions
// CHECK-NOT:     gnn.apply_edge
// CHECK:         gnn.fused_gather sum %{{.*}} src(%{{.*}} : !gnn.vtensor<4x8xf32>) dst(%{{.*}} : !gnn.vtensor<4x8xf32>) to src : !gnn.vtensor<4x8xf32>
// CHECK:           gnn.row_dot
// CHECK:           gnn.broadcast_heads
// CHECK:         gnn.fused_gather sum %{{.*}} src(%{{.*}} : !gnn.vtensor<8xf32>) dst(%{{.*}} : !gnn.vtensor<8xf32>) to dst : !gnn.vtensor<1xf32>
// CHECK:           gnn.reduce_sum
func.func @reductions(%h: !gnn.vtensor<4x8xf32>, %d: !gnn.vtensor<4x8xf32>, %x: !gnn.vtensor<8xf32>, %y: !gnn.vtensor<8xf32>) -> (!gnn.vtensor<4x8xf32>, !gnn.vtensor<1xf32>) {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<4x8xf32> -> !gnn.etensor<4x8xf32>
  %r = gnn.scatter %g, %d from dst : !gnn.vtensor<4x8xf32> -> !gnn.etensor<4x8xf32>
  %m = gnn.apply_edge %g (%s, %r) : (!gnn.etensor<4x8xf32>, !gnn.etensor<4x8xf32>) -> !gnn.etensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>):
    %t0 = gnn.row_dot %a, %b : tensor<4x8xf32> -> tensor<4xf32>
    %t1 = gnn.broadcast_heads %t0 : tensor<4xf32> -> tensor<4x8xf32>
    %t2 = gnn.mul %t1, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    gnn.yield %t2 : tensor<4x8xf32>
  }
  // expected-remark @+1 {{fused: scatter, 1 edge stage(s) of 3 ops and gather sum into one fused_gather}}
  %a = gnn.gather sum %g, %m to src : !gnn.etensor<4x8xf32> -> !gnn.vtensor<4x8xf32>
  %sx = gnn.scatter %g, %x from src : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  %sy = gnn.scatter %g, %y from dst : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  %n = gnn.apply_edge %g (%sx, %sy) : (!gnn.etensor<8xf32>, !gnn.etensor<8xf32>) -> !gnn.etensor<1xf32> {
  ^bb0(%p: tensor<8xf32>, %q: tensor<8xf32>):
    %t0 = gnn.mul %p, %q : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t1 = gnn.reduce_sum %t0 : tensor<8xf32> -> tensor<1xf32>
    %t2 = gnn.exp %t1 : tensor<1xf32>
    gnn.yield %t2 : tensor<1xf32>
  }
  // expected-remark @+1 {{fused: scatter, 1 edge stage(s) of 3 ops and gather sum into one fused_gather}}
  %c = gnn.gather sum %g, %n to dst : !gnn.etensor<1xf32> -> !gnn.vtensor<1xf32>
  return %a, %c : !gnn.vtensor<4x8xf32>, !gnn.vtensor<1xf32>
}

// -----

// Aggregations over the same edges (same side and accumulator) share one
// fused_gather: one pass over the edges, one body yielding each row. One
// that reads another's result (the softmax denominator's reader) cannot
// join its group.

// CHECK-LABEL: func.func @merged
// CHECK:         %[[M:.*]]:2 = gnn.fused_gather sum %{{.*}} src(%{{.*}} : !gnn.vtensor<4x8xf32>) dst(%{{.*}} : !gnn.vtensor<4x8xf32>) to dst : !gnn.vtensor<4xf32>, !gnn.vtensor<4x8xf32> {
// CHECK:           gnn.row_dot
// CHECK:           gnn.yield
// CHECK:         %[[N:.*]] = gnn.fused_gather sum %{{.*}} src(%{{.*}} : !gnn.vtensor<4x8xf32>) dst(%[[M]]#0 : !gnn.vtensor<4xf32>) to dst : !gnn.vtensor<4x8xf32> {
// CHECK:         return %[[M]]#0, %[[M]]#1, %[[N]]
func.func @merged(%h: !gnn.vtensor<4x8xf32>, %d: !gnn.vtensor<4x8xf32>) -> (!gnn.vtensor<4xf32>, !gnn.vtensor<4x8xf32>, !gnn.vtensor<4x8xf32>) {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<4x8xf32> -> !gnn.etensor<4x8xf32>
  %r = gnn.scatter %g, %d from dst : !gnn.vtensor<4x8xf32> -> !gnn.etensor<4x8xf32>
  %c, %m = gnn.apply_edge %g (%s, %r) : (!gnn.etensor<4x8xf32>, !gnn.etensor<4x8xf32>) -> !gnn.etensor<4xf32>, !gnn.etensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>):
    %t0 = gnn.row_dot %a, %b : tensor<4x8xf32> -> tensor<4xf32>
    %t1 = gnn.exp %t0 : tensor<4xf32>
    %t2 = gnn.broadcast_heads %t1 : tensor<4xf32> -> tensor<4x8xf32>
    %t3 = gnn.mul %t2, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    gnn.yield %t1, %t3 : tensor<4xf32>, tensor<4x8xf32>
  }
  // expected-remark @+1 {{fused: scatter, 1 edge stage(s) of 4 ops and gather sum into one fused_gather}}
  %den = gnn.gather sum %g, %c to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  // expected-remark @+1 {{fused: scatter, 1 edge stage(s) of 4 ops and gather sum into one fused_gather}}
  %num = gnn.gather sum %g, %m to dst : !gnn.etensor<4x8xf32> -> !gnn.vtensor<4x8xf32>
  %rd = gnn.scatter %g, %den from dst : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %q = gnn.apply_edge %g (%s, %rd) : (!gnn.etensor<4x8xf32>, !gnn.etensor<4xf32>) -> !gnn.etensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4xf32>):
    %t0 = gnn.broadcast_heads %b : tensor<4xf32> -> tensor<4x8xf32>
    %t1 = gnn.div %a, %t0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    gnn.yield %t1 : tensor<4x8xf32>
  }
  // expected-remark @+1 {{fused: scatter, 1 edge stage(s) of 2 ops and gather sum into one fused_gather}}
  %o = gnn.gather sum %g, %q to dst : !gnn.etensor<4x8xf32> -> !gnn.vtensor<4x8xf32>
  return %den, %num, %o : !gnn.vtensor<4xf32>, !gnn.vtensor<4x8xf32>, !gnn.vtensor<4x8xf32>
}

// -----

// The max backward stays a gather_grad when a reader of the routed gradient
// cannot fuse (a linear per edge), or when no forward gather of the same
// edges exists.

// CHECK-LABEL: func.func @max_backward_refused
// CHECK:         gnn.gather_grad max
// CHECK:         gnn.gather_grad min
func.func @max_backward_refused(%h: !gnn.vtensor<4xf32>, %da: !gnn.vtensor<4xf32>, %w: tensor<4x4xf32>) -> (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>) {
  %g = gnn.graph : !gnn.graph
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  // expected-remark @+1 {{fused: with the chosen edges, for the backward pass}}
  %a = gnn.gather max %g, %s to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  // expected-remark @+1 {{not fused: a reader of the routed gradient is not fused (a reading edge stage computes 'gnn.linear')}}
  %ds = gnn.gather_grad max %g, %da, %s to dst : !gnn.vtensor<4xf32>, !gnn.etensor<4xf32> -> !gnn.etensor<4xf32>
  %m = gnn.apply_edge %g (%ds) params(%w) : (!gnn.etensor<4xf32>) params(tensor<4x4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %wv: tensor<4x4xf32>):
    %t = gnn.linear %x, %wv : (tensor<4xf32>, tensor<4x4xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  // expected-remark @+1 {{not fused: the edge stage computes 'gnn.linear', which is not element-wise}}
  %dh = gnn.gather sum %g, %m to src : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  // expected-remark @+1 {{not fused: no forward gather of the same edges}}
  %dn = gnn.gather_grad min %g, %da, %s to dst : !gnn.vtensor<4xf32>, !gnn.etensor<4xf32> -> !gnn.etensor<4xf32>
  // expected-remark @+1 {{not fused: its input is not a scatter or an edge stage}}
  %dm = gnn.gather sum %g, %dn to src : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  return %a, %dh, %dm : !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>
}
