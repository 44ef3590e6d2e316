// The CUDA target's kernels (convert-gnn-to-runtime target=cuda,
// GPUKernelEmitter.cpp): each kernel is a gpu.func of the module's
// gpu.module, launched by gpu.launch_func in blocks of 256 threads. A fused
// gather (GAT has vertex stages and fused gathers, which read the graph's
// arrays) gives each destination row to a warp: thread t works on row t / 32
// under a guard, its lane t % 32 taking the output columns lane, lane + 32,
// ...; ceil(ceil(n / 1) * 32 / 256) blocks. Its operands, and the graph's
// arrays the host gets with gnnrtGraphOffsets / gnnrtGraphIndex, are the
// kernel's parameters, n last.

// RUN: gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="target=cuda" 2>/dev/null | FileCheck %s
// CHECK: module attributes {gpu.container_module}
// CHECK: func.func @gnn_train_step(%arg0: !llvm.ptr) -> f32
// CHECK: %[[OFF:[0-9]+]] = call @gnnrtGraphOffsets(%arg0, %{{.*}}) : (!llvm.ptr, i64) -> memref<?xi64>
// CHECK: %[[IDX:[0-9]+]] = call @gnnrtGraphIndex(%arg0, %{{.*}}) : (!llvm.ptr, i64) -> memref<?xi32>
// CHECK: %[[ROWS:[0-9]+]] = arith.ceildivsi %[[N:[0-9]+]], %c1{{.*}} : index
// CHECK: %[[THREADS:[0-9]+]] = arith.muli %[[ROWS]], %c32{{.*}} : index
// CHECK: %[[NI64:[0-9]+]] = arith.index_cast %[[N]] : index to i64
// CHECK: %[[B:[0-9]+]] = arith.ceildivsi %[[THREADS]], %c256{{.*}} : index
// CHECK: %[[BLOCKS:[0-9]+]] = arith.maxsi %[[B]], %{{.*}} : index
// CHECK: gpu.launch_func  @gnn_kernels::@[[K:__gnn_kernel_[0-9]+]] blocks in (%[[BLOCKS]], %{{.*}}, %{{.*}}) threads in (%c256{{.*}}, %{{.*}}, %{{.*}}) args({{.*}}, %[[OFF]] : memref<?xi64>, %[[IDX]] : memref<?xi32>, %{{[0-9]+}} : i64, %[[NI64]] : i64)
// CHECK: gpu.module @gnn_kernels {
// CHECK: gpu.func @[[K]]({{.*}}: memref<?xi64>, %[[GIDX:arg[0-9]+]]: memref<?xi32>, %{{arg[0-9]+}}: i64, %[[GN:arg[0-9]+]]: i64) kernel {
// CHECK-NEXT: %[[KN:[0-9]+]] = arith.index_cast %[[GN]] : i64 to index
// CHECK-NEXT: %[[BID:.*]] = gpu.block_id  x
// CHECK-NEXT: %[[BDIM:.*]] = gpu.block_dim  x
// CHECK-NEXT: %[[TID:.*]] = gpu.thread_id  x
// CHECK-NEXT: %[[T0:[0-9]+]] = arith.muli %[[BID]], %[[BDIM]] : index
// CHECK-NEXT: %[[T:[0-9]+]] = arith.addi %[[T0]], %[[TID]] : index
// CHECK-NEXT: %[[C32:.*]] = arith.constant 32 : index
// CHECK-NEXT: %[[LANE:[0-9]+]] = arith.remui %[[T]], %[[C32]] : index
// CHECK-NEXT: %[[W:[0-9]+]] = arith.divui %[[T]], %[[C32]] : index
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[BEGIN:[0-9]+]] = arith.muli %[[W]], %[[C1]] : index
// CHECK-NEXT: %[[E0:[0-9]+]] = arith.addi %[[BEGIN]], %[[C1]] : index
// CHECK-NEXT: %[[END:[0-9]+]] = arith.minsi %[[E0]], %[[KN]] : index
// CHECK-NEXT: %[[ANY:[0-9]+]] = arith.cmpi slt, %[[BEGIN]], %[[KN]] : index
// CHECK-NEXT: scf.if %[[ANY]] {
// CHECK: %{{c0.*}} = arith.constant 0 : index
// CHECK-NEXT: %{{c1.*}} = arith.constant 1 : index
// CHECK-NEXT: %[[STEP:.*]] = arith.constant 32 : index
// CHECK: scf.for %{{.*}} = %[[BEGIN]] to %[[END]]
// The output row's columns from the lane, in steps of 32.
// CHECK: scf.for %{{.*}} = %[[LANE]] to %{{.*}} step %[[STEP]]
// CHECK: memref.load %[[GIDX]]
// CHECK: gpu.return

