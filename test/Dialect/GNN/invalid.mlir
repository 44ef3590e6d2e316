// RUN: gnn-opt %s -split-input-file -verify-diagnostics --allow-unregistered-dialect

//===----------------------------------------------------------------------===//
// Data access
//===----------------------------------------------------------------------===//

func.func @input_empty(%g: !gnn.graph) {
  // expected-error @+1 {{'gnn.input' op input name must not be empty}}
  %0 = gnn.input %g "" : !gnn.etensor<f32>
  return
}

// -----

func.func @input_edge_data_vertex_type(%g: !gnn.graph) {
  // expected-error @+1 {{'gnn.input' op input 'weight' is not a vertex input (features, labels, train_mask, val_mask, test_mask) so it is edge data and needs an edge tensor type, but got '!gnn.vtensor<1xf32>'}}
  %0 = gnn.input %g "weight" : !gnn.vtensor<1xf32>
  return
}

// -----

func.func @input_edge_name(%g: !gnn.graph) {
  // expected-error @+1 {{'gnn.input' op edge data name 'my weight' must contain only letters, digits and '_'}}
  %0 = gnn.input %g "my weight" : !gnn.etensor<1xf32>
  return
}

// -----

func.func @input_edge_i64(%g: !gnn.graph) {
  // expected-error @+1 {{'gnn.input' op edge data 'type' must have f32 or i32 elements but got 'i64'}}
  %0 = gnn.input %g "type" : !gnn.etensor<i64>
  return
}

// -----

func.func @input_features_on_edges(%g: !gnn.graph) {
  // expected-error @+1 {{'gnn.input' op input 'features' needs a vertex tensor type but got '!gnn.etensor<?xf32>'}}
  %0 = gnn.input %g "features" : !gnn.etensor<?xf32>
  return
}

// -----

func.func @input_features_rank2(%g: !gnn.graph) {
  // expected-error @+1 {{'gnn.input' op input 'features' must be '!gnn.vtensor<Fxf32>' but got '!gnn.vtensor<2x?xf32>'}}
  %0 = gnn.input %g "features" : !gnn.vtensor<2x?xf32>
  return
}

// -----

func.func @input_labels_i32(%g: !gnn.graph) {
  // expected-error @+1 {{'gnn.input' op input 'labels' must be '!gnn.vtensor<i64>' but got '!gnn.vtensor<i32>'}}
  %0 = gnn.input %g "labels" : !gnn.vtensor<i32>
  return
}

// -----

func.func @input_mask_f32(%g: !gnn.graph) {
  // expected-error @+1 {{'gnn.input' op input 'train_mask' must be '!gnn.vtensor<i1>' but got '!gnn.vtensor<1xf32>'}}
  %0 = gnn.input %g "train_mask" : !gnn.vtensor<1xf32>
  return
}

// -----

func.func @degree_width(%g: !gnn.graph) {
  // expected-error @+1 {{'gnn.degree' op result must be '!gnn.vtensor<1xf32>' but got '!gnn.vtensor<2xf32>'}}
  %0 = gnn.degree %g in : !gnn.vtensor<2xf32>
  return
}

//===----------------------------------------------------------------------===//
// Scatter / Gather
//===----------------------------------------------------------------------===//

// -----

func.func @scatter_width(%g: !gnn.graph, %v: !gnn.vtensor<8xf32>) {
  // expected-error @+1 {{'gnn.scatter' op result rows 'tensor<4xf32>' must equal the input rows 'tensor<8xf32>'}}
  %0 = gnn.scatter %g, %v from src : !gnn.vtensor<8xf32> -> !gnn.etensor<4xf32>
  return
}

// -----

func.func @scatter_to_vertex(%g: !gnn.graph, %v: !gnn.vtensor<8xf32>) {
  // expected-error @+1 {{'gnn.scatter' op result #0 must be a tensor with one row per edge, but got '!gnn.vtensor<8xf32>'}}
  %0 = "gnn.scatter"(%g, %v) {side = 0 : i32} : (!gnn.graph, !gnn.vtensor<8xf32>) -> !gnn.vtensor<8xf32>
  return
}

// -----

func.func @gather_from_vertex(%g: !gnn.graph, %v: !gnn.vtensor<8xf32>) {
  // expected-error @+1 {{'gnn.gather' op operand #1 must be a tensor with one row per edge, but got '!gnn.vtensor<8xf32>'}}
  %0 = "gnn.gather"(%g, %v) {acc = 0 : i32, side = 1 : i32} : (!gnn.graph, !gnn.vtensor<8xf32>) -> !gnn.vtensor<8xf32>
  return
}

// -----

func.func @gather_width(%g: !gnn.graph, %e: !gnn.etensor<8xf32>) {
  // expected-error @+1 {{'gnn.gather' op result rows 'tensor<?xf32>' must equal the input rows 'tensor<8xf32>'}}
  %0 = gnn.gather sum %g, %e to dst : !gnn.etensor<8xf32> -> !gnn.vtensor<?xf32>
  return
}

// -----

func.func @gather_int(%g: !gnn.graph, %e: !gnn.etensor<i32>) {
  // expected-error @+1 {{'gnn.gather' op 'max' gathers f32 rows but the input has 'i32' elements}}
  %0 = gnn.gather max %g, %e to dst : !gnn.etensor<i32> -> !gnn.vtensor<i32>
  return
}

//===----------------------------------------------------------------------===//
// ApplyEdge / ApplyVertex
//===----------------------------------------------------------------------===//

// -----

