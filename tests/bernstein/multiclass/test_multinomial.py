"""The class-shared model's fit (fusion/bernstein/multiclass/multinomial.py): the statistics
of a block against finite differences, the Newton/QP solution against the same problem in cvxpy, and
the constraints."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import softmax

from fusion.bernstein.folds import FoldRule
from fusion.bernstein.multiclass.multinomial import (
    DENSE_BIASES,
    HESSIAN_PAIRS,
    HESSIAN_ROWS,
    Tables,
    block_losses,
    block_stats,
    hessian_share,
)
from fusion.bernstein.multiclass.pairs import PairData, member_log_probabilities
from fusion.bernstein.multiclass.source import MemorySource, bin_features, shared_layout
from fusion.bernstein.newton import Problem, penalty_matrix
from fusion.bernstein.newton import solve as newton

SETTINGS = {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iter": 50_000}


def _data(n=120, M=2, C=4, seed=0, folds=False):
    rng = np.random.default_rng(seed)
    L = rng.normal(size=(n, C)) * 1.5
    y = (rng.random(n)[:, None] > np.cumsum(softmax(L, 1), 1)).sum(1).clip(0, C - 1)
    S = np.stack([softmax(L * t + rng.normal(size=(n, C)), 1) for t in (2.0, 0.7, 1.0)[:M]], 1)
    w = rng.uniform(0.5, 2.0, n)
    Z = member_log_probabilities(S, ["probability"] * M)
    fold = FoldRule.of(3, 0).pair_folds(Z, y, 1.0)[0] if folds else None
    return PairData(Z, y, w, ["probability"] * M, fold, 3 if folds else 0)


def _x(layout, rng):
    x = rng.normal(size=layout.n_coef) * 0.3
    x[: layout.n_linear] = np.abs(x[: layout.n_linear])
    return x


def _block(data):
    rows = slice(0, data.n)
    return data.Z[:, rows].astype(float), data.B[:, rows].astype(np.intp), data.index, data.w


@pytest.mark.parametrize("biases", [False, True])
@pytest.mark.parametrize("C", [3, 40])  # both ways of summing the rows' features
def test_gradient_is_exact(C, biases):
    data = _data(n=60, C=C, seed=1)
    K = 3
    layout = shared_layout(2, K)
    Phi, feats = bin_features(data.axes, K)
    Z, B, idx, w = _block(data)
    rng = np.random.default_rng(2)
    x = _x(layout, rng)
    if biases:
        x = np.r_[x, rng.normal(size=C) * 0.5]

    def loss(x):
        return float(w @ block_losses(Z, B, idx, Tables.of(x, layout, Phi)))

    value, grad, _ = block_stats(Z, B, idx, w, Tables.of(x, layout, Phi), feats, False)
    assert value == pytest.approx(loss(x), rel=1e-12)
    eps = 1e-6
    fd = [(loss(x + eps * e) - loss(x - eps * e)) / (2 * eps) for e in np.eye(x.size)]
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("biases", [False, True])
@pytest.mark.parametrize("C", [3, 40, DENSE_BIASES + 6])
def test_hessian_is_exact_where_every_pair_sits_at_its_bins_mean(C, biases):
    data = _data(n=50, C=C, seed=3)
    K = 3
    layout = shared_layout(2, K)
    P = layout.n_coef
    Phi, feats = bin_features(data.axes, K)
    Z, B, idx, w = _block(data)
    # move every pair's z to its bin's mean: the binned Hessian is then the exact one
    Z = np.stack([data.axes[m].zbar[B[m]] for m in range(2)])
    rng = np.random.default_rng(4)
    x = _x(layout, rng)
    if biases:
        x = np.r_[x, rng.normal(size=C) * 0.5]

    def grad(x):
        return block_stats(Z, B, idx, w, Tables.of(x, layout, Phi), feats, False)[1]

    _, _, curv = block_stats(Z, B, idx, w, Tables.of(x, layout, Phi), feats, True)
    eps = 1e-6
    fd = np.array([(grad(x + eps * e) - grad(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])
    np.testing.assert_allclose(curv.aa, fd[:P, :P], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(curv.aa, curv.aa.T, atol=1e-12)
    if not biases:
        assert curv.ab is None
        assert np.linalg.eigvalsh(curv.aa).min() > -1e-9
        return
    np.testing.assert_allclose(curv.ab, fd[:P, P:], rtol=1e-5, atol=1e-6)
    if C <= DENSE_BIASES:
        np.testing.assert_allclose(curv.bb, fd[P:, P:], rtol=1e-5, atol=1e-6)
        full = np.block([[curv.aa, curv.ab], [curv.ab.T, curv.bb]])
        assert np.linalg.eigvalsh(full).min() > -1e-9
    else:  # many classes: the biases' diagonal
        np.testing.assert_allclose(curv.bb, np.diag(fd[P:, P:]), rtol=1e-5, atol=1e-6)


def _reference(data, layout, K, lam, ridge, tau=np.inf):
    """The same penalized problem in cvxpy: pairs' features as the fit sees them."""
    cp = pytest.importorskip("cvxpy")
    Phi, _ = bin_features(data.axes, K)
    n, C, M = data.n, data.C, data.M
    W = data.w.sum()
    cols = []
    for m in range(M):
        cols.append(data.Z[m].astype(float).reshape(-1, 1))
    for m in range(M):
        cols.append(Phi[m][data.B[m].astype(np.intp).reshape(-1)])
    X = np.hstack(cols)  # (n C, P), pairs row-major
    x = cp.Variable(layout.n_coef)
    eta = cp.reshape(X @ x, (n, C), order="C")
    if np.isfinite(tau):
        b = cp.Variable(C)
        eta = eta + np.ones((n, 1)) @ cp.reshape(b, (1, C), order="C")
    Y = np.zeros((n, C))
    Y[np.arange(n), data.index] = 1.0
    loss = (
        data.w @ cp.log_sum_exp(eta, axis=1) - cp.sum(cp.multiply(Y * data.w[:, None], eta))
    ) / W
    D = penalty_matrix(layout.shapes)
    c, theta = x[:M], x[M:]
    objective = loss + 0.5 * ridge * cp.sum_squares(c)
    if np.isfinite(lam):
        objective = objective + 0.5 * lam * cp.quad_form(theta, sp.csc_matrix(D), assume_PSD=True)
    cons = [c >= 0]
    for m in range(M):
        t = theta[m * (K + 1) : (m + 1) * (K + 1)]
        cons += [t[0] == 0, cp.diff(t) >= 0] if np.isfinite(lam) else [t == 0]
    if np.isfinite(tau):
        objective = objective + 0.5 * tau * cp.sum_squares(b)
        seen = np.bincount(data.index, minlength=C) > 0
        cons += [cp.sum(b[np.flatnonzero(seen)]) == 0]  # a class without rows: b = 0
        if not seen.all():
            cons += [b[np.flatnonzero(~seen)] == 0]
    cp.Problem(cp.Minimize(objective), cons).solve(solver="CLARABEL")
    value = np.asarray(x.value)
    if np.isfinite(tau):
        value = np.r_[value, b.value]
    return value, float(objective.value)


