import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.polynomial import Chebyshev, Polynomial
from scipy.stats import t as student_t

import fusion
from fusion import IsotonicCalibrator, PlattCalibrator, RPRCalibrator
from fusion._cv import content_folds
from fusion.univariate.rpr import (
    RPRProblem,
    accumulate_stats,
    derivative_matrix,
    derivative_minimum,
    evaluate,
    heldout_sse,
    monomial_matrix,
    repair,
    solve_rpr,
    sos_coefficient_maps,
)


def _uniform_scores(n, seed, truth):
    rng = np.random.default_rng(seed)
    u = (np.argsort(np.argsort(rng.random(n))) + 0.5) / n  # ECDF values
    y = (rng.random(n) < truth(u)).astype(float)
    return u, y, rng.uniform(0.5, 2.0, n)


def _min_derivative_from_roots(coef):
    """min p'(s) on [0, 1]: p' at the real roots of p'' in [0, 1], the ends and a grid."""
    p = Chebyshev(coef, domain=[0.0, 1.0])
    d1, d2 = p.deriv(), p.deriv(2)
    pts = [0.0, 1.0, *np.linspace(0, 1, 2001)]
    if d2.degree() >= 1:
        r = d2.roots()
        pts += [x.real for x in r if abs(x.imag) < 1e-8 and 0 <= x.real <= 1]
    return float(d1(np.array(pts)).min())


# ---------------------------------------------------------------------------------------------
# The certificate and the bases.


@pytest.mark.parametrize("d", range(0, 11))
def test_any_psd_gram_matrices_give_a_polynomial_nonnegative_on_the_interval(d):
    rng = np.random.default_rng(d)
    for _ in range(5):
        q = np.zeros(d + 1)
        for A, size in sos_coefficient_maps(d):
            B = rng.normal(size=(size, size))
            q += A @ (B @ B.T).reshape(-1)
        x = np.linspace(-1, 1, 4001)
        assert Chebyshev(q)(x).min() >= -1e-10 * np.abs(q).sum()


def _certifiable(q):
    d = q.size - 1
    expr = 0
    for A, size in sos_coefficient_maps(d):
        G = cp.Variable((size, size), PSD=True)
        expr = expr + A @ cp.vec(G, order="C")
    problem = cp.Problem(cp.Minimize(0), [expr == q])
    problem.solve(solver=cp.CLARABEL)
    return problem.status


@pytest.mark.parametrize(
    "poly, ok",
    [
        ([1.2, 0.0, -1.0], True),  # 1.2 - x^2: positive on [-1, 1] only
        ([0.9, 0.0, -1.0], False),
        ([2.5, -3.0, 0.0, 1.0], True),  # x^3 - 3x + 2.5 (odd degree)
        ([1.9, -3.0, 0.0, 1.0], False),
        ([0.6, 0.0, -1.5, 0.0, 1.0], True),  # x^4 - 1.5 x^2 + 0.6
        ([0.55, 0.0, -1.5, 0.0, 1.0], False),
    ],
)
def test_certificate_is_exact_on_the_interval(poly, ok):
    q = Polynomial(poly).convert(kind=Chebyshev).coef
    status = _certifiable(q)
    assert (status == "optimal") is ok, status


@pytest.mark.parametrize("k", [1, 2, 5, 8, 12])
def test_monomial_and_derivative_maps(k):
    rng = np.random.default_rng(k)
    c = rng.normal(size=k + 1)
    s = np.linspace(0, 1, 11)
    np.testing.assert_allclose(Polynomial(monomial_matrix(k) @ c)(s), evaluate(c, s), atol=1e-9)
    dp_dx = Chebyshev(derivative_matrix(k) @ c)(2 * s - 1)
    np.testing.assert_allclose(2 * dp_dx, Chebyshev(c, domain=[0, 1]).deriv()(s), atol=1e-9)


def test_repair_makes_a_slightly_decreasing_polynomial_monotone_and_bounded():
    s = np.linspace(0, 1, 50)
    target = s + 0.1 * np.sin(12 * s) - 0.01  # dips and leaves [0, 1] a little
    c = Chebyshev.fit(s, target, 9, domain=[0, 1]).coef
    assert derivative_minimum(c) < 0
    fixed, added = repair(c)
    assert added > 0
    assert _min_derivative_from_roots(fixed) >= -1e-12
    assert evaluate(fixed, 0.0) >= 0 and evaluate(fixed, 1.0) <= 1
    assert np.abs(evaluate(fixed, s) - evaluate(c, s)).max() < 0.3


# ---------------------------------------------------------------------------------------------
# The SDP against independent formulations.


def _hankel(size, j):
    """The paper's H_{n, l} (eq. (19)): ones where i + j == l (0-based indices)."""
    i = np.arange(size)
    return (i[:, None] + i[None, :] == j).astype(float)


