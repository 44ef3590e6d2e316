"""Checks the --json summaries of one placed program run with
--selective-loads never, always and auto against its unbudgeted reference
(issue 18, NeuGraph's selective loading):

    selective_check.py REF.json NEVER.json ALWAYS.json AUTO.json

- every run's loss at every epoch is the reference's (DESIGN.md's rule);
- never reads every tile's input chunk whole: no filtered tile, nothing
  skipped (a tile whose edges are not at hand, no_edges, is read whole in
  every mode);
- always filters every tile whose chunk was out and reads exactly what never
  read less what it skipped (the same fetches, read in part), and skips
  something (the graph is sparse);
- auto decides the same tiles, filtering some or none by the rule on the
  throughputs it measured (each row width's threshold T_copy / (T_copy +
  T_trans) in (0, 1)), and skips at most what always skipped.
"""

import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def same_losses(a, b):
    for x, y in zip(a["history"], b["history"], strict=True):
        if abs(x["loss"] - y["loss"]) > 1e-5 + 1e-4 * abs(y["loss"]):
            return f"epoch {x['epoch']}: loss {x['loss']} against {y['loss']}"
    return None


def read(mem):
    return mem["spill_read_bytes"] + mem["features_read_bytes"]


def main():
    ref, never, always, auto = (load(p) for p in sys.argv[1:5])
    for name, run in (("never", never), ("always", always), ("auto", auto)):
        problem = same_losses(run, ref)
        if problem:
            sys.exit(f"{name}: {problem}")
    n, a, u = (r["memory"] for r in (never, always, auto))
    sn, sa, su = (m["selective"] for m in (n, a, u))
    # The tiles whose input chunk was out and whose edges were at hand (with
    # the graph out of core, a chunk's first tile is fetched before its
    # window opens: read whole, the same in every mode).
    tiles = sn["whole"]
    if sn["filtered"] or sn["skipped_bytes"] or tiles == 0:
        sys.exit(f"never: {sn}")
    if not sn["no_edges"] == sa["no_edges"] == su["no_edges"]:
        sys.exit(f"tiles without their edges differ: {sn}, {sa}, {su}")
    if sa["filtered"] != tiles or sa["whole"] or sa["skipped_bytes"] <= 0:
        sys.exit(f"always: {sa} (never read {tiles} tiles' chunks)")
    if read(a) + sa["skipped_bytes"] != read(n):
        sys.exit(f"always read {read(a)} + skipped {sa['skipped_bytes']}, "
                 f"never read {read(n)}")
    if su["filtered"] + su["whole"] != tiles or \
       su["skipped_bytes"] > sa["skipped_bytes"] or \
       read(u) + su["skipped_bytes"] != read(n):
        sys.exit(f"auto: {su} against always {sa}")
    if not su["t_copy"] or not all(0 < w["threshold"] < 1
                                   for w in su["t_copy"]):
        sys.exit(f"auto: no throughputs measured: {su}")
    print(f"losses agree; {tiles} tiles' input chunks out; always skipped "
          f"{sa['skipped_bytes']} bytes (mean theta {sa['mean_theta']:.3f}); "
          f"auto filtered {su['filtered']}")


if __name__ == "__main__":
    main()
