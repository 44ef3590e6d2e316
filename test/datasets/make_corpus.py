#!/usr/bin/env python3
"""Writes the dataset corpus shared by the Python validator and the C++ loader.

good/<case>/   datasets that must load.
bad/<case>/    datasets that must be rejected; bad/<case>/expected.txt holds the
               text the one-line error must contain (the file and the problem).

The corpus is checked in; this script documents and regenerates it:
    python test/datasets/make_corpus.py
"""

import json
import os
import shutil
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def base():
    """5 vertices, edges grouped by destination with ascending sources."""
    # dst 0: 1, 2   dst 1: 0   dst 2: (none)   dst 3: 0, 3, 4   dst 4: 2
    indptr = np.array([0, 2, 3, 3, 6, 7], dtype=np.int64)
    indices = np.array([1, 2, 0, 0, 3, 4, 2], dtype=np.int32)
    files = {
        "indptr.npy": indptr,
        "indices.npy": indices,
        "features.npy": np.arange(15, dtype=np.float32).reshape(5, 3) / 10,
        "labels.npy": np.array([0, 1, -1, 1, 0], dtype=np.int64),
        "train_mask.npy": np.array([1, 1, 0, 0, 0], dtype=bool),
        "val_mask.npy": np.array([0, 0, 0, 1, 0], dtype=bool),
        "test_mask.npy": np.array([0, 0, 0, 0, 1], dtype=bool),
        "edge_weight.npy": np.linspace(0.5, 1.5, 7).astype(np.float32),
        "edge_type.npy": np.array([0, 1, 2, 0, 1, 2, 0], dtype=np.int32),
    }
    meta = {"format_version": 1, "name": "tiny", "num_vertices": 5, "num_edges": 7,
            "num_features": 3, "num_classes": 2, "directed": True, "self_loops": True,
            "source": "test/datasets/make_corpus.py", "edge_data": ["type", "weight"]}
    return files, meta


def write(path, files, meta, raw=None):
    if os.path.exists(path):
        shutil.rmtree(path)
    os.makedirs(path)
    for name, arr in files.items():
        np.save(os.path.join(path, name), arr)
    for name, data in (raw or {}).items():
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)
    if meta is not None:
        with open(os.path.join(path, "meta.json"), "w") as f:
            json.dump(meta, f, indent=2)
            f.write("\n")


def npy_bytes(arr):
    import io
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def npy_with_header(arr, text, major=1, minor=0, length=None):
    """The .npy file of `arr` with its header dictionary replaced by `text`
    (padded like numpy's), the version `major`.`minor` and, when given, a
    header length field of `length`."""
    data = arr.tobytes()
    raw = text.encode("latin1")
    prefix = 10 if major == 1 else 12
    raw += b" " * ((64 - (prefix + len(raw) + 1) % 64) % 64) + b"\n"
    n = len(raw) if length is None else length
    size = struct.pack("<H", n) if major == 1 else struct.pack("<I", n)
    return b"\x93NUMPY" + bytes([major, minor]) + size + raw + data


def case(name, expected, mutate):
    files, meta = base()
    raw = {}
    meta = mutate(files, meta, raw)
    path = os.path.join(HERE, "bad", name)
    write(path, files, meta, raw)
    with open(os.path.join(path, "expected.txt"), "w") as f:
        f.write(expected + "\n")