func.func @stage_no_result(%g: !gnn.graph, %e: !gnn.etensor<4xf32>) {
  // expected-error @+1 {{'gnn.apply_edge' op must produce at least one result}}
  "gnn.apply_edge"(%g, %e) <{operandSegmentSizes = array<i32: 1, 1, 0>}> ({
  ^bb0(%a: tensor<4xf32>):
    gnn.yield
  }) : (!gnn.graph, !gnn.etensor<4xf32>) -> ()
  return
}

// -----

func.func @stage_arg_count(%g: !gnn.graph, %e: !gnn.etensor<4xf32>, %w: tensor<4x4xf32>) {
  // expected-error @+1 {{'gnn.apply_edge' op body must have 2 arguments (1 rows + 1 parameters) but has 1}}
  %0 = gnn.apply_edge %g (%e) params(%w) : (!gnn.etensor<4xf32>) params(tensor<4x4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    gnn.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @stage_row_type(%g: !gnn.graph, %v: !gnn.vtensor<4xf32>) {
  // expected-error @+1 {{'gnn.apply_vertex' op body argument #0 must be the row type 'tensor<4xf32>' of input #0 ('!gnn.vtensor<4xf32>') but is 'tensor<8xf32>'}}
  %0 = gnn.apply_vertex %g (%v) : (!gnn.vtensor<4xf32>) -> !gnn.vtensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    gnn.yield %a : tensor<8xf32>
  }
  return
}

// -----

func.func @stage_param_type(%g: !gnn.graph, %v: !gnn.vtensor<4xf32>, %w: tensor<4x4xf32>) {
  // expected-error @+1 {{'gnn.apply_vertex' op body argument #1 must have the type 'tensor<4x4xf32>' of parameter #0 but is 'tensor<4x8xf32>'}}
  %0 = gnn.apply_vertex %g (%v) params(%w) : (!gnn.vtensor<4xf32>) params(tensor<4x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4x8xf32>):
    gnn.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @stage_terminator(%g: !gnn.graph, %v: !gnn.vtensor<4xf32>) {
  // expected-error @+1 {{'gnn.apply_vertex' op body must end with 'gnn.yield'}}
  %0 = gnn.apply_vertex %g (%v) : (!gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    "test.terminator"(%a) : (tensor<4xf32>) -> ()
  }
  return
}

// -----

func.func @yield_count(%g: !gnn.graph, %v: !gnn.vtensor<4xf32>) {
  %0 = gnn.apply_vertex %g (%v) : (!gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'gnn.yield' op yields 2 values but the gnn.apply_vertex has 1 results}}
    gnn.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  }
  return
}

// -----

func.func @yield_type(%g: !gnn.graph, %e: !gnn.etensor<4xf32>) {
  %0 = gnn.apply_edge %g (%e) : (!gnn.etensor<4xf32>) -> !gnn.etensor<1xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'gnn.yield' op operand #0 has type 'tensor<4xf32>' but result #0 ('!gnn.etensor<1xf32>') has rows of type 'tensor<1xf32>'}}
    gnn.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @apply_edge_on_vertices(%g: !gnn.graph, %v: !gnn.vtensor<4xf32>) {
  // expected-error @+1 {{'gnn.apply_edge' op operand #1 must be variadic of a tensor with one row per edge, but got '!gnn.vtensor<4xf32>'}}
  %0 = gnn.apply_edge %g (%v) : (!gnn.vtensor<4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    gnn.yield %a : tensor<4xf32>
  }
  return
}

// -----

// A stage reads what it cannot see: a value defined outside its region.
func.func @stage_reads_outside(%g: !gnn.graph, %v: !gnn.vtensor<4xf32>, %w: tensor<4x4xf32>) {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = gnn.apply_vertex %g (%v) : (!gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'gnn.linear' op using value defined outside the region}}
    %r = gnn.linear %a, %w : (tensor<4xf32>, tensor<4x4xf32>) -> tensor<4xf32>
    gnn.yield %r : tensor<4xf32>
  }
  return
}

// -----

func.func @row_op_outside_stage(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'gnn.relu' op expects parent op to be one of 'gnn.apply_edge, gnn.apply_vertex, gnn.fused_gather'}}
  %r = gnn.relu %a : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @yield_outside_stage(%a: tensor<4xf32>) {
  "test.region"() ({
    // expected-error @+1 {{'gnn.yield' op expects parent op to be one of 'gnn.apply_edge, gnn.apply_vertex, gnn.fused_gather'}}
    gnn.yield %a : tensor<4xf32>
  }) : () -> ()
  return
}

//===----------------------------------------------------------------------===//
// Row-level ops
//===----------------------------------------------------------------------===//

// -----

func.func @linear_weight_rank(%g: !gnn.graph, %v: !gnn.vtensor<4x8xf32>, %w: tensor<8x2xf32>) {
  %0 = gnn.apply_vertex %g (%v) params(%w) : (!gnn.vtensor<4x8xf32>) params(tensor<8x2xf32>) -> !gnn.vtensor<2xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>):
    // expected-error @+1 {{'gnn.linear' op weight 'tensor<8x2xf32>' must have more than the 2 dimensions of the input row 'tensor<4x8xf32>'}}
    %r = gnn.linear %a, %b : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<2xf32>
    gnn.yield %r : tensor<2xf32>
  }
  return
}

// -----

