"""Paired comparisons with the best peer per cell, and the Markdown / CSV output.

For one cell (setup x fusion size) and one metric, the *best peer* is the peer (LR on
log-probabilities, temperature scaling + average, best single scorer) with the lowest mean
over seeds. Every contender is compared with it by paired differences over seeds,
``d_s = metric(contender, s) - metric(best peer, s)``, flagged *clearly worse* / *clearly
better* as in the binary scenario benchmark (:func:`fusion.bench._paired.paired_flag`:
the same sign on every seed and ``|mean(d)| > sd(d)``). The same flags against the best raw
scorer say whether a contender beats every single scorer.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from .. import _paired
from .._markdown import compared_cells, milli, num, seconds, table, worse_better
from .data import SCORER_KINDS, SETUPS
from .runner import ECE_BINS, METRICS, RunConfig, RunResult
from .speed import speed_lines

__all__ = ["REFERENCE_TIME", "cell_stats", "summary", "markdown", "write", "read"]

#: The contender whose fit time every other one is divided by (per cell, same run).
REFERENCE_TIME = "lr_logp"

_NAMES = {
    "log_loss": "log-loss",
    "brier": "Brier",
    "top_label_ece": "top-label ECE",
    "classwise_ece": "classwise ECE",
}


def _best(cell, family: str, metric: str) -> str | None:
    """Key of the contender of ``family`` with the lowest mean ``metric`` in the cell (only
    contenders fitted on every seed)."""
    means = {}
    for method, g in cell[cell["family"] == family].groupby("method", sort=False):
        if (g["status"] == "ok").all():
            means[method] = float(g[metric].mean())
    return min(means, key=means.get) if means else None


def cell_stats(fits):
    """One row per (setup, n_fuse, method): status, means, and per metric the best peer
    (``<m>_ref``), the mean paired difference to it (``<m>_diff``), its sd (``<m>_sd``), the
    flag (``<m>_flag``) and the flag against the best raw scorer (``<m>_vs_scorer``); the
    median fit seconds and their ratio to :data:`REFERENCE_TIME`'s in the same cell."""
    import pandas as pd

    out = []
    for (setup, n), cell in fits.groupby(["setup", "n_fuse"], sort=False):
        refs = {m: _best(cell, "peer", m) for m in METRICS}
        raw = {m: _best(cell, "scorer", m) for m in METRICS}
        by = {k: g.set_index("seed") for k, g in cell[cell["status"] == "ok"].groupby("method")}
        lr = by.get(REFERENCE_TIME)
        lr_fit = _paired.median_or_nan(lr["fit_seconds"]) if lr is not None else math.nan
        for method, g in cell.groupby("method", sort=False):
            row = {
                "setup": setup,
                "n_fuse": int(n),
                "method": method,
                "family": g["family"].iloc[0],
                "n_seeds": len(g),
                "status": _paired.cell_status(g),
            }
            if row["status"] == "failed":
                row["error"] = next(e for e in g["error"] if isinstance(e, str) and e)
            ok = g[g["status"] == "ok"].set_index("seed")
            compared = row["status"] == "ok"
            row["accuracy"] = _paired.mean_or_nan(ok["accuracy"])
            for m in METRICS:
                row[m] = _paired.mean_or_nan(ok[m])
                row[f"{m}_ref"] = refs[m] or ""
                peer = by[refs[m]] if compared and refs[m] is not None else None
                row.update(_paired.paired_columns(ok, peer, m))
                scorer = by[raw[m]] if compared and raw[m] is not None else None
                row[f"{m}_vs_scorer"] = _paired.paired_columns(ok, scorer, m)[f"{m}_flag"]
            row.update(_paired.fit_columns(ok, lr_fit))
            out.append(row)
    return pd.DataFrame(out)


def summary(cells):
    """Per contender (not the raw scorers): cells compared, clearly worse / better counts
    against the best peer per metric, cells where it is clearly better than the best raw
    scorer in log-loss, the mean differences and the median fit-time ratio."""
    import pandas as pd

    rows = []
    for method, g in cells[cells["family"] != "scorer"].groupby("method", sort=False):
        row, ok = _paired.summary_counts(method, g)
        row["beats_scorers"] = int((ok["log_loss_vs_scorer"] == "better").sum())
        for m in METRICS:
            row.update(_paired.flag_counts(ok, m))
            row[f"{m}_mean_diff"] = _paired.mean_or_nan(ok[f"{m}_diff"].dropna())
        row["fit_ratio_median"] = _paired.median_or_nan(ok["fit_ratio"].dropna())
        rows.append(row)
    return pd.DataFrame(rows)


def _ratio(x) -> str:
    return "—" if x is None or math.isnan(x) else f"{x:.1f}" if x < 100 else f"{x:.0f}"


