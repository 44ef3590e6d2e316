//===- Random.h - gnnrt's counter-based draws, for host and GPU -*- C++ -*-===//
//
// The dropout masks' draws (and the mixing the other counter-based draws
// use): plain integer arithmetic that the host compiler and nvcc both compile
// (GNNRT_HOST_DEVICE marks them for the GPU under nvcc), so the CPU and CUDA
// devices draw the same masks.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_RANDOM_H
#define GNNRT_RANDOM_H

#include <cstdint>

#ifdef __CUDACC__
#define GNNRT_HOST_DEVICE __host__ __device__
#else
#define GNNRT_HOST_DEVICE
#endif

namespace gnnrt {

/// splitmix64's finaliser.
GNNRT_HOST_DEVICE inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Dropout masks: one key per (seed, step, mask id), one mix per element;
/// the draw is 24 uniform bits.
GNNRT_HOST_DEVICE inline uint64_t dropoutKey(uint64_t seed, uint64_t step,
                                             uint64_t op) {
  return mix64(mix64(seed ^ mix64(step)) ^ mix64(op + 0x632be59bd9b4e019ULL));
}
/// Element i's draw: murmur3's 32-bit finaliser of i's halves in Weyl
/// sequences and the key's, in 32-bit arithmetic, so that a loop over the
/// elements vectorises (AVX2 multiplies 32-bit lanes, not 64-bit ones) and
/// keeps or drops without a branch (a scalar loop branched on each draw and
/// mispredicted half of them at rate 0.5). The compiled kernels draw the same
/// (ElementMath.cpp, emitDropoutElement).
GNNRT_HOST_DEVICE inline uint32_t dropoutDraw(uint64_t key, uint64_t i) {
  uint32_t h = (static_cast<uint32_t>(i) * 0x9e3779b9u) ^
               (static_cast<uint32_t>(i >> 32) * 0x7feb352du) ^
               static_cast<uint32_t>(key);
  h += static_cast<uint32_t>(key >> 32);
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h >> 8;
}

/// The threshold a draw must reach to keep an element under dropout `rate`
/// (in [0, 1)): rate * 2^24.
inline uint32_t dropoutThreshold(double rate) {
  return static_cast<uint32_t>(rate * 16777216.0);
}

} // namespace gnnrt

#endif // GNNRT_RANDOM_H
