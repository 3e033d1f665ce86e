"""The report of the multi-class benchmark: the issue's check, paired summaries against every
peer, one table per cell, the speed section; and its CSV / JSON files.

The issue's check (issue 21), per set (main, held-out): in every cell the default's mean
over seeds of its paired difference to temperature scaling of the averaged
log-probabilities (``ts_avg``) must be at most :data:`LOG_LOSS_MARGIN` in log-loss and at
most :data:`TOP_ECE_MARGIN` in top-label ECE, and its mean log-loss over the cells must be
below ``ts_avg``'s.

Paired flags as in the scenario benchmark (:func:`harness.paired.paired_flag`): a
difference is *clearly* better / worse when it has the same sign on every seed and
``|mean| > sd``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from harness import paired as _paired
from harness.markdown import milli, num, seconds, table

from .contenders import REFERENCE
from .runner import ECE_BINS, METRICS, RunResult
from .speed import speed_lines

__all__ = [
    "DEFAULT",
    "LOG_LOSS_MARGIN",
    "TOP_ECE_MARGIN",
    "GROUPS",
    "cell_stats",
    "check_cells",
    "check_summary",
    "peer_summary",
    "markdown",
    "write",
    "read",
]

#: The contender the check is about.
DEFAULT = "default"

#: The issue's margins: the default may be worse than ``ts_avg`` by at most this much.
LOG_LOSS_MARGIN = 0.002
TOP_ECE_MARGIN = 0.005

#: Sets, in report order, and their titles.
GROUPS = {"main": "Main set", "heldout": "Held-out set"}

_NAMES = {
    "log_loss": "log-loss",
    "brier": "Brier",
    "top_label_ece": "top-label ECE",
    "classwise_ece": "classwise ECE",
}

_CELL = ["setup", "n_fuse"]


def _by_seed(fits, method: str):
    """The successful rows of ``method`` in one cell, indexed by seed."""
    g = fits[(fits["method"] == method) & (fits["status"] == "ok")]
    return g.set_index("seed")


def cell_stats(fits):
    """One row per (cell, method): group, C, M, seeds, status, mean metrics, median fit
    seconds, and per metric the mean paired difference to ``ts_avg`` (``<m>_diff``), its sd
    and flag."""
    import pandas as pd

    out = []
    for (setup, n), cell in fits.groupby(_CELL, sort=False):
        ref = _by_seed(cell, REFERENCE)
        ref = ref if len(ref) else None
        for method, g in cell.groupby("method", sort=False):
            row = {
                "setup": setup,
                "n_fuse": int(n),
                "group": g["group"].iloc[0],
                "C": int(g["C"].iloc[0]),
                "M": int(g["M"].iloc[0]),
                "method": method,
                "family": g["family"].iloc[0],
                "n_seeds": len(g),
                "status": _paired.cell_status(g),
                "error": "",
            }
            if row["status"] != "ok":
                row["error"] = next((e for e in g["error"] if isinstance(e, str) and e), "")
            ok = g[g["status"] == "ok"].set_index("seed")
            row["accuracy"] = _paired.mean_or_nan(ok["accuracy"])
            for m in METRICS:
                row[m] = _paired.mean_or_nan(ok[m])
                row.update(_paired.paired_columns(ok, ref if len(ok) else None, m))
            row["fit_median"] = _paired.median_or_nan(ok["fit_seconds"].dropna())
            out.append(row)
    return pd.DataFrame(out)


def check_cells(cells):
    """The issue's check per cell: the default's and ``ts_avg``'s mean log-loss and top-label
    ECE, the mean paired differences, and ``pass_log_loss`` / ``pass_top_ece`` / ``pass``
    (a cell where either failed or was not fitted fails)."""
    import pandas as pd

    rows = []
    for (setup, n), g in cells.groupby(_CELL, sort=False):
        g = g.set_index("method")
        if DEFAULT not in g.index:
            continue
        d = g.loc[DEFAULT]
        row = {
            "setup": setup,
            "n_fuse": int(n),
            "group": d["group"],
            "C": int(d["C"]),
            "M": int(d["M"]),
            "n_seeds": int(d["n_seeds"]),
            "status": d["status"],
        }
        has_ref = REFERENCE in g.index and g.loc[REFERENCE, "status"] == "ok"
        if not has_ref:
            what = g.loc[REFERENCE, "status"] if REFERENCE in g.index else "absent"
            row["status"] = f"{REFERENCE} {what}"
        for m, margin in (("log_loss", LOG_LOSS_MARGIN), ("top_label_ece", TOP_ECE_MARGIN)):
            row[f"default_{m}"] = d[m]
            row[f"ref_{m}"] = g.loc[REFERENCE, m] if has_ref else math.nan
            row[f"{m}_diff"] = d[f"{m}_diff"]
            row[f"{m}_sd"] = d[f"{m}_sd"]
            diff = d[f"{m}_diff"]
            ok = d["status"] == "ok" and has_ref and not math.isnan(diff)
            row[f"pass_{m if m == 'log_loss' else 'top_ece'}"] = bool(ok and diff <= margin)
        row["pass"] = row["pass_log_loss"] and row["pass_top_ece"]
        rows.append(row)
    return pd.DataFrame(rows)


def check_summary(check) -> dict:
    """Per group: cells, cells passing, the default's and ``ts_avg``'s mean log-loss over
    the cells where both were fitted, whether the default's is lower, and the verdict
    (every cell passes and the mean is lower)."""
    out = {}
    for group in [g for g in GROUPS if g in set(check["group"])]:
        g = check[check["group"] == group]
        both = g[g["default_log_loss"].notna() & g["ref_log_loss"].notna()]
        mean_default = float(both["default_log_loss"].mean()) if len(both) else math.nan
        mean_ref = float(both["ref_log_loss"].mean()) if len(both) else math.nan
        better = bool(len(both) == len(g) and mean_default < mean_ref)
        out[group] = {
            "cells": len(g),
            "passed": int(g["pass"].sum()),
            "failed_cells": [f"{r.setup} {r.n_fuse}" for r in g[~g["pass"]].itertuples()],
            "mean_default": mean_default,
            "mean_ref": mean_ref,
            "mean_better": better,
            "verdict": bool(better and g["pass"].all()),
        }
    return out


def peer_summary(fits, group: str):
    """The default against every other fitted contender in ``group``'s cells: per metric
    the mean over cells of the mean paired difference (default - other), and the cells
    where the default is clearly better (``<m>_B``) / clearly worse (``<m>_W``)."""
    import numpy as np
    import pandas as pd

    fits = fits[fits["group"] == group]
    others = [
        m
        for m in dict.fromkeys(fits["method"])
        if m != DEFAULT and fits.loc[fits["method"] == m, "family"].iloc[0] != "member"
    ]
    rows = []
    for other in others:
        row = {"method": other, "cells": 0}
        diffs = {m: [] for m in METRICS}
        flags = {m: [] for m in METRICS}
        for _, cell in fits.groupby(_CELL, sort=False):
            a, b = _by_seed(cell, DEFAULT), _by_seed(cell, other)
            common = a.index.intersection(b.index)
            if not len(common) or len(common) < (cell["method"] == DEFAULT).sum():
                continue
            row["cells"] += 1
            for m in METRICS:
                d = (a.loc[common, m] - b.loc[common, m]).to_numpy(dtype=float)
                diffs[m].append(float(d.mean()))
                flags[m].append(_paired.paired_flag(d))
        for m in METRICS:
            row[f"{m}_mean"] = float(np.mean(diffs[m])) if diffs[m] else math.nan
            row[f"{m}_B"] = flags[m].count("better")
            row[f"{m}_W"] = flags[m].count("worse")
        rows.append(row)
    return pd.DataFrame(rows)


def _yes(flag: bool) -> str:
    return "PASS" if flag else "**FAIL**"


def _setup_table(scores) -> list[str]:
    rows = []
    for (group, setup), g in scores.groupby(["group", "setup"], sort=False):
        first = g.iloc[0]
        M = int(first["M"])
        names = " / ".join(str(first[f"member{m + 1}"]) for m in range(M))
        acc = " / ".join(f"{g[f'accuracy_{m + 1}'].mean():.3f}" for m in range(M))
        nll = " / ".join(f"{g[f'log_loss_{m + 1}'].mean():.3f}" for m in range(M))
        truth = "—"
        if not math.isnan(float(first["truth_log_loss"])):
            truth = f"{g['truth_accuracy'].mean():.3f} / {g['truth_log_loss'].mean():.3f}"
        rows.append(
            [
                f"`{setup}`",
                GROUPS.get(group, group).split()[0].lower(),
                str(int(first["C"])),
                str(M),
                names,
                str(first["n_fuse"]),
                f"{int(first['n_test']):,}",
                ", ".join(str(int(s)) for s in sorted(g["seed"])),
                acc,
                nll,
                truth,
            ]
        )
    header = [
        "setup",
        "set",
        "C",
        "M",
        "members",
        "n_fuse",
        "test rows",
        "seeds",
        "member test accuracy",
        "member test log-loss",
        "true posterior accuracy / log-loss",
    ]
    lines = table(header, rows, "llrrllrllll")
    described = [
        f"- `{setup}`: {g.iloc[0]['description']}"
        for setup, g in scores.groupby("setup", sort=False)
    ]
    return lines + ["", "Members:", "", *described]


def _check_lines(check, summary: dict) -> list[str]:
    lines = []
    for group, title in GROUPS.items():
        g = check[check["group"] == group]
        if not len(g):
            continue
        s = summary[group]
        rows = []
        for r in g.itertuples():
            cell = f"`{r.setup}` {r.n_fuse:,}"
            note = "" if r.status == "ok" else f" ({r.status})"
            rows.append(
                [
                    cell + note,
                    str(r.C),
                    str(r.M),
                    str(r.n_seeds),
                    num(r.default_log_loss),
                    num(r.ref_log_loss),
                    _signed(r.log_loss_diff, r.log_loss_sd),
                    _yes(r.pass_log_loss),
                    num(r.default_top_label_ece),
                    num(r.ref_top_label_ece),
                    _signed(r.top_label_ece_diff, r.top_label_ece_sd),
                    _yes(r.pass_top_ece),
                ]
            )
        header = [
            "cell",
            "C",
            "M",
            "seeds",
            "default log-loss",
            "TS-avg log-loss",
            "Δ log-loss (sd)",
            f"≤ +{LOG_LOSS_MARGIN:g}",
            "default top-label ECE",
            "TS-avg top-label ECE",
            "Δ top-label ECE (sd)",
            f"≤ +{TOP_ECE_MARGIN:g}",
        ]
        lines += [f"### {title}: the issue's check", ""]
        lines += table(header, rows, "lrrrrrrlrrrl")
        lines += [
            "",
            f"Mean log-loss over the {s['cells']} cells: default {num(s['mean_default'])}, TS "
            f"of the average {num(s['mean_ref'])} (Δ {_signed(s['mean_default'] - s['mean_ref'])}"
            f"): {_yes(s['mean_better'])}. Cells passing both margins: {s['passed']} / "
            f"{s['cells']}. **{title}: {'PASS' if s['verdict'] else 'FAIL'}**"
            + (f" (failing: {', '.join(s['failed_cells'])})." if s["failed_cells"] else "."),
            "",
        ]
    return lines


def _signed(x: float, sd: float | None = None) -> str:
    if x is None or math.isnan(x):
        return "—"
    text = f"{x:+.4f}"
    if sd is not None and not math.isnan(sd):
        text += f" ({sd:.4f})"
    return text


def _peer_lines(fits, labels: dict[str, str]) -> list[str]:
    lines = []
    for group, title in GROUPS.items():
        if not (fits["group"] == group).any():
            continue
        summ = peer_summary(fits, group)
        if not len(summ):
            continue
        rows = []
        for r in summ.to_dict("records"):
            cells = [labels.get(r["method"], r["method"]), str(r["cells"])]
            for m in METRICS:
                cells += [milli(r[f"{m}_mean"]), f"{r[f'{m}_B']} / {r[f'{m}_W']}"]
            rows.append(cells)
        header = ["default vs", "cells"]
        for m in METRICS:
            header += [f"mean Δ{_NAMES[m]}", "B / W"]
        lines += [f"### {title}: the default against each contender", ""]
        lines += table(header, rows, "l" + "r" * (len(header) - 1))
        lines += [""]
    if lines:
        lines += [
            "Δ = default - contender, mean over seeds then over the cells both were fitted in, "
            "x 1e-3 (negative: the default is better). B / W: cells where the default is "
            "clearly better / clearly worse (same sign on every seed and |mean| > sd).",
            "",
        ]
    return lines


def _cell_table(g, labels: dict[str, str]) -> list[str]:
    order = {"member": 0, "fusion": 1, "candidate": 2, "peer": 3, "truth": 4}
    g = g.assign(_o=g["family"].map(order).fillna(5)).sort_values("_o", kind="stable")
    rows = []
    for _, r in g.iterrows():
        label = labels.get(r["method"], r["method"])
        if r["method"] == REFERENCE:
            label += " (reference)"
        if r["status"] != "ok":
            what = "skipped" if r["status"] == "skipped" else "failed"
            reason = f"{what}: {r['error']}" if r["error"] else what
            rows.append([label, reason[:120]] + [""] * 9)
            continue
        cells = []
        for m in METRICS:
            cells += [num(r[m]), milli(r[f"{m}_diff"], r[f"{m}_flag"])]
        fitted = r["family"] not in ("member", "truth")
        rows.append(
            [label, *cells, num(r["accuracy"], 3), seconds(r["fit_median"]) if fitted else "—"]
        )
    header = ["method"]
    for m in METRICS:
        header += [_NAMES[m], "Δ"]
    return table(header + ["accuracy", "fit s"], rows, "l" + "r" * 10)


def markdown(result: RunResult, command: str, speed: dict | None = None) -> str:
    """The report: setups, the issue's check per set, the default against every peer, one
    table per cell, and the speed section."""
    import pandas as pd

    fits = pd.DataFrame(result.rows)
    lines = ["# Multi-class fusion benchmark", "", f"    {command}", ""]
    if result.scores:
        lines += _setup_table(pd.DataFrame(result.scores)) + [""]
    if len(fits):
        cells = cell_stats(fits)
        check = check_cells(cells)
        if len(check):
            lines += _check_lines(check, check_summary(check))
        lines += _peer_lines(fits, result.labels)
        lines += ["## Per cell", ""]
        for (setup, n), g in cells.groupby(_CELL, sort=False):
            seeds = int(g["n_seeds"].max())
            title = GROUPS.get(g["group"].iloc[0], "")
            lines += [
                f"### `{setup}`, n_fuse = {n:,} ({title.lower()}, C = {g['C'].iloc[0]}, "
                f"{seeds} seed{'s' * (seeds != 1)})",
                "",
            ]
            lines += _cell_table(g, result.labels) + [""]
        lines += [
            f"Metrics on the test rows: log-loss, multi-class Brier (sum over classes), "
            f"top-label and classwise ECE with {ECE_BINS} equal-width bins (fusion.metrics); "
            f"accuracy for reference; mean over seeds. Δ = method - TS of the average "
            f"(`{REFERENCE}`), mean paired difference over seeds, x 1e-3; **W** / B: clearly "
            "worse / better (same sign on every seed and |mean| > sd). fit s: median.",
            "",
        ]
    lines += speed_lines(speed)
    if result.notes:
        lines += ["Notes:", ""] + [f"- {note}" for note in result.notes] + [""]
    lines += [f"Run time: {result.elapsed / 60:.1f} min.", ""]
    return "\n".join(lines)


def write(result: RunResult, out: str, command: str, speed: dict | None = None) -> list[Path]:
    """Write ``report.md``, ``fits.csv`` (one row per fit), ``cells.csv``, ``check.csv``,
    ``scores.csv``, ``speed.json`` and ``run.json`` (command, labels, families, notes, run
    time) into ``out``; :func:`read` rebuilds the report from them."""
    import pandas as pd

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    fits = pd.DataFrame(result.rows)
    names = ("report.md", "fits.csv", "cells.csv", "check.csv", "scores.csv", "speed.json")
    names += ("run.json",)
    paths = [folder / name for name in names]
    paths[0].write_text(markdown(result, command, speed), encoding="utf-8")
    fits.to_csv(paths[1], index=False)
    cells = cell_stats(fits) if len(fits) else pd.DataFrame()
    cells.to_csv(paths[2], index=False)
    (check_cells(cells) if len(cells) else pd.DataFrame()).to_csv(paths[3], index=False)
    pd.DataFrame(result.scores).to_csv(paths[4], index=False)
    paths[5].write_text(json.dumps(speed or {}, indent=1), encoding="utf-8")
    run = {
        "command": command,
        "labels": result.labels,
        "families": result.families,
        "notes": result.notes,
        "elapsed": result.elapsed,
    }
    paths[6].write_text(json.dumps(run, indent=1), encoding="utf-8")
    return paths


def _read_csv(path: Path, **kwargs) -> list[dict]:
    """The rows of a CSV file :func:`write` wrote (none for an empty frame)."""
    import pandas as pd

    try:
        return pd.read_csv(path, **kwargs).to_dict("records")
    except pd.errors.EmptyDataError:
        return []


def read(out: str) -> tuple[RunResult, str, dict]:
    """``(result, command, speed)`` from the files :func:`write` put in ``out``."""
    folder = Path(out)
    run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    speed = json.loads((folder / "speed.json").read_text(encoding="utf-8"))
    fits = _read_csv(folder / "fits.csv", keep_default_na=False, na_values=[""])
    scores = _read_csv(folder / "scores.csv")
    result = RunResult(
        rows=fits,
        scores=scores,
        labels=dict(run["labels"]),
        families=dict(run["families"]),
        notes=list(run["notes"]),
        elapsed=float(run["elapsed"]),
    )
    return result, run["command"], speed or None
