//===- GNNTypes.cpp - gnn dialect types and attributes --------------------===//

#include "gnn/IR/GNNTypes.h"
#include "gnn/IR/GNNDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::gnn;

#include "gnn/IR/GNNEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "gnn/IR/GNNAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "gnn/IR/GNNOpsTypes.cpp.inc"

//===----------------------------------------------------------------------===//
// Row tensor types
//===----------------------------------------------------------------------===//

void mlir::gnn::printRowShape(AsmPrinter &printer, ArrayRef<int64_t> shape,
                              Type elementType) {
  for (int64_t dim : shape) {
    if (ShapedType::isDynamic(dim))
      printer << '?';
    else
      printer << dim;
    printer << 'x';
  }
  printer << elementType;
}

/// Parses `<` dims `x` element-type `>`.
static LogicalResult parseRowShape(AsmParser &parser,
                                   SmallVectorImpl<int64_t> &shape,
                                   Type &elementType) {
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseGreater())
    return failure();
  return success();
}

static LogicalResult
verifyRowShape(function_ref<InFlightDiagnostic()> emitError, StringRef what,
               ArrayRef<int64_t> shape, Type elementType) {
  if (shape.size() > 2)
    return emitError() << what << " rows have rank 0, 1 or 2 but got rank "
                       << shape.size();
  // A row is one vertex's or edge's values: every size computed from it
  // (|V| or |E| times the row) must stay far from int64 overflow.
  constexpr int64_t kMaxRowElements = int64_t(1) << 24;
  int64_t elements = 1;
  for (int64_t dim : shape) {
    if (ShapedType::isDynamic(dim))
      continue;
    if (dim <= 0)
      return emitError() << what
                         << " row dimensions must be positive or '?' but got "
                         << dim;
    if (dim > kMaxRowElements ||
        (elements *= dim) > kMaxRowElements) // both factors <= 2^24
      return emitError() << what << " rows have at most " << kMaxRowElements
                         << " elements but the static dimensions give more";
  }
  if (elementType.isF32())
    return success();
  if (!elementType.isInteger(1) && !elementType.isInteger(32) &&
      !elementType.isInteger(64))
    return emitError() << what
                       << " element type must be f32, i1, i32 or i64 but got "
                       << elementType;
  // i32 rows may be vectors (the edge ids a max/min fused_gather chose).
  if (!shape.empty() && !elementType.isInteger(32))
    return emitError() << what << " rows of " << elementType
                       << " must be scalars (rank 0) but got rank "
                       << shape.size();
  return success();
}

Type VertexTensorType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (failed(parseRowShape(parser, shape, elementType)))
    return {};
  return parser.getChecked<VertexTensorType>(parser.getContext(), shape,
                                             elementType);
}

void VertexTensorType::print(AsmPrinter &printer) const {
  printer << '<';
  printRowShape(printer, getRowShape(), getElementType());
  printer << '>';
}

LogicalResult
VertexTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                         ArrayRef<int64_t> rowShape, Type elementType) {
  return verifyRowShape(emitError, "vertex tensor", rowShape, elementType);
}

Type EdgeTensorType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (failed(parseRowShape(parser, shape, elementType)))
    return {};
  return parser.getChecked<EdgeTensorType>(parser.getContext(), shape,
                                           elementType);
}

void EdgeTensorType::print(AsmPrinter &printer) const {
  printer << '<';
  printRowShape(printer, getRowShape(), getElementType());
  printer << '>';
}

LogicalResult
EdgeTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                       ArrayRef<int64_t> rowShape, Type elementType) {
  return verifyRowShape(emitError, "edge tensor", rowShape, elementType);
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

Attribute InitAttr::parse(AsmParser &parser, Type) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseKeyword(&keyword))
    return {};
  std::optional<InitKind> kind = symbolizeInitKind(keyword);
  if (!kind) {
    parser.emitError(loc) << "unknown initialiser '" << keyword
                          << "' (expected glorot, zeros, ones, constant, "
                             "uniform or normal)";
    return {};
  }
  double value = 0.0;
  if (succeeded(parser.parseOptionalComma()) && parser.parseFloat(value))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<InitAttr>(parser.getContext(), *kind,
                                     llvm::APFloat(value));
}

void InitAttr::print(AsmPrinter &printer) const {
  printer << '<' << stringifyInitKind(getKind());
  double value = getValue().convertToDouble();
  if (value != 0.0)
    printer << ", " << value;
  printer << '>';
}

LogicalResult InitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               InitKind kind, llvm::APFloat apValue) {
  double value = apValue.convertToDouble();
  switch (kind) {
  case InitKind::Glorot:
  case InitKind::Zeros:
  case InitKind::Ones:
    if (value != 0.0)
      return emitError() << "initialiser '" << stringifyInitKind(kind)
                         << "' takes no value but got " << value;
    return success();
  case InitKind::Constant:
    return success();
  case InitKind::Uniform:
  case InitKind::Normal:
    if (!(value > 0.0))
      return emitError() << "initialiser '" << stringifyInitKind(kind)
                         << "' needs a positive scale but got " << value;
    return success();
  }
  llvm_unreachable("covered switch over InitKind");
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void GNNDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "gnn/IR/GNNOpsTypes.cpp.inc"
      >();
}

void GNNDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "gnn/IR/GNNAttrs.cpp.inc"
      >();
}
