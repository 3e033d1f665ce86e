"""Newton's method with monotone constraints, one solver for the binary logistic and the
multinomial loss: the difference penalty, the constraints, the exact projection onto them,
the ridge on the linear coefficients, the step's QP and the iterations (:func:`solve`).

A parameter vector ``x = (c, theta)`` (a :class:`~fusion.bernstein.structure.Layout`) holds
``c >= 0``, the weights of linear features, and the coefficients ``theta`` of Bernstein
components, each non-decreasing along every axis; every component but the first (all of
them, without a free constant) has its 0-corner coefficient fixed at 0. The penalty
``(lambda / 2) theta' D theta`` sums squared first differences of ``theta``
(:func:`penalty_matrix`); ``lambda = inf`` fixes every difference at 0. With class biases
(the multinomial loss) ``x = (c, theta, b)``; the biases are free but for a ridge ``tau``.

Solver
------
At a feasible ``x`` the quadratic model ``g'd + d'Hd / 2`` of the penalized mean loss is
minimized over feasible steps by OSQP (:class:`fusion._solver.StepQPSolver`; class biases
are eliminated first, in closed form), ``x + d`` is projected exactly onto the feasible set
(:func:`project`; OSQP's solution is feasible only to its tolerance), and the step is
shortened by Armijo backtracking (the segment between two feasible points is feasible). A
problem stops when the predicted decrease ``-(g'd + d'Hd / 2)`` falls below ``tol``.
Several problems (the folds of a cross-validation) advance together, so that a loss that
reads its rows in passes (on dask) evaluates all of them in one pass.

The loss object (the split of scikit-learn's ``_glm``: ``LinearModelLoss`` computes, the
``NewtonCholeskySolver`` steps) gives the statistics of the rows a problem's ``key`` names:

- ``stats(requests, hessian, gradient=True)``: for ``[(key, x), ...]``, the weighted loss
  sum, its gradient sum (None without ``gradient``) and, with ``hessian``, its curvature
  sum (an object whose division by the weight ``W`` gives the mean loss's
  :class:`Curvature`);
- with class biases: ``n_classes`` and ``class_weights(key)``;
- optionally ``trial(requests, gradient)``: the statistics at ``x + t d`` for
  ``[(key, x, d, t), ...]``, with the point first (the logistic loss steps its linear
  predictor, ``eta + t X d``); ``name``, the fit's name in messages; and
  ``exact_curvature``: its curvature is exact, so a step needs no convexity check.

The losses: :class:`fusion.bernstein.binary.logistic.LogisticLoss`; the class-shared
model's sources (:class:`fusion.bernstein.multiclass.source.MemorySource`, its dask source)
with :func:`fusion.bernstein.multiclass.multinomial.block_stats`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import lru_cache, partial

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_factor, cho_solve

from .._solver import (
    DenseUpper,
    SolverError,
    SolverWarning,
    StepQPSolver,
    monotone_constraints,
)
from .._warn import caller_level
from .structure import Layout

__all__ = [
    "RIDGE_PER_ROW",
    "RIDGE",
    "NEWTON_TOL",
    "DAMPING",
    "MAX_NEWTON",
    "ARMIJO",
    "MAX_HALVINGS",
    "FLOAT_FLOOR",
    "penalty_matrix",
    "constraints",
    "project",
    "base_ridge",
    "penalty_diag",
    "make_solver",
    "SHARED_STEPS",
    "Curvature",
    "BiasDiagonal",
    "Problem",
    "solve",
]

#: Ridge on the linear coefficients ``c`` (standardized features): ``RIDGE_PER_ROW / n``
#: for ``n`` (effective) rows, at least ``RIDGE``. See :func:`base_ridge`.
RIDGE_PER_ROW = 0.1
RIDGE = 1e-6
#: Newton stops when the predicted decrease of the mean log-loss falls below this.
NEWTON_TOL = 1e-10
#: Relative damping added to the Hessian's diagonal in each Newton step.
DAMPING = 1e-9
#: Newton iterations per solve; typically 2-6 along a warm-started path.
MAX_NEWTON = 100
#: Armijo's sufficient-decrease constant and the most step halvings.
ARMIJO = 1e-4
MAX_HALVINGS = 40
#: A failed line search is taken as convergence when the predicted decrease is this small:
#: the objective (a mean of order-1 terms) cannot resolve smaller changes.
FLOAT_FLOOR = 1e-12
#: Newton steps a problem takes with a shared Hessian (:func:`solve`) before it evaluates
#: its own (or, with ``refresh``, before the shared one is refreshed).
SHARED_STEPS = 6


def _axis_weight(shape: tuple[int, ...], a: int) -> float:
    others = int(np.prod([s for b, s in enumerate(shape) if b != a]))
    return (shape[a] - 1) / others


@lru_cache(maxsize=32)
def penalty_matrix(shapes: tuple[tuple[int, ...], ...]) -> np.ndarray:
    """``D`` of the module docstring for the components' coefficients, ``(P, P)`` dense.

    Cached per shapes (callers must not modify the array).
    """
    blocks = []
    for shape in shapes:
        A, _, _ = monotone_constraints(shape, box=None)  # difference rows, axis after axis
        weights = np.concatenate(
            [np.full(_n_diff(shape, a), _axis_weight(shape, a)) for a in range(len(shape))]
        )
        blocks.append((A.T @ sp.diags(weights) @ A).toarray())
    return sp.block_diag(blocks).toarray() if len(blocks) > 1 else blocks[0]


def _n_diff(shape: tuple[int, ...], a: int) -> int:
    return (shape[a] - 1) * int(np.prod(shape)) // shape[a]


@lru_cache(maxsize=32)
def constraints(layout: Layout) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray, np.ndarray]:
    """``(A, lower, upper, is_diff)`` for ``lower <= A x <= upper``.

    Rows: ``c >= 0``; the difference rows of every component
    (:func:`fusion._solver.monotone_constraints` without the box); the 0-corner of every
    component but the first fixed at 0. ``is_diff`` flags the difference rows (fixed at 0 for
    ``lambda = inf``). Cached per layout (callers must not modify the arrays).
    """
    L = layout.n_linear
    offsets = np.cumsum([0, *layout.sizes])
    P = int(offsets[-1])
    D = _diff_rows(layout)
    pins = L + (offsets[1:-1] if layout.free_constant else offsets[:-1])
    pin = sp.csc_matrix(
        (np.ones(len(pins)), (np.arange(len(pins)), pins)), shape=(len(pins), L + P)
    )
    A = sp.vstack(
        [
            sp.hstack([sp.eye(L), sp.csc_matrix((L, P))]),
            sp.hstack([sp.csc_matrix((D.shape[0], L)), D]),
            pin,
        ],
        format="csc",
    )
    n_d, n_p = D.shape[0], len(pins)
    lower = np.zeros(L + n_d + n_p)
    upper = np.concatenate([np.full(L + n_d, np.inf), np.zeros(n_p)])
    is_diff = np.concatenate([np.zeros(L, bool), np.ones(n_d, bool), np.zeros(n_p, bool)])
    return A, lower, upper, is_diff


def _diff_rows(layout: Layout) -> sp.csc_matrix:
    """Difference rows of all components, as columns of the stacked ``theta``."""
    offsets = np.cumsum([0, *layout.sizes])
    P = int(offsets[-1])
    mats = []
    for off, shape in zip(offsets[:-1], layout.shapes, strict=True):
        A, _, _ = monotone_constraints(shape, box=None)
        if A.shape[0]:
            A = A.tocoo()
            mats.append(sp.csc_matrix((A.data, (A.row, A.col + off)), shape=(A.shape[0], P)))
    return sp.vstack(mats, format="csc") if mats else sp.csc_matrix((0, P))


def project(x: np.ndarray, layout: Layout, flat: bool = False) -> np.ndarray:
    """Make ``x`` exactly feasible without changing more than needed.

    ``c`` is clipped at 0. Each component becomes its running maximum along every axis (a
    running maximum along one axis keeps monotonicity along the axes already treated), or its
    mean when ``flat`` (``lambda = inf``); then every component but the first is shifted so
    its 0-corner is 0, and the first takes the opposite shifts, which leaves ``g`` unchanged.
    Without ``layout.free_constant`` every component's 0-corner becomes 0 (the dropped
    constant does not change a softmax).
    """
    x = np.array(x, dtype=float)
    c, parts = layout.split(x)
    np.maximum(c, 0.0, out=c)
    shift = 0.0
    for i, part in enumerate(parts):
        if flat:
            part[...] = part.mean()
        else:
            for axis in range(part.ndim):
                part[...] = np.maximum.accumulate(part, axis=axis)
        if i > 0 or not layout.free_constant:
            corner = float(part.reshape(-1)[0])
            part -= corner
            shift += corner
    if parts and shift and layout.free_constant:
        parts[0] += shift
    return x


def base_ridge(n_eff: float) -> float:
    """The ridge ``rho`` on the standardized linear coefficients for ``n_eff`` rows (the
    total of the canonical weights, :func:`fusion._validation.canonical_weights`: ``n``
    for unweighted rows, and an integer weight counts as that many rows).

    ``rho = RIDGE_PER_ROW / n_eff`` is the mean-loss form of a Gaussian prior with variance 10
    on every coefficient (as ``LogisticRegression(C=10)`` on the standardized features): it
    vanishes with ``n`` and moves the coefficients of a fit without separation by a few
    thousandths at 500 rows, but keeps them moderate where a score (almost) separates the
    classes, as in one-vs-rest problems with a few dozen rows per class. There the
    unpenalized fit drives the linear predictor to its cap (+-35) on most rows and loses the
    ordering a multi-class coupling needs (digits, 25 rows per class: median one-vs-rest
    ``|logit|`` 15-27; benchmarks/RESULTS.md, multi-class). ``RIDGE`` is a floor for
    conditioning at very large ``n``.
    """
    return max(RIDGE, RIDGE_PER_ROW / max(n_eff, 1.0))


def penalty_diag(layout: Layout, lam: float, ridge: float = RIDGE) -> np.ndarray:
    """The quadratic penalty as a dense ``(n_coef, n_coef)`` matrix ``R``: ``F`` adds
    ``x'Rx / 2``."""
    L = layout.n_linear
    R = np.zeros((layout.n_coef, layout.n_coef))
    R[np.arange(L), np.arange(L)] = ridge
    if np.isfinite(lam) and lam > 0:
        R[L:, L:] = lam * penalty_matrix(layout.shapes)
    return R


