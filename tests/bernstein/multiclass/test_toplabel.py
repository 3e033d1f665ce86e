"""The top-label correction of the class-shared model (fusion/bernstein/multiclass/toplabel.py): the
guarantees its constraints prove (checked numerically on random and adversarial rows), the
fit against the same problem in cvxpy, a known truth, and the sparse held-out sample."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import log_softmax, softmax

from fusion.bernstein.multiclass import toplabel as T
from fusion.bernstein.plan import TOP_LABEL_GRID

K = T.DEGREE
#: The free minimizer of a CIFAR-100 network's held-out probabilities at tau = 1e-2, which
#: the certificate refutes (a row near a tie at 1/2 breaks competitiveness).
REFUTED = np.array([0.935, 0.632, 0.088, -0.396, -0.671, -0.595])


def _feasible_theta(seed: int, size: float) -> np.ndarray:
    theta = np.random.default_rng(seed).normal(size=K) * size
    return T._feasible(theta)


def _edge(theta: np.ndarray) -> np.ndarray:
    """``theta``, or it scaled onto the edge of what :func:`certify` proves."""
    if T.certify(theta):
        return theta
    return T._farthest(T.certify, np.zeros(K), theta, 30)


def _certified_theta(seed: int, size: float) -> np.ndarray:
    """A random ``theta`` scaled onto the edge of what :func:`certify` proves (where the
    proof is tightest), outside the polytope where it can be."""
    return _edge(np.random.default_rng(seed).normal(size=K) * size)


def _row(kind: str, C: int, rng) -> np.ndarray:
    if kind == "dirichlet":
        return rng.dirichlet(np.full(C, rng.choice([0.05, 0.3, 1.0, 5.0])))
    if kind == "top":  # one confident class and an even tail
        t = rng.uniform(0.3, 0.9999)
        p = np.full(C, (1 - t) / (C - 1))
        p[rng.integers(C)] = t
        return p
    if kind == "tie":  # two tied classes on top
        p = rng.dirichlet(np.ones(C)) * 0.2
        p[:2] = (1 - p[2:].sum()) / 2
        return p
    if kind == "split" and C > 2:  # two classes, the rest split evenly (the proof's worst case)
        pj, pk = rng.uniform(0, 0.6, 2) * rng.choice([0.02, 1.0], 2)
        rest = max(1e-3, 1 - pj - pk)
        p = np.full(C, rest / (C - 2))
        p[:2] = pj, pk
        return p
    # two large classes, one just above 1/2
    p = rng.dirichlet(np.ones(C)) * 0.05
    p[0] = rng.uniform(0.5, 0.6)
    p[1] = 1 - p[0] - p[2:].sum()
    return p


def _log_jacobian(eta: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``d log P_k / d eta_i`` by central differences."""
    C = eta.shape[0]
    h = 1e-6
    out = np.empty((C, C))
    for i in range(C):
        up, down = eta.copy(), eta.copy()
        up[i] += h
        down[i] -= h
        out[:, i] = (
            np.log(T.reweight(softmax(up)[None], theta)[0])
            - np.log(T.reweight(softmax(down)[None], theta)[0])
        ) / (2 * h)
    return out


def test_no_correction_is_feasible_and_strictly_inside():
    assert T.satisfies(np.zeros(K))
    A, lower, upper = T.constraints(K, T.MARGIN)
    x = A @ T._range_vars(np.zeros(K))
    assert np.all(x >= lower) and np.all(x <= upper)
    big = np.full(K, 5.0)
    assert not T.satisfies(big)
    scaled = T._feasible(big)
    assert T.satisfies(scaled) and 0 < scaled[0] < 5.0


@settings(max_examples=120, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    size=st.sampled_from([0.3, 1.0, 3.0, 10.0]),
    C=st.sampled_from([2, 3, 5, 10, 50]),
    kind=st.sampled_from(["dirichlet", "top", "tie", "half", "split"]),
    region=st.sampled_from(["polytope", "certified"]),
)
def test_every_admissible_correction_is_competitive(seed, size, C, kind, region):
    # P_k never falls when eta_k rises or another eta_j falls: so every class's probability
    # stays non-decreasing in every network's score for that class; the order is kept
    theta = (_feasible_theta if region == "polytope" else _certified_theta)(seed, size)
    assert T.admissible(theta)
    rng = np.random.default_rng(seed + 1)
    p = np.clip(_row(kind, C, rng), 1e-9, None)
    eta = np.log(p / p.sum())
    J = _log_jacobian(eta, theta)
    assert np.diag(J).min() >= -1e-6
    assert J[~np.eye(C, dtype=bool)].max(initial=-np.inf) <= 1e-6
    P = T.reweight(softmax(eta)[None], theta)[0]
    order = np.argsort(softmax(eta), kind="stable")
    assert np.all(np.diff(P[order]) >= -1e-12)


