"""The dataset directory format of DESIGN.md: reading, writing, validating.

| file | dtype, shape |
|---|---|
| meta.json | format_version 1, name, num_vertices, num_edges, num_features, num_classes, directed, self_loops, source, edge_data |
| indptr.npy | int64 [V+1]: in-edges by destination (CSC) |
| indices.npy | int32 [E]: source of each edge, grouped by destination, ascending within a group |
| features.npy | float32 [V, F] |
| labels.npy | int64 [V], -1 where unlabelled |
| train_mask.npy, val_mask.npy, test_mask.npy | bool [V] |
| edge_<name>.npy | float32 [E] or [E, k]; int32 [E] for edge types |

`validate(dir)` raises `DatasetError` with a one-line message naming the file
and the problem; `load(dir)` validates and returns a `Dataset`.
"""

from __future__ import annotations

import json
import os
import re
import stat
import struct
import tempfile
from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

import numpy as np

from .memory import memory_error

FORMAT_VERSION = 1
META_KEYS = ("format_version", "name", "num_vertices", "num_edges", "num_features",
             "num_classes", "directed", "self_loops", "source", "edge_data")
SPLITS = ("train", "val", "test")


class DatasetError(Exception):
    """A dataset that does not follow the format: `<file>: <problem>`."""


@dataclass
class Dataset:
    name: str
    indptr: np.ndarray            # int64 [V+1]
    indices: np.ndarray           # int32 [E]
    features: np.ndarray          # float32 [V, F]
    labels: np.ndarray            # int64 [V]
    masks: Dict[str, np.ndarray]  # split -> bool [V]
    num_classes: int
    edge_data: Dict[str, np.ndarray] = field(default_factory=dict)
    directed: bool = True
    self_loops: bool = False
    source: str = ""

    @property
    def num_vertices(self) -> int:
        return int(self.indptr.shape[0] - 1)

    @property
    def num_edges(self) -> int:
        return int(self.indices.shape[0])

    @property
    def num_features(self) -> int:
        return int(self.features.shape[1])

    def dst(self) -> np.ndarray:
        """Destination of every edge (CSC order)."""
        return np.repeat(np.arange(self.num_vertices, dtype=np.int64),
                         np.diff(self.indptr))

    def src(self) -> np.ndarray:
        return self.indices.astype(np.int64)

    def in_degree(self) -> np.ndarray:
        return np.diff(self.indptr)

    def out_degree(self) -> np.ndarray:
        return np.bincount(self.indices, minlength=self.num_vertices)

    def meta(self) -> dict:
        return {
            "format_version": FORMAT_VERSION,
            "name": str(self.name),
            "num_vertices": self.num_vertices,
            "num_edges": self.num_edges,
            "num_features": self.num_features,
            "num_classes": int(self.num_classes),
            "directed": bool(self.directed),
            "self_loops": bool(self.self_loops),
            "source": str(self.source),
            "edge_data": sorted(self.edge_data),
        }


# --- .npy reading with checks before allocation ---------------------------------

_DTYPES = {"<i8": np.int64, "<i4": np.int32, "<f4": np.float32, "|b1": np.bool_,
           "<f8": np.float64, "|u1": np.uint8, "<i2": np.int16}


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _open_regular(path: str, name: str):
    """Opens a dataset file for reading (binary). Only regular files (or
    symlinks to one) are opened: a FIFO would block the open until a writer
    comes, a device may never end. The open does not block either, in case
    the file was swapped for a FIFO after the stat."""
    try:
        st = os.stat(path)
        if stat.S_ISREG(st.st_mode):
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode):
                return os.fdopen(fd, "rb")
            os.close(fd)
    except FileNotFoundError:
        raise DatasetError(f"{name}: missing file") from None
    except OSError as e:
        raise DatasetError(f"{name}: {e.strerror}") from None
    kind = _kind(st.st_mode)
    raise DatasetError(f"{name}: is {kind}, not a regular file" if kind.startswith("a")
                       else f"{name}: {kind}")


