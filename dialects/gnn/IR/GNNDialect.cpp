//===- GNNDialect.cpp - gnn dialect and the program contract --------------===//

#include "gnn/IR/GNNDialect.h"
#include "gnn/IR/GNNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::gnn;

#include "gnn/IR/GNNOpsDialect.cpp.inc"

void GNNDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "gnn/IR/GNNOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Program contract: parameter argument attributes
//===----------------------------------------------------------------------===//

/// A parameter name is a non-empty dotted identifier: `conv1.weight`.
static bool isValidParamName(StringRef name) {
  if (name.empty() || name.front() == '.' || name.back() == '.' ||
      name.contains(".."))
    return false;
  return llvm::all_of(name, [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '.' || c == '-';
  });
}

LogicalResult GNNDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  // Only functions carry gnn argument attributes (the program contract).
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn || regionIndex != 0)
    return success();
  Type argType = fn.getArgumentTypes()[argIndex];
  StringRef name = attr.getName().getValue();

  if (name == kParamAttrName) {
    auto str = dyn_cast<StringAttr>(attr.getValue());
    if (!str)
      return op->emitError() << "'" << name << "' of argument #" << argIndex
                             << " must be a string";
    if (!isValidParamName(str.getValue()))
      return op->emitError()
             << "argument #" << argIndex << " has invalid parameter name '"
             << str.getValue()
             << "' (expected a dotted identifier like 'conv1.weight')";
    // --save-params writes <name>.npy: within a file name's 255 bytes.
    constexpr size_t kMaxParamName = 200;
    if (str.getValue().size() > kMaxParamName)
      return op->emitError()
             << "parameter name of argument #" << argIndex << " has "
             << str.getValue().size() << " characters; at most "
             << kMaxParamName << " (--save-params writes <name>.npy)";
    auto tensor = dyn_cast<RankedTensorType>(argType);
    if (!tensor || !tensor.getElementType().isF32())
      return op->emitError()
             << "parameter '" << str.getValue()
             << "' must be a ranked f32 tensor but has type " << argType;
    // The static part of the shape alone must fit in memory (and its byte
    // size in int64): at most 2^34 elements, 64 GiB of f32.
    constexpr int64_t kMaxParamElements = int64_t(1) << 34;
    int64_t elements = 1;
    for (int64_t dim : tensor.getShape()) {
      if (ShapedType::isDynamic(dim))
        continue;
      std::optional<int64_t> product = llvm::checkedMul(elements, dim);
      if (dim <= 0 || !product || *product > kMaxParamElements)
        return op->emitError()
               << "parameter '" << str.getValue() << "' of type " << argType
               << " is too large: its static dimensions must be positive and "
                  "hold at most "
               << kMaxParamElements << " elements (64 GiB of f32)";
      elements = *product;
    }
    return success();
  }

  if (name == kInitAttrName) {
    if (!isa<InitAttr>(attr.getValue()))
      return op->emitError()
             << "'" << name << "' of argument #" << argIndex
             << " must be a #gnn.init attribute but got " << attr.getValue();
    return success();
  }

  if (name == kDimsAttrName) {
    auto dims = dyn_cast<ArrayAttr>(attr.getValue());
    auto tensor = dyn_cast<RankedTensorType>(argType);
    if (!dims || !tensor)
      return op->emitError() << "'" << name << "' of argument #" << argIndex
                             << " must be an array of strings on a ranked "
                                "tensor argument";
    if (dims.size() != static_cast<size_t>(tensor.getRank()))
      return op->emitError()
             << "'" << name << "' of argument #" << argIndex << " has "
             << dims.size() << " entries but the argument has rank "
             << tensor.getRank();
    for (auto [i, entry] : llvm::enumerate(dims)) {
      auto str = dyn_cast<StringAttr>(entry);
      if (!str)
        return op->emitError() << "'" << name << "' of argument #" << argIndex
                               << " must be an array of strings";
      bool dynamic = tensor.isDynamicDim(i);
      if (!dynamic && !str.getValue().empty())
        return op->emitError()
               << "'" << name << "' of argument #" << argIndex
               << " binds static dimension " << i << " to '" << str.getValue()
               << "' (only '?' dimensions are bound; use \"\")";
      if (dynamic && str.getValue() != kDimFeatures &&
          str.getValue() != kDimClasses)
        return op->emitError()
               << "'" << name << "' of argument #" << argIndex
               << " binds dynamic dimension " << i << " to '" << str.getValue()
               << "' (expected '" << kDimFeatures << "' or '" << kDimClasses
               << "')";
    }
    return success();
  }

  return op->emitError() << "unknown gnn argument attribute '" << name << "'";
}