def _paper_sdp(u, y, w, k, lam):
    """Programs (22)/(23) on [0, 1] in monomials: q = p' as Hankel forms of PSD matrices."""
    a = cp.Variable(k + 1)
    d = k - 1
    q = [(j + 1) * a[j + 1] for j in range(d + 1)]  # coefficients of p'
    cons = [a[0] >= 0, cp.sum(a) <= 1]
    if np.isfinite(lam):
        cons.append(cp.norm1(a) <= lam)
    if d % 2 == 0:  # q = U-form + s (1 - s) V-form
        m = d // 2
        U = cp.Variable((m + 1, m + 1), PSD=True)
        V = cp.Variable((m, m), PSD=True) if m else None
        for j in range(d + 1):
            rhs = cp.sum(cp.multiply(_hankel(m + 1, j), U))
            if m:
                rhs += cp.sum(cp.multiply(_hankel(m, j - 1), V)) if j >= 1 else 0
                rhs -= cp.sum(cp.multiply(_hankel(m, j - 2), V)) if j >= 2 else 0
            cons.append(q[j] == rhs)
    else:  # q = s U-form + (1 - s) V-form
        m = (d - 1) // 2
        U = cp.Variable((m + 1, m + 1), PSD=True)
        V = cp.Variable((m + 1, m + 1), PSD=True)
        for j in range(d + 1):
            rhs = cp.sum(cp.multiply(_hankel(m + 1, j), V))
            if j >= 1:
                rhs += cp.sum(cp.multiply(_hankel(m + 1, j - 1), U - V))
            cons.append(q[j] == rhs)
    X = np.vander(u, k + 1, increasing=True)
    obj = cp.sum(cp.multiply(w, cp.square(X @ a - y))) / w.sum()
    problem = cp.Problem(cp.Minimize(obj), cons)
    problem.solve(solver=cp.CLARABEL)
    assert problem.status == "optimal"
    return problem.value


def _grid_qp(u, y, w, k, lam, n_grid=2001):
    """Relaxation: p' >= 0 only on a dense grid (a QP in Chebyshev coefficients)."""
    c = cp.Variable(k + 1)
    g = np.linspace(0, 1, n_grid)
    D = np.stack([Chebyshev.basis(j, domain=[0, 1]).deriv()(g) for j in range(k + 1)], 1)
    Phi = np.stack([Chebyshev.basis(j, domain=[0, 1])(u) for j in range(k + 1)], 1)
    ends = np.stack([Chebyshev.basis(j, domain=[0, 1])([0.0, 1.0]) for j in range(k + 1)], 1)
    cons = [D @ c >= 0, ends[0] @ c >= 0, ends[1] @ c <= 1]
    if np.isfinite(lam):
        cons.append(cp.norm1(monomial_matrix(k) @ c) <= lam)
    obj = cp.sum(cp.multiply(w, cp.square(Phi @ c - y))) / w.sum()
    problem = cp.Problem(cp.Minimize(obj), cons)
    problem.solve(solver=cp.CLARABEL)
    assert problem.status == "optimal"
    return problem.value


def _sdp_objective(u, y, w, k, lam):
    stats = accumulate_stats(u, y, w, k)
    c, status, _ = solve_rpr(stats, k, lam)
    assert status == "optimal"
    return heldout_sse(stats, c) / stats.sw, c


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("lam", [np.inf, 4.0])
def test_sdp_equals_the_papers_hankel_program_and_the_dense_grid_relaxation(k, lam):
    # a truth with a plateau makes the monotonicity constraint active
    u, y, w = _uniform_scores(300, k, lambda s: 0.2 + 0.6 * (s > 0.5) + 0.1 * np.sin(9 * s))
    ours, c = _sdp_objective(u, y, w, k, lam)
    assert ours == pytest.approx(_paper_sdp(u, y, w, k, lam), abs=1e-6)
    grid = _grid_qp(u, y, w, k, lam)
    assert grid <= ours + 1e-7  # a relaxation
    assert ours - grid <= 1e-5  # and nearly exact at this resolution
    if np.isfinite(lam):
        assert np.abs(monomial_matrix(k) @ c).sum() <= lam * (1 + 1e-6)


# ---------------------------------------------------------------------------------------------
# Fitted models.


@settings(max_examples=15, deadline=None)
@given(
    degree=st.integers(1, 12),
    lam=st.sampled_from([0.5, 5.0, 125.0, np.inf]),
    seed=st.integers(0, 10_000),
    noise=st.booleans(),
)
def test_fitted_polynomial_is_monotone_and_bounded(degree, lam, seed, noise):
    rng = np.random.default_rng(seed)
    s = rng.standard_t(2, 150)
    # pure noise and decreasing truths push against the constraints
    y = rng.integers(0, 2, 150) if noise else (rng.random(150) < 1 / (1 + np.exp(s))).astype(int)
    if np.unique(y).size < 2:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fusion.SolverWarning)
        # the score as given: increasing="auto" would reverse a decreasing truth
        model = RPRCalibrator(degree=degree, lam=lam, increasing=True).fit(s, y)
    assert _min_derivative_from_roots(model.coef_) >= -1e-9
    f = model.calibrating_function(np.linspace(0, 1, 2001))
    assert np.all(np.diff(f) >= -1e-12)
    p = np.polynomial.chebyshev.chebval(np.array([-1.0, 1.0]), model.coef_)
    assert p[0] >= 0 and p[1] <= 1  # the polynomial itself, not just the clipped output
    np.testing.assert_allclose(Polynomial(model.monomial_coef_)(0.3), evaluate(model.coef_, 0.3))


