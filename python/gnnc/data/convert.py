"""Building datasets from edge lists and converting other graph formats.

Every converter ends in `from_edges`, which sorts the edges into the CSC
order of the format (grouped by destination, ascending sources), optionally
symmetrises, adds self-loops and removes duplicates, and draws seeded splits.
"""

from __future__ import annotations

import os
from typing import Dict, Optional, Sequence, Tuple

import numpy as np

from .format import Dataset, DatasetError


def random_splits(num_vertices: int, labels: np.ndarray, fractions=(0.6, 0.2, 0.2),
                  seed: int = 0) -> Dict[str, np.ndarray]:
    """Seeded train/val/test masks over the labelled vertices."""
    if len(fractions) != 3 or any(f < 0 for f in fractions) or sum(fractions) > 1.0 + 1e-9:
        raise ValueError(f"split fractions {fractions} must be three non-negative numbers "
                         f"summing to at most 1")
    labelled = np.nonzero(labels >= 0)[0]
    rng = np.random.default_rng(seed)
    perm = rng.permutation(labelled)
    n = len(perm)
    a = int(round(fractions[0] * n))
    b = a + int(round(fractions[1] * n))
    c = min(n, b + int(round(fractions[2] * n)))
    masks = {}
    for split, (lo, hi) in zip(("train", "val", "test"), ((0, a), (a, b), (b, c))):
        m = np.zeros(num_vertices, dtype=bool)
        m[perm[lo:hi]] = True
        masks[split] = m
    return masks


def from_edges(src, dst, num_vertices: int, *, features=None, labels=None,
               num_classes: Optional[int] = None, name: str = "graph", source: str = "",
               directed: bool = True, symmetrize: bool = False, self_loops: bool = False,
               edge_data: Optional[Dict[str, np.ndarray]] = None,
               splits=(0.6, 0.2, 0.2), seed: int = 0,
               masks: Optional[Dict[str, np.ndarray]] = None) -> Dataset:
    """A dataset from edges src[i] -> dst[i].

    `symmetrize` adds every reverse edge (the result is undirected),
    `self_loops` adds v -> v for every vertex; duplicates are removed (the
    first occurrence's edge data is kept). Without `features`, every vertex
    gets the one feature 1.0; without `labels`, every vertex is unlabelled
    (-1) and `num_classes` is 1.
    """
    src = np.asarray(src, dtype=np.int64).ravel()
    dst = np.asarray(dst, dtype=np.int64).ravel()
    V = int(num_vertices)
    if src.shape != dst.shape:
        raise DatasetError(f"edges: {src.size} sources but {dst.size} destinations")
    if V < 0 or V >= 2**31:
        raise DatasetError(f"edges: number of vertices {V} out of range")
    if src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= V):
        raise DatasetError(f"edges: vertex id out of range [0, {V})")
    data = {k: np.asarray(v) for k, v in (edge_data or {}).items()}
    for k, v in data.items():
        if v.shape[0] != src.size:
            raise DatasetError(f"edge data '{k}': {v.shape[0]} rows for {src.size} edges")
    if symmetrize:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        data = {k: np.concatenate([v, v]) for k, v in data.items()}
        directed = False
    if self_loops:
        loops = np.arange(V, dtype=np.int64)
        # Existing self-loops are duplicates of the new ones and removed below.
        src, dst = np.concatenate([loops, src]), np.concatenate([loops, dst])
        for k, v in data.items():
            fill = np.zeros((V,) + v.shape[1:], dtype=v.dtype)
            if np.issubdtype(v.dtype, np.floating) and v.ndim == 1:
                fill[:] = 1.0
            data[k] = np.concatenate([fill, v])
    key = dst * max(V, 1) + src
    order = np.argsort(key, kind="stable")
    key = key[order]
    keep = np.ones(key.size, dtype=bool)
    keep[1:] = key[1:] != key[:-1]
    order = order[keep]
    src, dst = src[order], dst[order]
    data = {k: v[order] for k, v in data.items()}
    indptr = np.zeros(V + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=V), out=indptr[1:])

    if features is None:
        features = np.ones((V, 1), dtype=np.float32)
    features = np.asarray(features, dtype=np.float32)
    if features.ndim == 1:
        features = features.reshape(V, 1)
    if features.shape[0] != V:
        raise DatasetError(f"features: {features.shape[0]} rows for {V} vertices")
    if labels is None:
        labels = np.full(V, -1, dtype=np.int64)
        num_classes = num_classes or 1
    labels = np.asarray(labels, dtype=np.int64)
    if num_classes is None:
        num_classes = int(labels.max()) + 1 if (labels >= 0).any() else 1
    if masks is None:
        masks = random_splits(V, labels, splits, seed)
    for k, v in list(data.items()):
        if np.issubdtype(v.dtype, np.integer):
            data[k] = v.astype(np.int32)
        else:
            data[k] = v.astype(np.float32)
    has_loops = bool(self_loops or (src.size and np.any(src == dst)))
    return Dataset(name=name, indptr=indptr, indices=src.astype(np.int32),
                   features=features, labels=labels, masks=masks,
                   num_classes=int(num_classes), edge_data=data, directed=directed,
                   self_loops=has_loops, source=source)


