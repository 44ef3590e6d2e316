"""Checks the --json summaries of a fused gather's program whose kernel
tiles fetch their input chunks in sub-chunks (gnnrtParallelForRangeFetch;
issue 18, NeuGraph's pipeline) against its unbudgeted reference:

    kernel_tiles_check.py REF.json SUB.json WHOLE.json

SUB ran with --sub-chunks 4, WHOLE with --sub-chunks 1, both with
--selective-loads always:
- both give the reference's loss at every epoch (DESIGN.md's rule);
- both read exactly the same bytes and skip the same (the digest's
  behaviour 16: sub-chunks change when rows are read, not which);
- SUB pipelined tiles, WHOLE none;
- every tile's edges were at hand (no_edges 0: a kernel tile's input is
  fetched where the kernel runs, after its chunk's window of the graph
  opens when the graph is out of core) and some tiles were filtered.
"""

import sys

from selective_check import load, same_losses


def main():
    ref, sub, whole = (load(p) for p in sys.argv[1:4])
    for name, run in (("sub-chunks", sub), ("whole", whole)):
        problem = same_losses(run, ref)
        if problem:
            sys.exit(f"{name}: {problem}")
    s, w = sub["memory"], whole["memory"]

    def bytes_of(m):
        return (m["spill_read_bytes"], m["features_read_bytes"],
                m.get("graph_read_bytes", 0), m["selective"]["skipped_bytes"])

    if bytes_of(s) != bytes_of(w):
        sys.exit(f"bytes read, skipped: {bytes_of(s)} against {bytes_of(w)}")
    if s["pipeline"]["tiles"] <= 0 or w["pipeline"]["tiles"] != 0:
        sys.exit(f"pipelined tiles: {s['pipeline']} and {w['pipeline']}")
    for m in (s, w):
        if m["selective"]["no_edges"] != 0 or m["selective"]["filtered"] <= 0:
            sys.exit(f"selective: {m['selective']}")
    print(f"losses agree; {s['pipeline']['tiles']} tiles pipelined, "
          f"the same {sum(bytes_of(s)[:3])} bytes read")


if __name__ == "__main__":
    main()
