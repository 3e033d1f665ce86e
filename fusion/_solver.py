"""The numerical-solver layer: the OSQP and Clarabel boundary, their errors, monotone
constraints, BLAS threads.

Every OSQP call in the package goes through :class:`QPSolver`; the small dense QPs that need
an exact active set (a handful of variables, hundreds of constraints) go to Clarabel's
interior point through :func:`solve_small_qp`; every "coordinate-wise
non-decreasing" constraint is built by :func:`difference_constraints` (from index pairs, such
as :func:`tensor_axis_pairs` for a coefficient tensor or the dominance edges of MR-MIC's
training points). Swapping the QP solver, or warm-starting a path, touches this module only.
"""

from __future__ import annotations

import threading
import warnings
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, NoReturn

import numpy as np
import scipy.sparse as sp

from ._warn import caller_level

__all__ = [
    "SolverError",
    "SolverWarning",
    "QPSolver",
    "StepQPSolver",
    "DenseUpper",
    "solve_small_qp",
    "difference_constraints",
    "tensor_axis_pairs",
    "monotone_constraints",
    "one_blas_thread",
]


class SolverError(RuntimeError):
    """A numerical solver stopped without a usable solution.

    Attributes
    ----------
    status : str
        The solver's own status string (e.g. ``"maximum iterations reached"``).
    solver : str
        Which solver reported it.
    """

    def __init__(self, message: str, *, status: str, solver: str):
        super().__init__(message)
        self.status = status
        self.solver = solver


class SolverWarning(UserWarning):
    """A solver returned a solution flagged as inaccurate; the result is used but suspect."""


class QPSolver:
    """One OSQP problem ``min 0.5 x'Px + q'x  s.t.  lower <= Ax <= upper``, solved repeatedly.

    The constraints are fixed; ``P`` (same sparsity pattern every time) and ``q`` may change
    between calls, which then reuse OSQP's workspace and warm-start from the last solution
    (cross-validation folds, regularization paths, Newton steps).

    Parameters
    ----------
    A : scipy.sparse matrix
    lower, upper : ndarray
    problem : str
        Name of the problem, used in messages.
    **settings
        OSQP settings; ``verbose`` defaults to False.

    Attributes
    ----------
    last_iterations : int
        OSQP's iteration count of the most recent :meth:`solve` (0 before the first), also
        when that solve raised :class:`SolverError`; estimators report it as ``n_iter_``.

    Notes
    -----
    Callers in this package leave OSQP's solution polishing off: in OSQP 1.x it prints a line
    to stdout on every solve with an empty active set whatever ``verbose`` says (osqp issue
    #785), and it can accept a polished point far outside the tolerances (osqp issue #790).
    Tight ``eps_abs``/``eps_rel`` plus an exact projection onto the feasible set are used
    instead.
    """

    def __init__(self, A, lower, upper, *, problem: str, **settings: Any):
        self.A = sp.csc_matrix(A)
        self.lower = np.asarray(lower, dtype=float)
        self.upper = np.asarray(upper, dtype=float)
        self.problem = problem
        self.settings = {"verbose": False, **settings}
        self._solver = None
        self.last_iterations = 0

    def solve(self, P: sp.csc_matrix, q: np.ndarray) -> tuple[np.ndarray, str]:
        """Solve with this ``P`` (upper triangle, CSC, or any object with the CSC ``data``
        of the first call's pattern and a ``tocsc()``) and ``q``.

        Returns
        -------
        x : ndarray
        status : str
            ``"solved"``, or ``"solved inaccurate"`` with a :class:`SolverWarning`.

        Raises
        ------
        SolverError
            Any other OSQP status (iteration or time limit, infeasible, non-convex, ...).
        """
        result = self._run(P, q)
        status = str(result.info.status)
        finite = result.x is not None and bool(np.all(np.isfinite(result.x)))
        if status == "solved" and finite:
            return np.asarray(result.x, dtype=float), status
        if status == "solved inaccurate" and finite:
            warnings.warn(
                f"OSQP returned '{status}' for the {self.problem} after {result.info.iter} "
                f"iterations (primal residual {result.info.prim_res:.2e}); the solution is used "
                "after projection onto the feasible set. Raise max_iter to silence this.",
                SolverWarning,
                stacklevel=caller_level(),
            )
            return np.asarray(result.x, dtype=float), status
        self._fail(status, result)

    def _run(self, P: sp.csc_matrix, q: np.ndarray, **bounds):
        """OSQP's result for this ``P`` and ``q`` (set up on the first call, updated after,
        with new bounds ``l``, ``u`` in the same update when given). ``P`` may be any object
        with the CSC ``data`` of the first call's sparsity pattern and a ``tocsc()``."""
        import osqp

        if self._solver is None:
            self._solver = osqp.OSQP()
            self._solver.setup(P.tocsc(), q, self.A, self.lower, self.upper, **self.settings)
        else:
            self._solver.update(Px=P.data, q=q, **bounds)
        result = self._solver.solve(raise_error=False)
        self.last_iterations = int(result.info.iter)
        return result

    def _fail(self, status: str, result) -> NoReturn:
        raise SolverError(
            f"OSQP could not solve the {self.problem}: status '{status}' after "
            f"{result.info.iter} iterations.",
            status=status,
            solver="osqp",
        )


