"""The monotone least-squares QP of BernsteinFusion (Wang & Liu 2020, QP (13), any M).

The objective only needs the sufficient statistics ``G = Phi' W Phi``, ``b = Phi' W y`` and
``yy = y' W y``, which add over row blocks, so they are accumulated in chunks: memory is
``O(P^2 + chunk * P)`` and never ``O(n * P)``.

Constraints (Theorem 1 generalized to M axes): ``beta`` non-decreasing along every axis and
``0 <= beta <= 1``. Together with monotonicity the box is equivalent to the paper's two
corner constraints (``beta[0,...,0] >= 0`` and ``beta[K_1,...,K_M] <= 1``); stating it for all
coefficients keeps the constraint matrix trivially well scaled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import scipy.sparse as sp

from .._base import QPSolver
from .basis import DEFAULT_CHUNK_ELEMENTS, row_chunks, tensor_design

__all__ = [
    "GramStats",
    "accumulate_gram",
    "monotone_constraints",
    "MonotoneQP",
    "solve_monotone_qp",
    "project_monotone",
    "heldout_sse",
]


@dataclass
class GramStats:
    """Sufficient statistics of weighted least squares on a Bernstein design.

    ``G = Phi' W Phi`` (P x P), ``b = Phi' W y``, ``yy = y' W y``, ``sw = sum(w)``.
    Instances add, so fold statistics can be combined or subtracted.
    """

    G: np.ndarray
    b: np.ndarray
    yy: float
    sw: float

    def __add__(self, other: GramStats) -> GramStats:
        return GramStats(self.G + other.G, self.b + other.b, self.yy + other.yy, self.sw + other.sw)

    def __sub__(self, other: GramStats) -> GramStats:
        return GramStats(self.G - other.G, self.b - other.b, self.yy - other.yy, self.sw - other.sw)


@lru_cache(maxsize=1)
def _blas_controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def accumulate_gram(
    U: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    degrees: Sequence[int],
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS,
) -> GramStats:
    """Accumulate ``GramStats`` over row chunks of the tensor design.

    BLAS runs single-threaded here: the products are skinny (``chunk x P`` by ``P``), gain
    little from threads, and multithreaded OpenBLAS busy-waits when the cores are shared
    (measured 25x slower at n = 1e6 on a loaded 2-core machine; 0.36 s single-threaded).
    """
    P = int(np.prod([k + 1 for k in degrees]))
    G = np.zeros((P, P))
    b = np.zeros(P)
    with _blas_controller().limit(limits=1, user_api="blas"):
        for rows in row_chunks(U.shape[0], P, chunk_elements):
            Phi = tensor_design(U[rows], degrees)
            wPhi = Phi * w[rows, None]
            G += wPhi.T @ Phi
            b += wPhi.T @ y[rows]
    return GramStats(G, b, float(np.dot(w, y * y)), float(w.sum()))


@lru_cache(maxsize=64)
def monotone_constraints(shape: tuple[int, ...]) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray]:
    """Rows ``beta[.., k+1, ..] - beta[.., k, ..] >= 0`` along each axis, then ``0 <= beta <= 1``.

    Returns ``(A, lower, upper)`` for ``lower <= A beta <= upper`` with ``beta`` flattened in
    C order. Cached per shape (callers must not modify the arrays).
    """
    shape = tuple(int(s) for s in shape)
    P = int(np.prod(shape))
    idx = np.arange(P).reshape(shape)
    lo = [np.take(idx, np.arange(s - 1), axis=a).ravel() for a, s in enumerate(shape)]
    hi = [np.take(idx, np.arange(1, s), axis=a).ravel() for a, s in enumerate(shape)]
    lo, hi = np.concatenate(lo), np.concatenate(hi)
    n_diff = lo.shape[0]
    rows = np.concatenate([np.arange(n_diff), np.arange(n_diff), n_diff + np.arange(P)])
    cols = np.concatenate([lo, hi, np.arange(P)])
    vals = np.concatenate([-np.ones(n_diff), np.ones(n_diff), np.ones(P)])
    A = sp.csc_matrix((vals, (rows, cols)), shape=(n_diff + P, P))
    lower = np.zeros(n_diff + P)
    upper = np.concatenate([np.full(n_diff, np.inf), np.ones(P)])
    return A, lower, upper


@lru_cache(maxsize=16)
def _upper_pattern(P: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows, cols = np.triu_indices(P)
    order = np.lexsort((rows, cols))  # column-major, as CSC stores it
    indptr = np.concatenate([[0], np.cumsum(np.arange(1, P + 1))])
    return rows[order], cols[order], indptr


def _dense_upper_csc(G: np.ndarray) -> sp.csc_matrix:
    """Upper triangle of a dense matrix as CSC with every position stored (zeros included).

    A fixed sparsity pattern lets :class:`QPSolver` update ``P`` in place across folds.
    """
    rows, cols, indptr = _upper_pattern(G.shape[0])
    return sp.csc_matrix((G[rows, cols], rows, indptr), shape=G.shape)


class MonotoneQP:
    """The monotone Bernstein QP for one coefficient shape, solved for varying statistics.

    Minimizes ``sum_i w_i (Phi_i beta - y_i)^2 / sum(w)`` under the monotone constraints;
    successive solves (cross-validation folds) reuse OSQP's workspace and warm start.
    """

    def __init__(self, shape: Sequence[int], **osqp_settings):
        self.shape = tuple(int(s) for s in shape)
        A, lower, upper = monotone_constraints(self.shape)
        self._qp = QPSolver(A, lower, upper, problem="BernsteinFusion QP", **osqp_settings)

    def solve(self, stats: GramStats) -> tuple[np.ndarray, str]:
        """Coefficient tensor (exactly feasible, see :func:`project_monotone`) and status."""
        scale = 1.0 / stats.sw
        x, status = self._qp.solve(_dense_upper_csc(stats.G * scale), -stats.b * scale)
        return project_monotone(x.reshape(self.shape)), status


def project_monotone(beta: np.ndarray) -> np.ndarray:
    """Make a coefficient tensor exactly feasible: running maximum along each axis, then clip.

    A running maximum along one axis keeps monotonicity along the axes already treated, so
    after the sweep ``beta`` is monotone along every axis to machine precision; clipping to
    ``[0, 1]`` keeps that.
    """
    beta = np.array(beta, dtype=float)
    for axis in range(beta.ndim):
        beta = np.maximum.accumulate(beta, axis=axis)
    return np.clip(beta, 0.0, 1.0)


def solve_monotone_qp(
    stats: GramStats, shape: Sequence[int], **osqp_settings
) -> tuple[np.ndarray, str]:
    """One-off :class:`MonotoneQP` solve. Raises :class:`fusion.SolverError` on failure."""
    return MonotoneQP(shape, **osqp_settings).solve(stats)


def heldout_sse(stats: GramStats, beta: np.ndarray) -> float:
    """Weighted squared error ``sum_i w_i (Phi_i beta - y_i)^2`` from sufficient statistics."""
    x = beta.reshape(-1)
    return float(x @ stats.G @ x - 2.0 * stats.b @ x + stats.yy)
