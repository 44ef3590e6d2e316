#!/usr/bin/env bash
# Runs every check that needs a GPU, on a machine with one, and writes a
# report. The binaries come from scripts/gpu-pack.sh (built on a machine with
# the toolkit, carried in .gpu/); this machine needs the NVIDIA driver, the
# CUDA libraries (cudart, cuBLAS) and, for the peers, PyTorch with PyTorch
# Geometric in its python3.
#
#   scripts/gpu-check.sh [--graphs arxiv,reddit] [--epochs N] [--out DIR]
#
# 1. the CUDA device's tests (GNNRuntimeCUDATests: every compute method and
#    the optimizer steps against the CPU device, memory, errors) and the NCCL
#    communicator's (GNNRuntimeNCCLTests, one rank);
# 2. every zoo model compiled with --target=cuda against the CPU backend on
#    the shipped dataset: one training step's loss, logits and gradients
#    (--dump; DESIGN's rule, relative error < 1e-4 per tensor) and the loss
#    over 20 epochs;
# 3. on each benchmark graph (DESIGN's workloads, generated here with gnnc's
#    own generator): gnnc's GCN and GAT epochs on the GPU beside PyG's
#    (bench/peers.py --device cuda), and the device's kernels
#    (gnnrt-cuda-bench) beside PyTorch's (bench/gpu_kernels.py), and where
#    ncu is installed, the time of each of gnnc's kernels over 2 epochs.
# The report (gpu-check.md) and the raw results (gpu-check-raw.tar.gz) go to
# --out (default: $OUT where the device tool sets it, else gpu-check-out/). Each
# step has a time limit (a hung step fails, the rest still run). Exit status:
# 1 when a test failed or a step broke, 0 otherwise.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
graphs=arxiv,reddit
epochs=20
out=${OUT:-$root/gpu-check-out}
while [ $# -gt 0 ]; do
  case "$1" in
    --graphs) graphs=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check: error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ ! -f "$root/.gpu/pack.tar.gz" ]; then
  echo "gpu-check: error: no .gpu/pack.tar.gz: run scripts/gpu-pack.sh where the CUDA toolkit is, and carry .gpu" >&2
  exit 2
fi
pack=$(mktemp -d)
trap 'rm -rf "$pack"' EXIT
tar -xzf "$root/.gpu/pack.tar.gz" -C "$pack"
raw=$out/raw
mkdir -p "$raw"
report=$out/gpu-check.md
status=0
log() { echo "gpu-check: $*" >&2; }
py=$(command -v python3)

# The CUDA libraries: the toolkit's, else the ones PyTorch's wheels carry.
libs=$pack/lib
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib; do
  [ -d "$d" ] && libs=$libs:$d
done
if ! ls /usr/local/cuda/lib64/libcublas.so.* >/dev/null 2>&1; then
  for f in $(find / -xdev -name 'libcublas.so.1[3-9]*' -not -path '*/proc/*' 2>/dev/null | head -3); do
    libs=$libs:$(dirname "$f")
  done
fi
export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

{
  echo "# GPU check"
  echo
  echo "Written by \`scripts/gpu-check.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'), binaries of commit \`$(cat "$pack/commit" 2>/dev/null || echo unknown)\`."
  echo
  echo "## Machine"
  echo
  echo '```'
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1
  echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
  $py -c 'import torch, torch_geometric; print("torch", torch.__version__, "CUDA", torch.version.cuda, "| torch_geometric", torch_geometric.__version__)' 2>&1
  echo '```'
  echo
} >"$report"

# --- 1. the GoogleTest binaries that need a GPU ------------------------------
# gtest_report BINARY TAG TITLE: runs BINARY, adds its results to the report.
gtest_report() {
  local bin=$1 tag=$2 title=$3 rc
  log "$bin"
  timeout 180 "$pack/bin/$bin" --gtest_output="xml:$raw/$tag-tests.xml" >"$raw/$tag-tests.log" 2>&1
  rc=$?
  [ $rc -ne 0 ] && status=1
  {
    echo "## $title"
    echo
    echo "\`$bin\`: exit status $rc."
    echo
    echo '```'
    grep -E '^\[ *(OK|FAILED|SKIPPED|PASSED) *\]|Failure|error:|failed' "$raw/$tag-tests.log" | head -60
    echo '```'
    echo
  } >>"$report"
}
gtest_report GNNRuntimeCUDATests cuda "The CUDA device's tests"
gtest_report GNNRuntimeNCCLTests nccl "The NCCL communicator's tests (one rank on one GPU)"

