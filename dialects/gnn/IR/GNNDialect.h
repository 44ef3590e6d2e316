//===- GNNDialect.h - gnn dialect -------------------------------*- C++ -*-===//

#ifndef GNN_IR_GNNDIALECT_H
#define GNN_IR_GNNDIALECT_H

#include "mlir/IR/Dialect.h"

#include "gnn/IR/GNNOpsDialect.h.inc"

#endif // GNN_IR_GNNDIALECT_H
