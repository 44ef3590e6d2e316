"""The NumPy executor: gradients against finite differences for every zoo
model on fresh random graphs, and the gather semantics (ties included)
against explicit loops."""

import numpy as np
import pytest

import gnnc as gn
from gnnc import Model, zoo
from gnnc.data import from_edges, sbm
from gnnc.executor import Executor, init_params

MODELS = sorted(zoo.ZOO)


def random_graph(rng, V=40, E=160, F=5, C=3, types=3, self_loops=False):
    """A random directed multigraph (duplicates removed), with isolated and
    sink vertices, random features, labels and edge types."""
    src = rng.integers(0, V, E)
    dst = rng.integers(0, V - 3, E)  # the last 3 vertices have no in-edges
    types_ = rng.integers(0, types, E).astype(np.int32)
    return from_edges(src, dst, V, features=rng.standard_normal((V, F)),
                      labels=rng.integers(-1, C, V), num_classes=C,
                      edge_data={"type": types_}, self_loops=self_loops,
                      seed=int(rng.integers(1 << 30)))


def build(name):
    return zoo.deep_gcn(depth=3, hidden=6) if name == "deep_gcn" else zoo.ZOO[name]()


def fd_check(program, ds, rng, directions=3, eps=1e-7, tol=1e-6):
    """Central differences along random directions. Relative tolerance `tol`
    (DESIGN.md), with an absolute floor at the differences' own rounding
    error (~1e-16 |loss| / eps, taken with a 100x margin): directional derivatives that are zero in
    exact arithmetic (GAT's destination attention is softmax-invariant) are
    compared at that floor instead of relatively. ReLU and max/min are not
    differentiable everywhere: a direction whose differences at eps and 2 eps
    disagree crosses a kink (frequent with ReLU feeding a max gather) and is replaced by a fresh one (at most 10 times
    per parameter); a wrong gradient gives consistent differences that
    disagree with it, and fails."""
    ex = Executor(program, ds)
    params = init_params(program, ex, int(rng.integers(1 << 30)))
    # Random everywhere, never zeros (zero-initialised biases would hide bugs).
    params = {k: v + 0.2 * rng.standard_normal(v.shape) for k, v in params.items()}
    res = ex.run(params)
    assert np.isfinite(res.loss)
    floor = 1e-14 * max(1.0, abs(res.loss)) / eps

    def diff(name, d, h):
        plus = dict(params, **{name: params[name] + h * d})
        minus = dict(params, **{name: params[name] - h * d})
        return (ex.run(plus, grads=False).loss - ex.run(minus, grads=False).loss) / (2 * h)

    def close(a, b):
        return abs(a - b) <= tol * max(abs(a), abs(b), floor / tol)

    for name, grad in res.grads.items():
        assert grad.shape == params[name].shape
        checked = tries = 0
        kinks = []
        while checked < directions:
            tries += 1
            assert tries <= directions + 10, (
                f"{program.name}: {name}: every direction hits a kink (loss {res.loss}; "
                f"(fd, fd3, analytic): {kinks[:3]})")
            d = rng.standard_normal(grad.shape)
            fd, fd3 = diff(name, d, eps), diff(name, d, 2 * eps)
            if not close(fd, fd3):
                kinks.append((fd, fd3, float(np.sum(grad * d))))
                continue  # non-smooth along d
            an = float(np.sum(grad * d))
            assert close(fd, an), (f"{program.name}: d loss/d {name}: analytic {an} vs "
                                   f"finite differences {fd}")
            checked += 1


@pytest.mark.parametrize("name", MODELS)
def test_gradients_match_finite_differences(name, rng):
    fd_check(build(name), random_graph(rng), rng)


@pytest.mark.parametrize("name", MODELS)
def test_gradients_on_sbm_with_self_loops(name, rng):
    ds = sbm(50, 3, 0.2, 0.03, num_features=4, seed=int(rng.integers(1 << 30)), edge_types=3)
    fd_check(build(name), ds, rng, directions=2)


def _loop_gather(values, seg, n, acc):
    out = np.zeros((n,) + values.shape[1:])
    arg = np.full(out.shape, -1)
    for v in range(n):
        edges = [e for e in range(len(seg)) if seg[e] == v]
        if not edges:
            continue
        block = values[edges]
        if acc == "sum":
            out[v] = block.sum(0)
        elif acc == "mean":
            out[v] = block.mean(0)
        else:
            pick = np.argmax(block, 0) if acc == "max" else np.argmin(block, 0)  # first on ties
            out[v] = np.take_along_axis(block, pick[None], 0)[0]
            arg[v] = np.array(edges)[pick]
    return out, arg


