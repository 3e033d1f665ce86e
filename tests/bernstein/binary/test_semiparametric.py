"""BernsteinFusion's default model: guarantees, invariances, parameters (estimator level)."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit, logit

from fusion import BernsteinFusion, SolverError, SolverWarning
from fusion.bernstein import newton

from ...conftest import simulate


def _probabilities(n, M, seed, flip=False):
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=n)
    logits = np.linspace(1.0, 2.0, M) * (latent[:, None] + 0.8 * rng.normal(size=(n, M)))
    p = 0.05 + 0.9 * expit(1.5 * latent)
    y = (rng.random(n) < p).astype(int)
    return expit(logits), (1 - y if flip else y)


def _grid(lo, hi, M, k):
    axes = np.meshgrid(*[np.linspace(lo, hi, k)] * M, indexing="ij")
    return np.stack([a.ravel() for a in axes], axis=1), (k,) * M


@settings(max_examples=20, deadline=None)
@given(
    M=st.integers(1, 3),
    degree=st.integers(1, 5),
    lam=st.sampled_from([0.0, 1e-4, 1e-2, 1.0, float("inf"), "cv"]),
    seed=st.integers(0, 10_000),
    flip=st.booleans(),
    raw=st.booleans(),
)
def test_monotone_continuous_and_strictly_inside_the_unit_interval(M, degree, lam, seed, flip, raw):
    S, y = _probabilities(150, M, seed, flip)  # flipped labels push every constraint to bind
    if raw:
        S = np.log(S / (1 - S)) * 3.0 + 1.0  # scores on another scale: base "identity"
    model = BernsteinFusion(degree=degree, lam=lam, cv=3, increasing=True).fit(S, y)
    assert np.all(model.base_coef_ >= 0)
    if model.coef_.ndim == M:
        for axis in range(M):
            assert np.all(np.diff(model.coef_, axis=axis) >= 0)
    # a dense grid of raw scores, far beyond the training range on both sides
    lo, hi = (-0.2, 1.2) if not raw else (S.min() - 5, S.max() + 5)
    k = {1: 2000, 2: 80, 3: 20}[M]
    G, shape = _grid(lo, hi, M, k)
    if not raw:
        G = np.clip(G, 0.0, 1.0)
    p = model.predict_proba(G)[:, 1].reshape(shape)
    assert np.all(p > 0) and np.all(p < 1)
    for axis in range(M):
        assert np.all(np.diff(p, axis=axis) >= -1e-12)
    # continuity: a step of 1e-7 in one score moves p by a bounded multiple of it
    rng = np.random.default_rng(seed)
    X = S[rng.integers(0, S.shape[0], 50)]
    X = np.vstack([X, S.min(0), S.max(0)])  # the winsorization points too
    step = 1e-7 * (1.0 if raw else 0.1)
    for m in range(M):
        Xs = X.copy()
        Xs[:, m] += step
        if not raw:
            Xs = np.clip(Xs, 0, 1)
        dp = np.abs(model.predict_proba(Xs)[:, 1] - model.predict_proba(X)[:, 1])
        assert dp.max() < 1e-3


def test_base_auto_takes_logits_of_probabilities_and_raw_scores_otherwise():
    S, y = _probabilities(400, 2, 0)
    raw = np.column_stack([S[:, 0], np.log(S[:, 1] / (1 - S[:, 1]))])
    model = BernsteinFusion(degree=3, lam=1e-2).fit(raw, y)
    assert model.base_ == ("logit", "identity")
    # a column of probabilities under base="logit" is that column's logit under "identity"
    as_logit = BernsteinFusion(degree=3, lam=1e-2, base="logit").fit(S, y)
    as_raw = BernsteinFusion(degree=3, lam=1e-2, base="identity").fit(np.log(S / (1 - S)), y)
    np.testing.assert_allclose(
        as_logit.predict_proba(S), as_raw.predict_proba(np.log(S / (1 - S))), atol=1e-8
    )
    with pytest.raises(ValueError, match="base='logit' takes probabilities"):
        BernsteinFusion(base="logit").fit(raw, y)


def test_predictions_do_not_depend_on_the_unit_of_a_raw_score():
    S, y, _ = simulate(800, seed=2)
    a = BernsteinFusion(random_state=0).fit(S, y)
    b = BernsteinFusion(random_state=0).fit(S * np.array([1e-3, 250.0]) + np.array([7, -3]), y)
    assert a.lam_ == b.lam_
    T, _, _ = simulate(500, seed=3)
    np.testing.assert_allclose(
        a.predict_proba(T),
        b.predict_proba(T * np.array([1e-3, 250.0]) + np.array([7, -3])),
        atol=1e-8,
    )


def test_new_extreme_scores_are_winsorized_at_the_training_range():
    S, y, _ = simulate(600, seed=4)
    model = BernsteinFusion(degree=4, lam=1e-3).fit(S, y)
    lo, hi = S.min(0), S.max(0)
    far = np.array([[-1e300, -1e300], [1e300, 1e300], [hi[0] + 50, lo[1] - 50]])
    np.testing.assert_allclose(
        model.predict_proba(far),
        model.predict_proba(np.array([lo, hi, [hi[0], lo[1]]])),
        rtol=0,
        atol=1e-15,
    )
    p = model.predict_proba(far)
    assert np.all(p > 0) and np.all(p < 1) and np.all(np.isfinite(p))


def test_predict_proba_equals_the_calibrating_function_of_the_normalized_scores():
    S, y = _probabilities(500, 2, 1)
    model = BernsteinFusion(ecdf_knots=50, degree=5).fit(S, y)
    T, _ = _probabilities(300, 2, 2)
    T = np.vstack([T, S[:50]])
    direct = model.predict_proba(T)[:, 1]
    via_cube = model.calibrating_function(model.ecdf_.transform(T))
    np.testing.assert_allclose(direct, via_cube, rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.predict_proba(T).sum(1), 1.0, atol=1e-15)


def test_lam_inf_is_logistic_regression_with_non_negative_weights():
    from sklearn.linear_model import LogisticRegression

    S, y = _probabilities(3000, 2, 3)
    model = BernsteinFusion(lam=float("inf")).fit(S, y)
    # the ridge RIDGE_PER_ROW / n on the standardized logits is scikit-learn's C = 10
    X = (np.log(S / (1 - S)) - model.base_shift_) / model.base_scale_
    C = 1.0 / newton.RIDGE_PER_ROW
    lr = LogisticRegression(C=C, tol=1e-12, max_iter=10_000).fit(X, y)
    assert np.all(lr.coef_ > 0)  # so the constraint c >= 0 does not bind
    np.testing.assert_allclose(model.base_coef_, lr.coef_[0], rtol=1e-5)
    np.testing.assert_allclose(model.predict_proba(S), lr.predict_proba(X), atol=1e-7)
    assert np.ptp(model.coef_) == 0  # g is the intercept


def test_the_ridge_keeps_a_separating_score_finite_and_vanishes_with_n():
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1], 30)
    S = np.column_stack([np.where(y == 1, 0.9, 0.1) + rng.uniform(-0.05, 0.05, 60),
                         rng.uniform(0.2, 0.8, 60)])  # fmt: skip
    model = BernsteinFusion(lam=float("inf")).fit(S, y)
    eta = logit(model.predict_proba(S)[:, 1])
    assert np.max(np.abs(eta)) < 15  # not driven to the cap of 35
    assert newton.base_ridge(500) == pytest.approx(2e-4)
    assert newton.base_ridge(1e9) == newton.RIDGE


def test_cross_validation_picks_by_one_standard_error_and_reports_scores():
    S, y, _ = simulate(1500, seed=6)
    model = BernsteinFusion(random_state=0).fit(S, y)
    keys = list(model.cv_scores_)
    # M = 2: the tensor and the additive structure, each along its lam path from inf
    assert {k[0] for k in keys} == {"tensor", "additive"} and set(model.cv_se_) == set(keys)
    assert keys[0] == ("tensor", (8, 8), float("inf"))
    structure = "tensor" if len(model.components_) == 1 else "additive"
    best = min(model.cv_scores_, key=model.cv_scores_.get)
    chosen = (structure, model.degree_, model.lam_)
    assert model.cv_scores_[chosen] - model.cv_scores_[best] <= model.cv_se_[chosen]
    # every larger lam (of either structure) is outside one standard error of the best
    for key in keys:
        if key[2] > model.lam_:
            assert model.cv_scores_[key] - model.cv_scores_[best] > model.cv_se_[key]


def test_default_fits_are_bit_identical():
    S, y, _ = simulate(700, seed=7)
    a = BernsteinFusion().fit(S, y).predict_proba(S)
    b = BernsteinFusion().fit(S, y).predict_proba(S)
    np.testing.assert_array_equal(a, b)


def test_grid_edges_warn_naming_the_parameter():
    S, y, _ = simulate(3000, seed=8)
    with pytest.warns(UserWarning, match="smallest value of lam_grid"):
        BernsteinFusion(lam_grid=[1.0, 0.1, 0.01]).fit(S, y)
    S2, y2 = _probabilities(300, 2, 9)  # logistic in the logits: the largest lam wins
    with pytest.warns(UserWarning, match="largest value of lam_grid"):
        BernsteinFusion(lam_grid=[1e-2, 1e-5, 1e-8]).fit(S2, y2)
    with pytest.warns(UserWarning, match="degree_grid"):
        BernsteinFusion(degree="cv", degree_grid=[0, 1], lam=1e-4).fit(S, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inf, the logistic-regression limit, is no edge
        model = BernsteinFusion(lam_grid=[float("inf"), 1.0, 0.1]).fit(S2, y2)
    assert model.lam_ == float("inf")


def test_a_flat_cv_curve_at_a_grid_edge_does_not_warn():
    S, y = _probabilities(300, 2, 9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = BernsteinFusion(lam_grid=[1.0, 0.1, 0.01]).fit(S, y)
    # the edge was picked, its neighbour within a hair of it on the scale of the path
    assert model.lam_ == 1.0
    structure = "tensor" if len(model.components_) == 1 else "additive"
    path = [(structure, model.degree_, v) for v in (1.0, 0.1, 0.01)]
    gain = model.cv_scores_[path[1]] - model.cv_scores_[path[0]]
    assert abs(gain) < 0.25 * max(model.cv_se_[k] for k in path)


def test_refit_with_another_base_replaces_the_fitted_state():
    S, y, _ = simulate(500, seed=10)
    model = BernsteinFusion(degree=3, lam=1e-2).fit(S, y)
    assert model.base_ == ("identity", "identity") and model.lam_ == 1e-2
    model.set_params(base=None).fit(S, y)
    assert model.base_ is None and model.base_coef_ is None and model.lam_ is None
    assert "cv_se_" not in vars(model)
    assert np.all((model.coef_ >= 0) & (model.coef_ <= 1))


def test_newton_iteration_limits_are_never_silent():
    # OSQP stopped after one iteration on every Newton step: the fit either fails with the
    # solver's status or warns that its steps were inexact; never a quiet model.
    S, y, _ = simulate(300, seed=11)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = BernsteinFusion(degree=3, lam=1e-3, max_iter=1).fit(S, y)
        except SolverError as err:
            assert err.status.startswith("newton") or err.solver == "osqp"
            return
    assert model.solver_status_ != "solved"
    assert any(issubclass(w.category, SolverWarning) for w in caught)


def test_additive_structure_is_the_default_from_four_scores():
    rng = np.random.default_rng(12)
    S = rng.normal(size=(2000, 5)) + rng.normal(size=(2000, 1))
    y = (rng.random(2000) < expit(S.sum(1) / 2)).astype(int)
    model = BernsteinFusion(lam=1e-2).fit(S, y)
    assert model.components_ == tuple((m,) for m in range(5))
    assert model.coef_.shape == (5 * (model.degree_[0] + 1),)
    pair = BernsteinFusion(lam=1e-2, structure="pairwise", degree=2).fit(S, y)
    assert len(pair.components_) == 10


def test_no_bernstein_correction_is_reported_as_degree_zero(tmp_path):
    import fusion

    S, y = _probabilities(600, 3, 1)
    model = BernsteinFusion(lam=float("inf"), degree=4).fit(S, y)
    assert model.degree_ == (0, 0, 0) and model.coef_.shape == (1, 1, 1)
    assert model.components_ == ((0, 1, 2),)
    # the same function as a logistic regression with a free intercept, degree or not
    refit = BernsteinFusion(**model._refit_params()).fit(S, y)
    np.testing.assert_allclose(refit.predict_proba(S), model.predict_proba(S), atol=1e-7)
    # a model saved before (the tried degree, every coefficient equal) still loads and
    # predicts the same
    old = BernsteinFusion(lam=float("inf"), degree=4).fit(S, y)
    old.degree_, old.coef_ = (4, 4, 4), np.full((5, 5, 5), model.coef_.item())
    old.save(tmp_path / "old.fusion")
    loaded = fusion.load(tmp_path / "old.fusion")
    assert loaded.degree_ == (4, 4, 4)
    np.testing.assert_allclose(loaded.predict_proba(S), model.predict_proba(S), atol=1e-12)