@lru_cache(maxsize=16)
def _upper_pattern(P: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows, cols = np.triu_indices(P)
    order = np.lexsort((rows, cols))  # column-major, as CSC stores it
    indptr = np.concatenate([[0], np.cumsum(np.arange(1, P + 1))])
    return rows[order], cols[order], indptr


class DenseUpper:
    """The upper triangle of a dense symmetric matrix, every position stored (zeros
    included), as :class:`QPSolver` takes ``P``: its CSC ``data``, and the SciPy matrix only
    for OSQP's setup (:meth:`tocsc`).

    The fixed sparsity pattern lets the solver update ``P`` in place across folds and Newton
    steps; a Newton path updates it hundreds of times, and building a SciPy matrix each time
    cost about a tenth of a cross-validation path on 2,800 cells.
    """

    __slots__ = ("data", "n")

    def __init__(self, G: np.ndarray):
        rows, cols, _ = _upper_pattern(G.shape[0])
        self.data, self.n = G[rows, cols], G.shape[0]

    def tocsc(self) -> sp.csc_matrix:
        rows, _, indptr = _upper_pattern(self.n)
        return sp.csc_matrix((self.data, rows, indptr), shape=(self.n, self.n))


class StepQPSolver(QPSolver):
    """A :class:`QPSolver` whose constraint bounds may change between solves.

    Newton steps of :mod:`fusion.bernstein.binary.logistic` solve for the step ``d`` from a feasible
    ``x``: the constraints ``lower <= A (x + d) <= upper`` become ``lower - A x <= A d <=
    upper - A x``, the same matrix with new bounds. Formulated in ``d`` rather than in
    ``x + d``, OSQP's relative tolerances scale with the step and the gradient, which both
    vanish at the optimum, so the steps stay accurate to the end.
    """

    #: Statuses after which OSQP's last iterate is still used as a step direction: Newton's
    #: projection and line search keep every iterate feasible and decreasing, and the
    #: Newton decrement, not the QP, decides convergence.
    INEXACT = ("solved inaccurate", "maximum iterations reached")

    def solve(self, P, q, lower=None, upper=None) -> tuple[np.ndarray, str]:
        """Solve with this ``P``, ``q`` and (when given) new bounds; see :meth:`QPSolver.solve`.

        Unlike :meth:`QPSolver.solve`, an inexact step (iteration limit or "solved
        inaccurate") is returned without a warning.
        """
        bounds = {}
        if lower is not None:
            self.lower = np.asarray(lower, dtype=float)
            self.upper = np.asarray(upper, dtype=float)
            if self._solver is not None:  # one update with P and q (setup takes them else)
                bounds = {"l": self.lower, "u": self.upper}
        result = self._run(P, q, **bounds)
        status = str(result.info.status)
        finite = result.x is not None and bool(np.all(np.isfinite(result.x)))
        if finite and (status == "solved" or status in self.INEXACT):
            return np.asarray(result.x, dtype=float), status
        self._fail(status, result)


def solve_small_qp(
    P: np.ndarray, q: np.ndarray, A: np.ndarray, lower: np.ndarray, upper: np.ndarray,
    *, problem: str,
) -> np.ndarray:  # fmt: skip
    """``argmin 0.5 x'Px + q'x  s.t.  lower <= Ax <= upper`` for a small dense problem, by
    Clarabel's interior point (accurate to about 1e-8 in a few dozen iterations, where
    OSQP's first-order steps on a problem with flat directions need thousands).

    Raises
    ------
    SolverError
        Any status but solved (or "almost solved", Clarabel's reduced tolerances).
    """
    import clarabel

    A = np.asarray(A, dtype=float)
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    up, low = np.isfinite(upper), np.isfinite(lower)
    G = np.vstack([A[up], -A[low]])  # G x <= h
    h = np.r_[upper[up], -lower[low]]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    solver = clarabel.DefaultSolver(
        sp.triu(sp.csc_matrix(P)).tocsc(), np.asarray(q, dtype=float), sp.csc_matrix(G), h,
        [clarabel.NonnegativeConeT(h.shape[0])], settings,
    )  # fmt: skip
    result = solver.solve()
    status = str(result.status)
    if status.endswith("Solved"):  # "Solved" or "AlmostSolved"
        return np.asarray(result.x, dtype=float)
    raise SolverError(
        f"Clarabel could not solve the {problem}: status '{status}'.",
        status=status,
        solver="clarabel",
    )


# ---------------------------------------------------------------------------------------------
# "Coordinate-wise non-decreasing" constraints.


def difference_constraints(
    hi: np.ndarray,
    lo: np.ndarray,
    n_vars: int,
    *,
    box: tuple[float, float] | None = None,
) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray]:
    """Rows ``x[hi[e]] - x[lo[e]] >= 0`` for every pair ``e``, then optionally a box.

    Parameters
    ----------
    hi, lo : ndarray of int
        Index pairs: ``x[hi]`` must not be below ``x[lo]``.
    n_vars : int
        Length of ``x``.
    box : (lower, upper), optional
        Adds the rows ``lower <= x <= upper`` (an identity block) after the differences.

    Returns
    -------
    A, lower, upper
        For ``lower <= A x <= upper``; ``A`` is CSC.
    """
    hi = np.asarray(hi, dtype=np.int64).reshape(-1)
    lo = np.asarray(lo, dtype=np.int64).reshape(-1)
    m = hi.shape[0]
    rows = [np.arange(m), np.arange(m)]
    cols = [hi, lo]
    vals = [np.ones(m), -np.ones(m)]
    lower = [np.zeros(m)]
    upper = [np.full(m, np.inf)]
    if box is not None:
        rows.append(m + np.arange(n_vars))
        cols.append(np.arange(n_vars))
        vals.append(np.ones(n_vars))
        lower.append(np.full(n_vars, float(box[0])))
        upper.append(np.full(n_vars, float(box[1])))
    n_rows = m + (n_vars if box is not None else 0)
    A = sp.csc_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(n_rows, n_vars),
    )
    return A, np.concatenate(lower), np.concatenate(upper)


