#!/usr/bin/env python3
"""Bounded-time, seeded, grammar-aware fuzzer of gnnc's tools and executables.

Targets (--target, default all; `all` splits --seconds 50/25/25):

  ir     mutants of the zoo models (examples/models/*.mlir) made with the IR's
         grammar in mind: integers in types and attributes (0, 1, -1, 2^31,
         2^62, huge), tensor shapes, element types, gnn op names swapped, op
         lines dropped, duplicated or moved, SSA uses swapped, attribute
         strings (gnn.dims bindings, gnn.param names, #gnn.init kinds, input
         names), truncation. Each runs through `gnn-opt --gnn-train-pipeline`;
         one that verifies is compiled with `gnn-compile` to an executable that
         trains two epochs on test/datasets/good/tiny.
  data   mutants of the good datasets of test/datasets (the mutations of
         test/Runtime/Inputs/validator_diff.py, stacked, plus consistent ones
         that keep a dataset valid: new graphs, widths, class counts, labels,
         masks, extreme feature and edge values). Each runs through both
         validators (`gnnrt-validate`, `python -m gnnc.data validate`) and
         compiled zoo executables.
  flags  random and extreme values for every flag of a compiled executable,
         of gnn-compile, gnn-opt's pass options, gnnrt-validate and
         `python -m gnnc.data`.

Oracle: a signal, a timeout, "terminate called", an uncaught exception, a
Python traceback, "LLVM ERROR", a stack dump, a failed assertion, exit 0 with
a NaN loss, a failure whose message has no "error:" line, validators that
disagree (accept/reject or message), a model the verifier accepts and the
compiler rejects. Failures are bucketed by signature (tool, kind, first
error line with numbers, names and paths normalised); the smallest
reproducer of each bucket is kept under --out with the command that runs it,
and --out/report.md lists the buckets.

Every case i of a target draws from Random("SEED:TARGET:i"), so a case is
reproducible from the seed and its number.
Benchmark script, not a test: never run in CI.

    bench/fuzz.py --seconds 600 --seed 1 --out fuzz-out --target all
"""

import argparse
import io
import json
import os
import random
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "test", "Runtime", "Inputs"))
import validator_diff as vd  # noqa: E402  (the dataset mutators, shared with lit)

GOOD = os.path.join(ROOT, "test", "datasets", "good")
TINY = os.path.join(GOOD, "tiny")
EXE_MODELS = ("gcn", "gat", "ggnn")  # compiled once, run on data and flag mutants
SHARE = {"ir": 0.5, "data": 0.25, "flags": 0.25}

# --- running ---------------------------------------------------------------------


class Result:
    def __init__(self, argv, rc, out, err, timed_out, seconds):
        self.argv, self.rc, self.out, self.err = argv, rc, out, err
        self.timed_out, self.seconds = timed_out, seconds


class Runner:
    def __init__(self, mem_mb, timeout, cwd):
        self.cwd = cwd  # relative output paths land there, never in the tree
        self.mem = mem_mb << 20
        self.timeout = timeout
        self.env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                        PYTHONPATH=os.path.join(ROOT, "python"), LLVM_SYMBOLIZER_PATH="")

    def _limits(self):
        resource.setrlimit(resource.RLIMIT_AS, (self.mem, self.mem))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    def run(self, argv, cwd=None, timeout=None, env=None):
        t0 = time.monotonic()
        p = subprocess.Popen(argv, cwd=cwd or self.cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=self._limits,
                             start_new_session=True, env=dict(self.env, **(env or {})))
        try:
            out, err = p.communicate(timeout=timeout or self.timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            timed_out = True
        dec = lambda b: b[-200000:].decode("utf-8", "replace")  # noqa: E731
        return Result(argv, p.returncode, dec(out), dec(err), timed_out, time.monotonic() - t0)


# --- oracle ------------------------------------------------------------------------

CRASH_MARKERS = (("terminate called", "terminate"), ("LLVM ERROR", "LLVM ERROR"),
                 ("Stack dump", "stack dump"), ("Assertion", "assertion"),
                 ("Traceback (most recent call last)", "traceback"),
                 ("uncaught exception", "uncaught exception"),
                 ("AddressSanitizer", "asan"), ("runtime error:", "ubsan"))
ERROR_LINE = re.compile(r"(^|: )error: ", re.M)


def normalise(line):
    """A message with what varies between mutants of one defect replaced."""
    line = re.sub(r"^.*?:\d+:\d+: ", "", line.strip())        # file:line:col
    line = re.sub(r"/[^\s'\"():]+", "PATH", line)               # paths
    line = re.sub(r"'[^']*'|\"[^\"]*\"", "Q", line)             # quoted text
    line = re.sub(r"%[\w#.]+", "%V", line)                      # SSA names
    line = re.sub(r"0x[0-9a-fA-F]+", "N", line)
    line = re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "N", line)
    return re.sub(r"\s+", " ", line)[:140]


def crash_line(text):
    """What crashed: the marker's message (LLVM ERROR, terminate called, an
    assertion) and the first stack frame in gnnc's own code (a frame of the
    tool's binary rather than of a shared library)."""
    lines = text.splitlines()
    what = next((ln.strip() for ln in lines for marker, _ in CRASH_MARKERS
                 if marker in ln and marker != "Stack dump"), "")
    where = ""
    for ln in lines:
        m = re.match(r"\s*#\d+ 0x[0-9a-f]+ (\S.*?) \((/[^)+]*)\+0x[0-9a-f]+\)$", ln) or \
            re.match(r"\s*#\d+ 0x[0-9a-f]+ (\S.*?) (\S+\.cpp):\d+:\d+$", ln)
        if m and ".so" not in m.group(2) and not m.group(1).startswith(("main", "_start")):
            where = re.sub(r"\(.*", "", m.group(1))
            break
    if what or where:
        return f"{what} at {where}" if where else what
    rest = [ln for ln in lines if ln.strip()]
    return rest[-1] if rest else ""


def first_error(text):
    for ln in text.splitlines():
        if ERROR_LINE.search(ln):
            return ln
    return ""


