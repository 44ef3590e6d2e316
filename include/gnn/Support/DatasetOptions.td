//===- DatasetOptions.td - the `meta` option of size-driven passes -*- tablegen -*-===//
//
// One definition of the pass option naming a dataset's meta.json, shared by
// every pass whose cost model reads sizes (include/gnn/Support/DatasetMeta.h).
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_DATASETOPTIONS
#define GNN_SUPPORT_DATASETOPTIONS

include "mlir/Pass/PassBase.td"

def DatasetMetaOption : Option<"meta", "meta", "std::string",
    /*default=*/"\"\"",
    "a dataset's meta.json (DESIGN.md's format): its num_vertices, "
    "num_edges, num_features and num_classes stand for a typical run in the "
    "pass's cost model (the program still runs on any dataset); a regular "
    "file whose counts are integers, vertices and edges in [0, 2^31-1], "
    "features and classes in [0, 2^24]">;

#endif // GNN_SUPPORT_DATASETOPTIONS
