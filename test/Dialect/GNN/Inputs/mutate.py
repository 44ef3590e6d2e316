#!/usr/bin/env python3
"""Feeds a tool damaged versions of gnn programs and fails if any run crashes.

For each input file: every prefix cut at a line boundary and at a few byte
offsets, every single line dropped, and a few seeded byte flips. A run must
exit with 0 (the damage happened to be harmless) or 1 (a diagnostic); an exit
status >= 128 or a signal is a crash. A diagnostic must carry a location
(`<file>:<line>:<col>: error:`).

Usage: mutate.py TOOL FILE...
"""

import random
import re
import subprocess
import sys
import tempfile

LOCATED = re.compile(rb"(<stdin>|\.mlir):\d+:\d+: error:")


def variants(text: bytes, rng: random.Random):
    lines = text.splitlines(keepends=True)
    for i in range(len(lines)):
        yield b"".join(lines[:i])
        yield b"".join(lines[:i] + lines[i + 1:])
    for _ in range(20):
        cut = rng.randrange(len(text))
        yield text[:cut]
    for _ in range(20):
        data = bytearray(text)
        pos = rng.randrange(len(data))
        data[pos] = rng.choice(b"(){}<>:,%?x0\"#!")
        yield bytes(data)


def main() -> int:
    tool, files = sys.argv[1], sys.argv[2:]
    rng = random.Random(12345)
    failures = 0
    runs = 0
    for path in files:
        text = open(path, "rb").read()
        for data in variants(text, rng):
            runs += 1
            proc = subprocess.run([tool, "-", "-o", "/dev/null"], input=data,
                                  stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)
            rc = proc.returncode
            bad = rc < 0 or rc >= 128 or rc not in (0, 1)
            if rc == 1 and not LOCATED.search(proc.stderr):
                bad = True
            if bad:
                failures += 1
                if failures <= 5:
                    sys.stderr.write(f"{path}: exit {rc} on input:\n")
                    sys.stderr.write(data.decode("utf-8", "replace")[-400:])
                    sys.stderr.write("\n--- stderr:\n")
                    sys.stderr.write(proc.stderr.decode("utf-8", "replace")[-800:])
    print(f"{runs} damaged inputs, {failures} crashes or unlocated errors")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