def judge(tool, r, nan_check=False, slow_ok=False):
    """None, or (kind, signature) of a failure of one run."""
    text = r.err + "\n" + r.out
    if r.timed_out:
        return None if slow_ok else ("hang", f"{tool}: hang")
    if r.rc is not None and r.rc < 0:
        name = signal.Signals(-r.rc).name
        return "signal", f"{tool}: {name}: {normalise(crash_line(text))}"
    for marker, kind in CRASH_MARKERS:
        if marker in text:
            line = crash_line(text) if kind in ("stack dump", "terminate", "LLVM ERROR") else \
                next(ln for ln in text.splitlines() if marker in ln)
            if kind == "traceback":
                tail = [ln for ln in r.err.splitlines() if ln.strip()]
                line = tail[-1] if tail else line
            if line.startswith(marker):
                return kind, f"{tool}: {normalise(line)}"
            return kind, f"{tool}: {kind}: {normalise(line)}"
    if r.rc == 2 and r.err.startswith("usage:"):
        return None  # a usage message for a wrong argument count
    if r.rc not in (0, None) and not first_error(r.err + "\n" + r.out):
        if re.search(r"for the \S+ option: |<Pass-Options-Parser>: ", r.err):
            return "cl message", f"{tool}: an option's value refused in LLVM's command-line " \
                                 f"form, without an error: line"
        lines = [ln for ln in r.err.splitlines() if ln.strip()] or ["(no output)"]
        return "no error line", f"{tool}: exit {r.rc} without an error: line: {normalise(lines[0])}"
    if r.rc not in (0, 1, None) and r.rc < 128:
        pass  # other exit codes are fine when the message is there
    if nan_check and r.rc == 0 and re.search(r"loss\s+-?nan", r.out + r.err, re.I):
        return "nan", f"{tool}: exit 0 with a NaN loss"
    return None


# --- buckets ------------------------------------------------------------------------

class Buckets:
    def __init__(self, out):
        self.out, self.lock, self.items = out, threading.Lock(), {}

    def add(self, target, case, kind, sig, size, files, command, output):
        """Records one failure; keeps the smallest reproducer of its bucket.
        `files`: {relative path: bytes or a directory to copy}."""
        with self.lock:
            b = self.items.get(sig)
            if b is None:
                n = sum(x["target"] == target for x in self.items.values()) + 1
                b = self.items[sig] = {"id": f"{target}-{n:02d}",
                                       "target": target, "kind": kind, "sig": sig,
                                       "count": 0, "size": None}
            b["count"] += 1
            if b["size"] is not None and size >= b["size"]:
                return
            b.update(size=size, case=case, command=command)
            d = os.path.join(self.out, b["id"])
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            for rel, content in files.items():
                dst = os.path.join(d, rel)
                if isinstance(content, (bytes, str)):
                    with open(dst, "wb") as f:
                        f.write(content if isinstance(content, bytes) else content.encode())
                else:
                    copy_tree(content[0], dst)
            with open(os.path.join(d, "command.sh"), "w") as f:
                f.write("#!/bin/sh\n# Run from the repository root; BUILD is the build "
                        "directory.\n# " + sig + "\n" + command + "\n")
            with open(os.path.join(d, "output.txt"), "w") as f:
                f.write(output)


def copy_tree(src, dst):
    """Copies a dataset directory, keeping symlinks (and refusing what is
    neither a file, a directory nor a link, such as a FIFO, which is recreated)."""
    os.makedirs(dst, exist_ok=True)
    for name in os.listdir(src):
        s, t = os.path.join(src, name), os.path.join(dst, name)
        if os.path.islink(s):
            os.symlink(os.readlink(s), t)
        elif os.path.isdir(s):
            copy_tree(s, t)
        elif os.path.isfile(s):
            shutil.copyfile(s, t)
        else:
            os.mkfifo(t)


def tree_size(d):
    total = 0
    for base, _, files in os.walk(d):
        for f in files:
            p = os.path.join(base, f)
            total += os.lstat(p).st_size
    return total


# --- IR mutations ---------------------------------------------------------------

INTS = [0, 1, -1, 2, 3, 7, 2 ** 31 - 1, 2 ** 31, 2 ** 32 + 1, 2 ** 62, 2 ** 63 - 1, 2 ** 63,
        2 ** 64, 10 ** 30]
ELEM_TYPES = ["f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "index", "complex<f32>",
              "none", "!gnn.graph"]
UNARY = ["relu", "sigmoid", "tanh", "exp", "log", "neg", "sqrt", "rsqrt", "step", "elu",
         "stop_gradient", "dropout", "leaky_relu"]
BINARY = ["add", "sub", "mul", "div", "row_dot", "linear", "tensor_add", "concat"]
ALL_OPS = ("graph input degree scatter gather apply_edge apply_vertex fused_gather yield "
           "linear typed_linear relu sigmoid tanh exp log neg sqrt rsqrt step elu "
           "stop_gradient leaky_relu add sub mul div constant concat row_dot "
           "broadcast_heads edge_select dropout linear_transpose typed_linear_transpose "
           "slice reduce_sum sum_rows outer_sum typed_outer_sum gather_grad tensor_add "
           "softmax_cross_entropy softmax_cross_entropy_grad accuracy "
           "optimizer_update").split()
KEYWORDS = [["sum", "mean", "max", "min"], ["src", "dst"], ["in", "out"]]
DIMS = ["features", "classes", "", "vertices", "edges", "heads", "Features", "features ",
        "types", "x"]
INITS = ["glorot", "zeros", "ones", "constant, 0.5", "uniform", "normal", "uniform, 1.0e+38",
         "normal, -1.0", "constant, 0x7FC00000", "constant", "bogus", "glorot, 2.0"]
NAMES = ["", "w", "a" * 300, "../x", "a/b", ".", "..", "w\\00", "w\\0Ax", "w\u00e9",
         "conv1.weight", "conv1.bias", "params", " ", "con"]
INPUTS = ["features", "labels", "train_mask", "val_mask", "test_mask", "type", "weight",
          "indptr", "bogus", ""]
FLOATS = ["0.0", "1.0", "-0.5", "2.0", "1.0e+308", "0x7FC00000", "0x7F800000", "1.0e-45",
          "0.99999999"]


