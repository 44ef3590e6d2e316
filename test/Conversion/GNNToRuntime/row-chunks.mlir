// Row chunks of the steps over the vertices (convert-gnn-to-runtime
// row-chunks=K, issue 18): a step's code runs K times, chunk k over rows [b_k, b_{k+1})
// with b_k = floor(floor(k V / K) / 32) * 32 (GNNRT_PARALLEL_CHUNK), b_0 = 0
// and b_K = V. A kernel over the vertices becomes gnnrtParallelForRange, a
// GEMM over the vertices takes gnnrtView ranges of A and C at its chunk's
// rows, an aggregation computes its chunk's rows as K tiles over the input
// chunks (gnnrtSpmmRows with input ranges), the loss
// adds up the chunks' shares. A loop over the rows in the function that
// touches only its own row (row_dot; marked gnn.own_row_loop by the
// lowering) runs over the chunk's rows.
// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="row-chunks=3" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s
// A sum over the partial sums a stage leaves per group of 32 rows (ceil(V /
// 32) of them) adds the groups of each chunk's rows, [b_k / 32,
// ceil(b_{k+1} / 32)).
// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="row-chunks=3" 2>/dev/null | FileCheck %s --check-prefix=PARTS
// PARTS-LABEL: func.func @gnn_train_step(
// PARTS:         %[[FIRST:.*]] = arith.divui %c0_i64{{.*}}, %c32_i64{{.*}} : i64
// PARTS:         %[[UP:.*]] = arith.addi %{{.*}}, %c31_i64{{.*}} : i64
// PARTS-NEXT:    %[[LAST:.*]] = arith.divui %[[UP]], %c32_i64{{.*}} : i64
// PARTS-NEXT:    %[[GROUPS:.*]] = arith.subi %[[LAST]], %[[FIRST]] : i64
// PARTS:         call @gnnrtView(
// PARTS-NEXT:    call @gnnrtSumRows(%arg0, %[[GROUPS]],
// PARTS:         call @gnnrtSumRowsAdd(
// PARTS:         call @gnnrtSumRowsAdd(
// CHECK: remark: row chunks: 12 of 12 steps over the vertices run in 3 chunks
// CHECK: remark: row chunks: 5 of 5 steps over the vertices run in 3 chunks
// CHECK-LABEL: func.func @gnn_eval(%arg0: !llvm.ptr)
// CHECK:         %[[V:.*]] = call @gnnrtDim(%arg0, %c0_i64)
// CHECK:         %[[FEATURES:.*]] = call @gnnrtFeatures(%arg0)
// The boundaries, before the first stage's code.
// CHECK:         %[[V64:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK-NEXT:    %[[K:.*]] = arith.constant 3 : i64
// CHECK-NEXT:    %[[UNIT:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[M1:.*]] = arith.muli %[[V64]], %[[UNIT]] : i64
// CHECK-NEXT:    %[[AT1:.*]] = arith.divui %[[M1]], %[[K]] : i64
// CHECK-NEXT:    %[[ALIGN:.*]] = arith.constant 32 : i64
// CHECK-NEXT:    %[[Q1:.*]] = arith.divui %[[AT1]], %[[ALIGN]] : i64
// CHECK-NEXT:    %[[B1:.*]] = arith.muli %[[Q1]], %[[ALIGN]] : i64
// CHECK:         %[[AT2:.*]] = arith.divui %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:    %[[ALIGN2:.*]] = arith.constant 32 : i64
// CHECK-NEXT:    %[[Q2:.*]] = arith.divui %[[AT2]], %[[ALIGN2]] : i64
// CHECK-NEXT:    %[[B2:.*]] = arith.muli %[[Q2]], %[[ALIGN2]] : i64
// CHECK:         %[[H:.*]] = call @gnnrtBuffer(%arg0,
// Chunk 0: the features' rows [0, b_1) times w into the same rows of h.
// CHECK:         %[[R0:.*]] = arith.subi %[[B1]], %[[B0:.*]] : i64
// CHECK-NEXT:    %[[OFF0:.*]] = arith.muli %[[B0]], %[[F:.*]] : i64
// CHECK-NEXT:    %[[N0:.*]] = arith.muli %[[R0]], %[[F]] : i64
// CHECK-NEXT:    %[[A0:.*]] = call @gnnrtView(%arg0, %[[FEATURES]], %[[OFF0]], %[[N0]])
// CHECK:         %[[C0:.*]] = call @gnnrtView(%arg0, %[[H]],
// CHECK-NEXT:    call @gnnrtGemm(%arg0, %{{.*}}, %{{.*}}, %[[R0]], %{{.*}}, %[[F]], %{{.*}}, %[[A0]], %{{.*}}, %{{.*}}, %[[C0]])
// CHECK:         call @gnnrtParallelForRange(%arg0, %{{.*}}, %[[B0]], %[[B1]])
// Chunk 1, then chunk 2 up to V.
// CHECK:         %[[R1:.*]] = arith.subi %[[B2]], %[[B1]] : i64
// CHECK:         call @gnnrtGemm(%arg0, %{{.*}}, %{{.*}}, %[[R1]],
// CHECK:         call @gnnrtParallelForRange(%arg0, %{{.*}}, %[[B1]], %[[B2]])
// CHECK:         %[[R2:.*]] = arith.subi %[[V64]], %[[B2]] : i64
// CHECK:         call @gnnrtGemm(%arg0, %{{.*}}, %{{.*}}, %[[R2]],
// CHECK:         call @gnnrtParallelForRange(%arg0, %{{.*}}, %[[B2]], %[[V64]])
// The aggregation: each chunk's output rows as three tiles, one per input
// chunk in order (the input read a chunk at a time).
// (Each step computes the same boundaries anew.)
// CHECK:         call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN:[0-9]+]], %[[OUT:[0-9]+]], %{{.*}}, %[[S0:c0_i64[_0-9]*]], %[[SB1:[0-9]+]], %[[S0]], %[[SB1]])
// CHECK-NEXT:    call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]], %{{.*}}, %[[S0]], %[[SB1]], %[[SB1]], %[[SB2:[0-9]+]])
// CHECK-NEXT:    call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]], %{{.*}}, %[[S0]], %[[SB1]], %[[SB2]], %[[SV:[0-9]+]])
// CHECK:         call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]], %{{.*}}, %[[SB1]], %[[SB2]], %[[S0]], %[[SB1]])
// CHECK-NEXT:    call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]], %{{.*}}, %[[SB1]], %[[SB2]], %[[SB1]], %[[SB2]])
// CHECK-NEXT:    call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]], %{{.*}}, %[[SB1]], %[[SB2]], %[[SB2]], %[[SV]])
// CHECK:         call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]], %{{.*}}, %[[SB2]], %[[SV]], %[[S0]], %[[SB1]])
// CHECK-NEXT:    call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]], %{{.*}}, %[[SB2]], %[[SV]], %[[SB1]], %[[SB2]])
// CHECK-NEXT:    call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]], %{{.*}}, %[[SB2]], %[[SV]], %[[SB2]], %[[SV]])
// CHECK-NOT:     call @gnnrtSpmmRows(
// The gate's row_dot loops over the rows in the function: each chunk over
// its rows, then the gate's kernel over the same rows.
// CHECK:         %[[LO0:.*]] = arith.index_cast %[[G0:c0_i64[_0-9]*]] : i64 to index
// CHECK-NEXT:    %[[HI0:.*]] = arith.index_cast %[[G1:[0-9]+]] : i64 to index
// CHECK-NEXT:    scf.for %{{.*}} = %[[LO0]] to %[[HI0]] step
// CHECK:         call @gnnrtParallelForRange(%arg0, %{{.*}}, %[[G0]], %[[G1]])
// CHECK:         %[[LO1:.*]] = arith.index_cast %[[G1]] : i64 to index
// CHECK-NEXT:    %[[HI1:.*]] = arith.index_cast %[[G2:[0-9]+]] : i64 to index
// CHECK-NEXT:    scf.for %{{.*}} = %[[LO1]] to %[[HI1]] step
// CHECK:         call @gnnrtParallelForRange(%arg0, %{{.*}}, %[[G1]], %[[G2]])
// CHECK:         %[[LO2:.*]] = arith.index_cast %[[G2]] : i64 to index
// CHECK-NEXT:    %[[HI2:.*]] = arith.index_cast %[[GV:[0-9]+]] : i64 to index
// CHECK-NEXT:    scf.for %{{.*}} = %[[LO2]] to %[[HI2]] step
// CHECK:         call @gnnrtParallelForRange(%arg0, %{{.*}}, %[[G2]], %[[GV]])
// CHECK-NOT:     scf.for %{{.*}} = %c0{{[_0-9]*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:     call @gnnrtParallelFor(
// The logits: three GEMMs.
// CHECK-COUNT-3: call @gnnrtGemm(
// CHECK-NOT:     call @gnnrtGemm(
// The loss: the chunks' shares, added up.
// CHECK:         %[[L0:.*]] = call @gnnrtSoftmaxCrossEntropyRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i64{{.*}}, %[[LB1:[0-9]+]])
// CHECK:         %[[L1:.*]] = call @gnnrtSoftmaxCrossEntropyRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LB1]], %[[LB2:[0-9]+]])
// CHECK:         %[[L2:.*]] = call @gnnrtSoftmaxCrossEntropyRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LB2]], %{{.*}})
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[L0]], %[[L1]] : f32
// CHECK-NEXT:    %[[LOSS:.*]] = arith.addf %[[S]], %[[L2]] : f32
// CHECK-NEXT:    call @gnnrtSetOutput(%arg0, %{{.*}}, %[[LOSS]])
// CHECK-NEXT:    return %[[LOSS]] : f32
//
// The training step: the dropout's mask is computed per element at its row
// and the stage's dropout parameters are taken once, before the chunks.
// CHECK-LABEL: func.func @gnn_train_step(%arg0: !llvm.ptr)
// CHECK-COUNT-3: call @gnnrtDropoutParam(
// CHECK-NOT:     call @gnnrtDropoutParam(
// CHECK:         call @gnnrtParallelForRange(
// CHECK:         call @gnnrtParallelForRange(
// CHECK:         call @gnnrtParallelForRange(
// CHECK:         return
//
// K = 1: nothing changes.
// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="row-chunks=1" 2>&1 | FileCheck %s --check-prefix=WHOLE
// WHOLE-NOT: remark: row chunks
// WHOLE-NOT: gnnrtParallelForRange
// WHOLE-NOT: gnnrtView
//
// Row-column order (tile-order=row-column, the baseline of NeuGraph's
// column-row one): an aggregation's step has no other work over the rows,
// so each chunk runs its first tile in place and the other tiles follow
// the last chunk input chunk by input chunk: the input chunk stays while
// the output chunks stream. Each row still adds its tiles in input order.
// The other steps keep their code.
// RUN: gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="row-chunks=3 tile-order=row-column" 2>&1 | FileCheck %s --check-prefix=RC
// RC: remark: row chunks: 12 of 12 steps over the vertices run in 3 chunks; tiles in row-column order: 2 aggregations{{$}}
// RC: remark: row chunks: 5 of 5 steps over the vertices run in 3 chunks; tiles in row-column order: 1 aggregation{{$}}
// RC-LABEL: func.func @gnn_eval(%arg0: !llvm.ptr)
// RC:         call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN:[0-9]+]], %[[OUT:[0-9]+]], %{{.*}}, %[[S0:c0_i64[_0-9]*]], %[[SB1:[0-9]+]], %[[S0]], %[[SB1]])
// RC:         call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]], %{{.*}}, %[[SB1]], %[[SB2:[0-9]+]], %[[S0]], %[[SB1]])
// RC:         call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]], %{{.*}}, %[[SB2]], %[[SV:[0-9]+]], %[[S0]], %[[SB1]])
// RC-NEXT:    call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]], %{{.*}}, %[[S0]], %[[SB1]], %[[SB1]], %[[SB2]])
// RC-NEXT:    call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]], %{{.*}}, %[[SB1]], %[[SB2]], %[[SB1]], %[[SB2]])
// RC-NEXT:    call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]], %{{.*}}, %[[SB2]], %[[SV]], %[[SB1]], %[[SB2]])
// RC-NEXT:    call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]], %{{.*}}, %[[S0]], %[[SB1]], %[[SB2]], %[[SV]])
// RC-NEXT:    call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]], %{{.*}}, %[[SB1]], %[[SB2]], %[[SB2]], %[[SV]])
// RC-NEXT:    call @gnnrtSpmmRows(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]], %{{.*}}, %[[SB2]], %[[SV]], %[[SB2]], %[[SV]])
// RC-NOT:     call @gnnrtSpmmRows(
// The gate's step (a row_dot loop and a kernel) keeps its chunks.
// RC:         scf.for
// RC:         call @gnnrtParallelForRange(
// RC:         scf.for
// RC:         call @gnnrtParallelForRange(
// RC-LABEL: func.func @gnn_train_step(%arg0: !llvm.ptr)
//
// RUN: not gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="row-chunks=3 tile-order=rows" 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: error: convert-gnn-to-runtime: option tile-order must be column-row or row-column, not 'rows'
// RUN: not gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="tile-order=row-column" 2>&1 | FileCheck %s --check-prefix=ORDER-K
// ORDER-K: error: convert-gnn-to-runtime: option tile-order=row-column needs row chunks (option row-chunks above 1)
//
// RUN: not gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="row-chunks=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: convert-gnn-to-runtime: option row-chunks must be in [1, 256] but is 0
// RUN: not gnn-opt %s --gnn-autodiff --convert-gnn-to-runtime="row-chunks=257" 2>&1 | FileCheck %s --check-prefix=BIG
// BIG: error: convert-gnn-to-runtime: option row-chunks must be in [1, 256] but is 257

