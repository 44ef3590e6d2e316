"""Issue 17, flags and output files of the Python tools: numeric options are
parsed whole and range-checked (argparse's type=int took ' 7', '+7', '1_000',
non-ASCII digits and any size); dataset and parameter files are written whole
or not at all, never into a FIFO (which blocked open() forever)."""

import argparse
import errno
import os

import numpy as np
import pytest

from gnnc import zoo
from gnnc._cli import float_in, int_in
from gnnc.data import DatasetError
from gnnc.data import __main__ as data_cli
from gnnc.data.format import save, write_whole
from gnnc.data.generate import sbm
from gnnc.train import save_params


@pytest.mark.parametrize("text", [" 7", "7 ", "+7", "1_000", "\u0667", "7x", "", "0x10",
                                  "-1", "11", "99999999999999999999999"])
def test_int_in_rejects(text):
    with pytest.raises(argparse.ArgumentTypeError) as err:
        int_in(0, 10)(text)
    assert str(err.value) == f"expected an integer in [0, 10] but got '{text}'"


def test_int_in_accepts_range_ends():
    assert int_in(-3, 10)("-3") == -3 and int_in(0, 10)("10") == 10


@pytest.mark.parametrize("text", ["nan", "inf", "-0.5", "1.5", "x", " 0.5"])
def test_float_in_rejects(text):
    with pytest.raises(argparse.ArgumentTypeError):
        float_in(0.0, 1.0)(text)


@pytest.mark.parametrize("argv, message", [
    (["generate", "rmat", "--vertices", "0", "--draws", "5"],
     "argument --vertices: expected an integer in [1, 2147483647] but got '0'"),
    (["generate", "rmat", "--vertices", "8", "--draws", "5", "--classes", "4294967297"],
     "argument --classes: expected an integer in [1, 16777216] but got '4294967297'"),
    (["generate", "rmat", "--vertices", "8", "--draws", "5", "--seed", "-1"],
     "argument --seed: expected an integer in [0, 9223372036854775807] but got '-1'"),
    (["generate", "sbm", "--vertices", "8", "--blocks", "2", "--p-in", "1.5", "--p-out", "0"],
     "argument --p-in: expected a number in [0, 1] but got '1.5'"),
    (["generate", "sbm", "--vertices", "8", "--blocks", "9", "--p-in", "0.5", "--p-out", "0"],
     "argument --blocks: expected at most --vertices (8) but got 9"),
    (["convert", "numpy", "e.npy", "-o", "d", "--num-vertices", "1e3"],
     "argument --num-vertices: expected an integer in [0, 2147483647] but got '1e3'"),
])
def test_data_cli_ranges(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        data_cli.main(argv + ["-o", "unused"] if "-o" not in argv else argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_zoo_depth_range(capsys):
    with pytest.raises(SystemExit):
        zoo.main(["--print", "deep_gcn", "--depth", "0"])
    assert "argument --depth: expected an integer in [1, 4096] but got '0'" in capsys.readouterr().err


def _dataset():
    ds = sbm(12, 2, 0.5, 0.1, num_features=3, seed=1)
    ds.masks = {s: np.ones(12, dtype=bool) for s in ("train", "val", "test")}
    return ds


def test_write_whole_refuses_fifo_and_directory(tmp_path):
    fifo = tmp_path / "fifo.npy"
    os.mkfifo(fifo)
    with pytest.raises(DatasetError, match="fifo.npy: is a FIFO, not a regular file"):
        write_whole(str(fifo), lambda f: f.write(b"x"))
    with pytest.raises(DatasetError, match="is a directory, not a regular file"):
        write_whole(str(tmp_path), lambda f: f.write(b"x"))


def test_write_whole_failure_keeps_old_file(tmp_path):
    path = tmp_path / "a.npy"
    path.write_bytes(b"old")

    def fail(f):
        f.write(b"partial")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    with pytest.raises(DatasetError, match="a.npy: No space left on device"):
        write_whole(str(path), fail)
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["a.npy"]


def test_save_refuses_fifo_member_and_file_as_directory(tmp_path):
    out = tmp_path / "ds"
    out.mkdir()
    os.mkfifo(out / "features.npy")
    with pytest.raises(DatasetError, match="features.npy: is a FIFO"):
        save(_dataset(), str(out))
    plain = tmp_path / "plain"
    plain.write_text("x")
    with pytest.raises(DatasetError, match="plain: exists and is not a directory"):
        save(_dataset(), str(plain))


def test_save_params_refuses_fifo(tmp_path):
    os.mkfifo(tmp_path / "w.npy")
    with pytest.raises(DatasetError, match="w.npy: is a FIFO"):
        save_params({"w": np.zeros(3)}, str(tmp_path))


def test_save_writes_readable_dataset_with_plain_mode(tmp_path):
    out = tmp_path / "ds"
    save(_dataset(), str(out))
    from gnnc.data import load
    assert load(str(out)).num_vertices == 12
    mask = os.umask(0)
    os.umask(mask)
    assert (os.stat(out / "meta.json").st_mode & 0o777) == (0o666 & ~mask)
    assert not [n for n in os.listdir(out) if ".tmp-" in n]


def test_generate_refuses_a_graph_memory_cannot_hold(tmp_path, capsys, monkeypatch):
    """Issue 17, item 2: the generator sizes what it will hold and refuses in
    one line before allocating (it ended in a MemoryError traceback)."""
    from gnnc.data import memory
    monkeypatch.setattr(memory, "available_memory", lambda: (1 << 30, "ulimit -v"))
    rc = data_cli.main(["generate", "rmat", "--vertices", "2000000000", "--draws", "10",
                        "-o", str(tmp_path / "g")])
    assert rc == 1
    err = capsys.readouterr().err.strip()
    assert err == ("error: generate rmat: a graph of 2000000000 vertices needs 447.0 GiB of "
                   "memory but 1.0 GiB is available (ulimit -v)")
    assert not (tmp_path / "g").exists()


def test_available_memory_reads_the_limits():
    from gnnc.data import memory
    avail, source = memory.available_memory()
    assert avail is not None and avail > 0 and source
    assert memory.format_bytes(0) == "0 B" and memory.format_bytes(3 << 29) == "1.5 GiB"
    assert memory.memory_error("x.npy: its data", 1 << 62).startswith(
        "x.npy: its data needs 4.0 EiB of memory but ")
