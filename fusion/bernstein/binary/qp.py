"""The monotone least-squares QP of BernsteinFusion's rank-only model (Wang & Liu 2020, QP
(13), any M) and its sufficient statistics.

The objective only needs the sufficient statistics ``G = Phi' W Phi``, ``b = Phi' W y`` and
``yy = y' W y``, which add over row blocks, so they are accumulated in chunks: memory is
``O(P^2 + chunk * P)`` and never ``O(n * P)``.

Constraints (Theorem 1 generalized to M axes): ``beta`` non-decreasing along every axis and
``0 <= beta <= 1``. Together with monotonicity the box is equivalent to the paper's two
corner constraints (``beta[0,...,0] >= 0`` and ``beta[K_1,...,K_M] <= 1``); stating it for all
coefficients keeps the constraint matrix trivially well scaled.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import scipy.sparse as sp

from ..._lstsq import LeastSquaresStats
from ..._solver import (
    DenseUpper,
    QPSolver,
    difference_constraints,
    monotone_constraints,
    one_blas_thread,
    tensor_axis_pairs,
)
from ..basis import DEFAULT_CHUNK_ELEMENTS, row_chunks
from ..structure import Structure

__all__ = [
    "accumulate_gram",
    "MonotoneQP",
    "StructuredQP",
    "structure_constraints",
    "project_structured",
    "project_monotone",
]


def accumulate_gram(
    U: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    structure: Structure,
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS,
) -> LeastSquaresStats:
    """Accumulate ``LeastSquaresStats`` over row chunks of the design of ``structure``."""
    P = structure.n_coef
    G = np.zeros((P, P))
    b = np.zeros(P)
    unit = bool(np.all(w == 1.0))
    root_w = None if unit else np.sqrt(w)
    wy = y if unit else w * y
    # With few coefficients the GEMM is a small part of the work (building the design is
    # single-threaded numpy), and a threaded BLAS then costs more than it saves: on a busy
    # machine its spinning threads made fits 5-10x slower in our measurements. (Every
    # estimator's fit runs with one thread already, FusionEstimator.fit; this is for direct
    # callers.)
    with one_blas_thread() if P <= SMALL_P else contextlib.nullcontext():
        for rows in row_chunks(U.shape[0], P, chunk_elements):
            Uc = U[rows]
            # The design is built transposed, (P, c): both products below are then plain
            # GEMV / GEMM calls on contiguous rows.
            PhiT = structure.design_rows(Uc)
            # Q Q' with Q = Phi' sqrt(W): numpy hands A @ A.T to SYRK (half the flops).
            Q = PhiT if unit else PhiT * root_w[rows]
            G += Q @ Q.T
            b += PhiT @ wy[rows]
    return LeastSquaresStats(G, b, float(np.dot(w, y * y)), float(w.sum()))


#: Up to this many coefficients the Gram accumulation runs with one BLAS thread.
SMALL_P = 256


class MonotoneQP:
    """The monotone Bernstein QP for one coefficient shape, solved for varying statistics.

    Minimizes ``sum_i w_i (Phi_i beta - y_i)^2 / sum(w)`` under the monotone constraints;
    successive solves (cross-validation folds) reuse OSQP's workspace and warm start.
    """

    def __init__(self, shape: Sequence[int], **osqp_settings):
        self.shape = tuple(int(s) for s in shape)
        A, lower, upper = monotone_constraints(self.shape)
        self._qp = QPSolver(A, lower, upper, problem="BernsteinFusion QP", **osqp_settings)

    def solve(self, stats: LeastSquaresStats) -> tuple[np.ndarray, str]:
        """Coefficient tensor (exactly feasible, see :func:`project_monotone`) and status."""
        scale = 1.0 / stats.sw
        x, status = self._qp.solve(DenseUpper(stats.G * scale), -stats.b * scale)
        return project_monotone(x.reshape(self.shape)), status

    @property
    def last_iterations(self) -> int:
        """OSQP's iteration count of the most recent :meth:`solve`."""
        return self._qp.last_iterations


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


# -- structured models (sums of monotone components) -------------------------------------------


