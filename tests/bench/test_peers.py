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


def test_u_scale_logistic_stacking_is_logistic_regression_on_normalized_scores():
    S, y = data()
    est = LogisticStacking(scale="u", random_state=0).fit(S, y)
    U = est.ecdf_.transform(S)
    ref = LogisticRegression(C=est.C_, max_iter=1000, tol=1e-10).fit(U, y)
    # LogisticRegressionCV refits with its default tolerance (1e-4): agreement to ~1e-2.
    np.testing.assert_allclose(est.coef_, ref.coef_.ravel(), rtol=1e-2)
    np.testing.assert_allclose(est.predict_proba(S)[:, 1], ref.predict_proba(U)[:, 1], atol=2e-3)
    assert est.C_ in set(np.logspace(-4, 4, 10))
    assert not est.logit_columns_.any()
    assert_plain_fitted_state(est)


def mixed_scores(n=500, seed=4):
    """Column 0 a probability (with exact 0s and 1s), column 1 a raw score."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 2)) * [2.0, 1.0]
    y = (rng.random(n) < expit(z[:, 0] + z[:, 1])).astype(int)
    p = expit(1.5 * z[:, 0])
    p[:5], p[5:10] = 0.0, 1.0
    return np.column_stack([p, 3 * z[:, 1] - 1]), y


def test_logistic_stacking_is_logistic_regression_on_the_logits_as_a_user_fits_it():
    S, y = mixed_scores()
    est = LogisticStacking(random_state=0).fit(S, y)
    assert est.scale == "logit" and est.logit_columns_.tolist() == [True, False]
    p = np.clip(S[:, 0], 1e-6, 1 - 1e-6)
    Z = np.column_stack([np.log(p / (1 - p)), S[:, 1]])
    ref = LogisticRegression(C=est.C_, max_iter=1000, tol=1e-10).fit(Z, y)
    np.testing.assert_allclose(est.coef_, ref.coef_.ravel(), rtol=1e-2)
    S_new, _ = mixed_scores(200, seed=5)
    S_new[0, 1] = 1e3  # beyond the training range: extrapolated, not clamped
    p_new = np.clip(S_new[:, 0], 1e-6, 1 - 1e-6)
    Z_new = np.column_stack([np.log(p_new / (1 - p_new)), S_new[:, 1]])
    np.testing.assert_allclose(
        est.predict_proba(S_new)[:, 1], ref.predict_proba(Z_new)[:, 1], atol=2e-3
    )
    assert est.predict_proba(S_new)[0, 1] > 1 - 1e-12
    assert_plain_fitted_state(est)


def test_logit_scale_calibrating_function_agrees_with_predict_proba_on_training_scores():
    # The grid metrics evaluate calibrating_function on the normalized square; it must be the
    # same model as predict_proba (inverse ECDF is exact at the training scores).
    S, y = mixed_scores()
    est = LogisticStacking(Cs=[1.0], random_state=0).fit(S, y)
    np.testing.assert_allclose(
        est.calibrating_function(est.ecdf_.transform(S)), est.predict_proba(S)[:, 1], rtol=1e-12
    )


def test_logit_and_u_scale_are_different_models():
    S, y = mixed_scores()
    a = LogisticStacking(Cs=[1.0]).fit(S, y).predict_proba(S)[:, 1]
    b = LogisticStacking(Cs=[1.0], scale="u").fit(S, y).predict_proba(S)[:, 1]
    assert np.max(np.abs(a - b)) > 0.05


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
