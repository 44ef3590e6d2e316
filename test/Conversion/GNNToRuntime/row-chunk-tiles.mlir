// RUN: gnn-opt %S/fused-gather.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="row-chunks=2" | FileCheck %s
// RUN: gnn-opt %S/fused-gather.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="row-chunks=1" | FileCheck %s --check-prefix=WHOLE
// RUN: gnn-opt %S/fused-gather.mlir --gnn-autodiff --gnn-fuse-sag --convert-gnn-to-runtime="row-chunks=2 tile-order=row-column" | FileCheck %s --check-prefix=RC

// In row-column order (tile-order=row-column) the second tile of each
// chunk follows the last chunk's first: input chunk 0 for the rows of
// chunks 0 and 1, then input chunk 1 for both.
// RC-LABEL: func.func @gnn_eval(%arg0: !llvm.ptr) -> f32
// RC:         constant @__gnn_kernel_{{[0-9]+}}
// RC:         call @gnnrtKernelInt(%arg0, %{{.*}}, %[[B0:c0_i64[_0-9]*]])
// RC:         call @gnnrtKernelInt(%arg0, %{{.*}}, %[[B1:[0-9]+]])
// RC-NEXT:    call @gnnrtParallelForRange(%arg0, %{{.*}}, %[[B0]], %[[B1]])
// RC:         call @gnnrtKernelInt(%arg0, %{{.*}}, %[[B0]])
// RC:         call @gnnrtKernelInt(%arg0, %{{.*}}, %[[B1]])
// RC-NEXT:    call @gnnrtParallelForRange(%arg0, %{{.*}}, %[[B1]], %[[V64:[0-9]+]])
// RC-NOT:     call @gnnrtParallelForRange(
// RC:         call @gnnrtKernelInt(%arg0, %{{.*}}, %[[B1]])
// RC:         call @gnnrtKernelInt(%arg0, %{{.*}}, %[[V64]])
// RC-NEXT:    call @gnnrtParallelForRange(%arg0, %{{.*}}, %[[B0]], %[[B1]])
// RC-NOT:     call @gnnrtParallelForRange(
// RC:         call @gnnrtKernelInt(%arg0, %{{.*}}, %[[B1]])
// RC:         call @gnnrtKernelInt(%arg0, %{{.*}}, %[[V64]])
// RC-NEXT:    call @gnnrtParallelForRange(%arg0, %{{.*}}, %[[B1]], %[[V64]])
// RC-NOT:     call @gnnrtParallelForRange(
// RC:         call @gnnrtSetOutput

// Row chunks of a fused gather's kernel (issue 18; RowChunks.h): in each
// row chunk the kernel runs as K tiles, tile i over the edges from input
// chunk i, so that a tile reads one chunk of the neighbours' rows. The
// kernel reads its tile's input range [lo, hi) from two kernel integers
// after its operands' (here 3 and 4; by default 0 and V), finds the range
// of each row's positions by binary search (the other ends ascend within a
// row), sets the row at the tile with lo = 0 and finishes it (a max: 0 for
// a row without edges) at the tile with hi = V. Each tile sets the kernel's
// buffers again, so that the placement sees what it uses (and a buffer it
// fetched again is passed at its new address); where none was, the calls
// are removed after the placement. The input here is
// model @m of fused-gather.mlir (a max gather of exp(src - dst)).

