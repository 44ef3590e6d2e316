//===- Memory.h - how much memory the process may still use -----*- C++ -*-===//
//
// The loader and the driver compare what they are about to allocate with
// what the machine can give, so that a dataset or a model too large for it
// fails in one line naming what needs how much, instead of std::bad_alloc or
// the kernel's out-of-memory kill (which overcommit makes the usual outcome:
// a large allocation succeeds and the process dies when it touches the pages).
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_MEMORY_H
#define GNNRT_MEMORY_H

#include <cstdint>
#include <string>

namespace gnnrt {

/// What this process may still allocate, and the limit that decides it.
struct AvailableMemory {
  /// Bytes; -1 when no limit could be read.
  int64_t bytes = -1;
  /// Which limit: "MemAvailable", "the cgroup's memory.max", "ulimit -v",
  /// "ulimit -d".
  std::string source;
  bool known() const { return bytes >= 0; }
};

/// The smallest of the limits that apply now: the kernel's estimate of the
/// memory available without swapping (/proc/meminfo MemAvailable), the
/// cgroup's limit less its usage (v2 memory.max, v1 memory.limit_in_bytes),
/// RLIMIT_AS / RLIMIT_DATA less what the process has mapped, and the budget
/// (setMemoryBudget) less the process's resident memory.
AvailableMemory availableMemory();

/// The executable's --mem-budget: the resident memory the run may use (the
/// fast tier on the CPU). 0: none.
void setMemoryBudget(int64_t bytes);
int64_t getMemoryBudget();

/// The process's resident memory now and its high-water mark (VmRSS, VmHWM);
/// -1 when unknown.
int64_t residentMemory();
int64_t peakResidentMemory();

/// Parses a byte count: digits with an optional binary suffix K, M, G, T
/// (or KiB, MiB, GiB, TiB), in [1, 2^62]. False on anything else.
bool parseByteCount(const std::string &text, int64_t &bytes);

/// `bytes` for people: "512 B", "3.0 KiB", "1.5 GiB".
std::string formatBytes(int64_t bytes);

/// Whether `bytes` more fit in what is available; false with "<what> needs
/// <n> of memory but <m> is available (<source>)" in `error`. Unknown
/// availability passes.
bool checkMemory(const std::string &what, int64_t bytes, std::string &error);

/// Out-of-memory handling for code outside these checks: operator new that
/// fails prints "error: out of memory (an allocation failed)" and exits 1,
/// instead of throwing std::bad_alloc into code built without exceptions
/// (which would reach std::terminate).
void installOutOfMemoryHandler();

} // namespace gnnrt

#endif // GNNRT_MEMORY_H
