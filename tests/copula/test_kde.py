import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from statsmodels.nonparametric.bandwidths import bw_scott, bw_silverman

from fusion.copula import kde

_rng = np.random.default_rng(11)
SAMPLES = {
    "skewed": _rng.beta(0.7, 2.0, 400),
    "near_one": _rng.beta(6.0, 1.0, 300),
    "uniform": _rng.random(60),
    "clustered_with_outliers": np.r_[_rng.beta(2, 30, 200), [0.999, 0.9995, 1.0, 0.0]],
}


def _tabulate(x, w, h):
    G = kde.grid_size(h)
    log_pdf, cdf = kde.reflected_kde(x, w, h, G)

    def pdf(t):
        i, frac = kde.grid_position(np.atleast_1d(t), G)
        return np.exp(kde.interpolate(log_pdf, i, frac))

    def F(t):
        i, frac = kde.grid_position(np.atleast_1d(t), G)
        return kde.interpolate(cdf, i, frac)

    return pdf, F, log_pdf, cdf


@pytest.mark.parametrize("name", list(SAMPLES))
@pytest.mark.parametrize("h", [0.002, 0.03, 0.2, 3.0])
def test_marginal_density_integrates_to_one_on_unit_interval(name, h):
    x = SAMPLES[name]
    w = np.random.default_rng(0).uniform(0.2, 3.0, x.shape[0])
    pdf, F, log_pdf, _ = _tabulate(x, w, h)
    # the density used at prediction is exp(linear) on each grid cell: integrate it exactly
    a, b = log_pdf[:-1], log_pdf[1:]
    d = b - a
    safe = np.where(np.abs(d) > 1e-12, d, 1.0)
    cell = np.where(np.abs(d) > 1e-12, np.expm1(d) / safe, 1.0 + 0.5 * d) * np.exp(a)
    total = cell.sum() / (log_pdf.shape[0] - 1)
    assert total == pytest.approx(1.0, abs=5e-5)
    assert F(0.0)[0] == 0.0 and F(1.0)[0] == 1.0


@pytest.mark.parametrize("name", list(SAMPLES))
@pytest.mark.parametrize("h", [0.001, 0.01, 0.05, 0.3])
def test_grid_density_matches_exact_image_sum(name, h):
    x = SAMPLES[name]
    w = np.random.default_rng(1).uniform(0.5, 2.0, x.shape[0])
    pdf, _, _, _ = _tabulate(x, w, h)
    t = np.linspace(0.0, 1.0, 3001)
    exact = kde.exact_reflected_pdf(x, w, h, t)
    body = exact > 1e-3 * exact.max()
    assert np.max(np.abs(pdf(t)[body] / exact[body] - 1.0)) < 1e-3


def test_exact_image_sum_integrates_to_one_and_is_flat_at_the_ends():
    x = SAMPLES["near_one"]
    w = np.ones_like(x)
    for h in (0.02, 0.5, 2.0):
        total, _ = quad(lambda t, h=h: kde.exact_reflected_pdf(x, w, h, [t])[0], 0, 1, limit=200)
        assert total == pytest.approx(1.0, abs=1e-8)
        for end in (0.0, 1.0):
            d = kde.exact_reflected_pdf(x, w, h, [end - 1e-6, end + 1e-6])
            assert d[0] == pytest.approx(d[1], rel=1e-6)


@pytest.mark.parametrize("name", list(SAMPLES))
def test_cdf_is_the_integral_of_the_density(name):
    x = SAMPLES[name]
    h = kde.bandwidth_rule(x, np.ones_like(x), "silverman")
    pdf, F, _, cdf = _tabulate(x, np.ones_like(x), h)
    assert np.all(np.diff(cdf) >= 0)
    t = np.linspace(0, 1, 40_001)
    running = np.concatenate([[0.0], np.cumsum(0.5 * (pdf(t)[1:] + pdf(t)[:-1]) * np.diff(t))])
    np.testing.assert_allclose(F(t), running, atol=1e-5)


def test_reflection_removes_the_boundary_bias_of_a_plain_kde():
    x = np.random.default_rng(2).random(20_000)
    h = kde.bandwidth_rule(x, np.ones_like(x), "silverman")
    pdf, _, _, _ = _tabulate(x, np.ones_like(x), h)
    # a plain Gaussian KDE of a uniform sample is about 1/2 at 0 and 1
    np.testing.assert_allclose(pdf(np.array([0.0, 0.5, 1.0])), 1.0, atol=0.06)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(2, 300),
    seed=st.integers(0, 10_000),
    log_h=st.floats(np.log(1e-3), np.log(5.0)),
    spread=st.sampled_from([1e-6, 0.01, 1.0]),
)
def test_log_density_finite_and_cdf_a_distribution(n, seed, log_h, spread):
    rng = np.random.default_rng(seed)
    x = np.clip(rng.choice([0.02, 0.5, 0.98]) + spread * rng.standard_normal(n), 0, 1)
    w = rng.exponential(size=n)
    w[0] += 1e-3  # not all zero
    G = kde.grid_size(np.exp(log_h))
    log_pdf, cdf = kde.reflected_kde(x, w, np.exp(log_h), G)
    assert np.all(np.isfinite(log_pdf))
    assert log_pdf.min() >= np.log(kde.DEFENSIVE_WEIGHT) - 1e-9
    assert cdf[0] == 0.0 and cdf[-1] == 1.0 and np.all(np.diff(cdf) >= 0)