#: Largest .npy header read (numpy writes about a hundred bytes).
_MAX_HEADER_LEN = 1 << 20
#: Most dimensions an array may have (the format needs two).
_MAX_DIMS = 8
_WS = b" \t\n\r"
_NAME = re.compile(rb"[A-Za-z0-9_]+")
_INT = re.compile(rb"[0-9]+")


class _HeaderParser:
    """The header dictionary numpy writes,
        {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
    read with the strict subset of Python's literal syntax that the runtime's
    loader (runtime/lib/Npy.cpp) reads the same way:
    - a dict of the keys 'descr', 'fortran_order' and 'shape', each once, in
      any order, a comma after the last one allowed;
    - strings in single or double quotes, of printable ASCII but backslashes;
    - fortran_order True or False;
    - shape a tuple of at most 8 decimal integers (no sign, no leading zero,
      at most 18 digits), a 1-tuple with its comma: (5,);
    - spaces, tabs, newlines and carriage returns between the tokens and
      after the dict (numpy pads with spaces and a newline), nothing else.
    Each method returns None where the text does not follow this."""

    def __init__(self, text: bytes):
        self.s, self.p = text, 0

    def ws(self) -> None:
        while self.p < len(self.s) and self.s[self.p] in _WS:
            self.p += 1

    def eat(self, c: bytes) -> bool:
        self.ws()
        if self.s[self.p:self.p + 1] == c:
            self.p += 1
            return True
        return False

    def str(self) -> Optional[str]:
        self.ws()
        q = self.s[self.p:self.p + 1]
        if q not in (b"'", b'"'):
            return None
        end = self.s.find(q, self.p + 1)
        if end < 0:
            return None
        body = self.s[self.p + 1:end]
        if any(c < 0x20 or c > 0x7E or c == 0x5C for c in body):
            return None
        self.p = end + 1
        return body.decode("ascii")

    def word(self) -> Optional[bytes]:
        self.ws()
        m = _NAME.match(self.s, self.p)
        if not m:
            return None
        self.p = m.end()
        return m.group()

    def integer(self) -> Optional[int]:
        self.ws()
        m = _INT.match(self.s, self.p)
        if not m or len(m.group()) > 18 or (len(m.group()) > 1 and m.group()[:1] == b"0"):
            return None
        self.p = m.end()
        return int(m.group())

    def shape(self) -> Optional[Tuple[int, ...]]:
        if not self.eat(b"("):
            return None
        dims = []
        if self.eat(b")"):
            return ()
        while True:
            d = None if len(dims) == _MAX_DIMS else self.integer()
            if d is None:
                return None
            dims.append(d)
            if self.eat(b")"):
                return tuple(dims) if len(dims) > 1 else None  # (5) is 5, not a tuple
            if not self.eat(b","):
                return None
            if self.eat(b")"):
                return tuple(dims)

    def at_end(self) -> bool:
        self.ws()
        return self.p == len(self.s)


def _parse_header(text: bytes, name: str) -> Tuple[str, bool, Tuple[int, ...]]:
    """(descr, fortran_order, shape) of a header dictionary."""
    def corrupt(why: str = "") -> DatasetError:
        return DatasetError(f"{name}: corrupt .npy header" + (f" ({why})" if why else ""))

    hp = _HeaderParser(text)
    values: Dict[str, object] = {}
    if not hp.eat(b"{"):
        raise corrupt()
    if not hp.eat(b"}"):
        while True:
            key = hp.str()
            if key is None or not hp.eat(b":"):
                raise corrupt()
            if key not in ("descr", "fortran_order", "shape"):
                raise corrupt(f"unknown key '{key}'")
            if key in values:
                raise corrupt(f"duplicate key '{key}'")
            if key == "descr":
                value = hp.str()
            elif key == "fortran_order":
                w = hp.word()
                value = {b"True": True, b"False": False}.get(w)
            else:
                value = hp.shape()
            if value is None:
                raise corrupt(key)
            values[key] = value
            if hp.eat(b"}"):
                break
            if not hp.eat(b","):
                raise corrupt()
            if hp.eat(b"}"):
                break
    if not hp.at_end():
        raise corrupt()
    for key in ("descr", "fortran_order", "shape"):
        if key not in values:
            raise corrupt(f"missing key '{key}'")
    return values["descr"], values["fortran_order"], values["shape"]


