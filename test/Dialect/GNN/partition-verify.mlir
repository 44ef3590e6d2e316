// RUN: gnn-opt %s -split-input-file -verify-diagnostics

// The vertex spaces of a row-partitioned function (GNNOps.h): each process
// holds its own vertices' rows; the rows of every vertex come from an
// all-gather or an aggregation to the source.

func.func @outside() {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  // expected-error @+1 {{'gnn.all_gather' op is only valid in a partitioned function ('gnn.partition = "rows"' or "features")}}
  %a = gnn.all_gather %g, %x : !gnn.vtensor<4xf32>
  return
}

// -----

func.func @reduce_outside() {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  // expected-error @+1 {{'gnn.reduce_scatter' op is only valid in a partitioned function}}
  %a = gnn.reduce_scatter %g, %x : !gnn.vtensor<4xf32>
  return
}

// -----

func.func @gather_twice() attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %a = gnn.all_gather %g, %x : !gnn.vtensor<4xf32>
  // expected-error @+1 {{'gnn.all_gather' op needs the rows of the process's own vertices}}
  %b = gnn.all_gather %g, %a : !gnn.vtensor<4xf32>
  return
}

// -----

func.func @scatter_own_rows() attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  // expected-error @+1 {{'gnn.scatter' op reads its input with the rows of the process's own vertices but needs the rows of every vertex, gathered}}
  %s = gnn.scatter %g, %x from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  return
}

// -----

func.func @scatter_all_rows_to_dst() attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %a = gnn.all_gather %g, %x : !gnn.vtensor<4xf32>
  // expected-error @+1 {{'gnn.scatter' op reads its input with the rows of every vertex, gathered but needs the rows of the process's own vertices}}
  %s = gnn.scatter %g, %a from dst : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  return
}

// -----

func.func @reduce_own_rows() attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  // expected-error @+1 {{'gnn.reduce_scatter' op needs the rows of every vertex, partial sums}}
  %r = gnn.reduce_scatter %g, %x : !gnn.vtensor<4xf32>
  return
}

// -----

func.func @partial_read_at_destination() attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %a = gnn.all_gather %g, %x : !gnn.vtensor<4xf32>
  // expected-error @+1 {{'gnn.fused_gather' op reads a dst input with the rows of every vertex, gathered}}
  %f = gnn.fused_gather sum %g src(%a : !gnn.vtensor<4xf32>) dst(%a : !gnn.vtensor<4xf32>) to dst : !gnn.vtensor<4xf32> {
  ^bb0(%s: tensor<4xf32>, %d: tensor<4xf32>):
    %t = gnn.mul %s, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  return
}

// -----

func.func @stage_on_all_rows() attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %a = gnn.all_gather %g, %x : !gnn.vtensor<4xf32>
  // expected-error @+1 {{'gnn.apply_vertex' op runs on the rows of every vertex, gathered, which in a row-partitioned function only a stage that adds partial sums may do}}
  %r = gnn.apply_vertex %g (%a) : (!gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%v: tensor<4xf32>):
    %t = gnn.relu %v : tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  return
}

// -----

func.func @mixed_stage() attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %a = gnn.all_gather %g, %x : !gnn.vtensor<4xf32>
  // expected-error @+1 {{'gnn.apply_vertex' op runs on the rows of every vertex, gathered, which in a row-partitioned function only a stage that adds partial sums may do}}
  %r = gnn.apply_vertex %g (%a, %x) : (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%v: tensor<4xf32>, %w: tensor<4xf32>):
    %t = gnn.add %v, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  return
}

// -----

func.func @loss_of_all_rows() attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %a = gnn.all_gather %g, %x : !gnn.vtensor<4xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  // expected-error @+1 {{'gnn.softmax_cross_entropy' op reads an operand with the rows of every vertex, gathered}}
  %loss = gnn.softmax_cross_entropy %a, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return
}

// -----

// expected-error @+1 {{'gnn.partition' must be "rows" or "features"}}
func.func @columns() attributes {gnn.partition = "columns"} {
  return
}

