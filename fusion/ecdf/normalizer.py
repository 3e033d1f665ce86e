"""ECDF normalization of score columns.

Every fusion method works on scores mapped to ``[0, 1]`` by the empirical CDF of the
training scores, column by column. The map used here is the weighted *mid-distribution
function*

.. math::  F(x) = \\frac{W\\{s_i < x\\} + W\\{s_i \\le x\\}}{2 W},

where ``W{...}`` is the total sample weight of the rows in the set and ``W`` that of all rows
(with unit weights: ``(#{s_i < x} + #{s_i <= x}) / (2n)``, so tied scores get their mid-rank
``(rank - 1/2) / n``). It is evaluated at the distinct training values (the knots); outside
the training range it is clamped to its end values. It is non-decreasing, so a monotone
calibrating function composed with it stays monotone in the raw scores, and it depends on the
training scores only through their ranks, so any strictly increasing transform of a column
leaves the normalized training values unchanged. An integer weight acts as that many copies
of the row.

Between two knots :meth:`ECDFNormalizer.transform` offers two forms (``between``):

``"linear"`` (default)
    linear interpolation between the knots' values on the scores' own scale: continuous in
    the score, but a new point's value depends on its distance to the knots, so a strictly
    increasing transform of the scores moves it (by less than the gap between the two
    knots' values, about ``1 / n``).
``"step"``
    the mean of the two knots' values, for every point strictly between them (with unit
    weights and no ties ``i / n`` between the ``i``-th and ``i+1``-th smallest scores, the
    mid-distribution function of that gap itself). A point's value then depends only on
    where it falls among the training scores, so the invariance holds at *every* score, new
    ones included, at the price of a step function of the score with steps of about
    ``1 / n``. At the knots both forms agree bit for bit. The rank-based methods use it
    (see ``FusionEstimator._ecdf_between``).

The mid-distribution (rather than ``rank / n``) keeps every normalized value strictly
inside ``(0, 1)`` and is symmetric: negating a score maps ``u`` to ``1 - u``, which the
copula fits (pseudo-observations) and the rotated copula families rely on.

Scores may be ``-inf`` or ``+inf`` (the logit of a saturated probability): only their order
matters, so they are ranked below and above every finite score. Integer columns beyond
``2**53`` in magnitude keep integer knots, so distinct integers never merge by rounding.

For large training sets the map can be summarized by ``n_knots`` knots at (nearly) evenly
spaced weighted ranks, with exact values there (:mod:`fusion.ecdf.sketch`; the same knots
whether the rows are in memory or in dask blocks); ``error_bound_`` bounds the difference
from the exact map (for either form between knots). With ``"step"`` the value of any score,
a training score between two knots included, then depends only on its position among the
knots; the knots themselves are training values picked by a hash of their bits, so a
transformed column may be summarized by knots at other ranks (see
:mod:`fusion.ecdf.sketch`).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .lookup import KnotLookup
from .midrank import mid_distribution
from .sketch import sketch_column

__all__ = [
    "ECDFNormalizer",
    "ConstantColumnError",
    "mid_ecdf_knots",
    "score_columns",
    "valid_knots",
]


#: Rows per chunk of a transform.
_CHUNK = 1 << 18

#: Integers of larger magnitude are not all exactly representable as float64.
_EXACT_FLOAT_INT = 2**53

#: The forms of the map between knots (``ECDFNormalizer.transform(between=...)``).
BETWEEN = ("linear", "step")


class ConstantColumnError(ValueError):
    """A score column takes a single value, so it carries no ranking information."""


def _runs(xs: np.ndarray, ws: np.ndarray | None):
    """Distinct values of a sorted column, each one's weight, and every row's run index."""
    new = np.empty(xs.shape[0], dtype=bool)
    new[:1] = True
    np.not_equal(xs[1:], xs[:-1], out=new[1:])
    start = np.flatnonzero(new)
    if ws is None:
        weight = np.diff(np.append(start, xs.shape[0])).astype(float)
    else:
        weight = np.add.reduceat(ws, start)
    return xs[start], weight, np.cumsum(new) - 1


def mid_ecdf_knots(column: np.ndarray, sample_weight=None) -> tuple[np.ndarray, np.ndarray]:
    """Knots and values of the (weighted) mid-distribution function of one column.

    Parameters
    ----------
    column : ndarray of shape (n,)
        Training scores (no NaN).
    sample_weight : ndarray of shape (n,), optional
        Positive row weights.

    Returns
    -------
    knots : ndarray of shape (k,)
        The distinct training values, increasing.
    values : ndarray of shape (k,)
        ``(W{s < knot} + W{s <= knot}) / (2 W)`` at each knot, strictly increasing in
        ``(0, 1)``.
    """
    col = score_columns(np.asarray(column)[:, None] if np.ndim(column) == 1 else column)[0]
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    knots, values, _ = _exact(col, w, inverse=False)
    return knots, values


def _exact(col: np.ndarray, w: np.ndarray | None, inverse: bool):
    """Knots, values and (if asked) every row's knot index, from one sort."""
    # Stability matters only for the order in which tied rows' weights are summed.
    order = np.argsort(col, kind="stable" if w is not None else None)
    xs = col[order]
    ws = None if w is None else w[order]
    knots, weight, run = _runs(xs, ws)
    upto = np.cumsum(weight)
    # The total as the last partial sum (not weight.sum()): a distributed fit that merges
    # per-block weights then gets the same values bit for bit.
    values = mid_distribution(upto - weight, weight, upto[-1])
    where = None
    if inverse:
        where = np.empty(col.shape[0], dtype=np.intp)
        where[order] = run
    return knots, values, where


