"""--gnn-fuse-sag on randomly generated edge bodies: every program compiles to
fused gathers (no edge tensor left) and one --dump training step matches the
NumPy executor (loss, logits, every gradient) on fresh random graphs.

The bodies are random expression trees over the edge's source and
destination rows, a per-vertex scalar scattered from either side, the edge's
own float data, a parameter row and constants, with every element-wise op of
the dialect, in two chained edge stages (the first inlined into the second's
fusion); the gather's accumulator and side are drawn too. The bias row used
per edge makes the backward sum its gradient over the edges (sum_rows), which
the pass also routes through a fused gather."""

import subprocess

import numpy as np
import pytest
from conftest import have_compiler

from gnnc import frontend as gn
from gnnc import toolchain
from gnnc.check import check_dump
from gnnc.frontend import C, F, Model
from gnnc.printer import to_mlir


pytestmark = pytest.mark.skipif(not have_compiler(), reason="gnn-compile not built")

WIDTH = 6


def _unary(rng, x):
    """A random unary op, kept finite for rows of moderate size."""
    k = int(rng.integers(0, 11))
    return [
        lambda: gn.relu(x),
        lambda: gn.sigmoid(x),
        lambda: gn.tanh(x),
        lambda: gn.exp(gn.tanh(x)),
        lambda: gn.neg(x),
        lambda: gn.elu(x),
        lambda: gn.leaky_relu(x, 0.2),
        lambda: gn.log(x * x + 1.0),
        lambda: gn.sqrt(x * x + 1.0),
        lambda: gn.rsqrt(x * x + 1.0),
        lambda: x * gn.sigmoid(x),
    ][k]()


def _binary(rng, a, b):
    k = int(rng.integers(0, 4))
    if k == 0:
        return a + b
    if k == 1:
        return a - b
    if k == 2:
        return a * b
    return a / (b * b + 1.0)


def build(rng, leaves, depth):
    """A random element-wise expression tree over `leaves`."""
    if depth == 0 or rng.random() < 0.25:
        return leaves[int(rng.integers(0, len(leaves)))]
    if rng.random() < 0.4:
        return _unary(rng, build(rng, leaves, depth - 1))
    return _binary(rng, build(rng, leaves, depth - 1), build(rng, leaves, depth - 1))


def random_program(seed):
    """Two chained random edge stages (the first's tensor is the second's
    edge data, so the fusion inlines it) gathered with a drawn accumulator
    to a drawn side."""
    rng = np.random.default_rng(seed)
    acc = ["sum", "mean", "max", "min"][seed % 4]
    to = ["dst", "src"][(seed // 4) % 2]
    m = Model(f"fuse{seed}")
    x = m.features()
    w1 = m.param("a.weight", (F, WIDTH))
    w2 = m.param("b.weight", (F, WIDTH))
    bias = m.param("bias", (WIDTH,))
    wo = m.param("out.weight", (WIDTH, C))
    a = m.apply_vertex(lambda r: gn.tanh(r @ w1), x, name="a")
    b = m.apply_vertex(lambda r: r @ w2, x, name="b")
    scale = m.apply_vertex(lambda d: gn.rsqrt(d), m.degree("in"), name="scale")
    weight = m.edge_data("weight")
    t = m.apply_edge(
        lambda e: build(rng, [e.src, e.dst, e.data, bias, gn.constant(0.5)], 3) + e.src,
        src=a, dst=scale, data=weight, name="t")
    msg = m.apply_edge(
        lambda e: _binary(rng, build(rng, [e.data, e.dst, e.src, bias], 3), e.dst),
        src=scale, dst=b, data=t, name="msg")
    agg = m.gather(msg, acc, to=to)
    return m.output(m.apply_vertex(lambda r: r @ wo, agg, name="logits"))


@pytest.mark.parametrize("seed", range(16))
def test_random_bodies_fuse_and_match_numpy(seed, tmp_path):
    program = random_program(seed)
    source = tmp_path / "model.mlir"
    source.write_text(to_mlir(program))
    ir = subprocess.run([toolchain.find_tool("gnn-compile"), str(source), "-emit=mlir"],
                        capture_output=True, text=True, check=True).stdout
    train = ir[ir.index("@gnn_train_step"):]
    assert "gnn.fused_gather" in train
    # No edge tensor is computed (the dataset's own edge data is read).
    for op in ("gnn.scatter", "gnn.apply_edge", "gnn.gather ", "gnn.gather_grad"):
        assert op not in train, f"'{op}' is left in the training step"
    exe = toolchain.compile(program, str(tmp_path / "model"))
    failures = check_dump(exe, program, seed=100 + seed, graphs=2, log=lambda _: None)
    assert not failures, "\n".join(failures) + "\n" + to_mlir(program)


def concat_program():
    """Edge bodies that --gnn-hoist-apply-edge must split before hoisting:
    GAT's attention as a·(Wh_src ‖ Wh_dst) and a linear over src + dst."""
    m = Model("concat")
    x = m.features()
    w = m.param("w", (F, WIDTH))
    att = m.param("att", (2 * WIDTH,))
    wg = m.param("wg", (WIDTH, WIDTH))
    wo = m.param("out", (WIDTH, C))
    h = m.apply_vertex(lambda r: gn.tanh(r @ w), x, name="h")
    score = m.apply_edge(
        lambda e: gn.leaky_relu(gn.row_dot(gn.concat(e.src, e.dst), att), 0.2),
        src=h, dst=h, name="score")
    msg = m.apply_edge(lambda e: gn.sigmoid((e.src + e.dst) @ wg) * e.src * e.data,
                       src=h, dst=h, data=score, name="msg")
    agg = m.gather(msg, "sum")
    return m.output(m.apply_vertex(lambda r: r @ wo, agg, name="logits"))


def test_split_contractions_hoist_fuse_and_match_numpy(tmp_path):
    program = concat_program()
    source = tmp_path / "model.mlir"
    source.write_text(to_mlir(program))
    ir = subprocess.run([toolchain.find_tool("gnn-compile"), str(source), "-emit=mlir"],
                        capture_output=True, text=True, check=True).stdout
    train = ir[ir.index("@gnn_train_step"):]
    for op in ("gnn.scatter", "gnn.apply_edge", "gnn.gather "):
        assert op not in train, f"'{op}' is left in the training step"
    exe = toolchain.compile(program, str(tmp_path / "model"))
    failures = check_dump(exe, program, seed=7, graphs=2, log=lambda _: None)
    assert not failures, "\n".join(failures)
