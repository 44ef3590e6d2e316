#!/usr/bin/env python3
"""gnnc against PyTorch Geometric and DGL on CPU (issue 7): one command.

    bench/run.py --quick     arxiv-shaped RMAT graph only, few epochs (minutes)
    bench/run.py             + graph-tool's three largest real graphs and the
                             accuracy comparison (shipped polblogs, an SBM graph)
    bench/run.py --full      + the Reddit-shaped RMAT graph (hours)

What it does:
1. builds the peers' environment bench/.venv-peers (bench/setup-peers.sh,
   pinned by bench/requirements-peers.lock) unless it is already there;
2. generates the workloads of DESIGN.md's table once into bench/.cache/ with
   gnnc's own dataset tools (gnnc.data.rmat, gnnc.data.sbm, graph-tool files);
3. compiles the zoo models at DESIGN's widths with gnn-compile (GCN and
   GraphSAGE-mean F->256->C, GAT 4x64 -> C, G-GCN F->128->C);
4. runs every cell (graph x model x system x repetition) in its own process
   with the same threads, epochs, learning rate and seed: gnnc's executable,
   and bench/peers.py under the peers' interpreter for PyG and DGL. Peak RSS
   per process comes from wait4's rusage; a cell that passes the memory cap
   or its time limit is killed and recorded as "OOM" / "timeout", one that
   crashes as "failed". Each cell's result is cached in
   bench/.cache/peers-cells.json at once, so an interrupted run resumes;
5. writes docs/benchmarks/peers.json, peers.md (median and spread of the epoch
   time, speed-ups, peak memory, test accuracy) and PNG plots.

Epoch time = one training step (forward, backward, optimizer), as gnnc's
executables time it; the first epoch of every process is left out (PyG's
cached normalisation, DGL's lazy formats, first-touch page faults). Not a
test: the machine is shared, so only ratios within one run mean much.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
CACHE = os.path.join(BENCH, ".cache")
PEERS_VENV = os.path.join(BENCH, ".venv-peers")
PEERS_PY = os.path.join(PEERS_VENV, "bin", "python")
GNNC_VENV_PY = os.path.join(ROOT, ".venv", "bin", "python")
OUT_DIR = os.path.join(ROOT, "docs", "benchmarks")
CELLS_FILE = os.path.join(CACHE, "peers-cells.json")
LOG_DIR = os.path.join(CACHE, "peers-logs")

# The gnnc side needs numpy and python/gnnc, never torch: re-run under the
# project's environment when started with a bare interpreter.
try:
    import numpy as np  # noqa: F401
except ImportError:  # pragma: no cover
    if os.path.exists(GNNC_VENV_PY) and os.path.realpath(sys.executable) != os.path.realpath(GNNC_VENV_PY):
        os.execv(GNNC_VENV_PY, [GNNC_VENV_PY] + sys.argv)
    raise
sys.path.insert(0, os.path.join(ROOT, "python"))

SYSTEMS = ("gnnc", "pyg", "dgl")
LABEL = {"gnnc": "gnnc", "pyg": "PyG", "dgl": "DGL"}
MODELS = ("gcn", "sage", "gat", "ggcn")
MODEL_LABEL = {"gcn": "GCN (F→256→C)", "sage": "GraphSAGE-mean (F→256→C)",
               "gat": "GAT (4×64 → C)", "ggcn": "G-GCN (F→128→C)"}

# DESIGN.md's benchmark table. RMAT draws are chosen for the edge counts
# there: 2.9M draws give 2.42M directed edges at arxiv's size; 119M draws
# give about 114M at Reddit's (expected count of distinct symmetrised pairs,
# computed from the RMAT cell probabilities; the arxiv case lands within 1%).
GRAPHS = {
    "arxiv": {"kind": "rmat", "vertices": 169343, "draws": 2900000, "features": 128,
              "classes": 40, "seed": 1, "title": "arxiv-shaped RMAT"},
    "reddit": {"kind": "rmat", "vertices": 232965, "draws": 119000000, "features": 602,
               "classes": 41, "seed": 1, "title": "Reddit-shaped RMAT"},
    "pgp": {"kind": "gt", "file": "pgp-strong-2009", "features": 128, "classes": 16,
            "seed": 1, "title": "pgp-strong-2009 (graph-tool), synthetic features/labels"},
    "enron": {"kind": "gt", "file": "email-Enron", "features": 128, "classes": 16,
              "seed": 1, "title": "email-Enron (graph-tool), synthetic features/labels"},
    "condmat": {"kind": "gt", "file": "cond-mat-2005", "features": 128, "classes": 16,
                "seed": 1, "title": "cond-mat-2005 (graph-tool), synthetic features/labels"},
    # accuracy comparison (issue 7): the shipped dataset and an SBM graph
    "polblogs": {"kind": "shipped", "path": os.path.join(ROOT, "examples", "datasets", "polblogs"),
                 "title": "polblogs (shipped)"},
    "sbm": {"kind": "sbm", "vertices": 3000, "blocks": 6, "p_in": 0.01, "p_out": 0.002,
            "features": 32, "noise": 1.5, "seed": 11, "title": "SBM 3000 vertices, 6 blocks"},
}
TIMING_GRAPHS = {"quick": ["arxiv"], "default": ["arxiv", "pgp", "enron", "condmat"],
                 "full": ["arxiv", "reddit", "pgp", "enron", "condmat"]}
ACCURACY_GRAPHS = ["polblogs", "sbm"]


def log(msg: str) -> None:
    print(f"[bench] {msg}", flush=True)


# ----------------------------------------------------------------------------
# Workloads
# ----------------------------------------------------------------------------

def graph_name(key: str) -> str:
    g = GRAPHS[key]
    if g["kind"] == "rmat":
        return f"rmat-{key}-{g['vertices']}-{g['draws']}"
    if g["kind"] == "gt":
        return f"gt-{g['file']}-f{g['features']}-c{g['classes']}-s{g['seed']}"
    if g["kind"] == "sbm":
        return (f"sbm-{g['vertices']}-{g['blocks']}-{g['p_in']}-{g['p_out']}-f{g['features']}"
                f"-n{g['noise']}-s{g['seed']}")
    return key


def graph_path(key: str) -> str:
    g = GRAPHS[key]
    if g["kind"] == "shipped":
        return g["path"]
    # The arxiv graph keeps bench/gcn_arxiv.py's name, so both share it.
    name = "rmat-arxiv-169343-2900000" if key == "arxiv" else graph_name(key)
    return os.path.join(CACHE, name)


def make_graph(key: str) -> None:
    """Generates one workload (run in a child process: the large ones peak at
    several GiB inside numpy)."""
    import numpy as np
    from gnnc.data import from_edges, rmat, save, sbm
    g, path = GRAPHS[key], graph_path(key)
    name = os.path.basename(path)
    if g["kind"] == "rmat":
        ds = rmat(g["vertices"], g["draws"], num_features=g["features"],
                  num_classes=g["classes"], seed=g["seed"], name=name)
    elif g["kind"] == "sbm":
        ds = sbm(g["vertices"], g["blocks"], g["p_in"], g["p_out"], num_features=g["features"],
                 noise=g["noise"], seed=g["seed"], name=name)
    elif g["kind"] == "gt":
        from gnnc.data.gt import read_gt
        gt_file = os.path.join(ROOT, ".cache", "graph-tool", "collection", g["file"] + ".gt.gz")
        if not os.path.exists(gt_file):
            raise SystemExit(f"{gt_file} missing: run scripts/setup.sh (it unpacks graph-tool's "
                             "collection)")
        t = read_gt(gt_file)
        V = t.num_vertices
        # SBM-style synthetic features and labels on the real topology: the
        # label is random, the features a noisy one-hot of it.
        rng = np.random.default_rng(g["seed"])
        labels = rng.integers(0, g["classes"], V)
        features = rng.standard_normal((V, g["features"])).astype(np.float32)
        features[np.arange(V), labels] += 1.0
        ds = from_edges(t.src, t.dst, V, features=features, labels=labels,
                        num_classes=g["classes"], name=name, symmetrize=True, self_loops=True,
                        seed=g["seed"],
                        source=f"graph-tool collection {g['file']} (Debian python3-graph-tool); "
                               "symmetrised, self-loops; synthetic labels, features = noisy "
                               "one-hot of the label")
    else:
        raise SystemExit(f"{key}: nothing to generate")
    tmp = path + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    save(ds, tmp)
    os.replace(tmp, path)


def ensure_graph(key: str) -> str:
    path = graph_path(key)
    if os.path.exists(os.path.join(path, "meta.json")):
        return path
    log(f"generating {key}: {GRAPHS[key]['title']} -> {os.path.relpath(path, ROOT)}")
    t0 = time.time()
    subprocess.run([sys.executable, os.path.abspath(__file__), "--make-graph", key], check=True)
    log(f"  done in {time.time() - t0:.0f} s")
    return path


def graph_info(path: str) -> dict:
    with open(os.path.join(path, "meta.json")) as f:
        m = json.load(f)
    return {"name": m["name"], "vertices": m["num_vertices"], "edges": m["num_edges"],
            "features": m["num_features"], "classes": m["num_classes"], "path": os.path.relpath(path, ROOT)}


# ----------------------------------------------------------------------------
# gnnc executables
# ----------------------------------------------------------------------------

def gnnc_program(model: str):
    from gnnc import zoo
    return {"gcn": lambda: zoo.gcn(hidden=256, dropout=0.5),
            "sage": lambda: zoo.sage_mean(hidden=256, dropout=0.5),
            "gat": lambda: zoo.gat(heads=4, hidden=64, dropout=0.5, slope=0.2),
            "ggcn": lambda: zoo.ggcn(hidden=128, dropout=0.5)}[model]()


def file_hash(*paths: str) -> str:
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()[:16]


def compile_gnnc(model: str, data: str) -> str:
    """The executable of one model at DESIGN's widths for the graph in `data`,
    compiled as a user would (`gnn-compile --dataset DIR`: the dataset's widths
    and degree drive the cost models, like DGL's GraphConv choosing its
    multiply order from the widths), cached by the hash of its IR, of the
    dataset's meta.json, of gnn-compile and of the runtime it links (both
    change under this benchmark)."""
    from gnnc import toolchain
    from gnnc.printer import to_mlir
    program = gnnc_program(model)
    compiler = toolchain.find_tool("gnn-compile")
    h = hashlib.sha256(to_mlir(program).encode())
    h.update(file_hash(os.path.join(data, "meta.json")).encode())
    lib = os.path.join(os.path.dirname(os.path.dirname(compiler)), "lib")
    runtime = [os.path.join(lib, f) for f in ("libgnnrt.a", "libgnnrt_main.a")]
    h.update(file_hash(compiler, *[p for p in runtime if os.path.exists(p)]).encode())
    prefix = f"{model}-{os.path.basename(os.path.normpath(data))}-"
    exe = os.path.join(CACHE, "bin", prefix + h.hexdigest()[:12])
    if not os.path.exists(exe):
        os.makedirs(os.path.dirname(exe), exist_ok=True)
        log(f"compiling {model} for {os.path.basename(data)} with {os.path.relpath(compiler, ROOT)}")
        toolchain.compile(program, exe + ".tmp", ["--dataset", data])
        os.replace(exe + ".tmp", exe)
        for old in os.listdir(os.path.dirname(exe)):      # older builds of this model and graph
            if old.startswith(prefix) and old != os.path.basename(exe):
                os.remove(os.path.join(os.path.dirname(exe), old))
    return exe


# ----------------------------------------------------------------------------
# Running one cell
# ----------------------------------------------------------------------------

def rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


OOM_TEXT = ("std::bad_alloc", "can't allocate memory", "MemoryError", "out of memory",
            "Cannot allocate memory", "DefaultCPUAllocator")


def run_process(cmd, env, log_path, timeout_s, mem_cap_kib) -> dict:
    """Runs one cell; returns status (ok, OOM, timeout, failed), exit code,
    wall time and the process's peak RSS (wait4)."""
    t0 = time.time()
    with open(log_path, "w") as logf:
        logf.write("$ " + " ".join(cmd) + "\n")
        logf.flush()
        p = subprocess.Popen(cmd, env=env, stdout=logf, stderr=subprocess.STDOUT,
                             start_new_session=True)
        killed, peak_seen = None, 0
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            rss = rss_kib(p.pid)
            peak_seen = max(peak_seen, rss)
            if killed is None and mem_cap_kib and rss > mem_cap_kib:
                killed = "OOM"
            elif killed is None and time.time() - t0 > timeout_s:
                killed = "timeout"
            if killed:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)
        p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.time() - t0
    with open(log_path, errors="replace") as f:
        text = f.read()
    tail = "\n".join(text.strip().splitlines()[-6:])
    maxrss_mib = max(ru.ru_maxrss, peak_seen) / 1024
    if killed:
        return {"status": killed, "rc": p.returncode, "wall_s": wall, "maxrss_mib": maxrss_mib,
                "error": f"killed: {'RSS above the memory cap' if killed == 'OOM' else 'time limit'}"}
    if p.returncode != 0:
        status = "OOM" if (p.returncode == -signal.SIGKILL or any(t in text for t in OOM_TEXT)) \
            else "failed"
        return {"status": status, "rc": p.returncode, "wall_s": wall, "maxrss_mib": maxrss_mib,
                "error": tail[-800:]}
    return {"status": "ok", "rc": 0, "wall_s": wall, "maxrss_mib": maxrss_mib}


