//===- Summary.h - parts of the driver's --json summary ---------*- C++ -*-===//

#ifndef GNNRT_DRIVER_SUMMARY_H
#define GNNRT_DRIVER_SUMMARY_H

#include "Context.h"

#include <string>

namespace gnnrt {

/// The summary's "memory" member (with its key, ending in ",\n"): the budget,
/// the peak resident memory and the device's, the copies, the slow tier's
/// traffic (spill file, features and graph out of core, selective loads)
/// and the estimate `need` the driver checked before allocating.
std::string memoryJson(const gnnrtContext *ctx, int64_t budget,
                       const TrainingMemory &need);

} // namespace gnnrt

#endif // GNNRT_DRIVER_SUMMARY_H
