//===- Params.h - the parameters on disk -------------------------*- C++
//-*-===//
//
// The driver's reading and writing of the parameters (Params.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_DRIVER_PARAMS_H
#define GNNRT_DRIVER_PARAMS_H

#include "Context.h"
#include "Preload.h"

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

/// --dump DIR: one training step of `train` on every rank with dropout
/// off and without the update (the parameters are restored after it);
/// rank 0 (`write`) writes DIR/params, DIR/grads (the ranks' sum),
/// DIR/loss.npy and DIR/logits.npy (the `numVertices` rows gathered from
/// the ranks' own, `part`). Returns the loss; stops the run on an error.
float dumpOneStep(gnnrtContext *ctx, float (*train)(gnnrtContext *),
                  const std::string &dir, bool write, const PreloadPart &part,
                  int64_t numVertices);

} // namespace gnnrt

#endif // GNNRT_DRIVER_PARAMS_H
