//===- Threads.cpp - OpenMP thread counts, checked ------------------------===//

#include "Threads.h"

#include <omp.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace gnnrt {

bool parseIntInRange(const char *s, int64_t lo, int64_t hi, int64_t &out) {
  if (!s || !*s || *s == ' ' || *s == '\t' || *s == '+')
    return false;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s, &end, 10);
  if (errno || !end || *end || end == s || v < lo || v > hi)
    return false;
  out = v;
  return true;
}

bool configureThreads(int64_t requested, const char *flag,
                      std::string &error) {
  const std::string range = "[1, " + std::to_string(kMaxThreads) + "]";
  std::string source = flag;
  int64_t threads = requested;
  if (threads <= 0) {
    const char *env = std::getenv("OMP_NUM_THREADS");
    if (!env)
      return true; // libgomp's default: one per processor
    // Every element of the list, though only the first is used (no nested
    // parallel regions).
    std::string text = env, item;
    int64_t first = 0;
    for (size_t start = 0;;) {
      size_t comma = text.find(',', start);
      item = text.substr(start, comma == std::string::npos ? std::string::npos
                                                           : comma - start);
      int64_t v;
      if (!parseIntInRange(item.c_str(), 1, kMaxThreads, v)) {
        error = "OMP_NUM_THREADS: expected an integer in " + range +
                " (or a comma-separated list of them) but got '" + text + "'";
        return false;
      }
      if (!first)
        first = v;
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
    threads = first;
    source = "OMP_NUM_THREADS=";
  } else if (threads > kMaxThreads) {
    error = std::string("option ") + flag + ": expected an integer in " +
            range + " but got '" + std::to_string(threads) + "'";
    return false;
  } else {
    source += " ";
  }
  // More threads than processors only oversubscribe the cores.
  const int64_t procs = omp_get_num_procs();
  if (threads > procs) {
    std::fprintf(stderr,
                 "warning: %s%lld is more than the %lld processors available; "
                 "using %lld\n",
                 source.c_str(), static_cast<long long>(threads),
                 static_cast<long long>(procs), static_cast<long long>(procs));
    threads = procs;
  }
  omp_set_num_threads(static_cast<int>(threads));
  return true;
}

} // namespace gnnrt