//===----------------------------------------------------------------------===//
// Program contract: the model function
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Program contract: dimension bindings
//===----------------------------------------------------------------------===//

namespace {
/// What a `?` dimension stands for: the features F, the classes C, or
/// unknown (also every static dimension).
enum class Binding : uint8_t { Unknown, Features, Classes };
using Bindings = SmallVector<Binding>;

StringRef bindingName(Binding b) {
  return b == Binding::Features ? kDimFeatures : kDimClasses;
}

/// Follows the bindings of the model's `?` dimensions (the features' width,
/// the parameters' gnn.dims) through scatters, gathers, stages and the ops
/// that relate dimensions, and reports a contraction or a loss whose two
/// sides bind one dimension to F and C: the program would be sized with
/// the wrong count at run time. Runs before the nested ops are verified, so
/// shapes are checked before they are indexed.
class BindingChecker {
public:
  LogicalResult check(FunctionOpInterface fn) {
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
      auto dims = fn.getArgAttrOfType<ArrayAttr>(i, GNNDialect::kDimsAttrName);
      if (!dims)
        continue;
      Bindings b;
      for (Attribute a : dims) {
        auto str = dyn_cast<StringAttr>(a);
        b.push_back(!str                             ? Binding::Unknown
                    : str.getValue() == kDimFeatures ? Binding::Features
                    : str.getValue() == kDimClasses  ? Binding::Classes
                                                     : Binding::Unknown);
      }
      bindings[fn.getArgument(i)] = std::move(b);
    }
    return checkBlock(fn.getFunctionBody().front());
  }

private:
  LogicalResult checkBlock(Block &block) {
    for (Operation &op : block)
      if (failed(checkOp(&op)))
        return failure();
    return success();
  }

  Bindings of(Value v) { return bindings.lookup(v); }

  /// The first position where `a` and `b` (dimensions of the same extent)
  /// bind one dimension to both F and C, as (a's binding, b's binding).
  static std::optional<std::pair<Binding, Binding>>
  conflict(ArrayRef<Binding> a, ArrayRef<Binding> b) {
    for (auto [x, y] : llvm::zip(a, b))
      if (x != Binding::Unknown && y != Binding::Unknown && x != y)
        return std::pair{x, y};
    return std::nullopt;
  }