def direction_types(ds: Dataset, src, dst) -> np.ndarray:
    """Edge types from direction, for a dataset built from the directed edges
    src -> dst with symmetrize/self_loops: 0 = an original edge, 1 = only its
    reverse is original, 2 = a self-loop (int32, in the dataset's edge order)."""
    V = max(ds.num_vertices, 1)
    original = np.unique(np.asarray(dst, dtype=np.int64) * V + np.asarray(src, dtype=np.int64))
    keys = ds.dst() * V + ds.src()
    types = np.where(np.isin(keys, original), 0, 1).astype(np.int32)
    types[ds.src() == ds.dst()] = 2
    return types


# --- readers -----------------------------------------------------------------------

def read_edge_list(path: str) -> Tuple[np.ndarray, np.ndarray, int]:
    """SNAP-style text: one `src dst` pair per line, `#` comments. Ids are
    relabelled densely in order of first appearance when they are not already
    0..n-1."""
    src, dst = [], []
    try:
        f = open(path)
    except OSError as e:
        raise DatasetError(f"{os.path.basename(path)}: {e.strerror}") from None
    with f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line[0] in "#%":
                continue
            parts = line.replace(",", " ").split()
            if len(parts) < 2:
                raise DatasetError(f"{os.path.basename(path)}:{lineno}: expected 'src dst'")
            try:
                a, b = int(parts[0]), int(parts[1])
            except ValueError:
                raise DatasetError(f"{os.path.basename(path)}:{lineno}: vertex ids must be "
                                   f"integers") from None
            if a < 0 or b < 0:
                raise DatasetError(f"{os.path.basename(path)}:{lineno}: negative vertex id")
            src.append(a)
            dst.append(b)
    s = np.array(src, dtype=np.int64)
    d = np.array(dst, dtype=np.int64)
    ids = np.unique(np.concatenate([s, d])) if s.size else np.zeros(0, dtype=np.int64)
    if ids.size and ids[-1] != ids.size - 1:
        s = np.searchsorted(ids, s)
        d = np.searchsorted(ids, d)
    return s, d, int(ids.size)


def from_scipy(matrix, **kwargs) -> Dataset:
    """A SciPy sparse adjacency: entry (i, j) is an edge i -> j."""
    coo = matrix.tocoo()
    if coo.shape[0] != coo.shape[1]:
        raise DatasetError(f"adjacency: not square {coo.shape}")
    kwargs.setdefault("edge_data", {})
    return from_edges(coo.row, coo.col, coo.shape[0], **kwargs)


def from_networkx(graph, label: Optional[str] = None, features: Optional[str] = None,
                  **kwargs) -> Dataset:
    """A networkx graph. Vertices are numbered in `graph.nodes` order; `label`
    and `features` name node attributes (labels are mapped to 0..C-1 in
    sorted order of their values)."""
    nodes = list(graph.nodes)
    index = {n: i for i, n in enumerate(nodes)}
    edges = list(graph.edges)
    src = np.array([index[u] for u, v, *_ in edges], dtype=np.int64)
    dst = np.array([index[v] for u, v, *_ in edges], dtype=np.int64)
    directed = graph.is_directed()
    if label is not None:
        values = [graph.nodes[n].get(label) for n in nodes]
        classes = sorted({v for v in values if v is not None}, key=str)
        cmap = {c: i for i, c in enumerate(classes)}
        kwargs["labels"] = np.array([cmap[v] if v is not None else -1 for v in values])
        kwargs.setdefault("num_classes", max(len(classes), 1))
    if features is not None:
        kwargs["features"] = np.array([np.atleast_1d(graph.nodes[n][features]) for n in nodes],
                                      dtype=np.float32)
    kwargs.setdefault("symmetrize", not directed)
    kwargs.setdefault("directed", directed)
    return from_edges(src, dst, len(nodes), **kwargs)


def from_pyg(data, **kwargs) -> Dataset:
    """A PyTorch Geometric `Data` (edge_index, x, y, *_mask)."""
    ei = data.edge_index.cpu().numpy()
    kwargs.setdefault("features", data.x.cpu().numpy() if getattr(data, "x", None) is not None else None)
    if getattr(data, "y", None) is not None:
        kwargs.setdefault("labels", data.y.cpu().numpy().reshape(-1))
    masks = {}
    for split in ("train", "val", "test"):
        m = getattr(data, f"{split}_mask", None)
        if m is not None:
            masks[split] = m.cpu().numpy().astype(bool)
    if len(masks) == 3:
        kwargs.setdefault("masks", masks)
    return from_edges(ei[0], ei[1], int(data.num_nodes), **kwargs)