def test_the_certificate_contains_the_polytope_and_refutes_a_real_violation():
    for seed in range(40):
        assert T.certify(_feasible_theta(seed, 3.0))
    assert T.certify(np.zeros(K)) and not T.certify(np.full(K, np.nan))
    # the free minimizer of a CIFAR-100 network's held-out probabilities at tau = 1e-2: it
    # is not proven, and indeed a row near a tie at 1/2 breaks competitiveness
    theta = REFUTED
    assert not T.certify(theta) and not T.admissible(theta)
    p = np.array([0.49, 0.51, 1e-9])
    J = _log_jacobian(np.log(p / p.sum()), theta)
    assert J[1, 0] > 1e-3  # P_1 rises with eta_0
    # scaled onto the certificate's edge, the same row is competitive
    edge = _edge(theta)
    assert edge[0] / theta[0] > 0.3 and not T.satisfies(edge)  # proven, outside the polytope
    J = _log_jacobian(np.log(p / p.sum()), edge)
    assert J[~np.eye(3, dtype=bool)].max() <= 1e-6 and np.diag(J).min() >= -1e-6


def test_corrected_rows_are_distributions_continuous_at_ties():
    rng = np.random.default_rng(3)
    theta = _feasible_theta(4, 3.0)
    P = rng.dirichlet(np.full(20, 0.2), size=500)
    Q = T.reweight(P, theta)
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, atol=1e-12)
    assert np.all((Q > 0) & (Q < 1))
    tie = np.array([[0.4, 0.4, 0.2], [0.4 + 1e-9, 0.4 - 1e-9, 0.2]])
    R = T.reweight(tie, theta)
    assert R[0, 0] == R[0, 1] and np.abs(R[1] - R[0]).max() < 1e-7
    np.testing.assert_array_equal(T.reweight(P, np.zeros(K)), P)


def _sample(n, C, seed, theta=None):
    """Fused probabilities and labels drawn from their correction by ``theta``."""
    rng = np.random.default_rng(seed)
    P = softmax(rng.normal(size=(n, C)) * 2.5, axis=1)
    Q = P if theta is None else T.reweight(P, theta)
    y = (rng.random(n)[:, None] > np.cumsum(Q, axis=1)).sum(axis=1).clip(0, C - 1)
    return P, y


def test_fit_solves_the_problem_cvxpy_solves(monkeypatch):
    cp = pytest.importorskip("cvxpy")
    monkeypatch.setattr(T, "KEEP", 0.0)  # every class exact: the problem cvxpy states
    theta_true = _feasible_theta(5, 2.0)
    P, y = _sample(400, 6, 6, theta_true)
    w = np.random.default_rng(7).uniform(0.5, 2.0, 400)
    s = T.sample_rows(P, y, w, np.zeros(400, dtype=int))
    tau = 1e-3
    theta = T.fit(s, tau, relaxed=False)
    A, lower, upper = T.constraints(K, T.MARGIN)
    x = cp.Variable(K + 2)
    B = T._bern(P.ravel(), K)[:, 1:].reshape(400, 6, K)
    E = [np.log(P[:, k]) + B[:, k] @ x[:K] for k in range(6)]
    lse = cp.log_sum_exp(cp.vstack(E), axis=0)
    picked = cp.hstack([E[y[i]][i] for i in range(400)])
    R = T._penalty(K)
    objective = (w @ (lse - picked)) / w.sum() + 0.5 * tau * cp.quad_form(x[:K], R)
    rows = np.isfinite(upper)
    cons = [A[rows] @ x <= upper[rows], A[np.isfinite(lower)] @ x >= lower[np.isfinite(lower)]]
    cp.Problem(cp.Minimize(objective), cons).solve(solver="CLARABEL")
    ref = np.asarray(x.value[:K])

    def value(t):
        loss, _, _ = T._stats(s, t, hessian=False)
        return loss / w.sum() + 0.5 * tau * t @ R @ t

    assert value(theta) <= value(ref) + 1e-8
    np.testing.assert_allclose(theta, ref, atol=2e-3)
    # the certified correction: the free problem's minimizer where it is proven, else a
    # proven point no worse than the polytope's
    cp.Problem(cp.Minimize(objective)).solve(solver="CLARABEL")
    free = np.asarray(x.value[:K])
    relaxed = T.fit(s, tau)
    assert T.certify(relaxed) and value(relaxed) <= value(theta) + 1e-10
    if T.certify(free):
        np.testing.assert_allclose(relaxed, free, atol=2e-3)
    else:
        assert value(relaxed) >= value(free) - 1e-8


