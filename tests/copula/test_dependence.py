import numpy as np
import pytest
from scipy import stats

from fusion.copula import dependence as dep


def _tied_sample(n, seed):
    rng = np.random.default_rng(seed)
    x = np.round(rng.random(n), 1)  # heavy ties in both variables
    y = np.round(x + 0.4 * rng.random(n) - 0.2 * (rng.random(n) < 0.3), 1)
    return x, y, rng


def test_merge_sort_tau_equals_the_pairwise_sum():
    x, y, rng = _tied_sample(dep._PAIRS_MAX, 0)
    w = rng.exponential(size=x.shape[0])
    assert dep._weighted_tau_sorted(x, y, w) == pytest.approx(dep.kendall_tau(x, y, w), abs=1e-13)
    assert dep._weighted_tau_sorted(x, -y, w) == pytest.approx(dep.kendall_tau(x, -y, w), abs=1e-13)


def test_large_weighted_tau_equals_scipy_on_repeated_rows():
    x, y, rng = _tied_sample(3 * dep._PAIRS_MAX, 1)
    k = rng.integers(1, 4, x.shape[0])
    ref = stats.kendalltau(np.repeat(x, k), np.repeat(y, k)).statistic
    assert dep.kendall_tau(x, y, k.astype(float)) == pytest.approx(ref, abs=1e-12)
    # a constant variable has no pairs to order
    assert dep.kendall_tau(x, np.zeros_like(y), k.astype(float)) == 0.0
