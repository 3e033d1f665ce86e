"""The class-shared multi-class model: one monotone fusion for every class, by multinomial
likelihood.

Model
-----
For row ``i`` and class ``k`` with the scorers' log-probabilities ``z_imk`` and their
normalized values ``u_imk`` (:mod:`fusion.bernstein.pairs`),

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
:func:`fusion.bernstein.logistic.penalty_matrix`) and a weak ridge on ``c``; ``lam = inf``
keeps ``g = 0``. Newton's method with the monotone constraints, as the binary default
(:func:`fusion.bernstein.logistic.newton`): each step minimizes the quadratic model over
feasible steps (OSQP, :class:`~fusion.bernstein.qp.StepQPSolver`), is projected exactly
onto the constraints and shortened by Armijo backtracking on the exact objective. The
gradient is exact; the Hessian is that of the pairs' features on their bins (a bin's mean
``z`` and ``u``, :mod:`fusion.bernstein.pairs`), which costs a few histograms per block of
pairs instead of a ``P x P`` product per pair and only changes the path to the optimum, not
the optimum. Pairs of negligible probability (below :data:`HESSIAN_TINY`) are left out of the
Hessian for the same reason.

Every fold of the cross-validation and the final fit are *problems* over sets of rows; a
*source* (:class:`fusion.bernstein.pairs.PairData` in memory, the dask source on a cluster)
evaluates the loss, gradient and Hessian of several problems in one pass over its rows, so
that the folds advance together (:func:`newton`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .._solver import SolverError, SolverWarning
from .logistic import (
    ARMIJO,
    DAMPING,
    FLOAT_FLOOR,
    MAX_HALVINGS,
    MAX_NEWTON,
    NEWTON_TOL,
    Layout,
    constraints,
    make_solver,
    penalty_matrix,
    project,
)
from .qp import DenseUpper

__all__ = [
    "HESSIAN_TINY",
    "Tables",
    "block_stats",
    "block_losses",
    "block_arrays",
    "Problem",
    "newton",
    "cv_path",
]

#: Pairs whose weighted probability is below this are left out of the Hessian.
HESSIAN_TINY = 1e-12
#: Newton steps a problem takes with a shared Hessian (:func:`newton`) before it evaluates
#: its own.
SHARED_STEPS = 6


@dataclass
class Tables:
    """A parameter vector as the per-bin tables a pass over the pairs needs: the weights
    ``c`` and every scorer's ``g_m`` on its bins (``G[m][b] = g_m(ubar_b)``)."""

    c: np.ndarray
    G: list[np.ndarray]

    @classmethod
    def of(cls, x: np.ndarray, layout: Layout, Phi: Sequence[np.ndarray]) -> Tables:
        c, parts = layout.split(x)
        return cls(
            np.array(c, dtype=float), [P @ t.reshape(-1) for P, t in zip(Phi, parts, strict=True)]
        )


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
    return eta


