#!/usr/bin/env python3
"""PyTorch's kernels for what gnnrt-cuda-bench times, on the same GPU and
dataset: GCN's weighted aggregation as PyG's cached GCNConv runs it
(torch.sparse.mm of the normalised adj_t, a CSR matrix, with the features),
the same to the sources (the transposed matrix, the backward aggregation),
and the dense layer [V, F] x [F, W] (torch.matmul, TF32 off: FP32 as cuBLAS
in gnnrt). One JSON object per width on stdout, as gnnrt-cuda-bench prints.

    python3 bench/gpu_kernels.py DATASET_DIR [--widths 602,256,41] [--reps 20]
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import load_dataset  # noqa: E402


def median_ms(torch, reps, body):
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    body()
    times = []
    for _ in range(reps):
        start.record()
        body()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return sorted(times)[len(times) // 2]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("data")
    p.add_argument("--widths", default="")
    p.add_argument("--reps", type=int, default=20)
    args = p.parse_args(argv)
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    if not torch.cuda.is_available():
        print("error: PyTorch sees no GPU", file=sys.stderr)
        return 1
    ds = load_dataset(args.data)
    V = ds["indptr"].shape[0] - 1
    F = ds["features"].shape[1]
    C = int(ds["meta"]["num_classes"])
    widths = [int(w) for w in args.widths.split(",")] if args.widths else [F, 256, C]
    indptr, src = ds["indptr"], ds["indices"]
    in_deg = np.diff(indptr).astype(np.float32)
    out_deg = np.bincount(src, minlength=V).astype(np.float32)
    dst = np.repeat(np.arange(V), np.diff(indptr))
    w = 1.0 / np.sqrt(out_deg[src] * in_deg[dst])
    dev = torch.device("cuda")
    adj_t = torch.sparse_csr_tensor(torch.from_numpy(indptr), torch.from_numpy(src),
                                    torch.from_numpy(w.astype(np.float32)),
                                    size=(V, V)).to(dev)
    adj = adj_t.t().to_sparse_csr()
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                      "vertices": V, "edges": int(src.shape[0])}))
    for width in widths:
        x = torch.rand(V, width, device=dev)
        fwd = median_ms(torch, args.reps, lambda: torch.sparse.mm(adj_t, x))
        bwd = median_ms(torch, args.reps, lambda: torch.sparse.mm(adj, x))
        h = torch.rand(V, F, device=dev)
        wt = torch.rand(F, width, device=dev)
        gemm = median_ms(torch, args.reps, lambda: h @ wt)
        E = src.shape[0]
        print(json.dumps({
            "width": width, "spmm_forward_ms": round(fwd, 4), "spmm_backward_ms": round(bwd, 4),
            "spmm_forward_GFLOPs": round(2.0 * E * width / fwd / 1e6, 1),
            "gemm_ms": round(gemm, 4), "gemm_TFLOPs": round(2.0 * V * F * width / gemm / 1e9, 2)}))
        del x, h, wt
    return 0


if __name__ == "__main__":
    sys.exit(main())