def run_cell(system, model, graph_key, data, rep, cfg, exe, tag) -> dict:
    threads, epochs = cfg["threads"], cfg["epochs"]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads),
               DGLBACKEND="pytorch")
    os.makedirs(LOG_DIR, exist_ok=True)
    out_json = os.path.join(LOG_DIR, f"{tag}.json")
    if os.path.exists(out_json):
        os.remove(out_json)
    common = ["--data", data, "--epochs", str(epochs), "--threads", str(threads),
              "--seed", str(rep), "--lr", str(cfg["lr"]), "--weight-decay", str(cfg["weight_decay"]),
              "--json", out_json, "--quiet"]
    if system == "gnnc":
        if isinstance(exe, Exception):
            return {"status": "failed", "error": f"gnn-compile: {exe}"[:800]}
        cmd = [exe] + common + ["--eval-every", str(epochs)]
    else:
        cmd = [PEERS_PY, os.path.join(BENCH, "peers.py"), "--system", system, "--model", model] + common
    r = run_process(cmd, env, os.path.join(LOG_DIR, f"{tag}.log"), cfg["timeout"], cfg["mem_cap_kib"])
    r["when"] = time.strftime("%Y-%m-%d %H:%M:%S")
    if r["status"] == "ok":
        try:
            with open(out_json) as f:
                s = json.load(f)
        except (OSError, ValueError) as e:
            return dict(r, status="failed", error=f"no summary: {e}")
        r["epoch_ms"] = [h["ms"] for h in s["history"]]
        r["test_acc"] = s["final"]["test_acc"]
        r["final_loss"] = s["final"]["loss"]
        if system == "gnnc":
            r["buffer_bytes"] = s.get("buffer_bytes")
        else:
            r["version"] = s.get("version")
            r["rss_before_training_mib"] = s.get("rss_before_training_mib")
    return r


