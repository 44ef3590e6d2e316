#!/usr/bin/env python3
"""The peer models of the benchmark: PyTorch Geometric and DGL, written as a
user of each would write them (DESIGN.md, "Benchmark workloads").

Runs in bench/.venv-peers (bench/setup-peers.sh); bench/run.py starts one
process per cell:

    bench/.venv-peers/bin/python bench/peers.py --system pyg --model gcn \\
        --data DIR --epochs 10 --threads 2 --seed 0 --json out.json

Models (the same computation as gnnc's zoo at DESIGN's widths, dropout 0.5):
- gcn:  dropout -> conv(F->256) -> ReLU -> dropout -> conv(256->C).
        PyG GCNConv(cached=True) on the transposed adjacency as a torch.sparse
        CSR matrix (the normalised adjacency is computed once and cached; the
        aggregation is one SpMM); DGL GraphConv(norm="both").
- sage: the same stack with SAGEConv (mean; root weight + neighbour weight).
        PyG on the torch.sparse adjacency (fused SpMM with reduce="mean");
        DGL SAGEConv("mean").
- gat:  dropout -> GATConv(F -> 4 heads x 64) -> ELU -> dropout ->
        GATConv(256 -> C, 1 head); LeakyReLU slope 0.2, no attention dropout
        (gnnc's GAT has none). PyG GATConv on edge_index; DGL GATConv (its
        edge_softmax inside).
- ggcn: G-GCN (NeuGraph eq. 1-2), for an edge v -> u
        eta = sigmoid(W_H h_u + W_C h_v), h_u' = ReLU(W sum_{v->u} eta * h_v),
        F -> 128 -> C, dropout after the first layer. Hoisted by hand in both:
        W_H h and W_C h are computed per vertex, then gathered per edge (PyG: a
        MessagePassing subclass; DGL: u_add_v, then u_mul_e + sum).
The datasets already hold self-loops (gnnc's format), so no convolution adds
them. Adam, full-graph training, masked cross-entropy on the training
vertices; the time of an epoch is forward + backward + optimizer step, as
gnnc's executables time it. Test accuracy is taken once after the last epoch
(eval mode), as gnnc's `--eval-every EPOCHS`.
"""

import argparse
import json
import os
import resource
import sys
import time
import warnings

import numpy as np

os.environ.setdefault("DGLBACKEND", "pytorch")
warnings.filterwarnings("ignore")

WIDTHS = {"gcn": 256, "sage": 256, "gat": 64, "ggcn": 128}
HEADS = 4
SLOPE = 0.2


def load_dataset(directory):
    """The arrays of gnnc's dataset directory (CSC: indptr by destination,
    indices = sources)."""
    def npy(name):
        return np.load(os.path.join(directory, name))
    with open(os.path.join(directory, "meta.json")) as f:
        meta = json.load(f)
    return {
        "meta": meta,
        "indptr": npy("indptr.npy").astype(np.int64),
        "indices": npy("indices.npy").astype(np.int64),
        "features": npy("features.npy"),
        "labels": npy("labels.npy"),
        "train": npy("train_mask.npy"),
        "test": npy("test_mask.npy"),
    }


def glorot_(weight):
    import torch
    torch.nn.init.xavier_uniform_(weight)
    return weight


# ----------------------------------------------------------------------------
# PyTorch Geometric
# ----------------------------------------------------------------------------

def pyg_models(torch, V):
    import torch.nn.functional as F
    from torch_geometric.nn import GATConv, GCNConv, MessagePassing, SAGEConv

    class GCN(torch.nn.Module):
        def __init__(self, fin, hidden, classes, p):
            super().__init__()
            self.p = p
            self.conv1 = GCNConv(fin, hidden, cached=True, add_self_loops=False)
            self.conv2 = GCNConv(hidden, classes, cached=True, add_self_loops=False)

        def forward(self, x, g):
            x = F.dropout(x, self.p, self.training)
            x = F.dropout(F.relu(self.conv1(x, g["adj_t"])), self.p, self.training)
            return self.conv2(x, g["adj_t"])

    class SAGE(torch.nn.Module):
        def __init__(self, fin, hidden, classes, p):
            super().__init__()
            self.p = p
            self.conv1 = SAGEConv(fin, hidden, aggr="mean")
            self.conv2 = SAGEConv(hidden, classes, aggr="mean")

        def forward(self, x, g):
            x = F.dropout(x, self.p, self.training)
            x = F.dropout(F.relu(self.conv1(x, g["adj_t"])), self.p, self.training)
            return self.conv2(x, g["adj_t"])

    class GAT(torch.nn.Module):
        def __init__(self, fin, hidden, classes, p):
            super().__init__()
            self.p = p
            self.conv1 = GATConv(fin, hidden, heads=HEADS, negative_slope=SLOPE,
                                 add_self_loops=False)
            self.conv2 = GATConv(HEADS * hidden, classes, heads=1, concat=False,
                                 negative_slope=SLOPE, add_self_loops=False)

        def forward(self, x, g):
            x = F.dropout(x, self.p, self.training)
            x = F.dropout(F.elu(self.conv1(x, g["edge_index"])), self.p, self.training)
            return self.conv2(x, g["edge_index"])

    class GGCNConv(MessagePassing):
        """G-GCN layer, W_H h and W_C h hoisted to the vertices by hand."""

        def __init__(self, fin, fout):
            super().__init__(aggr="add")
            self.gate_dst = torch.nn.Parameter(glorot_(torch.empty(fin, fin)))
            self.gate_src = torch.nn.Parameter(glorot_(torch.empty(fin, fin)))
            self.weight = torch.nn.Parameter(glorot_(torch.empty(fin, fout)))

        def forward(self, h, edge_index):
            a = h @ self.gate_dst             # W_H h, per vertex (used as h_u, u = dst)
            b = h @ self.gate_src             # W_C h, per vertex (used as h_v, v = src)
            agg = self.propagate(edge_index, x=h, a=a, b=b)
            return agg @ self.weight

        def message(self, x_j, a_i, b_j):
            return torch.sigmoid(a_i + b_j) * x_j

    class GGCN(torch.nn.Module):
        def __init__(self, fin, hidden, classes, p):
            super().__init__()
            self.p = p
            self.conv1 = GGCNConv(fin, hidden)
            self.conv2 = GGCNConv(hidden, classes)

        def forward(self, x, g):
            x = F.dropout(F.relu(self.conv1(x, g["edge_index"])), self.p, self.training)
            return self.conv2(x, g["edge_index"])

    return {"gcn": GCN, "sage": SAGE, "gat": GAT, "ggcn": GGCN}


