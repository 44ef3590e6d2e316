//===- Params.h - the parameters on disk -------------------------*- C++
//-*-===//
//
// The driver's reading and writing of the parameters (Params.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_DRIVER_PARAMS_H
#define GNNRT_DRIVER_PARAMS_H

#include "Context.h"

#include <string>

namespace gnnrt {

/// Writes every parameter (gradient with `grads`) as <name>.npy in `dir`
/// (created with its parents) when `write`; every rank calls it (a feature
/// shard is gathered). False with a message.
bool saveParams(gnnrtContext *ctx, const std::string &dir, bool grads,
                bool write, std::string &error);

/// Reads every parameter from <name>.npy in `dir`: its whole shape, finite
/// values; a feature shard takes this process's rows. False with a
/// message.
bool loadParams(gnnrtContext *ctx, const std::string &dir, std::string &error);

} // namespace gnnrt

#endif // GNNRT_DRIVER_PARAMS_H
