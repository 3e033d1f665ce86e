"""The penalized monotone logistic fit (fusion/bernstein/binary/logistic.py) against references."""

import cvxpy as cp
import numpy as np
import pytest
from scipy.special import expit

from fusion._cv import one_se_pick
from fusion._solver import monotone_constraints
from fusion.bernstein import newton
from fusion.bernstein.binary import logistic
from fusion.bernstein.structure import Layout, Structure

SETTINGS = dict(eps_abs=1e-9, eps_rel=1e-9, max_iter=200_000)


def _problem(n, M, degrees, structure, seed):
    rng = np.random.default_rng(seed)
    U = rng.random((n, M))
    Z = np.log(U / (1 - U)) + 0.3 * rng.normal(size=(n, M))
    Z = (Z - Z.mean(0)) / Z.std(0)
    eta = 0.8 * Z[:, 0] + 1.5 * np.sqrt(U[:, -1]) - 1.0
    y = (rng.random(n) < expit(eta)).astype(float)
    w = rng.uniform(0.5, 2.0, size=n)
    structure = Structure.named(structure, degrees)
    layout = Layout(M, structure)
    X = np.concatenate([Z, structure.design(U)], axis=1)
    return logistic.Design(X, w, w * y), layout


def _cvxpy_reference(design, layout, lam):
    """The same problem stated directly (exponential cone), solved by Clarabel."""
    x = cp.Variable(layout.n_coef)
    L = layout.n_linear
    eta = design.X @ x
    W = design.w.sum()
    loss = (cp.sum(cp.multiply(design.w, cp.logistic(eta))) - design.v @ eta) / W
    A, lower, upper, is_diff = newton.constraints(layout)
    if np.isinf(lam):
        upper = np.where(is_diff, 0.0, upper)
        obj = loss + newton.RIDGE / 2 * cp.sum_squares(x[:L])
    else:
        D = newton.penalty_matrix(layout.shapes)
        D = (D + D.T) / 2
        obj = loss + lam / 2 * cp.quad_form(x[L:], cp.psd_wrap(D))
        obj += newton.RIDGE / 2 * cp.sum_squares(x[:L])
    fin = np.isfinite(upper)
    cons = [A @ x >= lower, (A @ x)[np.flatnonzero(fin)] <= upper[fin]]
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    assert prob.status == cp.OPTIMAL
    return x.value, prob.value


@pytest.mark.parametrize(
    "M,degrees,structure,lam",
    [
        (2, (3, 4), "tensor", 1e-2),
        (2, (3, 3), "tensor", 1e-4),
        (2, (3, 3), "tensor", np.inf),
        (3, (3, 2, 4), "additive", 1e-3),
        (3, (2, 2, 2), "pairwise", 1e-2),
    ],
)
def test_newton_osqp_equals_cvxpy(M, degrees, structure, lam):
    design, layout = _problem(1500, M, degrees, structure, seed=M)
    x0 = np.zeros(layout.n_coef)
    solver = newton.make_solver(layout, **SETTINGS)
    res = logistic.newton(design, layout, lam, x0, solver)
    ref_x, ref_obj = _cvxpy_reference(design, layout, lam)
    assert res.status == "solved"
    assert res.objective == pytest.approx(ref_obj, rel=1e-6)
    assert logistic.objective(res.x, design, layout, lam) == pytest.approx(res.objective, rel=1e-12)
    # exactly feasible
    A, lower, upper, is_diff = newton.constraints(layout)
    if np.isinf(lam):
        upper = np.where(is_diff, 0.0, upper)
    r = A @ res.x
    assert np.all(r >= lower - 1e-12) and np.all(r <= upper + 1e-12)
    # the fitted linear predictor agrees closely
    np.testing.assert_allclose(design.X @ res.x, design.X @ ref_x, atol=2e-3)


def test_penalty_is_normalized_across_degrees():
    # g(u) = a * u_m has coefficients a k / K along axis m: the penalty is a^2 at any degree
    for shape, axis in [((9,), 0), ((5, 7), 1), ((3, 4, 6), 0), ((3, 4, 6), 2)]:
        K = shape[axis] - 1
        ramp = np.arange(K + 1) / K
        theta = np.broadcast_to(
            ramp.reshape([-1 if a == axis else 1 for a in range(len(shape))]), shape
        ).ravel()
        D = newton.penalty_matrix((shape,))
        assert 2.5**2 * theta @ D @ theta == pytest.approx(2.5**2, rel=1e-12)
        assert np.allclose(D @ np.ones(D.shape[0]), 0.0)  # constants are free