def test_the_certified_correction_reaches_beyond_the_polytope():
    # a truth outside the polytope (a strong lift of small probabilities, as on the CIFAR-100
    # networks): the certified fit recovers it, the polytope's cannot
    theta_true = 0.6 * REFUTED
    assert T.certify(theta_true) and not T.satisfies(theta_true)
    P, y = _sample(40_000, 10, 21, theta_true)
    s = T.sample_rows(P, y, np.ones(40_000), np.arange(40_000) % 5)
    relaxed, inner = T.fit(s, 1e-6), T.fit(s, 1e-6, relaxed=False)
    truth = T.reweight(P, theta_true)
    err = [np.abs(T.reweight(P, t) - truth).max() for t in (relaxed, inner)]
    assert err[0] < 0.3 * err[1]
    chosen = T.choose(s, TOP_LABEL_GRID)
    assert chosen.relaxed and (chosen.penalty, "certified") in chosen.cv_scores
    assert min(chosen.cv_scores.values()) == pytest.approx(
        chosen.cv_scores[(chosen.penalty, "certified")], rel=T.TIE
    )


def test_a_known_correction_is_recovered():
    theta_true = _feasible_theta(8, 3.0)
    P, y = _sample(40_000, 10, 9, theta_true)
    s = T.sample_rows(P, y, np.ones(40_000), np.zeros(40_000, dtype=int))
    theta = T.fit(s, 1e-6)
    grid = np.linspace(0.02, 0.98, 25)
    np.testing.assert_allclose(T.psi(grid, theta), T.psi(grid, theta_true), atol=0.12)
    none = T.fit(s, np.inf)
    assert np.all(none == 0)


def test_cross_validation_keeps_no_correction_when_there_is_none():
    P, y = _sample(3_000, 8, 10)
    fold = np.random.default_rng(11).integers(0, 5, 3_000)
    fit = T.choose(T.sample_rows(P, y, np.ones(3_000), fold), TOP_LABEL_GRID)
    # calibrated probabilities: the correction's held-out gain is noise
    assert fit.cv_scores[np.inf] - min(fit.cv_scores.values()) < 2e-3
    assert np.max(np.abs(T.psi(np.linspace(0, 1, 11), fit.theta))) < 0.25
    theta_true = _feasible_theta(12, 3.0)
    P, y = _sample(3_000, 8, 13, theta_true)
    fit = T.choose(T.sample_rows(P, y, np.ones(3_000), fold), TOP_LABEL_GRID)
    assert np.isfinite(fit.penalty) and fit.heldout.shape == (3_000,)


def test_the_tail_enters_to_first_order(monkeypatch):
    theta = _feasible_theta(14, 3.0)
    P, y = _sample(500, 200, 15)
    fold = np.zeros(500, dtype=int)
    sparse = T.sample_rows(P, y, np.ones(500), fold)
    assert sparse.p.shape[0] < 0.5 * P.size
    monkeypatch.setattr(T, "KEEP", 0.0)
    exact = T.sample_rows(P, y, np.ones(500), fold)
    loss_sparse, g_sparse, _ = T._stats(sparse, theta)
    loss_exact, g_exact, _ = T._stats(exact, theta)
    assert loss_sparse == pytest.approx(loss_exact, rel=1e-4)
    np.testing.assert_allclose(g_sparse, g_exact, rtol=1e-2, atol=1e-3)
    rows = T._losses(exact, theta)
    direct = -log_softmax(np.log(P) + T.psi(P, theta), axis=1)[np.arange(500), y]
    np.testing.assert_allclose(rows, direct, rtol=1e-10)


def _stats_reference(s, theta):
    """The loss sum, gradient and Hessian of :func:`toplabel._stats` as array operations
    (the code the compiled pass replaced)."""
    starts, length = s.indptr[:-1], np.diff(s.indptr)
    E = s.B @ theta + s.logp
    top = np.maximum.reduceat(E, starts)
    e = np.exp(E - np.repeat(top, length))
    scale = np.exp(-top)
    Z = np.add.reduceat(e, starts) + (s.tail + s.tail_B @ theta) * scale
    loss = np.log(Z) + top - E[s.label]
    G = np.add.reduceat(e[:, None] * s.B, starts) + s.tail_B * scale[:, None]
    G /= Z[:, None]
    q = np.repeat(s.w / Z, length) * e
    H = (s.B.T * q) @ s.B - (G.T * s.w) @ G
    return loss, float(s.w @ loss), s.w @ (G - s.B[s.label]), H


