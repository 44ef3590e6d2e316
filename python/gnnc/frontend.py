"""Writing SAGA-NN models in Python and tracing them to a `Program`.

A model is built on a `Model`: vertex tensors come from the dataset
(`features()`, `degree()`), edge tensors from `apply_edge` (which scatters the
vertex tensors it is given as `src=` / `dst=`), vertex tensors from `gather`
and `apply_vertex`. Stage functions compute on `Row`s with Python operators
(`+ - * /`, `@` for a linear) and the functions of this module (`relu`,
`sigmoid`, ...). Parameters (`Model.param`) may be used in any stage.

    m = Model("gcn")
    x = m.features()
    w = m.param("conv.weight", (F, 16))
    msg = m.apply_edge(lambda e: e.src, src=x)
    agg = m.gather(msg, "sum")
    h = m.apply_vertex(lambda a: relu(a @ w), agg)

Mistakes (shape mismatches, a stage reading a value it cannot see, an unknown
accumulator) raise `TraceError` naming the user's file and line.
"""

from __future__ import annotations

import inspect
import re
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

from .program import (C, Dim, DimT, F, Op, Param, Program, Region, Shape,
                      TraceError, Value, fail, shape_str, user_location)

ACCUMULATORS = ("sum", "mean", "max", "min")
SIDES = ("src", "dst")
INITS = ("glorot", "zeros", "ones", "constant", "uniform", "normal")
VERTEX_INPUTS = ("features", "labels", "train_mask", "val_mask", "test_mask")

# The stage whose body is being traced (a stack: stage functions may not nest,
# but the check needs to know).
_current_stage: List["_StageBuilder"] = []


def _dim_eq(a: DimT, b: DimT) -> bool:
    if isinstance(a, Dim) or isinstance(b, Dim):
        return isinstance(a, Dim) and isinstance(b, Dim) and a.binding == b.binding
    return a == b


def _shape_eq(a: Shape, b: Shape) -> bool:
    return len(a) == len(b) and all(_dim_eq(x, y) for x, y in zip(a, b))


def _is_scalar(shape: Shape) -> bool:
    return len(shape) == 0 or (len(shape) == 1 and shape[0] == 1)


class Row:
    """A row value inside a stage function (a vertex's or an edge's row, a
    parameter, or something computed from them)."""

    def __init__(self, value: Value):
        self._value = value

    @property
    def shape(self) -> Shape:
        return self._value.shape

    @property
    def dtype(self) -> str:
        return self._value.dtype

    def __repr__(self) -> str:
        return f"Row{shape_str(self.shape)}"

    # Python operators -------------------------------------------------------
    def __add__(self, other): return _binary("add", self, other)
    def __radd__(self, other): return _binary("add", other, self)
    def __sub__(self, other): return _binary("sub", self, other)
    def __rsub__(self, other): return _binary("sub", other, self)
    def __mul__(self, other): return _binary("mul", self, other)
    def __rmul__(self, other): return _binary("mul", other, self)
    def __truediv__(self, other): return _binary("div", self, other)
    def __rtruediv__(self, other): return _binary("div", other, self)
    def __neg__(self): return _unary("neg", self)
    def __matmul__(self, weight): return linear(self, weight)

    def __bool__(self):
        fail("a row has no truth value while tracing (use the gnnc ops, "
             "not Python control flow, on rows)")


def _lift(method: str):
    def apply(self, *args):
        return getattr(_as_row(self, "parameter"), method)(*args)
    apply.__name__ = method
    return apply


# Inside a stage a parameter computes like a row (it becomes a region argument).
for _method in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
                "__truediv__", "__rtruediv__", "__neg__", "__matmul__"):
    setattr(Param, _method, _lift(_method))


class VertexTensor:
    """One row per vertex (a whole-graph value, outside stage functions)."""

    def __init__(self, model: "Model", value: Value):
        self.model = model
        self._value = value

    @property
    def shape(self) -> Shape:
        return self._value.shape

    def __repr__(self) -> str:
        return f"VertexTensor{shape_str(self.shape)}"


class EdgeTensor(VertexTensor):
    """One row per edge."""

    def __repr__(self) -> str:
        return f"EdgeTensor{shape_str(self.shape)}"


