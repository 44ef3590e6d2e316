"""The model zoo, written with the Python frontend.

`examples/models/<name>.mlir` is generated from here:

    python -m gnnc.zoo --write examples/models     # regenerate
    python -m gnnc.zoo --check examples/models     # fail on any difference

Every model takes its dropout rate and widths as arguments; the defaults are
the checked-in ones.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, Dict, Tuple

from . import frontend as gn
from ._cli import int_in
from .data.format import write_whole
from .frontend import C, F, Model
from .printer import to_mlir
from .program import Program


def gcn_norm(m: Model):
    """Per-edge symmetric normalisation 1 / sqrt(d_out(u) d_in(v))."""
    din, dout = m.degree("in"), m.degree("out")
    return m.apply_edge(lambda e: gn.rsqrt(e.src * e.dst), src=dout, dst=din, name="norm")


def gcn(hidden: int = 16, dropout: float = 0.5) -> Program:
    """GCN (Kipf & Welling): h' = act(Â h W + b), Â = D^-1/2 A D^-1/2 from the
    graph's degrees. Two layers, F -> hidden -> C."""
    m = Model("gcn")
    x = m.features()
    norm = gcn_norm(m)
    w1 = m.param("conv1.weight", (F, hidden))
    b1 = m.param("conv1.bias", (hidden,), "zeros")
    w2 = m.param("conv2.weight", (hidden, C))
    b2 = m.param("conv2.bias", (C,), "zeros")

    def propagate(h):
        msg = m.apply_edge(lambda e: e.src * e.data, src=h, data=norm, name="m")
        return m.gather(msg, "sum")

    x0 = m.apply_vertex(lambda x: gn.dropout(x, dropout), x)
    h1 = m.apply_vertex(lambda acc: gn.dropout(gn.relu(acc @ w1 + b1), dropout),
                        propagate(x0))
    logits = m.apply_vertex(lambda acc: acc @ w2 + b2, propagate(h1), name="logits")
    return m.output(logits)


def sage_mean(hidden: int = 16, dropout: float = 0.5) -> Program:
    """GraphSAGE with the mean aggregator (PyG SAGEConv):
    h' = act(W_root h + W_neigh mean_{u->v} h_u + b). Two layers, F -> hidden -> C."""
    m = Model("sage_mean")
    x = m.features()
    x0 = m.apply_vertex(lambda x: gn.dropout(x, dropout), x)

    def layer(i, h, width_in, width_out, last):
        wr = m.param(f"conv{i}.root.weight", (width_in, width_out))
        wn = m.param(f"conv{i}.neigh.weight", (width_in, width_out))
        b = m.param(f"conv{i}.bias", (width_out,), "zeros")
        agg = m.gather(m.scatter(h, "src"), "mean")

        def body(h, acc):
            t = h @ wr + acc @ wn + b
            return t if last else gn.dropout(gn.relu(t), dropout)

        return m.apply_vertex(body, h, agg, name="logits" if last else "h")

    h1 = layer(1, x0, F, hidden, False)
    return m.output(layer(2, h1, hidden, C, True))


def sage_max(hidden: int = 16, dropout: float = 0.5) -> Program:
    """GraphSAGE with the max-pooling aggregator:
    h' = act(W_root h + W_neigh max_{u->v} relu(W_pool h_u + b_pool) + b).
    The pooling MLP is written per edge, as a user would; the hoisting pass
    moves it to the vertices. Two layers, F -> hidden -> C."""
    m = Model("sage_max")
    x = m.features()

    def layer(i, h, width_in, width_out, last):
        wp = m.param(f"conv{i}.pool.weight", (width_in, hidden))
        bp = m.param(f"conv{i}.pool.bias", (hidden,), "zeros")
        wr = m.param(f"conv{i}.root.weight", (width_in, width_out))
        wn = m.param(f"conv{i}.neigh.weight", (hidden, width_out))
        b = m.param(f"conv{i}.bias", (width_out,), "zeros")
        pooled = m.apply_edge(lambda e: gn.relu(e.src @ wp + bp), src=h, name="p")
        agg = m.gather(pooled, "max")

        def body(h, acc):
            t = h @ wr + acc @ wn + b
            return t if last else gn.dropout(gn.relu(t), dropout)

        return m.apply_vertex(body, h, agg, name="logits" if last else "h")

    h1 = layer(1, x, F, hidden, False)
    return m.output(layer(2, h1, hidden, C, True))