def _setup_table(result: RunResult) -> list[str]:
    import pandas as pd

    sc = pd.DataFrame(result.scores)
    rows = []
    for setup in result.config.setups:
        g = sc[sc["setup"] == setup.name]
        if not len(g):
            continue
        kinds = ", ".join(SCORER_KINDS[k][1] for k in setup.scorers)
        acc = " / ".join(f"{g[f'accuracy_{m + 1}'].mean():.3f}" for m in range(setup.M))
        nll = " / ".join(f"{g[f'log_loss_{m + 1}'].mean():.3f}" for m in range(setup.M))
        sizes = ", ".join(f"{n:,}" for n in result.config.cell_sizes(setup))
        seeds = ", ".join(str(s) for s in sorted(g["seed"]))
        rows.append(
            [
                f"`{setup.name}`",
                str(int(g["C"].iloc[0])),
                kinds,
                f"{setup.n_train:,}",
                sizes,
                f"{int(g['n_test'].iloc[0]):,}",
                seeds,
                acc,
                nll,
            ]
        )
    return table(
        [
            "setup",
            "C",
            "scorers (M)",
            "rows per scorer",
            "n_fuse",
            "test rows",
            "seeds",
            "scorer test accuracy",
            "scorer test log-loss",
        ],
        rows,
        "lrlrrrlll",
    )


def _cell_table(g, labels: dict[str, str]) -> list[str]:
    rows = []
    for _, r in g.iterrows():
        label = labels.get(r["method"], r["method"])
        if r["status"] != "ok":
            reason = "skipped" if r["status"] == "skipped" else f"failed: {r.get('error', '')}"
            rows.append([label, reason[:120]] + [""] * 10)
            continue
        cells = []
        for m in METRICS:
            best = r[f"{m}_ref"] == r["method"]
            cells += [num(r[m]) + (" *" if best else ""), milli(r[f"{m}_diff"], r[f"{m}_flag"])]
        raw = r["family"] == "scorer"  # nothing fitted: no fit time
        rows.append(
            [
                label,
                *cells,
                num(r["accuracy"], 3),
                "—" if raw else seconds(r["fit_median"]),
                "—" if raw else _ratio(r["fit_ratio"]),
            ]
        )
    header = ["method"]
    for m in METRICS:
        header += [_NAMES[m], "Δ"]
    return table(header + ["accuracy", "fit s", "fit / LR"], rows, "l" + "r" * 11)


def _method_table(cells, method: str, labels: dict[str, str]) -> list[str]:
    """One contender across the cells: per metric the best peer's value and the contender's
    difference to it."""
    rows = []
    for (setup, n), g in cells.groupby(["setup", "n_fuse"], sort=False):
        g = g.set_index("method")
        if method not in g.index:
            continue
        r = g.loc[method]
        row = [f"`{setup}` {n:,}"]
        for m in METRICS:
            ref = r[f"{m}_ref"]
            row += [num(g.loc[ref, m]) if ref in g.index else "—",
                    milli(r[f"{m}_diff"], r[f"{m}_flag"])]  # fmt: skip
        row += [seconds(r["fit_median"]), _ratio(r["fit_ratio"])]
        if r["status"] != "ok":
            row = [row[0], r["status"]] + [""] * 9
        rows.append(row)
    header = ["cell"]
    for m in METRICS:
        header += [f"best peer {_NAMES[m]}", "Δ"]
    lines = [f"`{labels.get(method, method)}` per cell (best peer's value, Δ x 1e-3):", ""]
    return lines + table(header + ["fit s", "fit / LR"], rows, "l" + "r" * 10) + [""]


def _summary_table(summ, labels: dict[str, str], n_cells: int) -> list[str]:
    rows = []
    for _, r in summ.iterrows():
        means = [milli(r[f"{m}_mean_diff"]) for m in METRICS]
        rows.append(
            [
                labels.get(r["method"], r["method"]),
                compared_cells(r),
                *worse_better(r, METRICS),
                *means,
                f"{r['beats_scorers']} / {r['cells']}",
                _ratio(r["fit_ratio_median"]),
            ]
        )
    return table(
        ["method", "cells"]
        + [f"{_NAMES[m]} W / B" for m in METRICS]
        + [f"mean Δ{_NAMES[m]}" for m in METRICS]
        + ["log-loss better than every raw scorer", "fit / LR (median)"],
        rows,
        "l" + "r" * 11,
    )