def ir_mutations():
    def ints(rng, text):
        ms = [m for m in re.finditer(r"(?<![\w%^#.])-?\d+(?![\w.])", text)]
        if not ms:
            return text
        m = rng.choice(ms)
        v = rng.choice(INTS + [int(m.group()) + 1, int(m.group()) - 1])
        return text[:m.start()] + str(v) + text[m.end():]

    def shape(rng, text):
        ms = list(re.finditer(r"(tensor|vtensor|etensor)<((?:[?\d]+x)*)(\w+)>", text))
        if not ms:
            return text
        m = rng.choice(ms)
        dims = [d for d in m.group(2).split("x") if d]
        op = rng.randrange(4)
        if op == 0 and dims:
            dims.pop(rng.randrange(len(dims)))
        elif op == 1:
            dims.insert(rng.randrange(len(dims) + 1), rng.choice(["?", "1", "16", "0"]))
        elif dims:
            i = rng.randrange(len(dims))
            dims[i] = rng.choice(["?", "0", "1", "3", str(2 ** 31), str(2 ** 62),
                                  str(2 ** 63 - 1), "7"])
        new = f"{m.group(1)}<{''.join(d + 'x' for d in dims)}{m.group(3)}>"
        # Half the time, every occurrence of the type changes: the IR stays
        # consistent and reaches the passes.
        if rng.random() < 0.5:
            return text.replace(m.group(0), new)
        return text[:m.start()] + new + text[m.end():]

    def elem(rng, text):
        ms = list(re.finditer(r"(?<=[x<])(f32|i64|i1)(?=>)", text))
        if not ms:
            return text
        m = rng.choice(ms)
        return text[:m.start()] + rng.choice(ELEM_TYPES) + text[m.end():]

    def op_name(rng, text):
        ms = list(re.finditer(r"(?<=gnn\.)([a-z_]+)(?= )", text))
        ms = [m for m in ms if m.group(1) in ALL_OPS]
        if not ms:
            return text
        m = rng.choice(ms)
        name = m.group(1)
        if rng.random() < 0.7 and (name in UNARY or name in BINARY):
            new = rng.choice(UNARY if name in UNARY else BINARY)
        else:
            new = rng.choice(ALL_OPS)
        return text[:m.start()] + new + text[m.end():]

    def keyword(rng, text):
        group = rng.choice(KEYWORDS)
        ms = list(re.finditer(r"(?<= )(%s)(?= )" % "|".join(group), text))
        if not ms:
            return text
        m = rng.choice(ms)
        return text[:m.start()] + rng.choice(group) + text[m.end():]

    def lines(rng, text):
        ls = text.split("\n")
        body = [i for i, ln in enumerate(ls) if re.match(r"\s+(%|gnn\.yield|return)", ln)]
        if not body:
            return text
        i = rng.choice(body)
        op = rng.randrange(3)
        if op == 0:
            del ls[i]
        elif op == 1:
            ls.insert(i, ls[i])
        else:
            j = rng.choice(body)
            ls[i], ls[j] = ls[j], ls[i]
        return "\n".join(ls)

    def ssa_use(rng, text):
        uses = list(re.finditer(r"(?<=[ (,])%[\w]+(?=[ ,):])", text))
        if len(uses) < 2:
            return text
        m = rng.choice(uses)
        other = rng.choice(uses).group()
        return text[:m.start()] + other + text[m.end():]

    def attr(rng, text):
        kind = rng.randrange(5)
        if kind == 0:
            ms = list(re.finditer(r'gnn\.dims = \[([^\]]*)\]', text))
            if not ms:
                return text
            m = rng.choice(ms)
            items = re.findall(r'"([^"]*)"', m.group(1))
            if items and rng.random() < 0.7:
                items[rng.randrange(len(items))] = rng.choice(DIMS)
            elif rng.random() < 0.5 and items:
                items.pop()
            else:
                items.append(rng.choice(DIMS))
            new = "gnn.dims = [" + ", ".join(f'"{x}"' for x in items) + "]"
            return text[:m.start()] + new + text[m.end():]
        if kind == 1:
            ms = list(re.finditer(r'gnn\.param = "([^"]*)"', text))
            if not ms:
                return text
            m = rng.choice(ms)
            other = [x.group(1) for x in ms]
            new = rng.choice(NAMES + other)
            return text[:m.start(1)] + new + text[m.end(1):]
        if kind == 2:
            ms = list(re.finditer(r"#gnn\.init<([^>]*)>", text))
            if not ms:
                return text
            m = rng.choice(ms)
            return text[:m.start(1)] + rng.choice(INITS) + text[m.end(1):]
        if kind == 3:
            ms = list(re.finditer(r'gnn\.input %g "([^"]*)"', text))
            if not ms:
                return text
            m = rng.choice(ms)
            return text[:m.start(1)] + rng.choice(INPUTS) + text[m.end(1):]
        ms = list(re.finditer(r"(?<== )(-?\d+\.\d+(e[-+]?\d+)?)(?= : f\d+)", text))
        if not ms:
            return text
        m = rng.choice(ms)
        return text[:m.start()] + rng.choice(FLOATS) + text[m.end():]

    def drop_attr(rng, text):
        ms = list(re.finditer(r",? ?gnn\.(dims|init|param) = (\[[^\]]*\]|#gnn\.init<[^>]*>|"
                              r"\"[^\"]*\")|attributes \{gnn\.model\}|\{rate = [^}]*\}", text))
        if not ms:
            return text
        m = rng.choice(ms)
        return text[:m.start()] + text[m.end():]

    def truncate(rng, text):
        return text[:rng.randrange(len(text))]

    def width(rng, text):
        # One width changed in every type that has it: the IR stays
        # consistent, so the mutant reaches the passes and the executable.
        widths = sorted(set(re.findall(r"(?<=[<x])(\d+)(?=x)", text)))
        if not widths:
            return text
        w = rng.choice(widths)
        v = rng.choice(["0", "1", "2", "1000", str(2 ** 20), str(2 ** 31), str(2 ** 40),
                        str(2 ** 62), str(2 ** 63 - 1), "?"])
        return re.sub(r"(?<=[<x])%s(?=x)" % w, v, text)

    weighted = [(ints, 4), (shape, 4), (elem, 2), (op_name, 3), (keyword, 2), (lines, 3),
                (ssa_use, 2), (attr, 5), (drop_attr, 2), (truncate, 1), (width, 4)]
    return [f for f, w in weighted for _ in range(w)]


