"""Tracing: the IR a model prints, and the errors a user's mistakes get."""

import re
import subprocess

import pytest

import gnnc as gn
from gnnc import F, C, Model, TraceError


def _line_of(marker):
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if marker in line and "_line_of" not in line:
                return i
    raise AssertionError(marker)


def test_gcn_layer_prints_stages():
    m = Model("layer")
    x = m.features()
    w = m.param("w", (F, 4))
    msg = m.apply_edge(lambda e: e.src * 0.5, src=x)
    h = m.apply_vertex(lambda a: gn.relu(a @ w), m.gather(msg, "mean"))
    ir = gn.to_mlir(m.output(m.apply_vertex(lambda h: h @ m.param("out", (4, C)), h)))
    assert '%w: tensor<?x4xf32> {gnn.param = "w", gnn.init = #gnn.init<glorot>, gnn.dims = ["features", ""]}' in ir
    assert "gnn.scatter %g, %x from src" in ir
    assert re.search(r"gnn.constant dense<0.5> : tensor<f32>", ir)
    assert "gnn.gather mean %g, %e to dst" in ir
    assert "gnn.softmax_cross_entropy" in ir


def test_shape_mismatch_points_at_user_line():
    m = Model("bad")
    x = m.features()
    w = m.param("w", (7, 4))
    with pytest.raises(TraceError) as err:
        m.apply_vertex(lambda v: v @ w, x)  # MARK-linear
    msg = str(err.value)
    assert f"test_frontend.py:{_line_of('MARK-linear')}: error: linear" in msg
    assert "does not match 'w' of shape (7, 4)" in msg


def test_elementwise_shape_mismatch():
    m = Model("bad")
    x = m.features(8)
    w = m.param("w", (8, 4))
    with pytest.raises(TraceError, match=r"add: rows of shapes \(4,\) and \(8,\) must have the same shape"):
        m.apply_vertex(lambda v: v @ w + v, x)


def test_stage_cannot_read_whole_tensors():
    m = Model("bad")
    x = m.features()
    d = m.degree("in")
    with pytest.raises(TraceError) as err:
        m.apply_vertex(lambda v: v * d, x)  # MARK-read
    assert f":{_line_of('MARK-read')}: error: apply_vertex reads a whole vertex tensor" in str(err.value)


def test_stage_cannot_read_rows_of_another_stage():
    m = Model("bad")
    x = m.features()
    leaked = []
    m.apply_vertex(lambda v: leaked.append(v) or v, x)
    with pytest.raises(TraceError, match="reads a row of another stage"):
        m.apply_vertex(lambda v: v + leaked[0], x)


def test_unknown_accumulator():
    m = Model("bad")
    e = m.apply_edge(lambda e: e.src, src=m.features())
    with pytest.raises(TraceError, match=r"unknown accumulator 'prod' \(expected one of sum, mean, max, min\)"):
        m.gather(e, "prod")


def test_edge_view_without_dst():
    m = Model("bad")
    with pytest.raises(TraceError, match=r"apply_edge reads edge.dst but no dst= vertex tensor was given"):
        m.apply_edge(lambda e: e.dst, src=m.features())


def test_parameter_errors():
    m = Model("bad")
    m.param("conv.w", (2, 2))
    with pytest.raises(TraceError, match="parameter 'conv.w' is declared twice"):
        m.param("conv.w", (2, 2))
    with pytest.raises(TraceError, match="invalid parameter name 'a..b'"):
        m.param("a..b", (2,))
    with pytest.raises(TraceError, match="unknown initialiser 'xavier'"):
        m.param("x", (2,), init="xavier")
    with pytest.raises(TraceError, match="invalid dimension 0"):
        m.param("y", (0, 2))


def test_linear_weight_must_be_parameter():
    m = Model("bad")
    x = m.features(4)
    with pytest.raises(TraceError, match="the weight must be a parameter"):
        m.apply_vertex(lambda v: gn.linear(v, gn.broadcast_heads(v, 3)), x)


def test_row_has_no_truth_value():
    m = Model("bad")
    with pytest.raises(TraceError, match="no truth value"):
        m.apply_vertex(lambda v: v if v else v, m.features())


def test_gather_of_vertex_tensor():
    m = Model("bad")
    with pytest.raises(TraceError, match="gather: expected an edge tensor"):
        m.gather(m.features())


def test_output_must_be_vectors():
    m = Model("bad")
    e = m.apply_edge(lambda e: e.src, src=m.features())
    with pytest.raises(TraceError, match="logits must be a vertex tensor"):
        m.output(e)


def test_traced_ir_verifies(tmp_path, root):
    """Every zoo model (and a few variants) passes gnn-opt's verifier."""
    import os
    from gnnc import zoo
    tool = os.path.join(os.environ.get("GNNC_BIN_DIR", os.path.join(root, "build", "bin")), "gnn-opt")
    if not os.path.exists(tool):
        pytest.skip("gnn-opt not built")
    progs = [zoo.gat(heads=2, hidden=3), zoo.gcn(hidden=7, dropout=0.1), zoo.ggnn(steps=3),
             zoo.deep_gcn(depth=5, hidden=4)]
    for prog in progs:
        text = gn.to_mlir(prog)
        proc = subprocess.run([tool, "-"], input=text.encode(), capture_output=True)
        assert proc.returncode == 0, proc.stderr.decode()