def test_projection_is_feasible_and_keeps_g_of_structured_models():
    rng = np.random.default_rng(0)
    structure = Structure.of((2, 3, 1), ((0, 1), (0, 2), (1, 2)))
    layout = Layout(3, structure)
    A, lower, upper, _ = newton.constraints(layout)
    U = rng.random((50, 3))
    Phi = structure.design(U)
    for scale in (0.1, 1.0, 5.0):
        x = newton.project(rng.normal(0, scale, size=layout.n_coef), layout)
        r = A @ x
        assert np.all(r >= lower - 1e-12) and np.all(r <= upper + 1e-12)
        # moving constants between components is free: shift one, project back
        moved = x.copy()
        off = layout.n_linear + layout.sizes[0]
        moved[off : off + layout.sizes[1]] += 0.7
        back = newton.project(moved, layout)
        np.testing.assert_allclose(Phi @ back[3:], Phi @ moved[3:], atol=1e-12)
        # ... by moving the constant into the first component
        np.testing.assert_allclose(back[off:], x[off:], atol=1e-12)
        np.testing.assert_allclose(back[3:off], x[3:off] + 0.7, atol=1e-12)
    flat = newton.project(rng.normal(size=layout.n_coef), layout, flat=True)
    _, parts = layout.split(flat)
    assert np.ptp(parts[0]) == 0 and all(np.all(p == 0) for p in parts[1:])


def test_monotone_constraints_without_box():
    A, lower, upper = monotone_constraints((3, 2), box=None)
    assert A.shape == (2 * 2 + 3 * 1, 6)
    assert np.all(lower == 0) and np.all(np.isinf(upper))


def test_paired_standard_error_matches_direct_computation():
    rng = np.random.default_rng(1)
    n = 400
    w = rng.uniform(0.5, 2, n)
    y = (rng.random(n) < 0.4).astype(float)
    eta = rng.normal(size=(3, n))
    neg = np.logaddexp(0, eta)
    pos = neg - eta
    path = logistic.PathResult(
        np.array([np.inf, 1.0, 0.1]), neg, pos, w * (1 - y), w * y, float(np.sum(w**2))
    )
    losses = np.where(y == 1, pos, neg)  # (3, n) per-row log-losses
    np.testing.assert_allclose(path.mean, losses @ w / w.sum())
    d = losses - losses[2]
    mean = d @ w / w.sum()
    var = ((d - mean[:, None]) ** 2) @ w / w.sum()
    n_eff = w.sum() ** 2 / np.sum(w**2)
    np.testing.assert_allclose(path.paired_se(2), np.sqrt(var / n_eff), rtol=1e-9)


def test_tie_groups_give_the_cluster_robust_standard_error():
    rng = np.random.default_rng(2)
    n = 300
    w = rng.uniform(0.5, 2, n)
    y = (rng.random(n) < 0.5).astype(float)
    groups = rng.integers(0, 40, n)  # 40 groups of tied rows
    eta = rng.normal(size=(2, n))
    neg = np.logaddexp(0, eta)
    pos = neg - eta
    args = (np.array([1.0, 0.1]), neg, pos, w * (1 - y), w * y, float(np.sum(w**2)))
    clustered = logistic.PathResult(*args, groups=groups).paired_se(1)
    d = np.where(y == 1, pos, neg)[0] - np.where(y == 1, pos, neg)[1]
    mean = d @ w / w.sum()
    sums = np.bincount(groups, weights=w * (d - mean))
    assert clustered[0] == pytest.approx(np.sqrt(np.sum(sums**2)) / w.sum(), rel=1e-12)
    # singleton groups: the row-level formula for unit weights
    args = (np.array([1.0, 0.1]), neg, pos, 1 - y, y, float(n))
    np.testing.assert_allclose(
        logistic.PathResult(*args, groups=np.arange(n)).paired_se(1),
        logistic.PathResult(*args).paired_se(1),
        rtol=1e-12,
    )


def test_cv_path_warm_starts_and_stops_early():
    design, layout = _problem(1200, 2, (4, 4), "tensor", seed=5)
    fold = np.arange(1200) % 4
    folds = [(design.take(fold != f), design.take(fold == f)) for f in range(4)]
    lams = [np.inf, *np.logspace(1, -8, 19)]
    path = logistic.cv_path(folds, layout, lams, np.zeros(layout.n_coef), SETTINGS)
    # every fold's solution at every lambda is the minimizer for that fold
    k = len(path.lams) // 2
    train = folds[1][0]
    direct = logistic.newton(
        train, layout, path.lams[k], np.zeros(layout.n_coef), newton.make_solver(layout)
    )
    assert logistic.objective(path.solutions[k][1], train, layout, path.lams[k]) == pytest.approx(
        direct.objective, rel=1e-7
    )
    assert len(path.lams) < len(lams)  # the held-out loss rose: the path stopped
    best = int(np.argmin(path.mean))
    pick = one_se_pick(path.mean, path.paired_se(best))
    assert pick <= best
    assert path.mean[pick] - path.mean[best] <= path.paired_se(best)[pick]
