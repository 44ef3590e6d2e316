// An edge stage (tanh of the source's row) read by a mean, a max and a sum
// gather: one compiled kernel each, three readers of the same rows.
func.func @tanh_mean_max_sum(%w: tensor<?x4xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
              %c: tensor<12x?xf32> {gnn.param = "c", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %h = gnn.apply_vertex %g (%x) params(%w) : (!gnn.vtensor<?xf32>) params(tensor<?x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x4xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  %s = gnn.scatter %g, %h from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %p = gnn.apply_edge %g (%s) : (!gnn.etensor<4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%r: tensor<4xf32>):
    %q = gnn.tanh %r : tensor<4xf32>
    gnn.yield %q : tensor<4xf32>
  }
  %a = gnn.gather mean %g, %p to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %m = gnn.gather max %g, %p to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %b = gnn.gather sum %g, %p to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  %y = gnn.apply_vertex %g (%a, %m, %b) params(%c) : (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>) params(tensor<12x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%av: tensor<4xf32>, %mv: tensor<4xf32>, %bv: tensor<4xf32>, %cv: tensor<12x?xf32>):
    %cat = gnn.concat %av, %mv, %bv : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<12xf32>
    %l = gnn.linear %cat, %cv : (tensor<12xf32>, tensor<12x?xf32>) -> tensor<?xf32>
    gnn.yield %l : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %y, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %y : f32, !gnn.vtensor<?xf32>
}
