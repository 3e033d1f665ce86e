"""Tests of benchmarks/multiclass_lib/report.py: the issue's check (PASS / FAIL against TS of
the average) and the paired summaries, on hand-made numbers."""

from __future__ import annotations

import numpy as np
import pytest
from multiclass_lib.report import (
    LOG_LOSS_MARGIN,
    TOP_ECE_MARGIN,
    cell_stats,
    check_cells,
    check_summary,
    markdown,
    peer_summary,
)
from multiclass_lib.runner import METRICS, RunResult

pd = pytest.importorskip("pandas")

FAMILY = {"default": "fusion", "ts_avg": "peer", "vector": "peer", "member1_a": "member"}


def fits_frame(cells: dict):
    """``cells[(setup, group)][method] = (log-loss per seed, top-label ECE per seed)``; the
    other metrics copy the log-loss."""
    rows = []
    for (setup, group), methods in cells.items():
        for method, (ll, ece) in methods.items():
            for seed, (a, b) in enumerate(zip(ll, ece, strict=True)):
                row = dict(setup=setup, group=group, n_fuse=1000, C=10, M=3, seed=seed,
                           method=method, label=method, family=FAMILY[method], status="ok",
                           error="", accuracy=0.5, fit_seconds=1.0)  # fmt: skip
                row.update(dict.fromkeys(METRICS, a))
                row["top_label_ece"] = b
                rows.append(row)
    return pd.DataFrame(rows)


REF = ([1.00, 1.10, 1.20], [0.020, 0.030, 0.025])


def plus(values, d):
    return [v + d for v in values]


def shifted(d_log_loss: float, d_ece: float):
    """:data:`REF` shifted by these amounts on every seed."""
    return plus(REF[0], d_log_loss), plus(REF[1], d_ece)


def test_margins_decide_pass_and_fail_per_cell():
    fits = fits_frame(
        {
            # log-loss 0.0015 worse, ECE 0.004 worse: both within the margins
            ("inside", "main"): {"ts_avg": REF, "default": shifted(0.0015, 0.004)},
            # log-loss 0.0025 worse: fails
            ("loss", "main"): {"ts_avg": REF, "default": shifted(0.0025, 0.0)},
            # ECE 0.006 worse (log-loss better): fails
            ("ece", "main"): {"ts_avg": REF, "default": shifted(-0.05, 0.006)},
        }
    )
    check = check_cells(cell_stats(fits)).set_index("setup")
    assert check.loc["inside", "log_loss_diff"] == pytest.approx(0.0015)
    assert check.loc["inside", "top_label_ece_diff"] == pytest.approx(0.004)
    assert check.loc["inside", "pass"]
    assert not check.loc["loss", "pass_log_loss"] and check.loc["loss", "pass_top_ece"]
    assert check.loc["ece", "pass_log_loss"] and not check.loc["ece", "pass_top_ece"]
    assert list(check["pass"]) == [True, False, False]
    s = check_summary(check.reset_index())["main"]
    assert s["cells"] == 3 and s["passed"] == 1
    assert s["failed_cells"] == ["loss 1000", "ece 1000"]
    # mean log-loss: (0.0015 + 0.0025 - 0.05) / 3 below TS: better, but cells fail
    assert s["mean_better"] and not s["verdict"]
    assert s["mean_default"] - s["mean_ref"] == pytest.approx((0.0015 + 0.0025 - 0.05) / 3)


def test_the_mean_over_cells_decides_too_and_sets_are_separate():
    fits = fits_frame(
        {
            # within the margins in both cells but worse on average: the set fails
            ("a", "main"): {"ts_avg": REF, "default": shifted(0.001, 0.0)},
            ("b", "main"): {"ts_avg": REF, "default": shifted(0.001, 0.0)},
            # better everywhere: the held-out set passes
            ("c", "heldout"): {"ts_avg": REF, "default": shifted(-0.01, -0.01)},
        }
    )
    summary = check_summary(check_cells(cell_stats(fits)))
    assert summary["main"]["passed"] == 2 and not summary["main"]["mean_better"]
    assert not summary["main"]["verdict"]
    assert summary["heldout"]["verdict"] and summary["heldout"]["cells"] == 1
    text = markdown(RunResult(fits.to_dict("records"), [], {}, {}), "cmd")
    assert "**Main set: FAIL**" in text and "**Held-out set: PASS**" in text
    assert text.index("### Main set: the issue's check") < text.index("### Held-out set")


def test_a_failed_default_fails_its_cell():
    fits = fits_frame({("x", "main"): {"ts_avg": REF, "default": REF}})
    fits.loc[(fits["method"] == "default") & (fits["seed"] == 1), ["status", "error"]] = [
        "error",
        "ValueError: boom",
    ]
    check = check_cells(cell_stats(fits))
    assert check.loc[0, "status"] == "failed" and not check.loc[0, "pass"]
    assert "FAIL" in markdown(RunResult(fits.to_dict("records"), [], {}, {}), "cmd")


def test_paired_summary_counts_clear_wins_and_losses():
    fits = fits_frame(
        {
            ("a", "main"): {
                "ts_avg": REF,
                "vector": shifted(0.01, 0.0),
                "default": (REF[0], REF[1]),
                "member1_a": REF,
            },
            ("b", "main"): {
                "ts_avg": REF,
                "vector": ([1.0, 1.1, 1.2], REF[1]),
                "default": ([1.01, 1.09, 1.2], REF[1]),  # mixed signs: not flagged
                "member1_a": REF,
            },
        }
    )
    summ = peer_summary(fits, "main").set_index("method")
    assert "member1_a" not in summ.index
    assert summ.loc["vector", "cells"] == 2
    assert summ.loc["vector", "log_loss_B"] == 1 and summ.loc["vector", "log_loss_W"] == 0
    assert summ.loc["vector", "log_loss_mean"] == pytest.approx((-0.01 + 0.0) / 2)
    assert summ.loc["ts_avg", "log_loss_B"] == 0 and summ.loc["ts_avg", "log_loss_W"] == 0


def test_margins_are_the_issues():
    assert (LOG_LOSS_MARGIN, TOP_ECE_MARGIN) == (0.002, 0.005)
    assert np.isclose(LOG_LOSS_MARGIN, 2e-3)
