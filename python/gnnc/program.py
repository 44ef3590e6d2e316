"""The traced program: values, ops and stage regions.

The frontend (`gnnc.frontend`) builds a `Program`; `gnnc.printer` prints it as
`gnn` IR and `gnnc.executor` runs it with NumPy. Both read the same structure,
so what is printed is what the reference executes.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union


class Dim:
    """A row dimension bound from the dataset at run time (`?` in the IR)."""

    def __init__(self, binding: str):
        self.binding = binding

    def __repr__(self) -> str:
        return {"features": "F", "classes": "C"}.get(self.binding, self.binding)


#: The dataset's feature width and number of classes.
F = Dim("features")
C = Dim("classes")

DimT = Union[int, Dim]
Shape = Tuple[DimT, ...]

ELEMENT_TYPES = ("f32", "i1", "i32", "i64")


class TraceError(Exception):
    """An error in the user's model, reported at the user's line."""


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def user_location() -> str:
    """`file:line` of the innermost frame outside the gnnc package."""
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_PACKAGE_DIR + os.sep):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


def fail(message: str, location: Optional[str] = None) -> "NoReturn":  # noqa: F821
    raise TraceError(f"{location or user_location()}: error: {message}")


def shape_str(shape: Shape) -> str:
    return "(" + ", ".join(repr(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


@dataclass(eq=False)
class Value:
    """An SSA value. `kind` is 'graph', 'vertex', 'edge', 'param', 'row' or
    'scalar' (an f32 result of a loss op)."""

    kind: str
    shape: Shape = ()
    dtype: str = "f32"
    name: str = ""
    #: For rows: the stage that owns them; for rows of a stage, whether the
    #: value differs per row (False for parameters, constants and what only
    #: depends on them).
    stage: Optional["Op"] = None
    batched: bool = True
    location: str = ""

    def row_type(self) -> str:
        return tensor_type(self.shape, self.dtype)


def dims_str(shape: Shape) -> str:
    return "".join(("?" if isinstance(d, Dim) else str(d)) + "x" for d in shape)


def tensor_type(shape: Shape, dtype: str) -> str:
    return f"tensor<{dims_str(shape)}{dtype}>"


def value_type(v: Value) -> str:
    if v.kind == "graph":
        return "!gnn.graph"
    if v.kind == "vertex":
        return f"!gnn.vtensor<{dims_str(v.shape)}{v.dtype}>"
    if v.kind == "edge":
        return f"!gnn.etensor<{dims_str(v.shape)}{v.dtype}>"
    if v.kind == "scalar":
        return "f32"
    return tensor_type(v.shape, v.dtype)


@dataclass(eq=False)
class Region:
    """The body of a stage: block arguments (rows of the inputs, then the
    parameters), ops, and the yielded rows."""

    args: List[Value] = field(default_factory=list)
    param_args: List[Value] = field(default_factory=list)
    ops: List["Op"] = field(default_factory=list)
    yields: List[Value] = field(default_factory=list)


@dataclass(eq=False)
class Op:
    name: str  # the gnn op name without the dialect prefix, e.g. "scatter"
    operands: List[Value]
    results: List[Value]
    attrs: Dict[str, object] = field(default_factory=dict)
    #: Stage ops only: the parameters passed to the region, and the region.
    params: List["Param"] = field(default_factory=list)
    region: Optional[Region] = None
    location: str = ""


@dataclass(eq=False)
class Param:
    """A learnable parameter: a function argument of the model."""

    name: str
    shape: Shape
    init: str = "glorot"
    init_value: float = 0.0
    value: Optional[Value] = None  # the function argument
    location: str = ""

    @property
    def ssa(self) -> str:
        return self.value.name if self.value else "?"


@dataclass(eq=False)
class Program:
    name: str
    params: List[Param] = field(default_factory=list)
    ops: List[Op] = field(default_factory=list)
    loss: Optional[Value] = None
    logits: Optional[Value] = None

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def inputs(self) -> List[Op]:
        return [op for op in self.ops if op.name == "input"]

    def edge_data_names(self) -> List[str]:
        names = []
        for op in self.inputs():
            if op.results[0].kind == "edge" and op.attrs["name"] not in names:
                names.append(op.attrs["name"])
        return names


def resolve_shape(shape: Sequence[DimT], num_features: int, num_classes: int) -> Tuple[int, ...]:
    """Binds `F` and `C` to a dataset's sizes."""
    out = []
    for d in shape:
        if isinstance(d, Dim):
            out.append(num_features if d is F or d.binding == "features" else num_classes)
        else:
            out.append(int(d))
    return tuple(out)
