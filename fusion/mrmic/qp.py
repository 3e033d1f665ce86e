"""The MR-MIC quadratic program (Zhong & Kwok 2013; eq. (6) of Wang & Liu 2020) on OSQP.

On ``g`` distinct weighted training points with targets ``t`` and weights ``W`` (see
:func:`fusion.mrmic.graph.merge_points`) the problem is

.. math::

    \\min_p \\; F(p) = \\sum_g W_g (t_g - p_g)^2 + \\frac{\\lambda}{2} p^\\top L p
    \\quad \\text{s.t.} \\quad p_h \\ge p_l \\;\\; ((h, l) \\in E), \\qquad 0 \\le p \\le 1,

with ``E`` the transitive reduction of strict dominance and ``L`` the similarity Laplacian.
In OSQP's form ``0.5 x'Px + q'x``: ``P = (2 diag(W) + lam L) / mean(W)`` and
``q = -2 W t / mean(W)`` (the constant ``sum W t^2`` is dropped; the division only scales
the problem for OSQP). The constraint matrix has one row ``e_h - e_l`` per edge (lower bound
0, no upper bound); it is fixed for one training set, so a path of ``lam`` values reuses
OSQP's workspace and warm start.

The box ``0 <= p <= 1`` is not given to OSQP because it never binds: the targets lie in
``[0, 1]`` and the graph weights are non-negative, so clipping any monotone ``p`` to ``[0, 1]``
keeps it monotone (clipping is non-decreasing), does not increase any ``(t_g - p_g)^2``
(``t_g`` is in the box) and does not increase any ``(p_g - p_h)^2`` (clipping is
1-Lipschitz); the minimizer is unique (``W > 0``), hence already in the box. Dropping these
``g`` rows changes no solution but cut OSQP's iterations 3-4 fold on data with long chains
of comparable points (ties in one score, binary scores); see benchmarks/RESULTS.md.

OSQP stops at tolerances, so its point can violate an edge (or the box) by about ``eps``.
The solution is then made exactly feasible by :func:`repair_monotone` (no polishing, see
:class:`fusion._solver.QPSolver`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._solver import QPSolver, difference_constraints
from .graph import dominated_max, dominating_min

__all__ = [
    "monotone_constraints",
    "objective",
    "repair_monotone",
    "max_violation",
    "MRMICQP",
    "DEFAULT_OSQP_SETTINGS",
]

#: OSQP settings used unless overridden. The objective is divided by the mean weight, so
#: ``P``'s diagonal is about 2 whatever the scale of the weights. OSQP's iteration count on
#: this problem depends strongly on ``rho`` and on the data: ADMM propagates slowly along
#: long chains of active constraints, which ties and binary scores create, and no single
#: ``rho`` suited every data set. Starting at ``rho = 10`` with over-relaxation
#: ``alpha = 1.8`` and letting OSQP reconsider ``rho`` every 100 iterations when its
#: estimate is off by more than a factor 2 needed the fewest iterations and the least time
#: in total over simulated continuous, tied, binary, imbalanced and M = 3-6 data at
#: ``g`` = 300-600 (30% fewer than ``rho = 10`` fixed, 25-50% fewer than ``rho`` = 1-3;
#: benchmarks/RESULTS.md). Every change of ``rho`` costs a new factorization (``O(g^3)`` on
#: the dense graph), which the interval of 100 keeps rare.
DEFAULT_OSQP_SETTINGS = {
    "eps_abs": 1e-7,
    "eps_rel": 1e-7,
    "max_iter": 20_000,
    "rho": 10.0,
    "alpha": 1.8,
    "adaptive_rho_interval": 100,
    "adaptive_rho_tolerance": 2.0,
}


def monotone_constraints(
    hi: np.ndarray, lo: np.ndarray, n: int
) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray]:
    """``(A, lower, upper)`` with one row ``x[hi[e]] - x[lo[e]] >= 0`` per dominance edge
    ``e`` (:func:`fusion._solver.difference_constraints`, without a box)."""
    return difference_constraints(hi, lo, n)


def objective(p, target, weight, L, lam: float) -> float:
    """``F(p) = sum_g W_g (t_g - p_g)^2 + (lam / 2) p' L p``."""
    p = np.asarray(p, dtype=float)
    return float(np.dot(weight, (target - p) ** 2) + 0.5 * lam * (p @ (L @ p)))


