"""Compiling traced models with gnn-compile and running the executables.

    from gnnc import toolchain, zoo
    exe = toolchain.compile(zoo.gcn(), "gcn")          # a native executable
    summary = toolchain.train(exe, "examples/datasets/polblogs", epochs=100)
    summary["final"]["test_acc"]

`train` also accepts a traced program (it compiles it first). The tools are
found through $GNNC_BIN_DIR, then the repository's build/bin, then PATH.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from typing import Optional, Sequence, Union

from .printer import to_mlir
from .program import Program

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class ToolchainError(Exception):
    """gnn-compile or an executable failed; the message carries its stderr."""


def find_tool(name: str) -> str:
    for directory in (os.environ.get("GNNC_BIN_DIR"), os.path.join(_ROOT, "build", "bin")):
        if directory and os.path.exists(os.path.join(directory, name)):
            return os.path.join(directory, name)
    path = shutil.which(name)
    if not path:
        raise ToolchainError(f"{name} not found (build gnnc with scripts/setup.sh or set GNNC_BIN_DIR)")
    return path


def compile(program: Union[Program, str], output: Optional[str] = None,
            flags: Sequence[str] = ()) -> str:
    """Compiles a traced program (or a .mlir file) to an executable; returns
    its path (a temporary file when `output` is not given). `flags` go to
    gnn-compile (e.g. ["--no-fuse"], ["--dataset", dir])."""
    if output is None:
        fd, output = tempfile.mkstemp(prefix="gnnc-", suffix=".exe")
        os.close(fd)
    with tempfile.TemporaryDirectory() as tmp:
        if isinstance(program, Program):
            source = os.path.join(tmp, f"{program.name}.mlir")
            with open(source, "w") as f:
                f.write(to_mlir(program))
        else:
            source = program
        p = subprocess.run([find_tool("gnn-compile"), source, *flags, "-o", output],
                           capture_output=True, text=True)
    if p.returncode != 0:
        raise ToolchainError(f"gnn-compile failed:\n{p.stderr}")
    return output


def train(model: Union[Program, str], data: Optional[str] = None, **flags) -> dict:
    """Runs an executable (compiling `model` first when it is a program) and
    returns its JSON summary. Keyword flags map to the executable's options:
    epochs=100, lr=0.01, weight_decay=5e-4, optimizer="sgd", seed=1, ..."""
    exe = model if isinstance(model, str) else compile(model)
    with tempfile.TemporaryDirectory() as tmp:
        summary = os.path.join(tmp, "summary.json")
        cmd = [exe, "--json", summary, "--quiet"]
        if data is not None:
            cmd += ["--data", data]
        for key, value in flags.items():
            cmd += [f"--{key.replace('_', '-')}", str(value)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise ToolchainError(f"{os.path.basename(exe)} failed:\n{p.stderr}")
        with open(summary) as f:
            return json.load(f)
