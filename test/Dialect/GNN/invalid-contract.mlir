// RUN: gnn-opt %s -split-input-file -verify-diagnostics --allow-unregistered-dialect

// The program contract: parameter argument attributes and the model function.

// expected-error @+1 {{'gnn.param' of argument #0 must be a string}}
func.func private @param_not_string(tensor<2xf32> {gnn.param = 3 : i32})

// -----

// expected-error @+1 {{argument #0 has invalid parameter name 'conv1..weight' (expected a dotted identifier like 'conv1.weight')}}
func.func private @bad_param_name(tensor<2xf32> {gnn.param = "conv1..weight"})

// -----

// expected-error @+1 {{parameter 'w' must be a ranked f32 tensor but has type 'tensor<2xi32>'}}
func.func private @int_param(tensor<2xi32> {gnn.param = "w"})

// -----

// expected-error @+1 {{'gnn.init' of argument #0 must be a #gnn.init attribute but got "glorot"}}
func.func private @init_string(tensor<2xf32> {gnn.init = "glorot"})

// -----

// expected-error @+1 {{'gnn.dims' of argument #0 must be an array of strings on a ranked tensor argument}}
func.func private @dims_not_array(tensor<?xf32> {gnn.dims = "features"})

// -----

// expected-error @+1 {{'gnn.dims' of argument #0 has 1 entries but the argument has rank 2}}
func.func private @dims_count(tensor<?x4xf32> {gnn.dims = ["features"]})

// -----

// expected-error @+1 {{'gnn.dims' of argument #0 must be an array of strings}}
func.func private @dims_entry(tensor<?xf32> {gnn.dims = [1]})

// -----

// expected-error @+1 {{'gnn.dims' of argument #0 binds static dimension 1 to 'classes' (only '?' dimensions are bound; use "")}}
func.func private @dims_static(tensor<?x4xf32> {gnn.dims = ["features", "classes"]})

// -----

// expected-error @+1 {{'gnn.dims' of argument #0 binds dynamic dimension 0 to 'hidden' (expected 'features' or 'classes')}}
func.func private @dims_unknown(tensor<?xf32> {gnn.dims = ["hidden"]})

// -----

// expected-error @+1 {{unknown gnn argument attribute 'gnn.weight'}}
func.func private @unknown_arg_attr(tensor<2xf32> {gnn.weight})

// -----

// expected-error @+1 {{unknown gnn attribute 'gnn.modell'}}
func.func private @unknown_attr() attributes {gnn.modell}

// -----

// expected-error @+1 {{'gnn.model' is only valid on a function}}
module attributes {gnn.model} {
}

// -----

// expected-error @+1 {{'gnn.model' must be a unit attribute}}
func.func private @model_not_unit() attributes {gnn.model = 1 : i32}

// -----

// expected-error @+1 {{model function must have a body}}
func.func private @model_external() -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model}

// -----

// expected-error @+1 {{model function must return (f32 loss, logits) but returns 1 values}}
func.func @one_result(%l: f32) -> f32 attributes {gnn.model} {
  return %l : f32
}

// -----

// expected-error @+1 {{model result #0 (the loss) must be f32 but is 'f64'}}
func.func @loss_f64(%l: f64, %x: !gnn.vtensor<?xf32>) -> (f64, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  return %l, %x : f64, !gnn.vtensor<?xf32>
}

// -----

// expected-error @+1 {{model result #1 (the logits) must be a vertex tensor of f32 vectors but is '!gnn.etensor<?xf32>'}}
func.func @logits_edge(%l: f32, %x: !gnn.etensor<?xf32>) -> (f32, !gnn.etensor<?xf32>) attributes {gnn.model} {
  return %l, %x : f32, !gnn.etensor<?xf32>
}

// -----

// expected-error @+1 {{model argument #0 must carry 'gnn.param' (every argument of a model is a learnable parameter)}}
func.func @unnamed_arg(%w: tensor<2xf32>, %l: f32, %x: !gnn.vtensor<?xf32>) -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  return %l, %x : f32, !gnn.vtensor<?xf32>
}

// -----

// expected-error @+1 {{parameter 'w' must carry 'gnn.init'}}
func.func @no_init(%w: tensor<2xf32> {gnn.param = "w"}) -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %l = "test.loss"() : () -> f32
  return %l, %x : f32, !gnn.vtensor<?xf32>
}

// -----

