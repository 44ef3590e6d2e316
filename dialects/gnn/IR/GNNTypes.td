//===- GNNTypes.td - gnn dialect types ---------------------*- tablegen -*-===//

#ifndef GNN_TYPES
#define GNN_TYPES

include "gnn/IR/GNNDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class GNN_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<GNN_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def GNN_GraphType : GNN_Type<"Graph", "graph"> {
  let summary = "a graph: |V| vertices and |E| directed edges src -> dst";
  let description = [{
    The graph a program runs on. It is bound at run time from the dataset
    (in-edges by destination, CSC, for forward gathers; out-edges by source,
    CSR, for backward ones). Every vertex and edge tensor of a program
    belongs to the one graph the program reads with `gnn.graph`.

    Example: `!gnn.graph`
  }];
}

/// Shared by vertex and edge tensors: a row shape and an element type.
class GNN_RowTensorType<string name, string typeMnemonic, string what>
    : GNN_Type<name, typeMnemonic> {
  let parameters = (ins ArrayRefParameter<"int64_t", "row shape">:$rowShape,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::llvm::ArrayRef<int64_t>":$rowShape,
                                        "::mlir::Type":$elementType), [{
      return $_get(elementType.getContext(), rowShape, elementType);
    }]>
  ];
  let extraClassDeclaration = [{
    /// The type of one row, as seen inside stage regions.
    ::mlir::RankedTensorType getRowType() const {
      return ::mlir::RankedTensorType::get(getRowShape(), getElementType());
    }
    /// Rank of one row: 0 (a scalar), 1 (`F`) or 2 (`heads x F`).
    int64_t getRowRank() const { return getRowShape().size(); }
    /// True when some row dimension is only known at run time.
    bool hasDynamicRow() const {
      return ::llvm::is_contained(getRowShape(), ::mlir::ShapedType::kDynamic);
    }
  }];
  let summary = "a tensor with one row per " # what;
}

def GNN_VertexTensorType
    : GNN_RowTensorType<"VertexTensor", "vtensor", "vertex"> {
  let description = [{
    One row per vertex of the program's graph. The parameters give the shape
    of a row, written like a builtin tensor shape without the leading |V|
    dimension: `!gnn.vtensor<128xf32>` (vectors of 128), `!gnn.vtensor<4x64xf32>`
    (4 heads of 64), `!gnn.vtensor<?xf32>` (width bound at run time from the
    dataset), `!gnn.vtensor<i64>` (one scalar per vertex, e.g. labels).
    Element types: f32, i1, i32, i64; row rank at most 2; i1 and i64 rows
    are scalars (masks, labels), i32 rows may have a shape (edge types are
    scalars; the edge ids a max/min `gnn.fused_gather` chose have its rows'
    shape).
  }];
}

def GNN_EdgeTensorType
    : GNN_RowTensorType<"EdgeTensor", "etensor", "edge"> {
  let description = [{
    One row per edge of the program's graph, in the graph's edge order. Same
    row shapes and element types as `!gnn.vtensor`: `!gnn.etensor<1xf32>` is a
    per-edge weight, `!gnn.etensor<i32>` a per-edge type.
  }];
}

def GNN_AnyRowTensor : AnyTypeOf<[GNN_VertexTensorType, GNN_EdgeTensorType],
                                 "vertex or edge tensor">;

def GNN_F32VertexTensor : Type<
    And<[GNN_VertexTensorType.predicate,
         CPred<"::llvm::cast<::mlir::gnn::VertexTensorType>($_self).getElementType().isF32()">]>,
    "f32 vertex tensor", "::mlir::gnn::VertexTensorType">;

#endif // GNN_TYPES