@pytest.mark.parametrize("C, size", [(3, 1.0), (12, 3.0), (200, 3.0), (40, 30.0)])
def test_the_compiled_pass_is_the_array_formulas(C, size):
    rng = np.random.default_rng(C)
    P, y = _sample(700, C, C + 1)
    s = T.sample_rows(P, y, rng.exponential(size=700), rng.integers(0, 5, 700))
    for _ in range(3):
        theta = rng.normal(size=K) * size
        rows, value, grad, H = _stats_reference(s, theta)
        got = np.empty(700)
        v, g, h = T._stats(s, theta, losses=got)
        np.testing.assert_allclose(got, rows, rtol=1e-12, atol=1e-13)
        assert v == pytest.approx(value, rel=1e-12)
        np.testing.assert_allclose(g, grad, rtol=1e-10, atol=1e-10 * np.abs(grad).max())
        np.testing.assert_allclose(h, H, rtol=1e-10, atol=1e-10 * np.abs(H).max())
        v2, g2, none = T._stats(s, theta, hessian=False)
        assert none is None and v2 == v and np.array_equal(g2, g)
    # a sample's rows apart are the same rows
    half = s.rows(np.arange(700) < 350)
    np.testing.assert_array_equal(T._losses(half, theta), T._losses(s, theta)[:350])


def test_samples_split_and_join():
    P, y = _sample(300, 12, 16)
    fold = np.arange(300) % 3
    s = T.sample_rows(P, y, np.arange(300) + 1.0, fold)
    parts = [s.rows(fold == f) for f in range(3)]
    joined = T.Sample.concatenate(parts)
    order = np.argsort(np.concatenate([np.flatnonzero(fold == f) for f in range(3)]))
    theta = _feasible_theta(17, 2.0)
    np.testing.assert_allclose(T._losses(joined, theta)[order], T._losses(s, theta))
    np.testing.assert_array_equal(joined.w[order], s.w)


def test_the_edge_conditions_and_their_jacobian():
    rng = np.random.default_rng(31)
    for _ in range(5):
        theta = rng.normal(size=K)
        value, J = T.edge_conditions(theta, 12)
        h = 1e-6
        numeric = np.column_stack([
            (T.edge_conditions(theta + h * e, 12)[0] - T.edge_conditions(theta - h * e, 12)[0])
            / (2 * h)
            for e in np.eye(K)
        ])  # fmt: skip
        np.testing.assert_allclose(J, numeric, rtol=1e-5, atol=1e-6 * np.abs(value).max())
    # necessary for the certificate: a proven correction meets them at every grid point
    for seed in range(20):
        theta = _certified_theta(seed, 3.0)
        assert T.edge_conditions(theta)[0].min() >= -1e-9
    # and they see the violation of the free minimizer refuted above
    assert T.edge_conditions(REFUTED)[0].min() < 0


def _beyond_the_certificate(n=20_000):
    """A sample drawn from a correction the certificate refutes, with the objective at
    ``tau = 1e-5``, the segment's point and the free minimizer."""
    theta_true = REFUTED * 1.5
    P, y = _sample(n, 10, 41, theta_true)
    s = T.sample_rows(P, y, np.random.default_rng(42).uniform(0.5, 2.0, n), np.zeros(n, int))
    inner, best, free = T._fit_pair(s, 1e-5)
    return s, T._objective(s, 1e-5, K), best, free


def test_following_the_edge_goes_past_the_segment_and_stays_proven():
    s, objective, best, free = _beyond_the_certificate()
    assert not T.certify(free) and T.certify(best, slack=T.FIT_SLACK)
    edge = T.fit(s, 1e-5)
    assert T.certify(edge, slack=T.FIT_SLACK) and T.admissible(edge)
    loss = [objective(t, False)[0] for t in (free, edge, best)]
    # lower than the segment's point by a good share of what separates it from the free one
    assert loss[0] < loss[1] < loss[2] - 0.2 * (loss[2] - loss[0])
    # the map stays competitive on the proof's worst rows
    rng = np.random.default_rng(43)
    for kind in ("split", "tie", "top", "dirichlet"):
        for _ in range(10):
            p = np.clip(_row(kind, 6, rng), 1e-9, None)
            J = _log_jacobian(np.log(p / p.sum()), edge)
            assert np.diag(J).min() >= -1e-6 and J[~np.eye(6, dtype=bool)].max() <= 1e-6


