#!/bin/sh
# Run from the repository root; BUILD is the build directory.
# gnnc.data: traceback: numpy.core._exceptions._ArrayMemoryError: Unable to allocate N GiB for an array with shape (N,) and data type intN
PYTHONPATH=python python -m gnnc.data generate rmat --vertices 4294967297 --draws +3 --seed 1 -o $TMP/g
