//===- Summary.h - parts of the driver's --json summary ---------*- C++ -*-===//

#ifndef GNNRT_DRIVER_SUMMARY_H
#define GNNRT_DRIVER_SUMMARY_H

#include "Context.h"

#include <cstdio>
#include <string>
#include <vector>

namespace gnnrt {

/// Appends printf-style `format` with `args` to `text`, whatever its length.
template <typename... Args>
void appendFormat(std::string &text, const char *format, Args... args) {
  char buf[512];
  int n = std::snprintf(buf, sizeof(buf), format, args...);
  if (n >= static_cast<int>(sizeof(buf))) {
    std::vector<char> big(static_cast<size_t>(n) + 1);
    std::snprintf(big.data(), big.size(), format, args...);
    text.append(big.data(), static_cast<size_t>(n));
  } else if (n > 0) {
    text.append(buf, static_cast<size_t>(n));
  }
}

/// The summary's "memory" member (with its key, ending in ",\n"): the budget,
/// the peak resident memory and the device's, the copies, the slow tier's
/// traffic (spill file, features and graph out of core, selective loads)
/// and the estimate `need` the driver checked before allocating.
std::string memoryJson(const gnnrtContext *ctx, int64_t budget,
                       const TrainingMemory &need);

/// The class of the largest logit of each vertex (the first on ties), read
/// through Device::hostView (the logits are device memory; on the CPU
/// device, the memory itself): the --predict file's and the accuracy's.
std::vector<int64_t> predictions(gnnrtContext *ctx);

} // namespace gnnrt

#endif // GNNRT_DRIVER_SUMMARY_H