func.func @linear_weight_lead(%g: !gnn.graph, %v: !gnn.vtensor<4xf32>, %w: tensor<8x2xf32>) {
  %0 = gnn.apply_vertex %g (%v) params(%w) : (!gnn.vtensor<4xf32>) params(tensor<8x2xf32>) -> !gnn.vtensor<2xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<8x2xf32>):
    // expected-error @+1 {{'gnn.linear' op weight 'tensor<8x2xf32>' must start with the input row shape of 'tensor<4xf32>'}}
    %r = gnn.linear %a, %b : (tensor<4xf32>, tensor<8x2xf32>) -> tensor<2xf32>
    gnn.yield %r : tensor<2xf32>
  }
  return
}

// -----

func.func @linear_result(%g: !gnn.graph, %v: !gnn.vtensor<4xf32>, %w: tensor<4x2xf32>) {
  %0 = gnn.apply_vertex %g (%v) params(%w) : (!gnn.vtensor<4xf32>) params(tensor<4x2xf32>) -> !gnn.vtensor<3xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4x2xf32>):
    // expected-error @+1 {{'gnn.linear' op result 'tensor<3xf32>' must have the shape of the trailing weight dimensions of 'tensor<4x2xf32>'}}
    %r = gnn.linear %a, %b : (tensor<4xf32>, tensor<4x2xf32>) -> tensor<3xf32>
    gnn.yield %r : tensor<3xf32>
  }
  return
}

// -----

func.func @typed_linear_rank(%g: !gnn.graph, %e: !gnn.etensor<4xf32>, %t: !gnn.etensor<i32>, %w: tensor<4x4xf32>) {
  %0 = gnn.apply_edge %g (%e, %t) params(%w) : (!gnn.etensor<4xf32>, !gnn.etensor<i32>) params(tensor<4x4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %ty: tensor<i32>, %b: tensor<4x4xf32>):
    // expected-error @+1 {{'gnn.typed_linear' op weight 'tensor<4x4xf32>' must be [types, row shape..., result shape...] for the input row 'tensor<4xf32>'}}
    %r = gnn.typed_linear %a, %ty, %b : (tensor<4xf32>, tensor<i32>, tensor<4x4xf32>) -> tensor<4xf32>
    gnn.yield %r : tensor<4xf32>
  }
  return
}

// -----

func.func @typed_linear_lead(%g: !gnn.graph, %e: !gnn.etensor<4xf32>, %t: !gnn.etensor<i32>, %w: tensor<3x8x4xf32>) {
  %0 = gnn.apply_edge %g (%e, %t) params(%w) : (!gnn.etensor<4xf32>, !gnn.etensor<i32>) params(tensor<3x8x4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %ty: tensor<i32>, %b: tensor<3x8x4xf32>):
    // expected-error @+1 {{'gnn.typed_linear' op weight 'tensor<3x8x4xf32>' must continue its type dimension with the input row shape of 'tensor<4xf32>'}}
    %r = gnn.typed_linear %a, %ty, %b : (tensor<4xf32>, tensor<i32>, tensor<3x8x4xf32>) -> tensor<4xf32>
    gnn.yield %r : tensor<4xf32>
  }
  return
}

// -----

func.func @typed_linear_result(%g: !gnn.graph, %e: !gnn.etensor<4xf32>, %t: !gnn.etensor<i32>, %w: tensor<3x4x4xf32>) {
  %0 = gnn.apply_edge %g (%e, %t) params(%w) : (!gnn.etensor<4xf32>, !gnn.etensor<i32>) params(tensor<3x4x4xf32>) -> !gnn.etensor<2xf32> {
  ^bb0(%a: tensor<4xf32>, %ty: tensor<i32>, %b: tensor<3x4x4xf32>):
    // expected-error @+1 {{'gnn.typed_linear' op result 'tensor<2xf32>' must have the shape of the trailing weight dimensions of 'tensor<3x4x4xf32>'}}
    %r = gnn.typed_linear %a, %ty, %b : (tensor<4xf32>, tensor<i32>, tensor<3x4x4xf32>) -> tensor<2xf32>
    gnn.yield %r : tensor<2xf32>
  }
  return
}

// -----

func.func @typed_linear_f32_type(%g: !gnn.graph, %e: !gnn.etensor<4xf32>, %w: tensor<3x4x4xf32>) {
  %0 = gnn.apply_edge %g (%e) params(%w) : (!gnn.etensor<4xf32>) params(tensor<3x4x4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<3x4x4xf32>):
    %c = gnn.constant dense<1.0> : tensor<f32>
    // expected-error @+1 {{'gnn.typed_linear' op operand #1 must be 0D tensor of 32-bit signless integer values, but got 'tensor<f32>'}}
    %r = gnn.typed_linear %a, %c, %b : (tensor<4xf32>, tensor<f32>, tensor<3x4x4xf32>) -> tensor<4xf32>
    gnn.yield %r : tensor<4xf32>
  }
  return
}

// -----

func.func @binary_shapes(%g: !gnn.graph, %e: !gnn.etensor<4xf32>, %f: !gnn.etensor<8xf32>) {
  %0 = gnn.apply_edge %g (%e, %f) : (!gnn.etensor<4xf32>, !gnn.etensor<8xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<8xf32>):
    // expected-error @+1 {{'gnn.add' op operands 'tensor<4xf32>' and 'tensor<8xf32>' must have the same shape or one must be a scalar row (tensor<f32> or tensor<1xf32>)}}
    %r = gnn.add %a, %b : (tensor<4xf32>, tensor<8xf32>) -> tensor<4xf32>
    gnn.yield %r : tensor<4xf32>
  }
  return
}

// -----

