"""Monotone penalized logistic regression: the maths of BernsteinFusion's default model.

Problem
-------
``N`` rows, or cells of aggregated rows (:mod:`fusion.bernstein.binary.data`), with design
``X = [Z, Phi]``: ``L`` linear features ``Z`` (the scores on their own scale) and the
Bernstein design ``Phi`` (``P`` columns) of a sum of tensor components ``g``. With
``x = (c, theta)`` the linear predictor is ``eta = X x = Z c + Phi theta`` and the fit
minimizes

.. math::

    F(x) = \\frac{1}{W} \\sum_i \\left[ w_i \\log(1 + e^{\\eta_i}) - v_i \\eta_i \\right]
           + \\frac{\\lambda}{2} \\theta' D \\theta + \\frac{\\rho}{2} \\lVert c \\rVert^2

where ``w_i`` is the weight of a row (the total weight of a cell), ``v_i`` the weight of its
positives (``w_i y_i`` for a row) and ``W = sum w``: the weighted mean log-loss (exactly, for
rows; for cells, with ``eta`` constant over each cell). Constraints: ``c >= 0`` and every
component's coefficients non-decreasing along each of its axes; every component but the
first has its 0-corner coefficient fixed at 0 (a constant can move freely between
components, so pinning it keeps the solution unique). ``g`` is then non-decreasing in every
coordinate (a Bernstein polynomial's partial derivative is a non-negative combination of the
forward differences of its coefficients), and so is ``eta`` when ``Z`` is non-decreasing.

``D = sum_a w_a Delta_a' Delta_a`` sums squared first differences along every axis ``a`` of
every component, weighted by ``w_a = K_a / prod_{b != a} (K_b + 1)``: a mean of squared
difference quotients ``K_a Delta_a theta``, so ``theta' D theta`` approximates
``int |grad g|^2`` over the cube and one ``lambda`` means about the same smoothness at every
degree (``g(u) = a u_m`` costs ``lambda a^2 / 2`` at any degree). ``lambda = inf`` fixes every
difference at 0: ``g`` is a constant (the intercept) and the model is logistic regression on
``Z`` with ``c >= 0``. The ridge ``rho = 0.1 / n`` (:func:`base_ridge`, on linear features
standardized by the caller; ``LogisticRegression(C=10)`` on them) keeps ``c`` finite and
moderate when a score (almost) separates the classes and vanishes with ``n``.

Solver
------
Newton's method with the constraints (:func:`fusion.bernstein.newton.solve`, exact gradient
and Hessian) on this loss (:class:`LogisticLoss`): every step's QP by OSQP, projected
exactly onto the constraints, shortened by Armijo backtracking; it stops when the predicted
decrease ``-(g'd + d'Hd / 2)`` (the squared Newton decrement, up to a factor 2, without
constraints) falls below ``tol``. OSQP failures raise :class:`fusion.SolverError` with
OSQP's status; so does a Newton iteration limit or a failed line search away from the
optimum (status ``"newton: ..."``).

Cross-validation (:func:`cv_path`) runs every fold down a decreasing ``lambda`` grid, warm
started from the previous ``lambda``; the estimator applies the one-standard-error rule
(:func:`fusion._cv.one_se_pick`) toward larger ``lambda`` with :meth:`PathResult.paired_se`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from ..._cv import path_settled
from ..._solver import StepQPSolver
from ..newton import (
    MAX_NEWTON,
    NEWTON_TOL,
    RIDGE,
    Curvature,
    Problem,
    make_solver,
    penalty_diag,
    solve,
)
from ..structure import Layout

__all__ = [
    "initial_x",
    "Design",
    "objective",
    "NewtonResult",
    "LogisticLoss",
    "Gram",
    "newton",
    "PathResult",
    "joint_path",
    "cv_path",
]


@dataclass
class Design:
    """Rows (or cells) of the problem: ``X = [Z, Phi]``, weights ``w``, positives ``v``."""

    X: np.ndarray
    w: np.ndarray
    v: np.ndarray
    w2: np.ndarray | None = None  # sum of squared row weights per row (cell); default w**2

    def __post_init__(self):
        if self.w2 is None:
            self.w2 = self.w**2

    @property
    def total(self) -> float:
        return float(self.w.sum())

    def take(self, rows) -> Design:
        return Design(self.X[rows], self.w[rows], self.v[rows], self.w2[rows])


def _loss_terms(eta: np.ndarray, design: Design) -> float:
    return float(design.w @ np.logaddexp(0.0, eta) - design.v @ eta) / design.total


def objective(
    x: np.ndarray, design: Design, layout: Layout, lam: float, ridge: float = RIDGE
) -> float:
    """``F(x)`` of the module docstring (``lambda = inf`` adds no penalty: ``g`` is flat)."""
    R = penalty_diag(layout, lam, ridge)
    return _loss_terms(design.X @ x, design) + 0.5 * float(x @ R @ x)


@dataclass
class NewtonResult:
    x: np.ndarray
    objective: float
    n_iter: int
    qp_iterations: int = 0
    status: str = "solved"


def initial_x(layout: Layout, base_rate: float) -> np.ndarray:
    """The start of a fit: ``c = 0`` and ``g`` the constant logit of the base rate."""
    x = np.zeros(layout.n_coef)
    r = min(max(base_rate, 1e-12), 1.0 - 1e-12)  # one class can hold nearly all the weight
    x[layout.n_linear : layout.n_linear + layout.sizes[0]] = np.log(r / (1.0 - r))
    return x


class LogisticLoss:
    """The weighted logistic loss of one or several designs by key (the folds' training
    rows, or ``None``: all rows): the loss object of :func:`fusion.bernstein.newton.solve`.

    It keeps the linear predictor ``eta`` of the last points evaluated, so that a line
    search steps it (``eta + t X d``, one product ``X d`` per step) and the next step starts
    from it."""

    name = "BernsteinFusion"
    exact_curvature = True  # X' diag(w p (1 - p)) X + R is positive definite

    def __init__(self, designs: dict):
        self.designs = designs
        self._points = {}  # key -> [(x, eta), ...] of the last points evaluated
        self._step = {}  # key -> (d, X d)

    def _eta(self, key, x: np.ndarray) -> np.ndarray:
        for point, eta in self._points.get(key, ()):
            if point is x:
                return eta
        return self.designs[key].X @ x

    def stats(self, requests, hessian: bool, gradient: bool = True) -> list:
        out = []
        for key, x in requests:
            design = self.designs[key]
            eta = self._eta(key, x)
            self._points[key] = [(x, eta)]
            out.append(_stats(design, eta, hessian, gradient))
        return out

    def trial(self, requests, gradient: bool) -> list:
        out = []
        for key, x, d, t in requests:
            design = self.designs[key]
            step = self._step.get(key)
            if step is None or step[0] is not d:
                step = self._step[key] = (d, design.X @ d)
            xt = x + t * d
            eta = self._eta(key, x) + t * step[1]
            self._points[key] = [(x, self._eta(key, x)), (xt, eta)]
            out.append((xt, *_stats(design, eta, False, gradient)))
        return out


def _stats(design: Design, eta: np.ndarray, hessian: bool, gradient: bool) -> tuple:
    """Weighted loss sum, gradient sum and curvature (:class:`Gram`) at ``eta``."""
    loss = float(design.w @ np.logaddexp(0.0, eta) - design.v @ eta)
    if not (gradient or hessian):
        return loss, None, None
    p = expit(eta)
    grad = design.X.T @ (design.w * p - design.v) if gradient else None
    H = Gram(design.X, design.w * p * (1.0 - p)) if hessian else None
    return loss, grad, H


class Gram:
    """The curvature ``X' diag(s) X`` of a loss sum, kept as its factors: divided by the
    weight ``W`` it is formed as ``Q'Q`` with ``Q = X sqrt(s / W)``, the mean loss's
    :class:`~fusion.bernstein.newton.Curvature`."""

    __slots__ = ("X", "s")

    def __init__(self, X: np.ndarray, s: np.ndarray):
        self.X, self.s = X, s

    def __truediv__(self, W: float) -> Curvature:
        Q = self.X * np.sqrt(self.s / W)[:, None]
        return Curvature(Q.T @ Q)


def newton(
    design: Design,
    layout: Layout,
    lam: float,
    x0: np.ndarray,
    solver: StepQPSolver,
    tol: float = NEWTON_TOL,
    max_iter: int = MAX_NEWTON,
    trust_quadratic: bool = False,
    ridge: float = RIDGE,
) -> NewtonResult:
    """Minimize ``F`` for one ``lambda`` (``inf`` allowed) from ``x0``, see the module docstring
    (:func:`fusion.bernstein.newton.solve` on the :class:`LogisticLoss` of ``design``).

    ``trust_quadratic``: also stop right after a full (unshortened) step whose predicted
    decrease was at most ``sqrt(tol)``. Near the optimum Newton's method converges
    quadratically (the next predicted decrease is about the square of this one: measured
    ratios 0.3-1 on these problems), so the check that would confirm convergence, another
    Hessian and QP, is skipped; used along cross-validation paths, where a warm-started
    solve then mostly takes a single step.

    Raises
    ------
    fusion.SolverError
        OSQP failed on a step (its status), or Newton did not converge.
    """
    pb = Problem(None, np.asarray(x0, dtype=float), lam, design.total, solver=solver)
    stop = np.sqrt(tol) if trust_quadratic else None
    solve(LogisticLoss({None: design}), layout, [pb], {}, ridge, tol, max_iter, stop=stop)
    return NewtonResult(pb.x, pb.f, pb.n_iter, pb.qp_iterations, pb.status)


@dataclass
class PathResult:
    """Held-out losses along a ``lambda`` path.

    Every row (cell) is held out exactly once, so the held-out losses of all folds are kept
    side by side: ``neg[k]`` is the log-loss a negative of each held-out row (cell) would
    incur at ``lams[k]``, ``pos[k]`` a positive's, with total weights ``wneg`` and ``wpos``.
    ``sumw2`` is the sum of the squared row weights (``n`` for unit weights).
    """

    lams: np.ndarray
    neg: np.ndarray
    pos: np.ndarray
    wneg: np.ndarray
    wpos: np.ndarray
    sumw2: float
    solutions: list[list[np.ndarray]] = field(default_factory=list)  # [lambda][fold]
    groups: np.ndarray | None = None  # tie group of every held-out row (see paired_se)

    @property
    def mean(self) -> np.ndarray:
        """Weighted mean held-out log-loss at every ``lambda``."""
        total = self.wneg.sum() + self.wpos.sum()
        return (self.neg @ self.wneg + self.pos @ self.wpos) / total

    def paired_se(self, ref: int) -> np.ndarray:
        """Standard error of ``mean[k] - mean[ref]`` for every ``k``, from the rows' paired
        differences ``d`` (same row, two penalties).

        Without ``groups``: ``sqrt(Var_w(d) / n_eff)`` with ``n_eff = (sum w)^2 / sum w^2``.
        With ``groups`` (rows with identical scores share a group): the cluster-robust
        ``sqrt(sum_g (sum_{i in g} w_i (d_i - mean))^2) / sum w``. Rows with the same scores
        get the same predictions, so a penalty that fits a chance pattern of one group of
        tied rows gains on all of them at once in every fold; counted as independent rows
        they would make that gain look significant (observed: a 23-row tie with 6 positives,
        true rate 0.5, made the smallest penalty win by two row-level standard errors and
        lose 0.015 in log-loss on fresh rows). Without ties both formulas agree for unit
        weights.

        Paired differences are far less noisy than the fold-to-fold spread of the losses
        themselves, which mostly reflects which rows landed in which fold.
        """
        W = self.wneg.sum() + self.wpos.sum()
        dn = self.neg - self.neg[ref]
        dp = self.pos - self.pos[ref]
        mean = (dn @ self.wneg + dp @ self.wpos) / W
        if self.groups is not None:
            e = self.wneg * (dn - mean[:, None]) + self.wpos * (dp - mean[:, None])
            n_groups = int(self.groups.max()) + 1
            G = sp.csr_matrix(
                (np.ones(self.groups.shape[0]), (np.arange(self.groups.shape[0]), self.groups)),
                shape=(self.groups.shape[0], n_groups),
            )
            sums = (G.T @ e.T).T  # (len(lams), n_groups)
            return np.sqrt(np.sum(sums**2, axis=1)) / W
        second = ((dn**2) @ self.wneg + (dp**2) @ self.wpos) / W
        var = np.maximum(second - mean**2, 0.0)
        return np.sqrt(var * self.sumw2 / W**2)


def joint_path(paths: Sequence[PathResult]) -> PathResult:
    """The paths of several candidates, scored on the same held-out rows (cells), as one."""
    last = paths[-1]
    return PathResult(
        np.concatenate([p.lams for p in paths]),
        np.concatenate([p.neg for p in paths]),
        np.concatenate([p.pos for p in paths]),
        last.wneg,
        last.wpos,
        last.sumw2,
        groups=last.groups,
    )


def _heldout(x: np.ndarray, test: Design) -> tuple[np.ndarray, np.ndarray]:
    eta = test.X @ x
    loss_neg = np.logaddexp(0.0, eta)
    return loss_neg, loss_neg - eta


def cv_path(
    folds: Sequence[tuple[Design, Design]],
    layout: Layout,
    lams: Sequence[float],
    x0: np.ndarray,
    osqp_settings: dict,
    patience: int = 2,
    ridge: float = RIDGE,
    groups: np.ndarray | None = None,
    progress=None,
    label: str = "",
) -> PathResult:
    """Held-out log-loss of every fold along the decreasing grid ``lams``, warm started.

    ``groups``: tie groups of the held-out rows, in the order of the folds' test sets
    concatenated (:meth:`PathResult.paired_se`). ``progress``: a
    :class:`fusion._progress.Progress` told of every ``lambda`` done (``label`` names the
    candidate).

    Folds advance together, one ``lambda`` at a time, so that the path can stop early, by
    the rule of every Bernstein path (:func:`fusion._cv.path_settled`): once the mean loss
    has clearly risen above the best one (beyond its paired standard error at ``patience``
    consecutive ``lambda`` values, or three of them at once; a rise within ``FLAT`` of the
    minimum is flat), smaller ones cannot be picked by the one-standard-error rule unless
    the curve turned down again, which penalized fits of this kind do not do in practice.
    """
    loss = LogisticLoss({f: train for f, (train, _) in enumerate(folds)})
    problems = [
        Problem(f, np.array(x0, dtype=float), np.inf, train.total,
                solver=make_solver(layout, **osqp_settings))
        for f, (train, _) in enumerate(folds)
    ]  # fmt: skip
    wneg = np.concatenate([test.w - test.v for _, test in folds])
    wpos = np.concatenate([test.v for _, test in folds])
    sumw2 = float(sum(test.w2.sum() for _, test in folds))
    negs, poss, sols, done = [], [], [], []
    for lam in lams:
        for pb in problems:
            pb.lam = lam
        # trust_quadratic of newton: a full step predicting at most sqrt(tol) ends a solve
        solve(loss, layout, problems, {}, ridge, stop=np.sqrt(NEWTON_TOL))
        held = [_heldout(pb.x, test) for pb, (_, test) in zip(problems, folds, strict=True)]
        negs.append(np.concatenate([a for a, _ in held]))
        poss.append(np.concatenate([b for _, b in held]))
        sols.append([pb.x.copy() for pb in problems])
        done.append(lam)
        if progress is not None:
            progress.step(f"{label} lam={lam:g}".strip())
        path = PathResult(
            np.array(done), np.array(negs), np.array(poss), wneg, wpos, sumw2, sols, groups
        )
        best = int(np.argmin(path.mean))
        if best < len(done) - 1 and path_settled(path.mean, path.paired_se(best), patience):
            break
    return path
