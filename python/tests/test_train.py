"""Optimizers against the PyTorch update rules written out by hand, the
parameter exchange format, and training reaching accuracy."""

import numpy as np
import pytest

from gnnc import zoo
from gnnc.data import DatasetError, sbm
from gnnc.executor import Executor
from gnnc.train import Optimizer, OptimizerConfig, load_params, save_params, train


def test_adam_matches_torch_rule(rng):
    p0 = rng.standard_normal((3, 4))
    grads = [rng.standard_normal((3, 4)) for _ in range(5)]
    cfg = OptimizerConfig("adam", lr=0.05, weight_decay=0.01)
    opt = Optimizer(cfg)
    params = {"w": p0.copy()}
    # torch.optim.Adam (amsgrad=False, maximize=False), step by step.
    p, m, v = p0.copy(), np.zeros_like(p0), np.zeros_like(p0)
    for t, g in enumerate(grads, 1):
        opt.step(params, {"w": g})
        g = g + 0.01 * p
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        denom = np.sqrt(v) / np.sqrt(1 - 0.999 ** t) + 1e-8
        p = p - 0.05 / (1 - 0.9 ** t) * m / denom
        np.testing.assert_allclose(params["w"], p, rtol=1e-6, atol=1e-9)


def test_sgd_momentum_matches_torch_rule(rng):
    p0 = rng.standard_normal(5)
    grads = [rng.standard_normal(5) for _ in range(4)]
    opt = Optimizer(OptimizerConfig("sgd", lr=0.1, momentum=0.9, weight_decay=0.001))
    params = {"b": p0.copy()}
    p, buf = p0.copy(), None
    for g in grads:
        opt.step(params, {"b": g})
        g = g + 0.001 * p
        buf = g.copy() if buf is None else 0.9 * buf + g
        p = p - 0.1 * buf
        np.testing.assert_allclose(params["b"], p, rtol=1e-12)


def test_optimizer_config_errors():
    with pytest.raises(ValueError, match="unknown optimizer 'rmsprop'"):
        OptimizerConfig("rmsprop")
    with pytest.raises(ValueError, match="learning rate must be positive"):
        OptimizerConfig(lr=0.0)


def test_params_round_trip(tmp_path, rng):
    ds = sbm(30, 2, 0.3, 0.05, num_features=3, seed=1)
    prog = zoo.gcn()
    ex = Executor(prog, ds)
    shapes = ex.param_shapes()
    params = {k: rng.standard_normal(s) for k, s in shapes.items()}
    save_params(params, str(tmp_path))
    back = load_params(prog, str(tmp_path), shapes)
    for k in params:
        np.testing.assert_allclose(back[k], params[k].astype(np.float32))
    np.save(tmp_path / "conv1.bias.npy", np.zeros(3, dtype=np.float32))
    with pytest.raises(DatasetError, match=r"conv1.bias.npy: shape \(3,\) but the model needs \(16,\)"):
        load_params(prog, str(tmp_path), shapes)
    save_params(params, str(tmp_path))
    (tmp_path / "conv2.bias.npy").unlink()
    with pytest.raises(DatasetError, match="conv2.bias.npy: missing file"):
        load_params(prog, str(tmp_path), shapes)


def test_training_learns_sbm_blocks():
    ds = sbm(300, 3, 0.06, 0.01, num_features=6, noise=1.5, seed=7)
    result = train(zoo.gcn(), ds, epochs=60, optimizer=OptimizerConfig(lr=0.02), seed=0)
    first, last = result.history[0], result.final
    assert last.loss < first.loss
    assert last.test_acc > 0.7, last
