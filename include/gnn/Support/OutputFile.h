//===- OutputFile.h - writing gnn-compile's outputs safely ------*- C++ -*-===//
//
// The compiler's outputs (-o of every -emit kind, --keep-temps' object) are
// written whole or not at all, as the runtime's (runtime/lib/File.h): into a
// temporary next to the target, renamed over it when complete, so that a
// failed write leaves no half-written file under the final name. A FIFO with
// a reader or a character device (/dev/null, /dev/stdout) is written in
// place; a FIFO without a reader, a directory, a block device or a socket is
// refused, and nothing blocks in open().
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_OUTPUTFILE_H
#define GNN_SUPPORT_OUTPUTFILE_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::gnn {

/// Writes `contents` as the whole file `path` ("-": stdout). On failure
/// returns false with "<path>: <problem>" in `error`.
bool writeOutputFile(llvm::StringRef path, llvm::StringRef contents,
                     std::string &error);

/// Puts the finished file `temp` (made by temporaryOutputFor) in place of
/// `path`: renamed over it, or copied into a FIFO or device and removed.
bool installOutputFile(llvm::StringRef temp, llvm::StringRef path,
                       std::string &error);

/// A new, empty temporary file in `path`'s directory, for a tool (the
/// linker) that writes a file by name; its name in `temp`.
bool temporaryOutputFor(llvm::StringRef path, std::string &temp,
                        std::string &error);

/// Checked before compiling: an existing directory, block device or socket
/// is refused, and so is a path whose directory is missing, not a directory
/// or not writable.
bool checkOutputFile(llvm::StringRef path, std::string &error);

} // namespace mlir::gnn

#endif // GNN_SUPPORT_OUTPUTFILE_H
