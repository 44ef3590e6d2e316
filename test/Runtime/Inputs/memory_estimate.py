"""Checks a run's --json summary: the memory the driver estimated before
allocating (activations from the model's buffer records, parameters,
optimizer state, the features' copy) equals the device's high-water mark.

    memory_estimate.py RUN.json
"""

import json
import sys

summary = json.load(open(sys.argv[1]))
mem = summary["memory"]
est = mem["estimate"]
total = est["activations"] + est["parameters"] + est["optimizer"] + est["features"]
peak = mem["device_peak_bytes"]
status = "equal" if total == peak else "differ"
line = (f"{summary['model']}: estimate {total} peak {peak} {status}; "
        f"unknown buffers {str(est['unknown_buffers']).lower()}")
if mem["budget_bytes"]:
    within = "within" if 0 < mem["peak_resident_bytes"] <= mem["budget_bytes"] else "over"
    line += f"; budget {mem['budget_bytes']}, peak resident {within} it"
print(line)