// Row reductions (row_dot, reduce_sum) in a fused gather. Of unknown width
// (GAT's second layer: rows of `classes`) the lanes split the elements and
// add their partial sums by a butterfly of xor shuffles (offsets 16 to 1),
// every lane ending with the whole sum. A head of 8 (the first layer's
// 4 x 8) is summed whole in each lane: 8 loads are cheaper than 5 shuffles.
// RUN: gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="target=cuda" 2>/dev/null | FileCheck %s --check-prefix=RED
// RED-LABEL: gpu.func @__gnn_kernel_1(
// RED: scf.for %{{.*}} = %c0{{(_[0-9]+)?}} to %c8{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args
// RED-NOT: gpu.shuffle
// RED-LABEL: gpu.func @__gnn_kernel_11(
// RED: %[[LANE:[0-9]+]] = arith.remui %{{.*}}, %{{c32.*}} : index
// RED: %[[STEP:c32.*]] = arith.constant 32 : index
// RED: %[[P:[0-9]+]] = scf.for %{{.*}} = %[[LANE]] to %{{.*}} step %[[STEP]] iter_args
// RED: arith.mulf
// RED-NEXT: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
// RED: %[[S16:.*]], %{{.*}} = gpu.shuffle  xor %[[P]], %c16_i32, %c32_i32{{.*}} : f32
// RED-NEXT: %[[A16:[0-9]+]] = arith.addf %[[P]], %[[S16]] : f32
// RED: %[[S8:.*]], %{{.*}} = gpu.shuffle  xor %[[A16]], %c8_i32{{.*}} : f32
// RED-NEXT: %[[A8:[0-9]+]] = arith.addf %[[A16]], %[[S8]] : f32
// RED: %[[S4:.*]], %{{.*}} = gpu.shuffle  xor %[[A8]], %c4_i32{{.*}} : f32
// RED-NEXT: %[[A4:[0-9]+]] = arith.addf %[[A8]], %[[S4]] : f32
// RED: %[[S2:.*]], %{{.*}} = gpu.shuffle  xor %[[A4]], %c2_i32{{.*}} : f32
// RED-NEXT: %[[A2:[0-9]+]] = arith.addf %[[A4]], %[[S2]] : f32
// RED: %[[S1:.*]], %{{.*}} = gpu.shuffle  xor %[[A2]], %c1_i32{{.*}} : f32
// RED-NEXT: %[[SUM:[0-9]+]] = arith.addf %[[A2]], %[[S1]] : f32
// RED-NEXT: arith.constant 1 : index
// RED-NEXT: arith.muli
// RED-NEXT: memref.store %[[SUM]]

// A fused gather's output row in registers: lane l keeps columns l, l + 32,
// ... (GAT's 4 x 8 rows: one), reading at the column clamped to the row
// (its head: column / 8), carried through the edge loop and stored once
// where the column is in the row -- no load and store of the row per edge.
// The edge loop is unrolled by 4 (then a loop over the rest of the edges),
// so that a long row's edges issue their loads together.
// RUN: gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="target=cuda" 2>/dev/null | FileCheck %s --check-prefix=REG
// REG-LABEL: gpu.func @__gnn_kernel_7(
// REG: %[[LANE:[0-9]+]] = arith.remui
// REG: %[[COL:[0-9]+]] = arith.addi %[[LANE]], %{{c0.*}} : index
// REG-NEXT: %[[VALID:[0-9]+]] = arith.cmpi ult, %[[COL]], %[[W:c32.*]] : index
// REG-NEXT: %[[READ:[0-9]+]] = arith.minui %[[COL]], %{{[0-9]+}} : index
// REG-NEXT: %{{c8.*}} = arith.constant 8 : index
// REG-NEXT: %[[HEAD:[0-9]+]] = arith.divui %[[READ]], %{{c8.*}} : index
// REG: %[[STEP4:[0-9]+]] = arith.muli %{{c1.*}}, %{{c4.*}} : index
// REG-NEXT: %[[MAIN:[0-9]+]] = scf.for %{{.*}} step %[[STEP4]] iter_args(%{{.*}}) -> (f32) {
// REG-COUNT-4: memref.load %arg1[
// REG: %[[ACC:[0-9]+]] = scf.for %{{.*}} step %{{c1.*}} iter_args(%[[OLD:.*]] = %[[MAIN]]) -> (f32) {
// REG-NOT: memref.store %{{.*}}, %arg0[
// REG: %[[AT:[0-9]+]] = arith.addi %{{[0-9]+}}, %[[READ]] : index
// REG-NEXT: %[[X:[0-9]+]] = memref.load %arg1[%[[AT]]] : memref<?xf32>
// REG-NEXT: %[[COEF:[0-9]+]] = memref.load %{{.*}}[%[[HEAD]]] : memref<4xf32>
// REG-NEXT: %[[TERM:[0-9]+]] = arith.mulf %[[X]], %[[COEF]] : f32
// REG-NEXT: %[[NEW:[0-9]+]] = arith.addf %[[OLD]], %[[TERM]] : f32
// REG-NEXT: scf.yield %[[NEW]] : f32
// REG: %[[IDX:[0-9]+]] = arith.addi %{{[0-9]+}}, %[[COL]] : index
// REG-NEXT: scf.if %[[VALID]] {
// REG-NEXT: memref.store %[[ACC]], %arg0[%[[IDX]]] : memref<?xf32>