class _EdgeView:
    """What an `apply_edge` function sees: `.src`, `.dst` and `.data`."""

    def __init__(self, src, dst, data, stage):
        self._src, self._dst, self._data, self._stage = src, dst, data, stage

    @property
    def src(self) -> Row:
        if self._src is None:
            fail(f"{self._stage.kind} reads edge.src but no src= vertex tensor was given")
        return self._src

    @property
    def dst(self) -> Row:
        if self._dst is None:
            fail(f"{self._stage.kind} reads edge.dst but no dst= vertex tensor was given")
        return self._dst

    @property
    def data(self):
        if self._data is None:
            fail(f"{self._stage.kind} reads edge.data but no data= edge tensor was given")
        return self._data


class _StageBuilder:
    def __init__(self, model: "Model", kind: str, op: Op):
        self.model = model
        self.kind = kind
        self.op = op
        self.region = op.region
        self.counter = 0
        self.param_rows: Dict[int, Row] = {}
        self.names = set()

    def _free(self, name: str) -> bool:
        # Region names may repeat across sibling regions but must not shadow a
        # function-level name (the MLIR parser rejects the redefinition).
        return name not in self.names and name not in self.model._taken

    def _claim(self, name: str) -> str:
        self.names.add(name)
        self.model._region_names.add(name)
        return name

    def fresh(self, hint: str = "t") -> str:
        while True:
            name = f"%{hint}{self.counter}"
            self.counter += 1
            if self._free(name):
                return self._claim(name)

    def arg_name(self, hint: str) -> str:
        base = "%" + _sanitize(hint)
        name, i = base, 0
        while not self._free(name):
            i += 1
            name = f"{base}_{i}"
        return self._claim(name)

    def param_row(self, param: Param) -> Row:
        row = self.param_rows.get(id(param))
        if row is None:
            value = Value("row", param.shape, "f32", self.arg_name(param.name.split(".")[-1]),
                          stage=self.op, batched=False)
            self.region.param_args.append(value)
            self.op.params.append(param)
            row = Row(value)
            self.param_rows[id(param)] = row
        return row

    def emit(self, name: str, operands: Sequence[Value], shape: Shape,
             attrs: Optional[dict] = None, dtype: str = "f32") -> Row:
        batched = any(v.batched for v in operands)
        result = Value("row", tuple(shape), dtype, self.fresh(), stage=self.op,
                       batched=batched, location=user_location())
        self.region.ops.append(Op(name, list(operands), [result], attrs or {},
                                  location=result.location))
        return Row(result)