@pytest.mark.parametrize(
    ("lam", "tau", "C"),
    [(np.inf, np.inf, 4), (1e-2, np.inf, 4), (1e-4, np.inf, 4), (1e-3, 1e-2, 4),
     (np.inf, 1e-3, 4), (1e-3, 1e-2, DENSE_BIASES + 6)],
)  # fmt: skip
def test_newton_matches_the_problem_solved_by_cvxpy(lam, tau, C):
    data = _data(n=80, C=C, seed=5)
    K = 4
    layout = shared_layout(2, K)
    source = MemorySource(data, layout, K)
    ridge = 1e-3
    x0 = np.r_[0.5, 0.5, np.zeros(2 * (K + 1))]
    pb = Problem(key=None, x=x0, lam=lam, total=data.w.sum(), tau=tau)
    newton(source, layout, [pb], SETTINGS, ridge)
    x_ref, f_ref = _reference(data, layout, K, lam, ridge, tau)
    assert pb.f == pytest.approx(f_ref, abs=1e-7)
    np.testing.assert_allclose(pb.x, x_ref, atol=2e-3)
    c, parts = layout.split(pb.x[: layout.n_coef])
    assert np.all(c >= 0)
    for t in parts:
        assert t[0] == 0 and np.all(np.diff(t) >= 0)


def test_a_shared_hessian_reaches_the_same_optimum_for_every_fold():
    data = _data(n=150, C=5, seed=6, folds=True)
    K = 4
    layout = shared_layout(2, K)
    source = MemorySource(data, layout, K)
    x0 = np.r_[0.5, 0.5, np.zeros(2 * (K + 1))]

    def problems():
        return [Problem(key=f, x=x0.copy(), lam=1e-3, total=source.total(f)) for f in range(3)]

    exact = problems()
    newton(source, layout, exact, SETTINGS, 1e-3)
    shared = problems()
    H = source.stats([(None, x0)], hessian=True)[0][2] / source.total(None)
    assert H.ab is None
    newton(source, layout, shared, SETTINGS, 1e-3, hessian=H, max_iter=500)
    for a, b in zip(exact, shared, strict=True):
        assert b.f == pytest.approx(a.f, abs=1e-8)
        np.testing.assert_allclose(b.x, a.x, atol=1e-3)


@pytest.mark.parametrize("rows, C", [(40_000, 1000), (4_000, 1000), (8_000, 100), (40_000, 10),
                                     (500, 10), (300, 3000)])  # fmt: skip