// An output of unknown width (the second layer's `classes`) takes two
// columns per lane where the row has at most 64, checked at run time: the
// kernel holds both versions.
// RUN: gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="target=cuda" 2>/dev/null | FileCheck %s --check-prefix=DYN
// DYN-LABEL: gpu.func @__gnn_kernel_17(
// DYN: %[[FITS:[0-9]+]] = arith.cmpi ule, %{{.*}}, %{{c64.*}} : index
// DYN: scf.if %[[FITS]] {
// DYN: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32) {
// DYN: } else {
// DYN: memref.store %{{.*}}, %arg0[
// DYN: scf.for
// DYN: memref.load %arg0[
// DYN: memref.store %{{.*}}, %arg0[

// Long rows in pieces: each fused gather is three kernels. The rows'
// kernel (kernel 1: GAT's max of scores) leaves a row of more edges than
// the runtime's piece (gnnrtGraphPieceEdges, a parameter; 0: none split) to
// the others; the pieces' kernel (2), a warp per piece i, takes long row
// j = pieceRow[i], its k-th piece k = i - pieceOffsets[j], positions
// [p0 + k P, min(p0 + k P + P, p1)), into scratch row i; the combine (3), a
// warp per long row, folds its pieces' partials in order (max: strictly
// greater, so ties keep the earlier piece) into the output row.
// RUN: gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="target=cuda" 2>/dev/null | FileCheck %s --check-prefix=PIECES
// PIECES-LABEL: gpu.func @__gnn_kernel_1(
// PIECES-SAME: %[[P:arg[0-9]+]]: i64, %{{arg[0-9]+}}: i64) kernel {
// PIECES: %[[PI:[0-9]+]] = arith.index_cast %[[P]] : i64 to index
// PIECES: %[[D:[0-9]+]] = arith.subi
// PIECES-NEXT: %[[SHORT:[0-9]+]] = arith.cmpi ule, %[[D]], %[[PI]] : index
// PIECES-NEXT: %[[NONE:[0-9]+]] = arith.cmpi eq, %[[PI]], %{{c0.*}} : index
// PIECES-NEXT: %[[WHOLE:[0-9]+]] = arith.ori %[[NONE]], %[[SHORT]] : i1
// PIECES-NEXT: scf.if %[[WHOLE]] {
// PIECES-LABEL: gpu.func @__gnn_kernel_2(
// PIECES: scf.for %[[I:arg[0-9]+]] =
// PIECES-NEXT: %[[J32:[0-9]+]] = memref.load %{{arg[0-9]+}}[%[[I]]] : memref<?xi32>
// PIECES-NEXT: %[[J:[0-9]+]] = arith.index_cast %[[J32]] : i32 to index
// PIECES-NEXT: memref.load %{{arg[0-9]+}}[%[[J]]] : memref<?xi32>
// PIECES: %[[F64:[0-9]+]] = memref.load %{{arg[0-9]+}}[%[[J]]] : memref<?xi64>
// PIECES-NEXT: %[[F:[0-9]+]] = arith.index_cast %[[F64]] : i64 to index
// PIECES-NEXT: %[[K:[0-9]+]] = arith.subi %[[I]], %[[F]] : index
// PIECES-NEXT: memref.load
// PIECES-NEXT: %[[P0:[0-9]+]] = arith.index_cast %{{[0-9]+}} : i64 to index
// PIECES-NEXT: arith.addi
// PIECES-NEXT: memref.load
// PIECES-NEXT: %[[P1:[0-9]+]] = arith.index_cast %{{[0-9]+}} : i64 to index
// PIECES-NEXT: %[[KP:[0-9]+]] = arith.muli %[[K]], %[[PIECE:[0-9]+]] : index
// PIECES-NEXT: %[[Q0:[0-9]+]] = arith.addi %[[P0]], %[[KP]] : index
// PIECES-NEXT: %[[END:[0-9]+]] = arith.addi %[[Q0]], %[[PIECE]] : index
// PIECES-NEXT: %[[Q1:[0-9]+]] = arith.minui %[[END]], %[[P1]] : index
// PIECES-NEXT: arith.muli %[[I]], %{{[0-9]+}} : index
// PIECES: scf.for %{{.*}} = %[[Q0]] to %{{[0-9]+}} step %{{[0-9]+}} iter_args
// PIECES-LABEL: gpu.func @__gnn_kernel_3(
// PIECES: memref.load %{{arg[0-9]+}}[%[[J3:arg[0-9]+]]] : memref<?xi64>
// PIECES-NEXT: %[[K0:[0-9]+]] = arith.index_cast %{{[0-9]+}} : i64 to index
// PIECES-NEXT: arith.addi %[[J3]], %{{c1.*}} : index
// PIECES-NEXT: memref.load
// PIECES-NEXT: %[[K1:[0-9]+]] = arith.index_cast %{{[0-9]+}} : i64 to index
// PIECES-NEXT: %[[K0N:[0-9]+]] = arith.addi %[[K0]], %{{c1.*}} : index
// PIECES: %[[FIRST:[0-9]+]] = memref.load %[[SCRATCH:arg[0-9]+]][%{{[0-9]+}}] : memref<?xf32>
// PIECES-NEXT: %[[FOLD:[0-9]+]] = scf.for %{{.*}} = %[[K0N]] to %[[K1]] step %{{c1.*}} iter_args(%[[BEST:.*]] = %[[FIRST]]) -> (f32) {
// PIECES: %[[X:[0-9]+]] = memref.load %[[SCRATCH]][
// PIECES-NEXT: %[[GT:[0-9]+]] = arith.cmpf ogt, %[[X]], %[[BEST]] : f32
// PIECES-NEXT: %[[M:[0-9]+]] = arith.select %[[GT]], %[[X]], %[[BEST]] : f32
// PIECES-NEXT: scf.yield %[[M]] : f32
// PIECES: memref.store %[[FOLD]], %arg0[

