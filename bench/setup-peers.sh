#!/usr/bin/env bash
# Builds bench/.venv-peers: the isolated Python environment of the peer
# systems (PyTorch, PyTorch Geometric, DGL) for bench/run.py.
#
#   bench/setup-peers.sh            install bench/requirements-peers.lock exactly
#                                   (nothing to do when already installed)
#   bench/setup-peers.sh --relock   resolve the top-level pins below from PyPI
#                                   into a fresh environment, check it, and
#                                   rewrite the lock file from `pip freeze`
#
# Only PyPI is used (no other index). Why these versions: DGL's last release
# with a cp311 Linux wheel on PyPI is 2.1.0, which ships its C++ libraries
# (graphbolt, sparse, tensoradapter) for torch 2.0.0 ... 2.2.1 only, so torch
# is 2.2.1. PyPI has no CPU-only torch for Linux x86_64: torch 2.2.1 pulls its
# CUDA 12 runtime wheels (nvidia-*-cu12, triton; about 2.8 GB downloaded,
# 4.5 GB installed) that its libtorch.so links against even on CPU. DGL 2.1.0
# imports torchdata.datapipes (gone after torchdata 0.9; 0.7.1 is the release
# of torch 2.1/2.2's time), pandas, yaml and pydantic without declaring the
# last three. numpy stays below 2 (torch 2.2 is built against numpy 1.x).
#
# Environment: PYTHON (default /usr/bin/python3, Debian 12's 3.11), VENV
# (default bench/.venv-peers). Idempotent: a stamp holds the lock's hash.
set -euo pipefail

bench=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=${VENV:-$bench/.venv-peers}
lock=$bench/requirements-peers.lock
stamp=$venv/.installed-lock.sha256
TOP_LEVEL=(torch==2.2.1 dgl==2.1.0 torch_geometric==2.6.1 torchdata==0.7.1 "numpy<2"
           "pandas<3" pyyaml pydantic matplotlib)

log() { echo "[setup-peers] $*" >&2; }

relock=0
case "${1:-}" in
  --relock) relock=1 ;;
  "") ;;
  -h|--help) sed -n '2,24p' "${BASH_SOURCE[0]}"; exit 0 ;;
  *) echo "usage: $0 [--relock]" >&2; exit 2 ;;
esac

if [ -z "${PYTHON:-}" ]; then
  if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi

# The smoke test: imports and one tiny forward of each peer's convolutions.
smoke() {
  DGLBACKEND=pytorch "$venv/bin/python" - <<'EOF'
import warnings
warnings.filterwarnings("ignore")
import torch, torch_geometric, dgl, dgl.nn
from torch_geometric.nn import GCNConv, SAGEConv, GATConv
torch.manual_seed(0)
x = torch.randn(4, 5)
src, dst = torch.tensor([0, 1, 2, 3, 0, 1, 2, 3]), torch.tensor([1, 2, 3, 0, 0, 1, 2, 3])
ei = torch.stack([src, dst])
adj_t = torch.sparse_coo_tensor(torch.stack([dst, src]), torch.ones(8), (4, 4)).to_sparse_csr()
y = GCNConv(5, 3, cached=True, add_self_loops=False)(x, adj_t)
y = y + SAGEConv(5, 3)(x, adj_t) + GATConv(5, 3, heads=1, add_self_loops=False)(x, ei)
y.sum().backward()
g = dgl.graph((src, dst), num_nodes=4)
z = dgl.nn.GraphConv(5, 3)(g, x) + dgl.nn.SAGEConv(5, 3, "mean")(g, x) \
    + dgl.nn.GATConv(5, 3, num_heads=1)(g, x).squeeze(1)
z.sum().backward()
print(f"torch {torch.__version__}, torch_geometric {torch_geometric.__version__}, "
      f"dgl {dgl.__version__}: imports and forward/backward OK")
EOF
}

# PyG's NeighborLoader samples with pyg-lib or torch-sparse, and PyPI has a
# wheel of neither for torch 2.2.1 (pyg-lib is not on PyPI at all):
# torch-sparse and torch-scatter, which it imports, are compiled from their
# PyPI sdists against the installed torch, CPU only (about 30 minutes on 2
# cores; bench/minibatch.py's PyG cells). SKIP_PYG_SAMPLER=1 skips them: the
# PyG cells then say why they are missing.
sampler() {
  local SPARSE=(torch-scatter==2.1.2 torch-sparse==0.6.18)
  if [ "${SKIP_PYG_SAMPLER:-0}" != 1 ] &&
   ! "$venv/bin/python" -c "import torch_sparse" >/dev/null 2>&1; then
    log "compiling ${SPARSE[*]} from their sdists (PyG's NeighborLoader)"
    FORCE_CUDA=0 MAX_JOBS=${MAX_JOBS:-2} "$venv/bin/python" -m pip install -q \
      --no-deps --no-build-isolation --no-binary torch-scatter,torch-sparse \
      "${SPARSE[@]}" ||
      log "warning: ${SPARSE[*]} did not build: PyG's mini-batch cells will be missing"
  fi
}

if [ "$relock" = 0 ] && [ -f "$stamp" ] && [ -x "$venv/bin/python" ] &&
   [ "$(cat "$stamp")" = "$(sha256sum "$lock" | cut -d' ' -f1)" ]; then
  smoke && { sampler; log "$venv is up to date"; exit 0; }
  log "$venv fails its smoke test: reinstalling"
fi

if ! "$PYTHON" -c "import venv, ensurepip" >/dev/null 2>&1; then
  log "installing python3-venv (apt)"
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq python3-venv >/dev/null
fi

if [ "$relock" = 1 ]; then
  log "resolving ${TOP_LEVEL[*]} from PyPI into a fresh $venv"
  rm -rf "$venv"
fi
[ -x "$venv/bin/python" ] || "$PYTHON" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip

if [ "$relock" = 1 ]; then
  "$venv/bin/python" -m pip install "${TOP_LEVEL[@]}"
else
  log "installing $(grep -vc "^#" "$lock") pinned packages from $lock (about 2.8 GB on a first install)"
  "$venv/bin/python" -m pip install --no-deps -r "$lock"
fi
"$venv/bin/python" -m pip check
smoke

sampler

if [ "$relock" = 1 ]; then
  {
    echo "# bench/.venv-peers, verified by bench/setup-peers.sh --relock ($("$venv/bin/python" -V))"
    echo "# installed with pip install --no-deps -r; top level: ${TOP_LEVEL[*]}"
    "$venv/bin/python" -m pip freeze --all --exclude pip --exclude setuptools --exclude wheel
  } > "$lock"
  log "wrote $lock"
fi
sha256sum "$lock" | cut -d' ' -f1 > "$stamp"
log "$venv ready"