# ----------------------------------------------------------------------------
# Aggregation and reports
# ----------------------------------------------------------------------------

def steady(epoch_ms):
    return epoch_ms[1:] if len(epoch_ms) > 1 else list(epoch_ms)


def aggregate(runs: list) -> dict:
    ok = [r for r in runs if r.get("status") == "ok"]
    bad = [r for r in runs if r.get("status") != "ok"]
    agg = {"status": "ok" if not bad else bad[0]["status"], "reps": len(runs), "reps_ok": len(ok)}
    if bad:
        agg["error"] = bad[0].get("error", "")
    if ok:
        times = [t for r in ok for t in steady(r["epoch_ms"])]
        rep_medians = [statistics.median(steady(r["epoch_ms"])) for r in ok]
        q = statistics.quantiles(times, n=4) if len(times) >= 2 else [times[0]] * 3
        agg.update({
            "epoch_ms_median": statistics.median(times), "epoch_ms_min": min(times),
            "epoch_ms_max": max(times), "epoch_ms_q1": q[0], "epoch_ms_q3": q[2],
            "rep_median_ms": rep_medians,
            "maxrss_mib": max(r["maxrss_mib"] for r in ok),
            "test_acc": [r["test_acc"] for r in ok],
            "test_acc_mean": statistics.fmean(r["test_acc"] for r in ok),
            "test_acc_std": statistics.stdev([r["test_acc"] for r in ok]) if len(ok) > 1 else 0.0,
        })
    elif bad:
        agg["maxrss_mib"] = max(r.get("maxrss_mib", 0) for r in bad)
    return agg