# --- data mutations ---------------------------------------------------------------

def npy_bytes(a):
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def read_case(path):
    files = {}
    for f in sorted(os.listdir(path)):
        with open(os.path.join(path, f), "rb") as fh:
            files[f] = fh.read()
    return files


def load_arrays(files):
    with warnings.catch_warnings():  # a mutated header may look like Python 2's
        warnings.simplefilter("ignore")
        return {f: np.load(io.BytesIO(b)) for f, b in files.items() if f.endswith(".npy")}


def consistent_mutation(rng, files):
    """A mutation that keeps the dataset well-formed, so that it reaches
    training: returns (label, new files)."""
    files = dict(files)
    meta = json.loads(files["meta.json"])
    arr = load_arrays(files)
    V = meta["num_vertices"]
    kind = rng.randrange(8)

    def set_meta(**kw):
        meta.update(kw)
        files["meta.json"] = json.dumps(meta, indent=2).encode()

    if kind == 0:  # a new graph
        V = rng.choice([1, 2, 3, 5, 17, 64])
        E = rng.choice([0, 1, V, 4 * V, V * V])
        shape = rng.choice(["random", "star", "self", "dup"])
        if shape == "star":
            src, dst = np.arange(E) % V, np.zeros(E, np.int64)
        elif shape == "self":
            src = dst = np.arange(E) % V
        elif shape == "dup":
            src, dst = np.zeros(E, np.int64), np.zeros(E, np.int64)
        else:
            src, dst = (np.array([rng.randrange(V) for _ in range(E)], np.int64),
                        np.array([rng.randrange(V) for _ in range(E)], np.int64))
        order = np.lexsort((src, dst))
        src, dst = src[order], dst[order]
        indptr = np.zeros(V + 1, np.int64)
        np.add.at(indptr, dst + 1, 1)
        indptr = np.cumsum(indptr)
        F, C = meta["num_features"], meta["num_classes"]
        files["indptr.npy"] = npy_bytes(indptr.astype(arr["indptr.npy"].dtype))
        files["indices.npy"] = npy_bytes(src.astype(arr["indices.npy"].dtype))
        files["features.npy"] = npy_bytes(np.ones((V, F), np.float32))
        files["labels.npy"] = npy_bytes(np.arange(V, dtype=np.int64) % C)
        for m in ("train_mask.npy", "val_mask.npy", "test_mask.npy"):
            files[m] = npy_bytes(np.ones(V, bool))
        if "edge_weight.npy" in files:
            files["edge_weight.npy"] = npy_bytes(np.ones(E, np.float32))
        if "edge_type.npy" in files:
            files["edge_type.npy"] = npy_bytes((np.arange(E) % 2).astype(np.int32))
        set_meta(num_vertices=V, num_edges=E)
        return f"graph-{shape}-V{V}-E{E}", files
    if kind == 1:  # feature width
        F = rng.choice([0, 1, 2, 16, 1000])
        files["features.npy"] = npy_bytes(np.full((V, F), 0.5, np.float32))
        set_meta(num_features=F)
        return f"features-width-{F}", files
    if kind == 2:  # class count
        C = rng.choice([1, 2, 3, 1000, 2 ** 31 - 1, 2 ** 31, 2 ** 40, 2 ** 62, 2 ** 63 - 1])
        labels = np.minimum(arr["labels.npy"], C - 1)
        files["labels.npy"] = npy_bytes(labels)
        set_meta(num_classes=C)
        return f"classes-{C}", files
    if kind == 3:  # labels
        how = rng.choice(["all-unlabelled", "one-class", "random"])
        C = meta["num_classes"]
        labels = {"all-unlabelled": np.full(V, -1, np.int64), "one-class": np.zeros(V, np.int64),
                  "random": np.array([rng.randrange(-1, C) for _ in range(V)], np.int64)}[how]
        files["labels.npy"] = npy_bytes(labels)
        return f"labels-{how}", files
    if kind == 4:  # masks
        how = rng.choice(["no-train", "all-false", "all-true", "no-val-test"])
        t = np.zeros(V, bool) if how in ("no-train", "all-false") else np.ones(V, bool)
        files["train_mask.npy"] = npy_bytes(t)
        if how != "no-train":
            other = np.ones(V, bool) if how == "all-true" else np.zeros(V, bool)
            files["val_mask.npy"] = npy_bytes(other)
            files["test_mask.npy"] = npy_bytes(other)
        return f"masks-{how}", files
    if kind == 5:  # extreme feature values (finite ones reach training)
        x = arr["features.npy"].copy()
        v = rng.choice([3.0e38, -3.0e38, 1e-45, 1e20, 0.0, np.nan, np.inf])
        if x.size:
            if rng.random() < 0.5:
                x[...] = v
            else:
                x.flat[rng.randrange(x.size)] = v
        files["features.npy"] = npy_bytes(x)
        return f"features-{v}", files
    if kind == 6 and "edge_weight.npy" in files:
        w = arr["edge_weight.npy"].copy()
        v = rng.choice([0.0, -1.0, 3.0e38, 1e-45, np.nan])
        w[...] = v
        files["edge_weight.npy"] = npy_bytes(w)
        return f"edge-weight-{v}", files
    if "edge_type.npy" in files:
        t = arr["edge_type.npy"].copy()
        v = rng.choice([1, 2, 3, 7, 2 ** 31 - 1, -1])
        if t.size:
            t.flat[rng.randrange(t.size)] = v
        files["edge_type.npy"] = npy_bytes(t)
        return f"edge-type-{v}", files
    return "none", files


