"""Compares the runtime buffer bytes of two --json summaries taken on two
datasets with the same vertices and features but different edge counts.

    buffer_bytes.py A.json A-data B.json B-data [FLOATS]

Prints `flat` when the buffers grow by at most FLOATS (default 1) floats per
additional edge (per-edge scalar weights, kept per-edge values of a few
floats: nothing of |E| x F), else `grows` with the bytes per additional
edge."""
import json
import os
import sys

a_json, a_data, b_json, b_data = sys.argv[1:5]
floats = float(sys.argv[5]) if len(sys.argv) > 5 else 1.0
a = json.load(open(a_json))["buffer_bytes"]
b = json.load(open(b_json))["buffer_bytes"]
ea = json.load(open(os.path.join(a_data, "meta.json")))["num_edges"]
eb = json.load(open(os.path.join(b_data, "meta.json")))["num_edges"]
per_edge = (b - a) / (eb - ea)
print("flat" if per_edge <= 4.0 * floats else "grows", f"{per_edge:.1f} bytes per edge", a, b)
