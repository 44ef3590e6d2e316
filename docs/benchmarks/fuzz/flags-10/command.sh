#!/bin/sh
# Run from the repository root; BUILD is the build directory.
# gnnc.data: traceback: IndexError: index N is out of bounds for axis N with size N
PYTHONPATH=python python -m gnnc.data generate rmat --vertices 9223372036854775808 --draws +3 --seed 99999999999999999999999 -o $TMP/g --split 1e308,0,0