def make_solver(layout: Layout, **osqp_settings) -> StepQPSolver:
    """The step QP of one layout; reuse it across Newton steps, lambdas and folds' paths."""
    A, lower, upper, _ = constraints(layout)
    # The step's QP is strictly convex (the Hessian is damped), so it is never unbounded;
    # OSQP's default infeasibility tolerance (1e-4) would call a curvature below it "dual
    # infeasible" (separated classes leave some directions almost flat).
    settings = {"eps_dual_inf": 1e-12, **osqp_settings}
    return StepQPSolver(A, lower, upper, problem="BernsteinFusion Newton step", **settings)


class Curvature:
    """The Hessian of the loss: ``aa`` over ``(c, theta)``; with class biases also ``ab``
    (P, C) and ``bb``, dense (C, C) for at most ``DENSE_BIASES`` classes
    (:mod:`fusion.bernstein.multiclass.multinomial`), else its diagonal (C,): with many
    classes every probability is small and the off-diagonal terms ``-p_ij p_ik`` are
    negligible next to the diagonal ``p_ij (1 - p_ij)``."""

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


@dataclass(eq=False)
class Problem:
    """One penalized fit (a fold's training rows, or all rows) advancing in :func:`solve`.

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
    qp_iterations: int = 0
    inexact: bool = False  # some step's QP stopped early (OSQP's iteration limit)
    extra: dict = field(default_factory=dict)

    def penalty(self, x: np.ndarray) -> float:
        P = self.extra["R"].shape[0]
        xa = x[:P]
        value = 0.5 * float(xa @ self.extra["R"] @ xa)
        if x.shape[0] > P:
            value += 0.5 * self.tau * float(x[P:] @ x[P:])
        return value


def _setup(pb: Problem, layout: Layout, ridge: float, osqp_settings: dict, loss) -> None:
    A, lower, upper, is_diff = constraints(layout)
    flat = bool(np.isinf(pb.lam))
    pb.extra.update(
        A=A, lower=lower, flat=flat, R=penalty_diag(layout, pb.lam, ridge),
        upper=np.where(is_diff, 0.0, upper) if flat else upper,
    )  # fmt: skip
    P = layout.n_coef
    biased = np.isfinite(pb.tau)
    x = np.array(pb.x, dtype=float)
    if biased and x.shape[0] == P:
        x = np.concatenate([x, np.zeros(loss.n_classes)])
    elif not biased:
        x = x[:P]
    if biased:  # a class without training rows keeps the average bias (see _step)
        pb.extra["absent"] = absent = loss.class_weights(pb.key) <= 0
        x[P:][absent] = 0.0
        x[P:][~absent] -= x[P:][~absent].mean()
    x[:P] = project(x[:P], layout, flat)
    if x.shape != pb.x.shape or not np.array_equal(x, pb.x):
        pb.grad = None
    pb.x = x
    if pb.solver is None:
        pb.solver = make_solver(layout, **osqp_settings)
    pb.done, pb.n_iter, pb.status, pb.inexact = False, 0, "solved", False


def _step(pb: Problem, layout: Layout, g: np.ndarray, curv: Curvature, exact: bool):
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
    if not exact:
        Hred = _convex(Hred, damping)
    Ax = A @ x[:P]
    scale = 1.0 / np.max(np.diag(Hred))
    da, status = pb.solver.solve(DenseUpper(Hred * scale), gred * scale, lower - Ax, upper - Ax)
    pb.qp_iterations += pb.solver.last_iterations
    da = project(x[:P] + da, layout, flat) - x[:P]
    if status != "solved":
        pb.inexact = True
        if not float(gred @ da) < 0:  # no descent from OSQP's last iterate: a gradient step
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
    """The shared curvature of a step, beyond ``DENSE_BIASES`` classes with the biases'
    diagonal from the problem's own last pass and their coupling to ``(c, theta)`` dropped.

    A shared Hessian comes from a sample (``HESSIAN_PAIRS``, ``HESSIAN_ROWS``): at C =
    1,000 that is 500 rows (once 65), too few to hold most classes often, so its biases'
    block is no guide, and the biases' path at small ridges took 8-9 steps of exact
    Hessians per fold (145 s of a 324 s fit at n = 20,000, M = 5). The exact diagonal with
    the sampled coupling was worse still (it does not fit the sampled block); without the
    coupling, 60 s. The line search keeps every step a descent; the optimum does not
    change."""
    if bb is None or hessian.ab is None or hessian.bb.ndim != 1:
        return hessian
    return Curvature(hessian.aa, np.zeros_like(hessian.ab), bb.diag / W)


def _convex(H: np.ndarray, damping: float) -> np.ndarray:
    """``H``, or where its smallest eigenvalue fell below half of ``damping``, ``H``
    symmetrized with that eigenvalue raised to ``damping``.

    The exact reduced Hessian is at least the damping. Two approximations can break that:
    beyond ``DENSE_BIASES`` classes the biases' block is replaced by its diagonal,
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


