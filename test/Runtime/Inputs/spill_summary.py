"""Compares the --json summaries of a run without and with --spill-dir.

Prints the spill counters of the second run and whether its training was the
same as the first one's: every epoch's loss and the final accuracies (the
program evicts nothing yet, so --spill-dir must change nothing).
"""

import json
import sys

plain, spill = (json.load(open(p)) for p in sys.argv[1:3])
m = spill["memory"]
print(
    "spill: written %d read %d evictions %d fetches %d"
    % (m["spill_written_bytes"], m["spill_read_bytes"], m["evictions"], m["fetches"])
)
same = (
    [h["loss"] for h in plain["history"]] == [h["loss"] for h in spill["history"]]
    and plain["final"] == spill["final"]
)
print(
    "training %s over %d epochs"
    % ("unchanged" if same else "CHANGED", len(spill["history"]))
)
