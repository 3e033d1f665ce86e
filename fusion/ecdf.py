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

__all__ = ["ECDFNormalizer", "ConstantColumnError", "mid_ecdf_knots", "interp_segments"]


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
    column = np.asarray(column, dtype=float)
    knots, counts = np.unique(column, return_counts=True)
    upper = np.cumsum(counts)
    values = (upper - counts / 2.0) / column.shape[0]
    return knots, values


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
        S = _as_score_matrix(S)
        if S.shape[0] < 2:
            raise ValueError(f"ECDF normalization needs at least 2 rows, got {S.shape[0]}.")
        self.knots_, self.values_ = [], []
        for j in range(S.shape[1]):
            knots, values = mid_ecdf_knots(S[:, j])
            if knots.shape[0] < 2:
                raise ConstantColumnError(
                    f"score column {j} is constant (every value equals {knots[0]!r}); a "
                    "constant score carries no ranking information and cannot be calibrated."
                )
            self.knots_.append(knots)
            self.values_.append(values)
        self.n_features_in_ = S.shape[1]
        return self

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
        for j in range(S.shape[1]):
            segment = np.searchsorted(self.knots_[j], S[:, j], side="right") - 1
            U[:, j] = interp_segments(S[:, j], segment, self.knots_[j], self.values_[j])
        return U


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
    return np.minimum(lo + (hi - lo) * t, hi)


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