def _read_header(f, name: str) -> Tuple[np.dtype, Tuple[int, ...], int]:
    """Reads the .npy header of the open file `f`, leaving `f` at the data:
    (dtype, shape, data offset). Checks the file is long enough for the data
    it announces. The same checks in the same order as readNpyHeader in
    runtime/lib/Npy.cpp."""
    try:
        head = f.read(10)
        if len(head) < 6 or head[:6] != b"\x93NUMPY":
            raise DatasetError(f"{name}: not an .npy file (bad magic)")
        if len(head) < 10:
            raise DatasetError(f"{name}: truncated .npy header")
        major, minor = head[6], head[7]
        if major not in (1, 2, 3) or minor != 0:
            raise DatasetError(f"{name}: unsupported .npy version {major}.{minor}")
        if major == 1:
            (hlen,) = struct.unpack("<H", head[8:10])
            offset = 10
        else:
            rest = f.read(2)
            if len(rest) < 2:
                raise DatasetError(f"{name}: truncated .npy header")
            (hlen,) = struct.unpack("<I", head[8:10] + rest)
            offset = 12
        if hlen > _MAX_HEADER_LEN:
            raise DatasetError(f"{name}: corrupt .npy header ({hlen} bytes long)")
        text = f.read(hlen)
        if len(text) < hlen:
            raise DatasetError(f"{name}: truncated .npy header")
        size = os.fstat(f.fileno()).st_size
    except OSError as e:
        raise DatasetError(f"{name}: {e.strerror}") from None
    descr, fortran, shape = _parse_header(text, name)
    if descr not in _DTYPES:
        raise DatasetError(f"{name}: unsupported dtype '{descr}'")
    if fortran:
        raise DatasetError(f"{name}: Fortran-ordered arrays are not supported")
    # The bytes the shape spans, zero dimensions counted as 1 (what numpy
    # checks), at most 2^62: products of dimensions never overflow an int64.
    dtype = np.dtype(_DTYPES[descr])
    span = elements = 1
    for d in shape:
        span *= max(d, 1)
        elements *= d
        if span * dtype.itemsize > 1 << 62:
            raise DatasetError(f"{name}: corrupt .npy header (shape too large)")
    need = offset + hlen + elements * dtype.itemsize
    if size < need:
        raise DatasetError(f"{name}: truncated: header announces {need} bytes, file has {size}")
    return dtype, shape, offset + hlen


def read_npy_header(path: str) -> Tuple[np.dtype, Tuple[int, ...], bool, int]:
    """Parses an .npy header: (dtype, shape, fortran_order, data offset).
    Checks the file is long enough for the data it announces (Fortran order
    is refused, so fortran_order is always False)."""
    name = os.path.basename(path)
    with _open_regular(path, name) as f:
        dtype, shape, offset = _read_header(f, name)
        return dtype, shape, False, offset


def read_npy(path: str, dtype=None, ndim: Optional[int] = None, what: str = "") -> np.ndarray:
    """Reads an .npy file after checking its header's dtype (None: any of the
    format's) and rank; the file is opened once."""
    name = os.path.basename(path)
    with _open_regular(path, name) as f:
        actual, shape, _ = _read_header(f, name)
        if dtype is not None and actual != np.dtype(dtype):
            raise DatasetError(f"{name}: dtype {actual.name} but {what or 'the format'} needs "
                               f"{np.dtype(dtype).name}")
        if ndim is not None and len(shape) != ndim:
            raise DatasetError(f"{name}: rank {len(shape)} (shape {shape}) but {ndim} expected")
        count = 1
        for d in shape:
            count *= d
        why = memory_error(f"{name}: its data", count * actual.itemsize)
        if why:
            raise DatasetError(why)
        try:
            data = bytearray(count * actual.itemsize)
        except MemoryError:
            raise DatasetError(f"{name}: out of memory for its data") from None
        try:
            got = f.readinto(data)
        except OSError as e:
            raise DatasetError(f"{name}: {e.strerror}") from None
        if got != len(data):
            raise DatasetError(f"{name}: truncated")
        return np.frombuffer(data, dtype=actual).reshape(shape)


