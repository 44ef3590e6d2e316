"""Prints a traced `Program` as `gnn` dialect IR (docs/Dialect.md)."""

from __future__ import annotations

from typing import List

from .program import Dim, Op, Program, Value, tensor_type, value_type


def fmt_float(x: float) -> str:
    """A float literal MLIR parses back to the same double."""
    s = repr(float(x))
    mantissa, _, exponent = s.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + ("e" + exponent if exponent else "")


def _init_attr(p) -> str:
    if p.init in ("constant", "uniform", "normal"):
        return f"#gnn.init<{p.init}, {fmt_float(p.init_value)}>"
    return f"#gnn.init<{p.init}>"


def _param_decl(p) -> str:
    attrs = [f'gnn.param = "{p.name}"', f"gnn.init = {_init_attr(p)}"]
    if any(isinstance(d, Dim) for d in p.shape):
        dims = ", ".join(f'"{d.binding}"' if isinstance(d, Dim) else '""' for d in p.shape)
        attrs.append(f"gnn.dims = [{dims}]")
    return f"{p.value.name}: {tensor_type(p.shape, 'f32')} {{{', '.join(attrs)}}}"


def _names(values: List[Value]) -> str:
    return ", ".join(v.name for v in values)


def _types(values: List[Value]) -> str:
    return ", ".join(value_type(v) for v in values)


def _results(op: Op) -> str:
    if len(op.results) == 1:
        return op.results[0].name
    return f"{op.results[0].name.split('#')[0]}:{len(op.results)}"


def _row_op(op: Op) -> str:
    r = op.results[0]
    ops = op.operands
    rt = value_type(r)
    name = op.name
    if name in ("relu", "sigmoid", "tanh", "exp", "log", "neg", "elu", "sqrt", "rsqrt",
                "stop_gradient"):
        return f"{r.name} = gnn.{name} {ops[0].name} : {rt}"
    if name == "leaky_relu":
        return (f"{r.name} = gnn.leaky_relu {ops[0].name} "
                f"{{alpha = {fmt_float(op.attrs['alpha'])} : f64}} : {rt}")
    if name == "dropout":
        return (f"{r.name} = gnn.dropout {ops[0].name} "
                f"{{rate = {fmt_float(op.attrs['rate'])} : f64}} : {rt}")
    if name == "constant":
        return f"{r.name} = gnn.constant dense<{fmt_float(op.attrs['value'])}> : {rt}"
    if name in ("add", "sub", "mul", "div", "linear", "typed_linear", "concat"):
        return f"{r.name} = gnn.{name} {_names(ops)} : ({_types(ops)}) -> {rt}"
    if name in ("row_dot", "broadcast_heads"):
        return f"{r.name} = gnn.{name} {_names(ops)} : {value_type(ops[0])} -> {rt}"
    raise ValueError(f"no printer for row op '{name}'")


def _stage(op: Op, indent: str) -> List[str]:
    graph, inputs = op.operands[0], op.operands[1:]
    params = [p.value for p in op.params]
    head = f"{indent}{_results(op)} = gnn.{op.name} {graph.name} ({_names(inputs)})"
    if params:
        head += f" params({_names(params)})"
    head += f" : ({_types(inputs)})"
    if params:
        head += f" params({_types(params)})"
    head += f" -> {_types(op.results)} {{"
    region = op.region
    args = region.args + region.param_args
    lines = [head, f"{indent}^bb0({', '.join(f'{a.name}: {value_type(a)}' for a in args)}):"]
    for inner in region.ops:
        lines.append(f"{indent}  {_row_op(inner)}")
    lines.append(f"{indent}  gnn.yield {_names(region.yields)} : {_types(region.yields)}")
    lines.append(f"{indent}}}")
    return lines


def _top_op(op: Op, indent: str) -> List[str]:
    ops, name = op.operands, op.name
    if name in ("apply_edge", "apply_vertex"):
        return _stage(op, indent)
    r = op.results[0]
    if name == "graph":
        text = f"{r.name} = gnn.graph : !gnn.graph"
    elif name == "input":
        text = f'{r.name} = gnn.input {ops[0].name} "{op.attrs["name"]}" : {value_type(r)}'
    elif name == "degree":
        text = f"{r.name} = gnn.degree {ops[0].name} {op.attrs['direction']} : {value_type(r)}"
    elif name == "scatter":
        text = (f"{r.name} = gnn.scatter {ops[0].name}, {ops[1].name} from "
                f"{op.attrs['side']} : {value_type(ops[1])} -> {value_type(r)}")
    elif name == "gather":
        text = (f"{r.name} = gnn.gather {op.attrs['acc']} {ops[0].name}, {ops[1].name} to "
                f"{op.attrs['side']} : {value_type(ops[1])} -> {value_type(r)}")
    elif name == "softmax_cross_entropy":
        text = (f"{r.name} = gnn.softmax_cross_entropy {_names(ops)} : "
                f"{_types(ops)} -> f32")
    else:
        raise ValueError(f"no printer for op '{name}'")
    return [indent + text]


def to_mlir(program: Program, header: str = "") -> str:
    """The program as a module holding its `gnn.model` function."""
    if program.loss is None:
        raise ValueError(f"model '{program.name}' has no output (call Model.output)")
    lines = [f"// {line}".rstrip() for line in header.strip("\n").splitlines()] if header else []
    lines.append("module {")
    decls = [_param_decl(p) for p in program.params]
    if decls:
        lines.append(f"  func.func @{program.name}(")
        lines.append(",\n".join("      " + d for d in decls) + ")")
    else:
        lines.append(f"  func.func @{program.name}()")
    logits_t = value_type(program.logits)
    lines.append(f"      -> (f32, {logits_t}) attributes {{gnn.model}} {{")
    for op in program.ops:
        lines.extend(_top_op(op, "    "))
    lines.append(f"    return {program.loss.name}, {program.logits.name} : f32, {logits_t}")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"
