#!/usr/bin/env python3
"""Plots of docs/benchmarks/peers.json (run by bench/run.py under the peers'
interpreter, which has matplotlib): per timing graph, the median epoch time
(bars, min-max as error bars, log scale) and the peak RSS of every model and
system. Prints the names of the PNG files it wrote.

Usage: plot_peers.py peers.json OUT_DIR
"""

import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"gnnc": "#1b9e77", "pyg": "#d95f02", "dgl": "#7570b3"}
LABEL = {"gnnc": "gnnc", "pyg": "PyG", "dgl": "DGL"}
MODEL = {"gcn": "GCN", "sage": "SAGE-mean", "gat": "GAT", "ggcn": "G-GCN"}


def main() -> int:
    src, out_dir = sys.argv[1], sys.argv[2]
    with open(src) as f:
        r = json.load(f)
    written = []
    for key in r["timing_graphs"]:
        cells = r["cells"].get(key)
        if not cells:
            continue
        models = [m for m in r["models"] if m in cells]
        systems = r["systems"]
        fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(11, 4.2))
        width = 0.8 / len(systems)
        for i, s in enumerate(systems):
            xs, med, lo, hi, mem, mx = [], [], [], [], [], []
            for j, m in enumerate(models):
                a = cells[m].get(s)
                x = j + (i - (len(systems) - 1) / 2) * width
                if not a:
                    continue
                if a["status"] == "ok":
                    xs.append(x)
                    med.append(a["epoch_ms_median"] / 1000)
                    lo.append((a["epoch_ms_median"] - a["epoch_ms_min"]) / 1000)
                    hi.append((a["epoch_ms_max"] - a["epoch_ms_median"]) / 1000)
                    mem.append(a["maxrss_mib"] / 1024)
                    mx.append(x)
                else:
                    for ax in (ax_t, ax_m):
                        ax.text(x, 0.02, a["status"], rotation=90, ha="center", va="bottom",
                                fontsize=8, color=COLORS[s], transform=ax.get_xaxis_transform())
            ax_t.bar(xs, med, width, yerr=[lo, hi], color=COLORS[s], label=LABEL[s], capsize=2)
            ax_m.bar(mx, mem, width, color=COLORS[s], label=LABEL[s])
        info = r["graphs"][key]
        for ax in (ax_t, ax_m):
            ax.set_xticks(range(len(models)))
            ax.set_xticklabels([MODEL[m] for m in models])
        ax_t.set_yscale("log")
        ax_t.set_ylabel("epoch time, s (median, min–max)")
        ax_m.set_ylabel("peak RSS, GiB")
        ax_t.legend()
        fig.suptitle(f"{key}: {info['vertices']:,} vertices, {info['edges']:,} edges, "
                     f"F={info['features']}, C={info['classes']}; {r['config']['threads']} threads")
        fig.tight_layout()
        # A named report (--output) gets plots of its own name, so that it
        # never overwrites the main report's.
        name = f"{r.get('output') or 'peers'}-{key}.png"
        fig.savefig(os.path.join(out_dir, name), dpi=110)
        plt.close(fig)
        written.append(name)
    print(" ".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