def block_arrays(Z: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A block's ``z`` as float64 and bins as intp, converted once for all the problems
    evaluated on it (float32 scores are stored as float32, bins as int16)."""
    return Z.astype(np.float64, copy=False), B.astype(np.intp, copy=False)


def _softmax_rows(eta: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every row's log-loss and the probabilities (``eta`` is overwritten)."""
    eta -= eta.max(axis=1, keepdims=True)
    picked = eta[np.arange(eta.shape[0]), index]
    np.exp(eta, out=eta)
    s = eta.sum(axis=1)
    eta /= s[:, None]
    return np.log(s) - picked, eta


def block_losses(Z, B, index, t: Tables) -> np.ndarray:
    """Every row's log-loss under ``t`` (a block of rows: ``Z``, ``B`` of shape (M, r, C))."""
    return _softmax_rows(_eta(Z, B, t), index)[0]


def block_stats(Z, B, index, w, t: Tables, feats, hessian: bool, gradient: bool = True):
    """Weighted loss sum, gradient (in ``x``; None without ``gradient``) and, with
    ``hessian``, the Hessian of a block of rows (``Z``, ``B`` of shape (M, r, C)).

    ``feats[m] = (cols, F)``: the columns of ``x`` that scorer ``m``'s features occupy
    (``c_m``, then ``g_m``'s coefficients) and its bins' feature rows ``F`` (nb_m, K + 2):
    the bin's mean ``z``, then the Bernstein basis at its mean ``u``. Rows of zero weight
    contribute nothing.
    """
    M, r, C = Z.shape
    rows = np.arange(r)
    losses, p = _softmax_rows(_eta(Z, B, t), index)
    loss = float(w @ losses)
    if not (gradient or hessian):
        return loss, None, None
    p *= w[:, None]
    P = t.c.shape[0] + sum(F.shape[1] - 1 for _, F in feats)
    grad = np.zeros(P)
    flat = p.ravel()
    for m, (cols, F) in enumerate(feats):
        zm = Z[m]
        grad[cols[0]] = float(np.dot(flat, zm.ravel()) - w @ zm[rows, index])
        nb = F.shape[0]
        bm = B[m].ravel()
        n_m = np.bincount(bm, weights=flat, minlength=nb)
        n_m -= np.bincount(B[m][rows, index], weights=w, minlength=nb)
        grad[cols[1:]] = F[:, 1:].T @ n_m
    if not hessian:
        return loss, grad, None
    # pairs of negligible probability change the Hessian by less than HESSIAN_TINY each
    keep = flat > HESSIAN_TINY
    if np.count_nonzero(keep) < 0.5 * flat.shape[0]:
        sel = np.flatnonzero(keep)
        pw, row = flat[sel], sel // C
        bins = [B[m].ravel()[sel] for m in range(M)]
    else:
        sel, pw, row = None, flat, np.repeat(rows, C)
        bins = [B[m].ravel() for m in range(M)]
    H = np.zeros((P, P))
    mrow = np.zeros((r, P))
    for m, (cols, F) in enumerate(feats):
        nb = F.shape[0]
        n_m = np.bincount(bins[m], weights=pw, minlength=nb)
        H[np.ix_(cols, cols)] += F.T @ (n_m[:, None] * F)
        if nb <= 4 * C:  # per row and bin, then the bins' features: r nb (K + 2) products
            A = np.bincount(row * nb + bins[m], weights=pw, minlength=r * nb)
            mrow[:, cols] += A.reshape(r, nb) @ F
        else:  # every pair's features: r C (K + 2) products
            mrow[:, cols] += _row_sums(F[bins[m]] * pw[:, None], row, r, C, sel is None)
        for mm in range(m + 1, M):
            cols2, F2 = feats[mm]
            nb2 = F2.shape[0]
            N = np.bincount(bins[m] * nb2 + bins[mm], weights=pw, minlength=nb * nb2)
            X = F.T @ (N.reshape(nb, nb2) @ F2)
            H[np.ix_(cols, cols2)] += X
            H[np.ix_(cols2, cols)] += X.T
    live = w > 0
    H -= (mrow[live] / w[live, None]).T @ mrow[live]
    return loss, grad, H


def _row_sums(values: np.ndarray, row: np.ndarray, r: int, C: int, full: bool) -> np.ndarray:
    """Sums of ``values`` (one row per pair) over every row's pairs: all ``C`` pairs of each
    row in order when ``full``, else the pairs of rows ``row``."""
    if full:
        return values.reshape(r, C, -1).sum(axis=1)
    out = np.zeros((r, values.shape[1]))
    np.add.at(out, row, values)
    return out


@dataclass(eq=False)
class Problem:
    """One penalized fit (a fold's training rows, or all rows) advancing in :func:`newton`."""

    key: object  # the source's name of its rows (a fold, or None: every row)
    x: np.ndarray
    lam: float
    total: float  # training weight W
    solver: object = None
    f: float = np.inf  # penalized objective at x
    loss: float = np.nan  # weighted loss sum at x (with grad: the loss's gradient sum)
    grad: np.ndarray | None = None
    done: bool = False
    n_iter: int = 0
    status: str = "solved"
    pred: float = np.inf
    extra: dict = field(default_factory=dict)


def _penalty(layout: Layout, lam: float, ridge: float) -> np.ndarray:
    L = layout.n_linear
    R = np.zeros((layout.n_coef, layout.n_coef))
    R[np.arange(L), np.arange(L)] = ridge
    if np.isfinite(lam) and lam > 0:
        R[L:, L:] = lam * penalty_matrix(layout.shapes)
    return R


def newton(
    source,
    layout: Layout,
    problems: list[Problem],
    osqp_settings: dict,
    ridge: float,
    tol: float = NEWTON_TOL,
    max_iter: int = MAX_NEWTON,
    hessian: np.ndarray | None = None,
    stop: float | None = None,
) -> None:
    """Minimize every problem's penalized loss, all problems advancing together.

    ``source.stats(requests, hessian)`` takes ``[(key, x), ...]`` and returns, for each, the
    weighted loss sum, its gradient and (with ``hessian``) its Hessian over the rows named by
    ``key``; the problems' steps share its passes.

    ``hessian``: a fixed Hessian of the mean loss (per unit of weight) used for every step
    instead of one evaluated at each iterate: along a cross-validation path the folds'
    Hessians differ little from each other and from one ``lambda`` to the next, so one
    Hessian of all rows per ``lambda`` serves every fold, and a step costs one pass (loss
    and gradient at the trial point, which is the next step's gradient). The steps
    converge linearly instead of quadratically; the optimum is the same. ``stop``: also stop
    after a full step whose predicted decrease was at most ``stop`` (the remaining error of
    the objective is then of that order, which is all a cross-validation score needs).
    A problem whose ``grad`` is set starts from it (the gradient sum at ``x``).
    """
    A, lower, upper, is_diff = constraints(layout)
    for pb in problems:
        flat = bool(np.isinf(pb.lam))
        pb.extra["flat"] = flat
        pb.extra["upper"] = np.where(is_diff, 0.0, upper) if flat else upper
        pb.extra["R"] = _penalty(layout, pb.lam, ridge)
        x = project(pb.x, layout, flat)
        if not np.array_equal(x, pb.x):
            pb.grad = None
        pb.x = x
        if pb.solver is None:
            pb.solver = make_solver(layout, **osqp_settings)
        pb.done = False
        pb.n_iter = 0
    for it in range(1, max_iter + 1):
        active = [pb for pb in problems if not pb.done]
        if not active:
            return
        # a problem the shared Hessian leads too slowly (a small fold far from the others)
        # takes its own from then on
        exact = [pb for pb in active if hessian is None or it > SHARED_STEPS]
        cheap = [pb for pb in active if pb not in exact and pb.grad is None]
        for todo, own in ((exact, True), (cheap, False)):
            if todo:
                stats = source.stats([(pb.key, pb.x) for pb in todo], hessian=own)
                for pb, (loss, g, H) in zip(todo, stats, strict=True):
                    pb.loss, pb.grad = loss, g
                    pb.extra["H"] = H
        searching = []
        for pb in active:
            R, x, W = pb.extra["R"], pb.x, pb.total
            pb.f = pb.loss / W + 0.5 * float(x @ R @ x)
            g = pb.grad / W + R @ x
            H = (pb.extra["H"] / W if pb in exact else hessian.copy()) + R
            H.flat[:: H.shape[0] + 1] += DAMPING * (1.0 + np.trace(H) / H.shape[0])
            Ax = A @ x
            scale = 1.0 / np.max(np.diag(H))
            d, status = pb.solver.solve(
                DenseUpper(H * scale), g * scale, lower - Ax, pb.extra["upper"] - Ax
            )
            d = project(x + d, layout, pb.extra["flat"]) - x
            gd = float(g @ d)
            if status != "solved" and not gd < 0:
                d = project(x - g / np.diag(H), layout, pb.extra["flat"]) - x
                gd = float(g @ d)
            pb.n_iter = it
            pb.pred = -(gd + 0.5 * float(d @ H @ d))
            if pb.pred <= tol:
                pb.done = True
                continue
            pb.extra.update(d=d, gd=gd, t=1.0)
            searching.append(pb)
        with_grad = hessian is not None and it < SHARED_STEPS
        for _ in range(MAX_HALVINGS + 1):
            if not searching:
                break
            trial = [(pb.key, pb.x + pb.extra["t"] * pb.extra["d"]) for pb in searching]
            results = source.stats(trial, hessian=False, gradient=with_grad)
            still = []
            for pb, (_, xt), (loss, g, _) in zip(searching, trial, results, strict=True):
                ft = loss / pb.total + 0.5 * float(xt @ pb.extra["R"] @ xt)
                t = pb.extra["t"]
                if ft <= pb.f + ARMIJO * t * pb.extra["gd"]:
                    pb.x, pb.f, pb.loss = xt, ft, loss
                    pb.grad = g if with_grad else None
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
                stacklevel=3,
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


#: Along a cross-validation path a fold stops after a full step that predicted at most this
#: decrease of its mean loss.
CV_STOP = 1e-5


@dataclass
class SharedPath:
    """Held-out losses of every row along a ``lambda`` path (``held[k, i]``: row ``i``'s
    log-loss at ``lams[k]`` under the fit of the folds that did not see it)."""

    lams: np.ndarray
    held: np.ndarray
    w: np.ndarray
    solutions: list[list[np.ndarray]]

    @property
    def mean(self) -> np.ndarray:
        return self.held @ self.w / self.w.sum()


def cv_path(
    source,
    layout: Layout,
    lams: Sequence[float],
    x0: np.ndarray,
    osqp_settings: dict,
    ridge: float,
    patience: int = 2,
    progress=None,
    se_rule=None,
) -> SharedPath:
    """Held-out log-loss of every row along the decreasing grid ``lams``, every fold warm
    started from its previous ``lambda`` and all folds advancing together; stops early as
    :func:`fusion.bernstein.logistic.cv_path` does (``se_rule(held, w, best)``: the paired
    standard errors of every candidate's excess over ``best``)."""
    folds = source.fold_keys()
    problems = [
        Problem(key=f, x=np.array(x0, dtype=float), lam=np.inf, total=source.total(f))
        for f in folds
    ]
    held, sols, done = [], [], []
    w = source.heldout_weights()
    for lam in lams:
        for pb in problems:
            pb.lam = lam
        centre = np.mean([pb.x for pb in problems], axis=0)
        _, _, H = source.stats([(None, centre)], hessian=True)[0]
        H /= source.total(None)
        newton(source, layout, problems, osqp_settings, ridge, hessian=H, stop=CV_STOP)
        held.append(source.heldout_losses([(pb.key, pb.x) for pb in problems]))
        sols.append([pb.x.copy() for pb in problems])
        done.append(lam)
        if progress is not None:
            progress.step(f"shared lam={lam:g}")
        H = np.array(held)
        mean = H @ w / w.sum()
        best = int(np.argmin(mean))
        if se_rule is not None and len(done) - 1 - best >= patience:
            se = se_rule(H, w, best)
            if np.all(mean[-patience:] - mean[best] > se[-patience:]):
                break
    return SharedPath(np.array(done), np.array(held), w, sols)