  LogicalResult checkOp(Operation *op) {
    if (auto in = dyn_cast<InputOp>(op)) {
      auto t = dyn_cast<VertexTensorType>(in.getType());
      if (in.getName() == "features" && t && t.getRowRank() == 1 &&
          t.hasDynamicRow())
        bindings[in.getResult()] = {Binding::Features};
      return success();
    }
    if (isa<ScatterOp, GatherOp>(op)) {
      if (op->getNumOperands() == 2 && op->getNumResults() == 1)
        bindings[op->getResult(0)] = of(op->getOperand(1));
      return success();
    }
    if (isa<ApplyVertexOp, ApplyEdgeOp>(op)) {
      if (op->getNumRegions() != 1 || op->getRegion(0).empty())
        return success();
      Block &body = op->getRegion(0).front();
      // Operand 0 is the graph; the rest (inputs, then parameters) map to
      // the block arguments in order.
      for (auto [arg, v] :
           llvm::zip(body.getArguments(), op->getOperands().drop_front()))
        bindings[arg] = of(v);
      if (failed(checkBlock(body)))
        return failure();
      // A body without its gnn.yield is the op's own verifier's to report.
      if (!body.mightHaveTerminator())
        return success();
      if (auto yield = dyn_cast<YieldOp>(body.getTerminator()))
        for (auto [r, y] : llvm::zip(op->getResults(), yield.getOperands()))
          bindings[r] = of(y);
      return success();
    }
    if (auto linear = dyn_cast<LinearOp>(op)) {
      Bindings x = of(linear.getInput()), w = of(linear.getWeight());
      if (x.empty() || w.size() < x.size())
        return success();
      if (auto c = conflict(x, ArrayRef(w).take_front(x.size())))
        return op->emitOpError()
               << "multiplies rows whose width is bound to '"
               << bindingName(c->first) << "' by a weight whose input "
               << "dimension is bound to '" << bindingName(c->second)
               << "' (check the parameter's gnn.dims)";
      bindings[linear.getResult()] = Bindings(w.begin() + x.size(), w.end());
      return success();
    }
    if (auto ce = dyn_cast<SoftmaxCrossEntropyOp>(op)) {
      Bindings l = of(ce.getLogits());
      if (l.size() == 1 && l[0] == Binding::Features)
        return op->emitOpError()
               << "has logits whose width is bound to '" << kDimFeatures
               << "', not '" << kDimClasses << "'";
      return success();
    }
    // Element-wise ops keep the operands' bindings; operands of the
    // result's shape must agree.
    if (op->getNumResults() == 1 && op->getNumOperands() >= 1 &&
        (isa<AddOp, SubOp, MulOp, DivOp, ReluOp, StepOp, NegOp, ExpOp, LogOp,
             SqrtOp, RsqrtOp, SigmoidOp, TanhOp, EluOp, LeakyReluOp,
             StopGradientOp, DropoutOp>(op))) {
      Type rt = op->getResult(0).getType();
      Bindings result;
      for (Value v : op->getOperands()) {
        if (v.getType() != rt)
          continue;
        Bindings b = of(v);
        if (result.empty()) {
          result = b;
          continue;
        }
        if (auto c = conflict(result, b))
          return op->emitOpError() << "combines rows whose width is bound to '"
                                   << bindingName(c->first) << "' and to '"
                                   << bindingName(c->second) << "'";
      }
      bindings[op->getResult(0)] = result;
    }
    return success();
  }

  DenseMap<Value, Bindings> bindings;
};
} // namespace