def pyg_graph(torch, ds, model):
    V = ds["indptr"].shape[0] - 1
    indptr = torch.from_numpy(ds["indptr"])
    src = torch.from_numpy(ds["indices"])
    if model in ("gcn", "sage"):
        # adj_t[dst, src]: gnnc's CSC by destination is exactly its CSR.
        adj_t = torch.sparse_csr_tensor(indptr, src, torch.ones(src.shape[0]), size=(V, V))
        return {"adj_t": adj_t}
    dst = torch.repeat_interleave(torch.arange(V), indptr[1:] - indptr[:-1])
    return {"edge_index": torch.stack([src, dst])}


# ----------------------------------------------------------------------------
# DGL
# ----------------------------------------------------------------------------

def dgl_models(torch, V):
    import dgl.function as fn
    import torch.nn.functional as F
    from dgl.nn import GATConv, GraphConv, SAGEConv

    class GCN(torch.nn.Module):
        def __init__(self, fin, hidden, classes, p):
            super().__init__()
            self.p = p
            self.conv1 = GraphConv(fin, hidden, norm="both")
            self.conv2 = GraphConv(hidden, classes, norm="both")

        def forward(self, x, g):
            x = F.dropout(x, self.p, self.training)
            x = F.dropout(F.relu(self.conv1(g, x)), self.p, self.training)
            return self.conv2(g, x)

    class SAGE(torch.nn.Module):
        def __init__(self, fin, hidden, classes, p):
            super().__init__()
            self.p = p
            self.conv1 = SAGEConv(fin, hidden, "mean")
            self.conv2 = SAGEConv(hidden, classes, "mean")

        def forward(self, x, g):
            x = F.dropout(x, self.p, self.training)
            x = F.dropout(F.relu(self.conv1(g, x)), self.p, self.training)
            return self.conv2(g, x)

    class GAT(torch.nn.Module):
        def __init__(self, fin, hidden, classes, p):
            super().__init__()
            self.p = p
            self.conv1 = GATConv(fin, hidden, num_heads=HEADS, negative_slope=SLOPE)
            self.conv2 = GATConv(HEADS * hidden, classes, num_heads=1, negative_slope=SLOPE)

        def forward(self, x, g):
            x = F.dropout(x, self.p, self.training)
            x = F.dropout(F.elu(self.conv1(g, x).flatten(1)), self.p, self.training)
            return self.conv2(g, x).squeeze(1)

    class GGCNConv(torch.nn.Module):
        """G-GCN layer, W_H h and W_C h hoisted to the vertices by hand; the
        gate per edge with u_add_v, the gated sum with u_mul_e + sum (one
        fused g-SpMM)."""

        def __init__(self, fin, fout):
            super().__init__()
            self.gate_dst = torch.nn.Parameter(glorot_(torch.empty(fin, fin)))
            self.gate_src = torch.nn.Parameter(glorot_(torch.empty(fin, fin)))
            self.weight = torch.nn.Parameter(glorot_(torch.empty(fin, fout)))

        def forward(self, g, h):
            with g.local_scope():
                g.srcdata["h"] = h
                g.srcdata["b"] = h @ self.gate_src    # W_C h_v
                g.dstdata["a"] = h @ self.gate_dst    # W_H h_u
                g.apply_edges(fn.u_add_v("b", "a", "s"))
                g.edata["eta"] = torch.sigmoid(g.edata["s"])
                g.update_all(fn.u_mul_e("h", "eta", "m"), fn.sum("m", "agg"))
                return g.dstdata["agg"] @ self.weight

    class GGCN(torch.nn.Module):
        def __init__(self, fin, hidden, classes, p):
            super().__init__()
            self.p = p
            self.conv1 = GGCNConv(fin, hidden)
            self.conv2 = GGCNConv(hidden, classes)

        def forward(self, x, g):
            x = F.dropout(F.relu(self.conv1(g, x)), self.p, self.training)
            return self.conv2(g, x)

    return {"gcn": GCN, "sage": SAGE, "gat": GAT, "ggcn": GGCN}


