//===- File.h - opening dataset files safely --------------------*- C++ -*-===//
//
// Dataset files are opened only when they are regular files (or symlinks to
// one): a FIFO would block open() until a writer comes, a device such as
// /dev/zero never ends. Errors are "<name>: <problem>" like the rest of the
// loader.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_FILE_H
#define GNNRT_FILE_H

#include <string>

namespace gnnrt {

/// Opens `path` read-only if it is a regular file and returns its descriptor,
/// or -1 with "<name>: missing file", "<name>: is a FIFO, not a regular file"
/// or "<name>: <strerror>" in `error`. The open itself never blocks.
int openRegularFile(const std::string &path, const std::string &name,
                    std::string &error);

/// Reads the whole regular file `path` into `contents`.
bool readRegularFile(const std::string &path, const std::string &name,
                     std::string &contents, std::string &error);

} // namespace gnnrt

#endif // GNNRT_FILE_H