def score_columns(S) -> list[np.ndarray]:
    """Score columns as 1-D arrays: float64, or int64/uint64 where float64 would merge values.

    Accepts a 1-D array (one column) or a 2-D array (rows of scores).
    """
    arr = np.asarray(S)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"scores must be a 1-D or 2-D array, got {arr.ndim} dimensions.")
    return [_column(arr[:, j], j) for j in range(arr.shape[1])]


def _column(c: np.ndarray, j: int) -> np.ndarray:
    if c.dtype.kind == "b":
        return c.astype(float)
    if c.dtype.kind in "iu":
        if c.size and (c.max() > _EXACT_FLOAT_INT or c.min() < -_EXACT_FLOAT_INT):
            return c.astype(np.uint64 if c.dtype.kind == "u" else np.int64)
        return c.astype(float)
    try:
        return c.astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"score column {j} is not numeric (dtype {c.dtype}).") from None


class ECDFNormalizer(TransformerMixin, BaseEstimator):
    """Map each score column to ``[0, 1]`` through its training mid-ECDF.

    Parameters
    ----------
    n_knots : int >= 2 or None, default=None
        ``None``: the exact map (one knot per distinct training value). An int: at most this
        many knots per column, at nearly evenly spaced weighted ranks, with exact values there
        (a quantile sketch: smaller models and faster transforms for large training sets).
    allow_nan : bool, default=False
        Accept NaN (a missing score): fitting uses each column's observed values, and NaN
        maps to NaN. Otherwise NaN is an error.

    Attributes
    ----------
    knots_ : list of ndarray
        Knots of each column, increasing (distinct training values, or the sketch's).
    values_ : list of ndarray
        Normalized value at each knot.
    error_bound_ : float
        Bound on ``sup_t |F_used(t) - F_exact(t)|`` over all columns: 0 for the exact map.
    n_features_in_ : int
        Number of score columns seen in ``fit``.

    Notes
    -----
    A constant column raises :class:`ConstantColumnError` (a ``ValueError``): it carries no
    information for calibration, and every fusion model would silently ignore it.

    Examples
    --------
    >>> import numpy as np
    >>> from fusion.ecdf import ECDFNormalizer
    >>> S = np.array([[0.1], [0.4], [0.4], [0.9]])
    >>> ECDFNormalizer().fit(S).transform(S).ravel()
    array([0.125, 0.5  , 0.5  , 0.875])
    """

    _parameter_constraints = {
        "n_knots": [Interval(Integral, 2, None, closed="left"), None],
        "allow_nan": ["boolean"],
    }
    _fitted_attributes = ("knots_", "values_", "error_bound_", "n_features_in_")

    def __init__(self, n_knots: int | None = None, allow_nan: bool = False):
        self.n_knots = n_knots
        self.allow_nan = allow_nan

    def validate_params(self) -> None:
        """Check the types and ranges of ``n_knots`` and ``allow_nan``, as :meth:`fit` does
        first (no data are needed). :func:`fusion.load` runs this on the parameters of a
        saved normalizer before it restores the fitted state.

        Raises
        ------
        ValueError
            A parameter has a type or value the normalizer does not take (scikit-learn's
            ``InvalidParameterError``).
        """
        self._validate_params()

    def fit(self, S, y=None, sample_weight=None):
        """Store the knots of each column's mid-ECDF.

        Parameters
        ----------
        S : array-like of shape (n, M)
            Training scores; a 1-D array is one column.
        y : ignored
        sample_weight : array-like of shape (n,), optional
            Positive row weights (an integer weight acts as repeated rows).
        """
        self._fit(S, sample_weight, inverse=False)
        return self

    def fit_transform(
        self, S, y=None, sample_weight=None, *, between: str = "linear"
    ) -> np.ndarray:
        """Fit, and return the normalized training scores.

        Equal to ``fit(S).transform(S, between=between)`` bit for bit, but read off the sort
        that ``fit`` does anyway instead of searching every training score among the knots.
        ``between`` matters only for a sketch (``n_knots``), whose knots are some of the
        training values.
        """
        _check_between(between)
        cols, inverses = self._fit(S, sample_weight, inverse=True)
        U = np.empty((cols[0].shape[0], len(cols)))
        for j, (col, where) in enumerate(zip(cols, inverses, strict=True)):
            if where is None:  # sketched column
                U[:, j] = self.lookups(between)[j](col)
            else:
                U[:, j] = np.nan
                seen = ~_isnan(col)
                U[seen, j] = self.values_[j][where]
        return U

    def _fit(self, S, sample_weight, inverse: bool):
        self._validate_params()
        cols = score_columns(S)
        n = cols[0].shape[0]
        if n < 2:
            raise ValueError(f"ECDF normalization needs at least 2 rows, got {n}.")
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        knots_, values_, inverses, bound = [], [], [], 0.0
        for j, col in enumerate(cols):
            seen = ~_isnan(col)
            if not seen.all():
                if not self.allow_nan:
                    row = int(np.flatnonzero(~seen)[0])
                    raise ValueError(
                        f"score column {j} holds NaN at row {row}; pass missing='marginal' to "
                        "a fusion estimator to integrate missing scores out."
                    )
                if not seen.any():
                    raise ValueError(f"score column {j} has no observed (non-NaN) value.")
            c = col[seen] if not seen.all() else col
            cw = None if w is None else (w[seen] if not seen.all() else w)
            if self.n_knots is None:
                knots, values, where = _exact(c, cw, inverse)
            else:
                knots, values, exact = sketch_column(c, self.n_knots, cw)
                where = None
                if exact and inverse:
                    where = np.searchsorted(knots, c)
                if not exact:
                    bound = max(bound, float(np.max(np.diff(values))))
            if knots.shape[0] < 2:
                raise ConstantColumnError(
                    f"score column {j} is constant (every value equals {float(knots[0]):g}); a "
                    "constant score carries no ranking information and cannot be calibrated."
                )
            knots_.append(knots)
            values_.append(values)
            inverses.append(where)
        self.knots_, self.values_ = knots_, values_
        self.error_bound_ = bound
        self.n_features_in_ = len(cols)
        return cols, inverses

    @classmethod
    def from_knots(cls, knots, values, *, error_bound: float = 0.0) -> ECDFNormalizer:
        """A fitted normalizer from given knots and values, one pair of arrays per column.

        For ECDFs computed elsewhere (counts merged over the blocks of a distributed array);
        the result is the same plain-data object as after :meth:`fit`.

        Parameters
        ----------
        knots : sequence of 1-D arrays
            Strictly increasing knots of each column (at least 2; ``-inf``/``+inf`` allowed
            at the ends).
        values : sequence of 1-D arrays
            Normalized values at the knots, strictly increasing inside ``(0, 1)``.
        error_bound : float
            Bound on the distance from the exact map (see ``error_bound_``).
        """
        if len(knots) != len(values) or len(knots) == 0:
            raise ValueError(
                f"need one knots and one values array per column, got {len(knots)} and "
                f"{len(values)}."
            )
        self = cls()
        self.knots_, self.values_ = [], []
        for j, (k, v) in enumerate(zip(knots, values, strict=True)):
            k = np.asarray(k)
            k = k if k.dtype.kind in "iu" else k.astype(float)
            v = np.asarray(v, dtype=float)
            if not valid_knots(k, v):
                raise ValueError(
                    f"column {j}: knots must be at least 2 strictly increasing values (finite, "
                    "or infinite at the ends) and values strictly increasing in (0, 1), of the "
                    "same length."
                )
            self.knots_.append(k)
            self.values_.append(v)
        self.error_bound_ = float(error_bound)
        self.n_features_in_ = len(self.knots_)
        return self

    def transform(self, S, *, between: str = "linear") -> np.ndarray:
        """Normalize scores; values beyond the training range are clamped.

        Parameters
        ----------
        S : array-like of shape (n, M)
        between : {"linear", "step"}, default="linear"
            The value of a score strictly between two knots: linearly interpolated between
            their values, or (``"step"``) their mean, which depends only on the score's
            position among the knots (see :mod:`fusion.ecdf.normalizer`). Scores equal to a
            knot get its value either way.

        Returns
        -------
        U : ndarray of shape (n, M) with values in ``(0, 1)`` (NaN where a score is NaN,
            with ``allow_nan=True``).
        """
        check_is_fitted(self, "knots_")
        _check_between(between)
        cols = score_columns(S)
        if len(cols) != self.n_features_in_:
            raise ValueError(
                f"S has {len(cols)} score columns but the normalizer was fitted on "
                f"{self.n_features_in_}."
            )
        if not getattr(self, "allow_nan", False):
            for j, col in enumerate(cols):
                bad = _isnan(col)
                if bad.any():
                    row = int(np.flatnonzero(bad)[0])
                    raise ValueError(f"score column {j} holds NaN at row {row}.")
        n = cols[0].shape[0]
        U = np.empty((n, len(cols)))
        lookups = self.lookups(between)
        # Row chunks: a lookup makes several full-length temporaries.
        for start in range(0, n, _CHUNK):
            rows = slice(start, start + _CHUNK)
            for j, (col, lookup) in enumerate(zip(cols, lookups, strict=True)):
                U[rows, j] = lookup(_like_knots(col[rows], self.knots_[j]))
        return U

    def lookups(self, between: str = "linear") -> list[KnotLookup]:
        """Every column's fitted map as a :class:`~fusion.ecdf.KnotLookup` (``between``:
        ``"linear"`` or ``"step"``, see :meth:`transform`); built once per fit."""
        # A cache derived from knots_/values_ (never saved): rebuilt after a refit or a load.
        cache = self.__dict__.get("_lookup_cache")
        if cache is None or cache[0] is not self.knots_:
            cache = self._lookup_cache = (self.knots_, {})
        lookups = cache[1].get(between)
        if lookups is None:
            step = between == "step"
            lookups = cache[1][between] = [
                KnotLookup(k, v, step=step) for k, v in zip(self.knots_, self.values_, strict=True)
            ]
        return lookups


