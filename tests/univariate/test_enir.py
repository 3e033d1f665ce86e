import numpy as np
import pytest
from scipy.special import xlogy

from fusion import ENIRCalibrator, IsotonicCalibrator
from fusion.univariate.enir import enir_fit
from fusion.univariate.nearly_isotonic import breakpoint_fit, near_isotonic_path, pool_ties


def _brute_force(ybar, W, n_obs):
    """Every breakpoint model, its BIC exactly as specified, and the BIC-weighted average."""
    path = near_isotonic_path(ybar, W)
    fits, bics = [], []
    for t in range(1, path.n_breakpoints + 1):
        f = breakpoint_fit(path, t)
        p = np.clip(f, 0.0, 1.0)
        loglik = np.sum(xlogy(W * ybar, p) + xlogy(W * (1 - ybar), 1 - p))
        df = np.count_nonzero(np.diff(f)) + 1  # bins: runs of equal fitted values
        fits.append(f)
        bics.append(-2 * loglik + df * np.log(n_obs))
    bics = np.array(bics)
    weights = np.exp(-(bics - bics.min()) / 2)
    return (weights[:, None] * np.array(fits)).sum(0) / weights.sum(), bics, weights


@pytest.mark.parametrize("seed", range(4))
def test_ensemble_equals_brute_force_bic_average(seed):
    rng = np.random.default_rng(seed)
    n = 400
    x = np.round(rng.random(n), 2)  # tied scores
    p = 0.1 + 0.7 * x - 0.3 * np.exp(-(((x - 0.6) / 0.08) ** 2))
    y = (rng.random(n) < p).astype(float)
    w = rng.uniform(0.2, 2.0, n) if seed % 2 else np.ones(n)
    w *= n / w.sum()
    _, ybar, W = pool_ties(x, y, w)
    fit = enir_fit(ybar, W, n_obs=n)
    values, bics, weights = _brute_force(ybar, W, n)
    np.testing.assert_allclose(fit.values, values, atol=1e-12)
    # every model with a non-negligible weight was scored exactly, the others skipped
    kept = np.flatnonzero(weights > np.exp(-50))
    np.testing.assert_array_equal(fit.model_index, kept + 1)
    np.testing.assert_allclose(fit.model_bic, bics[kept], rtol=1e-12)
    np.testing.assert_allclose(fit.model_weight, weights[kept] / weights[kept].sum(), rtol=1e-9)


def test_no_worse_than_isotonic_on_a_nearly_monotone_truth_with_a_dip():
    def truth(u):
        return 0.15 + 0.7 * u - 0.25 * np.exp(-(((u - 0.6) / 0.05) ** 2))

    enir, iso = [], []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        s = rng.random(2000)
        y = (rng.random(2000) < truth(s)).astype(int)
        s_test = rng.random(20_000)
        for model, out in ((ENIRCalibrator(), enir), (IsotonicCalibrator(), iso)):
            p = model.fit(s, y).predict_proba(s_test)[:, 1]
            out.append(np.sqrt(np.mean((p - truth(s_test)) ** 2)))
    assert np.mean(enir) <= np.mean(iso)


def test_prediction_interpolates_between_training_scores_and_is_flat_beyond():
    rng = np.random.default_rng(1)
    s = rng.normal(size=300)
    y = (rng.random(300) < 1 / (1 + np.exp(-2 * s))).astype(int)
    model = ENIRCalibrator().fit(s, y)
    knots = np.sort(s)
    u = model.ecdf_.transform(knots[:, None])[:, 0]
    np.testing.assert_allclose(u, model.knots_)
    # predictions are the fitted values, exact 0 and 1 moved inside (0, 1) (proba_bounds_)
    low, high = model.proba_bounds_
    assert 0 < low and high < 1
    values = np.clip(model.knot_values_, low, high)
    np.testing.assert_allclose(model.predict_proba(knots)[:, 1], values, atol=1e-12)
    mid = 0.5 * (knots[:-1] + knots[1:])
    expected = np.clip(0.5 * (model.knot_values_[:-1] + model.knot_values_[1:]), low, high)
    np.testing.assert_allclose(model.predict_proba(mid)[:, 1], expected, atol=1e-12)
    far = model.predict_proba(np.array([-1e9, 1e9]))[:, 1]
    np.testing.assert_allclose(far, values[[0, -1]])
    assert np.all((model.knot_values_ >= 0) & (model.knot_values_ <= 1))
    np.testing.assert_allclose(model.model_weights_.sum(), 1.0)


def test_weights_are_relative_and_zero_weight_drops_the_row():
    # scikit-learn's weight semantics: scaling every weight changes nothing, and a row of
    # weight 0 is a row left out. (So the BIC's sample size counts rows, not weight: a
    # weight of 2 is not two rows of evidence for the model choice.)
    rng = np.random.default_rng(2)
    s = rng.normal(size=200)
    y = (rng.random(200) < 1 / (1 + np.exp(-s))).astype(int)
    k = rng.integers(1, 4, 200).astype(float)
    b = ENIRCalibrator().fit(s, y, sample_weight=k)
    for scale in (1e-6, 1 / 200, 7.0, 1e6):
        c = ENIRCalibrator().fit(s, y, sample_weight=scale * k)
        np.testing.assert_allclose(c.knot_values_, b.knot_values_, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(c.model_bic_, b.model_bic_, rtol=1e-9)
    drop = rng.random(200) < 0.3
    d = ENIRCalibrator().fit(s, y, sample_weight=np.where(drop, 0.0, k))
    e = ENIRCalibrator().fit(s[~drop], y[~drop], sample_weight=k[~drop])
    np.testing.assert_array_equal(d.knots_, e.knots_)
    grid = np.linspace(-3, 3, 101)
    np.testing.assert_allclose(d.predict_proba(grid), e.predict_proba(grid), atol=1e-12)


def test_already_isotonic_data_give_the_single_isotonic_model():
    s = np.arange(10.0)
    y = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    model = ENIRCalibrator().fit(s, y)
    assert model.lambdas_.size == 0
    np.testing.assert_allclose(model.knot_values_, y)


def test_fitted_attributes_are_plain_data():
    rng = np.random.default_rng(0)
    S = rng.normal(size=(300, 2))
    y = (S.sum(1) + rng.normal(size=300) > 0).astype(int)
    model = ENIRCalibrator(combine="logistic").fit(S, y)
    for name, value in vars(model).items():
        if name.endswith("_") and name != "ecdf_":
            assert isinstance(value, (np.ndarray, float, int, bool, str, np.generic, type(None))), (
                name
            )
