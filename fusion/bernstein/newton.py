"""Newton's method with monotone constraints, the parts its binary and multinomial fits
share: the difference penalty, the constraints, the exact projection onto them, the ridge
on the linear coefficients, the step's QP solver and the solver's constants.

A parameter vector ``x = (c, theta)`` (a :class:`~fusion.bernstein.structure.Layout`) holds
``c >= 0``, the weights of linear features, and the coefficients ``theta`` of Bernstein
components, each non-decreasing along every axis; every component but the first (all of
them, without a free constant) has its 0-corner coefficient fixed at 0. The penalty
``(lambda / 2) theta' D theta`` sums squared first differences of ``theta``
(:func:`penalty_matrix`); ``lambda = inf`` fixes every difference at 0.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import scipy.sparse as sp

from .._solver import StepQPSolver, monotone_constraints
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
