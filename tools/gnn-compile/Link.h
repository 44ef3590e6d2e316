//===- Link.h - gnn-compile's objects to its output -------------*- C++ -*-===//
//
// The last step of gnn-compile: the objects it emitted (the step functions'
// and the kernels', Object.h) to the output file.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_TOOLS_GNNCOMPILE_LINK_H
#define GNN_TOOLS_GNNCOMPILE_LINK_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::gnn {

/// Writes `objectCode` to `out` ("-": standard output), replacing it only
/// once written whole: with `objectOnly` the one object as it is, or several
/// combined into one (`c++ -r`); else linked with the runtime's archives
/// (bin/../lib next to `argv0`; with `cuda` the CUDA runtime's too) into an
/// executable. The objects go through temporary files (next to `out`, kept,
/// with `keepTemps`). 0, or 1 after an error on standard error.
int writeLinkedOutput(const char *argv0,
                      llvm::ArrayRef<llvm::SmallVector<char, 0>> objectCode,
                      const std::string &out, bool objectOnly, bool keepTemps,
                      bool cuda);

} // namespace mlir::gnn

#endif // GNN_TOOLS_GNNCOMPILE_LINK_H
