//===- TempDir.h - a scratch directory for the runtime's tests -*- C++ -*-===//

#ifndef GNNRT_TEST_TEMPDIR_H
#define GNNRT_TEST_TEMPDIR_H

#include <cstdlib>
#include <string>
#include <vector>

#include <unistd.h>

namespace gnnrt::test {

/// A fresh directory under TMPDIR, removed (with what is in it) at the end;
/// `path` is empty when it could not be made.
struct TempDir {
  std::string path;
  explicit TempDir(const std::string &prefix = "gnnrt-test") {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()))
      path = buf.data();
  }
  ~TempDir() {
    if (!path.empty())
      (void)!std::system(("rm -rf '" + path + "'").c_str());
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
};

} // namespace gnnrt::test

#endif // GNNRT_TEST_TEMPDIR_H