class DataCorpus:
    """The good datasets with validator_diff.py's mutation lists."""

    def __init__(self):
        self.cases = []
        for name in ("tiny", "no-edges"):
            path = os.path.join(GOOD, name)
            files = read_case(path)
            muts = []
            for f in vd.NPY_FILES:
                if f in files:
                    muts += [(f"{f}:{lab}", f, b) for lab, b in vd.npy_mutations(files[f])]
                    muts += [(f"{f}:value-{lab}", f, b)
                             for lab, b in vd.value_mutations(f, files[f])]
            meta = json.loads(files["meta.json"])
            muts += [(f"meta.json:{lab}", "meta.json", b)
                     for lab, b in vd.meta_mutations(meta, files["meta.json"])]
            kinds = [(f"{f}:{lab}", f, fn) for f in sorted(files)
                     for lab, fn in vd.kind_mutations(path, f)]
            self.cases.append((name, path, files, muts, kinds))

    def mutant(self, rng, d):
        """Writes a mutant into directory d; returns its label."""
        name, path, files, muts, kinds = rng.choice(self.cases)
        labels = [name]
        files = dict(files)
        for _ in range(rng.choice([1, 1, 2, 3])):
            if rng.random() < 0.45:
                try:
                    label, files = consistent_mutation(rng, files)
                except Exception:  # noqa: BLE001 - an earlier mutation broke a file
                    label = "(consistent mutation skipped)"
            else:
                label, f, blob = rng.choice(muts)
                files[f] = blob
            labels.append(label)
        os.makedirs(d)
        for f, blob in files.items():
            with open(os.path.join(d, f), "wb") as out:
                out.write(blob)
        if rng.random() < 0.08:
            label, f, fn = rng.choice(kinds)
            if os.path.lexists(os.path.join(d, f)):
                fn(d)
                labels.append(label)
        if rng.random() < 0.01:  # a FIFO (issue 17, item 4): costs a timeout
            f = rng.choice(sorted(files))
            os.remove(os.path.join(d, f))
            os.mkfifo(os.path.join(d, f))
            labels.append(f"{f}:fifo")
        return " + ".join(labels)


# --- the fuzzer ----------------------------------------------------------------------

