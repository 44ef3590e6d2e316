//===- Memory.cpp - how much memory the process may still use -------------===//

#include "Memory.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sys/resource.h>
#include <unistd.h>

namespace gnnrt {

namespace {

/// The first line of a small kernel file (/proc, /sys), without the newline.
bool readLine(const std::string &path, std::string &line) {
  FILE *f = std::fopen(path.c_str(), "r");
  if (!f)
    return false;
  char buf[4096];
  bool ok = std::fgets(buf, sizeof(buf), f) != nullptr;
  std::fclose(f);
  if (!ok)
    return false;
  line = buf;
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
    line.pop_back();
  return true;
}

/// A whole non-negative decimal number (what cgroup files hold).
bool parseCount(const std::string &s, int64_t &out) {
  if (s.empty() || s.size() > 19)
    return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return false;
    v = v * 10 + (c - '0');
  }
  if (v < 0)
    return false;
  out = v;
  return true;
}

/// The value of "<key>: <n> kB" in a /proc status-like file, in bytes.
bool readKiBField(const char *path, const char *key, int64_t &bytes) {
  FILE *f = std::fopen(path, "r");
  if (!f)
    return false;
  char line[256];
  size_t keyLen = std::strlen(key);
  bool found = false;
  while (std::fgets(line, sizeof(line), f)) {
    if (std::strncmp(line, key, keyLen) != 0 || line[keyLen] != ':')
      continue;
    long long kib;
    if (std::sscanf(line + keyLen + 1, "%lld", &kib) == 1 && kib >= 0) {
      bytes = static_cast<int64_t>(kib) * 1024;
      found = true;
    }
    break;
  }
  std::fclose(f);
  return found;
}

void consider(AvailableMemory &best, int64_t bytes, const char *source) {
  bytes = std::max<int64_t>(bytes, 0);
  if (!best.known() || bytes < best.bytes) {
    best.bytes = bytes;
    best.source = source;
  }
}

/// The tightest cgroup limit along this process's cgroup and its ancestors.
void considerCgroups(AvailableMemory &best) {
  FILE *f = std::fopen("/proc/self/cgroup", "r");
  if (!f)
    return;
  char buf[4096];
  while (std::fgets(buf, sizeof(buf), f)) {
    std::string line(buf);
    while (!line.empty() && line.back() == '\n')
      line.pop_back();
    // "0::/path" (v2) or "N:memory:/path" (v1, possibly "N:cpu,memory:").
    size_t a = line.find(':'), b = a == std::string::npos
                                       ? std::string::npos
                                       : line.find(':', a + 1);
    if (b == std::string::npos)
      continue;
    std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    bool v2 = controllers.empty();
    bool v1 = !v2 && ("," + controllers + ",").find(",memory,") !=
                         std::string::npos;
    if (!v1 && !v2)
      continue;
    std::string root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    const char *limitFile = v2 ? "/memory.max" : "/memory.limit_in_bytes";
    const char *usageFile = v2 ? "/memory.current" : "/memory.usage_in_bytes";
    while (true) {
      std::string dir = root + (path == "/" ? "" : path);
      std::string limitText, usageText;
      int64_t limit, usage;
      // v1 reports "no limit" as a huge number rounded to pages.
      if (readLine(dir + limitFile, limitText) &&
          parseCount(limitText, limit) && limit < (int64_t(1) << 60) &&
          readLine(dir + usageFile, usageText) && parseCount(usageText, usage))
        consider(best, limit - usage, "the cgroup's memory limit");
      if (path.empty() || path == "/")
        break;
      size_t slash = path.find_last_of('/');
      path = slash == 0 ? "/" : path.substr(0, slash);
    }
  }
  std::fclose(f);
}

void considerRlimit(AvailableMemory &best, int resource, const char *field,
                    const char *source) {
  struct rlimit rl;
  if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
    return;
  int64_t used = 0;
  readKiBField("/proc/self/status", field, used);
  const int64_t limit = rl.rlim_cur > static_cast<rlim_t>(INT64_MAX)
                            ? INT64_MAX
                            : static_cast<int64_t>(rl.rlim_cur);
  consider(best, limit - used, source);
}

int64_t memoryBudget = 0;

void outOfMemory() {
  std::fflush(stdout);
  static const char msg[] = "error: out of memory (an allocation failed)\n";
  if (::write(2, msg, sizeof(msg) - 1) < 0) {
    // Nothing more to say.
  }
  _exit(1);
}

} // namespace

AvailableMemory availableMemory() {
  AvailableMemory best;
  int64_t avail;
  if (readKiBField("/proc/meminfo", "MemAvailable", avail))
    consider(best, avail, "MemAvailable");
  considerCgroups(best);
  considerRlimit(best, RLIMIT_AS, "VmSize", "ulimit -v");
  considerRlimit(best, RLIMIT_DATA, "VmData", "ulimit -d");
  if (memoryBudget > 0)
    consider(best, memoryBudget - std::max<int64_t>(residentMemory(), 0),
             "--mem-budget");
  return best;
}

void setMemoryBudget(int64_t bytes) { memoryBudget = bytes; }
int64_t getMemoryBudget() { return memoryBudget; }

int64_t residentMemory() {
  int64_t bytes;
  return readKiBField("/proc/self/status", "VmRSS", bytes) ? bytes : -1;
}

int64_t peakResidentMemory() {
  int64_t bytes;
  return readKiBField("/proc/self/status", "VmHWM", bytes) ? bytes : -1;
}

bool parseByteCount(const std::string &text, int64_t &bytes) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
    ++digits;
  if (digits == 0 || digits > 19)
    return false;
  const std::string suffix = text.substr(digits);
  static const struct {
    const char *a, *b;
    int shift;
  } units[] = {{"", "B", 0},
               {"K", "KiB", 10},
               {"M", "MiB", 20},
               {"G", "GiB", 30},
               {"T", "TiB", 40}};
  for (const auto &u : units) {
    if (suffix != u.a && suffix != u.b)
      continue;
    unsigned long long v = std::strtoull(text.substr(0, digits).c_str(),
                                         nullptr, 10);
    const unsigned long long max = 1ULL << 62;
    if (v == 0 || v > (max >> u.shift))
      return false;
    bytes = static_cast<int64_t>(v << u.shift);
    return true;
  }
  return false;
}

std::string formatBytes(int64_t bytes) {
  static const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " B";
  double x = static_cast<double>(bytes);
  int u = -1;
  while (x >= 1024.0 && u < 5) {
    x /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", x, units[u]);
  return buf;
}

bool checkMemory(const std::string &what, int64_t bytes, std::string &error) {
  AvailableMemory avail = availableMemory();
  if (!avail.known() || bytes <= avail.bytes)
    return true;
  error = what + " needs " + formatBytes(bytes) + " of memory but " +
          formatBytes(avail.bytes) + " is available (" + avail.source + ")";
  return false;
}

void installOutOfMemoryHandler() {
  std::set_new_handler(outOfMemory);
}

} // namespace gnnrt
