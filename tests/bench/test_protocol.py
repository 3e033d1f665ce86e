"""Tests of fusion/bench/protocol.py: samples, scorers, metrics, reproducibility."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logit
from sklearn.metrics import roc_auc_score

from fusion import BernsteinFusion, metrics
from fusion.bench import protocol as P
from fusion.bench.methods import METHOD_TABLE
from fusion.bench.peers import IsotonicMean

from .conftest import synthetic_dataset

SPECS = {m.key: m for m in METHOD_TABLE}


def test_split_round_gives_three_disjoint_samples_and_the_rest():
    a, b, c, test = P.split_round(2000, np.random.default_rng(0), 500)
    assert [len(a), len(b), len(c), len(test)] == [500, 500, 500, 500]
    together = np.concatenate([a, b, c, test])
    assert np.array_equal(np.sort(together), np.arange(2000))


def test_split_round_test_size_and_reproducibility():
    first = P.split_round(10_000, P.round_rng(3, "adult", 2), 500, test_size=1000)
    again = P.split_round(10_000, P.round_rng(3, "adult", 2), 500, test_size=1000)
    other = P.split_round(10_000, P.round_rng(3, "adult", 3), 500, test_size=1000)
    assert len(first[3]) == 1000
    assert all(np.array_equal(x, y) for x, y in zip(first, again, strict=True))
    assert not np.array_equal(first[0], other[0])
    assert not set(first[3]) & set(np.concatenate(first[:3]))


def test_split_round_refuses_data_without_test_rows():
    with pytest.raises(ValueError, match="leave no test rows"):
        P.split_round(1500, np.random.default_rng(0), 500)


def test_effective_min_count_scales_small_test_sets_only():
    assert P.effective_min_count(40_000, 1000) == 1000
    assert P.effective_min_count(579_512, 1000) == 1000
    assert P.effective_min_count(8_500, 1000) == 213  # the SUSY copy
    assert P.effective_min_count(10, 1000) == 1
    counts = [P.effective_min_count(n, 1000) for n in range(100, 40_000, 997)]
    assert counts == sorted(counts)


def test_mlp_logit_is_the_logit_of_predict_proba():
    data = synthetic_dataset(600)
    scorer = P.make_scorer(["kind"], ["x0", "x1", "x2"], 10, random_state=0)
    scorer.fit(data.X.iloc[:300], data.y[:300])
    s = P.mlp_logit(scorer, data.X.iloc[300:])
    p = scorer.predict_proba(data.X.iloc[300:])[:, 1]
    ok = (p > 1e-12) & (p < 1 - 1e-12)
    np.testing.assert_allclose(s[ok], logit(p[ok]), rtol=1e-8, atol=1e-8)


def test_prepare_round_scores_fusion_sample_and_test_set():
    data = synthetic_dataset(2000)
    rd = P.prepare_round(data, np.random.default_rng(0), n_sample=200, test_size=900)
    assert rd.S_fuse.shape == (200, 2) and rd.S_test.shape == (900, 2)
    assert rd.y_fuse.shape == (200,) and rd.y_test.shape == (900,)
    # Two different networks: different scores, both better than chance on this easy task.
    assert not np.allclose(rd.S_test[:, 0], rd.S_test[:, 1])
    assert min(rd.scorer_auc) > 0.75
    assert rd.scorer_auc[0] == pytest.approx(roc_auc_score(rd.y_test, rd.S_test[:, 0]))


def round_data(seed=0):
    return P.prepare_round(synthetic_dataset(3000, seed), np.random.default_rng(seed), n_sample=300)


def test_evaluate_method_reports_the_package_metrics():
    rd = round_data()
    row = P.evaluate_method(BernsteinFusion(degree=3), rd, min_count=50)
    model = BernsteinFusion(degree=3).fit(rd.S_fuse, rd.y_fuse)
    p = model.predict_proba(rd.S_test)[:, 1]
    table = metrics.grid_calibration_table(model, rd.S_test, rd.y_test, min_count=50)
    assert row["status"] == "ok"
    assert row["brier"] == pytest.approx(100 * metrics.brier_score(rd.y_test, p))
    assert row["grid_mce"] == pytest.approx(100 * table.mce)
    assert row["grid_ece"] == pytest.approx(100 * table.ece)
    assert row["n_cells"] == table.n_kept
    assert row["auc"] == pytest.approx(roc_auc_score(rd.y_test, p))
    assert row["binned_ece"] == pytest.approx(100 * metrics.binned_ece(rd.y_test, p))
    # lam_ = inf: no Bernstein correction, reported as degree 0
    assert row["fit_time"] > 0 and row["selected"] == "degree_=(0, 0); lam_=inf"


class Broken(IsotonicMean):
    def _fit_normalized(self, U, y, sample_weight):
        raise RuntimeError("solver exploded")


def test_a_failing_method_is_recorded_not_raised():
    row = P.evaluate_method(Broken(), round_data(), min_count=50)
    assert row["status"] == "error" and "solver exploded" in row["error"]
    assert np.isnan(row["brier"]) and np.isnan(row["grid_ece"])


def test_no_grid_cell_keeps_the_other_metrics():
    rd = round_data()
    row = P.evaluate_method(IsotonicMean(), rd, min_count=10**6)
    assert row["status"] == "no-grid-cell" and "min_count" in row["error"]
    assert np.isnan(row["grid_mce"]) and np.isfinite(row["brier"])


@pytest.fixture
def fast_scorers(monkeypatch):
    # networks trained for 30 epochs, not the benchmark's 500: these tests are about the
    # protocol's seeds and bookkeeping, which any scores show
    monkeypatch.setattr(P, "MLP_MAX_ITER", 30)


def run_toy(loader, datasets, rounds=1, **kw):
    runnable = [(SPECS["bernstein"], BernsteinFusion), (SPECS["isotonic"], IsotonicMean)]
    cfg = P.BenchConfig(datasets=datasets, rounds=rounds, n_sample=200, quick=True, **kw)
    return P.run(cfg, loader=loader, progress=False, runnable=runnable)


def numbers(rows, dataset):
    keys = ("grid_mce", "grid_ece", "brier", "log_loss", "auc", "n_cells")
    return [tuple(r[k] for k in keys) for r in rows if r["dataset"] == dataset]


def test_run_is_reproducible_from_the_seed_and_per_dataset(toy_loader, fast_scorers):
    first = run_toy(toy_loader, ("a", "bb"), rounds=2, seed=5)
    again = run_toy(toy_loader, ("bb",), rounds=2, seed=5)
    other = run_toy(toy_loader, ("bb",), seed=6)
    assert len(first.rows) == 2 * 2 * 2
    assert numbers(first.rows, "bb")[:2] != numbers(first.rows, "bb")[2:]  # rounds differ
    assert numbers(first.rows, "bb") == numbers(again.rows, "bb")
    assert numbers(first.rows, "bb")[:2] != numbers(other.rows, "bb")


def test_run_scales_min_count_for_small_test_sets(toy_loader, fast_scorers):
    result = run_toy(toy_loader, ("a",))
    info = result.datasets["a"]
    assert info["n_test"] == 2000 - 600
    assert info["scaled"] and info["min_count"] == P.effective_min_count(1400, 1000) == 35
    assert {r["min_count"] for r in result.rows} == {35}
    assert {r["status"] for r in result.rows} == {"ok"}


def test_a_methods_numbers_do_not_depend_on_the_other_methods(toy_loader, fast_scorers):
    cfg = P.BenchConfig(datasets=("a",), rounds=1, n_sample=200, quick=True)
    spec = SPECS["bernstein"]
    alone = P.run(cfg, loader=toy_loader, progress=False, runnable=[(spec, BernsteinFusion)])
    after = P.run(
        cfg,
        loader=toy_loader,
        progress=False,
        runnable=[(SPECS["isotonic"], IsotonicMean), (spec, BernsteinFusion)],
    )
    assert numbers(alone.rows, "a") == numbers(after.rows[1:], "a")
    assert P.method_seed(0, "a", 0, "bernstein") != P.method_seed(0, "a", 0, "isotonic")