// The evaluation: the kernel's operands and the default range [0, V).
// CHECK-LABEL: func.func @gnn_eval(%arg0: !llvm.ptr) -> f32
// CHECK:         call @gnnrtKernelArg(%arg0, %[[O:.*]], %[[OUT:[0-9]+]])
// CHECK:         call @gnnrtKernelArg(%arg0, %[[S:.*]], %[[H:[0-9]+]])
// CHECK:         call @gnnrtKernelArg(%arg0, %[[D:.*]], %[[H]])
// CHECK:         %[[LO:.*]] = arith.constant 3 : i64
// CHECK:         call @gnnrtKernelInt(%arg0, %[[LO]], %{{.*}})
// CHECK:         %[[HI:.*]] = arith.constant 4 : i64
// CHECK:         call @gnnrtKernelInt(%arg0, %[[HI]], %{{.*}})
// CHECK:         %[[K:.*]] = constant @__gnn_kernel_{{[0-9]+}}
// Chunk 0, tile 0: input rows [0, b_1).
// CHECK:         call @gnnrtKernelInt(%arg0, %{{.*}}, %[[B0:c0_i64[_0-9]*]])
// CHECK:         call @gnnrtKernelInt(%arg0, %{{.*}}, %[[B1:[0-9]+]])
// CHECK-NEXT:    call @gnnrtParallelForRange(%arg0, %[[K]], %[[B0]], %[[B1]])
// Chunk 0, tile 1: input rows [b_1, V) (the buffers are set already: no
// placement moved them in between).
// CHECK-NOT:     call @gnnrtKernelArg(
// CHECK:         call @gnnrtKernelInt(%arg0, %{{.*}}, %[[B1]])
// CHECK:         call @gnnrtKernelInt(%arg0, %{{.*}}, %[[V64:[0-9]+]])
// CHECK-NEXT:    call @gnnrtParallelForRange(%arg0, %[[K]], %[[B0]], %[[B1]])
// Chunk 1 (the kernel's operands set again in the chunk's code), its two
// tiles over the rows [b_1, V).
// CHECK:         call @gnnrtKernelInt(%arg0, %{{.*}}, %[[B0]])
// CHECK:         call @gnnrtKernelInt(%arg0, %{{.*}}, %[[B1]])
// CHECK-NEXT:    call @gnnrtParallelForRange(%arg0, %{{.*}}, %[[B1]], %[[V64]])
// CHECK:         call @gnnrtKernelInt(%arg0, %{{.*}}, %[[B1]])
// CHECK:         call @gnnrtKernelInt(%arg0, %{{.*}}, %[[V64]])
// CHECK-NEXT:    call @gnnrtParallelForRange(%arg0, %{{.*}}, %[[B1]], %[[V64]])
// CHECK-NOT:     call @gnnrtParallelForRange(
// CHECK:         call @gnnrtSetOutput

// The kernel: the range from its integers, the input side's rows (|V|)
// from the next one, two binary searches per row, the row set at the first
// tile, the edges of the tile, the empty rows zeroed at the last.
// CHECK-LABEL: func.func private @__gnn_kernel_4(
// CHECK:         %[[OFFSETS:.*]] = call @gnnrtGraphOffsets(
// CHECK:         %[[OTHER:.*]] = call @gnnrtGraphIndex(
// CHECK:         %[[LO64:.*]] = call @gnnrtKernelIntGet(%arg0, %c3_i64{{.*}})
// CHECK-NEXT:    %[[TLO:.*]] = arith.index_cast %[[LO64]] : i64 to index
// CHECK:         %[[HI64:.*]] = call @gnnrtKernelIntGet(%arg0, %c4_i64{{.*}})
// CHECK-NEXT:    %[[THI:.*]] = arith.index_cast %[[HI64]] : i64 to index
// CHECK:         %[[NV:.*]] = call @gnnrtKernelIntGet(%arg0, %c5_i64{{.*}})
// CHECK-NEXT:    %[[NUMV:.*]] = arith.index_cast %[[NV]] : i64 to index
// CHECK:         scf.for
// CHECK:           %[[P0:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:           %[[P1:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:           %[[Q0:.*]]:2 = scf.while (%{{.*}} = %[[P0]], %{{.*}} = %[[P1]])
// CHECK:             arith.cmpi ult
// CHECK:             memref.load %[[OTHER]]
// CHECK:             arith.cmpi slt
// CHECK:           %[[Q1:.*]]:2 = scf.while (%{{.*}} = %[[Q0]]#0, %{{.*}} = %[[P1]])
// CHECK:           %[[FIRST:.*]] = arith.cmpi eq, %[[TLO]], %c0
// CHECK-NEXT:      %[[LAST:.*]] = arith.cmpi eq, %[[THI]], %[[NUMV]]
// CHECK:           scf.if %[[FIRST]] {
// CHECK:             memref.store
// CHECK:           scf.for %{{.*}} = %[[Q0]]#0 to %[[Q1]]#0 step
// CHECK:             math.exp
// CHECK:           scf.if %[[LAST]] {
// CHECK:             arith.subi %[[P1]], %[[P0]]

// Without row chunks the kernels have no tiles.
// WHOLE-NOT:     scf.while
// WHOLE-NOT:     gnnrtParallelForRange