def max_violation(p: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> float:
    """``max(p[lo] - p[hi])`` over the edges (``<= 0`` means monotone); 0 without edges."""
    return float(np.max(p[lo] - p[hi])) if hi.shape[0] else 0.0


def repair_monotone(points: np.ndarray, p: np.ndarray) -> np.ndarray:
    """An exactly monotone vector within the solver's violation of ``p``.

    Returns ``clip((up + down) / 2, 0, 1)`` where ``up_i = max{p_j : U_j <= U_i}`` is the
    smallest monotone majorant of ``p`` and ``down_i = min{p_j : U_j >= U_i}`` the largest
    monotone minorant. Both are monotone on every dominance pair exactly (they are maxima and
    minima of nested sets, no arithmetic), and so is their average, because floating-point
    addition and halving are monotone. A monotone ``p`` is returned unchanged (up to the
    clip), and in general ``down <= p <= up`` with ``up - down`` bounded by the largest
    drop of ``p`` along a dominance chain, which is of the order of OSQP's tolerance.
    """
    p = np.asarray(p, dtype=float)
    up = dominated_max(points, p, points, fill=-np.inf)
    down = dominating_min(points, p, points, fill=np.inf)
    return np.clip(0.5 * (up + down), 0.0, 1.0)


class MRMICQP:
    """The MR-MIC QP for one training set, solved for one or several ``lam``.

    Parameters
    ----------
    points : ndarray of shape (g, M)
        Distinct training points.
    target, weight : ndarray of shape (g,)
        Merged targets and weights.
    hi, lo : ndarray of int
        Dominance edges (:func:`fusion.mrmic.graph.dominance_edges`).
    L : scipy.sparse matrix of shape (g, g)
        Similarity Laplacian (:func:`fusion.mrmic.graph.laplacian`).
    **osqp_settings
        Passed to OSQP over :data:`DEFAULT_OSQP_SETTINGS`.
    """

    def __init__(self, points, target, weight, hi, lo, L, **osqp_settings):
        self.points = np.asarray(points, dtype=float)
        self.target = np.asarray(target, dtype=float)
        self.weight = np.asarray(weight, dtype=float)
        self.hi, self.lo = hi, lo
        self.L = sp.csc_matrix(L)
        n = self.points.shape[0]
        # Fixed pattern of P: the upper triangle of L with every diagonal slot stored, so
        # P.data can be rewritten for each lam (QPSolver updates Px in place).
        eye = sp.coo_matrix((np.zeros(n), (np.arange(n), np.arange(n))), shape=(n, n))
        self._L_upper = (sp.triu(self.L, format="coo") + eye).tocsc()
        self._L_upper.sort_indices()
        is_diag = np.repeat(np.arange(n), np.diff(self._L_upper.indptr)) == self._L_upper.indices
        self._diag_pos = np.flatnonzero(is_diag)
        self._diag_rows = self._L_upper.indices[self._diag_pos]
        A, lower, upper = monotone_constraints(hi, lo, n)
        settings = {**DEFAULT_OSQP_SETTINGS, **osqp_settings}
        self._qp = QPSolver(A, lower, upper, problem="MR-MIC QP", **settings)

    def solve(self, lam: float) -> tuple[np.ndarray, str]:
        """Fitted ``p`` (exactly monotone on every dominance pair, in ``[0, 1]``) and status.

        Raises
        ------
        fusion.SolverError
            When OSQP fails.
        """
        scale = 1.0 / self.weight.mean()  # same minimizer, well-scaled for OSQP's rho
        P = self._L_upper.copy()
        P.data = (scale * lam) * P.data
        P.data[self._diag_pos] += (2.0 * scale) * self.weight[self._diag_rows]
        x, status = self._qp.solve(P, (-2.0 * scale) * self.weight * self.target)
        return repair_monotone(self.points, x), status

    @property
    def last_iterations(self) -> int:
        """OSQP's iteration count of the most recent :meth:`solve`."""
        return self._qp.last_iterations

    def objective(self, p: np.ndarray, lam: float) -> float:
        """:func:`objective` on this problem's data."""
        return objective(p, self.target, self.weight, self.L, lam)
