#!/usr/bin/env python3
"""The peers' mini-batch training (issue 21's benchmark): GraphSAGE-mean
trained on sampled neighbourhoods as a user of each library writes it.

Runs in bench/.venv-peers (bench/setup-peers.sh); bench/minibatch.py starts
one process per cell:

    bench/.venv-peers/bin/python bench/minibatch_peers.py --system dgl \\
        --data DIR --batch-size 1024 --fanouts 25,10 --epochs 3 --threads 2 \\
        --json out.json

Model (gnnc's zoo sage_mean at DESIGN's widths): SAGEConv("mean", F -> 256)
-> ReLU -> dropout 0.5 -> SAGEConv("mean", 256 -> C), Adam.

- pyg: `torch_geometric.loader.NeighborLoader(data, num_neighbors=[25, 10],
  batch_size=1024, input_nodes=train, shuffle=True)` over `Data(x, y,
  edge_index)`, the loss on the first `batch.batch_size` rows (PyG's
  documented recipe). NeighborLoader samples with pyg-lib or torch-sparse;
  neither is on PyPI for this torch, so without them the cell reports that.
- dgl: `dgl.dataloading.DataLoader(g, train, NeighborSampler([10, 25]),
  batch_size=1024, shuffle=True)` (DGL lists fanouts output layer first), the
  model on the message flow graph's blocks.

An epoch is every batch of the training vertices: sampling, gathering the
input rows, forward, backward, optimizer step (what gnnc's mini-batch epoch
times). Sampled edges are the edges of what the model runs on (PyG: the
subgraph's edge_index; DGL: the blocks' edges). The test accuracy is taken
after the last epoch on full neighbourhoods (the whole graph), as gnnc
evaluates (PyG: on a torch-sparse SparseTensor adjacency, PyG's
memory-efficient aggregation).
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

HIDDEN = 256


def load(directory):
    def npy(name):
        return np.load(os.path.join(directory, name))
    with open(os.path.join(directory, "meta.json")) as f:
        meta = json.load(f)
    indptr = npy("indptr.npy").astype(np.int64)
    return {
        "meta": meta,
        "dst": np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr)),
        "src": npy("indices.npy").astype(np.int64),
        "features": npy("features.npy"),
        "labels": npy("labels.npy"),
        "train": npy("train_mask.npy"),
        "test": npy("test_mask.npy"),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--system", required=True, choices=("pyg", "dgl"))
    p.add_argument("--data", required=True)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--fanouts", default="25,10")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", required=True)
    args = p.parse_args(argv)
    fanouts = [int(f) for f in args.fanouts.split(",")]

    import torch
    import torch.nn.functional as F
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    ds = load(args.data)
    x = torch.from_numpy(ds["features"])
    y = torch.from_numpy(ds["labels"])
    train_idx = torch.from_numpy(np.nonzero(ds["train"] & (ds["labels"] >= 0))[0])
    test_idx = torch.from_numpy(np.nonzero(ds["test"] & (ds["labels"] >= 0))[0])
    fin, classes = x.shape[1], int(ds["meta"]["num_classes"])

    if args.system == "pyg":
        import torch_geometric
        from torch_geometric.data import Data
        from torch_geometric.loader import NeighborLoader
        from torch_geometric.nn import SAGEConv
        version = f"torch {torch.__version__}, torch_geometric {torch_geometric.__version__}"
        edge_index = torch.from_numpy(np.stack([ds["src"], ds["dst"]]))
        data = Data(x=x, y=y, edge_index=edge_index)
        try:
            loader = NeighborLoader(data, num_neighbors=fanouts, batch_size=args.batch_size,
                                    input_nodes=train_idx, shuffle=True)
            iter(loader).__next__()
        except Exception as e:  # ImportError from its sampler backend
            with open(args.json, "w") as f:
                json.dump({"system": "pyg", "version": version,
                           "unavailable": f"NeighborLoader: {e}"[:400]}, f)
            print(f"error: NeighborLoader: {e}", file=sys.stderr)
            return 3

        class SAGE(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = SAGEConv(fin, HIDDEN, aggr="mean")
                self.conv2 = SAGEConv(HIDDEN, classes, aggr="mean")

            def forward(self, h, edge_index):
                h = F.relu(self.conv1(h, edge_index))
                h = F.dropout(h, 0.5, self.training)
                return self.conv2(h, edge_index)

        model = SAGE()

        def batches():
            for batch in loader:
                n = batch.batch_size
                yield (lambda b=batch: model(b.x, b.edge_index)[:n]), batch.y[:n], \
                    int(batch.edge_index.size(1))

        def full():
            # The whole graph as a SparseTensor (torch-sparse): SAGEConv then
            # aggregates by a sparse product instead of materialising a message
            # per edge (an edge_index at the Reddit shape asks 275 GB).
            from torch_sparse import SparseTensor
            adj_t = SparseTensor(row=edge_index[1], col=edge_index[0],
                                 sparse_sizes=(x.shape[0], x.shape[0]))
            return model(x, adj_t)
    else:
        import dgl
        from dgl.nn import SAGEConv
        version = f"torch {torch.__version__}, dgl {dgl.__version__}"
        dgl.utils.set_num_threads(args.threads)
        g = dgl.graph((torch.from_numpy(ds["src"]), torch.from_numpy(ds["dst"])),
                      num_nodes=x.shape[0])
        sampler = dgl.dataloading.NeighborSampler(list(reversed(fanouts)))
        loader = dgl.dataloading.DataLoader(g, train_idx, sampler, batch_size=args.batch_size,
                                            shuffle=True, drop_last=False, num_workers=0)

        class SAGE(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = SAGEConv(fin, HIDDEN, "mean")
                self.conv2 = SAGEConv(HIDDEN, classes, "mean")

            def forward(self, blocks, h):
                h = F.relu(self.conv1(blocks[0], h))
                h = F.dropout(h, 0.5, self.training)
                return self.conv2(blocks[1], h)

        model = SAGE()

        def batches():
            for input_nodes, output_nodes, blocks in loader:
                yield (lambda b=blocks, i=input_nodes: model(b, x[i])), y[output_nodes], \
                    int(sum(b.num_edges() for b in blocks))

        def full():
            return model([g, g], x)

    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    history = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        t0 = time.perf_counter()
        edges = steps = 0
        total = 0.0
        for forward, target, sampled in batches():
            opt.zero_grad()
            loss = F.cross_entropy(forward(), target)
            loss.backward()
            opt.step()
            edges += sampled
            steps += 1
            total += float(loss)
        ms = (time.perf_counter() - t0) * 1e3
        history.append({"epoch": epoch, "loss": total / max(steps, 1), "ms": ms,
                        "batches": steps, "sampled_edges": edges})
    model.eval()
    with torch.no_grad():
        pred = full().argmax(1)
    test_acc = float((pred[test_idx] == y[test_idx]).float().mean()) if len(test_idx) else 0.0
    summary = {"system": args.system, "version": version, "history": history,
               "final": {"test_acc": test_acc, "loss": history[-1]["loss"]},
               "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    with open(args.json, "w") as f:
        json.dump(summary, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
