//===- File.cpp - opening dataset files safely ----------------------------===//

#include "File.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace gnnrt {

/// What a file that is not a regular file is.
static const char *kindOf(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return nullptr;
}

static std::string errnoProblem(int err) {
  return err == ENOENT ? "missing file" : std::strerror(err);
}

int openRegularFile(const std::string &path, const std::string &name,
                    std::string &error) {
  // stat first: a device or a socket is not even opened.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    error = name + ": " + errnoProblem(errno);
    return -1;
  }
  if (S_ISREG(st.st_mode)) {
    // O_NONBLOCK: should the file have become a FIFO since the stat, the open
    // returns instead of waiting for a writer (and fstat tells). It changes
    // nothing for reading a regular file.
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      error = name + ": " + errnoProblem(errno);
      return -1;
    }
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
      return fd;
    int err = errno;
    ::close(fd);
    if (S_ISREG(st.st_mode)) {
      error = name + ": " + std::strerror(err);
      return -1;
    }
  }
  const char *kind = kindOf(st.st_mode);
  error = name + (kind ? ": is " + std::string(kind) + ", not a regular file"
                       : ": not a regular file");
  return -1;
}

bool readRegularFile(const std::string &path, const std::string &name,
                     std::string &contents, std::string &error) {
  int fd = openRegularFile(path, name, error);
  if (fd < 0)
    return false;
  contents.clear();
  char buf[1 << 16];
  while (true) {
    ssize_t got = ::read(fd, buf, sizeof(buf));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      error = name + ": " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (got == 0)
      break;
    contents.append(buf, static_cast<size_t>(got));
  }
  ::close(fd);
  return true;
}

//===----------------------------------------------------------------------===//
// Output files
//===----------------------------------------------------------------------===//

/// The directory part of `path` ("." for a bare name).
static std::string directoryOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// Writes every piece to `fd`; false with errno set on failure.
static bool writePieces(int fd, const std::vector<OutputPiece> &pieces) {
  for (const OutputPiece &piece : pieces) {
    const char *p = static_cast<const char *>(piece.data);
    size_t left = piece.size;
    while (left > 0) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return false;
      if (n == 0) {
        errno = EIO;
        return false;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  return true;
}

/// Paths that name an open descriptor (/dev/stdout, /dev/fd/3,
/// /proc/self/fd/1): written in place, appending, whatever they lead to.
static bool namesDescriptor(const std::string &path) {
  return path.rfind("/dev/std", 0) == 0 || path.rfind("/dev/fd/", 0) == 0 ||
         path.rfind("/proc/self/fd/", 0) == 0;
}

/// Why an existing `st` cannot be written, or nullptr.
static const char *unwritableKind(const struct stat &st) {
  if (S_ISDIR(st.st_mode))
    return "is a directory";
  if (S_ISBLK(st.st_mode))
    return "is a block device, not a file to write";
  if (S_ISSOCK(st.st_mode))
    return "is a socket, not a file to write";
  return nullptr;
}

/// A FIFO with a reader, a character device or a descriptor path.
static bool writeInPlace(const std::string &path, const struct stat &st,
                         const std::vector<OutputPiece> &pieces,
                         std::string &error) {
  // O_NONBLOCK: a FIFO without a reader fails with ENXIO instead of waiting.
  int flags = O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  if (S_ISREG(st.st_mode))
    flags |= O_APPEND;
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    error = path + (errno == ENXIO && S_ISFIFO(st.st_mode)
                        ? std::string(": is a FIFO with no reader")
                        : ": " + std::string(std::strerror(errno)));
    return false;
  }
  struct stat now;
  if (::fstat(fd, &now) == 0 && unwritableKind(now)) {
    error = path + ": " + unwritableKind(now);
    ::close(fd);
    return false;
  }
  // Writes block as usual once a reader is there.
  int fl = ::fcntl(fd, F_GETFL);
  if (fl >= 0)
    ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  bool ok = writePieces(fd, pieces);
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok)
    error = path + ": " + std::strerror(err);
  return ok;
}

bool writeWholeFile(const std::string &path,
                    const std::vector<OutputPiece> &pieces,
                    std::string &error) {
  struct stat st;
  bool exists = ::stat(path.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  if (exists && unwritableKind(st)) {
    error = path + ": " + unwritableKind(st);
    return false;
  }
  if (exists && (!S_ISREG(st.st_mode) || namesDescriptor(path)))
    return writeInPlace(path, st, pieces, error);

  // A regular file, or none yet: a temporary next to it (a symlink's
  // target, so that the link stays), renamed over it when complete.
  std::string target = path;
  if (exists) {
    if (char *real = ::realpath(path.c_str(), nullptr)) {
      target = real;
      std::free(real);
    }
  }
  const std::string dir = directoryOf(target);
  std::string base = target.substr(target.find_last_of('/') + 1);
  if (base.size() > 200) // the temporary's name stays under NAME_MAX
    base.resize(200);
  std::string temp = dir + "/." + base + ".tmp-XXXXXX";
  int fd = ::mkostemp(&temp[0], O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    struct stat ds;
    if (err == ENOENT && ::stat(dir.c_str(), &ds) != 0)
      error = path + ": directory '" + dir + "' does not exist";
    else
      error = path + ": cannot create a file in '" + dir +
              "': " + std::strerror(err);
    return false;
  }
  // The mode a plain open(O_CREAT, 0666) would give, or the old file's.
  mode_t mode;
  if (exists) {
    mode = st.st_mode & 07777;
  } else {
    mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  ::fchmod(fd, mode);
  bool ok = writePieces(fd, pieces);
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::rename(temp.c_str(), target.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(temp.c_str());
    error = path + ": " + std::strerror(err);
  }
  return ok;
}

/// "<path>: ..." when `dir` is not an existing, writable directory.
static bool checkWritableDirectory(const std::string &path,
                                   const std::string &dir, std::string &error) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    error = path + ": directory '" + dir + "' " +
            (errno == ENOENT
                 ? std::string("does not exist")
                 : "cannot be used: " + std::string(std::strerror(errno)));
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    error = path + ": '" + dir + "' is not a directory";
    return false;
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    error = path + ": directory '" + dir + "' is not writable (" +
            std::strerror(errno) + ")";
    return false;
  }
  return true;
}

