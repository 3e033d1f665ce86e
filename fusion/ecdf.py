"""ECDF normalization of score columns.

Every fusion method works on scores mapped to ``[0, 1]`` by the empirical CDF of the
training scores, column by column. The map used here is the *mid-distribution function*

.. math::  F(x) = \\frac{\\#\\{s_i < x\\} + \\#\\{s_i \\le x\\}}{2n},

evaluated at the distinct training values (so tied scores get their mid-rank, rescaled as
``(rank - 1/2) / n``) and linearly interpolated in between. Outside the training range the
map is clamped to its end values. It is non-decreasing, so a monotone calibrating function
composed with it stays monotone in the raw scores, and it depends on the training scores
only through their ranks, so any strictly increasing transform of a column leaves the
normalized training values unchanged.

The mid-distribution (rather than ``rank / n``) keeps every normalized value strictly
inside ``(0, 1)`` and is symmetric: negating a score maps ``u`` to ``1 - u`` exactly, which
the copula fits (pseudo-observations) and the rotated copula families rely on.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

__all__ = [
    "ECDFNormalizer",
    "ConstantColumnError",
    "mid_ecdf_knots",
    "interp_segments",
    "KnotLookup",
]


#: Rows per chunk of a transform.
_CHUNK = 1 << 18


class ConstantColumnError(ValueError):
    """A score column takes a single value, so it carries no ranking information."""


def mid_ecdf_knots(column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Knots and values of the mid-distribution function of one column.

    Parameters
    ----------
    column : ndarray of shape (n,)
        Finite training scores.

    Returns
    -------
    knots : ndarray of shape (k,)
        The distinct training values, increasing.
    values : ndarray of shape (k,)
        ``(#{s < knot} + #{s <= knot}) / (2 n)`` at each knot, strictly increasing in
        ``(0, 1)``.
    """
    knots, values, _ = _mid_ecdf(np.asarray(column, dtype=float), inverse=False)
    return knots, values


def _mid_ecdf(column: np.ndarray, inverse: bool):
    """Knots, values and (if asked) each row's knot index, from one sort."""
    if inverse:
        knots, where, counts = np.unique(column, return_inverse=True, return_counts=True)
    else:
        (knots, counts), where = np.unique(column, return_counts=True), None
    upper = np.cumsum(counts)
    return knots, (upper - counts / 2.0) / column.shape[0], where