def from_dgl(graph, **kwargs) -> Dataset:
    """A DGL graph (ndata 'feat', 'label', '*_mask')."""
    s, d = graph.edges()
    nd = graph.ndata
    if "feat" in nd:
        kwargs.setdefault("features", nd["feat"].cpu().numpy())
    if "label" in nd:
        kwargs.setdefault("labels", nd["label"].cpu().numpy().reshape(-1))
    masks = {sp: nd[f"{sp}_mask"].cpu().numpy().astype(bool)
             for sp in ("train", "val", "test") if f"{sp}_mask" in nd}
    if len(masks) == 3:
        kwargs.setdefault("masks", masks)
    return from_edges(s.cpu().numpy(), d.cpu().numpy(), graph.num_nodes(), **kwargs)


def locality_order(ds: Dataset, how: str) -> np.ndarray:
    """A renumbering of the vertices for locality (perm[v]: v's new id):
    `degree` puts the vertices in descending in-degree order (the rows an
    aggregation reads most often packed together at the front); `rcm` is
    reverse Cuthill-McKee over the in-edges (breadth-first from a vertex of
    least degree in each component, neighbours by ascending degree,
    reversed), which keeps the two ends of an edge close."""
    V = ds.num_vertices
    deg = np.diff(ds.indptr)
    if how == "degree":
        order = np.argsort(-deg, kind="stable")
    elif how == "rcm":
        visited = np.zeros(V, bool)
        by_degree = np.argsort(deg, kind="stable")
        order, start = [], 0
        while len(order) < V:
            while visited[by_degree[start]]:
                start += 1
            queue, head = [int(by_degree[start])], 0
            visited[queue[0]] = True
            while head < len(queue):
                v = queue[head]
                head += 1
                nb = ds.indices[ds.indptr[v]:ds.indptr[v + 1]]
                nb = np.unique(nb[~visited[nb]])
                if nb.size:
                    nb = nb[np.argsort(deg[nb], kind="stable")]
                    visited[nb] = True
                    queue.extend(nb.tolist())
            order.extend(queue)
        order = np.asarray(order[::-1], dtype=np.int64)
    else:
        raise ValueError(f"unknown order '{how}' (degree or rcm)")
    perm = np.empty(V, dtype=np.int64)
    perm[order] = np.arange(V, dtype=np.int64)
    return perm


def permute(ds: Dataset, seed: int = 1, order: str = "random") -> Tuple[Dataset, np.ndarray]:
    """Renumbers the vertices: vertex v becomes perm[v], the same on both
    ends of every edge; features, labels, masks and edge data follow their
    vertex and edge. The model computes the same function of the permuted
    graph, so its loss is the same (up to summation order). `order`
    "random" is MG-GCN's random symmetric permutation (§5.2, seeded), which
    balances row partitioning's tiles A^{ij}; "degree" and "rcm" are
    locality orders (locality_order). Returns the permuted dataset and
    perm."""
    V = ds.num_vertices
    if order == "random":
        perm = np.random.default_rng(seed).permutation(V).astype(np.int64)
        how = f"vertices permuted (seed {seed})"
    else:
        perm = locality_order(ds, order)
        how = f"vertices renumbered in {order} order"
    src = perm[ds.src()]
    dst = perm[ds.dst()]
    order_ = np.lexsort((src, dst))  # by new destination, then new source
    indptr = np.zeros(V + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=V), out=indptr[1:])

    def rows(a: np.ndarray) -> np.ndarray:
        out = np.empty_like(a)
        out[perm] = a
        return out

    out = Dataset(
        name=ds.name, indptr=indptr, indices=src[order_].astype(np.int32),
        features=rows(ds.features), labels=rows(ds.labels),
        masks={k: rows(m) for k, m in ds.masks.items()}, num_classes=ds.num_classes,
        edge_data={k: v[order_] for k, v in ds.edge_data.items()},
        directed=ds.directed, self_loops=ds.self_loops,
        source=f"{ds.source}; {how}")
    return out, perm


def tile_balance(ds: Dataset, parts: int) -> float:
    """The largest edge count of the parts x parts tiles A^{ij} (row part i
    of the destinations, column part j of the sources, equal vertex ranges)
    over their mean: 1 is perfect balance (MG-8)."""
    V = ds.num_vertices
    if V == 0 or ds.num_edges == 0:
        return 1.0
    part = lambda v: (v * parts) // V  # noqa: E731  the part of vertex v
    counts = np.bincount(part(ds.dst()) * parts + part(ds.src()), minlength=parts * parts)
    return float(counts.max() / counts.mean())
