"""Command line of the dataset tools.

    python -m gnnc.data validate DIR
    python -m gnnc.data info DIR
    python -m gnnc.data convert edgelist FILE -o DIR [--labels L.npy] [--features X.npy]
    python -m gnnc.data convert numpy EDGES.npy -o DIR      (int array [2, E] or [E, 2])
    python -m gnnc.data convert scipy ADJ.npz -o DIR        (scipy.sparse.save_npz)
    python -m gnnc.data convert gt FILE.gt.gz -o DIR [--label PROP] [--features PROP]
    python -m gnnc.data generate rmat --vertices N --draws M -o DIR
    python -m gnnc.data generate sbm --vertices N --blocks K --p-in P --p-out Q -o DIR
    python -m gnnc.data permute DIR -o OUT [--seed S] [--parts P]
                                [--order random|degree|rcm] [--save-permutation FILE]

Common options: --symmetrize, --self-loops, --split TRAIN,VAL,TEST, --seed S,
--name NAME, --standardize (z-score the features).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from .._cli import float_in, int_in
from . import convert, generate
from .format import Dataset, DatasetError, load, save
from .memory import memory_error


# Ranges of the numeric options: counts the loaders accept (classes and
# widths up to 2^24, vertices and edges up to 2^40), seeds NumPy takes.
#: Vertex and edge ids are int32 in the format (format.py's COUNT_LIMITS).
_MAX_COUNT = (1 << 31) - 1
_MAX_WIDTH = 1 << 24
_MAX_SEED = (1 << 63) - 1
def _common(p: argparse.ArgumentParser, graph_options: bool = True) -> None:
    p.add_argument("-o", "--output", required=True, help="dataset directory to write")
    p.add_argument("--name", help="dataset name (meta.json)")
    p.add_argument("--seed", type=int_in(0, _MAX_SEED), default=0,
                   help="seed of the splits (and generators), in [0, 2^63-1]")
    p.add_argument("--split", default="0.6,0.2,0.2",
                   help="train,val,test fractions of the labelled vertices (default 0.6,0.2,0.2)")
    p.add_argument("--standardize", action="store_true",
                   help="z-score every feature column")
    p.add_argument("--source", help="provenance text for meta.json (appended)")
    if graph_options:
        p.add_argument("--symmetrize", action="store_true", help="add every reverse edge")
        p.add_argument("--self-loops", action="store_true", help="add v -> v for every vertex")


def _splits(text: str):
    try:
        parts = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise DatasetError(f"--split: expected three numbers like 0.6,0.2,0.2 but got '{text}'") from None
    if len(parts) != 3 or any(x < 0 for x in parts) or sum(parts) > 1 + 1e-9:
        raise DatasetError(f"--split: three non-negative fractions summing to at most 1 expected, got '{text}'")
    return parts


def _kwargs(args) -> dict:
    kw = {"seed": args.seed, "splits": _splits(args.split)}
    if getattr(args, "symmetrize", False):
        kw["symmetrize"] = True
    if getattr(args, "self_loops", False):
        kw["self_loops"] = True
    if args.name:
        kw["name"] = args.name
    return kw


def _load_array(path: str, what: str) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise DatasetError(f"{os.path.basename(path)}: cannot read {what}: {e}") from None


def _finish(ds: Dataset, args) -> int:
    if args.standardize:
        f = ds.features.astype(np.float64)
        std = f.std(axis=0)
        ds.features = ((f - f.mean(axis=0)) / np.where(std > 0, std, 1.0)).astype(np.float32)
        ds.source += "; features standardised"
    if args.source:
        ds.source += f"; {args.source}"
    save(ds, args.output)
    load(args.output)  # what was written validates
    print(f"{args.output}: {ds.num_vertices} vertices, {ds.num_edges} edges, "
          f"{ds.num_features} features, {ds.num_classes} classes")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gnnc.data",
                                     description="gnnc dataset tools (DESIGN.md's format)")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("validate", help="check a dataset directory; one line per problem")
    p.add_argument("directory")
    p = sub.add_parser("info", help="summarise a dataset directory")
    p.add_argument("directory")

    conv = sub.add_parser("convert", help="convert a graph to a dataset directory")
    csub = conv.add_subparsers(dest="format", required=True)
    p = csub.add_parser("edgelist", help="SNAP-style text edge list")
    p.add_argument("file")
    p.add_argument("--labels", help=".npy int array of labels per vertex (-1 = none)")
    p.add_argument("--features", help=".npy float array [V, F]")
    _common(p)
    p = csub.add_parser("numpy", help=".npy int array of edges, [2, E] or [E, 2]")
    p.add_argument("file")
    p.add_argument("--num-vertices", type=int_in(0, _MAX_COUNT),
                   help="in [0, 2^40]; default: largest id + 1")
    p.add_argument("--labels")
    p.add_argument("--features")
    _common(p)
    p = csub.add_parser("scipy", help="scipy.sparse .npz adjacency (i, j) = edge i -> j")
    p.add_argument("file")
    p.add_argument("--labels")
    p.add_argument("--features")
    _common(p)
    p = csub.add_parser("gt", help="graph-tool .gt / .gt.gz file")
    p.add_argument("file")
    p.add_argument("--label", help="vertex property holding the class")
    p.add_argument("--features", help="vertex property holding features (e.g. pos)")
    p.add_argument("--direction-types", action="store_true",
                   help="add edge_type.npy: 0 original edge, 1 reverse, 2 self-loop")
    _common(p)

    p = sub.add_parser("permute", help="renumber the vertices by a seeded random permutation "
                       "(MG-GCN's balance for row partitioning) or a locality order")
    p.add_argument("directory")
    p.add_argument("-o", "--output", required=True, help="dataset directory to write")
    p.add_argument("--seed", type=int_in(0, _MAX_SEED), default=1,
                   help="seed of the permutation, in [0, 2^63-1] (default 1, MG-GCN's)")
    p.add_argument("--parts", type=int_in(1, 4096), default=8,
                   help="the row parts whose tile balance is reported, in [1, 4096] (default 8)")
    p.add_argument("--order", choices=("random", "degree", "rcm"), default="random",
                   help="random (seeded, the default), degree (descending in-degree) or rcm "
                        "(reverse Cuthill-McKee): the last two for the aggregation's cache "
                        "locality")
    p.add_argument("--save-permutation", metavar="FILE",
                   help="write perm (vertex v's new id, int64 .npy): predictions on OUT map back "
                        "as pred_out[perm]")
    gen = sub.add_parser("generate", help="generate a synthetic dataset")
    gsub = gen.add_subparsers(dest="kind", required=True)
    p = gsub.add_parser("rmat", help="RMAT graph (Graph500 a=.57 b=c=.19)")
    p.add_argument("--vertices", type=int_in(1, _MAX_COUNT), required=True, help="in [1, 2^31-1]")
    p.add_argument("--draws", type=int_in(0, _MAX_COUNT), required=True, help="in [0, 2^31-1]")
    p.add_argument("--features", type=int_in(1, _MAX_WIDTH), default=16, help="in [1, 2^24]")
    p.add_argument("--classes", type=int_in(1, _MAX_WIDTH), default=2, help="in [1, 2^24]")
    p.add_argument("--directed", action="store_true", help="do not symmetrise")
    p.add_argument("--no-self-loops", action="store_true")
    _common(p, graph_options=False)
    p = gsub.add_parser("sbm", help="stochastic block model (labels = blocks)")
    p.add_argument("--vertices", type=int_in(1, _MAX_COUNT), required=True, help="in [1, 2^31-1]")
    p.add_argument("--blocks", type=int_in(1, _MAX_WIDTH), required=True,
                   help="in [1, 2^24], at most --vertices")
    p.add_argument("--p-in", type=float_in(0.0, 1.0), required=True, help="in [0, 1]")
    p.add_argument("--p-out", type=float_in(0.0, 1.0), required=True, help="in [0, 1]")
    p.add_argument("--features", type=int_in(1, _MAX_WIDTH), default=16, help="in [1, 2^24]")
    p.add_argument("--noise", type=float_in(0.0, 1e6), default=1.0, help="in [0, 1e6]")
    p.add_argument("--edge-types", type=int_in(0, _MAX_WIDTH), default=0, help="in [0, 2^24]")
    p.add_argument("--directed", action="store_true")
    p.add_argument("--no-self-loops", action="store_true")
    _common(p, graph_options=False)

    args = parser.parse_args(argv)
    if getattr(args, "kind", None) == "sbm" and args.blocks > args.vertices:
        parser.error(f"argument --blocks: expected at most --vertices ({args.vertices}) "
                     f"but got {args.blocks}")
    try:
        if args.command == "validate":
            ds = load(args.directory)
            print(f"{args.directory}: ok ({ds.num_vertices} vertices, {ds.num_edges} edges)")
            return 0
        if args.command == "info":
            ds = load(args.directory)
            meta = ds.meta()
            for k in meta:
                print(f"{k}: {meta[k]}")
            deg = ds.in_degree()
            print(f"in-degree: mean {deg.mean():.2f}, max {deg.max() if deg.size else 0}")
            for s in ("train", "val", "test"):
                print(f"{s}: {int(ds.masks[s].sum())} vertices")
            return 0
        if args.command == "permute":
            ds = load(args.directory)
            before = convert.tile_balance(ds, args.parts)
            out, perm = convert.permute(ds, args.seed, args.order)
            save(out, args.output)
            load(args.output)  # what was written validates
            if args.save_permutation:
                np.save(args.save_permutation, perm)
            how = f"(seed {args.seed})" if args.order == "random" else f"({args.order} order)"
            mean_gap = lambda d: float(np.abs(d.src() - d.dst()).mean()) if d.num_edges else 0.0  # noqa: E731
            print(f"{args.output}: {out.num_vertices} vertices, {out.num_edges} edges permuted "
                  f"{how}; largest over mean edges of the {args.parts} x "
                  f"{args.parts} tiles: {before:.2f} -> {convert.tile_balance(out, args.parts):.2f}; "
                  f"mean |source - destination|: {mean_gap(ds):.0f} -> {mean_gap(out):.0f}")
            return 0
        if args.command == "convert":
            kw = _kwargs(args)
            if args.format in ("edgelist", "numpy", "scipy"):
                if args.labels:
                    kw["labels"] = _load_array(args.labels, "labels")
                if args.features:
                    kw["features"] = _load_array(args.features, "features")
                kw.setdefault("name", os.path.basename(args.file).split(".")[0])
                kw["source"] = f"{args.format} {os.path.basename(args.file)}"
            if args.format == "edgelist":
                s, d, n = convert.read_edge_list(args.file)
                ds = convert.from_edges(s, d, n, **kw)
            elif args.format == "numpy":
                e = _load_array(args.file, "edges")
                if e.ndim != 2 or 2 not in e.shape or not np.issubdtype(e.dtype, np.integer):
                    raise DatasetError(f"{os.path.basename(args.file)}: expected an integer "
                                       f"array [2, E] or [E, 2] but got {e.dtype} {e.shape}")
                if e.shape[0] != 2:
                    e = e.T
                n = args.num_vertices if args.num_vertices is not None else (int(e.max()) + 1 if e.size else 0)
                ds = convert.from_edges(e[0], e[1], n, **kw)
            elif args.format == "scipy":
                try:
                    import scipy.sparse as sp
                except ImportError:
                    raise DatasetError("convert scipy: SciPy is not installed") from None
                try:
                    adj = sp.load_npz(args.file)
                except (OSError, ValueError) as e:
                    raise DatasetError(f"{os.path.basename(args.file)}: {e}") from None
                ds = convert.from_scipy(adj, **kw)
            else:
                from .gt import from_gt
                ds, g = from_gt(args.file, label=args.label, features=args.features, **kw)
                if args.direction_types:
                    ds.edge_data["type"] = convert.direction_types(ds, g.src, g.dst)
            return _finish(ds, args)
        if args.command == "generate":
            # What the generator holds at once, roughly: the features in
            # float64 and float32, and per edge endpoint arrays and their
            # sorted copies (int64), a rmat graph symmetrised to twice its
            # draws; sbm's edges are drawn per block pair and not known here.
            edges = 2 * args.draws + args.vertices if args.kind == "rmat" else 0
            need = args.vertices * args.features * 12 + edges * 48
            why = memory_error(f"generate {args.kind}: a graph of {args.vertices} vertices",
                               need)
            if why:
                raise DatasetError(why)
            common = dict(seed=args.seed, name=args.name)
            if args.kind == "rmat":
                ds = generate.rmat(args.vertices, args.draws, num_features=args.features,
                                   num_classes=args.classes, symmetrize=not args.directed,
                                   self_loops=not args.no_self_loops, **common)
            else:
                ds = generate.sbm(args.vertices, args.blocks, args.p_in, args.p_out,
                                  num_features=args.features, noise=args.noise,
                                  symmetrize=not args.directed,
                                  self_loops=not args.no_self_loops,
                                  edge_types=args.edge_types, **common)
            ds.masks = convert.random_splits(ds.num_vertices, ds.labels, _splits(args.split), args.seed)
            return _finish(ds, args)
    except DatasetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"error: {args.command}: out of memory", file=sys.stderr)
        return 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
