// RUN: gnn-opt %s --allow-unregistered-dialect | gnn-opt --allow-unregistered-dialect | FileCheck %s
// RUN: gnn-opt %s --allow-unregistered-dialect --mlir-print-op-generic | gnn-opt --allow-unregistered-dialect | FileCheck %s

// Every gnn type, attribute and op, parsed, printed and parsed again (also
// through the generic form).

// CHECK-LABEL: func.func @types
// CHECK-SAME: !gnn.graph
// CHECK-SAME: !gnn.vtensor<128xf32>
// CHECK-SAME: !gnn.vtensor<4x?xf32>
// CHECK-SAME: !gnn.vtensor<i64>
// CHECK-SAME: !gnn.vtensor<i1>
// CHECK-SAME: !gnn.etensor<1xf32>
// CHECK-SAME: !gnn.etensor<i32>
func.func @types(%g: !gnn.graph, %a: !gnn.vtensor<128xf32>, %b: !gnn.vtensor<4x?xf32>,
                 %c: !gnn.vtensor<i64>, %d: !gnn.vtensor<i1>, %e: !gnn.etensor<1xf32>,
                 %f: !gnn.etensor<i32>) {
  return
}

// CHECK-LABEL: func.func @inits
// CHECK-SAME: gnn.init = #gnn.init<glorot>
// CHECK-SAME: gnn.init = #gnn.init<zeros>
// CHECK-SAME: gnn.init = #gnn.init<ones>
// CHECK-SAME: gnn.init = #gnn.init<constant, 5.000000e-01>
// CHECK-SAME: gnn.init = #gnn.init<uniform, 1.000000e-01>
// CHECK-SAME: gnn.init = #gnn.init<normal, 2.000000e+00>
func.func @inits(%a: tensor<2xf32> {gnn.init = #gnn.init<glorot>},
                 %b: tensor<2xf32> {gnn.init = #gnn.init<zeros>},
                 %c: tensor<2xf32> {gnn.init = #gnn.init<ones>},
                 %d: tensor<2xf32> {gnn.init = #gnn.init<constant, 0.5>},
                 %e: tensor<2xf32> {gnn.init = #gnn.init<uniform, 0.1>},
                 %f: tensor<2xf32> {gnn.init = #gnn.init<normal, 2.0>}) {
  return
}

// CHECK-LABEL: func.func @data
func.func @data() {
  // CHECK: %[[G:.*]] = gnn.graph : !gnn.graph
  %g = gnn.graph : !gnn.graph
  // CHECK: gnn.input %[[G]] "features" : !gnn.vtensor<?xf32>
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  // CHECK: gnn.input %[[G]] "labels" : !gnn.vtensor<i64>
  %l = gnn.input %g "labels" : !gnn.vtensor<i64>
  // CHECK: gnn.input %[[G]] "val_mask" : !gnn.vtensor<i1>
  %m = gnn.input %g "val_mask" : !gnn.vtensor<i1>
  // CHECK: gnn.input %[[G]] "weight" : !gnn.etensor<1xf32>
  %w = gnn.input %g "weight" : !gnn.etensor<1xf32>
  // CHECK: gnn.input %[[G]] "type" : !gnn.etensor<i32>
  %t = gnn.input %g "type" : !gnn.etensor<i32>
  // CHECK: gnn.degree %[[G]] in : !gnn.vtensor<1xf32>
  %di = gnn.degree %g in : !gnn.vtensor<1xf32>
  // CHECK: gnn.degree %[[G]] out : !gnn.vtensor<1xf32>
  %do = gnn.degree %g out : !gnn.vtensor<1xf32>
  "test.use"(%x, %l, %m, %w, %t, %di, %do) : (!gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1>, !gnn.etensor<1xf32>, !gnn.etensor<i32>, !gnn.vtensor<1xf32>, !gnn.vtensor<1xf32>) -> ()
  return
}

// CHECK-LABEL: func.func @stages
func.func @stages(%g: !gnn.graph, %h: !gnn.vtensor<8xf32>, %w: tensor<8x4xf32>) -> !gnn.vtensor<4xf32> {
  // CHECK: gnn.scatter %{{.*}}, %{{.*}} from src : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  // CHECK: gnn.scatter %{{.*}}, %{{.*}} from dst
  %d = gnn.scatter %g, %h from dst : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  // CHECK: gnn.apply_edge %{{.*}}(%{{.*}}, %{{.*}}) : (!gnn.etensor<8xf32>, !gnn.etensor<8xf32>) -> !gnn.etensor<8xf32>, !gnn.etensor<1xf32>
  // CHECK-NEXT: ^bb0(%{{.*}}: tensor<8xf32>, %{{.*}}: tensor<8xf32>):
  %m:2 = gnn.apply_edge %g (%s, %d) : (!gnn.etensor<8xf32>, !gnn.etensor<8xf32>) -> !gnn.etensor<8xf32>, !gnn.etensor<1xf32> {
  ^bb0(%a: tensor<8xf32>, %b: tensor<8xf32>):
    %p = gnn.mul %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %q = gnn.row_dot %a, %b : tensor<8xf32> -> tensor<1xf32>
    // CHECK: gnn.yield %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<1xf32>
    gnn.yield %p, %q : tensor<8xf32>, tensor<1xf32>
  }
  // CHECK: gnn.gather sum %{{.*}}, %{{.*}} to dst : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  %a0 = gnn.gather sum %g, %m#0 to dst : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  // CHECK: gnn.gather mean %{{.*}} to dst
  %a1 = gnn.gather mean %g, %m#0 to dst : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  // CHECK: gnn.gather max %{{.*}} to dst
  %a2 = gnn.gather max %g, %m#0 to dst : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  // CHECK: gnn.gather min %{{.*}} to src
  %a3 = gnn.gather min %g, %m#0 to src : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  // CHECK: gnn.apply_vertex %{{.*}}(%{{.*}}, %{{.*}}) params(%{{.*}}) : (!gnn.vtensor<8xf32>, !gnn.vtensor<8xf32>) params(tensor<8x4xf32>) -> !gnn.vtensor<4xf32>
  %o = gnn.apply_vertex %g (%a0, %a1) params(%w) : (!gnn.vtensor<8xf32>, !gnn.vtensor<8xf32>) params(tensor<8x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%x: tensor<8xf32>, %y: tensor<8xf32>, %wv: tensor<8x4xf32>):
    %z = gnn.add %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t = gnn.linear %z, %wv : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  return %o : !gnn.vtensor<4xf32>
}

// CHECK-LABEL: func.func @row_ops
func.func @row_ops(%g: !gnn.graph, %h: !gnn.vtensor<4x8xf32>, %e: !gnn.etensor<i32>, %v: !gnn.vtensor<8xf32>,
                   %w: tensor<4x8x2xf32>, %tw: tensor<3x8x8xf32>, %eps: tensor<f32>) {
  %o = gnn.apply_vertex %g (%h, %v) params(%w, %eps) : (!gnn.vtensor<4x8xf32>, !gnn.vtensor<8xf32>) params(tensor<4x8x2xf32>, tensor<f32>) -> !gnn.vtensor<2xf32> {
  ^bb0(%x: tensor<4x8xf32>, %y: tensor<8xf32>, %wv: tensor<4x8x2xf32>, %ev: tensor<f32>):
    // CHECK: gnn.relu %{{.*}} : tensor<4x8xf32>
    %0 = gnn.relu %x : tensor<4x8xf32>
    // CHECK: gnn.sigmoid
    %1 = gnn.sigmoid %0 : tensor<4x8xf32>
    // CHECK: gnn.tanh
    %2 = gnn.tanh %1 : tensor<4x8xf32>
    // CHECK: gnn.exp
    %3 = gnn.exp %2 : tensor<4x8xf32>
    // CHECK: gnn.log
    %4 = gnn.log %3 : tensor<4x8xf32>
    // CHECK: gnn.neg
    %5 = gnn.neg %4 : tensor<4x8xf32>
    // CHECK: gnn.elu
    %6 = gnn.elu %5 : tensor<4x8xf32>
    // CHECK: gnn.sqrt
    %7 = gnn.sqrt %6 : tensor<4x8xf32>
    // CHECK: gnn.rsqrt
    %8 = gnn.rsqrt %7 : tensor<4x8xf32>
    // CHECK: gnn.stop_gradient %{{.*}} : tensor<4x8xf32>
    %sg = gnn.stop_gradient %8 : tensor<4x8xf32>
    // CHECK: gnn.leaky_relu %{{.*}} {alpha = 2.000000e-01 : f64} : tensor<4x8xf32>
    %9 = gnn.leaky_relu %8 {alpha = 0.2 : f64} : tensor<4x8xf32>
    // CHECK: gnn.sub %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %10 = gnn.sub %9, %ev : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    // CHECK: gnn.div %{{.*}}, %{{.*}} : (tensor<1xf32>, tensor<8xf32>) -> tensor<8xf32>
    %c = gnn.constant dense<2.0> : tensor<1xf32>
    %11 = gnn.div %c, %y : (tensor<1xf32>, tensor<8xf32>) -> tensor<8xf32>
    // CHECK: gnn.concat %{{.*}}, %{{.*}} : (tensor<8xf32>, tensor<8xf32>) -> tensor<16xf32>
    %12 = gnn.concat %11, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<16xf32>
    // CHECK: gnn.row_dot %{{.*}}, %{{.*}} : tensor<4x8xf32> -> tensor<4xf32>
    %13 = gnn.row_dot %10, %x : tensor<4x8xf32> -> tensor<4xf32>
    // CHECK: gnn.broadcast_heads %{{.*}} : tensor<4xf32> -> tensor<4x8xf32>
    %14 = gnn.broadcast_heads %13 : tensor<4xf32> -> tensor<4x8xf32>
    // CHECK: gnn.dropout %{{.*}} {rate = 5.000000e-01 : f64} : tensor<4x8xf32>
    %15 = gnn.dropout %14 {rate = 0.5 : f64} : tensor<4x8xf32>
    // CHECK: gnn.linear %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<4x8x2xf32>) -> tensor<2xf32>
    %16 = gnn.linear %15, %wv : (tensor<4x8xf32>, tensor<4x8x2xf32>) -> tensor<2xf32>
    "test.use"(%12) : (tensor<16xf32>) -> ()
    gnn.yield %16 : tensor<2xf32>
  }
  %s = gnn.scatter %g, %v from src : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  %t = gnn.apply_edge %g (%s, %e) params(%tw) : (!gnn.etensor<8xf32>, !gnn.etensor<i32>) params(tensor<3x8x8xf32>) -> !gnn.etensor<8xf32> {
  ^bb0(%x: tensor<8xf32>, %ty: tensor<i32>, %wv: tensor<3x8x8xf32>):
    // CHECK: gnn.typed_linear %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8xf32>, tensor<i32>, tensor<3x8x8xf32>) -> tensor<8xf32>
    %r = gnn.typed_linear %x, %ty, %wv : (tensor<8xf32>, tensor<i32>, tensor<3x8x8xf32>) -> tensor<8xf32>
    gnn.yield %r : tensor<8xf32>
  }
  "test.use"(%o, %t) : (!gnn.vtensor<2xf32>, !gnn.etensor<8xf32>) -> ()
  return
}

// CHECK-LABEL: func.func @training
func.func @training(%logits: !gnn.vtensor<?xf32>, %labels: !gnn.vtensor<i64>, %mask: !gnn.vtensor<i1>,
                    %p: tensor<4x4xf32>, %dp: tensor<4x4xf32>) -> (f32, f32, tensor<4x4xf32>) {
  // CHECK: gnn.softmax_cross_entropy %{{.*}}, %{{.*}}, %{{.*}} : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  %l = gnn.softmax_cross_entropy %logits, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  // CHECK: gnn.accuracy %{{.*}}, %{{.*}}, %{{.*}} : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  %a = gnn.accuracy %logits, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  // CHECK: gnn.optimizer_update "conv1.weight" %{{.*}}, %{{.*}} : tensor<4x4xf32>
  %n = gnn.optimizer_update "conv1.weight" %p, %dp : tensor<4x4xf32>
  return %l, %a, %n : f32, f32, tensor<4x4xf32>
}

// CHECK-LABEL: func.func @backward_ops
func.func @backward_ops(%g: !gnn.graph, %x: !gnn.vtensor<4xf32>, %d: !gnn.vtensor<2xf32>, %w: tensor<4x2xf32>,
                        %logits: !gnn.vtensor<?xf32>, %labels: !gnn.vtensor<i64>, %mask: !gnn.vtensor<i1>) {
  %o = gnn.apply_vertex %g (%d) params(%w) : (!gnn.vtensor<2xf32>) params(tensor<4x2xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%a: tensor<2xf32>, %wv: tensor<4x2xf32>):
    // CHECK: gnn.linear_transpose %{{.*}}, %{{.*}} : (tensor<2xf32>, tensor<4x2xf32>) -> tensor<4xf32>
    %t = gnn.linear_transpose %a, %wv : (tensor<2xf32>, tensor<4x2xf32>) -> tensor<4xf32>
    // CHECK: gnn.step %{{.*}} : tensor<4xf32>
    %s = gnn.step %t : tensor<4xf32>
    // CHECK: gnn.reduce_sum %{{.*}} : tensor<4xf32> -> tensor<1xf32>
    %r = gnn.reduce_sum %s : tensor<4xf32> -> tensor<1xf32>
    %m = gnn.mul %s, %r : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    gnn.yield %m : tensor<4xf32>
  }
  // CHECK: gnn.sum_rows %{{.*}} : !gnn.vtensor<4xf32> -> tensor<4xf32>
  %sr = gnn.sum_rows %o : !gnn.vtensor<4xf32> -> tensor<4xf32>
  // CHECK: gnn.outer_sum %{{.*}}, %{{.*}} : !gnn.vtensor<4xf32>, !gnn.vtensor<2xf32> -> tensor<4x2xf32>
  %os = gnn.outer_sum %x, %d : !gnn.vtensor<4xf32>, !gnn.vtensor<2xf32> -> tensor<4x2xf32>
  // CHECK: gnn.tensor_add %{{.*}}, %{{.*}} : tensor<4x2xf32>
  %ta = gnn.tensor_add %os, %w : tensor<4x2xf32>
  // CHECK: gnn.softmax_cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> !gnn.vtensor<?xf32>
  %dl = gnn.softmax_cross_entropy_grad %logits, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> !gnn.vtensor<?xf32>
  "test.use"(%sr, %ta, %dl) : (tensor<4xf32>, tensor<4x2xf32>, !gnn.vtensor<?xf32>) -> ()
  return
}

// CHECK-LABEL: func.func @typed_backward_ops
func.func @typed_backward_ops(%g: !gnn.graph, %e: !gnn.etensor<8xf32>, %t: !gnn.etensor<i32>, %x: !gnn.etensor<4xf32>,
                              %w: tensor<3x4x8xf32>, %dv: !gnn.vtensor<4xf32>) {
  %o = gnn.apply_edge %g (%e, %t) params(%w) : (!gnn.etensor<8xf32>, !gnn.etensor<i32>) params(tensor<3x4x8xf32>) -> !gnn.etensor<2xf32> {
  ^bb0(%a: tensor<8xf32>, %ty: tensor<i32>, %wv: tensor<3x4x8xf32>):
    // CHECK: gnn.typed_linear_transpose %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8xf32>, tensor<i32>, tensor<3x4x8xf32>) -> tensor<4xf32>
    %r = gnn.typed_linear_transpose %a, %ty, %wv : (tensor<8xf32>, tensor<i32>, tensor<3x4x8xf32>) -> tensor<4xf32>
    // CHECK: gnn.slice %{{.*}} {offset = 2 : i64} : tensor<4xf32> -> tensor<2xf32>
    %s = gnn.slice %r {offset = 2 : i64} : tensor<4xf32> -> tensor<2xf32>
    gnn.yield %s : tensor<2xf32>
  }
  // CHECK: gnn.typed_outer_sum %{{.*}}, %{{.*}}, %{{.*}} : !gnn.etensor<4xf32>, !gnn.etensor<i32>, !gnn.etensor<8xf32> -> tensor<3x4x8xf32>
  %tw = gnn.typed_outer_sum %x, %t, %e : !gnn.etensor<4xf32>, !gnn.etensor<i32>, !gnn.etensor<8xf32> -> tensor<3x4x8xf32>
  // CHECK: gnn.gather_grad min %{{.*}}, %{{.*}}, %{{.*}} to src : !gnn.vtensor<4xf32>, !gnn.etensor<4xf32> -> !gnn.etensor<4xf32>
  %gg = gnn.gather_grad min %g, %dv, %x to src : !gnn.vtensor<4xf32>, !gnn.etensor<4xf32> -> !gnn.etensor<4xf32>
  "test.use"(%o, %tw, %gg) : (!gnn.etensor<2xf32>, tensor<3x4x8xf32>, !gnn.etensor<4xf32>) -> ()
  return
}

// CHECK-LABEL: func.func @fused_gather
func.func @fused_gather(%g: !gnn.graph, %h: !gnn.vtensor<4x8xf32>, %a: !gnn.vtensor<4xf32>, %d: !gnn.vtensor<4xf32>,
                        %w: !gnn.etensor<1xf32>, %b: tensor<4x8xf32>) {
  // CHECK: gnn.fused_gather max %{{.*}} src(%{{.*}}, %{{.*}} : !gnn.vtensor<4x8xf32>, !gnn.vtensor<4xf32>) dst(%{{.*}} : !gnn.vtensor<4xf32>) edge(%{{.*}} : !gnn.etensor<1xf32>) params(%{{.*}} : tensor<4x8xf32>) to src : !gnn.vtensor<4x8xf32> {
  %0 = gnn.fused_gather max %g src(%h, %a : !gnn.vtensor<4x8xf32>, !gnn.vtensor<4xf32>) dst(%d : !gnn.vtensor<4xf32>)
         edge(%w : !gnn.etensor<1xf32>) params(%b : tensor<4x8xf32>) to src : !gnn.vtensor<4x8xf32> {
  ^bb0(%x: tensor<4x8xf32>, %s: tensor<4xf32>, %t: tensor<4xf32>, %c: tensor<1xf32>, %bv: tensor<4x8xf32>):
    %one = gnn.constant dense<1.0> : tensor<f32>
    %u = gnn.add %s, %t : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %v = gnn.broadcast_heads %u : tensor<4xf32> -> tensor<4x8xf32>
    %m = gnn.mul %x, %v : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %n = gnn.mul %m, %c : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
    %p = gnn.add %n, %bv : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %q = gnn.sub %p, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    gnn.yield %q : tensor<4x8xf32>
  }
  // CHECK: gnn.fused_gather sum %{{.*}} src(%{{.*}} : !gnn.vtensor<4xf32>) to dst : !gnn.vtensor<4xf32>
  %1 = gnn.fused_gather sum %g src(%a : !gnn.vtensor<4xf32>) to dst : !gnn.vtensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    gnn.yield %x : tensor<4xf32>
  }
  // CHECK: gnn.fused_gather min %{{.*}} src(%{{.*}} : !gnn.vtensor<4xf32>) to src : !gnn.vtensor<4xf32> arg !gnn.vtensor<4xi32> {
  %2, %3 = gnn.fused_gather min %g src(%a : !gnn.vtensor<4xf32>) to src : !gnn.vtensor<4xf32> arg !gnn.vtensor<4xi32> {
  ^bb0(%x: tensor<4xf32>):
    gnn.yield %x : tensor<4xf32>
  }
  // CHECK: gnn.edge_select %{{.*}}, %{{.*}} : tensor<4xi32>, tensor<4xf32>
  %4 = gnn.fused_gather sum %g dst(%3, %d : !gnn.vtensor<4xi32>, !gnn.vtensor<4xf32>) to src : !gnn.vtensor<4xf32> {
  ^bb0(%i: tensor<4xi32>, %x: tensor<4xf32>):
    %s = gnn.edge_select %i, %x : tensor<4xi32>, tensor<4xf32>
    gnn.yield %s : tensor<4xf32>
  }
  "test.use"(%0, %1, %2, %4) : (!gnn.vtensor<4x8xf32>, !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>) -> ()
  return
}