// The CPU target has no lanes: the same reduction is one loop from 0.
// RUN: gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime 2>/dev/null | FileCheck %s --check-prefix=CPURED
// CPURED-NOT: gpu.shuffle
// CPURED: scf.for %{{.*}} = %{{c0.*}} to %{{.*}} step %{{c1.*}} iter_args
// CPURED-NOT: gpu.shuffle

// The vertex stages: a thread per row.
// RUN: gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="target=cuda" 2>/dev/null | FileCheck %s --check-prefix=STAGE
// STAGE: gpu.func @__gnn_kernel_0(
// STAGE: %[[T:[0-9]+]] = arith.addi
// STAGE-NEXT: %[[C1:.*]] = arith.constant 1 : index
// STAGE-NEXT: arith.muli %[[T]], %[[C1]] : index

// No CPU kernels, no kernel arguments through the context.
// RUN: gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="target=cuda" 2>/dev/null | FileCheck %s --check-prefix=NOCPU
// NOCPU-NOT: gnnrtParallelFor
// NOCPU-NOT: gnnrtKernelArg
// NOCPU-NOT: func.func private @__gnn_kernel

// The CPU target (the default) has no gpu.module.
// RUN: gnn-opt %examples/models/gat.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime 2>/dev/null | FileCheck %s --check-prefix=CPU
// CPU-NOT: gpu.container_module
// CPU: call @gnnrtParallelFor
// CPU-NOT: gpu.module

// RUN: not gnn-opt %examples/models/gat.mlir --gnn-autodiff --convert-gnn-to-runtime="target=tpu" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: convert-gnn-to-runtime: option target must be cpu or cuda, not 'tpu'
