"""Tests of fusion/bench/multiclass/report.py: best peer per cell, paired flags."""

from __future__ import annotations

import numpy as np
import pytest

from fusion.bench.multiclass.report import cell_stats, summary
from fusion.bench.multiclass.runner import METRICS

pd = pytest.importorskip("pandas")


def fits_frame(values: dict[str, list[float]], family: dict[str, str]):
    """One cell, seeds 0..k-1; every metric of a method equals its value on that seed."""
    rows = []
    for method, per_seed in values.items():
        for seed, v in enumerate(per_seed):
            row = dict(
                setup="toy",
                n_fuse=100,
                seed=seed,
                method=method,
                family=family[method],
                status="ok",
                error="",
                accuracy=0.9,
                fit_seconds=1.0 + seed,
            )
            row.update(dict.fromkeys(METRICS, v))
            rows.append(row)
    return pd.DataFrame(rows)


FAMILY = {"a": "peer", "b": "peer", "ours": "fusion", "s1": "scorer", "lr_logp": "peer"}


def test_the_best_peer_is_the_lowest_mean_and_flags_follow_the_paired_rule():
    fits = fits_frame(
        {
            "a": [0.50, 0.52, 0.51],
            "b": [0.40, 0.45, 0.41],  # the best peer
            "lr_logp": [0.60, 0.60, 0.60],
            "ours": [0.38, 0.43, 0.39],  # 0.02 lower on every seed: clearly better
            "s1": [0.90, 0.95, 0.92],
        },
        FAMILY,
    )
    cells = cell_stats(fits).set_index("method")
    for m in METRICS:
        assert (cells[f"{m}_ref"] == "b").all()
    assert cells.loc["ours", "log_loss_diff"] == pytest.approx(-0.02)
    assert cells.loc["ours", "log_loss_flag"] == "better"
    assert cells.loc["ours", "log_loss_vs_scorer"] == "better"
    assert cells.loc["a", "brier_flag"] == "worse"
    assert cells.loc["b", "brier_diff"] == 0.0 and cells.loc["b", "brier_flag"] == ""
    assert cells.loc["ours", "fit_ratio"] == pytest.approx(1.0)  # same fit times as lr_logp
    summ = summary(cell_stats(fits)).set_index("method")
    assert "s1" not in summ.index
    assert summ.loc["ours", "log_loss_better"] == 1 and summ.loc["a", "log_loss_worse"] == 1
    assert summ.loc["ours", "beats_scorers"] == 1


def test_mixed_signs_are_not_flagged_and_failures_are_not_compared():
    fits = fits_frame(
        {
            "b": [0.40, 0.40, 0.40],
            "ours": [0.30, 0.50, 0.39],
            "lr_logp": [0.5] * 3,
            "s1": [1.0] * 3,
            "a": [0.45] * 3,
        },
        FAMILY,
    )
    fits.loc[(fits["method"] == "a") & (fits["seed"] == 1), ["status", "error"]] = [
        "error",
        "ValueError: boom",
    ]
    cells = cell_stats(fits).set_index("method")
    assert cells.loc["ours", "log_loss_flag"] == ""
    assert cells.loc["a", "status"] == "failed" and "boom" in cells.loc["a", "error"]
    assert np.isnan(cells.loc["a", "log_loss_diff"])
