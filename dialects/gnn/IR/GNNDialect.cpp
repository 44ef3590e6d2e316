//===- GNNDialect.cpp - gnn dialect and the program contract --------------===//

#include "gnn/IR/GNNDialect.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "gnn/IR/GNNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
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

LogicalResult GNNDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
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

  // Data: one graph.
  unsigned numGraphs = 0;
  fn->walk([&](GraphOp) { ++numGraphs; });
  if (numGraphs != 1)
    return op->emitError() << "model function must read the graph exactly "
                              "once with 'gnn.graph' but reads it "
                           << numGraphs << " times";
  return success();
}
