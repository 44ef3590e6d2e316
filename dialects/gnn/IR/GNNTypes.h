//===- GNNTypes.h - gnn dialect types, enums and attributes -----*- C++ -*-===//

#ifndef GNN_IR_GNNTYPES_H
#define GNN_IR_GNNTYPES_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Types.h"

#include "gnn/IR/GNNEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "gnn/IR/GNNAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "gnn/IR/GNNOpsTypes.h.inc"

namespace mlir::gnn {

/// Names that a dynamic (`?`) dimension of a parameter may be bound to with
/// `gnn.dims`: the dataset's feature width and its number of classes.
inline constexpr llvm::StringLiteral kDimFeatures = "features";
inline constexpr llvm::StringLiteral kDimClasses = "classes";

/// Prints a row shape and element type the way builtin tensor types do
/// (`4x?xf32`, `i64`).
void printRowShape(AsmPrinter &printer, llvm::ArrayRef<int64_t> shape,
                   Type elementType);

} // namespace mlir::gnn

#endif // GNN_IR_GNNTYPES_H
