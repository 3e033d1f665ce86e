"""Paired old-against-new tables of two runs of one benchmark (two versions of the package on
the same cells), from their ``fits.csv``::

    python benchmarks/compare_versions.py OLD/fits.csv NEW/fits.csv --methods default
    python benchmarks/compare_versions.py OLD/fits.csv NEW/fits.csv --metrics log_loss top_label_ece

Works on the scenario benchmark (``bench_scorers.py``: cells are scenario x n_fuse), the
multi-class benchmark (``bench_multiclass.py``: setup x n_fuse) and the networks benchmark
(``bench_networks.py``: case x n_fuse). For every cell, method and metric it prints the mean and
the sample sd over seeds of ``d_s = new_s - old_s`` and the flag of
:func:`harness.paired.paired_flag` (``worse``: new higher on every seed and the mean above the
sd). Where the runs hold the scenario benchmark's reference (``lr_logit``), it also counts the
cells where the method is clearly worse / better than the reference, old and new.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.paired import paired_flag  # noqa: E402

REFERENCE = "lr_logit"


def _cell_columns(fits: pd.DataFrame) -> list[str]:
    for first in ("scenario", "setup", "case"):
        if first in fits.columns:
            return [first, "n_fuse"]
    raise ValueError("fits.csv has no scenario, setup or case column")


def _fmt(x: float) -> str:
    return f"{x * 1e3:+.2f}"


def table(old: pd.DataFrame, new: pd.DataFrame, methods, metrics) -> list[str]:
    cells = _cell_columns(old)
    keys = [*cells, "seed", "method"]
    both = old.merge(new, on=keys, suffixes=("_old", "_new"))
    both = both[both["method"].isin(methods)]
    head = " | ".join(f"Δ {m} (x 1e-3)" for m in metrics)
    lines = [
        f"| {' | '.join(cells)} | method | seeds | {head} |",
        "| " + " | ".join(["---"] * (len(cells) + 2 + len(metrics))) + " |",
    ]
    worse = {m: 0 for m in metrics}
    better = {m: 0 for m in metrics}
    totals = {m: [] for m in metrics}
    for key, g in both.groupby([*cells, "method"], sort=True):
        parts = []
        for m in metrics:
            d = (g[f"{m}_new"] - g[f"{m}_old"]).to_numpy(dtype=float)
            totals[m].append(d.mean())
            flag = paired_flag(d)
            worse[m] += flag == "worse"
            better[m] += flag == "better"
            sd = d.std(ddof=1) if d.size > 1 else float("nan")
            mark = {"worse": " **W**", "better": " B"}.get(flag, "")
            parts.append(f"{_fmt(d.mean())} ± {sd * 1e3:.2f}{mark}")
        lines.append(f"| {' | '.join(str(k) for k in key)} | {len(g)} | {' | '.join(parts)} |")
    summary = "; ".join(
        f"{m}: mean Δ {_fmt(sum(totals[m]) / max(len(totals[m]), 1))} x 1e-3, "
        f"new clearly worse in {worse[m]}, clearly better in {better[m]} cells"
        for m in metrics
    )
    return [*lines, "", f"Over {len(totals[metrics[0]])} cells: {summary}."]


def tally(fits: pd.DataFrame, method: str, metrics) -> dict[str, tuple[int, int]]:
    """Cells where ``method`` is clearly worse / better than the reference."""
    cells = _cell_columns(fits)
    ref = fits[fits["method"] == REFERENCE]
    mine = fits[fits["method"] == method]
    both = mine.merge(ref, on=[*cells, "seed"], suffixes=("", "_ref"))
    out = {}
    for m in metrics:
        flags = [
            paired_flag((g[m] - g[f"{m}_ref"]).to_numpy(dtype=float))
            for _, g in both.groupby(cells)
        ]
        out[m] = (flags.count("worse"), flags.count("better"))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--methods", nargs="+", default=["default"])
    p.add_argument("--metrics", nargs="+", default=None)
    args = p.parse_args(argv)
    old, new = pd.read_csv(args.old), pd.read_csv(args.new)
    old = old[old["status"] == "ok"] if "status" in old else old
    new = new[new["status"] == "ok"] if "status" in new else new
    # only the (cell, seed) pairs both runs hold: a partial run compares on what it has
    common = [*_cell_columns(old), "seed"]
    both = old[common].drop_duplicates().merge(new[common].drop_duplicates(), on=common)
    old, new = old.merge(both, on=common), new.merge(both, on=common)
    metrics = args.metrics or (
        ["brier", "log_loss", "ece"] if "ece" in old.columns else ["log_loss", "top_label_ece"]
    )
    print("\n".join(table(old, new, args.methods, metrics)))
    if (old["method"] == REFERENCE).any() and (new["method"] == REFERENCE).any():
        print()
        print(f"| method | metric | vs {REFERENCE}, old W / B | new W / B |")
        print("| --- | --- | ---: | ---: |")
        for method in args.methods:
            a, b = tally(old, method, metrics), tally(new, method, metrics)
            for m in metrics:
                print(f"| {method} | {m} | {a[m][0]} / {a[m][1]} | {b[m][0]} / {b[m][1]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
