#!/usr/bin/env python3
"""Interleaved A/B of two compiled gnnc executables on one dataset.

    bench/ab.py OLD_EXE NEW_EXE --data DIR [--rounds 3] [--epochs 8]

Runs OLD and NEW alternately (OLD, NEW, OLD, NEW, ...) so that the machine's
drift hits both alike, reads each run's median epoch time and final loss
from --json, and prints each side's median over the rounds and NEW / OLD.
For changes that must not move performance (a refactoring of the lowering
or the runtime); the losses must also agree (same seed).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(exe, args, out):
    cmd = [exe, "--data", args.data, "--epochs", str(args.epochs), "--seed",
           str(args.seed), "--threads", str(args.threads), "--quiet",
           "--json", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        summary = json.load(f)
    return summary["median_epoch_ms"], summary["final"]["loss"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--data", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    times = {"old": [], "new": []}
    losses = {"old": set(), "new": set()}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for side in ("old", "new"):
                ms, loss = run(getattr(args, side), args,
                               os.path.join(tmp, f"{side}{r}.json"))
                times[side].append(ms)
                losses[side].add(loss)
                print(f"[ab] round {r + 1}/{args.rounds} {side}: "
                      f"median epoch {ms:.1f} ms, final loss {loss}",
                      file=sys.stderr)
    old, new = (statistics.median(times[s]) for s in ("old", "new"))
    print(f"old: median epoch {old:.1f} ms ({', '.join(f'{t:.1f}' for t in times['old'])})")
    print(f"new: median epoch {new:.1f} ms ({', '.join(f'{t:.1f}' for t in times['new'])})")
    print(f"new / old: {new / old:.3f}")
    same = losses["old"] == losses["new"]
    print(f"final losses {'identical' if same else 'DIFFER'}: "
          f"old {sorted(losses['old'])}, new {sorted(losses['new'])}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