// expected-error @+1 {{parameter name 'w' is used twice}}
func.func @duplicate(%a: tensor<2xf32> {gnn.param = "w", gnn.init = #gnn.init<zeros>},
                     %b: tensor<2xf32> {gnn.param = "w", gnn.init = #gnn.init<zeros>}) -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %l = "test.loss"() : () -> f32
  return %l, %x : f32, !gnn.vtensor<?xf32>
}

// -----

// expected-error @+1 {{parameter 'w' of type 'tensor<?x4xf32>' has dynamic dimensions and needs 'gnn.dims' to bind them}}
func.func @unbound(%a: tensor<?x4xf32> {gnn.param = "w", gnn.init = #gnn.init<zeros>}) -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %l = "test.loss"() : () -> f32
  return %l, %x : f32, !gnn.vtensor<?xf32>
}

// -----

// expected-error @+1 {{model function must read the graph exactly once with 'gnn.graph' (and at most once with 'gnn.graph whole') but reads it 0 times}}
func.func @no_graph() -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %l = "test.loss"() : () -> f32
  %x = "test.logits"() : () -> !gnn.vtensor<?xf32>
  return %l, %x : f32, !gnn.vtensor<?xf32>
}

// -----

// A parameter name becomes a file name (<name>.npy of --save-params).
// expected-error @+1 {{parameter name of argument #0 has 201 characters; at most 200 (--save-params writes <name>.npy)}}
func.func private @long_name(tensor<2xf32> {gnn.param = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"})

// -----

// Sizes that would overflow once multiplied out are refused up front.
// expected-error @+1 {{parameter 'w' of type 'tensor<4611686018427387904x4xf32>' is too large: its static dimensions must be positive and hold at most 17179869184 elements (64 GiB of f32)}}
func.func private @huge_param(tensor<4611686018427387904x4xf32> {gnn.param = "w"})

// -----

// expected-error @+1 {{parameter 'w' of type 'tensor<?x262144x65537xf32>' is too large}}
func.func private @huge_param_product(tensor<?x262144x65537xf32> {gnn.param = "w"})

// -----

// A weight whose input dimension is bound to the classes, multiplied by the
// features: sized with C at run time where the rows have F (it failed in
// gnnrtGemm with an internal buffer message, or trained the wrong shape).
func.func @dims_swapped(%w: tensor<?x16xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["classes", ""]},
                        %w2: tensor<16x?xf32> {gnn.param = "w2", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  %a = gnn.gather sum %g, %s to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
  %h = gnn.apply_vertex %g(%a) params(%w, %w2) : (!gnn.vtensor<?xf32>) params(tensor<?x16xf32>, tensor<16x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x16xf32>, %w2v: tensor<16x?xf32>):
    // expected-error @+1 {{'gnn.linear' op multiplies rows whose width is bound to 'features' by a weight whose input dimension is bound to 'classes' (check the parameter's gnn.dims)}}
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x16xf32>) -> tensor<16xf32>
    %o = gnn.linear %t, %w2v : (tensor<16xf32>, tensor<16x?xf32>) -> tensor<?xf32>
    gnn.yield %o : tensor<?xf32>
  }
  %l = gnn.input %g "labels" : !gnn.vtensor<i64>
  %m = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %h, %l, %m : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %h : f32, !gnn.vtensor<?xf32>
}

// -----

// Logits as wide as the features.
func.func @logits_features(%w: tensor<?x?xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", "features"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %h = gnn.apply_vertex %g(%x) params(%w) : (!gnn.vtensor<?xf32>) params(tensor<?x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x?xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?xf32>
    gnn.yield %t : tensor<?xf32>
  }
  %l = gnn.input %g "labels" : !gnn.vtensor<i64>
  %m = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  // expected-error @+1 {{'gnn.softmax_cross_entropy' op has logits whose width is bound to 'features', not 'classes'}}
  %loss = gnn.softmax_cross_entropy %h, %l, %m : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %h : f32, !gnn.vtensor<?xf32>
}

// -----

// A stage's body without its gnn.yield, in a model: the binding check runs
// before the nested ops' verifiers and left such a body to them (it read the
// missing terminator and crashed).
func.func @stage_no_yield(%w: tensor<?x4xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<?xf32> -> !gnn.etensor<?xf32>
  // expected-error @+1 {{'gnn.apply_edge' op expects a non-empty block}}
  %p = gnn.apply_edge %g (%s) : (!gnn.etensor<?xf32>) -> !gnn.etensor<?xf32> {
  ^bb0(%src: tensor<?xf32>):
  }
  %a = gnn.gather sum %g, %p to dst : !gnn.etensor<?xf32> -> !gnn.vtensor<?xf32>
  %l = gnn.input %g "labels" : !gnn.vtensor<i64>
  %m = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %a, %l, %m : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %a : f32, !gnn.vtensor<?xf32>
}

// -----

func.func @stage_ends_without_yield(%w: tensor<?x4xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]})
    -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %h = gnn.apply_vertex %g(%x) params(%w) : (!gnn.vtensor<?xf32>) params(tensor<?x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x4xf32>):
    // expected-error @+1 {{block with no terminator, has %1 = "gnn.linear"}}
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
  }
  %l = gnn.input %g "labels" : !gnn.vtensor<i64>
  %m = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %h, %l, %m : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %h : f32, !gnn.vtensor<4xf32>
}
