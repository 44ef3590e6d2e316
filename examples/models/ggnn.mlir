// GG-NN (Li et al.; NeuGraph Fig. 12): messages A(type) h_src with one weight
// per edge type (typed linear), summed, then a GRU cell on each vertex
// (PyTorch GRUCell: input = the message sum, hidden = the vertex state).
// Embedding F -> 16, two propagation steps sharing their weights, 16 -> C.
module {
  func.func @ggnn(
      %w0: tensor<?x16xf32> {gnn.param = "embed.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
      %b0: tensor<16xf32> {gnn.param = "embed.bias", gnn.init = #gnn.init<zeros>},
      %A: tensor<3x16x16xf32> {gnn.param = "prop.edge_weight", gnn.init = #gnn.init<glorot>},
      %w_ir: tensor<16x16xf32> {gnn.param = "gru.w_ir", gnn.init = #gnn.init<glorot>},
      %w_iz: tensor<16x16xf32> {gnn.param = "gru.w_iz", gnn.init = #gnn.init<glorot>},
      %w_in: tensor<16x16xf32> {gnn.param = "gru.w_in", gnn.init = #gnn.init<glorot>},
      %w_hr: tensor<16x16xf32> {gnn.param = "gru.w_hr", gnn.init = #gnn.init<glorot>},
      %w_hz: tensor<16x16xf32> {gnn.param = "gru.w_hz", gnn.init = #gnn.init<glorot>},
      %w_hn: tensor<16x16xf32> {gnn.param = "gru.w_hn", gnn.init = #gnn.init<glorot>},
      %b_r: tensor<16xf32> {gnn.param = "gru.b_r", gnn.init = #gnn.init<zeros>},
      %b_z: tensor<16xf32> {gnn.param = "gru.b_z", gnn.init = #gnn.init<zeros>},
      %b_in: tensor<16xf32> {gnn.param = "gru.b_in", gnn.init = #gnn.init<zeros>},
      %b_hn: tensor<16xf32> {gnn.param = "gru.b_hn", gnn.init = #gnn.init<zeros>},
      %wo: tensor<16x?xf32> {gnn.param = "out.weight", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]},
      %bo: tensor<?xf32> {gnn.param = "out.bias", gnn.init = #gnn.init<zeros>, gnn.dims = ["classes"]})
      -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
    %etype = gnn.input %g "type" : !gnn.etensor<i32>
    %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
    %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>

    %h0 = gnn.apply_vertex %g (%x) params(%w0, %b0) : (!gnn.vtensor<?xf32>) params(tensor<?x16xf32>, tensor<16xf32>) -> !gnn.vtensor<16xf32> {
    ^bb0(%v: tensor<?xf32>, %w: tensor<?x16xf32>, %b: tensor<16xf32>):
      %t = gnn.linear %v, %w : (tensor<?xf32>, tensor<?x16xf32>) -> tensor<16xf32>
      %tb = gnn.add %t, %b : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %r = gnn.tanh %tb : tensor<16xf32>
      gnn.yield %r : tensor<16xf32>
    }

    // Propagation step 1.
    %s1 = gnn.scatter %g, %h0 from src : !gnn.vtensor<16xf32> -> !gnn.etensor<16xf32>
    %m1 = gnn.apply_edge %g (%s1, %etype) params(%A) : (!gnn.etensor<16xf32>, !gnn.etensor<i32>) params(tensor<3x16x16xf32>) -> !gnn.etensor<16xf32> {
    ^bb0(%src: tensor<16xf32>, %t: tensor<i32>, %a: tensor<3x16x16xf32>):
      %r = gnn.typed_linear %src, %t, %a : (tensor<16xf32>, tensor<i32>, tensor<3x16x16xf32>) -> tensor<16xf32>
      gnn.yield %r : tensor<16xf32>
    }
    %a1 = gnn.gather sum %g, %m1 to dst : !gnn.etensor<16xf32> -> !gnn.vtensor<16xf32>
    %h1 = gnn.apply_vertex %g (%h0, %a1) params(%w_ir, %w_iz, %w_in, %w_hr, %w_hz, %w_hn, %b_r, %b_z, %b_in, %b_hn) : (!gnn.vtensor<16xf32>, !gnn.vtensor<16xf32>) params(tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> !gnn.vtensor<16xf32> {
    ^bb0(%h: tensor<16xf32>, %m: tensor<16xf32>, %w_ir_: tensor<16x16xf32>, %w_iz_: tensor<16x16xf32>, %w_in_: tensor<16x16xf32>, %w_hr_: tensor<16x16xf32>, %w_hz_: tensor<16x16xf32>, %w_hn_: tensor<16x16xf32>, %b_r_: tensor<16xf32>, %b_z_: tensor<16xf32>, %b_in_: tensor<16xf32>, %b_hn_: tensor<16xf32>):
      %ir = gnn.linear %m, %w_ir_ : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
      %hr = gnn.linear %h, %w_hr_ : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
      %r0 = gnn.add %ir, %hr : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %r1 = gnn.add %r0, %b_r_ : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %r = gnn.sigmoid %r1 : tensor<16xf32>
      %iz = gnn.linear %m, %w_iz_ : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
      %hz = gnn.linear %h, %w_hz_ : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
      %z0 = gnn.add %iz, %hz : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %z1 = gnn.add %z0, %b_z_ : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %z = gnn.sigmoid %z1 : tensor<16xf32>
      %in = gnn.linear %m, %w_in_ : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
      %in1 = gnn.add %in, %b_in_ : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %hn = gnn.linear %h, %w_hn_ : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
      %hn1 = gnn.add %hn, %b_hn_ : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %rn = gnn.mul %r, %hn1 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %n0 = gnn.add %in1, %rn : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %n = gnn.tanh %n0 : tensor<16xf32>
      %one = gnn.constant dense<1.000000e+00> : tensor<1xf32>
      %omz = gnn.sub %one, %z : (tensor<1xf32>, tensor<16xf32>) -> tensor<16xf32>
      %keep = gnn.mul %omz, %n : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %carry = gnn.mul %z, %h : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %hnew = gnn.add %keep, %carry : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      gnn.yield %hnew : tensor<16xf32>
    }

    // Propagation step 2.
    %s2 = gnn.scatter %g, %h1 from src : !gnn.vtensor<16xf32> -> !gnn.etensor<16xf32>
    %m2 = gnn.apply_edge %g (%s2, %etype) params(%A) : (!gnn.etensor<16xf32>, !gnn.etensor<i32>) params(tensor<3x16x16xf32>) -> !gnn.etensor<16xf32> {
    ^bb0(%src: tensor<16xf32>, %t: tensor<i32>, %a: tensor<3x16x16xf32>):
      %r = gnn.typed_linear %src, %t, %a : (tensor<16xf32>, tensor<i32>, tensor<3x16x16xf32>) -> tensor<16xf32>
      gnn.yield %r : tensor<16xf32>
    }
    %a2 = gnn.gather sum %g, %m2 to dst : !gnn.etensor<16xf32> -> !gnn.vtensor<16xf32>
    %h2 = gnn.apply_vertex %g (%h1, %a2) params(%w_ir, %w_iz, %w_in, %w_hr, %w_hz, %w_hn, %b_r, %b_z, %b_in, %b_hn) : (!gnn.vtensor<16xf32>, !gnn.vtensor<16xf32>) params(tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> !gnn.vtensor<16xf32> {
    ^bb0(%h: tensor<16xf32>, %m: tensor<16xf32>, %w_ir_: tensor<16x16xf32>, %w_iz_: tensor<16x16xf32>, %w_in_: tensor<16x16xf32>, %w_hr_: tensor<16x16xf32>, %w_hz_: tensor<16x16xf32>, %w_hn_: tensor<16x16xf32>, %b_r_: tensor<16xf32>, %b_z_: tensor<16xf32>, %b_in_: tensor<16xf32>, %b_hn_: tensor<16xf32>):
      %ir = gnn.linear %m, %w_ir_ : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
      %hr = gnn.linear %h, %w_hr_ : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
      %r0 = gnn.add %ir, %hr : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %r1 = gnn.add %r0, %b_r_ : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %r = gnn.sigmoid %r1 : tensor<16xf32>
      %iz = gnn.linear %m, %w_iz_ : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
      %hz = gnn.linear %h, %w_hz_ : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
      %z0 = gnn.add %iz, %hz : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %z1 = gnn.add %z0, %b_z_ : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %z = gnn.sigmoid %z1 : tensor<16xf32>
      %in = gnn.linear %m, %w_in_ : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
      %in1 = gnn.add %in, %b_in_ : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %hn = gnn.linear %h, %w_hn_ : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
      %hn1 = gnn.add %hn, %b_hn_ : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %rn = gnn.mul %r, %hn1 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %n0 = gnn.add %in1, %rn : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %n = gnn.tanh %n0 : tensor<16xf32>
      %one = gnn.constant dense<1.000000e+00> : tensor<1xf32>
      %omz = gnn.sub %one, %z : (tensor<1xf32>, tensor<16xf32>) -> tensor<16xf32>
      %keep = gnn.mul %omz, %n : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %carry = gnn.mul %z, %h : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %hnew = gnn.add %keep, %carry : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      gnn.yield %hnew : tensor<16xf32>
    }

    %logits = gnn.apply_vertex %g (%h2) params(%wo, %bo) : (!gnn.vtensor<16xf32>) params(tensor<16x?xf32>, tensor<?xf32>) -> !gnn.vtensor<?xf32> {
    ^bb0(%v: tensor<16xf32>, %w: tensor<16x?xf32>, %b: tensor<?xf32>):
      %t = gnn.linear %v, %w : (tensor<16xf32>, tensor<16x?xf32>) -> tensor<?xf32>
      %tb = gnn.add %t, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      gnn.yield %tb : tensor<?xf32>
    }

    %loss = gnn.softmax_cross_entropy %logits, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %loss, %logits : f32, !gnn.vtensor<?xf32>
  }
}