bool checkOutputFile(const std::string &path, std::string &error) {
  if (path.empty()) {
    error = "empty file name";
    return false;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (const char *kind = unwritableKind(st)) {
      error = path + ": " + kind;
      return false;
    }
    // A FIFO's reader may come later; a device is written in place.
    if (!S_ISREG(st.st_mode) || namesDescriptor(path))
      return true;
  } else if (errno != ENOENT) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  // The temporary goes next to the file.
  std::string target = path;
  if (char *real = ::realpath(path.c_str(), nullptr)) {
    target = real;
    std::free(real);
  }
  return checkWritableDirectory(path, directoryOf(target), error);
}

bool checkOutputDirectory(const std::string &path, std::string &error) {
  if (path.empty()) {
    error = "empty directory name";
    return false;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      error = path + ": exists and is not a directory";
      return false;
    }
    return checkWritableDirectory(path, path, error);
  }
  if (errno != ENOENT) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  // Created later, with its missing parents: the nearest existing ancestor
  // must be a writable directory.
  std::string dir = path;
  while (!dir.empty() && dir.back() == '/')
    dir.pop_back();
  do {
    dir = directoryOf(dir);
  } while (dir != "/" && dir != "." && ::stat(dir.c_str(), &st) != 0 &&
           errno == ENOENT);
  return checkWritableDirectory(path, dir, error);
}

/// The most one pread moves (Linux moves at most 0x7ffff000 anyway).
static constexpr int64_t kMaxRead = int64_t(1) << 30;

bool preadAll(int fd, char *p, int64_t n, int64_t offset, int &err) {
  while (n > 0) {
    ssize_t r = ::pread(fd, p, static_cast<size_t>(std::min(n, kMaxRead)),
                        static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR)
        continue;
      err = errno;
      return false;
    }
    if (r == 0) {
      err = 0;
      return false;
    }
    p += r;
    n -= r;
    offset += r;
  }
  return true;
}

namespace {
std::atomic<bool> uncached{false};
// The files dropCachedRange saw, for dropEveryCachedFile.
std::mutex seenMutex;
std::set<int> seenFiles;
} // namespace

void setUncachedReads(bool on) { uncached = on; }
bool uncachedReads() { return uncached; }

void dropCachedRange(int fd, int64_t offset, int64_t bytes) {
  if (!uncached)
    return;
  rememberCachedFile(fd);
  // DONTNEED drops the pages wholly inside the range: a page that a read
  // covers in part (a row of features.npy starts past its header, anywhere)
  // stays for the reads of its other rows, as on storage larger than memory
  // where the page the disk read is reused at once, until the driver drops
  // every file before the next epoch (dropEveryCachedFile).
  (void)::posix_fadvise(fd, static_cast<off_t>(offset),
                        static_cast<off_t>(bytes), POSIX_FADV_DONTNEED);
}

void rememberCachedFile(int fd) {
  if (!uncached || fd < 0)
    return;
  std::lock_guard<std::mutex> lock(seenMutex);
  seenFiles.insert(fd);
}

void forgetCachedFile(int fd) {
  std::lock_guard<std::mutex> lock(seenMutex);
  seenFiles.erase(fd);
}

void dropEveryCachedFile() {
  if (!uncached)
    return;
  std::vector<int> files;
  {
    std::lock_guard<std::mutex> lock(seenMutex);
    files.assign(seenFiles.begin(), seenFiles.end());
  }
  for (int fd : files)
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

bool writeThrough(int fd, int64_t offset, int64_t bytes, int &err) {
  if (!uncached || bytes == 0)
    return true;
  // fdatasync, not sync_file_range: on overlayfs (a container's /tmp) the
  // latter returns 0 and writes nothing. The file's other writes went
  // through before, so only this one is dirty.
  if (::fdatasync(fd) != 0) {
    err = errno;
    return false;
  }
  dropCachedRange(fd, offset, bytes);
  return true;
}

bool readAt(int fd, const std::string &name, int64_t offset, void *data,
            int64_t bytes, std::string &error) {
  int err = 0;
  if (preadAll(fd, static_cast<char *>(data), bytes, offset, err)) {
    if (bytes > 0)
      dropCachedRange(fd, offset, bytes);
    return true;
  }
  error = name + ": reading " + std::to_string(bytes) + " bytes at offset " +
          std::to_string(offset) + ": " +
          (err ? std::strerror(err) : "unexpected end of file");
  return false;
}

} // namespace gnnrt

bool gnnrt::isDirectory(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool gnnrt::makeDirectories(const std::string &dir, std::string &error) {
  if (isDirectory(dir))
    return true;
  std::string path;
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      path = dir.substr(0, i);
      if (!path.empty() && !isDirectory(path) &&
          mkdir(path.c_str(), 0755) != 0) {
        error = path + ": " + std::strerror(errno);
        return false;
      }
    }
  }
  return true;
}
