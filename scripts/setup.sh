#!/usr/bin/env bash
# Sets up gnnc on a Debian 12 machine: installs the packages it needs (apt),
# creates the Python virtual environment (.venv) and configures and builds
# the project in build/. Idempotent: a second run only rebuilds what changed.
#
# Environment: GNN_BUILD_DIR (default: build), GNN_BUILD_TYPE (Release),
# GNN_SKIP_APT=1 to skip the package step (for machines set up by hand).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${GNN_BUILD_DIR:-$root/build}
build_type=${GNN_BUILD_TYPE:-Release}

log() { printf '[setup] %s\n' "$*"; }

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    log "error: not root and no sudo: cannot install packages"; exit 1; fi
fi

# --- Debian packages --------------------------------------------------------
packages=(
  # MLIR/LLVM 19, lit and FileCheck (TOOLCHAIN.md)
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  # build
  cmake ninja-build g++ ccache pkg-config
  # tests
  libgtest-dev libgmock-dev
  # runtime: OpenMP build of OpenBLAS, MPI
  libopenblas-openmp-dev libopenmpi-dev openmpi-bin
  # Python for the frontend, its venv and lit
  python3 python3-venv
)
if [ "${GNN_SKIP_APT:-0}" != 1 ]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
      --no-install-recommends "${missing[@]}" >/dev/null
  else
    log "packages present"
  fi
fi

# --- Python virtual environment ---------------------------------------------
venv=$root/.venv
if [ ! -x "$venv/bin/python" ]; then
  log "creating $venv"
  /usr/bin/python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import numpy, pytest, scipy, networkx" >/dev/null 2>&1; then
  log "installing Python packages"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$root/scripts/requirements.txt"
fi

# --- graph-tool's network collection (data only, for the dataset tools) -----
gtdir=$root/.cache/graph-tool/collection
if [ ! -f "$gtdir/polblogs.gt.gz" ]; then
  log "fetching graph-tool's network collection (Debian python3-graph-tool, data only)"
  tmp=$(mktemp -d)
  ( cd "$tmp" && apt-get download -qq python3-graph-tool >/dev/null 2>&1 ) || {
    $sudo apt-get update -qq && ( cd "$tmp" && apt-get download -qq python3-graph-tool >/dev/null 2>&1 ); }
  dpkg -x "$tmp"/python3-graph-tool_*.deb "$tmp/x"
  mkdir -p "$gtdir"
  cp "$tmp"/x/usr/lib/python3/dist-packages/graph_tool/collection/*.gt.gz "$gtdir/"
  rm -rf "$tmp"
fi

# --- Configure and build ----------------------------------------------------
if [ ! -f "$build/build.ninja" ]; then
  log "configuring $build ($build_type)"
  extra=()
  command -v ccache >/dev/null 2>&1 && \
    extra+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  command -v ld.lld >/dev/null 2>&1 && extra+=(-DLLVM_USE_LINKER=lld)
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="$build_type" \
    -DGNN_PYTHON="$venv/bin/python" "${extra[@]}" >/dev/null
fi
log "building"
ninja -C "$build" -j2 | grep -vE '^\[[0-9]+/[0-9]+\] ' || true
# ninja's status is lost in the pipe: check it again.
ninja -C "$build" -j2 >/dev/null
log "done: tools in $build/bin"
