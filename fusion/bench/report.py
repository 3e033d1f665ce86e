"""Tables of a benchmark run: a Markdown table shaped like the paper's Table 1, and a CSV.

Table 1 of Wang & Liu (2020) has one block of rows per metric (MCE, ECE, Brier), one row
per method, one column per data set plus their mean; each cell is ``mean ± std`` over the
rounds in percent, the best per column highlighted. The "Mean" column averages the per-data
set means and the per-data set standard deviations (which reproduces the paper's column).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .protocol import METRICS, BenchResult

__all__ = ["DISPLAY_NAMES", "rounds_frame", "markdown", "write"]

DISPLAY_NAMES = {
    "adult": "Adult",
    "census": "Census",
    "covertype": "Covertype",
    "dota2": "Dota2",
    "susy": "SUSY",
}

_COLUMNS = [
    "dataset",
    "round",
    "method",
    "label",
    "grid_mce",
    "grid_ece",
    "brier",
    "log_loss",
    "auc",
    "binned_ece",
    "fit_time",
    "fit_cpu",
    "n_cells",
    "min_count",
    "n_train",
    "n_test",
    "scorer1_auc",
    "scorer2_auc",
    "selected",
    "status",
    "error",
    "warnings",
    "warning",
    "seed",
]

# (metric column, block label, decimals) of the two tables.
_MAIN = (("grid_mce", "MCE", 3), ("grid_ece", "ECE", 3), ("brier", "Brier", 3))
_EXTRA = (
    ("log_loss", "Log-loss", 4),
    ("auc", "AUC", 4),
    ("binned_ece", "Binned ECE", 3),
    ("fit_time", "Fit time (s)", 3),
)


def rounds_frame(result: BenchResult):
    """Every round's numbers as a DataFrame (the CSV), in a fixed column order."""
    import pandas as pd

    df = pd.DataFrame(result.rows)
    for col in _COLUMNS:
        if col not in df:
            df[col] = np.nan
    return df[_COLUMNS + [c for c in df.columns if c not in _COLUMNS]]


def _header(result: BenchResult, name: str) -> str:
    label = DISPLAY_NAMES.get(name, name)
    return label + ("†" if result.datasets.get(name, {}).get("scaled") else "")


def _cell(mean: float, std: float, n: int, n_total: int, decimals: int) -> str:
    if math.isnan(mean):
        return "—"
    text = f"{mean:.{decimals}f}"
    if not math.isnan(std):
        text += f"±{std:.{decimals}f}"
    if n < n_total:
        text += f" ({n}/{n_total})"
    return text


def _block(df, result: BenchResult, metric: str, label: str, decimals: int) -> list[str]:
    datasets = list(result.config.datasets)
    methods = list(result.labels)
    n_total = result.config.n_rounds
    higher = METRICS[metric]
    stats: dict[tuple[str, str], tuple[float, float, int]] = {}
    for m in methods:
        for d in datasets:
            v = df.loc[(df["method"] == m) & (df["dataset"] == d), metric].dropna()
            v = v.to_numpy(dtype=float)
            mean = float(v.mean()) if v.size else math.nan
            std = float(v.std(ddof=1)) if v.size > 1 else math.nan
            stats[m, d] = (mean, std, int(v.size))
        means = [stats[m, d][0] for d in datasets]
        stds = [stats[m, d][1] for d in datasets]
        counts = [stats[m, d][2] for d in datasets]
        if len(datasets) > 1 and not any(math.isnan(x) for x in means):
            stats[m, "__mean__"] = (
                float(np.mean(means)),
                float(np.mean(stds)) if not any(math.isnan(s) for s in stds) else math.nan,
                min(counts),
            )
        else:
            stats[m, "__mean__"] = (math.nan, math.nan, 0)
    columns = datasets + (["__mean__"] if len(datasets) > 1 else [])
    best = {}
    for c in columns:
        vals = [stats[m, c][0] for m in methods if not math.isnan(stats[m, c][0])]
        if vals:
            best[c] = max(vals) if higher else min(vals)
    lines = []
    for i, m in enumerate(methods):
        cells = []
        for c in columns:
            mean, std, n = stats[m, c]
            text = _cell(mean, std, n, n_total, decimals)
            if (
                c in best
                and not math.isnan(mean)
                and round(mean, decimals) == round(best[c], decimals)
            ):
                text = f"**{text}**"
            cells.append(text)
        head = label if i == 0 else ""
        lines.append(f"| {head} | {result.labels[m]} | " + " | ".join(cells) + " |")
    return lines


