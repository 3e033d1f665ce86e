"""The parameters every estimator shares (increasing, missing, weights, random_state, cv), and
scores of every kind (infinite, extreme, large integers), for every registered method and the
1-D baselines."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import expit
from sklearn.model_selection import KFold

import fusion

from ._methods import FAST_PARAMS, METHOD_NAMES, RANDOMIZED_PARAMS, RANK_ONLY_PARAMS, make, scores

BASELINES = {
    "platt": fusion.PlattCalibrator,
    "isotonic": fusion.IsotonicCalibrator,
    "histogram": fusion.HistogramBinningCalibrator,
}
ALL_NAMES = METHOD_NAMES + sorted(BASELINES)
by_name = pytest.mark.parametrize("name", ALL_NAMES)


def _make(name, **params):
    if name in BASELINES:
        return BASELINES[name](**params)
    return make(name, **params)


def _proba_columns(n=150, seed=0):
    """A probability-valued score and a logit-scale score, both increasing with P(y=1)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    y = (rng.random(n) < expit(1.5 * z)).astype(int)
    y[:2] = [0, 1]
    S = np.column_stack([expit(z + rng.normal(size=n)), z + rng.normal(size=n)])
    return S, y


@by_name
def test_reversing_a_score_is_fitting_the_reversed_score(name):
    S, y = _proba_columns()
    # a probability column p reverses to 1 - p, any other score s to -s
    R = np.column_stack([1.0 - S[:, 0], -S[:, 1]])
    a = _make(name, increasing=False).fit(R, y)
    b = _make(name, increasing=True).fit(S, y)
    np.testing.assert_array_equal(a.increasing_, [False, False])
    np.testing.assert_allclose(a.predict_proba(R), b.predict_proba(S), atol=1e-9)
    grid = np.column_stack([np.linspace(0.01, 0.99, 30), np.linspace(-3, 3, 30)])
    R_grid = np.column_stack([1.0 - grid[:, 0], -grid[:, 1]])
    np.testing.assert_allclose(a.predict_proba(R_grid), b.predict_proba(grid), atol=1e-9)


@by_name
def test_auto_reverses_only_a_significantly_anti_aligned_score_and_says_so(name):
    S, y = _proba_columns(300, seed=1)
    S[:, 0] = 1.0 - S[:, 0]  # P(negative class) given by mistake
    with pytest.warns(UserWarning, match=r"score column\(s\) 0 .*increasing=True"):
        est = _make(name).fit(S, y)
    np.testing.assert_array_equal(est.increasing_, [False, True])
    ref = _make(name, increasing=[False, True]).fit(S, y)
    np.testing.assert_array_equal(est.predict_proba(S), ref.predict_proba(S))
    # a weakly negative, insignificant score is used as given, silently
    rng = np.random.default_rng(2)
    T = S.copy()
    T[:, 0] = rng.normal(size=300) - 0.02 * y
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est = _make(name).fit(T, y)
    np.testing.assert_array_equal(est.increasing_, [True, True])


@pytest.mark.parametrize("name", [n for n in METHOD_NAMES if n in RANDOMIZED_PARAMS])
def test_default_random_state_gives_bit_identical_fits(name):
    S, y = scores(150, seed=3)
    params = dict(RANDOMIZED_PARAMS[name])
    params.pop("random_state", None)
    a = make(name, RANDOMIZED_PARAMS, **params).fit(S, y).predict_proba(S)
    b = make(name, RANDOMIZED_PARAMS, **params).fit(S, y).predict_proba(S)
    np.testing.assert_array_equal(a, b)


@by_name
def test_fit_accepts_random_state_through_fusion_fit(name):
    S, y = scores(120, seed=4)
    if name in BASELINES:
        est = BASELINES[name](random_state=7).fit(S, y)
    else:
        est = fusion.fit(S, y, method=name, random_state=7, **FAST_PARAMS.get(name, {}))
    assert est.random_state == 7


