// RUN: gnn-opt %s -split-input-file --convert-gnn-to-runtime -verify-diagnostics

// Every error --convert-gnn-to-runtime reports, one split each (the fused
// gathers' in invalid-fused.mlir, the meta file's in invalid-meta.test).

// expected-error @+1 {{expects @gnn_train_step and @gnn_eval; run --gnn-autodiff first}}
module {
}

// -----

module {
  // expected-error @+1 {{'func.func' op must return the loss (f32) and the logits (a vertex tensor) first, but its type is '() -> ()'}}
  func.func @gnn_train_step() {
    return
  }
  func.func @gnn_eval() { return }
}

// -----

module {
  // expected-error @+1 {{'func.func' op has argument #1 of type '!gnn.vtensor<i1>'; the lowering takes only parameters (ranked f32 tensors)}}
  func.func @gnn_train_step(%w: tensor<2x2xf32>, %m: !gnn.vtensor<i1>) -> (f32, !gnn.vtensor<2xf32>) {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<2xf32>
    %l = gnn.input %g "labels" : !gnn.vtensor<i64>
    %s = gnn.softmax_cross_entropy %x, %l, %m : !gnn.vtensor<2xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %s, %x : f32, !gnn.vtensor<2xf32>
  }
  func.func @gnn_eval() { return }
}

// -----

module {
  func.func @gnn_train_step() -> (f32, !gnn.vtensor<2xf32>) {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<2xf32>
    %l = gnn.input %g "labels" : !gnn.vtensor<i64>
    %m = gnn.input %g "train_mask" : !gnn.vtensor<i1>
    // expected-error @+1 {{'gnn.accuracy' op is not lowered to the runtime yet}}
    %a = gnn.accuracy %x, %l, %m : !gnn.vtensor<2xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %a, %x : f32, !gnn.vtensor<2xf32>
  }
  func.func @gnn_eval() { return }
}

// -----

// The loss reads the split from the dataset's mask inputs.
module {
  func.func @gnn_train_step() -> (f32, !gnn.vtensor<2xf32>) {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<2xf32>
    %l = gnn.input %g "labels" : !gnn.vtensor<i64>
    %m0 = gnn.input %g "train_mask" : !gnn.vtensor<i1>
    %m = gnn.apply_vertex %g(%m0) : (!gnn.vtensor<i1>) -> !gnn.vtensor<i1> {
    ^bb0(%v: tensor<i1>):
      gnn.yield %v : tensor<i1>
    }
    // expected-error @+1 {{'gnn.softmax_cross_entropy' op needs the dataset's labels and a split mask (train_mask, val_mask, test_mask) as operands}}
    %s = gnn.softmax_cross_entropy %x, %l, %m : !gnn.vtensor<2xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %s, %x : f32, !gnn.vtensor<2xf32>
  }
  func.func @gnn_eval() { return }
}

// -----

module {
  func.func @gnn_train_step() -> (f32, !gnn.vtensor<2xf32>) {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<2xf32>
    %l = gnn.input %g "labels" : !gnn.vtensor<i64>
    %t = gnn.input %g "train_mask" : !gnn.vtensor<i1>
    %m = gnn.apply_vertex %g(%t) : (!gnn.vtensor<i1>) -> !gnn.vtensor<i1> {
    ^bb0(%v: tensor<i1>):
      gnn.yield %v : tensor<i1>
    }
    // expected-error @+1 {{'gnn.softmax_cross_entropy_grad' op needs a split mask (train_mask, val_mask, test_mask) as operand}}
    %d = gnn.softmax_cross_entropy_grad %x, %l, %m : !gnn.vtensor<2xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> !gnn.vtensor<2xf32>
    %s = gnn.softmax_cross_entropy %x, %l, %t : !gnn.vtensor<2xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %s, %d : f32, !gnn.vtensor<2xf32>
  }
  func.func @gnn_eval() { return }
}

// -----

