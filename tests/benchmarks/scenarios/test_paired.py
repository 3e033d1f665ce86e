"""Tests of benchmarks/scenarios_lib/paired.py: the clearly-worse/better rule and the tables."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scenarios_lib.paired import cell_stats, paired_flag, summary

pd = pytest.importorskip("pandas")


@pytest.mark.parametrize(
    ("diffs", "flag"),
    [
        ([1.0, 2.0, 3.0], "worse"),  # all positive, mean 2 > sd 1
        ([-1.0, -2.0, -3.0], "better"),
        ([0.1, 5.0, 0.2], ""),  # all positive but mean 1.77 < sd 2.8
        ([1.0, -0.1, 2.0], ""),  # not worse on every seed
        ([0.5, 0.5, 0.5], "worse"),  # sd 0 < mean
        ([0.0, 0.0, 0.0], ""),  # identical to the reference
        ([3.0], ""),  # one seed: no sd
        ([1.0, np.nan, 2.0], ""),  # a failed seed is never a verdict
    ],
)
def test_paired_flag_follows_the_issue_definition(diffs, flag):
    assert paired_flag(diffs) == flag


def fit_rows(ref, other, *, method="m", status=None, scenario="s", n=500, fit=1.0):
    """Fit rows of a reference and one method over len(ref) seeds (ece only varies)."""
    rows = []
    for seed, (a, b) in enumerate(zip(ref, other, strict=True)):
        for m, v, st, t in (("ref", a, "ok", 0.5), (method, b, status or "ok", fit)):
            rows.append(
                dict(
                    scenario=scenario, n_fuse=n, seed=seed, method=m, status=st,
                    brier=0.1, log_loss=0.3, ece=v if st == "ok" else math.nan,
                    fit_seconds=t if st == "ok" else math.nan,
                )
            )  # fmt: skip
    return rows


def test_cell_stats_pairs_by_seed_and_flags_each_metric():
    rows = fit_rows([0.010, 0.020, 0.015], [0.012, 0.023, 0.017])
    cells = cell_stats(pd.DataFrame(rows), "ref").set_index("method")
    d = np.array([0.002, 0.003, 0.002])
    assert cells.loc["m", "ece_diff"] == pytest.approx(d.mean())
    assert cells.loc["m", "ece_sd"] == pytest.approx(d.std(ddof=1))
    assert cells.loc["m", "ece_flag"] == "worse"
    assert cells.loc["m", "brier_flag"] == "" and cells.loc["m", "brier_diff"] == 0
    assert cells.loc["m", "ece"] == pytest.approx(np.mean([0.012, 0.023, 0.017]))
    assert cells.loc["m", "fit_ratio"] == pytest.approx(2.0)
    assert cells.loc["ref", "ece_flag"] == "" and cells.loc["ref", "ece_diff"] == 0


def test_skipped_and_failed_cells_are_not_compared():
    rows = fit_rows([0.01, 0.02, 0.03], [0.0, 0.0, 0.0], method="slow", status="skipped")
    rows += fit_rows([0.01, 0.02, 0.03], [0.02, 0.03, 0.04], method="flaky")
    rows[-1].update(status="error", ece=math.nan)  # its last seed failed
    cells = cell_stats(pd.DataFrame(rows).drop_duplicates(["method", "seed"]), "ref")
    cells = cells.set_index("method")
    assert cells.loc["slow", "status"] == "skipped" and cells.loc["slow", "ece_flag"] == ""
    assert cells.loc["flaky", "status"] == "failed" and math.isnan(cells.loc["flaky", "ece_diff"])


def test_summary_counts_flags_and_names_the_worst_cell():
    rows = fit_rows([0.01, 0.02, 0.03], [0.02, 0.03, 0.04], scenario="a")  # worse by 0.01
    rows += fit_rows([0.01, 0.02, 0.03], [0.005, 0.015, 0.025], scenario="b")  # better
    rows += fit_rows([0.01, 0.02, 0.03], [0.0, 0.0, 0.0], method="x", status="skipped")
    cells = cell_stats(pd.DataFrame(rows), "ref")
    s = summary(cells, "ref").set_index("method")
    assert s.loc["m", "cells"] == 2 and s.loc["m", "ece_worse"] == 1
    assert s.loc["m", "ece_better"] == 1 and s.loc["m", "brier_worse"] == 0
    assert s.loc["m", "ece_worst"] == pytest.approx(0.01)
    assert s.loc["m", "ece_worst_cell"] == "a n=500"
    assert s.loc["m", "ece_mean_diff"] == pytest.approx((0.01 - 0.005) / 2)
    assert s.loc["x", "cells"] == 0 and s.loc["x", "skipped"] == 1
    assert s.loc["ref", "ece_worst_cell"] == ""
