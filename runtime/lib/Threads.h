//===- Threads.h - OpenMP thread counts, checked ----------------*- C++ -*-===//
//
// A thread count reaches OpenMP only checked: libgomp creates whatever
// OMP_NUM_THREADS or omp_set_num_threads asks for at the first parallel
// region (65536 crashed in it) and keeps OMP_NUM_THREADS=4294967297 as an
// unsigned long that omp_get_max_threads() truncates to 1.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_THREADS_H
#define GNNRT_THREADS_H

#include <cstdint>
#include <string>

namespace gnnrt {

/// The most threads a flag or OMP_NUM_THREADS may ask for; more than the
/// processors is capped at them.
constexpr int64_t kMaxThreads = 4096;

/// Parses the whole of `s` as a decimal integer in [lo, hi]: no sign games,
/// no trailing text, no wrap-around.
bool parseIntInRange(const char *s, int64_t lo, int64_t hi, int64_t &out);

/// Sets OpenMP's thread count before its first parallel region. `requested`
/// is a flag's value already in [1, kMaxThreads] (0: none given), `flag` its
/// name for messages; without it OMP_NUM_THREADS, when set, is read here
/// strictly: an integer (or a comma-separated list, one per nesting level)
/// in [1, kMaxThreads], else false with a one-line `error`. A count above the
/// processors is capped at them with a warning on stderr.
bool configureThreads(int64_t requested, const char *flag, std::string &error);

} // namespace gnnrt

#endif // GNNRT_THREADS_H
