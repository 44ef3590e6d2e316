"""kink_jump (gnnc/check.py) on two parameter draws of check_dump's: GAT's
at seed 1698922762, graph 0 (an edge's leaky ReLU input within f32 rounding
of zero: the float64 reference's own gradient jumps by ~2e-3 under a 1e-6
perturbation) and the next draw of the same graph (smooth: ~1e-6)."""

import numpy as np

from gnnc import zoo
from gnnc.check import Executor, init_params, kink_jump, random_dataset

rng = np.random.default_rng(1698922762)
program = zoo.ZOO["gat"]()
ds = random_dataset(rng)
ex = Executor(program, ds)
base = init_params(program, ex, int(rng.integers(1 << 30)))
for name in ("kink", "smooth"):
    params = {k: (v + 0.3 * rng.standard_normal(v.shape)).astype(np.float32)
              for k, v in base.items()}
    jump = kink_jump(ex, params, np.random.default_rng(0))
    print(f"{name}: {'jumps' if jump > 1e-4 else 'smooth'}")