def _sanitize(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return s if s and not s[0].isdigit() else "_" + s


def _stage() -> _StageBuilder:
    if not _current_stage:
        fail("row operations are only valid inside apply_edge / apply_vertex functions")
    return _current_stage[-1]


def _as_row(x, what: str) -> Row:
    """Converts an operand of a row op: a Row of the current stage, a
    parameter (becomes a region argument) or a Python number (a constant)."""
    stage = _stage()
    if isinstance(x, Row):
        if x._value.stage is not stage.op:
            fail(f"{stage.kind} reads a row of another stage (defined at "
                 f"{x._value.location or 'an argument of that stage'}); a stage "
                 f"can only read its own arguments and the parameters")
        return x
    if isinstance(x, Param):
        return stage.param_row(x)
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        if x != x or x in (float("inf"), float("-inf")):
            fail(f"{what}: constants must be finite but got {x}")
        return constant(float(x))
    if isinstance(x, VertexTensor):
        kind = "edge" if isinstance(x, EdgeTensor) else "vertex"
        fail(f"{stage.kind} reads a whole {kind} tensor {shape_str(x.shape)} it "
             f"cannot see; pass it to the stage (src=/dst=/data= or as an "
             f"apply_vertex input)")
    fail(f"{what}: expected a row, a parameter or a number but got {type(x).__name__}")


def _check_f32(row: Row, op: str) -> None:
    if row.dtype != "f32":
        fail(f"{op} needs f32 rows but got a {row.dtype} row")


def _unary(name: str, x, attrs=None) -> Row:
    x = _as_row(x, name)
    _check_f32(x, name)
    return _stage().emit(name, [x._value], x.shape, attrs)


def _binary(name: str, a, b) -> Row:
    a = _as_row(a, name)
    b = _as_row(b, name)
    _check_f32(a, name)
    _check_f32(b, name)
    if _shape_eq(a.shape, b.shape):
        shape = a.shape
    elif _is_scalar(a.shape) and _is_scalar(b.shape):  # () vs (1,)
        shape = a.shape if a.shape else b.shape
    elif _is_scalar(b.shape):
        shape = a.shape
    elif _is_scalar(a.shape):
        shape = b.shape
    else:
        fail(f"{name}: rows of shapes {shape_str(a.shape)} and {shape_str(b.shape)} "
             f"must have the same shape or one must be a scalar")
    return _stage().emit(name, [a._value, b._value], shape)


# Row-level ops -----------------------------------------------------------------

def relu(x): return _unary("relu", x)
def sigmoid(x): return _unary("sigmoid", x)
def tanh(x): return _unary("tanh", x)
def exp(x): return _unary("exp", x)
def log(x): return _unary("log", x)
def neg(x): return _unary("neg", x)
def elu(x): return _unary("elu", x)
def sqrt(x): return _unary("sqrt", x)
def rsqrt(x): return _unary("rsqrt", x)


def stop_gradient(x):
    """The row itself; no gradient flows back through it (PyTorch's detach).
    A softmax's shift (GAT's per-destination max) is the use: the gradient
    through it is zero in exact arithmetic, so it need not be computed."""
    return _unary("stop_gradient", x)


def leaky_relu(x, alpha: float = 0.01):
    return _unary("leaky_relu", x, {"alpha": float(alpha)})


def dropout(x, rate: float):
    if not 0.0 <= rate < 1.0:
        fail(f"dropout rate must be in [0, 1) but is {rate}")
    return _unary("dropout", x, {"rate": float(rate)})


def constant(value, shape: Shape = ()) -> Row:
    """A constant row: a Python number (rank 0, or `shape` filled with it)."""
    stage = _stage()
    result = stage.emit("constant", [], tuple(shape), {"value": float(value)})
    result._value.batched = False
    return result


def linear(x, weight) -> Row:
    """Contracts every dimension of the row with the weight's leading ones."""
    x = _as_row(x, "linear")
    w = _as_row(weight, "linear")
    _check_f32(x, "linear")
    if w._value.batched:
        fail("linear: the weight must be a parameter (or computed from parameters "
             "only), not a per-row value")
    k = len(x.shape)
    if len(w.shape) <= k or not _shape_eq(w.shape[:k], x.shape):
        wname = weight.name if isinstance(weight, Param) else "weight"
        fail(f"linear: a row of shape {shape_str(x.shape)} does not match "
             f"'{wname}' of shape {shape_str(w.shape)} (the weight's leading "
             f"dimensions must be the row's shape)")
    return _stage().emit("linear", [x._value, w._value], w.shape[k:])


def typed_linear(x, etype, weight) -> Row:
    """`linear(x, weight[etype])`: one weight per edge type (GG-NN)."""
    x = _as_row(x, "typed_linear")
    t = _as_row(etype, "typed_linear")
    w = _as_row(weight, "typed_linear")
    if t.dtype != "i32" or t.shape != ():
        fail(f"typed_linear: the type must be an i32 scalar row but is a "
             f"{t.dtype} row of shape {shape_str(t.shape)}")
    if w._value.batched:
        fail("typed_linear: the weight must be a parameter, not a per-row value")
    k = len(x.shape)
    if len(w.shape) <= k + 1 or not _shape_eq(w.shape[1:k + 1], x.shape):
        fail(f"typed_linear: a row of shape {shape_str(x.shape)} does not match a "
             f"weight of shape {shape_str(w.shape)} (expected (types, *row, *out))")
    return _stage().emit("typed_linear", [x._value, t._value, w._value], w.shape[k + 1:])


def concat(*rows) -> Row:
    if not rows:
        fail("concat needs at least one row")
    rs = [_as_row(r, "concat") for r in rows]
    first = rs[0].shape
    if len(first) == 0:
        fail("concat: cannot concatenate scalar rows")
    for r in rs:
        if len(r.shape) != len(first) or not _shape_eq(r.shape[:-1], first[:-1]):
            fail(f"concat: rows {shape_str(first)} and {shape_str(r.shape)} differ in "
                 f"a dimension other than the last")
    lasts = [r.shape[-1] for r in rs]
    if any(isinstance(d, Dim) for d in lasts):
        if len(rs) > 1:
            fail("concat: rows with a dataset-bound last dimension cannot be concatenated")
        last: DimT = lasts[0]
    else:
        last = sum(lasts)
    return _stage().emit("concat", [r._value for r in rs], first[:-1] + (last,))


def row_dot(a, b) -> Row:
    """Dot product over the last dimension: (H, F) rows give (H,), vector rows (1,)."""
    a = _as_row(a, "row_dot")
    b = _as_row(b, "row_dot")
    if not _shape_eq(a.shape, b.shape) or len(a.shape) not in (1, 2):
        fail(f"row_dot: rows must have the same vector or heads x F shape but are "
             f"{shape_str(a.shape)} and {shape_str(b.shape)}")
    shape = (1,) if len(a.shape) == 1 else (a.shape[0],)
    return _stage().emit("row_dot", [a._value, b._value], shape)


def broadcast_heads(a, width: int) -> Row:
    """Per-head scalars (H,) to (H, width)."""
    a = _as_row(a, "broadcast_heads")
    if len(a.shape) != 1:
        fail(f"broadcast_heads: expected per-head scalars (H,) but got {shape_str(a.shape)}")
    return _stage().emit("broadcast_heads", [a._value], (a.shape[0], width))


# The model -----------------------------------------------------------------------

class Model:
    """Builds one model: data inputs, parameters, SAGA stages and the loss."""

    def __init__(self, name: str):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            fail(f"model name '{name}' must be an identifier")
        self.program = Program(name)
        self._taken = {"%g"}
        self._region_names = set()
        self._scatters: Dict[Tuple[int, str], EdgeTensor] = {}
        self._inputs: Dict[str, VertexTensor] = {}
        graph = Value("graph", name="%g")
        self._graph = graph
        self._emit_top("graph", [], [graph])

    # naming -----------------------------------------------------------------
    def _fresh(self, hint: str) -> str:
        """A function-level SSA name not used by any value or parameter."""
        base = "%" + _sanitize(hint)
        name, n = base, 0
        while name in self._taken or name in self._region_names:
            n += 1
            name = f"{base}{n}"
        self._taken.add(name)
        return name

    def _emit_top(self, name, operands, results, attrs=None) -> Op:
        loc = user_location()
        for r in results:
            r.location = loc
        op = Op(name, list(operands), list(results), attrs or {}, location=loc)
        self.program.ops.append(op)
        return op

    def _own(self, t, what: str) -> Value:
        if not isinstance(t, VertexTensor):
            fail(f"{what}: expected a vertex or edge tensor but got {type(t).__name__}")
        if t.model is not self:
            fail(f"{what}: the tensor belongs to model '{t.model.program.name}'")
        return t._value

    # data -------------------------------------------------------------------
    def _input(self, name: str, shape: Shape, dtype: str, edge: bool, hint: str):
        key = ("e:" if edge else "v:") + name
        if key in self._inputs:
            return self._inputs[key]
        v = Value("edge" if edge else "vertex", tuple(shape), dtype, self._fresh(hint))
        self._emit_top("input", [self._graph], [v], {"name": name})
        t = (EdgeTensor if edge else VertexTensor)(self, v)
        self._inputs[key] = t
        return t

    def features(self, width: DimT = F) -> VertexTensor:
        """The dataset's vertex features: (F,) rows, F bound from the data."""
        return self._input("features", (width,), "f32", False, "x")

    def labels(self) -> VertexTensor:
        return self._input("labels", (), "i64", False, "labels")

    def mask(self, split: str) -> VertexTensor:
        if split not in ("train", "val", "test"):
            fail(f"unknown split '{split}' (expected train, val or test)")
        return self._input(f"{split}_mask", (), "i1", False, f"{split}_mask")

    def edge_data(self, name: str, shape: Shape = (), dtype: str = "f32") -> EdgeTensor:
        """Per-edge data `edge_<name>.npy`: f32 rows (shape () or (k,)) or i32
        scalars (edge types)."""
        if name in VERTEX_INPUTS or not re.fullmatch(r"[A-Za-z0-9_]+", name):
            fail(f"invalid edge data name '{name}'")
        if dtype not in ("f32", "i32") or (dtype == "i32" and shape != ()):
            fail(f"edge data '{name}' must be f32 rows or i32 scalars")
        return self._input(name, tuple(shape), dtype, True, name)

    def degree(self, direction: str = "in") -> VertexTensor:
        """In- or out-degree per vertex as a (1,) f32 row."""
        if direction not in ("in", "out"):
            fail(f"unknown degree direction '{direction}' (expected in or out)")
        v = Value("vertex", (1,), "f32", self._fresh(f"d{direction}"))
        self._emit_top("degree", [self._graph], [v], {"direction": direction})
        return VertexTensor(self, v)

    def param(self, name: str, shape: Shape, init: str = "glorot",
              value: float = 0.0) -> Param:
        """A learnable parameter. `shape` may use `F` and `C`; `init` is one of
        glorot, zeros, ones, constant (value), uniform (±value), normal (std
        value)."""
        loc = user_location()
        if not re.fullmatch(r"[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*", name):
            fail(f"invalid parameter name '{name}' (expected a dotted name like 'conv1.weight')", loc)
        for p in self.program.params:
            if p.name == name:
                fail(f"parameter '{name}' is declared twice (first at {p.location})", loc)
        if init not in INITS:
            fail(f"unknown initialiser '{init}' (expected one of {', '.join(INITS)})", loc)
        if init in ("uniform", "normal") and not value > 0:
            fail(f"initialiser '{init}' needs a positive value", loc)
        for d in shape:
            if not isinstance(d, Dim) and (not isinstance(d, int) or d <= 0):
                fail(f"parameter '{name}' has an invalid dimension {d!r}", loc)
        p = Param(name, tuple(shape), init, float(value), location=loc)
        arg = Value("param", p.shape, "f32", self._param_ssa(name), location=loc)
        p.value = arg
        self.program.params.append(p)
        return p

    def _param_ssa(self, name: str) -> str:
        return self._fresh(name)

    # stages -----------------------------------------------------------------
    def scatter(self, tensor: VertexTensor, side: str = "src") -> EdgeTensor:
        """Each edge gets the row of its source (`src`) or destination (`dst`)."""
        v = self._own(tensor, "scatter")
        if isinstance(tensor, EdgeTensor):
            fail("scatter: expected a vertex tensor but got an edge tensor")
        if side not in SIDES:
            fail(f"unknown scatter side '{side}' (expected src or dst)")
        key = (id(v), side)
        if key not in self._scatters:
            e = Value("edge", v.shape, v.dtype, self._fresh("s" if side == "src" else "r"))
            self._emit_top("scatter", [self._graph, v], [e], {"side": side})
            self._scatters[key] = EdgeTensor(self, e)
        return self._scatters[key]

    def gather(self, tensor: EdgeTensor, acc: str = "sum", to: str = "dst",
               name: str = "a") -> VertexTensor:
        """Reduces edge rows into vertex rows with sum, mean, max or min."""
        v = self._own(tensor, "gather")
        if not isinstance(tensor, EdgeTensor):
            fail("gather: expected an edge tensor but got a vertex tensor")
        if acc not in ACCUMULATORS:
            fail(f"unknown accumulator '{acc}' (expected one of {', '.join(ACCUMULATORS)})")
        if to not in SIDES:
            fail(f"unknown gather side '{to}' (expected dst or src)")
        if v.dtype != "f32":
            fail(f"gather {acc}: needs f32 rows but got {v.dtype} rows")
        out = Value("vertex", v.shape, "f32", self._fresh(name))
        self._emit_top("gather", [self._graph, v], [out], {"acc": acc, "side": to})
        return VertexTensor(self, out)

    def _run_stage(self, kind: str, fn: Callable, inputs: List[Value],
                   arg_names: List[str], call: Callable, result_kind: str,
                   name: str):
        loc = user_location()
        op = Op(kind, [self._graph] + inputs, [], region=Region(), location=loc)
        stage = _StageBuilder(self, kind, op)
        rows = []
        for v, hint in zip(inputs, arg_names):
            a = Value("row", v.shape, v.dtype, stage.arg_name(hint), stage=op,
                      batched=True, location=loc)
            op.region.args.append(a)
            rows.append(Row(a))
        if _current_stage:
            fail(f"{kind} cannot be called inside another stage function")
        _current_stage.append(stage)
        try:
            out = call(rows)
        finally:
            _current_stage.pop()
        outs = out if isinstance(out, tuple) else (out,)
        if not outs:
            fail(f"the {kind} function must return at least one row", loc)
        yields = []
        for r in outs:
            if isinstance(r, Param):
                _current_stage.append(stage)
                try:
                    r = stage.param_row(r)
                finally:
                    _current_stage.pop()
            if not isinstance(r, Row):
                fail(f"the {kind} function must return rows but returned "
                     f"{type(r).__name__}", loc)
            if r._value.stage is not op:
                fail(f"the {kind} function returns a row of another stage", loc)
            yields.append(r._value)
        op.region.yields = yields
        base = self._fresh(name)
        names = [base] if len(yields) == 1 else [f"{base}#{i}" for i in range(len(yields))]
        results = [Value(result_kind, y.shape, y.dtype, n) for y, n in zip(yields, names)]
        for r in results:
            r.location = loc
        op.results = results
        self.program.ops.append(op)
        wrap = EdgeTensor if result_kind == "edge" else VertexTensor
        tensors = tuple(wrap(self, r) for r in results)
        return tensors if isinstance(out, tuple) else tensors[0]

    def apply_edge(self, fn: Callable, src: Optional[VertexTensor] = None,
                   dst: Optional[VertexTensor] = None, data=None, name: str = "e"):
        """Runs `fn(edge)` on every edge. `edge.src` / `edge.dst` are the rows
        of `src` / `dst` at the edge's source / destination (scattered here);
        `edge.data` is the edge's row of `data` (an edge tensor, or a dict or
        tuple of them). Returns an edge tensor (a tuple if `fn` returns one)."""
        inputs, names, layout = [], [], []
        if src is not None:
            inputs.append(self.scatter(src, "src")._value)
            names.append("src")
            layout.append("src")
        if dst is not None:
            inputs.append(self.scatter(dst, "dst")._value)
            names.append("dst")
            layout.append("dst")
        data_keys = None
        if data is not None:
            if isinstance(data, dict):
                data_keys = list(data.keys())
                items = list(data.items())
            elif isinstance(data, (tuple, list)):
                data_keys = list(range(len(data)))
                items = [(f"data{i}", t) for i, t in enumerate(data)]
            else:
                items = [("data", data)]
            for key, t in items:
                v = self._own(t, "apply_edge data")
                if not isinstance(t, EdgeTensor):
                    fail("apply_edge: data= takes edge tensors; pass vertex tensors as src= or dst=")
                inputs.append(v)
                names.append(str(key))
        if not inputs:
            fail("apply_edge needs at least one of src=, dst=, data=")

        def call(rows):
            it = iter(rows)
            s = next(it) if src is not None else None
            d = next(it) if dst is not None else None
            rest = list(it)
            if data is None:
                dv = None
            elif data_keys is None:
                dv = rest[0]
            elif isinstance(data, dict):
                dv = dict(zip(data_keys, rest))
            else:
                dv = tuple(rest)
            return fn(_EdgeView(s, d, dv, _current_stage[-1]))

        return self._run_stage("apply_edge", fn, inputs, names, call, "edge", name)

    def apply_vertex(self, fn: Callable, *tensors: VertexTensor, name: str = "h"):
        """Runs `fn(*rows)` on every vertex, one row per given vertex tensor.
        Returns a vertex tensor (a tuple if `fn` returns one)."""
        if not tensors:
            fail("apply_vertex needs at least one vertex tensor")
        inputs = []
        for t in tensors:
            v = self._own(t, "apply_vertex")
            if isinstance(t, EdgeTensor):
                fail("apply_vertex: got an edge tensor; gather it first")
            inputs.append(v)
        try:
            params = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            params = []
        names = [params[i] if i < len(params) else f"v{i}" for i in range(len(inputs))]
        return self._run_stage("apply_vertex", fn, inputs, names,
                               lambda rows: fn(*rows), "vertex", name)

    # loss ---------------------------------------------------------------------
    def output(self, logits: VertexTensor) -> Program:
        """Declares the logits; the loss is the masked softmax cross-entropy
        over the training vertices. Returns the finished program."""
        v = self._own(logits, "output")
        if isinstance(logits, EdgeTensor) or v.dtype != "f32" or len(v.shape) != 1:
            fail(f"output: logits must be a vertex tensor of f32 vectors but are "
                 f"{logits!r}")
        if self.program.logits is not None:
            fail("output: the model already has its output")
        labels = self.labels()._value
        mask = self.mask("train")._value
        loss = Value("scalar", (), "f32", "%loss")
        self._emit_top("softmax_cross_entropy", [v, labels, mask], [loss])
        self.program.loss = loss
        self.program.logits = v
        return self.program


__all__ = [
    "Model", "Row", "VertexTensor", "EdgeTensor", "TraceError", "F", "C",
    "relu", "sigmoid", "tanh", "exp", "log", "neg", "elu", "sqrt", "rsqrt",
    "stop_gradient", "leaky_relu", "dropout", "constant", "linear", "typed_linear", "concat",
    "row_dot", "broadcast_heads", "ACCUMULATORS",
]