def test_beats_platt_and_isotonic_on_a_fat_tailed_non_sigmoid_truth():
    def truth(s):  # t(1.5) scores; plateaus at 0.1 and 0.9, asymmetric rise
        return 0.1 + 0.8 * student_t.cdf(s, 1.5) ** 3

    errors = {"rpr": [], "platt": [], "iso": []}
    for seed in range(3):
        rng = np.random.default_rng(seed)
        s = rng.standard_t(1.5, 1500)
        y = (rng.random(1500) < truth(s)).astype(int)
        s_test = rng.standard_t(1.5, 20_000)
        models = {
            "rpr": RPRCalibrator(degree_grid=(3, 4, 6, 8)),
            "platt": PlattCalibrator(),
            "iso": IsotonicCalibrator(),
        }
        for name, model in models.items():
            p = model.fit(s, y).predict_proba(s_test)[:, 1]
            errors[name].append(np.sqrt(np.mean((p - truth(s_test)) ** 2)))
    mean = {k: np.mean(v) for k, v in errors.items()}
    assert mean["rpr"] < mean["platt"] and mean["rpr"] < mean["iso"]


def test_cv_scores_are_heldout_brier_of_each_candidate():
    rng = np.random.default_rng(4)
    s = rng.normal(size=240)
    y = (rng.random(240) < 1 / (1 + np.exp(-2 * s))).astype(int)
    w = rng.uniform(0.5, 2.0, 240)
    model = RPRCalibrator(degree_grid=[2, 5], lam_grid=[0.3, 25.0, np.inf], cv=3, random_state=7)
    model.fit(s, y, sample_weight=w)
    assert model.cv_scores_.shape == (2, 3)
    i, j = np.unravel_index(np.nanargmin(model.cv_scores_), model.cv_scores_.shape)
    assert (model.degree_, model.lam_) == (model.degree_grid_[i], model.lam_grid_[j])
    # recompute one entry by refitting on each training fold
    t = model.ecdf_.transform(s[:, None])[:, 0]
    folds = content_folds(t[:, None], y.astype(float), 3, 7)  # the folds of an int cv
    sse = 0.0
    for f in range(3):
        tr, te = folds != f, folds == f
        stats = accumulate_stats(t[tr], y[tr].astype(float), w[tr], 5)
        c, _, _ = solve_rpr(stats, 5, 25.0)
        sse += np.sum(w[te] * (evaluate(c, t[te]) - y[te]) ** 2)
    assert model.cv_scores_[1, 1] == pytest.approx(sse / w.sum(), rel=1e-5)


def test_default_fit_is_reproducible_and_folds_are_stratified():
    rng = np.random.default_rng(3)
    s = rng.normal(size=150)
    y = (rng.random(150) < 1 / (1 + np.exp(-s))).astype(int)
    grids = {"degree_grid": (2, 4), "lam_grid": (1.0, np.inf)}
    a = RPRCalibrator(**grids).fit(s, y)
    b = RPRCalibrator(**grids).fit(s, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.cv_scores_, b.cv_scores_)
    t = a.ecdf_.transform(s[:, None])
    folds = content_folds(t, y.astype(float), 3, 0)  # the folds of an int cv
    for cls in (0, 1):
        counts = np.bincount(folds[y == cls], minlength=3)
        assert counts.max() - counts.min() <= 1


def test_given_degree_and_lam_skip_cross_validation():
    rng = np.random.default_rng(0)
    s = rng.normal(size=200)
    y = (rng.random(200) < 1 / (1 + np.exp(-s))).astype(int)
    model = RPRCalibrator(degree=3, lam=10.0).fit(s, y)
    assert (model.degree_, model.lam_) == (3, 10.0)
    assert not hasattr(model, "cv_scores_")
    assert model.coef_.shape == (4,) and model.solver_status_ == "optimal"


def test_all_solvers_failing_raises_solver_error(monkeypatch):
    def fail(self, *args, **kwargs):
        raise cp.error.SolverError("boom")

    problem = RPRProblem(4)
    monkeypatch.setattr(cp.Problem, "solve", fail)
    u, y, w = _uniform_scores(100, 0, lambda s: s)
    with pytest.raises(fusion.SolverError) as info:
        problem.solve(accumulate_stats(u, y, w, 4), 5.0)
    assert info.value.status == "solver_error"


@pytest.mark.parametrize(
    "params, match",
    [
        ({"degree": 0}, "degree"),
        ({"lam": -1.0}, "lam"),
        ({"degree_grid": [2, 2.5]}, "integers"),
        ({"lam_grid": [1.0, -2.0]}, "positive"),
        ({"combine": "max"}, "combine"),
    ],
)
def test_bad_parameters_name_the_problem(params, match):
    s = np.arange(20.0)
    y = np.arange(20) % 2
    with pytest.raises(ValueError, match=match):
        RPRCalibrator(**params).fit(s, y)
