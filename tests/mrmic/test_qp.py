"""Tests of fusion/mrmic/qp.py: the QP against cvxpy, exact feasibility, known special cases."""

import cvxpy as cp
import numpy as np
import pytest
from sklearn.isotonic import isotonic_regression

from fusion.mrmic.graph import dominance_edges, laplacian, merge_points, similarity_matrix
from fusion.mrmic.qp import MRMICQP, max_violation, monotone_constraints, repair_monotone


def simulated(n, seed, M=2, levels=None):
    """Correlated scores through a mid-rank ECDF, labels from a monotone truth."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    S = z[:, None] + rng.normal(size=(n, M))
    if levels is not None:  # coarse scores: ties and duplicated points
        S = np.round(S * levels) / levels
    U = np.column_stack([(np.argsort(np.argsort(c)) + 0.5) / n for c in S.T])
    if levels is not None:
        U = np.column_stack([np.unique(c, return_inverse=True)[1] / n for c in S.T]) + 0.5 / n
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-2 * z))).astype(float)
    w = rng.uniform(0.2, 2.0, size=n)
    return U, y, w


def build(U, y, w, graph="dense", k=10, **settings):
    points, target, weight = merge_points(U, y, w)
    hi, lo = dominance_edges(points)
    L = laplacian(similarity_matrix(points, graph, k))
    return MRMICQP(points, target, weight, hi, lo, L, **settings)


def cvxpy_reference(points, target, weight, L_dense, lam):
    """Same QP with every strict dominance pair (not the reduction) and a dense Laplacian."""
    ge = np.all(points[:, None] >= points[None], axis=2)
    ne = np.any(points[:, None] != points[None], axis=2)
    hi, lo = np.nonzero(ge & ne)
    p = cp.Variable(points.shape[0])
    objective = cp.sum(cp.multiply(weight, cp.square(target - p))) + 0.5 * lam * cp.quad_form(
        p, cp.psd_wrap(L_dense)
    )
    problem = cp.Problem(cp.Minimize(objective), [p[hi] >= p[lo], p >= 0, p <= 1])
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert problem.status == cp.OPTIMAL
    return p.value


@pytest.mark.parametrize(
    "graph, c, levels",
    [("dense", 0.01, None), ("dense", 0.3, None), ("dense", 1.0, 8), ("knn", 0.3, None)],
)
def test_objective_matches_cvxpy(graph, c, levels):
    U, y, w = simulated(250, seed=11, levels=levels)
    qp = build(U, y, w, graph=graph, k=8)
    lam = c * 2 * qp.weight.mean() / qp.L.diagonal().mean()
    p, status = qp.solve(lam)
    assert status == "solved"
    ref = cvxpy_reference(qp.points, qp.target, qp.weight, qp.L.toarray(), lam)
    f, f_ref = qp.objective(p, lam), qp.objective(ref, lam)
    assert abs(f - f_ref) <= 1e-6 * abs(f_ref)
    assert max_violation(p, qp.hi, qp.lo) <= 0.0


def test_fitted_values_satisfy_every_dominance_pair_exactly():
    U, y, w = simulated(300, seed=12, levels=6)
    qp = build(U, y, w)
    p, _ = qp.solve(1e-4)
    ge = np.all(qp.points[:, None] >= qp.points[None], axis=2)
    hi, lo = np.nonzero(ge)
    assert np.all(p[hi] >= p[lo])
    assert np.all((p >= 0) & (p <= 1))


def test_lam_zero_in_one_dimension_is_weighted_isotonic_regression():
    rng = np.random.default_rng(13)
    x = rng.integers(0, 60, size=200) / 60.0
    y = (rng.uniform(size=200) < x).astype(float)
    w = rng.uniform(0.5, 1.5, size=200)
    qp = build(x[:, None], y, w)
    p, _ = qp.solve(0.0)
    expected = isotonic_regression(qp.target, sample_weight=qp.weight)  # points are sorted
    np.testing.assert_allclose(p, expected, atol=1e-6)


def test_huge_lam_gives_constant_weighted_mean():
    U, y, w = simulated(120, seed=14)
    qp = build(U, y, w)
    p, _ = qp.solve(1e6)
    np.testing.assert_allclose(p, np.average(qp.target, weights=qp.weight), atol=1e-5)


def test_warm_started_path_matches_fresh_solves():
    U, y, w = simulated(150, seed=15)
    qp = build(U, y, w)
    path = [qp.solve(lam)[0] for lam in (1e-4, 1e-3, 1e-2)]
    fresh = build(U, y, w).solve(1e-2)[0]
    np.testing.assert_allclose(path[-1], fresh, atol=1e-5)


def test_repair_is_exact_and_leaves_monotone_vectors_alone():
    rng = np.random.default_rng(16)
    points = np.unique(rng.integers(0, 12, size=(200, 2)) / 12.0, axis=0)
    hi, lo = dominance_edges(points)
    monotone = points.sum(axis=1) / 2 + 0.01 * np.floor(points[:, 0] * 3)
    np.testing.assert_array_equal(repair_monotone(points, monotone), np.clip(monotone, 0, 1))
    noisy = monotone + rng.normal(scale=1e-6, size=monotone.shape)
    fixed = repair_monotone(points, noisy)
    assert max_violation(fixed, hi, lo) <= 0.0
    assert np.max(np.abs(fixed - noisy)) < 1e-5


def test_constraint_rows_are_edge_differences():
    A, lower, upper = monotone_constraints(np.array([2, 1]), np.array([0, 0]), 3)
    np.testing.assert_array_equal(A.toarray(), [[-1, 0, 1], [-1, 1, 0]])
    np.testing.assert_array_equal(lower, 0)
    np.testing.assert_array_equal(upper, np.inf)


@pytest.mark.parametrize("lam", [0.0, 1e-3, 1.0])
def test_box_is_redundant(lam):
    # Without the box rows the QP must still land in [0, 1] (targets at the ends, so a
    # binding box would show): compare with cvxpy, which keeps the box.
    U, y, w = simulated(120, seed=17, levels=4)
    qp = build(U, y, w)
    x, _ = qp._qp.solve(*_osqp_data(qp, lam))
    assert x.min() > -1e-5 and x.max() < 1 + 1e-5
    p, _ = qp.solve(lam)
    ref = cvxpy_reference(qp.points, qp.target, qp.weight, qp.L.toarray(), lam)
    assert abs(qp.objective(p, lam) - qp.objective(ref, lam)) <= 1e-6 * qp.objective(ref, lam)


def _osqp_data(qp, lam):
    """The P and q that MRMICQP.solve hands to OSQP (to look at the raw solution)."""
    scale = 1.0 / qp.weight.mean()
    P = qp._L_upper.copy()
    P.data = (scale * lam) * P.data
    P.data[qp._diag_pos] += (2.0 * scale) * qp.weight[qp._diag_rows]
    return P, (-2.0 * scale) * qp.weight * qp.target