# --- 2. the zoo against the CPU backend ---------------------------------------
models="gcn sage_mean sage_max gat ggcn gin ggnn commnet deep_gcn"
polblogs=$root/examples/datasets/polblogs
for m in $models; do
  log "$m: one step and 20 epochs on the GPU"
  timeout 60 "$pack/bin/$m-cuda" --data "$polblogs" --seed 1 --dump "$raw/$m-step" >"$raw/$m-step.log" 2>&1 || status=1
  # The same step with every row of more than 3 edges in pieces (the fused
  # gathers' pieces and combine kernels on most rows; docs/CUDA.md).
  GNNRT_PIECE_EDGES=3 timeout 60 "$pack/bin/$m-cuda" --data "$polblogs" --seed 1 \
    --dump "$raw/$m-step-pieces" >"$raw/$m-step-pieces.log" 2>&1 || status=1
  timeout 60 "$pack/bin/$m-cuda" --data "$polblogs" --seed 1 --epochs 20 --quiet \
    --json "$raw/$m-curve.json" >"$raw/$m-curve.log" 2>&1 || status=1
done
$py - "$pack/ref" "$raw" "$report" $models <<'PYEOF' || status=1
import glob, json, os, sys
import numpy as np
ref, raw, report, models = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
ok = True
rows = []

def step_error(m, dump):
    """The worst relative error of `dump`'s tensors against the CPU's step."""
    worst, worst_name, n = 0.0, "", 0
    for path in sorted(glob.glob(os.path.join(ref, f"{m}-step", "**", "*.npy"), recursive=True)):
        rel = os.path.relpath(path, os.path.join(ref, f"{m}-step"))
        a = np.load(path).astype(np.float64)
        b = np.load(os.path.join(raw, dump, rel)).astype(np.float64)
        err = np.linalg.norm(a - b) / max(np.linalg.norm(a), np.linalg.norm(b), 1e-12)
        n += 1
        if err > worst:
            worst, worst_name = err, rel
    return worst, worst_name, n

for m in models:
    try:
        worst, worst_name, n = step_error(m, f"{m}-step")
        pieces, _, n_pieces = step_error(m, f"{m}-step-pieces")
        with open(os.path.join(ref, f"{m}-curve.json")) as f:
            ca = [h["loss"] for h in json.load(f)["history"]]
        with open(os.path.join(raw, f"{m}-curve.json")) as f:
            d = json.load(f)
            cb = [h["loss"] for h in d["history"]]
        curve = max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(ca, cb))
        good = worst < 1e-4 and pieces < 1e-4 and n > 0 and n_pieces == n and len(ca) == len(cb)
        rows.append(f"| {m} | {n} | {worst:.2e} ({worst_name}) | {pieces:.2e} | {'yes' if good else '**no**'} | "
                    f"{ca[0]:.4f} → {ca[-1]:.4f} | {cb[0]:.4f} → {cb[-1]:.4f} | {curve:.2e} | "
                    f"{d['median_epoch_ms']:.2f} |")
        ok &= good
    except (OSError, ValueError, KeyError) as e:
        rows.append(f"| {m} | — | failed: {type(e).__name__} {e} | | **no** | | | | |")
        ok = False
with open(report, "a") as r:
    r.write("## The zoo on the GPU against the CPU backend\n\n")
    r.write("Each model compiled with `--target=cuda` (kernels to PTX through MLIR's NVVM path, "
            "JIT-loaded by the driver) on the shipped polblogs dataset, seed 1. One training step "
            "(`--dump`: loss, logits, every gradient and parameter after the step) against the CPU "
            "backend's, per tensor ‖a−b‖/max(‖a‖,‖b‖) (DESIGN: < 1e-4), also with every row of "
            "more than 3 edges in pieces (`GNNRT_PIECE_EDGES=3`); then the loss over 20 "
            "epochs (same initialisation and dropout masks on both).\n\n")
    r.write("| model | tensors | worst relative error | in pieces of 3 | < 1e-4 | "
            "CPU loss, epoch 1 → 20 | GPU loss | worst loss difference | GPU epoch ms |\n"
            "|---|---|---|---|---|---|---|---|---|\n")
    r.write("\n".join(rows) + "\n\n")
