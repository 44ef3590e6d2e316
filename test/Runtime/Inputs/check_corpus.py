#!/usr/bin/env python3
"""Runs a dataset loader over the shared corpus: every bad case must exit 1
with its expected.txt text on stderr (one line), every good case exit 0.

Usage: check_corpus.py LOADER CORPUS_DIR
"""
import glob
import os
import subprocess
import sys

loader, corpus = sys.argv[1], sys.argv[2]
bad = sorted(glob.glob(os.path.join(corpus, "bad", "*")))
good = sorted(glob.glob(os.path.join(corpus, "good", "*")))
failures = 0
for case in bad:
    expected = open(os.path.join(case, "expected.txt")).read().strip()
    p = subprocess.run([loader, case], capture_output=True, text=True)
    lines = p.stderr.strip().splitlines()
    if p.returncode != 1 or len(lines) != 1 or expected not in lines[0]:
        failures += 1
        print(f"FAIL {os.path.basename(case)}: exit {p.returncode}, stderr {p.stderr!r}, want {expected!r}")
for case in good:
    p = subprocess.run([loader, case], capture_output=True, text=True)
    if p.returncode != 0:
        failures += 1
        print(f"FAIL {os.path.basename(case)}: exit {p.returncode}: {p.stderr.strip()}")
print(f"{len(bad)} bad and {len(good)} good datasets, {failures} failures")
sys.exit(1 if failures else 0)
