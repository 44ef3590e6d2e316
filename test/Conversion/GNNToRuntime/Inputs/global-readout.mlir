// A model whose logits depend on every vertex: the features' column sums
// (gnn.sum_rows) are added to each vertex's row before the layer.
func.func @readout(%w: tensor<?x?xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %sum = gnn.sum_rows %x : !gnn.vtensor<?xf32> -> tensor<?xf32>
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  %a = gnn.gather sum %g, %s to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
  %o = gnn.apply_vertex %g (%a) params(%sum, %w) : (!gnn.vtensor<?xf32>) params(tensor<?xf32>, tensor<?x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<?xf32>, %c: tensor<?xf32>, %wv: tensor<?x?xf32>):
    %t = gnn.add %v, %c : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    %l = gnn.linear %t, %wv : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?xf32>
    gnn.yield %l : tensor<?xf32>
  }
  %y = gnn.input %g "labels" : !gnn.vtensor<i64>
  %m = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %y, %m : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<?xf32>
}
