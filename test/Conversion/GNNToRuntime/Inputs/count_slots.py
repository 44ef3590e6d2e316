#!/usr/bin/env python3
"""Reads lowered IR on stdin; prints, per function, how many gnnrtBuffer calls
there are and how many distinct slots they use."""
import re
import sys

text = sys.stdin.read()
consts = dict(re.findall(r"(%c[\w]*) = arith\.constant (\d+) : i64", text))
for name, body in re.findall(r"func\.func @(gnn_\w+)\(.*?\n(.*?)\n  }", text, re.S):
    local = dict(re.findall(r"(%[\w]+) = arith\.constant (\d+) : i64", body))
    slots = [local.get(s, consts.get(s)) for s in re.findall(r"call @gnnrtBuffer\(%arg0, (%[\w]+)", body)]
    print(f"{name}: {len(slots)} buffers in {len(set(slots))} slots")
