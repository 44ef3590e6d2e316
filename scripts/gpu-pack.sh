#!/usr/bin/env bash
# Builds, here, what scripts/gpu-check.sh runs on a GPU machine, and packs it
# into .gpu/ (ignored by git) for the trip: such a machine has the NVIDIA
# driver, the CUDA libraries and PyTorch, but no MLIR, OpenBLAS or GoogleTest
# (docs/CUDA.md). The binaries are built in build-gpu/ for a portable x86-64
# (GNN_RUNTIME_ARCH=x86-64-v3, not this machine's -march=native) and sm_80 +
# sm_90; the shared libraries they need beyond glibc and CUDA's are copied
# beside them.
#
#   scripts/gpu-pack.sh            # then carry .gpu to the GPU machine and run
#   scripts/gpu-check.sh           # there, from the repository's root
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${GNN_GPU_BUILD_DIR:-$root/build-gpu}
pack=$root/.gpu
log() { echo "gpu-pack: $*"; }

command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] || {
  echo "gpu-pack: error: no CUDA toolkit (nvcc) here: the CUDA device cannot be built" >&2
  exit 1
}
# Packages and the Python environment, on a machine not set up yet.
[ -x "$root/.venv/bin/python" ] || "$root/scripts/setup.sh" >/dev/null

if [ ! -f "$build/build.ninja" ]; then
  log "configuring $build"
  extra=()
  command -v ccache >/dev/null 2>&1 && \
    extra+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache \
            -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DGNN_RUNTIME_ARCH=x86-64-v3 -DGNN_ENABLE_CUDA=ON \
    -DGNN_PYTHON="$root/.venv/bin/python" "${extra[@]}" >/dev/null
fi
targets=(GNNRuntimeCUDATests gnnrt-cuda-bench)
log "building ${targets[*]}"
ninja -C "$build" -j2 "${targets[@]}" >/dev/null

rm -rf "$pack"
mkdir -p "$pack/bin" "$pack/lib"
cp "$build/test/Unit/GNNRuntimeCUDATests" "$build/bin/gnnrt-cuda-bench" "$pack/bin/"
# The libraries a CUDA image may lack: OpenBLAS (the CPU device the tests
# compare with) and the compiler runtimes it pulls in.
for bin in "$pack"/bin/*; do
  ldd "$bin" | awk '/=> \// {print $1, $3}'
done | sort -u | while read -r name path; do
  case "$name" in
    libopenblas*|libgfortran*|libquadmath*|libgomp*) cp -L "$path" "$pack/lib/$name" ;;
  esac
done
( cd "$root" && git rev-parse HEAD >"$pack/commit" 2>/dev/null ) || true
log "packed $(du -sh "$pack" | cut -f1) into $pack: $(ls "$pack/bin" | tr '\n' ' ')"
