//===- GNNDialectTest.cpp - building gnn IR through the C++ API -----------===//

#include "gnn/IR/GNNOps.h"
#include "gnn/InitAll.h"
#include "gnn/Pipelines/Pipelines.h"
#include "gnn/Support/OutOfMemory.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::gnn;

namespace {

class GNNDialectTest : public ::testing::Test {
protected:
  GNNDialectTest() {
    DialectRegistry registry;
    registerAllGNNDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Collects the diagnostics emitted while `fn` runs.
  std::string diagnosticsOf(llvm::function_ref<void()> fn) {
    std::string messages;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      messages += diag.str() + "\n";
      return success();
    });
    fn();
    return messages;
  }

  MLIRContext context;
};

/// One GCN layer built op by op: scatter, apply_edge (weight the source row),
/// gather sum, apply_vertex (linear + relu).
TEST_F(GNNDialectTest, BuildsAndVerifiesGCNLayer) {
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  Type f32 = b.getF32Type();
  auto graphType = GraphType::get(&context);
  auto vIn = VertexTensorType::get({8}, f32);
  auto eIn = EdgeTensorType::get({8}, f32);
  auto eNorm = EdgeTensorType::get({1}, f32);
  auto vOut = VertexTensorType::get({4}, f32);
  auto weightType = RankedTensorType::get({8, 4}, f32);

  auto fn = b.create<func::FuncOp>(
      loc, "layer",
      b.getFunctionType({graphType, vIn, eNorm, weightType}, {vOut}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value g = entry->getArgument(0), h = entry->getArgument(1),
        norm = entry->getArgument(2), w = entry->getArgument(3);

  Value s = b.create<ScatterOp>(loc, eIn, g, h, Side::Src);
  auto edge = b.create<ApplyEdgeOp>(loc, TypeRange{eIn}, g, ValueRange{s, norm},
                                    ValueRange{});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&edge.getBody().front());
    auto args = edge.getInputArgs();
    EXPECT_EQ(args[0].getType(), eIn.getRowType());
    EXPECT_EQ(args[1].getType(), eNorm.getRowType());
    Value m = b.create<MulOp>(loc, eIn.getRowType(), args[0], args[1]);
    b.create<YieldOp>(loc, ValueRange{m});
  }
  Value a = b.create<GatherOp>(loc, vIn, g, edge.getResult(0), Accumulator::Sum,
                               Side::Dst);
  auto vertex = b.create<ApplyVertexOp>(loc, TypeRange{vOut}, g, ValueRange{a},
                                        ValueRange{w});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&vertex.getBody().front());
    EXPECT_EQ(vertex.getParamArgs().size(), 1u);
    Value t =
        b.create<LinearOp>(loc, vOut.getRowType(), vertex.getInputArgs()[0],
                           vertex.getParamArgs()[0]);
    Value r = b.create<ReluOp>(loc, t);
    b.create<YieldOp>(loc, ValueRange{r});
  }
  b.create<func::ReturnOp>(loc, vertex.getResult(0));

  EXPECT_TRUE(succeeded(verify(*module)));
  EXPECT_EQ(vertex.getYield().getValues().size(), 1u);

  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  EXPECT_NE(text.find("gnn.scatter %arg0, %arg1 from src"), std::string::npos)
      << text;
  EXPECT_NE(text.find("gnn.gather sum"), std::string::npos) << text;
  EXPECT_NE(text.find("params(%arg3)"), std::string::npos) << text;
}

/// A verifier error built through the C++ API names the expected and actual
/// types.
TEST_F(GNNDialectTest, RejectsMismatchedScatter) {
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  Type f32 = b.getF32Type();
  auto fn = b.create<func::FuncOp>(
      loc, "bad",
      b.getFunctionType(
          {GraphType::get(&context), VertexTensorType::get({8}, f32)}, {}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  b.create<ScatterOp>(loc, EdgeTensorType::get({4}, f32), entry->getArgument(0),
                      entry->getArgument(1), Side::Dst);
  b.create<func::ReturnOp>(loc);

  std::string diags =
      diagnosticsOf([&] { EXPECT_TRUE(failed(verify(*module))); });
  EXPECT_NE(diags.find("result rows 'tensor<4xf32>' must equal the input "
                       "rows 'tensor<8xf32>'"),
            std::string::npos)
      << diags;
}

/// Row tensor types: row types, dynamic widths, checked construction.
TEST_F(GNNDialectTest, RowTensorTypes) {
  Type f32 = Float32Type::get(&context);
  auto heads = VertexTensorType::get({4, ShapedType::kDynamic}, f32);
  EXPECT_EQ(heads.getRowRank(), 2);
  EXPECT_TRUE(heads.hasDynamicRow());
  EXPECT_EQ(heads.getRowType(),
            RankedTensorType::get({4, ShapedType::kDynamic}, f32));
  auto labels = VertexTensorType::get({}, IntegerType::get(&context, 64));
  EXPECT_EQ(labels.getRowRank(), 0);
  EXPECT_FALSE(labels.hasDynamicRow());

  std::string diags = diagnosticsOf([&] {
    auto bad = EdgeTensorType::getChecked(
        [&] { return emitError(UnknownLoc::get(&context)); }, &context,
        ArrayRef<int64_t>{2, 2, 2}, f32);
    EXPECT_FALSE(bad);
  });
  EXPECT_NE(diags.find("edge tensor rows have rank 0, 1 or 2 but got rank 3"),
            std::string::npos)
      << diags;
}

/// The zoo's GCN parses, verifies and survives gnn-optimize-pipeline.
TEST_F(GNNDialectTest, ZooModelThroughPipeline) {
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(
      GNN_SOURCE_DIR "/examples/models/gcn.mlir", &context);
  ASSERT_TRUE(module);
  PassManager pm(&context);
  buildGNNOptimizePipeline(pm, GNNOptimizeOptions());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  auto fn = module->lookupSymbol<func::FuncOp>("gcn");
  ASSERT_TRUE(fn);
  EXPECT_TRUE(fn->hasAttr(GNNDialect::kModelAttrName));
  unsigned gathers = 0;
  fn.walk([&](GatherOp op) {
    EXPECT_EQ(op.getAcc(), Accumulator::Sum);
    ++gathers;
  });
  EXPECT_EQ(gathers, 2u);
  auto init = fn.getArgAttrOfType<InitAttr>(0, GNNDialect::kInitAttrName);
  ASSERT_TRUE(init);
  EXPECT_EQ(init.getKind(), InitKind::Glorot);
}

// A failed allocation in the tools (LLVM's new-handler and safe_malloc both
// end in report_bad_alloc_error) is one line and exit status 1, not "LLVM
// ERROR: out of memory" and abort() (issue 17, item 2).
TEST(GNNTools, OutOfMemoryIsOneLineAndExitOne) {
  EXPECT_EXIT(
      {
        gnn::installOutOfMemoryHandler("gnn-test");
        llvm::report_bad_alloc_error("Allocation failed");
      },
      ::testing::ExitedWithCode(1),
      "^gnn-test: error: out of memory \\(Allocation failed\\); the "
      "compilation needs more memory than the limits allow\n$");
  EXPECT_EXIT(
      {
        gnn::installOutOfMemoryHandler("gnn-test");
        (void)llvm::safe_malloc(~size_t(0) >> 1);
      },
      ::testing::ExitedWithCode(1), "gnn-test: error: out of memory");
}

} // namespace