func.func @binary_result(%g: !gnn.graph, %e: !gnn.etensor<4xf32>, %f: !gnn.etensor<1xf32>) {
  %0 = gnn.apply_edge %g (%e, %f) : (!gnn.etensor<4xf32>, !gnn.etensor<1xf32>) -> !gnn.etensor<1xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<1xf32>):
    // expected-error @+1 {{'gnn.mul' op result must be 'tensor<4xf32>' but is 'tensor<1xf32>'}}
    %r = gnn.mul %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<1xf32>
    gnn.yield %r : tensor<1xf32>
  }
  return
}

// -----

func.func @sub_shapes(%g: !gnn.graph, %e: !gnn.etensor<4xf32>, %f: !gnn.etensor<2x2xf32>) {
  %0 = gnn.apply_edge %g (%e, %f) : (!gnn.etensor<4xf32>, !gnn.etensor<2x2xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<2x2xf32>):
    // expected-error @+1 {{'gnn.sub' op operands 'tensor<4xf32>' and 'tensor<2x2xf32>' must have the same shape or one must be a scalar row}}
    %r = gnn.sub %a, %b : (tensor<4xf32>, tensor<2x2xf32>) -> tensor<4xf32>
    gnn.yield %r : tensor<4xf32>
  }
  return
}

// -----

func.func @div_result(%g: !gnn.graph, %e: !gnn.etensor<4xf32>) {
  %0 = gnn.apply_edge %g (%e) : (!gnn.etensor<4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'gnn.div' op result must be 'tensor<4xf32>' but is 'tensor<?xf32>'}}
    %r = gnn.div %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<?xf32>
    "test.use"(%r) : (tensor<?xf32>) -> ()
    gnn.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @unary_type(%g: !gnn.graph, %e: !gnn.etensor<4xf32>) {
  %0 = gnn.apply_edge %g (%e) : (!gnn.etensor<4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'gnn.exp' op requires the same type for all operands and results}}
    %r = "gnn.exp"(%a) : (tensor<4xf32>) -> tensor<8xf32>
    "test.use"(%r) : (tensor<8xf32>) -> ()
    gnn.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @constant_type(%g: !gnn.graph, %e: !gnn.etensor<4xf32>) {
  %0 = gnn.apply_edge %g (%e) : (!gnn.etensor<4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'gnn.constant' op attribute 'value' failed to satisfy constraint: 32-bit float elements attribute}}
    %c = gnn.constant dense<1> : tensor<4xi32>
    gnn.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @concat_empty(%g: !gnn.graph, %e: !gnn.etensor<4xf32>) {
  %0 = gnn.apply_edge %g (%e) : (!gnn.etensor<4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'gnn.concat' op needs at least one operand}}
    %c = gnn.concat : () -> tensor<4xf32>
    gnn.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @concat_scalars(%g: !gnn.graph, %e: !gnn.etensor<f32>) {
  %0 = gnn.apply_edge %g (%e) : (!gnn.etensor<f32>) -> !gnn.etensor<f32> {
  ^bb0(%a: tensor<f32>):
    // expected-error @+1 {{'gnn.concat' op cannot concatenate scalar rows}}
    %c = gnn.concat %a, %a : (tensor<f32>, tensor<f32>) -> tensor<2xf32>
    gnn.yield %a : tensor<f32>
  }
  return
}

// -----

func.func @concat_mismatch(%g: !gnn.graph, %e: !gnn.etensor<2x4xf32>, %f: !gnn.etensor<3x4xf32>) {
  %0 = gnn.apply_edge %g (%e, %f) : (!gnn.etensor<2x4xf32>, !gnn.etensor<3x4xf32>) -> !gnn.etensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>):
    // expected-error @+1 {{'gnn.concat' op operand #1 'tensor<3x4xf32>' must match operand #0 'tensor<2x4xf32>' in every dimension but the last}}
    %c = gnn.concat %a, %b : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x8xf32>
    gnn.yield %a : tensor<2x4xf32>
  }
  return
}

// -----

func.func @concat_result(%g: !gnn.graph, %e: !gnn.etensor<4xf32>, %f: !gnn.etensor<?xf32>) {
  %0 = gnn.apply_edge %g (%e, %f) : (!gnn.etensor<4xf32>, !gnn.etensor<?xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<?xf32>):
    // expected-error @+1 {{'gnn.concat' op result must be 'tensor<?xf32>' but is 'tensor<8xf32>'}}
    %c = gnn.concat %a, %b : (tensor<4xf32>, tensor<?xf32>) -> tensor<8xf32>
    gnn.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @row_dot_types(%g: !gnn.graph, %e: !gnn.etensor<4xf32>, %f: !gnn.etensor<8xf32>) {
  %0 = gnn.apply_edge %g (%e, %f) : (!gnn.etensor<4xf32>, !gnn.etensor<8xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<8xf32>):
    // expected-error @+1 {{'gnn.row_dot' op failed to verify that all of {lhs, rhs} have same type}}
    %c = "gnn.row_dot"(%a, %b) : (tensor<4xf32>, tensor<8xf32>) -> tensor<1xf32>
    gnn.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @row_dot_scalar(%g: !gnn.graph, %e: !gnn.etensor<f32>) {
  %0 = gnn.apply_edge %g (%e) : (!gnn.etensor<f32>) -> !gnn.etensor<f32> {
  ^bb0(%a: tensor<f32>):
    // expected-error @+1 {{'gnn.row_dot' op operands must be vector or heads x F rows but are 'tensor<f32>'}}
    %c = gnn.row_dot %a, %a : tensor<f32> -> tensor<1xf32>
    gnn.yield %a : tensor<f32>
  }
  return
}

// -----

func.func @row_dot_result(%g: !gnn.graph, %e: !gnn.etensor<4x8xf32>) {
  %0 = gnn.apply_edge %g (%e) : (!gnn.etensor<4x8xf32>) -> !gnn.etensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    // expected-error @+1 {{'gnn.row_dot' op result must be 'tensor<4xf32>' but is 'tensor<1xf32>'}}
    %c = gnn.row_dot %a, %a : tensor<4x8xf32> -> tensor<1xf32>
    gnn.yield %a : tensor<4x8xf32>
  }
  return
}

// -----

func.func @broadcast_heads_input(%g: !gnn.graph, %e: !gnn.etensor<4x8xf32>) {
  %0 = gnn.apply_edge %g (%e) : (!gnn.etensor<4x8xf32>) -> !gnn.etensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    // expected-error @+1 {{'gnn.broadcast_heads' op input must be per-head scalars tensor<Hxf32> but is 'tensor<4x8xf32>'}}
    %c = gnn.broadcast_heads %a : tensor<4x8xf32> -> tensor<4x8xf32>
    gnn.yield %a : tensor<4x8xf32>
  }
  return
}

