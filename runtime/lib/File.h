//===- File.h - opening dataset files safely --------------------*- C++ -*-===//
//
// Dataset files are opened only when they are regular files (or symlinks to
// one): a FIFO would block open() until a writer comes, a device such as
// /dev/zero never ends. Errors are "<name>: <problem>" like the rest of the
// loader.
//
// Output files are written whole or not at all: into a temporary file next to
// the target, renamed over it once every byte is written and the file closed,
// so that a failed write (ENOSPC, EFBIG) leaves no half-written file under
// the final name (an older file there stays as it was). A FIFO with a reader
// or a character device (/dev/null, /dev/stdout) is written in place; a FIFO
// without a reader, a directory, a block device or a socket is refused, and
// nothing ever blocks in open().
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_FILE_H
#define GNNRT_FILE_H

#include <cstddef>
#include <string>
#include <vector>

namespace gnnrt {

/// Opens `path` read-only if it is a regular file and returns its descriptor,
/// or -1 with "<name>: missing file", "<name>: is a FIFO, not a regular file"
/// or "<name>: <strerror>" in `error`. The open itself never blocks.
int openRegularFile(const std::string &path, const std::string &name,
                    std::string &error);

/// Reads the whole regular file `path` into `contents`.
bool readRegularFile(const std::string &path, const std::string &name,
                     std::string &contents, std::string &error);

/// One piece of an output file.
struct OutputPiece {
  const void *data;
  size_t size;
};

/// Writes `pieces` as the whole file `path` (see above). On failure returns
/// false with "<path>: <problem>" in `error`, e.g. "out.npy: No space left on
/// device", "out.npy: is a directory", "out.npy: is a FIFO with no reader".
bool writeWholeFile(const std::string &path,
                    const std::vector<OutputPiece> &pieces, std::string &error);

/// Whether `path` can plausibly be written later: checked before training
/// so that a run does not fail only at its end. Refuses an existing
/// directory, block device or socket and a path whose directory is missing,
/// is not a directory or is not writable.
bool checkOutputFile(const std::string &path, std::string &error);

/// The same for an output directory (created later if missing): an existing
/// non-directory is refused, and so is a missing one whose nearest existing
/// ancestor is not a writable directory.
bool checkOutputDirectory(const std::string &path, std::string &error);

/// Whether `path` is a directory.
bool isDirectory(const std::string &path);

/// Creates the directory `dir` and its missing parents (mkdir -p). False
/// with "<path>: <reason>" in `error`.
bool makeDirectories(const std::string &dir, std::string &error);

/// Reads all `n` bytes at `offset` of `fd` (retries EINTR, continues short
/// reads). False with errno's value in `err`, 0 on a premature end of file.
bool preadAll(int fd, char *p, int64_t n, int64_t offset, int &err);

/// preadAll into `data`, or false with "<name>: reading N bytes at offset
/// O: <reason>". Under uncachedReads() the range read leaves the page cache.
bool readAt(int fd, const std::string &name, int64_t offset, void *data,
            int64_t bytes, std::string &error);

/// Storage larger than memory, emulated (the executable's --uncached-reads,
/// docs/MemoryBudget.md): the pages wholly inside what the runtime reads of
/// the dataset and the spill file leave the page cache after the read (a
/// page read in part stays until the epoch's end), so that their next read
/// waits on the device as it would where the files do not fit in memory.
/// Off by default (the page cache keeps what fits, as the kernel decides).
void setUncachedReads(bool on);
bool uncachedReads();

/// Under uncachedReads(): drops the pages wholly inside [offset, offset +
/// bytes) of `fd` (bytes 0: to the end) from the page cache (posix_fadvise
/// POSIX_FADV_DONTNEED; clean pages go, dirty ones stay until written; a
/// page covered in part stays for its other rows until the epoch's end),
/// and remembers `fd` for dropEveryCachedFile.
void dropCachedRange(int fd, int64_t offset, int64_t bytes);

/// Under uncachedReads(): rememberCachedFile adds `fd` to the files
/// dropEveryCachedFile drops (a file kept open for reads, at its opening);
/// forgetCachedFile takes it out (before it is closed: its number may be
/// another file's next).
void rememberCachedFile(int fd);
void forgetCachedFile(int fd);

/// Under uncachedReads(): drops every file dropCachedRange saw whole: the
/// pages reads covered in part and what the kernel read ahead beyond them
/// (the driver calls it before each epoch and each evaluation, so that none
/// reads what the one before left cached).
void dropEveryCachedFile();

/// Under uncachedReads(): writes `fd`'s dirty pages through to the device
/// (fdatasync) and drops [offset, offset + bytes) from the page cache (a
/// spill write then costs the device's time, and its read the device's
/// again). False with errno's value in `err` when the writeback fails.
bool writeThrough(int fd, int64_t offset, int64_t bytes, int &err);

} // namespace gnnrt

#endif // GNNRT_FILE_H