class Fuzzer:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.bin = lambda t: os.path.join(self.build, "bin", t)
        self.out = os.path.abspath(args.out)
        self.work = os.path.join(self.out, "work")
        os.makedirs(self.work, exist_ok=True)
        self.runner = Runner(args.mem_mb, args.timeout, self.work)
        self.buckets = Buckets(self.out)
        self.stats = {}
        self.lock = threading.Lock()
        self.models = {os.path.basename(p)[:-5]: open(p).read() for p in sorted(
            os.path.join(ROOT, "examples", "models", f)
            for f in os.listdir(os.path.join(ROOT, "examples", "models")) if f.endswith(".mlir"))}
        self.models.pop("deep_gcn", None)  # 16 layers: slow to compile, nothing new
        self.exes = {}
        self.data = None

    def count(self, target, key, n=1):
        with self.lock:
            s = self.stats.setdefault(target, {})
            s[key] = s.get(key, 0) + n

    def rel(self, path):
        return os.path.relpath(path, ROOT) if path.startswith(ROOT) else path

    def shell(self, argv):
        return " ".join(shlex.quote(a) for a in argv).replace(self.build, "$BUILD")

    def check(self, target, case, tool, r, size, files, command, **kw):
        """Judges one run; records it; returns True when it failed."""
        self.count(target, "runs")
        verdict = judge(tool, r, **kw)
        if verdict is None:
            return False
        kind, sig = verdict
        self.count(target, "failures")
        out = r.out[-8000:]
        if not all(c.isprintable() or c in "\n\t\r" for c in out):
            out = f"({len(r.out)} characters of binary output, left out)"
        output = f"$ {command}\nexit {r.rc}{' (timed out)' if r.timed_out else ''}\n" \
                 f"--- stderr\n{r.err[-12000:]}\n--- stdout\n{out}"
        self.buckets.add(target, case, kind, sig, size, files, command, output)
        return True

    def prepare_exes(self):
        for m in EXE_MODELS:
            exe = os.path.join(self.work, "bin", m)
            os.makedirs(os.path.dirname(exe), exist_ok=True)
            src = os.path.join(ROOT, "examples", "models", m + ".mlir")
            r = self.runner.run([self.bin("gnn-compile"), src, "-o", exe], timeout=300)
            if r.rc != 0:
                sys.exit(f"fuzz.py: cannot compile {m}: {r.err.strip()}")
            self.exes[m] = exe

    # --- targets ---

    def case_ir(self, i, rng):
        name = rng.choice(sorted(self.models))
        text = self.models[name]
        muts = ir_mutations()
        applied = []
        for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
            f = rng.choice(muts)
            text = f(rng, text)
            applied.append(f.__name__)
        d = tempfile.mkdtemp(dir=self.work, prefix=f"ir{i}-")
        try:
            src = os.path.join(d, "model.mlir")
            with open(src, "w") as fh:
                fh.write(text)
            files = {"model.mlir": text}
            size = len(text)
            argv = [self.bin("gnn-opt"), src, "--gnn-train-pipeline", "-o", os.devnull]
            cmd = self.shell(argv).replace(src, "model.mlir")
            r = self.runner.run(argv)
            if self.check("ir", i, "gnn-opt", r, size, files, cmd):
                return
            if r.rc != 0:
                self.count("ir", "rejected by gnn-opt")
                # The compiler must reject it the same way.
                if rng.random() < 0.2:
                    argv = [self.bin("gnn-compile"), src, "-emit=mlir", "-o", os.devnull]
                    r2 = self.runner.run(argv)
                    cmd = self.shell(argv).replace(src, "model.mlir")
                    if self.check("ir", i, "gnn-compile", r2, size, files, cmd):
                        return
                    if r2.rc == 0:
                        self.buckets.add("ir", i, "disagreement",
                                         "gnn-compile accepts what gnn-opt rejects", size,
                                         files, cmd, r.err)
                return
            self.count("ir", "accepted by gnn-opt")
            exe = os.path.join(d, "model")
            argv = [self.bin("gnn-compile"), src, "-o", exe]
            cmd = self.shell(argv).replace(src, "model.mlir").replace(exe, "model")
            r = self.runner.run(argv, timeout=max(self.args.timeout, 60))
            if self.check("ir", i, "gnn-compile", r, size, files, cmd):
                return
            if r.rc != 0:
                err = first_error(r.err) or r.err.strip().splitlines()[0]
                self.buckets.add("ir", i, "late rejection",
                                 "gnn-compile: rejects a model that verifies: " + normalise(err),
                                 size, files, cmd, r.err)
                self.count("ir", "late rejections")
                return
            self.count("ir", "compiled")
            argv = [exe, "--data", TINY, "--epochs", "2", "--quiet", "--threads", "1"]
            run_cmd = cmd + " && ./model " + " ".join(
                shlex.quote(a) for a in argv[1:]).replace(ROOT + "/", "")
            r = self.runner.run(argv)
            if not self.check("ir", i, "executable", r, size, files, run_cmd, nan_check=True):
                self.count("ir", "trained" if r.rc == 0 else "refused by the executable")
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def validators(self, d):
        c = self.runner.run([self.bin("gnnrt-validate"), d], timeout=10)
        p = self.runner.run([sys.executable, "-m", "gnnc.data", "validate", d], timeout=10)
        return c, p

    def case_data(self, i, rng):
        d = os.path.join(tempfile.mkdtemp(dir=self.work, prefix=f"data{i}-"), "dataset")
        try:
            label = self.data.mutant(rng, d)
            single = " + " not in label.split(" + ", 1)[1]
            size = tree_size(d)
            files = {"dataset": (d,)}
            c, p = self.validators(d)
            cmd_c = f"$BUILD/bin/gnnrt-validate dataset  # {label}"
            cmd_p = f"PYTHONPATH=python python -m gnnc.data validate dataset  # {label}"
            bad_c = self.check("data", i, "gnnrt-validate", c, size, files, cmd_c)
            bad_p = self.check("data", i, "gnnc.data validate", p, size, files, cmd_p)
            if bad_c or bad_p:
                return
            ok_c, ok_p = c.rc == 0, p.rc == 0
            self.count("data", "accepted by both" if ok_c and ok_p else
                       "rejected by both" if not ok_c and not ok_p else "disagreements")
            if ok_c != ok_p:
                who = "gnnrt-validate" if ok_c else "gnnc.data validate"
                err = first_error((p if ok_c else c).err)
                self.buckets.add("data", i, "disagreement",
                                 f"validators disagree: only {who} accepts; the other: "
                                 f"{normalise(err)}", size, files,
                                 cmd_c + "\n" + cmd_p, c.err + "\n" + p.err)
                self.count("data", "failures")
            elif not ok_c and single:
                # Stacked mutations may be found in either order; one must be
                # reported the same.
                ec = re.sub(r"^error: ", "", first_error(c.err).strip())
                ep = re.sub(r"^error: ", "", first_error(p.err).strip())
                ec = re.sub(r"^.*?: (?=\S+\.(npy|json))", "", ec)
                ep = re.sub(r"^.*?: (?=\S+\.(npy|json))", "", ep)
                if not vd.same_message(ec, ep):
                    self.buckets.add("data", i, "disagreement",
                                     f"validators word it differently: {normalise(ec)} | "
                                     f"{normalise(ep)}", size, files, cmd_c + "\n" + cmd_p,
                                     c.err + "\n" + p.err)
                    self.count("data", "failures")
            if not ok_c and rng.random() < 0.7:
                return  # the executable shares the loader; sample a few rejects
            m = rng.choice(EXE_MODELS)
            argv = [self.exes[m], "--data", d, "--epochs", "2", "--quiet", "--threads", "1"]
            r = self.runner.run(argv)
            cmd = f"$BUILD/bin/gnn-compile examples/models/{m}.mlir -o {m} && ./{m} " \
                  f"--data dataset --epochs 2 --quiet --threads 1  # {label}"
            self.check("data", i, f"executable ({m})", r, size, files, cmd, nan_check=True)
            if ok_c and r.rc != 0 and not r.timed_out and r.rc > 0:
                self.count("data", "valid but refused by an executable")
        finally:
            shutil.rmtree(os.path.dirname(d), ignore_errors=True)

    def flag_value(self, rng, kind, d=None):
        """A value for a flag of `kind`; paths that may be written to are
        under the case's directory d (a copy of the tiny dataset there), never
        in the source tree."""
        ints = ["0", "1", "-1", "2", "65536", "4294967297", str(2 ** 31), str(2 ** 63),
                "99999999999999999999999", "1e3", "0x10", "", " 5", "5x", "nan", "inf", "1.5",
                "+3", "-0", "007", "--epochs"]
        floats = ["0", "-1", "1e308", "1e-320", "nan", "-nan", "inf", "-inf", "1e400", "0x1p3",
                  "", "abc", "1,5", "0.5 ", "2", "1.0000001", str(2 ** 64)]
        paths = [os.path.join(d or self.work, "nonexistent", "x"), "", "/dev/null", "/dev/full", "/dev/zero", "/proc/self/status", ".",
                 "a" * 300, os.path.join(self.work, "p" * 200, "q" * 200), "-"]
        if d is not None:
            tiny = os.path.join(d, "tiny")
            if not os.path.isdir(tiny):
                shutil.copytree(TINY, tiny)
            paths += [tiny, os.path.join(tiny, "meta.json"), os.path.join(d, "x" * 255),
                      os.path.join(d, "y" * 256)]
        fanouts = ["2,2", "-1,-1", "3,-1", "0,2", "2", "2,2,2", "1,,2", "a,b", "", "-2,2",
                   "99999999999999999999,1"]
        sizes = ["0", "1", "-1", "1K", "100K", "1M", "4M", "16M", "64M", "256M", "1G", "1X",
                 "99999999999T", "", "2.5M"]
        return rng.choice({"int": ints, "float": floats, "path": paths, "fanouts": fanouts,
                           "bytes": sizes,
                           "enum": ["adam", "sgd", "SGD", "", "adamw", "mlir", "exe", "obj",
                                    "llvm", "bogus", "auto", "never", "always", "rows",
                                    "features", "preload", "pull", "vertices", "edges",
                                    "roc", "replicated", "hash"]}[kind])

    EXE_FLAGS = [("--epochs", "int"), ("--lr", "float"), ("--optimizer", "enum"),
                 ("--momentum", "float"), ("--weight-decay", "float"), ("--dropout", "float"),
                 ("--seed", "int"), ("--threads", "int"), ("--eval-every", "int"),
                 ("--json", "path"), ("--save-params", "path"), ("--load-params", "path"),
                 ("--predict", "path"), ("--dump", "path"), ("--data", "path"),
                 ("--quiet", None), ("--help", None), ("--bogus", None),
                 ("--batch-size", "int"), ("--fanouts", "fanouts"),
                 ("--features-on-storage", None), ("--eval-batch-size", "int"),
                 ("--server-processes", "int"), ("--partition", "enum"),
                 ("--mem-budget", "bytes"), ("--spill-dir", "path"),
                 ("--layerwise-eval", "enum"), ("--selective-loads", "enum"),
                 ("--sub-chunks", "int"), ("--uncached-reads", None),
                 ("--preload-hops", "int"), ("--preload-fanout", "int"),
                 ("--bucket-bytes", "bytes"), ("--row-split", "enum"),
                 ("--repartition-gain", "float"), ("--feature-copies", "int"),
                 ("--structure", "enum"), ("--pipeline", None),
                 ("--save-batches", "path")]

    def case_flags(self, i, rng):
        d = tempfile.mkdtemp(dir=self.work, prefix=f"flags{i}-")
        try:
            tool = rng.choice(["exe"] * 5 + ["gnn-compile"] * 2 + ["gnn-opt", "gnnrt-validate",
                                                                  "gnnc.data"])
            slow_ok = False
            if tool == "exe":
                m = rng.choice(EXE_MODELS)
                argv = [self.exes[m], "--data", TINY, "--epochs", "2", "--quiet"]
                for _ in range(rng.choice([1, 1, 2, 3])):
                    flag, kind = rng.choice(self.EXE_FLAGS)
                    if kind is None:
                        argv.append(flag)
                        continue
                    v = self.flag_value(rng, kind, d)
                    if flag == "--epochs" and v.isdigit() and int(v) > 1000:
                        slow_ok = True  # a long run is what was asked for
                    if flag in ("--json", "--save-params", "--predict", "--dump") and \
                            rng.random() < 0.3:
                        v = os.path.join(d, "out")
                    if flag == "--load-params" and rng.random() < 0.5:
                        v = self.params_dir(rng, m, d)
                    form = rng.randrange(4)
                    argv += [f"{flag}={v}"] if form == 0 else [flag] if form == 1 and \
                        rng.random() < 0.2 else [flag, v]
                tname = f"executable ({m})"
                cmd = f"$BUILD/bin/gnn-compile examples/models/{m}.mlir -o {m} && ./{m} " + \
                    " ".join(shlex.quote(a) for a in argv[1:])
            elif tool == "gnn-compile":
                src = os.path.join(ROOT, "examples", "models", rng.choice(EXE_MODELS) + ".mlir")
                argv = [self.bin("gnn-compile"), src, "-o", os.path.join(d, "m.o"), "-emit=obj"]
                for _ in range(rng.choice([1, 2])):
                    flag, kind = rng.choice([("--edge-cache-floats", "int"), ("--reorder", "enum"),
                                             ("--dataset", "path"), ("-emit", "enum"),
                                             ("-o", "path"), ("--no-fuse", None),
                                             ("--no-share", None), ("--no-hoist", None),
                                             ("--no-optimize", None), ("--no-factor", None),
                                             ("--remarks", None), ("--keep-temps", None),
                                             ("--eval-levels=false", None)])
                    if kind is None:
                        argv.append(flag)
                    else:
                        v = self.flag_value(rng, kind, d)
                        if flag == "--dataset" and rng.random() < 0.5:
                            v = os.path.join(d, "dataset")
                            if not os.path.exists(v):  # drawn twice: one mutant
                                self.data.mutant(rng, v)
                        if flag == "-o" and v in ("/", "."):
                            v = os.path.join(d, "x")
                        argv.append(f"{flag}={v}")
                tname = "gnn-compile"
                cmd = self.shell(argv)
            elif tool == "gnn-opt":
                src = os.path.join(ROOT, "examples", "models", rng.choice(EXE_MODELS) + ".mlir")
                opt = rng.choice(["avg-degree", "classes", "features", "meta", "mode"])
                kind = {"avg-degree": "float", "classes": "int", "features": "int",
                        "meta": "path", "mode": "enum"}[opt]
                v = self.flag_value(rng, kind, d)
                if opt == "meta" and rng.random() < 0.5:
                    ds = os.path.join(d, "dataset")
                    self.data.mutant(rng, ds)
                    v = os.path.join(ds, "meta.json")
                mode = "" if opt == "mode" else " mode=always"
                if rng.random() < 0.5:
                    p = f"--gnn-reorder-aggregate={opt}={v}{mode}"
                    argv = [self.bin("gnn-opt"), src, p, "-o", os.devnull]
                else:
                    pipe = rng.choice(["gnn-train-pipeline", "gnn-to-llvm-pipeline"])
                    o = rng.choice(["meta", "reorder", "edge-cache-floats", "fuse", "share"])
                    v = self.flag_value(rng, {"meta": "path", "reorder": "enum",
                                              "edge-cache-floats": "int"}.get(o, "enum"), d)
                    argv = [self.bin("gnn-opt"), src, f"--{pipe}={o}={v}", "-o", os.devnull]
                tname = "gnn-opt"
                cmd = self.shell(argv)
            elif tool == "gnnrt-validate":
                argv = [self.bin("gnnrt-validate")] + [self.flag_value(rng, "path", d)
                                                       for _ in range(rng.choice([0, 1, 1, 2]))]
                tname, cmd = "gnnrt-validate", self.shell(argv)
            else:
                sub = rng.choice(["validate", "info", "rmat", "sbm"])
                if sub in ("validate", "info"):
                    argv = [sys.executable, "-m", "gnnc.data", sub, self.flag_value(rng, "path", d)]
                elif sub == "rmat":
                    argv = [sys.executable, "-m", "gnnc.data", "generate", "rmat", "--vertices",
                            self.flag_value(rng, "int"), "--draws", self.flag_value(rng, "int"),
                            "--seed", self.flag_value(rng, "int"), "-o", os.path.join(d, "g")]
                else:
                    argv = [sys.executable, "-m", "gnnc.data", "generate", "sbm", "--vertices",
                            self.flag_value(rng, "int"), "--blocks", self.flag_value(rng, "int"),
                            "--p-in", self.flag_value(rng, "float"), "--p-out",
                            self.flag_value(rng, "float"), "-o", os.path.join(d, "g")]
                if rng.random() < 0.3:
                    argv += ["--split", rng.choice(["1,0,0", "0,0,0", "-1,1,1", "a", "0.5,0.5",
                                                    "nan,0,0", "1e308,0,0"])]
                tname = "gnnc.data"
                cmd = ("PYTHONPATH=python python " + self.shell(argv[1:]))
                slow_ok = True  # generating a big graph on request may take long
            cmd = cmd.replace(d + "/", "$TMP/").replace(ROOT + "/", "")
            self.check("flags", i, tname, self.runner.run(argv), len(cmd), {}, cmd,
                       nan_check=tool == "exe", slow_ok=slow_ok)
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def params_dir(self, rng, m, d):
        """Parameters saved by the executable, then one file corrupted."""
        p = os.path.join(d, "params")
        self.runner.run([self.exes[m], "--data", TINY, "--epochs", "1", "--quiet",
                         "--save-params", p])
        names = sorted(os.listdir(p)) if os.path.isdir(p) else []
        if names:
            f = os.path.join(p, rng.choice(names))
            a = np.load(f)
            how = rng.randrange(4)
            if how == 0:
                a.flat[0] = np.nan
            elif how == 1:
                a = a.astype(np.float64)
            elif how == 2:
                a = a.reshape(-1)[:-1] if a.size > 1 else np.zeros((2, 2), np.float32)
            else:
                a = np.full_like(a, 3e38)
            np.save(f, a)
        return p

    def run_target(self, target, seconds):
        fn = {"ir": self.case_ir, "data": self.case_data, "flags": self.case_flags}[target]
        deadline = time.monotonic() + seconds
        counter = iter(range(10 ** 9))
        counter_lock = threading.Lock()

        def worker():
            while time.monotonic() < deadline:
                with counter_lock:
                    i = next(counter)
                try:
                    fn(i, random.Random(f"{self.args.seed}:{target}:{i}"))
                except Exception as e:  # noqa: BLE001 - the fuzzer's own failure
                    self.count(target, "fuzzer errors")
                    print(f"fuzz: {target} case {i}: {type(e).__name__}: {e}", file=sys.stderr)
                self.count(target, "cases")

        t0 = time.monotonic()
        with ThreadPoolExecutor(self.args.jobs) as pool:
            for f in [pool.submit(worker) for _ in range(self.args.jobs)]:
                f.result()
        self.count(target, "seconds", round(time.monotonic() - t0))

    def report(self, argv, targets):
        lines = ["# gnnc fuzzing report", "",
                 f"Command: `bench/fuzz.py {' '.join(shlex.quote(a) for a in argv)}`", "",
                 f"Build: `{self.build}`", "", "| target | seconds | cases | tool runs | "
                 "failing runs | other counts |", "|---|---:|---:|---:|---:|---|"]
        for t in targets:
            s = dict(self.stats.get(t, {}))
            other = ", ".join(f"{k}: {v}" for k, v in sorted(s.items()) if k not in
                              ("seconds", "cases", "runs", "failures"))
            lines.append(f"| {t} | {s.get('seconds', 0)} | {s.get('cases', 0)} | "
                         f"{s.get('runs', 0)} | {s.get('failures', 0)} | {other} |")
        lines += ["", f"## {len(self.buckets.items)} buckets", "",
                  "| bucket | kind | hits | signature | smallest reproducer |",
                  "|---|---|---:|---|---|"]
        for b in sorted(self.buckets.items.values(), key=lambda b: b["id"]):
            sig = b["sig"].replace("|", "\\|")
            lines.append(f"| `{b['id']}` | {b['kind']} | {b['count']} | {sig} | "
                         f"`{b['id']}/` ({b['size']} bytes, case {b['case']}) |")
        lines += ["", "Each bucket directory holds the input, `command.sh` (run from the "
                  "repository root with BUILD set) and `output.txt`.", ""]
        with open(os.path.join(self.out, "report.md"), "w") as f:
            f.write("\n".join(lines))
        with open(os.path.join(self.out, "report.json"), "w") as f:
            json.dump({"stats": self.stats, "buckets": list(self.buckets.items.values())}, f,
                      indent=1)
        return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--seconds", type=float, default=300, help="time budget (default 300)")
    ap.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    ap.add_argument("--out", default="fuzz-out", help="reproducers and report.md (default "
                    "fuzz-out)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="build directory with bin/ (default build)")
    ap.add_argument("--target", choices=["ir", "data", "flags", "all"], default="all")
    ap.add_argument("--jobs", type=int, default=2, help="cases at once (default 2)")
    ap.add_argument("--timeout", type=float, default=20, help="seconds per run (default 20)")
    ap.add_argument("--mem-mb", type=int, default=4096,
                    help="address-space limit per run, MiB (default 4096)")
    args = ap.parse_args()
    if args.seconds <= 0 or args.jobs < 1 or args.timeout <= 0:
        ap.error("--seconds, --jobs and --timeout must be positive")
    fz = Fuzzer(args)
    for tool in ("gnn-opt", "gnn-compile", "gnnrt-validate"):
        if not os.access(fz.bin(tool), os.X_OK):
            ap.error(f"--build: {fz.bin(tool)} is not an executable")
    def tree_state():
        return subprocess.run(["git", "status", "--porcelain", "--ignored=no"], cwd=ROOT,
                              capture_output=True, text=True).stdout

    before = tree_state()
    targets = ["ir", "data", "flags"] if args.target == "all" else [args.target]
    if set(targets) & {"data", "flags"}:
        fz.prepare_exes()
        fz.data = DataCorpus()
    for t in targets:
        share = SHARE[t] if len(targets) > 1 else 1.0
        print(f"fuzz: {t} for {args.seconds * share:.0f} s", flush=True)
        fz.run_target(t, args.seconds * share)
        s = fz.stats.get(t, {})
        print(f"fuzz: {t}: {s.get('cases', 0)} cases, {s.get('runs', 0)} runs, "
              f"{s.get('failures', 0)} failing", flush=True)
    shutil.rmtree(fz.work, ignore_errors=True)
    print(fz.report(sys.argv[1:], targets))
    if tree_state() != before:
        print("fuzz.py: the source tree changed during the run (a case wrote into it): "
              "see git status", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
