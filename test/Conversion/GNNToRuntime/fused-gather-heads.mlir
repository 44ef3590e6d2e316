// RUN: gnn-opt %examples/models/gat.mlir --gnn-train-pipeline 2>/dev/null | gnn-opt --convert-gnn-to-runtime | FileCheck %s

// GAT's fused kernels over heads x F rows (4 x 8 here). The loops over a
// row's elements are nests over the heads, so a per-head coefficient is
// loop-invariant in the inner loop over F and no element divides its index
// by F; the static widths are constants (no runtime width lookups for
// them); and the per-edge row reductions (GAT backward's grad_dst . Wh_src)
// add with `reassoc`, so LLVM vectorises them instead of one chain of
// dependent adds.

// CHECK-LABEL: func.func private @__gnn_kernel_
// CHECK-NOT:     arith.divui
// CHECK:         %[[H4:.*]] = arith.constant 4 : index
// CHECK:         scf.for %[[V:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step
// CHECK:             scf.for %[[H:.*]] = %{{.*}} to %[[H4]] step
// CHECK:               %[[BASE:.*]] = arith.muli %[[H]], %[[F:.*]] : index
// CHECK:               scf.for %[[I:.*]] = %{{.*}} to %[[F]] step
// CHECK:                 arith.addi %[[BASE]], %[[I]] : index
// CHECK:                 memref.load %{{.*}}[%[[H]]] : memref<4xf32>
// CHECK-NOT:     arith.divui
// CHECK:         func.func private @__gnn_kernel_
// CHECK:         arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
