"""Checks NeuGraph's column-major loading by the --json counters of runs of
one model over K = 2, 4, 8 row chunks (chunk-loads.test): the features read
per epoch, in units of the whole features, are a whole number r(K) growing
by the same 2 per extra chunk (2 passes: each source chunk once per
destination chunk in each), every fetch is one chunk (fetches = K r(K)),
and the graph's bytes read do not depend on K.

    chunk_loads.py DATASET K2.json K4.json K8.json
"""

import json
import os
import sys

data, *runs = sys.argv[1:]
meta = json.load(open(os.path.join(data, "meta.json")))
whole = meta["num_vertices"] * meta["num_features"] * 4
ks = [2, 4, 8]
mem = [json.load(open(r))["memory"] for r in runs]
reads = [m["features_read_bytes"] / whole for m in mem]
if any(r != int(r) for r in reads):
    sys.exit(f"features read {reads} times: not whole")
for k, r, m in zip(ks, reads, mem):
    if m["feature_fetches"] != k * r:
        sys.exit(f"K = {k}: {m['feature_fetches']} fetches for {r} reads")
slopes = [(reads[i + 1] - reads[i]) / (ks[i + 1] - ks[i]) for i in range(2)]
if slopes != [2, 2]:
    sys.exit(f"features read {reads} times for K = {ks}: slopes {slopes}, not 2")
graph = {m["graph_read_bytes"] for m in mem}
if len(graph) != 1 or 0 in graph:
    sys.exit(f"graph bytes {[m['graph_read_bytes'] for m in mem]}")
print(f"K = 2, 4, 8: features read {', '.join(str(int(r)) for r in reads)} times per epoch "
      "(2 per chunk: each source chunk once per destination chunk, per pass), fetches K x "
      "that; graph bytes the same for every K")