// -----

func.func @not_on_a_function() {
  %g = gnn.graph : !gnn.graph
  // expected-error @+1 {{'gnn.partition' is only valid on a function}}
  %x = gnn.input %g "features" {gnn.partition = "rows"} : !gnn.vtensor<4xf32>
  return
}

// -----

func.func @ints() attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %l = gnn.input %g "labels" : !gnn.vtensor<i64>
  // expected-error @+1 {{'gnn.all_gather' op moves f32 rows only}}
  %a = gnn.all_gather %g, %l : !gnn.vtensor<i64>
  return
}

// -----

// Gathered rows are the same on every process: reducing them would sum N
// copies.
func.func @reduce_gathered() attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %a = gnn.all_gather %g, %x : !gnn.vtensor<4xf32>
  // expected-error @+1 {{'gnn.reduce_scatter' op needs the rows of every vertex, partial sums}}
  %r = gnn.reduce_scatter %g, %a : !gnn.vtensor<4xf32>
  return
}

// -----

// Partial sums are not the rows: a source reads the reduced, gathered ones.
func.func @scatter_partial() attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %d = gnn.scatter %g, %x from dst : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %p = gnn.gather sum %g, %d to src : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  // expected-error @+1 {{'gnn.scatter' op reads its input with the rows of every vertex, partial sums but needs the rows of every vertex, gathered}}
  %s = gnn.scatter %g, %p from src : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  return
}

// -----

// An adds-only stage of partial sums is what autodiff builds; one mixing
// gathered and partial rows is not.
func.func @mixed_partial() attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %a = gnn.all_gather %g, %x : !gnn.vtensor<4xf32>
  %d = gnn.scatter %g, %x from dst : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  %p = gnn.gather sum %g, %d to src : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  // expected-error @+1 {{'gnn.apply_vertex' op reads an input with the rows of every vertex, gathered but needs the rows of every vertex, partial sums}}
  %r = gnn.apply_vertex %g (%p, %a) : (!gnn.vtensor<4xf32>, !gnn.vtensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%v: tensor<4xf32>, %w: tensor<4xf32>):
    %t = gnn.add %v, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %t : tensor<4xf32>
  }
  return
}

// -----

func.func @max_to_src() attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  %d = gnn.scatter %g, %x from dst : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  // expected-error @+1 {{'gnn.gather' op aggregates with 'max' to the source, which a row-partitioned function cannot}}
  %p = gnn.gather max %g, %d to src : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  return
}

// -----

func.func @readout(%w: tensor<4xf32> {gnn.param = "w", gnn.init = #gnn.init<zeros>}) -> (f32, !gnn.vtensor<4xf32>) attributes {gnn.model, gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<4xf32>
  // expected-error @+1 {{'gnn.sum_rows' op reduces over all vertices in the forward}}
  %s = gnn.sum_rows %x : !gnn.vtensor<4xf32> -> tensor<4xf32>
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %x, %labels, %mask : !gnn.vtensor<4xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %x : f32, !gnn.vtensor<4xf32>
}

// -----

// The whole graph belongs to partitioned functions.
func.func @whole_unpartitioned() {
  // expected-error @+1 {{'gnn.graph' op 'whole' is only valid in a partitioned function ('gnn.partition = "rows"' or "features")}}
  %w = gnn.graph whole : !gnn.graph
  return
}

// -----

// A bias on a partial of the feature columns before the sync.
func.func @bias_before_sync(%w1: tensor<?x4xf32> {gnn.dims = ["features", ""]}, %b: tensor<4xf32>) -> !gnn.vtensor<4xf32> attributes {gnn.partition = "features"} {
  %g = gnn.graph : !gnn.graph
  %w = gnn.graph whole : !gnn.graph
  %x = gnn.input %w "features" : !gnn.vtensor<?xf32>
  %p = gnn.apply_vertex %w (%x) params(%w1, %b) : (!gnn.vtensor<?xf32>) params(tensor<?x4xf32>, tensor<4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%a: tensor<?xf32>, %wr: tensor<?x4xf32>, %br: tensor<4xf32>):
    %t0 = gnn.linear %a, %wr : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
    // expected-error @+1 {{'gnn.add' op needs the sum of the processes' partials of a contraction over the feature columns first}}
    %t1 = gnn.add %t0, %br : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    gnn.yield %t1 : tensor<4xf32>
  }
  %h = gnn.reduce_scatter %g, %p : !gnn.vtensor<4xf32>
  return %h : !gnn.vtensor<4xf32>
}