def dgl_graph(torch, ds, model):
    import dgl
    V = ds["indptr"].shape[0] - 1
    indptr = torch.from_numpy(ds["indptr"])
    src = torch.from_numpy(ds["indices"])
    dst = torch.repeat_interleave(torch.arange(V), indptr[1:] - indptr[:-1])
    # From the edge list, as a user would; the sparse formats DGL's kernels
    # use are made once here, not inside the first epoch.
    g = dgl.graph((src, dst), num_nodes=V)
    g.create_formats_()
    return g


# ----------------------------------------------------------------------------

def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--system", required=True, choices=("pyg", "dgl"))
    p.add_argument("--model", required=True, choices=sorted(WIDTHS))
    p.add_argument("--data", required=True)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                   help="where the model trains (cuda: PyG on the first GPU; epochs are "
                        "timed after a synchronisation, the peak is the allocator's)")
    p.add_argument("--json", required=True)
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)

    import torch
    import torch.nn.functional as F
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    t_load = time.perf_counter()
    ds = load_dataset(args.data)
    V = ds["indptr"].shape[0] - 1
    x = torch.from_numpy(ds["features"])
    y = torch.from_numpy(ds["labels"])
    train_idx = torch.from_numpy(np.nonzero(ds["train"] & (ds["labels"] >= 0))[0])
    test_idx = torch.from_numpy(np.nonzero(ds["test"] & (ds["labels"] >= 0))[0])
    if args.system == "pyg":
        import torch_geometric
        version = f"torch {torch.__version__}, torch_geometric {torch_geometric.__version__}"
        g = pyg_graph(torch, ds, args.model)
        Model = pyg_models(torch, V)[args.model]
    else:
        import dgl
        version = f"torch {torch.__version__}, dgl {dgl.__version__}"
        dgl.utils.set_num_threads(args.threads)
        g = dgl_graph(torch, ds, args.model)
        Model = dgl_models(torch, V)[args.model]
    del ds["indices"], ds["indptr"]
    load_s = time.perf_counter() - t_load

    fin, classes = x.shape[1], int(ds["meta"]["num_classes"])
    model = Model(fin, WIDTHS[args.model], classes, args.dropout)
    gpu = args.device == "cuda"
    if gpu:
        if args.system != "pyg":
            p.error("--device cuda: only --system pyg")
        if not torch.cuda.is_available():
            print("error: --device cuda: PyTorch sees no GPU", file=sys.stderr)
            return 1
        x, y = x.cuda(), y.cuda()
        train_idx, test_idx = train_idx.cuda(), test_idx.cuda()
        g = {k: v.cuda() for k, v in g.items()}
        model = model.cuda()
        torch.cuda.reset_peak_memory_stats()

    def sync():
        if gpu:
            torch.cuda.synchronize()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    rss_before = rss_mib()

    history = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        opt.zero_grad()
        sync()
        t0 = time.perf_counter()
        out = model(x, g)
        loss = F.cross_entropy(out[train_idx], y[train_idx])
        loss.backward()
        opt.step()
        sync()
        ms = (time.perf_counter() - t0) * 1e3
        history.append({"epoch": epoch, "loss": float(loss), "ms": ms})
        if not args.quiet:
            print(f"epoch {epoch:4d}  loss {float(loss):.4f}  {ms:.2f} ms", flush=True)
        if not np.isfinite(float(loss)):
            print(f"error: the loss became {float(loss)} at epoch {epoch}", file=sys.stderr)
            return 1

    model.eval()
    with torch.no_grad():
        pred = model(x, g).argmax(1)
    test_acc = float((pred[test_idx] == y[test_idx]).float().mean()) if len(test_idx) else 0.0
    summary = {
        "system": args.system, "model": args.model, "version": version,
        "threads": torch.get_num_threads(), "epochs": args.epochs, "seed": args.seed,
        "lr": args.lr, "weight_decay": args.weight_decay,
        "load_s": load_s, "rss_before_training_mib": rss_before,
        "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "device": torch.cuda.get_device_name(0) if gpu else "cpu",
        "peak_device_mib": torch.cuda.max_memory_allocated() / 2**20 if gpu else None,
        "final": {"loss": history[-1]["loss"] if history else None, "test_acc": test_acc},
        "history": history,
    }
    with open(args.json, "w") as f:
        json.dump(summary, f, indent=1)
    if not args.quiet:
        print(f"final: test {test_acc:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