module {
  func.func @mlp(
      %w: tensor<?x8xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]},
      %att: tensor<8xf32> {gnn.param = "att", gnn.init = #gnn.init<glorot>},
      %w2: tensor<8x?xf32> {gnn.param = "w2", gnn.init = #gnn.init<glorot>, gnn.dims = ["", "classes"]})
      -> (f32, !gnn.vtensor<?xf32>) attributes {gnn.model} {
    %g = gnn.graph : !gnn.graph
    %x = gnn.input %g "features" : !gnn.vtensor<?xf32>
    %h = gnn.apply_vertex %g (%x) params(%w) : (!gnn.vtensor<?xf32>) params(tensor<?x8xf32>) -> !gnn.vtensor<8xf32> {
    ^bb0(%r: tensor<?xf32>, %wt: tensor<?x8xf32>):
      %t0 = gnn.linear %r, %wt : (tensor<?xf32>, tensor<?x8xf32>) -> tensor<8xf32>
      %t1 = gnn.relu %t0 : tensor<8xf32>
      %t2 = gnn.dropout %t1 {rate = 0.5 : f64} : tensor<8xf32>
      gnn.yield %t2 : tensor<8xf32>
    }
    %s = gnn.scatter %g, %h from src : !gnn.vtensor<8xf32> -> !gnn.etensor<8xf32>
    %a = gnn.gather sum %g, %s to dst : !gnn.etensor<8xf32> -> !gnn.vtensor<8xf32>
    %gate = gnn.apply_vertex %g (%a) params(%att) : (!gnn.vtensor<8xf32>) params(tensor<8xf32>) -> !gnn.vtensor<8xf32> {
    ^bb0(%r: tensor<8xf32>, %at: tensor<8xf32>):
      %t0 = gnn.row_dot %r, %at : tensor<8xf32> -> tensor<1xf32>
      %t1 = gnn.mul %r, %t0 : (tensor<8xf32>, tensor<1xf32>) -> tensor<8xf32>
      gnn.yield %t1 : tensor<8xf32>
    }
    %logits = gnn.apply_vertex %g (%gate) params(%w2) : (!gnn.vtensor<8xf32>) params(tensor<8x?xf32>) -> !gnn.vtensor<?xf32> {
    ^bb0(%r: tensor<8xf32>, %wt: tensor<8x?xf32>):
      %t0 = gnn.linear %r, %wt : (tensor<8xf32>, tensor<8x?xf32>) -> tensor<?xf32>
      gnn.yield %t0 : tensor<?xf32>
    }
    %labels = gnn.input %g "labels" : !gnn.vtensor<i64>
    %train_mask = gnn.input %g "train_mask" : !gnn.vtensor<i1>
    %loss = gnn.softmax_cross_entropy %logits, %labels, %train_mask : !gnn.vtensor<?xf32>, !gnn.vtensor<i64>, !gnn.vtensor<i1> -> f32
    return %loss, %logits : f32, !gnn.vtensor<?xf32>
  }
}