// -----

func.func @broadcast_heads_result(%g: !gnn.graph, %e: !gnn.etensor<4xf32>) {
  %0 = gnn.apply_edge %g (%e) : (!gnn.etensor<4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'gnn.broadcast_heads' op result must be tensor<4xFxf32> but is 'tensor<2x8xf32>'}}
    %c = gnn.broadcast_heads %a : tensor<4xf32> -> tensor<2x8xf32>
    gnn.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @dropout_rate(%g: !gnn.graph, %v: !gnn.vtensor<4xf32>) {
  %0 = gnn.apply_vertex %g (%v) : (!gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'gnn.dropout' op rate must be in [0, 1) but is 1}}
    %d = gnn.dropout %a {rate = 1.0 : f64} : tensor<4xf32>
    gnn.yield %d : tensor<4xf32>
  }
  return
}

//===----------------------------------------------------------------------===//
// Training ops
//===----------------------------------------------------------------------===//

// -----

func.func @loss_logits(%x: !gnn.vtensor<4x2xf32>, %l: !gnn.vtensor<i64>, %m: !gnn.vtensor<i1>) -> f32 {
  // expected-error @+1 {{'gnn.softmax_cross_entropy' op logits must be '!gnn.vtensor<Cxf32>' but are '!gnn.vtensor<4x2xf32>'}}
  %0 = gnn.softmax_cross_entropy %x, %l, %m : !gnn.vtensor<4x2xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %0 : f32
}

// -----

func.func @loss_labels(%x: !gnn.vtensor<4xf32>, %l: !gnn.vtensor<i32>, %m: !gnn.vtensor<i1>) -> f32 {
  // expected-error @+1 {{'gnn.softmax_cross_entropy' op labels must be '!gnn.vtensor<i64>' but are '!gnn.vtensor<i32>'}}
  %0 = gnn.softmax_cross_entropy %x, %l, %m : !gnn.vtensor<4xf32>, !gnn.vtensor<i32>, !gnn.vtensor<i1> -> f32
  return %0 : f32
}

// -----

func.func @accuracy_mask(%x: !gnn.vtensor<4xf32>, %l: !gnn.vtensor<i64>, %m: !gnn.vtensor<i64>) -> f32 {
  // expected-error @+1 {{'gnn.accuracy' op mask must be '!gnn.vtensor<i1>' but is '!gnn.vtensor<i64>'}}
  %0 = gnn.accuracy %x, %l, %m : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i64> -> f32
  return %0 : f32
}

// -----

func.func @optimizer_name(%p: tensor<4xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'gnn.optimizer_update' op parameter name must not be empty}}
  %0 = gnn.optimizer_update "" %p, %d : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @optimizer_types(%p: tensor<4xf32>, %d: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'gnn.optimizer_update' op failed to verify that all of {param, grad, result} have same type}}
  %0 = "gnn.optimizer_update"(%p, %d) {name = "w"} : (tensor<4xf32>, tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// Ops of backward programs
//===----------------------------------------------------------------------===//

// -----

func.func @linear_transpose_rank(%g: !gnn.graph, %v: !gnn.vtensor<4xf32>, %w: tensor<4xf32>) {
  %0 = gnn.apply_vertex %g (%v) params(%w) : (!gnn.vtensor<4xf32>) params(tensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    // expected-error @+1 {{'gnn.linear_transpose' op weight 'tensor<4xf32>' must have more than the 1 dimensions of the input row 'tensor<4xf32>'}}
    %r = gnn.linear_transpose %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %r : tensor<4xf32>
  }
  return
}

// -----

func.func @linear_transpose_tail(%g: !gnn.graph, %v: !gnn.vtensor<4xf32>, %w: tensor<8x2xf32>) {
  %0 = gnn.apply_vertex %g (%v) params(%w) : (!gnn.vtensor<4xf32>) params(tensor<8x2xf32>) -> !gnn.vtensor<8xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<8x2xf32>):
    // expected-error @+1 {{'gnn.linear_transpose' op weight 'tensor<8x2xf32>' must end with the input row shape of 'tensor<4xf32>'}}
    %r = gnn.linear_transpose %a, %b : (tensor<4xf32>, tensor<8x2xf32>) -> tensor<8xf32>
    gnn.yield %r : tensor<8xf32>
  }
  return
}

// -----

