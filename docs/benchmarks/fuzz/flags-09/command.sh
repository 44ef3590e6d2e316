#!/bin/sh
# Run from the repository root; BUILD is the build directory.
# gnnc.data: traceback: TypeError: loop of ufunc does not support argument N of type int which has no callable logN method
PYTHONPATH=python python -m gnnc.data generate rmat --vertices 99999999999999999999999 --draws -1 --seed -0 -o $TMP/g --split 0.5,0.5
