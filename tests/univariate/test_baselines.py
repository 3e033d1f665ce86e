import numpy as np
import pytest
from scipy.special import expit, logit
from sklearn.calibration import _sigmoid_calibration
from sklearn.isotonic import IsotonicRegression

from fusion import HistogramBinningCalibrator, IsotonicCalibrator, PlattCalibrator


@pytest.fixture
def scores():
    rng = np.random.default_rng(0)
    s = rng.normal(size=500)
    y = (rng.random(500) < expit(1.5 * s - 0.3)).astype(int)
    w = rng.uniform(0.5, 2.0, 500)
    return s, y, w


@pytest.mark.parametrize("scale", ["logit", "identity"])
def test_platt_matches_scikit_learns_sigmoid_calibration(scores, scale):
    s, y, w = scores
    model = PlattCalibrator(scale=scale).fit(s, y, sample_weight=w)
    t = model.ecdf_.transform(s[:, None])[:, 0]
    x = logit(t) if scale == "logit" else t
    # Weights are relative (scaling them changes nothing): the fit sees them with mean 1.
    a, b = _sigmoid_calibration(x, y, sample_weight=w / w.mean())  # p = expit(-(a x + b))
    np.testing.assert_allclose([model.coef_, model.intercept_], [-a, -b], rtol=1e-3, atol=1e-4)
    assert model.monotone_


def test_isotonic_matches_scikit_learn(scores):
    s, y, w = scores
    model = IsotonicCalibrator().fit(s, y, sample_weight=w)
    t = model.ecdf_.transform(s[:, None])[:, 0]
    ref = IsotonicRegression(out_of_bounds="clip").fit(t, y, sample_weight=w)
    grid = np.linspace(-4, 4, 301)
    expected = ref.predict(model.ecdf_.transform(grid[:, None])[:, 0])
    # scikit-learn's 0 and 1 (blocks of one class) move inside (0, 1); nothing else moves
    low, high = model.proba_bounds_
    assert 0 < low <= expected[expected > 0].min() and expected[expected < 1].max() <= high < 1
    np.testing.assert_allclose(
        model.predict_proba(grid)[:, 1], np.clip(expected, low, high), atol=1e-12
    )


@pytest.mark.parametrize("n_bins", [1, 5, 10])
def test_histogram_binning_uses_equal_frequency_bins_and_bin_frequencies(scores, n_bins):
    s, y, _ = scores
    model = HistogramBinningCalibrator(n_bins=n_bins).fit(s, y)
    assert model.n_bins_ == n_bins
    p = model.predict_proba(s)[:, 1]
    values = np.unique(p)
    assert values.size <= n_bins
    for v in values:  # each bin holds ~n / n_bins rows and predicts its positive rate
        rows = p == v
        assert abs(rows.sum() - 500 / n_bins) <= 2
        assert y[rows].mean() == pytest.approx(v)
