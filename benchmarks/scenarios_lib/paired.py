"""Paired comparisons with the reference, per cell (scenario x fusion sample size).

Every method is compared with LR on the logits (the reference) by paired differences over
seeds and flagged clearly worse / clearly better as :mod:`harness.paired` defines
(the definition of issue 12). Lower is better for all three metrics.
"""

from __future__ import annotations

import math

from harness.paired import (
    cell_status,
    fit_columns,
    flag_counts,
    mean_or_nan,
    median_or_nan,
    paired_columns,
    paired_flag,
    summary_counts,
)

__all__ = ["METRICS", "paired_flag", "cell_stats", "summary"]

#: Metric columns of a fit row (all: lower is better).
METRICS: tuple[str, ...] = ("brier", "log_loss", "ece")


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
        ref_fit = median_or_nan(ref["fit_seconds"])
        for method, g in cell.groupby("method", sort=False):
            row = {"scenario": scen, "n_fuse": int(n), "method": method, "n_seeds": len(g)}
            row["status"] = cell_status(g)
            ok = g[g["status"] == "ok"].set_index("seed")
            against = ref if row["status"] == "ok" and len(ref) else None
            for m in METRICS:
                row[m] = mean_or_nan(ok[m])
                row.update(paired_columns(ok, against, m))
            row.update(fit_columns(ok, ref_fit))
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
        row, ok = summary_counts(method, g)
        for m in METRICS:
            row.update(flag_counts(ok, m))
            row[f"{m}_mean"] = mean_or_nan(ok[m])
            diffs = ok[f"{m}_diff"].dropna()
            row[f"{m}_mean_diff"] = mean_or_nan(diffs)
            if len(diffs) and method != reference:
                worst = ok.loc[diffs.idxmax()]
                row[f"{m}_worst"] = float(worst[f"{m}_diff"])
                row[f"{m}_worst_cell"] = _cell_name(worst)
            else:
                row[f"{m}_worst"] = math.nan
                row[f"{m}_worst_cell"] = ""
        row["fit_ratio_median"] = median_or_nan(ok["fit_ratio"].dropna())
        row["fit_median"] = median_or_nan(ok["fit_median"])
        rows.append(row)
    return pd.DataFrame(rows)
