"""Synthetic graphs: RMAT (Graph500 parameters) and stochastic block models
with learnable features."""

from __future__ import annotations

from typing import Optional

import numpy as np

from .convert import from_edges
from .format import Dataset


def rmat_edges(scale: int, draws: int, seed: int = 0, a: float = 0.57, b: float = 0.19,
               c: float = 0.19):
    """`draws` RMAT edges over 2^scale ids (Graph500: a=.57, b=c=.19), ids
    randomly permuted. Returns (src, dst)."""
    rng = np.random.default_rng(seed)
    src = np.zeros(draws, dtype=np.int64)
    dst = np.zeros(draws, dtype=np.int64)
    ab, abc = a + b, a + b + c
    for bit in range(scale):
        r = rng.random(draws)
        right = (r >= a) & (r < ab) | (r >= abc)
        down = r >= ab
        src |= down.astype(np.int64) << bit
        dst |= right.astype(np.int64) << bit
    perm = rng.permutation(1 << scale)
    return perm[src], perm[dst]


def rmat(num_vertices: int, draws: int, num_features: int = 16, num_classes: int = 2,
         seed: int = 0, symmetrize: bool = True, self_loops: bool = True,
         name: Optional[str] = None) -> Dataset:
    """An RMAT graph on `num_vertices` vertices (ids >= num_vertices dropped),
    random features and labels (RMAT graphs carry no learnable signal: use
    them for speed, SBM graphs for accuracy)."""
    scale = max(1, int(np.ceil(np.log2(max(num_vertices, 2)))))
    src, dst = rmat_edges(scale, draws, seed)
    keep = (src < num_vertices) & (dst < num_vertices)
    rng = np.random.default_rng(seed + 1)
    features = rng.standard_normal((num_vertices, num_features)).astype(np.float32)
    labels = rng.integers(0, num_classes, num_vertices)
    return from_edges(src[keep], dst[keep], num_vertices, features=features, labels=labels,
                      num_classes=num_classes, name=name or f"rmat-{num_vertices}",
                      source=f"RMAT a=.57 b=c=.19, scale {scale}, {draws} draws, seed {seed}",
                      symmetrize=symmetrize, self_loops=self_loops, seed=seed)


def sbm(num_vertices: int, num_blocks: int, p_in: float, p_out: float,
        num_features: int = 16, noise: float = 1.0, seed: int = 0,
        symmetrize: bool = True, self_loops: bool = True, edge_types: int = 0,
        name: Optional[str] = None) -> Dataset:
    """A stochastic block model: labels are blocks, features a noisy one-hot
    of the block (first `num_blocks` columns) plus Gaussian noise columns.
    `edge_types` > 0 adds `edge_type.npy` (random types in [0, edge_types))."""
    if num_blocks < 1 or num_vertices < num_blocks:
        raise ValueError("sbm: need 1 <= num_blocks <= num_vertices")
    if num_features < num_blocks:
        raise ValueError("sbm: num_features must be at least num_blocks")
    rng = np.random.default_rng(seed)
    block = rng.integers(0, num_blocks, num_vertices)
    members = [np.nonzero(block == k)[0] for k in range(num_blocks)]
    srcs, dsts = [], []
    for i in range(num_blocks):
        for j in range(num_blocks):
            ni, nj = len(members[i]), len(members[j])
            if not ni or not nj:
                continue
            p = p_in if i == j else p_out
            m = rng.binomial(ni * nj, min(max(p, 0.0), 1.0))
            srcs.append(members[i][rng.integers(0, ni, m)])
            dsts.append(members[j][rng.integers(0, nj, m)])
    src = np.concatenate(srcs) if srcs else np.zeros(0, dtype=np.int64)
    dst = np.concatenate(dsts) if dsts else np.zeros(0, dtype=np.int64)
    features = noise * rng.standard_normal((num_vertices, num_features))
    features[np.arange(num_vertices), block] += 1.0
    edge_data = {}
    if edge_types:
        edge_data["type"] = rng.integers(0, edge_types, src.size).astype(np.int32)
    return from_edges(src, dst, num_vertices, features=features.astype(np.float32),
                      labels=block, num_classes=num_blocks,
                      name=name or f"sbm-{num_vertices}-{num_blocks}",
                      source=(f"SBM {num_blocks} blocks, p_in {p_in}, p_out {p_out}, "
                              f"noise {noise}, seed {seed}"),
                      symmetrize=symmetrize, self_loops=self_loops, seed=seed,
                      edge_data=edge_data)
