//===- OutputFile.cpp - writing gnn-compile's outputs safely --------------===//

#include "gnn/Support/OutputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;
using llvm::StringRef;

/// Why an existing file cannot be written, or nullptr.
static const char *unwritableKind(const struct stat &st) {
  if (S_ISDIR(st.st_mode))
    return "is a directory";
  if (S_ISBLK(st.st_mode))
    return "is a block device, not a file to write";
  if (S_ISSOCK(st.st_mode))
    return "is a socket, not a file to write";
  return nullptr;
}

/// Paths that name an open descriptor: written in place.
static bool namesDescriptor(StringRef path) {
  return path.starts_with("/dev/std") || path.starts_with("/dev/fd/") ||
         path.starts_with("/proc/self/fd/");
}

static std::string problem(StringRef path, int err) {
  return path.str() + ": " + std::strerror(err);
}

/// The directory a temporary for `path` goes to (next to a symlink's
/// target, so that the link stays).
static std::string realTarget(StringRef path) {
  llvm::SmallString<256> real;
  if (!llvm::sys::fs::real_path(path, real))
    return std::string(real);
  return path.str();
}

static std::string directoryOf(StringRef path) {
  StringRef dir = llvm::sys::path::parent_path(path);
  return dir.empty() ? "." : dir.str();
}

static bool writeAll(int fd, StringRef contents) {
  const char *p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

/// A FIFO with a reader, a character device or a descriptor path.
static bool writeInPlace(StringRef path, const struct stat &st,
                         StringRef contents, std::string &error) {
  std::string name = path.str();
  int flags = O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  if (S_ISREG(st.st_mode))
    flags |= O_APPEND;
  int fd = ::open(name.c_str(), flags);
  if (fd < 0) {
    error = errno == ENXIO && S_ISFIFO(st.st_mode)
                ? name + ": is a FIFO with no reader"
                : problem(path, errno);
    return false;
  }
  struct stat now;
  if (::fstat(fd, &now) == 0 && unwritableKind(now)) {
    error = name + ": " + unwritableKind(now);
    ::close(fd);
    return false;
  }
  int fl = ::fcntl(fd, F_GETFL);
  if (fl >= 0)
    ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  bool ok = writeAll(fd, contents);
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok)
    error = problem(path, err);
  return ok;
}

/// stat() of `path`: 1 exists, 0 missing, -1 error (in `error`).
static int statOutput(StringRef path, struct stat &st, std::string &error) {
  if (::stat(path.str().c_str(), &st) == 0) {
    if (const char *kind = unwritableKind(st)) {
      error = path.str() + ": " + kind;
      return -1;
    }
    return 1;
  }
  if (errno == ENOENT)
    return 0;
  error = problem(path, errno);
  return -1;
}

bool gnn::temporaryOutputFor(StringRef path, std::string &temp,
                             std::string &error) {
  // A FIFO or a device is copied into from anywhere: the system's
  // temporary directory, not /dev.
  struct stat st;
  if (namesDescriptor(path) ||
      (::stat(path.str().c_str(), &st) == 0 && !S_ISREG(st.st_mode))) {
    llvm::SmallString<128> made;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("gnnc-output", "", made)) {
      error = "cannot create a temporary file: " + ec.message();
      return false;
    }
    temp = std::string(made);
    return true;
  }
  std::string target = realTarget(path);
  std::string dir = directoryOf(target);
  std::string base = llvm::sys::path::filename(target).str();
  if (base.size() > 200)
    base.resize(200);
  llvm::SmallString<256> model(dir);
  llvm::sys::path::append(model, "." + base + ".tmp-%%%%%%%%");
  llvm::SmallString<256> made;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, made)) {
    error = path.str() + ": cannot create a file in '" + dir +
            "': " + ec.message();
    return false;
  }
  temp = std::string(made);
  return true;
}

bool gnn::writeOutputFile(StringRef path, StringRef contents,
                          std::string &error) {
  if (path == "-") {
    llvm::outs() << contents;
    llvm::outs().flush();
    if (llvm::outs().has_error()) {
      error = "<stdout>: " + llvm::outs().error().message();
      llvm::outs().clear_error();
      return false;
    }
    return true;
  }
  struct stat st;
  int exists = statOutput(path, st, error);
  if (exists < 0)
    return false;
  if (exists && (!S_ISREG(st.st_mode) || namesDescriptor(path)))
    return writeInPlace(path, st, contents, error);
  std::string temp;
  if (!temporaryOutputFor(path, temp, error))
    return false;
  int fd = ::open(temp.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd >= 0) {
    // The temporary is 0600: give it an old file's mode or what a plain
    // create would.
    mode_t mode;
    if (exists) {
      mode = st.st_mode & 07777;
    } else {
      mode_t mask = ::umask(0);
      ::umask(mask);
      mode = 0666 & ~mask;
    }
    ::fchmod(fd, mode);
  }
  bool ok = fd >= 0 && writeAll(fd, contents);
  int err = errno;
  if (fd >= 0 && ::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(temp.c_str());
    error = problem(path, err);
    return false;
  }
  return installOutputFile(temp, path, error);
}

bool gnn::installOutputFile(StringRef temp, StringRef path,
                            std::string &error) {
  struct stat st;
  int exists = statOutput(path, st, error);
  bool ok = exists >= 0;
  if (ok && exists && (!S_ISREG(st.st_mode) || namesDescriptor(path))) {
    auto buf = llvm::MemoryBuffer::getFile(temp, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
    if (!buf) {
      error = temp.str() + ": " + buf.getError().message();
      ok = false;
    } else {
      ok = writeInPlace(path, st, (*buf)->getBuffer(), error);
    }
  } else if (ok) {
    std::string tempName = temp.str();
    if (std::rename(tempName.c_str(), realTarget(path).c_str()) != 0) {
      error = problem(path, errno);
      ok = false;
    }
  }
  if (!ok || llvm::sys::fs::exists(temp))
    llvm::sys::fs::remove(temp);
  return ok;
}

bool gnn::checkOutputFile(StringRef path, std::string &error) {
  if (path == "-")
    return true;
  struct stat st;
  int exists = statOutput(path, st, error);
  if (exists < 0)
    return false;
  if (exists && (!S_ISREG(st.st_mode) || namesDescriptor(path)))
    return true; // a FIFO's reader may come later
  std::string dir = directoryOf(realTarget(path));
  if (::stat(dir.c_str(), &st) != 0) {
    error = path.str() + ": directory '" + dir + "' " +
            (errno == ENOENT ? std::string("does not exist")
                             : "cannot be used: " +
                                   std::string(std::strerror(errno)));
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    error = path.str() + ": '" + dir + "' is not a directory";
    return false;
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    error = path.str() + ": directory '" + dir + "' is not writable (" +
            std::strerror(errno) + ")";
    return false;
  }
  return true;
}
