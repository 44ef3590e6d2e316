// Level rows (convert-gnn-to-runtime level-rows=true, gnn-compile's default;
// issue 21, docs/MiniBatch.md "The program on blocks"): each step of the
// training step computes the first n_l rows of its level (gnnrtLevelRows,
// read once at the start; |V| on a whole graph). GraphSAGE-mean has 2
// hops: the loss and the second layer's steps run over the seeds (n_2),
// the first layer's over the rows the second aggregation reads (n_1), the
// first aggregation over n_1 destinations from every source; backward, the
// sum to the sources runs over n_1 rows and only the edges to the n_2
// destinations its gradient rows reach, and the root term's gradient,
// computed on n_2 rows, is zeroed up to n_1 where the sum reads it.
// RUN: gnn-opt %examples/models/sage_mean.mlir --gnn-train-pipeline 2>/dev/null | gnn-opt --convert-gnn-to-runtime="level-rows=true" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s
// RUN: gnn-opt %examples/models/sage_mean.mlir --gnn-train-pipeline 2>/dev/null | gnn-opt --convert-gnn-to-runtime 2>&1 | FileCheck %s --check-prefix=OFF
// For GAT, its stages' partial sums of the attention gradients (per group of 32
// rows) are summed over the groups of the level's rows.
// RUN: gnn-opt %examples/models/gat.mlir --gnn-train-pipeline 2>/dev/null | gnn-opt --convert-gnn-to-runtime="level-rows=true" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=GAT
// Row chunks split the rows themselves: no levels with them.
// RUN: gnn-opt %examples/models/sage_mean.mlir --gnn-train-pipeline 2>/dev/null | gnn-opt --convert-gnn-to-runtime="level-rows=true row-chunks=2" 2>&1 | FileCheck %s --check-prefix=OFF

// CHECK: remark: level rows: 17 steps compute the rows of their level of 2 hops
// CHECK-LABEL: func.func @gnn_eval(%arg0: !llvm.ptr)
// CHECK-NOT: gnnrtLevelRows
// CHECK-LABEL: func.func @gnn_train_step(%arg0: !llvm.ptr)
// CHECK:         %[[V:.*]] = call @gnnrtDim(%arg0, %c0_i64)
// CHECK-NEXT:    %[[VI:.*]] = arith.index_cast %[[V]] : i64 to index
// CHECK:         call @gnnrtLevelRows(%arg0, %c0_i64{{.*}})
// CHECK:         %[[L1:.*]] = call @gnnrtLevelRows(%arg0, %c1_i64{{.*}})
// CHECK-NEXT:    %[[N1:.*]] = arith.index_cast %[[L1]] : i64 to index
// CHECK:         %[[L2:.*]] = call @gnnrtLevelRows(%arg0, %c2_i64{{.*}})
// CHECK-NEXT:    %[[N2:.*]] = arith.index_cast %[[L2]] : i64 to index
// The first aggregation (a mean to the destinations): rows [0, n_1), every
// source.
// CHECK:         call @gnnrtParallelFor(
// CHECK:         %[[R1:.*]] = arith.index_cast %[[N1]] : index to i64
// CHECK-NEXT:    %[[ALL:.*]] = arith.index_cast %[[VI]] : index to i64
// CHECK:         call @gnnrtSpmmRows(%arg0, %c1_i64{{.*}}, %c1_i64{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i64{{.*}}, %[[R1]], %c0_i64{{.*}}, %[[ALL]])
// The second: rows [0, n_2), from the n_1 rows of the first layer.
// CHECK:         call @gnnrtParallelForRange
// CHECK-NEXT:    arith.constant 0 : i64
// CHECK:         %[[R2:.*]] = arith.index_cast %[[N2]] : index to i64
// CHECK-NEXT:    %[[ALL2:.*]] = arith.index_cast %[[VI]] : index to i64
// CHECK:         call @gnnrtSpmmRows(%arg0, %c1_i64{{.*}}, %c1_i64{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i64{{.*}}, %[[R2]], %c0_i64{{.*}}, %[[ALL2]])
// The loss over the seeds' rows.
// CHECK:         call @gnnrtSoftmaxCrossEntropyRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i64{{.*}}, %c0_i64{{.*}}, %{{.*}})
// The sum to the sources: n_1 rows, from the n_2 destinations.
// CHECK:         %[[S1:.*]] = arith.index_cast %[[N1]] : index to i64
// CHECK-NEXT:    %[[S2:.*]] = arith.index_cast %[[N2]] : index to i64
// CHECK:         call @gnnrtSpmmRows(%arg0, %c0_i64{{.*}}, %c0_i64{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i64{{.*}}, %[[S1]], %c0_i64{{.*}}, %[[S2]])
// The root term's gradient: computed on n_2 rows, zero up to n_1.
// CHECK:         call @gnnrtGemm
// CHECK:         %[[GAP:.*]] = arith.subi %[[N1]], %[[N2]] : index
// CHECK:         call @gnnrtZeroRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}})

// OFF-NOT: level rows
// OFF-NOT: gnnrtLevelRows
// OFF-NOT: gnnrtZeroRows

// GAT: remark: level rows: 25 steps compute the rows of their level of 2 hops
// GAT-LABEL: func.func @gnn_train_step(
// GAT:         %[[L2:.*]] = call @gnnrtLevelRows(%arg0, %c2_i64{{.*}})
// GAT:         %[[UP:.*]] = arith.addi %{{.*}}, %c31_i64{{.*}} : i64
// GAT-NEXT:    %[[LAST:.*]] = arith.divui %[[UP]], %c32_i64{{.*}} : i64
// GAT-NEXT:    %[[GROUPS:.*]] = arith.subi %[[LAST]], %{{.*}} : i64
// GAT:         call @gnnrtSumRows(%arg0, %[[GROUPS]],