def solve(
    loss,
    layout: Layout,
    problems: list[Problem],
    osqp_settings: dict,
    ridge: float,
    tol: float = NEWTON_TOL,
    max_iter: int = MAX_NEWTON,
    hessian: Curvature | None = None,
    stop: float | None = None,
    refresh=None,
    exact_after: int | None = None,
) -> None:
    """Minimize every problem's penalized mean loss, all problems advancing together.

    ``loss`` is the loss object (see the module docstring): its ``stats`` give the
    problems' steps one shared pass per evaluation.

    ``hessian``: a fixed curvature of the mean loss (per unit of weight) used for every step
    instead of one evaluated at each iterate: along a cross-validation path the folds'
    Hessians differ little from each other and from one ``lambda`` to the next, so one
    Hessian of all rows per ``lambda`` serves every fold, and a step costs one pass (loss
    and gradient at the trial point, which is the next step's gradient). The steps
    converge linearly instead of quadratically; the optimum is the same. A problem still
    running after :data:`SHARED_STEPS` steps evaluates its own from then on. ``stop``: also
    stop after a full step whose predicted decrease was at most ``stop`` (the remaining
    error of the objective is then of that order, which is all a cross-validation score
    needs; near the optimum Newton's method converges quadratically, so the next predicted
    decrease would be about its square). A problem whose ``grad`` is set starts from it
    (the gradient sum at ``x``). ``refresh(x)``: with ``hessian``, a new shared curvature
    at ``x`` (the problems' mean) every :data:`SHARED_STEPS` steps instead of their own
    exact ones, whose passes cost a ``P x P`` product per pair (at C = 1,000 and n = 20,000
    the exact steps of the class biases' path took 145 s of a 324 s fit, 60 s with
    refreshed ones). ``exact_after``: with ``refresh``, a problem still running after this
    many steps evaluates its own curvature from then on (None: never). The shared one
    leaves out how the class biases move with ``(c, theta)``, and a fold whose optimum
    depends on that converges slowly without it: two of five folds took 61 and 68 steps at
    bias ridge 1e-4 (C = 1,000, M = 5, n = 50,000), 3 with their own.

    Raises
    ------
    fusion.SolverError
        Newton did not converge, or its line search found no decrease away from the optimum.
    """
    name = getattr(loss, "name", "BernsteinFusion")
    exact_curvature = getattr(loss, "exact_curvature", False)
    trial_stats = loss.trial if hasattr(loss, "trial") else partial(_trial, loss)
    for pb in problems:
        _setup(pb, layout, ridge, osqp_settings, loss)
    for it in range(1, max_iter + 1):
        active = [pb for pb in problems if not pb.done]
        if not active:
            break
        if refresh is not None and hessian is not None and it > 1 and (it - 1) % SHARED_STEPS == 0:
            hessian = refresh(np.mean([pb.x for pb in active], axis=0))
        last_shared = SHARED_STEPS if refresh is None else exact_after
        exact = [pb for pb in active if hessian is None or (last_shared and it > last_shared)]
        cheap = [pb for pb in active if pb not in exact and pb.grad is None]
        for todo, own in ((exact, True), (cheap, False)):
            if todo:
                stats = loss.stats([(pb.key, pb.x) for pb in todo], hessian=own)
                for pb, (value, g, H) in zip(todo, stats, strict=True):
                    pb.loss, pb.grad = value, g
                    pb.extra["H"] = H
                    pb.extra["bb"] = H if isinstance(H, BiasDiagonal) else None
        searching = []
        for pb in active:
            W = pb.total
            pb.f = pb.loss / W + pb.penalty(pb.x)
            curv = pb.extra["H"] / W if pb in exact else _shared(hessian, pb.extra.get("bb"), W)
            g, curv = _with_penalty(pb, pb.grad / W, curv)
            d, gd, quad = _step(pb, layout, g, curv, exact_curvature and pb in exact)
            pb.n_iter = it
            pb.pred = -(gd + 0.5 * quad)
            if pb.pred <= tol:
                pb.done = True
                continue
            pb.extra.update(d=d, gd=gd, t=1.0)
            searching.append(pb)
        with_grad = hessian is not None and (refresh is not None or it < SHARED_STEPS)
        for _ in range(MAX_HALVINGS):
            if not searching:
                break
            requests = [(pb.key, pb.x, pb.extra["d"], pb.extra["t"]) for pb in searching]
            results = trial_stats(requests, gradient=with_grad)
            still = []
            for pb, (xt, value, g, H) in zip(searching, results, strict=True):
                ft = value / pb.total + pb.penalty(xt)
                t = pb.extra["t"]
                if ft <= pb.f + ARMIJO * t * pb.extra["gd"]:
                    pb.x, pb.f, pb.loss = xt, ft, value
                    pb.grad = g if with_grad else None
                    pb.extra["bb"] = H if with_grad and isinstance(H, BiasDiagonal) else None
                    if stop is not None and t == 1.0 and pb.pred <= stop:
                        pb.done = True
                elif t <= 0.5 ** (MAX_HALVINGS - 1):
                    # the objective (a mean of order-1 terms) cannot resolve smaller changes
                    if pb.pred <= FLOAT_FLOOR * max(1.0, abs(pb.f)) * 1e3:
                        pb.done = True
                    else:
                        raise SolverError(
                            f"Newton's line search found no decrease for the {name} fit at "
                            f"lambda={pb.lam:g} (predicted decrease {pb.pred:.2e}).",
                            status="newton: line search failed",
                            solver="newton-osqp",
                        )
                else:
                    pb.extra["t"] = 0.5 * t
                    still.append(pb)
            searching = still
    # a problem solved for a cross-validation score (``stop``) needs no more than ``stop``
    # (a fold of 30 rows and 120 classes, 94 of them absent, crept toward its biases' optimum
    # in damped steps and ended 100 iterations at a predicted decrease of 5e-6)
    enough = 1e-7 if stop is None else max(1e-7, stop)
    for pb in problems:
        if pb.done:
            if pb.inexact:  # some step's QP stopped early: the fit is used, flagged
                pb.status = "newton: inexact steps"
            continue
        if pb.pred <= enough:
            warnings.warn(
                f"Newton's method stopped after {max_iter} iterations at lambda={pb.lam:g} "
                f"with a predicted decrease of {pb.pred:.1e} (tolerance {tol:.0e}); the "
                "solution is used.",
                SolverWarning,
                stacklevel=caller_level(),
            )
            pb.status = "newton: inaccurate"
            pb.done = True
        else:
            raise SolverError(
                f"Newton's method did not converge in {max_iter} iterations for the {name} "
                f"fit at lambda={pb.lam:g} (predicted decrease {pb.pred:.2e}).",
                status="newton: maximum iterations reached",
                solver="newton-osqp",
            )


def _trial(loss, requests, gradient: bool) -> list:
    """The statistics at every trial point ``x + t d`` of ``requests`` ``[(key, x, d, t)]``,
    with the point: ``[(x + t d, loss sum, gradient sum or None, curvature or None)]``."""
    points = [(key, x + t * d) for key, x, d, t in requests]
    stats = loss.stats(points, hessian=False, gradient=gradient)
    return [(xt, *s) for (_, xt), s in zip(points, stats, strict=True)]