def gin(hidden: int = 16, dropout: float = 0.5) -> Program:
    """GIN (Xu et al.): h' = MLP((1 + eps) h + sum_{u->v} h_u), eps a learnable
    scalar, MLP = Linear-ReLU-Linear. Two layers, F -> hidden -> C."""
    m = Model("gin")
    x = m.features()

    def layer(i, h, width_in, width_out, last):
        eps = m.param(f"conv{i}.eps", (), "zeros")
        wa = m.param(f"conv{i}.mlp.0.weight", (width_in, hidden))
        ba = m.param(f"conv{i}.mlp.0.bias", (hidden,), "zeros")
        wb = m.param(f"conv{i}.mlp.2.weight", (hidden, width_out))
        bb = m.param(f"conv{i}.mlp.2.bias", (width_out,), "zeros")
        agg = m.gather(m.scatter(h, "src"), "sum")

        def body(h, acc):
            z = h * (1.0 + eps) + acc
            t = gn.relu(z @ wa + ba) @ wb + bb
            return t if last else gn.dropout(gn.relu(t), dropout)

        return m.apply_vertex(body, h, agg, name="logits" if last else "h")

    h1 = layer(1, x, F, hidden, False)
    return m.output(layer(2, h1, hidden, C, True))


def gat(heads: int = 4, hidden: int = 8, dropout: float = 0.5,
        slope: float = 0.2) -> Program:
    """GAT (Velickovic et al.): attention per head with the edge softmax built
    from SAGA stages (gather max, subtract, exp, gather sum, divide; the max,
    a shift for stability, passes no gradient).
    Layer 1: heads x hidden with ELU; layer 2: one head -> C."""
    m = Model("gat")
    x = m.features()

    def attention(hw, a_src, a_dst, width):
        """Softmax-weighted sum of the source rows over each vertex's in-edges."""
        multi = len(hw.shape) == 2
        logit = m.apply_edge(
            lambda e: gn.leaky_relu(gn.row_dot(e.src, a_src) + gn.row_dot(e.dst, a_dst), slope),
            src=hw, dst=hw, name="score")
        peak = m.gather(logit, "max", name="peak")
        # The max only shifts the exponent for stability: the normalised
        # weights do not depend on it, so no gradient is sent through it
        # (PyG's softmax detaches it too; DGL's edge_softmax does the same).
        ex = m.apply_edge(lambda e: gn.exp(e.data - gn.stop_gradient(e.dst)),
                          dst=peak, data=logit, name="ex")
        den = m.gather(ex, "sum", name="den")

        def weigh(e):
            alpha = e.data / e.dst
            return e.src * (gn.broadcast_heads(alpha, width) if multi else alpha)

        msg = m.apply_edge(weigh, src=hw, dst=den, data=ex, name="msg")
        return m.gather(msg, "sum", name="agg")

    w1 = m.param("conv1.weight", (F, heads, hidden))
    as1 = m.param("conv1.att_src", (heads, hidden))
    ad1 = m.param("conv1.att_dst", (heads, hidden))
    b1 = m.param("conv1.bias", (heads, hidden), "zeros")
    hw1 = m.apply_vertex(lambda x: gn.dropout(x, dropout) @ w1, x, name="hw")
    h1 = m.apply_vertex(lambda agg: gn.dropout(gn.elu(agg + b1), dropout),
                        attention(hw1, as1, ad1, hidden))

    w2 = m.param("conv2.weight", (heads, hidden, C))
    as2 = m.param("conv2.att_src", (C,))
    ad2 = m.param("conv2.att_dst", (C,))
    b2 = m.param("conv2.bias", (C,), "zeros")
    hw2 = m.apply_vertex(lambda h: h @ w2, h1, name="hw")
    logits = m.apply_vertex(lambda agg: agg + b2, attention(hw2, as2, ad2, C), name="logits")
    return m.output(logits)


