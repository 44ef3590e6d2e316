"""Copies dataset SRC to DST with features.npy replaced by a sparse file that
announces [V, WIDTH] float32 (its data reads as zeros and takes no disk), and
meta.json's num_features set to WIDTH: a dataset whose bytes a file holds but
memory may not.

    sparse_features.py SRC DST WIDTH
"""

import json
import os
import shutil
import sys

src, dst, width = sys.argv[1], sys.argv[2], int(sys.argv[3])
shutil.rmtree(dst, ignore_errors=True)
shutil.copytree(src, dst)
with open(os.path.join(dst, "meta.json")) as f:
    meta = json.load(f)
V = meta["num_vertices"]
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (V, width)
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(os.path.join(dst, "features.npy"), "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
    f.truncate(f.tell() + V * width * 4)
meta["num_features"] = width
with open(os.path.join(dst, "meta.json"), "w") as f:
    json.dump(meta, f)
