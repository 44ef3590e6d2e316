//===- OutOfMemory.h - a one-line exit when memory runs out -----*- C++ -*-===//
//
// LLVM's default answer to a failed allocation is "LLVM ERROR: out of
// memory", a crash report and abort(). The tools answer like the runtime
// (runtime/lib/Memory.h): one line, exit status 1.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_OUTOFMEMORY_H
#define GNN_SUPPORT_OUTOFMEMORY_H

#include "llvm/Support/ErrorHandling.h"

#include <cstring>
#include <unistd.h>

namespace mlir::gnn {

/// Makes a failed allocation (operator new, LLVM's safe_malloc) print
/// "<tool>: error: out of memory (...)" and exit 1. Call after InitLLVM,
/// which installs the new-handler that forwards here.
inline void installOutOfMemoryHandler(const char *tool) {
  static const char *name;
  name = tool;
  llvm::install_bad_alloc_error_handler(
      [](void *, const char *reason, bool) {
        // Nothing here may allocate.
        auto say = [](const char *s) {
          if (::write(2, s, std::strlen(s)) < 0) {
            // Nothing more to say.
          }
        };
        say(name);
        say(": error: out of memory (");
        say(reason ? reason : "an allocation failed");
        say("); the compilation needs more memory than the limits allow\n");
        _exit(1);
      });
}

} // namespace mlir::gnn

#endif // GNN_SUPPORT_OUTOFMEMORY_H
