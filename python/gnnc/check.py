"""Numerical checks of a training executable against the NumPy executor.

    python -m gnnc.check dump EXE --model gcn [--seed S] [--graphs N]
        On fresh random graphs and parameters: `EXE --dump` (one training
        step, dropout off) must match the NumPy executor's loss, logits and
        every gradient under DESIGN.md's rule
        ||a - b|| / max(||a||, ||b||, 1e-12) < 1e-4.
    python -m gnnc.check determinism EXE [--data DIR]
        Two runs with the same thread count save bitwise identical
        parameters; 1 and 2 threads agree within the rule above.
    python -m gnnc.check batches EXE --model gcn --batch-size B --fanouts K1,K2
        Mini-batch training from the NumPy executor's initial parameters,
        dropout off, each sampled batch saved (--save-batches) and replayed
        by the NumPy executor with the same optimizer: every batch's loss
        must match the executable's under the rule above. Instead of
        --fanouts, --preload-hops M and/or --preload-fanout K sample the
        batches by expansion-aware sampling.

The model is a name from `gnnc.zoo` (with its default widths), the program
the executable was compiled from.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Union

import numpy as np

from . import zoo
from ._cli import float_in, int_in
from .data import from_edges, save
from .executor import Executor, init_params
from .program import Program
from .train import load_params, save_params

TOLERANCE = 1e-4


# A gradient that is mathematically zero (GAT's att_dst when every score of a
# destination lands on one side of the leaky ReLU: the softmax is then
# shift-invariant) comes out as f32 cancellation noise, ~1e-9 against an exact
# 1e-17. Gradients are therefore compared relative to at least this fraction
# of the largest gradient of the same step.
GRAD_SCALE_FLOOR = 1e-3


# How many times check_dump draws other parameters for a graph whose draw sits
# on a kink of the reference (kink_jump).
KINK_REDRAWS = 3


def kink_jump(ex, params: Dict[str, np.ndarray], rng: np.random.Generator) -> float:
    """The largest relative change of the float64 reference's gradients when
    `params` move by a random relative 1e-6 (16 probes): about 1e-6 where the
    loss is smooth, orders more where an input of a non-smooth op (ReLU, leaky
    ReLU, max) is within that of its kink."""
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    ref = ex.run(p64)
    floor = GRAD_SCALE_FLOOR * max(
        [float(np.linalg.norm(v)) for v in ref.grads.values()] + [1e-12])
    jump = 0.0
    for _ in range(16):
        moved = ex.run({k: v * (1 + 1e-6 * rng.standard_normal(v.shape))
                        for k, v in p64.items()})
        for k in ref.grads:
            jump = max(jump, rel_error(moved.grads[k], ref.grads[k], floor))
    return jump


def rel_error(a: np.ndarray, b: np.ndarray, floor: float = 1e-12) -> float:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(a), np.linalg.norm(b), floor))


def random_dataset(rng: np.random.Generator, V: int = 120, E: int = 900, F: int = 7,
                   C: int = 4, edge_types: int = 3, isolated: bool = False):
    """A random directed graph with self-loops, random features, labels, edge
    types and a per-edge float `weight`. With `isolated`: no self-loops, and
    the last tenth of the vertices has no edge at all (degree 0 at both
    ends: the cases a per-vertex normalisation must keep finite)."""
    reach = V - V // 10 if isolated else V
    src = rng.integers(0, reach, E)
    dst = rng.integers(0, reach, E)
    return from_edges(src, dst, V, features=rng.standard_normal((V, F)),
                      labels=rng.integers(-1, C, V), num_classes=C,
                      edge_data={"type": rng.integers(0, edge_types, E).astype(np.int32),
                                 "weight": rng.standard_normal(E).astype(np.float32)},
                      self_loops=not isolated, seed=int(rng.integers(1 << 30)),
                      splits=(0.5, 0.25, 0.25), name="random",
                      source="gnnc.check random graph")


def run(cmd: List[str]) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stderr}")
    return p


def compare_dump(exe: str, program, ds, ex, params: Dict[str, np.ndarray], g: int,
                 launcher: Optional[List[str]], log) -> List[str]:
    """Runs `exe` once on dataset `ds` with `params` (--dump) and compares its
    loss, logits, parameters and gradients with the float64 reference."""
    found: List[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = os.path.join(tmp, "data")
        save(ds, data_dir)
        save_params(params, os.path.join(tmp, "params"))
        out = os.path.join(tmp, "dump")
        run((launcher or []) + [exe, "--data", data_dir, "--load-params",
                                os.path.join(tmp, "params"), "--dump", out, "--quiet"])
        shapes = ex.param_shapes()
        ref = ex.run({k: v.astype(np.float64) for k, v in params.items()})
        got_params = load_params(program, os.path.join(out, "params"), shapes)
        got_grads = load_params(program, os.path.join(out, "grads"), shapes)
        checks = [("loss", np.load(os.path.join(out, "loss.npy")), ref.loss),
                  ("logits", np.load(os.path.join(out, "logits.npy")), ref.logits)]
        checks += [(f"params/{k}", got_params[k], params[k]) for k in params]
        checks += [(f"grads/{k}", got_grads[k], ref.grads[k]) for k in ref.grads]
        grad_floor = GRAD_SCALE_FLOOR * max(
            [float(np.linalg.norm(np.asarray(v, dtype=np.float64))) for v in ref.grads.values()]
            + [1e-12])
        for name, got, want in checks:
            err = rel_error(got, want, grad_floor if name.startswith("grads/") else 1e-12)
            ok = err < TOLERANCE  # False for NaN too
            log(f"graph {g} {name:32s} rel error {err:.2e} {'ok' if ok else 'FAIL'}")
            if not ok:
                found.append(f"graph {g}: {name}: relative error {err:.3e}")
    return found


def check_dump(exe: str, model: Union[str, Program], seed: int, graphs: int = 2,
               log=print, isolated: bool = False,
               launcher: Optional[List[str]] = None) -> List[str]:
    """Returns the list of failures (empty when everything matches). `model`
    is a zoo name (default widths) or the traced program itself. `launcher`
    prefixes the executable's command (`mpirun -np 3`: the processes' summed
    gradients and gathered logits against the same reference)."""
    failures = []
    rng = np.random.default_rng(seed)
    program = zoo.ZOO[model]() if isinstance(model, str) else model
    for g in range(graphs):
        ds = random_dataset(rng, isolated=isolated)
        ex = Executor(program, ds)
        base = init_params(program, ex, int(rng.integers(1 << 30)))
        # A draw that puts an input of a non-smooth op (a leaky ReLU's) within
        # f32 rounding of its kink has no gradient an f32 program can match:
        # the float64 reference's own jumps under perturbations of 1e-6. A
        # gradient that differs is therefore probed (kink_jump): when the
        # reference jumps by as much, the draw is replaced (seeded, logged)
        # and compared again; when it is smooth, the difference is a failure.
        for attempt in range(KINK_REDRAWS + 1):
            params = {k: (v + 0.3 * rng.standard_normal(v.shape)).astype(np.float32)
                      for k, v in base.items()}
            found = compare_dump(exe, program, ds, ex, params, g, launcher, log)
            if not any("grads/" in f for f in found) or attempt == KINK_REDRAWS:
                break
            jump = kink_jump(ex, params, rng)
            if jump < TOLERANCE:
                break
            log(f"graph {g}: parameters redrawn: the reference gradient itself moves "
                f"{jump:.1e} under a 1e-6 perturbation (a kink within f32 rounding)")
        failures += found
    return failures


def check_determinism(exe: str, data: str, epochs: int = 20, log=print) -> List[str]:
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        outs = {}
        for tag, threads in (("a", 2), ("b", 2), ("c", 1)):
            d = os.path.join(tmp, tag)
            run([exe, "--data", data, "--epochs", str(epochs), "--threads", str(threads),
                 "--save-params", d, "--quiet", "--seed", "3"])
            outs[tag] = {f: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d))}
        for f in outs["a"]:
            same = np.array_equal(outs["a"][f], outs["b"][f])
            err = rel_error(outs["a"][f], outs["c"][f])
            log(f"{f:32s} 2 vs 2 threads {'identical' if same else 'DIFFER'}; "
                f"1 vs 2 threads rel error {err:.2e}")
            if not same:
                failures.append(f"{f}: runs with 2 threads differ")
            if not err < TOLERANCE:  # NaN fails too
                failures.append(f"{f}: 1 vs 2 threads relative error {err:.3e}")
    return failures


def check_accuracy(exe: str, model: str, data: str, seeds: int = 5, epochs: int = 200,
                   lr: float = 0.01, weight_decay: float = 5e-4, log=print) -> List[str]:
    """Final test accuracy of the executable and of the NumPy training loop,
    mean over `seeds` seeds each; they must agree within max(1 point, 2 sigma)
    (DESIGN.md), sigma the larger of the two runs' standard deviations over
    the seeds. (The two use different random streams for initialisation and
    dropout, so only the distributions are comparable.)"""
    import json
    from .data import load
    from .train import OptimizerConfig, train
    ds = load(data)
    ours, ref = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for s in range(seeds):
            out = os.path.join(tmp, f"{s}.json")
            run([exe, "--data", data, "--epochs", str(epochs), "--lr", str(lr),
                 "--weight-decay", str(weight_decay), "--seed", str(s), "--json", out, "--quiet"])
            with open(out) as f:
                ours.append(json.load(f)["final"]["test_acc"])
            r = train(zoo.ZOO[model](), ds, epochs=epochs, seed=s, eval_every=epochs,
                      optimizer=OptimizerConfig("adam", lr=lr, weight_decay=weight_decay))
            ref.append(r.final.test_acc)
    ours_a, ref_a = np.array(ours), np.array(ref)
    sigma = max(ours_a.std(ddof=1), ref_a.std(ddof=1)) if seeds > 1 else 0.0
    tol = max(0.01, 2 * sigma)
    diff = abs(ours_a.mean() - ref_a.mean())
    log(f"test accuracy over {seeds} seeds: executable {ours_a.mean():.4f} ± {ours_a.std():.4f}, "
        f"NumPy {ref_a.mean():.4f} ± {ref_a.std():.4f}; |diff| {diff:.4f} vs tolerance {tol:.4f}")
    return [] if diff <= tol else [f"mean test accuracy differs by {diff:.4f} > {tol:.4f}"]


def check_batches(exe: str, model: str, data: str, batch_size: int,
                  sampling: Union[str, List[str]], epochs: int = 2, lr: float = 0.01,
                  seed: int = 0, log=print, staleness: int = 0) -> List[str]:
    """The executable's mini-batch losses against the NumPy executor on the
    very batches it sampled (saved and replayed), from the same initial
    parameters, dropout off, Adam without weight decay on both sides.
    `sampling` is the fanouts ("25,10") or the executable's sampling flags.
    With `staleness` s > 0 the executable runs --pipeline (s = 3) and the
    replay is delayed SGD: batch t's gradients at the parameters after
    batch t - s - 1, applied to the newest."""
    if isinstance(sampling, str):
        sampling = ["--fanouts", sampling]
    import json
    from .data import load
    from .train import Optimizer, OptimizerConfig
    program = zoo.ZOO[model]()
    full = load(data)
    params = init_params(program, Executor(program, full), seed)
    failures: List[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        save_params(params, os.path.join(tmp, "init"))
        summary = os.path.join(tmp, "run.json")
        batches = os.path.join(tmp, "batches")
        run([exe, "--data", data, "--epochs", str(epochs), "--batch-size", str(batch_size),
             *sampling, "--dropout", "0", "--lr", str(lr), "--weight-decay", "0",
             "--optimizer", "adam", "--seed", str(seed), "--load-params",
             os.path.join(tmp, "init"), "--save-batches", batches, "--json", summary,
             "--quiet", *(["--pipeline"] if staleness else [])])
        with open(summary) as f:
            ours = json.load(f)["mini_batch"]["batch_losses"]
        names = sorted(os.listdir(batches))
        if len(names) != len(ours):
            return [f"{len(names)} batches saved but {len(ours)} losses reported"]
        opt = Optimizer(OptimizerConfig("adam", lr=lr, weight_decay=0.0))
        worst = 0.0
        versions = [dict(params)]  # versions[k]: after k updates
        for i, (name, loss) in enumerate(zip(names, ours)):
            step = Executor(program, load(os.path.join(batches, name))).run(
                versions[max(i - staleness, 0)], grads=True, dropout=False)
            err = rel_error(np.float64(loss), np.float64(step.loss))
            worst = max(worst, err)
            if err >= TOLERANCE:
                failures.append(f"batch {i + 1} ({name}): loss {loss} against the "
                                f"NumPy executor's {step.loss} (relative {err:.2e})")
            opt.step(params, step.grads)
            versions.append(dict(params))
        log(f"{len(ours)} batches over {epochs} epochs replayed"
            f"{f' as delayed SGD (staleness {staleness})' if staleness else ''}: losses agree within "
            f"{worst:.1e} (rule {TOLERANCE:g})" if not failures else
            f"{len(failures)} of {len(ours)} batches differ")
    return failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gnnc.check", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("dump", help="--dump against the NumPy executor on random graphs")
    p.add_argument("exe")
    p.add_argument("--model", required=True, choices=sorted(zoo.ZOO))
    p.add_argument("--seed", type=int_in(0, 2**31 - 1), default=None, help="default: fresh")
    p.add_argument("--graphs", type=int_in(1, 1000), default=2)
    p.add_argument("--isolated", action="store_true",
                   help="graphs without self-loops, a tenth of the vertices without edges")
    p.add_argument("--launcher", default=None,
                   help="a command to run the executable with, e.g. 'mpirun -np 3'")
    p = sub.add_parser("accuracy", help="training accuracy against the NumPy loop, over seeds")
    p.add_argument("exe")
    p.add_argument("--model", required=True, choices=sorted(zoo.ZOO))
    p.add_argument("--data", default=None)
    p.add_argument("--seeds", type=int_in(1, 1000), default=5)
    p.add_argument("--epochs", type=int_in(0, 1000000000), default=200)
    p.add_argument("--lr", type=float_in(0.0, 1e6), default=0.01)
    p.add_argument("--weight-decay", type=float_in(0.0, 1e6), default=5e-4)
    p = sub.add_parser("batches", help="mini-batch losses against the NumPy executor "
                                       "on the saved batches")
    p.add_argument("exe")
    p.add_argument("--model", required=True, choices=sorted(zoo.ZOO))
    p.add_argument("--data", default=None)
    p.add_argument("--batch-size", type=int_in(1, 2**40), required=True)
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--fanouts")
    how.add_argument("--preload-hops", type=int_in(0, 2**31 - 1),
                     help="expansion-aware sampling: hops outside the seeds")
    p.add_argument("--preload-fanout", type=int_in(0, 2**31 - 1),
                   help="expansion-aware sampling: picks per expanded vertex")
    p.add_argument("--epochs", type=int_in(1, 1000000), default=2)
    p.add_argument("--lr", type=float_in(0.0, 1e6), default=0.01)
    p.add_argument("--seed", type=int_in(0, 2**31 - 1), default=0)
    p.add_argument("--pipeline", action="store_true",
                   help="run with --pipeline and replay delayed SGD (staleness 3)")
    p = sub.add_parser("determinism", help="bitwise repeatability and 1 vs 2 threads")
    p.add_argument("exe")
    p.add_argument("--data", default=None)
    p.add_argument("--epochs", type=int_in(0, 1000000000), default=20)
    args = parser.parse_args(argv)
    if args.command == "dump":
        seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**31)
        print(f"seed {seed}")
        failures = check_dump(args.exe, args.model, seed, args.graphs,
                              isolated=args.isolated,
                              launcher=shlex.split(args.launcher) if args.launcher else None)
    else:
        data = args.data or os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))), "examples", "datasets", "polblogs")
        if args.command == "accuracy":
            failures = check_accuracy(args.exe, args.model, data, args.seeds, args.epochs,
                                      args.lr, args.weight_decay)
        elif args.command == "batches":
            sampling = args.fanouts
            if sampling is None:
                sampling = ["--preload-hops", str(args.preload_hops)]
                if args.preload_fanout is not None:
                    sampling += ["--preload-fanout", str(args.preload_fanout)]
            elif args.preload_fanout is not None:
                parser.error("--preload-fanout goes with --preload-hops, not --fanouts")
            failures = check_batches(args.exe, args.model, data, args.batch_size,
                                     sampling, args.epochs, args.lr, args.seed,
                                     staleness=3 if args.pipeline else 0)
        else:
            failures = check_determinism(args.exe, data, args.epochs)
    for f in failures:
        print(f"FAIL {f}", file=sys.stderr)
    print("all checks passed" if not failures else f"{len(failures)} checks failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