class ECDFNormalizer(TransformerMixin, BaseEstimator):
    """Map each score column to ``[0, 1]`` through its training mid-ECDF.

    Attributes
    ----------
    knots_ : list of ndarray
        Distinct training values of each column, increasing.
    values_ : list of ndarray
        Normalized value at each knot (mid-rank ``(rank - 1/2) / n``).
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

    def fit(self, S, y=None):
        """Store the knots of each column's mid-ECDF.

        Parameters
        ----------
        S : array-like of shape (n, M)
            Finite training scores; a 1-D array is one column.
        y : ignored
        """
        self._fit(_as_score_matrix(S), inverse=False)
        return self

    def _fit(self, S: np.ndarray, inverse: bool) -> list:
        if S.shape[0] < 2:
            raise ValueError(f"ECDF normalization needs at least 2 rows, got {S.shape[0]}.")
        self.knots_, self.values_, inverses = [], [], []
        for j in range(S.shape[1]):
            knots, values, where = _mid_ecdf(S[:, j], inverse)
            if knots.shape[0] < 2:
                raise ConstantColumnError(
                    f"score column {j} is constant (every value equals {knots[0]!r}); a "
                    "constant score carries no ranking information and cannot be calibrated."
                )
            self.knots_.append(knots)
            self.values_.append(values)
            inverses.append(where)
        self.n_features_in_ = S.shape[1]
        return inverses

    @classmethod
    def from_knots(cls, knots, values) -> ECDFNormalizer:
        """A fitted normalizer from given knots and values, one pair of arrays per column.

        For ECDFs computed elsewhere (a quantile sketch, counts merged over the blocks of a
        distributed array); the result is the same plain-data object as after :meth:`fit`.

        Parameters
        ----------
        knots : sequence of 1-D arrays
            Strictly increasing finite knots of each column (at least 2).
        values : sequence of 1-D arrays
            Normalized values at the knots, strictly increasing inside ``(0, 1)``.
        """
        if len(knots) != len(values) or len(knots) == 0:
            raise ValueError(
                f"need one knots and one values array per column, got {len(knots)} and "
                f"{len(values)}."
            )
        self = cls()
        self.knots_, self.values_ = [], []
        for j, (k, v) in enumerate(zip(knots, values, strict=True)):
            k, v = np.asarray(k, dtype=float), np.asarray(v, dtype=float)
            ok = (
                k.ndim == 1 and k.shape == v.shape and k.shape[0] >= 2
                and np.all(np.isfinite(k)) and np.all(np.diff(k) > 0)
                and np.all(np.diff(v) > 0) and v[0] > 0 and v[-1] < 1
            )  # fmt: skip
            if not ok:
                raise ValueError(
                    f"column {j}: knots must be at least 2 strictly increasing finite values and "
                    "values strictly increasing in (0, 1), of the same length."
                )
            self.knots_.append(k)
            self.values_.append(v)
        self.n_features_in_ = len(self.knots_)
        return self

    def transform(self, S) -> np.ndarray:
        """Normalize scores; values beyond the training range are clamped.

        Parameters
        ----------
        S : array-like of shape (n, M)

        Returns
        -------
        U : ndarray of shape (n, M) with values in ``(0, 1)``.
        """
        check_is_fitted(self, "knots_")
        S = _as_score_matrix(S)
        if S.shape[1] != self.n_features_in_:
            raise ValueError(
                f"S has {S.shape[1]} score columns but the normalizer was fitted on "
                f"{self.n_features_in_}."
            )
        U = np.empty_like(S)
        lookups = self._lookups()
        # Row chunks: a lookup makes several full-length temporaries.
        for start in range(0, S.shape[0], _CHUNK):
            rows = slice(start, start + _CHUNK)
            for j, lookup in enumerate(lookups):
                U[rows, j] = lookup(S[rows, j])
        return U

    def fit_transform(self, S, y=None) -> np.ndarray:
        """Fit, and return the normalized training scores.

        Equal to ``fit(S).transform(S)`` bit for bit, but read off the sort that ``fit``
        does anyway instead of searching every training score among the knots.
        """
        S = _as_score_matrix(S)
        inverses = self._fit(S, inverse=True)
        U = np.empty_like(S)
        for j, where in enumerate(inverses):
            U[:, j] = self.values_[j][where]
        return U

    def _lookups(self) -> list[KnotLookup]:
        # A cache derived from knots_/values_ (never saved): rebuilt after a refit or a load.
        cache = self.__dict__.get("_lookup_cache")
        if cache is None or cache[0] is not self.knots_:
            lookups = [KnotLookup(k, v) for k, v in zip(self.knots_, self.values_, strict=True)]
            cache = self._lookup_cache = (self.knots_, lookups)
        return cache[1]


def interp_segments(
    x: np.ndarray, segment: np.ndarray, knots: np.ndarray, values: np.ndarray
) -> np.ndarray:
    """Piecewise-linear interpolation that is non-decreasing in ``x`` to the last bit.

    ``segment`` is the index of the last knot at or below each ``x`` (any value outside
    ``[0, k - 2]`` is clamped, so points beyond the ends take the end values). ``np.interp``
    evaluates ``slope * (x - knot) + value``, which can round one ulp above the next knot's
    value just below that knot, so a larger score could get a smaller normalized value.
    Here each segment's value ``values[i] + (values[i+1] - values[i]) * t`` with ``t`` in
    ``[0, 1]`` is capped at ``values[i+1]``: every operation is monotone under rounding, so
    the result is exactly non-decreasing.
    """
    i = np.clip(segment, 0, knots.shape[0] - 2)
    lo, hi = values[i], values[i + 1]
    with np.errstate(over="ignore", invalid="ignore"):
        t = (x - knots[i]) / (knots[i + 1] - knots[i])  # |x| near 1e308 may overflow to inf
    np.clip(t, 0.0, 1.0, out=t)
    # t == 1 gives hi exactly (lo + (hi - lo) may round below hi), so a training score maps to
    # its knot value bit for bit, as fit_transform computes it.
    return np.where(t < 1.0, np.minimum(lo + (hi - lo) * t, hi), hi)


class KnotLookup:
    """``np.interp(x, knots, values)`` by a uniform bucket index instead of a binary search.

    ``np.interp`` binary-searches every point: ~14 unpredictable branches for 10^4 knots and
    ~24 cache misses for 10^7, which dominate prediction time. Here a uniform grid of about
    ``4 k`` cells (at most 2^22) over ``[knots[0], knots[-1]]`` stores the last knot at or
    below each cell's left edge; a point then needs a few vectorized refinement steps
    (``log2`` of the most knots in one cell). When one cell holds more than 2^4 knots
    (heavy tails) the index would not pay and ``np.interp`` is used.
    Same result as ``np.interp`` up to rounding (a few ulps), and exactly non-decreasing (see
    :func:`fusion.ecdf.interp_segments`).
    """

    MAX_CELLS = 1 << 22
    MAX_STEPS = 4

    def __init__(self, knots: np.ndarray, values: np.ndarray):
        self.knots, self.values = knots, values
        k = knots.shape[0]
        cells = int(min(4 * k, self.MAX_CELLS))
        self.lo, self.scale = knots[0], cells / (knots[-1] - knots[0])
        edges = knots[0] + np.arange(cells) / self.scale
        # last knot <= left edge, as a segment index in [0, k - 2]
        self.start = np.clip(np.searchsorted(knots, edges, side="right") - 1, 0, k - 2)
        most = int(np.max(np.diff(np.append(self.start, k - 2)))) + 1
        self.steps = [1 << s for s in range(int(most).bit_length() - 1, -1, -1)]
        self.cells = cells

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if len(self.steps) > self.MAX_STEPS:
            segment = np.searchsorted(self.knots, x, side="right") - 1
            return interp_segments(x, segment, self.knots, self.values)
        # Scores far outside the knots (|x| near 1e308) overflow to inf here; clipping maps
        # them to the end values, as np.interp does.
        with np.errstate(over="ignore", invalid="ignore"):
            g = (x - self.lo) * self.scale
            np.clip(g, 0, self.cells - 1, out=g)
            i = self.start[g.astype(np.intp)]
            last = self.knots.shape[0] - 2
            for s in self.steps:  # branch-free search of the segment within the cell
                c = np.minimum(i + s, last)
                i = np.where(self.knots[c] <= x, c, i)
        return interp_segments(x, i, self.knots, self.values)


def _as_score_matrix(S) -> np.ndarray:
    S = np.asarray(S, dtype=float)
    if S.ndim == 1:
        S = S[:, None]
    if S.ndim != 2:
        raise ValueError(f"scores must be a 1-D or 2-D array, got {S.ndim} dimensions.")
    if not np.all(np.isfinite(S)):
        row, col = np.argwhere(~np.isfinite(S))[0]
        raise ValueError(f"scores must be finite; found {S[row, col]} at row {row}, column {col}.")
    return S
