"""Prints `same` or `differ` for the buffer bytes of two --json summaries."""
import json
import sys

a, b = (json.load(open(p))["buffer_bytes"] for p in sys.argv[1:3])
print("same" if a == b else "differ", a, b)