def main():
    for sub in ("good", "bad"):
        shutil.rmtree(os.path.join(HERE, sub), ignore_errors=True)
    files, meta = base()
    write(os.path.join(HERE, "good", "tiny"), files, meta)
    files, meta = base()
    for k in ("edge_weight.npy", "edge_type.npy"):
        del files[k]
    meta["edge_data"] = []
    files["indptr.npy"] = np.zeros(6, dtype=np.int64)
    files["indices.npy"] = np.zeros(0, dtype=np.int32)
    meta["num_edges"] = 0
    write(os.path.join(HERE, "good", "no-edges"), files, meta)
    files, meta = base()
    # 64 arrays and objects nested in one another: the most either reader takes.
    meta["extra"] = json.loads("[" * 63 + "]" * 63)
    write(os.path.join(HERE, "good", "meta-nesting-64"), files, meta)

    def drop(f, m, r, name):
        del f[name]
        return m

    def replace(name, arr):
        def mut(f, m, r):
            f[name] = arr
            return m
        return mut

    def raw(name, data):
        def mut(f, m, r):
            del f[name]
            r[name] = data
            return m
        return mut

    good_indptr = npy_bytes(base()[0]["indptr.npy"])
    case("truncated-header", "indptr.npy: truncated .npy header", raw("indptr.npy", good_indptr[:20]))
    case("bad-magic", "indices.npy: not an .npy file (bad magic)", raw("indices.npy", b"NOTNPY" + b"\0" * 100))
    corrupt = bytearray(good_indptr)
    hdr_start = 10
    corrupt[hdr_start:hdr_start + 10] = b"{'descr': "[:10]
    corrupt[hdr_start + 10:hdr_start + 30] = b"@@garbage@@garbage@@"
    case("corrupt-header", "indptr.npy: corrupt .npy header", raw("indptr.npy", bytes(corrupt)))
    case("truncated-data", "features.npy: truncated", raw("features.npy", npy_bytes(base()[0]["features.npy"])[:-8]))
    case("wrong-dtype-indices", "indices.npy: dtype int64 but the format needs int32",
         replace("indices.npy", base()[0]["indices.npy"].astype(np.int64)))
    case("wrong-dtype-features", "features.npy: dtype float64 but the format needs float32",
         replace("features.npy", base()[0]["features.npy"].astype(np.float64)))
    case("wrong-shape-features", "features.npy: rank 1 (shape (15,)) but 2 expected",
         replace("features.npy", np.zeros(15, dtype=np.float32)))
    case("wrong-dtype-mask", "train_mask.npy: dtype uint8 but the format needs bool",
         replace("train_mask.npy", np.array([1, 1, 0, 0, 0], dtype=np.uint8)))
    case("negative-index", "indices.npy: vertex id -1 out of range [0, 5)",
         replace("indices.npy", np.array([1, 2, -1, 0, 3, 4, 2], dtype=np.int32)))
    case("out-of-range-index", "indices.npy: vertex id 5 out of range [0, 5)",
         replace("indices.npy", np.array([1, 2, 0, 0, 3, 5, 2], dtype=np.int32)))
    case("unsorted-sources", "indices.npy: sources not ascending within a destination",
         replace("indices.npy", np.array([2, 1, 0, 0, 3, 4, 2], dtype=np.int32)))
    case("non-monotone-indptr", "indptr.npy: not monotone",
         replace("indptr.npy", np.array([0, 2, 3, 2, 6, 7], dtype=np.int64)))
    case("indptr-wraps", "indptr.npy: not monotone (indptr[2] < indptr[1])",
         replace("indptr.npy", np.array([0, 2 ** 63 - 1, -2, 7, 7, 7], dtype=np.int64)))
    case("indptr-first-nonzero", "indptr.npy: indptr[0] is 1, not 0",
         replace("indptr.npy", np.array([1, 2, 3, 3, 6, 7], dtype=np.int64)))
    case("indptr-last-not-E", "indptr.npy: indptr[-1] = 6 but indices.npy has 7 edges",
         replace("indptr.npy", np.array([0, 2, 3, 3, 6, 6], dtype=np.int64)))
    case("mask-length", "val_mask.npy: length 4 but the number of vertices (indptr.npy) is 5",
         replace("val_mask.npy", np.zeros(4, dtype=bool)))
    case("label-length", "labels.npy: length 6 but the number of vertices (indptr.npy) is 5",
         replace("labels.npy", np.zeros(6, dtype=np.int64)))
    case("label-too-large", "labels.npy: label 2 outside [-1, num_classes=2)",
         replace("labels.npy", np.array([0, 1, 2, 1, 0], dtype=np.int64)))
    case("label-below-minus-one", "labels.npy: label -2 outside [-1, num_classes=2)",
         replace("labels.npy", np.array([0, 1, -2, 1, 0], dtype=np.int64)))
    nan = base()[0]["features.npy"].copy()
    nan[3, 1] = np.nan
    case("nan-features", "features.npy: NaN or Inf (row 3)", replace("features.npy", nan))
    inf = base()[0]["features.npy"].copy()
    inf[1, 2] = np.inf
    case("inf-features", "features.npy: NaN or Inf (row 1)", replace("features.npy", inf))
    case("missing-labels", "labels.npy: missing file", lambda f, m, r: drop(f, m, r, "labels.npy"))
    case("missing-test-mask", "test_mask.npy: missing file", lambda f, m, r: drop(f, m, r, "test_mask.npy"))
    case("missing-edge-data", "edge_weight.npy: missing file (listed in meta.json edge_data)",
         lambda f, m, r: drop(f, m, r, "edge_weight.npy"))
    case("missing-meta", "meta.json: missing file", lambda f, m, r: None)
    case("meta-bad-json", "meta.json: not valid JSON",
         lambda f, m, r: (r.__setitem__("meta.json", b"{\"format_version\": 1,"), None)[1])
    case("meta-num-vertices", "meta.json: num_vertices is 6 but the arrays have 5",
         lambda f, m, r: {**m, "num_vertices": 6})
    case("meta-num-edges", "meta.json: num_edges is 9 but the arrays have 7",
         lambda f, m, r: {**m, "num_edges": 9})
    case("meta-num-features", "meta.json: num_features is 4 but the arrays have 3",
         lambda f, m, r: {**m, "num_features": 4})
    case("meta-missing-key", "meta.json: missing key 'num_classes'",
         lambda f, m, r: {k: v for k, v in m.items() if k != "num_classes"})
    case("meta-version", "meta.json: format_version 2",
         lambda f, m, r: {**m, "format_version": 2})
    case("edge-data-length", "edge_weight.npy: length 6 but the number of edges (indices.npy) is 7",
         replace("edge_weight.npy", np.ones(6, dtype=np.float32)))
    case("edge-data-dtype", "edge_weight.npy: dtype float64 but float32 or int32 expected",
         replace("edge_weight.npy", np.ones(7, dtype=np.float64)))
    case("edge-data-nan", "edge_weight.npy: NaN or Inf",
         replace("edge_weight.npy", np.array([1, 1, np.nan, 1, 1, 1, 1], dtype=np.float32)))
    case("edge-data-rank", "edge_weight.npy: rank 3 (shape (7, 1, 1)) but [E] or [E, k] expected",
         replace("edge_weight.npy", np.ones((7, 1, 1), dtype=np.float32)))
    case("edge-type-rank", "edge_type.npy: rank 2 (shape (7, 1)) but 1 expected",
         replace("edge_type.npy", np.zeros((7, 1), dtype=np.int32)))

    # The .npy header is read with one strict grammar by both validators
    # (Npy.cpp's HeaderParser, format.py's _HeaderParser).
    feats = base()[0]["features.npy"]
    labels = base()[0]["labels.npy"]
    indptr = base()[0]["indptr.npy"]

    def header(name, arr, text, **kw):
        return raw(name, npy_with_header(arr, text, **kw))

    case("npy-fortran-order", "features.npy: Fortran-ordered arrays are not supported",
         raw("features.npy", npy_bytes(np.asfortranarray(feats))))
    case("npy-truncated-after-magic", "indptr.npy: truncated .npy header",
         raw("indptr.npy", good_indptr[:8]))
    case("npy-version-1.1", "labels.npy: unsupported .npy version 1.1",
         header("labels.npy", labels,
                "{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }", minor=1))
    case("npy-version-4", "labels.npy: unsupported .npy version 4.0",
         header("labels.npy", labels,
                "{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }", major=4))
    case("npy-header-length", "features.npy: corrupt .npy header (4294967280 bytes long)",
         header("features.npy", feats,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 3), }", major=2,
                length=0xFFFFFFF0))
    case("npy-trailing-text", "features.npy: corrupt .npy header",
         header("features.npy", feats,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 3), } x"))
    case("npy-missing-comma", "features.npy: corrupt .npy header",
         header("features.npy", feats,
                "{'descr': '<f4' 'fortran_order': False, 'shape': (5, 3), }"))
    case("npy-unknown-key", "features.npy: corrupt .npy header (unknown key 'extra')",
         header("features.npy", feats,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 3), 'extra': 1}"))
    case("npy-duplicate-key", "features.npy: corrupt .npy header (duplicate key 'descr')",
         header("features.npy", feats,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 3), 'descr': '<f4'}"))
    case("npy-missing-key", "features.npy: corrupt .npy header (missing key 'fortran_order')",
         header("features.npy", feats, "{'descr': '<f4', 'shape': (5, 3), }"))
    case("npy-descr-escape", "features.npy: corrupt .npy header (descr)",
         header("features.npy", feats,
                "{'descr': '\\x3cf4', 'fortran_order': False, 'shape': (5, 3), }"))
    case("npy-fortran-not-bool", "features.npy: corrupt .npy header (fortran_order)",
         header("features.npy", feats,
                "{'descr': '<f4', 'fortran_order': 0, 'shape': (5, 3), }"))
    case("npy-shape-not-tuple", "labels.npy: corrupt .npy header (shape)",
         header("labels.npy", labels, "{'descr': '<i8', 'fortran_order': False, 'shape': (5), }"))
    case("npy-shape-no-comma", "features.npy: corrupt .npy header (shape)",
         header("features.npy", feats,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (5 3), }"))
    case("npy-shape-leading-zero", "labels.npy: corrupt .npy header (shape)",
         header("labels.npy", labels,
                "{'descr': '<i8', 'fortran_order': False, 'shape': (05,), }"))
    case("npy-shape-9-dims", "features.npy: corrupt .npy header (shape)",
         header("features.npy", feats, "{'descr': '<f4', 'fortran_order': False, "
                "'shape': (5, 3, 1, 1, 1, 1, 1, 1, 1), }"))
    case("npy-shape-too-large", "indptr.npy: corrupt .npy header (shape too large)",
         header("indptr.npy", indptr,
                "{'descr': '<i8', 'fortran_order': False, 'shape': (999999999999999999,), }"))
    case("npy-shape-too-large-empty", "features.npy: corrupt .npy header (shape too large)",
         header("features.npy", np.zeros(0, np.float32), "{'descr': '<f4', "
                "'fortran_order': False, 'shape': (0, 1099511627776, 1099511627776), }"))

    # meta.json is read as strictly as Python's json.loads (RFC 8259, UTF-8)
    # by both, at most 64 arrays and objects deep, without duplicate keys.
    def meta_text(edit):
        def mut(f, m, r):
            r["meta.json"] = edit(json.dumps(m, indent=2).encode())
            return None
        return mut

    def extra(value):
        return meta_text(lambda t: t[:-1].rstrip() + b',\n  "extra": ' + value + b"\n}\n")

    case("meta-nesting-deep",
         "meta.json: not valid JSON (more than 64 nested arrays and objects at offset",
         extra(b"[" * 5000 + b"]" * 5000))
    case("meta-nesting-65",
         "meta.json: not valid JSON (more than 64 nested arrays and objects at offset",
         extra(b"[" * 64 + b"]" * 64))
    case("meta-duplicate-key", "meta.json: not valid JSON (duplicate key 'num_vertices'",
         extra(b'0,\n  "num_vertices": 5'))
    case("meta-nan", "meta.json: not valid JSON",
         meta_text(lambda t: t.replace(b'"tiny"', b"NaN")))
    case("meta-leading-zero", "meta.json: not valid JSON",
         meta_text(lambda t: t.replace(b'"num_classes": 2', b'"num_classes": 02')))
    case("meta-control-character", "meta.json: not valid JSON",
         meta_text(lambda t: t.replace(b'"tiny"', b'"ti\tny"')))
    case("meta-bad-escape", "meta.json: not valid JSON",
         meta_text(lambda t: t.replace(b'"tiny"', b'"ti\\qny"')))
    case("meta-invalid-utf8", "meta.json: not valid JSON (invalid UTF-8 at offset 38)",
         meta_text(lambda t: t.replace(b'"tiny"', b'"ti\xffny"')))
    case("meta-huge-integer", "meta.json: 'num_classes' must be a non-negative integer",
         lambda f, m, r: {**m, "num_classes": 10 ** 30})

    # Every meta.json field has its type (and the loader reads it as the
    # validator does).
    def meta_with(**fields):
        return lambda f, m, r: {**m, **fields}

    case("meta-version-true", "meta.json: format_version true (this reader knows 1)",
         meta_with(format_version=True))
    case("meta-version-float", "meta.json: format_version 1.000000 (this reader knows 1)",
         meta_with(format_version=1.0))
    case("meta-negative-count", "meta.json: 'num_edges' must be a non-negative integer",
         meta_with(num_edges=-1))
    case("meta-no-classes", "meta.json: 'num_classes' must be at least 1",
         meta_with(num_classes=0))
    case("meta-too-many-classes", "meta.json: 'num_classes' is 4611686018427387904, more than "
         "16777216 (the most elements a row of logits may have)", meta_with(num_classes=2 ** 62))
    case("meta-too-many-vertices", "meta.json: 'num_vertices' is 2147483648, more than "
         "2147483647 (vertex ids are int32)", meta_with(num_vertices=2 ** 31))
    case("meta-too-many-edges", "meta.json: 'num_edges' is 4611686018427387904, more than "
         "2147483647 (edge ids are int32)", meta_with(num_edges=2 ** 62))
    case("meta-too-many-features", "meta.json: 'num_features' is 16777217, more than "
         "16777216 (the most elements a row of features may have)",
         meta_with(num_features=2 ** 24 + 1))
    case("meta-name-type", "meta.json: 'name' must be a string", meta_with(name=5))
    case("meta-source-type", "meta.json: 'source' must be a string", meta_with(source=None))
    case("meta-directed-type", "meta.json: 'directed' must be true or false",
         meta_with(directed="false"))
    case("meta-self-loops-type", "meta.json: 'self_loops' must be true or false",
         meta_with(self_loops=1))
    case("meta-edge-data-path",
         "meta.json: 'edge_data' item 1 is not a name of letters, digits and '_'",
         meta_with(edge_data=["type", "weight/../../weight"]))
    case("meta-edge-data-empty",
         "meta.json: 'edge_data' item 0 is not a name of letters, digits and '_'",
         meta_with(edge_data=["", "type", "weight"]))
    case("meta-edge-data-twice", "meta.json: 'edge_data' lists 'type' twice",
         meta_with(edge_data=["type", "weight", "type"]))
    print("corpus written to", HERE)


if __name__ == "__main__":
    main()
