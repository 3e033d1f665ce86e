"""No prediction is exactly 0 or 1: ``proba_bounds_`` of every method.

Isotonic blocks, histogram bins and ENIR's binnings without a positive (or without a
negative) predict exactly 0 (or 1) on data that are far from separated; the rank-only
Bernstein polynomial does at a corner coefficient of 0 or 1. The fitted ``proba_bounds_``
moves those predictions inside (0, 1) by the add-half estimate and leaves every other
prediction as the method computes it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import expit

import fusion
from fusion._base import proba_bounds

from ._methods import METHOD_NAMES, make

ALL = [*METHOD_NAMES, "isotonic", "histogram", "platt", "bernstein_rank_only"]


def _estimator(name):
    if name == "isotonic":
        return fusion.IsotonicCalibrator()
    if name == "histogram":
        return fusion.HistogramBinningCalibrator()
    if name == "platt":
        return fusion.PlattCalibrator()
    if name == "bernstein_rank_only":
        return fusion.BernsteinFusion(base=None, degree=4, lam=1e-4)
    return make(name)


def _sharp(n, seed):
    # two informative scorers, labels from a steep but not separating truth
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=n)
    y = (rng.random(n) < expit(8 * latent)).astype(int)
    S = np.column_stack(
        [expit(3 * latent + rng.normal(size=n)), expit(1.5 * latent + rng.normal(size=n))]
    )
    return S, y


@pytest.mark.parametrize("name", ALL)
def test_predictions_stay_strictly_inside_the_unit_interval(name):
    S, y = _sharp(600, seed=4)
    probe = np.vstack([S, [[0.0, 0.0], [1.0, 1.0], [1e-12, 1e-12], [1 - 1e-12, 1 - 1e-12]]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _estimator(name).fit(S, y)
    low, high = model.proba_bounds_
    assert 0.0 <= low <= high <= 1.0
    p = model.predict_proba(probe)
    assert np.all(p > 0.0) and np.all(p < 1.0), name
    np.testing.assert_allclose(p.sum(axis=1), 1.0)


def test_isotonic_blocks_of_one_class_get_the_add_half_estimate():
    S, y = _sharp(600, seed=5)
    model = fusion.IsotonicCalibrator().fit(S, y)
    unclipped = np.clip(model._calibrate(model.ecdf_.transform(S)), 0.0, 1.0)
    zero, one = unclipped == 0.0, unclipped == 1.0
    assert zero.sum() >= 20 and one.sum() >= 20  # the sharp data do make pure blocks
    low, high = model.proba_bounds_
    inside = unclipped[~zero & ~one]
    assert low == pytest.approx(min(0.5 / (zero.sum() + 1), inside.min()))
    assert high == pytest.approx(max(1 - 0.5 / (one.sum() + 1), inside.max()))
    p = model.predict_proba(S)[:, 1]
    np.testing.assert_array_equal(p[~zero & ~one], inside)  # nothing else moves
    assert np.all(p[zero] == low) and np.all(p[one] == high)
    order = np.argsort(model.ecdf_.transform(S).mean(axis=1), kind="stable")
    assert np.all(np.diff(p[order]) >= 0)  # a clipped non-decreasing function still is


@pytest.mark.parametrize("name", ["isotonic", "mrmic"])
def test_bounds_follow_the_weight_conventions(name):
    S, y = _sharp(400, seed=6)
    k = np.random.default_rng(0).integers(1, 4, size=y.shape[0]).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = _estimator(name).fit(S, y, sample_weight=k).proba_bounds_
        b = _estimator(name).fit(S, y, sample_weight=2.5 * k).proba_bounds_
        rows = np.repeat(np.arange(y.shape[0]), k.astype(int))
        c = _estimator(name).fit(S[rows], y[rows]).proba_bounds_
    np.testing.assert_array_equal(a, b)  # scaling the weights changes nothing
    if name == "isotonic":  # (MR-MIC's graph penalty and ENIR's BIC count rows, not weight)
        np.testing.assert_allclose(a, c, rtol=1e-12)  # an integer weight is repeated rows


def test_proba_bounds_rule():
    w = np.ones(6)
    # no prediction at 0 or 1: 0.5 / (n + 1), capped by the training predictions
    np.testing.assert_allclose(proba_bounds(np.full(6, 0.5), w), [0.5 / 7, 1 - 0.5 / 7])
    np.testing.assert_allclose(
        proba_bounds(np.array([0.01, 0.5, 0.99, 0.5, 0.5, 0.5]), w), [0.01, 0.99]
    )
    # three rows at 0 (weights 1, 2, 1): 0.5 / (4 + 1); one at 1: 1 - 0.5 / 2, capped at 0.9
    p = np.array([0.0, 0.0, 0.0, 0.3, 0.9, 1.0])
    np.testing.assert_allclose(proba_bounds(p, np.array([1, 2, 1, 1, 1, 1.0])), [0.1, 0.9])
