"""Tests of fusion/bench/report.py: the Table 1 layout, best marks, Mean column, notes."""

from __future__ import annotations

import numpy as np
import pytest

from fusion.bench import report
from fusion.bench.protocol import BenchConfig, BenchResult

pd = pytest.importorskip("pandas")


def make_result(values, datasets=("adult", "susy"), skipped=(), scaled=("susy",)):
    """``values[method][dataset]`` = list of per-round grid_mce values (ECE/Brier derived)."""
    rows = []
    for m, per in values.items():
        for d, vals in per.items():
            for r, v in enumerate(vals):
                status = "error" if np.isnan(v) else "ok"
                rows.append(
                    dict(
                        dataset=d,
                        round=r,
                        method=m,
                        grid_mce=v,
                        grid_ece=v / 2,
                        brier=v + 10,
                        log_loss=0.3,
                        auc=0.8 + v / 100,
                        binned_ece=1.0,
                        fit_time=0.1,
                        n_cells=5,
                        scorer1_auc=0.8,
                        scorer2_auc=0.7,
                        status=status,
                        error="Boom: x" if status == "error" else "",
                        warnings=0,
                        warning="",
                    )
                )
    info = {
        d: {
            "n_rows": 10_000,
            "n_test": 8_500,
            "min_count": 213 if d in scaled else 1000,
            "scaled": d in scaled,
        }
        for d in datasets
    }
    n_rounds = max(len(v) for per in values.values() for v in per.values())
    cfg = BenchConfig(datasets=datasets, methods=tuple(values), rounds=n_rounds)
    return BenchResult(
        rows=rows,
        skipped=list(skipped),
        datasets=info,
        labels={m: m.upper() for m in values},
        config=cfg,
        elapsed=60.0,
    )


def table_lines(md, block):
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {block} |"))
    return lines[start : start + 2]


def test_cells_are_mean_and_std_with_best_bold_and_mean_column():
    res = make_result(
        {
            "a": {"adult": [1.0, 3.0], "susy": [5.0, 7.0]},
            "b": {"adult": [2.0, 2.0], "susy": [4.0, 4.0]},
        }
    )
    md = report.markdown(res)
    a, b = table_lines(md, "MCE")
    assert a == f"| MCE | A | **2.000±{np.std([1, 3], ddof=1):.3f}** | 6.000±1.414 | 4.000±1.414 |"
    # b is best on SUSY (4 < 6) and in the mean (3 < 4); adult ties at 2.000 -> both bold.
    assert b == "|  | B | **2.000±0.000** | **4.000±0.000** | **3.000±0.000** |"
    assert "| Metric | Method | Adult | SUSY† | Mean |" in md


def test_auc_marks_the_largest_value():
    res = make_result(
        {"a": {"adult": [1.0]}, "b": {"adult": [2.0]}}, datasets=("adult",), scaled=()
    )
    md = report.markdown(res)
    auc = [x for x in md.splitlines() if "0.8" in x and ("| A |" in x or "| B |" in x)]
    assert any("**0.8200**" in x for x in auc) and not any("**0.8100**" in x for x in auc)
    assert "Mean" not in md.splitlines()[2]  # one data set: no Mean column


def test_notes_explain_scaling_skips_and_failures():
    res = make_result(
        {"a": {"adult": [1.0, np.nan], "susy": [2.0, 2.0]}},
        skipped=["CopulaFusion (`copula`): skipped, not available"],
    )
    md = report.markdown(res)
    assert "† SUSY: the test set has 8,500 rows" in md and "213" in md
    assert "Not run: CopulaFusion" in md
    assert "A failed in 1 of 2 rounds on Adult" in md and "Boom: x" in md
    assert "1.000 (1/2)" in md  # the cell says it rests on one round


def test_write_creates_markdown_and_csv(tmp_path):
    res = make_result({"a": {"adult": [1.0, 2.0], "susy": [3.0, 4.0]}})
    md, csv = report.write(res, tmp_path / "out")
    assert md.read_text().startswith("Calibration of fused scores")
    df = pd.read_csv(csv)
    assert len(df) == 4 and list(df.columns[:5]) == [
        "dataset",
        "round",
        "method",
        "label",
        "grid_mce",
    ]
    np.testing.assert_allclose(df["grid_mce"], [1, 2, 3, 4])
