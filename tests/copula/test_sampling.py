import numpy as np
import pytest
from scipy import integrate, stats

from fusion.copula import families as fam
from fusion.copula.families import sample


def _frank_tau(theta):
    debye, _ = integrate.quad(lambda t: t / np.expm1(t), 0, abs(theta))
    return np.sign(theta) * (1 - 4 / abs(theta) * (1 - debye / abs(theta)))


@pytest.mark.parametrize(
    "family, params, M, tau",
    [
        ("clayton", {"theta": 2.0}, 3, 0.5),
        ("gumbel", {"theta": 2.5}, 3, 0.6),
        ("frank", {"theta": 6.0}, 3, _frank_tau(6.0)),
        ("frank", {"theta": -6.0}, 2, _frank_tau(-6.0)),
        ("gaussian", {"corr": np.array([[1, 0.6], [0.6, 1]])}, 2, 2 / np.pi * np.arcsin(0.6)),
        ("student", {"corr": np.array([[1, -0.5], [-0.5, 1]]), "df": 3}, 2, -1 / 3),
        ("clayton_rot180", {"theta": 2.0}, 2, 0.5),
        ("gumbel_rot180", {"theta": 1.5}, 2, 1 / 3),
        ("independence", {}, 2, 0.0),
    ],
)
def test_pairwise_kendall_tau_matches_theory(family, params, M, tau):
    U = sample(family, params, 6000, M, random_state=0)
    assert U.shape == (6000, M) and U.min() >= 0 and U.max() <= 1
    for j in range(1, M):
        assert stats.kendalltau(U[:, 0], U[:, j]).statistic == pytest.approx(tau, abs=0.025)


def test_marginals_are_uniform():
    for family, params in [("gumbel", {"theta": 3.0}), ("plackett", {"theta": 0.1})]:
        U = sample(family, params, 4000, 2, random_state=1)
        for m in range(2):
            assert stats.kstest(U[:, m], "uniform").pvalue > 0.01


@pytest.mark.parametrize("theta", [0.1, 8.0])
def test_plackett_sample_follows_its_cdf(theta):
    U = sample("plackett", {"theta": theta}, 40_000, random_state=2)
    for a, b in [(0.3, 0.3), (0.5, 0.8), (0.2, 0.9), (0.7, 0.6)]:
        empirical = np.mean((U[:, 0] <= a) & (U[:, 1] <= b))
        assert empirical == pytest.approx(fam.plackett_cdf(a, b, theta), abs=0.008)


def test_rotation_reflects_the_draws():
    a = sample("clayton", {"theta": 2.0}, 100, random_state=3)
    b = sample("clayton_rot180", {"theta": 2.0}, 100, random_state=3)
    np.testing.assert_allclose(b, 1.0 - a)


def test_rejects_bad_requests():
    with pytest.raises(ValueError, match="unknown copula family"):
        sample("joe", {"theta": 2.0}, 10)
    with pytest.raises(ValueError, match="bivariate"):
        sample("plackett", {"theta": 2.0}, 10, M=3)
    with pytest.raises(ValueError, match="theta > 0"):
        sample("frank", {"theta": -2.0}, 10, M=3)