def fmt_ms(ms):
    return f"{ms:.0f} ms" if ms < 10000 else f"{ms / 1000:.1f} s"


def fmt_time_cell(a):
    if not a or a["status"] != "ok":
        return "—" if not a else f"**{a['status']}**"
    spread = (f"{fmt_ms(a['epoch_ms_min'])}–{fmt_ms(a['epoch_ms_max'])}"
              if a["epoch_ms_max"] > a["epoch_ms_min"] else "")
    return f"{fmt_ms(a['epoch_ms_median'])}" + (f" ({spread})" if spread else "")


def fmt_mem(a):
    if not a or not a.get("maxrss_mib"):
        return "—"
    v = a["maxrss_mib"]
    s = f"{v / 1024:.2f} GiB" if v >= 1024 else f"{v:.0f} MiB"
    return s if a["status"] == "ok" else f"≥{s} ({a['status']})"


def speedup(gnnc, peer):
    if not gnnc or not peer or gnnc["status"] != "ok" or peer["status"] != "ok":
        if gnnc and gnnc["status"] == "ok" and peer and peer["status"] != "ok":
            return f"∞ (peer {peer['status']})"
        return "—"
    return f"{peer['epoch_ms_median'] / gnnc['epoch_ms_median']:.2f}×"


def mem_ratio(gnnc, peer):
    if not gnnc or not peer or gnnc["status"] != "ok" or peer["status"] != "ok":
        return "—"
    return f"{gnnc['maxrss_mib'] / peer['maxrss_mib']:.2f}"


