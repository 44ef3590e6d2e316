"""Dataset tools: the bad-dataset corpus, converters, generators, the CLI,
graph-tool files and the shipped dataset."""

import glob
import os
import subprocess
import sys

import numpy as np
import pytest

from gnnc import data
from gnnc.data import DatasetError

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(ROOT, "test", "datasets")
GT_DIR = os.path.join(ROOT, ".cache", "graph-tool", "collection")
BAD = sorted(glob.glob(os.path.join(CORPUS, "bad", "*")))


@pytest.mark.parametrize("case", BAD, ids=[os.path.basename(c) for c in BAD])
def test_bad_corpus_is_rejected(case):
    expected = open(os.path.join(case, "expected.txt")).read().strip()
    with pytest.raises(DatasetError) as err:
        data.validate(case)
    message = str(err.value)
    assert expected in message
    assert "\n" not in message


def test_corpus_covers_design_cases():
    names = {os.path.basename(c) for c in BAD}
    for needed in ("truncated-header", "corrupt-header", "wrong-dtype-indices",
                   "wrong-shape-features", "negative-index", "out-of-range-index",
                   "non-monotone-indptr", "indptr-last-not-E", "mask-length",
                   "label-too-large", "nan-features", "inf-features", "missing-labels",
                   "meta-num-vertices"):
        assert needed in names


@pytest.mark.parametrize("case", sorted(glob.glob(os.path.join(CORPUS, "good", "*"))))
def test_good_corpus_loads(case):
    ds = data.load(case)
    assert ds.num_vertices == 5


def test_cli_validate_reports_one_line(tmp_path):
    case = os.path.join(CORPUS, "bad", "label-too-large")
    proc = subprocess.run([sys.executable, "-m", "gnnc.data", "validate", case],
                          capture_output=True, text=True, env=_env())
    assert proc.returncode == 1
    assert proc.stderr.strip() == "error: labels.npy: label 2 outside [-1, num_classes=2)"


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python")
    return env


def test_networkx_in_three_lines(tmp_path):
    nx = pytest.importorskip("networkx")
    g = nx.karate_club_graph()
    ds = data.from_networkx(g, label="club")
    data.save(ds, str(tmp_path / "karate"))
    back = data.load(str(tmp_path / "karate"))
    assert back.num_vertices == 34 and back.num_edges == 2 * 78
    assert back.num_classes == 2 and not back.directed


def test_from_edges_orders_dedups_and_adds_loops(rng):
    src = rng.integers(0, 20, 100)
    dst = rng.integers(0, 20, 100)
    ds = data.from_edges(src, dst, 20, self_loops=True, symmetrize=True)
    pairs = set(zip(src.tolist(), dst.tolist())) | set(zip(dst.tolist(), src.tolist()))
    pairs |= {(v, v) for v in range(20)}
    assert ds.num_edges == len(pairs)
    got = set(zip(ds.src().tolist(), ds.dst().tolist()))
    assert got == pairs
    d = ds.dst()
    assert np.all(np.diff(d) >= 0)
    for v in range(20):
        s = ds.indices[ds.indptr[v]:ds.indptr[v + 1]]
        assert np.all(np.diff(s) > 0)


def test_scipy_numpy_and_edgelist_agree(tmp_path, rng):
    sp = pytest.importorskip("scipy.sparse")
    src = rng.integers(0, 15, 60)
    dst = rng.integers(0, 15, 60)
    a = data.from_edges(src, dst, 15)
    adj = sp.coo_matrix((np.ones(60), (src, dst)), shape=(15, 15))
    b = data.from_scipy(adj)
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    edges = tmp_path / "g.txt"
    edges.write_text("# comment\n" + "".join(f"{s}\t{d}\n" for s, d in zip(src, dst)))
    s, d, n = data.read_edge_list(str(edges))
    c = data.from_edges(s, d, n)
    assert c.num_edges == a.num_edges or n < 15  # ids are relabelled when some are unused
    np.save(tmp_path / "e.npy", np.stack([src, dst]))
    out = tmp_path / "ds"
    proc = subprocess.run([sys.executable, "-m", "gnnc.data", "convert", "numpy",
                           str(tmp_path / "e.npy"), "--num-vertices", "15", "-o", str(out)],
                          capture_output=True, text=True, env=_env())
    assert proc.returncode == 0, proc.stderr
    d2 = data.load(str(out))
    np.testing.assert_array_equal(d2.indices, a.indices)


