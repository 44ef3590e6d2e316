"""A reader for graph-tool's binary `.gt` / `.gt.gz` format (version 1).

Layout: magic `\\xe2\\x9b\\xbe gt`, u8 version, u8 endianness (0 little),
u64 comment length + comment, u8 directed, u64 N; then per vertex a u64
out-degree and that many neighbour ids of 1/2/4/8 bytes (N <= 2^8/2^16/2^32/
otherwise; undirected graphs store each edge once); then u64 property-map
count, each: u8 kind (0 graph, 1 vertex, 2 edge), u64-length name, u8 value
type (0 bool, 1 int16, 2 int32, 3 int64, 4 double, 5 long double, 6 string,
7-13 vectors of those, 14 pickled object) and the values (strings and vectors
as u64 length + payload).

No graph-tool installation is needed: Debian's `python3-graph-tool` package
ships the collection as data files.
"""

from __future__ import annotations

import gzip
import os
import struct
from dataclasses import dataclass, field
from typing import Dict, Optional

import numpy as np

from .format import DatasetError

MAGIC = b"\xe2\x9b\xbe gt"
_SCALAR = {0: ("u1", 1), 1: ("i2", 2), 2: ("i4", 4), 3: ("i8", 8), 4: ("f8", 8), 5: (None, 16)}
_VECTOR = {7: ("u1", 1), 8: ("i2", 2), 9: ("i4", 4), 10: ("i8", 8), 11: ("f8", 8), 12: (None, 16)}


@dataclass
class GTGraph:
    num_vertices: int
    src: np.ndarray
    dst: np.ndarray
    directed: bool
    comment: str = ""
    graph_props: Dict[str, object] = field(default_factory=dict)
    vertex_props: Dict[str, object] = field(default_factory=dict)
    edge_props: Dict[str, object] = field(default_factory=dict)

    @property
    def num_edges(self) -> int:
        return int(self.src.size)


class _Reader:
    def __init__(self, data: bytes, name: str):
        self.d = data
        self.p = 0
        self.name = name
        self.e = "<"

    def need(self, n: int) -> None:
        if self.p + n > len(self.d):
            raise DatasetError(f"{self.name}: truncated .gt file (needs {n} bytes at offset {self.p})")

    def u8(self) -> int:
        self.need(1)
        v = self.d[self.p]
        self.p += 1
        return v

    def u64(self) -> int:
        self.need(8)
        (v,) = struct.unpack_from(self.e + "Q", self.d, self.p)
        self.p += 8
        return v

    def array(self, dtype: str, count: int) -> np.ndarray:
        width = np.dtype(dtype).itemsize
        self.need(count * width)
        arr = np.frombuffer(self.d, dtype=np.dtype(self.e + dtype), count=count, offset=self.p)
        self.p += count * width
        return arr

    def skip(self, n: int) -> None:
        self.need(n)
        self.p += n

    def string(self) -> str:
        n = self.u64()
        self.need(n)
        s = self.d[self.p:self.p + n].decode("utf-8", "replace")
        self.p += n
        return s


def _read_values(r: _Reader, vtype: int, count: int):
    if vtype in _SCALAR:
        dtype, width = _SCALAR[vtype]
        if dtype is None:  # long double: kept as raw bytes
            r.skip(count * width)
            return None
        return r.array(dtype, count).copy()
    if vtype == 6:
        return [r.string() for _ in range(count)]
    if vtype in _VECTOR:
        dtype, width = _VECTOR[vtype]
        out = []
        for _ in range(count):
            n = r.u64()
            if dtype is None:
                r.skip(n * width)
                out.append(None)
            else:
                out.append(r.array(dtype, n).copy())
        return out
    if vtype == 13:  # vector<string>
        return [[r.string() for _ in range(r.u64())] for _ in range(count)]
    if vtype == 14:  # pickled Python object: kept as bytes, never unpickled
        out = []
        for _ in range(count):
            n = r.u64()
            r.need(n)
            out.append(bytes(r.d[r.p:r.p + n]))
            r.p += n
        return out
    raise DatasetError(f"{r.name}: unknown property value type {vtype}")


