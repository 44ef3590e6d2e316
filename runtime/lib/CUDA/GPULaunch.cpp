//===- GPULaunch.cpp - the kernel launches of compiled CUDA programs ------===//
//
// gnn-compile --target=cuda lowers its kernels through MLIR's GPU path: the
// PTX of the kernels is embedded in the executable as a gpu.binary and each
// gpu.launch_func becomes calls of the `mgpu*` functions below (the entry
// points MLIR's LLVM translation of the gpu dialect emits; upstream's
// libmlir_cuda_runtime provides them for mlir-cpu-runner). gnnrt provides
// its own, on the CUDA driver API:
//
//  - the module is JIT-compiled from PTX by the driver (cuModuleLoadDataEx)
//    in the primary context of GPU 0, the one the CUDA runtime (and so the
//    CUDA device, cuBLAS and every copy) uses, once: MLIR 19's translation
//    loads and unloads the module around every launch, so loads are cached
//    by image and unloads are no-ops;
//  - every launch goes to the legacy default stream, where the CUDA device
//    queues everything else: launches are ordered with the copies and the
//    library calls around them with no synchronisation, and "stream
//    synchronize" is a no-op (the host reads results with synchronous
//    copies).
//
// The driver library (libcuda.so.1, installed with the NVIDIA driver) is
// opened when the first module loads, not linked: programs and tests that
// never launch a compiled kernel start on machines without a driver. Every
// driver call is checked: a failure stops the run naming the call and the
// driver's error.
//
//===----------------------------------------------------------------------===//

#include "CUDA/CUDADevice.h"
#include "Context.h"

#include <cuda.h>
#include <dlfcn.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

using namespace gnnrt;

namespace {

/// The driver entry points used here, from libcuda.so.1.
struct Driver {
#define GNNRT_DRIVER_FUNCTIONS(X)                                              \
  X(cuInit)                                                                    \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxSetCurrent)                                                           \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleLoadData)                                                          \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuLaunchKernel)                                                            \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)
#define GNNRT_DRIVER_POINTER(name) decltype(&::name) name = nullptr;
  GNNRT_DRIVER_FUNCTIONS(GNNRT_DRIVER_POINTER)
#undef GNNRT_DRIVER_POINTER
};

const Driver &driver() {
  static const Driver d = [] {
    Driver d;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib)
      fatal(std::string("this program was compiled for CUDA (gnn-compile "
                        "--target=cuda) and the NVIDIA driver's library "
                        "could not be opened: ") +
            dlerror());
#define GNNRT_DRIVER_LOAD(name)                                                \
  d.name = reinterpret_cast<decltype(d.name)>(dlsym(lib, #name));              \
  if (!d.name)                                                                 \
    fatal("the NVIDIA driver's library has no " #name);
    GNNRT_DRIVER_FUNCTIONS(GNNRT_DRIVER_LOAD)
#undef GNNRT_DRIVER_LOAD
    return d;
  }();
  return d;
}

void checkDriver(CUresult status, const char *expr) {
  if (status == CUDA_SUCCESS)
    return;
  const char *name = nullptr, *text = nullptr;
  driver().cuGetErrorName(status, &name);
  driver().cuGetErrorString(status, &text);
  fatal(std::string("'") + expr + "' failed with '" +
        (name ? name : "unknown") + "': " + (text ? text : "unknown error"));
}
#define GNNRT_CU_CHECK(expr) checkDriver((driver().expr), #expr)

/// Makes GPU 0's primary context current on this thread (once per thread).
void usePrimaryContext() {
  static CUcontext context = [] {
    GNNRT_CU_CHECK(cuInit(0));
    int count = 0;
    GNNRT_CU_CHECK(cuDeviceGetCount(&count));
    if (count == 0)
      fatal("this program was compiled for CUDA (gnn-compile --target=cuda) "
            "and no GPU is visible");
    CUdevice device;
    GNNRT_CU_CHECK(cuDeviceGet(&device, 0));
    CUcontext c;
    GNNRT_CU_CHECK(cuDevicePrimaryCtxRetain(&c, device));
    return c;
  }();
  thread_local bool current = false;
  if (!current) {
    GNNRT_CU_CHECK(cuCtxSetCurrent(context));
    current = true;
  }
}

/// The modules loaded so far, by their (constant, embedded) image, and
/// their functions by (module, name): MLIR's translation loads the module,
/// looks the kernel up and unloads it again around every launch, which
/// would JIT-compile the program's PTX at each launch.
std::mutex cacheMutex;
std::map<const void *, CUmodule> &modules() {
  static std::map<const void *, CUmodule> m;
  return m;
}
std::map<std::pair<CUmodule, std::string>, CUfunction> &functions() {
  static std::map<std::pair<CUmodule, std::string>, CUfunction> f;
  return f;
}

} // namespace

extern "C" {

/// A module from PTX text (`data`, NUL-terminated), JIT-compiled for the
/// GPU at `optLevel` (0 to 4).
CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  usePrimaryContext();
  std::lock_guard<std::mutex> lock(cacheMutex);
  if (auto it = modules().find(data); it != modules().end())
    return it->second;
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  static char log[4096];
  void *values[] = {reinterpret_cast<void *>(static_cast<intptr_t>(optLevel)),
                    log, reinterpret_cast<void *>(sizeof log)};
  CUmodule module = nullptr;
  CUresult status =
      driver().cuModuleLoadDataEx(&module, data, 3, options, values);
  if (status != CUDA_SUCCESS)
    fatal(std::string("the driver could not compile the program's GPU "
                      "kernels (PTX): ") +
          log);
  modules()[data] = module;
  return module;
}

/// A module from a cubin or fatbin.
CUmodule mgpuModuleLoad(void *data, size_t) {
  usePrimaryContext();
  std::lock_guard<std::mutex> lock(cacheMutex);
  if (auto it = modules().find(data); it != modules().end())
    return it->second;
  CUmodule module = nullptr;
  GNNRT_CU_CHECK(cuModuleLoadData(&module, data));
  modules()[data] = module;
  return module;
}

/// Modules stay loaded for the rest of the run (see modules()); the driver
/// releases them with the context at exit.
void mgpuModuleUnload(CUmodule) {}

CUfunction mgpuModuleGetFunction(CUmodule module, const char *name) {
  std::lock_guard<std::mutex> lock(cacheMutex);
  CUfunction &function = functions()[{module, name}];
  if (!function)
    GNNRT_CU_CHECK(cuModuleGetFunction(&function, module, name));
  return function;
}

void mgpuLaunchKernel(CUfunction function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, CUstream stream,
                      void **params, void **extra, size_t) {
  usePrimaryContext();
  GNNRT_CU_CHECK(cuLaunchKernel(
      function, static_cast<unsigned>(gridX), static_cast<unsigned>(gridY),
      static_cast<unsigned>(gridZ), static_cast<unsigned>(blockX),
      static_cast<unsigned>(blockY), static_cast<unsigned>(blockZ),
      static_cast<unsigned>(sharedBytes), stream, params, extra));
}

/// The legacy default stream (null): see the file comment.
CUstream mgpuStreamCreate() { return nullptr; }
void mgpuStreamSynchronize(CUstream) {}
void mgpuStreamDestroy(CUstream) {}

/// The driver's hook (gnnrt_main): the CUDA device for a program compiled
/// with --target=cuda. Defined here, beside the launches such a program
/// calls, so that linking the program with libgnnrt_cuda.a brings it in.
gnnrt::Device *gnnrtCreateCUDADevice() {
  usePrimaryContext();
  return gnnrt::createCUDADevice().release();
}

} // extern "C"
