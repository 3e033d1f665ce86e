"""Shared fixtures: small generated score data with a known calibrating function."""

import os

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import norm
from threadpoolctl import threadpool_limits


def product_truth(S: np.ndarray) -> np.ndarray:
    """A monotone truth that is not logistic-linear in the raw (logit-scale) scores."""
    return 0.05 + 0.9 * norm.cdf(S[:, 0]) * norm.cdf(S[:, 1] - 0.3)


def simulate(n: int, seed: int = 0, rho: float = 0.5):
    """Two correlated logit-scale scores and labels drawn from ``product_truth``."""
    rng = np.random.default_rng(seed)
    z = rng.multivariate_normal([0.0, 0.0], [[1.0, rho], [rho, 1.0]], size=n)
    p = product_truth(z)
    y = (rng.random(n) < p).astype(int)
    return z, y, p


@pytest.fixture
def scores_2d():
    return simulate(600, seed=1)


@pytest.fixture
def logistic_data():
    rng = np.random.default_rng(3)
    S = rng.normal(size=(400, 3))
    y = (rng.random(400) < expit(S @ np.array([1.0, 0.5, 0.25]))).astype(int)
    return S, y


@pytest.fixture(autouse=True, scope="session")
def _one_openmp_thread():
    """OpenMP-parallel peers (HistGradientBoosting, LightGBM) on tiny test data: threads only
    add overhead, and spin-waiting on a shared 2-core machine made one test 50x slower. Under
    pytest-xdist (the README runs two workers) BLAS gets one thread per worker too: two
    workers with a BLAS thread per core each oversubscribed the 2 cores (suite 202 s against
    about 120 s)."""
    with threadpool_limits(limits=1, user_api="openmp"):
        if os.environ.get("PYTEST_XDIST_WORKER"):
            with threadpool_limits(limits=1, user_api="blas"):
                yield
        else:
            yield