func.func @linear_transpose_result(%g: !gnn.graph, %v: !gnn.vtensor<2xf32>, %w: tensor<8x2xf32>) {
  %0 = gnn.apply_vertex %g (%v) params(%w) : (!gnn.vtensor<2xf32>) params(tensor<8x2xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%a: tensor<2xf32>, %b: tensor<8x2xf32>):
    // expected-error @+1 {{'gnn.linear_transpose' op result 'tensor<4xf32>' must have the shape of the leading weight dimensions of 'tensor<8x2xf32>'}}
    %r = gnn.linear_transpose %a, %b : (tensor<2xf32>, tensor<8x2xf32>) -> tensor<4xf32>
    gnn.yield %r : tensor<4xf32>
  }
  return
}

// -----

func.func @reduce_sum_result(%g: !gnn.graph, %v: !gnn.vtensor<4xf32>) {
  %0 = gnn.apply_vertex %g (%v) : (!gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'gnn.reduce_sum' op result must be tensor<f32> or tensor<1xf32> but is 'tensor<2xf32>'}}
    %r = gnn.reduce_sum %a : tensor<4xf32> -> tensor<2xf32>
    gnn.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @sum_rows_result(%v: !gnn.vtensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'gnn.sum_rows' op result must be the row type 'tensor<4xf32>' of the input but is 'tensor<8xf32>'}}
  %0 = gnn.sum_rows %v : !gnn.vtensor<4xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @outer_sum_kinds(%v: !gnn.vtensor<4xf32>, %e: !gnn.etensor<2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'gnn.outer_sum' op operands must both be vertex or both edge tensors but are '!gnn.vtensor<4xf32>' and '!gnn.etensor<2xf32>'}}
  %0 = gnn.outer_sum %v, %e : !gnn.vtensor<4xf32>, !gnn.etensor<2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @outer_sum_result(%v: !gnn.vtensor<4xf32>, %w: !gnn.vtensor<2xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'gnn.outer_sum' op result must be 'tensor<4x2xf32>' but is 'tensor<2x4xf32>'}}
  %0 = gnn.outer_sum %v, %w : !gnn.vtensor<4xf32>, !gnn.vtensor<2xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @loss_grad_result(%x: !gnn.vtensor<4xf32>, %l: !gnn.vtensor<i64>, %m: !gnn.vtensor<i1>) -> !gnn.vtensor<?xf32> {
  // expected-error @+1 {{'gnn.softmax_cross_entropy_grad' op result must have the logits' type '!gnn.vtensor<4xf32>' but is '!gnn.vtensor<?xf32>'}}
  %0 = gnn.softmax_cross_entropy_grad %x, %l, %m : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> !gnn.vtensor<?xf32>
  return %0 : !gnn.vtensor<?xf32>
}

// -----

func.func @loss_grad_labels(%x: !gnn.vtensor<4xf32>, %l: !gnn.vtensor<i1>, %m: !gnn.vtensor<i1>) -> !gnn.vtensor<4xf32> {
  // expected-error @+1 {{'gnn.softmax_cross_entropy_grad' op labels must be '!gnn.vtensor<i64>' but are '!gnn.vtensor<i1>'}}
  %0 = gnn.softmax_cross_entropy_grad %x, %l, %m : !gnn.vtensor<4xf32>, !gnn.vtensor<i1>, !gnn.vtensor<i1> -> !gnn.vtensor<4xf32>
  return %0 : !gnn.vtensor<4xf32>
}

// -----

func.func @typed_transpose_shape(%g: !gnn.graph, %e: !gnn.etensor<8xf32>, %t: !gnn.etensor<i32>, %w: tensor<3x4x8xf32>) {
  %0 = gnn.apply_edge %g (%e, %t) params(%w) : (!gnn.etensor<8xf32>, !gnn.etensor<i32>) params(tensor<3x4x8xf32>) -> !gnn.etensor<2xf32> {
  ^bb0(%a: tensor<8xf32>, %ty: tensor<i32>, %b: tensor<3x4x8xf32>):
    // expected-error @+1 {{'gnn.typed_linear_transpose' op weight 'tensor<3x4x8xf32>' must be [types, result shape..., input shape...] for input 'tensor<8xf32>' and result 'tensor<2xf32>'}}
    %r = gnn.typed_linear_transpose %a, %ty, %b : (tensor<8xf32>, tensor<i32>, tensor<3x4x8xf32>) -> tensor<2xf32>
    gnn.yield %r : tensor<2xf32>
  }
  return
}

// -----

func.func @slice_shape(%g: !gnn.graph, %e: !gnn.etensor<2x8xf32>) {
  %0 = gnn.apply_edge %g (%e) : (!gnn.etensor<2x8xf32>) -> !gnn.etensor<2x8xf32> {
  ^bb0(%a: tensor<2x8xf32>):
    // expected-error @+1 {{'gnn.slice' op result 'tensor<3x4xf32>' must have the shape of 'tensor<2x8xf32>' but in the last dimension}}
    %r = gnn.slice %a {offset = 0 : i64} : tensor<2x8xf32> -> tensor<3x4xf32>
    gnn.yield %a : tensor<2x8xf32>
  }
  return
}

// -----

func.func @slice_range(%g: !gnn.graph, %e: !gnn.etensor<8xf32>) {
  %0 = gnn.apply_edge %g (%e) : (!gnn.etensor<8xf32>) -> !gnn.etensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    // expected-error @+1 {{'gnn.slice' op slice [6, 6 + 4) is outside the last dimension of 'tensor<8xf32>'}}
    %r = gnn.slice %a {offset = 6 : i64} : tensor<8xf32> -> tensor<4xf32>
    gnn.yield %a : tensor<8xf32>
  }
  return
}

// -----