def tensor_axis_pairs(shape: tuple[int, ...], offset: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(hi, lo)``: the index of each entry of a C-ordered tensor and of its predecessor along
    each axis, every axis in turn (``offset`` is added to both)."""
    shape = tuple(int(s) for s in shape)
    idx = offset + np.arange(int(np.prod(shape))).reshape(shape)
    lo = [np.take(idx, np.arange(s - 1), axis=a).ravel() for a, s in enumerate(shape)]
    hi = [np.take(idx, np.arange(1, s), axis=a).ravel() for a, s in enumerate(shape)]
    if not lo:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(hi), np.concatenate(lo)


@lru_cache(maxsize=64)
def monotone_constraints(
    shape: tuple[int, ...], box: tuple[float, float] | None = (0.0, 1.0)
) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray]:
    """A C-ordered tensor non-decreasing along every axis, then (by default) ``0 <= x <= 1``.

    Cached per ``(shape, box)`` (callers must not modify the arrays).
    """
    shape = tuple(int(s) for s in shape)
    hi, lo = tensor_axis_pairs(shape)
    return difference_constraints(hi, lo, int(np.prod(shape)), box=box)


# ---------------------------------------------------------------------------------------------
# BLAS threads.

_blas_lock = threading.Lock()
_blas_depth = 0
_blas_limiter = None


@contextmanager
def one_blas_thread():
    """Limit BLAS/LAPACK to one thread for the duration of the block; restore it after.

    For many small BLAS calls (skinny Gram updates, one tiny LAPACK call per Delaunay
    simplex) threads gain nothing, and multithreaded OpenBLAS busy-waits when the cores are
    shared: measured 5-25x slower fits on a loaded 2-core machine.

    The limit is process-wide, so it is only set from the main thread and reference-counted
    there: the first block records the current limits and sets one thread, the last one to
    leave restores what it recorded, so nested blocks never restore a limit set by another.
    In other threads the block changes nothing: OpenBLAS ignores a thread count raised from
    one thread while a thread that lowered it is still alive (observed with OpenBLAS 0.3 on
    Linux), so a limit set from a worker thread of a pool could never be reliably restored.
    """
    global _blas_depth, _blas_limiter
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with _blas_lock:
        if _blas_depth == 0:
            from threadpoolctl import threadpool_limits

            _blas_limiter = threadpool_limits(limits=1, user_api="blas")
        _blas_depth += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_depth -= 1
            if _blas_depth == 0:
                limiter, _blas_limiter = _blas_limiter, None
                limiter.restore_original_limits()