// -----

// The own rows never read a feature shard.
func.func @shard_on_own_rows() -> !gnn.vtensor<?xf32> attributes {gnn.partition = "features"} {
  %g = gnn.graph : !gnn.graph
  %w = gnn.graph whole : !gnn.graph
  %x = gnn.input %w "features" : !gnn.vtensor<?xf32>
  // expected-error @+1 {{'gnn.apply_vertex' op reads a tensor of the whole graph (every vertex, this process's feature columns) outside it}}
  %h = gnn.apply_vertex %g (%x) : (!gnn.vtensor<?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%a: tensor<?xf32>):
    %t0 = gnn.relu %a : tensor<?xf32>
    gnn.yield %t0 : tensor<?xf32>
  }
  return %h : !gnn.vtensor<?xf32>
}

// -----

// Ops of the whole graph read every vertex's rows, not the own ones.
func.func @own_rows_on_whole() -> !gnn.etensor<1xf32> attributes {gnn.partition = "features"} {
  %g = gnn.graph : !gnn.graph
  %w = gnn.graph whole : !gnn.graph
  %d = gnn.degree %g in : !gnn.vtensor<1xf32>
  // expected-error @+1 {{'gnn.scatter' op runs on the whole graph but reads its input with the rows of the process's own vertices}}
  %s = gnn.scatter %w, %d from src : !gnn.vtensor<1xf32> -> !gnn.etensor<1xf32>
  return %s : !gnn.etensor<1xf32>
}

// -----

// A weight whose rows are the feature columns is read on the whole graph.
func.func @shard_weight_on_own_rows(%w1: tensor<?x4xf32> {gnn.dims = ["features", ""]}) -> !gnn.vtensor<4xf32> attributes {gnn.partition = "features"} {
  %g = gnn.graph : !gnn.graph
  %w = gnn.graph whole : !gnn.graph
  %d = gnn.degree %g in : !gnn.vtensor<1xf32>
  // expected-error @+1 {{'gnn.apply_vertex' op reads parameter #0, whose rows are this process's feature columns, outside the whole graph's first layer}}
  %h = gnn.apply_vertex %g (%d) params(%w1) : (!gnn.vtensor<1xf32>) params(tensor<?x4xf32>) -> !gnn.vtensor<4xf32> {
  ^bb0(%a: tensor<1xf32>, %wr: tensor<?x4xf32>):
    %t0 = gnn.reduce_sum %wr : tensor<?x4xf32> -> tensor<1xf32>
    %t1 = gnn.mul %t0, %a : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %t2 = gnn.broadcast_heads %t1 : tensor<1xf32> -> tensor<1x4xf32>
    %t3 = gnn.reduce_sum %t2 : tensor<1x4xf32> -> tensor<4xf32>
    gnn.yield %t3 : tensor<4xf32>
  }
  return %h : !gnn.vtensor<4xf32>
}

// -----

// Only a weight's rows are split along the features.
// expected-error @+1 {{'func.func' op binds parameter #0's dimension 1 to the features, which a feature-partitioned function splits: only a weight's first dimension (its rows) may be}}
func.func @features_in_columns(%w: tensor<4x?xf32> {gnn.dims = ["", "features"]}) attributes {gnn.partition = "features"} {
  return
}

// -----