#: The largest counts meta.json may give (runtime/lib/Dataset.cpp has the
#: same): vertex and edge ids are int32 (indices.npy, the CSR's edge ids), and
#: the gnn verifier bounds rows at 2^24 elements (a row of features, a row of
#: logits of one element per class).
COUNT_LIMITS = (
    ("num_vertices", 2 ** 31 - 1, "vertex ids are int32"),
    ("num_edges", 2 ** 31 - 1, "edge ids are int32"),
    ("num_features", 1 << 24, "the most elements a row of features may have"),
    ("num_classes", 1 << 24, "the most elements a row of logits may have"),
)
#: Edge data names are those of gnn.input (letters, digits, '_'); they make the
#: file name edge_<name>.npy.
_EDGE_DATA_NAME = re.compile(r"[A-Za-z0-9_]+")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _json_text(v) -> str:
    """A meta.json value as the runtime's messages print it (JsonValue::text)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "%f" % v
    if isinstance(v, list):
        return "[...]"
    if isinstance(v, dict):
        return "{...}"
    return str(v)


#: Most arrays and objects nested in one another in meta.json (the runtime's
#: kMaxDepth in runtime/lib/Json.cpp).
MAX_JSON_DEPTH = 64


def _json_depth_error(text: str) -> Optional[str]:
    """Where `text` nests more than MAX_JSON_DEPTH arrays and objects, found
    without recursing (json.loads recurses and raises RecursionError near a
    thousand). Exact for valid JSON; invalid JSON fails either way."""
    depth = 0
    in_string = escaped = False
    for i, c in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return f"more than {MAX_JSON_DEPTH} nested arrays and objects at offset {i}"
        elif c in "]}":
            depth -= 1
    return None


def _json_int(digits: str):
    """Integers outside int64 are floats, as in the runtime's reader (and so
    no integer where one is needed)."""
    value = int(digits) if len(digits) <= 20 else None
    return value if value is not None and -2 ** 63 <= value < 2 ** 63 else float(digits)


def _json_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _json_object(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"duplicate key '{key}'")
        obj[key] = value
    return obj


def _parse_json(data: bytes):
    """meta.json's bytes read as strictly as the runtime's reader
    (runtime/lib/Json.cpp): UTF-8, RFC 8259 (no NaN or Infinity), at most
    MAX_JSON_DEPTH nested arrays and objects, no duplicate keys."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DatasetError(f"meta.json: not valid JSON (invalid UTF-8 at offset {e.start})") \
            from None
    try:
        problem = _json_depth_error(text)
        if problem:
            raise ValueError(problem)
        return json.loads(text, parse_int=_json_int, parse_constant=_json_constant,
                          object_pairs_hook=_json_object)
    except (ValueError, RecursionError) as e:
        raise DatasetError(f"meta.json: not valid JSON ({e})") from None


def _check_len(name: str, arr: np.ndarray, n: int, what: str) -> None:
    if arr.shape[0] != n:
        raise DatasetError(f"{name}: length {arr.shape[0]} but {what} is {n}")