def markdown(
    result: RunResult, command: str, speed: list[dict] | None = None, quick: bool = False
) -> str:
    """The report: setups, a summary over cells, the default per cell, one table per cell,
    and the speed section of ``speed`` (rows of :func:`.speed.measure`)."""
    import pandas as pd

    fits = pd.DataFrame(result.rows)
    lines = ["# Multi-class fusion benchmark", "", f"    {command}", ""]
    if result.scores:
        lines += _setup_table(result) + [""]
    if len(fits):
        lines += _fit_sections(result, fits)
    if speed:
        lines += speed_lines(speed, quick=quick) + [""]
    lines += [f"Run time: {result.elapsed / 60:.1f} min.", ""]
    return "\n".join(lines)


def _fit_sections(result: RunResult, fits) -> list[str]:
    lines = []
    cells = cell_stats(fits)
    n_cells = cells.groupby(["setup", "n_fuse"]).ngroups
    lines += [
        f"Against the best peer of each cell and metric ({n_cells} cells; Δ = contender - best "
        "peer, mean over seeds, x 1e-3; W / B: clearly worse / better, i.e. the same sign on "
        "every seed and |mean| > sd):",
        "",
    ]
    lines += _summary_table(summary(cells), result.labels, n_cells) + [""]
    focus = [k for k, f in result.families.items() if f in ("fusion", "candidate")][:1]
    focus += [k for k, f in result.families.items() if f == "candidate"][:3]
    for method in dict.fromkeys(focus):
        lines += _method_table(cells, method, result.labels)
    for (setup, n), g in cells.groupby(["setup", "n_fuse"], sort=False):
        seeds = int(g["n_seeds"].max())
        lines += [f"### `{setup}`, n_fuse = {n:,} ({seeds} seed{'s' * (seeds != 1)})", ""]
        lines += _cell_table(g, result.labels)
        first = g.iloc[0]
        best = ", ".join(
            f"{_NAMES[m]}: {result.labels.get(first[f'{m}_ref'], first[f'{m}_ref'])}"
            for m in METRICS
        )
        lines += ["", f"\\* best peer of the column ({best}); Δ against it.", ""]
    lines += [
        f"Metrics on the test rows: log-loss, multi-class Brier (sum over classes), top-label "
        f"and classwise ECE with {ECE_BINS} equal-width bins (fusion.metrics); accuracy for "
        "reference. fit / LR: median fit seconds over those of LR on standardized "
        "log-probabilities (`lr_logp`) in the same cell and run.",
        "",
    ]
    if result.notes:
        lines += ["Notes:", ""] + [f"- {note}" for note in result.notes] + [""]
    return lines


def write(
    result: RunResult,
    out: str,
    command: str,
    speed: list[dict] | None = None,
    quick: bool = False,
) -> list[Path]:
    """Write ``report.md``, ``fits.csv`` (one row per fit), ``cells.csv``, ``scores.csv``,
    ``speed.json`` and ``run.json`` (command, notes, run time) into ``out``; :func:`read`
    rebuilds the report from them."""
    import pandas as pd

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    fits = pd.DataFrame(result.rows)
    names = ("report.md", "fits.csv", "cells.csv", "scores.csv", "speed.json", "run.json")
    paths = [folder / name for name in names]
    paths[0].write_text(markdown(result, command, speed, quick), encoding="utf-8")
    fits.to_csv(paths[1], index=False)
    (cell_stats(fits) if len(fits) else pd.DataFrame()).to_csv(paths[2], index=False)
    pd.DataFrame(result.scores).to_csv(paths[3], index=False)
    paths[4].write_text(json.dumps(speed or [], indent=1), encoding="utf-8")
    run = {"command": command, "notes": result.notes, "elapsed": result.elapsed,
           "quick_speed": quick}  # fmt: skip
    paths[5].write_text(json.dumps(run, indent=1), encoding="utf-8")
    return paths


def read(out: str, setups=SETUPS) -> tuple[RunResult, str, list[dict], bool]:
    """``(result, command, speed rows, quick)`` from the files :func:`write` put in ``out``
    (the run's setups are looked up by name in ``setups``)."""
    import pandas as pd

    folder = Path(out)
    fits = pd.read_csv(folder / "fits.csv", keep_default_na=False, na_values=[""])
    scores = pd.read_csv(folder / "scores.csv")
    run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    speed = json.loads((folder / "speed.json").read_text(encoding="utf-8"))
    known = {s.name: s for s in setups}
    ran = tuple(known[name] for name in dict.fromkeys(scores["setup"]))
    config = RunConfig(setups=ran, sizes=tuple(sorted(int(n) for n in set(fits["n_fuse"]))))
    first = fits.drop_duplicates("method")
    result = RunResult(
        rows=fits.to_dict("records"),
        scores=scores.to_dict("records"),
        labels=dict(zip(first["method"], first["label"], strict=True)),
        families=dict(zip(first["method"], first["family"], strict=True)),
        config=config,
        notes=list(run["notes"]),
        elapsed=float(run["elapsed"]),
    )
    return result, run["command"], speed, bool(run["quick_speed"])