def _table(df, result: BenchResult, blocks) -> list[str]:
    datasets = list(result.config.datasets)
    heads = [_header(result, d) for d in datasets] + (["Mean"] if len(datasets) > 1 else [])
    lines = [
        "| Metric | Method | " + " | ".join(heads) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in heads) + " |",
    ]
    for metric, label, decimals in blocks:
        lines += _block(df, result, metric, label, decimals)
    return lines


def _notes(df, result: BenchResult) -> list[str]:
    cfg = result.config
    notes = []
    for name, info in result.datasets.items():
        if info["scaled"]:
            notes.append(
                f"† {DISPLAY_NAMES.get(name, name)}: the test set has {info['n_test']:,} rows, "
                f"fewer than the {40_000:,} that cells of {cfg.min_count} samples assume (the "
                f"paper's data sets all have more than 40,000 rows); grid cells need at least "
                f"{info['min_count']} test samples instead of {cfg.min_count} "
                f"(`min_count` scaled to the test size, "
                f"ceil({cfg.min_count} × {info['n_test']:,} / 40,000))."
            )
    for note in result.skipped:
        notes.append(f"Not run: {note}")
    if not df.empty:
        for (d, m), g in df.groupby(["dataset", "method"], sort=False):
            bad = g[g["status"] == "error"]
            if len(bad):
                notes.append(
                    f"{result.labels[m]} failed in {len(bad)} of {len(g)} rounds on "
                    f"{DISPLAY_NAMES.get(d, d)} (those rounds are left out of its cells): "
                    f"{bad['error'].iloc[0]}"
                )
            nogrid = g[g["status"] == "no-grid-cell"]
            if len(nogrid):
                notes.append(
                    f"{result.labels[m]} on {DISPLAY_NAMES.get(d, d)}: no grid cell reached "
                    f"min_count in {len(nogrid)} rounds; MCE/ECE are missing there."
                )
        warned = df[df["warnings"] > 0]
        for m, g in warned.groupby("method", sort=False):
            notes.append(
                f"{result.labels[m]} emitted {int(g['warnings'].sum())} warnings in {len(g)} "
                f"fits (first: {g['warning'].iloc[0]})."
            )
        cells, aucs = [], []
        for d, g in df.groupby("dataset", sort=False):
            first = g.drop_duplicates("round")
            cells.append(f"{DISPLAY_NAMES.get(d, d)} {first['n_cells'].mean():.1f}")
            aucs.append(
                f"{DISPLAY_NAMES.get(d, d)} {first['scorer1_auc'].mean():.3f} / "
                f"{first['scorer2_auc'].mean():.3f}"
            )
        notes.append(
            "Grid cells (of 100) with at least min_count test samples, mean over rounds: "
            + ", ".join(cells)
            + "."
        )
        notes.append(
            "Test AUC of scorer 1 / scorer 2 (MLPs with 10 / 20 hidden units), mean over "
            "rounds: " + ", ".join(aucs) + "."
        )
    if cfg.quick:
        notes.append(
            f"Quick run (`--quick`): {cfg.n_rounds} round(s), at most {cfg.n_test_max:,} test "
            "rows, reduced CV grids; a smoke test, not comparable with the paper's numbers."
        )
    return notes


def markdown(result: BenchResult) -> str:
    """The Markdown report: Table 1 (MCE, ECE, Brier), the other metrics, and the notes."""
    df = rounds_frame(result)
    cfg = result.config
    lines = [
        f"Calibration of fused scores, {cfg.n_rounds} round(s), seed {cfg.seed}: mean ± std "
        "over rounds; MCE, ECE (10 × 10 grid of the normalized scores) and Brier in percent; "
        "best per column in bold.",
        "",
        *_table(df, result, _MAIN),
        "",
        "Other metrics on the same rounds (binned ECE: 10 equal-width bins of the fused "
        "probability, mass-weighted, percent; fit time: wall-clock seconds of `fit` on the "
        "500-row fusion sample, hyper-parameter CV included).",
        "",
        *_table(df, result, _EXTRA),
        "",
    ]
    notes = _notes(df, result)
    if notes:
        lines += [f"- {n}" for n in notes]
        lines.append("")
    lines.append(f"Total time of the run: {result.elapsed / 60:.1f} min.")
    return "\n".join(lines) + "\n"


def write(result: BenchResult, out: str | Path) -> tuple[Path, Path]:
    """Write ``table.md`` and ``rounds.csv`` into ``out`` (created if needed)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    md = out / "table.md"
    csv = out / "rounds.csv"
    md.write_text(markdown(result), encoding="utf-8")
    rounds_frame(result).to_csv(csv, index=False)
    return md, csv