def test_the_shared_hessian_sample_holds_enough_rows_and_pairs(rows, C):
    share = hessian_share(rows, C)
    assert 0 < share <= 1
    assert share * rows >= min(rows, HESSIAN_ROWS) - 1e-9  # many classes: enough rows
    assert share * rows * C >= min(rows * C, HESSIAN_PAIRS) - 1e-9  # few: enough pairs
    # and no more than the larger of the two asks
    assert share * rows <= max(HESSIAN_ROWS, HESSIAN_PAIRS / C) + 1e-9


@pytest.mark.parametrize("exact_after", [None, 1])
def test_folds_on_a_refreshed_shared_hessian_reach_the_exact_optimum(exact_after):
    # many classes with biases: the shared steps leave out the biases' coupling to (c,
    # theta); with exact_after a fold still running takes its own exact steps from then on
    data = _data(n=150, C=DENSE_BIASES + 6, seed=6, folds=True)
    K = 4
    layout = shared_layout(2, K)
    source = MemorySource(data, layout, K)
    x0 = np.r_[0.5, 0.5, np.zeros(2 * (K + 1))]

    def problems():
        return [
            Problem(key=f, x=x0.copy(), lam=1e-3, total=source.total(f), tau=1e-2) for f in range(3)
        ]

    exact = problems()
    newton(source, layout, exact, SETTINGS, 1e-3)
    own = []
    stats = source.stats

    def counted(requests, hessian, gradient=True):
        own.extend(key for key, _ in requests if hessian)
        return stats(requests, hessian, gradient)

    source.stats = counted
    shared = problems()
    xb = np.r_[x0, np.zeros(data.C)]
    newton(source, layout, shared, SETTINGS, 1e-3, hessian=source.curvature(xb, 1.0),
           refresh=lambda x: source.curvature(x, 1.0), exact_after=exact_after,
           max_iter=500)  # fmt: skip
    for a, b in zip(exact, shared, strict=True):
        assert b.f == pytest.approx(a.f, abs=1e-8)
        np.testing.assert_allclose(b.x, a.x, atol=1e-3)
    # own exact passes only after exact_after shared steps, and only then
    assert (len(own) > 0) == (exact_after is not None)
    if exact_after is not None:
        assert all(pb.n_iter > exact_after for pb in shared if pb.key in own)


@pytest.mark.parametrize("C", [5, 300])  # both ways of summing the rows' features
def test_pairs_of_negligible_probability_leave_the_hessian_unchanged(C, monkeypatch):
    import fusion.bernstein.multiclass.multinomial as mn

    data = _data(n=40, C=C, seed=7)
    K = 3
    layout = shared_layout(2, K)
    Phi, feats = bin_features(data.axes, K)
    Z, B, idx, w = _block(data)
    x = np.r_[12.0, 12.0, np.zeros(2 * (K + 1))]  # sharp: most pairs' probabilities ~ 0
    t = Tables.of(x, layout, Phi)
    _, g, H = block_stats(Z, B, idx, w, t, feats, True)
    monkeypatch.setattr(mn, "HESSIAN_TINY", -1.0)  # keep every pair
    _, g_all, H_all = block_stats(Z, B, idx, w, t, feats, True)
    np.testing.assert_array_equal(g, g_all)
    np.testing.assert_allclose(H.aa, H_all.aa, rtol=1e-9, atol=1e-10)


def _path_losses(means, n=400, noise=0.01, seed=0):
    """Per-row held-out losses of a path whose candidates have the given mean losses (rows
    share their noise, so the paired standard errors are small)."""
    rng = np.random.default_rng(seed)
    base = rng.gamma(2.0, 0.5, n)
    jitter = rng.normal(size=(len(means), n))
    jitter -= jitter.mean(axis=1, keepdims=True)  # the means are exactly the given ones
    return base + np.asarray(means)[:, None] + noise * jitter


@pytest.mark.parametrize(
    ("means", "noise", "settled"),
    [
        ([1.0, 1.0, 1.0, 1.0], 0.01, False),  # flat: smaller penalties may still fall
        ([1.0, 0.9, 0.95], 0.01, True),  # a clear rise ends the path at once
        ([1.0, 0.9, 0.9015], 0.01, False),  # a rise of about two standard errors: wait
        ([1.0, 0.9, 0.9015, 0.902], 0.01, True),  # two rises beyond one standard error
        # rises of a few 1e-5 are flat however small their standard errors (nearly equal
        # models at the start of a path; a CIFAR-100 network fell by 0.04 further down)
        ([1.0, 1.00003, 1.00004], 1e-6, False),
        ([1.0, 0.99, 0.995], 1e-6, True),
    ],
)
def test_a_path_stops_on_a_clear_rise_never_on_a_flat_stretch(means, noise, settled):
    from fusion._cv import paired_se
    from fusion.bernstein.multiclass.multinomial import _settled

    losses = _path_losses(means, noise=noise)
    assert _settled(losses, np.ones(losses.shape[1]), paired_se, 2) is settled