// gnn.own_rows takes the own rows of a replicated layer's rows.
func.func @own_rows_of_own() -> !gnn.vtensor<1xf32> attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %d = gnn.degree %g in : !gnn.vtensor<1xf32>
  // expected-error @+1 {{'gnn.own_rows' op needs the rows of every vertex, gathered (an op of the whole graph's replicated layers)}}
  %o = gnn.own_rows %g, %d : !gnn.vtensor<1xf32>
  return %o : !gnn.vtensor<1xf32>
}

// -----

func.func @own_rows_unpartitioned(%x: !gnn.vtensor<1xf32>) -> !gnn.vtensor<1xf32> {
  %g = gnn.graph : !gnn.graph
  // expected-error @+1 {{'gnn.own_rows' op is only valid in a partitioned function}}
  %o = gnn.own_rows %g, %x : !gnn.vtensor<1xf32>
  return %o : !gnn.vtensor<1xf32>
}

// -----

// gnn.pad_rows pads the own rows, not every vertex's.
func.func @pad_rows_of_gathered() -> !gnn.vtensor<1xf32> attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %d = gnn.degree %g in : !gnn.vtensor<1xf32>
  %a = gnn.all_gather %g, %d : !gnn.vtensor<1xf32>
  // expected-error @+1 {{'gnn.pad_rows' op needs the rows of the process's own vertices}}
  %p = gnn.pad_rows %g, %a : !gnn.vtensor<1xf32>
  return %p : !gnn.vtensor<1xf32>
}

// -----

// A replicated layer's rows are read at the own vertices through
// gnn.own_rows.
func.func @replicated_on_own_rows() -> !gnn.vtensor<1xf32> attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %w = gnn.graph whole : !gnn.graph
  %d = gnn.degree %w in : !gnn.vtensor<1xf32>
  // expected-error @+1 {{'gnn.apply_vertex' op runs on the rows of every vertex, gathered, which in a row-partitioned function only a stage that adds partial sums may do}}
  %h = gnn.apply_vertex %g (%d) : (!gnn.vtensor<1xf32>) -> !gnn.vtensor<1xf32> {
  ^bb0(%a: tensor<1xf32>):
    %t0 = gnn.relu %a : tensor<1xf32>
    gnn.yield %t0 : tensor<1xf32>
  }
  return %h : !gnn.vtensor<1xf32>
}

// -----

// The replicated layers' own-rows reads of a stage: fine with gnn.own_rows.
func.func @replicated_read_own(%x: !gnn.vtensor<1xf32>) -> !gnn.vtensor<1xf32> attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %w = gnn.graph whole : !gnn.graph
  %d = gnn.degree %w in : !gnn.vtensor<1xf32>
  %o = gnn.own_rows %g, %d : !gnn.vtensor<1xf32>
  %h = gnn.apply_vertex %g (%o) : (!gnn.vtensor<1xf32>) -> !gnn.vtensor<1xf32> {
  ^bb0(%a: tensor<1xf32>):
    %t0 = gnn.relu %a : tensor<1xf32>
    gnn.yield %t0 : tensor<1xf32>
  }
  %p = gnn.pad_rows %g, %h : !gnn.vtensor<1xf32>
  %r = gnn.reduce_scatter %g, %p : !gnn.vtensor<1xf32>
  return %r : !gnn.vtensor<1xf32>
}

// -----

// An outer sum is bilinear: the processes' partials on both sides do not
// add up to the gradient.
func.func @outer_of_partials() -> tensor<1x1xf32> attributes {gnn.partition = "rows"} {
  %g = gnn.graph : !gnn.graph
  %d = gnn.degree %g in : !gnn.vtensor<1xf32>
  %p = gnn.pad_rows %g, %d : !gnn.vtensor<1xf32>
  // expected-error @+1 {{'gnn.outer_sum' op reduces rows of every vertex, partial sums, whose sum over the processes is not the gradient}}
  %o = gnn.outer_sum %p, %p : !gnn.vtensor<1xf32>, !gnn.vtensor<1xf32> -> tensor<1x1xf32>
  return %o : tensor<1x1xf32>
}
