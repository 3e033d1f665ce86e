"""Paired comparisons over seeds, as both benchmarks make them.

For one metric and one cell, ``d_s = metric(method, seed s) - metric(reference, seed s)``
(same scores, same fusion rows, same test rows). The method is *clearly worse* when
``d_s > 0`` on every seed **and** ``mean(d) > sd(d)`` (sample standard deviation of the
paired differences), *clearly better* when ``d_s < 0`` on every seed and ``-mean(d) > sd(d)``
(the definition of issue 12). Lower is better for every metric.

The helpers here build the per-cell and per-method rows both benchmarks report; which
contender is the reference of a cell is up to each benchmark.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "paired_flag",
    "mean_or_nan",
    "median_or_nan",
    "cell_status",
    "paired_columns",
    "fit_columns",
    "summary_counts",
    "flag_counts",
]


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


def mean_or_nan(values: Any) -> float:
    """The mean of a pandas Series, NaN when it is empty."""
    return float(values.mean()) if len(values) else math.nan


def median_or_nan(values: Any) -> float:
    """The median of a pandas Series, NaN when it is empty."""
    return float(values.median()) if len(values) else math.nan


def cell_status(g: Any) -> str:
    """The status of one method in one cell from its fit rows ``g`` (one per seed).

    Returns
    -------
    str
        ``"skipped"`` when every seed was skipped, ``"failed"`` when any other seed is not
        ``"ok"``, else ``"ok"``.
    """
    if (g["status"] == "skipped").all():
        return "skipped"
    if (g["status"] != "ok").any():
        return "failed"
    return "ok"


def paired_columns(ok: Any, ref: Any | None, metric: str) -> dict[str, float | str]:
    """The paired comparison of one method with a reference in one cell.

    Parameters
    ----------
    ok : pandas.DataFrame
        The method's successful fit rows, indexed by seed.
    ref : pandas.DataFrame or None
        The reference's, likewise; None when there is nothing to compare.
    metric : str
        The metric column.

    Returns
    -------
    dict
        ``<metric>_diff`` (mean paired difference over the common seeds), ``<metric>_sd``
        (its sample sd, NaN for one seed) and ``<metric>_flag`` (:func:`paired_flag`);
        NaN, NaN and ``""`` without a reference or common seeds.
    """
    out: dict[str, float | str] = {
        f"{metric}_diff": math.nan,
        f"{metric}_sd": math.nan,
        f"{metric}_flag": "",
    }
    if ref is None:
        return out
    common = ok.index.intersection(ref.index)
    d = (ok.loc[common, metric] - ref.loc[common, metric]).to_numpy(dtype=float)
    if d.size:
        out[f"{metric}_diff"] = float(d.mean())
        out[f"{metric}_sd"] = float(d.std(ddof=1)) if d.size > 1 else math.nan
        out[f"{metric}_flag"] = paired_flag(d)
    return out


def fit_columns(ok: Any, ref_fit: float) -> dict[str, float]:
    """``fit_median`` (median fit seconds of the rows ``ok``) and ``fit_ratio`` (over
    ``ref_fit``, the reference's median in the same cell; NaN when that is not positive)."""
    fit_median = median_or_nan(ok["fit_seconds"])
    return {
        "fit_median": fit_median,
        "fit_ratio": fit_median / ref_fit if ref_fit > 0 else math.nan,
    }


def summary_counts(method: str, g: Any) -> tuple[dict[str, Any], Any]:
    """The first columns of a method's summary row, and its compared cells.

    Parameters
    ----------
    method : str
        The method's key.
    g : pandas.DataFrame
        Its rows of the per-cell statistics (one per cell, with ``status``).

    Returns
    -------
    row : dict
        ``method``, ``cells`` (compared: status ``"ok"``), ``skipped`` and ``failed``.
    ok : pandas.DataFrame
        The compared cells.
    """
    ok = g[g["status"] == "ok"]
    row = {
        "method": method,
        "cells": len(ok),
        "skipped": int((g["status"] == "skipped").sum()),
        "failed": int((g["status"] == "failed").sum()),
    }
    return row, ok


def flag_counts(ok: Any, metric: str) -> dict[str, int]:
    """``<metric>_worse`` and ``<metric>_better``: the cells of ``ok`` flagged so."""
    return {
        f"{metric}_worse": int((ok[f"{metric}_flag"] == "worse").sum()),
        f"{metric}_better": int((ok[f"{metric}_flag"] == "better").sum()),
    }
