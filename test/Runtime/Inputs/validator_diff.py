#!/usr/bin/env python3
"""Differential check of the two dataset validators.

Mutates the good datasets of the shared corpus with a fixed list of mutations
(every .npy header field, the data after it, every meta.json field, JSON
syntax, file kinds) and checks that the C++ loader (LOADER, a gnnrt-validate
binary) and the Python validator (gnnc.data.validate) accept and reject the
same mutants, and that when both reject they say the same: the same one-line
message, but for JSON syntax errors, which each JSON parser words its way
('meta.json: not valid JSON (...)'). The Python validator must raise nothing
but DatasetError; the loader must exit 0 or 1 (one line) within 20 s.

Usage: validator_diff.py LOADER CORPUS_DIR [--every N] [-v]
(--every N: only every Nth mutant, for a slow LOADER such as the ASan build;
-v: print every mutant's answers.)
"""

import argparse
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

from gnnc.data import DatasetError, validate

MAGIC = b"\x93NUMPY"
NPY_FILES = ("indptr.npy", "indices.npy", "features.npy", "labels.npy",
             "train_mask.npy", "val_mask.npy", "test_mask.npy", "edge_weight.npy",
             "edge_type.npy")
META_KEYS = ("format_version", "name", "num_vertices", "num_edges", "num_features",
             "num_classes", "directed", "self_loops", "source", "edge_data")


# --- .npy bytes ----------------------------------------------------------------

def split_npy(blob):
    """(header text, data bytes) of a version 1.0 file written by numpy."""
    assert blob[:6] == MAGIC and blob[6] == 1
    (hlen,) = struct.unpack("<H", blob[8:10])
    return blob[10:10 + hlen].decode("latin1"), blob[10 + hlen:]


def make_npy(text, data, major=1, minor=0, pad=True):
    """An .npy file with header text `text` (padded like numpy's, to a
    multiple of 64 bytes ending in a newline, when `pad`)."""
    raw = text.encode("latin1")
    prefix = 10 if major == 1 else 12
    if pad:
        raw = raw.rstrip(b" \n")
        raw += b" " * ((64 - (prefix + len(raw) + 1) % 64) % 64) + b"\n"
    if major == 1:
        length = struct.pack("<H", len(raw))
    else:
        length = struct.pack("<I", len(raw))
    return MAGIC + bytes([major, minor]) + length + raw + data


def header_of(descr, fortran, shape):
    return ("{'descr': %s, 'fortran_order': %s, 'shape': %s, }"
            % (descr, fortran, shape))


def parse_header(text):
    """The three fields of a header numpy wrote, as their source text."""
    m = re.fullmatch(r"\{'descr': ('[^']*'), 'fortran_order': (\w+), "
                     r"'shape': (\([^)]*\)), \}\s*", text)
    assert m, text
    return m.group(1), m.group(2), m.group(3)


