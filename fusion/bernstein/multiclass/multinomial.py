"""The class-shared multi-class model: one monotone fusion for every class, by multinomial
likelihood.

Model
-----
For row ``i`` and class ``k`` with the scorers' log-probabilities ``z_imk`` and their
normalized values ``u_imk`` (:mod:`fusion.bernstein.multiclass.pairs`),

.. math:: \\eta_{ik} = \\sum_m c_m z_{imk} + \\sum_m g_m(u_{imk}), \\qquad
          P(Y = k \\mid s_i) = \\frac{e^{\\eta_{ik}}}{\\sum_j e^{\\eta_{ij}}},

with ``c_m >= 0`` and every ``g_m`` a Bernstein polynomial of degree ``K`` with
non-decreasing coefficients and ``g_m(0) = 0`` (a constant shared by all classes cancels in
the softmax). The same parameters serve every class, so their number, ``M (K + 2)``, does
not grow with ``C``; ``g = 0`` and one scorer is temperature scaling, ``g = 0`` with equal
``c_m`` temperature scaling of the scorers' averaged log-probabilities. Each class's
probability is non-decreasing in every scorer's score for that class: raising ``z_imk``
raises ``eta_ik`` alone.

Fit
---
Weighted mean multinomial log-loss plus ``(lam / 2)`` times the squared first differences
of the coefficients of every ``g_m`` (the penalty of the binary default,
:func:`fusion.bernstein.newton.penalty_matrix`) and a weak ridge on ``c``; ``lam = inf``
keeps ``g = 0``. Newton's method with the monotone constraints, as the binary default
(:func:`fusion.bernstein.binary.logistic.newton`): each step minimizes the quadratic model over
feasible steps (OSQP, :class:`fusion._solver.StepQPSolver`), is projected exactly
onto the constraints and shortened by Armijo backtracking on the exact objective. The
gradient is exact; the Hessian is that of the pairs' features on their bins (a bin's mean
``z`` and ``u``, :mod:`.pairs`), which costs a few histograms per block of pairs instead of a
``P x P`` product per pair and only changes the path to the optimum, not the optimum. Pairs
of negligible probability (below :data:`HESSIAN_TINY`) are left out of the Hessian for the
same reason.

Every fold of the cross-validation and the final fit are *problems* over sets of rows; a
*source* (:class:`.source.MemorySource` in memory, the dask source on a cluster)
evaluates the loss, gradient and Hessian of several problems in one pass over its rows, so
that the folds advance together (:func:`newton`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_factor, cho_solve

from ..._solver import DenseUpper, SolverError, SolverWarning
from ..._warn import caller_level
from ..newton import (
    ARMIJO,
    DAMPING,
    FLOAT_FLOOR,
    MAX_HALVINGS,
    MAX_NEWTON,
    NEWTON_TOL,
    constraints,
    make_solver,
    penalty_matrix,
    project,
)
from ..structure import Layout

__all__ = [
    "HESSIAN_TINY",
    "Tables",
    "Curvature",
    "BiasDiagonal",
    "DENSE_BIASES",
    "block_stats",
    "block_losses",
    "block_arrays",
    "Problem",
    "newton",
    "cv_path",
    "CV_ROWS",
]

#: Pairs whose weighted probability is below this are left out of the Hessian.
HESSIAN_TINY = 1e-12
#: Newton steps a problem takes with a shared Hessian (:func:`newton`) before it evaluates
#: its own.
SHARED_STEPS = 6
#: Up to this many classes the biases' Hessian is dense (see :class:`Curvature`).
DENSE_BIASES = 64


@dataclass
class Tables:
    """A parameter vector as the per-bin tables a pass over the pairs needs: the weights
    ``c``, every scorer's ``g_m`` on its bins (``G[m][b] = g_m(ubar_b)``) and the classes'
    biases ``b`` (None: the model has none)."""

    c: np.ndarray
    G: list[np.ndarray]
    b: np.ndarray | None = None

    @classmethod
    def of(cls, x: np.ndarray, layout: Layout, Phi: Sequence[np.ndarray]) -> Tables:
        """``x = (c, theta)``, or ``(c, theta, b)`` for a model with class biases."""
        P = layout.n_coef
        c, parts = layout.split(x[:P])
        tables = [basis @ t.reshape(-1) for basis, t in zip(Phi, parts, strict=True)]
        b = np.array(x[P:], dtype=float) if x.shape[0] > P else None
        return cls(np.array(c, dtype=float), tables, b)


class Curvature:
    """The Hessian of the loss: ``aa`` over ``(c, theta)``; with class biases also ``ab``
    (P, C) and ``bb``, dense (C, C) for at most :data:`DENSE_BIASES` classes, else its
    diagonal (C,): with many classes every probability is small and the off-diagonal terms
    ``-p_ij p_ik`` are negligible next to the diagonal ``p_ij (1 - p_ij)``."""

    __slots__ = ("aa", "ab", "bb")

    def __init__(self, aa: np.ndarray, ab: np.ndarray | None = None, bb: np.ndarray | None = None):
        self.aa, self.ab, self.bb = aa, ab, bb

    def __add__(self, other: Curvature) -> Curvature:
        if self.ab is None:
            return Curvature(self.aa + other.aa)
        return Curvature(self.aa + other.aa, self.ab + other.ab, self.bb + other.bb)

    def __truediv__(self, s: float) -> Curvature:
        if self.ab is None:
            return Curvature(self.aa / s)
        return Curvature(self.aa / s, self.ab / s, self.bb / s)


class BiasDiagonal:
    """The diagonal of the class biases' curvature alone, which a pass computing the
    gradient gets for one more reduction (see :func:`_shared`)."""

    __slots__ = ("diag",)

    def __init__(self, diag: np.ndarray):
        self.diag = diag

    def __add__(self, other: BiasDiagonal) -> BiasDiagonal:
        return BiasDiagonal(self.diag + other.diag)


def _eta(Z: np.ndarray, B: np.ndarray, t: Tables) -> np.ndarray:
    """``eta`` (r, C) of a block: ``Z`` float64 and ``B`` intp (see :func:`block_arrays`)."""
    eta = np.multiply(Z[0], t.c[0])
    tmp = np.empty_like(eta)
    for m in range(Z.shape[0]):
        if m:
            np.multiply(Z[m], t.c[m], out=tmp)
            eta += tmp
        np.take(t.G[m], B[m], out=tmp)
        eta += tmp
    if t.b is not None:
        eta += t.b
    return eta


def block_arrays(Z: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A block's ``z`` as float64 and bins as intp, converted once for all the problems
    evaluated on it (float32 scores are stored as float32, bins as int16)."""
    return Z.astype(np.float64, copy=False), B.astype(np.intp, copy=False)


