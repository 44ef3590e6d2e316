"""gnnc's Python frontend: SAGA-NN models traced to `gnn` IR, an eager NumPy
reference executor (forward, reverse-mode gradients, training), and dataset
tools (`python -m gnnc.data`)."""

from .frontend import (ACCUMULATORS, EdgeTensor, Model, Row, VertexTensor,
                       broadcast_heads, concat, constant, dropout, elu, exp,
                       leaky_relu, linear, log, neg, relu, row_dot, rsqrt,
                       sigmoid, sqrt, stop_gradient, tanh, typed_linear)
from .printer import to_mlir
from .program import C, F, Program, TraceError

__all__ = [
    "Model", "Row", "VertexTensor", "EdgeTensor", "TraceError", "Program", "F", "C",
    "ACCUMULATORS", "relu", "sigmoid", "tanh", "exp", "log", "neg", "elu", "sqrt",
    "rsqrt", "stop_gradient", "leaky_relu", "dropout", "constant", "linear", "typed_linear",
    "concat", "row_dot", "broadcast_heads", "to_mlir",
]
