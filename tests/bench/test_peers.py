"""Tests of fusion/bench/peers.py against scikit-learn references and the shape constraint."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit
from sklearn.base import clone
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from fusion.bench.peers import IsotonicMean, LogisticStacking, MonotoneLightGBM

PLAIN = (np.ndarray, float, int, str, dict, type(None))


def data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    S = rng.normal(size=(n, 2)) + rng.normal(size=(n, 1))
    y = (rng.random(n) < expit(S[:, 0] + 0.5 * S[:, 1])).astype(int)
    return S, y


def grid(k=25):
    g = np.linspace(0, 1, k)
    return np.column_stack([a.ravel() for a in np.meshgrid(g, g, indexing="ij")]), k


def assert_plain_fitted_state(est):
    for name, value in vars(est).items():
        if name.endswith("_") and not name.startswith("_") and name != "ecdf_":
            assert isinstance(value, PLAIN), (name, type(value))


def test_logistic_stacking_is_logistic_regression_on_normalized_scores():
    S, y = data()
    est = LogisticStacking(random_state=0).fit(S, y)
    U = est.ecdf_.transform(S)
    ref = LogisticRegression(C=est.C_, max_iter=1000, tol=1e-10).fit(U, y)
    # LogisticRegressionCV refits with its default tolerance (1e-4): agreement to ~1e-2.
    np.testing.assert_allclose(est.coef_, ref.coef_.ravel(), rtol=1e-2)
    np.testing.assert_allclose(est.predict_proba(S)[:, 1], ref.predict_proba(U)[:, 1], atol=2e-3)
    assert est.C_ in set(np.logspace(-4, 4, 10))
    assert_plain_fitted_state(est)


def test_isotonic_mean_is_isotonic_regression_on_the_mean_score():
    S, y = data()
    w = np.random.default_rng(1).uniform(0.5, 2, size=y.shape[0])
    est = IsotonicMean().fit(S, y, sample_weight=w)
    m = est.ecdf_.transform(S).mean(axis=1)
    ref = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(m, y, sample_weight=w)
    G, _ = grid()
    np.testing.assert_allclose(est.calibrating_function(G), ref.predict(G.mean(axis=1)))
    assert_plain_fitted_state(est)


@pytest.mark.parametrize("Est", [IsotonicMean, MonotoneLightGBM])
def test_monotone_peers_are_non_decreasing_in_every_score(Est):
    if Est is MonotoneLightGBM:
        pytest.importorskip("lightgbm")
    S, y = data(300, seed=2)
    params = (
        {"param_grid": {"n_estimators": [30], "num_leaves": [4]}} if Est is MonotoneLightGBM else {}
    )
    est = Est(**params).fit(S, y)
    G, k = grid()
    f = est.calibrating_function(G).reshape(k, k)
    assert np.all(np.diff(f, axis=0) >= -1e-12) and np.all(np.diff(f, axis=1) >= -1e-12)
    assert est._monotone


def test_lightgbm_peer_is_reproducible_and_plain_data():
    pytest.importorskip("lightgbm")
    S, y = data(300, seed=3)
    params = {"param_grid": {"n_estimators": [20, 40], "num_leaves": [4]}, "random_state": 0}
    a = MonotoneLightGBM(**params).fit(S, y)
    b = clone(a).fit(S, y)
    assert a.best_params_ == b.best_params_
    np.testing.assert_array_equal(a.predict_proba(S), b.predict_proba(S))
    assert isinstance(a.booster_, str)
    assert_plain_fitted_state(a)
    # Prediction works from the model string alone (as after a save/load round trip).
    a._booster = None
    np.testing.assert_array_equal(a.predict_proba(S), b.predict_proba(S))
