"""Every dataset of the bad corpus (test/datasets/bad/*/, expected.txt: the
message loadDataset gives) is refused under mpirun too, where each rank reads
only its part (Preload.cpp, loadPreloadPart): non-zero within the timeout, an
error naming a rank, and loadDataset's message.

    mpi_bad_datasets.py MPIRUN EXE CORPUS
"""

import os
import shlex
import subprocess
import sys

mpirun, exe, corpus = shlex.split(sys.argv[1]), sys.argv[2], sys.argv[3]
failures = []
names = sorted(n for n in os.listdir(corpus) if os.path.isdir(os.path.join(corpus, n)))
for name in names:
    path = os.path.join(corpus, name)
    expected = open(os.path.join(path, "expected.txt")).read().strip()
    try:
        r = subprocess.run(mpirun + ["-np", "2", exe, "--data", path, "--epochs", "1",
                                     "--threads", "1"],
                           capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        failures.append(f"{name}: no answer in 60 s")
        continue
    errors = [l for l in r.stderr.splitlines() if l.startswith("error: rank ")]
    if r.returncode == 0 or not errors:
        failures.append(f"{name}: not refused (exit {r.returncode})")
    elif expected not in errors[0]:
        failures.append(f"{name}: {errors[0]!r} does not say {expected!r}")
for f in failures:
    print(f)
print(f"{len(names) - len(failures)} of {len(names)} bad datasets refused with loadDataset's message")
sys.exit(1 if failures else 0)