def npy_mutations(blob):
    """(label, new bytes) for one .npy file."""
    text, data = split_npy(blob)
    descr, fortran, shape = parse_header(text)
    dims = [int(d) for d in shape.strip("()").split(",") if d.strip()]
    n = dims[0]
    out = []

    def hdr(label, d=descr, f=fortran, s=shape, body=None, raw=None):
        t = raw if raw is not None else header_of(d, f, s)
        out.append((label, make_npy(t, data if body is None else body)))

    # descr
    for d in ("'<f4'", "'<f8'", "'<i4'", "'<i8'", "'|b1'", "'|u1'", "'<i2'", "'>f4'",
              "'<u4'", "'|i1'", "'<f2'", "'<c8'", "'O'", "''", "\"<f4\"", "'<f4 '",
              "[('a', '<f4')]", "None", "'\\x3cf4'"):
        hdr(f"descr={d}", d=d)
    # fortran_order
    for f in ("True", "False", "1", "0", "'False'", "None", "true", "Falsey"):
        hdr(f"fortran_order={f}", f=f)
    # shape
    rest = ", ".join(str(d) for d in dims[1:])
    shapes = ["()", f"({n},)", f"({n})", f"({n}, 1)", f"(1, {n})", f"({n + 1},)",
              f"({max(n - 1, 0)},)", "(0,)", "(-1,)", f"({2 ** 62},)", f"({2 ** 63},)",
              f"({10 ** 19},)", f"({2 ** 31}, {2 ** 31}, 0)", f"(0, {2 ** 40}, {2 ** 40})",
              f"({n} 1)", f"({n},,)", f"[{n}]", f"(({n},),)", "(True,)", f"({n}L,)",
              f"(0{n},)", f"( {n} , )", "(1, 1, 1, 1, 1, 1, 1, 1)",
              "(1, 1, 1, 1, 1, 1, 1, 1, 1)", "(1, 1, 1, 1, 1, 1, 1, 1, 1, 1)",
              f"(+{n},)", f"({n}.0,)", f"(0x{n},)"]
    if rest:
        shapes += [f"({n}, {rest})", f"({n}, {rest},)", f"({n},{rest})",
                   f"({n}, {rest}, 1)", f"({n * dims[1]},)"]
    for s in shapes:
        hdr(f"shape={s}", s=s)
    # keys and syntax
    body = "'descr': %s, 'fortran_order': %s, 'shape': %s" % (descr, fortran, shape)
    for label, raw in (
            ("no-descr", "{'fortran_order': %s, 'shape': %s}" % (fortran, shape)),
            ("no-order", "{'descr': %s, 'shape': %s}" % (descr, shape)),
            ("no-shape", "{'descr': %s, 'fortran_order': %s}" % (descr, fortran)),
            ("extra-key", "{%s, 'extra': 1}" % body),
            ("dup-key", "{%s, 'descr': %s}" % (body, descr)),
            ("reordered", "{'shape': %s, 'descr': %s, 'fortran_order': %s}"
             % (shape, descr, fortran)),
            ("no-trailing-comma", "{%s}" % body),
            ("double-comma", "{%s,, }" % body),
            ("leading-comma", "{, %s}" % body),
            ("missing-comma", "{'descr': %s 'fortran_order': %s, 'shape': %s}"
             % (descr, fortran, shape)),
            ("double-quotes", "{%s}" % body.replace("'", '"')),
            ("no-spaces", "{%s}" % body.replace(": ", ":").replace(", ", ",")),
            ("leading-space", " {%s}" % body),
            ("leading-newline", "\n{%s}" % body),
            ("trailing-garbage", "{%s} x" % body),
            ("trailing-dict", "{%s}{}" % body),
            ("comment", "{%s} # c" % body),
            ("tab", "{%s}\t" % body.replace(": ", ":\t")),
            ("cr", "{%s}\r" % body),
            ("unclosed", "{%s" % body),
            ("not-a-dict", "[%s]" % body),
            ("empty", ""),
            ("key-unquoted", "{descr: %s, 'fortran_order': %s, 'shape': %s}"
             % (descr, fortran, shape)),
            ("nul", "{%s}\0" % body),
            ("latin1", "{%s}\xe9" % body),
    ):
        hdr(f"header:{label}", raw=raw)
    out.append(("unpadded", make_npy(header_of(descr, fortran, shape), data, pad=False)))
    # version, magic, lengths
    full = make_npy(header_of(descr, fortran, shape), data)
    out.append(("version-2.0", make_npy(header_of(descr, fortran, shape), data, major=2)))
    out.append(("version-3.0", make_npy(header_of(descr, fortran, shape), data, major=3)))
    out.append(("version-4.0", make_npy(header_of(descr, fortran, shape), data, major=4)))
    out.append(("version-1.1", make_npy(header_of(descr, fortran, shape), data, minor=1)))
    out.append(("version-0.0", make_npy(header_of(descr, fortran, shape), data, major=0)))
    out.append(("bad-magic", b"\x93NUMPZ" + full[6:]))
    out.append(("lower-magic", b"\x93numpy" + full[6:]))
    for cut in (0, 1, 5, 6, 8, 9, 10, 11, 12, 40):
        out.append((f"cut-{cut}", full[:cut]))
    out.append(("v2-cut-11", make_npy(header_of(descr, fortran, shape), data, major=2)[:11]))
    hlen_at = len(full) - len(data)
    for delta in (1, 2, 1000, 65535 - (hlen_at - 10)):
        blob = bytearray(full)
        struct.pack_into("<H", blob, 8, hlen_at - 10 + delta)
        out.append((f"hlen+{delta}", bytes(blob)))
    blob = bytearray(full)
    struct.pack_into("<H", blob, 8, hlen_at - 10 - 1)
    out.append(("hlen-1", bytes(blob)))
    for label, spaces in (("v2-header-1MiB", 1 << 20), ("v2-header-20kB", 20000)):
        padded = header_of(descr, fortran, shape).replace("{", "{" + " " * spaces, 1)
        out.append((label, make_npy(padded, data, major=2)))
    blob = bytearray(make_npy(header_of(descr, fortran, shape), data, major=2))
    struct.pack_into("<I", blob, 8, 0xFFFFFFF0)
    out.append(("v2-hlen-4GiB", bytes(blob)))
    # data
    if data:
        out.append(("data-1", full[:-1]))
        out.append(("data-half", full[:len(full) - len(data) // 2]))
    out.append(("data+1", full + b"\0"))
    out.append(("data+100", full + b"\x7f" * 100))
    out.append(("no-data", full[:len(full) - len(data)]))
    return out


def value_mutations(name, blob):
    """(label, new bytes): the same header, other values."""
    arr = np.load(io.BytesIO(blob))
    out = []

    def put(label, a):
        buf = io.BytesIO()
        np.save(buf, np.ascontiguousarray(a, dtype=arr.dtype))
        out.append((label, buf.getvalue()))

    n = arr.shape[0]
    if name == "indptr.npy":
        E = int(arr[-1])
        big = np.iinfo(np.int64)
        if n >= 4:
            # Differences that wrap around in int64 arithmetic.
            put("wrap", [0, big.max, -2] + [E] * (n - 3))
            put("wrap-min", [0, big.max, big.min] + [E] * (n - 3))
        if n >= 3:
            put("overshoot", [0, E + 100] + [E] * (n - 2))
            put("negative", [0, -1] + [E] * (n - 2))
            put("max", [0, big.max] + [E] * (n - 2))
        put("last-max", list(arr[:-1]) + [big.max])
        put("last-min", list(arr[:-1]) + [big.min])
        put("first-min", [big.min] + list(arr[1:]))
    elif name in ("indices.npy", "edge_type.npy") and n:
        i32 = np.iinfo(np.int32)
        for label, v in (("min", i32.min), ("max", i32.max), ("minus-one", -1)):
            a = arr.copy()
            a[0] = v
            put(label, a)
    elif name == "labels.npy":
        i64 = np.iinfo(np.int64)
        for label, v in (("min", i64.min), ("max", i64.max), ("minus-two", -2),
                         ("all-minus-one", None), ("classes", 2), ("classes-1", 1)):
            a = arr.copy()
            if v is None:
                a[:] = -1
            else:
                a[-1] = v
            put(label, a)
    elif name.endswith("_mask.npy"):
        a = arr.view(np.uint8).copy()
        a[0] = 2
        out.append(("byte-2", blob[:len(blob) - a.size] + a.tobytes()))
        a[0] = 255
        out.append(("byte-255", blob[:len(blob) - a.size] + a.tobytes()))
    elif arr.dtype == np.float32 and arr.size:
        for label, v in (("nan", np.nan), ("inf", np.inf), ("-inf", -np.inf),
                         ("neg-zero", -0.0), ("denormal", 1e-45), ("max", 3.4e38)):
            a = arr.copy()
            a.flat[-1] = v
            put(label, a)
        a = arr.copy().view(np.uint32)
        a.flat[0] = 0x7FC00001  # a NaN with a payload
        put("nan-payload", a.view(np.float32))
    return out


# --- meta.json -----------------------------------------------------------------

VALUES = {
    "null": None, "true": True, "false": False, "zero": 0, "one": 1, "two": 2,
    "minus-one": -1, "float-one": 1.0, "float-five": 5.0, "1e3": 1e3,
    "2^31": 2 ** 31, "2^53+1": 2 ** 53 + 1, "2^62": 2 ** 62, "2^63-1": 2 ** 63 - 1,
    "2^63": 2 ** 63, "2^64": 2 ** 64, "2^64+1": 2 ** 64 + 1, "10^30": 10 ** 30,
    "-2^63": -2 ** 63, "-2^64": -2 ** 64, "string": "x", "string-5": "5",
    "empty-string": "", "list": [], "list-type": ["type"], "dict": {},
}


def meta_mutations(meta, text):
    """(label, meta.json bytes)."""
    out = []

    def dump(m):
        return json.dumps(m, indent=2).encode()

    for key in META_KEYS:
        out.append((f"drop-{key}", dump({k: v for k, v in meta.items() if k != key})))
        for label, value in VALUES.items():
            out.append((f"{key}={label}", dump({**meta, key: value})))
    for key in ("num_vertices", "num_edges", "num_features"):
        out.append((f"{key}+1", dump({**meta, key: meta[key] + 1})))
    if meta["edge_data"]:
        names = meta["edge_data"]
        for label, value in (
                ("dup", names + names[:1]), ("one", names[:1]),
                ("extra", names + ["nope"]), ("int", names + [1]),
                ("empty-name", names + [""]), ("slash", names + ["a/b"]),
                ("dotdot", ["../x"]),
                ("traverse", ["weight/../../tiny/edge_weight"]),
                ("long", names + ["w" * 300]), ("unicode", names + ["w\u00e9ight"]),
                ("nul", names + ["weight\u0000"]), ("dash", names + ["a-b"]),
                ("space", names + ["a b"]), ("upper", ["TYPE"]), ("vertex-file", ["weight", "type"]),
                ("null-item", names + [None]), ("nested", [names])):
            out.append((f"edge_data:{label}", dump({**meta, "edge_data": value})))
    body = text.decode().strip()
    assert body.startswith("{") and body.endswith("}")
    inner = body[1:-1].strip()

    def raw(label, s):
        out.append((label, s if isinstance(s, bytes) else s.encode("utf-8", "surrogatepass")))

    raw("extra-key", "{%s, \"extra\": 1}" % inner)
    raw("dup-key-same", "{%s, \"num_classes\": %d}" % (inner, meta["num_classes"]))
    raw("dup-key-other", "{%s, \"num_vertices\": %d}" % (inner, meta["num_vertices"] + 1))
    raw("dup-key-first", "{\"num_vertices\": %d, %s}" % (meta["num_vertices"] + 1, inner))
    for depth in (1, 62, 63, 64, 65, 66, 200, 1000, 5000, 100000):
        raw(f"nest-list-{depth}", "{%s, \"extra\": %s1%s}" % (inner, "[" * depth, "]" * depth))
        raw(f"nest-empty-{depth}", "{%s, \"extra\": %s%s}" % (inner, "[" * depth, "]" * depth))
    for depth in (63, 64, 65, 3000):
        raw(f"nest-dict-{depth}", "{%s, \"extra\": %s1%s}"
            % (inner, "{\"a\": " * depth, "}" * depth))
        raw(f"nest-source-{depth}", "{%s, \"source\": %s\"s\"%s}"
            % (inner.replace("\"source\"", "\"old_source\""), "[" * depth, "]" * depth))
    raw("nest-unclosed-100000", "{%s, \"extra\": %s" % (inner, "[" * 100000))
    raw("top-array", "[%s]" % body)
    raw("top-string", "\"x\"")
    raw("top-number", "1")
    raw("top-null", "null")
    raw("empty", "")
    raw("whitespace", " \n")
    raw("bom", b"\xef\xbb\xbf" + body.encode())
    raw("utf16", body.encode("utf-16"))
    raw("trailing-comma", "{%s,}" % inner)
    raw("trailing-garbage", body + " x")
    raw("trailing-second", body + " {}")
    raw("trailing-nul", body + "\0")
    raw("comment", "// c\n" + body)
    raw("single-quotes", body.replace("\"name\"", "'name'"))
    raw("unquoted-key", body.replace("\"name\"", "name"))
    for label, lit in (("nan", "NaN"), ("inf", "Infinity"), ("-inf", "-Infinity"),
                       ("lead-zero", "05"), ("plus", "+5"), ("dot-lead", ".5"),
                       ("dot-trail", "5."), ("exp", "5e0"), ("neg-zero", "-0"),
                       ("minus", "-"), ("hex", "0x5"), ("1e400", "1e400"),
                       ("big-int", "1" + "0" * 400), ("1-2", "1-2"), ("5e", "5e"),
                       ("TRUE", "TRUE"), ("nul-word", "nul"), ("undefined", "undefined")):
        raw(f"name-literal:{label}", body.replace("\"tiny\"", lit))
        raw(f"num_classes-literal:{label}",
            body.replace("\"num_classes\": %d" % meta["num_classes"], "\"num_classes\": " + lit))
    for label, s in (("ctrl-newline", "\"ti\nny\""), ("ctrl-tab", "\"ti\tny\""),
                     ("ctrl-nul", "\"ti\0ny\""), ("ctrl-del", "\"ti\x7fny\""),
                     ("esc-q", "\"ti\\qny\""), ("esc-slash", "\"ti\\/ny\""),
                     ("esc-u-bad", "\"ti\\uZZZZny\""), ("esc-u-short", "\"ti\\u12\""),
                     ("esc-u-upper", "\"ti\\u00E9ny\""),
                     ("esc-surrogate-pair", "\"ti\\ud83d\\ude00ny\""),
                     ("esc-lone-surrogate", "\"ti\\ud83dny\""),
                     ("esc-low-surrogate", "\"ti\\ude00ny\""),
                     ("esc-nul", "\"ti\\u0000ny\""), ("esc-x", "\"ti\\x41ny\""),
                     ("esc-end", "\"tiny\\\""), ("unterminated", "\"tiny"),
                     ("utf8", "\"t\u00efny\""), ("emoji", "\"t\U0001F600ny\"")):
        raw(f"name-string:{label}", body.replace("\"tiny\"", s))
    for label, b in (("invalid-utf8", b"\"t\xffny\""), ("latin1", b"\"t\xe9ny\""),
                     ("overlong", b"\"t\xc0\xafny\""), ("utf8-surrogate", b"\"t\xed\xa0\x80ny\""),
                     ("above-10ffff", b"\"t\xf4\x90\x80\x80ny\""),
                     ("truncated-utf8", b"\"t\xe2\x82ny\""), ("f5", b"\"t\xf5\x80\x80\x80ny\"")):
        raw(f"name-bytes:{label}", body.encode().replace(b"\"tiny\"", b))
    raw("invalid-utf8-outside", body.encode() + b" \xff")
    return out


# --- file kinds ------------------------------------------------------------------

def kind_mutations(case, name):
    """(label, function(dir)) replacing file `name` by something else."""
    def make_dir(d):
        os.remove(os.path.join(d, name))
        os.mkdir(os.path.join(d, name))

    def dir_with_file(d):
        os.remove(os.path.join(d, name))
        os.mkdir(os.path.join(d, name))
        shutil.copy(os.path.join(case, name), os.path.join(d, name, name))

    def symlink(d):
        os.remove(os.path.join(d, name))
        os.symlink(os.path.join(case, name), os.path.join(d, name))

    def symlink_rel(d):
        os.rename(os.path.join(d, name), os.path.join(d, "real-" + name))
        os.symlink("real-" + name, os.path.join(d, name))

    def broken_symlink(d):
        os.remove(os.path.join(d, name))
        os.symlink("does-not-exist", os.path.join(d, name))

    def symlink_loop(d):
        os.remove(os.path.join(d, name))
        os.symlink(name, os.path.join(d, name))

    def symlink_dir(d):
        os.remove(os.path.join(d, name))
        os.symlink(d, os.path.join(d, name))

    def dev_null(d):
        os.remove(os.path.join(d, name))
        os.symlink("/dev/null", os.path.join(d, name))

    def empty(d):
        open(os.path.join(d, name), "wb").close()

    def missing(d):
        os.remove(os.path.join(d, name))

    return [("dir", make_dir), ("dir-with-file", dir_with_file), ("symlink", symlink),
            ("symlink-relative", symlink_rel), ("broken-symlink", broken_symlink),
            ("symlink-loop", symlink_loop), ("symlink-to-dir", symlink_dir),
            ("dev-null", dev_null), ("empty", empty), ("missing", missing)]


# --- running ---------------------------------------------------------------------

def run_cpp(loader, d):
    try:
        p = subprocess.run([loader, d], capture_output=True, text=True,
                           errors="replace", timeout=20)
    except subprocess.TimeoutExpired:
        return "hang", "timed out after 20 s"
    lines = p.stderr.strip().splitlines()
    if p.returncode == 0:
        return "accept", ""
    if p.returncode != 1 or len(lines) != 1 or not lines[0].startswith("error: "):
        return "crash", f"exit {p.returncode}: {p.stderr.strip()[-300:]!r}"
    return "reject", lines[0][len("error: "):]


def run_py(d):
    try:
        validate(d)
        return "accept", ""
    except DatasetError as e:
        message = str(e)
        if "\n" in message:
            return "crash", f"multi-line DatasetError {message!r}"
        return "reject", message
    except BaseException as e:  # noqa: BLE001 - anything else is a bug
        if isinstance(e, KeyboardInterrupt):
            raise
        return "crash", f"{type(e).__name__}: {str(e)[:200]}"


JSON_SYNTAX = "meta.json: not valid JSON ("


def same_message(cpp, py):
    """The messages are the same; JSON syntax errors are worded by each
    parser, so only their start is compared."""
    return cpp == py or (cpp.startswith(JSON_SYNTAX) and py.startswith(JSON_SYNTAX))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("loader")
    parser.add_argument("corpus")
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    loader, corpus, verbose = args.loader, args.corpus, args.verbose
    cases = [os.path.abspath(os.path.join(corpus, "good", c)) for c in ("tiny", "no-edges")]
    total = agree_accept = agree_reject = 0
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            files = {f: open(os.path.join(case, f), "rb").read() for f in os.listdir(case)}
            mutants = []
            for f in NPY_FILES:
                if f in files:
                    mutants += [(f"{f}:{label}", {f: blob}, None)
                                for label, blob in npy_mutations(files[f])]
                    mutants += [(f"{f}:value-{label}", {f: blob}, None)
                                for label, blob in value_mutations(f, files[f])]
            meta = json.loads(files["meta.json"])
            mutants += [(f"meta.json:{label}", {"meta.json": blob}, None)
                        for label, blob in meta_mutations(meta, files["meta.json"])]
            for f in sorted(files):
                mutants += [(f"{f}:{label}", {}, fn) for label, fn in kind_mutations(case, f)]
            for label, changed, fn in mutants[::args.every]:
                d = os.path.join(tmp, f"m{total}")
                os.mkdir(d)
                for f, blob in files.items():
                    with open(os.path.join(d, f), "wb") as out:
                        out.write(changed.get(f, blob))
                if fn:
                    fn(d)
                total += 1
                c, cm = run_cpp(loader, d)
                p, pm = run_py(d)
                name = f"{os.path.basename(case)}/{label}"
                if verbose:
                    print(f"{name}: C++ {c} {cm!r} | Python {p} {pm!r}")
                if c != p or c not in ("accept", "reject") or not same_message(cm, pm):
                    failures.append(f"DIFF {name}: C++ {c} {cm!r} | Python {p} {pm!r}")
                elif c == "accept":
                    agree_accept += 1
                else:
                    agree_reject += 1
                shutil.rmtree(d)
    for f in failures:
        print(f)
    print(f"{total} mutants: {agree_accept} accepted and {agree_reject} rejected by both, "
          f"{len(failures)} disagreements")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
