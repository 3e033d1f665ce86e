"""What a copula family is: the interface every family implements, rotations, and the
likelihood of pseudo-observations that are points or intervals.

A :class:`Copula` object is one copula: a family, a dimension, a rotation and (once given or
fitted) its parameters, like ``pyvinecopulib.Bicop`` or the copulas of
``statsmodels.distributions.copula``. Its public methods

* :meth:`~Copula.logpdf`, :meth:`~Copula.cdf`, :meth:`~Copula.hfunc` (conditional CDFs),
* :meth:`~Copula.log_ratio` (the likelihood of points *and intervals*, see below),
* :meth:`~Copula.fit` (weighted maximum likelihood), :meth:`~Copula.sample`,
  :meth:`~Copula.n_params`,

are written once here, in terms of a few hooks a family implements on its *unrotated* copula
with explicit parameters (``_logpdf``, ``_partial``, ``_fit_points``, ``_sample``, ...). The
families themselves are in :mod:`fusion.copula.families`; defining a subclass there with a
``family`` name registers it (adding a family touches that one file).

Rotations
    Rotation by 90, 180 or 270 degrees reflects coordinates: with VineCopula's convention
    ``c_90(u1, u2) = c(1 - u1, u2)``, ``c_180(u) = c(1 - u)``, ``c_270(u1, u2) = c(u1, 1 - u2)``
    (for exchangeable families, the ones rotated here, this is the rotation of the density by
    that angle). A reflection maps rectangles to rectangles, so every method of a rotated
    copula is the unrotated one at reflected points or intervals.

Points and intervals
    A pseudo-observation coordinate is a point ``u`` (a continuous score) or an interval
    ``[a, b]`` (a score at a value of positive probability: see :mod:`fusion.copula.marginals`).
    Its likelihood is the copula measure of the interval coordinates' rectangle, with the
    density in the point coordinates ``K``:
    ``sum over corners e of the rectangle (-1)^{#lower corners} d^K C / du_K (e)``
    (Genest & Neslehova 2007; the mixed-derivative form of, e.g., Smith & Khaled 2012).
    :meth:`Copula.log_ratio` returns its logarithm minus that of the rectangle's volume, so that
    independence scores 0 and continuous data give the log-density. A family provides
    ``_partial(U, K, params)``, the mixed derivative ``d^K C / du_K`` at points whose other
    coordinates lie in ``(0, 1]``; the inclusion-exclusion, the rotations and the corners on the
    faces of the cube (``C = 0`` when a coordinate is 0) are handled here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import product
from typing import ClassVar

import numpy as np
from scipy.optimize import minimize_scalar

__all__ = [
    "EPS",
    "NARROW",
    "MAX_INTERVAL_AXES",
    "Copula",
    "OneParameterCopula",
    "registry",
    "clip_unit",
    "wsum",
    "maximize_1d",
]

#: Point coordinates are clipped into ``[EPS, 1 - EPS]`` before any copula is evaluated: every
#: log-density is finite there, for every parameter within the families' bounds.
EPS = 1e-10
#: Interval coordinates narrower than this are evaluated as points at their midpoint (the
#: density times the width, exact to second order); below it the inclusion-exclusion sum
#: would lose its digits to cancellation.
NARROW = 1e-6
#: Most interval coordinates per row whose rectangle probability is computed (2^k corners).
MAX_INTERVAL_AXES = 10
#: Floor of ``log(P(rectangle) / volume)`` where round-off leaves no positive probability.
_LOG_RATIO_FLOOR = -700.0
#: Objective value standing in for a non-finite negative log-likelihood.
_BAD = 1e300

_REGISTRY: dict[str, type[Copula]] = {}


def registry() -> dict[str, type[Copula]]:
    """Family name -> class, in definition order (the order used to break ties)."""
    return dict(_REGISTRY)


def clip_unit(U: np.ndarray, eps: float = EPS) -> np.ndarray:
    """Clip pseudo-observations into ``[eps, 1 - eps]``."""
    return np.clip(U, eps, 1.0 - eps)


def wsum(w: np.ndarray, v: np.ndarray) -> float:
    """``sum(w * v)`` without BLAS.

    ``w @ v`` goes to OpenBLAS, whose threads busy-wait when the cores are shared: measured
    6x slower fits at n = 20,000 on a loaded 2-core machine. The likelihoods here are summed
    hundreds of times per fit, so they stay on plain NumPy loops.
    """
    return float(np.einsum("i,i->", w, v))


def maximize_1d(
    loglik: Callable[[float], float], lo: float, hi: float, n_grid: int = 9, xatol: float = 1e-5
) -> tuple[float, float]:
    """Maximize a scalar function on ``[lo, hi]``: coarse grid, then bounded Brent.

    The grid's best point brackets the search so that Brent works inside the bracket of the
    global maximum. Returns ``(argmax, max)``; the grid point is kept if Brent does not
    improve on it. ``n_grid < 3`` skips the grid (for objectives known to be unimodal).
    """

    def neg(t: float) -> float:
        v = loglik(t)
        return -v if np.isfinite(v) else _BAD

    if n_grid < 3:
        res = minimize_scalar(neg, bounds=(lo, hi), method="bounded", options={"xatol": xatol})
        return float(res.x), -float(res.fun)
    grid = np.linspace(lo, hi, n_grid)
    values = np.array([neg(t) for t in grid])
    k = int(np.argmin(values))
    a, b = grid[max(k - 1, 0)], grid[min(k + 1, n_grid - 1)]
    res = minimize_scalar(neg, bounds=(a, b), method="bounded", options={"xatol": xatol})
    if res.fun <= values[k]:
        return float(res.x), -float(res.fun)
    return float(grid[k]), -float(values[k])


def _reflected_axes(rotation: int) -> tuple[int, ...]:
    return {0: (), 90: (0,), 180: (0, 1), 270: (1,)}[rotation]


@dataclass
class _Prepared:
    """Points and intervals laid out for repeated likelihood evaluations (see
    :meth:`Copula._prepare`): rows with points only, and one group per pattern of interval
    axes with the stacked rectangle corners."""

    n: int
    point_rows: np.ndarray | None = None
    points: np.ndarray | None = None
    groups: list = field(default_factory=list)


class Copula(ABC):
    """One copula: a family, its dimension, rotation and parameters.

    Parameters
    ----------
    dim : int, default=2
        Number of variables ``M``.
    rotation : {0, 90, 180, 270}, default=0
        Counter-clockwise rotation (bivariate; only where the family defines it, see
        :attr:`rotations`).
    params : dict, optional
        The family's parameters as plain data (see the family's docstring); set by
        :meth:`fit` when not given.

    Attributes
    ----------
    loglik : float or None
        Maximized weighted log-likelihood ratio against independence after :meth:`fit`.
    """

    #: Family name (registered when a subclass defines it).
    family: ClassVar[str]
    #: Rotations the family accepts (rotations other than 0 make it bivariate).
    rotations: ClassVar[tuple[int, ...]] = (0,)
    #: Rotations among the default candidates (``families="all"``).
    default_rotations: ClassVar[tuple[int, ...]] = (0,)
    #: Whether the family exists only for two variables.
    bivariate_only: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "family" in cls.__dict__:
            _REGISTRY[cls.family] = cls

    def __init__(self, dim: int = 2, rotation: int = 0, params: dict | None = None):
        if rotation not in self.rotations:
            raise ValueError(
                f"the {self.family} copula takes rotations {list(self.rotations)}, got {rotation}."
            )
        if (self.bivariate_only or rotation) and dim != 2:
            raise ValueError(
                f"the {self.name_for(rotation)} copula is bivariate; got {dim} dimensions."
            )
        self.dim = int(dim)
        self.rotation = int(rotation)
        self.params = None if params is None else self._check_params(dict(params))
        self.loglik: float | None = None

    # -- names -------------------------------------------------------------------------------
    @classmethod
    def name_for(cls, rotation: int) -> str:
        """``family`` or ``family_rot<rotation>``: how :mod:`fusion.copula.families` names it."""
        return cls.family if rotation == 0 else f"{cls.family}_rot{rotation}"

    @property
    def name(self) -> str:
        return self.name_for(self.rotation)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(dim={self.dim}, rotation={self.rotation}, params={self.params})"
        )

    # -- hooks a family implements (unrotated copula, explicit parameters) ------------------
    @abstractmethod
    def n_params(self) -> int:
        """Number of free parameters (for AIC)."""

    @abstractmethod
    def _logpdf(self, U: np.ndarray, params: dict) -> np.ndarray:
        """Log-density at clipped points (any finite value for every parameter in bounds)."""

    @abstractmethod
    def _partial(self, U: np.ndarray, K: tuple[int, ...], params: dict) -> np.ndarray:
        """``d^K C / du_K`` at rows of ``U``; coordinates in ``K`` are clipped, others in (0, 1]."""

    @abstractmethod
    def _fit_points(self, U: np.ndarray, w: np.ndarray) -> tuple[dict, float]:
        """Maximum likelihood on clipped points: ``(params, sum_i w_i log c(u_i))``."""

    @abstractmethod
    def _fit_intervals(self, lo: np.ndarray, hi: np.ndarray, w: np.ndarray) -> tuple[dict, float]:
        """Maximum likelihood on points and intervals: ``(params, sum_i w_i log_ratio_i)``."""

    @abstractmethod
    def _sample(self, n: int, rng: np.random.Generator, params: dict) -> np.ndarray:
        """``n`` draws of the unrotated copula."""

    def _check_params(self, params: dict) -> dict:
        """Validate (and convert) parameters; the default accepts them as given."""
        return params

    def supports_intervals(self, n_interval_axes: int) -> bool:
        """Whether the likelihood is available with this many interval coordinates per row.

        The inclusion-exclusion sum has ``2^k`` corners for ``k`` interval coordinates: at
        most :data:`MAX_INTERVAL_AXES` of them.
        """
        return n_interval_axes <= MAX_INTERVAL_AXES

    # -- evaluation --------------------------------------------------------------------------
    def _require_params(self) -> dict:
        if self.params is None:
            raise ValueError(
                f"the {self.name} copula has no parameters yet; pass params or fit it."
            )
        return self.params

    def _as_points(self, U) -> np.ndarray:
        U = np.asarray(U, dtype=float)
        if U.ndim != 2 or U.shape[1] != self.dim:
            raise ValueError(
                f"the {self.name} copula has {self.dim} dimensions; got points of shape {U.shape}."
            )
        return U

    def logpdf(self, U) -> np.ndarray:
        """Log-density at rows of ``U`` (clipped into ``[EPS, 1 - EPS]`` first)."""
        params = self._require_params()
        U = clip_unit(self._as_points(U))
        axes = list(_reflected_axes(self.rotation))
        if axes:
            U = U.copy()
            U[:, axes] = 1.0 - U[:, axes]
        return self._logpdf(U, params)

    def pdf(self, U) -> np.ndarray:
        """Density at rows of ``U``."""
        return np.exp(self.logpdf(U))

    def cdf(self, U) -> np.ndarray:
        """``C(u)``: the copula measure of ``[0, u]``."""
        U = np.clip(self._as_points(U), 0.0, 1.0)
        return self._mass(np.zeros_like(U), U, ())

    def hfunc(self, U, given: int = 0) -> np.ndarray:
        """Conditional CDF given one coordinate: ``P(V_j <= u_j, j != given | V_given = u_given)``.

        For two variables, ``given=0`` is the h-function ``h_1(u_2 | u_1) = dC / du_1`` and
        ``given=1`` is ``h_2(u_1 | u_2)``.
        """
        U = np.clip(self._as_points(U), 0.0, 1.0)
        lo = np.zeros_like(U)
        lo[:, given] = U[:, given]
        return self._mass(lo, U, (given,))

    def log_ratio(self, lower, upper=None) -> np.ndarray:
        """Log-likelihood of points or intervals, relative to independence.

        Parameters
        ----------
        lower, upper : array-like of shape (n, M)
            Interval ends of each coordinate; ``upper=None`` (or equal ends) means points.
            Intervals narrower than :data:`NARROW` count as points at their midpoint.

        Returns
        -------
        ndarray of shape (n,)
            ``log(P(rectangle) / volume)``, with the density in the point coordinates: the
            log-density where every coordinate is a point, 0 for independence.
        """
        lo = self._as_points(lower)
        if upper is None:
            return self.logpdf(lo)
        hi = self._as_points(upper)
        return self._log_ratio(lo, hi, self._require_params())

    def _log_ratio(self, lo: np.ndarray, hi: np.ndarray, params: dict) -> np.ndarray:
        return self._evaluate(self._prepare(lo, hi), params)

    def _prepare(self, lo: np.ndarray, hi: np.ndarray) -> _Prepared:
        """Everything about points/intervals that does not depend on the parameters: row
        patterns, rectangle corners (reflected by the rotation, clipped), their signs."""
        width = hi - lo
        interval = width > NARROW
        mid = 0.5 * (lo + hi)
        axes = list(_reflected_axes(self.rotation))
        prep = _Prepared(n=lo.shape[0])
        point_rows = ~interval.any(axis=1)
        if point_rows.any():
            U = clip_unit(np.where(interval, lo, mid)[point_rows])
            if axes:
                U[:, axes] = 1.0 - U[:, axes]
            prep.point_rows, prep.points = np.flatnonzero(point_rows), U
        if point_rows.all():
            return prep
        patterns, which = np.unique(interval[~point_rows], axis=0, return_inverse=True)
        rows_all = np.flatnonzero(~point_rows)
        for p, pattern in enumerate(patterns):
            rows = rows_all[which.reshape(-1) == p]
            K = tuple(int(j) for j in np.flatnonzero(~pattern))
            a = np.where(pattern, lo[rows], mid[rows])
            b = np.where(pattern, hi[rows], mid[rows])
            # identical rows (the cells of discrete scores) are evaluated once
            ab, inverse = np.unique(np.hstack([a, b]), axis=0, return_inverse=True)
            a, b = ab[:, : self.dim], ab[:, self.dim :]
            corners, owner, signs = self._corners(a, b, K)
            log_volume = np.sum(np.log((b - a)[:, pattern]), axis=1)
            prep.groups.append((rows, inverse.reshape(-1), K, corners, owner, signs, log_volume))
        return prep

    def _corners(self, lo: np.ndarray, hi: np.ndarray, K: tuple[int, ...]):
        """Stacked rectangle corners (reflected, ``K`` axes clipped) with a coordinate at 0
        dropped (``C = 0`` there), the row each belongs to and its inclusion-exclusion sign."""
        # round-off can leave an interval end a hair outside [0, 1]
        lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
        axes = list(_reflected_axes(self.rotation))
        if axes:
            lo[:, axes], hi[:, axes] = 1.0 - hi[:, axes], 1.0 - lo[:, axes]
        Kl = list(K)
        if Kl:
            lo[:, Kl] = hi[:, Kl] = clip_unit(lo[:, Kl])
        D = [j for j in range(self.dim) if j not in K]
        points, owner, signs = [], [], []
        rows = np.arange(lo.shape[0])
        for corner in product((0, 1), repeat=len(D)):
            point = lo.copy()
            for j, up in zip(D, corner, strict=True):
                if up:
                    point[:, j] = hi[:, j]
            live = np.all(point[:, D] > 0.0, axis=1)
            points.append(point[live])
            owner.append(rows[live])
            signs.append(np.full(int(live.sum()), -1.0 if (len(D) - sum(corner)) % 2 else 1.0))
        return np.vstack(points), np.concatenate(owner), np.concatenate(signs)

    def _evaluate(self, prep: _Prepared, params: dict) -> np.ndarray:
        """``log_ratio`` of prepared points and intervals at ``params``."""
        out = np.empty(prep.n)
        if prep.point_rows is not None:
            out[prep.point_rows] = self._logpdf(prep.points, params)
        for rows, inverse, K, corners, owner, signs, log_volume in prep.groups:
            values = self._partial(corners, K, params) if corners.shape[0] else np.zeros(0)
            mass = np.bincount(owner, signs * values, minlength=log_volume.shape[0])
            with np.errstate(divide="ignore"):
                ratio = np.maximum(np.log(np.maximum(mass, 0.0)) - log_volume, _LOG_RATIO_FLOOR)
            out[rows] = ratio[inverse]
        return out

    def _with(self, params: dict) -> Copula:
        """The same family, dimension and rotation with other parameters."""
        other = type(self).__new__(type(self))
        other.dim, other.rotation = self.dim, self.rotation
        other.params, other.loglik = params, None
        return other

    def _mass(self, lo: np.ndarray, hi: np.ndarray, K: tuple[int, ...]) -> np.ndarray:
        """Copula measure of the rectangle ``[lo, hi]`` in the axes outside ``K``, with the
        density in the axes ``K`` (where ``lo == hi``), by inclusion-exclusion."""
        params = self._require_params()
        corners, owner, signs = self._corners(lo, hi, K)
        values = self._partial(corners, K, params) if corners.shape[0] else np.zeros(0)
        return np.bincount(owner, signs * values, minlength=lo.shape[0])

    # -- fitting and sampling ----------------------------------------------------------------
    def fit(self, lower, weights=None, upper=None) -> Copula:
        """Weighted maximum likelihood; sets :attr:`params` and :attr:`loglik`.

        Parameters
        ----------
        lower : array-like of shape (n, M)
            Pseudo-observations (points), or the lower ends of intervals.
        weights : array-like of shape (n,), optional
            Non-negative weights, used as given (rescale them before if needed).
        upper : array-like of shape (n, M), optional
            Upper ends of intervals (see :meth:`log_ratio`); None for points only.

        Returns
        -------
        self
        """
        lo = self._as_points(lower)
        w = np.ones(lo.shape[0]) if weights is None else np.asarray(weights, dtype=float)
        axes = list(_reflected_axes(self.rotation))
        if upper is None or not np.any(np.asarray(upper, dtype=float) - lo > NARROW):
            if upper is not None:
                lo = 0.5 * (lo + np.asarray(upper, dtype=float))
            U = clip_unit(lo)
            if axes:
                U = U.copy()
                U[:, axes] = 1.0 - U[:, axes]
            params, ll = self._unrotated()._fit_points(U, w)
        else:
            hi = self._as_points(upper)
            lo, hi = lo.copy(), hi.copy()
            if axes:
                lo[:, axes], hi[:, axes] = 1.0 - hi[:, axes], 1.0 - lo[:, axes]
            params, ll = self._unrotated()._fit_intervals(lo, hi, w)
        self.params, self.loglik = self._check_params(params), float(ll)
        return self

    def _unrotated(self) -> Copula:
        other = self._with(self.params)
        other.rotation = 0
        return other

    def sample(self, n: int, random_state=None) -> np.ndarray:
        """``n`` random draws, an ``(n, M)`` array of ``[0, 1]^M``."""
        params = self._require_params()
        U = self._sample(int(n), np.random.default_rng(random_state), params)
        axes = list(_reflected_axes(self.rotation))
        if axes:
            U[:, axes] = 1.0 - U[:, axes]
        return U


class OneParameterCopula(Copula):
    """A family with one parameter ``theta``, fitted on a fixed interval by grid + Brent.

    Subclasses give :meth:`theta_bounds` and whether the search runs on ``log theta``.
    """

    #: Search on ``log theta`` (True) or on ``theta`` itself.
    log_scale: ClassVar[bool] = True

    def n_params(self) -> int:
        return 1

    @abstractmethod
    def theta_bounds(self) -> tuple[float, float]:
        """Bounds of ``theta`` used by the fit, for this dimension."""

    def _check_params(self, params: dict) -> dict:
        return {"theta": float(params["theta"])}

    def _search(self) -> tuple[float, float, Callable[[float], float]]:
        lo, hi = self.theta_bounds()
        if self.log_scale:
            return float(np.log(lo)), float(np.log(hi)), np.exp
        return lo, hi, float

    def _fit_points(self, U: np.ndarray, w: np.ndarray) -> tuple[dict, float]:
        lo, hi, to_theta = self._search()
        t, ll = maximize_1d(lambda t: wsum(w, self._logpdf(U, {"theta": to_theta(t)})), lo, hi)
        return {"theta": float(to_theta(t))}, ll

    def _fit_intervals(self, lo: np.ndarray, hi: np.ndarray, w: np.ndarray) -> tuple[dict, float]:
        a, b, to_theta = self._search()
        prep = self._prepare(lo, hi)

        def loglik(t: float) -> float:
            return wsum(w, self._evaluate(prep, {"theta": float(to_theta(t))}))

        t, ll = maximize_1d(loglik, a, b)
        return {"theta": float(to_theta(t))}, ll