sys.exit(0 if ok else 1)
PYEOF

# --- 3. the benchmark graphs --------------------------------------------------
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
IFS=, read -r -a graph_list <<<"$graphs"
for g in "${graph_list[@]}"; do
  dir=$($py -c "import sys; sys.path.insert(0, '$root/bench'); import run; print(run.graph_path('$g'))") || { status=1; continue; }
  if [ ! -f "$dir/meta.json" ]; then
    log "generating $g"
    t0=$(date +%s)
    $py -c "import sys; sys.path.insert(0, '$root/bench'); import run; run.make_graph('$g')" >"$raw/gen-$g.log" 2>&1 || {
      log "could not generate $g"; status=1; continue; }
    log "generated $g in $(( $(date +%s) - t0 )) s"
  fi
  log "$g: kernels"
  "$pack/bin/gnnrt-cuda-bench" "$dir" >"$raw/kernels-gnnrt-$g.jsonl" 2>"$raw/kernels-gnnrt-$g.err" || status=1
  $py "$root/bench/gpu_kernels.py" "$dir" >"$raw/kernels-torch-$g.jsonl" 2>"$raw/kernels-torch-$g.err" || status=1
  for model in gcn gat; do
    log "$g: gnnc $model on the GPU, $epochs epochs"
    timeout 240 "$pack/bin/$model-cuda" --data "$dir" --epochs "$epochs" --eval-every 1000000000 --quiet \
      --json "$raw/gnnc-$model-$g.json" >"$raw/gnnc-$model-$g.log" 2>&1 || status=1
    # The same model planned for a 16 GB device pool (gpu-pack.sh), run
    # with the pool capped there (the CUDA context is outside the pool).
    if [ "$g" = reddit ] && [ -x "$pack/bin/$model-cuda-16g" ]; then
      log "$g: gnnc $model with the device pool capped at 16 GB, $epochs epochs"
      timeout 240 "$pack/bin/$model-cuda-16g" --data "$dir" --mem-budget 16G --epochs "$epochs" \
        --eval-every 1000000000 --quiet --json "$raw/gnnc-$model-$g-16g.json" \
        >"$raw/gnnc-$model-$g-16g.log" 2>&1 || status=1
    fi
    log "$g: PyG $model, $epochs epochs"
    # A peer running out of GPU memory is a result (the table says so), not
    # a broken check.
    timeout 240 $py "$root/bench/peers.py" --system pyg --model "$model" --data "$dir" --epochs "$epochs" \
      --device cuda --quiet --json "$raw/pyg-$model-$g.json" >"$raw/pyg-$model-$g.log" 2>&1 ||
      grep -q OutOfMemoryError "$raw/pyg-$model-$g.log" || status=1
    # Where gnnc's GPU time goes: every kernel's time over 2 epochs (ncu
    # serialises the launches). Informational: a profiler that cannot read
    # the counters fails no check.
    if command -v ncu >/dev/null 2>&1; then
      log "$g: ncu of gnnc $model, 2 epochs"
      timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum \
        --print-summary per-kernel "$pack/bin/$model-cuda" --data "$dir" --epochs 2 \
        --eval-every 1000000000 --quiet >"$raw/ncu-$model-$g.txt" 2>&1 || true
    fi
  done
done

$py - "$raw" "$report" "$graphs" <<'PYEOF'
import json, os, re, sys
out, report, graphs = sys.argv[1], sys.argv[2], sys.argv[3].split(",")

def lines(path):
    try:
        with open(path) as f:
            return [json.loads(l) for l in f if l.strip().startswith("{")]
    except (OSError, ValueError):
        return []

