"""The reference training loop and the parameter exchange format.

Optimizers follow PyTorch: `adam` is `torch.optim.Adam` (L2 weight decay added
to the gradient, bias-corrected moments, eps outside the square root), `sgd`
is `torch.optim.SGD` with momentum (the first step's buffer is the gradient,
no dampening). Parameters are exchanged as one `<name>.npy` (float32) per
parameter, the executable's `--save-params` / `--load-params` format.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

from .data.format import Dataset, DatasetError, read_npy, write_whole
from .executor import Executor, accuracy, init_params
from .program import Program


@dataclass
class OptimizerConfig:
    kind: str = "adam"
    lr: float = 0.01
    weight_decay: float = 0.0
    momentum: float = 0.9
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8

    def __post_init__(self):
        if self.kind not in ("adam", "sgd"):
            raise ValueError(f"unknown optimizer '{self.kind}' (expected adam or sgd)")
        if not self.lr > 0:
            raise ValueError(f"learning rate must be positive but is {self.lr}")
        if self.weight_decay < 0:
            raise ValueError(f"weight decay must be non-negative but is {self.weight_decay}")


class Optimizer:
    def __init__(self, config: OptimizerConfig):
        self.config = config
        self.state: Dict[str, dict] = {}

    def step(self, params: Dict[str, np.ndarray], grads: Dict[str, np.ndarray]) -> None:
        c = self.config
        for name, p in params.items():
            g = grads[name]
            if c.weight_decay:
                g = g + c.weight_decay * p
            st = self.state.setdefault(name, {"t": 0})
            st["t"] += 1
            if c.kind == "sgd":
                if c.momentum:
                    buf = st.get("buf")
                    buf = g.copy() if buf is None else c.momentum * buf + g
                    st["buf"] = buf
                    g = buf
                params[name] = p - c.lr * g
                continue
            m = st.get("m", np.zeros_like(p))
            v = st.get("v", np.zeros_like(p))
            m = c.beta1 * m + (1 - c.beta1) * g
            v = c.beta2 * v + (1 - c.beta2) * g * g
            st["m"], st["v"] = m, v
            mhat = m / (1 - c.beta1 ** st["t"])
            vhat = v / (1 - c.beta2 ** st["t"])
            params[name] = p - c.lr * mhat / (np.sqrt(vhat) + c.eps)


@dataclass
class EpochStats:
    epoch: int
    loss: float
    train_acc: float
    val_acc: float
    test_acc: float
    seconds: float


@dataclass
class TrainResult:
    params: Dict[str, np.ndarray]
    history: List[EpochStats] = field(default_factory=list)

    @property
    def final(self) -> EpochStats:
        return self.history[-1]


def evaluate(executor: Executor, params: Dict[str, np.ndarray]) -> Dict[str, float]:
    res = executor.run(params, grads=False, dropout=False)
    ds = executor.ds
    out = {f"{s}_acc": accuracy(res.logits, ds.labels, ds.masks[s]) for s in ("train", "val", "test")}
    out["loss"] = res.loss
    return out


def train(program: Program, dataset: Dataset, epochs: int = 200,
          optimizer: Optional[OptimizerConfig] = None, seed: int = 0,
          dropout: Optional[float] = None, params: Optional[Dict[str, np.ndarray]] = None,
          eval_every: int = 1, log=None) -> TrainResult:
    """Full-graph training: per epoch one forward/backward with dropout and one
    optimizer step, then an evaluation without dropout."""
    executor = Executor(program, dataset)
    params = dict(params) if params is not None else init_params(program, executor, seed)
    opt = Optimizer(optimizer or OptimizerConfig())
    rng = np.random.default_rng(seed)
    result = TrainResult(params)
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        step = executor.run(params, grads=True, dropout=True, rng=rng, dropout_override=dropout)
        opt.step(params, step.grads)
        seconds = time.perf_counter() - start
        if epoch % eval_every == 0 or epoch == epochs:
            ev = evaluate(executor, params)
            stats = EpochStats(epoch, step.loss, ev["train_acc"], ev["val_acc"], ev["test_acc"], seconds)
            result.history.append(stats)
            if log:
                log(f"epoch {epoch:4d}  loss {step.loss:.4f}  train {stats.train_acc:.4f}  "
                    f"val {stats.val_acc:.4f}  test {stats.test_acc:.4f}")
    result.params = params
    return result


def save_params(params: Dict[str, np.ndarray], directory: str) -> None:
    os.makedirs(directory, exist_ok=True)
    for name, value in params.items():
        arr = np.asarray(value, dtype=np.float32)
        # Whole or not at all, never into a FIFO (write_whole).
        write_whole(os.path.join(directory, f"{name}.npy"), lambda f, arr=arr: np.save(f, arr))


def load_params(program: Program, directory: str, shapes: Dict[str, tuple]) -> Dict[str, np.ndarray]:
    """Reads `<name>.npy` for every parameter of `program`, checking shapes."""
    out = {}
    for p in program.params:
        path = os.path.join(directory, f"{p.name}.npy")
        arr = read_npy(path, np.float32, what=f"parameter '{p.name}'")
        if arr.shape != tuple(shapes[p.name]):
            raise DatasetError(f"{p.name}.npy: shape {arr.shape} but the model needs "
                               f"{tuple(shapes[p.name])}")
        out[p.name] = arr.astype(np.float64)
    return out