func.func @typed_outer_type(%x: !gnn.etensor<4xf32>, %t: !gnn.etensor<1xf32>, %d: !gnn.etensor<2xf32>) -> tensor<3x4x2xf32> {
  // expected-error @+1 {{'gnn.typed_outer_sum' op type operand must have i32 scalar rows but is '!gnn.etensor<1xf32>'}}
  %0 = gnn.typed_outer_sum %x, %t, %d : !gnn.etensor<4xf32>, !gnn.etensor<1xf32>, !gnn.etensor<2xf32> -> tensor<3x4x2xf32>
  return %0 : tensor<3x4x2xf32>
}

// -----

func.func @typed_outer_result(%x: !gnn.etensor<4xf32>, %t: !gnn.etensor<i32>, %d: !gnn.etensor<2xf32>) -> tensor<3x2x4xf32> {
  // expected-error @+1 {{'gnn.typed_outer_sum' op result must be [types, input row..., grad row...] = 'tensor<3x4x2xf32>' but is 'tensor<3x2x4xf32>'}}
  %0 = gnn.typed_outer_sum %x, %t, %d : !gnn.etensor<4xf32>, !gnn.etensor<i32>, !gnn.etensor<2xf32> -> tensor<3x2x4xf32>
  return %0 : tensor<3x2x4xf32>
}

// -----

func.func @gather_grad_sum(%g: !gnn.graph, %v: !gnn.vtensor<4xf32>, %e: !gnn.etensor<4xf32>) -> !gnn.etensor<4xf32> {
  // expected-error @+1 {{'gnn.gather_grad' op routes the gradients of max and min gathers only}}
  %0 = gnn.gather_grad sum %g, %v, %e to dst : !gnn.vtensor<4xf32>, !gnn.etensor<4xf32> -> !gnn.etensor<4xf32>
  return %0 : !gnn.etensor<4xf32>
}

// -----

func.func @gather_grad_rows(%g: !gnn.graph, %v: !gnn.vtensor<2xf32>, %e: !gnn.etensor<4xf32>) -> !gnn.etensor<4xf32> {
  // expected-error @+1 {{'gnn.gather_grad' op gradient, input and result must have the same rows}}
  %0 = gnn.gather_grad max %g, %v, %e to dst : !gnn.vtensor<2xf32>, !gnn.etensor<4xf32> -> !gnn.etensor<4xf32>
  return %0 : !gnn.etensor<4xf32>
}

// -----

func.func @fused_gather_not_elementwise(%g: !gnn.graph, %h: !gnn.vtensor<4xf32>, %w: tensor<4x4xf32>) -> !gnn.vtensor<4xf32> {
  %0 = gnn.fused_gather sum %g src(%h : !gnn.vtensor<4xf32>) params(%w : tensor<4x4xf32>) to dst : !gnn.vtensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %wv: tensor<4x4xf32>):
    // expected-error @+1 {{'gnn.linear' op cannot be in a 'gnn.fused_gather' body (element-wise ops, splat constants, broadcast_heads, edge_select, reduce_sum and row_dot only)}}
    %y = gnn.linear %x, %wv : (tensor<4xf32>, tensor<4x4xf32>) -> tensor<4xf32>
    gnn.yield %y : tensor<4xf32>
  }
  return %0 : !gnn.vtensor<4xf32>
}

// -----

func.func @fused_gather_args(%g: !gnn.graph, %h: !gnn.vtensor<4xf32>, %d: !gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  // expected-error @+1 {{'gnn.fused_gather' op body must have 2 arguments (2 rows + 0 parameters) but has 1}}
  %0 = gnn.fused_gather sum %g src(%h : !gnn.vtensor<4xf32>) dst(%d : !gnn.vtensor<4xf32>) to dst : !gnn.vtensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    gnn.yield %x : tensor<4xf32>
  }
  return %0 : !gnn.vtensor<4xf32>
}

// -----

func.func @fused_gather_yield(%g: !gnn.graph, %h: !gnn.vtensor<4xf32>) -> !gnn.vtensor<2xf32> {
  %0 = gnn.fused_gather sum %g src(%h : !gnn.vtensor<4xf32>) to dst : !gnn.vtensor<2xf32> {
  ^bb0(%x: tensor<4xf32>):
    // expected-error @+1 {{'gnn.yield' op operand #0 has type 'tensor<4xf32>' but result #0 ('!gnn.vtensor<2xf32>') has rows of type 'tensor<2xf32>'}}
    gnn.yield %x : tensor<4xf32>
  }
  return %0 : !gnn.vtensor<2xf32>
}

// -----

func.func @fused_gather_arg_sum(%g: !gnn.graph, %h: !gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  // expected-error @+1 {{'gnn.fused_gather' op has an 'arg' result but accumulates with 'sum' (max and min only)}}
  %0, %1 = gnn.fused_gather sum %g src(%h : !gnn.vtensor<4xf32>) to dst : !gnn.vtensor<4xf32> arg !gnn.vtensor<4xi32> {
  ^bb0(%x: tensor<4xf32>):
    gnn.yield %x : tensor<4xf32>
  }
  return %0 : !gnn.vtensor<4xf32>
}

// -----

func.func @fused_gather_arg_rows(%g: !gnn.graph, %h: !gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  // expected-error @+1 {{'gnn.fused_gather' op 'arg' must have i32 rows of the result's shape (one result)}}
  %0, %1 = gnn.fused_gather max %g src(%h : !gnn.vtensor<4xf32>) to dst : !gnn.vtensor<4xf32> arg !gnn.vtensor<2xi32> {
  ^bb0(%x: tensor<4xf32>):
    gnn.yield %x : tensor<4xf32>
  }
  return %0 : !gnn.vtensor<4xf32>
}

