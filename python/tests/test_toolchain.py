"""The compile/train helpers call gnn-compile and run the executable."""

import os

import pytest
from conftest import have_compiler

from gnnc import toolchain, zoo
from gnnc.toolchain import ToolchainError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


pytestmark = pytest.mark.skipif(not have_compiler(), reason="gnn-compile not built")


def test_compile_and_train_a_traced_program(tmp_path):
    exe = toolchain.compile(zoo.gcn(hidden=8), str(tmp_path / "gcn8"))
    assert os.access(exe, os.X_OK)
    summary = toolchain.train(exe, os.path.join(ROOT, "examples", "datasets", "polblogs"),
                              epochs=3, lr=0.02, seed=1)
    assert summary["model"] == "gcn" and summary["epochs"] == 3
    assert len(summary["history"]) == 3
    assert 0.0 <= summary["final"]["test_acc"] <= 1.0


def test_errors_carry_the_tools_message(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("module {}\n")
    with pytest.raises(ToolchainError, match="expected exactly one function marked 'gnn.model'"):
        toolchain.compile(str(bad), str(tmp_path / "x"))
    exe = toolchain.compile(zoo.gcn(), str(tmp_path / "gcn"))
    with pytest.raises(ToolchainError, match="unknown optimizer 'lamb'"):
        toolchain.train(exe, optimizer="lamb")