@lru_cache(maxsize=64)
def structure_constraints(
    shapes: tuple[tuple[int, ...], ...],
) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray]:
    """Linear constraints of a sum of monotone tensor components, ``f = sum_c f_c``.

    Rows, for the flat vector of all components' coefficients (C order, component after
    component):

    * ``beta_c`` non-decreasing along each axis of every component ``c``;
    * ``beta_c[0, ..., 0] = 0`` for every component but the first (a constant can move
      freely between components; pinning it keeps the solution unique in that direction);
    * ``beta_1[0, ..., 0] >= 0`` and ``sum_c beta_c[K, ..., K] <= 1``.

    Each component is then non-decreasing in each of its coordinates (a Bernstein
    polynomial's partial derivative is a non-negative combination of the forward
    differences of its coefficients), hence so is ``f``, and on the cube
    ``f(0) <= f(u) <= f(1)``. At the corners every basis function vanishes but the first or
    the last, so ``f(0) = sum_c beta_c[0, ..., 0]`` and ``f(1) = sum_c beta_c[K, ..., K]``:
    the two corner rows make ``0 <= f <= 1`` on the whole cube, and are also necessary for
    it. Cached per shapes (callers must not modify the arrays).
    """
    sizes = [int(np.prod(s)) for s in shapes]
    offsets = np.cumsum([0, *sizes])
    P = int(offsets[-1])
    pairs = [tensor_axis_pairs(shape, off) for off, shape in zip(offsets[:-1], shapes, strict=True)]
    D, d_lower, d_upper = difference_constraints(
        np.concatenate([hi for hi, _ in pairs]), np.concatenate([lo for _, lo in pairs]), P
    )
    D = D.tocoo()
    rows, cols, vals = [D.row], [D.col], [D.data]
    lower, upper = [d_lower], [d_upper]
    r = D.shape[0]
    first = offsets[:-1]
    last = offsets[1:] - 1
    # pinned 0-corners, then the first component's 0-corner >= 0
    for c, f in enumerate(first):
        rows.append(np.array([r]))
        cols.append(np.array([f]))
        vals.append(np.ones(1))
        lower.append(np.zeros(1))
        upper.append(np.zeros(1) if c > 0 else np.full(1, np.inf))
        r += 1
    rows.append(np.full(len(last), r))
    cols.append(np.asarray(last))
    vals.append(np.ones(len(last)))
    lower.append(np.full(1, -np.inf))
    upper.append(np.ones(1))
    r += 1
    A = sp.csc_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r, P)
    )
    return A, np.concatenate(lower), np.concatenate(upper)


def project_structured(x: np.ndarray, structure: Structure) -> np.ndarray:
    """Make a structured coefficient vector exactly feasible (see :func:`structure_constraints`).

    Every component is made monotone (:func:`project_monotone` without the clip); every
    component but the first is shifted so its 0-corner is 0 (a shift keeps monotonicity and
    makes it non-negative); the first is clipped to ``[0, 1 - sum of the others' maxima]``
    (clipping keeps monotonicity), which makes both corner rows hold.
    """
    parts = []
    for c, comp in enumerate(structure.split(x)):
        for axis in range(comp.ndim):
            comp = np.maximum.accumulate(comp, axis=axis)
        if c > 0:
            comp = comp - comp.reshape(-1)[0]
        parts.append(comp)
    rest = sum(float(p.reshape(-1)[-1]) for p in parts[1:])
    if rest > 1.0:  # only after a grossly inaccurate solve: shrink the others to fit
        parts[1:] = [p / rest for p in parts[1:]]
        rest = 1.0
    parts[0] = np.clip(parts[0], 0.0, 1.0 - rest)
    return np.concatenate([p.reshape(-1) for p in parts])


class StructuredQP:
    """The least-squares QP of a structured model, solved for varying statistics.

    Same interface as :class:`MonotoneQP`; ``solve`` returns the flat coefficient vector.
    """

    def __init__(self, structure: Structure, **osqp_settings):
        self.structure = structure
        A, lower, upper = structure_constraints(structure.shapes)
        self._qp = QPSolver(A, lower, upper, problem="BernsteinFusion QP", **osqp_settings)

    def solve(self, stats: LeastSquaresStats) -> tuple[np.ndarray, str]:
        scale = 1.0 / stats.sw
        x, status = self._qp.solve(DenseUpper(stats.G * scale), -stats.b * scale)
        return project_structured(x, self.structure), status

    @property
    def last_iterations(self) -> int:
        """OSQP's iteration count of the most recent :meth:`solve`."""
        return self._qp.last_iterations