def ggcn(hidden: int = 16, dropout: float = 0.5) -> Program:
    """G-GCN (NeuGraph eq. 1-2): for an edge v -> u,
    eta = sigmoid(W_H h_u + W_C h_v), h_u' = ReLU(W sum_{v->u} eta * h_v).
    Written per edge as in NeuGraph's Fig. 3; the hoisting pass moves W_H h_dst
    and W_C h_src to the vertices. Two layers, F -> hidden -> C."""
    m = Model("ggcn")
    x = m.features()

    def layer(i, h, width_in, width_out, last):
        wh = m.param(f"conv{i}.gate_dst.weight", (width_in, width_in))
        wc = m.param(f"conv{i}.gate_src.weight", (width_in, width_in))
        w = m.param(f"conv{i}.weight", (width_in, width_out))
        msg = m.apply_edge(lambda e: gn.sigmoid(e.dst @ wh + e.src @ wc) * e.src,
                           src=h, dst=h, name="m")
        agg = m.gather(msg, "sum")
        if last:
            return m.apply_vertex(lambda acc: acc @ w, agg, name="logits")
        return m.apply_vertex(lambda acc: gn.dropout(gn.relu(acc @ w), dropout), agg)

    h1 = layer(1, x, F, hidden, False)
    return m.output(layer(2, h1, hidden, C, True))


def commnet(hidden: int = 16) -> Program:
    """CommNet (NeuGraph Fig. 10): h' = ReLU(W_H h + W_C sum_{u->v} h_u); the
    ApplyEdge stage passes the source row through. Two layers, F -> hidden -> C."""
    m = Model("commnet")
    x = m.features()

    def layer(i, h, width_in, width_out, last):
        wh = m.param(f"conv{i}.self.weight", (width_in, width_out))
        wc = m.param(f"conv{i}.comm.weight", (width_in, width_out))
        agg = m.gather(m.apply_edge(lambda e: e.src, src=h, name="p"), "sum")

        def body(h, acc):
            t = h @ wh + acc @ wc
            return t if last else gn.relu(t)

        return m.apply_vertex(body, h, agg, name="logits" if last else "h")

    h1 = layer(1, x, F, hidden, False)
    return m.output(layer(2, h1, hidden, C, True))


def ggnn(hidden: int = 16, steps: int = 2, edge_types: int = 3) -> Program:
    """GG-NN (Li et al.; NeuGraph Fig. 12): messages A[type] h_src with one
    weight per edge type (typed linear), summed, then a GRU cell per vertex
    (PyTorch GRUCell: input = the message sum, hidden = the vertex state).
    Embedding F -> hidden, `steps` propagation steps sharing their weights,
    hidden -> C. Edge types come from the dataset's `edge_type.npy`."""
    m = Model("ggnn")
    x = m.features()
    etype = m.edge_data("type", (), "i32")
    w0 = m.param("embed.weight", (F, hidden))
    b0 = m.param("embed.bias", (hidden,), "zeros")
    a = m.param("prop.edge_weight", (edge_types, hidden, hidden))
    gw = {k: m.param(f"gru.w_{k}", (hidden, hidden)) for k in ("ir", "iz", "in", "hr", "hz", "hn")}
    gb = {k: m.param(f"gru.b_{k}", (hidden,), "zeros") for k in ("r", "z", "in", "hn")}
    wo = m.param("out.weight", (hidden, C))
    bo = m.param("out.bias", (C,), "zeros")

    def gru(h, msg):
        r = gn.sigmoid(msg @ gw["ir"] + h @ gw["hr"] + gb["r"])
        z = gn.sigmoid(msg @ gw["iz"] + h @ gw["hz"] + gb["z"])
        n = gn.tanh(msg @ gw["in"] + gb["in"] + r * (h @ gw["hn"] + gb["hn"]))
        return (1.0 - z) * n + z * h

    h = m.apply_vertex(lambda x: gn.tanh(x @ w0 + b0), x)
    for _ in range(steps):
        msg = m.apply_edge(lambda e: gn.typed_linear(e.src, e.data, a), src=h, data=etype,
                           name="m")
        h = m.apply_vertex(gru, h, m.gather(msg, "sum"))
    return m.output(m.apply_vertex(lambda h: h @ wo + bo, h, name="logits"))