def test_following_the_edge_meets_the_first_order_conditions(monkeypatch):
    # the solver's answer checked against the problem, not the solver: at a local minimizer
    # the gradient is a non-negative combination of the active conditions' gradients
    from scipy.optimize import nnls

    monkeypatch.setattr(T, "EDGE_GRID", 10)
    monkeypatch.setattr(T, "EDGE_MARGINS", (0.1,))
    s, objective, best, _ = _beyond_the_certificate(4_000)
    edge = T.follow_edge(s, 1e-5, best)
    assert not np.array_equal(edge, best)
    g, J = T.edge_conditions(edge, 10)
    assert g.min() >= 0.1 - 1e-8
    active = g <= 0.1 + 1e-6
    grad = objective(edge, False)[1]
    multipliers, residual = nnls(J[active].T, grad)
    assert active.any() and residual <= 1e-5 * np.linalg.norm(grad)


def test_following_the_edge_stops_at_its_budget(monkeypatch):
    # a run that has not converged within its passes over the sample is dropped (the next
    # margin starts where the last converged one ended); with no run converging, the
    # segment's point stands, after at most the budget's passes per margin
    s, _, best, _ = _beyond_the_certificate(4_000)
    calls = [0]
    stats = T._stats

    def counted(*args, **kwargs):
        calls[0] += 1
        return stats(*args, **kwargs)

    monkeypatch.setattr(T, "_stats", counted)
    unlimited = T.follow_edge(s, 1e-5, best)
    used = calls[0]
    assert not np.array_equal(unlimited, best) and used > 2 * len(T.EDGE_MARGINS)
    monkeypatch.setattr(T, "_EDGE_PASSES", 2)
    calls[0] = 0
    np.testing.assert_array_equal(T.follow_edge(s, 1e-5, best), best)
    assert calls[0] <= 1 + 2 * len(T.EDGE_MARGINS)


def test_following_the_edge_is_smooth_in_the_data():
    # inputs equal up to rounding (a network's logits and its log-probabilities) must give
    # corrections equal up to rounding
    s, _, _, _ = _beyond_the_certificate(6_000)
    rng = np.random.default_rng(44)
    p = s.p * (1 + 1e-13 * rng.standard_normal(s.p.shape))
    s2 = T.Sample(s.indptr, p, T._bern(p, K)[:, 1:].copy(), s.label, s.tail, s.tail_B, s.w,
                  s.fold)  # fmt: skip
    a, b = T.fit(s, 1e-5), T.fit(s2, 1e-5)
    assert not T.certify(T._fit_pair(s, 1e-5)[2])  # the edge was followed
    np.testing.assert_allclose(a, b, atol=1e-8)


def test_cross_validation_follows_the_edge_where_it_pays():
    # far outside the certified set, the edge lowers the held-out loss well beyond its
    # standard error: kept, scored, and the final fit is the edge's
    theta_true = REFUTED * 1.5
    P, y = _sample(8_000, 10, 45, theta_true)
    s = T.sample_rows(P, y, np.ones(8_000), np.arange(8_000) % 5)
    chosen = T.choose(s, TOP_LABEL_GRID)
    tau = chosen.penalty
    assert chosen.relaxed and chosen.edge
    assert chosen.cv_scores[tau, "edge"] < chosen.cv_scores[tau, "certified"]
    assert chosen.cv_scores[tau, "edge"] == pytest.approx(np.mean(chosen.heldout))
    np.testing.assert_array_equal(chosen.theta, T.fit(s, tau))
    assert not np.array_equal(chosen.theta, T.fit(s, tau, edge=False))
    assert T.certify(chosen.theta, slack=T.FIT_SLACK)


def test_cross_validation_never_picks_a_correction_whose_held_out_loss_overflows(monkeypatch):
    # on few rows a fold's free minimizer may lie at infinity; a candidate whose held-out
    # loss is not finite on some row must lose, not break the choice (NaN compared to
    # nothing and left no candidate)
    P, y = _sample(600, 8, 51, _feasible_theta(52, 2.0))
    s = T.sample_rows(P, y, np.ones(600), np.arange(600) % 5)
    fit_pair = T._fit_pair

    def diverging(sample, tau, *args, **kwargs):
        inner, relaxed, free = fit_pair(sample, tau, *args, **kwargs)
        return inner, np.full(K, -1e4), free  # the certified candidate overflows

    monkeypatch.setattr(T, "_fit_pair", diverging)
    with np.errstate(over="ignore", invalid="ignore"):
        assert not np.isfinite(T._losses(s, np.full(K, -1e4))).all()
        chosen = T.choose(s, TOP_LABEL_GRID)
    assert not chosen.relaxed and np.all(np.isfinite(chosen.heldout))
    assert all(v == np.inf for k, v in chosen.cv_scores.items() if isinstance(k, tuple))
