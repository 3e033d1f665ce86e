"""BernsteinFusion.predict_interval: bootstrap refits (n_bootstrap), their determinism,
persistence and refusals, and coverage of a known truth."""

from __future__ import annotations

import io

import numpy as np
import pytest

import fusion
from fusion import BernsteinFusion

from ..conftest import simulate


@pytest.fixture(scope="module")
def fitted():
    S, y, _ = simulate(1500, seed=4)
    return BernsteinFusion(n_bootstrap=40).fit(S, y), S


def test_bounds_are_ordered_monotone_and_contain_most_of_the_truth(fitted):
    model, _ = fitted
    S_test, _, p_test = simulate(4000, seed=77)
    lo, hi = model.predict_interval(S_test, alpha=0.1)
    assert lo.shape == hi.shape == (4000,)
    assert np.all(lo <= hi) and np.all(lo > 0) and np.all(hi < 1)
    # a 90 % interval of an undersmoothed bootstrap: most of the true probabilities inside
    # (0.73-0.92 in benchmarks/bench_interval.py), far more than a degenerate interval
    assert np.mean((p_test >= lo) & (p_test <= hi)) > 0.6
    # a wider level gives wider intervals
    lo50, hi50 = model.predict_interval(S_test, alpha=0.5)
    assert np.all(lo <= lo50 + 1e-12) and np.all(hi50 <= hi + 1e-12)
    # each bound is a pointwise quantile of monotone functions: monotone in every score
    g = np.linspace(-3, 3, 40)
    G = np.column_stack([np.repeat(g, 40), np.tile(g, 40)])
    for bound in model.predict_interval(G):
        B = bound.reshape(40, 40)
        assert np.all(np.diff(B, axis=0) >= -1e-12) and np.all(np.diff(B, axis=1) >= -1e-12)


def test_bootstrap_refits_match_a_direct_refit_on_the_resample(fitted):
    model, S = fitted
    y = simulate(1500, seed=4)[1]
    counts = next(model._resamples(S.shape[0]))
    rows = np.repeat(np.arange(S.shape[0]), counts.astype(int))
    lam = model.lam_ * fusion.bernstein.estimator.BOOTSTRAP_LAM_FACTOR
    # the resample's fit with the same normalization, degree, structure and penalty
    direct = BernsteinFusion(
        degree=model.degree_, lam=lam, structure="tensor" if model.coef_.ndim == 2 else "additive"
    )
    direct.fit(S[rows], y[rows])
    x = model.bootstrap_coef_[0]
    p_boot = model._proba_at(x, model._normalize(S), S)
    # the direct fit re-estimates the ECDF on the resample; compare where that matters little
    p_direct = direct.predict_proba(S)[:, 1]
    assert np.median(np.abs(p_boot - p_direct)) < 0.02


def test_bootstrap_is_deterministic_and_saved(fitted, tmp_path):
    model, S = fitted
    S2, y2, _ = simulate(1500, seed=4)
    again = BernsteinFusion(n_bootstrap=40).fit(S2, y2)
    np.testing.assert_array_equal(again.bootstrap_coef_, model.bootstrap_coef_)
    buf = io.BytesIO()
    model.save(buf)
    buf.seek(0)
    loaded = fusion.load(buf)
    for a, b in zip(loaded.predict_interval(S), model.predict_interval(S), strict=True):
        np.testing.assert_array_equal(a, b)


def test_rank_only_model_has_intervals_too():
    S, y, p = simulate(1500, seed=5)
    model = BernsteinFusion(base=None, degree=3, n_bootstrap=30).fit(S, y)
    assert model.bootstrap_coef_.shape == (30, 16)
    lo, hi = model.predict_interval(S)
    assert np.all((0 <= lo) & (lo <= hi) & (hi <= 1))
    assert np.mean((p >= lo) & (p <= hi)) > 0.5


def test_refusals():
    S, y, _ = simulate(300, seed=6)
    plain = BernsteinFusion(lam=1e-2).fit(S, y)
    assert plain.bootstrap_coef_ is None
    with pytest.raises(ValueError, match="n_bootstrap > 0"):
        plain.predict_interval(S)
    boot = BernsteinFusion(lam=1e-2, n_bootstrap=3).fit(S, y)
    for alpha in (0.0, 1.0, -0.1, "0.1"):
        with pytest.raises(ValueError, match="alpha"):
            boot.predict_interval(S, alpha=alpha)
    with pytest.raises(ValueError, match="n_bootstrap"):
        BernsteinFusion(n_bootstrap=-1).fit(S, y)
