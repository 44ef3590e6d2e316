//===- GNNAttrs.td - gnn dialect enums and attributes ------*- tablegen -*-===//

#ifndef GNN_ATTRS
#define GNN_ATTRS

include "gnn/IR/GNNDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums printed as bare keywords inside ops (`gnn.gather sum ...`).
//===----------------------------------------------------------------------===//

def GNN_SideSrc : I32EnumAttrCase<"Src", 0, "src">;
def GNN_SideDst : I32EnumAttrCase<"Dst", 1, "dst">;
def GNN_SideAttr : I32EnumAttr<"Side",
    "which end of an edge a scatter reads or a gather writes",
    [GNN_SideSrc, GNN_SideDst]> {
  let cppNamespace = "::mlir::gnn";
}

def GNN_AccSum : I32EnumAttrCase<"Sum", 0, "sum">;
def GNN_AccMean : I32EnumAttrCase<"Mean", 1, "mean">;
def GNN_AccMax : I32EnumAttrCase<"Max", 2, "max">;
def GNN_AccMin : I32EnumAttrCase<"Min", 3, "min">;
def GNN_AccumulatorAttr : I32EnumAttr<"Accumulator",
    "commutative, associative reduction of a gather",
    [GNN_AccSum, GNN_AccMean, GNN_AccMax, GNN_AccMin]> {
  let cppNamespace = "::mlir::gnn";
}

def GNN_DirIn : I32EnumAttrCase<"In", 0, "in">;
def GNN_DirOut : I32EnumAttrCase<"Out", 1, "out">;
def GNN_DirectionAttr : I32EnumAttr<"Direction",
    "in-edges (by destination) or out-edges (by source)",
    [GNN_DirIn, GNN_DirOut]> {
  let cppNamespace = "::mlir::gnn";
}

def GNN_InitGlorot : I32EnumAttrCase<"Glorot", 0, "glorot">;
def GNN_InitZeros : I32EnumAttrCase<"Zeros", 1, "zeros">;
def GNN_InitOnes : I32EnumAttrCase<"Ones", 2, "ones">;
def GNN_InitConstant : I32EnumAttrCase<"Constant", 3, "constant">;
def GNN_InitUniform : I32EnumAttrCase<"Uniform", 4, "uniform">;
def GNN_InitNormal : I32EnumAttrCase<"Normal", 5, "normal">;
def GNN_InitKind : I32EnumAttr<"InitKind", "parameter initialiser",
    [GNN_InitGlorot, GNN_InitZeros, GNN_InitOnes, GNN_InitConstant,
     GNN_InitUniform, GNN_InitNormal]> {
  let cppNamespace = "::mlir::gnn";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def GNN_InitAttr : AttrDef<GNN_Dialect, "Init"> {
  let mnemonic = "init";
  let summary = "how a parameter is initialised";
  let description = [{
    Attached to a model's parameter arguments as `gnn.init`. Kinds:
    - `glorot`: uniform in ±sqrt(6 / (fan_in + fan_out)), where fan_out is the
      last dimension and fan_in the product of the others (a rank-0 or rank-1
      parameter uses its size for both);
    - `zeros`, `ones`;
    - `constant, v`: every element v;
    - `uniform, a`: uniform in ±a;
    - `normal, s`: normal with mean 0 and standard deviation s.

    Draws are seeded from the run's `--seed` and the parameter's name, so a
    parameter's initial value does not depend on the order of the others.

    Examples: `#gnn.init<glorot>`, `#gnn.init<constant, 0.5>`
  }];
  let parameters = (ins EnumParameter<GNN_InitKind>:$kind,
                        APFloatParameter<"scale or value">:$value);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "InitKind":$kind, CArg<"double", "0.0">:$value), [{
      return $_get($_ctxt, kind, ::llvm::APFloat(value));
    }]>
  ];
  let skipDefaultBuilders = 1;
}

#endif // GNN_ATTRS
