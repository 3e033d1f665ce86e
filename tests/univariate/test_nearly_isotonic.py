import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import isotonic_regression

from fusion.univariate.nearly_isotonic import (
    breakpoint_fit,
    near_isotonic_objective,
    near_isotonic_path,
    path_fit,
    path_n_blocks,
    pool_ties,
)


def _reference(y, w, lam):
    """The nearly-isotonic objective (ENIR paper eq. (3), weighted) solved by cvxpy."""
    p = cp.Variable(y.size)
    d = cp.Variable(y.size - 1, nonneg=True)  # d_k >= (p_k - p_{k+1})_+
    objective = 0.5 * cp.sum(cp.multiply(w, cp.square(p - y))) + lam * cp.sum(d)
    problem = cp.Problem(cp.Minimize(objective), [d >= p[:-1] - p[1:]])
    # tight tolerances: the objective is only strongly convex with modulus min(w), so the
    # solution error is about sqrt(duality gap)
    tight = {"tol_gap_abs": 1e-14, "tol_gap_rel": 1e-14, "tol_feas": 1e-14, "max_iter": 500}
    problem.solve(solver=cp.CLARABEL, **tight)
    assert problem.status in ("optimal", "optimal_inaccurate")
    return p.value, problem.value


def _data(kind, K, seed):
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.5, 2.0, K)
    if kind == "binary":
        y = (rng.random(K) < np.linspace(0.2, 0.8, K)).astype(float)
    else:
        y = np.sin(np.linspace(0, 6, K)) + 0.3 * np.linspace(0, 6, K) + rng.normal(0, 0.5, K)
    return y, w


@pytest.mark.parametrize("kind", ["binary", "continuous"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_path_matches_cvxpy_at_several_lambdas(kind, seed):
    y, w = _data(kind, 40, seed)
    path = near_isotonic_path(y, w)
    bp = path.lambdas
    lams = [bp[0], bp[len(bp) // 2], bp[-1], 0.3 * bp[0], 0.5 * (bp[1] + bp[2]), 3 * bp[-1]]
    for lam in lams:
        ref, ref_obj = _reference(y, w, lam)
        fit = path_fit(path, lam)
        np.testing.assert_allclose(fit, ref, atol=1e-6)
        # and the path's answer is at least as good as the solver's
        assert near_isotonic_objective(fit, y, lam, w) <= ref_obj + 1e-10


@pytest.mark.parametrize("seed", range(4))
def test_last_model_is_isotonic_regression(seed):
    rng = np.random.default_rng(seed)
    K = 500
    y = (rng.random(K) < 0.2 + 0.6 * np.linspace(0, 1, K) ** 2).astype(float)
    w = rng.uniform(0.1, 3.0, K)
    path = near_isotonic_path(y, w)
    iso = isotonic_regression(y, weights=w).x
    np.testing.assert_allclose(breakpoint_fit(path, path.n_breakpoints), iso, atol=1e-12)
    # beyond the last breakpoint nothing changes any more
    np.testing.assert_allclose(path_fit(path, 10 * path.lambdas[-1]), iso, atol=1e-12)


def test_lambda_zero_is_the_data_and_breakpoints_increase():
    y, w = _data("continuous", 60, 5)
    path = near_isotonic_path(y, w)
    np.testing.assert_allclose(path_fit(path, 0.0), y, atol=1e-12)
    assert np.all(np.diff(path.lambdas) > 0) and path.lambdas[0] > 0


@settings(max_examples=30, deadline=None)
@given(
    K=st.integers(2, 400),
    seed=st.integers(0, 10_000),
    binary=st.booleans(),
    weighted=st.booleans(),
)
def test_speed_knobs_do_not_change_the_path(K, seed, binary, weighted):
    rng = np.random.default_rng(seed)
    y = (rng.random(K) < rng.random()).astype(float) if binary else rng.normal(size=K).round(1)
    w = rng.uniform(0.2, 2.0, K) if weighted else np.ones(K)
    ref = near_isotonic_path(y, w, batch_fraction=2.0, chunk_size=10**9)  # heap only
    for kw in ({}, {"batch_fraction": 0.0}, {"chunk_size": 1}):
        path = near_isotonic_path(y, w, **kw)
        np.testing.assert_allclose(path.lambdas, ref.lambdas, rtol=1e-12)
        np.testing.assert_array_equal(path_n_blocks(path), path_n_blocks(ref))
        for t in range(1, ref.n_breakpoints + 1, max(1, ref.n_breakpoints // 7)):
            np.testing.assert_allclose(breakpoint_fit(path, t), breakpoint_fit(ref, t), atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(K=st.integers(2, 300), seed=st.integers(0, 10_000))
def test_blocks_are_the_runs_of_equal_fitted_values(K, seed):
    rng = np.random.default_rng(seed)
    y = (rng.random(K) < np.linspace(0.1, 0.9, K)).astype(float)  # ties and 3-way collisions
    path = near_isotonic_path(y)
    n_blocks = path_n_blocks(path)
    for t in range(1, path.n_breakpoints + 1):
        fit = breakpoint_fit(path, t)
        assert n_blocks[t] == np.count_nonzero(np.diff(fit)) + 1
    # each breakpoint fuses at least one pair
    assert np.all(np.diff(n_blocks) < 0)


def test_large_path_ends_at_isotonic_regression():
    rng = np.random.default_rng(0)
    n = 200_000  # a large path; the benchmark runs 1e6
    y = (rng.random(n) < 0.1 + 0.8 * np.sort(rng.random(n))).astype(float)
    path = near_isotonic_path(y)
    np.testing.assert_allclose(
        breakpoint_fit(path, path.n_breakpoints), isotonic_regression(y).x, atol=1e-12
    )


def test_pool_ties_sorts_and_pools_with_weights():
    x = np.array([0.3, 0.1, 0.3, 0.2, 0.1])
    y = np.array([1.0, 0.0, 0.0, 1.0, 1.0])
    w = np.array([1.0, 1.0, 3.0, 2.0, 1.0])
    xs, ybar, W = pool_ties(x, y, w)
    np.testing.assert_array_equal(xs, [0.1, 0.2, 0.3])
    np.testing.assert_allclose(W, [2.0, 2.0, 4.0])
    np.testing.assert_allclose(ybar, [0.5, 1.0, 0.25])


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="positive"):
        near_isotonic_path([0.0, 1.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="finite"):
        near_isotonic_path([0.0, np.nan])
    with pytest.raises(ValueError, match="empty"):
        near_isotonic_path([])
    with pytest.raises(ValueError, match="non-negative"):
        path_fit(near_isotonic_path([1.0, 0.0]), -1.0)
