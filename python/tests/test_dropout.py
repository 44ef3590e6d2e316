"""The compiled dropout against the runtime's documented mask, exactly.

Compiled code applies dropout inline in its element-wise loops with the
counter-based mask of runtime/lib/Random.h (key = f(seed, step, mask id);
element i kept when fmix32(lo(i) * K1 ^ hi(i) * K2 ^ lo(key) + hi(key)) >> 8
>= rate * 2^24, murmur3's 32-bit finaliser; scaled by 1 / (1 - rate)). One SGD step of logits = dropout(x) @ W, from a random W, is
recomputed here in NumPy with that formula: W's update reads dropout(x) both
in the forward GEMM and in the weight gradient (the backward recomputes the
mask), so a wrong key, element index, threshold or scale shows up in W.
"""

import os
import subprocess

import numpy as np
import pytest

from conftest import have_compiler
from gnnc import frontend as gn
from gnnc import toolchain
from gnnc.check import random_dataset
from gnnc.data import save
from gnnc.frontend import C, F, Model
from gnnc.train import save_params

pytestmark = pytest.mark.skipif(not have_compiler(), reason="gnn-compile not built")

M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
M32 = np.uint64(0xFFFFFFFF)


def mix64(x):
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def mask(seed, step, op, n, rate):
    """Kept elements and scale of dropout op `op` over n elements."""
    with np.errstate(over="ignore"):
        s = np.array([seed, step, op], dtype=np.uint64)
        key = mix64(mix64(s[0] ^ mix64(s[1])) ^ mix64(s[2] + np.uint64(0x632BE59BD9B4E019)))
        i = np.arange(n, dtype=np.uint64)
        h = ((i & M32) * np.uint64(0x9E3779B9)) & M32
        h ^= ((i >> np.uint64(32)) * np.uint64(0x7FEB352D)) & M32
        h ^= key & M32
        h = (h + (key >> np.uint64(32))) & M32
        h ^= h >> np.uint64(16)
        h = (h * np.uint64(0x85EBCA6B)) & M32
        h ^= h >> np.uint64(13)
        h = (h * np.uint64(0xC2B2AE35)) & M32
        h ^= h >> np.uint64(16)
        draw = h >> np.uint64(8)
    keep = draw >= np.uint64(int(rate * 16777216.0))
    return keep, np.float32(1.0 / (1.0 - rate))


def sgd_step(x, w, labels, train, rate, seed):
    """W after one SGD step (lr 1, no momentum) of mean masked softmax
    cross-entropy over dropout(x) @ W, step 1, mask id 0."""
    keep, scale = mask(seed, 1, 0, x.size, rate)
    xd = np.where(keep.reshape(x.shape), x.astype(np.float32) * scale, np.float32(0.0))
    xd = xd.astype(np.float64)
    z = xd @ w
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    sel = train & (labels >= 0)
    g = np.zeros_like(p)
    g[sel] = p[sel]
    g[np.nonzero(sel)[0], labels[sel]] -= 1.0
    g /= sel.sum()
    return w - xd.T @ g


@pytest.mark.parametrize("override", [None, 0.65])
def test_compiled_dropout_matches_the_documented_mask(rng, tmp_path, override):
    m = Model("drop")
    w = m.param("w", (F, C))
    program = m.output(m.apply_vertex(lambda v: gn.dropout(v, 0.3) @ w, m.features()))
    exe = str(tmp_path / "drop")
    toolchain.compile(program, exe)

    ds = random_dataset(rng, V=300, E=1200, F=9, C=5)
    data = str(tmp_path / "data")
    save(ds, data)
    w0 = rng.standard_normal((9, 5)).astype(np.float32)
    save_params({"w": w0}, str(tmp_path / "init"))
    seed = int(rng.integers(1 << 30))
    cmd = [exe, "--data", data, "--load-params", str(tmp_path / "init"), "--epochs", "1",
           "--optimizer", "sgd", "--momentum", "0", "--lr", "1", "--seed", str(seed),
           "--save-params", str(tmp_path / "out"), "--quiet"]
    if override is not None:
        cmd += ["--dropout", str(override)]
    subprocess.run(cmd, check=True, capture_output=True)
    got = np.load(str(tmp_path / "out" / "w.npy"))

    rate = 0.3 if override is None else override
    want = sgd_step(ds.features, w0.astype(np.float64), ds.labels, ds.masks["train"], rate, seed)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    # The mask matters: without it (or with another step's) W differs.
    other = sgd_step(ds.features, w0.astype(np.float64), ds.labels, ds.masks["train"], rate, seed + 1)
    assert np.abs(other - want).max() > 1e-3
