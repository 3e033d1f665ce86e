"""Paired comparisons with the reference, per cell (scenario x fusion sample size).

For one metric and one cell, ``d_s = metric(method, seed s) - metric(reference, seed s)``
(same scores, same fusion rows, same test rows). The method is *clearly worse* when
``d_s > 0`` on every seed **and** ``mean(d) > sd(d)`` (sample standard deviation of the
paired differences), *clearly better* when ``d_s < 0`` on every seed and ``-mean(d) > sd(d)``
(the definition of issue 12). Lower is better for all three metrics.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["METRICS", "paired_flag", "cell_stats", "summary"]

#: Metric columns of a fit row (all: lower is better).
METRICS: tuple[str, ...] = ("brier", "log_loss", "ece")


def paired_flag(diffs) -> str:
    """``"worse"``, ``"better"`` or ``""`` for paired differences (method - reference).

    Needs at least two seeds (the sd of one difference is undefined): fewer give ``""``.
    """
    d = np.asarray(diffs, dtype=float)
    if d.size < 2 or not np.all(np.isfinite(d)):
        return ""
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if np.all(d > 0) and mean > sd:
        return "worse"
    if np.all(d < 0) and -mean > sd:
        return "better"
    return ""


def cell_stats(fits, reference: str):
    """One row per (scenario, n_fuse, method) with the paired statistics.

    Parameters
    ----------
    fits : pandas.DataFrame
        Fit rows: ``scenario``, ``n_fuse``, ``seed``, ``method``, ``status`` (``"ok"``,
        ``"error"``, ``"skipped"``), the :data:`METRICS` and ``fit_seconds``.
    reference : str
        Method key of the reference.

    Returns
    -------
    pandas.DataFrame
        Columns: ``scenario``, ``n_fuse``, ``method``, ``status`` (``"ok"``, ``"skipped"``,
        ``"failed"``), ``n_seeds``, then per metric ``<m>`` (mean over seeds),
        ``<m>_diff`` (mean paired difference), ``<m>_sd`` (its sd), ``<m>_flag``; and
        ``fit_median`` / ``fit_ratio`` (median fit seconds, and its ratio to the
        reference's in the same cell).
    """
    import pandas as pd

    out = []
    for (scen, n), cell in fits.groupby(["scenario", "n_fuse"], sort=False):
        ref = cell[(cell["method"] == reference) & (cell["status"] == "ok")].set_index("seed")
        ref_fit = float(ref["fit_seconds"].median()) if len(ref) else math.nan
        for method, g in cell.groupby("method", sort=False):
            row = {"scenario": scen, "n_fuse": int(n), "method": method, "n_seeds": len(g)}
            if (g["status"] == "skipped").all():
                row["status"] = "skipped"
            elif (g["status"] != "ok").any():
                row["status"] = "failed"
            else:
                row["status"] = "ok"
            ok = g[g["status"] == "ok"].set_index("seed")
            for m in METRICS:
                row[m] = float(ok[m].mean()) if len(ok) else math.nan
                row[f"{m}_diff"] = row[f"{m}_sd"] = math.nan
                row[f"{m}_flag"] = ""
                if row["status"] != "ok" or not len(ref):
                    continue
                common = ok.index.intersection(ref.index)
                d = (ok.loc[common, m] - ref.loc[common, m]).to_numpy(dtype=float)
                if d.size:
                    row[f"{m}_diff"] = float(d.mean())
                    row[f"{m}_sd"] = float(d.std(ddof=1)) if d.size > 1 else math.nan
                    row[f"{m}_flag"] = paired_flag(d)
            row["fit_median"] = float(ok["fit_seconds"].median()) if len(ok) else math.nan
            row["fit_ratio"] = row["fit_median"] / ref_fit if ref_fit > 0 else math.nan
            out.append(row)
    return pd.DataFrame(out)


def _cell_name(row) -> str:
    return f"{row['scenario']} n={int(row['n_fuse']):,}"


def summary(cells, reference: str):
    """Per method: clearly worse / better counts per metric, mean metrics, worst gaps.

    Returns
    -------
    pandas.DataFrame
        One row per method (in order of first appearance): ``cells`` (compared),
        ``skipped``, ``failed``, ``<m>_worse``, ``<m>_better``, ``<m>_mean`` (over the
        compared cells), ``<m>_mean_diff`` (mean paired difference over them),
        ``<m>_worst`` and ``<m>_worst_cell`` (largest mean difference and where),
        ``fit_ratio_median`` (median over cells of the fit-time ratio to the reference).
    """
    import pandas as pd

    rows = []
    for method, g in cells.groupby("method", sort=False):
        ok = g[g["status"] == "ok"]
        row = {
            "method": method,
            "cells": len(ok),
            "skipped": int((g["status"] == "skipped").sum()),
            "failed": int((g["status"] == "failed").sum()),
        }
        for m in METRICS:
            row[f"{m}_worse"] = int((ok[f"{m}_flag"] == "worse").sum())
            row[f"{m}_better"] = int((ok[f"{m}_flag"] == "better").sum())
            row[f"{m}_mean"] = float(ok[m].mean()) if len(ok) else math.nan
            diffs = ok[f"{m}_diff"].dropna()
            row[f"{m}_mean_diff"] = float(diffs.mean()) if len(diffs) else math.nan
            if len(diffs) and method != reference:
                worst = ok.loc[diffs.idxmax()]
                row[f"{m}_worst"] = float(worst[f"{m}_diff"])
                row[f"{m}_worst_cell"] = _cell_name(worst)
            else:
                row[f"{m}_worst"] = math.nan
                row[f"{m}_worst_cell"] = ""
        ratios = ok["fit_ratio"].dropna()
        row["fit_ratio_median"] = float(ratios.median()) if len(ratios) else math.nan
        row["fit_median"] = float(ok["fit_median"].median()) if len(ok) else math.nan
        rows.append(row)
    return pd.DataFrame(rows)