@by_name
@pytest.mark.parametrize("scale", [1e-8, 1 / 150, 3.0, 1e8])
def test_scaling_all_weights_changes_nothing(name, scale):
    S, y = scores(150, seed=5)
    w = np.random.default_rng(5).uniform(0.2, 3.0, 150)
    a = _make(name).fit(S, y, sample_weight=w)
    b = _make(name).fit(S, y, sample_weight=scale * w)
    np.testing.assert_allclose(a.predict_proba(S), b.predict_proba(S), atol=1e-7)


@by_name
def test_a_zero_weight_is_the_same_as_leaving_the_row_out(name):
    S, y = scores(150, seed=6)
    w = np.random.default_rng(6).uniform(0.2, 3.0, 150)
    drop = np.zeros(150, dtype=bool)
    drop[::7] = True
    a = _make(name).fit(S, y, sample_weight=np.where(drop, 0.0, w))
    b = _make(name).fit(S[~drop], y[~drop], sample_weight=w[~drop])
    np.testing.assert_allclose(a.predict_proba(S), b.predict_proba(S), atol=1e-9)


@by_name
def test_one_huge_weight_is_a_valid_fit(name):
    S, y = scores(150, seed=7)
    w = np.ones(150)
    w[10] = 1e20
    p = _make(name).fit(S, y, sample_weight=w).predict_proba(S)
    assert np.all(np.isfinite(p)) and np.all((p >= 0) & (p <= 1))


@by_name
def test_missing_scores_are_integrated_out(name):
    S, y = scores(200, seed=8)
    S[::10, 1] = np.nan  # 10% missing in one column
    with pytest.raises(ValueError, match=r"NaN at row 0, column 1.*missing='marginal'"):
        _make(name).fit(S, y)
    est = _make(name, missing="marginal").fit(S, y)
    p = est.predict_proba(S)[:, 1]
    assert np.all(np.isfinite(p)) and np.all((p >= 0) & (p <= 1))
    # a row with a missing score: the calibrating function averaged over that score
    row = S[0].copy()
    u0 = est.normalize(row[None, :])[0, 0]
    grid = (np.arange(4000) + 0.5) / 4000
    U = np.column_stack([np.full(grid.size, u0), grid])
    expected = est.calibrating_function(U).mean()
    assert p[0] == pytest.approx(expected, abs=2e-3)
    # every score missing: the base rate
    p_none = est.predict_proba(np.full((1, 2), np.nan))[0, 1]
    assert p_none == pytest.approx(np.mean(y))


@by_name
def test_large_integer_scores_keep_their_ranks(name):
    S, y = scores(120, seed=9)
    ranks = np.argsort(np.argsort(S, axis=0), axis=0)
    big = (2**60 + ranks).astype(np.int64)  # distinct as integers, equal as float64
    params = RANK_ONLY_PARAMS.get(name, {})
    a = _make(name, **params).fit(big, y)
    b = _make(name, **params).fit(ranks.astype(float), y)
    np.testing.assert_allclose(a.predict_proba(big), b.predict_proba(ranks.astype(float)))
    if params:  # a model on the scores' own scale sees them as float64: a valid fit still
        p = _make(name).fit(big, y).predict_proba(big)[:, 1]
        assert np.all(np.isfinite(p)) and np.all((p > 0) & (p < 1))


@pytest.mark.parametrize(
    "name", [n for n in ALL_NAMES if "cv" in _make(n).get_params()] if ALL_NAMES else []
)
def test_cv_takes_a_splitter_or_index_pairs(name):
    S, y = scores(150, seed=10)
    params = RANDOMIZED_PARAMS.get(name, {})
    splitter = KFold(3, shuffle=True, random_state=0)
    pairs = list(splitter.split(S, y))
    a = make(name, RANDOMIZED_PARAMS, **{**params, "cv": splitter}).fit(S, y)
    b = make(name, RANDOMIZED_PARAMS, **{**params, "cv": pairs}).fit(S, y)
    np.testing.assert_array_equal(a.predict_proba(S), b.predict_proba(S))