#: Logits below their row's largest by more than this are raised to it before the softmax:
#: their probabilities (below 1e-130) change by nothing a log-loss or a gradient can show,
#: and no product of two of them underflows to a subnormal number (which the CPU handles
#: some hundred times slower: blocks of rows with a zero probability took 60 times longer).
SOFTMAX_FLOOR = 300.0


def _softmax_rows(eta: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every row's log-loss and the probabilities (``eta`` is overwritten)."""
    eta -= eta.max(axis=1, keepdims=True)
    picked = eta[np.arange(eta.shape[0]), index]
    np.maximum(eta, -SOFTMAX_FLOOR, out=eta)
    np.exp(eta, out=eta)
    s = eta.sum(axis=1)
    eta /= s[:, None]
    return np.log(s) - picked, eta


def block_losses(Z, B, index, t: Tables) -> np.ndarray:
    """Every row's log-loss under ``t`` (a block of rows: ``Z``, ``B`` of shape (M, r, C))."""
    return _softmax_rows(_eta(Z, B, t), index)[0]


def block_stats(Z, B, index, w, t: Tables, feats, hessian: bool, gradient: bool = True):
    """Weighted loss sum, gradient (in ``x``; None without ``gradient``) and, with
    ``hessian``, the :class:`Curvature` of a block of rows (``Z``, ``B`` of shape (M, r, C)).

    ``feats[m] = (cols, F)``: the columns of ``x`` that scorer ``m``'s features occupy
    (``c_m``, then ``g_m``'s coefficients) and its bins' feature rows ``F`` (nb_m, K + 2):
    the bin's mean ``z``, then the Bernstein basis at its mean ``u``. With class biases
    (``t.b``) the gradient continues with theirs. Rows of zero weight contribute nothing.
    """
    M, r, C = Z.shape
    rows = np.arange(r)
    losses, p = _softmax_rows(_eta(Z, B, t), index)
    loss = float(w @ losses)
    if not (gradient or hessian):
        return loss, None, None
    p *= w[:, None]
    P = t.c.shape[0] + sum(F.shape[1] - 1 for _, F in feats)
    biased = t.b is not None
    grad = np.zeros(P + (C if biased else 0))
    flat = p.ravel()
    for m, (cols, F) in enumerate(feats):
        zm = Z[m]
        grad[cols[0]] = float(np.dot(flat, zm.ravel()) - w @ zm[rows, index])
        nb = F.shape[0]
        bm = B[m].ravel()
        n_m = np.bincount(bm, weights=flat, minlength=nb)
        n_m -= np.bincount(B[m][rows, index], weights=w, minlength=nb)
        grad[cols[1:]] = F[:, 1:].T @ n_m
    if biased:
        grad[P:] = p.sum(axis=0) - np.bincount(index, weights=w, minlength=C)
    if not hessian:
        if biased and C > DENSE_BIASES:  # the biases' exact curvature costs one reduction
            live = w > 0
            pl = p[live]
            return (
                loss,
                grad,
                BiasDiagonal(pl.sum(axis=0) - np.einsum("ij,ij->j", pl, pl / w[live, None])),
            )
        return loss, grad, None
    # pairs of negligible probability change the Hessian by less than HESSIAN_TINY each
    keep = flat > HESSIAN_TINY
    if np.count_nonzero(keep) < 0.5 * flat.shape[0]:
        sel = np.flatnonzero(keep)
        pw = flat[sel]
        row_ptr = np.searchsorted(sel // C, np.arange(r + 1))
        bins = [B[m].ravel()[sel] for m in range(M)]
        cls = sel % C
    else:
        sel, pw, row_ptr = None, flat, np.arange(0, r * C + 1, C)
        bins = [B[m].ravel() for m in range(M)]
        cls = None
    H = np.zeros((P, P))
    mrow = np.zeros((r, P))
    Hab = np.zeros((P, C)) if biased else None
    if biased:  # the pairs grouped by class, for the per-class sums
        by_class = np.argsort(cls, kind="stable") if sel is not None else None
        class_ptr = (
            np.arange(0, r * C + 1, r)
            if sel is None
            else np.searchsorted(cls[by_class], np.arange(C + 1))
        )
        pw_class = pw.reshape(r, C).T.ravel() if sel is None else pw[by_class]
    for m, (cols, F) in enumerate(feats):
        nb = F.shape[0]
        n_m = np.bincount(bins[m], weights=pw, minlength=nb)
        H[np.ix_(cols, cols)] += F.T @ (n_m[:, None] * F)
        # every row's sum of its pairs' features, as a sparse (row, bin) matrix times F
        mrow[:, cols] += _sparse(pw, bins[m], row_ptr, nb) @ F
        if biased:  # every class's sum of its pairs' features
            b_class = bins[m].reshape(r, C).T.ravel() if sel is None else bins[m][by_class]
            Hab[cols] += (_sparse(pw_class, b_class, class_ptr, nb) @ F).T
        for mm in range(m + 1, M):
            cols2, F2 = feats[mm]
            nb2 = F2.shape[0]
            N = np.bincount(bins[m] * nb2 + bins[mm], weights=pw, minlength=nb * nb2)
            X = F.T @ (N.reshape(nb, nb2) @ F2)
            H[np.ix_(cols, cols2)] += X
            H[np.ix_(cols2, cols)] += X.T
    live = w > 0
    scaled = mrow[live] / w[live, None]
    H -= scaled.T @ mrow[live]
    if not biased:
        return loss, grad, Curvature(H)
    pl = p[live]
    Hab -= scaled.T @ pl
    total = p.sum(axis=0)
    if C <= DENSE_BIASES:
        Hbb = np.diag(total) - (pl / w[live, None]).T @ pl
    else:
        Hbb = total - np.einsum("ij,ij->j", pl, pl / w[live, None])
    return loss, grad, Curvature(H, Hab, Hbb)


def _sparse(values: np.ndarray, columns: np.ndarray, ptr: np.ndarray, width: int):
    """The CSR matrix whose row ``i`` holds ``values[ptr[i]:ptr[i + 1]]`` in ``columns``
    (repeated columns add up when it multiplies)."""
    return sp.csr_matrix((values, columns, ptr), shape=(ptr.shape[0] - 1, width))


@dataclass(eq=False)
class Problem:
    """One penalized fit (a fold's training rows, or all rows) advancing in :func:`newton`.

    ``x = (c, theta)``, or ``(c, theta, b)`` with class biases under the ridge ``tau``
    (``tau = inf``: no biases)."""

    key: object  # the source's name of its rows (a fold, or None: every row)
    x: np.ndarray
    lam: float
    total: float  # training weight W
    tau: float = np.inf
    solver: object = None
    f: float = np.inf  # penalized objective at x
    loss: float = np.nan  # weighted loss sum at x (with grad: the loss's gradient sum)
    grad: np.ndarray | None = None
    done: bool = False
    n_iter: int = 0
    status: str = "solved"
    pred: float = np.inf
    extra: dict = field(default_factory=dict)

    def penalty(self, x: np.ndarray) -> float:
        P = self.extra["R"].shape[0]
        xa = x[:P]
        value = 0.5 * float(xa @ self.extra["R"] @ xa)
        if x.shape[0] > P:
            value += 0.5 * self.tau * float(x[P:] @ x[P:])
        return value


def _penalty(layout: Layout, lam: float, ridge: float) -> np.ndarray:
    L = layout.n_linear
    R = np.zeros((layout.n_coef, layout.n_coef))
    R[np.arange(L), np.arange(L)] = ridge
    if np.isfinite(lam) and lam > 0:
        R[L:, L:] = lam * penalty_matrix(layout.shapes)
    return R


def _setup(pb: Problem, layout: Layout, ridge: float, osqp_settings: dict, source) -> None:
    A, lower, upper, is_diff = constraints(layout)
    flat = bool(np.isinf(pb.lam))
    pb.extra.update(
        A=A, lower=lower, flat=flat, R=_penalty(layout, pb.lam, ridge),
        upper=np.where(is_diff, 0.0, upper) if flat else upper,
    )  # fmt: skip
    P = layout.n_coef
    biased = np.isfinite(pb.tau)
    x = np.array(pb.x, dtype=float)
    if biased and x.shape[0] == P:
        x = np.concatenate([x, np.zeros(source.n_classes)])
    elif not biased:
        x = x[:P]
    if biased:  # a class without training rows keeps the average bias (see _step)
        pb.extra["absent"] = absent = source.class_weights(pb.key) <= 0
        x[P:][absent] = 0.0
        x[P:][~absent] -= x[P:][~absent].mean()
    x[:P] = project(x[:P], layout, flat)
    if x.shape != pb.x.shape or not np.array_equal(x, pb.x):
        pb.grad = None
    pb.x = x
    if pb.solver is None:
        pb.solver = make_solver(layout, **osqp_settings)
    pb.done = False
    pb.n_iter = 0


def _step(pb: Problem, layout: Layout, g: np.ndarray, curv: Curvature):
    """The Newton step ``d`` from ``pb.x`` for the gradient ``g`` and curvature ``curv`` of
    the penalized mean objective (penalty included), and ``g'd + d'Hd / 2``. Class biases
    are unconstrained: they are eliminated (their block of the quadratic model minimized
    in closed form), so the QP only sees ``(c, theta)``."""
    P = layout.n_coef
    x = pb.x
    A, lower, upper, flat = pb.extra["A"], pb.extra["lower"], pb.extra["upper"], pb.extra["flat"]
    Haa = curv.aa.copy()
    damping = DAMPING * (1.0 + np.trace(Haa) / P)
    Haa.flat[:: P + 1] += damping
    ga = g[:P]
    if curv.ab is not None:
        # the biases of the classes with training rows move, summing to zero (the softmax
        # ignores their common level); a class without rows stays at the average bias, 0
        seen = ~pb.extra["absent"]
        Hbb = curv.bb[seen] if curv.bb.ndim == 1 else curv.bb[np.ix_(seen, seen)]
        if Hbb.ndim == 1:

            def inverse(v):
                return v / (Hbb[:, None] if v.ndim == 2 else Hbb)

        else:
            factor = cho_factor(Hbb)

            def inverse(v):
                return cho_solve(factor, v)

        ones = inverse(np.ones(Hbb.shape[0]))
        total = float(ones.sum())

        def solve(v):  # Hbb^-1 v, projected onto the zero-sum biases
            u = inverse(v)
            return u - np.multiply.outer(ones, u.sum(axis=0)) / total

        Hab = curv.ab[:, seen]
        solve_ba = solve(Hab.T)
        solve_b = solve(g[P:][seen])
        Hred = Haa - Hab @ solve_ba
        gred = ga - Hab @ solve_b
    else:
        Hred, gred = Haa, ga
    Hred = _convex(Hred, damping)
    Ax = A @ x[:P]
    scale = 1.0 / np.max(np.diag(Hred))
    da, status = pb.solver.solve(DenseUpper(Hred * scale), gred * scale, lower - Ax, upper - Ax)
    da = project(x[:P] + da, layout, flat) - x[:P]
    if status != "solved" and not float(gred @ da) < 0:
        da = project(x[:P] - gred / np.diag(Hred), layout, flat) - x[:P]
    quad = float(da @ Haa @ da)
    if curv.ab is None:
        d = da
    else:
        db_seen = -(solve_b + solve_ba @ da)
        Hbd = Hbb * db_seen if Hbb.ndim == 1 else Hbb @ db_seen
        quad += 2.0 * float(da @ Hab @ db_seen) + float(db_seen @ Hbd)
        db = np.zeros(g.shape[0] - P)
        db[seen] = db_seen
        d = np.concatenate([da, db])
    return d, float(g @ d), quad


def _shared(hessian: Curvature, bb: BiasDiagonal | None, W: float) -> Curvature:
    """The shared curvature of a step, beyond :data:`DENSE_BIASES` classes with the biases'
    diagonal from the problem's own last pass and their coupling to ``(c, theta)`` dropped.

    A shared Hessian comes from a sample of pairs (:data:`HESSIAN_PAIRS`): at C = 1,000 that
    is 65 rows, too few to hold most classes, so its biases' block is no guide and the
    biases' path at small ridges took 8-9 steps of exact Hessians per fold (145 s of a
    324 s fit at n = 20,000, M = 5). The exact diagonal with the sampled coupling was
    worse still (it does not fit the sampled block); without the coupling, 60 s. The line
    search keeps every step a descent; the optimum does not change."""
    if bb is None or hessian.ab is None or hessian.bb.ndim != 1:
        return hessian
    return Curvature(hessian.aa, np.zeros_like(hessian.ab), bb.diag / W)


def _convex(H: np.ndarray, damping: float) -> np.ndarray:
    """``H``, or where its smallest eigenvalue fell below half of ``damping``, ``H``
    symmetrized with that eigenvalue raised to ``damping``.

    The exact reduced Hessian is at least the damping. Two approximations can break that:
    beyond :data:`DENSE_BIASES` classes the biases' block is replaced by its diagonal,
    which is not above the true block, so the Schur complement can lose definiteness; and a
    shared Hessian comes from a sample of pairs. OSQP then stops with "problem non convex"
    (C = 1,000, four float32 members: two of six fits of the multi-class benchmark). The
    step stays a descent direction of the model and the line search decides its length.
    """
    sym = 0.5 * (H + H.T)
    low = float(np.linalg.eigvalsh(sym)[0])
    if low >= 0.5 * damping:
        return H
    sym.flat[:: H.shape[0] + 1] += damping - low
    return sym


def _with_penalty(pb: Problem, g: np.ndarray, curv: Curvature) -> tuple[np.ndarray, Curvature]:
    """The penalized objective's gradient and curvature from the mean loss's."""
    R = pb.extra["R"]
    P = R.shape[0]
    g = g.copy()
    g[:P] += R @ pb.x[:P]
    aa = curv.aa + R
    if curv.ab is None:
        return g, Curvature(aa)
    g[P:] += pb.tau * pb.x[P:]
    bb = curv.bb + pb.tau if curv.bb.ndim == 1 else curv.bb + pb.tau * np.eye(curv.bb.shape[0])
    return g, Curvature(aa, curv.ab, bb)


def newton(
    source,
    layout: Layout,
    problems: list[Problem],
    osqp_settings: dict,
    ridge: float,
    tol: float = NEWTON_TOL,
    max_iter: int = MAX_NEWTON,
    hessian: Curvature | None = None,
    stop: float | None = None,
    refresh=None,
) -> None:
    """Minimize every problem's penalized loss, all problems advancing together.

    ``source.stats(requests, hessian)`` takes ``[(key, x), ...]`` and returns, for each, the
    weighted loss sum, its gradient and (with ``hessian``) its :class:`Curvature` over the
    rows named by ``key``; the problems' steps share its passes.

    ``hessian``: a fixed curvature of the mean loss (per unit of weight) used for every step
    instead of one evaluated at each iterate: along a cross-validation path the folds'
    Hessians differ little from each other and from one ``lambda`` to the next, so one
    Hessian of all rows per ``lambda`` serves every fold, and a step costs one pass (loss
    and gradient at the trial point, which is the next step's gradient). The steps
    converge linearly instead of quadratically; the optimum is the same. A problem still
    running after :data:`SHARED_STEPS` steps evaluates its own from then on. ``stop``: also
    stop after a full step whose predicted decrease was at most ``stop`` (the remaining
    error of the objective is then of that order, which is all a cross-validation score
    needs). A problem whose ``grad`` is set starts from it (the gradient sum at ``x``).
    ``refresh(x)``: with ``hessian``, a new shared curvature at ``x`` (the problems' mean)
    every :data:`SHARED_STEPS` steps instead of their own exact ones, whose passes cost a
    ``P x P`` product per pair (at C = 1,000 and n = 20,000 the exact steps of the class
    biases' path took 145 s of a 324 s fit, 60 s with refreshed ones).
    """
    for pb in problems:
        _setup(pb, layout, ridge, osqp_settings, source)
    for it in range(1, max_iter + 1):
        active = [pb for pb in problems if not pb.done]
        if not active:
            return
        if refresh is not None and hessian is not None and it > 1 and (it - 1) % SHARED_STEPS == 0:
            hessian = refresh(np.mean([pb.x for pb in active], axis=0))
        exact = [pb for pb in active if hessian is None or (refresh is None and it > SHARED_STEPS)]
        cheap = [pb for pb in active if pb not in exact and pb.grad is None]
        for todo, own in ((exact, True), (cheap, False)):
            if todo:
                stats = source.stats([(pb.key, pb.x) for pb in todo], hessian=own)
                for pb, (loss, g, H) in zip(todo, stats, strict=True):
                    pb.loss, pb.grad = loss, g
                    pb.extra["H"] = H
                    pb.extra["bb"] = H if isinstance(H, BiasDiagonal) else None
        searching = []
        for pb in active:
            W = pb.total
            pb.f = pb.loss / W + pb.penalty(pb.x)
            curv = pb.extra["H"] / W if pb in exact else _shared(hessian, pb.extra.get("bb"), W)
            g, curv = _with_penalty(pb, pb.grad / W, curv)
            d, gd, quad = _step(pb, layout, g, curv)
            pb.n_iter = it
            pb.pred = -(gd + 0.5 * quad)
            if pb.pred <= tol:
                pb.done = True
                continue
            pb.extra.update(d=d, gd=gd, t=1.0)
            searching.append(pb)
        with_grad = hessian is not None and (refresh is not None or it < SHARED_STEPS)
        for _ in range(MAX_HALVINGS + 1):
            if not searching:
                break
            trial = [(pb.key, pb.x + pb.extra["t"] * pb.extra["d"]) for pb in searching]
            results = source.stats(trial, hessian=False, gradient=with_grad)
            still = []
            for pb, (_, xt), (loss, g, H) in zip(searching, trial, results, strict=True):
                ft = loss / pb.total + pb.penalty(xt)
                t = pb.extra["t"]
                if ft <= pb.f + ARMIJO * t * pb.extra["gd"]:
                    pb.x, pb.f, pb.loss = xt, ft, loss
                    pb.grad = g if with_grad else None
                    pb.extra["bb"] = H if with_grad and isinstance(H, BiasDiagonal) else None
                    if stop is not None and t == 1.0 and pb.pred <= stop:
                        pb.done = True
                elif t < 0.5**MAX_HALVINGS:
                    if pb.pred <= FLOAT_FLOOR * max(1.0, abs(pb.f)) * 1e3:
                        pb.done = True
                    else:
                        raise SolverError(
                            "Newton's line search found no decrease for the class-shared "
                            f"multi-class fit at lambda={pb.lam:g} (predicted decrease "
                            f"{pb.pred:.2e}).",
                            status="newton: line search failed",
                            solver="newton-osqp",
                        )
                else:
                    pb.extra["t"] = 0.5 * t
                    still.append(pb)
            searching = still
    for pb in problems:
        if pb.done:
            continue
        if pb.pred <= 1e-7:
            warnings.warn(
                f"Newton's method stopped after {max_iter} iterations at lambda={pb.lam:g} "
                f"with a predicted decrease of {pb.pred:.1e}; the solution is used.",
                SolverWarning,
                stacklevel=caller_level(),
            )
            pb.status = "newton: inaccurate"
            pb.done = True
        else:
            raise SolverError(
                f"Newton's method did not converge in {max_iter} iterations for the "
                f"class-shared multi-class fit at lambda={pb.lam:g} (predicted decrease "
                f"{pb.pred:.2e}).",
                status="newton: maximum iterations reached",
                solver="newton-osqp",
            )


#: The key of a problem over every row of the cross-validation (all folds' rows).
CV_ROWS = "cv"
#: The shared Hessian of a cross-validation path is evaluated on about this many pairs.
HESSIAN_PAIRS = 1 << 16

#: Along a cross-validation path a fold stops after a full step that predicted at most this
#: decrease of its mean loss.
CV_STOP = 1e-5


@dataclass
class SharedPath:
    """Held-out losses of every row along a path of penalties (``held[k, i]``: row ``i``'s
    log-loss at ``settings[k] = (lam, tau)`` under the fit of the folds that did not see
    it), and the folds' solutions."""

    settings: list[tuple[float, float]]
    held: np.ndarray
    w: np.ndarray
    solutions: list[list[np.ndarray]]

    @property
    def mean(self) -> np.ndarray:
        return self.held @ self.w / self.w.sum()


def cv_path(
    source,
    layout: Layout,
    settings: Sequence[tuple[float, float]],
    starts: Sequence[np.ndarray],
    osqp_settings: dict,
    ridge: float,
    patience: int = 2,
    progress=None,
    se_rule=None,
) -> SharedPath:
    """Held-out log-loss of every row along ``settings``, ``(lam, tau)`` pairs from the
    most to the least penalized, every fold warm started from its previous solution
    (``starts``: one initial ``x`` per fold) and all folds advancing together. The path
    stops early as :func:`fusion.bernstein.binary.logistic.cv_path` does (``se_rule(held, w,
    best)``: the paired standard errors of every candidate's excess over ``best``)."""
    problems = [
        Problem(key=f, x=np.array(x, dtype=float), lam=np.inf, total=source.total(f))
        for f, x in zip(source.fold_keys(), starts, strict=True)
    ]
    held, sols, done = [], [], []
    w = source.heldout_weights()
    P, C = layout.n_coef, source.n_classes
    for lam, tau in settings:
        for pb in problems:
            pb.lam, pb.tau = lam, tau
            if np.isfinite(tau) and pb.x.shape[0] == P:
                pb.x, pb.grad = np.concatenate([pb.x, np.zeros(C)]), None
        centre = np.mean([pb.x for pb in problems], axis=0)
        # one Hessian of (a sample of) the cross-validation's rows serves every fold: see
        # newton; it only guides the steps, so a few hundred thousand pairs suffice
        share = min(1.0, HESSIAN_PAIRS / (source.total(CV_ROWS) * C))  # weights: mean 1
        H = source.curvature(centre, share)
        newton(source, layout, problems, osqp_settings, ridge, hessian=H, stop=CV_STOP,
               refresh=lambda x, share=share: source.curvature(x, share))  # fmt: skip
        held.append(source.heldout_losses([(pb.key, pb.x) for pb in problems]))
        sols.append([pb.x.copy() for pb in problems])
        done.append((float(lam), float(tau)))
        if progress is not None:
            progress.step(f"shared lam={lam:g}" + (f" bias={tau:g}" if np.isfinite(tau) else ""))
        if se_rule is not None and _settled(np.array(held), w, se_rule, patience):
            break
    return SharedPath(done, np.array(held), w, sols)


def _settled(losses: np.ndarray, w: np.ndarray, se_rule, patience: int) -> bool:
    """Whether the rest of a path cannot change the one-standard-error pick: the held-out
    loss has risen above its minimum by more than the standard error at the last
    ``patience`` penalties (as in :func:`fusion.bernstein.binary.logistic.cv_path`). A flat
    stretch is no such evidence: a curve flat from ``lam = inf`` to 1 went on to fall by
    0.01 at 1e-4 (a CIFAR-100 network), so the path goes on through it."""
    mean = losses @ w / w.sum()
    last = mean.shape[0] - 1
    best = int(np.argmin(mean))
    se = se_rule(losses, w, best)
    return bool(last - best >= patience and np.all(mean[-patience:] - mean[best] > se[-patience:]))