def deep_gcn(depth: int = 16, hidden: int = 32) -> Program:
    """Deep residual GCN: h_0 = relu(x W_in + b_in),
    h_l = h_{l-1} + relu(Â h_{l-1} W_l + b_l) for l = 1..depth,
    logits = h_depth W_out + b_out."""
    if depth < 1 or hidden < 1:
        raise ValueError("depth and hidden must be positive")
    m = Model(f"deep_gcn{depth}")
    x = m.features()
    norm = gcn_norm(m)
    w_in = m.param("input.weight", (F, hidden))
    b_in = m.param("input.bias", (hidden,), "zeros")
    h = m.apply_vertex(lambda x: gn.relu(x @ w_in + b_in), x)
    for layer in range(1, depth + 1):
        w = m.param(f"conv{layer}.weight", (hidden, hidden))
        b = m.param(f"conv{layer}.bias", (hidden,), "zeros")
        msg = m.apply_edge(lambda e: e.src * e.data, src=h, data=norm, name="m")
        h = m.apply_vertex(lambda h, acc: h + gn.relu(acc @ w + b), h, m.gather(msg, "sum"))
    w_out = m.param("output.weight", (hidden, C))
    b_out = m.param("output.bias", (C,), "zeros")
    return m.output(m.apply_vertex(lambda h: h @ w_out + b_out, h, name="logits"))


#: name -> builder with the checked-in defaults. The file is <name>.mlir.
ZOO: Dict[str, Callable[[], Program]] = {
    "gcn": gcn,
    "sage_mean": sage_mean,
    "sage_max": sage_max,
    "gin": gin,
    "gat": gat,
    "ggcn": ggcn,
    "commnet": commnet,
    "ggnn": ggnn,
    "deep_gcn": deep_gcn,
}


def render(name: str, builder: Callable[..., Program] = None, **kwargs) -> str:
    builder = builder or ZOO[name]
    doc = " ".join((builder.__doc__ or "").split())
    header = f"Generated by `python -m gnnc.zoo --write` from gnnc/zoo.py ({name}).\n"
    program = builder(**kwargs)
    return to_mlir(program, header + _wrap(doc))


def _wrap(text: str, width: int = 76) -> str:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gnnc.zoo",
        description="Print, write or check the gnn IR of the model zoo.")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--print", metavar="MODEL", choices=sorted(ZOO),
                       help="print one model's IR")
    group.add_argument("--write", metavar="DIR", help="write <model>.mlir for every model")
    group.add_argument("--check", metavar="DIR",
                       help="fail if any <model>.mlir in DIR differs from the zoo")
    parser.add_argument("--depth", type=int_in(1, 4096),
                        help="depth of deep_gcn (with --print), in [1, 4096]")
    args = parser.parse_args(argv)

    if args.print:
        kwargs = {"depth": args.depth} if args.depth and args.print == "deep_gcn" else {}
        sys.stdout.write(render(args.print, **kwargs))
        return 0
    directory = args.write or args.check
    if not os.path.isdir(directory):
        parser.error(f"{directory}: not a directory")
    stale = []
    for name in ZOO:
        path = os.path.join(directory, f"{name}.mlir")
        text = render(name)
        if args.write:
            write_whole(path, lambda f, text=text: f.write(text.encode()))
            continue
        try:
            with open(path) as f:
                current = f.read()
        except OSError as e:
            stale.append(f"{path}: {e.strerror}")
            continue
        if current != text:
            stale.append(f"{path}: differs from gnnc/zoo.py (regenerate with "
                         f"`python -m gnnc.zoo --write {directory}`)")
    for line in stale:
        print(line, file=sys.stderr)
    if args.check and not stale:
        print(f"{len(ZOO)} models up to date")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