LogicalResult GNNDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  if (attr.getName().getValue() == kChunksAttrName) {
    if (!isa<GatherOp, FusedGatherOp>(op))
      return op->emitError() << "'" << kChunksAttrName
                             << "' is only valid on an aggregation "
                                "(gnn.gather, gnn.fused_gather)";
    auto p = dyn_cast<IntegerAttr>(attr.getValue());
    if (!p || !p.getType().isInteger(64) || p.getInt() < 1 ||
        p.getInt() > INT32_MAX)
      return op->emitError()
             << "'" << kChunksAttrName << "' must be an i64 in [1, 2147483647]";
    return success();
  }
  if (attr.getName().getValue() == kPartitionAttrName) {
    auto mode = dyn_cast<StringAttr>(attr.getValue());
    if (!isa<FunctionOpInterface>(op))
      return op->emitError()
             << "'" << kPartitionAttrName << "' is only valid on a function";
    if (!mode || (mode.getValue() != "rows" && mode.getValue() != "features"))
      return op->emitError() << "'" << kPartitionAttrName
                             << "' must be \"rows\" or \"features\"";
    return verifyPartition(op);
  }
  if (attr.getName().getValue() == kEvalLevelAttrName) {
    auto level = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<FunctionOpInterface>(op))
      return op->emitError()
             << "'" << kEvalLevelAttrName << "' is only valid on a function";
    if (!level || !level.getType().isInteger(64) || level.getInt() < 1)
      return op->emitError()
             << "'" << kEvalLevelAttrName << "' must be an i64 of at least 1";
    return success();
  }
  if (attr.getName().getValue() == kCutsAttrName) {
    auto cuts = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!cuts || cuts.size() != static_cast<int64_t>(op->getNumResults()) ||
        llvm::any_of(cuts.asArrayRef(), [](int64_t k) { return k < -1; }))
      return op->emitError() << "'" << kCutsAttrName
                             << "' must be an array<i64> of one cut number "
                                "(-1: none) per result";
    return success();
  }
  if (attr.getName().getValue() == kLevelOutputsAttrName) {
    auto fn = dyn_cast<FunctionOpInterface>(op);
    auto cuts = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!fn || !op->hasAttr(kEvalLevelAttrName))
      return op->emitError() << "'" << kLevelOutputsAttrName
                             << "' is only valid on a function with '"
                             << kEvalLevelAttrName << "'";
    if (!cuts || cuts.size() != static_cast<int64_t>(fn.getNumResults()) ||
        llvm::any_of(cuts.asArrayRef(), [](int64_t k) { return k < 0; }))
      return op->emitError() << "'" << kLevelOutputsAttrName
                             << "' must be an array<i64> of one cut number "
                                "(0 or more) per result";
    for (Type t : fn.getResultTypes()) {
      auto v = dyn_cast<VertexTensorType>(t);
      if (!v || !v.getElementType().isF32())
        return op->emitError() << "a level's cuts must be vertex tensors of "
                                  "f32 but one is "
                               << t;
    }
    return success();
  }
  if (attr.getName().getValue() != kModelAttrName)
    return op->emitError() << "unknown gnn attribute '"
                           << attr.getName().getValue() << "'";
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn)
    return op->emitError() << "'" << kModelAttrName
                           << "' is only valid on a function";
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitError() << "'" << kModelAttrName
                           << "' must be a unit attribute";
  if (fn.isExternal())
    return op->emitError() << "model function must have a body";

  // Results: the loss, then the logits.
  ArrayRef<Type> results = fn.getResultTypes();
  if (results.size() != 2)
    return op->emitError() << "model function must return (f32 loss, logits) "
                              "but returns "
                           << results.size() << " values";
  if (!results[0].isF32())
    return op->emitError() << "model result #0 (the loss) must be f32 but is "
                           << results[0];
  auto logits = dyn_cast<VertexTensorType>(results[1]);
  if (!logits || !logits.getElementType().isF32() || logits.getRowRank() != 1)
    return op->emitError() << "model result #1 (the logits) must be a vertex "
                              "tensor of f32 vectors but is "
                           << results[1];

  // Arguments: every one a named, initialised parameter; names unique;
  // dynamic dimensions bound.
  llvm::StringSet<> names;
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
    auto name = fn.getArgAttrOfType<StringAttr>(i, kParamAttrName);
    if (!name)
      return op->emitError() << "model argument #" << i << " must carry '"
                             << kParamAttrName << "' (every argument of a "
                             << "model is a learnable parameter)";
    if (!fn.getArgAttr(i, kInitAttrName))
      return op->emitError() << "parameter '" << name.getValue()
                             << "' must carry '" << kInitAttrName << "'";
    if (!names.insert(name.getValue()).second)
      return op->emitError()
             << "parameter name '" << name.getValue() << "' is used twice";
    auto tensor = cast<RankedTensorType>(fn.getArgumentTypes()[i]);
    if (!tensor.hasStaticShape() && !fn.getArgAttr(i, kDimsAttrName))
      return op->emitError() << "parameter '" << name.getValue() << "' of type "
                             << tensor << " has dynamic dimensions and needs '"
                             << kDimsAttrName << "' to bind them";
  }

  // Data: one graph (and, feature-partitioned, one view of it whole).
  unsigned numGraphs = 0, numWhole = 0;
  fn->walk([&](GraphOp g) { ++(g.getWhole() ? numWhole : numGraphs); });
  if (numGraphs != 1 || numWhole > 1)
    return op->emitError() << "model function must read the graph exactly "
                              "once with 'gnn.graph' (and at most once with "
                              "'gnn.graph whole') but reads it "
                           << numGraphs + numWhole << " times";
  // The `?` dimensions bound to F and C meet consistently.
  return BindingChecker().check(fn);
}