@by_name
@pytest.mark.parametrize(
    "extremes",
    [
        [np.finfo(float).max, -np.finfo(float).max],
        [1e308, -1e308],
        [5e-324, -5e-324],
        [np.inf, -np.inf],
    ],
    ids=["float-max", "1e308", "subnormal", "inf"],
)
def test_extreme_training_scores_act_through_their_ranks(name, extremes):
    # Each extreme value replaces the largest/smallest score of a column: the ranks, hence
    # every ECDF-normalized method's fit, are those of a moderate stand-in value.
    S, y = scores(120, seed=11)
    hi, lo = np.argmax(S[:, 1]), np.argmin(S[:, 1])
    X = S.copy()
    X[hi, 1], X[lo, 1] = max(extremes), min(extremes)
    if max(extremes) == 5e-324:  # subnormals: between the neighbours instead
        X[:, 1] = np.argsort(np.argsort(S[:, 1])) * 5e-324 - 60 * 5e-324
    a = _make(name, increasing=True).fit(X, y)
    p = a.predict_proba(X)
    assert np.all(np.isfinite(p)) and np.all((p >= 0) & (p <= 1))
    if getattr(a, "base_", None) is None:  # rank-only methods
        Z = S.copy()
        Z[:, 1] = np.argsort(np.argsort(X[:, 1], kind="stable"), kind="stable")
        b = _make(name, increasing=True).fit(Z, y)
        np.testing.assert_allclose(p, b.predict_proba(Z), atol=1e-9)


@pytest.mark.parametrize("name", METHOD_NAMES)
def test_rank_based_fits_on_logits_equal_fits_on_probabilities_with_missing_and_saturated_scores(
    name,
):
    # The logit of a probability is a strictly increasing map of [0, 1] onto [-inf, inf]:
    # new probabilities of exactly 0 and 1 (infinite logits), missing scores, scores between
    # and beyond the training ones all get the same normalized values, so equal predictions.
    S, y = _proba_columns(seed=12)
    P = np.column_stack([S[:, 0], expit(S[:, 1])])
    P[::9, 1] = np.nan
    rng = np.random.default_rng(12)
    X = np.column_stack([rng.random(40), rng.random(40)])
    X[:6] = [[0.0, 0.5], [1.0, 0.5], [0.5, 0.0], [0.5, 1.0], [0.0, np.nan], [np.nan, 1.0]]
    X[6:10] = P[10:14]  # ties with training scores
    X[10:14, 0] = [P[:, 0].min() / 2, (1.0 + P[:, 0].max()) / 2, 1e-300, 1.0 - 1e-16]
    params = {**RANK_ONLY_PARAMS.get(name, {}), "missing": "marginal", "increasing": True}
    a = make(name, **params).fit(P, y)
    with np.errstate(divide="ignore"):
        b = make(name, **params).fit(np.log(P / (1 - P)), y)
        np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(np.log(X / (1 - X))))


@pytest.mark.parametrize("name", METHOD_NAMES)
def test_rank_based_predictions_are_constant_between_the_knots_of_a_sketch(name):
    # With ecdf_knots below the distinct values, a score's normalized value (a training
    # score's too) depends only on its position among the sketch's knots.
    S, y = scores(300, seed=13)
    est = make(name, **RANK_ONLY_PARAMS.get(name, {}), ecdf_knots=25, increasing=True)
    est.fit(S, y)
    knots = est.ecdf_.knots_[0]
    assert knots.size == 25
    inside = (S[:, 0] > knots[0]) & (S[:, 0] < knots[-1]) & ~np.isin(S[:, 0], knots)
    gap = np.searchsorted(knots, S[inside, 0])
    moved = S[inside].copy()
    # another point of the same gap between two knots, on the left of the gap's middle
    moved[:, 0] = knots[gap - 1] + (knots[gap] - knots[gap - 1]) * 0.25
    np.testing.assert_array_equal(est.predict_proba(S[inside]), est.predict_proba(moved))
