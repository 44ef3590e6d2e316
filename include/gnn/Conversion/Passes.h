//===- Passes.h - gnn conversion passes -------------------------*- C++ -*-===//

#ifndef GNN_CONVERSION_PASSES_H
#define GNN_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::gnn {

#define GEN_PASS_DECL
#include "gnn/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gnn/Conversion/Passes.h.inc"

} // namespace mlir::gnn

#endif // GNN_CONVERSION_PASSES_H
