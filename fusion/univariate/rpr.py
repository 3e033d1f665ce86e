"""Shape-restricted polynomial regression (RPR; Wang, Li & Dang 2019) as an exact SDP.

On ECDF-normalized scores ``s`` in ``[0, 1]`` RPR fits ``p(s) = sum_l a_l s^l`` of degree
``k`` by weighted least squares subject to (paper, problem (18))

* ``p(0) >= 0`` and ``p(1) <= 1``,
* ``sum_l |a_l| <= lam`` (``a``: monomial coefficients in ``s``),
* ``p'(s) >= 0`` for every ``s`` in ``[0, 1]``.

The last, semi-infinite constraint is imposed *exactly* through the Markov-Lukacs theorem
(the paper's Lemma 1): a polynomial ``q`` of degree ``d`` is nonnegative on an interval iff

* ``d = 2m``: ``q = sigma_0 + (1 - x^2) sigma_1`` with ``deg sigma_0 <= 2m``,
  ``deg sigma_1 <= 2m - 2``;
* ``d = 2m + 1``: ``q = (1 + x) sigma_0 + (1 - x) sigma_1`` with ``deg sigma_i <= 2m``,

with ``sigma_i`` sums of squares, i.e. ``sigma_i = v_i(x)' G_i v_i(x)`` with ``G_i`` positive
semidefinite and ``v_i`` any basis of the polynomials of half the degree. This is the
Hankel representation of programs (22)/(23) written on ``x = 2s - 1`` in ``[-1, 1]`` and in
the Chebyshev basis: ``p = sum_j c_j T_j(x)``, ``v_i = (T_0, ..., T_{m_i})``, and the
coefficient-matching maps ``G_i -> q`` come from the product rule
``T_i T_j = (T_{i+j} + T_{|i-j|}) / 2`` (Toeplitz-plus-Hankel instead of Hankel). They are
generated programmatically for any degree and either parity (:func:`sos_coefficient_maps`).
Changing the basis of ``v_i`` leaves the set of representable polynomials unchanged, so the
certificate stays necessary *and* sufficient; only the conditioning improves. The monomial
coefficients for the ``l1`` bound are the exact linear image ``a = A c``
(:func:`monomial_matrix`).

Why not the monomial basis directly: the least-squares Gram matrix of ``1, s, ..., s^k`` on
``[0, 1]`` is a Hilbert-like matrix (condition number ~1e13 at ``k = 10``, beyond double
precision at ``k = 20``), while the Chebyshev design on ECDF-uniform points is close to
orthogonal. The ``l1`` bound of the paper is kept on the monomial coefficients and remains
the one badly scaled constraint (``A`` has entries up to ``2^(2k-1)``); when Clarabel fails on
it, the same problem is solved again with the monomial coefficients as variables, then with
SCS (see :class:`RPRProblem`).

Every solution is finally made exactly feasible (:func:`repair`): solvers meet constraints
only to ~1e-8, so the derivative's minimum on ``[0, 1]`` is computed from the real roots of
``p''`` and, if negative, the slope is raised by that amount; the end-point conditions are
then restored by a positive affine map. Both steps keep ``p`` non-decreasing and change it
by the solver tolerance only; the ``l1`` bound may be exceeded by the same tiny amount.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from functools import lru_cache
from numbers import Integral, Real

import numpy as np
from numpy.polynomial import Chebyshev, Polynomial
from numpy.polynomial import chebyshev as cheb
from sklearn.utils._param_validation import Interval, StrOptions

from .._docs import estimator_doc
from .._lstsq import LeastSquaresStats, heldout_sse
from .._solver import SolverError, SolverWarning
from .._warn import caller_level
from .reduction import UnivariateCalibrator

__all__ = [
    "RPRStats",
    "chebyshev_design",
    "accumulate_stats",
    "sos_coefficient_maps",
    "derivative_matrix",
    "monomial_matrix",
    "RPRProblem",
    "solve_rpr",
    "repair",
    "derivative_minimum",
    "evaluate",
    "heldout_sse",
    "RPRCalibrator",
    "DEFAULT_DEGREE_GRID",
    "DEFAULT_LAM_GRID",
]


# ---------------------------------------------------------------------------------------------
# Basis, design and sufficient statistics.


def chebyshev_design(s: np.ndarray, degree: int) -> np.ndarray:
    """``T_j(2 s - 1)`` for ``j = 0..degree``: the design on ``[0, 1]``, shape ``(n, k + 1)``."""
    return cheb.chebvander(2.0 * np.asarray(s, dtype=float) - 1.0, int(degree))


class RPRStats(LeastSquaresStats):
    """:class:`~fusion._lstsq.LeastSquaresStats` of the Chebyshev design; a degree's
    statistics are the leading blocks of a higher degree's (:meth:`truncate`)."""

    def truncate(self, degree: int) -> RPRStats:
        return super().truncate(int(degree) + 1)