module {
  func.func @gnn_train_step(%w: tensor<2x2xf32>) -> (f32, !gnn.vtensor<2xf32>, tensor<2x2xf32>) {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<2xf32>
    %l = gnn.input %g "labels" : !gnn.vtensor<i64>
    %m = gnn.input %g "train_mask" : !gnn.vtensor<i1>
    %s = gnn.softmax_cross_entropy %x, %l, %m : !gnn.vtensor<2xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    %o = gnn.outer_sum %x, %x : !gnn.vtensor<2xf32>, !gnn.vtensor<2xf32> -> tensor<2x2xf32>
    // expected-error @+1 {{'gnn.optimizer_update' op updates a value that is not a parameter argument}}
    %u = gnn.optimizer_update "w" %o, %o : tensor<2x2xf32>
    return %s, %x, %u : f32, !gnn.vtensor<2xf32>, tensor<2x2xf32>
  }
  func.func @gnn_eval() { return }
}

// -----

// The updates end the step: they wait for the gradients' sum over the
// processes (gnnrtSumGradients), so nothing may follow them but the return.
module {
  func.func @gnn_train_step(%w: tensor<2x2xf32>) -> (f32, !gnn.vtensor<2xf32>, tensor<2x2xf32>) {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<2xf32>
    %l = gnn.input %g "labels" : !gnn.vtensor<i64>
    %m = gnn.input %g "train_mask" : !gnn.vtensor<i1>
    %s = gnn.softmax_cross_entropy %x, %l, %m : !gnn.vtensor<2xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    %o = gnn.outer_sum %x, %x : !gnn.vtensor<2xf32>, !gnn.vtensor<2xf32> -> tensor<2x2xf32>
    // expected-error @+1 {{'gnn.optimizer_update' op is followed by 'gnn.outer_sum': the updates must end the training step}}
    %u = gnn.optimizer_update "w" %w, %o : tensor<2x2xf32>
    %o2 = gnn.outer_sum %x, %x : !gnn.vtensor<2xf32>, !gnn.vtensor<2xf32> -> tensor<2x2xf32>
    return %s, %x, %u : f32, !gnn.vtensor<2xf32>, tensor<2x2xf32>
  }
  func.func @gnn_eval() { return }
}

// -----

// edge_select is lowered only inside a fused_gather (--gnn-fuse-sag).
module {
  func.func @gnn_train_step() -> (f32, !gnn.vtensor<2xf32>) {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<2xf32>
    %t = gnn.input %g "etype" : !gnn.etensor<2xi32>
    %e = gnn.scatter %g, %x from src : !gnn.vtensor<2xf32> -> !gnn.etensor<2xf32>
    %y = gnn.apply_edge %g(%t, %e) : (!gnn.etensor<2xi32>, !gnn.etensor<2xf32>) -> !gnn.etensor<2xf32> {
    ^bb0(%a: tensor<2xi32>, %v: tensor<2xf32>):
      // expected-error @+1 {{'gnn.edge_select' op is not lowered to the runtime in a stage body}}
      %r = gnn.edge_select %a, %v : tensor<2xi32>, tensor<2xf32>
      gnn.yield %r : tensor<2xf32>
    }
    %h = gnn.gather sum %g, %y to dst : !gnn.etensor<2xf32> -> !gnn.vtensor<2xf32>
    %l = gnn.input %g "labels" : !gnn.vtensor<i64>
    %m = gnn.input %g "train_mask" : !gnn.vtensor<i1>
    %s = gnn.softmax_cross_entropy %h, %l, %m : !gnn.vtensor<2xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %s, %h : f32, !gnn.vtensor<2xf32>
  }
  func.func @gnn_eval() { return }
}

// -----

module {
  func.func @gnn_train_step() -> (f32, !gnn.vtensor<2xf32>) {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<2xf32>
    %h = gnn.apply_vertex %g(%x) : (!gnn.vtensor<2xf32>) -> !gnn.vtensor<2xf32> {
    ^bb0(%v: tensor<2xf32>):
      // expected-error @+1 {{'gnn.broadcast_heads' op needs a static head width to be lowered}}
      %r = gnn.broadcast_heads %v : tensor<2xf32> -> tensor<2x?xf32>
      %d = gnn.row_dot %r, %r : tensor<2x?xf32> -> tensor<2xf32>
      gnn.yield %d : tensor<2xf32>
    }
    %l = gnn.input %g "labels" : !gnn.vtensor<i64>
    %m = gnn.input %g "train_mask" : !gnn.vtensor<i1>
    %s = gnn.softmax_cross_entropy %h, %l, %m : !gnn.vtensor<2xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %s, %h : f32, !gnn.vtensor<2xf32>
  }
  func.func @gnn_eval() { return }
}