def test_edge_list_errors(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("0 1\n2 x\n")
    with pytest.raises(DatasetError, match=r"bad.txt:2: vertex ids must be integers"):
        data.read_edge_list(str(bad))


def test_generators_are_seeded_and_valid(tmp_path):
    a = data.sbm(200, 4, 0.1, 0.01, seed=3, edge_types=2)
    b = data.sbm(200, 4, 0.1, 0.01, seed=3, edge_types=2)
    np.testing.assert_array_equal(a.indices, b.indices)
    assert a.num_classes == 4 and set(np.unique(a.edge_data["type"])) <= {0, 1}
    # Blocks are denser inside: most edges stay in their block.
    same = np.mean(a.labels[a.src()] == a.labels[a.dst()])
    assert same > 0.6
    r = data.rmat(1000, 8000, seed=1)
    assert r.num_vertices == 1000 and r.num_edges > 1000
    data.save(r, str(tmp_path / "r"))
    data.load(str(tmp_path / "r"))
    # RMAT is skewed: the top vertex has far more than the mean degree.
    deg = r.in_degree()
    assert deg.max() > 5 * deg.mean()


@pytest.mark.skipif(not os.path.isdir(GT_DIR), reason="graph-tool collection not fetched (scripts/setup.sh)")
def test_every_graph_tool_collection_graph_parses():
    from gnnc.data.gt import read_gt
    files = sorted(glob.glob(os.path.join(GT_DIR, "*.gt.gz")))
    assert len(files) == 19
    expected = {"karate": (34, 78), "polblogs": (1490, 19090), "pgp-strong-2009": (39796, 301498),
                "email-Enron": (36692, 183831), "cond-mat-2005": (40421, 175693)}
    for f in files:
        g = read_gt(f)
        name = os.path.basename(f)[:-len(".gt.gz")]
        if name in expected:
            assert (g.num_vertices, g.num_edges) == expected[name]
        assert g.src.size == g.dst.size
        assert "pos" in g.vertex_props


def test_gt_errors(tmp_path):
    from gnnc.data.gt import read_gt
    p = tmp_path / "x.gt"
    p.write_bytes(b"not a graph")
    with pytest.raises(DatasetError, match="x.gt: not a graph-tool file"):
        read_gt(str(p))
    if os.path.isdir(GT_DIR):
        import gzip
        raw = gzip.decompress(open(os.path.join(GT_DIR, "karate.gt.gz"), "rb").read())
        p.write_bytes(raw[:200])
        with pytest.raises(DatasetError, match="x.gt: truncated .gt file"):
            read_gt(str(p))


def test_shipped_dataset_validates_and_is_polblogs():
    ds = data.load(os.path.join(ROOT, "examples", "datasets", "polblogs"))
    assert ds.num_vertices == 1490 and ds.num_classes == 2 and ds.self_loops
    assert "polblogs" in ds.source and "python3-graph-tool" in ds.source
    assert ds.masks["train"].sum() > 0 and not (ds.masks["train"] & ds.masks["test"]).any()


@pytest.mark.parametrize("name", ["features.npy", "meta.json", "edge_weight.npy"])
def test_fifo_is_rejected_without_blocking(tmp_path, name):
    # A FIFO used to block open() until a writer came: the validator hung.
    import shutil
    case = tmp_path / "case"
    shutil.copytree(os.path.join(CORPUS, "good", "tiny"), case)
    os.remove(case / name)
    os.mkfifo(case / name)
    proc = subprocess.run([sys.executable, "-m", "gnnc.data", "validate", str(case)],
                          capture_output=True, text=True, env=_env(), timeout=20)
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"error: {name}: is a FIFO, not a regular file"


def test_save_refuses_edge_data_names_the_format_refuses(tmp_path):
    ds = data.load(os.path.join(CORPUS, "good", "tiny"))
    ds.edge_data["a-b"] = ds.edge_data["weight"]
    with pytest.raises(DatasetError, match=r"edge data name 'a-b' must contain only letters"):
        data.save(ds, str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()
