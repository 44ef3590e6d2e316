// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime | FileCheck %s

// exp's argument is clamped to where glibc's vector expf stays on its fast
// path (no lane below -87.3 or above 88.7, which it redoes lane by lane
// through the scalar expf): sigmoid and tanh to [-87, 87] (they saturate
// long before), ELU's expm1 to [-87, 0], a plain exp from below only
// (overflow to +inf is kept).

// CHECK-LABEL: func.func private @__gnn_kernel_
// Sigmoid: exp(-x) within [-87, 87].
// CHECK:         %[[N:.*]] = arith.negf
// CHECK-NEXT:    %[[LO:.*]] = arith.constant -8.700000e+01 : f32
// CHECK-NEXT:    %[[A:.*]] = arith.maxnumf %[[N]], %[[LO]] : f32
// CHECK-NEXT:    %[[HI:.*]] = arith.constant 8.700000e+01 : f32
// CHECK-NEXT:    %[[B:.*]] = arith.minnumf %[[A]], %[[HI]] : f32
// CHECK-NEXT:    math.exp %[[B]] : f32
// Tanh: exp(2x) within [-87, 87].
// CHECK:         %[[T:.*]] = arith.addf %[[X:.*]], %[[X]] : f32
// CHECK-NEXT:    %[[LO2:.*]] = arith.constant -8.700000e+01 : f32
// CHECK-NEXT:    %[[TA:.*]] = arith.maxnumf %[[T]], %[[LO2]] : f32
// CHECK-NEXT:    %[[HI2:.*]] = arith.constant 8.700000e+01 : f32
// CHECK-NEXT:    %[[TB:.*]] = arith.minnumf %[[TA]], %[[HI2]] : f32
// CHECK-NEXT:    math.exp %[[TB]] : f32
// ELU: expm1(min(x, 0)) from -87.
// CHECK:         %[[M:.*]] = arith.minimumf
// CHECK-NEXT:    %[[LO3:.*]] = arith.constant -8.700000e+01 : f32
// CHECK-NEXT:    %[[MA:.*]] = arith.maxnumf %[[M]], %[[LO3]] : f32
// CHECK-NEXT:    math.expm1 %[[MA]] : f32
// Exp: from below only.
// CHECK:         %[[LO4:.*]] = arith.constant -8.700000e+01 : f32
// CHECK-NEXT:    %[[E:.*]] = arith.maxnumf %{{.*}}, %[[LO4]] : f32
// CHECK-NEXT:    math.exp %[[E]] : f32
func.func @m(%w: tensor<?x?xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", "classes"]})
    -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
  %g = gnn.graph : !gnn.graph
  %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
  %o = gnn.apply_vertex %g (%x) params(%w) : (!gnn.vtensor<?xf32>) params(tensor<?x?xf32>) -> !gnn.vtensor<?xf32> {
  ^bb0(%v: tensor<?xf32>, %wv: tensor<?x?xf32>):
    %t = gnn.linear %v, %wv : (tensor<?xf32>, tensor<?x?xf32>) -> tensor<?xf32>
    %s = gnn.sigmoid %t : tensor<?xf32>
    %h = gnn.tanh %s : tensor<?xf32>
    %e = gnn.elu %h : tensor<?xf32>
    %x2 = gnn.exp %e : tensor<?xf32>
    gnn.yield %x2 : tensor<?xf32>
  }
  %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
  %mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
  %loss = gnn.softmax_cross_entropy %o, %labels, %mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
  return %loss, %o : f32, !gnn.vtensor<?xf32>
}
