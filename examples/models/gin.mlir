// GIN (Xu et al.): h' = MLP((1 + eps) h + sum_{u->v} h_u), eps a learnable
// scalar, MLP = Linear-ReLU-Linear. Two layers, F -> 16 -> C.
module {
  func.func @gin(
      %eps1: tensor<f32> {gnn.param = "conv1.eps", gnn.init = #gnn.init<zeros>},
      %w1a: tensor<?x16xf32> {gnn.param = "conv1.mlp.0.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
      %b1a: tensor<16xf32> {gnn.param = "conv1.mlp.0.bias", gnn.init = #gnn.init<zeros>},
      %w1b: tensor<16x16xf32> {gnn.param = "conv1.mlp.2.weight", gnn.init = #gnn.init<glorot>},
      %b1b: tensor<16xf32> {gnn.param = "conv1.mlp.2.bias", gnn.init = #gnn.init<zeros>},
      %eps2: tensor<f32> {gnn.param = "conv2.eps", gnn.init = #gnn.init<zeros>},
      %w2a: tensor<16x16xf32> {gnn.param = "conv2.mlp.0.weight", gnn.init = #gnn.init<glorot>},
      %b2a: tensor<16xf32> {gnn.param = "conv2.mlp.0.bias", gnn.init = #gnn.init<zeros>},
      %w2b: tensor<16x?xf32> {gnn.param = "conv2.mlp.2.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]},
      %b2b: tensor<?xf32> {gnn.param = "conv2.mlp.2.bias", gnn.init = #gnn.init<zeros>, gnn.dims = ["classes"]})
      -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
    %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
    %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>

    %s1 = gnn.scatter %g, %x from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
    %a1 = gnn.gather sum %g, %s1 to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
    %h1 = gnn.apply_vertex %g (%x, %a1) params(%eps1, %w1a, %b1a, %w1b, %b1b) : (!gnn.vtensor<?xf32>, !gnn.vtensor<?xf32>) params(tensor<f32>, tensor<?x16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> !gnn.vtensor<16xf32> {
    ^bb0(%v: tensor<?xf32>, %acc: tensor<?xf32>, %eps: tensor<f32>, %wa: tensor<?x16xf32>, %ba: tensor<16xf32>, %wb: tensor<16x16xf32>, %bb: tensor<16xf32>):
      %one = gnn.constant dense<1.000000e+00> : tensor<f32>
      %k = gnn.add %one, %eps : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %sv = gnn.mul %v, %k : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
      %z = gnn.add %sv, %acc : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      %t = gnn.linear %z, %wa : (tensor<?xf32>, tensor<?x16xf32>) -> tensor<16xf32>
      %tb = gnn.add %t, %ba : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %r = gnn.relu %tb : tensor<16xf32>
      %u = gnn.linear %r, %wb : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
      %ub = gnn.add %u, %bb : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %o = gnn.relu %ub : tensor<16xf32>
      %d = gnn.dropout %o {rate = 5.000000e-01 : f64} : tensor<16xf32>
      gnn.yield %d : tensor<16xf32>
    }

    %s2 = gnn.scatter %g, %h1 from src : !gnn.vtensor<16xf32> -> !gnn.etensor<16xf32>
    %a2 = gnn.gather sum %g, %s2 to dst : !gnn.etensor<16xf32> -> !gnn.vtensor<16xf32>
    %logits = gnn.apply_vertex %g (%h1, %a2) params(%eps2, %w2a, %b2a, %w2b, %b2b) : (!gnn.vtensor<16xf32>, !gnn.vtensor<16xf32>) params(tensor<f32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16x?xf32>, tensor<?xf32>) -> !gnn.vtensor<?xf32> {
    ^bb0(%v: tensor<16xf32>, %acc: tensor<16xf32>, %eps: tensor<f32>, %wa: tensor<16x16xf32>, %ba: tensor<16xf32>, %wb: tensor<16x?xf32>, %bb: tensor<?xf32>):
      %one = gnn.constant dense<1.000000e+00> : tensor<f32>
      %k = gnn.add %one, %eps : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %sv = gnn.mul %v, %k : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
      %z = gnn.add %sv, %acc : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %t = gnn.linear %z, %wa : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
      %tb = gnn.add %t, %ba : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %r = gnn.relu %tb : tensor<16xf32>
      %u = gnn.linear %r, %wb : (tensor<16xf32>, tensor<16x?xf32>) -> tensor<?xf32>
      %ub = gnn.add %u, %bb : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      gnn.yield %ub : tensor<?xf32>
    }

    %loss = gnn.softmax_cross_entropy %logits, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %loss, %logits : f32, !gnn.vtensor<?xf32>
  }
}