def accumulate_stats(s: np.ndarray, y: np.ndarray, w: np.ndarray, degree: int) -> RPRStats:
    """:class:`RPRStats` of the Chebyshev design of ``degree`` on points ``s`` in ``[0, 1]``."""
    return RPRStats.from_design(chebyshev_design(s, degree), y, w)


def evaluate(coef: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``p(s)`` for Chebyshev coefficients ``coef`` on ``[0, 1]``."""
    return cheb.chebval(2.0 * np.asarray(s, dtype=float) - 1.0, coef)


# ---------------------------------------------------------------------------------------------
# The exact nonnegativity certificate.


def _unit(j: int) -> np.ndarray:
    e = np.zeros(j + 1)
    e[j] = 1.0
    return e


@lru_cache(maxsize=64)
def sos_coefficient_maps(d: int) -> tuple[tuple[np.ndarray, int], ...]:
    """Linear maps from Gram matrices to a polynomial nonnegative on ``[-1, 1]`` (any degree).

    Parameters
    ----------
    d : int
        Degree of the polynomial ``q`` to certify, ``d >= 0``.

    Returns
    -------
    maps : tuple of ``(A, size)``
        ``q``'s Chebyshev coefficients (length ``d + 1``) are ``sum_i A_i @ vec(G_i)`` for
        positive semidefinite ``G_i`` of shape ``(size_i, size_i)`` (``vec`` in C order), and
        every ``q`` nonnegative on ``[-1, 1]`` arises so (Markov-Lukacs). Even ``d = 2m``:
        multipliers ``1`` (size ``m + 1``) and ``1 - x^2`` (size ``m``, omitted for ``m = 0``);
        odd ``d = 2m + 1``: multipliers ``1 + x`` and ``1 - x`` (both size ``m + 1``).
    """
    d = int(d)
    if d < 0:
        raise ValueError(f"degree must be non-negative, got {d}.")
    if d % 2 == 0:
        m = d // 2
        parts = [(np.array([1.0]), m + 1)]
        if m >= 1:
            parts.append((np.array([0.5, 0.0, -0.5]), m))  # 1 - x^2 = (T_0 - T_2) / 2
    else:
        m = (d - 1) // 2
        parts = [(np.array([1.0, 1.0]), m + 1), (np.array([1.0, -1.0]), m + 1)]
    maps = []
    for mult, size in parts:
        A = np.zeros((d + 1, size * size))
        for i in range(size):
            for j in range(size):
                prod = cheb.chebmul(cheb.chebmul(_unit(i), _unit(j)), mult)
                if np.any(prod[d + 1 :] != 0):  # pragma: no cover - degrees are exact
                    raise AssertionError("certificate degree mismatch")
                A[: min(prod.size, d + 1), i * size + j] = prod[: d + 1]
        A.setflags(write=False)
        maps.append((A, size))
    return tuple(maps)


@lru_cache(maxsize=64)
def derivative_matrix(degree: int) -> np.ndarray:
    """``D`` with ``D @ c`` the Chebyshev coefficients of ``dp/dx`` (shape ``(k, k + 1)``).

    ``dp/ds = 2 dp/dx``, so ``p' >= 0`` on ``[0, 1]`` iff ``D c`` is nonnegative on ``[-1, 1]``.
    """
    k = int(degree)
    D = np.zeros((max(k, 1), k + 1))
    for j in range(1, k + 1):
        dj = cheb.chebder(_unit(j))
        D[: dj.size, j] = dj
    D.setflags(write=False)
    return D


@lru_cache(maxsize=64)
def monomial_matrix(degree: int) -> np.ndarray:
    """``A`` with ``a = A @ c`` the monomial coefficients in ``s`` of ``sum_j c_j T_j(2s - 1)``."""
    k = int(degree)
    A = np.zeros((k + 1, k + 1))
    for j in range(k + 1):
        a = Chebyshev.basis(j, domain=[0.0, 1.0]).convert(kind=Polynomial).coef
        A[: a.size, j] = a
    A.setflags(write=False)
    return A


# ---------------------------------------------------------------------------------------------
# Exact feasibility of a numerical solution.


def derivative_minimum(coef: np.ndarray) -> float:
    """Minimum of ``dp/ds`` over ``[0, 1]``, from the real roots of ``p''`` in the interval."""
    p = Chebyshev(np.asarray(coef, dtype=float))  # in x = 2s - 1
    d1 = p.deriv()
    xs = [-1.0, 1.0]
    if d1.degree() >= 1:
        d2 = d1.deriv()
        if d2.degree() >= 1:
            r = d2.roots()
            r = r[np.abs(r.imag) <= 1e-7 * (1 + np.abs(r.real))].real
            xs.extend(r[(r >= -1.0) & (r <= 1.0)].tolist())
    return float(2.0 * np.min(d1(np.asarray(xs))))


def repair(coef: np.ndarray) -> tuple[np.ndarray, float]:
    """Make a solver's polynomial exactly non-decreasing on ``[0, 1]`` with ``0 <= p <= 1`` ends.

    Returns the repaired Chebyshev coefficients and the slope added (0 when none was needed).
    """
    c = np.array(coef, dtype=float)
    added = 0.0
    if c.size >= 2:
        dmin = derivative_minimum(c)
        if dmin < 0:
            # dp/ds += delta via c_1 += delta / 2 (T_1 = x = 2s - 1); margin for rounding.
            added = -dmin * (1.0 + 1e-6) + 1e-14
            c[1] += added / 2.0
    lo_val = float(cheb.chebval(-1.0, c))
    hi_val = float(cheb.chebval(1.0, c))
    if lo_val < 0.0 or hi_val > 1.0:
        # a margin of a few ulps so that rounding in the map cannot undo it
        margin = 1e-14 * (1.0 + np.abs(c).sum())
        new_lo, new_hi = max(lo_val, margin), min(hi_val, 1.0 - margin)
        if hi_val - lo_val <= 0 or new_hi <= new_lo:
            c = np.zeros_like(c)
            c[0] = min(max(0.5 * (lo_val + hi_val), 0.0), 1.0)
        else:
            scale = (new_hi - new_lo) / (hi_val - lo_val)
            c *= scale
            c[0] += new_lo - scale * lo_val
    return c, added


# ---------------------------------------------------------------------------------------------
# The SDP.


class RPRProblem:
    """RPR's SDP for one degree, compiled once and re-solved for new statistics and ``lam``.

    Minimizes ``(c'Gc - 2 b'c) / sw`` (the weighted mean squared error up to a constant)
    over Chebyshev coefficients ``c`` subject to the constraints in the module docstring.
    ``lam = inf`` drops the ``l1`` bound. cvxpy parameters carry ``G``'s square root, ``b``
    and ``lam``, so re-solves skip canonicalization.

    Solver cascade: Clarabel on the Chebyshev formulation; if it does not return
    ``optimal``, Clarabel on the same problem with the monomial coefficients as variables
    (better behaved when the ``l1`` bound is tight); then SCS. The first ``optimal`` answer
    wins; otherwise the first ``optimal_inaccurate`` one is used with a
    :class:`~fusion.SolverWarning`; otherwise :class:`~fusion.SolverError` is raised.
    """

    def __init__(self, degree: int, *, scs_max_iters: int = 20_000):
        import cvxpy as cp

        k = int(degree)
        if k < 1:
            raise ValueError(f"RPR degree must be at least 1, got {degree}.")
        self.degree = k
        self.scs_max_iters = scs_max_iters
        self._R = cp.Parameter((k + 1, k + 1))
        self._b = cp.Parameter(k + 1)
        self._lam = cp.Parameter(nonneg=True)
        A = monomial_matrix(k)
        Q = np.linalg.solve(A, np.eye(k + 1))  # monomials s^l in the Chebyshev basis, |Q| <= 1
        self._forms = {}
        for form in ("chebyshev", "monomial"):
            if form == "chebyshev":
                c = cp.Variable(k + 1)
                coef, mono = c, A @ c
            else:
                a = cp.Variable(k + 1)
                coef, mono, c = Q @ a, a, a
            constraints = [
                derivative_matrix(k) @ coef == self._certificate(k - 1),
                np.ones(k + 1) @ coef <= 1.0,  # p(1) <= 1
                ((-1.0) ** np.arange(k + 1)) @ coef >= 0.0,  # p(0) >= 0
            ]
            objective = cp.Minimize(cp.sum_squares(self._R @ coef) - 2.0 * (self._b @ coef))
            self._forms[form] = (
                c,
                coef,
                cp.Problem(objective, constraints),
                cp.Problem(objective, [*constraints, cp.norm1(mono) <= self._lam]),
            )

    @staticmethod
    def _certificate(d: int):
        import cvxpy as cp

        expr = 0
        for A, size in sos_coefficient_maps(d):
            G = cp.Variable((size, size), PSD=True)
            expr = expr + A @ cp.vec(G, order="C")
        return expr

    def _attempts(self, bounded: bool):
        import cvxpy as cp

        yield "chebyshev", cp.CLARABEL, {}
        if bounded:
            yield "monomial", cp.CLARABEL, {}
        yield (
            "chebyshev",
            cp.SCS,
            {"eps_abs": 1e-8, "eps_rel": 1e-8, "max_iters": self.scs_max_iters},
        )

    def solve(self, stats: RPRStats, lam: float = np.inf) -> tuple[np.ndarray, str, str]:
        """Coefficients (Chebyshev, not yet repaired), cvxpy status and solver name."""
        import cvxpy as cp

        G = stats.truncate(self.degree).G / stats.sw
        e, V = np.linalg.eigh(0.5 * (G + G.T))
        self._R.value = (V * np.sqrt(np.clip(e, 0.0, None))).T
        self._b.value = stats.truncate(self.degree).b / stats.sw
        bounded = bool(np.isfinite(lam))
        if bounded:
            self._lam.value = float(lam)
        fallback = None
        statuses = []
        for form, solver, opts in self._attempts(bounded):
            _, coef, free, with_l1 = self._forms[form]
            problem = with_l1 if bounded else free
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # cvxpy's "may be inaccurate" chatter
                    problem.solve(solver=solver, **opts)
                status = problem.status
            except cp.error.SolverError:
                status = "solver_error"
            statuses.append(f"{solver}/{form}: {status}")
            value = None if status not in ("optimal", "optimal_inaccurate") else coef.value
            if value is None or not np.all(np.isfinite(value)):
                continue
            if status == "optimal":
                return np.asarray(value, dtype=float), status, solver
            if fallback is None:
                fallback = (np.asarray(value, dtype=float), status, solver)
        if fallback is not None:
            warnings.warn(
                f"RPR SDP (degree {self.degree}, lam {lam:g}) solved only inaccurately "
                f"({'; '.join(statuses)}); the solution is used after the exact repair.",
                SolverWarning,
                stacklevel=caller_level(),
            )
            return fallback
        raise SolverError(
            f"no solver could solve the RPR SDP (degree {self.degree}, lam {lam:g}): "
            f"{'; '.join(statuses)}.",
            status=statuses[-1].split(": ", 1)[1],
            solver="clarabel+scs",
        )


def solve_rpr(stats: RPRStats, degree: int, lam: float = np.inf) -> tuple[np.ndarray, str, str]:
    """One-off :class:`RPRProblem` solve followed by :func:`repair`.

    Returns the exactly feasible Chebyshev coefficients, the status and the solver.
    """
    c, status, solver = RPRProblem(degree).solve(stats, lam)
    return repair(c)[0], status, solver


# ---------------------------------------------------------------------------------------------
# The estimator.

#: Degrees tried by ``degree="cv"``. The paper's grid is ``4..20`` (Sec. 5.3); see
#: :class:`RPRCalibrator` for why the default stops earlier.
DEFAULT_DEGREE_GRID = (4, 5, 6, 7, 8, 10, 12)
#: ``l1`` bounds tried by ``lam="cv"``: ``5^i`` for ``i = -2..10`` (the paper uses
#: ``i = -10..10``; see :class:`RPRCalibrator`).
DEFAULT_LAM_GRID = tuple(5.0**i for i in range(-2, 11))


@estimator_doc
@dataclass(eq=False, repr=False)
class RPRCalibrator(UnivariateCalibrator):
    """Monotone polynomial calibration with an exact SDP certificate (RPR).

    Fits ``p(t) = sum_l a_l t^l`` on the normalized (and, for ``M >= 2``, combined) score
    ``t`` in ``[0, 1]`` by weighted least squares subject to ``p(0) >= 0``, ``p(1) <= 1``,
    ``sum |a_l| <= lam`` and ``p' >= 0`` on all of ``[0, 1]`` (Wang, Li & Dang 2019, problem
    (18)); the last constraint is an exact sum-of-squares certificate (Lemma 1, programs
    (22)/(23)) in a Chebyshev basis, see :mod:`fusion.univariate.rpr`. The fitted function
    of ``t`` is continuous, non-decreasing and valued in ``[0, 1]`` by construction; as a
    function of a raw score it is a non-decreasing step function (Notes).

    Parameters
    ----------
    degree : int or "cv", default="cv"
        Polynomial degree ``k >= 1``, or ``"cv"`` to choose it from ``degree_grid``.
    lam : float or "cv", default="cv"
        Bound on the ``l1`` norm of the monomial coefficients (``np.inf``: no bound), or
        ``"cv"`` to choose it from ``lam_grid``.
    {combine_parameter}
    degree_grid : sequence of int, optional
        Candidates for ``degree="cv"``; default :data:`DEFAULT_DEGREE_GRID`.
    lam_grid : sequence of float, optional
        Candidates for ``lam="cv"``; default :data:`DEFAULT_LAM_GRID`.
    cv : int, scikit-learn splitter or iterable of (train, test), default=3
        Cross-validation of ``degree="cv"``/``lam="cv"``: an int is a stratified K-fold
        whose folds follow the rows' content (equal rows share a fold) seeded by
        ``random_state``.
    random_state : int, RandomState or None, default=0
        Seeds the folds. The fixed default makes fits reproducible (refitting gives the
        same model); ``None`` draws new folds at every fit.
    increasing, missing, ecdf_knots, verbose
        Shared by every estimator; see :class:`~fusion.FusionEstimator`.

    Attributes
    ----------
    coef_ : ndarray of shape (degree_ + 1,)
        Chebyshev coefficients: ``p(t) = sum_j coef_[j] T_j(2 t - 1)``.
    monomial_coef_ : ndarray of shape (degree_ + 1,)
        The same polynomial's monomial coefficients ``a_l`` (the paper's parametrization).
    degree_ : int
    lam_ : float
    cv_scores_ : ndarray of shape (len(degree_grid_), len(lam_grid_))
        Held-out weighted Brier score of each candidate (NaN where no solver succeeded);
        only after cross-validation.
    degree_grid_, lam_grid_ : ndarray
        The candidates of ``cv_scores_``.
    solver_, solver_status_ : str
        Solver and cvxpy status of the final fit.
    repair_slope_ : float
        Slope added by the exact repair (0 when the solver's answer was already monotone).
    monotone_ : bool
        True unless ``combine="logistic"`` produced a negative coefficient.
    {reduction_attributes}

    Notes
    -----
    *Cross-validation.* Each candidate ``(degree, lam)`` is scored by the held-out weighted
    Brier score over ``cv`` folds (the paper uses 2-fold CV and the MCE of 10 bins; the
    Brier score is the criterion RPR itself minimizes and is far less noisy at small ``n``).
    Ties go to the smaller degree, then the smaller ``lam``. The least-squares statistics
    are accumulated once per fold at the highest degree (lower degrees are leading blocks)
    and every degree's SDP is compiled once and re-solved with new parameters. For each fold
    and degree the SDP is first solved without the ``l1`` bound; every ``lam`` at or above
    that solution's ``l1`` norm has the same answer and is not solved again.

    *Default grids.* The paper's grids (degrees ``4..20`` times ``5^-10..5^10``, 357
    candidates) cost about a thousand SDP solves per fit. The default keeps
    ``lam = 5^-2 .. 5^10``: below ``5^-2 = 0.04`` the bound forces ``|p| <= lam`` on
    ``[0, 1]``, a constant fit below almost any base rate. Degrees are
    ``4, 5, 6, 7, 8, 10, 12``: every degree adds a full column of ``lam`` solves, and above
    12 the monomial ``l1`` bound makes the SDP badly conditioned (its coefficients reach
    ``2^(2k)``; Clarabel then often fails at small ``lam`` and the slower fallbacks run).
    A default fit (91 candidates, 3 folds) takes about one second of CPU at ``n = 500``;
    the paper's grids take about 45 s (``benchmarks/RESULTS.md``). Very steep calibration
    curves can want higher degrees: pass ``degree_grid=range(4, 21)`` and
    ``lam_grid=5.0 ** np.arange(-10, 11)`` for the paper's grids.

    *Weights.* ``sample_weight`` weights the squared errors (and the folds' scores).

    {rank_invariance}
    """

    _monotone = True
    _monotone_1d = True
    _rank_based = True
    _parameter_constraints = {
        **UnivariateCalibrator._parameter_constraints,
        "degree": [Interval(Integral, 1, None, closed="left"), StrOptions({"cv"})],
        "lam": [Interval(Real, 0, None, closed="right"), StrOptions({"cv"})],
        "degree_grid": ["array-like", None],
        "lam_grid": ["array-like", None],
        "cv": [Interval(Integral, 2, None, closed="left"), "cv_object"],
    }
    _fitted_attributes = (
        "coef_",
        "monomial_coef_",
        "degree_",
        "lam_",
        "cv_scores_",
        "degree_grid_",
        "lam_grid_",
        "solver_",
        "solver_status_",
        "repair_slope_",
    )

    degree: int | str = "cv"
    lam: float | str = "cv"
    _: KW_ONLY
    degree_grid: Sequence[int] | None = None
    lam_grid: Sequence[float] | None = None
    cv: int | object = 3

    def _grids(self) -> tuple[np.ndarray, np.ndarray]:
        if isinstance(self.degree, str):
            degrees = DEFAULT_DEGREE_GRID if self.degree_grid is None else self.degree_grid
        else:
            degrees = [self.degree]
        if isinstance(self.lam, str):
            lams = DEFAULT_LAM_GRID if self.lam_grid is None else self.lam_grid
        else:
            lams = [self.lam]
        degrees = np.asarray(degrees).reshape(-1)
        lams = np.asarray(lams, dtype=float).reshape(-1)
        if degrees.size == 0 or lams.size == 0:
            raise ValueError("degree_grid and lam_grid must not be empty.")
        if not np.all(np.isfinite(degrees.astype(float))) or np.any(
            degrees.astype(float) != np.round(degrees.astype(float))
        ):
            raise ValueError(f"degree_grid must hold integers, got {degrees.tolist()}.")
        degrees = degrees.astype(np.int64)
        if np.any(degrees < 1):
            raise ValueError(f"degrees must be at least 1, got {degrees.tolist()}.")
        if np.any(np.isnan(lams)) or np.any(lams <= 0):
            raise ValueError(f"lam_grid must hold positive numbers, got {lams.tolist()}.")
        return np.unique(degrees), np.unique(lams)

    def _fit_1d(self, t, y, sample_weight):
        degrees, lams = self._grids()
        kmax = int(degrees.max())
        total = accumulate_stats(t, y, sample_weight, kmax)
        problems: dict[int, RPRProblem] = {}
        if degrees.size * lams.size > 1:
            scores = self._cross_validate(t, y, sample_weight, degrees, lams, problems)
            if np.all(np.isnan(scores)):
                raise SolverError(
                    "RPR cross-validation failed: no candidate (degree, lam) could be solved.",
                    status="all candidates failed",
                    solver="clarabel+scs",
                )
            i, j = np.unravel_index(np.nanargmin(scores), scores.shape)
            self.cv_scores_ = scores
            self.degree_grid_ = degrees
            self.lam_grid_ = lams
            degree, lam = int(degrees[i]), float(lams[j])
        else:
            for name in ("cv_scores_", "degree_grid_", "lam_grid_"):
                self.__dict__.pop(name, None)
            degree, lam = int(degrees[0]), float(lams[0])
        problem = problems.get(degree) or RPRProblem(degree)
        stats = total.truncate(degree)
        c, status, solver = problem.solve(stats, np.inf)
        c, added = repair(c)
        if np.abs(monomial_matrix(degree) @ c).sum() > lam:
            c, status, solver = problem.solve(stats, lam)
            c, added = repair(c)
        self.degree_ = degree
        self.lam_ = lam
        self.coef_ = c
        self.monomial_coef_ = monomial_matrix(degree) @ c
        self.solver_ = solver
        self.solver_status_ = status
        self.repair_slope_ = float(added)

    def _cross_validate(self, t, y, w, degrees, lams, problems) -> np.ndarray:
        kmax = int(degrees.max())
        folds = [
            (
                accumulate_stats(t[tr], y[tr], w[tr], kmax),
                accumulate_stats(t[te], y[te], w[te], kmax),
            )
            for tr, te in self._cv_splits(t[:, None], y)
        ]
        heldout_weight = sum(test.sw for _, test in folds)
        order = np.argsort(lams)[::-1]
        scores = np.zeros((degrees.size, lams.size))
        for i, degree in enumerate(degrees.tolist()):
            problem = problems[degree] = RPRProblem(degree)
            A = monomial_matrix(degree)
            for train_all, test_all in folds:
                train = train_all.truncate(degree)
                test = test_all.truncate(degree)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", SolverWarning)
                    try:
                        free = repair(problem.solve(train, np.inf)[0])[0]
                    except SolverError:
                        scores[i, :] = np.nan
                        continue
                    free_l1 = np.abs(A @ free).sum()
                    for j in order:
                        if lams[j] >= free_l1:
                            c = free
                        else:
                            try:
                                c = repair(problem.solve(train, lams[j])[0])[0]
                            except SolverError:
                                scores[i, j] = np.nan
                                continue
                        scores[i, j] += heldout_sse(test, c)
        return scores / heldout_weight

    def _predict_1d(self, t):
        return evaluate(self.coef_, t)