with open(report, "a") as r:
    r.write("## Kernels: the CUDA device against PyTorch on the same GPU\n\n")
    r.write("Median of 20 after a warm-up, CUDA events. SpMM: GCN's weighted aggregation "
            "(forward: to the destinations; backward: to the sources), gnnrt's warp-per-row "
            "kernel against `torch.sparse.mm` on a CSR matrix (what PyG's cached GCNConv runs). "
            "GEMM: [V, F] x [F, W] in FP32, cuBLAS in both. Ratio = PyTorch's time / gnnrt's "
            "(> 1: gnnrt faster).\n\n")
    r.write("| graph | W | SpMM fwd ms gnnrt / torch | ratio | SpMM bwd ms gnnrt / torch | ratio "
            "| GEMM ms gnnrt / torch | gnnrt GFLOP/s fwd |\n|---|---|---|---|---|---|---|---|\n")
    for g in graphs:
        ours = {d["width"]: d for d in lines(os.path.join(out, f"kernels-gnnrt-{g}.jsonl")) if "width" in d}
        theirs = {d["width"]: d for d in lines(os.path.join(out, f"kernels-torch-{g}.jsonl")) if "width" in d}
        for w in sorted(ours):
            a, b = ours[w], theirs.get(w, {})
            def cell(k):
                return f"{a[k]:.3f} / {b[k]:.3f}" if k in b else f"{a[k]:.3f} / —"
            def ratio(k):
                return f"{b[k] / a[k]:.2f}" if k in b and a[k] > 0 else "—"
            r.write(f"| {g} | {w} | {cell('spmm_forward_ms')} | {ratio('spmm_forward_ms')} | "
                    f"{cell('spmm_backward_ms')} | {ratio('spmm_backward_ms')} | {cell('gemm_ms')} | "
                    f"{a['spmm_forward_GFLOPs']} |\n")
        for d in lines(os.path.join(out, f"kernels-gnnrt-{g}.jsonl")):
            if "copy_GBps" in d:
                r.write(f"\n{g}: {d['vertices']} vertices, {d['edges']} edges; device copy "
                        f"{d['copy_GBps']} GB/s (read + write).\n")
    r.write("\n## Epochs on the GPU: gnnc against PyG\n\n")
    r.write("Median epoch (forward, backward, Adam step) after the first; PyG times an epoch "
            "between `torch.cuda.synchronize()` calls, gnnc's executable between its own "
            "(the loss is read back each epoch). Ratio = PyG / gnnc (> 1: gnnc faster). Peak: "
            "PyTorch's allocator peak; gnnc's device peak (all its GPU memory).\n\n")
    r.write("| graph | model | gnnc ms | PyG ms | ratio | gnnc peak MiB | PyG peak MiB | "
            "gnnc loss | PyG loss |\n|---|---|---|---|---|---|---|---|---|\n")
    def median(history):
        ms = sorted(h["ms"] for h in history[1:]) or [history[0]["ms"]]
        return ms[len(ms) // 2]
    for g in graphs:
        for m in ("gcn", "gat"):
            cells = []
            for system in ("gnnc", "pyg"):
                try:
                    with open(os.path.join(out, f"{system}-{m}-{g}.json")) as f:
                        cells.append(json.load(f))
                except (OSError, ValueError):
                    cells.append(None)
            a, b = cells
            def fmt(x, spec):
                return format(x, spec) if x is not None else "failed"
            oom = None
            if b is None:
                try:
                    with open(os.path.join(out, f"pyg-{m}-{g}.log")) as f:
                        log = f.read()
                    if "OutOfMemoryError" in log:
                        asked = re.search(r"Tried to allocate ([0-9.]+ [KMGT]iB)", log)
                        oom = "out of memory" + (f" (asks for {asked.group(1)})" if asked else "")
                except OSError:
                    pass
            ta = median(a["history"]) if a else None
            tb = median(b["history"]) if b else None
            ratio = fmt(tb / ta, ".2f") if ta and tb else "—"
            peak_a = a["memory"].get("device_peak_bytes", 0) / 2**20 if a else None
            peak_b = b.get("peak_device_mib") if b else None
            loss_a = a["final"]["loss"] if a else None
            loss_b = b["final"]["loss"] if b else None
            r.write(f"| {g} | {m} | {fmt(ta, '.2f')} | {oom or fmt(tb, '.2f')} | {ratio} | "
                    f"{fmt(peak_a, '.0f')} | {oom or fmt(peak_b, '.0f')} | {fmt(loss_a, '.4f')} | "
                    f"{'—' if oom else fmt(loss_b, '.4f')} |\n")
    if "reddit" in graphs:
        r.write("\n## The Reddit-shaped graph in a 16 GB device pool\n\n")
        r.write("GCN and GAT compiled with `--target=cuda --mem-budget 16G` at the graph's "
                "sizes (the chunk tiling and the placement plan every buffer resident) and "
                "run with `--mem-budget 16G`, which caps gnnc's device pool (an allocation past "
                "it stops the run, so a run that finished stayed within it). Target: the "
                "unbudgeted loss. The pool is gnnc's allocations; the CUDA context and "
                "cuBLAS's workspace (a few hundred MiB) are outside it, so a 16 GB GPU also "
                "needs that headroom.\n\n")
        r.write("| model | epoch ms, capped / not | device peak MiB | within 16 GiB | loss capped "
                "/ not |\n|---|---|---|---|---|\n")
        for m in ("gcn", "gat"):
            runs = []
            for name in (f"gnnc-{m}-reddit-16g.json", f"gnnc-{m}-reddit.json"):
                try:
                    with open(os.path.join(out, name)) as f:
                        runs.append(json.load(f))
                except (OSError, ValueError):
                    runs.append(None)
            a, b = runs
            if a is None:
                r.write(f"| {m} | failed (gnnc-{m}-reddit-16g.log) | | | |\n")
                continue
            peak = a["memory"].get("device_peak_bytes", 0)
            within = "yes" if peak <= 16 * 2**30 else "**no**"
            tb = f"{median(b['history']):.1f}" if b else "—"
            lb = f"{b['final']['loss']:.4f}" if b else "—"
            r.write(f"| {m} | {median(a['history']):.1f} / {tb} | {peak / 2**20:.0f} | {within} | "
                    f"{a['final']['loss']:.4f} / {lb} |\n")
PYEOF
[ $? -ne 0 ] && status=1

$py - "$raw" "$report" "$graphs" <<'PYEOF'
import os, re, sys
out, report, graphs = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
UNITS = {"ns": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0, "msecond": 1.0, "s": 1e3, "second": 1e3}

def kernels(path):
    """(ms per epoch, invocations per epoch, name) of each kernel of an
    `ncu --print-summary per-kernel` run of 2 epochs."""
    rows, name, calls = [], None, 0
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"\s+(\S.*?) \(\d+, \d+, \d+\)x\(\d+, \d+, \d+\), .*Invocations (\d+)", line)
            if m:
                name, calls = m.group(1), int(m.group(2))
                name = re.sub(r"\(.*", "", name.replace("void ", ""))
                continue
            if "gpu__time_duration.sum" in line and name:
                parts = line.split()
                avg = float(parts[-1].replace(",", "")) * UNITS.get(parts[1], float("nan"))
                rows.append((avg * calls / 2, calls / 2, name))
                name = None
    return sorted(rows, reverse=True)

