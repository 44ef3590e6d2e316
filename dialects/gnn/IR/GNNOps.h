//===- GNNOps.h - gnn dialect operations ------------------------*- C++ -*-===//

#ifndef GNN_IR_GNNOPS_H
#define GNN_IR_GNNOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "gnn/IR/GNNDialect.h"
#include "gnn/IR/GNNTypes.h"

namespace mlir::gnn {
class YieldOp;
} // namespace mlir::gnn

#include "gnn/IR/GNNInterfaces.h.inc"

#define GET_OP_CLASSES
#include "gnn/IR/GNNOps.h.inc"

#endif // GNN_IR_GNNOPS_H
