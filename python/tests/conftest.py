import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))

#: Fresh random inputs on every run; GNNC_TEST_SEED=<n> reproduces one.
SEED = int(os.environ.get("GNNC_TEST_SEED", np.random.SeedSequence().entropy % 2**31))


def have_compiler() -> bool:
    """Whether gnn-compile is built (tests that compile skip otherwise)."""
    from gnnc import toolchain
    try:
        toolchain.find_tool("gnn-compile")
        return True
    except toolchain.ToolchainError:
        return False


def pytest_report_header(config):
    return f"gnnc random seed: {SEED} (set GNNC_TEST_SEED={SEED} to reproduce)"


@pytest.fixture
def rng(request):
    # One stream per test, derived from the run's seed and the test's name.
    import zlib
    return np.random.default_rng([SEED, zlib.crc32(request.node.nodeid.encode())])


@pytest.fixture
def root():
    return ROOT