def write_reports(result: dict, plot: bool) -> None:
    os.makedirs(OUT_DIR, exist_ok=True)
    name = result["output"]
    with open(os.path.join(OUT_DIR, f"{name}.json"), "w") as f:
        json.dump(result, f, indent=1)
    cfg = result["config"]
    L = ["# gnnc against PyTorch Geometric and DGL (CPU)", "",
         f"`{cfg['command']}` on {result['date']}: {cfg['threads']} threads for every "
         f"system, {cfg['epochs']} epochs × {cfg['reps']} repetitions per cell (seeds 0..{cfg['reps'] - 1}), "
         f"Adam lr {cfg['lr']}, dropout 0.5, full-graph training. Machine: {result['machine']['cpu']}, "
         f"{result['machine']['cores']} cores, {result['machine']['mem_gib']:.0f} GiB (shared: load "
         f"average {result['machine']['loadavg_start']} at the start). Peers: {result['peers_version']}.",
         "",
         "Epoch time = one training step (forward + backward + optimizer step), the first epoch of "
         "each process left out; **median (min–max)** over the remaining epochs of all repetitions. "
         "**Speed-up** = peer's median / gnnc's median (> 1: gnnc faster). **Peak RSS** = the "
         "process's maximum resident set (wait4), dataset and runtime included; the peers' include "
         "the Python interpreter with torch and DGL/PyG loaded. **Memory ratio** = gnnc's peak RSS / "
         "the peer's. A cell that exceeded the memory cap "
         f"({cfg['mem_cap_kib'] / 2**20:.1f} GiB) or its time limit ({cfg['timeout']} s) is "
         "**OOM** / **timeout**. Peers as DESIGN.md says: PyG `GCNConv(cached=True)` and `SAGEConv` on a "
         "torch.sparse CSR adjacency, `GATConv` on edge_index; DGL `GraphConv`, `SAGEConv`, `GATConv`; "
         "G-GCN written by hand in each with W_H h and W_C h hoisted to the vertices "
         "(code: `bench/peers.py`). gnnc: each model compiled per graph with "
         "`gnn-compile --dataset DIR`, as a user would (the graph's widths and degree drive "
         "the cost models: the aggregation order, the slot plan; DGL's GraphConv picks its "
         "multiply order from the widths too).", ""]
    for key in result["timing_graphs"]:
        info = result["graphs"].get(key)
        if not info:
            continue
        L += [f"## {GRAPHS[key]['title']}", "",
              f"{info['vertices']:,} vertices, {info['edges']:,} directed edges (symmetrised, "
              f"self-loops), F={info['features']}, C={info['classes']}.", "",
              "| model | gnnc | PyG | DGL | speed-up vs PyG | speed-up vs DGL | peak RSS gnnc | "
              "peak RSS PyG | peak RSS DGL | mem. gnnc/PyG | mem. gnnc/DGL |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
        for m in result["models"]:
            c = result["cells"].get(key, {}).get(m, {})
            g, p, d = c.get("gnnc"), c.get("pyg"), c.get("dgl")
            L.append(f"| {MODEL_LABEL[m]} | {fmt_time_cell(g)} | {fmt_time_cell(p)} | "
                     f"{fmt_time_cell(d)} | {speedup(g, p)} | {speedup(g, d)} | {fmt_mem(g)} | "
                     f"{fmt_mem(p)} | {fmt_mem(d)} | {mem_ratio(g, p)} | {mem_ratio(g, d)} |")
        L += ["", "Final test accuracy (random labels on RMAT graphs: a sanity check only): " + "; ".join(
            f"{m} " + " / ".join(
                f"{LABEL[s]} {result['cells'][key][m][s]['test_acc_mean']:.3f}"
                for s in SYSTEMS if result["cells"].get(key, {}).get(m, {}).get(s, {}).get("status") == "ok")
            for m in result["models"] if result["cells"].get(key, {}).get(m)), ""]
    if result.get("accuracy_graphs"):
        acfg = result["accuracy_config"]
        L += ["## Accuracy against the peers", "",
              f"Final test accuracy after {acfg['epochs']} epochs, Adam lr {acfg['lr']}, weight decay "
              f"{acfg['weight_decay']}, mean ± std over seeds 0..{acfg['reps'] - 1} (each system its "
              "own initialisation and dropout streams). DESIGN's tolerance: |mean gnnc − mean PyG| ≤ "
              "max(1 point, 2σ), σ the larger standard deviation of the two.", "",
              "| graph | model | gnnc | PyG | DGL | gnnc vs PyG |", "|---|---|---|---|---|---|"]
        for key in result["accuracy_graphs"]:
            for m in result["models"]:
                c = result["accuracy"].get(key, {}).get(m, {})

                def acc(a):
                    if not a:
                        return "—"
                    if a["status"] != "ok":
                        return f"**{a['status']}**"
                    return f"{a['test_acc_mean']:.4f} ± {a['test_acc_std']:.4f}"
                g, p = c.get("gnnc"), c.get("pyg")
                verdict = "—"
                if g and p and g["status"] == "ok" and p["status"] == "ok":
                    tol = max(0.01, 2 * max(g["test_acc_std"], p["test_acc_std"]))
                    diff = abs(g["test_acc_mean"] - p["test_acc_mean"])
                    verdict = f"{'within' if diff <= tol else '**outside**'} ({diff:.4f} vs {tol:.4f})"
                L.append(f"| {key} | {MODEL_LABEL[m]} | {acc(g)} | {acc(p)} | {acc(c.get('dgl'))} | "
                         f"{verdict} |")
        L.append("")
    failures = [(k, m, s, a) for sect in ("cells", "accuracy") for k, ms in result.get(sect, {}).items()
                for m, ss in ms.items() for s, a in ss.items() if a.get("status") != "ok"]
    if failures:
        L += ["## Cells that did not finish", ""]
        for k, m, s, a in failures:
            err = " ".join(str(a.get("error", "")).split())[:300]
            L.append(f"- {k} / {m} / {LABEL[s]}: {a['status']}" + (f" — `{err}`" if err else ""))
        L.append("")
    if plot and result.get("plots"):
        L += ["## Plots", ""] + [f"![{p}]({p})" for p in result["plots"]] + [""]
    with open(os.path.join(OUT_DIR, f"{name}.md"), "w") as f:
        f.write("\n".join(L))


# ----------------------------------------------------------------------------

def ensure_peers(skip_setup: bool):
    """The peers' interpreter, or the reason it is missing."""
    if not skip_setup:
        p = subprocess.run(["bash", os.path.join(BENCH, "setup-peers.sh")])
        if p.returncode != 0:
            return f"bench/setup-peers.sh failed (exit {p.returncode})"
    if not os.path.exists(PEERS_PY):
        return "bench/.venv-peers missing (run bench/setup-peers.sh)"
    v = subprocess.run([PEERS_PY, "-W", "ignore", "-c",
                        "import torch, torch_geometric, dgl; print(f'torch {torch.__version__}, "
                        "torch_geometric {torch_geometric.__version__}, dgl {dgl.__version__}')"],
                       capture_output=True, text=True, env=dict(os.environ, DGLBACKEND="pytorch"))
    if v.returncode != 0:
        return "peers do not import: " + v.stderr.strip()[-500:]
    return v.stdout.strip().splitlines()[-1]


def machine_info():
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            mem = {l.split(":")[0]: int(l.split()[1]) for l in f}
    except OSError:
        mem = {}
    return {"cpu": cpu, "cores": os.cpu_count(), "mem_gib": mem.get("MemTotal", 0) / 2**20,
            "mem_available_kib": mem.get("MemAvailable", 0),
            "loadavg_start": " ".join(f"{x:.2f}" for x in os.getloadavg())}


def load_cells() -> dict:
    try:
        with open(CELLS_FILE) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def save_cells(cells: dict) -> None:
    os.makedirs(CACHE, exist_ok=True)
    tmp = CELLS_FILE + ".tmp"
    with open(tmp, "w") as f:
        json.dump(cells, f, indent=1)
    os.replace(tmp, CELLS_FILE)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:7]))
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="arxiv-shaped graph only, few epochs")
    mode.add_argument("--full", action="store_true", help="every graph incl. Reddit-shaped (hours)")
    ap.add_argument("--graphs", help="comma list overriding the mode's timing graphs "
                    f"({', '.join(k for k in GRAPHS if k not in ACCURACY_GRAPHS)}); "
                    "'' for none (with --accuracy: only the accuracy comparison)")
    ap.add_argument("--models", default=",".join(MODELS), help="comma list of " + ", ".join(MODELS))
    ap.add_argument("--systems", default=",".join(SYSTEMS), help="comma list of " + ", ".join(SYSTEMS))
    ap.add_argument("--epochs", type=int, help="epochs per process (quick 5, else 10)")
    ap.add_argument("--reps", type=int, help="repetitions (processes) per cell (quick 2, else 3)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--accuracy", dest="accuracy", action="store_true", default=None,
                    help="run the accuracy comparison (default: not with --quick)")
    ap.add_argument("--no-accuracy", dest="accuracy", action="store_false")
    ap.add_argument("--acc-epochs", type=int, default=200)
    ap.add_argument("--acc-reps", type=int, default=5)
    ap.add_argument("--timeout", type=int, help="seconds per cell (quick 1200, else 3600)")
    ap.add_argument("--mem-cap-gib", type=float,
                    help="kill a cell above this RSS and record OOM (default: 90%% of the "
                    "memory available at the start, at most 22)")
    ap.add_argument("--fresh", action="store_true", help="rerun this run's cells even when cached")
    ap.add_argument("--retry-failed", action="store_true",
                    help="rerun cached cells that failed (OOM and timeout stay)")
    ap.add_argument("--no-setup", action="store_true", help="do not run bench/setup-peers.sh")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--output", default="peers", metavar="NAME",
                    help="report name: docs/benchmarks/NAME.{json,md} (default peers); "
                    "a partial run (--graphs, --systems) can keep the main report")
    ap.add_argument("--make-graph", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.make_graph:
        make_graph(args.make_graph)
        return 0

    mode_name = "quick" if args.quick else "full" if args.full else "default"
    # --graphs "" runs no timing graph (with --accuracy: the comparison only).
    timing_graphs = ([g for g in args.graphs.split(",") if g] if args.graphs is not None
                     else TIMING_GRAPHS[mode_name])
    models = [m for m in args.models.split(",") if m]
    systems = [s for s in args.systems.split(",") if s]
    for k in timing_graphs:
        if k not in GRAPHS:
            ap.error(f"unknown graph {k}")
    for m in models:
        if m not in MODELS:
            ap.error(f"unknown model {m}")
    for s in systems:
        if s not in SYSTEMS:
            ap.error(f"unknown system {s}")
    do_accuracy = args.accuracy if args.accuracy is not None else mode_name != "quick"
    machine = machine_info()
    cap_gib = args.mem_cap_gib or min(22.0, 0.9 * machine["mem_available_kib"] / 2**20)
    cfg = {"mode": mode_name,
           "command": " ".join(["bench/run.py"] + list(argv if argv is not None else sys.argv[1:])),
           "threads": args.threads,
           "epochs": args.epochs or (5 if mode_name == "quick" else 10),
           "reps": args.reps or (2 if mode_name == "quick" else 3),
           "lr": args.lr, "weight_decay": 0.0,
           "timeout": args.timeout or (1200 if mode_name == "quick" else 3600),
           "mem_cap_kib": int(cap_gib * 2**20)}
    acfg = dict(cfg, epochs=args.acc_epochs, reps=args.acc_reps, weight_decay=5e-4,
                timeout=args.timeout or 1200)

    os.makedirs(CACHE, exist_ok=True)
    peers_version = None
    if any(s != "gnnc" for s in systems):
        peers_version = ensure_peers(args.no_setup)
        log(f"peers: {peers_version}")
        peers_ok = not (peers_version.startswith("bench/") or peers_version.startswith("peers do not"))
    else:
        peers_ok = True
    peers_code = file_hash(os.path.join(BENCH, "peers.py"), os.path.join(BENCH, "requirements-peers.lock"))

    exes = {}

    def exe_for(m, data):
        """gnnc's executable of model m for the graph in data (or the error)."""
        if (m, data) not in exes:
            try:
                exes[(m, data)] = compile_gnnc(m, data)
            except Exception as e:  # noqa: BLE001 - recorded per cell
                lines = [l for l in str(e).splitlines()
                         if l.strip() and not l.lstrip().startswith(("#", "Stack dump", "0."))]
                exes[(m, data)] = RuntimeError(" | ".join(lines[:4]))
                log(f"gnnc {m}: compile failed: {exes[(m, data)]}")
        return exes[(m, data)]

    cells = load_cells()
    result = {"date": time.strftime("%Y-%m-%d %H:%M"), "machine": machine, "config": cfg,
              "accuracy_config": acfg if do_accuracy else None, "peers_version": peers_version,
              "timing_graphs": timing_graphs, "accuracy_graphs": ACCURACY_GRAPHS if do_accuracy else [],
              "output": args.output,
              "models": models, "systems": systems, "graphs": {}, "cells": {}, "accuracy": {},
              "runs": {}}

    def section(graph_keys, c, out):
        for key in graph_keys:
            try:
                data = ensure_graph(key)
            except (subprocess.CalledProcessError, SystemExit) as e:
                log(f"{key}: could not generate the graph ({e}); skipped")
                continue
            result["graphs"][key] = graph_info(data)
            for m in models:
                runs = {s: [] for s in systems}
                # repetitions outermost, systems inside: drift hits all alike
                exe = exe_for(m, data) if "gnnc" in systems else None
                for rep in range(c["reps"]):
                    for s in systems:
                        code = file_hash(exe) if s == "gnnc" and isinstance(exe, str) else \
                            ("compile-failed" if s == "gnnc" else peers_code)
                        ck = (f"{graph_name(key)}|{m}|{s}|T{c['threads']}|E{c['epochs']}|lr{c['lr']}"
                              f"|wd{c['weight_decay']}|seed{rep}|{code}")
                        r = cells.get(ck)
                        if r and not args.fresh and not (args.retry_failed and r.get("status") == "failed"):
                            runs[s].append(r)
                            continue
                        if s != "gnnc" and not peers_ok:
                            r = {"status": "blocked", "error": peers_version}
                        else:
                            log(f"{key} {m} {LABEL[s]} rep {rep + 1}/{c['reps']} ({c['epochs']} epochs)")
                            tag = f"{key}-{m}-{s}-e{c['epochs']}-s{rep}"
                            r = run_cell(s, m, key, data, rep, c, exe, tag)
                            med = (f"median {fmt_ms(statistics.median(steady(r['epoch_ms'])))}, "
                                   f"test {r['test_acc']:.3f}, " if r["status"] == "ok" else "")
                            log(f"  {r['status']}: {med}peak RSS {r.get('maxrss_mib', 0):.0f} MiB, "
                                f"{r.get('wall_s', 0):.0f} s wall")
                            if r["status"] == "failed":
                                log("  " + str(r.get("error", ""))[-400:].replace("\n", "\n  "))
                        r["key"] = ck
                        cells[ck] = r
                        save_cells(cells)
                        runs[s].append(r)
                out.setdefault(key, {})[m] = {s: aggregate(runs[s]) for s in systems}
                result["runs"].setdefault(key, {})[m] = runs
                write_reports(result, plot=False)

    section(timing_graphs, cfg, result["cells"])
    if do_accuracy:
        section(ACCURACY_GRAPHS, acfg, result["accuracy"])

    result["plots"] = []
    out_json = os.path.join(OUT_DIR, f"{args.output}.json")
    if not args.no_plots and os.path.exists(PEERS_PY):
        with open(out_json, "w") as f:
            json.dump(result, f, indent=1)
        p = subprocess.run([PEERS_PY, os.path.join(BENCH, "plot_peers.py"), out_json, OUT_DIR],
                           capture_output=True, text=True)
        if p.returncode == 0:
            result["plots"] = [l for l in p.stdout.split() if l.endswith(".png")]
        else:
            log("plots failed: " + p.stderr.strip()[-400:])
    write_reports(result, plot=True)
    out_md = os.path.join(OUT_DIR, f"{args.output}.md")
    log(f"wrote {os.path.relpath(out_md, ROOT)}, {os.path.basename(out_json)}"
        + (", " + ", ".join(result["plots"]) if result["plots"] else ""))
    with open(out_md) as f:
        print(f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