def read_gt(path: str) -> GTGraph:
    """Reads a `.gt` or `.gt.gz` file."""
    name = os.path.basename(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise DatasetError(f"{name}: {e.strerror}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise DatasetError(f"{name}: corrupt gzip stream ({e})") from None
    r = _Reader(raw, name)
    r.need(8)
    if raw[:6] != MAGIC:
        raise DatasetError(f"{name}: not a graph-tool file (bad magic)")
    r.p = 6
    version = r.u8()
    if version != 1:
        raise DatasetError(f"{name}: unsupported .gt version {version}")
    r.e = ">" if r.u8() else "<"
    comment = r.string()
    directed = bool(r.u8())
    n = r.u64()
    if n >= 2**31:
        raise DatasetError(f"{name}: {n} vertices is too many")
    width = 1 if n <= 2**8 else 2 if n <= 2**16 else 4 if n <= 2**32 else 8
    itype = {1: "u1", 2: "u2", 4: "u4", 8: "u8"}[width]
    srcs, dsts = [], []
    for v in range(n):
        k = r.u64()
        if k:
            nb = r.array(itype, k)
            srcs.append(np.full(k, v, dtype=np.int64))
            dsts.append(nb.astype(np.int64))
    src = np.concatenate(srcs) if srcs else np.zeros(0, dtype=np.int64)
    dst = np.concatenate(dsts) if dsts else np.zeros(0, dtype=np.int64)
    if dst.size and dst.max() >= n:
        raise DatasetError(f"{name}: neighbour id {int(dst.max())} out of range [0, {n})")
    g = GTGraph(int(n), src, dst, directed, comment)
    for _ in range(r.u64()):
        kind = r.u8()
        pname = r.string()
        vtype = r.u8()
        if kind == 0:
            g.graph_props[pname] = _read_values(r, vtype, 1)
        elif kind == 1:
            g.vertex_props[pname] = _read_values(r, vtype, g.num_vertices)
        elif kind == 2:
            g.edge_props[pname] = _read_values(r, vtype, g.num_edges)
        else:
            raise DatasetError(f"{name}: unknown property kind {kind}")
    if r.p != len(raw):
        raise DatasetError(f"{name}: {len(raw) - r.p} trailing bytes after the property maps")
    return g


def from_gt(path: str, label: Optional[str] = None, features: Optional[str] = None,
            **kwargs):
    """A dataset from a `.gt` file. `label` names a vertex property whose
    distinct values become classes 0..C-1 (sorted); `features` names a numeric
    or vector vertex property (e.g. `pos`). Undirected graphs are symmetrised."""
    from .convert import from_edges

    g = read_gt(path)
    base = os.path.basename(path).split(".")[0]
    if label is not None:
        if label not in g.vertex_props:
            raise DatasetError(f"{os.path.basename(path)}: no vertex property '{label}' "
                               f"(has {', '.join(sorted(g.vertex_props)) or 'none'})")
        values = g.vertex_props[label]
        keys = [v.item() if isinstance(v, np.generic) else v for v in values]
        classes = sorted(set(keys), key=lambda x: (str(type(x)), x))
        cmap = {c: i for i, c in enumerate(classes)}
        kwargs["labels"] = np.array([cmap[k] for k in keys], dtype=np.int64)
        kwargs.setdefault("num_classes", len(classes))
    if features is not None:
        if features not in g.vertex_props:
            raise DatasetError(f"{os.path.basename(path)}: no vertex property '{features}'")
        vals = g.vertex_props[features]
        kwargs["features"] = np.array([np.atleast_1d(v) for v in vals], dtype=np.float32)
    kwargs.setdefault("symmetrize", not g.directed)
    kwargs.setdefault("directed", g.directed)
    kwargs.setdefault("name", base)
    kwargs.setdefault("source", f"graph-tool collection {os.path.basename(path)}")
    return from_edges(g.src, g.dst, g.num_vertices, **kwargs), g