def valid_knots(k: np.ndarray, v: np.ndarray) -> bool:
    """Whether ``(k, v)`` describe a valid fitted column (see :meth:`ECDFNormalizer.from_knots`)."""
    if not (
        isinstance(k, np.ndarray) and isinstance(v, np.ndarray)
        and k.dtype in (np.float64, np.int64, np.uint64) and v.dtype == np.float64
        and k.ndim == 1 and k.shape == v.shape and k.shape[0] >= 2
    ):  # fmt: skip
        return False
    if k.dtype.kind == "f":
        if np.isnan(k).any() or np.isinf(k[1:-1]).any() or k[0] == np.inf or k[-1] == -np.inf:
            return False
    return bool(np.all(k[1:] > k[:-1]) and np.all(np.diff(v) > 0) and v[0] > 0 and v[-1] < 1)


def _check_between(between) -> None:
    if between not in BETWEEN:
        raise ValueError(f"between must be one of {BETWEEN}, got {between!r}.")


def _isnan(col: np.ndarray) -> np.ndarray:
    return np.isnan(col) if col.dtype.kind == "f" else np.zeros(col.shape[0], dtype=bool)


def _like_knots(col: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """Queries in the knots' type when that is exact (integers), else as floats."""
    if knots.dtype.kind in "iu" and col.dtype.kind in "iu":
        info = np.iinfo(knots.dtype)
        if col.size == 0 or (int(col.min()) >= info.min and int(col.max()) <= info.max):
            return col.astype(knots.dtype)
    return col.astype(float, copy=False)
