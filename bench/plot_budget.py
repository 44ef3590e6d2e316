"""Plots bench/budget.py's JSON: per model, peak RSS, epoch time and the
slow tier's bytes (read + written per epoch, log scale) against the budget,
one line per placement strategy, the in-memory run dashed.

    plot_budget.py RESULT.json OUT.png
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

GIB = 1 << 30


def main():
    src, out = sys.argv[1:3]
    with open(src) as f:
        result = json.load(f)
    cells = result["cells"]
    models = list(dict.fromkeys(c["model"] for c in cells))
    fig, axes = plt.subplots(3, len(models), figsize=(6 * len(models), 10), squeeze=False)
    for col, model in enumerate(models):
        mine = [c for c in cells if c["model"] == model]
        base = next((c for c in mine if not c["budget"] and c.get("status") == "ok"), None)
        rss, time, moved = axes[0][col], axes[1][col], axes[2][col]
        for strategy in dict.fromkeys(c["strategy"] for c in mine if c["budget"]):
            ok = sorted((c for c in mine if c["strategy"] == strategy and c["budget"]
                         and c.get("status") == "ok"), key=lambda c: c["budget"])
            if not ok:
                continue
            xs = [c["budget"] / GIB for c in ok]
            rss.plot(xs, [c["maxrss_mib"] / 1024 for c in ok], "o-", label=strategy)
            time.plot(xs, [c["epoch_ms"] / 1000 for c in ok], "o-", label=strategy)
            moved.plot(xs, [max((c["read_per_epoch"] + c["written_per_epoch"]) / GIB, 1e-3)
                            for c in ok], "o-", label=strategy)
        budgets = sorted({c["budget"] / GIB for c in mine if c["budget"]})
        if budgets:
            rss.plot(budgets, [b * 1.1 for b in budgets], ":", color="grey",
                     label="budget + 10 %")
        if base:
            rss.axhline(base["maxrss_mib"] / 1024, ls="--", color="black", label="in memory")
            time.axhline(base["epoch_ms"] / 1000, ls="--", color="black", label="in memory")
        rss.set_title(f"{model}: peak RSS")
        rss.set_xlabel("budget (GiB)")
        rss.set_ylabel("GiB")
        time.set_title(f"{model}: epoch time")
        time.set_xlabel("budget (GiB)")
        time.set_ylabel("s")
        moved.set_title(f"{model}: slow tier read + written per epoch")
        moved.set_xlabel("budget (GiB)")
        moved.set_ylabel("GiB (log; 0 drawn at 0.001)")
        moved.set_yscale("log")
        for ax in (rss, time, moved):
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
    fig.suptitle(f"Memory budget: {result['graph']['name']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


if __name__ == "__main__":
    main()