sections = []
for g in graphs:
    for m in ("gcn", "gat"):
        path = os.path.join(out, f"ncu-{m}-{g}.txt")
        if not os.path.exists(path):
            continue
        rows = kernels(path)
        if not rows:
            sections.append(f"{g}, {m}: ncu gave no kernel times (see raw/ncu-{m}-{g}.txt).\n")
            continue
        total = sum(r[0] for r in rows)
        text = [f"{g}, {m}: {total:.2f} ms of kernels per epoch in {len(rows)} kernels; the 10 longest:\n",
                "| kernel | ms per epoch | share | launches per epoch |", "|---|---|---|---|"]
        for ms, calls, name in rows[:10]:
            text.append(f"| `{name}` | {ms:.3f} | {100 * ms / total:.1f} % | {calls:g} |")
        sections.append("\n".join(text) + "\n")
if sections:
    with open(report, "a") as r:
        r.write("\n## Where gnnc's GPU time goes (ncu)\n\n")
        r.write("`ncu --metrics gpu__time_duration.sum --print-summary per-kernel`, 2 epochs "
                "(the launches serialised; `__gnn_kernel_N` are the compiled kernels, numbered "
                "as in `gnn-compile M --target=cuda -emit=mlir | gnn-opt --convert-gnn-to-runtime=target=cuda`).\n\n")
        r.write("\n".join(sections))
PYEOF
# One file for the raw results (the device tool brings back a few files).
tar -czf "$out/gpu-check-raw.tar.gz" -C "$out" raw && rm -rf "$raw"
log "report: $report, raw results: $out/gpu-check-raw.tar.gz (status $status)"
cat "$report"
exit $status
