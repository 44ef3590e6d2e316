// RUN: gnn-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{vertex tensor rows have rank 0, 1 or 2 but got rank 3}}
func.func private @rank3(!gnn.vtensor<2x3x4xf32>)

// -----

// expected-error @+1 {{edge tensor row dimensions must be positive or '?' but got 0}}
func.func private @zero_dim(!gnn.etensor<0xf32>)

// -----

// expected-error @+1 {{vertex tensor element type must be f32, i1, i32 or i64 but got 'f64'}}
func.func private @f64_rows(!gnn.vtensor<4xf64>)

// -----

// expected-error @+1 {{edge tensor rows of 'i64' must be scalars (rank 0) but got rank 1}}
func.func private @int_vector_rows(!gnn.etensor<3xi64>)

// -----

// expected-error @+1 {{initialiser 'glorot' takes no value but got 1}}
func.func private @glorot_value(tensor<2xf32> {gnn.init = #gnn.init<glorot, 1.0>})

// -----

// expected-error @+1 {{initialiser 'uniform' needs a positive scale but got 0}}
func.func private @uniform_zero(tensor<2xf32> {gnn.init = #gnn.init<uniform>})

// -----

// expected-error @+1 {{unknown initialiser 'xavier' (expected glorot, zeros, ones, constant, uniform or normal)}}
func.func private @unknown_init(tensor<2xf32> {gnn.init = #gnn.init<xavier>})

// -----

func.func @unknown_accumulator(%g: !gnn.graph, %e: !gnn.etensor<4xf32>) {
  // expected-error @+1 {{custom op 'gnn.gather' expected string or keyword containing one of the following enum values for attribute 'acc' [sum, mean, max, min]}}
  %0 = gnn.gather prod %g, %e to dst : !gnn.etensor<4xf32> -> !gnn.vtensor<4xf32>
  return
}

// -----

func.func @unknown_side(%g: !gnn.graph, %v: !gnn.vtensor<4xf32>) {
  // expected-error @+1 {{custom op 'gnn.scatter' expected string or keyword containing one of the following enum values for attribute 'side' [src, dst]}}
  %0 = gnn.scatter %g, %v from both : !gnn.vtensor<4xf32> -> !gnn.etensor<4xf32>
  return
}

// -----

// expected-error @+1 {{vertex tensor rows have at most 16777216 elements but the static dimensions give more}}
func.func private @huge_row(!gnn.vtensor<4611686018427387904xf32>)

// -----

// expected-error @+1 {{edge tensor rows have at most 16777216 elements but the static dimensions give more}}
func.func private @huge_row_product(!gnn.etensor<8192x4096xf32>)
