//===- File.cpp - opening dataset files safely ----------------------------===//

#include "File.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
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

} // namespace gnnrt
