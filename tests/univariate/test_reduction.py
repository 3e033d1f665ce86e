import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

import fusion
from fusion import ENIRCalibrator, RPRCalibrator
from fusion.ecdf import mid_ecdf_knots
from fusion.univariate.reduction import combined_score

from ..conftest import simulate

CALIBRATORS = [
    fusion.RPRCalibrator,
    fusion.ENIRCalibrator,
    fusion.PlattCalibrator,
    fusion.IsotonicCalibrator,
    fusion.HistogramBinningCalibrator,
]
FAST = {fusion.RPRCalibrator: {"degree": 4, "lam": np.inf}}


def _allowed(value):
    if isinstance(value, (np.ndarray, float, int, bool, str, np.generic)) or value is None:
        return True
    if isinstance(value, (list, tuple)):
        return all(_allowed(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, (str, int, float, bool)) and _allowed(v) for k, v in value.items())
    return isinstance(value, fusion.ECDFNormalizer)


@pytest.mark.parametrize("cls", CALIBRATORS)
@pytest.mark.parametrize("combine", ["mean", "logistic"])
def test_fitted_state_is_plain_data_and_predictions_are_probabilities(cls, combine, scores_2d):
    S, y, _ = scores_2d
    model = cls(combine=combine, **FAST.get(cls, {})).fit(S, y)
    for name, value in vars(model).items():
        if name.endswith("_"):
            assert _allowed(value), (name, type(value))
    p = model.predict_proba(S)
    assert p.shape == (S.shape[0], 2) and np.all((p >= 0) & (p <= 1))
    clone(model)  # sklearn conventions: __init__ only stores parameters


@pytest.mark.parametrize("cls", CALIBRATORS)
def test_one_dimensional_input_is_accepted(cls):
    rng = np.random.default_rng(0)
    s = rng.normal(size=300)
    y = (rng.random(300) < 1 / (1 + np.exp(-s))).astype(int)
    a = cls(**FAST.get(cls, {})).fit(s, y)
    b = cls(**FAST.get(cls, {})).fit(s[:, None], y)
    np.testing.assert_allclose(a.predict_proba(s), b.predict_proba(s[:, None]))
    np.testing.assert_array_equal(a.combine_coef_, [1.0])


def test_mean_rule_calibrates_the_ecdf_of_the_mean_normalized_score(scores_2d):
    S, y, _ = scores_2d
    model = ENIRCalibrator().fit(S, y)
    U = model.ecdf_.transform(S)
    knots, values = mid_ecdf_knots(combined_score(U, np.array([0.5, 0.5])))  # the mean
    np.testing.assert_allclose(model.combine_coef_, [0.5, 0.5])
    np.testing.assert_allclose(model.combine_knots_, knots)
    np.testing.assert_allclose(model.knots_, values)  # ENIR's knots are the normalized means


def test_logistic_rule_uses_the_logistic_regression_linear_score(scores_2d):
    S, y, _ = scores_2d
    w = np.random.default_rng(0).uniform(0.5, 2, y.size)
    model = ENIRCalibrator(combine="logistic").fit(S, y, sample_weight=w)
    U = model.ecdf_.transform(S)
    # Weights are relative (scaling them changes nothing): the fit sees them with mean 1.
    lr = LogisticRegression(max_iter=1000).fit(U, y, sample_weight=w / w.mean())
    np.testing.assert_allclose(model.combine_coef_, lr.coef_[0], rtol=1e-6)
    np.testing.assert_allclose(model.combine_intercept_, lr.intercept_[0], rtol=1e-6)
    # new rows go through the same linear map and the training ECDF of the linear score
    z = lr.decision_function(U)
    np.testing.assert_allclose(model._reduce(U), np.interp(z, *mid_ecdf_knots(z, w)), atol=1e-9)


def test_rpr_with_mean_is_monotone_in_every_score_on_the_cube(scores_2d):
    S, y, _ = scores_2d
    model = RPRCalibrator(degree=6, lam=np.inf).fit(S, y)
    assert model.monotone_
    g = np.linspace(0, 1, 41)
    G = np.stack(np.meshgrid(g, g, indexing="ij"), -1).reshape(-1, 2)
    f = model.calibrating_function(G).reshape(41, 41)
    assert np.all(np.diff(f, axis=0) >= -1e-12) and np.all(np.diff(f, axis=1) >= -1e-12)


def test_negative_logistic_weight_is_reported_as_not_monotone():
    rng = np.random.default_rng(1)
    S = rng.normal(size=(800, 2))
    y = (rng.random(800) < 1 / (1 + np.exp(-(2 * S[:, 0] - 1.5 * S[:, 1])))).astype(int)
    # increasing=True: use the anti-aligned second score as given (not reversed by "auto")
    model = RPRCalibrator(degree=4, lam=np.inf, combine="logistic", increasing=True).fit(S, y)
    assert model.combine_coef_[1] < 0 and not model.monotone_
    lo, hi = model.predict_proba(np.array([[0.0, -2.0], [0.0, 2.0]]))[:, 1]
    assert hi < lo  # the fused probability decreases in the second score


def test_constant_combined_score_is_a_value_error():
    s = np.arange(50.0)
    S = np.column_stack([s, -s])  # mean of the normalized scores is constant
    y = np.arange(50) % 2
    with pytest.raises(ValueError, match="constant"):
        ENIRCalibrator().fit(S, y)


@pytest.mark.parametrize("method", ["rpr", "enir"])
def test_registered_in_fusion_fit(method):
    S, y, p = simulate(400, seed=3)
    params = {"degree": 4} if method == "rpr" else {}
    model = fusion.fit(S, y, method=method, **params)
    assert isinstance(model, fusion.METHODS[method])
    assert np.corrcoef(model.predict_proba(S)[:, 1], p)[0, 1] > 0.8