def test_bandwidth_rules_equal_statsmodels_with_equal_weights():
    for x in SAMPLES.values():
        for w in (np.ones_like(x), np.full_like(x, 2.5)):
            assert kde.bandwidth_rule(x, w, "silverman") == pytest.approx(bw_silverman(x))
            assert kde.bandwidth_rule(x, w, "scott") == pytest.approx(bw_scott(x))


def test_weighted_bandwidth_rule_is_scale_invariant_and_ignores_zero_weights():
    x = SAMPLES["skewed"]
    w = np.random.default_rng(3).uniform(0.1, 2.0, x.shape[0])
    h = kde.bandwidth_rule(x, w, "silverman")
    assert kde.bandwidth_rule(x, 7.0 * w, "silverman") == pytest.approx(h)
    padded = np.r_[x, np.full(50, 0.99)]
    assert kde.bandwidth_rule(padded, np.r_[w, np.zeros(50)], "silverman") == pytest.approx(h)
    # weights close to equal give nearly statsmodels' value
    near = 1.0 + 1e-9 * np.arange(x.shape[0])
    assert kde.bandwidth_rule(x, near, "silverman") == pytest.approx(bw_silverman(x), rel=0.02)


def test_degenerate_samples_get_the_minimum_bandwidth():
    assert kde.bandwidth_rule(np.full(10, 0.3), np.ones(10), "scott") == kde.MIN_BANDWIDTH
    assert kde.bandwidth_rule(np.array([0.3]), np.ones(1), "scott") == kde.MIN_BANDWIDTH


def _exact_loo_score(x, h):
    """Leave-one-out log-likelihood of the reflected KDE, by direct summation."""
    n = x.shape[0]
    total = 0.0
    for j in range(n):
        others = np.delete(x, j)
        total += np.log(kde.exact_reflected_pdf(others, np.ones(n - 1), h, x[j : j + 1])[0])
    return total / n


def test_cv_bandwidth_maximizes_the_exact_leave_one_out_likelihood():
    x = np.random.default_rng(4).beta(0.8, 2.5, 150)
    h_cv = kde.cv_bandwidth(x, np.ones_like(x))
    grid = np.exp(np.linspace(np.log(0.01), np.log(0.3), 25))
    scores = np.array([_exact_loo_score(x, h) for h in grid])
    assert _exact_loo_score(x, h_cv) >= scores.max() - 1e-4
    assert 0.5 * grid[scores.argmax()] < h_cv < 2.0 * grid[scores.argmax()]


def test_cv_bandwidth_leaves_ties_out_together():
    x = np.random.default_rng(5).beta(2, 2, 120)
    h = kde.cv_bandwidth(x, np.ones_like(x))
    # triplicating every value changes nothing (with leave-one-out the ties would drive h to 0)
    assert kde.cv_bandwidth(np.repeat(x, 3), np.ones(360)) == pytest.approx(h, rel=1e-6)
    assert h > 5 * kde.MIN_BANDWIDTH


def test_select_bandwidth_dispatches():
    x = SAMPLES["skewed"]
    w = np.ones_like(x)
    assert kde.select_bandwidth(x, w, "scott") == kde.bandwidth_rule(x, w, "scott")
    assert kde.select_bandwidth(x, w, 0.07) == 0.07
    assert kde.select_bandwidth(x, w, "cv") == kde.cv_bandwidth(x, w)


def test_grid_size():
    assert kde.grid_size(0.5) == 4097
    for h in (1e-3, 0.004, 0.02):
        G = kde.grid_size(h)
        assert (G - 1) & (G - 2) == 0  # a power of two plus one
        assert 1.0 / (G - 1) <= h / 64


def test_rules_of_thumb_are_statsmodels_to_the_last_bit():
    rng = np.random.default_rng(6)
    samples = [
        rng.random(500),
        rng.beta(0.5, 3.0, 2000),
        np.round(rng.random(300), 1),  # ties
        rng.integers(0, 2, 400).astype(float),  # IQR may be 0: the sd alone
        np.r_[np.zeros(90), rng.random(10)],  # IQR 0
    ]
    for x in samples:
        w = np.ones_like(x)
        assert kde.bandwidth_rule(x, w, "silverman") == max(bw_silverman(x), kde.MIN_BANDWIDTH)
        assert kde.bandwidth_rule(x, w, "scott") == max(bw_scott(x), kde.MIN_BANDWIDTH)