def load(directory: str) -> Dataset:
    """Reads and validates a dataset directory."""
    if not os.path.isdir(directory):
        raise DatasetError(f"{directory}: not a directory")
    j = lambda f: os.path.join(directory, f)  # noqa: E731
    with _open_regular(j("meta.json"), "meta.json") as f:
        try:
            text = f.read()
        except OSError as e:
            raise DatasetError(f"meta.json: {e.strerror}") from None
    meta = _parse_json(text)
    if not isinstance(meta, dict):
        raise DatasetError("meta.json: expected a JSON object")
    for key in META_KEYS:
        if key not in meta:
            raise DatasetError(f"meta.json: missing key '{key}'")
    if not _is_int(meta["format_version"]) or meta["format_version"] != FORMAT_VERSION:
        raise DatasetError(f"meta.json: format_version {_json_text(meta['format_version'])} "
                           f"(this reader knows {FORMAT_VERSION})")
    for key in ("num_vertices", "num_edges", "num_features", "num_classes"):
        v = meta[key]
        if not _is_int(v) or v < 0:
            raise DatasetError(f"meta.json: '{key}' must be a non-negative integer")
    if meta["num_classes"] < 1:
        raise DatasetError("meta.json: 'num_classes' must be at least 1")
    for key, limit, why in COUNT_LIMITS:
        if meta[key] > limit:
            raise DatasetError(f"meta.json: '{key}' is {meta[key]}, more than {limit} ({why})")
    for key in ("name", "source"):
        if not isinstance(meta[key], str):
            raise DatasetError(f"meta.json: '{key}' must be a string")
    for key in ("directed", "self_loops"):
        if not isinstance(meta[key], bool):
            raise DatasetError(f"meta.json: '{key}' must be true or false")
    if not isinstance(meta["edge_data"], list) or not all(isinstance(n, str) for n in meta["edge_data"]):
        raise DatasetError("meta.json: 'edge_data' must be a list of names")
    seen = set()
    for i, n in enumerate(meta["edge_data"]):
        if not _EDGE_DATA_NAME.fullmatch(n):
            raise DatasetError(f"meta.json: 'edge_data' item {i} is not a name of letters, "
                               "digits and '_'")
        if n in seen:
            raise DatasetError(f"meta.json: 'edge_data' lists '{n}' twice")
        seen.add(n)

    indptr = read_npy(j("indptr.npy"), np.int64, 1)
    indices = read_npy(j("indices.npy"), np.int32, 1)
    V = indptr.shape[0] - 1
    if V < 0:
        raise DatasetError("indptr.npy: empty (needs V+1 entries)")
    E = indices.shape[0]
    if indptr[0] != 0:
        raise DatasetError(f"indptr.npy: indptr[0] is {indptr[0]}, not 0")
    # Compared, not subtracted: np.diff wraps around (2^63 - 1 to -2 is +2^63 - 1).
    down = indptr[1:] < indptr[:-1]
    if np.any(down):
        v = int(np.argmax(down))
        raise DatasetError(f"indptr.npy: not monotone (indptr[{v + 1}] < indptr[{v}])")
    if indptr[-1] != E:
        raise DatasetError(f"indptr.npy: indptr[-1] = {indptr[-1]} but indices.npy has {E} edges")
    if E and (indices.min() < 0 or indices.max() >= V):
        bad = int(indices.min()) if indices.min() < 0 else int(indices.max())
        raise DatasetError(f"indices.npy: vertex id {bad} out of range [0, {V})")
    if E:
        # Ascending sources within each destination's group.
        d = np.diff(indices.astype(np.int64))
        starts = np.zeros(E, dtype=bool)
        starts[indptr[1:-1][indptr[1:-1] < E]] = True
        bad = (d < 0) & ~starts[1:]
        if np.any(bad):
            e = int(np.argmax(bad)) + 1
            raise DatasetError(f"indices.npy: sources not ascending within a destination "
                               f"(edge {e})")

    features = read_npy(j("features.npy"), np.float32, 2)
    _check_len("features.npy", features, V, "the number of vertices (indptr.npy)")
    if not np.all(np.isfinite(features)):
        r = int(np.argmax(~np.all(np.isfinite(features), axis=1)))
        raise DatasetError(f"features.npy: NaN or Inf (row {r})")
    labels = read_npy(j("labels.npy"), np.int64, 1)
    _check_len("labels.npy", labels, V, "the number of vertices (indptr.npy)")
    C = meta["num_classes"]
    if V and (labels.min() < -1 or labels.max() >= C):
        bad = int(labels.min()) if labels.min() < -1 else int(labels.max())
        raise DatasetError(f"labels.npy: label {bad} outside [-1, num_classes={C})")
    masks = {}
    for split in SPLITS:
        m = read_npy(j(f"{split}_mask.npy"), np.bool_, 1)
        _check_len(f"{split}_mask.npy", m, V, "the number of vertices (indptr.npy)")
        masks[split] = m

    edge_data = {}
    for name in meta["edge_data"]:
        path = j(f"edge_{name}.npy")
        fname = os.path.basename(path)
        try:
            os.stat(path)
        except FileNotFoundError:
            raise DatasetError(f"{fname}: missing file (listed in meta.json edge_data)") from None
        except OSError:
            pass  # read_npy says what
        arr = read_npy(path)
        if arr.dtype == np.int32:
            if arr.ndim != 1:
                raise DatasetError(f"{fname}: rank {arr.ndim} (shape {arr.shape}) but 1 expected")
        elif arr.dtype == np.float32:
            if arr.ndim not in (1, 2):
                raise DatasetError(f"{fname}: rank {arr.ndim} (shape {arr.shape}) but [E] or [E, k] "
                                   "expected")
            if not np.all(np.isfinite(arr)):
                raise DatasetError(f"{fname}: NaN or Inf")
        else:
            raise DatasetError(f"{fname}: dtype {arr.dtype.name} but float32 or int32 expected")
        _check_len(fname, arr, E, "the number of edges (indices.npy)")
        edge_data[name] = arr

    expected = {"num_vertices": V, "num_edges": E, "num_features": features.shape[1]}
    for key, actual in expected.items():
        if meta[key] != actual:
            raise DatasetError(f"meta.json: {key} is {meta[key]} but the arrays have {actual}")
    return Dataset(name=str(meta["name"]), indptr=indptr, indices=indices,
                   features=features, labels=labels, masks=masks, num_classes=C,
                   edge_data=edge_data, directed=bool(meta["directed"]),
                   self_loops=bool(meta["self_loops"]), source=str(meta["source"]))


