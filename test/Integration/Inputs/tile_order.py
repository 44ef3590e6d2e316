"""Compares runs of one model compiled with both tile orders
(tile-order.test): the losses must be the same floats (each row adds its
tiles in input order either way), and the bytes the slow tier moved (spill
reads and writes, feature reads) are printed per order with which moved
fewer.

    tile_order.py STRATEGY COLUMN_ROW.json ROW_COLUMN.json
"""

import json
import sys

strategy, *runs = sys.argv[1:]
cr, rc = (json.load(open(r)) for r in runs)
losses = [[h["loss"] for h in j["history"]] for j in (cr, rc)]
if losses[0] != losses[1]:
    sys.exit(f"{strategy}: losses differ: {losses[0]} against {losses[1]}")


def moved(j):
    m = j["memory"]
    return m["spill_read_bytes"] + m["spill_written_bytes"] + m["features_read_bytes"]


a, b = moved(cr), moved(rc)
order = "fewer" if a < b else "the same" if a == b else "more"
print(f"{strategy}: same losses; column-row moves {order} bytes"
      + (f" (row-column {b / a:.2f}x)" if a < b else ""))
