"""An eager NumPy executor of traced programs: the project's independent
numerical reference.

It runs a `Program` in float64 on a `Dataset` (forward, loss, logits) and
computes gradients with its own reverse mode over a tape of whole-tensor
operations: a stage's body runs once over all its rows (a batch dimension of
|E| or |V| in front of each row), so every rule below is a NumPy expression.
Nothing here depends on the compiler's autodiff.

Semantics follow docs/Dialect.md: gathers give 0 to vertices without edges;
`max`/`min` route the gradient to the first edge (lowest CSC position) that
attains the extremum; `mean` divides by the edge count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from .data.format import Dataset
from .program import Op, Param, Program, Value, resolve_shape


class ExecutionError(Exception):
    """The program cannot run on the given data or parameters."""


# --- helpers -------------------------------------------------------------------

def _sum_to(g: np.ndarray, shape: Tuple[int, ...]) -> np.ndarray:
    """Reduces a broadcast gradient back to `shape`."""
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g.reshape(shape)


@dataclass
class _Segments:
    """Edges grouped by the vertex they reduce into, keeping CSC order within
    a group (so the first edge of a group is the lowest CSC position)."""

    order: np.ndarray     # edge ids sorted by segment (stable)
    seg: np.ndarray       # segment of each edge (unsorted)
    counts: np.ndarray    # edges per segment
    starts: np.ndarray    # start of each non-empty segment in `order`
    nonempty: np.ndarray  # bool per segment

    @staticmethod
    def build(seg: np.ndarray, n: int) -> "_Segments":
        order = np.argsort(seg, kind="stable")
        counts = np.bincount(seg, minlength=n)
        offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
        nonempty = counts > 0
        return _Segments(order, seg, counts, offsets[nonempty], nonempty)


def _segment_reduce(values: np.ndarray, segs: _Segments, acc: str):
    """Returns (result [n, ...], arg) where arg holds, for max/min, the edge
    chosen per (segment, element)."""
    n = segs.counts.shape[0]
    out = np.zeros((n,) + values.shape[1:], dtype=values.dtype)
    if values.shape[0] == 0 or not segs.nonempty.any():
        return out, None
    sv = values[segs.order]
    if acc in ("sum", "mean"):
        out[segs.nonempty] = np.add.reduceat(sv, segs.starts, axis=0)
        if acc == "mean":
            cnt = segs.counts[segs.nonempty].reshape((-1,) + (1,) * (values.ndim - 1))
            out[segs.nonempty] /= cnt
        return out, None
    ufunc = np.maximum if acc == "max" else np.minimum
    ext = ufunc.reduceat(sv, segs.starts, axis=0)
    out[segs.nonempty] = ext
    # First position in sorted order attaining the extremum, per element.
    sorted_seg = segs.seg[segs.order]
    hit = sv == out[sorted_seg]
    pos = np.arange(sv.shape[0]).reshape((-1,) + (1,) * (values.ndim - 1))
    pos = np.where(hit, pos, sv.shape[0])
    first = np.minimum.reduceat(pos, segs.starts, axis=0)
    arg = np.full(out.shape, -1, dtype=np.int64)
    arg[segs.nonempty] = segs.order[first]
    return out, arg


@dataclass
class _Node:
    kind: str
    inputs: List[Value]
    outputs: List[Value]
    backward: Callable[[List[Optional[np.ndarray]]], List[Optional[np.ndarray]]]


@dataclass
class Result:
    loss: float
    logits: np.ndarray
    grads: Dict[str, np.ndarray] = field(default_factory=dict)


class Executor:
    """Runs one program on one dataset, in float64."""

    def __init__(self, program: Program, dataset: Dataset):
        if program.loss is None:
            raise ExecutionError(f"model '{program.name}' has no output")
        self.program = program
        self.ds = dataset
        self.V = dataset.num_vertices
        self.E = dataset.num_edges
        self.src = dataset.src()
        self.dst = dataset.dst()
        self._segs = {"dst": _Segments.build(self.dst, self.V),
                      "src": _Segments.build(self.src, self.V)}
        self.num_features = dataset.num_features
        self.num_classes = dataset.num_classes

    # shapes --------------------------------------------------------------------
    def shape_of(self, shape) -> Tuple[int, ...]:
        return resolve_shape(shape, self.num_features, self.num_classes)

    def param_shapes(self) -> Dict[str, Tuple[int, ...]]:
        return {p.name: self.shape_of(p.shape) for p in self.program.params}

    # running -------------------------------------------------------------------
    def run(self, params: Dict[str, np.ndarray], grads: bool = True,
            dropout: bool = False, rng: Optional[np.random.Generator] = None,
            dropout_override: Optional[float] = None) -> Result:
        """Forward (and backward when `grads`). `dropout` enables dropout
        (training); `dropout_override` replaces every dropout rate."""
        env: Dict[int, np.ndarray] = {}
        tape: List[_Node] = []
        self._dropout = dropout
        self._rate = dropout_override
        self._rng = rng if rng is not None else np.random.default_rng(0)
        for p in self.program.params:
            if p.name not in params:
                raise ExecutionError(f"missing parameter '{p.name}'")
            arr = np.asarray(params[p.name], dtype=np.float64)
            want = self.shape_of(p.shape)
            if arr.shape != want:
                raise ExecutionError(f"parameter '{p.name}' has shape {arr.shape} but the "
                                     f"model needs {want}")
            env[id(p.value)] = arr
        for op in self.program.ops:
            self._run_top(op, env, tape)
        loss = float(env[id(self.program.loss)])
        logits = env[id(self.program.logits)]
        result = Result(loss, logits)
        if grads:
            result.grads = self._backward(env, tape)
        return result

    def _backward(self, env, tape) -> Dict[str, np.ndarray]:
        g: Dict[int, np.ndarray] = {id(self.program.loss): np.array(1.0)}
        for node in reversed(tape):
            outs = [g.get(id(v)) for v in node.outputs]
            if all(o is None for o in outs):
                continue
            outs = [o if o is not None else np.zeros_like(env[id(v)])
                    for o, v in zip(outs, node.outputs)]
            ins = node.backward(outs)
            for v, gi in zip(node.inputs, ins):
                if gi is None:
                    continue
                key = id(v)
                g[key] = g[key] + gi if key in g else gi
        grads = {}
        for p in self.program.params:
            gp = g.get(id(p.value))
            grads[p.name] = gp if gp is not None else np.zeros(self.shape_of(p.shape))
        return grads

    # whole-graph ops ---------------------------------------------------------------
    def _input(self, op: Op) -> np.ndarray:
        name = op.attrs["name"]
        v = op.results[0]
        ds = self.ds
        if name == "features":
            want = self.shape_of(v.shape)[0]
            if ds.features.shape[1] != want:
                raise ExecutionError(f"features have width {ds.features.shape[1]} but the "
                                     f"model reads {want}")
            return ds.features.astype(np.float64)
        if name == "labels":
            return ds.labels
        if name.endswith("_mask"):
            return ds.masks[name[: -len("_mask")]]
        if name not in ds.edge_data:
            raise ExecutionError(f"the dataset has no edge data '{name}' (edge_{name}.npy)")
        arr = ds.edge_data[name]
        shape = self.shape_of(v.shape)
        if v.dtype == "i32":
            if arr.dtype != np.int32 or arr.ndim != 1:
                raise ExecutionError(f"edge data '{name}' must be int32 [E]")
            return arr.astype(np.int64)
        if arr.dtype != np.float32:
            raise ExecutionError(f"edge data '{name}' must be float32")
        arr = arr.astype(np.float64)
        if arr.ndim == 1:
            arr = arr.reshape((-1,) + (1,) * len(shape)) if shape else arr
        if arr.shape[1:] != shape:
            raise ExecutionError(f"edge data '{name}' has rows of shape {arr.shape[1:]} "
                                 f"but the model reads {shape}")
        return arr

    def _run_top(self, op: Op, env, tape) -> None:
        name = op.name
        if name == "graph":
            return
        if name == "input":
            env[id(op.results[0])] = self._input(op)
            return
        if name == "degree":
            deg = self.ds.in_degree() if op.attrs["direction"] == "in" else self.ds.out_degree()
            env[id(op.results[0])] = deg.astype(np.float64).reshape(-1, 1)
            return
        if name == "scatter":
            x = env[id(op.operands[1])]
            side = op.attrs["side"]
            idx = self.src if side == "src" else self.dst
            env[id(op.results[0])] = x[idx]
            segs = self._segs[side]

            def back(gs, segs=segs):
                return [None, _segment_reduce(gs[0], segs, "sum")[0]]

            tape.append(_Node("scatter", op.operands, op.results, back))
            return
        if name == "gather":
            x = env[id(op.operands[1])]
            acc, side = op.attrs["acc"], op.attrs["side"]
            segs = self._segs[side]
            out, arg = _segment_reduce(x, segs, acc)
            env[id(op.results[0])] = out
            idx = self.src if side == "src" else self.dst
            E = x.shape[0]

            def back(gs, acc=acc, segs=segs, idx=idx, arg=arg, shape=x.shape):
                g = gs[0]
                if acc == "sum":
                    return [None, g[idx]]
                if acc == "mean":
                    cnt = np.maximum(segs.counts, 1).reshape((-1,) + (1,) * (g.ndim - 1))
                    return [None, (g / cnt)[idx]]
                ge = np.zeros(shape)
                if arg is None:
                    return [None, ge]
                flat_g = g.reshape(g.shape[0], -1)
                flat_a = arg.reshape(arg.shape[0], -1)
                flat_e = ge.reshape(E, -1)
                rows, cols = np.nonzero(flat_a >= 0)
                np.add.at(flat_e, (flat_a[rows, cols], cols), flat_g[rows, cols])
                return [None, ge]

            tape.append(_Node("gather", op.operands, op.results, back))
            return
        if name in ("apply_edge", "apply_vertex"):
            self._run_stage(op, env, tape)
            return
        if name == "softmax_cross_entropy":
            self._run_loss(op, env, tape)
            return
        raise ExecutionError(f"the executor has no rule for 'gnn.{name}'")

    def _run_loss(self, op: Op, env, tape) -> None:
        logits = env[id(op.operands[0])]
        labels = env[id(op.operands[1])]
        mask = env[id(op.operands[2])]
        sel = mask & (labels >= 0)
        n = int(sel.sum())
        if n and labels[sel].max() >= logits.shape[1]:
            raise ExecutionError(f"label {labels[sel].max()} >= number of logits "
                                 f"{logits.shape[1]}")
        if n == 0:
            env[id(op.results[0])] = np.array(0.0)
            tape.append(_Node("loss", op.operands, op.results,
                              lambda gs: [np.zeros_like(logits), None, None]))
            return
        z = logits[sel]
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        y = labels[sel]
        env[id(op.results[0])] = np.array(-logp[np.arange(n), y].mean())

        def back(gs):
            p = np.exp(logp)
            p[np.arange(n), y] -= 1.0
            g = np.zeros_like(logits)
            g[sel] = p * (gs[0] / n)
            return [g, None, None]

        tape.append(_Node("loss", op.operands, op.results, back))

    # stages ---------------------------------------------------------------------
    def _run_stage(self, op: Op, env, tape) -> None:
        region = op.region
        n = self.E if op.name == "apply_edge" else self.V
        inputs = op.operands[1:]
        for arg, v in zip(region.args, inputs):
            env[id(arg)] = env[id(v)]
            tape.append(_Node("bind", [v], [arg], lambda gs: [gs[0]]))
        for arg, p in zip(region.param_args, op.params):
            env[id(arg)] = env[id(p.value)]
            tape.append(_Node("bind", [p.value], [arg], lambda gs: [gs[0]]))
        for inner in region.ops:
            self._run_row(inner, env, tape, n)
        for y, r in zip(region.yields, op.results):
            val = env[id(y)]
            if not y.batched:
                shape = val.shape
                env[id(r)] = np.broadcast_to(val, (n,) + shape).copy()
                tape.append(_Node("yield", [y], [r],
                                  lambda gs, shape=shape: [_sum_to(gs[0], shape)]))
            else:
                env[id(r)] = val
                tape.append(_Node("yield", [y], [r], lambda gs: [gs[0]]))

    def _run_row(self, op: Op, env, tape, n: int) -> None:
        name = op.name
        ins = [env[id(v)] for v in op.operands]
        out = op.results[0]
        rule = getattr(self, f"_row_{name}", None)
        if rule is None:
            if name in _UNARY:
                f, df = _UNARY[name]
                x = ins[0]
                y = f(x, op.attrs)
                env[id(out)] = y
                tape.append(_Node(name, op.operands, op.results,
                                  lambda gs, x=x, y=y, df=df, a=op.attrs: [gs[0] * df(x, y, a)]))
                return
            raise ExecutionError(f"the executor has no rule for 'gnn.{name}'")
        y, back = rule(op, ins, n)
        env[id(out)] = y
        tape.append(_Node(name, op.operands, op.results, back))

    def _align(self, arr: np.ndarray, v: Value, out_rank: int) -> np.ndarray:
        """Makes a batched scalar row broadcast against wider rows."""
        if v.batched and len(v.shape) < out_rank or (
                v.batched and len(v.shape) == 1 and v.shape[0] == 1 and out_rank > 1):
            return arr.reshape((arr.shape[0],) + (1,) * out_rank)
        return arr

    def _binary(self, op, ins, f, dfa, dfb):
        a_v, b_v = op.operands
        out_rank = len(op.results[0].shape)
        a = self._align(ins[0], a_v, out_rank)
        b = self._align(ins[1], b_v, out_rank)
        y = f(a, b)

        def back(gs):
            g = gs[0]
            ga = _sum_to(g * dfa(a, b), a.shape).reshape(ins[0].shape)
            gb = _sum_to(g * dfb(a, b), b.shape).reshape(ins[1].shape)
            return [ga, gb]

        return y, back

    def _row_add(self, op, ins, n):
        return self._binary(op, ins, np.add, lambda a, b: 1.0, lambda a, b: 1.0)

    def _row_sub(self, op, ins, n):
        return self._binary(op, ins, np.subtract, lambda a, b: 1.0, lambda a, b: -1.0)

    def _row_mul(self, op, ins, n):
        return self._binary(op, ins, np.multiply, lambda a, b: b, lambda a, b: a)

    def _row_div(self, op, ins, n):
        return self._binary(op, ins, np.divide, lambda a, b: 1.0 / b, lambda a, b: -a / (b * b))

    def _row_constant(self, op, ins, n):
        shape = self.shape_of(op.results[0].shape)
        return np.full(shape, op.attrs["value"], dtype=np.float64), lambda gs: []

    def _row_dropout(self, op, ins, n):
        x = ins[0]
        rate = op.attrs["rate"] if self._rate is None else self._rate
        if not self._dropout or rate == 0.0:
            return x, lambda gs: [gs[0]]
        keep = (self._rng.random(x.shape) >= rate) / (1.0 - rate)
        return x * keep, lambda gs: [gs[0] * keep]

    def _row_linear(self, op, ins, n):
        x, w = ins
        xv = op.operands[0]
        k = len(xv.shape)
        lead = 1 if xv.batched else 0
        xa = list(range(lead, lead + k))
        y = np.tensordot(x, w, axes=(xa, list(range(k))))
        o = w.ndim - k

        def back(gs):
            g = gs[0]
            gx = np.tensordot(g, w, axes=(list(range(lead, lead + o)), list(range(k, k + o))))
            if lead:
                gw = np.tensordot(x, g, axes=([0], [0]))
            else:
                gw = np.multiply.outer(x, g)
            return [gx, gw]

        return y, back

    def _row_typed_linear(self, op, ins, n):
        x, t, w = ins
        T = w.shape[0]
        if t.size and (t.min() < 0 or t.max() >= T):
            bad = int(t.min()) if t.min() < 0 else int(t.max())
            raise ExecutionError(f"edge type {bad} outside [0, {T}) of the typed linear's weight")
        N = x.shape[0]
        k = len(op.operands[0].shape)
        x2 = x.reshape(N, -1)
        w2 = w.reshape(T, x2.shape[1], -1)
        out_shape = w.shape[1 + k:]
        y2 = np.zeros((N, w2.shape[2]))
        groups = [(tau, np.nonzero(t == tau)[0]) for tau in range(T)]
        for tau, sel in groups:
            if sel.size:
                y2[sel] = x2[sel] @ w2[tau]

        def back(gs):
            g2 = gs[0].reshape(N, -1)
            gx = np.zeros_like(x2)
            gw = np.zeros_like(w2)
            for tau, sel in groups:
                if sel.size:
                    gx[sel] = g2[sel] @ w2[tau].T
                    gw[tau] = x2[sel].T @ g2[sel]
            return [gx.reshape(x.shape), None, gw.reshape(w.shape)]

        return y2.reshape((N,) + out_shape), back

    def _row_concat(self, op, ins, n):
        batched = any(v.batched for v in op.operands)
        parts = [np.broadcast_to(a, (n,) + a.shape) if batched and not v.batched else a
                 for a, v in zip(ins, op.operands)]
        y = np.concatenate(parts, axis=-1)
        sizes = np.cumsum([p.shape[-1] for p in parts])[:-1]

        def back(gs):
            pieces = np.split(gs[0], sizes, axis=-1)
            return [_sum_to(g, a.shape) for g, a in zip(pieces, ins)]

        return y, back

    def _row_row_dot(self, op, ins, n):
        a, b = ins
        vector = len(op.operands[0].shape) == 1
        y = (a * b).sum(axis=-1, keepdims=vector)

        def back(gs):
            g = gs[0] if vector else gs[0][..., None]
            return [_sum_to(g * b, a.shape), _sum_to(g * a, b.shape)]

        return y, back

    def _row_broadcast_heads(self, op, ins, n):
        a = ins[0]
        width = self.shape_of(op.results[0].shape)[-1]
        y = np.repeat(a[..., None], width, axis=-1)
        return y, lambda gs: [gs[0].sum(axis=-1)]


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _safe(f):
    def wrapped(*args):
        with np.errstate(all="ignore"):
            return f(*args)
    return wrapped


_UNARY = {
    "relu": (lambda x, a: np.maximum(x, 0.0), lambda x, y, a: (x > 0).astype(np.float64)),
    "sigmoid": (lambda x, a: _sigmoid(x), lambda x, y, a: y * (1.0 - y)),
    "tanh": (lambda x, a: np.tanh(x), lambda x, y, a: 1.0 - y * y),
    "exp": (lambda x, a: np.exp(x), lambda x, y, a: y),
    "log": (lambda x, a: np.log(x), lambda x, y, a: 1.0 / x),
    "neg": (lambda x, a: -x, lambda x, y, a: -1.0),
    "elu": (_safe(lambda x, a: np.where(x > 0, x, np.expm1(np.minimum(x, 0.0)))),
            lambda x, y, a: np.where(x > 0, 1.0, y + 1.0)),
    "sqrt": (lambda x, a: np.sqrt(x), lambda x, y, a: 0.5 / y),
    "rsqrt": (lambda x, a: 1.0 / np.sqrt(x), lambda x, y, a: -0.5 * y / x),
    "stop_gradient": (lambda x, a: x, lambda x, y, a: 0.0),
    "leaky_relu": (lambda x, a: np.where(x > 0, x, a["alpha"] * x),
                   lambda x, y, a: np.where(x > 0, 1.0, a["alpha"])),
}


# --- parameters ---------------------------------------------------------------------

def init_param(p: Param, shape: Tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Initial value per `#gnn.init` (docs/ProgramContract.md)."""
    if p.init == "zeros":
        return np.zeros(shape)
    if p.init == "ones":
        return np.ones(shape)
    if p.init == "constant":
        return np.full(shape, p.init_value)
    if p.init == "uniform":
        return rng.uniform(-p.init_value, p.init_value, size=shape)
    if p.init == "normal":
        return rng.normal(0.0, p.init_value, size=shape)
    size = int(np.prod(shape)) if shape else 1
    if len(shape) >= 2:
        fan_out = shape[-1]
        fan_in = size // fan_out
    else:
        fan_in = fan_out = size
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, size=shape)


def init_params(program: Program, executor: Executor, seed: int) -> Dict[str, np.ndarray]:
    """Seeded initial values; each parameter's draw depends only on the seed
    and its name."""
    import zlib
    out = {}
    for p, shape in zip(program.params, executor.param_shapes().values()):
        rng = np.random.default_rng([seed, zlib.crc32(p.name.encode())])
        out[p.name] = init_param(p, shape, rng)
    return out


def accuracy(logits: np.ndarray, labels: np.ndarray, mask: np.ndarray) -> float:
    sel = mask & (labels >= 0)
    if not sel.any():
        return 0.0
    return float((logits[sel].argmax(axis=1) == labels[sel]).mean())
