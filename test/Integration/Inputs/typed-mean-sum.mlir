func.func @typed_mean_sum(%w: tensor<?x4xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
              %o: tensor<3x4x4xf32> {gnn.param = "o", gnn.init = #gnn.init<glorot>},
              %c: tensor<8x?xf32> {gnn.param = "c", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %type = gnn.input %g "type" : !gnn.etensor<i32>
  %h = gnn.apply_vertex %g (%x) params(%w) : (!gnn.vtensor<?xf32>) params(tensor<?x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x4xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
    %r = gnn.tanh %t : tensor<4xf32>
    gnn.yield %r : tensor<4xf32>
  }
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %p = gnn.apply_edge %g (%s, %type) params(%o) : (!gnn.etensor<4xf32>, !gnn.etensor<i32>) params(tensor<3x4x4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%r: tensor<4xf32>, %ty: tensor<i32>, %ov: tensor<3x4x4xf32>):
    %q = gnn.typed_linear %r, %ty, %ov : (tensor<4xf32>, tensor<i32>, tensor<3x4x4xf32>) -> tensor<4xf32>
    gnn.yield %q : tensor<4xf32>
  }
  %a = gnn.gather mean %g, %p to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %b = gnn.gather sum %g, %p to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %y = gnn.apply_vertex %g (%a, %b) params(%c) : (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>) params(tensor<8x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%av: tensor<4xf32>, %bv: tensor<4xf32>, %cv: tensor<8x?xf32>):
    %cat = gnn.concat %av, %bv : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
    %l = gnn.linear %cat, %cv : (tensor<8xf32>, tensor<8x?xf32>) -> tensor<?xf32>
    gnn.yield %l : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %y, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %y : f32, !gnn.vtensor<?xf32>
}
