//===- ModelFunction.cpp - the model function of a module -----------------===//

#include "gnn/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::gnn;

func::FuncOp mlir::gnn::getUndifferentiatedModel(ModuleOp module,
                                                 StringRef why) {
  SmallVector<func::FuncOp> models;
  module.walk([&](func::FuncOp f) {
    if (f->hasAttr(GNNDialect::kModelAttrName))
      models.push_back(f);
  });
  if (models.size() != 1) {
    module.emitError() << "expected exactly one function marked '"
                       << GNNDialect::kModelAttrName << "' but found "
                       << models.size();
    return {};
  }
  for (StringRef name : {GNNDialect::kTrainStepName, GNNDialect::kEvalName})
    if (module.lookupSymbol(name)) {
      module.emitError() << "the module already has a function '@" << name
                         << "' (" << why << ")";
      return {};
    }
  return models.front();
}