def validate(directory: str) -> Dataset:
    return load(directory)


def _kind(mode: int) -> str:
    return ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")


def write_whole(path: str, write) -> None:
    """Writes the regular file `path` whole or not at all: `write(f)` fills a
    temporary next to it (binary), renamed over it once complete, so that a
    failed write (ENOSPC) leaves no half-written file under the name. A
    directory, FIFO, device or socket at `path` is refused (a FIFO would block
    the open). Errors are DatasetError("<path>: <problem>")."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise DatasetError(f"{path}: {e.strerror}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise DatasetError(f"{path}: is {_kind(st.st_mode)}, not a regular file")
    target = os.path.realpath(path) if st is not None else path
    directory, base = os.path.split(target)
    try:
        fd, temp = tempfile.mkstemp(dir=directory or ".", prefix=f".{base[:200]}.tmp-")
    except OSError as e:
        raise DatasetError(f"{path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        if st is not None:
            mode = stat.S_IMODE(st.st_mode)
        else:
            mask = os.umask(0)
            os.umask(mask)
            mode = 0o666 & ~mask
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException as e:
        try:
            os.unlink(temp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise DatasetError(f"{path}: {e.strerror}") from None
        raise


def save(ds: Dataset, directory: str) -> None:
    """Writes `ds` in the format (creating `directory`); each file whole or
    not at all (write_whole)."""
    for name in ds.edge_data:
        if not _EDGE_DATA_NAME.fullmatch(name):
            raise DatasetError(f"edge data name '{name}' must contain only letters, digits "
                               "and '_'")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise DatasetError(f"{directory}: exists and is not a directory")
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise DatasetError(f"{directory}: {e.strerror}") from None
    j = lambda f: os.path.join(directory, f)  # noqa: E731

    def npy(name: str, arr: np.ndarray) -> None:
        write_whole(j(name), lambda f: np.save(f, arr))

    npy("indptr.npy", np.ascontiguousarray(ds.indptr, dtype=np.int64))
    npy("indices.npy", np.ascontiguousarray(ds.indices, dtype=np.int32))
    npy("features.npy", np.ascontiguousarray(ds.features, dtype=np.float32))
    npy("labels.npy", np.ascontiguousarray(ds.labels, dtype=np.int64))
    for split in SPLITS:
        npy(f"{split}_mask.npy", np.ascontiguousarray(ds.masks[split], dtype=np.bool_))
    for name, arr in ds.edge_data.items():
        dtype = np.int32 if np.issubdtype(arr.dtype, np.integer) else np.float32
        npy(f"edge_{name}.npy", np.ascontiguousarray(arr, dtype=dtype))
    text = json.dumps(ds.meta(), indent=2) + "\n"
    write_whole(j("meta.json"), lambda f: f.write(text.encode()))