// -----

func.func @edge_select_vertex(%g: !gnn.graph, %a: !gnn.vtensor<4xi32>, %d: !gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  %0 = gnn.apply_vertex %g (%a, %d) : (!gnn.vtensor<4xi32>, !gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%x: tensor<4xi32>, %y: tensor<4xf32>):
    // expected-error @+1 {{'gnn.edge_select' op is only meaningful at an edge (in 'gnn.apply_edge' or 'gnn.fused_gather')}}
    %s = gnn.edge_select %x, %y : tensor<4xi32>, tensor<4xf32>
    gnn.yield %s : tensor<4xf32>
  }
  return %0 : !gnn.vtensor<4xf32>
}

// -----

func.func @edge_select_shape(%g: !gnn.graph, %a: !gnn.etensor<2xi32>, %d: !gnn.etensor<4xf32>) -> !gnn.etensor<4xf32> {
  %0 = gnn.apply_edge %g (%a, %d) : (!gnn.etensor<2xi32>, !gnn.etensor<4xf32>) -> !gnn.etensor<4xf32> {
  ^bb0(%x: tensor<2xi32>, %y: tensor<4xf32>):
    // expected-error @+1 {{'gnn.edge_select' op arg and value rows must have the same shape}}
    %s = gnn.edge_select %x, %y : tensor<2xi32>, tensor<4xf32>
    gnn.yield %s : tensor<4xf32>
  }
  return %0 : !gnn.etensor<4xf32>
}

// -----

func.func @fused_gather_two_rows(%g: !gnn.graph, %h: !gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  // expected-error @+1 {{'gnn.fused_gather' op body must yield one row per result}}
  %0 = gnn.fused_gather sum %g src(%h : !gnn.vtensor<4xf32>) to dst : !gnn.vtensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    gnn.yield %x, %x : tensor<4xf32>, tensor<4xf32>
  }
  return %0 : !gnn.vtensor<4xf32>
}

// -----

func.func @fused_gather_arg_type(%g: !gnn.graph, %h: !gnn.vtensor<4xf32>) -> !gnn.vtensor<2xf32> {
  // expected-error @+1 {{'gnn.fused_gather' op body argument #0 must be the row type 'tensor<4xf32>' of input #0}}
  %0 = gnn.fused_gather sum %g src(%h : !gnn.vtensor<4xf32>) to dst : !gnn.vtensor<2xf32> {
  ^bb0(%x: tensor<2xf32>):
    gnn.yield %x : tensor<2xf32>
  }
  return %0 : !gnn.vtensor<2xf32>
}

//===----------------------------------------------------------------------===//
// gnn.chunks (--gnn-chunk-tile)
//===----------------------------------------------------------------------===//

func.func @chunks_ok(%g: !gnn.graph, %e: !gnn.etensor<8xf32>) {
  %0 = gnn.gather sum %g, %e to dst {gnn.chunks = 4 : i64} : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  return
}

// -----

func.func @chunks_zero(%g: !gnn.graph, %e: !gnn.etensor<8xf32>) {
  // expected-error @+1 {{'gnn.chunks' must be an i64 in [1, 2147483647]}}
  %0 = gnn.gather sum %g, %e to dst {gnn.chunks = 0 : i64} : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  return
}

// -----

func.func @chunks_i32(%g: !gnn.graph, %e: !gnn.etensor<8xf32>) {
  // expected-error @+1 {{'gnn.chunks' must be an i64 in [1, 2147483647]}}
  %0 = gnn.gather sum %g, %e to dst {gnn.chunks = 4 : i32} : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  return
}

// -----

func.func @chunks_too_many(%g: !gnn.graph, %e: !gnn.etensor<8xf32>) {
  // expected-error @+1 {{'gnn.chunks' must be an i64 in [1, 2147483647]}}
  %0 = gnn.gather sum %g, %e to dst {gnn.chunks = 2147483648 : i64} : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
  return
}

// -----

func.func @chunks_not_aggregation(%g: !gnn.graph, %v: !gnn.vtensor<8xf32>) {
  // expected-error @+1 {{'gnn.chunks' is only valid on an aggregation (gnn.gather, gnn.fused_gather)}}
  %0 = gnn.scatter %g, %v from src {gnn.chunks = 2 : i64} : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
  return
}

// -----

func.func @place_by_type_slots(%g: !gnn.graph, %e: !gnn.etensor<4xf32>, %t: !gnn.etensor<i32>) {
  %0 = gnn.apply_edge %g (%e, %t) : (!gnn.etensor<4xf32>, !gnn.etensor<i32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %ty: tensor<i32>):
    // expected-error @+1 {{'gnn.place_by_type' op result must be the row 'tensor<4xf32>' with a static leading dimension of T >= 1 types, but is 'tensor<3x8xf32>'}}
    %c = gnn.place_by_type %a, %ty : (tensor<4xf32>, tensor<i32>) -> tensor<3x8xf32>
    gnn.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @take_by_type_slots(%g: !gnn.graph, %e: !gnn.etensor<4xf32>, %t: !gnn.etensor<i32>) {
  %0 = gnn.apply_edge %g (%e, %t) : (!gnn.etensor<4xf32>, !gnn.etensor<i32>) -> !gnn.etensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %ty: tensor<i32>):
    // expected-error @+1 {{'gnn.take_by_type' op input must be the row 'tensor<4xf32>' with a static leading dimension of T >= 1 types, but is 'tensor<4xf32>'}}
    %c = gnn.take_by_type %a, %ty : (tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
    gnn.yield %c : tensor<4xf32>
  }
  return
}