@pytest.mark.parametrize("acc", gn.ACCUMULATORS)
@pytest.mark.parametrize("side", ["dst", "src"])
def test_gather_matches_loops_with_ties(acc, side, rng):
    """Forward values and gradient routing of every accumulator; values drawn
    from a small set so that max/min ties are frequent."""
    ds = random_graph(rng, V=12, E=60)
    m = Model("g")
    x = m.features()
    w = m.param("w", (gn.F, 2, 3))
    e = m.apply_edge(lambda e: e.src @ w, src=x, name="e")
    a = m.gather(e, acc, to=side)
    prog = m.output(m.apply_vertex(lambda a: gn.linear(a, m.param("o", (2, 3, gn.C))), a))
    ex = Executor(prog, ds)
    params = {"w": rng.integers(-2, 3, (ds.num_features, 2, 3)).astype(float),
              "o": rng.standard_normal((2, 3, ds.num_classes))}
    res = ex.run(params)
    # Reference: edge values and the gather by loops.
    xs = ds.features.astype(float)[ds.src()]
    ev = np.tensordot(xs, params["w"], axes=1)
    seg = ds.dst() if side == "dst" else ds.src()
    ref, arg = _loop_gather(ev, seg, ds.num_vertices, acc)
    logits = np.tensordot(ref, params["o"], axes=2)
    np.testing.assert_allclose(res.logits, logits, rtol=1e-12, atol=1e-12)
    # Gradient of w through the reference routing.
    sel = ds.masks["train"] & (ds.labels >= 0)
    z = logits[sel] - logits[sel].max(1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    p[np.arange(sel.sum()), ds.labels[sel]] -= 1
    glog = np.zeros_like(logits)
    glog[sel] = p / max(sel.sum(), 1)
    ga = np.tensordot(glog, params["o"], axes=([1], [2]))
    ge = np.zeros_like(ev)
    counts = np.bincount(seg, minlength=ds.num_vertices)
    for e_ in range(len(seg)):
        v = seg[e_]
        if acc == "sum":
            ge[e_] += ga[v]
        elif acc == "mean":
            ge[e_] += ga[v] / counts[v]
        else:
            ge[e_] += np.where(arg[v] == e_, ga[v], 0.0)
    gw = np.tensordot(xs, ge, axes=([0], [0]))
    np.testing.assert_allclose(res.grads["w"], gw, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("acc", ["max", "min"])
def test_tie_goes_to_lowest_csc_position(acc):
    # Vertex 0 has in-edges from 1 and 2, at CSC positions 0 and 1. Their
    # values tie (x_1 @ s = x_2 @ s = 2), but d value / d s differs: x_1 = [2, 0]
    # and x_2 = [0, 2]. The gradient must follow the edge from vertex 1.
    ds = from_edges([1, 2], [0, 0], 3,
                    features=np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0]]),
                    labels=np.array([0, 1, 0]), num_classes=2,
                    masks={"train": np.array([True, False, False]),
                           "val": np.zeros(3, bool), "test": np.zeros(3, bool)})
    m = Model("tie")
    s = m.param("s", (2, 1))
    e = m.apply_edge(lambda e: e.src @ s, src=m.features(2))
    o = m.param("o", (1, gn.C))
    ex = Executor(m.output(m.apply_vertex(lambda a: a @ o, m.gather(e, acc))), ds)
    res = ex.run({"s": np.ones((2, 1)), "o": np.array([[1.0, -1.0]])})
    assert res.grads["s"][0, 0] != 0.0
    assert res.grads["s"][1, 0] == 0.0


def test_dropout_reuses_its_mask_and_is_off_in_eval(rng):
    ds = random_graph(rng)
    m = Model("d")
    w = m.param("w", (gn.F, gn.C))
    prog = m.output(m.apply_vertex(lambda v: gn.dropout(v, 0.5) @ w, m.features()))
    ex = Executor(prog, ds)
    p = {"w": rng.standard_normal((ds.num_features, ds.num_classes))}
    a = ex.run(p, grads=False)
    b = ex.run(p, grads=False)
    np.testing.assert_array_equal(a.logits, b.logits)  # eval: no dropout
    t = ex.run(p, dropout=True, rng=np.random.default_rng(1))
    assert not np.allclose(t.logits, a.logits)
    # The gradient uses the forward's mask: d loss / d w = (mask * x)^T g.
    again = ex.run(p, dropout=True, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(t.grads["w"], again.grads["w"])


def test_parameter_shape_errors(rng):
    from gnnc.executor import ExecutionError
    ds = random_graph(rng)
    prog = zoo.gcn()
    ex = Executor(prog, ds)
    params = init_params(prog, ex, 0)
    params["conv1.weight"] = np.zeros((3, 3))
    with pytest.raises(ExecutionError, match="parameter 'conv1.weight' has shape"):
        ex.run(params)
