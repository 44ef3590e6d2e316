#!/usr/bin/env bash
# Builds, here, what scripts/gpu-check.sh runs on a GPU machine, and packs it
# into .gpu/ (ignored by git) for the trip: such a machine has the NVIDIA
# driver, the CUDA libraries and PyTorch, but no MLIR, OpenBLAS or GoogleTest
# (docs/CUDA.md). The binaries are built in build-gpu/ for a portable x86-64
# (GNN_RUNTIME_ARCH=x86-64-v3, not this machine's -march=native) and sm_80 +
# sm_90, and every zoo model is compiled for CUDA with its CPU reference
# computed here; the shared libraries they need beyond glibc and CUDA's go
# with them. All of it is one archive, .gpu/pack.tar.gz (~25 MB).
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
targets=(GNNRuntimeCUDATests GNNRuntimeNCCLTests gnnrt-cuda-bench gnn-compile gnnrt gnnrt_main gnnrt_cuda)
log "building ${targets[*]}"
ninja -C "$build" -j2 "${targets[@]}" >/dev/null

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/ref"
cp "$build/test/Unit/GNNRuntimeCUDATests" "$build/test/Unit/GNNRuntimeNCCLTests" \
  "$build/bin/gnnrt-cuda-bench" "$stage/bin/"

# Every zoo model for the GPU (host code for a portable x86-64), and the
# CPU backend's reference on the shipped dataset (compiled and run here):
# one training step's tensors (--dump) and a 20-epoch loss curve.
models=(gcn sage_mean sage_max gat ggcn gin ggnn commnet deep_gcn)
data=$root/examples/datasets/polblogs
for m in "${models[@]}"; do
  log "compiling $m for CUDA"
  "$build/bin/gnn-compile" "$root/examples/models/$m.mlir" --target=cuda \
    --target-cpu=x86-64-v3 -o "$stage/bin/$m-cuda"
  "$root/build/bin/gnn-compile" "$root/examples/models/$m.mlir" -o "$stage/cpu-$m"
  "$stage/cpu-$m" --data "$data" --seed 1 --dump "$stage/ref/$m-step" >/dev/null
  "$stage/cpu-$m" --data "$data" --seed 1 --epochs 20 --quiet \
    --json "$stage/ref/$m-curve.json" >/dev/null
  rm "$stage/cpu-$m"
done

# GCN and GAT planned for a 16 GB device pool at the Reddit-shaped graph's
# sizes (issue 20: ROC trained Reddit on a 16 GB P100): gnn-compile
# --mem-budget needs the dataset's sizes only, which bench/run.py's
# generator gives (docs/MemoryBudget.md); gpu-check.sh runs them with
# --mem-budget 16G beside the unbudgeted ones.
mkdir -p "$stage/reddit-sizes"
cat >"$stage/reddit-sizes/meta.json" <<'JSON'
{"format_version": 1, "name": "rmat-reddit-sizes", "num_vertices": 232965,
 "num_edges": 114394939, "num_features": 602, "num_classes": 41,
 "directed": false, "self_loops": true, "source": "sizes only (gpu-pack.sh)"}
JSON
for m in gcn gat; do
  log "compiling $m for CUDA under --mem-budget 16G (Reddit-shaped sizes)"
  "$build/bin/gnn-compile" "$root/examples/models/$m.mlir" --target=cuda \
    --target-cpu=x86-64-v3 --dataset "$stage/reddit-sizes" --mem-budget 16G \
    --remarks -o "$stage/bin/$m-cuda-16g" 2>"$stage/ref/$m-cuda-16g.remarks" || {
    grep -v remark "$stage/ref/$m-cuda-16g.remarks" >&2
    log "could not compile $m under --mem-budget 16G"
    exit 1
  }
done
rm -rf "$stage/reddit-sizes"

# The libraries a CUDA image may lack: OpenBLAS (the CPU device, which every
# gnnrt program links) and the compiler runtimes it pulls in.
for bin in "$stage"/bin/*; do
  ldd "$bin" | awk '/=> \// {print $1, $3}'
done | sort -u | while read -r name path; do
  case "$name" in
    libopenblas*|libgfortran*|libquadmath*|libgomp*) cp -L "$path" "$stage/lib/$name" ;;
  esac
done
( cd "$root" && git rev-parse HEAD >"$stage/commit" 2>/dev/null ) || true
rm -rf "$pack"
mkdir -p "$pack"
tar -czf "$pack/pack.tar.gz" -C "$stage" .
log "packed $(du -sh "$pack" | cut -f1) into $pack/pack.tar.gz: $(ls "$stage/bin" | tr '\n' ' ')"
